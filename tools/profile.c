/* profile.c - a perf.data's samples named by uevent_symbolizer, for `uevent report`
 * and `uevent export`: reading, naming, demangling, filters, the pager. */
#include "config.h"

#include <errno.h>
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

#include "profile.h"

/* ---- the samples of a file, named ---------------------------------------------- */

/* report's --pid, --tid, --comm, --time (NULL: every sample) */
const struct cli_filter *prof_sample_filter;


/* Our copy of str, one per distinct string (names, unknown addresses). */
const char *prof_own(struct profile *p, const char *str)
{
	struct row *r = prof_row_get(&p->strs, str);

	return r ? r->key : NULL;
}

struct thread_ranges *prof_ranges_of(struct profile *p, uint32_t tid)
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

struct range_stat *prof_range_stat(struct profile *p, const char *name)
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

/* FNV-1a of len bytes: the hash of the interning tables below. */
static uint64_t fnv1a(const void *b, size_t len)
{
	const unsigned char *c = b;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* The node of name opened inside up (NULL: outermost), made when new; NULL: no memory. */
static const struct range_node *range_node_own(struct profile *p, const struct range_node *up,
					       const char *name)
{
	const struct range_node key = { up, name, up ? up->depth + 1 : 1 }, *e;
	uint64_t h = fnv1a(&key, offsetof(struct range_node, depth));
	struct range_node *n;
	size_t i, k;

	if ((p->nrnodes + 1) * 2 > p->rncap) {
		size_t cap = p->rncap ? p->rncap * 2 : 256;
		struct range_node **v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < p->rncap; i++) {
			if (!(e = p->rnodes[i]))
				continue;
			for (k = fnv1a(e, offsetof(struct range_node, depth)) & (cap - 1); v[k];
			     k = (k + 1) & (cap - 1))
				;
			v[k] = p->rnodes[i];
		}
		free(p->rnodes);
		p->rnodes = v;
		p->rncap = cap;
	}
	for (k = h & (p->rncap - 1); (e = p->rnodes[k]); k = (k + 1) & (p->rncap - 1))
		if (e->up == up && e->name == name)
			return e;
	if (!(n = malloc(sizeof(*n))))
		return NULL;
	*n = key;
	p->rnodes[k] = n;
	p->nrnodes++;
	return n;
}

void prof_kind_ranges(const struct kind *s, const char **v)
{
	const struct range_node *n = s->ranges;
	uint32_t k;

	for (k = s->nranges; k-- > 0; n = n->up)
		v[k] = n->name;
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
		t = prof_ranges_of(p, r->id.tid);
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
		t->v[t->n].name = prof_own(p, b.name);
		if (!t->v[t->n].name)
			return -ENOMEM;
		t->v[t->n].node = range_node_own(p, t->n ? t->v[t->n - 1].node : NULL,
						 t->v[t->n].name);
		if (!t->v[t->n].node)
			return -ENOMEM;
		t->n++;
	} else if (u->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(u->data, u->size, bo, &e) &&
		   !(e.flags & UEVENT_RANGE_ASYNC)) {
		t = prof_ranges_of(p, r->id.tid);
		if (!t)
			return -ENOMEM;
		for (i = t->n; i-- > 0;) {
			if (t->v[i].id != e.id)
				continue;
			{
				struct range_stat *rs = prof_range_stat(p, t->v[i].name);

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

/* ---- names: the symbolizer's, demangled as perf prints them unless --no-demangle ---- */

int cli_no_demangle;

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
	v->file = prof_own(p, m->filename);
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
		f->sym = s.name;	/* demangled by the symbolizer, raw with --no-demangle */
		f->dso = s.dso ? s.dso : "[unknown]";
		f->sym_addr = s.sym_addr;
		return 0;
	}
	/* as perf: the address (in its object, when one is known) */
	snprintf(buf, sizeof(buf), "0x%016" PRIx64, s.dso ? s.offset : addr);
	f->sym = prof_own(p, buf);
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

/* One copy of the len bytes at b (a stack), shared by every sample that has them; NULL:
 * no memory. */
static void *blob_own(struct profile *p, const void *b, size_t len)
{
	uint64_t h = fnv1a(b, len);
	struct blob *e;
	size_t i, k;

	if ((p->nblobs + 1) * 2 > p->bcap) {
		size_t cap = p->bcap ? p->bcap * 2 : 1024;
		struct blob *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < p->bcap; i++) {
			if (!p->blobs[i].data)
				continue;
			for (k = p->blobs[i].hash & (cap - 1); v[k].data; k = (k + 1) & (cap - 1))
				;
			v[k] = p->blobs[i];
		}
		free(p->blobs);
		p->blobs = v;
		p->bcap = cap;
	}
	for (k = h & (p->bcap - 1); (e = &p->blobs[k])->data; k = (k + 1) & (p->bcap - 1))
		if (e->hash == h && e->len == len && !memcmp(e->data, b, len))
			return e->data;
	if (!(e->data = malloc(len ? len : 1)))
		return NULL;
	memcpy(e->data, b, len);
	e->hash = h;
	e->len = len;
	p->nblobs++;
	return e->data;
}

/* The kind of key (its PROF_KIND_KEY bytes), made when new; NULL: no memory. */
static struct kind *kind_own(struct profile *p, const struct kind *key)
{
	uint64_t h = fnv1a(key, PROF_KIND_KEY);
	struct kind *e;
	size_t i, k;

	if ((p->nk + 1) * 2 > p->kicap) {
		size_t cap = p->kicap ? p->kicap * 2 : 1024;
		uint32_t *v = cap <= UINT32_MAX ? calloc(cap, sizeof(*v)) : NULL;

		if (!v)
			return NULL;
		for (i = 0; i < p->nk; i++) {
			for (k = fnv1a(&p->k[i], PROF_KIND_KEY) & (cap - 1); v[k];
			     k = (k + 1) & (cap - 1))
				;
			v[k] = (uint32_t)i + 1;
		}
		free(p->kidx);
		p->kidx = v;
		p->kicap = cap;
	}
	for (k = h & (p->kicap - 1); p->kidx[k]; k = (k + 1) & (p->kicap - 1))
		if (!memcmp(&p->k[p->kidx[k] - 1], key, PROF_KIND_KEY))
			return &p->k[p->kidx[k] - 1];
	if (p->nk == p->kcap) {
		struct kind *v = realloc(p->k, (p->kcap ? 2 * p->kcap : 1024) * sizeof(*v));

		if (!v)
			return NULL;
		p->k = v;
		p->kcap = p->kcap ? 2 * p->kcap : 1024;
	}
	e = &p->k[p->nk];
	memset(e, 0, sizeof(*e));
	memcpy(e, key, PROF_KIND_KEY);
	p->kidx[k] = (uint32_t)++p->nk;
	return e;
}

/*
 * A sample named (its stack as of its time) and counted into its kind; nothing of it
 * is kept on its own but with PROF_TICKS.
 */
static int take_sample(struct profile *p, const struct uevent_perf_record *r, int bo)
{
	const struct uevent_perf_sample *smp = &r->u.sample;
	uint64_t i, n = 0, period = smp->period ? smp->period : 1;
	struct thread_ranges *t = NULL;
	struct frame *fr;
	struct kind key, *s;
	int user;
	size_t k;

	memset(&key, 0, sizeof(key));
	key.pid = smp->pid;
	/* a valid context, whichever path filled it (the kernel's TLS dump, BPF) */
	if (!smp->context_err && !is_zero(smp->context_trace_id, 16)) {
		key.has_ctx = 1;
		memcpy(key.trace_id, smp->context_trace_id, 16);
		memcpy(key.span_id, smp->context_span_id, 8);
	}
	key.comm = uevent_symbolizer__comm(p->sym, smp->tid, smp->time);
	if (!key.comm)
		key.comm = ":unknown";
	if (prof_sample_filter && !cli_filter_match(prof_sample_filter, smp->pid, smp->tid,
						    key.comm, smp->time)) {
		p->filtered++;
		return 0;
	}
	/* built in fbuf (zeroed: the bytes, padding too, name the stack), then shared */
	if (smp->callchain_nr + 1 > p->fcap) {
		struct frame *v = realloc(p->fbuf, (smp->callchain_nr + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->fbuf = v;
		p->fcap = smp->callchain_nr + 1;
	}
	fr = p->fbuf;
	memset(fr, 0, (smp->callchain_nr + 1) * sizeof(*fr));
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
			fr[n].sym = "[unknown]";
			fr[n].dso = "[unknown]";
			fr[n].addr = a;
			fr[n].map = -1;
		} else if (add_frame(p, &fr[n], smp->pid, n ? a - 1 : a, smp->time) < 0) {
			return -ENOMEM;
		}
		n++;
	}
	if (!n) {
		if (add_frame(p, &fr[0], smp->pid, smp->ip, smp->time) < 0)
			return -ENOMEM;
		n = 1;
	} else {
		p->with_chain++;
	}
	key.nframes = (uint32_t)n;
	if (!(key.frames = blob_own(p, fr, n * sizeof(*fr))))
		return -ENOMEM;
	for (k = 0; k < p->ntr; k++)
		if (p->tr[k].tid == smp->tid)
			t = &p->tr[k];
	if (t && t->n) {	/* the stack's node: shared, whatever its depth */
		key.ranges = t->v[t->n - 1].node;
		key.nranges = key.ranges->depth;
		if (key.nranges > PROF_MAX_RANGES) {
			key.nranges = PROF_MAX_RANGES;
			p->deep++;
		}
	}
	if (p->ticks && p->n == p->tcap) {
		struct tick *v = realloc(p->t, (p->tcap ? 2 * p->tcap : 1024) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->t = v;
		p->tcap = p->tcap ? 2 * p->tcap : 1024;
	}
	if (!(s = kind_own(p, &key)))
		return -ENOMEM;
	if (!s->count++)
		s->time = s->tmin = s->tmax = smp->time;
	/* sums saturate: a period of 2^63 ns or more (a corrupt file) must not wrap them */
	s->period = prof_add_sat(s->period, period);
	if (smp->time < s->tmin)
		s->tmin = smp->time;
	if (smp->time > s->tmax)
		s->tmax = smp->time;
	if (p->ticks) {
		p->t[p->n].kind = (uint32_t)(s - p->k);
		p->t[p->n].tid = smp->tid;
		p->t[p->n].time = smp->time;
		p->t[p->n].period = period;
	}
	if (!p->n)
		p->period0 = period;
	p->total_period = prof_add_sat(p->total_period, period);
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
void prof_pager_start(void)
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

void prof_pager_end(void)
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
int prof_no_samples(const struct profile *p, const char *cmd)
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
 * time and counted by kind. Returns 0, or 1 after saying why (p then holds nothing). */
int prof_profile_read(struct profile *p, const char *cmd, const char *path,
		      const struct uevent_symbolizer_opts *so_in, unsigned int flags)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_symbolizer_opts so = *so_in;
	struct uevent_perf_file *f;
	int ret, bo;

	memset(p, 0, sizeof(*p));
	p->path = path;
	p->cmd = cmd;
	p->ticks = !!(flags & PROF_TICKS);
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
			prof_profile_free(p);
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
			prof_profile_free(p);
			return 1;
		}
	}
	uevent_perf_file__close(f);
	if (p->bad_jit)
		fprintf(stderr, "%s %s: %s: %lu JIT uevents did not decode (skipped)\n", cli_prog,
			cmd, path, p->bad_jit);
	if (p->deep)
		fprintf(stderr, "%s %s: %s: warning: %" PRIu64 " samples were taken under more "
			"than %d open uevent ranges, of which each keeps the innermost %d (does the "
			"program begin ranges it never ends?)\n", cli_prog, cmd, path, p->deep,
			PROF_MAX_RANGES, PROF_MAX_RANGES);
	return 0;
}

void prof_profile_free(struct profile *p)
{
	size_t i;

	for (i = 0; i < p->bcap; i++)
		free(p->blobs[i].data);
	free(p->blobs);
	free(p->fbuf);
	for (i = 0; i < p->rncap; i++)
		free(p->rnodes[i]);
	free(p->rnodes);
	free(p->k);
	free(p->kidx);
	free(p->t);
	for (i = 0; i < p->ntr; i++)
		free(p->tr[i].v);
	for (i = 0; i < p->strs.cap; i++)
		free(p->strs.v[i].key);
	free(p->maps);
	free(p->tr);
	free(p->rs);
	free(p->strs.v);
	uevent_symbolizer__free(p->sym);
}

const char *prof_base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}


/* n bytes as lowercase hex, as W3C trace context writes ids (buf: 2n + 1) */
char *prof_hex(char *buf, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

uint64_t prof_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct row *prof_row_get(struct table *t, const char *key)
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
			for (k = prof_hash(t->v[i].key) & (nt.cap - 1); nt.v[k].key;
			     k = (k + 1) & (nt.cap - 1))
				;
			nt.v[k] = t->v[i];
		}
		free(t->v);
		nt.n = t->n;
		*t = nt;
	}
	for (i = prof_hash(key) & (t->cap - 1); t->v[i].key; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->v[i].key, key))
			return &t->v[i];
	t->v[i].key = strdup(key);
	if (!t->v[i].key)
		return NULL;
	t->n++;
	return &t->v[i];
}
int prof_row_cmp_self(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->key, y->key);
}
