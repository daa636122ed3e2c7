/* jit-clean.h - the `uevent jit-clean` command (tools/jit-clean.c) for tools/uevent.c. */
#ifndef UEVENT_TOOLS_JIT_CLEAN_H
#define UEVENT_TOOLS_JIT_CLEAN_H
#include <stdio.h>

void uevent_jit_clean_usage(FILE *f);
int uevent_cmd_jit_clean(const char *prog, int argc, char **argv);
#endif
