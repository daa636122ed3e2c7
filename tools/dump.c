/* dump.c - uevent dump: the records of a capture (a perf.data, pipe mode too, or a
 * file-transport file) as text or JSON. */
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

static void print_payload(const struct uevent_record *r, int json, int bo)
{
	struct uevent_text t;
	struct uevent_counter c;
	struct uevent_range_begin rb;
	struct uevent_range_end re;
	const char *name = uevent_type_name(r->type);
	uint32_t i;

	if (json) {
		printf("\"type\": %u, \"type_name\": ", r->type);
		cli_json_out(name ? name : "user");
	} else {
		printf(" %s", name ? name : "user");
		if (!name)
			printf("(%u)", r->type);
	}
	if (r->type == UEVENT_TYPE_TEXT && !uevent_text_decode(r->data, r->size, bo, &t)) {
		if (json) {
			printf(", \"text\": ");
			cli_json_out(t.text);
		} else {
			printf(" \"%s\"", t.text);
		}
	} else if (r->type == UEVENT_TYPE_COUNTER &&
		   !uevent_counter_decode(r->data, r->size, bo, &c)) {
		if (json) {
			printf(", \"name\": ");
			cli_json_out(c.name);
			printf(", \"value\": %" PRId64, c.value);
		} else {
			printf(" %s=%" PRId64, c.name, c.value);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_BEGIN &&
		   !uevent_range_begin_decode(r->data, r->size, bo, &rb)) {
		if (json) {
			printf(", \"id\": %" PRIu64 ", \"parent\": %" PRIu64 ", \"async\": %s, \"name\": ",
			       rb.id, rb.parent, rb.flags & UEVENT_RANGE_ASYNC ? "true" : "false");
			cli_json_out(rb.name);
		} else {
			printf(" id=%#" PRIx64 " parent=%#" PRIx64 "%s \"%s\"", rb.id, rb.parent,
			       rb.flags & UEVENT_RANGE_ASYNC ? " async" : "", rb.name);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(r->data, r->size, bo, &re)) {
		if (json)
			printf(", \"id\": %" PRIu64, re.id);
		else
			printf(" id=%#" PRIx64, re.id);
	} else {
		const uint8_t *p = r->data;

		printf(json ? ", \"hex\": \"" : " ");
		for (i = 0; i < r->size && i < 64; i++)
			printf("%02x", p[i]);
		if (r->size > 64)
			printf("...");
		if (json)
			putchar('"');
	}
}

/* ---- dump --json: every decoded field, keys named as the C members --------------- */

static void json_bytes(const void *p, uint64_t n)
{
	const uint8_t *b = p;
	uint64_t i;

	putchar('"');
	for (i = 0; b && i < n; i++)
		printf("%02x", b[i]);
	putchar('"');
}

/* n u64s of an encoded array, or n groups of per (as arrays) when grouped. */
static void json_u64s(const void *p, uint64_t n, uint64_t per, int grouped, int bo)
{
	uint64_t i, k;

	putchar('[');
	for (i = 0; p && per && i < n; i++) {
		printf("%s", i ? ", " : "");
		if (grouped)
			putchar('[');
		for (k = 0; k < per; k++)
			printf("%s%" PRIu64, k ? ", " : "", uevent_perf_u64(p, i * per + k, bo));
		if (grouped)
			putchar(']');
	}
	putchar(']');
}

/* the generated uevent-json.h writes its strings with it */
static void json_str(const char *s)
{
	cli_json_out(s);
}

#include "uevent-json.h"

static void json_sample_id(const struct uevent_sample_id *id)
{
	const char *sep = "";

	if (!id->fields)
		return;
	printf(", \"sample_id\": {");
	if (id->fields & UEVENT_ID_TID) {
		printf("\"pid\": %u, \"tid\": %u", id->pid, id->tid);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_TIME) {
		printf("%s\"time\": %" PRIu64, sep, id->time);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_ID) {
		printf("%s\"id\": %" PRIu64, sep, id->id);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_STREAM_ID) {
		printf("%s\"stream_id\": %" PRIu64, sep, id->stream_id);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_CPU) {
		printf("%s\"cpu\": %u", sep, id->cpu);
		sep = ", ";
	}
	if (id->fields & UEVENT_ID_IDENTIFIER)
		printf("%s\"identifier\": %" PRIu64, sep, id->identifier);
	putchar('}');
}

/* The record's header, sample_id and union member, after the summary keys. */
static void json_perf_body(const struct uevent_perf_record *r, int bo)
{
	printf(", \"misc\": %u, \"size\": %u", r->misc, r->size);
	json_sample_id(&r->id);
	json_perf_member(r, bo);
}

/* A sample's thread context as a W3C traceparent: 00-<trace-id>-<parent-id>-<flags>. */
static void print_traceparent(const struct uevent_perf_sample *s, int json)
{
	unsigned int i;

	printf(json ? ", \"traceparent\": \"00-" : " traceparent=00-");
	for (i = 0; i < sizeof(s->context_trace_id); i++)
		printf("%02x", s->context_trace_id[i]);
	putchar('-');
	for (i = 0; i < sizeof(s->context_span_id); i++)
		printf("%02x", s->context_span_id[i]);
	printf("-%02x%s", s->context_flags, json ? "\"" : "");
}

/*
 * event: the name of a sample's or uevent's event (NULL: none known); the line says a
 * sample's as perf script does, the JSON both as "event" and "event_index" (-1: its id
 * maps to no event).
 * fields: a tracepoint sample's fields by name (NULL: none), "a=1 b=x" or a JSON object.
 */
static uint64_t dump_time_base;	/* dump --relative: the first record's time */
static const char *dump_sym;		/* dump: the sample's ip named, or NULL */

static void print_perf_record(const struct uevent_perf_record *r, int json, int bo,
			      const char *event, const char *fields)
{
	const char *name = uevent_perf_record_name(r->type);
	static const char *const tnames[] = { "auto", "prctl", "user_events", "usdt", "ftrace",
					      "file", "none" };

	if (json) {
		printf("{\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"cpu\": %u, \"record\": ",
		       r->id.time, r->id.pid, r->id.tid, r->id.cpu);
		cli_json_out(name ? name : "unknown");
		printf(", \"record_type\": %u", r->type);
	} else {
		uint64_t t = r->id.time - (r->id.time >= dump_time_base ? dump_time_base : r->id.time);

		printf("%" PRIu64 ".%09" PRIu64 " %u/%u %s", t / 1000000000u, t % 1000000000u,
		       r->id.pid, r->id.tid, name ? name : "unknown");
		if (!name)
			printf("(%u)", r->type);
	}
	switch (r->type) {
	case PERF_RECORD_UEVENT:
		if (json) {
			printf(", \"transport\": ");
			cli_json_out(r->transport < 7 ? tnames[r->transport] : "?");
			printf(", \"event\": ");
			if (event)
				cli_json_out(event);
			else
				printf("null");
			printf(", \"event_index\": %d, ", r->u.uevent.event_index);
		}
		print_payload(&r->u.uevent, json, bo);
		break;
	case PERF_RECORD_SAMPLE:
		if (json) {
			printf(", \"event\": ");
			if (event)
				cli_json_out(event);
			else
				printf("null");
			printf(", \"event_index\": %d", r->u.sample.event_index);
		} else {
			printf(" %s:", event && *event ? event : "?");
		}
		printf(json ? ", \"ip\": %" PRIu64 ", \"period\": %" PRIu64 : " ip=%#" PRIx64 " period=%" PRIu64,
		       r->u.sample.ip, r->u.sample.period);
		if (dump_sym && !json)
			printf(" %s", dump_sym);
		if (r->u.sample.tls_user_size)
			printf(json ? ", \"tls_bytes\": %" PRIu64 : " tls=%" PRIu64 "B",
			       r->u.sample.tls_user_dyn_size);
		if (r->u.sample.context_err == 0)
			print_traceparent(&r->u.sample, json);
		if (fields)
			printf(json ? ", \"fields\": %s" : " %s", fields);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (json) {
			printf(", \"addr\": %" PRIu64 ", \"len\": %" PRIu64 ", \"filename\": ",
			       r->u.mmap.addr, r->u.mmap.len);
			cli_json_out(r->u.mmap.filename);
		} else {
			printf(" %#" PRIx64 "+%#" PRIx64 " %s", r->u.mmap.addr, r->u.mmap.len,
			       r->u.mmap.filename);
		}
		break;
	case PERF_RECORD_COMM:
		if (!json)		/* JSON: in the "comm" member */
			printf(" %s", r->u.comm.comm);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		printf(json ? ", \"task_pid\": %u, \"ppid\": %u" : " pid=%u ppid=%u",
		       r->u.task.pid, r->u.task.ppid);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!json)		/* JSON: in the "lost" member */
			printf(" lost=%" PRIu64, r->u.lost.lost);
		break;
	case PERF_RECORD_KSYMBOL:
		if (json) {
			printf(", \"addr\": %" PRIu64 ", \"name\": ", r->u.ksymbol.addr);
			cli_json_out(r->u.ksymbol.name);
		} else {
			printf(" %#" PRIx64 " %s", r->u.ksymbol.addr, r->u.ksymbol.name);
		}
		break;
	case PERF_RECORD_BPF_EVENT:
		printf(json ? ", \"bpf_type\": %u, \"bpf_id\": %u" : " type=%u id=%u",
		       r->u.bpf_event.type, r->u.bpf_event.id);
		break;
	}
	if (json)
		json_perf_body(r, bo);
	printf(json ? "}\n" : "\n");
}

/* A tracepoint sample's fields by name (libtraceevent), or NULL: in *buf, grown. */
static const char *raw_fields(struct uevent_perf_file *f, const struct uevent_perf_record *r,
			      int json, char **buf, size_t *cap)
{
	int n = uevent_perf_file__raw_fields(f, r, json ? UEVENT_FIELDS_JSON : 0, *buf, *cap);

	if (n >= 0 && (size_t)n >= *cap) {
		char *p = realloc(*buf, (size_t)n + 1);

		if (!p)
			return NULL;
		*buf = p;
		*cap = (size_t)n + 1;
		n = uevent_perf_file__raw_fields(f, r, json ? UEVENT_FIELDS_JSON : 0, *buf, *cap);
	}
	return n > 0 && (size_t)n < *cap ? *buf : NULL;
}

struct dump_opts {
	int			json, all, relative, symbols;
	struct cli_filter	filt;
};

/* The records a reader of a uevent record file wants by default: the marks, the samples
 * and what was lost; the side-band (COMM, MMAP, FORK, ...) is for naming (dump -a). */
static int dump_shown(const struct uevent_perf_record *r)
{
	return r->type == PERF_RECORD_UEVENT || r->type == PERF_RECORD_SAMPLE ||
	       r->type == PERF_RECORD_LOST || r->type == PERF_RECORD_LOST_SAMPLES;
}

/* " sym+0xoff (dso)" for a sample's ip, or NULL */
static const char *dump_name(struct uevent_symbolizer *sym, const struct uevent_perf_record *r,
			     char *buf, size_t n)
{
	struct uevent_symbol s = { .sz = sizeof(s) };
	int ret;

	if (!sym)
		return NULL;
	ret = uevent_symbolizer__lookup(sym, r->u.sample.pid, r->u.sample.ip, r->u.sample.time, &s);
	if (ret == 0) {
		/* demangled by the symbolizer, raw with --no-demangle */
		snprintf(buf, n, "%s+%#" PRIx64 " (%s)", s.name, s.offset, s.dso ? s.dso : "?");
	}
	else if (s.dso)
		snprintf(buf, n, "[unknown] (%s+%#" PRIx64 ")", s.dso, s.offset);
	else
		return NULL;
	return buf;
}

static int dump_perf(const char *path, const struct dump_opts *o)
{
	UEVENT_SYMBOLIZER_OPTS(so, .flags = UEVENT_SYMBOLIZER_NO_LINES);
	char *fields = NULL;
	size_t fields_cap = 0;
	struct uevent_perf_file *f = uevent_perf_file__open(path);
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_symbolizer *sym = NULL;
	unsigned long n = 0, nu = 0, hidden = 0;
	uint64_t lost = 0;
	int ret, i, json = o->json, first = 1;
	char name[512];

	if (!f) {
		fprintf(stderr, "%s dump: %s\n", cli_prog,
			cli_open_error(path, errno, cli_is_perf_data(path)));
		return 1;
	}
	so.byte_order = uevent_perf_file__byte_order(f);
	so.flags |= cli_no_demangle ? UEVENT_SYMBOLIZER_NO_DEMANGLE : 0;
	if (o->symbols && !json)
		sym = uevent_symbolizer__new(&so);	/* none: the lines go unnamed */
	if (!json)
		for (i = 0; i < uevent_perf_file__nr_events(f); i++)
			printf("# event %d: %s\n", i, uevent_perf_file__event_name(f, i));
	while ((ret = uevent_perf_file__next(f, &r)) != 0) {
		const char *comm;

		if (ret == -EPROTO)
			continue;
		if (ret == -ENODATA) {	/* a recording cut short: what is there counts */
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: warning: truncated at offset %" PRIu64
				", %lu records read\n", cli_prog, path, uevent_perf_file__offset(f), n);
			break;
		}
		if (ret < 0) {
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				cli_prog, path, uevent_perf_file__offset(f), strerror(-ret));
			uevent_perf_file__close(f);
			uevent_symbolizer__free(sym);
			free(fields);
			return 1;
		}
		if (r.type >= 64 && !json)
			continue;	/* perf's own bookkeeping (FINISHED_ROUND, ...) */
		if (sym)
			uevent_symbolizer__feed(sym, &r);	/* -EINVAL: a bad JIT uevent, kept */
		if (first && o->relative)
			dump_time_base = r.id.time;
		first = 0;
		if (!json && !o->all && !dump_shown(&r)) {
			hidden++;
			continue;
		}
		comm = sym ? uevent_symbolizer__comm(sym, r.id.tid, r.id.time) : NULL;
		if (!cli_filter_match(&o->filt, r.id.pid, r.id.tid, comm ? comm : "",
				      r.id.time - (r.id.time >= dump_time_base ? dump_time_base : 0)))
			continue;
		n++;
		nu += r.type == PERF_RECORD_UEVENT;
		if (r.type == PERF_RECORD_LOST || r.type == PERF_RECORD_LOST_SAMPLES)
			lost += r.u.lost.lost;
		dump_sym = r.type == PERF_RECORD_SAMPLE ? dump_name(sym, &r, name, sizeof(name)) : NULL;
		print_perf_record(&r, json, uevent_perf_file__byte_order(f),
				  r.body == UEVENT_BODY_SAMPLE ?
				  uevent_perf_file__event_name(f, r.u.sample.event_index) :
				  r.body == UEVENT_BODY_UEVENT ?
				  uevent_perf_file__event_name(f, r.u.uevent.event_index) : NULL,
				  raw_fields(f, &r, json, &fields, &fields_cap));
	}
	uevent_perf_file__close(f);
	uevent_symbolizer__free(sym);
	free(fields);
	if (!json) {
		fflush(stdout);	/* the records before it, in order when both go to one file */
		fprintf(stderr, "%lu records, %lu uevents, %" PRIu64 " lost\n", n, nu, lost);
		if (hidden)
			fprintf(stderr, "(and %lu side-band records, COMM, MMAP, FORK...: "
				"dump -a shows them)\n", hidden);
	}
	return 0;
}

int cli_cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "relative", no_argument, NULL, 'r' },
		{ "no-symbols", no_argument, NULL, 'S' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		CLI_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct dump_opts o = { .symbols = 1 };
	const char *path = NULL;
	int c, ret;

	cli_filter_init(&o.filt);
	optind = 1;
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		switch (cli_filter_opt(&o.filt, "dump", c, optarg)) {
		case 1: continue;
		case -1: return 2;
		}
		switch (c) {
		case 'j': o.json = 1; break;
		case 'a': o.all = 1; break;
		case 'r': o.relative = 1; break;
		case 'S': o.symbols = 0; break;
		case 'M': cli_no_demangle = 1; break;
		case 'h': return cli_usage(stdout, cli_dump_usage);
		default: return 2;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (!path || optind < argc) {
		fprintf(stderr, "%s dump: %s\n", cli_prog, path ? "one file at a time" : "which file?");
		return 2;
	}
	if (!strcmp(path, "-") && (ret = cli_stdin_rewindable()) < 0) {
		fprintf(stderr, "%s dump: standard input: %s\n", cli_prog, strerror(-ret));
		return 1;
	}
	return dump_perf(path, &o);
}

/* `uevent dump --help` */
const char cli_dump_usage[] =
	"  dump [OPTIONS] FILE            print the records of a capture: a file-transport\n"
	"                                 file, or a perf.data (`perf record`, pipe mode too);\n"
	"                                 - reads standard input. One cut short (a killed\n"
	"                                 writer) gives its whole records and a warning\n"
	"          --json                 one JSON object per record, every record\n"
	"      -a, --all                  also the side-band records (COMM, MMAP, FORK...)\n"
	"          --relative             times (and --time) from the first record\n"
	"          --no-symbols           samples' ip not named (default: sym+off (dso))\n"
	"          --no-demangle          C++ and Rust names as the binary has them\n"
	CLI_FILTER_USAGE;
