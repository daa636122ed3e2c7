/* symbolize-read.c - the side-band files the symbolizer reads into code lists:
 * jitdumps, perf-PID.map and kallsyms. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-trust.h"
#include "symbolize-internal.h"

/* ---- jitdump files ------------------------------------------------------------ */

static uint32_t bswap32_if(uint32_t v, int swap) { return swap ? __builtin_bswap32(v) : v; }
static uint64_t bswap64_if(uint64_t v, int swap) { return swap ? __builtin_bswap64(v) : v; }

/*
 * Reads a jitdump file into p's JIT code: loads and moves at their timestamps (the
 * file's clock, CLOCK_MONOTONIC, which sessions record with). jitdump has no unload: a
 * later load over the same bytes ends the earlier one.
 */
int _uevent_sym_read_jitdump(struct uevent_symbolizer *s, struct proc *p, const char *path)
{
	char rp[4096];
	struct jd_header h;
	const char *dso;
	unsigned char *buf = NULL;
	size_t i, cap = 0;
	uint64_t last = 0;
	off_t left;
	FILE *f;
	int swap, bulk = 0;

	for (i = 0; i < s->njitdumps; i++)
		if (!strcmp(s->jitdumps[i], path))
			return 0;
	{
		char **v = realloc(s->jitdumps, (s->njitdumps + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->jitdumps = v;
		if (!(v[s->njitdumps] = strdup(path)))
			return -ENOMEM;
		s->njitdumps++;
	}
	dso = _uevent_sym_intern(s, path);
	if (!dso)
		return -ENOMEM;
	_uevent_sym_real_path(s, path, rp, sizeof(rp));
	f = _uevent_sym_open_input(rp, &left);
	if (!f)
		return 0;	/* gone, or not a file: its code stays unnamed */
	if (fread(&h, sizeof(h), 1, f) != 1 || (h.magic != JITDUMP_MAGIC && h.magic != JITDUMP_MAGIC_SWAPPED))
		goto out;
	swap = h.magic == JITDUMP_MAGIC_SWAPPED;
	if (fseek(f, (long)bswap32_if(h.total_size, swap), SEEK_SET) < 0)
		goto out;
	left -= bswap32_if(h.total_size, swap);
	bulk = !p->jd.n;	/* a first dump: its loads added whole, settled at once */
	for (;;) {
		struct jd_prefix r;
		uint32_t size, id;
		uint64_t t;

		if (fread(&r, sizeof(r), 1, f) != 1)
			break;
		id = bswap32_if(r.id, swap);
		size = bswap32_if(r.total_size, swap);
		t = bswap64_if(r.timestamp, swap);
		if (size < sizeof(r) || size > (64u << 20) || id > 64 || size > left)
			break;		/* the zeros past the last record, garbage, or
					   what was written since it was opened */
		left -= size;
		if (cap < size) {
			unsigned char *nb = realloc(buf, size);

			if (!nb)
				break;
			buf = nb;
			cap = size;
		}
		if (size > sizeof(r) && fread(buf, size - sizeof(r), 1, f) != 1)
			break;		/* cut short: the writer is still at it, or died */
		if (id == JIT_CODE_LOAD && size >= sizeof(r) + 40) {
			uint64_t addr, csz, index;
			size_t nlen = size - sizeof(r) - 40;

			memcpy(&addr, buf + 16, 8);
			memcpy(&csz, buf + 24, 8);
			memcpy(&index, buf + 32, 8);
			addr = bswap64_if(addr, swap);
			csz = bswap64_if(csz, swap);
			index = bswap64_if(index, swap);
			nlen = strnlen((char *)buf + 40, nlen);
			if (bulk && t < last) {	/* out of time order: one by one */
				_uevent_sym_code_settle(&p->jd);
				bulk = 0;
			}
			last = t;
			if (_uevent_sym_jit_load(s, &p->jd, addr, csz, index, (char *)buf + 40,
						 nlen, t, UEVENT_SYM_JITDUMP, dso, bulk) < 0)
				break;
		} else if (id == JIT_CODE_MOVE && size >= sizeof(r) + 48) {
			uint64_t v[4];

			memcpy(v, buf + 16, sizeof(v));	/* old, new, size, index */
			if (bulk) {	/* a move finds its code live: settle first */
				_uevent_sym_code_settle(&p->jd);
				bulk = 0;
			}
			if (_uevent_sym_jit_move(&p->jd, bswap64_if(v[3], swap),
						 bswap64_if(v[0], swap), bswap64_if(v[1], swap),
						 bswap64_if(v[2], swap), t) < 0)
				break;
		}
	}
out:
	if (bulk)
		_uevent_sym_code_settle(&p->jd);
	free(buf);
	fclose(f);
	return 0;
}

int _uevent_sym_is_jitdump_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	return !strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump");
}

/* ---- perf-PID.map ------------------------------------------------------------- */

void _uevent_sym_read_perf_map(struct uevent_symbolizer *s, struct proc *p)
{
	char path[4096], line[4096];
	const char *dso;
	off_t left;
	FILE *f;

	p->pmap_read = 1;
	if (s->o.flags & UEVENT_SYMBOLIZER_NO_PERF_MAP)
		return;
	snprintf(path, sizeof(path), "%s/perf-%u.map", s->o.perf_map_dir ? s->o.perf_map_dir
					: "/tmp", p->pid);
	dso = _uevent_sym_intern(s, path);
	f = dso ? _uevent_sym_open_input(path, &left) : NULL;
	if (!f)
		return;
	while (left > 0 && fgets(line, sizeof(line), f)) {
		unsigned long long a, n;
		int off = 0;
		size_t len = strlen(line);
		struct code *c;

		left -= (off_t)len;
		if (sscanf(line, "%llx %llx %n", &a, &n, &off) != 2 || !off)
			continue;
		len = strcspn(line + off, "\n");
		c = _uevent_sym_code_add(&p->pmap, a, n, 0, line + off, len);	/* settled below */
		if (!c)
			break;
		c->source = UEVENT_SYM_PERF_MAP;
		c->dso = dso;
	}
	fclose(f);
	_uevent_sym_pmap_settle(&p->pmap);
}

/* ---- kernel symbols ----------------------------------------------------------- */

static int kcmp(const void *a, const void *b)
{
	const struct code *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_kallsyms(struct uevent_symbolizer *s)
{
	char line[1024];
	const char *dso;
	FILE *f;
	size_t i;

	s->kern_read = 1;
	s->kern.no_index = 1;	/* sorted whole below, searched by kern_find */
	if (s->o.flags & UEVENT_SYMBOLIZER_NO_KERNEL)
		return;
	dso = _uevent_sym_intern(s, "[kernel.kallsyms]");
	f = dso ? fopen(s->o.kallsyms ? s->o.kallsyms : "/proc/kallsyms", "r") : NULL;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[512];
		struct code *c;

		if (sscanf(line, "%llx %c %511s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		c = _uevent_sym_code_add(&s->kern, a, 0, 0, name, strlen(name));
		if (!c)
			break;
		c->source = UEVENT_SYM_KERNEL;
		c->dso = dso;
	}
	fclose(f);
	qsort(s->kern.v, s->kern.n, sizeof(*s->kern.v), kcmp);
	for (i = 0; i + 1 < s->kern.n; i++)
		s->kern.v[i].size = s->kern.v[i + 1].addr - s->kern.v[i].addr;
	if (s->kern.n)
		s->kern.v[s->kern.n - 1].size = 4096;
}

const struct code *_uevent_sym_kern_find(struct uevent_symbolizer *s, uint64_t addr, uint64_t t)
{
	const struct code *c = _uevent_sym_code_find(&s->ksym, addr, t);
	size_t lo = 0, hi;

	if (c)
		return c;
	if (!s->kern_read)
		read_kallsyms(s);
	hi = s->kern.n;
	while (lo < hi) {	/* the last symbol starting at or below addr */
		size_t mid = (lo + hi) / 2;

		if (s->kern.v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	c = &s->kern.v[lo - 1];
	return addr - c->addr < c->size ? c : NULL;
}
