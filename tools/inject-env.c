/* inject-env.c - finds libuevent-nvtx.so / libuevent-itt.so for `uevent record --nvtx/--itt`. */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uevent.h"
#include "cli.h"
#include "inject-env.h"

/*
 * $UEVENT_<WHAT>_LIB, else beside the libuevent.so this CLI runs with (installed: both
 * in $libdir), else in the build tree it came from (libuevent/.libs -> inject/.libs).
 */
static int find(const char *what, const char *file, char *out, size_t cap)
{
	char env[32], dir[PATH_MAX], *slash;
	Dl_info info;

	snprintf(env, sizeof(env), "UEVENT_%s_LIB", what);
	if (getenv(env) && *getenv(env)) {
		snprintf(out, cap, "%s", getenv(env));
		if (access(out, R_OK) == 0)
			return 0;
		fprintf(stderr, "%s record: %s=%s: %s\n", cli_prog, env, out, strerror(errno));
		return -ENOENT;
	}
	if (dladdr((void *)uevent_enabled, &info) && info.dli_fname &&
	    realpath(info.dli_fname, dir) && (slash = strrchr(dir, '/'))) {
		*slash = 0;
		snprintf(out, cap, "%s/%s", dir, file);
		if (access(out, R_OK) == 0)
			return 0;
		snprintf(out, cap, "%s/../../inject/.libs/%s", dir, file);
		if (access(out, R_OK) == 0 && realpath(out, dir)) {
			snprintf(out, cap, "%s", dir);
			return 0;
		}
	}
	fprintf(stderr, "%s record: no %s beside libuevent.so (for NVTX, configure needs the "
		"NVTX headers: --with-nvtx-include=DIR); name it in %s\n", cli_prog, file, env);
	return -ENOENT;
}

/* var names our library; what it named before goes to chain, unless that is set. */
static void name(const char *var, const char *chain, const char *lib)
{
	const char *old = getenv(var);

	if (old && *old && strcmp(old, lib) && !getenv(chain))
		setenv(chain, old, 1);
	setenv(var, lib, 1);
}

int cli_inject_env(unsigned int which)
{
	char lib[PATH_MAX + 64];

	if (which & CLI_INJECT_NVTX) {
		if (find("NVTX", "libuevent-nvtx.so", lib, sizeof(lib)) < 0)
			return -ENOENT;
		name("NVTX_INJECTION64_PATH", "UEVENT_NVTX_CHAIN", lib);
	}
	if (which & CLI_INJECT_ITT) {
		if (find("ITT", "libuevent-itt.so", lib, sizeof(lib)) < 0)
			return -ENOENT;
		name("INTEL_LIBITTNOTIFY64", "UEVENT_ITT_CHAIN", lib);
	}
	return 0;
}
