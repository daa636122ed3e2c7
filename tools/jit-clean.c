/* jit-clean.c - `uevent jit-clean`: remove what JIT profiling leaves behind, the jitdumps,
 * the jitted-PID-N.so perf inject --jit writes beside them, and their copies in perf's
 * build-id cache (~/.debug/<path of the .so>/<build-id>/, ~/.debug/.build-id/xx/...).
 *
 * Other users can write where jitdumps live (JITDUMPDIR=/tmp): every directory is opened
 * once, without following links, and walked and emptied through its fd (openat,
 * fstatat, unlinkat), so swapping a directory for a symlink mid-run, or planting
 * .debug as one, points nothing of ours elsewhere. Only files of ours are removed. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-trust.h"
#include "jit-clean.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

struct clean {
	const char	*prog;
	int		cache_fd;	/* perf's build-id cache, -1 if none */
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

/* The path fd is open on, as the kernel names it: for messages and the cache's layout,
 * never to open or remove anything by. */
static const char *fd_path(int fd, char *buf, size_t cap)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, cap - 1);
	if (n < 0)
		n = snprintf(buf, cap, "(fd %d)", fd) < 0 ? 0 : (ssize_t)strlen(buf);
	buf[n] = 0;
	return buf;
}

/* "jit-PID.dump" -> PID; "jitted-PID-N.so" -> PID; else 0 (a PID past pid_t too). */
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
	if (pid <= 0 || pid > INT_MAX)
		return 0;	/* no pid_t: kill() would take it for 0 or -1, "alive" */
	if (*is_so) {
		if (*end != '-' || end[1] < '0' || end[1] > '9')
			return 0;
		strtol(end + 1, &end, 10);
		return strcmp(end, ".so") ? 0 : pid;
	}
	return strcmp(end, ".dump") ? 0 : pid;
}

/* A stream over the directory open on fd, with a position of its own (a dup() would
 * share fd's, left at the end by the last walk). */
static DIR *dir_stream(int fd)
{
	int d = openat(fd, ".", DIR_FLAGS);
	DIR *s = d < 0 ? NULL : fdopendir(d);

	if (!s && d >= 0)
		close(d);
	return s;
}

/* A directory under at, opened without following a link, if it is ours. */
static int open_own_dir(int at, const char *name)
{
	struct stat st;
	int fd = openat(at, name, DIR_FLAGS);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* Removes at/name and what is below it, through fds only. */
static int rm_tree_at(int at, const char *name, int depth)
{
	struct dirent *de;
	struct stat st;
	int fd = -1, ret = 0;
	DIR *d;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0);
	if (depth > 32 || (fd = openat(at, name, DIR_FLAGS)) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    rm_tree_at(dirfd(d), de->d_name, depth + 1) < 0)
			ret = -1;
	closedir(d);
	return ret < 0 ? ret : unlinkat(at, name, AT_REMOVEDIR);
}

/*
 * The cache entries of one jitted .so: CACHE/<its absolute path>/<build-id>/ (perf's copy
 * and probes) and the CACHE/.build-id/xx/<rest> links that point there. Only those links
 * are removed; what else the cache holds is not looked at. The path is walked from the
 * cache's fd one component at a time, never through a link; emptied directories on it go.
 */
static void clean_cache(struct clean *c, const char *so)
{
	char comp[64][NAME_MAX + 1], target[PATH_MAX], want[PATH_MAX];
	int fds[65], n = 0, i, bid = -1, ok = 1;
	const char *p = so, *e;
	struct dirent *de;
	DIR *d;

	if (c->cache_fd < 0)
		return;
	fds[0] = c->cache_fd;
	for (; *p && ok; p = e) {
		size_t len;

		while (*p == '/')
			p++;
		e = p + strcspn(p, "/");
		len = (size_t)(e - p);
		if (!len)
			continue;
		if (n == 64 || len > NAME_MAX) {
			ok = 0;
			break;
		}
		memcpy(comp[n], p, len);
		comp[n][len] = 0;
		fds[n + 1] = openat(fds[n], comp[n], DIR_FLAGS);
		if (fds[n + 1] < 0)
			ok = 0;
		else
			n++;
	}
	if (!ok || !n || !(d = dir_stream(fds[n]))) {
		for (i = 1; i <= n; i++)
			close(fds[i]);
		return;
	}
	bid = openat(c->cache_fd, ".build-id", DIR_FLAGS);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char xx[3] = { de->d_name[0], de->d_name[1], 0 };
		ssize_t l;
		int xfd;

		if (len < 3 || strspn(de->d_name, "0123456789abcdef") != len)
			continue;
		if (bid < 0 || snprintf(want, sizeof(want), "%s/%s", so, de->d_name) >=
		    (int)sizeof(want) || (xfd = openat(bid, xx, DIR_FLAGS)) < 0)
			continue;
		l = readlinkat(xfd, de->d_name + 2, target, sizeof(target) - 1);
		if (l >= 0)
			target[l] = 0;
		/* perf writes ../../<path>/<build-id>; a link elsewhere is not ours */
		if (l < 0 || l < (ssize_t)strlen(want) || strcmp(target + l - strlen(want), want)) {
			close(xfd);
			continue;
		}
		c->cached++;
		if (!c->dry_run) {
			if (unlinkat(xfd, de->d_name + 2, 0) && errno != ENOENT)
				fail(c, "cannot remove the build-id link of", want);
			else
				unlinkat(bid, xx, AT_REMOVEDIR);	/* if now empty */
		}
		close(xfd);
	}
	closedir(d);
	if (bid >= 0)
		close(bid);
	if (!c->dry_run) {
		if (rm_tree_at(fds[n - 1], comp[n - 1], 0) < 0)
			fail(c, "cannot remove the cache entry of", so);
		for (i = n - 1; i > 0; i--)	/* its parents, while empty */
			if (unlinkat(fds[i - 1], comp[i - 1], AT_REMOVEDIR) < 0)
				break;
	}
	for (i = 1; i <= n; i++)
		close(fds[i]);
}

static int alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Removes the directory fd is open on, if it is empty: through its parent's fd, and only
 * if the name there is still this directory. */
static void rmdir_fd(int fd, const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat a, b;
	int up = openat(fd, "..", DIR_FLAGS);

	if (up < 0)
		return;
	base = base ? base + 1 : path;
	if (fstat(fd, &a) == 0 && fstatat(up, base, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		unlinkat(up, base, AT_REMOVEDIR);
	close(up);
}

/* One jitdump directory (open on fd): its dumps and jitted .so files, and their cache
 * entries. */
static void clean_dir(struct clean *c, int fd)
{
	char real[PATH_MAX], so[PATH_MAX];
	struct dirent *de;
	struct stat st;
	long busy = 0;
	DIR *d;
	unsigned long before_d = c->dumps, before_s = c->sos, before_c = c->cached;

	fd_path(fd, real, sizeof(real));
	if (!(d = dir_stream(fd))) {
		fail(c, "cannot read", real);
		return;
	}
	/* A dump whose process still runs is in use: perf inject has yet to read it. Only a
	 * dump of ours, as the ones removed below: another user's, planted in a directory
	 * they may write, would keep ours for as long as its pid runs (1: for ever). */
	while ((de = readdir(d))) {
		int is_so;
		long pid = jit_file_pid(de->d_name, &is_so);

		if (pid && !is_so && alive(pid) &&
		    !fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
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
		int is_so;

		if (!jit_file_pid(de->d_name, &is_so))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISREG(st.st_mode)) {		/* a symlink or FIFO planted here: left */
			fprintf(stderr, "%s jit-clean: left %s/%s: not a regular file\n", c->prog,
				real, de->d_name);
			continue;
		}
		if (st.st_uid != geteuid()) {
			fprintf(stderr, "%s jit-clean: left %s/%s: user %u's, not ours\n", c->prog,
				real, de->d_name, (unsigned)st.st_uid);
			continue;
		}
		if (is_so) {
			if (snprintf(so, sizeof(so), "%s/%s", real, de->d_name) < (int)sizeof(so))
				clean_cache(c, so);
			c->sos++;
		} else {
			c->dumps++;
		}
		if (!c->dry_run && unlinkat(fd, de->d_name, 0) && errno != ENOENT) {
			fprintf(stderr, "%s jit-clean: cannot remove %s/%s: %s\n", c->prog, real,
				de->d_name, strerror(errno));
			c->failed = 1;
		}
	}
	closedir(d);
	if (c->dumps == before_d && c->sos == before_s)
		return;
	printf("%s %s: %lu jitdump, %lu jitted .so, %lu build-id cache entries\n",
	       c->dry_run ? "would clean" : "cleaned", real, c->dumps - before_d,
	       c->sos - before_s, c->cached - before_c);
	if (!c->dry_run)
		rmdir_fd(fd, real);	/* only if now empty: the user's own files stay */
}

static int has_jit_files(int fd)
{
	struct dirent *de;
	int is_so, found = 0;
	DIR *d = dir_stream(fd);

	if (!d)
		return 0;
	while (!found && (de = readdir(d)))
		found = jit_file_pid(de->d_name, &is_so) != 0;
	closedir(d);
	return found;
}

static void clean_debug_jit(struct clean *c, int fd);

/* The directory open on fd is a jitdump directory, or holds libuevent-jit-XXXXXX ones
 * (~/.debug/jit), or is a $JITDUMPDIR (.debug/jit under it holds them). */
static void clean_tree(struct clean *c, int fd, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	int sub;
	DIR *d;

	if (has_jit_files(fd)) {
		clean_dir(c, fd);
		return;
	}
	if (!(d = dir_stream(fd))) {
		fail(c, "cannot read", fd_path(fd, path, sizeof(path)));
		return;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "libuevent-jit-", 14))
			continue;
		sub = open_own_dir(fd, de->d_name);
		if (sub >= 0) {
			clean_dir(c, sub);
			close(sub);
		} else if (errno == EPERM) {
			fprintf(stderr, "%s jit-clean: left %s/%s: not a directory of ours\n",
				c->prog, fd_path(fd, path, sizeof(path)), de->d_name);
		}
	}
	closedir(d);
	if (!depth)
		clean_debug_jit(c, fd);
}

/* fd's .debug/jit (fd is a JITDUMPDIR or HOME), both directories of ours. */
static void clean_debug_jit(struct clean *c, int fd)
{
	int debug = open_own_dir(fd, ".debug"), jit = debug < 0 ? -1 : open_own_dir(debug, "jit");

	if (jit >= 0) {
		clean_tree(c, jit, 1);
		close(jit);
	}
	if (debug >= 0)
		close(debug);
}

/* A DIR argument, or (only_jit) a JITDUMPDIR or HOME whose .debug/jit is cleaned:
 * opened once, its links followed only if ours or root's. */
static void clean_arg(struct clean *c, const char *path, int must_exist, int only_jit)
{
	char why[PATH_MAX + 64];
	int fd = _uevent_open_dir_trusted(path, why, sizeof(why));

	if (fd < 0) {
		errno = -fd;
		if (!must_exist && errno == ENOENT)
			return;
		if (*why) {
			fprintf(stderr, "%s jit-clean: cannot clean %s: %s\n", c->prog, path, why);
			c->failed = 1;
		} else {
			fail(c, "cannot clean", path);
		}
		return;
	}
	if (only_jit)
		clean_debug_jit(c, fd);
	else
		clean_tree(c, fd, 0);
	close(fd);
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
	struct clean c = { .prog = prog, .cache_fd = -1 };
	char def[PATH_MAX], why[PATH_MAX + 64];
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
	if (!(cache_arg && *cache_arg) && home && *home &&
	    snprintf(def, sizeof(def), "%s/.debug", home) < (int)sizeof(def))
		cache_arg = def;
	if (cache_arg && *cache_arg) {
		c.cache_fd = _uevent_open_dir_trusted(cache_arg, why, sizeof(why));
		if (c.cache_fd < 0 && c.cache_fd != -ENOENT) {
			errno = -c.cache_fd;
			if (*why)
				fprintf(stderr, "%s jit-clean: the build-id cache %s: %s\n", prog,
					cache_arg, why);
			else
				fail(&c, "cannot open the build-id cache", cache_arg);
			return 1;
		}
	}
	if (optind < argc) {
		for (; optind < argc; optind++)
			clean_arg(&c, argv[optind], 1, 0);
	} else {
		const char *base = jd && *jd ? jd : home;

		if (!base || !*base) {
			fprintf(stderr, "%s jit-clean: no DIR given and neither JITDUMPDIR nor HOME set\n",
				prog);
			return 2;
		}
		/* the base is checked whole, .debug/jit below it must be ours */
		clean_arg(&c, base, 0, 1);
	}
	if (c.cache_fd >= 0)
		close(c.cache_fd);
	if (!c.dumps && !c.sos && !c.skipped && !c.failed)
		printf("nothing to clean\n");
	return c.failed ? 1 : 0;
}
