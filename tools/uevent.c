/* uevent.c - the libuevent command line: probe the system, emit marks, dump captures. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uevent.h"

static const char *prog = "uevent";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s COMMAND [OPTIONS]\n"
		"\n"
		"Commands:\n"
		"  probe [--json]                 what this kernel and machine support, probed live\n"
		"  emit [OPTIONS] [TEXT...]       send a mark (the words joined by spaces)\n"
		"      -t, --transport NAME       prctl, user_events, usdt, ftrace, file, none, auto\n"
		"      -o, --output FILE          file for the file transport\n"
		"      -T, --type N               payload type (default: text)\n"
		"      -c, --counter NAME=VALUE   emit a counter instead of text\n"
		"      -n, --count N              emit N times (default 1)\n"
		"  dump [--json] FILE             print the records of a file-transport capture\n"
		"  help, --help                   this text\n"
		"  version, --version             library version\n"
		"\n"
		"Environment: UEVENT_TRANSPORT (transport name or comma list), UEVENT_FILE.\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n",
		prog);
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

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static int cmd_probe(int argc, char **argv)
{
	int json = 0, f, paranoid;
	struct uevent_feature_info info;

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
	char text[UEVENT_MAX_PAYLOAD + 1];
	long type = UEVENT_TYPE_TEXT, count = 1, i;
	struct uevent_stats st;
	size_t len = 0;
	int c, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:T:c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': tname = optarg; break;
		case 'o': out = optarg; break;
		case 'T': type = strtol(optarg, NULL, 0); break;
		case 'c': counter = optarg; break;
		case 'n': count = strtol(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (count < 0 || type < 0 || type > UINT32_MAX) {
		fprintf(stderr, "%s emit: bad --count or --type\n", prog);
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
	for (i = optind; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (len + n + 1 > sizeof(text) - 1) {
			fprintf(stderr, "%s emit: text longer than %d bytes\n", prog,
				UEVENT_MAX_PAYLOAD - 1);
			return 1;
		}
		if (len)
			text[len++] = ' ';
		memcpy(text + len, argv[i], n);
		len += n;
	}
	text[len] = 0;

	for (i = 0; i < count && ret >= 0; i++) {
		if (counter) {
			char name[256], *eq = strchr(counter, '=');

			if (!eq || (size_t)(eq - counter) >= sizeof(name)) {
				fprintf(stderr, "%s emit: --counter wants NAME=VALUE\n", prog);
				return 2;
			}
			memcpy(name, counter, (size_t)(eq - counter));
			name[eq - counter] = 0;
			ret = uevent_counter(name, strtoll(eq + 1, NULL, 0));
		} else if (type == UEVENT_TYPE_TEXT) {
			ret = uevent_mark(text);
		} else {
			ret = uevent_emit((uint32_t)type, text, len);
		}
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

static void print_payload(const struct uevent_record *r, int json)
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
	if (r->type == UEVENT_TYPE_TEXT && !uevent_text_decode(r->data, r->size, 0, &t)) {
		if (json) {
			printf(", \"text\": ");
			json_str(t.text);
		} else {
			printf(" \"%s\"", t.text);
		}
	} else if (r->type == UEVENT_TYPE_COUNTER &&
		   !uevent_counter_decode(r->data, r->size, 0, &c)) {
		if (json) {
			printf(", \"name\": ");
			json_str(c.name);
			printf(", \"value\": %" PRId64, c.value);
		} else {
			printf(" %s=%" PRId64, c.name, c.value);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_BEGIN &&
		   !uevent_range_begin_decode(r->data, r->size, 0, &rb)) {
		if (json) {
			printf(", \"id\": %" PRIu64 ", \"parent\": %" PRIu64 ", \"async\": %s, \"name\": ",
			       rb.id, rb.parent, rb.flags & UEVENT_RANGE_ASYNC ? "true" : "false");
			json_str(rb.name);
		} else {
			printf(" id=%#" PRIx64 " parent=%#" PRIx64 "%s \"%s\"", rb.id, rb.parent,
			       rb.flags & UEVENT_RANGE_ASYNC ? " async" : "", rb.name);
		}
	} else if (r->type == UEVENT_TYPE_RANGE_END &&
		   !uevent_range_end_decode(r->data, r->size, 0, &re)) {
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

static int cmd_dump(int argc, char **argv)
{
	struct uevent_file_reader *rd;
	struct uevent_record rec;
	const char *path = NULL;
	int json = 0, i, ret;
	unsigned long n = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s dump: unknown option '%s'\n", prog, argv[i]);
			return 2;
		} else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "%s dump: which file?\n", prog);
		return 2;
	}
	rd = uevent_file_reader__open(path);
	if (!rd) {
		fprintf(stderr, "%s dump: %s: %s\n", prog, path,
			errno == EINVAL ? "not a uevent capture (bad header)" : strerror(errno));
		return 1;
	}
	while ((ret = uevent_file_reader__next(rd, &rec)) != 0) {
		if (ret == -EPROTO) {
			fprintf(stderr, "%s dump: %s: skipping record of unknown format %u\n",
				prog, path, rec.format);
			continue;
		}
		if (ret < 0) {
			fprintf(stderr, "%s dump: %s: corrupt record at offset %" PRIu64 ": %s\n",
				prog, path, uevent_file_reader__offset(rd), strerror(-ret));
			uevent_file_reader__close(rd);
			return 1;
		}
		n++;
		if (json) {
			printf("{\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"size\": %u, ",
			       rec.time, rec.pid, rec.tid, rec.size);
			print_payload(&rec, 1);
			printf("}\n");
		} else {
			printf("%" PRIu64 ".%09" PRIu64 " %u/%u", rec.time / 1000000000u,
			       rec.time % 1000000000u, rec.pid, rec.tid);
			print_payload(&rec, 0);
			putchar('\n');
		}
	}
	uevent_file_reader__close(rd);
	if (!json)
		fprintf(stderr, "%lu records\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("uevent %s (library %s)\n", PACKAGE_VERSION, uevent_version());
		return 0;
	}
	if (!strcmp(cmd, "probe"))
		return cmd_probe(argc - 1, argv + 1);
	if (!strcmp(cmd, "emit"))
		return cmd_emit(argc - 1, argv + 1);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s' (try '%s --help')\n", prog, cmd, prog);
	return 2;
}
