/* report.c - `uevent report` (overhead by symbol, time per uevent range) over
 * a perf.data's samples as profile.c reads them. */
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

#include "profile.h"

/* ---- report ------------------------------------------------------------------- */

/* in column order */
enum { KEY_COMM = 1, KEY_PID = 2, KEY_TRACE = 4, KEY_SPAN = 8, KEY_DSO = 16, KEY_SYM = 32 };


static void row_key(char *buf, size_t cap, unsigned int keys, const struct kind *s,
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
				      s->has_ctx ? prof_hex(h, s->trace_id, 16) : "-");
	if ((keys & KEY_SPAN) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t",
				      s->has_ctx ? prof_hex(h, s->span_id, 8) : "-");
	if ((keys & KEY_DSO) && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s\t", prof_base_name(f->dso));
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

static int in_range(const struct kind *s, const char *range)
{
	const struct range_node *n = s->ranges;
	uint32_t i;

	if (!range)
		return 1;
	for (i = 0; i < s->nranges; i++, n = n->up)
		if (!strcmp(n->name, range))
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

	/* samples under each range (nested: each open range counts them); the kinds in the
	 * order of their first samples name the ranges in the order of theirs */
	for (i = 0; i < p->nk; i++) {
		const struct kind *s = &p->k[i];
		const char *rv[PROF_MAX_RANGES];

		prof_kind_ranges(s, rv);
		for (k = 0; k < s->nranges; k++) {
			uint32_t j;
			int dup = 0;

			for (j = 0; j < k; j++)
				dup |= rv[j] == rv[k];
			if (!dup) {
				struct range_stat *rs = prof_range_stat((struct profile *)p, rv[k]);

				if (rs) {
					rs->samples += s->count;
					rs->period = prof_add_sat(rs->period, s->period);
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
static int in_trace(const struct kind *s, const char *id)
{
	char h[33];

	if (!id)
		return 1;
	return s->has_ctx && !strncasecmp(prof_hex(h, s->trace_id, 16), id, strlen(id));
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

	for (i = 0; i < p->nk; i++)
		any |= p->k[i].has_ctx;
	if (!any)
		return 0;
	for (i = 0; i < p->nk && !ret; i++) {
		const struct kind *s = &p->k[i];
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
				snprintf(key, sizeof(key), "%s/%s", prof_hex(h, s->trace_id, 16),
					 pass ? prof_hex(h2, s->span_id, 8) : "");
			r = prof_row_get(&idx, key);
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
				v[n].first = s->tmin;
				r->seen = 1;
				r->self = n++;
			}
			st = &v[r->self];
			st->samples += s->count;
			st->period = prof_add_sat(st->period, s->period);
			if (s->tmin < st->first)
				st->first = s->tmin;
			if (s->tmax > st->last)
				st->last = s->tmax;
		}
	}
	for (i = 0; i < n && !ret; i++) {	/* each row sorts under its trace */
		char key[64], h[33];
		struct row *r;

		if (v[i].none)
			continue;
		snprintf(key, sizeof(key), "%s/", prof_hex(h, v[i].trace_id, 16));
		r = prof_row_get(&idx, key);		/* there: the trace's own row */
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
			       v[i].none ? "-" : prof_hex(h, v[i].trace_id, 16),
			       v[i].none ? "(no context)" : v[i].total ? "(all its spans)" :
			       prof_hex(h2, v[i].span_id, 8));
		}
		ret = (int)n;
	}
	for (i = 0; i < idx.cap; i++)
		free(idx.v[i].key);
	free(idx.v);
	free(v);
	return ret;
}

/* What `uevent report` was asked for. */
struct report_args {
	struct uevent_symbolizer_opts *so;
	const char	*path, *range, *trace;
	unsigned int	keys;
	int		children, use_pager;
};

/* report's options into a (and f): -1 to go on, else the exit code. */
static int report_options(int argc, char **argv, struct report_args *a, struct cli_filter *f)
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
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:cr:t:d:i:h", opts, NULL)) != -1) {
		switch (cli_filter_opt(f, "report", c, optarg)) {
		case 1: continue;
		case -1: return 2;
		}
		switch (c) {
		case 's':
			if (parse_sort(optarg, &a->keys) < 0) {
				fprintf(stderr, "%s report: --sort wants a list of comm, pid, dso, "
					"sym, trace, span, not '%s'\n", cli_prog, optarg);
				return 2;
			}
			break;
		case 'c': a->children = 1; break;
		case 'r': a->range = optarg; break;
		case 't':
			if (!*optarg || strlen(optarg) > 32 ||
			    strspn(optarg, "0123456789abcdefABCDEF") != strlen(optarg)) {
				fprintf(stderr, "%s report: --trace wants a trace id (32 hex digits, "
					"or the first of them, as the trace table prints it), not "
					"'%s'\n", cli_prog, optarg);
				return 2;
			}
			a->trace = optarg;
			break;
		case 'd': a->so->debug_dir = optarg; break;
		case 'i': a->path = optarg; break;
		case 'P': a->use_pager = 0; break;
		case 'M': cli_no_demangle = 1; break;
		case 'h':
			printf("Usage: %s report [--sort comm,pid,trace,span,dso,sym] [--children] "
			       "[--range NAME] [--trace ID] [--debug-dir DIR] [--pid PIDS] [--tid TIDS] "
			       "[--comm NAMES] [--time START,END] [--no-pager] [--no-demangle] FILE\n", cli_prog);
			return 0;
		default: return 2;
		}
	}
	if (optind < argc && !a->path)
		a->path = argv[optind++];
	if (!a->path || optind < argc) {
		fprintf(stderr, "%s report: which file? (uevent report [OPTIONS] FILE)\n", cli_prog);
		return 2;
	}
	return -1;
}

/* --trace or --range matched no sample: says which traces or ranges there are. */
static void report_none_matched(const struct profile *p, const struct report_args *a)
{
	size_t shown = 0, i, k;

	if (!a->trace) {
		/* a name mistyped reads as an empty profile: say which ranges there are */
		fprintf(stderr, "%s report: %s: no samples inside a range named '%s'; its ranges:",
			cli_prog, a->path, a->range);
		for (i = 0; i < p->nrs; i++)
			fprintf(stderr, "%s %s", i ? "," : "", p->rs[i].name);
		fprintf(stderr, "%s\n", p->nrs ? "" : " none (no uevent ranges recorded)");
		return;
	}
	fprintf(stderr, "%s report: %s: no samples%s%s%s in a trace whose id starts with "
		"'%s'; its traces:", cli_prog, a->path, a->range ? " inside range '" : "",
		a->range ? a->range : "", a->range ? "'" : "", a->trace);
	/* the kinds in the order of their first samples: the traces in the order of theirs */
	for (i = 0; i < p->nk && shown < 20; i++) {
		char h[33];

		if (!p->k[i].has_ctx)
			continue;
		for (k = 0; k < i; k++)
			if (p->k[k].has_ctx && !memcmp(p->k[k].trace_id, p->k[i].trace_id, 16))
				break;
		if (k == i)
			fprintf(stderr, "%s %s", shown++ ? "," : "", prof_hex(h, p->k[i].trace_id, 16));
	}
	fprintf(stderr, "%s\n", shown ? "" : " none (no sample carries a trace context: "
		"record with uevent record --context and uevent_thread_context_set())");
}

/* The table: a row per distinct key of the selected samples, by overhead (summed a kind
 * of sample at a time); -ENOMEM. */
static int report_table(const struct profile *p, const struct report_args *a, uint64_t total)
{
	struct table t = { NULL, 0, 0 };
	size_t i, n = 0;
	int ret = 0;

	for (i = 0; i < p->nk && ret == 0; i++) {
		const struct kind *s = &p->k[i];
		char key[1024];
		uint32_t k;

		if (!in_range(s, a->range) || !in_trace(s, a->trace))
			continue;
		for (k = 0; k < (a->children ? s->nframes : 1); k++) {
			struct row *r;

			row_key(key, sizeof(key), a->keys, s, &s->frames[k]);
			r = prof_row_get(&t, key);
			if (!r) {
				ret = -ENOMEM;
				break;
			}
			if (!k)
				r->self = prof_add_sat(r->self, s->period);
			if (r->seen != i + 1) {		/* once per stack: recursion */
				r->children = prof_add_sat(r->children, s->period);
				r->seen = i + 1;
			}
		}
	}
	/* packed to the front, sorted by overhead */
	for (i = 0; i < t.cap; i++)
		if (t.v[i].key)
			t.v[n++] = t.v[i];
	sort_by = (uint64_t)a->children;
	if (!ret && n > 1)	/* t.v is NULL with no samples: not for qsort */
		qsort(t.v, n, sizeof(*t.v), row_cmp);
	if (!ret)
		print_header(a->keys, a->children);
	for (i = 0; i < n; i++) {
		if (!ret && total)
			print_row(&t.v[i], total, a->keys, a->children);
		free(t.v[i].key);
	}
	free(t.v);
	return ret;
}

int cli_cmd_report(int argc, char **argv)
{
	UEVENT_SYMBOLIZER_OPTS(so, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	struct report_args a = { .so = &so, .keys = KEY_COMM | KEY_DSO | KEY_SYM,
				 .use_pager = 1 };
	struct cli_filter filt;
	struct profile p;
	uint64_t total = 0, nsel = 0;
	int ret;
	size_t i;

	cli_filter_init(&filt);
	if ((ret = report_options(argc, argv, &a, &filt)) >= 0)
		return ret;
	prof_sample_filter = &filt;
	ret = prof_profile_read(&p, "report", a.path, &so, 0);
	prof_sample_filter = NULL;
	if (ret)
		return 1;
	if (!p.n && !p.filtered && p.nrs && !a.range && !a.trace) {
		/* ranges but no samples (a short program): their counts and wall times */
		fprintf(stderr, "%s report: %s: no samples, so only the ranges' counts and wall "
			"times (record with -F HZ to sample inside them)\n", cli_prog, a.path);
		printf("# uevent report of %s\n# Samples: 0\n", a.path);
		report_ranges(&p);
		prof_profile_free(&p);
		return 0;
	}
	if (prof_no_samples(&p, "report")) {
		prof_profile_free(&p);
		return 1;
	}
	for (i = 0; i < p.nk; i++)
		if (in_range(&p.k[i], a.range) && in_trace(&p.k[i], a.trace)) {
			nsel += p.k[i].count;
			total = prof_add_sat(total, p.k[i].period);
		}
	if (total == UINT64_MAX)
		fprintf(stderr, "%s report: %s: warning: the periods add up past 2^64 (is the "
			"file corrupt?): shares are of that, each at most 100%%\n", cli_prog, a.path);
	if ((a.trace || a.range) && !nsel) {
		report_none_matched(&p, &a);
		prof_profile_free(&p);
		return 1;
	}
	if (a.use_pager)
		prof_pager_start();
	printf("# uevent report of %s\n# Samples: %zu, %" PRIu64 " with callchains\n", a.path,
	       p.n, p.with_chain);
	if (a.range)
		printf("# Range: %s (%" PRIu64 " samples taken inside it)\n", a.range, nsel);
	if (a.trace)
		printf("# Trace: %s (%" PRIu64 " samples taken in it)\n", a.trace, nsel);
	if (a.children && !p.with_chain)
		fprintf(stderr, "%s report: %s: no callchains: children are self\n", cli_prog,
			a.path);
	if ((ret = report_table(&p, &a, total)) < 0) {
		prof_pager_end();
		fprintf(stderr, "%s report: %s\n", cli_prog, strerror(-ret));
		prof_profile_free(&p);
		return 1;
	}
	if (!a.range && !a.trace)
		report_ranges(&p);
	if (report_traces(&p, a.trace, a.range, total) < 0)
		fprintf(stderr, "%s report: time per trace: %s\n", cli_prog, strerror(ENOMEM));
	prof_pager_end();
	prof_profile_free(&p);
	return 0;
}
