/* jit-clean.c - `uevent jit-clean`: remove what JIT profiling leaves behind, the jitdumps,
 * the jitted-PID-N.so perf inject --jit writes beside them, and their copies in perf's
 * build-id cache (~/.debug/<path of the .so>/<build-id>/, ~/.debug/.build-id/xx/...). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit-clean.h"

struct clean {
	const char	*prog;
	const char	*cache;		/* perf's build-id cache, no trailing slash */
	int		dry_run;
	int		force;
	int		failed;
	unsigned long	dumps, sos, cached, skipped;
};

static void fail(struct clean *c, const char *what, const char *path)
{
	fprintf(stderr, "%s jit-clean: %s %s: %s\n", c->prog, what, path, strerror(errno));
	c->failed = 1;
}

/* buf = a/b; -1 (ENAMETOOLONG) if that does not fit. */
static int join(char *buf, size_t cap, const char *a, const char *b)
{
	int n = snprintf(buf, cap, "%s/%s", a, b);

	if (n < 0 || (size_t)n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* "jit-PID.dump" -> PID; "jitted-PID-N.so" -> PID; else 0. */
static long jit_file_pid(const char *name, int *is_so)
{
	const char *p;
	char *end;
	long pid;

	if (!strncmp(name, "jitted-", 7)) {
		p = name + 7;
		*is_so = 1;
	} else if (!strncmp(name, "jit-", 4)) {
		p = name + 4;
		*is_so = 0;
	} else {
		return 0;
	}
	if (*p < '0' || *p > '9')
		return 0;
	pid = strtol(p, &end, 10);
	if (pid <= 0)
		return 0;
	if (*is_so) {
		if (*end != '-' || end[1] < '0' || end[1] > '9')
			return 0;
		strtol(end + 1, &end, 10);
		return strcmp(end, ".so") ? 0 : pid;
	}
	return strcmp(end, ".dump") ? 0 : pid;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)ftw;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		return -1;
	return 0;
}

/* After path was removed: cut its parents while empty, down to (not including) the
 * first stop bytes of it. */
static void rmdir_up(char *path, size_t stop)
{
	char *s;

	while ((s = strrchr(path, '/')) && (size_t)(s - path) > stop) {
		*s = 0;
		if (rmdir(path))
			break;
	}
}

/*
 * The cache entries of one jitted .so: CACHE/<its absolute path>/<build-id>/ (perf's copy
 * and probes) and the CACHE/.build-id/xx/<rest> links that point there. Only those links
 * are removed; what else the cache holds is not looked at.
 */
static void clean_cache(struct clean *c, const char *so)
{
	char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX], want[PATH_MAX];
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (!c->cache || join(dir, sizeof(dir), c->cache, so + 1))	/* so is absolute */
		return;
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode))
		return;
	d = opendir(dir);
	if (!d) {
		fail(c, "cannot read", dir);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		ssize_t l;

		if (n < 3 || strspn(de->d_name, "0123456789abcdef") != n)
			continue;
		char xx[3] = { de->d_name[0], de->d_name[1], 0 };

		if (join(link, sizeof(link), c->cache, ".build-id") ||
		    join(link + strlen(link), sizeof(link) - strlen(link), "", xx) ||
		    join(link + strlen(link), sizeof(link) - strlen(link), "", de->d_name + 2) ||
		    join(want, sizeof(want), so, de->d_name))
			continue;
		l = readlink(link, target, sizeof(target) - 1);
		if (l < 0)
			continue;
		target[l] = 0;
		/* perf writes ../../<path>/<build-id>; a link elsewhere is not ours */
		if (l < (ssize_t)strlen(want) || strcmp(target + l - strlen(want), want))
			continue;
		c->cached++;
		if (c->dry_run)
			continue;
		if (unlink(link) && errno != ENOENT)
			fail(c, "cannot remove", link);
		else
			rmdir_up(link, strlen(c->cache) + strlen("/.build-id"));
	}
	closedir(d);
	if (c->dry_run)
		return;
	if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS))
		fail(c, "cannot remove", dir);
	else
		rmdir_up(dir, strlen(c->cache));
}

static int alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* One jitdump directory: its dumps and jitted .so files, and their cache entries. */
static void clean_dir(struct clean *c, const char *path)
{
	char real[PATH_MAX], f[PATH_MAX];
	struct dirent *de;
	struct stat st;
	long busy = 0;
	DIR *d;
	unsigned long before_d = c->dumps, before_s = c->sos, before_c = c->cached;

	if (!realpath(path, real)) {
		fail(c, "cannot resolve", path);
		return;
	}
	d = opendir(real);
	if (!d) {
		fail(c, "cannot read", real);
		return;
	}
	/* A dump whose process still runs is in use: perf inject has yet to read it. */
	while ((de = readdir(d))) {
		int so;
		long pid = jit_file_pid(de->d_name, &so);

		if (pid && !so && alive(pid))
			busy = pid;
	}
	if (busy && !c->force) {
		closedir(d);
		printf("kept %s: process %ld is running (--force removes it anyway)\n", real, busy);
		c->skipped++;
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		int so;

		if (!jit_file_pid(de->d_name, &so))
			continue;
		if (join(f, sizeof(f), real, de->d_name)) {
			fail(c, "cannot name a file in", real);
			continue;
		}
		if (lstat(f, &st))
			continue;
		if (!S_ISREG(st.st_mode)) {		/* a symlink or FIFO planted here: left */
			fprintf(stderr, "%s jit-clean: left %s: not a regular file\n", c->prog, f);
			continue;
		}
		if (so) {
			clean_cache(c, f);
			c->sos++;
		} else {
			c->dumps++;
		}
		if (!c->dry_run && unlink(f) && errno != ENOENT)
			fail(c, "cannot remove", f);
	}
	closedir(d);
	if (c->dumps == before_d && c->sos == before_s)
		return;
	printf("%s %s: %lu jitdump, %lu jitted .so, %lu build-id cache entries\n",
	       c->dry_run ? "would clean" : "cleaned", real, c->dumps - before_d,
	       c->sos - before_s, c->cached - before_c);
	if (!c->dry_run)
		rmdir(real);		/* only if now empty: the user's own files stay */
}

static int has_jit_files(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int so, found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d)))
		found = jit_file_pid(de->d_name, &so) != 0;
	closedir(d);
	return found;
}

/* DIR is a jitdump directory, or holds libuevent-jit-XXXXXX ones (~/.debug/jit), or is
 * a $JITDUMPDIR (DIR/.debug/jit holds them). */
static void clean_arg(struct clean *c, const char *path, int must_exist)
{
	struct dirent *de;
	struct stat st;
	char sub[PATH_MAX];
	DIR *d;

	if (stat(path, &st)) {
		if (!must_exist && errno == ENOENT)
			return;
		fail(c, "cannot clean", path);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		fail(c, "cannot clean", path);
		return;
	}
	if (has_jit_files(path)) {
		clean_dir(c, path);
		return;
	}
	d = opendir(path);
	if (!d) {
		fail(c, "cannot read", path);
		return;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "libuevent-jit-", 14))
			continue;
		if (join(sub, sizeof(sub), path, de->d_name))
			continue;
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode))
			clean_dir(c, sub);
	}
	closedir(d);
	if (!join(sub, sizeof(sub), path, ".debug/jit") && !lstat(sub, &st) && S_ISDIR(st.st_mode))
		clean_arg(c, sub, 0);
}

void uevent_jit_clean_usage(FILE *f)
{
	fputs(UEVENT_JIT_CLEAN_USAGE, f);
}

int uevent_cmd_jit_clean(const char *prog, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct clean c = { .prog = prog };
	char cache[PATH_MAX], def[PATH_MAX];
	const char *home = getenv("HOME"), *jd = getenv("JITDUMPDIR");
	const char *cache_arg = getenv("PERF_BUILDID_DIR");
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "nfc:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n': c.dry_run = 1; break;
		case 'f': c.force = 1; break;
		case 'c': cache_arg = optarg; break;
		case 'h': uevent_jit_clean_usage(stdout); return 0;
		default:
			fprintf(stderr, "%s jit-clean: usage: jit-clean [-n] [-f] [-c CACHE] [DIR...]\n",
				prog);
			return 2;
		}
	}
	if (cache_arg && *cache_arg) {
		if (!realpath(cache_arg, cache)) {
			if (errno != ENOENT) {
				fail(&c, "cannot resolve", cache_arg);
				return 1;
			}
		} else {
			c.cache = cache;
		}
	} else if (home && *home && snprintf(def, sizeof(def), "%s/.debug", home) < (int)sizeof(def) &&
		   realpath(def, cache)) {
		c.cache = cache;
	}
	if (optind < argc) {
		for (; optind < argc; optind++)
			clean_arg(&c, argv[optind], 1);
	} else {
		const char *base = jd && *jd ? jd : home;

		if (!base || !*base) {
			fprintf(stderr, "%s jit-clean: no DIR given and neither JITDUMPDIR nor HOME set\n",
				prog);
			return 2;
		}
		snprintf(def, sizeof(def), "%s/.debug/jit", base);
		clean_arg(&c, def, 0);
	}
	if (!c.dumps && !c.sos && !c.skipped && !c.failed)
		printf("nothing to clean\n");
	return c.failed ? 1 : 0;
}
