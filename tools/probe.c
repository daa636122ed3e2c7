/* probe.c - uevent probe: what this kernel and machine support, probed live, and the
 * uprobe event for plain perf. */
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

static const char *state_name(int s)
{
	switch (s) {
	case UEVENT_FEAT_PRESENT:	return "yes";
	case UEVENT_FEAT_ABSENT:	return "no";
	case UEVENT_FEAT_DENIED:	return "denied";
	default:			return "unknown";
	}
}

int cli_cmd_probe(int argc, char **argv)
{
	int json = 0, f, paranoid;
	struct uevent_feature_info info;
	char chose[512];

	/* why the library's open on load chose its transport: on this (the loading) thread's
	 * reason channel until the probes below say theirs */
	snprintf(chose, sizeof(chose), "%s", uevent_reason());

	if (argc > 1 && !strcmp(argv[1], "--perf-event")) {
		char lib[4096];
		int err = argc > 3 ? -E2BIG : cli_perf_event_lib(argc > 2 ? argv[2] : NULL,
								  lib, sizeof(lib));

		if (err == -E2BIG) {
			fprintf(stderr, "%s probe: --perf-event takes one LIB or PID\n", cli_prog);
			return 2;
		}
		if (err < 0)
			return 1;	/* cli_perf_event_lib said why */
		err = uevent_perf_event_add(lib);
		if (err < 0) {
			fprintf(stderr, "%s probe: cannot add the uprobe event libuevent:emit for %s: %s\n",
				cli_prog, argc > 2 ? argv[2] : "this libuevent",
				err == -ENOENT ? "no libuevent:text probe there" :
				err == -EBUSY ? "the old one is in use by a tracer; stop it first" :
				err == -EEXIST || err == -EINVAL ? uevent_reason() :
				strerror(-err));
			if (err == -EEXIST)
				fprintf(stderr, "%s probe: if it is no one's, remove it yourself: "
					"echo -:libuevent/emit >> /sys/kernel/tracing/uprobe_events\n",
					cli_prog);
			return 1;
		}
		printf("added libuevent:emit on %s: perf record -e libuevent:emit -- CMD; "
		       "perf script\n", lib);
		cli_perf_event_others(lib);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--perf-event-remove")) {
		int err = uevent_perf_event_remove();

		if (err < 0) {
			fprintf(stderr, "%s probe: cannot remove libuevent:emit: %s\n", cli_prog,
				err == -ENOENT ? "there is none" :
				err == -EBUSY || err == -EEXIST ? uevent_reason() : strerror(-err));
			return 1;
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc > 1) {
		fprintf(stderr, "%s probe: unknown option '%s'\n", cli_prog, argv[1]);
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
				cli_json_out(uevent_transport_name(uevent_transport()));
				printf(", \"features\": {");
			}
			printf("%s", f ? ", " : "");
			cli_json_out(uevent_feature_name(f));
			printf(": {\"state\": ");
			cli_json_out(state_name(info.state));
			printf(", \"errno\": %d, \"detail\": ", info.err);
			cli_json_out(info.detail);
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
		       chose);
	}
	return 0;
}

/* `uevent probe --help` */
const char cli_probe_usage[] =
	"  probe [--json]                 what this kernel and machine support, probed live\n"
	"  probe --perf-event [LIB|PID]   add the uprobe event libuevent:emit (LIB's marks,\n"
	"                                 or those of the libuevent PID maps; default this\n"
	"                                 libuevent's) for plain perf: then\n"
	"                                 perf record -e libuevent:emit -- CMD; perf script\n"
	"  probe --perf-event-remove      remove it\n";
