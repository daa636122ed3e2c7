/* report.c - `uevent report` (overhead by symbol, time per uevent range) and
 * `uevent export --folded`: a perf.data's samples named by uevent_symbolizer. */
#include "config.h"

#include <errno.h>
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "cli.h"
#include "uevent.h"

/* ---- the samples of a file, named ---------------------------------------------- */

struct frame {
	const char	*sym;		/* the symbolizer's, or one of ours (unknowns) */
	const char	*raw;		/* sym as the binary has it (not demangled) */
	const char	*dso;
	const char	*file;		/* its source file (DWARF), NULL if not known */
	uint64_t	addr;		/* the address named (a call's, for return addresses) */
	uint64_t	sym_addr;	/* the symbol's start, 0 if not named */
	uint32_t	line;		/* its source line, 0 if not known */
	int		kernel;
	int32_t		map;		/* the mapping (struct profile's maps) or -1 */
};

/* An executable mapping (MMAP, MMAP2), for pprof's mappings. */
struct pmap {
	uint32_t	pid;
	uint64_t	addr, len, pgoff, time;
	const char	*file;
	uint8_t		build_id[20];
	uint32_t	build_id_size;	/* from MMAP2, else read from the file when asked */
	int		bid_read;
};

struct sample {
	uint32_t	pid, tid;
	uint64_t	time, period;
	const char	*comm;
	uint32_t	nframes;	/* leaf first */
	struct frame	*frames;
	uint32_t	nranges;	/* the uevent ranges open on its thread, outer first */
	const char	**ranges;
	int		has_ctx;	/* its thread's OpenTelemetry context (context_*) */
	uint8_t		trace_id[16], span_id[8];
};

struct row {
	char		*key;		/* the sort keys' text, tab-separated */
	uint64_t	self, children;
	uint64_t	seen;		/* the sample that last counted it (children) */
};

struct table {
	struct row	*v;
	size_t		n, cap;		/* open addressing, cap a power of two */
};

struct open_range {
	uint64_t	id, begin;
	const char	*name;
};

struct thread_ranges {
	uint32_t	tid;
	struct open_range *v;
	size_t		n, cap;
};

struct range_stat {
	const char	*name;
	uint64_t	count, ns, samples, period;
};

struct profile {
	struct uevent_symbolizer *sym;
	struct sample	*s;
	size_t		n, cap;
	uint64_t	total_period, with_chain;
	struct thread_ranges *tr;
	size_t		ntr;
	struct range_stat *rs;
	size_t		nrs;
	struct table	strs;		/* our own strings: names, unknowns */
	const char	*path;
	int		cut;		/* the file ended inside a record */
	unsigned long	bad_jit;	/* JIT uevents that did not decode */
	uint64_t	filtered;	/* samples --pid, --tid, --comm, --time left out */
	void		*dem;		/* mangled name -> demangled, by pointer */
	size_t		ndem, dcap;
	const char	*cmd;
	struct pmap	*maps;
	size_t		nmaps, mcap;
	char		said[640];	/* the last file the symbolizer skipped, said */
};

/* report's --pid, --tid, --comm, --time (NULL: every sample) */
static const struct cli_filter *sample_filter;

static struct row *row_get(struct table *t, const char *key);

/* Our copy of str, one per distinct string (names, unknown addresses). */
static const char *own(struct profile *p, const char *str)
{
	struct row *r = row_get(&p->strs, str);

	return r ? r->key : NULL;
}

static struct thread_ranges *ranges_of(struct profile *p, uint32_t tid)
{
	struct thread_ranges *v;
	size_t i;

	for (i = 0; i < p->ntr; i++)
		if (p->tr[i].tid == tid)
			return &p->tr[i];
	v = realloc(p->tr, (p->ntr + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->tr = v;
	memset(&v[p->ntr], 0, sizeof(*v));
	v[p->ntr].tid = tid;
	return &v[p->ntr++];
}

static struct range_stat *range_stat(struct profile *p, const char *name)
{
	struct range_stat *v;
	size_t i;

	for (i = 0; i < p->nrs; i++)
		if (p->rs[i].name == name)
			return &p->rs[i];
	v = realloc(p->rs, (p->nrs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->rs = v;
	memset(&v[p->nrs], 0, sizeof(*v));
	v[p->nrs].name = name;
	return &v[p->nrs++];
}

/* Nested ranges per thread, in time order: what is open when a sample comes. */
static int take_range(struct profile *p, const struct uevent_perf_record *r, int bo)
{
	const struct uevent_record *u = &r->u.uevent;
	struct uevent_range_begin b;
	struct uevent_range_end e;
	struct thread_ranges *t;
	size_t i;

	if (u->type == UEVENT_TYPE_RANGE_BEGIN && !uevent_range_begin_decode(u->data, u->size,
									bo, &b)) {
		if (b.flags & UEVENT_RANGE_ASYNC)
			return 0;	/* not the thread's: not attributed */
		t = ranges_of(p, r->id.tid);
		if (!t)
			return -ENOMEM;
		if (t->n == t->cap) {
			struct open_range *v = realloc(t->v, (t->cap = t->cap ? t->cap * 2 : 8) *
						       sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->v = v;
		}
		t->v[t->n].id = b.id;
		t->v[t->n].begin = r->id.time;
		t->v[t->n].name = own(p, b.name);
		if (!t->v[t->n].name)
			return -ENOMEM;
		t->n++;
	} else if (u->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(u->data, u->size, bo, &e) &&
		   !(e.flags & UEVENT_RANGE_ASYNC)) {
		t = ranges_of(p, r->id.tid);
		if (!t)
			return -ENOMEM;
		for (i = t->n; i-- > 0;) {
			if (t->v[i].id != e.id)
				continue;
			{
				struct range_stat *rs = range_stat(p, t->v[i].name);

				if (!rs)
					return -ENOMEM;
				rs->count++;
				rs->ns += r->id.time - t->v[i].begin;
			}
			t->n = i;	/* ends those left open inside it too */
			break;
		}
	}
	return 0;
}

/* ---- names as perf and c++filt print them ------------------------------------- */

int cli_no_demangle;

/* Rust's legacy escapes, in place: $LT$ <, $GT$ >, $u20$ ' ', .. ::, ... */
static void rust_unescape(char *d)
{
	static const struct { const char *from, *to; } esc[] = {
		{ "$LT$", "<" }, { "$GT$", ">" }, { "$RF$", "&" }, { "$BP$", "*" }, { "$C$", "," },
		{ "$SP$", "@" }, { "$LP$", "(" }, { "$RP$", ")" }, { "$u20$", " " },
		{ "$u27$", "'" }, { "$u5b$", "[" }, { "$u5d$", "]" }, { "$u7b$", "{" },
		{ "$u7d$", "}" }, { "$u7e$", "~" }, { "..", "::" },
	};
	char *w = d, *r = d;
	size_t i;

	while (*r) {
		/* a path segment starting with an escape has a '_' before it */
		if (r[0] == '_' && r[1] == '$' && (w == d || (w - d >= 2 && w[-1] == ':' && w[-2] == ':')))
			r++;
		for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
			size_t n = strlen(esc[i].from);

			if (!strncmp(r, esc[i].from, n) && strlen(esc[i].to) <= n) {
				memcpy(w, esc[i].to, strlen(esc[i].to));
				w += strlen(esc[i].to);
				r += n;
				break;
			}
		}
		if (i == sizeof(esc) / sizeof(esc[0]))
			*w++ = *r++;
	}
	*w = 0;
}

/*
 * A C++ or (legacy) Rust name demangled, as perf prints it, or NULL (not mangled, no
 * libstdc++ or --no-demangle); the caller frees it. libstdc++'s __cxa_demangle is looked
 * up at run time: the CLI links no C++ runtime, and a program with C++ names has one.
 * Rust's legacy names are Itanium ones ending in a ::h<16 hex digits> hash, dropped.
 */
char *cli_demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static int tried;
	char *d;
	size_t n;
	int st = -1;

	if (cli_no_demangle || !name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = 1;
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	d = fn ? fn(name, NULL, NULL, &st) : NULL;
	if (!d || st) {
		free(d);
		return NULL;
	}
	n = strlen(d);
	if (n > 19 && !strncmp(d + n - 19, "::h", 3) &&
	    strspn(d + n - 16, "0123456789abcdef") == 16) {
		d[n - 19] = 0;
		rust_unescape(d);
	}
	return d;
}

/* name demangled once per distinct name (the symbolizer's strings are stable) */
static const char *demangled(struct profile *p, const char *name)
{
	struct dem { const char *k, *v; } *e;
	size_t i, mask;
	char *d;

	if (cli_no_demangle || name[0] != '_' || name[1] != 'Z')
		return name;
	if (p->ndem * 2 >= p->dcap) {
		size_t cap = p->dcap ? p->dcap * 2 : 256, j;
		struct dem *v = calloc(cap, sizeof(*v)), *old = p->dem;

		if (!v)
			return name;
		for (j = 0; j < p->dcap; j++)
			if (old[j].k) {
				for (i = ((uintptr_t)old[j].k >> 4) & (cap - 1); v[i].k; i = (i + 1) & (cap - 1))
					;
				v[i] = old[j];
			}
		free(old);
		p->dem = v;
		p->dcap = cap;
	}
	mask = p->dcap - 1;
	for (i = ((uintptr_t)name >> 4) & mask; (e = &((struct dem *)p->dem)[i])->k; i = (i + 1) & mask)
		if (e->k == name)
			return e->v;
	d = cli_demangle(name);
	e->k = name;
	e->v = d ? own(p, d) : name;
	free(d);
	if (!e->v)
		e->v = name;
	p->ndem++;
	return e->v;
}

/* A file the symbolizer skipped (a FIFO, a link planted as /tmp/perf-PID.map), said once. */
static void say_skipped(struct profile *p)
{
	const char *r = uevent_reason();

	if (strncmp(r, "symbolizer: skipped ", 20) || !strcmp(r, p->said))
		return;
	snprintf(p->said, sizeof(p->said), "%s", r);
	fprintf(stderr, "%s %s: warning: %s\n", cli_prog, p->cmd, r + 12);
}

/* The executable mapping of pid covering addr at time, newest first; a forked child
 * has its parent's (no MMAP of its own): then any process's of that address. -1: none. */
static int32_t map_of(const struct profile *p, uint32_t pid, uint64_t addr, uint64_t time)
{
	size_t i;
	int32_t other = -1;

	for (i = p->nmaps; i-- > 0;) {
		const struct pmap *m = &p->maps[i];

		if (addr < m->addr || addr - m->addr >= m->len || m->time > time)
			continue;
		if (m->pid == pid)
			return (int32_t)i;
		if (other < 0)
			other = (int32_t)i;
	}
	return other;
}

static int take_mmap(struct profile *p, const struct uevent_perf_record *r)
{
	const struct uevent_perf_mmap *m = &r->u.mmap;
	struct pmap *v;

	if ((r->misc & PERF_RECORD_MISC_MMAP_DATA) || (r->type == PERF_RECORD_MMAP2 &&
	    !(m->prot & 4 /* PROT_EXEC */)) || !m->filename || !m->len)
		return 0;
	if (p->nmaps == p->mcap) {
		v = realloc(p->maps, (p->mcap = p->mcap ? 2 * p->mcap : 64) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->maps = v;
	}
	v = &p->maps[p->nmaps];
	memset(v, 0, sizeof(*v));
	v->pid = m->pid;
	v->addr = m->addr;
	v->len = m->len;
	v->pgoff = m->pgoff;
	v->time = r->id.time;
	v->file = own(p, m->filename);
	if (!v->file)
		return -ENOMEM;
	if (m->build_id_size && m->build_id_size <= sizeof(v->build_id)) {
		memcpy(v->build_id, m->build_id, m->build_id_size);
		v->build_id_size = m->build_id_size;
		v->bid_read = 1;
	}
	p->nmaps++;
	return 0;
}

static int add_frame(struct profile *p, struct frame *f, uint32_t pid, uint64_t addr,
		     uint64_t time)
{
	struct uevent_symbol s = { .sz = sizeof(s) };
	char buf[64];
	int ret;

	f->kernel = addr >= 0xffff800000000000ull;
	f->addr = addr;
	f->map = map_of(p, pid, addr, time);
	ret = uevent_symbolizer__lookup(p->sym, pid, addr, time, &s);
	say_skipped(p);
	f->file = s.file;
	f->line = s.line;
	if (ret == 0) {
		f->raw = s.name;
		f->sym = demangled(p, s.name);
		f->dso = s.dso ? s.dso : "[unknown]";
		f->sym_addr = s.sym_addr;
		return 0;
	}
	/* as perf: the address (in its object, when one is known) */
	snprintf(buf, sizeof(buf), "0x%016" PRIx64, s.dso ? s.offset : addr);
	f->sym = f->raw = own(p, buf);
	f->dso = s.dso ? s.dso : "[unknown]";
	return f->sym ? 0 : -ENOMEM;
}

static int is_zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (*b++)
			return 0;
	return 1;
}

static int take_sample(struct profile *p, const struct uevent_perf_record *r, int bo)
{
	const struct uevent_perf_sample *smp = &r->u.sample;
	struct thread_ranges *t = NULL;
	struct sample *s;
	uint64_t i, n = 0;
	int user;
	size_t k;

	if (p->n == p->cap) {
		struct sample *v = realloc(p->s, (p->cap = p->cap ? p->cap * 2 : 1024) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->s = v;
	}
	s = &p->s[p->n];
	memset(s, 0, sizeof(*s));
	s->pid = smp->pid;
	s->tid = smp->tid;
	s->time = smp->time;
	s->period = smp->period ? smp->period : 1;
	/* a valid context, whichever path filled it (the kernel's TLS dump, BPF) */
	if (!smp->context_err && !is_zero(smp->context_trace_id, 16)) {
		s->has_ctx = 1;
		memcpy(s->trace_id, smp->context_trace_id, 16);
		memcpy(s->span_id, smp->context_span_id, 8);
	}
	s->comm = uevent_symbolizer__comm(p->sym, smp->tid, smp->time);
	if (!s->comm)
		s->comm = ":unknown";
	if (sample_filter && !cli_filter_match(sample_filter, s->pid, s->tid, s->comm, s->time)) {
		p->filtered++;
		return 0;
	}
	s->frames = calloc(smp->callchain_nr + 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	/* the callchain starts with the sampled ip; return addresses are named by the call
	 * (addr - 1), as perf does. Context markers (PERF_CONTEXT_*) are skipped. */
	for (i = 0, user = 0; i < smp->callchain_nr; i++) {
		uint64_t a = uevent_perf_u64(smp->callchain, i, bo);

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			user = a == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!a)
			continue;	/* the end of a frame-pointer chain */
		if (user && a >= 0xffff800000000000ull) {
			/* a user stack walk gone astray (code without frame pointers) */
			s->frames[n].sym = s->frames[n].raw = "[unknown]";
			s->frames[n].dso = "[unknown]";
			s->frames[n].addr = a;
			s->frames[n].map = -1;
		} else if (add_frame(p, &s->frames[n], s->pid, n ? a - 1 : a, s->time) < 0) {
			return -ENOMEM;
		}
		n++;
	}
	if (!n) {
		if (add_frame(p, &s->frames[0], s->pid, smp->ip, s->time) < 0)
			return -ENOMEM;
		n = 1;
	} else {
		p->with_chain++;
	}
	s->nframes = (uint32_t)n;
	for (k = 0; k < p->ntr; k++)
		if (p->tr[k].tid == s->tid)
			t = &p->tr[k];
	if (t && t->n) {
		s->ranges = malloc(t->n * sizeof(*s->ranges));
		if (!s->ranges)
			return -ENOMEM;
		for (k = 0; k < t->n; k++)
			s->ranges[k] = t->v[k].name;
		s->nranges = (uint32_t)t->n;
	}
	p->total_period += s->period;
	p->n++;
	return 0;
}

/* ---- --pid, --tid, --comm, --time (cli.h) ------------------------------------- */

void cli_filter_init(struct cli_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->t1 = UINT64_MAX;
}

/* "SECONDS[.FRACTION]" to ns, exactly (the nine digits dump prints); -1 if not one. */
static int parse_seconds(const char *s, const char *end, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000u;
	const char *p = s;

	if (p == end)
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		sec = sec * 10 + (uint64_t)(*p - '0');
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
	if (p != end || sec > UINT64_MAX / 1000000000u - 1)
		return -1;
	*ns = sec * 1000000000u + frac;
	return 0;
}

/* a comma list of numbers: every one a number */
static int is_num_list(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((*s < '0' || *s > '9') && *s != ',')
			return 0;
	return 1;
}

int cli_filter_opt(struct cli_filter *f, const char *cmd, int c, const char *arg)
{
	const char *comma;

	switch (c) {
	case 0x100:
	case 0x101:
		if (!is_num_list(arg)) {
			fprintf(stderr, "%s %s: --%s wants a comma list of numbers, not '%s'\n",
				cli_prog, cmd, c == 0x100 ? "pid" : "tid", arg);
			return -1;
		}
		*(c == 0x100 ? &f->pids : &f->tids) = arg;
		return 1;
	case 0x102:
		f->comms = arg;
		return 1;
	case 0x103:
		comma = strchr(arg, ',');
		if (!comma || (comma > arg && parse_seconds(arg, comma, &f->t0) < 0) ||
		    (comma[1] && parse_seconds(comma + 1, comma + strlen(comma), &f->t1) < 0) ||
		    f->t0 > f->t1) {
			fprintf(stderr, "%s %s: --time wants START,END in seconds as dump prints "
				"them (e.g. 2086.5,2087 or 2086.5,), not '%s'\n", cli_prog, cmd, arg);
			return -1;
		}
		return 1;
	}
	return 0;
}

/* whether the comma list has v (numbers) or the word w */
static int in_list(const char *list, uint64_t v, const char *w)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (w ? strlen(w) == n && !strncmp(p, w, n) : strtoull(p, NULL, 10) == v && n)
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

int cli_filter_match(const struct cli_filter *f, uint32_t pid, uint32_t tid, const char *comm,
		     uint64_t time)
{
	return (!f->pids || in_list(f->pids, pid, NULL)) &&
	       (!f->tids || in_list(f->tids, tid, NULL)) &&
	       (!f->comms || (comm && in_list(f->comms, 0, comm))) &&
	       time >= f->t0 && time <= f->t1;
}

/* ---- the pager: report on a terminal, as perf's ---------------------------------- */

static FILE *pager;
static int pager_saved_fd = -1;

/* Pipes stdout through $PAGER (else less, with LESS=FRX unless set) when it is a
 * terminal; PAGER= or PAGER=cat, --no-pager or a pipe: none. */
static void pager_start(void)
{
	const char *pg = getenv("PAGER");

	if (!isatty(1))
		return;
	if (!pg)
		pg = "less";
	if (!*pg || !strcmp(pg, "cat"))
		return;
	setenv("LESS", "FRX", 0);
	fflush(stdout);
	pager = popen(pg, "w");
	if (!pager)
		return;
	pager_saved_fd = dup(1);
	if (pager_saved_fd < 0 || dup2(fileno(pager), 1) < 0) {
		pclose(pager);
		pager = NULL;
		return;
	}
	signal(SIGPIPE, SIG_IGN);	/* the user quit the pager early: we stop writing */
}

static void pager_end(void)
{
	if (!pager)
		return;
	fflush(stdout);
	dup2(pager_saved_fd, 1);	/* the pager sees the end of its input */
	close(pager_saved_fd);
	pclose(pager);
	pager = NULL;
}

/* A file without samples is an error alike for report and the exports: 1, saying how. */
static int no_samples(const struct profile *p, const char *cmd)
{
	if (p->n)
		return 0;
	if (p->filtered)
		fprintf(stderr, "%s %s: %s: none of its %" PRIu64 " samples is of that --pid, "
			"--tid, --comm or --time\n", cli_prog, cmd, p->path, p->filtered);
	else
		fprintf(stderr, "%s %s: %s: no samples (record them with uevent record -F HZ, "
			"or perf record -g)\n", cli_prog, cmd, p->path);
	return 1;
}

/* Reads path whole: the side-band into the symbolizer, the samples named as of their
 * time. Returns 0, or 1 after saying why. */
static int profile_read(struct profile *p, const char *cmd, const char *path,
			const struct uevent_symbolizer_opts *so_in)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_symbolizer_opts so = *so_in;
	struct uevent_perf_file *f;
	int ret, bo;

	memset(p, 0, sizeof(*p));
	p->path = path;
	p->cmd = cmd;
	if (!strcmp(path, "-") && (ret = cli_stdin_rewindable()) < 0) {
		fprintf(stderr, "%s %s: standard input: %s\n", cli_prog, cmd, strerror(-ret));
		return 1;
	}
	if (strcmp(path, "-") && access(path, R_OK) < 0) {
		fprintf(stderr, "%s %s: %s\n", cli_prog, cmd, cli_open_error(path, errno, 1));
		return 1;
	}
	if (!cli_is_perf_data(path)) {
		fprintf(stderr, "%s %s: %s: not a perf.data (uevent record -F HZ writes one)\n",
			cli_prog, cmd, path);
		return 1;
	}
	f = uevent_perf_file__open(path);
	if (!f) {
		fprintf(stderr, "%s %s: %s\n", cli_prog, cmd, cli_open_error(path, errno, 1));
		return 1;
	}
	bo = uevent_perf_file__byte_order(f);
	so.byte_order = bo;
	if (cli_no_demangle)
		so.flags |= UEVENT_SYMBOLIZER_NO_DEMANGLE;
	p->sym = uevent_symbolizer__new(&so);
	if (!p->sym) {
		fprintf(stderr, "%s %s: %s\n", cli_prog, cmd, strerror(errno));
		uevent_perf_file__close(f);
		return 1;
	}
	while ((ret = uevent_perf_file__next(f, &r)) != 0) {
		if (ret == -EPROTO)
			continue;
		if (ret == -ENODATA) {
			p->cut = 1;
			fprintf(stderr, "%s %s: %s: warning: truncated at offset %" PRIu64 "\n",
				cli_prog, cmd, path, uevent_perf_file__offset(f));
			break;
		}
		if (ret < 0) {
			fprintf(stderr, "%s %s: %s: corrupt record at offset %" PRIu64 ": %s\n",
				cli_prog, cmd, path, uevent_perf_file__offset(f), strerror(-ret));
			uevent_perf_file__close(f);
			return 1;
		}
		if (r.type == PERF_RECORD_SAMPLE)
			ret = take_sample(p, &r, bo);
		else if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2) &&
			 (ret = uevent_symbolizer__feed(p->sym, &r)) >= 0)
			ret = take_mmap(p, &r);
		else if (r.type == PERF_RECORD_UEVENT &&
			 (ret = uevent_symbolizer__feed(p->sym, &r)) >= 0)
			ret = take_range(p, &r, bo);
		else
			ret = uevent_symbolizer__feed(p->sym, &r);
		say_skipped(p);
		if (ret == -EINVAL) {
			p->bad_jit++;
			ret = 0;
		}
		if (ret < 0) {
			fprintf(stderr, "%s %s: %s\n", cli_prog, cmd, strerror(-ret));
			uevent_perf_file__close(f);
			return 1;
		}
	}
	uevent_perf_file__close(f);
	if (p->bad_jit)
		fprintf(stderr, "%s %s: %s: %lu JIT uevents did not decode (skipped)\n", cli_prog,
			cmd, path, p->bad_jit);
	return 0;
}

static void profile_free(struct profile *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->s[i].frames);
		free(p->s[i].ranges);
	}
	for (i = 0; i < p->ntr; i++)
		free(p->tr[i].v);
	for (i = 0; i < p->strs.cap; i++)
		free(p->strs.v[i].key);
	free(p->dem);
	free(p->maps);
	free(p->s);
	free(p->tr);
	free(p->rs);
	free(p->strs.v);
	uevent_symbolizer__free(p->sym);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

/* ---- report ------------------------------------------------------------------- */

/* in column order */
enum { KEY_COMM = 1, KEY_PID = 2, KEY_TRACE = 4, KEY_SPAN = 8, KEY_DSO = 16, KEY_SYM = 32 };

/* n bytes as lowercase hex, as W3C trace context writes ids (buf: 2n + 1) */
static char *hex(char *buf, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct row *row_get(struct table *t, const char *key)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		struct table nt = { NULL, 0, t->cap ? t->cap * 2 : 1024 };

		nt.v = calloc(nt.cap, sizeof(*nt.v));
		if (!nt.v)
			return NULL;
		for (i = 0; i < t->cap; i++) {
			size_t k;

			if (!t->v[i].key)
				continue;
			for (k = hash(t->v[i].key) & (nt.cap - 1); nt.v[k].key;
			     k = (k + 1) & (nt.cap - 1))
				;
			nt.v[k] = t->v[i];
		}
		free(t->v);
		nt.n = t->n;
		*t = nt;
	}
	for (i = hash(key) & (t->cap - 1); t->v[i].key; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->v[i].key, key))
			return &t->v[i];
	t->v[i].key = strdup(key);
	if (!t->v[i].key)
		return NULL;
	t->n++;
	return &t->v[i];
}

static void row_key(char *buf, size_t cap, unsigned int keys, const struct sample *s,
		    const struct frame *f)
{
	char h[33];
	size_t n = 0;

	buf[0] = 0;
	if (keys & KEY_COMM)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t", s->comm);
	if ((keys & KEY_PID) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%u\t", s->pid);
	if ((keys & KEY_TRACE) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t",
				      s->has_ctx ? hex(h, s->trace_id, 16) : "-");
	if ((keys & KEY_SPAN) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t",
				      s->has_ctx ? hex(h, s->span_id, 8) : "-");
	if ((keys & KEY_DSO) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t", base_name(f->dso));
	if ((keys & KEY_SYM) && n < cap)
		snprintf(buf + n, cap - n, "[%c] %s\t", f->kernel ? 'k' : '.', f->sym);
}

static uint64_t sort_by;	/* 0: self, 1: children */

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t vx = sort_by ? x->children : x->self, vy = sort_by ? y->children : y->self;

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int in_range(const struct sample *s, const char *range)
{
	uint32_t i;

	if (!range)
		return 1;
	for (i = 0; i < s->nranges; i++)
		if (!strcmp(s->ranges[i], range))
			return 1;
	return 0;
}

static int parse_sort(const char *list, unsigned int *keys)
{
	char tmp[128], *tok, *save = NULL;

	*keys = 0;
	snprintf(tmp, sizeof(tmp), "%s", list);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "comm"))
			*keys |= KEY_COMM;
		else if (!strcmp(tok, "pid"))
			*keys |= KEY_PID;
		else if (!strcmp(tok, "dso"))
			*keys |= KEY_DSO;
		else if (!strcmp(tok, "sym") || !strcmp(tok, "symbol"))
			*keys |= KEY_SYM;
		else if (!strcmp(tok, "trace"))
			*keys |= KEY_TRACE;
		else if (!strcmp(tok, "span"))
			*keys |= KEY_SPAN;
		else
			return -1;
	}
	return *keys ? 0 : -1;
}

static void print_header(unsigned int keys, int children)
{
	printf("#\n# %s%s", children ? "Children      Self" : "Overhead",
	       keys & KEY_COMM ? "  Command        " : "");
	if (keys & KEY_PID)
		printf("  Pid    ");
	if (keys & KEY_TRACE)	/* padded unless last */
		printf(keys & ~(KEY_COMM | KEY_PID | KEY_TRACE) ? "  %-32s" : "  %s", "Trace");
	if (keys & KEY_SPAN)
		printf(keys & (KEY_DSO | KEY_SYM) ? "  %-16s" : "  %s", "Span");
	if (keys & KEY_DSO)
		printf("  Shared Object        ");
	if (keys & KEY_SYM)
		printf("  Symbol");
	printf("\n#\n");
}

static void print_row(const struct row *r, uint64_t total, unsigned int keys, int children)
{
	char *k = r->key, *tok;
	unsigned int bit;

	if (children)
		printf("  %7.2f%%  %7.2f%%", 100.0 * (double)r->children / (double)total,
		       100.0 * (double)r->self / (double)total);
	else
		printf("  %7.2f%%", 100.0 * (double)r->self / (double)total);
	for (bit = KEY_COMM; bit <= KEY_SYM; bit <<= 1) {
		if (!(keys & bit))
			continue;
		tok = k;
		k = strchr(k, '\t');
		if (k)
			*k++ = 0;
		printf(bit == KEY_SYM || !k || !*k ? "  %s" : bit == KEY_PID ? "  %-7s" :
		       bit == KEY_COMM ? "  %-15s" : bit == KEY_TRACE ? "  %-32s" :
		       bit == KEY_SPAN ? "  %-16s" : "  %-21s", tok);
		if (!k)
			break;
	}
	putchar('\n');
}

static void report_ranges(const struct profile *p)
{
	size_t i;
	uint32_t k;

	/* samples under each range (nested: each open range counts them) */
	for (i = 0; i < p->n; i++) {
		const struct sample *s = &p->s[i];

		for (k = 0; k < s->nranges; k++) {
			uint32_t j;
			int dup = 0;

			for (j = 0; j < k; j++)
				dup |= s->ranges[j] == s->ranges[k];
			if (!dup) {
				struct range_stat *rs = range_stat((struct profile *)p, s->ranges[k]);

				if (rs) {
					rs->samples++;
					rs->period += s->period;
				}
			}
		}
	}
	if (!p->nrs)
		return;
	printf("\n# Time per uevent range: samples taken on the thread while it was open\n"
	       "# (uevent report --range NAME: where that range spent its time)\n#\n"
	       "# %8s  %9s  %7s  %12s  %s\n#\n", "Overhead", "Samples", "Count", "Wall ms",
	       "Range");
	for (i = 0; i < p->nrs; i++) {
		const struct range_stat *rs = &p->rs[i];

		printf("  %7.2f%%  %9" PRIu64 "  %7" PRIu64 "  %12.3f  %s\n",
		       p->total_period ? 100.0 * (double)rs->period / (double)p->total_period : 0.0,
		       rs->samples, rs->count, (double)rs->ns / 1e6, rs->name);
	}
}

/* whether s is in the trace whose id (hex) starts with id; NULL: every sample */
static int in_trace(const struct sample *s, const char *id)
{
	char h[33];

	if (!id)
		return 1;
	return s->has_ctx && !strncasecmp(hex(h, s->trace_id, 16), id, strlen(id));
}

struct span_stat {
	uint8_t		trace_id[16], span_id[8];
	int		total;		/* the trace's own row (every span of it) */
	int		none;		/* samples with no context */
	uint64_t	samples, period, first, last, tperiod;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span_stat *x = a, *y = b;
	int c;

	if (x->none != y->none)
		return x->none - y->none;
	if (x->tperiod != y->tperiod)
		return x->tperiod < y->tperiod ? 1 : -1;
	c = memcmp(x->trace_id, y->trace_id, 16);
	if (c)
		return c;
	if (x->total != y->total)
		return y->total - x->total;
	if (x->period != y->period)
		return x->period < y->period ? 1 : -1;
	return memcmp(x->span_id, y->span_id, 8);
}

/*
 * Time per trace and per span (the OpenTelemetry context the sampled thread had): its
 * share of the samples, their CPU time (the periods: ns for cpu-clock, as uevent
 * record -F samples) and the wall time from its first sample to its last. Returns
 * -ENOMEM or the rows printed.
 */
static int report_traces(const struct profile *p, const char *trace, const char *range,
			 uint64_t total)
{
	struct table idx = { NULL, 0, 0 };
	struct span_stat *v = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0, any = 0;

	for (i = 0; i < p->n; i++)
		any |= p->s[i].has_ctx;
	if (!any)
		return 0;
	for (i = 0; i < p->n && !ret; i++) {
		const struct sample *s = &p->s[i];
		int pass;

		if (!in_trace(s, trace) || !in_range(s, range))
			continue;
		for (pass = 0; pass < (s->has_ctx ? 2 : 1); pass++) {
			char key[64], h[33], h2[17];
			struct span_stat *st;
			struct row *r;

			if (!s->has_ctx)
				snprintf(key, sizeof(key), "-");
			else
				snprintf(key, sizeof(key), "%s/%s", hex(h, s->trace_id, 16),
					 pass ? hex(h2, s->span_id, 8) : "");
			r = row_get(&idx, key);
			if (!r) {
				ret = -ENOMEM;
				break;
			}
			if (!r->seen) {
				if (n == cap) {
					struct span_stat *nv = realloc(v, (cap = cap ? 2 * cap : 64) *
								       sizeof(*v));

					if (!nv) {
						ret = -ENOMEM;
						break;
					}
					v = nv;
				}
				memset(&v[n], 0, sizeof(*v));
				memcpy(v[n].trace_id, s->trace_id, 16);
				if (pass)
					memcpy(v[n].span_id, s->span_id, 8);
				v[n].total = s->has_ctx && !pass;
				v[n].none = !s->has_ctx;
				v[n].first = s->time;
				r->seen = 1;
				r->self = n++;
			}
			st = &v[r->self];
			st->samples++;
			st->period += s->period;
			if (s->time < st->first)
				st->first = s->time;
			if (s->time > st->last)
				st->last = s->time;
		}
	}
	for (i = 0; i < n && !ret; i++) {	/* each row sorts under its trace */
		char key[64], h[33];
		struct row *r;

		if (v[i].none)
			continue;
		snprintf(key, sizeof(key), "%s/", hex(h, v[i].trace_id, 16));
		r = row_get(&idx, key);		/* there: the trace's own row */
		if (!r) {
			ret = -ENOMEM;
			break;
		}
		v[i].tperiod = v[r->self].period;
	}
	if (!ret && n) {
		qsort(v, n, sizeof(*v), span_cmp);
		printf("\n# Time per trace and span: samples taken on a thread in that OpenTelemetry "
		       "context\n# (uevent report --trace ID: where that trace spent its time)\n#\n"
		       "# %8s  %9s  %12s  %12s  %-32s  %s\n#\n", "Overhead", "Samples", "CPU ms",
		       "Wall ms", "Trace", "Span");
		for (i = 0; i < n; i++) {
			char h[33], h2[17];

			printf("  %7.2f%%  %9" PRIu64 "  %12.3f  %12.3f  %-32s  %s\n",
			       total ? 100.0 * (double)v[i].period / (double)total : 0.0,
			       v[i].samples, (double)v[i].period / 1e6,
			       (double)(v[i].last - v[i].first) / 1e6,
			       v[i].none ? "-" : hex(h, v[i].trace_id, 16),
			       v[i].none ? "(no context)" : v[i].total ? "(all its spans)" :
			       hex(h2, v[i].span_id, 8));
		}
		ret = (int)n;
	}
	for (i = 0; i < idx.cap; i++)
		free(idx.v[i].key);
	free(idx.v);
	free(v);
	return ret;
}

int cli_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "children", no_argument, NULL, 'c' },
		{ "range", required_argument, NULL, 'r' },
		{ "trace", required_argument, NULL, 't' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "input", required_argument, NULL, 'i' },
		{ "no-pager", no_argument, NULL, 'P' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		CLI_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	UEVENT_SYMBOLIZER_OPTS(so, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	struct cli_filter filt;
	int use_pager = 1;
	const char *path = NULL, *range = NULL, *trace = NULL;
	unsigned int keys = KEY_COMM | KEY_DSO | KEY_SYM;
	struct table t = { NULL, 0, 0 };
	struct profile p;
	uint64_t total = 0, nsel = 0;
	int c, children = 0, ret = 0;
	size_t i;

	cli_filter_init(&filt);
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:cr:t:d:i:h", opts, NULL)) != -1) {
		switch (cli_filter_opt(&filt, "report", c, optarg)) {
		case 1: continue;
		case -1: return 2;
		}
		switch (c) {
		case 's':
			if (parse_sort(optarg, &keys) < 0) {
				fprintf(stderr, "%s report: --sort wants a list of comm, pid, dso, "
					"sym, trace, span, not '%s'\n", cli_prog, optarg);
				return 2;
			}
			break;
		case 'c': children = 1; break;
		case 'r': range = optarg; break;
		case 't':
			if (!*optarg || strlen(optarg) > 32 ||
			    strspn(optarg, "0123456789abcdefABCDEF") != strlen(optarg)) {
				fprintf(stderr, "%s report: --trace wants a trace id (32 hex digits, "
					"or the first of them, as the trace table prints it), not "
					"'%s'\n", cli_prog, optarg);
				return 2;
			}
			trace = optarg;
			break;
		case 'd': so.debug_dir = optarg; break;
		case 'i': path = optarg; break;
		case 'P': use_pager = 0; break;
		case 'M': cli_no_demangle = 1; break;
		case 'h':
			printf("Usage: %s report [--sort comm,pid,trace,span,dso,sym] [--children] "
			       "[--range NAME] [--trace ID] [--debug-dir DIR] [--pid PIDS] [--tid TIDS] "
			       "[--comm NAMES] [--time START,END] [--no-pager] [--no-demangle] FILE\n", cli_prog);
			return 0;
		default: return 2;
		}
	}
	if (optind < argc && !path)
		path = argv[optind++];
	if (!path || optind < argc) {
		fprintf(stderr, "%s report: which file? (uevent report [OPTIONS] FILE)\n", cli_prog);
		return 2;
	}
	sample_filter = &filt;
	ret = profile_read(&p, "report", path, &so);
	sample_filter = NULL;
	if (ret)
		return 1;
	if (no_samples(&p, "report")) {
		profile_free(&p);
		return 1;
	}
	for (i = 0; i < p.n; i++)
		if (in_range(&p.s[i], range) && in_trace(&p.s[i], trace)) {
			nsel++;
			total += p.s[i].period;
		}
	if (trace && !nsel) {
		/* as for --range: say which traces there are */
		size_t shown = 0, k;

		fprintf(stderr, "%s report: %s: no samples%s%s%s in a trace whose id starts with "
			"'%s'; its traces:", cli_prog, path, range ? " inside range '" : "",
			range ? range : "", range ? "'" : "", trace);
		for (i = 0; i < p.n && shown < 20; i++) {
			char h[33];

			if (!p.s[i].has_ctx)
				continue;
			for (k = 0; k < i; k++)
				if (p.s[k].has_ctx && !memcmp(p.s[k].trace_id, p.s[i].trace_id, 16))
					break;
			if (k == i)
				fprintf(stderr, "%s %s", shown++ ? "," : "",
					hex(h, p.s[i].trace_id, 16));
		}
		fprintf(stderr, "%s\n", shown ? "" : " none (no sample carries a trace context: "
			"record with uevent record --context and uevent_thread_context_set())");
		profile_free(&p);
		return 1;
	}
	if (range && !nsel) {
		/* a name mistyped reads as an empty profile: say which ranges there are */
		fprintf(stderr, "%s report: %s: no samples inside a range named '%s'; its ranges:",
			cli_prog, path, range);
		for (i = 0; i < p.nrs; i++)
			fprintf(stderr, "%s %s", i ? "," : "", p.rs[i].name);
		fprintf(stderr, "%s\n", p.nrs ? "" : " none (no uevent ranges recorded)");
		profile_free(&p);
		return 1;
	}
	if (use_pager)
		pager_start();
	printf("# uevent report of %s\n# Samples: %zu, %" PRIu64 " with callchains\n", path,
	       p.n, p.with_chain);
	if (range)
		printf("# Range: %s (%" PRIu64 " samples taken inside it)\n", range, nsel);
	if (trace)
		printf("# Trace: %s (%" PRIu64 " samples taken in it)\n", trace, nsel);
	if (children && !p.with_chain)
		fprintf(stderr, "%s report: %s: no callchains: children are self\n", cli_prog, path);
	for (i = 0; i < p.n && ret == 0; i++) {
		const struct sample *s = &p.s[i];
		char key[1024];
		uint32_t k;

		if (!in_range(s, range) || !in_trace(s, trace))
			continue;
		for (k = 0; k < (children ? s->nframes : 1); k++) {
			struct row *r;

			row_key(key, sizeof(key), keys, s, &s->frames[k]);
			r = row_get(&t, key);
			if (!r) {
				ret = -ENOMEM;
				break;
			}
			if (!k)
				r->self += s->period;
			if (r->seen != i + 1) {		/* once per sample: recursion */
				r->children += s->period;
				r->seen = i + 1;
			}
		}
	}
	if (ret < 0) {
		pager_end();
		fprintf(stderr, "%s report: %s\n", cli_prog, strerror(-ret));
		profile_free(&p);
		return 1;
	}
	/* packed to the front, sorted by overhead */
	{
		size_t n = 0;

		for (i = 0; i < t.cap; i++)
			if (t.v[i].key)
				t.v[n++] = t.v[i];
		sort_by = children;
		if (n > 1)	/* t.v is NULL with no samples: not for qsort */
			qsort(t.v, n, sizeof(*t.v), row_cmp);
		print_header(keys, children);
		for (i = 0; i < n && total; i++) {
			print_row(&t.v[i], total, keys, children);
			free(t.v[i].key);
		}
		for (; i < n; i++)
			free(t.v[i].key);
	}
	free(t.v);
	if (!range && !trace)
		report_ranges(&p);
	if (report_traces(&p, trace, range, total) < 0)
		fprintf(stderr, "%s report: time per trace: %s\n", cli_prog, strerror(ENOMEM));
	pager_end();
	profile_free(&p);
	return 0;
}

/* ---- export --folded ---------------------------------------------------------- */

/*
 * Brendan Gregg's folded stacks (flamegraph.pl, speedscope, inferno): one line per
 * distinct stack, "comm;outer;...;leaf COUNT", frames named as report names them.
 * ranges: the uevent ranges open on the thread as frames between comm and the stack.
 */
int cli_export_folded(const char *out, const char *in, int ranges, const char *debug_dir)
{
	UEVENT_SYMBOLIZER_OPTS(so, .debug_dir = debug_dir, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	struct table t = { NULL, 0, 0 };
	struct profile p;
	size_t i, n = 0, cap = 0;
	char *line = NULL;
	int created = 0, ret = 0;
	FILE *f;

	if (profile_read(&p, "export", in, &so))
		return 1;
	if (no_samples(&p, "export")) {
		profile_free(&p);
		return 1;
	}
	for (i = 0; i < p.n && ret == 0; i++) {
		const struct sample *s = &p.s[i];
		struct row *r;
		uint32_t k;

		n = 0;
#define PUT(str) do {								\
		size_t l_ = strlen(str);					\
		if (n + l_ + 2 > cap) {						\
			char *nl_ = realloc(line, cap = (n + l_ + 2) * 2);	\
			if (!nl_) { ret = -ENOMEM; break; }			\
			line = nl_;						\
		}								\
		memcpy(line + n, str, l_);					\
		n += l_;							\
		line[n++] = ';';						\
		line[n] = 0;							\
	} while (0)
		PUT(s->comm);
		for (k = 0; ranges && k < s->nranges && !ret; k++) {
			char rn[300];

			snprintf(rn, sizeof(rn), "[%s]", s->ranges[k]);
			PUT(rn);
		}
		for (k = s->nframes; k-- > 0 && !ret;)
			PUT(s->frames[k].sym);
#undef PUT
		if (ret)
			break;
		line[n - 1] = 0;
		r = row_get(&t, line);
		if (!r)
			ret = -ENOMEM;
		else
			r->self++;
	}
	free(line);
	if (ret < 0) {
		fprintf(stderr, "%s export: %s\n", cli_prog, strerror(-ret));
		profile_free(&p);
		return 1;
	}
	f = cli_open_output_file("export", out, &created);
	if (!f) {
		profile_free(&p);
		return 1;
	}
	n = 0;
	for (i = 0; i < t.cap; i++)
		if (t.v[i].key)
			t.v[n++] = t.v[i];
	sort_by = 0;
	if (n > 1)	/* t.v is NULL with no samples: not for qsort */
		qsort(t.v, n, sizeof(*t.v), row_cmp);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s %" PRIu64 "\n", t.v[i].key, t.v[i].self);
		free(t.v[i].key);
	}
	free(t.v);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "%s export: %s: %s\n", cli_prog, out, strerror(errno));
		profile_free(&p);
		return 1;
	}
	fprintf(stderr, "%zu stacks of %zu samples written to %s\n", n, p.n, out);
	profile_free(&p);
	return 0;
}

/* ---- export --chrome: thread names and CPU samples ---------------------------- */

/* The stack frames the samples written refer to ("sf"), a tree: "parent\tname" -> id. */
static struct table chrome_frames;
static size_t chrome_nframes;

/*
 * Writes, after the uevents of a perf.data (first: none were written), each CPU sample
 * as an instant event named by its leaf, its stack in "sf" (export names the threads
 * itself). Returns the events written, or -1 after saying why.
 */
long cli_chrome_extras(FILE *f, const char *in, int first)
{
	UEVENT_SYMBOLIZER_OPTS(so, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	struct profile p;
	long n = 0;
	size_t i;

	if (!strcmp(in, "-") && lseek(0, 0, SEEK_SET) != 0)
		return 0;	/* standard input not rewindable: the uevents only */
	if (profile_read(&p, "export", in, &so))
		return -1;
	for (i = 0; i < p.n; i++) {
		const struct sample *s = &p.s[i];
		size_t parent = 0;
		uint32_t k;

		for (k = s->nframes; k-- > 0;) {	/* root first */
			char key[1024];
			struct row *r;

			snprintf(key, sizeof(key), "%zu\t%s", parent, s->frames[k].sym);
			r = row_get(&chrome_frames, key);
			if (!r)
				break;
			if (!r->seen) {
				r->seen = 1;
				r->self = ++chrome_nframes;
				r->children = parent;
			}
			parent = r->self;
		}
		fprintf(f, "%s\n{\"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": %u, "
			"\"tid\": %u, \"cat\": \"sample\", \"name\": ", first ? "" : ",",
			(double)s->time / 1000.0, s->pid, s->tid);
		cli_json_str(f, s->nframes ? s->frames[0].sym : "[unknown]", SIZE_MAX);
		if (parent)
			fprintf(f, ", \"sf\": \"%zu\"", parent);
		fprintf(f, ", \"args\": {\"period_ns\": %" PRIu64, s->period);
		if (s->has_ctx) {	/* OpenTelemetry's names, as the pprof labels */
			char h[33];

			fprintf(f, ", \"trace_id\": \"%s\"", hex(h, s->trace_id, 16));
			fprintf(f, ", \"span_id\": \"%s\"", hex(h, s->span_id, 8));
		}
		fprintf(f, "}}");
		first = 0;
		n++;
	}
	profile_free(&p);
	return n;
}

/* The "stackFrames" member (after traceEvents' closing bracket). */
void cli_chrome_frames(FILE *f)
{
	size_t i;
	int first = 1;

	fprintf(f, ", \"stackFrames\": {");
	for (i = 0; i < chrome_frames.cap; i++) {
		struct row *r = &chrome_frames.v[i];
		char *name;

		if (!r->key)
			continue;
		name = strchr(r->key, '\t');
		fprintf(f, "%s\n\"%" PRIu64 "\": {\"name\": ", first ? "" : ",", r->self);
		cli_json_str(f, name ? name + 1 : r->key, SIZE_MAX);
		if (r->children)
			fprintf(f, ", \"parent\": \"%" PRIu64 "\"", r->children);
		fprintf(f, "}");
		first = 0;
		free(r->key);
	}
	fprintf(f, "}");
	free(chrome_frames.v);
	memset(&chrome_frames, 0, sizeof(chrome_frames));
}

/* ---- export --pprof ----------------------------------------------------------- */

#ifdef HAVE_PROTOBUF_C
#include <protobuf-c/protobuf-c.h>

#include "profile.pb-c.h"

/* pprof's string table: index 0 is "" */
struct strtab {
	struct table	t;
	char		**v;
	size_t		n, cap;
};

static int64_t str_id(struct strtab *st, const char *s)
{
	struct row *r = row_get(&st->t, s);

	if (!r)
		return -1;
	if (!r->seen) {
		if (st->n == st->cap) {
			char **v = realloc(st->v, (st->cap = st->cap ? st->cap * 2 : 64) *
					   sizeof(*v));

			if (!v)
				return -1;
			st->v = v;
		}
		r->seen = 1;
		r->self = st->n;
		st->v[st->n++] = r->key;	/* the table's copy, freed with it */
	}
	return (int64_t)r->self;
}

/* Grows *v (n used, *cap elements of el bytes) to hold one more; -ENOMEM. */
static int grow1(void **v, size_t n, size_t *cap, size_t el)
{
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, (*cap ? *cap * 2 : 256) * el);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = *cap ? *cap * 2 : 256;
	return 0;
}

/* The GNU build-id note of an ELF file (as `file` and perf print it), or 0 bytes. */
static uint32_t elf_build_id(const char *path, uint8_t *out, size_t cap)
{
	unsigned char eh[64], ph[56], note[1024];
	uint32_t got = 0;
	uint16_t i, phnum, phentsize;
	uint64_t phoff;
	FILE *f;

	if (path[0] != '/' || !(f = fopen(path, "rb")))
		return 0;
	/* 64-bit little-endian ELF: what this CLI runs on and samples */
	if (fread(eh, 1, sizeof(eh), f) != sizeof(eh) || memcmp(eh, "\177ELF\2\1", 6))
		goto out;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phentsize, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	for (i = 0; i < phnum && phentsize >= sizeof(ph) && !got; i++) {
		uint32_t type;
		uint64_t off, size, k = 0;

		if (fseeko(f, (off_t)(phoff + (uint64_t)i * phentsize), SEEK_SET) ||
		    fread(ph, 1, sizeof(ph), f) != sizeof(ph))
			break;
		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&size, ph + 32, 8);
		if (type != 4 /* PT_NOTE */ || size > sizeof(note) ||
		    fseeko(f, (off_t)off, SEEK_SET) || fread(note, 1, size, f) != size)
			continue;
		while (k + 12 <= size) {
			uint32_t nsz, dsz, nt;

			memcpy(&nsz, note + k, 4);
			memcpy(&dsz, note + k + 4, 4);
			memcpy(&nt, note + k + 8, 4);
			k += 12;
			if (nsz > size || dsz > size || k + ((nsz + 3) & ~3u) + dsz > size)
				break;
			if (nt == 3 /* NT_GNU_BUILD_ID */ && nsz == 4 && !memcmp(note + k, "GNU", 4) &&
			    dsz <= cap) {
				memcpy(out, note + k + 4, dsz);
				got = dsz;
				break;
			}
			k += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
		}
	}
out:
	fclose(f);
	return got;
}

/* The mapping the profile's main binary is in: the first executable mapping of a file
 * of the process with the most samples (an exec maps its program first, perf's
 * synthesized maps are sorted by address), or -1. */
static int32_t main_map(const struct profile *p)
{
	size_t i, k, best = 0, bn = 0;

	for (i = 0; i < p->n; i++) {
		size_t c = 0;

		if (i && p->s[i].pid == p->s[i - 1].pid)
			continue;
		for (k = i; k < p->n && c < 4096; k++)	/* a sample of its run: enough */
			c += p->s[k].pid == p->s[i].pid;
		if (c > bn) {
			bn = c;
			best = i;
		}
	}
	for (i = 0; bn && i < p->nmaps; i++)
		if (p->maps[i].pid == p->s[best].pid && p->maps[i].file[0] == '/')
			return (int32_t)i;
	return -1;
}

/*
 * pprof's profile.proto, as pprof's own tools write it: a sample for each stack (leaf
 * first) and set of labels, values samples/count and cpu/nanoseconds summed over the
 * samples that share them; labels "range" (each uevent range open on the thread, outer
 * first), "thread" (its command name) and, where the sampled thread was in an
 * OpenTelemetry context, "trace_id" and "span_id" (W3C hex). Mappings name the files,
 * their build ids and address ranges (the main binary first); a location is an address
 * in one, its line the symbolizer's function, source file and line (DWARF), so that
 * pprof -list shows the source and -lines the lines without the binaries.
 */
int cli_export_pprof(const char *out, const char *in, const char *debug_dir)
{
	UEVENT_SYMBOLIZER_OPTS(so, .debug_dir = debug_dir);
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						 PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vtp[2] = { &vt[0], &vt[1] };
	struct strtab st = { { NULL, 0, 0 }, NULL, 0, 0 };
	struct table funcs = { NULL, 0, 0 }, locs = { NULL, 0, 0 }, maps = { NULL, 0, 0 };
	struct table stacks = { NULL, 0, 0 };
	char *skey = NULL;
	size_t skeycap = 0, nsmp = 0;
	Perftools__Profiles__Function *fn = NULL, **fnp = NULL;
	Perftools__Profiles__Location *loc = NULL, **locp = NULL;
	Perftools__Profiles__Line *line = NULL, **linep = NULL;
	Perftools__Profiles__Mapping *mp = NULL, **mpp = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	Perftools__Profiles__Label *lab = NULL, **labp = NULL;
	uint64_t *ids = NULL;
	int64_t *vals = NULL;
	size_t i, nfn = 0, nloc = 0, nmp = 0, nids = 0, nlab = 0, fcap = 0, lcap = 0, lncap = 0;
	size_t mcap = 0;
	uint8_t *buf = NULL;
	struct profile p;
	int created = 0, ret = -ENOMEM;
	int32_t mainm;
	FILE *f = NULL;

	if (profile_read(&p, "export", in, &so))
		return 1;
	if (no_samples(&p, "export")) {
		profile_free(&p);
		return 1;
	}
	for (i = 0; i < p.n; i++) {
		nids += p.s[i].nframes;
		nlab += p.s[i].nranges + 3;
	}
	smp = calloc(p.n + 1, sizeof(*smp));
	smpp = calloc(p.n + 1, sizeof(*smpp));
	ids = calloc(nids + 1, sizeof(*ids));
	vals = calloc(2 * p.n + 1, sizeof(*vals));
	lab = calloc(nlab + 1, sizeof(*lab));
	labp = calloc(nlab + 1, sizeof(*labp));
	if (!smp || !smpp || !ids || !vals || !lab || !labp || str_id(&st, "") != 0)
		goto out;
	vt[0].type = str_id(&st, "samples");
	vt[0].unit = str_id(&st, "count");
	vt[1].type = pt.type = str_id(&st, "cpu");
	vt[1].unit = pt.unit = str_id(&st, "nanoseconds");
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &pt;
	prof.period = p.n ? (int64_t)p.s[0].period : 0;
	mainm = main_map(&p);
	nids = nlab = 0;
	for (i = 0; i < p.n + 1; i++) {
		const struct sample *s = i ? &p.s[i - 1] : NULL;
		Perftools__Profiles__Sample *o = &smp[nsmp];
		size_t ids0 = nids, lab0 = nlab, kn = 0;
		uint32_t k, nl;
		struct row *m;

		if (s) {
			perftools__profiles__sample__init(o);
			o->location_id = &ids[nids];
			o->n_location_id = s->nframes;
		}
		/* pass 0: the main binary's mapping, made first: pprof's main binary */
		for (k = 0; s ? k < s->nframes : k < 1; k++) {
			const struct frame *fr = s ? &s->frames[k] : NULL;
			int32_t mi = s ? fr->map : mainm;
			uint64_t mid = 0;
			char key[1200];
			struct row *r;

			if (mi >= 0 || fr) {	/* its mapping */
				struct pmap none = { .file = fr ? fr->dso : "", .bid_read = 1 };
				struct pmap *pm = mi >= 0 ? &p.maps[mi] : &none;

				/* no MMAP (the kernel, JIT code, unknown): one by that name, so
				 * that pprof makes up none without a file name */
				if (mi < 0 && fr->kernel) {
					none.addr = 0xffff800000000000ull;
					none.len = ~none.addr;
				}
				snprintf(key, sizeof(key), "%s\t%" PRIx64 "\t%" PRIx64 "\t%" PRIx64,
					 pm->file, pm->addr, pm->len, pm->pgoff);
				if (!(r = row_get(&maps, key)))
					goto out;
				if (!r->seen) {
					Perftools__Profiles__Mapping *mo;
					char bid[41];

					if (grow1((void **)&mp, nmp, &mcap, sizeof(*mp)) < 0)
						goto out;
					mo = &mp[nmp];
					perftools__profiles__mapping__init(mo);
					mo->id = nmp + 1;
					mo->memory_start = pm->addr;
					mo->memory_limit = pm->addr + pm->len;
					mo->file_offset = pm->pgoff;
					mo->filename = str_id(&st, pm->file);
					if (!pm->bid_read) {
						pm->bid_read = 1;
						pm->build_id_size = elf_build_id(pm->file, pm->build_id,
										 sizeof(pm->build_id));
					}
					mo->build_id = str_id(&st, hex(bid, pm->build_id,
								       pm->build_id_size));
					/* named here: pprof needs not (and does not try to) */
					mo->has_functions = mo->has_filenames = 1;
					mo->has_line_numbers = !!fr && fr->line;
					if (mo->filename < 0 || mo->build_id < 0)
						goto out;
					r->seen = 1;
					r->self = ++nmp;
				}
				mid = r->self;
				if (fr && fr->line)
					mp[mid - 1].has_line_numbers = 1;
			}
			if (!s)
				break;
			/* its location: the address in that mapping (or alone) */
			snprintf(key, sizeof(key), "%" PRIu64 "\t%" PRIx64 "\t%s", mid, fr->addr,
				 fr->map >= 0 ? "" : fr->sym);
			if (!(r = row_get(&locs, key)))
				goto out;
			if (!r->seen) {
				Perftools__Profiles__Location *lo;
				Perftools__Profiles__Line *ln;
				const char *src = fr->file ? fr->file : fr->dso;
				struct row *fnr;

				/* its function: by name and source file */
				snprintf(key, sizeof(key), "%s\t%s", fr->sym, src);
				if (!(fnr = row_get(&funcs, key)))
					goto out;
				if (!fnr->seen) {
					Perftools__Profiles__Function *fo;
					struct uevent_symbol sy = { .sz = sizeof(sy) };

					if (grow1((void **)&fn, nfn, &fcap, sizeof(*fn)) < 0)
						goto out;
					fo = &fn[nfn];
					perftools__profiles__function__init(fo);
					fo->id = nfn + 1;
					fo->name = str_id(&st, fr->sym);
					fo->system_name = str_id(&st, fr->raw ? fr->raw : fr->sym);
					fo->filename = str_id(&st, src);
					if (fr->file && fr->sym_addr &&
					    !uevent_symbolizer__lookup(p.sym, s->pid, fr->sym_addr, s->time,
								       &sy) && sy.file &&
					    !strcmp(sy.file, fr->file))
						fo->start_line = sy.line;
					if (fo->name < 0 || fo->system_name < 0 || fo->filename < 0)
						goto out;
					fnr->seen = 1;
					fnr->self = ++nfn;
				}
				if (grow1((void **)&loc, nloc, &lcap, sizeof(*loc)) < 0 ||
				    grow1((void **)&line, nloc, &lncap, sizeof(*line)) < 0)
					goto out;
				lo = &loc[nloc];
				ln = &line[nloc];
				perftools__profiles__location__init(lo);
				perftools__profiles__line__init(ln);
				lo->id = nloc + 1;
				lo->mapping_id = mid;
				lo->address = fr->addr;
				ln->function_id = fnr->self;
				ln->line = fr->line;
				r->seen = 1;
				r->self = ++nloc;
			}
			ids[nids++] = r->self;
		}
		if (!s)
			continue;
		o->n_value = 2;
		o->label = &labp[nlab];
		nl = s->nranges + 1 + (s->has_ctx ? 2 : 0);
		for (k = 0; k < nl; k++) {
			Perftools__Profiles__Label *l = &lab[nlab];
			char h[33];

			perftools__profiles__label__init(l);
			if (k < s->nranges) {
				l->key = str_id(&st, "range");
				l->str = str_id(&st, s->ranges[k]);
			} else if (k == s->nranges) {
				l->key = str_id(&st, "thread");
				l->str = str_id(&st, s->comm);
			} else if (k == s->nranges + 1) {	/* OpenTelemetry's names */
				l->key = str_id(&st, "trace_id");
				l->str = str_id(&st, hex(h, s->trace_id, 16));
			} else {
				l->key = str_id(&st, "span_id");
				l->str = str_id(&st, hex(h, s->span_id, 8));
			}
			if (l->key < 0 || l->str < 0)
				goto out;
			labp[nlab++] = l;
		}
		o->n_label = nl;
		/* the stack's location ids and the labels' strings: a sample that has
		 * the same as one before adds to its values */
		for (k = 0; k < s->nframes + 2 * nl; k++) {
			if (skeycap - kn < 24) {
				char *a = realloc(skey, skeycap = skeycap ? 2 * skeycap : 1024);

				if (!a)
					goto out;
				skey = a;
			}
			kn += (size_t)snprintf(skey + kn, skeycap - kn, "%" PRId64 ",",
					       k < s->nframes ? (int64_t)ids[ids0 + k]
					       : (k - s->nframes) % 2 ? lab[lab0 + (k - s->nframes) / 2].str
					       : lab[lab0 + (k - s->nframes) / 2].key);
		}
		if (!skey || !(m = row_get(&stacks, skey)))
			goto out;
		if (m->seen) {
			vals[2 * (m->self - 1)] += 1;
			vals[2 * (m->self - 1) + 1] += (int64_t)s->period;
			nids = ids0;
			nlab = lab0;
			continue;
		}
		m->seen = 1;
		m->self = ++nsmp;
		smpp[nsmp - 1] = o;
		o->value = &vals[2 * (nsmp - 1)];
		vals[2 * (nsmp - 1)] = 1;
		vals[2 * (nsmp - 1) + 1] = (int64_t)s->period;
	}
	/* pointers into the arrays only now: they moved while they grew */
	fnp = calloc(nfn + 1, sizeof(*fnp));
	locp = calloc(nloc + 1, sizeof(*locp));
	linep = calloc(nloc + 1, sizeof(*linep));
	mpp = calloc(nmp + 1, sizeof(*mpp));
	if (!fnp || !locp || !linep || !mpp)
		goto out;
	for (i = 0; i < nfn; i++)
		fnp[i] = &fn[i];
	for (i = 0; i < nmp; i++)
		mpp[i] = &mp[i];
	for (i = 0; i < nloc; i++) {
		locp[i] = &loc[i];
		linep[i] = &line[i];
		loc[i].n_line = 1;
		loc[i].line = &linep[i];
	}
	prof.n_sample = nsmp;
	prof.sample = smpp;
	prof.n_function = nfn;
	prof.function = fnp;
	prof.n_location = nloc;
	prof.location = locp;
	prof.n_mapping = nmp;
	prof.mapping = mpp;
	prof.n_string_table = st.n;
	prof.string_table = st.v;
	buf = malloc(perftools__profiles__profile__get_packed_size(&prof) + 1);
	if (!buf)
		goto out;
	i = perftools__profiles__profile__pack(&prof, buf);
	f = cli_open_output_file("export", out, &created);
	if (!f) {
		ret = 1;
		goto out;
	}
	if (fwrite(buf, 1, i, f) != i || (f != stdout && fclose(f) != 0) ||
	    (f == stdout && fflush(f) != 0)) {
		fprintf(stderr, "%s export: %s: %s\n", cli_prog, out, strerror(errno));
		ret = 1;
		goto out;
	}
	fprintf(stderr, "%zu samples (%zu stacks), %zu functions at %zu locations in %zu "
		"mappings written to %s\n", p.n, nsmp, nfn, nloc, nmp, out);
	ret = 0;
out:
	if (ret < 0)
		fprintf(stderr, "%s export: %s\n", cli_prog, strerror(-ret));
	for (i = 0; i < st.t.cap; i++)
		free(st.t.v[i].key);
	for (i = 0; i < funcs.cap; i++)
		free(funcs.v[i].key);
	for (i = 0; i < locs.cap; i++)
		free(locs.v[i].key);
	for (i = 0; i < maps.cap; i++)
		free(maps.v[i].key);
	for (i = 0; i < stacks.cap; i++)
		free(stacks.v[i].key);
	free(stacks.v);
	free(skey);
	free(st.t.v);
	free(st.v);
	free(funcs.v);
	free(locs.v);
	free(maps.v);
	free(fn);
	free(fnp);
	free(loc);
	free(locp);
	free(line);
	free(linep);
	free(mp);
	free(mpp);
	free(smp);
	free(smpp);
	free(ids);
	free(vals);
	free(lab);
	free(labp);
	free(buf);
	profile_free(&p);
	return ret ? 1 : 0;
}
#else
int cli_export_pprof(const char *out, const char *in, const char *debug_dir)
{
	(void)in;
	(void)debug_dir;
	fprintf(stderr, "%s export: --pprof %s: built without protobuf-c (Debian: "
		"libprotobuf-c-dev protobuf-c-compiler)\n", cli_prog, out);
	return 1;
}
#endif
