/* uevent.c - the libuevent command line: probe the system, emit marks, dump captures. */
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
#include "jit-clean.h"
#include "cli.h"
#include "inject-env.h"

static const char *prog = "uevent";

static int command_help(const char *name, FILE *f);

/* All commands' usage: `uevent --help`. */
static void usage(FILE *f)
{
	fprintf(f, "Usage: %s COMMAND [OPTIONS]   (%s COMMAND --help: that command only)\n"
		"\nCommands:\n", prog, prog);
	command_help(NULL, f);
	fprintf(f, "  help [COMMAND], --help         this text, or COMMAND's\n"
		"  version, --version             library version\n"
		"\n"
		"Environment: UEVENT_TRANSPORT (transport name or comma list), UEVENT_FILE.\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

/*
 * Numbers of options, strictly: digits only (0x for hex), nothing before or after, in
 * [min, max]. strtoul alone reads "-1" as its maximum, skips " 5", stops at "5x" and
 * saturates 99999999999999999999; each would run with a number nobody asked for.
 * Says which option and why; the caller exits 2.
 */
static int parse_u64(const char *cmd, const char *opt, const char *arg, uint64_t min,
		     uint64_t max, uint64_t *v)
{
	char *end = NULL;

	errno = 0;
	if (*arg >= '0' && *arg <= '9') {
		*v = strtoull(arg, &end, 0);
		if (!errno && !*end && *v >= min && *v <= max)
			return 0;
	}
	fprintf(stderr, "%s %s: %s wants a number from %" PRIu64 " to %" PRIu64 ", not '%s'\n",
		prog, cmd, opt, min, max, arg);
	return -1;
}

static int parse_i64(const char *cmd, const char *opt, const char *arg, int64_t *v)
{
	const char *d = arg + (*arg == '-');
	char *end = NULL;

	errno = 0;
	if (*d >= '0' && *d <= '9') {
		*v = strtoll(arg, &end, 0);
		if (!errno && !*end)
			return 0;
	}
	fprintf(stderr, "%s %s: %s wants a number from %" PRId64 " to %" PRId64 ", not '%s'\n",
		prog, cmd, opt, INT64_MIN, INT64_MAX, arg);
	return -1;
}

static const char *state_name(int s)
{
	switch (s) {
	case UEVENT_FEAT_PRESENT:	return "yes";
	case UEVENT_FEAT_ABSENT:	return "no";
	case UEVENT_FEAT_DENIED:	return "denied";
	default:			return "unknown";
	}
}

void cli_json_str(FILE *f, const char *s, size_t max)
{
	size_t i;

	fputc('"', f);
	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_str(const char *s)
{
	cli_json_str(stdout, s, SIZE_MAX);
}

static int cmd_probe(int argc, char **argv)
{
	int json = 0, f, paranoid;
	struct uevent_feature_info info;

	if (argc > 1 && !strcmp(argv[1], "--perf-event")) {
		int err = argc > 3 ? -E2BIG : uevent_perf_event_add(argc > 2 ? argv[2] : NULL);

		if (err == -E2BIG) {
			fprintf(stderr, "%s probe: --perf-event takes one LIB\n", prog);
			return 2;
		}
		if (err < 0) {
			fprintf(stderr, "%s probe: cannot add the uprobe event libuevent:emit for %s: %s\n",
				prog, argc > 2 ? argv[2] : "this libuevent",
				err == -ENOENT ? "no libuevent:text probe there" :
				err == -EBUSY ? "the old one is in use by a tracer; stop it first" :
				err == -EEXIST ? uevent_reason() : strerror(-err));
			if (err == -EEXIST)
				fprintf(stderr, "%s probe: if it is no one's, remove it yourself: "
					"echo -:libuevent/emit >> /sys/kernel/tracing/uprobe_events\n",
					prog);
			return 1;
		}
		printf("added libuevent:emit: perf record -e libuevent:emit -- CMD; perf script\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--perf-event-remove")) {
		int err = uevent_perf_event_remove();

		if (err < 0) {
			fprintf(stderr, "%s probe: cannot remove libuevent:emit: %s\n", prog,
				err == -ENOENT ? "there is none" :
				err == -EBUSY || err == -EEXIST ? uevent_reason() : strerror(-err));
			return 1;
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc > 1) {
		fprintf(stderr, "%s probe: unknown option '%s'\n", prog, argv[1]);
		return 2;
	}
	paranoid = uevent_perf_paranoid();
	if (json)
		printf("{\"perf_event_paranoid\": %d, \"transport\": ", paranoid);
	else
		printf("%-18s %-8s %s\n", "feature", "state", "detail");
	for (f = 0; f < UEVENT_FEAT_COUNT; f++) {
		if (uevent_feature_probe(f, &info) < 0)
			continue;
		if (json) {
			if (f == 0) {
				json_str(uevent_transport_name(uevent_transport()));
				printf(", \"features\": {");
			}
			printf("%s", f ? ", " : "");
			json_str(uevent_feature_name(f));
			printf(": {\"state\": ");
			json_str(state_name(info.state));
			printf(", \"errno\": %d, \"detail\": ", info.err);
			json_str(info.detail);
			printf("}");
		} else {
			printf("%-18s %-8s %s\n", uevent_feature_name(f), state_name(info.state),
			       info.detail);
		}
	}
	if (json) {
		printf("}}\n");
	} else {
		printf("%-18s %-8d %s\n", "perf_event_paranoid", paranoid,
		       paranoid < 0 ? strerror(-paranoid) : "/proc/sys/kernel/perf_event_paranoid");
		printf("%-18s %-8s %s\n", "transport", uevent_transport_name(uevent_transport()),
		       uevent_open_reason());
	}
	return 0;
}

static int cmd_emit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 'T' },
		{ "counter", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tname = NULL, *out = NULL, *counter = NULL;
	char text[UEVENT_MAX_PAYLOAD + 1], name[256];
	uint64_t type = UEVENT_TYPE_TEXT, count = 1, i;
	int64_t value = 0;
	struct uevent_stats st;
	size_t len = 0;
	int c, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:T:c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': tname = optarg; break;
		case 'o': out = optarg; break;
		case 'T':
			if (parse_u64("emit", "-T/--type", optarg, 0, UINT32_MAX, &type) < 0)
				return 2;
			break;
		case 'c': counter = optarg; break;
		case 'n':
			if (parse_u64("emit", "-n/--count", optarg, 0, INT64_MAX, &count) < 0)
				return 2;
			break;
		case 'h': return command_help("emit", stdout);
		default: return 2;
		}
	}
	if (counter) {
		const char *eq = strchr(counter, '=');

		if (!eq || (size_t)(eq - counter) >= sizeof(name)) {
			fprintf(stderr, "%s emit: --counter wants NAME=VALUE\n", prog);
			return 2;
		}
		memcpy(name, counter, (size_t)(eq - counter));
		name[eq - counter] = 0;
		if (parse_i64("emit", "-c/--counter VALUE", eq + 1, &value) < 0)
			return 2;
	}
	if (tname || out) {
		UEVENT_OPTS(o, .path = out);
		int t = UEVENT_TRANSPORT_AUTO;

		if (tname) {
			t = uevent_transport_from_name(tname);
			if (t < 0) {
				fprintf(stderr, "%s emit: unknown transport '%s' (known: prctl, "
					"user_events, usdt, ftrace, file, none, auto)\n", prog, tname);
				return 2;
			}
		} else if (out) {
			t = UEVENT_TRANSPORT_FILE;
		}
		o.transport = t;
		o.flags = tname ? UEVENT_OPEN_IGNORE_ENV : 0;
		if (uevent_open(&o) < 0) {
			fprintf(stderr, "%s emit: cannot open transport: %s\n", prog,
				uevent_open_reason());
			return 1;
		}
	} else if (uevent_transport() == UEVENT_TRANSPORT_NONE &&
		   getenv("UEVENT_TRANSPORT") && *getenv("UEVENT_TRANSPORT")) {
		fprintf(stderr, "%s emit: transport not usable: %s\n", prog, uevent_open_reason());
		return 1;
	}
	for (c = optind; c < argc; c++) {
		size_t n = strlen(argv[c]);

		if (len + n + 1 > sizeof(text) - 1) {
			fprintf(stderr, "%s emit: text longer than %d bytes\n", prog,
				UEVENT_MAX_PAYLOAD - 1);
			return 1;
		}
		if (len)
			text[len++] = ' ';
		memcpy(text + len, argv[c], n);
		len += n;
	}
	text[len] = 0;

	for (i = 0; i < count && ret >= 0; i++) {
		if (counter)
			ret = uevent_counter(name, value);
		else if (type == UEVENT_TYPE_TEXT)
			ret = uevent_mark(text);
		else
			ret = uevent_emit((uint32_t)type, text, len);
	}
	if (ret < 0) {
		fprintf(stderr, "%s emit: %s transport: %s\n", prog,
			uevent_transport_name(uevent_transport()), uevent_strerror(ret));
		return 1;
	}
	uevent_stats_get(&st, sizeof(st));
	if (!uevent_enabled())
		fprintf(stderr, "%s emit: nobody listens on the %s transport; nothing sent\n",
			prog, uevent_transport_name(uevent_transport()));
	return 0;
}

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
		json_str(name ? name : "user");
	} else {
		printf(" %s", name ? name : "user");
		if (!name)
			printf("(%u)", r->type);
	}
	if (r->type == UEVENT_TYPE_TEXT && !uevent_text_decode(r->data, r->size, bo, &t)) {
		if (json) {
			printf(", \"text\": ");
			json_str(t.text);
		} else {
			printf(" \"%s\"", t.text);
		}
	} else if (r->type == UEVENT_TYPE_COUNTER &&
		   !uevent_counter_decode(r->data, r->size, bo, &c)) {
		if (json) {
			printf(", \"name\": ");
			json_str(c.name);
			printf(", \"value\": %" PRId64, c.value);
		} else {
			printf(" %s=%" PRId64, c.name, c.value);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_BEGIN &&
		   !uevent_range_begin_decode(r->data, r->size, bo, &rb)) {
		if (json) {
			printf(", \"id\": %" PRIu64 ", \"parent\": %" PRIu64 ", \"async\": %s, \"name\": ",
			       rb.id, rb.parent, rb.flags & UEVENT_RANGE_ASYNC ? "true" : "false");
			json_str(rb.name);
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

/*
 * "-" is standard input. Telling a perf.data from a file-transport capture reads its
 * first bytes, which a pipe gives only once: a pipe is first copied into a memfd put
 * in its place (the readers read a pipe whole anyway), so both readers start at 0.
 */
static int stdin_rewindable(void)
{
	char buf[65536];
	ssize_t n;
	int fd;

	if (lseek(0, 0, SEEK_SET) == 0)
		return 0;
	fd = memfd_create("uevent-stdin", MFD_CLOEXEC);
	if (fd < 0) {
		FILE *t = tmpfile();

		fd = t ? dup(fileno(t)) : -1;
		if (t)
			fclose(t);
		if (fd < 0)
			return -errno;
	}
	errno = 0;
	while ((n = read(0, buf, sizeof(buf))) != 0) {
		ssize_t w, done = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		for (; done < n; done += w) {
			w = write(fd, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				goto fail;
		}
	}
	if (dup2(fd, 0) < 0 || lseek(0, 0, SEEK_SET) != 0)
		goto fail;
	close(fd);
	return 0;
fail:
	n = errno ? errno : EIO;
	close(fd);
	return (int)-n;
}

static int is_perf_data(const char *path)
{
	char magic[8];
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	int yes;

	if (fd < 0)
		return 0;
	yes = pread(fd, magic, 8, 0) == 8 &&
	      (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
	if (fd)
		close(fd);
	return yes;
}

static const char *open_error(const char *path, int err, int perf)
{
	static char buf[512];

	if (err == EINVAL)
		snprintf(buf, sizeof(buf), "%s: %s", path, perf ? "corrupt perf.data (bad header)"
							   : "not a uevent capture (bad header)");
	else
		snprintf(buf, sizeof(buf), "%s: %s", path, strerror(err));
	return buf;
}

/* ---- output files ---------------------------------------------------------------- */

/*
 * Opens PATH to write a capture or an export into, often in a shared directory such as
 * /tmp where another user may have planted it first: a symlink to a victim, a hard
 * link to one, a device node or a FIFO. None of those is followed, opened or removed:
 * a new path is created with O_EXCL (which never follows a symlink); an existing one
 * is used only if it is a regular file of ours with a single link, checked again on the
 * opened fd in case it was swapped meanwhile. The file is not truncated here: the
 * caller does it once it is about to write, so a failure before leaves it as it was.
 * Returns the fd, with *created set when the path is ours to remove on failure; or -1
 * after saying why.
 */
static int open_output(const char *cmd, const char *path, int *created)
{
	const char *why = NULL;
	struct stat st, fst;
	int fd;

	*created = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		*created = 1;
		return fd;
	}
	if (errno != EEXIST)
		goto fail;
	if (lstat(path, &st) < 0)
		goto fail;
	if (S_ISLNK(st.st_mode))
		why = "a symbolic link; not following it";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file; not writing into it";
	else if (st.st_uid != geteuid())
		why = "owned by another user; not overwriting it";
	else if (st.st_nlink > 1)
		why = "has other hard links; not overwriting it";
	if (why) {
		fprintf(stderr, "%s %s: %s: %s (remove it or choose another path)\n", prog, cmd,
			path, why);
		return -1;
	}
	/* O_NONBLOCK: a FIFO swapped in after the lstat() must not hang the open */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    !S_ISREG(fst.st_mode) || fst.st_nlink > 1 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		close(fd);
		fprintf(stderr, "%s %s: %s: changed while being opened; not writing into it\n",
			prog, cmd, path);
		return -1;
	}
	return fd;
fail:
	fprintf(stderr, "%s %s: %s: %s\n", prog, cmd, path, strerror(errno));
	return -1;
}

/* Removes a failed output, only if it is still the file open_output() created. */
static void remove_output(const char *path, int fd, int created)
{
	struct stat st, fst;

	if (created && fstat(fd, &fst) == 0 && lstat(path, &st) == 0 &&
	    st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
		unlink(path);
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
		json_str(name ? name : "unknown");
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
			json_str(r->transport < 7 ? tnames[r->transport] : "?");
			printf(", \"event\": ");
			if (event)
				json_str(event);
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
				json_str(event);
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
			json_str(r->u.mmap.filename);
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
			json_str(r->u.ksymbol.name);
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
		char *d = cli_demangle(s.name);

		snprintf(buf, n, "%s+%#" PRIx64 " (%s)", d ? d : s.name, s.offset, s.dso ? s.dso : "?");
		free(d);
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
		fprintf(stderr, "%s dump: %s\n", prog, open_error(path, errno, 1));
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
				", %lu records read\n", prog, path, uevent_perf_file__offset(f), n);
			break;
		}
		if (ret < 0) {
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				prog, path, uevent_perf_file__offset(f), strerror(-ret));
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

/* Records of either kind of capture, as perf records. */
struct src {
	struct uevent_file_reader *fr;
	struct uevent_perf_file *pf;
	const char *path;
	int bo;			/* byte order of the payloads */
};

static int src_open(struct src *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	if (is_perf_data(path))
		s->pf = uevent_perf_file__open(path);
	else
		s->fr = uevent_file_reader__open(path);
	return s->pf || s->fr ? 0 : -errno;
}

static int src_next(struct src *s, struct uevent_perf_record *r)
{
	int ret;

	s->bo = s->pf ? uevent_perf_file__byte_order(s->pf) : uevent_file_reader__byte_order(s->fr);
	if (s->pf) {
		while ((ret = uevent_perf_file__next(s->pf, r)) == -EPROTO)
			;
		return ret;
	}
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->u.uevent.sz = sizeof(r->u.uevent);
	while ((ret = uevent_file_reader__next(s->fr, &r->u.uevent)) == -EPROTO)
		;
	if (ret > 0) {
		r->type = PERF_RECORD_UEVENT;
		r->body = UEVENT_BODY_UEVENT;
		r->transport = UEVENT_TRANSPORT_FILE;
		r->id = r->u.uevent.id;
	}
	return ret;
}

static void src_close(struct src *s)
{
	uevent_perf_file__close(s->pf);
	uevent_file_reader__close(s->fr);
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

/* Trace Event Format: marks are instant events, ranges B/E (async: b/e), counters C,
 * COMM records name the threads and processes (M). */
static int cmd_export(int argc, char **argv)
{
	const char *out = NULL, *in = NULL, *folded = NULL, *pprof = NULL, *debug_dir = NULL;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	int ranges = 0;
	struct src src;
	struct open_ranges open = { 0 };
	struct tef_names names = { 0 };
	unsigned long n = 0;
	size_t k;
	uint64_t cut;
	int i, ret, created;
	FILE *f;

	/* options anywhere, as getopt's; an option's value is never another option */
	for (i = 1; i < argc; i++) {
		const char **val = !strcmp(argv[i], "--chrome") ? &out :
				   !strcmp(argv[i], "--folded") ? &folded :
				   !strcmp(argv[i], "--pprof") ? &pprof :
				   !strcmp(argv[i], "--debug-dir") ? &debug_dir : NULL;

		if (val) {
			if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1])) {
				fprintf(stderr, "%s export: %s wants a %s, not %s%s%s (a file named so: "
					"./%s)\n", prog, argv[i], val == &debug_dir ? "directory" :
					"file to write", i + 1 < argc ? "'" : "nothing",
					i + 1 < argc ? argv[i + 1] : "", i + 1 < argc ? "'" : "",
					i + 1 < argc ? argv[i + 1] : "NAME");
				return 2;
			}
			*val = argv[++i];
		} else if (!strcmp(argv[i], "--ranges")) {
			ranges = 1;
		} else if (!strcmp(argv[i], "--no-demangle")) {
			cli_no_demangle = 1;
		} else if (!strcmp(argv[i], "--")) {
			for (i++; i < argc; i++) {
				if (in) {
					fprintf(stderr, "%s export: one input file, not '%s' and '%s'\n",
						prog, in, argv[i]);
					return 2;
				}
				in = argv[i];
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s export: unknown option '%s'\n", prog, argv[i]);
			return 2;
		} else if (in) {
			fprintf(stderr, "%s export: one input file, not '%s' and '%s'\n", prog, in,
				argv[i]);
			return 2;
		} else {
			in = argv[i];
		}
	}
	if (folded && !out && !pprof && in)
		return cli_export_folded(folded, in, ranges, debug_dir);
	if (pprof && !out && !folded && in)
		return cli_export_pprof(pprof, in, debug_dir);
	if (!out || !in || folded || pprof) {
		fprintf(stderr, "%s export: usage: export --chrome OUT.json FILE, export "
			"--folded OUT [--ranges] [--debug-dir DIR] FILE, or export --pprof OUT "
			"[--debug-dir DIR] FILE\n", prog);
		return 2;
	}
	if (!strcmp(in, "-") && (ret = stdin_rewindable()) < 0) {
		fprintf(stderr, "%s export: standard input: %s\n", prog, strerror(-ret));
		return 1;
	}
	if (src_open(&src, in) < 0) {
		fprintf(stderr, "%s export: %s\n", prog, open_error(in, errno, is_perf_data(in)));
		return 1;
	}
	f = cli_open_output_file("export", out, &created);
	if (!f) {
		src_close(&src);
		return 1;
	}
	tef_sep = "";
	fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
	while ((ret = src_next(&src, &r)) > 0) {
		const struct uevent_record *u = &r.u.uevent;
		struct uevent_text t;
		struct uevent_counter c;
		struct uevent_range_begin rb;
		struct uevent_range_end re;
		double ts = (double)r.id.time / 1000.0;

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
#define EV_HEAD(ph) fprintf(f, "%s\n{\"ph\": \"%s\", \"ts\": %.3f, \"pid\": %u, \"tid\": %u, " \
			    "\"cat\": \"uevent\"", tef_next(), ph, ts, r.id.pid, r.id.tid)
		if (u->type == UEVENT_TYPE_TEXT && !uevent_text_decode(u->data, u->size, src.bo, &t)) {
			EV_HEAD("i");
			fprintf(f, ", \"s\": \"t\", \"name\": ");
			cli_json_str(f, t.text, 4096);
		} else if (u->type == UEVENT_TYPE_COUNTER &&
			   !uevent_counter_decode(u->data, u->size, src.bo, &c)) {
			EV_HEAD("C");
			fprintf(f, ", \"name\": ");
			cli_json_str(f, c.name, 4096);
			fprintf(f, ", \"args\": {");
			cli_json_str(f, c.name, 4096);
			fprintf(f, ": %" PRId64 "}", c.value);
		} else if (u->type == UEVENT_TYPE_RANGE_BEGIN &&
			   !uevent_range_begin_decode(u->data, u->size, src.bo, &rb)) {
			int async = rb.flags & UEVENT_RANGE_ASYNC;

			if (open_range_push(&open, rb.id, r.id.pid, r.id.tid, async, rb.name) < 0) {
				ret = -ENOMEM;
				break;
			}
			EV_HEAD(async ? "b" : "B");
			fprintf(f, ", \"name\": ");
			cli_json_str(f, rb.name, 4096);
			if (async)
				fprintf(f, ", \"id\": \"0x%" PRIx64 "\"", rb.id);
			fprintf(f, ", \"args\": {\"id\": \"0x%" PRIx64 "\", \"parent\": \"0x%" PRIx64 "\"}",
				rb.id, rb.parent);
		} else if (u->type == UEVENT_TYPE_RANGE_END &&
			   !uevent_range_end_decode(u->data, u->size, src.bo, &re)) {
			n += (unsigned long)tef_range_end(f, &open, r.id.pid, r.id.tid, re.id,
							  re.flags & UEVENT_RANGE_ASYNC, ts);
			continue;
		} else {
			const char *tn = uevent_type_name(u->type);

			EV_HEAD("i");
			fprintf(f, ", \"s\": \"t\", \"name\": ");
			cli_json_str(f, tn ? tn : "user", 64);
			fprintf(f, ", \"args\": {\"type\": %u, \"size\": %u}", u->type, u->size);
		}
#undef EV_HEAD
		fprintf(f, "}");
		n++;
	}
	if (src.pf && ret >= 0) {	/* CPU samples and their stacks */
		long x = cli_chrome_extras(f, in, !*tef_sep);

		if (x > 0) {
			n += (unsigned long)x;
			tef_sep = ",";
		}
	}
	for (k = 0; k < names.n; k++) {
		const struct tef_name *tn = &names.v[k];
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
	free(names.v);
	fprintf(f, "\n]");
	if (src.pf)
		cli_chrome_frames(f);
	fprintf(f, "}\n");
	cut = src.pf ? uevent_perf_file__offset(src.pf) : uevent_file_reader__offset(src.fr);
	src_close(&src);
	if (open.unmatched)
		fprintf(stderr, "%s export: %s: %lu range ends without an open begin left out\n",
			prog, in, open.unmatched);
	open_ranges_free(&open);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "%s export: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	if (ret == -ENODATA)	/* cut short: the events before the cut are written */
		fprintf(stderr, "%s export: %s: warning: truncated at offset %" PRIu64 "\n", prog,
			in, cut);
	else if (ret < 0) {
		fprintf(stderr, "%s export: %s: corrupt record: %s\n", prog, in, strerror(-ret));
		return 1;
	}
	fprintf(stderr, "%lu events written to %s\n", n, out);
	return 0;
}

/* SIGINT, SIGTERM, SIGHUP: the first goes to the command, a second one kills it */
static volatile sig_atomic_t got_signal, nr_signals;

static void on_signal(int sig)
{
	got_signal = sig;
	nr_signals++;
}

/* How long a command may take to exit after a signal (or a failed record) before SIGKILL. */
#define STOP_GRACE_MS 2000

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stops the command's process group with SIG, then SIGKILL after the grace period or
 * another signal. */
static void stop_child(pid_t child, int sig, int *status)
{
	int64_t kill_at = mono_ms() + STOP_GRACE_MS;
	sig_atomic_t n = nr_signals;
	struct timespec tick = { 0, 10000000 };

	kill(-child, sig);
	while (waitpid(child, status, WNOHANG) == 0) {
		if (mono_ms() >= kill_at || nr_signals != n) {
			kill(-child, SIGKILL);
			waitpid(child, status, 0);
			return;
		}
		nanosleep(&tick, NULL);
	}
	kill(-child, SIGKILL);	/* what it left running in its group */
}

/*
 * The command runs in a process group of its own (pgid = its pid), so a signal reaches
 * what it started too. PR_SET_PDEATHSIG kills only the command itself when the recorder
 * dies; for its descendants after a SIGKILL of the recorder, a reaper process waits on a
 * pipe whose only write end is the recorder's: the kernel closes it however the recorder
 * dies, and the reaper then kills the group. Returns the reaper (or -1); *wfd: that end.
 */
static pid_t start_reaper(pid_t pgid, int *wfd)
{
	int p[2], fd;
	pid_t w;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	w = fork();
	if (w == 0) {
		signal(SIGINT, SIG_IGN);	/* the terminal's ^C is the recorder's to pass on */
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		for (fd = 3; fd < 1024; fd++)	/* the output, the command's pipe: not ours */
			if (fd != p[0])
				close(fd);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		kill(-pgid, SIGKILL);
		_exit(0);
	}
	close(p[0]);
	if (w < 0) {
		close(p[1]);
		return -1;
	}
	*wfd = p[1];
	return w;
}

/*
 * The rings could not be mapped: their pages are locked memory, which without
 * CAP_IPC_LOCK is bounded by kernel.perf_event_mlock_kb a user (per CPU's ring) and then
 * by RLIMIT_MEMLOCK. Root without the capability (a container) meets the same limit:
 * "run as root" would not help, the limit or smaller rings would.
 */
static void say_memlock(unsigned int pages)
{
	char kb[32] = "?", lim[32] = "?";
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
	struct rlimit rl;

	if (f && !fgets(kb, sizeof(kb), f))
		snprintf(kb, sizeof(kb), "?");
	if (f)
		fclose(f);
	kb[strcspn(kb, "\n")] = 0;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		snprintf(lim, sizeof(lim), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "%llu KiB",
			 (unsigned long long)rl.rlim_cur / 1024);
	fprintf(stderr, "%s record: cannot lock the ring buffers in memory (%s): %u pages a CPU "
		"is more than this process may lock without CAP_IPC_LOCK (ulimit -l: %s; "
		"kernel.perf_event_mlock_kb: %s KiB)%s. Raise ulimit -l or perf_event_mlock_kb, "
		"or record with smaller rings: -m 16\n", prog, uevent_perf_open_reason(),
		pages ? pages : 256, lim, kb, geteuid() == 0 ? "; root without CAP_IPC_LOCK "
		"meets these limits too" : "");
}

/* The terminal's foreground to group pgid, if the recorder had it (fg): the command in
 * its own group reads the terminal as it would without us; then back. */
static void terminal_to(pid_t pgid, int fg)
{
	sigset_t set, old;

	if (!fg)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);	/* sent to a background group that sets it */
	sigprocmask(SIG_BLOCK, &set, &old);
	tcsetpgrp(0, pgid);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The recorder ends in order: the reaper goes without killing anything. */
static void stop_reaper(pid_t reaper, int wfd)
{
	if (reaper <= 0)
		return;
	kill(reaper, SIGKILL);
	waitpid(reaper, NULL, 0);
	close(wfd);
}

#define MIN_PERIOD_NS 10000u	/* record refuses samples more often without --force */

#define TRACEFS_DIR "/sys/kernel/tracing"

static int tracefs_mounted(void)
{
	struct statfs sfs;

	return (statfs(TRACEFS_DIR, &sfs) == 0 && (unsigned long)sfs.f_type == 0x74726163) ||
	       (statfs("/sys/kernel/debug/tracing", &sfs) == 0 &&
		(unsigned long)sfs.f_type == 0x74726163);
}

/* As perf does: the uprobe events need tracefs; as root, mount it where it goes. */
static void record_mount_tracefs(void)
{
	if (tracefs_mounted() || geteuid() != 0)
		return;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) == 0)
		fprintf(stderr, "%s record: mounted tracefs on " TRACEFS_DIR " (as perf does)\n",
			prog);
	else
		fprintf(stderr, "%s record: tracefs is not mounted and mounting it failed (%s): "
			"mount -t tracefs nodev " TRACEFS_DIR "\n", prog, strerror(errno));
}

/* "250us", "1ms", "2.5ms", "1s", "100000" (ns) as nanoseconds, at least 1; -1 after
 * saying why not. */
static int parse_duration(const char *cmd, const char *opt, const char *arg, uint64_t *v)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 },
	};
	char *end;
	double d;
	size_t i;

	errno = 0;
	d = strtod(arg, &end);
	for (i = 0; end != arg && !errno && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && d * (double)units[i].ns >= 1 &&
		    d * (double)units[i].ns < 9e18) {
			*v = (uint64_t)(d * (double)units[i].ns + 0.5);
			return 0;
		}
	fprintf(stderr, "%s %s: %s wants a time such as 1ms, 250us or 100000 (ns), not '%s'\n",
		prog, cmd, opt, arg);
	return -1;
}

/* Whether execvp() would find name (errno set when not), as the shell looks it up. */
static int command_runnable(const char *name)
{
	const char *path = getenv("PATH"), *p;
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p += strcspn(p, ":") + 1) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, n ? p : ".", "/", name);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!p[n])
			break;
	}
	errno = ENOENT;
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "transport", required_argument, NULL, 't' },
		{ "usdt-bytes", required_argument, NULL, 'n' },
		{ "bpf", no_argument, NULL, 'b' },
		{ "all", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, 0x200 },
		{ "sample-ns", required_argument, NULL, 0x201 },
		{ "force", no_argument, NULL, 0x202 },
		{ "tls", required_argument, NULL, 'T' },
		{ "ring-pages", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "system-wide", no_argument, NULL, 'W' },
		{ "nvtx", no_argument, NULL, 'N' },
		{ "itt", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uevent_session_opts so = { .sz = sizeof(so) };
	const char *out = "uevent.data", *tlist = NULL;
	struct uevent_session_stats st;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	unsigned long nrec = 0, nuev = 0, nsamples = 0, nbpf = 0;
	int c, go[2], status = 0, ret, fd, done = 0, idle = 0, failed = 0, created = 0;
	int sent = 0, killed = 0, started = 0, usdt_only = 0, system_wide = 0;
	unsigned int inject = 0;
	int force = 0;
	int64_t next_look = 0, kill_at = 0;
	pid_t child, parent, reaper = -1;
	int reaper_fd = -1, parent_fg;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:t:n:baF:m:C:h", opts, NULL)) != -1) {
		uint64_t v = 0;

		/* the kernel's limits: a probe fetches at most a payload, sample_period < 2^63 */
		if ((c == 'n' && parse_u64("record", "-n/--usdt-bytes", optarg, 1,
					   UEVENT_MAX_PAYLOAD, &v) < 0) ||
		    (c == 'F' && parse_u64("record", "-F/--freq", optarg, 1, 1000000000u, &v) < 0) ||
		    (c == 0x200 && parse_duration("record", "--period", optarg, &v) < 0) ||
		    (c == 0x201 && parse_u64("record", "--sample-ns", optarg, 1, INT64_MAX, &v) < 0) ||
		    (c == 'T' && parse_u64("record", "--tls", optarg, 8, PERF_SAMPLE_TLS_USER_MAX,
					   &v) < 0) ||
		    (c == 'm' && parse_u64("record", "-m/--ring-pages", optarg, 1, 1u << 31, &v) < 0))
			return 2;
		switch (c) {
		case 'o': out = optarg; break;
		case 't': tlist = optarg; break;
		case 'n': so.usdt_max_payload = (unsigned int)v; break;
		case 'b': so.flags |= UEVENT_SESSION_BPF_EVENTS; break;
		case 'C': so.cpus = optarg; break;
		case 'a': so.flags |= UEVENT_SESSION_ALL_RECORDS; break;
		case 'W': system_wide = 1; break;
		case 'N': inject |= CLI_INJECT_NVTX; break;
		case 'I': inject |= CLI_INJECT_ITT; break;
		case 'F':		/* as perf's -F: samples per second */
		case 0x200:
		case 0x201:
			/* what naming the samples needs: the mappings, names and stacks */
			so.sample_period_ns = c == 'F' ? 1000000000u / v : v;
			so.flags |= UEVENT_SESSION_ALL_RECORDS | UEVENT_SESSION_CALLCHAIN;
			break;
		case 0x202: force = 1; break;
		case 'T':
			if (v % 8) {
				fprintf(stderr, "%s record: --tls must be a multiple of 8\n", prog);
				return 2;
			}
			so.tls_user = (unsigned int)v;
			break;
		case 'm':
			if (v & (v - 1)) {
				fprintf(stderr, "%s record: -m/--ring-pages must be a power of 2\n", prog);
				return 2;
			}
			so.ring_pages = (unsigned int)v;
			break;
		case 'h': return command_help("record", stdout);
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s record: which command? (uevent record -- CMD ARGS...)\n", prog);
		return 2;
	}
	if (so.tls_user && !so.sample_period_ns) {
		fprintf(stderr, "%s record: --tls needs samples (-F HZ or --period TIME)\n", prog);
		return 2;
	}
	if (inject && cli_inject_env(inject) < 0)
		return 1;
	/* a sample every few microseconds is the program's time spent in the kernel */
	if (so.sample_period_ns && so.sample_period_ns < MIN_PERIOD_NS && !force) {
		fprintf(stderr, "%s record: a sample every %" PRIu64 " ns (%" PRIu64 " Hz) is too "
			"often: the samples would cost more than the program; at most -F %u "
			"(--period 10us), or --force\n", prog, (uint64_t)so.sample_period_ns,
			(uint64_t)(1000000000u / so.sample_period_ns), 1000000000u / MIN_PERIOD_NS);
		return 2;
	}
	/* a command that cannot run: said now, before an output is made for it */
	if (!command_runnable(argv[optind])) {
		fprintf(stderr, "%s record: cannot run %s: %s\n", prog, argv[optind],
			strerror(errno));
		return 127;
	}
	/*
	 * A file, not a live view: marks and samples wake us every 4096 (or when a ring
	 * is half full, or at the next look, 100 ms on), as perf record's rings do. A
	 * wake-up each cost more than the record: -F 10000 -- true ran 5 s (0.5 s now),
	 * 200,000 usdt marks took 3.5 s to record (0.7 s now; perf record 1.3 s).
	 */
	so.wakeup_events = 4096;
	if (tlist) {
		char tmp[128], *tok, *save = NULL;

		snprintf(tmp, sizeof(tmp), "%s", tlist);
		for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = uevent_transport_from_name(tok);

			if (t != UEVENT_TRANSPORT_PRCTL && t != UEVENT_TRANSPORT_USDT &&
			    t != UEVENT_TRANSPORT_USER_EVENTS) {
				fprintf(stderr, "%s record: cannot read transport '%s' (readable: "
					"prctl, user_events, usdt)\n", prog, tok);
				return 2;
			}
			so.transports |= 1u << t;
		}
	}
	if (!strcmp(out, "-")) {
		fd = dup(1);
		if (fd < 0) {
			fprintf(stderr, "%s record: stdout: %s\n", prog, strerror(errno));
			return 1;
		}
	} else if ((fd = open_output("record", out, &created)) < 0) {
		return 1;
	}
	parent = getpid();
	parent_fg = isatty(0) && tcgetpgrp(0) == getpgrp();
	child = pipe2(go, O_CLOEXEC) < 0 ? -1 : fork();
	if (child < 0) {
		fprintf(stderr, "%s record: cannot start %s: %s\n", prog, argv[optind],
			strerror(errno));
		remove_output(out, fd, created);
		close(fd);
		return 1;
	}
	if (child == 0) {
		char name[32];
		ssize_t n;

		/* the command dies with the recorder, even a recorder killed with SIGKILL; its
		 * descendants, in its process group, by the reaper */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    setpgid(0, 0) < 0)
			_exit(127);
		terminal_to(getpid(), parent_fg);	/* it may read the terminal */
		/* wait until the session listens; the parent sends the transport to use */
		close(go[1]);
		n = read(go[0], name, sizeof(name) - 1);
		if (n <= 0)
			_exit(127);
		name[n] = 0;
		setenv("UEVENT_TRANSPORT", name, 1);
		/*
		 * The session attaches to each copy of libuevent's probes the command's
		 * processes map, when it sees the mapping: their libuevent waits for that
		 * (up to 5 s: a uprobe takes an RCU grace period to install) before the
		 * program runs.
		 */
		if (!strcmp(name, "usdt"))
			setenv("UEVENT_WAIT_TRACER", "5000", 1);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "%s record: cannot run %s: %s\n", prog, argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	setpgid(child, child);		/* as the child does: whichever runs first */
	reaper = start_reaper(child, &reaper_fd);
	/*
	 * From now on a signal stops the record in order, however long the session takes to
	 * open: the command is stopped, the rest drained, the session's uprobe event removed.
	 * Not with SA_RESTART: a write blocked on a full pipe gives way to it.
	 */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	so.pid = system_wide ? -1 : child;
	record_mount_tracefs();
	s = uevent_session__open(&so);
	/* an existing output is emptied only now: a session that cannot start leaves it be */
	if (!s || (!created && strcmp(out, "-") && ftruncate(fd, 0) < 0) ||
	    uevent_session__record_to(s, fd) < 0) {
		int err = errno;

		kill(-child, SIGKILL);
		waitpid(child, NULL, 0);
		stop_reaper(reaper, reaper_fd);
		uevent_session__close(s);
		if (strcmp(out, "-"))
			remove_output(out, fd, created);
		close(fd);
		if (!s && (err == EACCES || err == EPERM) &&
		    (geteuid() == 0 || strstr(uevent_perf_open_reason(), "mmap")))
			say_memlock(so.ring_pages);
		else if (!s && (err == EACCES || err == EPERM))
			fprintf(stderr, "%s record: not allowed to open perf events or tracefs (%s; "
				"perf_event_paranoid is %d): run as root\n", prog,
				uevent_perf_open_reason(), uevent_perf_paranoid());
		else if (!s)
			fprintf(stderr, "%s record: cannot start a session: %s (%s)%s\n", prog,
				strerror(err), uevent_perf_open_reason(), tracefs_mounted() ? "" :
				"; tracefs is not mounted: as root, mount -t tracefs nodev "
				TRACEFS_DIR);
		else
			fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(err));
		return 1;
	}
	{
		/* the child emits through what we read best; usdt marks fire under any transport */
		unsigned int t = uevent_session__transports(s);
		const char *name = t & (1u << UEVENT_TRANSPORT_PRCTL) ? "prctl" :
				   t & (1u << UEVENT_TRANSPORT_USER_EVENTS) ? "user_events" : "usdt";

		usdt_only = !strcmp(name, "usdt");
		/* signalled already: the command is not started (the child exits 127) */
		started = !got_signal;
		if (started && write(go[1], name, strlen(name)) != (ssize_t)strlen(name))
			kill(child, SIGKILL);
	}
	close(go[1]);
	for (;;) {
		int64_t now;

		ret = uevent_session__next(s, &r, done ? 0 : 100);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(-ret));
			failed = 1;
			break;
		}
		if (ret > 0) {
			/* as dump counts them: the side-band that names samples aside */
			nrec += r.type == PERF_RECORD_UEVENT || r.type == PERF_RECORD_SAMPLE ||
				r.type == PERF_RECORD_LOST || r.type == PERF_RECORD_LOST_SAMPLES;
			nuev += r.type == PERF_RECORD_UEVENT;
			nsamples += r.type == PERF_RECORD_SAMPLE;
			nbpf += r.type == PERF_RECORD_BPF_EVENT;
		}
		/*
		 * Records may never pause (a command marking in a loop): look at the child
		 * and at signals every 100 ms all the same, and pass a signal on at once.
		 */
		now = mono_ms();
		if (ret > 0 && now < next_look && !(got_signal && !sent))
			continue;
		next_look = now + 100;
		if (!done && waitpid(child, &status, WNOHANG) == child) {
			done = 1;
			/* what the command left running may mark on: take no more, drain the rest */
			uevent_session__disable(s);
		}
		if (got_signal && !done) {
			if (!sent) {
				sent = got_signal;
				kill(-child, sent);	/* the command's group */
				kill_at = now + STOP_GRACE_MS;
			} else if (!killed && (nr_signals > 1 || now >= kill_at)) {
				killed = 1;
				kill(-child, SIGKILL);
			}
		}
		if (done && ret == 0 && ++idle > 1)
			break;
	}
	if (!done)
		stop_child(child, SIGTERM, &status);
	else if (sent)
		kill(-child, SIGKILL);	/* signalled: what the command left goes too */
	stop_reaper(reaper, reaper_fd);
	terminal_to(getpgrp(), parent_fg);
	uevent_session__stats(s, &st, sizeof(st));
	uevent_session__close(s);
	if (close(fd) < 0 && !failed) {
		fprintf(stderr, "%s record: %s: %s\n", prog, out, strerror(errno));
		failed = 1;
	}
	fprintf(stderr, "%s record: %lu uevents", prog, nuev);
	if (so.sample_period_ns)
		fprintf(stderr, ", %lu samples", nsamples);
	if (so.flags & UEVENT_SESSION_BPF_EVENTS)
		fprintf(stderr, ", %lu BPF events", nbpf);
	/* the kernel's counts, read after the last records: also losses no LOST record told */
	/* after a write error (a full disk) the file holds only the records before it */
	fprintf(stderr, " %s %s (%lu records; lost %" PRIu64 ", truncated %" PRIu64,
		failed ? "read, not all of them written to" : "written to", out, nrec,
		(st.lost_counted > st.lost ? st.lost_counted : st.lost) + st.lost_samples,
		st.truncated);
	if (st.trimmed)
		fprintf(stderr, ", %" PRIu64 " BPF side-band records the kernel wrote too long, "
			"trimmed", st.trimmed);
	/* as perf record's "Woken up N times": what a record cost the recorder */
	fprintf(stderr, "; woken up %" PRIu64 " times)\n", st.wakeups);
	if (!nuev && !st.usdt_objects && usdt_only)
		fprintf(stderr, "%s record: %s never mapped libuevent's probes (no executable or "
			"library with the libuevent:emit16..emit4096 SDT notes): it cannot have "
			"made marks\n", prog, argv[optind]);
	if (failed)
		return 1;
	if (!started) {
		fprintf(stderr, "%s record: %s not run: interrupted by %s\n", prog, argv[optind],
			strsignal(got_signal));
		return 128 + got_signal;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int cmd_dump(int argc, char **argv)
{
	struct uevent_file_reader *rd;
	struct uevent_record rec = { .sz = sizeof(rec) };
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
	int json, c, ret;
	unsigned long n = 0;

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
		case 'h': return command_help("dump", stdout);
		default: return 2;
		}
	}
	json = o.json;
	if (optind < argc)
		path = argv[optind++];
	if (!path || optind < argc) {
		fprintf(stderr, "%s dump: %s\n", prog, path ? "one file at a time" : "which file?");
		return 2;
	}
	if (!strcmp(path, "-") && (ret = stdin_rewindable()) < 0) {
		fprintf(stderr, "%s dump: standard input: %s\n", prog, strerror(-ret));
		return 1;
	}
	if (is_perf_data(path))
		return dump_perf(path, &o);
	rd = uevent_file_reader__open(path);
	if (!rd) {
		fprintf(stderr, "%s dump: %s: %s\n", prog, path,
			errno == EINVAL ? "not a uevent capture (bad header)" : strerror(errno));
		return 1;
	}
	while ((ret = uevent_file_reader__next(rd, &rec)) != 0) {
		if (ret == -EPROTO) {
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: skipping record of unknown format %u\n",
				prog, path, rec.format);
			continue;
		}
		if (ret == -ENODATA) {
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: warning: truncated at offset %" PRIu64
				", %lu records read\n", prog, path, uevent_file_reader__offset(rd), n);
			break;
		}
		if (ret < 0) {
			fflush(stdout);
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				prog, path, uevent_file_reader__offset(rd), strerror(-ret));
			uevent_file_reader__close(rd);
			return 1;
		}
		if (o.relative && !n && !dump_time_base)
			dump_time_base = rec.id.time ? rec.id.time : 1;
		if (!cli_filter_match(&o.filt, rec.id.pid, rec.id.tid, NULL,
				      rec.id.time - (rec.id.time >= dump_time_base ? dump_time_base : 0)))
			continue;
		n++;
		if (json) {
			printf("{\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"size\": %u, ",
			       rec.id.time, rec.id.pid, rec.id.tid, rec.size);
			print_payload(&rec, 1, uevent_file_reader__byte_order(rd));
			printf("}\n");
		} else {
			uint64_t t = rec.id.time >= dump_time_base ? rec.id.time - dump_time_base : 0;

			printf("%" PRIu64 ".%09" PRIu64 " %u/%u", t / 1000000000u, t % 1000000000u,
			       rec.id.pid, rec.id.tid);
			print_payload(&rec, 0, uevent_file_reader__byte_order(rd));
			putchar('\n');
		}
	}
	uevent_file_reader__close(rd);
	if (!json) {
		fflush(stdout);
		fprintf(stderr, "%lu records\n", n);
	}
	return 0;
}

/* ---- shared with the command files (cli.h) ------------------------------------- */

const char *const cli_prog = "uevent";

int cli_stdin_rewindable(void)
{
	return stdin_rewindable();
}

int cli_is_perf_data(const char *path)
{
	return is_perf_data(path);
}

const char *cli_open_error(const char *path, int err, int perf)
{
	return open_error(path, err, perf);
}

FILE *cli_open_output_file(const char *cmd, const char *path, int *created)
{
	FILE *f;
	int fd;

	if (!strcmp(path, "-"))
		return stdout;
	fd = open_output(cmd, path, created);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f || ftruncate(fd, 0) < 0) {
		fprintf(stderr, "%s %s: %s: %s\n", prog, cmd, path, strerror(errno));
		remove_output(path, fd, *created);
		if (f)
			fclose(f);
		else
			close(fd);
		return NULL;
	}
	return f;
}

/*
 * The commands: name, function, usage. `uevent --help` prints every usage, `uevent CMD
 * --help` (or `uevent help CMD`) its own. A new command is one entry here.
 */
static int cmd_jit_clean(int argc, char **argv)
{
	return uevent_cmd_jit_clean(prog, argc, argv);
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} commands[] = {
	{ "probe", cmd_probe,
	  "  probe [--json]                 what this kernel and machine support, probed live\n"
	  "  probe --perf-event [LIB]       add the uprobe event libuevent:emit (LIB's marks,\n"
	  "                                 default this libuevent's) for plain perf: then\n"
	  "                                 perf record -e libuevent:emit -- CMD; perf script\n"
	  "  probe --perf-event-remove      remove it\n" },
	{ "emit", cmd_emit,
	  "  emit [OPTIONS] [TEXT...]       send a mark (the words joined by spaces)\n"
	  "      -t, --transport NAME       prctl, user_events, usdt, ftrace, file, none, auto\n"
	  "      -o, --output FILE          file for the file transport\n"
	  "      -T, --type N               payload type (default: text)\n"
	  "      -c, --counter NAME=VALUE   emit a counter instead of text\n"
	  "      -n, --count N              emit N times (default 1)\n" },
	{ "dump", cmd_dump,
	  "  dump [OPTIONS] FILE            print the records of a capture: a file-transport\n"
	  "                                 file, or a perf.data (`perf record`, pipe mode too);\n"
	  "                                 - reads standard input. One cut short (a killed\n"
	  "                                 writer) gives its whole records and a warning\n"
	  "          --json                 one JSON object per record, every record\n"
	  "      -a, --all                  also the side-band records (COMM, MMAP, FORK...)\n"
	  "          --relative             times (and --time) from the first record\n"
	  "          --no-symbols           samples' ip not named (default: sym+off (dso))\n"
	  "          --no-demangle          C++ and Rust names as the binary has them\n"
	  CLI_FILTER_USAGE },
	{ "record", cmd_record,
	  "  record [OPTIONS] -- CMD [ARGS...]\n"
	  "                                 run CMD and record its uevents into a perf.data\n"
	  "                                 (pipe mode; perf script reads it too). SIGINT,\n"
	  "                                 SIGTERM, SIGHUP go to CMD (SIGKILL after 2 s or a\n"
	  "                                 second one); the file is completed all the same\n"
	  "      -o, --output FILE          where (default uevent.data; - for stdout)\n"
	  "      -t, --transport LIST       transports to read (prctl,user_events,usdt)\n"
	  "      -n, --usdt-bytes N         payload bytes fetched per usdt mark (default 4096)\n"
	  "      -b, --bpf                  also BPF_EVENT and KSYMBOL records (BPF programs)\n"
	  "      -a, --all                  also COMM, MMAP, FORK, EXIT records\n"
	  "      --nvtx, --itt              CMD's NVTX / ITT calls as uevents (libuevent-nvtx.so\n"
	  "                                 in NVTX_INJECTION64_PATH, libuevent-itt.so in\n"
	  "                                 INTEL_LIBITTNOTIFY64; a library named there before\n"
	  "                                 still gets every call)\n"
	  "      -F, --freq HZ              also cpu-clock samples, HZ a second (as perf's\n"
	  "                                 -F), with their callchains and what names them\n"
	  "                                 (COMM, MMAP2, FORK, EXIT): uevent report, perf\n"
	  "                                 report. At most 100000 without --force\n"
	  "          --period TIME          instead: one sample every TIME (1ms, 250us;\n"
	  "                                 --sample-ns NS the same in nanoseconds)\n"
	  "          --force                allow samples more often than every 10us\n"
	  "          --tls BYTES            with samples: BYTES of the thread's TLS in each\n"
	  "                                 (PERF_SAMPLE_TLS_USER, patched kernel; a\n"
	  "                                 multiple of 8 up to 32768)\n"
	  "      -m, --ring-pages N         data pages per ring buffer (default: from the CPUs and\n"
	  "                                 the locked-memory limit, as perf record)\n"
	  "      -C, --cpus LIST            only these CPUs, as perf -C: 0-3,7\n"
	  "          --system-wide          every process's marks while CMD runs, not only\n"
	  "                                 CMD's (turns libuevent's probes on everywhere)\n" },
	{ "export", cmd_export,
	  "  export --chrome OUT FILE       write FILE as Trace Event Format JSON (Perfetto,\n"
	  "                                 chrome://tracing): marks, ranges, counters,\n"
	  "                                 thread names (from COMM records), and of a\n"
	  "                                 perf.data the CPU samples with their stacks\n"
	  "                                 (and trace_id, span_id: their OpenTelemetry span)\n"
	  "  export --folded OUT FILE       FILE's samples as folded stacks (flamegraph.pl):\n"
	  "                                 comm;outer;...;leaf COUNT (--ranges: the open\n"
	  "                                 uevent ranges as frames after comm)\n"
	  "  export --pprof OUT FILE        FILE's samples as pprof's profile.proto, the\n"
	  "                                 uevent ranges open as labels (range=NAME), and\n"
	  "                                 trace_id, span_id; source lines and mappings:\n"
	  "                                 go tool pprof -top -tagfocus=range=parse OUT\n"
	  "      --debug-dir DIR            also look in DIR for separate debug files\n"
	  "      --no-demangle              C++ and Rust names as the binary has them\n" },
	{ "report", cli_cmd_report,
	  "  report [OPTIONS] FILE          a perf.data's samples by symbol, as perf report\n"
	  "                                 --stdio, and the samples under each uevent range\n"
	  "      -s, --sort KEYS            comm,pid,trace,span,dso,sym (default comm,dso,sym);\n"
	  "                                 trace, span: the sampled thread's OpenTelemetry ids\n"
	  "      -c, --children             with callchains: time in each symbol's callees\n"
	  "      -r, --range NAME           only samples inside uevent range NAME\n"
	  "      -t, --trace ID             only samples in that trace (its first hex digits)\n"
	  "      -d, --debug-dir DIR        also look in DIR for separate debug files\n"
	  CLI_FILTER_USAGE
	  "          --no-demangle          C++ and Rust names as the binary has them (default:\n"
	  "                                 demangled, as perf prints them)\n"
	  "          --no-pager             on a terminal the report goes through $PAGER\n"
	  "                                 (default less; PAGER= or cat: none), as perf's\n" },
	{ "jit-clean", cmd_jit_clean, UEVENT_JIT_CLEAN_USAGE },
};

static const struct command *command_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* name's usage (NULL: every command's) on f; 0, or 2 for a command that is not one. */
static int command_help(const char *name, FILE *f)
{
	const struct command *c = name ? command_find(name) : NULL;
	size_t i;

	if (name && !c) {
		fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", prog, name, prog);
		return 2;
	}
	if (c) {
		fprintf(f, "Usage:\n%s", c->usage);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fputs(commands[i].usage, f);
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *c;
	const char *cmd;
	int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		if (argc > 2)
			return command_help(argv[2], stdout);
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("uevent %s (library %s)\n", PACKAGE_VERSION, uevent_version());
		return 0;
	}
	c = command_find(cmd);
	if (!c) {
		fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", prog, cmd, prog);
		return 2;
	}
	/* CMD --help, before `--` (after it are record's command's arguments) */
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return command_help(cmd, stdout);
	return c->fn(argc - 1, argv + 1);
}
