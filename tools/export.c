/* export.c - uevent export: a capture as Trace Event Format JSON (Perfetto), folded stacks
 * or pprof. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "cli.h"

/* The records of a capture (perf.data, the file transport's too). */
struct src {
	struct uevent_perf_file *pf;
	const char *path;
	int bo;			/* byte order of the payloads */
};

static int src_open(struct src *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->pf = uevent_perf_file__open(path);
	return s->pf ? 0 : -errno;
}

static int src_next(struct src *s, struct uevent_perf_record *r)
{
	int ret;

	s->bo = uevent_perf_file__byte_order(s->pf);
	while ((ret = uevent_perf_file__next(s->pf, r)) == -EPROTO)
		;
	return ret;
}

static void src_close(struct src *s)
{
	uevent_perf_file__close(s->pf);
}


/*
 * Ranges open in the export, in begin order. A sync range's E goes on its begin's thread,
 * and ending one ends the ranges begun inside it on that thread first (as the library's
 * range stack does), so B/E nest on every thread; an end whose begin is not in the file
 * (or was ended already) is left out and counted.
 */
struct open_range {
	uint64_t	id;
	uint32_t	pid, tid;
	int		async;
	char		*name;
};

struct open_ranges {
	struct open_range	*v;
	size_t			n, cap;
	unsigned long		unmatched;
};

static int open_range_push(struct open_ranges *o, uint64_t id, uint32_t pid, uint32_t tid,
			   int async, const char *name)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct open_range *v = realloc(o->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n].name = strdup(name);
	if (!o->v[o->n].name)
		return -ENOMEM;
	o->v[o->n].id = id;
	o->v[o->n].pid = pid;
	o->v[o->n].tid = tid;
	o->v[o->n].async = async;
	o->n++;
	return 0;
}

static void open_range_drop(struct open_ranges *o, size_t i)
{
	free(o->v[i].name);
	memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof(o->v[0]));
	o->n--;
}

static void open_ranges_free(struct open_ranges *o)
{
	while (o->n)
		open_range_drop(o, o->n - 1);
	free(o->v);
}

/*
 * Thread and process names from COMM records, kept (last one wins) and written as M
 * events at the end for the threads that have events: a recording with -a holds the
 * COMM of every task that ran, most of which made no uevent.
 */
struct tef_name {
	uint32_t	pid, tid;
	int		used;
	char		comm[32];
};

struct tef_names {
	struct tef_name	*v;
	size_t		n, cap, last;
};

static struct tef_name *tef_name(struct tef_names *t, uint32_t pid, uint32_t tid)
{
	size_t i;

	if (t->last < t->n && t->v[t->last].pid == pid && t->v[t->last].tid == tid)
		return &t->v[t->last];
	for (i = t->n; i-- > 0;)
		if (t->v[i].pid == pid && t->v[i].tid == tid)
			return &t->v[t->last = i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct tef_name *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->v[t->n].pid = pid;
	t->v[t->n].tid = tid;
	return &t->v[t->last = t->n++];
}

/* A task with events: it and its process get named. A new thread starts with the name
 * its process had, as clone() gives it. */
static int tef_name_use(struct tef_names *t, uint32_t pid, uint32_t tid)
{
	struct tef_name *p = tef_name(t, pid, pid), *th;

	if (!p)
		return -ENOMEM;
	p->used = 1;
	if (tid == pid)
		return 0;
	th = tef_name(t, pid, tid);
	if (!th)
		return -ENOMEM;
	p = tef_name(t, pid, pid);	/* the table may have moved */
	if (!th->used && !th->comm[0])
		memcpy(th->comm, p->comm, sizeof(th->comm));
	th->used = 1;
	return 0;
}

/* Events are separated by ",": the first one gets none. */
static const char *tef_sep;

static const char *tef_next(void)
{
	const char *s = tef_sep;

	tef_sep = ",";
	return s;
}

/* A sync range ends on its begin's thread; an async one where it is ended (tid). */
static void tef_end(FILE *f, const struct open_range *r, uint32_t tid, double ts)
{
	fprintf(f, "%s\n{\"ph\": \"%s\", \"ts\": %.3f, \"pid\": %u, \"tid\": %u, \"cat\": \"uevent\", "
		"\"name\": ", tef_next(), r->async ? "e" : "E", ts, r->pid, r->async ? tid : r->tid);
	cli_json_str(f, r->name, 4096);
	if (r->async)
		fprintf(f, ", \"id\": \"0x%" PRIx64 "\"", r->id);
	fprintf(f, "}");
}

/* Writes the E (or e) events a range end makes; returns how many. */
static int tef_range_end(FILE *f, struct open_ranges *o, uint32_t pid, uint32_t tid,
			 uint64_t id, int async, double ts)
{
	size_t i, j;
	int n = 0;

	for (i = o->n; i-- > 0;)
		if (o->v[i].id == id && o->v[i].pid == pid && o->v[i].async == async)
			break;
	if (i == (size_t)-1) {
		o->unmatched++;
		return 0;
	}
	if (!async)
		for (j = o->n; j-- > i + 1;)
			if (!o->v[j].async && o->v[j].tid == o->v[i].tid && o->v[j].pid == pid) {
				tef_end(f, &o->v[j], tid, ts);
				open_range_drop(o, j);
				n++;
			}
	tef_end(f, &o->v[i], tid, ts);
	open_range_drop(o, i);
	return n + 1;
}

/* The options, anywhere, as getopt's: -1 to go on, else the exit status. */
static int export_args(int argc, char **argv, const char **out, const char **in,
		       const char **folded, const char **pprof, const char **debug_dir, int *ranges)
{
	int i;

	/* options anywhere, as getopt's; an option's value is never another option */
	for (i = 1; i < argc; i++) {
		const char **val = !strcmp(argv[i], "--chrome") ? out :
				   !strcmp(argv[i], "--folded") ? folded :
				   !strcmp(argv[i], "--pprof") ? pprof :
				   !strcmp(argv[i], "--debug-dir") ? debug_dir : NULL;

		if (val) {
			if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1])) {
				fprintf(stderr, "%s export: %s wants a %s, not %s%s%s (a file named so: "
					"./%s)\n", cli_prog, argv[i], val == debug_dir ? "directory" :
					"file to write", i + 1 < argc ? "'" : "nothing",
					i + 1 < argc ? argv[i + 1] : "", i + 1 < argc ? "'" : "",
					i + 1 < argc ? argv[i + 1] : "NAME");
				return 2;
			}
			*val = argv[++i];
		} else if (!strcmp(argv[i], "--ranges")) {
			*ranges = 1;
		} else if (!strcmp(argv[i], "--no-demangle")) {
			cli_no_demangle = 1;
		} else if (!strcmp(argv[i], "--")) {
			for (i++; i < argc; i++) {
				if (*in) {
					fprintf(stderr, "%s export: one input file, not '%s' and '%s'\n",
						cli_prog, *in, argv[i]);
					return 2;
				}
				*in = argv[i];
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s export: unknown option '%s'\n", cli_prog, argv[i]);
			return 2;
		} else if (*in) {
			fprintf(stderr, "%s export: one input file, not '%s' and '%s'\n", cli_prog, *in,
				argv[i]);
			return 2;
		} else {
			*in = argv[i];
		}
	}
	return -1;
}

/* A mark, counter or range of r as a Trace Event on f (*n counts them): 0, or -ENOMEM. */
static int tef_mark(FILE *f, const struct uevent_perf_record *r, int bo, struct open_ranges *open,
		    unsigned long *n)
{
	const struct uevent_record *u = &r->u.uevent;
	struct uevent_text t;
	struct uevent_counter c;
	struct uevent_range_begin rb;
	struct uevent_range_end re;
	double ts = (double)r->id.time / 1000.0;

#define EV_HEAD(ph) fprintf(f, "%s\n{\"ph\": \"%s\", \"ts\": %.3f, \"pid\": %u, \"tid\": %u, " \
			    "\"cat\": \"uevent\"", tef_next(), ph, ts, r->id.pid, r->id.tid)
	if (u->type == UEVENT_TYPE_TEXT && !uevent_text_decode(u->data, u->size, bo, &t)) {
		EV_HEAD("i");
		fprintf(f, ", \"s\": \"t\", \"name\": ");
		cli_json_str(f, t.text, 4096);
	} else if (u->type == UEVENT_TYPE_COUNTER &&
		   !uevent_counter_decode(u->data, u->size, bo, &c)) {
		EV_HEAD("C");
		fprintf(f, ", \"name\": ");
		cli_json_str(f, c.name, 4096);
		fprintf(f, ", \"args\": {");
		cli_json_str(f, c.name, 4096);
		fprintf(f, ": %" PRId64 "}", c.value);
	} else if (u->type == UEVENT_TYPE_RANGE_BEGIN &&
		   !uevent_range_begin_decode(u->data, u->size, bo, &rb)) {
		int async = rb.flags & UEVENT_RANGE_ASYNC;

		if (open_range_push(open, rb.id, r->id.pid, r->id.tid, async, rb.name) < 0)
			return -ENOMEM;
		EV_HEAD(async ? "b" : "B");
		fprintf(f, ", \"name\": ");
		cli_json_str(f, rb.name, 4096);
		if (async)
			fprintf(f, ", \"id\": \"0x%" PRIx64 "\"", rb.id);
		fprintf(f, ", \"args\": {\"id\": \"0x%" PRIx64 "\", \"parent\": \"0x%" PRIx64 "\"}",
			rb.id, rb.parent);
	} else if (u->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(u->data, u->size, bo, &re)) {
		*n += (unsigned long)tef_range_end(f, open, r->id.pid, r->id.tid, re.id,
						   re.flags & UEVENT_RANGE_ASYNC, ts);
		return 0;
	} else {
		const char *tn = uevent_type_name(u->type);

		EV_HEAD("i");
		fprintf(f, ", \"s\": \"t\", \"name\": ");
		cli_json_str(f, tn ? tn : "user", 64);
		fprintf(f, ", \"args\": {\"type\": %u, \"size\": %u}", u->type, u->size);
	}
#undef EV_HEAD
	fprintf(f, "}");
	(*n)++;
	return 0;
}

/* The names of the threads and processes the events were of, as Trace Events: how many. */
static unsigned long tef_thread_names(FILE *f, const struct tef_names *names)
{
	unsigned long n = 0;
	size_t k;

	for (k = 0; k < names->n; k++) {
		const struct tef_name *tn = &names->v[k];
		int m;

		if (!tn->used || !tn->comm[0])
			continue;
		for (m = tn->pid == tn->tid ? 0 : 1; m < 2; m++) {
			fprintf(f, "%s\n{\"ph\": \"M\", \"pid\": %u, \"tid\": %u, \"name\": \"%s\", "
				"\"args\": {\"name\": ", tef_next(), tn->pid, tn->tid,
				m ? "thread_name" : "process_name");
			cli_json_str(f, tn->comm, sizeof(tn->comm));
			fprintf(f, "}}");
			n++;
		}
	}
	return n;
}

/* Trace Event Format: marks are instant events, ranges B/E (async: b/e), counters C,
 * COMM records name the threads and processes (M). */
int cli_cmd_export(int argc, char **argv)
{
	const char *out = NULL, *in = NULL, *folded = NULL, *pprof = NULL, *debug_dir = NULL;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	int ranges = 0;
	struct src src;
	struct open_ranges open = { 0 };
	struct tef_names names = { 0 };
	unsigned long n = 0;
	struct cli_output o;
	uint64_t cut;
	int ret, failed = 0;
	FILE *f;

	if ((ret = export_args(argc, argv, &out, &in, &folded, &pprof, &debug_dir, &ranges)) >= 0)
		return ret;
	if (folded && !out && !pprof && in)
		return cli_export_folded(folded, in, ranges, debug_dir);
	if (pprof && !out && !folded && in)
		return cli_export_pprof(pprof, in, debug_dir);
	if (!out || !in || folded || pprof) {
		fprintf(stderr, "%s export: usage: export --chrome OUT.json FILE, export "
			"--folded OUT [--ranges] [--debug-dir DIR] FILE, or export --pprof OUT "
			"[--debug-dir DIR] FILE\n", cli_prog);
		return 2;
	}
	if (!strcmp(in, "-") && (ret = cli_stdin_rewindable()) < 0) {
		fprintf(stderr, "%s export: standard input: %s\n", cli_prog, strerror(-ret));
		return 1;
	}
	if (src_open(&src, in) < 0) {
		fprintf(stderr, "%s export: %s\n", cli_prog, cli_open_error(in, errno, cli_is_perf_data(in)));
		return 1;
	}
	f = cli_open_output_file("export", out, &o);
	if (!f) {
		src_close(&src);
		return 1;
	}
	tef_sep = "";
	fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
	while ((ret = src_next(&src, &r)) > 0) {
		if (r.body == UEVENT_BODY_COMM) {
			struct tef_name *tn = tef_name(&names, r.u.comm.pid, r.u.comm.tid);

			if (!tn) {
				ret = -ENOMEM;
				break;
			}
			snprintf(tn->comm, sizeof(tn->comm), "%s", r.u.comm.comm);
			continue;
		}
		if (r.body == UEVENT_BODY_SAMPLE &&
		    tef_name_use(&names, r.u.sample.pid, r.u.sample.tid) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (r.type != PERF_RECORD_UEVENT)
			continue;
		if (tef_name_use(&names, r.id.pid, r.id.tid) < 0) {
			ret = -ENOMEM;
			break;
		}
		ret = tef_mark(f, &r, src.bo, &open, &n);
		if (ret < 0)
			break;
	}
	if (src.pf && ret >= 0) {	/* CPU samples and their stacks */
		long x = cli_chrome_extras(f, in, !*tef_sep);

		if (x > 0) {
			n += (unsigned long)x;
			tef_sep = ",";
		} else if (x < 0) {
			failed = 1;	/* said why */
		}
	}
	n += tef_thread_names(f, &names);
	free(names.v);
	fprintf(f, "\n]");
	if (src.pf)
		cli_chrome_frames(f);
	fprintf(f, "}\n");
	cut = uevent_perf_file__offset(src.pf);
	src_close(&src);
	if (open.unmatched)
		fprintf(stderr, "%s export: %s: %lu range ends without an open begin left out\n",
			cli_prog, in, open.unmatched);
	open_ranges_free(&open);
	if (ret == -ENOMEM) {
		fprintf(stderr, "%s export: %s\n", cli_prog, strerror(-ret));
		failed = 1;
	} else if (ret < 0 && ret != -ENODATA) {
		fprintf(stderr, "%s export: %s: corrupt record at offset %" PRIu64 ": %s", cli_prog,
			in, cut, strerror(-ret));
		if (strcmp(in, "-"))	/* cut there, the records before it read as a cut file */
			fprintf(stderr, " (what comes before it: head -c %" PRIu64 " %s > CUT, then "
				"export CUT)", cut, in);
		fputc('\n', stderr);
		failed = 1;
	}
	/* a corrupt record found halfway: what was at OUT stays, not half a trace */
	if (cli_close_output_file(&o, !failed) != 0)
		return 1;
	if (ret == -ENODATA)	/* cut short: the events before the cut are written */
		fprintf(stderr, "%s export: %s: warning: truncated at offset %" PRIu64 "\n", cli_prog,
			in, cut);
	fprintf(stderr, "%lu events written to %s\n", n, out);
	return 0;
}

/* `uevent export --help` */
const char cli_export_usage[] =
	"  export --chrome OUT FILE       write FILE as Trace Event Format JSON (Perfetto,\n"
	"                                 chrome://tracing): marks, ranges, counters,\n"
	"                                 thread names (from COMM records), and of a\n"
	"                                 perf.data the CPU samples with their stacks\n"
	"                                 (and trace_id, span_id: their OpenTelemetry span;\n"
	"                                 each span a slice on a track \"spans TID\")\n"
	"  export --folded OUT FILE       FILE's samples as folded stacks (flamegraph.pl):\n"
	"                                 comm;outer;...;leaf COUNT (--ranges: the open\n"
	"                                 uevent ranges as frames after comm)\n"
	"  export --pprof OUT FILE        FILE's samples as pprof's profile.proto, the\n"
	"                                 uevent ranges open as labels (range=NAME), and\n"
	"                                 trace_id, span_id; source lines and mappings:\n"
	"                                 go tool pprof -top -tagfocus=range=parse OUT\n"
	"      --debug-dir DIR            also look in DIR for separate debug files\n"
	"      --no-demangle              C++ and Rust names as the binary has them\n";
