/* export-profile.c - `uevent export --folded`, `--chrome` and `--pprof` of a
 * perf.data's samples as profile.c reads them. */
#include "config.h"

#include <errno.h>
#include <dlfcn.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "profile.h"

/* ---- export --folded ---------------------------------------------------------- */

/*
 * pre NAME post, then ';', appended to the folded stack in *line (*n bytes, room *cap):
 * one frame. A name may hold anything its process put there (a comm is the program's
 * to set), so as stackcollapse-perf.pl does, ';' (the frame separator) becomes ':',
 * and a control character (a newline would start a forged stack) a space. The count
 * follows the line's last space, so a space in a name is left.
 */
static int fold_put(char **line, size_t *n, size_t *cap, const char *pre, const char *name,
		    const char *post)
{
	size_t lp = strlen(pre), l = strlen(name), lq = strlen(post), i;
	char *p;

	if (*n + lp + l + lq + 2 > *cap) {
		size_t want = (*n + lp + l + lq + 2) * 2;

		if (!(p = realloc(*line, want)))
			return -ENOMEM;
		*line = p;
		*cap = want;
	}
	p = *line + *n;
	memcpy(p, pre, lp);
	for (i = 0; i < l; i++) {
		unsigned char c = (unsigned char)name[i];

		p[lp + i] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	memcpy(p + lp + l, post, lq);
	*n += lp + l + lq;
	(*line)[(*n)++] = ';';
	(*line)[*n] = 0;
	return 0;
}

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
	struct cli_output o;
	char *line = NULL;
	int ret = 0;
	FILE *f;

	if (prof_profile_read(&p, "export", in, &so, 0))
		return 1;
	if (prof_no_samples(&p, "export")) {
		prof_profile_free(&p);
		return 1;
	}
	for (i = 0; i < p.nk && ret == 0; i++) {
		const struct kind *s = &p.k[i];
		const char *rv[PROF_MAX_RANGES];
		struct row *r;
		uint32_t k;

		n = 0;
		ret = fold_put(&line, &n, &cap, "", s->comm, "");
		prof_kind_ranges(s, rv);
		for (k = 0; ranges && k < s->nranges && !ret; k++)
			ret = fold_put(&line, &n, &cap, "[", rv[k], "]");
		for (k = s->nframes; k-- > 0 && !ret;)
			ret = fold_put(&line, &n, &cap, "", s->frames[k].sym, "");
		if (ret)
			break;
		line[n - 1] = 0;
		r = prof_row_get(&t, line);
		if (!r)
			ret = -ENOMEM;
		else
			r->self += s->count;
	}
	free(line);
	if (ret < 0) {
		fprintf(stderr, "%s export: %s\n", cli_prog, strerror(-ret));
		prof_profile_free(&p);
		return 1;
	}
	f = cli_open_output_file("export", out, &o);
	if (!f) {
		prof_profile_free(&p);
		return 1;
	}
	n = 0;
	for (i = 0; i < t.cap; i++)
		if (t.v[i].key)
			t.v[n++] = t.v[i];
	if (n > 1)	/* t.v is NULL with no samples: not for qsort */
		qsort(t.v, n, sizeof(*t.v), prof_row_cmp_self);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s %" PRIu64 "\n", t.v[i].key, t.v[i].self);
		free(t.v[i].key);
	}
	free(t.v);
	if (cli_close_output_file(&o, 1) != 0) {
		prof_profile_free(&p);
		return 1;
	}
	fprintf(stderr, "%zu stacks of %zu samples written to %s\n", n, p.n, out);
	prof_profile_free(&p);
	return 0;
}

/* prof_row_get() of the key fmt makes, however long: a key cut to a buffer's size made
 * two long names (C++ templates) one row, the second's samples the first's. */
static struct row *row_getf(struct table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static struct row *row_getf(struct table *t, const char *fmt, ...)
{
	static char *buf;
	static size_t cap;
	va_list ap;
	char *nb;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if ((size_t)n >= cap) {
		if (!(nb = realloc(buf, (size_t)n + 1)))
			return NULL;
		buf = nb;
		cap = (size_t)n + 1;
		va_start(ap, fmt);
		vsnprintf(buf, cap, fmt, ap);
		va_end(ap);
	}
	return prof_row_get(t, buf);
}

/* ---- export --chrome: thread names and CPU samples ---------------------------- */

/* The stack frames the samples written refer to ("sf"), a tree: "parent\tname" -> id. */
static struct table chrome_frames;
static size_t chrome_nframes;

/* Samples by thread, then time: a thread's spans are its runs of samples. */
static const struct profile *span_order_base;

static int span_order(const void *a, const void *b)
{
	const struct profile *p = span_order_base;
	const struct tick *x = &p->t[*(const size_t *)a], *y = &p->t[*(const size_t *)b];
	uint32_t xp = p->k[x->kind].pid, yp = p->k[y->kind].pid;

	if (xp != yp)
		return xp < yp ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int same_span(const struct profile *p, const struct tick *tx, const struct tick *ty)
{
	const struct kind *x = &p->k[tx->kind], *y = &p->k[ty->kind];

	return x->has_ctx && y->has_ctx && x->pid == y->pid && tx->tid == ty->tid &&
	       !memcmp(x->trace_id, y->trace_id, 16) && !memcmp(x->span_id, y->span_id, 8);
}

/*
 * The OpenTelemetry spans the samples were taken in, as slices Perfetto draws: each run
 * of a thread's samples in one span (from its first sample to its last, as report's
 * wall time) is a complete event named by the span id, args trace_id, span_id and the
 * samples. They go on a track of their own beside the thread's ("spans TID": a
 * pseudo-thread, tid SPAN_TRACK | TID, above any Linux tid), not on the thread's own,
 * where they would cut across its uevent ranges. Returns the events written.
 */
#define SPAN_TRACK 0x40000000u

static long chrome_spans(FILE *f, const struct profile *p, int first)
{
	size_t *o, i, j;
	long n = 0;
	uint32_t last_pid = 0, last_tid = 0;
	int track = 0;

	o = malloc((p->n ? p->n : 1) * sizeof(*o));
	if (!o)
		return 0;
	for (i = 0; i < p->n; i++)
		o[i] = i;
	span_order_base = p;
	if (p->n > 1)
		qsort(o, p->n, sizeof(*o), span_order);
	for (i = 0; i < p->n; i = j) {
		const struct tick *ts = &p->t[o[i]], *te = ts;
		const struct kind *s = &p->k[ts->kind];
		char h[33];

		for (j = i + 1; j < p->n && same_span(p, ts, &p->t[o[j]]); j++)
			te = &p->t[o[j]];
		if (!s->has_ctx)
			continue;
		if (!track || s->pid != last_pid || ts->tid != last_tid) {
				/* name the thread's span track */
			fprintf(f, "%s\n{\"ph\": \"M\", \"pid\": %u, \"tid\": %u, \"name\": "
				"\"thread_name\", \"args\": {\"name\": \"spans %u\"}}",
				first ? "" : ",", s->pid, SPAN_TRACK | ts->tid, ts->tid);
			first = 0;
			n++;
			track = 1;
			last_pid = s->pid;
			last_tid = ts->tid;
		}
		fprintf(f, ",\n{\"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %u, "
			"\"tid\": %u, \"cat\": \"span\", \"name\": \"%s\"",
			(double)ts->time / 1000.0, (double)(te->time - ts->time) / 1000.0, s->pid,
			SPAN_TRACK | ts->tid, prof_hex(h, s->span_id, 8));
		fprintf(f, ", \"args\": {\"trace_id\": \"%s\"", prof_hex(h, s->trace_id, 16));
		fprintf(f, ", \"span_id\": \"%s\", \"thread\": %u, \"samples\": %zu}}",
			prof_hex(h, s->span_id, 8), ts->tid, j - i);
		n++;
	}
	free(o);
	return n;
}

/*
 * Writes, after the uevents of a perf.data (first: none were written), each CPU sample
 * as an instant event named by its leaf, its stack in "sf" (export names the threads
 * itself), then the spans the samples were taken in (chrome_spans). Returns the events
 * written, or -1 after saying why.
 */
long cli_chrome_extras(FILE *f, const char *in, int first)
{
	UEVENT_SYMBOLIZER_OPTS(so, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	struct profile p;
	size_t *leaf;	/* a kind's stack's "sf" id + 1; 0: not yet made */
	long n = 0;
	size_t i;

	if (!strcmp(in, "-") && lseek(0, 0, SEEK_SET) != 0)
		return 0;	/* standard input not rewindable: the uevents only */
	if (prof_profile_read(&p, "export", in, &so, PROF_TICKS))
		return -1;
	leaf = calloc(p.nk + 1, sizeof(*leaf));
	for (i = 0; i < p.n; i++) {
		const struct tick *tk = &p.t[i];
		const struct kind *s = &p.k[tk->kind];
		size_t parent = leaf && leaf[tk->kind] ? leaf[tk->kind] - 1 : 0;
		uint32_t k;

		/* the tree's nodes, made by the first sample of each stack as they were when
		 * every sample looked its stack up: the same ids, in the same table order */
		for (k = leaf && leaf[tk->kind] ? 0 : s->nframes; k > 0; k--) {	/* root first */
			struct row *r = row_getf(&chrome_frames, "%zu\t%s", parent,
						 s->frames[k - 1].sym);

			if (!r)
				break;
			if (!r->seen) {
				r->seen = 1;
				r->self = ++chrome_nframes;
				r->children = parent;
			}
			parent = r->self;
		}
		if (leaf && !leaf[tk->kind] && !k)	/* its stack, all made */
			leaf[tk->kind] = parent + 1;
		fprintf(f, "%s\n{\"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": %u, "
			"\"tid\": %u, \"cat\": \"sample\", \"name\": ", first ? "" : ",",
			(double)tk->time / 1000.0, s->pid, tk->tid);
		cli_json_str(f, s->nframes ? s->frames[0].sym : "[unknown]", SIZE_MAX);
		if (parent)
			fprintf(f, ", \"sf\": \"%zu\"", parent);
		fprintf(f, ", \"args\": {\"period_ns\": %" PRIu64, tk->period);
		if (s->has_ctx) {	/* OpenTelemetry's names, as the pprof labels */
			char h[33];

			fprintf(f, ", \"trace_id\": \"%s\"", prof_hex(h, s->trace_id, 16));
			fprintf(f, ", \"span_id\": \"%s\"", prof_hex(h, s->span_id, 8));
		}
		fprintf(f, "}}");
		first = 0;
		n++;
	}
	n += chrome_spans(f, &p, first);
	free(leaf);
	prof_profile_free(&p);
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
	/* proto3 strings are UTF-8 (strict readers refuse the profile otherwise): what is
	 * not becomes U+FFFD */
	char *clean = cli_utf8_clean(s);
	struct row *r = prof_row_get(&st->t, clean ? clean : s);

	free(clean);
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
	struct stat st;
	FILE *f;
	int fd;

	/* a path the recording names: only a regular file, opened without blocking (a
	 * FIFO planted there must not hang the export) */
	if (path[0] != '/' ||
	    (fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "rb"))) {
		close(fd);
		return 0;
	}
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
 * of the process with the most samples (4096 are enough; of those with as many, the one
 * sampled first: an exec maps its program first, perf's synthesized maps are sorted by
 * address), or -1. */
static int32_t main_map(const struct profile *p)
{
	struct { uint32_t pid; uint64_t c; } *v = NULL;	/* by first sample */
	size_t i, k, n = 0, best = 0;
	uint64_t bn = 0;
	int32_t m = -1;

	for (i = 0; i < p->nk; i++) {	/* kinds in the order of their first samples */
		for (k = 0; k < n && v[k].pid != p->k[i].pid; k++)
			;
		if (k == n) {
			void *nv = realloc(v, (n + 1) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			v[n].pid = p->k[i].pid;
			v[n++].c = 0;
		}
		v[k].c += p->k[i].count;
	}
	for (k = 0; k < n; k++)
		if ((v[k].c < 4096 ? v[k].c : 4096) > bn) {
			bn = v[k].c < 4096 ? v[k].c : 4096;
			best = k;
		}
	for (i = 0; bn && i < p->nmaps && m < 0; i++)
		if (p->maps[i].pid == v[best].pid && p->maps[i].file[0] == '/')
			m = (int32_t)i;
	free(v);
	return m;
}

/* A profile.proto being built: its tables, and the rows that find what is in them. */
struct pprof {
	struct strtab	st;
	struct table	funcs, locs, maps, stacks;	/* keys -> ids (row.self) */
	char		*skey;
	size_t		skeycap;
	Perftools__Profiles__Function *fn;
	Perftools__Profiles__Location *loc;
	Perftools__Profiles__Line *line;		/* one a location */
	Perftools__Profiles__Mapping *mp;
	size_t		nfn, nloc, nmp, fcap, lcap, lncap, mcap;
	Perftools__Profiles__Sample *smp, **smpp;	/* a sample a distinct stack */
	size_t		nsmp;
	uint64_t	*ids;				/* the samples' location ids */
	int64_t		*vals;
	Perftools__Profiles__Label *lab, **labp;
	size_t		nids, nlab;
	int64_t		units[4];	/* samples, count, cpu, nanoseconds */
	unsigned long	saturated;	/* values past int64 (pprof_i64) */
};

/*
 * v as one of pprof's values, which are int64: a period of 2^63 or more (no real
 * sample has one: a corrupt or forged file) came out negative, and pprof would have
 * subtracted it. Saturated at INT64_MAX instead, the most the field holds, and counted
 * to be said.
 */
static int64_t pprof_i64(struct pprof *b, uint64_t v)
{
	if (v <= INT64_MAX)
		return (int64_t)v;
	b->saturated++;
	return INT64_MAX;
}

/* *a += v, saturated likewise (*a >= 0) */
static void pprof_add(struct pprof *b, int64_t *a, uint64_t v)
{
	if (v > (uint64_t)(INT64_MAX - *a)) {
		*a = INT64_MAX;
		b->saturated++;
	} else {
		*a += (int64_t)v;
	}
}

/* The id of the mapping frame fr is in (mapping mi, or one made for it; fr NULL: the
 * main binary's mapping mi), made when new; -ENOMEM. */
static int64_t pprof_mapping(struct pprof *b, struct profile *p, const struct frame *fr,
			     int32_t mi)
{
	struct pmap none = { .file = fr ? fr->dso : "", .bid_read = 1 };
	struct pmap *pm = mi >= 0 ? &p->maps[mi] : &none;
	Perftools__Profiles__Mapping *mo;
	struct row *r;
	char bid[41];

	/* no MMAP (the kernel, JIT code, unknown): one by that name, so that pprof makes
	 * up none without a file name */
	if (mi < 0 && fr->kernel) {
		none.addr = 0xffff800000000000ull;
		none.len = ~none.addr;
	}
	if (!(r = row_getf(&b->maps, "%s\t%" PRIx64 "\t%" PRIx64 "\t%" PRIx64, pm->file,
			   pm->addr, pm->len, pm->pgoff)))
		return -ENOMEM;
	if (r->seen)
		goto known;
	if (grow1((void **)&b->mp, b->nmp, &b->mcap, sizeof(*b->mp)) < 0)
		return -ENOMEM;
	mo = &b->mp[b->nmp];
	perftools__profiles__mapping__init(mo);
	mo->id = b->nmp + 1;
	mo->memory_start = pm->addr;
	mo->memory_limit = pm->addr + pm->len;
	mo->file_offset = pm->pgoff;
	mo->filename = str_id(&b->st, pm->file);
	if (!pm->bid_read) {
		pm->bid_read = 1;
		pm->build_id_size = elf_build_id(pm->file, pm->build_id, sizeof(pm->build_id));
	}
	mo->build_id = str_id(&b->st, prof_hex(bid, pm->build_id, pm->build_id_size));
	/* named here: pprof needs not (and does not try to) */
	mo->has_functions = mo->has_filenames = 1;
	if (mo->filename < 0 || mo->build_id < 0)
		return -ENOMEM;
	r->seen = 1;
	r->self = ++b->nmp;
known:
	if (fr && fr->line)
		b->mp[r->self - 1].has_line_numbers = 1;
	return (int64_t)r->self;
}

/* The id of frame fr's function (by name and source file), made when new; -ENOMEM. */
static int64_t pprof_function(struct pprof *b, struct profile *p, const struct kind *s,
			      const struct frame *fr)
{
	const char *src = fr->file ? fr->file : fr->dso;
	struct uevent_symbol sy = { .sz = sizeof(sy) };
	Perftools__Profiles__Function *fo;
	struct row *r;

	if (!(r = row_getf(&b->funcs, "%s\t%s", fr->sym, src)))
		return -ENOMEM;
	if (r->seen)
		return (int64_t)r->self;
	if (grow1((void **)&b->fn, b->nfn, &b->fcap, sizeof(*b->fn)) < 0)
		return -ENOMEM;
	fo = &b->fn[b->nfn];
	perftools__profiles__function__init(fo);
	fo->id = b->nfn + 1;
	fo->name = str_id(&b->st, fr->sym);
	fo->system_name = fo->name;	/* the same string: the symbolizer has one name */
	fo->filename = str_id(&b->st, src);
	if (fr->file && fr->sym_addr &&
	    !uevent_symbolizer__lookup(p->sym, s->pid, fr->sym_addr, s->time, &sy) && sy.file &&
	    !strcmp(sy.file, fr->file))
		fo->start_line = sy.line;
	if (fo->name < 0 || fo->system_name < 0 || fo->filename < 0)
		return -ENOMEM;
	r->seen = 1;
	r->self = ++b->nfn;
	return (int64_t)r->self;
}

/* The id of frame fr's location (its address in mapping mid, or alone), made when new
 * with its line; -ENOMEM. */
static int64_t pprof_location(struct pprof *b, struct profile *p, const struct kind *s,
			      const struct frame *fr, uint64_t mid)
{
	Perftools__Profiles__Location *lo;
	Perftools__Profiles__Line *ln;
	struct row *r;
	int64_t fid;

	if (!(r = row_getf(&b->locs, "%" PRIu64 "\t%" PRIx64 "\t%s", mid, fr->addr,
			   fr->map >= 0 ? "" : fr->sym)))
		return -ENOMEM;
	if (r->seen)
		return (int64_t)r->self;
	if ((fid = pprof_function(b, p, s, fr)) < 0 ||
	    grow1((void **)&b->loc, b->nloc, &b->lcap, sizeof(*b->loc)) < 0 ||
	    grow1((void **)&b->line, b->nloc, &b->lncap, sizeof(*b->line)) < 0)
		return -ENOMEM;
	lo = &b->loc[b->nloc];
	ln = &b->line[b->nloc];
	perftools__profiles__location__init(lo);
	perftools__profiles__line__init(ln);
	lo->id = b->nloc + 1;
	lo->mapping_id = mid;
	lo->address = fr->addr;
	ln->function_id = (uint64_t)fid;
	ln->line = fr->line;
	r->seen = 1;
	r->self = ++b->nloc;
	return (int64_t)r->self;
}

/* Sample s's labels into o: each uevent range open on its thread (outer first), its
 * thread's command and, in an OpenTelemetry context, trace_id and span_id (W3C hex). */
static int pprof_labels(struct pprof *b, const struct kind *s,
			Perftools__Profiles__Sample *o)
{
	uint32_t k, nl = s->nranges + 1 + (s->has_ctx ? 2 : 0);
	const char *rv[PROF_MAX_RANGES];

	prof_kind_ranges(s, rv);
	o->label = &b->labp[b->nlab];
	for (k = 0; k < nl; k++) {
		Perftools__Profiles__Label *l = &b->lab[b->nlab];
		char h[33];

		perftools__profiles__label__init(l);
		if (k < s->nranges) {
			l->key = str_id(&b->st, "range");
			l->str = str_id(&b->st, rv[k]);
		} else if (k == s->nranges) {
			l->key = str_id(&b->st, "thread");
			l->str = str_id(&b->st, s->comm);
		} else if (k == s->nranges + 1) {	/* OpenTelemetry's names */
			l->key = str_id(&b->st, "trace_id");
			l->str = str_id(&b->st, prof_hex(h, s->trace_id, 16));
		} else {
			l->key = str_id(&b->st, "span_id");
			l->str = str_id(&b->st, prof_hex(h, s->span_id, 8));
		}
		if (l->key < 0 || l->str < 0)
			return -ENOMEM;
		b->labp[b->nlab++] = l;
	}
	o->n_label = nl;
	return 0;
}

/*
 * The samples of kind s into the profile: their locations, their labels, and either a
 * new sample or, when one before had the same stack and labels, their values added to
 * that one's. (Kinds come in the order of their first samples: the tables' in that of
 * the samples that first name a row, and s->time is that sample's.)
 */
static int pprof_sample(struct pprof *b, struct profile *p, const struct kind *s)
{
	Perftools__Profiles__Sample *o = &b->smp[b->nsmp];
	size_t ids0 = b->nids, lab0 = b->nlab, kn = 0;
	uint32_t k;
	struct row *m;

	perftools__profiles__sample__init(o);
	o->location_id = &b->ids[b->nids];
	o->n_location_id = s->nframes;
	for (k = 0; k < s->nframes; k++) {
		const struct frame *fr = &s->frames[k];
		int64_t mid = pprof_mapping(b, p, fr, fr->map), lid;

		if (mid < 0 || (lid = pprof_location(b, p, s, fr, (uint64_t)mid)) < 0)
			return -ENOMEM;
		b->ids[b->nids++] = (uint64_t)lid;
	}
	o->n_value = 2;
	if (pprof_labels(b, s, o) < 0)
		return -ENOMEM;
	/* the stack's location ids and the labels' strings: the key of its kind */
	for (k = 0; k < s->nframes + 2 * o->n_label; k++) {
		const Perftools__Profiles__Label *l = &b->lab[lab0 + (k - s->nframes) / 2];

		if (b->skeycap - kn < 24) {
			char *a = realloc(b->skey, b->skeycap = b->skeycap ? 2 * b->skeycap : 1024);

			if (!a)
				return -ENOMEM;
			b->skey = a;
		}
		kn += (size_t)snprintf(b->skey + kn, b->skeycap - kn, "%" PRId64 ",",
				       k < s->nframes ? (int64_t)b->ids[ids0 + k] :
				       (k - s->nframes) % 2 ? l->str : l->key);
	}
	if (!b->skey || !(m = prof_row_get(&b->stacks, b->skey)))
		return -ENOMEM;
	if (m->seen) {
		pprof_add(b, &b->vals[2 * (m->self - 1)], s->count);
		pprof_add(b, &b->vals[2 * (m->self - 1) + 1], s->period);
		b->nids = ids0;
		b->nlab = lab0;
		return 0;
	}
	m->seen = 1;
	m->self = ++b->nsmp;
	b->smpp[b->nsmp - 1] = o;
	o->value = &b->vals[2 * (b->nsmp - 1)];
	o->value[0] = pprof_i64(b, s->count);
	o->value[1] = pprof_i64(b, s->period);
	return 0;
}

/* The arrays for p's kinds of samples at most; the string table's "" first. */
static int pprof_init(struct pprof *b, const struct profile *p)
{
	size_t i, nids = 0, nlab = 0;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < p->nk; i++) {
		nids += p->k[i].nframes;
		nlab += p->k[i].nranges + 3;
	}
	b->smp = calloc(p->nk + 1, sizeof(*b->smp));
	b->smpp = calloc(p->nk + 1, sizeof(*b->smpp));
	b->ids = calloc(nids + 1, sizeof(*b->ids));
	b->vals = calloc(2 * p->nk + 1, sizeof(*b->vals));
	b->lab = calloc(nlab + 1, sizeof(*b->lab));
	b->labp = calloc(nlab + 1, sizeof(*b->labp));
	if (!b->smp || !b->smpp || !b->ids || !b->vals || !b->lab || !b->labp ||
	    str_id(&b->st, "") != 0)
		return -ENOMEM;
	for (i = 0; i < 4; i++)
		if ((b->units[i] = str_id(&b->st, (const char *[]){ "samples", "count", "cpu",
							      "nanoseconds" }[i])) < 0)
			return -ENOMEM;
	return 0;
}

static void free_keys(struct table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->v[i].key);
	free(t->v);
}

static void pprof_free(struct pprof *b)
{
	free_keys(&b->st.t);
	free_keys(&b->funcs);
	free_keys(&b->locs);
	free_keys(&b->maps);
	free_keys(&b->stacks);
	free(b->skey);
	free(b->st.v);
	free(b->fn);
	free(b->loc);
	free(b->line);
	free(b->mp);
	free(b->smp);
	free(b->smpp);
	free(b->ids);
	free(b->vals);
	free(b->lab);
	free(b->labp);
}

/* The profile packed into out (its messages point into b's arrays, which no longer
 * move); 0, 1 after saying why, or -ENOMEM. */
static int pprof_write(struct pprof *b, const struct profile *p, const char *out)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						 PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vtp[2] = { &vt[0], &vt[1] };
	Perftools__Profiles__Function **fnp = calloc(b->nfn + 1, sizeof(*fnp));
	Perftools__Profiles__Location **locp = calloc(b->nloc + 1, sizeof(*locp));
	Perftools__Profiles__Line **linep = calloc(b->nloc + 1, sizeof(*linep));
	Perftools__Profiles__Mapping **mpp = calloc(b->nmp + 1, sizeof(*mpp));
	uint8_t *buf = NULL;
	struct cli_output o;
	int ret = -ENOMEM;
	size_t i;
	FILE *f;

	vt[0].type = b->units[0];
	vt[0].unit = b->units[1];
	vt[1].type = pt.type = b->units[2];
	vt[1].unit = pt.unit = b->units[3];
	if (!fnp || !locp || !linep || !mpp)
		goto out;
	for (i = 0; i < b->nfn; i++)
		fnp[i] = &b->fn[i];
	for (i = 0; i < b->nmp; i++)
		mpp[i] = &b->mp[i];
	for (i = 0; i < b->nloc; i++) {
		locp[i] = &b->loc[i];
		linep[i] = &b->line[i];
		b->loc[i].n_line = 1;
		b->loc[i].line = &linep[i];
	}
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &pt;
	prof.period = pprof_i64(b, p->period0);	/* the first sample's */
	prof.n_sample = b->nsmp;
	prof.sample = b->smpp;
	prof.n_function = b->nfn;
	prof.function = fnp;
	prof.n_location = b->nloc;
	prof.location = locp;
	prof.n_mapping = b->nmp;
	prof.mapping = mpp;
	prof.n_string_table = b->st.n;
	prof.string_table = b->st.v;
	buf = malloc(perftools__profiles__profile__get_packed_size(&prof) + 1);
	if (!buf)
		goto out;
	i = perftools__profiles__profile__pack(&prof, buf);
	ret = 1;
	f = cli_open_output_file("export", out, &o);
	if (!f)
		goto out;
	errno = 0;
	if (fwrite(buf, 1, i, f) != i) {
		fprintf(stderr, "%s export: %s: %s\n", cli_prog, out, strerror(errno ? errno : EIO));
		cli_close_output_file(&o, 0);
		goto out;
	}
	if (cli_close_output_file(&o, 1) != 0)
		goto out;
	if (b->saturated)
		fprintf(stderr, "%s export: %s: warning: %lu values past pprof's int64 (periods "
			"of 2^63 or more, or their sums) written as %" PRId64 ": is the file "
			"corrupt?\n", cli_prog, p->path, b->saturated, INT64_MAX);
	fprintf(stderr, "%zu samples (%zu stacks), %zu functions at %zu locations in %zu "
		"mappings written to %s\n", p->n, b->nsmp, b->nfn, b->nloc, b->nmp, out);
	ret = 0;
out:
	free(fnp);
	free(locp);
	free(linep);
	free(mpp);
	free(buf);
	return ret;
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
	struct pprof b;
	struct profile p;
	int32_t mainm;
	int ret;
	size_t i;

	if (prof_profile_read(&p, "export", in, &so, 0))
		return 1;
	if (prof_no_samples(&p, "export")) {
		prof_profile_free(&p);
		return 1;
	}
	ret = pprof_init(&b, &p);
	/* the main binary's mapping, made first: pprof's main binary */
	mainm = main_map(&p);
	if (!ret && mainm >= 0 && pprof_mapping(&b, &p, NULL, mainm) < 0)
		ret = -ENOMEM;
	for (i = 0; !ret && i < p.nk; i++)
		ret = pprof_sample(&b, &p, &p.k[i]);
	if (!ret)
		ret = pprof_write(&b, &p, out);
	if (ret < 0)
		fprintf(stderr, "%s export: %s\n", cli_prog, strerror(-ret));
	pprof_free(&b);
	prof_profile_free(&p);
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
