/*
 * perf-map.c - libFuzzer target: the input as a perf-PID.map (a JIT's "ADDR SIZE name"
 * lines), read by the symbolizer when an address no mapping holds is looked up, then
 * looked up at the start, middle and last byte of each line. A name given must be a
 * line's whose bytes hold the address; with few lines that do not wrap past 2^64, it
 * must be the one line the map's rule leaves there (a line that a later one overlaps is
 * gone), and none where none is left.
 */
#include "fuzz.h"

#include <stdlib.h>

#define SAME(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#define PID		4242
#define KERNEL		0xffff800000000000ull	/* the kernel half: not the map's */
#define MODEL_MAX	512			/* lines the quadratic model checks */

static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static int setup(void)
{
	if (dir[0])
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/uevent-fuzz-pmap-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
	atexit(cleanup);
	return 0;
}

struct line {
	uint64_t	addr, size;
	const char	*name;		/* in the line's copy, up to its newline */
	size_t		len;
	int		gone;		/* a later line overlaps it */
};

static char chunks[65536 + 4096 * 2];	/* the reader's lines, each NUL-ended */
static struct line lines[65536 / 4];

/* The lines as the reader sees them: fgets() into 4096 bytes (a longer line is read in
 * pieces, each parsed alone), each parsed by the same sscanf(). */
static size_t parse(const uint8_t *data, size_t size)
{
	size_t at = 0, n = 0, used = 0;

	while (at < size && n < sizeof(lines) / sizeof(lines[0])) {
		size_t k = 0;
		char *c = chunks + used;
		unsigned long long a, sz;
		int off = 0;

		while (k < 4095 && at + k < size && data[at + k] != '\n')
			k++;
		if (k < 4095 && at + k < size)
			k++;			/* its newline */
		if (used + k + 1 > sizeof(chunks))
			break;
		memcpy(c, data + at, k);
		c[k] = 0;
		at += k;
		used += k + 1;
		if (sscanf(c, "%llx %llx %n", &a, &sz, &off) != 2 || !off)
			continue;
		lines[n].addr = a;
		lines[n].size = sz;
		lines[n].name = c + off;
		lines[n].len = strcspn(c + off, "\n");
		lines[n].gone = 0;
		n++;
	}
	return n;
}

/* [addr, to) of a line, as the reader takes it (a size of 0: one byte) */
static uint64_t to_of(const struct line *l)
{
	return l->addr + (l->size ? l->size : 1);
}

static int holds(const struct line *l, uint64_t addr)
{
	return addr >= l->addr && addr - l->addr < (l->size ? l->size : 1);
}

static void check(struct uevent_symbolizer *s, const struct line *v, size_t n, int model,
		  uint64_t addr)
{
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	const struct line *want = NULL;
	size_t i;
	int r;

	if (addr >= KERNEL)
		return;
	r = uevent_symbolizer__lookup(s, PID, addr, 0, &sym);
	SAME(r == 0 || r == -ENOENT);
	SAME(!r == !!sym.name);
	if (model)
		for (i = 0; i < n; i++)
			if (!v[i].gone && holds(&v[i], addr))
				want = &v[i];
	if (sym.name) {
		size_t len = strlen(sym.name);

		touch(sym.name, len + 1);
		SAME(sym.source == UEVENT_SYM_PERF_MAP && sym.sym_addr <= addr);
		for (i = 0; i < n; i++)
			if (v[i].addr == sym.sym_addr && v[i].len == len &&
			    !memcmp(v[i].name, sym.name, len) && holds(&v[i], addr))
				break;
		SAME(i < n);		/* a line's name, whose bytes hold addr */
		if (model)
			SAME(want && want->addr == sym.sym_addr && want->len == len &&
			     !memcmp(want->name, sym.name, len));
	} else if (model) {
		SAME(!want);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = dir, .flags = UEVENT_SYMBOLIZER_NO_KERNEL |
			       UEVENT_SYMBOLIZER_NO_DEMANGLE);
	struct uevent_symbolizer *s;
	size_t n, i, j;
	int fd, model;

	if (setup() < 0)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	n = parse(data, size);
	model = n <= MODEL_MAX;
	for (i = 0; model && i < n; i++)
		model = to_of(&lines[i]) > lines[i].addr;	/* no wrap */
	for (i = 0; model && i < n; i++)
		for (j = i + 1; j < n && !lines[i].gone; j++)
			lines[i].gone = lines[i].addr < to_of(&lines[j]) &&
					lines[j].addr < to_of(&lines[i]);
	s = uevent_symbolizer__new(&o);
	if (!s)
		return 0;
	for (i = 0; i < n && i < 4 * MODEL_MAX; i++) {
		check(s, lines, n, model, lines[i].addr);
		check(s, lines, n, model, lines[i].addr + lines[i].size / 2);
		if (lines[i].size)
			check(s, lines, n, model, lines[i].addr + lines[i].size - 1);
		check(s, lines, n, model, lines[i].addr + lines[i].size);
	}
	uevent_symbolizer__free(s);
	return 0;
}
