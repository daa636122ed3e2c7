/* symbolize-elf.c - ELF files the symbolizer names through libdwfl: opened once each,
 * their functions sorted for a binary search, debug info found as perf finds it. */
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

/* ---- ELF files through libdwfl ------------------------------------------------ */

struct file *_uevent_sym_file_get(struct uevent_symbolizer *s, const char *path)
{
	struct file *f;
	size_t i;

	for (i = s->nfiles; i-- > 0;)
		if (!strcmp(s->files[i]->path, path))
			return s->files[i];
	if (_uevent_sym_grow((void **)&s->files, &s->files_cap, s->nfiles, sizeof(*s->files)) < 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	s->files[s->nfiles++] = f;
	return f;
}

#ifdef HAVE_LIBDW
#include <elfutils/libdwelf.h>

/* The CRC-32 a .gnu_debuglink records (zlib's) of the file at fd: 0, or -1. */
static int file_crc32(int fd, uint32_t *out)
{
	uint32_t table[256], crc = 0xffffffffu, c, k;
	unsigned char buf[16384];
	off_t at = 0;
	ssize_t n, i;
	int b;

	for (k = 0; k < 256; k++) {
		for (c = k, b = 0; b < 8; b++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[k] = c;
	}
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		for (i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		at += n;
	}
	*out = ~crc;
	return n < 0 ? -1 : 0;
}

/*
 * The debug file at path, if it is one for mod: opened as a file others may have planted
 * (a regular file only: libdwfl's open would wait on a FIFO for ever), not the main
 * file again, and the one the link names: its build-id the module's or, with none, its
 * CRC the link's (neither to check: taken, as libdwfl takes it). fd or -1.
 */
static int try_debug(Dwfl_Module *mod, const char *path, const char *main_file,
		     GElf_Word crc, char **name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct stat st, mst;
	int fd = _uevent_sym_open_input_fd(path, 0, NULL), len, ok = 1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (!stat(main_file, &mst) && st.st_dev == mst.st_dev &&
				   st.st_ino == mst.st_ino)) {
		close(fd);
		return -1;
	}
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len > 0) {
		Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *id = NULL;
		ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;

		ok = n == len && !memcmp(id, bits, (size_t)len);
		elf_end(e);
	} else if (crc) {
		uint32_t c;

		ok = !file_crc32(fd, &c) && c == crc;
	}
	if (!ok || !(*name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Where perf and gdb look for a separate debug file: by build-id, then by the
 * .gnu_debuglink name (the file's name + ".debug" without one) beside the file, in .debug/
 * beside it, under /usr/lib/debug/ + its directory, also opts->debug_dir's (DIR/.build-id/
 * and DIR/NAME). libdwfl's standard search covers the directories of root and the user
 * (the debuginfo_path file_open sets: absolute ones only); the file's own directory may
 * be anyone's (/tmp), so that part is done here, with an open that cannot block. The
 * name comes from the file: only its last part (no ../ out of the directories searched).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct uevent_symbolizer *s = *userdata;
	const char *link = debuglink_file ? strrchr(debuglink_file, '/') : NULL, *slash;
	static const char *const sub[] = { "", "/.debug" };
	char name[256], path[4096];
	size_t i;
	int fd, dlen;

	link = link ? link + 1 : debuglink_file;
	if (link && !*link)
		return -1;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, link,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !file_name)
		return fd;
	slash = strrchr(file_name, '/');
	if (snprintf(name, sizeof(name), "%s%s", link ? link : slash ? slash + 1 : file_name,
		     link ? "" : ".debug") >= (int)sizeof(name))
		return -1;
	dlen = slash ? (int)(slash - file_name) : 1;
	for (i = 0; i < ARRAY_SIZE(sub); i++) {
		if (snprintf(path, sizeof(path), "%.*s%s/%s", dlen, slash ? file_name : ".",
			     sub[i], name) >= (int)sizeof(path))
			continue;
		fd = try_debug(mod, path, file_name, link ? debuglink_crc : 0,
			       debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	/* a debug file kept flat in a directory of its own, as a build's debug output is */
	if (s && s->o.debug_dir && link &&
	    snprintf(path, sizeof(path), "%s/%s", s->o.debug_dir, link) < (int)sizeof(path))
		return try_debug(mod, path, file_name, debuglink_crc, debuginfo_file_name);
	return -1;
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address the global, sized one is kept: first after the sort */
	if (x->global != y->global)
		return y->global - x->global;
	return (y->size > 0) - (x->size > 0);
}

/* The file's function symbols (its .symtab, else its debug file's, else .dynsym). */
static int read_syms(struct file *f)
{
	int n = dwfl_module_getsymtab(f->mod), i;
	size_t k = 0;

	if (n <= 0)
		return 0;
	f->syms = calloc((size_t)n, sizeof(*f->syms));
	if (!f->syms)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, NULL, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || !addr || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		f->syms[k].addr = addr;
		f->syms[k].size = sym.st_size;
		f->syms[k].name = name;
		f->syms[k].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		k++;
	}
	qsort(f->syms, k, sizeof(*f->syms), fsym_cmp);
	{	/* one per address */
		size_t w = 0;

		for (i = 0; (size_t)i < k; i++)
			if (!w || f->syms[w - 1].addr != f->syms[i].addr)
				f->syms[w++] = f->syms[i];
		k = w;
	}
	f->nsyms = k;
	return 0;
}

/* The function at vaddr: the last starting at or below it, if vaddr is inside it (an
 * unsized one: up to the next). */
static const struct fsym *fsym_find(const struct file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms;
	const struct fsym *c;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	c = &f->syms[lo - 1];
	if (c->size ? vaddr - c->addr < c->size : lo < f->nsyms)
		return c;
	return NULL;
}

static int file_open(struct uevent_symbolizer *s, struct file *f)
{
	static const Dwfl_Callbacks cb_base = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	char rp[4096];
	Dwfl_Callbacks *cb;
	Elf *elf;
	GElf_Ehdr eh;
	size_t n, i;

	f->tried = 1;
	_uevent_sym_real_path(s, f->path, rp, sizeof(rp));
	/* the callbacks live as long as the Dwfl; the debug path is the symbolizer's */
	cb = calloc(1, sizeof(*cb) + 4096 + sizeof(char *));
	if (!cb)
		return -ENOMEM;
	*cb = cb_base;
	{
		char **pp = (char **)(cb + 1), *path = (char *)(pp + 1);

		/* libdwfl's search: directories of the user's and root's only (an
		 * absolute path); find_debuginfo looks beside the file itself */
		int own = s->o.debug_dir && s->o.debug_dir[0] == '/';

		snprintf(path, 4096, "%s%s/usr/lib/debug", own ? s->o.debug_dir : "",
			 own ? ":" : "");
		*pp = path;
		cb->debuginfo_path = pp;
	}
	f->cb = cb;
	f->dwfl = dwfl_begin(cb);
	if (!f->dwfl)
		return -ENOMEM;
	{	/* libdwfl's own open would wait on a FIFO planted there */
		int fd = _uevent_sym_open_input_fd(rp, 1, NULL);

		if (fd < 0)
			return fd;
		f->mod = dwfl_report_offline(f->dwfl, f->path, rp, fd);
		if (!f->mod)
			close(fd);	/* consumed only on success */
	}
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod)
		return -ENOENT;
	{
		void **ud = NULL;

		dwfl_module_info(f->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (ud)
			*ud = s;	/* for find_debuginfo */
	}
	elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) < 0)
		return -ENOENT;
	f->load = calloc(n ? n : 1, sizeof(*f->load));
	if (!f->load)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->load[f->nload].off = ph.p_offset;
		f->load[f->nload].vaddr = ph.p_vaddr;
		f->load[f->nload].filesz = ph.p_filesz;
		f->nload++;
	}
	f->ok = 1;
	return read_syms(f);
}

/* Names the byte at file offset off of f. */
int _uevent_sym_file_lookup(struct uevent_symbolizer *s, struct file *f, uint64_t off,
			    uint64_t addr, struct uevent_symbol *out)
{
	GElf_Sym sym;
	GElf_Off soff = 0;
	GElf_Addr vaddr = 0;
	const char *name;
	size_t i;
	int found = 0;

	if (!f->tried)
		file_open(s, f);
	if (!f->ok)
		return -ENOENT;
	for (i = 0; i < f->nload; i++) {
		if (off >= f->load[i].off && off - f->load[i].off < f->load[i].filesz) {
			vaddr = f->load[i].vaddr + (off - f->load[i].off) + f->bias;
			found = 1;
			break;
		}
	}
	if (!found)
		return -ENOENT;
	{
		const struct fsym *fs = fsym_find(f, vaddr);

		if (!fs)
			return -ENOENT;
		name = fs->name;
		soff = vaddr - fs->addr;
		sym.st_size = fs->size;
	}
	out->name = name;
	out->offset = soff;
	out->sym_addr = addr - soff;
	out->sym_size = sym.st_size;
	out->source = UEVENT_SYM_ELF;
	if (!(s->o.flags & UEVENT_SYMBOLIZER_NO_LINES)) {
		Dwfl_Line *l = dwfl_module_getsrc(f->mod, vaddr);
		int line = 0;
		const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;

		if (src) {
			/* a relative name is the compilation directory's: whole, as a
			 * reader of the profile elsewhere (pprof -list) needs it */
			const char *cd = src[0] != '/' ? dwfl_line_comp_dir(l) : NULL, *whole;
			char path[4096];

			if (cd && snprintf(path, sizeof(path), "%s/%s", cd, src) < (int)sizeof(path) &&
			    (whole = _uevent_sym_intern(s, path)))
				src = whole;
			out->file = src;
			out->line = (uint32_t)(line > 0 ? line : 0);
		}
	}
	return 0;
}

void _uevent_sym_file_close(struct file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f->cb);
	free(f->syms);
	free(f->load);
}
#else
int _uevent_sym_file_lookup(struct uevent_symbolizer *s, struct file *f, uint64_t off,
			    uint64_t addr, struct uevent_symbol *out)
{
	(void)s; (void)f; (void)off; (void)addr; (void)out;
	return -ENOENT;
}

void _uevent_sym_file_close(struct file *f)
{
	(void)f;
}
#endif
