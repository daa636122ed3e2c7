/* jit-clean.h - the `uevent jit-clean` command (tools/jit-clean.c) for tools/uevent.c. */
#ifndef UEVENT_TOOLS_JIT_CLEAN_H
#define UEVENT_TOOLS_JIT_CLEAN_H
#include <stdio.h>

#define UEVENT_JIT_CLEAN_USAGE \
	"  jit-clean [OPTIONS] [DIR...]   remove jitdumps, the jitted-PID-N.so perf inject\n" \
	"                                 --jit wrote beside them, and their copies in\n" \
	"                                 perf's build-id cache. DIR: a jitdump directory,\n" \
	"                                 one holding libuevent-jit-*, or a JITDUMPDIR\n" \
	"                                 (default: $JITDUMPDIR/.debug/jit, else\n" \
	"                                 ~/.debug/jit). A directory whose process still\n" \
	"                                 runs is kept; other files in it stay\n" \
	"      -n, --dry-run              say what would go, remove nothing\n" \
	"      -f, --force                also directories of running processes\n" \
	"      -c, --cache-dir DIR        perf's build-id cache (default $PERF_BUILDID_DIR,\n" \
	"                                 else ~/.debug)\n"

void uevent_jit_clean_usage(FILE *f);
int uevent_cmd_jit_clean(const char *prog, int argc, char **argv);
#endif
