/* emit.c - uevent emit: a mark or a counter sent through a transport, from the shell. */
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

int cli_cmd_emit(int argc, char **argv)
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
			if (cli_parse_u64("emit", "-T/--type", optarg, 0, UINT32_MAX, &type) < 0)
				return 2;
			break;
		case 'c': counter = optarg; break;
		case 'n':
			if (cli_parse_u64("emit", "-n/--count", optarg, 0, INT64_MAX, &count) < 0)
				return 2;
			break;
		case 'h': return cli_usage(stdout, cli_emit_usage);
		default: return 2;
		}
	}
	if (counter) {
		const char *eq = strchr(counter, '=');

		if (!eq || (size_t)(eq - counter) >= sizeof(name)) {
			fprintf(stderr, "%s emit: --counter wants NAME=VALUE\n", cli_prog);
			return 2;
		}
		memcpy(name, counter, (size_t)(eq - counter));
		name[eq - counter] = 0;
		if (cli_parse_i64("emit", "-c/--counter VALUE", eq + 1, &value) < 0)
			return 2;
	}
	if (tname || out) {
		UEVENT_OPTS(o, .path = out);
		int t = UEVENT_TRANSPORT_AUTO;

		if (tname) {
			t = uevent_transport_from_name(tname);
			if (t < 0) {
				fprintf(stderr, "%s emit: unknown transport '%s' (known: prctl, "
					"user_events, usdt, ftrace, file, none, auto)\n", cli_prog, tname);
				return 2;
			}
		} else if (out) {
			t = UEVENT_TRANSPORT_FILE;
		}
		o.transport = t;
		o.flags = tname ? UEVENT_OPEN_IGNORE_ENV : 0;
		if (uevent_open(&o) < 0) {
			fprintf(stderr, "%s emit: cannot open transport: %s\n", cli_prog,
				uevent_reason());
			return 1;
		}
	} else if (uevent_transport() == UEVENT_TRANSPORT_NONE &&
		   getenv("UEVENT_TRANSPORT") && *getenv("UEVENT_TRANSPORT")) {
		fprintf(stderr, "%s emit: transport not usable: %s\n", cli_prog, uevent_reason());
		return 1;
	}
	for (c = optind; c < argc; c++) {
		size_t n = strlen(argv[c]);

		if (len + n + 1 > sizeof(text) - 1) {
			fprintf(stderr, "%s emit: text longer than %d bytes\n", cli_prog,
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
			ret = uevent_counter_set(name, value);
		else if (type == UEVENT_TYPE_TEXT)
			ret = uevent_mark(text);
		else
			ret = uevent_emit((uint32_t)type, text, len);
	}
	if (ret < 0) {
		fprintf(stderr, "%s emit: %s transport: %s\n", cli_prog,
			uevent_transport_name(uevent_transport()), uevent_strerror(ret));
		return 1;
	}
	uevent_stats_get(&st, sizeof(st));
	if (!uevent_enabled())
		fprintf(stderr, "%s emit: nobody listens on the %s transport; nothing sent\n",
			cli_prog, uevent_transport_name(uevent_transport()));
	return 0;
}

/* `uevent emit --help` */
const char cli_emit_usage[] =
	"  emit [OPTIONS] [TEXT...]       send a mark (the words joined by spaces)\n"
	"      -t, --transport NAME       prctl, user_events, usdt, ftrace, file, none, auto\n"
	"      -o, --output FILE          file for the file transport\n"
	"      -T, --type N               payload type (default: text)\n"
	"      -c, --counter NAME=VALUE   emit a counter instead of text\n"
	"      -n, --count N              emit N times (default 1)\n";
