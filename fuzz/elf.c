/*
 * elf.c - libFuzzer target: the input as a file on disk, read by what opens the files a
 * recording or a traced process names: _uevent_sdt_find_all() (the .note.stapsdt probes:
 * section and program headers, the section name table, the notes), the symbolizer
 * (libdwfl: the file's symbols, program headers and DWARF lines, its .gnu_debuglink and
 * build-id searches, with a copy of it beside it as prog.debug: the name the seeds' link
 * and a file without one give, checked by build-id or CRC and then read as its debug
 * file) and, under a jit-PID.dump name, the symbolizer's jitdump reader.
 * Every name given must end where its buffer says, every count stay within its bounds.
 */
#include "fuzz.h"

#include <elf.h>
#include <stdlib.h>

#include "perf-internal.h"

#define SAME(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#define MAP_ADDR	0x10000000ull	/* the file mapped here, offset 0 at this address */
#define PID		4242

static char dir[64], file[96], debug[96], dump[96];

static void cleanup(void)
{
	unlink(dump);
	unlink(debug);
	unlink(file);
	rmdir(dir);
}

static int setup(void)
{
	if (dir[0])
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/uevent-fuzz-elf-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(file, sizeof(file), "%s/prog", dir);
	snprintf(debug, sizeof(debug), "%s/prog.debug", dir);
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", dir, PID);
	atexit(cleanup);
	return 0;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;
	ssize_t w;

	if (fd < 0)
		return -1;
	while (done < size && (w = write(fd, data + done, size - done)) > 0)
		done += (size_t)w;
	close(fd);
	return done == size ? 0 : -1;
}

static void mmap_record(struct uevent_perf_record *r, uint64_t addr, uint64_t len,
			const char *path)
{
	perf_record_init(r);
	r->type = PERF_RECORD_MMAP2;
	r->body = UEVENT_BODY_MMAP;
	r->id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	r->id.pid = r->id.tid = PID;
	r->id.time = 1;
	r->u.mmap.pid = r->u.mmap.tid = PID;
	r->u.mmap.addr = addr;
	r->u.mmap.len = len;
	r->u.mmap.prot = 5;
	r->u.mmap.filename = path;
}

static void lookup(struct uevent_symbolizer *s, uint64_t off)
{
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	int r = uevent_symbolizer__lookup(s, PID, MAP_ADDR + off, 10, &sym);

	SAME(r == 0 || r == -ENOENT);
	if (sym.name)
		touch(sym.name, strlen(sym.name) + 1);
	if (sym.file)
		touch(sym.file, strlen(sym.file) + 1);
	if (sym.dso)
		touch(sym.dso, strlen(sym.dso) + 1);
}

/* The input's PT_LOADs (as far as it holds them), to look up inside them. */
static size_t loads(const uint8_t *data, size_t size, Elf64_Phdr *out, size_t max)
{
	Elf64_Ehdr eh;
	size_t i, n = 0;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, data, sizeof(eh));
	for (i = 0; i < eh.e_phnum && n < max; i++) {
		uint64_t at = eh.e_phoff + i * (uint64_t)sizeof(Elf64_Phdr);

		if (eh.e_phoff > size || at > size || size - at < sizeof(Elf64_Phdr))
			break;
		memcpy(&out[n], data + at, sizeof(out[n]));
		n += out[n].p_type == PT_LOAD && out[n].p_offset < (1ull << 40);
	}
	return n;
}

static void symbolize(const uint8_t *data, size_t size)
{
	UEVENT_SYMBOLIZER_OPTS(o, .debug_dir = dir, .flags = UEVENT_SYMBOLIZER_NO_KERNEL |
			       UEVENT_SYMBOLIZER_NO_PERF_MAP);
	struct uevent_symbolizer *s = uevent_symbolizer__new(&o);
	struct uevent_elf_symbol es = { .sz = sizeof(es) };
	struct uevent_perf_record r;
	Elf64_Phdr ph[8];
	uint64_t pos = 0;
	size_t n, i, k;

	if (!s)
		return;
	mmap_record(&r, 0x7f0000000000ull, 4096, dump);	/* the jitdump reader */
	SAME(uevent_symbolizer__feed(s, &r) == 1);
	mmap_record(&r, MAP_ADDR, 1ull << 40, file);
	SAME(uevent_symbolizer__feed(s, &r) == 1);
	n = loads(data, size, ph, 8);
	for (i = 0; i < n; i++) {
		lookup(s, ph[i].p_offset);
		lookup(s, ph[i].p_offset + (ph[i].p_filesz >> 1));
	}
	/* the functions' addresses, where a PT_LOAD holds them */
	for (k = 0; k < 32 && uevent_elf_symbol_next(data, size, UEVENT_ELF_FILE, &pos, &es) == 1;
	     k++)
		for (i = 0; i < n; i++)
			if (es.addr >= ph[i].p_vaddr && es.addr - ph[i].p_vaddr < ph[i].p_filesz)
				lookup(s, ph[i].p_offset + (es.addr - ph[i].p_vaddr));
	/* and jitted code the dump may have loaded */
	lookup(s, 0x7f0000000000ull - MAP_ADDR);
	uevent_symbolizer__free(s);
}

static void sdt(void)
{
	struct _uevent_sdt_probe p[4];
	int n = _uevent_sdt_find_all(file, "libuevent", p, 4), i;

	SAME(n <= 4);
	for (i = 0; i < n; i++) {
		SAME(memchr(p[i].name, 0, sizeof(p[i].name)) &&
		     memchr(p[i].args, 0, sizeof(p[i].args)));
		touch(p[i].name, strlen(p[i].name));
		touch(p[i].args, strlen(p[i].args));
	}
	SAME(_uevent_sdt_find_all(file, "", p, 0) <= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (setup() < 0 || write_file(file, data, size) < 0 || write_file(debug, data, size) < 0)
		return 0;
	unlink(dump);
	if (link(file, dump) < 0)
		return 0;
	sdt();
	symbolize(data, size);
	return 0;
}
