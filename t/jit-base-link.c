/* jit-base-link.c - uevent_jit__open follows $JITDUMPDIR when it is a symlink of ours or
 * root's, and refuses one another user planted (JITDUMPDIR=/tmp/jd made a link first). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "uevent.h"

static char tmp[] = "/tmp/uevent-jit-base-XXXXXX";

static int empty(const char *dir)
{
	char sub[600];
	struct stat st;

	snprintf(sub, sizeof(sub), "%s/.debug", dir);
	return stat(sub, &st) != 0;
}

int main(void)
{
	char target[600], link[600];
	struct uevent_jit *j;

	if (geteuid() != 0)
		plan_skip_all("needs root to plant a symlink of another user");
	plan(2);
	if (!mkdtemp(tmp))
		return 1;
	tap_cleanup(tmp);
	snprintf(target, sizeof(target), "%s/elsewhere", tmp);
	snprintf(link, sizeof(link), "%s/jd", tmp);
	mkdir(target, 0700);
	if (symlink(target, link) < 0 || lchown(link, 65534, 65534) < 0)
		return 1;
	setenv("JITDUMPDIR", link, 1);
	{
		UEVENT_JIT_OPTS(o, .flags = UEVENT_JIT_NO_PERF_MAP);

		j = uevent_jit__open(&o);
		ok(!j && errno == EPERM && empty(target),
		   "$JITDUMPDIR a symlink of user 65534: EPERM, nothing made where it points (%s)",
		   uevent_reason());
		uevent_jit__close(j);
		if (lchown(link, 0, 0) < 0)
			return 1;
		j = uevent_jit__open(&o);
		ok(j != NULL && !empty(target), "$JITDUMPDIR a symlink of ours: followed");
		uevent_jit__close(j);
	}
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("could not remove %s", tmp);
	}
	return exit_status();
}
