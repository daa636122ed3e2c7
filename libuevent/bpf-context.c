/* bpf-context.c - samples' thread context on stock kernels: bpf/context.bpf.c's loader and reader. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_uevent.h>

#include "bpf-context.h"
#include "internal.h"
#include "rec-writer.h"
#include "session-internal.h"


#if HAVE_BPF_CONTEXT && defined(__x86_64__)
#include <linux/types.h>
#include <linux/perf_event.h>
#include <elf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/context-shared.h"
#include "bpf/context.skel.h"
/*
 * Where the calling thread's OTEP 4947 record lies from its thread pointer (%fs base;
 * the TCB's first word points at itself). The record is initial-exec TLS, in static
 * TLS, so this is the process's offset for all its threads.
 */
static long self_offset(void)
{
	const struct uevent_thread_context_record *rec = uevent_thread_context_get();
	unsigned long tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (long)((unsigned long)rec - tp);
}

/*
 * A process whose threads set their context before the session opened made their
 * prctl before the program was there to see it: the offset is read out of the
 * process instead. libuevent keeps it in uevent_thread_context_tp_offset (context.c),
 * which is found as a reader outside finds otel_thread_ctx_v1: in the symbol tables
 * (.dynsym, else .symtab: a static executable) of the ELF files the process maps, at
 * the address the file's first mapping puts it.
 */
#define TP_SYM		"uevent_thread_context_tp_offset"
#define SYMTAB_MAX	(64u << 20)	/* the symbol or string table bytes read of a file */

static void *read_at(int fd, uint64_t off, uint64_t n)
{
	void *p;

	if (!n || n > SYMTAB_MAX)
		return NULL;
	p = malloc(n);
	if (p && pread(fd, p, n, (off_t)off) != (ssize_t)n) {
		free(p);
		return NULL;
	}
	return p;
}

/* TP_SYM's address in a file mapped (offset 0) at start: 0 where it has none. */
static uint64_t elf_tp_sym(int fd, uint64_t start)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Shdr *sh = NULL;
	uint64_t addr = 0, load = UINT64_MAX;
	unsigned int pass, i;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(*ph) ||
	    eh.e_shentsize != sizeof(*sh) || !eh.e_shnum)
		return 0;
	ph = read_at(fd, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(*ph));
	sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(*sh));
	if (!ph || !sh)
		goto out;
	for (i = 0; i < eh.e_phnum; i++)	/* the mapping at offset 0 is the first PT_LOAD */
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0 && ph[i].p_vaddr < load)
			load = ph[i].p_vaddr & ~0xfffull;
	if (load == UINT64_MAX)
		goto out;
	for (pass = 0; pass < 2 && !addr; pass++) {
		for (i = 0; i < eh.e_shnum && !addr; i++) {
			Elf64_Sym *sym;
			char *str;
			uint64_t k, n, strn;

			if (sh[i].sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM) ||
			    sh[i].sh_link >= eh.e_shnum || sh[i].sh_entsize != sizeof(*sym))
				continue;
			n = sh[i].sh_size / sizeof(*sym);
			strn = sh[sh[i].sh_link].sh_size;
			sym = read_at(fd, sh[i].sh_offset, n * sizeof(*sym));
			str = read_at(fd, sh[sh[i].sh_link].sh_offset, strn);
			for (k = 0; sym && str && k < n; k++)
				if (sym[k].st_name < strn && sym[k].st_shndx != SHN_UNDEF &&
				    ELF64_ST_TYPE(sym[k].st_info) == STT_OBJECT &&
				    strnlen(str + sym[k].st_name, strn - sym[k].st_name) ==
				    sizeof(TP_SYM) - 1 &&
				    !memcmp(str + sym[k].st_name, TP_SYM, sizeof(TP_SYM) - 1)) {
					addr = start - load + sym[k].st_value;
					break;
				}
			free(sym);
			free(str);
		}
	}
out:
	free(ph);
	free(sh);
	return addr;
}

/* pid's record offset from its threads' thread pointer, or 0 (no libuevent, no set yet). */
static long tp_offset_of(uint32_t pid)
{
	char path[64], line[4096 + 128];
	long off = 0;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return 0;
	while (!off && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, pgoff;
		char mf[96], *file = strchr(line, '/'), *nl = strchr(line, '\n');
		uint64_t addr;
		int fd;

		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &pgoff) != 3 || pgoff ||
		    !file)
			continue;
		if (nl)
			*nl = 0;
		/* the very file mapped, whichever mount namespace it is in (root: map_files) */
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid, start, end);
		fd = open(mf, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		addr = elf_tp_sym(fd, start);
		close(fd);
		if (addr) {
			struct iovec l = { &off, sizeof(off) }, r = { (void *)addr, sizeof(off) };

			if (process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(off))
				off = 0;
		}
	}
	fclose(maps);
	return off;
}

/* One sample's ids, waiting for its sample in an open-addressed table. */
struct slot {
	uint64_t time;
	uint32_t tid;
	uint8_t used, flags;
	uint16_t attrs_size;
	uint8_t trace_id[16], span_id[8];
	uint8_t *attrs;		/* attrs_size bytes (malloc), the record's attributes */
};

struct _uevent_bpf_ctx {
	struct uevent_ctx_bpf *skel;
	struct ring_buffer *rb;
	struct slot *t;
	size_t cap, n;
	uint64_t last;		/* the last sample's time: ids older than it found no sample */
	uint64_t matched, missed;
	uint32_t *tried;	/* the processes whose offset was looked for (tp_offset_of) */
	size_t ntried;
	/* the last sample filled: its record as the kernel path's TLS dump (tls_user) */
	uint64_t dump[(UEVENT_BPF_CTX_HDR + UEVENT_BPF_CTX_ATTRS + 7) / 8];
};

#define MAX_TRIED	4096	/* processes looked into, at most: then no more */

#define MAX_SLOTS	(1u << 20)
#define BPF_CTX_DUMP	32	/* the record's header, as a TLS_USER dump (8-byte multiple) */

static size_t slot_hash(uint64_t time, uint32_t tid, size_t cap)
{
	return (size_t)(((time ^ ((uint64_t)tid << 40)) * 0x9E3779B97F4A7C15ull) >> 20) &
	       (cap - 1);
}

static struct slot *slot_find(struct _uevent_bpf_ctx *c, uint64_t time, uint32_t tid)
{
	size_t i;

	if (!c->cap)
		return NULL;
	for (i = slot_hash(time, tid, c->cap); c->t[i].used; i = (i + 1) & (c->cap - 1))
		if (c->t[i].time == time && c->t[i].tid == tid)
			return &c->t[i];
	return NULL;
}

/* Linear probing's delete: later slots of the run move back over the hole. */
static void slot_del(struct _uevent_bpf_ctx *c, struct slot *s)
{
	size_t i = (size_t)(s - c->t), j = i, h;

	c->t[i].used = 0;
	c->n--;
	for (;;) {
		j = (j + 1) & (c->cap - 1);
		if (!c->t[j].used)
			return;
		h = slot_hash(c->t[j].time, c->t[j].tid, c->cap);
		/* j's entry may fill i when its home is not in (i, j] */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			c->t[i] = c->t[j];
			c->t[j].used = 0;
			i = j;
		}
	}
}

static void slot_put(struct slot *t, size_t cap, const struct slot *e)
{
	size_t i;

	for (i = slot_hash(e->time, e->tid, cap); t[i].used; i = (i + 1) & (cap - 1))
		;
	t[i] = *e;
}

/* Rebuilt at cap, without the ids older than the last sample (theirs never came). */
static int slots_rebuild(struct _uevent_bpf_ctx *c, size_t cap)
{
	struct slot *t = calloc(cap, sizeof(*t));
	size_t i, n = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < c->cap; i++)
		if (c->t[i].used && c->t[i].time >= c->last) {
			slot_put(t, cap, &c->t[i]);
			n++;
		} else if (c->t[i].used) {
			free(c->t[i].attrs);
		}
	free(c->t);
	c->t = t;
	c->cap = cap;
	c->n = n;
	return 0;
}

static int on_id(void *ctx, void *data, size_t size)
{
	struct _uevent_bpf_ctx *c = ctx;
	const struct uevent_bpf_ctx_id *id = data;
	struct slot e = { 0 };

	if (size < sizeof(*id) || id->time < c->last)
		return 0;
	if (id->attrs_size && id->attrs_size <= UEVENT_BPF_CTX_ATTRS &&
	    size >= sizeof(struct uevent_bpf_ctx_id_attrs)) {
		e.attrs = malloc(id->attrs_size);
		if (e.attrs) {
			memcpy(e.attrs, ((const struct uevent_bpf_ctx_id_attrs *)data)->attrs,
			       id->attrs_size);
			e.attrs_size = id->attrs_size;
		}
	}
	if ((c->n + 1) * 2 > c->cap) {
		slots_rebuild(c, c->cap ? c->cap : 1024);
		/* (cap 0: the first table could not be had; none of 0 slots either) */
		if ((c->n + 1) * 2 > c->cap && (!c->cap || c->cap >= MAX_SLOTS ||
						 slots_rebuild(c, c->cap * 2) < 0)) {
			free(e.attrs);
			return 0;	/* the reader is that far behind: this sample goes without */
		}
	}
	e.time = id->time;
	e.tid = id->tid;
	e.used = 1;
	e.flags = id->flags;
	memcpy(e.trace_id, id->trace_id, 16);
	memcpy(e.span_id, id->span_id, 8);
	slot_put(c->t, c->cap, &e);
	c->n++;
	return 0;
}

static char load_log[256];

static int log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG)
		vsnprintf(load_log, sizeof(load_log), fmt, ap);
	return 0;
}

static void say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

struct _uevent_bpf_ctx *_uevent_bpf_ctx_open(char *why, size_t n)
{
	struct _uevent_bpf_ctx *c;
	libbpf_print_fn_t old;
	struct uevent_bpf_ctx_proc self = { 0 };
	uint32_t pid = (uint32_t)getpid();
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		say(why, n, "no kernel BTF (/sys/kernel/btf/vmlinux: %s): the kernel needs "
		    "CONFIG_DEBUG_INFO_BTF", strerror(errno));
		errno = ENOTSUP;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	/* libbpf's messages are the process's print hook's: ours only while loading */
	load_log[0] = 0;
	old = libbpf_set_print(log_print);
	c->skel = uevent_ctx_bpf__open_and_load();
	err = c->skel ? uevent_ctx_bpf__attach(c->skel) : -errno;
	libbpf_set_print(old);
	if (err < 0) {
		char *nl = strchr(load_log, '\n');

		if (nl)
			*nl = 0;
		if (err == -EPERM || err == -EACCES)
			say(why, n, "loading the BPF program: %s (needs root, or CAP_BPF and "
			    "CAP_PERFMON)", strerror(-err));
		else
			say(why, n, "loading the BPF program: %s%s%s", strerror(-err),
			    load_log[0] ? ": " : "", load_log);
		_uevent_bpf_ctx_close(c);
		errno = -err;
		return NULL;
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.ids), on_id, c, NULL);
	if (!c->rb) {
		err = -errno;
		say(why, n, "the BPF ring buffer: %s", strerror(-err));
		_uevent_bpf_ctx_close(c);
		errno = -err;
		return NULL;
	}
	/* this process may have set its threads' context before the session opened */
	self.offset = self_offset();
	bpf_map__update_elem(c->skel->maps.procs, &pid, sizeof(pid), &self, sizeof(self), BPF_ANY);
	return c;
}

int _uevent_bpf_ctx_attach(struct _uevent_bpf_ctx *c, int perf_fd)
{
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(c->skel->progs.uevent_ctx_sample)))
		return -errno;
	return 0;
}

/*
 * Seeds pid's offset if the program knows none (its threads' first set came before
 * the session) and the process has one to read: each process is looked into once.
 */
void _uevent_bpf_ctx_learn(struct _uevent_bpf_ctx *c, uint32_t pid)
{
	struct uevent_bpf_ctx_proc p = { 0 };
	size_t i;

	if (!pid)
		return;
	if (!c->tried && !(c->tried = calloc(MAX_TRIED * 2, sizeof(*c->tried))))
		return;
	for (i = (pid * 0x9E3779B1u) & (MAX_TRIED * 2 - 1); c->tried[i];
	     i = (i + 1) & (MAX_TRIED * 2 - 1))
		if (c->tried[i] == pid)
			return;
	if (c->ntried >= MAX_TRIED)
		return;
	c->tried[i] = pid;
	c->ntried++;
	if (bpf_map__lookup_elem(c->skel->maps.procs, &pid, sizeof(pid), &p, sizeof(p), 0) == 0)
		return;		/* the program saw its prctl */
	p.offset = tp_offset_of(pid);
	p.mm = 0;		/* the program takes the mm at its first sample */
	if (p.offset)
		bpf_map__update_elem(c->skel->maps.procs, &pid, sizeof(pid), &p, sizeof(p),
				     BPF_NOEXIST);
}

void _uevent_bpf_ctx_fill(struct _uevent_bpf_ctx *c, struct uevent_perf_record *rec)
{
	struct uevent_perf_sample *s = &rec->u.sample;
	struct slot *e;

	if (rec->body != UEVENT_BODY_SAMPLE || s->context_err == 0 ||
	    (rec->id.fields & (UEVENT_ID_TIME | UEVENT_ID_TID)) != (UEVENT_ID_TIME | UEVENT_ID_TID))
		return;
	e = slot_find(c, rec->id.time, rec->id.tid);
	if (!e) {
		ring_buffer__consume(c->rb);
		e = slot_find(c, rec->id.time, rec->id.tid);
	}
	if (rec->id.time > c->last)
		c->last = rec->id.time;
	if (!e) {
		c->missed++;
		/* its process may have set its context before the session: later ones get it */
		_uevent_bpf_ctx_learn(c, rec->id.pid);
		return;
	}
	s->context_err = 0;
	memcpy(s->context_trace_id, e->trace_id, 16);
	memcpy(s->context_span_id, e->span_id, 8);
	s->context_flags = e->flags;
	/*
	 * The record as the kernel path gives it, the attributes with it: a TLS dump of
	 * header and attrs_data (8-byte multiple), for uevent_thread_context_attr_next().
	 */
	if (!s->tls_user_size) {
		uint8_t *d = (uint8_t *)c->dump;
		size_t n = (UEVENT_BPF_CTX_HDR + e->attrs_size + 7) & ~(size_t)7;

		memset(d, 0, n);
		memcpy(d, e->trace_id, 16);
		memcpy(d + 16, e->span_id, 8);
		d[24] = 1;
		d[25] = e->flags;
		d[26] = (uint8_t)e->attrs_size;		/* little-endian: x86-64 */
		d[27] = (uint8_t)(e->attrs_size >> 8);
		if (e->attrs_size)
			memcpy(d + UEVENT_BPF_CTX_HDR, e->attrs, e->attrs_size);
		s->tls_user = d;
		s->tls_user_size = s->tls_user_dyn_size = n;
	}
	free(e->attrs);
	c->matched++;
	slot_del(c, e);
}

/*
 * A recording holds what the patched kernel's path would have written: the sample with
 * a TLS_USER dump of the record (the ids, valid, flags, and the attributes read: 32
 * bytes at least, 8-byte multiples, up to 640; the attr's sample_tls_user says 32, the
 * least), or an empty dump, so every reader of the file decodes context_* and the
 * attributes as it does there.
 */
void _uevent_bpf_ctx_rec_append(struct uevent_session *s, const void *r, size_t n,
				const struct uevent_perf_record *rec)
{
	const struct uevent_perf_sample *smp = &rec->u.sample;
	struct perf_event_header h;
	uint64_t size = 0, dump[4] = { 0 };
	const void *d = NULL;

	if (n < sizeof(h) || rec->body != UEVENT_BODY_SAMPLE) {
		_uevent_rec_append(&s->rec, r, n);
		return;
	}
	if (smp->context_err == 0 && smp->tls_user && smp->tls_user_size >= BPF_CTX_DUMP) {
		d = smp->tls_user;	/* the fill's: header and attributes */
		size = smp->tls_user_size;
	} else if (smp->context_err == 0) {
		uint8_t *b = (uint8_t *)dump;

		memcpy(b, smp->context_trace_id, 16);
		memcpy(b + 16, smp->context_span_id, 8);
		b[24] = 1;
		b[25] = smp->context_flags;
		d = dump;
		size = BPF_CTX_DUMP;
	}
	memcpy(&h, r, sizeof(h));
	h.size = (uint16_t)(h.size + 8 + (size ? size + 8 : 0));
	_uevent_rec_append(&s->rec, &h, sizeof(h));
	_uevent_rec_append(&s->rec, (const uint8_t *)r + sizeof(h), n - sizeof(h));
	_uevent_rec_append(&s->rec, &size, 8);
	if (size) {
		_uevent_rec_append(&s->rec, d, size);
		_uevent_rec_append(&s->rec, &size, 8);	/* dyn_size: all of it */
	}
}

void _uevent_bpf_ctx_rec_attr(const struct uevent_session *s, int kind,
			      struct perf_event_attr *a)
{
	if (s->bpf_ctx && kind == K_SAMPLES)
		uevent_attr_set_tls_user(a, BPF_CTX_DUMP);
}

void _uevent_bpf_ctx_close(struct _uevent_bpf_ctx *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	uevent_ctx_bpf__destroy(c->skel);
	for (size_t i = 0; i < c->cap; i++)
		if (c->t[i].used)
			free(c->t[i].attrs);
	free(c->tried);
	free(c->t);
	free(c);
}

int _uevent_bpf_ctx_probe(char *why, size_t n)
{
	struct _uevent_bpf_ctx *c = _uevent_bpf_ctx_open(why, n);

	if (!c)
		return -errno;
	_uevent_bpf_ctx_close(c);
	say(why, n, "a BPF program reads each sampled thread's OTEP 4947 record");
	return 0;
}

#else	/* !HAVE_BPF_CONTEXT */

#if !HAVE_BPF_CONTEXT
#define MISSING BPF_CONTEXT_MISSING
#else
#define MISSING "the BPF context reader takes the thread pointer from x86-64's fsbase"
#endif

struct _uevent_bpf_ctx *_uevent_bpf_ctx_open(char *why, size_t n)
{
	snprintf(why, n, "%s", MISSING);
	errno = ENOTSUP;
	return NULL;
}

int _uevent_bpf_ctx_attach(struct _uevent_bpf_ctx *c, int perf_fd)
{
	(void)c;
	(void)perf_fd;
	return -ENOTSUP;
}

void _uevent_bpf_ctx_learn(struct _uevent_bpf_ctx *c, uint32_t pid)
{
	(void)c;
	(void)pid;
}

void _uevent_bpf_ctx_fill(struct _uevent_bpf_ctx *c, struct uevent_perf_record *rec)
{
	(void)c;
	(void)rec;
}

void _uevent_bpf_ctx_rec_append(struct uevent_session *s, const void *r, size_t n,
				const struct uevent_perf_record *rec)
{
	(void)rec;
	_uevent_rec_append(&s->rec, r, n);
}

void _uevent_bpf_ctx_rec_attr(const struct uevent_session *s, int kind,
			      struct perf_event_attr *a)
{
	(void)s;
	(void)kind;
	(void)a;
}

void _uevent_bpf_ctx_close(struct _uevent_bpf_ctx *c)
{
	(void)c;
}

int _uevent_bpf_ctx_probe(char *why, size_t n)
{
	snprintf(why, n, "%s", MISSING);
	return -ENOTSUP;
}
#endif

/*
 * A session asked for context: the kernel's own path where it has PR_PERF_TLS_AREA
 * (samples dump the registered record: TLS_USER of the record's header at least), else
 * the BPF program on the sampling events.
 */
int _uevent_session_context(struct uevent_session *s, char *why, size_t n)
{
	struct uevent_kernel_abi abi;

	if (!s->o.sample_period_ns) {
		snprintf(why, n, "only samples carry it: ask for samples (sample_period_ns)");
		return -EINVAL;
	}
	if (_uevent_prctl_query(&abi) == 0 && (abi.features & PERF_UEVENT_FEAT_TLS_AREA)) {
		if (s->o.tls_user < UEVENT_THREAD_CONTEXT_HEADER_SIZE)
			s->o.tls_user = (UEVENT_THREAD_CONTEXT_HEADER_SIZE + 7) & ~7u;
		return 0;
	}
	s->bpf_ctx = _uevent_bpf_ctx_open(why, n);
	if (!s->bpf_ctx)
		return -errno;
	if (s->o.pid > 0)	/* a running process: its threads may have set theirs already */
		_uevent_bpf_ctx_learn(s->bpf_ctx, (uint32_t)s->o.pid);
	return 0;
}
