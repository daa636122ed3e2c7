/* probe-lib.c - which libuevent `probe --perf-event` puts its uprobe on, and the
 * running programs that map another copy (whose marks that uprobe never sees). */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uevent.h"
#include "cli.h"

/* A mapped file that is a copy of libuevent by its name: libuevent.so, libuevent.so.N...
 * (a pip-installed package carries its own as uevent/libuevent.so.N). */
static int is_libuevent(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libuevent.so", 12) && (!base[12] || base[12] == '.');
}

/* The next libuevent that /proc/PID/maps names, after skipping `skip` distinct ones
 * (real paths; 0 when there are no more). */
static int mapped_libuevent(const char *pid, int skip, char *out, size_t cap)
{
	char maps[300], line[PATH_MAX + 128], seen[PATH_MAX] = "";
	FILE *f;
	int n = 0;

	snprintf(maps, sizeof(maps), "/proc/%s/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || (!strstr(line, " r-xp ") && !strstr(line, " r--p ")))
			continue;
		path[strcspn(path, "\n")] = 0;
		if (!is_libuevent(path) || !strcmp(path, seen))
			continue;
		snprintf(seen, sizeof(seen), "%s", path);
		if (n++ == skip) {
			fclose(f);
			snprintf(out, cap, "%s", path);
			return 1;
		}
	}
	fclose(f);
	return 0;
}

int cli_perf_event_lib(const char *arg, char *lib, size_t cap)
{
	char real[PATH_MAX], mapped[PATH_MAX];
	Dl_info info;
	int err;

	if (arg && arg[0] && strspn(arg, "0123456789") == strlen(arg)) {
		/* a PID: the libuevent that program maps */
		err = mapped_libuevent(arg, 0, mapped, sizeof(mapped));
		if (err <= 0) {
			fprintf(stderr, "%s probe: process %s %s\n", cli_prog, arg,
				err < 0 ? strerror(-err) : "maps no libuevent.so (a program that "
				"links libuevent.a: give its path as LIB)");
			return err < 0 ? err : -ENOENT;
		}
		arg = mapped;
	} else if (!arg) {
		if (!dladdr((const void *)&uevent_mark, &info) || !info.dli_fname) {
			fprintf(stderr, "%s probe: cannot tell which libuevent this is: give its "
				"path as LIB\n", cli_prog);
			return -ENOENT;
		}
		arg = info.dli_fname;
	}
	snprintf(lib, cap, "%s", realpath(arg, real) ? real : arg);
	return 0;
}

/* Warns of running programs that map a libuevent other than lib: each other copy once,
 * with the first process found mapping it (at most 16 copies). */
void cli_perf_event_others(const char *lib)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char other[PATH_MAX], real[PATH_MAX], comm[64], path[300];
	static char seen[16][PATH_MAX];
	int nseen = 0, more = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int k, i;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		for (k = 0; mapped_libuevent(e->d_name, k, other, sizeof(other)) > 0; k++) {
			FILE *f;

			if (!realpath(other, real))
				snprintf(real, sizeof(real), "%s", other);
			if (!strcmp(real, lib))
				continue;
			for (i = 0; i < nseen && strcmp(seen[i], real); i++)
				;
			if (i < nseen)
				continue;
			if (nseen == 16) {
				more++;
				continue;
			}
			snprintf(seen[nseen++], PATH_MAX, "%s", real);
			comm[0] = 0;
			snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
			if ((f = fopen(path, "re"))) {
				if (fgets(comm, sizeof(comm), f))
					comm[strcspn(comm, "\n")] = 0;
				fclose(f);
			}
			fprintf(stderr, "%s probe: warning: process %s (%s) maps another libuevent, %s: "
				"its marks need `%s probe --perf-event %s`\n", cli_prog, e->d_name,
				comm, real, cli_prog, e->d_name);
		}
	}
	closedir(d);
	if (more)
		fprintf(stderr, "%s probe: warning: and %d more copies\n", cli_prog, more);
}
