/* sdt.c - tracefs and SDT notes: event formats, uprobe events, the probes in an ELF file. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-trust.h"
#include "internal.h"
#include "perf-internal.h"

/* ---- tracefs helpers ---------------------------------------------------------------- */

int _uevent_read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < cap - 1 && (n = read(fd, buf + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return (int)got;
}

/* offset and size of a field named `name` in a tracefs event format file's text. */
int _uevent_format_field(const char *fmt, const char *name, uint32_t *off, uint32_t *size)
{
	const char *line = fmt;
	size_t nl = strlen(name);

	while (line && *line) {
		const char *f = strstr(line, "field:"), *eol;

		if (!f)
			break;
		eol = strchr(f, '\n');
		if (!eol)
			eol = f + strlen(f);
		{
			const char *semi = memchr(f, ';', (size_t)(eol - f)), *n = semi, *o, *s;

			while (n && n > f && n[-1] != ' ' && n[-1] != '\t')
				n--;
			/* "u8 data[4]" and "__rel_loc u8[] data": the name is the last word */
			if (semi && n && (size_t)(semi - n) >= nl && !strncmp(n, name, nl) &&
			    (n[nl] == ';' || n[nl] == '[')) {
				o = strstr(semi, "offset:");
				s = strstr(semi, "size:");
				if (o && s && o < eol && s < eol) {
					*off = (uint32_t)strtoul(o + 7, NULL, 10);
					*size = (uint32_t)strtoul(s + 5, NULL, 10);
					return 0;
				}
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	return -ENOENT;
}

int _uevent_tracefs_append(const char *file, const char *line)
{
	const char *dir = _uevent_tracefs();
	char path[256];
	int fd, err = 0;
	size_t n = strlen(line);

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, n) != (ssize_t)n)
		err = -errno;
	close(fd);
	return err;
}

/*
 * The path goes into a line of uprobe_events, whose fields end at whitespace and whose
 * commands end at a newline. A file anyone can name: with a newline in its path it would
 * be commands of its own there (a "-:GROUP/EVENT" removes another tool's probe), with a
 * space a broken one.
 */
int _uevent_uprobe_path_check(const char *path)
{
	const char *q;

	for (q = path; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return -EINVAL;
	return 0;
}

/* ---- the SDT note --------------------------------------------------------------------- */

static const char *x86_reg(const char *r)
{
	static const struct { const char *names[4]; const char *uprobe; } regs[] = {
		{ { "rax", "eax", "ax", "al" }, "ax" }, { { "rbx", "ebx", "bx", "bl" }, "bx" },
		{ { "rcx", "ecx", "cx", "cl" }, "cx" }, { { "rdx", "edx", "dx", "dl" }, "dx" },
		{ { "rsi", "esi", "si", "sil" }, "si" }, { { "rdi", "edi", "di", "dil" }, "di" },
		{ { "rbp", "ebp", "bp", "bpl" }, "bp" }, { { "rsp", "esp", "sp", "spl" }, "sp" },
		{ { "rip", "eip", "ip", "ip" }, "ip" },
	};
	static const char *const rn[] = { "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(regs); i++)
		for (j = 0; j < 4; j++)
			if (!strcmp(r, regs[i].names[j]))
				return regs[i].uprobe;
	for (i = 0; i < ARRAY_SIZE(rn); i++) {
		size_t n = strlen(rn[i]);

		if (!strncmp(r, rn[i], n) && (!r[n] || ((r[n] == 'd' || r[n] == 'w' || r[n] == 'b') &&
						      !r[n + 1])))
			return rn[i];
	}
	return NULL;
}

/*
 * One SDT argument ("-4@%edi", "8@-24(%rbp)", "4@$5") as a uprobe fetch expression
 * without type. Returns 0 or -EINVAL for what we do not translate.
 */
int _uevent_sdt_arg_fetch(const char *arg, char *out, size_t cap)
{
	const char *at = strchr(arg, '@'), *reg;
	char name[16];
	long off = 0;
	char *end;
	size_t n;

	if (!at)
		return -EINVAL;
	arg = at + 1;
	if (*arg == '$') {
		snprintf(out, cap, "\\%ld", strtol(arg + 1, NULL, 0));
		return 0;
	}
	if (*arg != '%') {
		off = strtol(arg, &end, 0);
		if (end == arg && *arg != '(')
			return -EINVAL;
		arg = end;
		if (arg[0] != '(' || arg[1] != '%')
			return -EINVAL;
		arg++;
	}
	arg++;	/* the '%' */
	for (n = 0; n < sizeof(name) - 1 && arg[n] && arg[n] != ')' && arg[n] != ' '; n++)
		name[n] = arg[n];
	name[n] = 0;
	reg = x86_reg(name);
	if (!reg)
		return -EINVAL;
	if (at[1] == '%')
		snprintf(out, cap, "%%%s", reg);
	else
		snprintf(out, cap, "%+ld(%%%s)", off, reg);
	return 0;
}

/* The bytes [off, off + n) of a file of size bytes, read whole into a new buffer: NULL
 * when the file does not hold them (or no memory). */
#define SDT_READ_MAX	(64u << 20)	/* a table or a note section: more is not an ELF's */

static void *sdt_read(int fd, uint64_t off, uint64_t n, uint64_t size)
{
	uint8_t *b;
	uint64_t got = 0;
	ssize_t r;

	if (off > size || n > size - off || n > SDT_READ_MAX || !(b = malloc(n ? n : 1)))
		return NULL;
	while (got < n && (r = pread(fd, b + got, n - got, (off_t)(off + got))) > 0)
		got += (uint64_t)r;
	if (got < n) {
		free(b);
		return NULL;
	}
	return b;
}

/* Whether name (an offset into the section name table strs of n bytes) is want. */
static int sdt_name_is(const char *strs, uint64_t n, uint32_t name, const char *want)
{
	size_t len = strlen(want) + 1;

	return name < n && n - name >= len && !memcmp(strs + name, want, len);
}

/*
 * The probes of provider in the ELF file at path: how many (at most max go to out). The
 * file may be anyone's (a traced process mapped it, from /tmp): a regular file only (a
 * FIFO would block the open, a device never end), its headers, section names and notes
 * read into buffers (a mapping of a file cut short under us faults: SIGBUS), every offset
 * and size from it checked against what was read.
 */
int _uevent_sdt_find_all(const char *path, const char *provider, struct _uevent_sdt_probe *out,
			  int max)
{
	off_t fsize = 0;
	int fd = _uevent_open_regular(AT_FDCWD, path, 0, &fsize, NULL, 0), ret = 0;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Phdr *ph = NULL;
	uint8_t *notes = NULL;
	char *shstr = NULL;
	uint64_t size = (uint64_t)fsize, base_addr = 0, shstr_size, i, j;
	struct _uevent_sdt_probe *o;

	if (fd < 0)
		return fd;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(*sh) ||
	    (eh.e_phnum && eh.e_phentsize != sizeof(*ph)) || eh.e_shstrndx >= eh.e_shnum ||
	    !(sh = sdt_read(fd, eh.e_shoff, eh.e_shnum * (uint64_t)sizeof(*sh), size)) ||
	    !(ph = sdt_read(fd, eh.e_phoff, eh.e_phnum * (uint64_t)sizeof(*ph), size))) {
		ret = -EINVAL;
		goto out;
	}
	shstr_size = sh[eh.e_shstrndx].sh_size;
	shstr = sdt_read(fd, sh[eh.e_shstrndx].sh_offset, shstr_size, size);
	if (!shstr)
		goto out;
	for (i = 0; i < eh.e_shnum; i++)
		if (sdt_name_is(shstr, shstr_size, sh[i].sh_name, ".stapsdt.base"))
			base_addr = sh[i].sh_addr;
	for (i = 0; i < eh.e_shnum; i++) {
		uint64_t q, len = sh[i].sh_size;

		if (sh[i].sh_type != SHT_NOTE ||
		    !sdt_name_is(shstr, shstr_size, sh[i].sh_name, ".note.stapsdt"))
			continue;
		free(notes);
		notes = sdt_read(fd, sh[i].sh_offset, len, size);
		if (!notes)
			continue;
		for (q = 0; len - q >= sizeof(Elf64_Nhdr);) {
			Elf64_Nhdr nh;
			const uint8_t *desc;
			const char *prov, *pname, *args;
			uint64_t pc, nbase, sem, name_at, desc_at;

			memcpy(&nh, notes + q, sizeof(nh));
			/* in 64 bits: a size near 4 GiB rounded up must not wrap to 0 */
			name_at = q + sizeof(nh);
			desc_at = name_at + (((uint64_t)nh.n_namesz + 3) & ~3ull);
			q = desc_at + (((uint64_t)nh.n_descsz + 3) & ~3ull);
			if (q > len)
				break;
			desc = notes + desc_at;
			if (nh.n_type != 3 || nh.n_descsz < 27 || nh.n_namesz != 8 ||
			    memcmp(notes + name_at, "stapsdt", 8))
				continue;
			if (desc[nh.n_descsz - 1] != 0)
				continue;
			memcpy(&pc, desc, 8);
			memcpy(&nbase, desc + 8, 8);
			memcpy(&sem, desc + 16, 8);
			prov = (const char *)desc + 24;
			pname = prov + strlen(prov) + 1;
			if ((const uint8_t *)pname >= desc + nh.n_descsz)
				continue;
			args = pname + strlen(pname) + 1;
			if ((const uint8_t *)args >= desc + nh.n_descsz)
				continue;
			if (strcmp(prov, provider))
				continue;
			if (ret >= max)
				continue;
			o = &out[ret];
			snprintf(o->name, sizeof(o->name), "%s", pname);
			if (base_addr && nbase)
				pc += base_addr - nbase;
			/* virtual address -> file offset, through the program headers */
			o->offset = 0;
			for (j = 0; j < eh.e_phnum; j++)
				if (ph[j].p_type == PT_LOAD && pc >= ph[j].p_vaddr &&
				    pc - ph[j].p_vaddr < ph[j].p_filesz)
					o->offset = pc - ph[j].p_vaddr + ph[j].p_offset;
			o->sem_offset = 0;
			for (j = 0; sem && j < eh.e_shnum; j++)
				if (sh[j].sh_type == SHT_PROGBITS && (sh[j].sh_flags & SHF_ALLOC) &&
				    sem >= sh[j].sh_addr && sem - sh[j].sh_addr < sh[j].sh_size)
					o->sem_offset = sem - sh[j].sh_addr + sh[j].sh_offset;
			snprintf(o->args, sizeof(o->args), "%s", args);
			ret += !!o->offset;	/* a site outside the loaded segments: none */
		}
	}
out:
	free(notes);
	free(shstr);
	free(ph);
	free(sh);
	close(fd);
	return ret;
}

int _uevent_tracepoint_id(const char *sys, const char *ev, char *fmt, size_t fmt_cap)
{
	const char *dir = _uevent_tracefs();
	char path[256], buf[32];
	int n;

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, sys, ev);
	n = _uevent_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys, ev);
	if (_uevent_read_small(path, fmt, fmt_cap) < 0)
		return -ENOENT;
	return atoi(buf);
}

/* ---- libuevent:emit, the event for plain perf ----------------------------------------- */

#define PERF_EVENT_GROUP "libuevent"
#define PERF_EVENT_NAME "emit"

/*
 * The libuevent:emit defined now, as uprobe_events shows it (into def): 1 if it is one we
 * make (our type, size and text fetches at the libuevent:text probe of the file it is
 * on), 0 if it is another's, -ENOENT if there is none. tracefs records no owner: what it
 * probes and fetches is what tells ours apart.
 */
static int perf_event_ours(char *def, size_t cap)
{
	struct _uevent_sdt_probe p[16];
	const char *dir = _uevent_tracefs();
	char path[PATH_MAX], line[PATH_MAX + 512];
	unsigned long long off;
	int found = 0, n, i;
	FILE *f;

	if (!dir)
		return -ENOENT;
	snprintf(line, sizeof(line), "%s/uprobe_events", dir);
	f = fopen(line, "re");
	if (!f)
		return -ENOENT;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "p:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME " ",
				 sizeof("p:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME));
	fclose(f);
	if (!found)
		return -ENOENT;
	line[strcspn(line, "\n")] = 0;
	snprintf(def, cap, "%s", line);
	if (sscanf(line + sizeof("p:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME), "%4095[^:]:0x%llx",
		   path, &off) != 2 || !strstr(line, " type=") || !strstr(line, " size=") ||
	    !strstr(line, " text=+0(") || !strstr(line, "):string"))
		return 0;
	n = _uevent_sdt_find_all(path, "libuevent", p, ARRAY_SIZE(p));
	for (i = 0; i < n; i++)
		if (!strcmp(p[i].name, "text") && p[i].offset == off)
			return 1;
	return 0;
}

/* Removes libuevent:emit if it is ours (-EEXIST: another's, left; reason says which). */
static int perf_event_remove_ours(void)
{
	char def[PATH_MAX + 512];
	int err = perf_event_ours(def, sizeof(def));

	if (err < 0)
		return err;
	if (!err) {
		_uevent_reason("libuevent:emit is not one uevent made (%s): left as it is", def);
		return -EEXIST;
	}
	err = _uevent_tracefs_append("uprobe_events", "-:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME);
	if (err == -EBUSY)
		_uevent_reason("libuevent:emit is in use (a perf record has it open)");
	return err;
}

UEVENT_EXPORT int uevent_perf_event_remove(void)
{
	int err = perf_event_remove_ours();

	return err < 0 ? _uevent_err(-err) : 0;
}

UEVENT_EXPORT int uevent_perf_event_add(const char *path)
{
	struct _uevent_sdt_probe p[16];
	char real[PATH_MAX], def[PATH_MAX + 512], sem[32], tok[3][64], f[3][64];
	char have[PATH_MAX + 512], tok_path[PATH_MAX];
	unsigned long long off;
	Dl_info info;
	int n, i, err;

	if (!path) {
		if (!dladdr((const void *)&_uevent_word, &info) || !info.dli_fname)
			return _uevent_err(ENOENT);
		path = info.dli_fname;
	}
	if (!realpath(path, real))
		return _uevent_err(errno);
	if (_uevent_uprobe_path_check(real) < 0) {
		_uevent_reason("its path holds a space or a control character, which "
			       "uprobe_events would read as more commands (%s)", real);
		return _uevent_err(EINVAL);
	}
	n = _uevent_sdt_find_all(real, "libuevent", p, ARRAY_SIZE(p));
	if (n < 0)
		return _uevent_err(-n);
	for (i = 0; i < n && strcmp(p[i].name, "text"); i++)
		;
	if (i == n)
		return _uevent_err(ENOENT);	/* no libuevent, or one before libuevent:text */
	if (sscanf(p[i].args, "%63s %63s %63s", tok[0], tok[1], tok[2]) != 3 ||
	    _uevent_sdt_arg_fetch(tok[0], f[0], 64) < 0 ||
	    _uevent_sdt_arg_fetch(tok[1], f[1], 64) < 0 ||
	    _uevent_sdt_arg_fetch(tok[2], f[2], 64) < 0) {
		_uevent_reason("its libuevent:text probe has arguments a uprobe cannot fetch "
			       "(%s)", p[i].args);
		return _uevent_err(EINVAL);
	}
	/* the semaphore turns the marks on in the processes perf attaches the event to */
	snprintf(sem, sizeof(sem), "(0x%llx)", (unsigned long long)p[i].sem_offset);
	snprintf(def, sizeof(def), "p:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME " %s:0x%llx%s "
		 "type=%s:u32 size=%s:u64 text=+0(%s):string", real,
		 (unsigned long long)p[i].offset, p[i].sem_offset ? sem : "", f[0], f[2], f[1]);
	/* the same one, already there: kept (someone may be recording with it) */
	if (perf_event_ours(have, sizeof(have)) == 1 &&
	    sscanf(have, "p:" PERF_EVENT_GROUP "/" PERF_EVENT_NAME " %4095[^:]:0x%llx", tok_path,
		   &off) == 2 && !strcmp(tok_path, real) && off == p[i].offset)
		return 0;
	err = perf_event_remove_ours();
	if (err < 0 && err != -ENOENT)
		return _uevent_err(-err);
	err = _uevent_tracefs_append("uprobe_events", def);
	if (err < 0)
		_uevent_reason("uprobe_events refused '%s': %s", def, strerror(-err));
	return err < 0 ? _uevent_err(-err) : 0;
}
