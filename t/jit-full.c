/* jit-full.c - batched JIT loads from 8 threads while the dump's batches are written
 * after the session's lock (libuevent/jit-dump.c: out_write, window jobs), into files
 * that cannot take them all, and fork while a load's thread still holds a write's lock:
 * - a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored), then a full tmpfs (as root):
 *   every call succeeds or fails with that error (and errno); the dump holds whole
 *   records to its end, in time order, each of a load whose call succeeded, once; the
 *   perf map holds whole lines;
 * - fork while a load's thread, its batch (or perf-map lines) written, has not yet let
 *   go of that write's lock (pthread_mutex_unlock is interposed here to wait there): a
 *   child that inherited it held would wait for it forever at its own first batch.
 * - a call's result is its own merge's batch's: a batch handed off, written by another
 *   thread, then the next one's write fails (pthread_mutex_lock, _trylock and _unlock
 *   interposed to order the threads): the first batch's call succeeds, the second's fails.
 * Built as it is (t/jit-full) and by t/jit-full-win.test with the JIT files and other
 * DUMP_WIN_ALWAYS / DUMP_WIN_MIN: every batch copied into the mapped dump, or one
 * whenever a write is under way. */
#define _GNU_SOURCE 1
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"
#include "jit-internal.h"
#ifdef JIT_STUBS
#include "jit-stubs.h"
#endif
#include "tap.h"
#include "files.h"

#define THREADS		8
#define LOADS		6000
#define CODE		200	/* ~270 bytes a load: 13 MB in all, batches of 256 KiB */
#define FSIZE		((size_t)6 << 20)
#define CHILD_LOADS	4000	/* over 1 MB: a child's own batches are handed off */

static char tmp[256];
static struct uevent_jit *j;
static unsigned char code[THREADS][CODE];
static signed char res[THREADS][LOADS];	/* 1: succeeded, 2: failed with want_err */
static int want_err;

/* What is wrong (a child's exit status: bits). */
#define BAD_DUMP	1	/* not whole records to its end, or out of time order */
#define BAD_LOAD	2	/* the record of a load whose call failed, or one twice */
#define BAD_MAP		4	/* a line not whole */
#define BAD_ERR		8	/* a call failed with another error */
#define BAD_MISSED	16	/* no call failed, or none succeeded: the test missed */
#define BAD_SIZE	32	/* the dump past the limit */
#define BAD_SETUP	64
#define BAD_STICKY	128	/* flush or close did not return a lost batch's error */

/* "tT_I" of a load of ours: its place in res, -1 if not one. */
static int load_of(const char *name, int *t, int *i)
{
	int n = -1;

	return sscanf(name, "t%d_%d%n", t, i, &n) == 2 && n == (int)strlen(name) && *t >= 0 &&
	       *t < THREADS && *i >= 0 && *i < LOADS ? 0 : -1;
}

/* The perf map: whole lines "ADDR SIZE tT_I\n", each of a load of ours. */
static int check_map(const char *map)
{
	size_t len;
	unsigned char *buf = slurp(map, &len), *p, *nl;
	unsigned long long a, s;
	char name[64];
	int t, i, n, bad = !buf;

	for (p = buf; !bad && p < buf + len; p = nl + 1) {
		n = -1;
		if (!(nl = memchr(p, '\n', (size_t)(buf + len - p))) ||
		    sscanf((char *)p, "%llx %llx %63s%n", &a, &s, name, &n) != 3 ||
		    p + n != nl || load_of(name, &t, &i) < 0)
			bad = 1;
	}
	free(buf);
	return bad ? BAD_MAP : 0;
}

/* The dump and map after close, and the calls' results. */
static int check(const char *dump, const char *map, size_t limit)
{
	static unsigned char seen[THREADS][LOADS];
	int bad = 0, t, i, ok = 0, failed = 0, loads = 0;
	unsigned char *buf;
	uint64_t last = 0;
	size_t len, off;
	uint32_t size;

	memset(seen, 0, sizeof(seen));
	buf = slurp(dump, &len);
	if (!buf || len < 40)
		bad |= BAD_DUMP;
	for (off = 40; !bad && off < len; off += size) {
		size = off + 16 <= len ? u32(buf + off + 4) : 0;
		if (size < 16 || size % 8 || size > len - off || u64(buf + off + 8) < last) {
			diag("dump: record at %zu (size %u, type %u) of %zu bytes", off, size,
			     off + 8 <= len ? u32(buf + off) : 0, len);
			bad |= BAD_DUMP;
			break;
		}
		last = u64(buf + off + 8);
		if (u32(buf + off) != 0)	/* not a CODE_LOAD */
			continue;
		loads++;
		if (size < 57 || !memchr(buf + off + 56, 0, size - 56) ||
		    load_of((const char *)buf + off + 56, &t, &i) < 0 || res[t][i] != 1 ||
		    seen[t][i]++) {
			if (!(bad & BAD_LOAD))	/* the first: which, and why */
				diag("dump: load record at %zu: %.40s (%s)", off,
				     size >= 57 ? (const char *)buf + off + 56 : "?",
				     size < 57 || load_of((const char *)buf + off + 56, &t, &i) < 0
					     ? "not one of ours"
				     : res[t][i] != 1 ? "its call failed" : "twice");
			bad |= BAD_LOAD;
		}
	}
	if (len > limit)
		bad |= BAD_SIZE;
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < LOADS; i++) {
			ok += res[t][i] == 1;
			failed += res[t][i] == 2;
			if (res[t][i] != 1 && res[t][i] != 2)
				bad |= BAD_ERR;
		}
	if (!ok || !failed)
		bad |= BAD_MISSED;
	diag("%d calls succeeded, %d failed with %s; %d loads in a %zu-byte dump", ok, failed,
	     strerror(want_err), loads, len);
	free(buf);
	return bad | check_map(map);
}

static void *loader(void *arg)
{
	int t = (int)(intptr_t)arg, i, r;
	char name[32];

	memset(code[t], t + 1, CODE);
	for (i = 0; i < LOADS; i++) {
		snprintf(name, sizeof(name), "t%d_%d", t, i);
		errno = 0;
		/* one address a thread: each load replaces the last in the table */
		r = uevent_jit__code_load(j, name, (uintptr_t)code[t], CODE, NULL);
		res[t][i] = r == 0 ? 1 : r == -want_err && errno == want_err ? 2 : 3;
	}
	return NULL;
}

/* 8 threads' loads into a session in dir (perf map: map) until the files take no more
 * (err); close; the files checked. Returns BAD_ bits. */
static int run_full(const char *dir, const char *map, size_t limit, int err)
{
	pthread_t th[THREADS];
	char dump[600];
	int t, r, bad = 0;

	{
		UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map,
				.flags = UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP |
					 UEVENT_JIT_NO_UEVENT);

		j = uevent_jit__open(&o);
	}
	if (!j)
		return BAD_SETUP;
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	want_err = err;
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, loader, (void *)(intptr_t)t);
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	/* calls failed: batches were lost, with records of calls that succeeded */
	errno = 0;
	if ((r = uevent_jit__flush(j)) != -err || errno != err || uevent_jit__flush(j) != 0)
		bad |= BAD_STICKY;
	errno = 0;
	r = uevent_jit__close(j);
	if (r != 0 && (r != -err || errno != err))
		bad |= BAD_ERR;
	return bad | check(dump, map, limit);
}

static void report(int st, const char *what)
{
	int bits = WIFEXITED(st) ? WEXITSTATUS(st) : 255;

	if (!WIFEXITED(st))
		diag("%s: the child was killed by signal %d", what,
		     WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	ok(bits != 255 && !(bits & BAD_SETUP), "%s: 8 threads load, close", what);
	ok(!(bits & (BAD_ERR | BAD_MISSED)),
	   "%s: every call succeeds or fails with that error and errno, some of each", what);
	ok(!(bits & (BAD_DUMP | BAD_SIZE)),
	   "%s: the dump holds whole records to its end, in time order", what);
	ok(!(bits & BAD_LOAD), "%s: each load in the dump once, and its call succeeded", what);
	ok(!(bits & BAD_MAP), "%s: the perf map holds whole lines only", what);
	ok(!(bits & BAD_STICKY), "%s: the next flush returns the error, the one after 0", what);
}

/* In a child: the dump may grow to FSIZE bytes. */
static void test_fsize(void)
{
	char dir[600], map[600];
	int st;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/fsize", tmp);
	snprintf(map, sizeof(map), "%s/fsize.map", tmp);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct rlimit rl = { FSIZE, FSIZE };

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(BAD_SETUP);
		_exit(run_full(dir, map, FSIZE, EFBIG));
	}
	st = 255 << 8;
	if (pid > 0)
		waitpid(pid, &st, 0);
	report(st, "file size limit");
}

/* As root, in a child: the dump on a 4 MiB tmpfs (the perf map elsewhere). */
static void test_enospc(void)
{
	char mnt[600], dir[700], map[600];
	int st;
	pid_t pid;

	if (geteuid() != 0) {
		skip(6, "needs root to mount a small tmpfs");
		return;
	}
	snprintf(mnt, sizeof(mnt), "%s/small", tmp);
	snprintf(dir, sizeof(dir), "%s/jd", mnt);
	snprintf(map, sizeof(map), "%s/enospc.map", tmp);
	mkdir(mnt, 0700);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		/* in a mount namespace of its own: the mount goes away with it */
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("none", mnt, "tmpfs", 0, "size=4m,mode=0700") < 0)
			_exit(100);
		_exit(run_full(dir, map, SIZE_MAX, ENOSPC));
	}
	st = 255 << 8;
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 100) {
		skip(6, "cannot mount a small tmpfs");
		return;
	}
	report(st, "full tmpfs");
	rmdir(mnt);
}

/* ---- fork while a load's thread holds a write's lock ------------------------------ */

static pthread_mutex_t *hold_mutex;
static pthread_t hold_thread;
static int hold_state;	/* 1: armed, 2: its thread waits in the unlock, 3: forked */
static int (*real_unlock)(pthread_mutex_t *);
static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static void foreign_unlocked(pthread_mutex_t *m);
static void foreign_locked(pthread_mutex_t *m);
static void tb_locked(pthread_mutex_t *m);
static void tb_unlocked(pthread_mutex_t *m);

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	if (!real_lock)
		real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	if ((r = real_lock(m)) == 0)
		foreign_locked(m);
	return r;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int r;

	if (!real_trylock)
		real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	if ((r = real_trylock(m)) == 0)
		foreign_locked(m);
	return r;
}

/* The first time hold_thread lets go of hold_mutex (armed), it waits up to a second
 * for the fork, holding it: the library's own unlocks come here too. */
int pthread_mutex_unlock(pthread_mutex_t *m)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	if (!real_unlock)
		real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	if (m == hold_mutex && __atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) == 1 &&
	    pthread_equal(pthread_self(), hold_thread)) {
		__atomic_store_n(&hold_state, 2, __ATOMIC_RELEASE);
		for (i = 0; i < 1000 && __atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) == 2; i++)
			nanosleep(&ms, NULL);
	}
	i = real_unlock(m);
	foreign_unlocked(m);
	return i;
}

static int hold_done;

/* Loads until the fork (or too many): one of its batches comes to hold_mutex. */
static void *hold_loader(void *arg)
{
	int i, bad = 0;
	char name[32];

	(void)arg;
	hold_thread = pthread_self();
	__atomic_store_n(&hold_state, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 200000 && __atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) != 3; i++) {
		snprintf(name, sizeof(name), "h_%d", i);
		bad += uevent_jit__code_load(j, name, (uintptr_t)code[0], CODE, NULL) != 0;
	}
	__atomic_store_n(&hold_done, 1, __ATOMIC_RELEASE);
	return (void *)(intptr_t)bad;
}

/* A child: loads enough for batches of its own to be handed off (each written under
 * the lock it inherited), closes. Exit 0: all succeeded; killed: it hung. */
static void hold_child(void)
{
	char map[64], name[32];
	int i, bad = 0;

	alarm(10);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	for (i = 0; i < CHILD_LOADS; i++) {
		snprintf(name, sizeof(name), "c_%d", i);
		bad += uevent_jit__code_load(j, name, (uintptr_t)code[1], CODE, NULL) != 0;
	}
	bad += uevent_jit__close(j) != 0;
	unlink(map);
	_exit(bad ? 1 : 0);
}

/* which: the dump's write lock (0) or the perf map's (1). */
static void test_fork_held(int which)
{
	const char *what = which ? "perf-map" : "dump";
	char dir[600], map[600];
	pthread_t th;
	pid_t pid = -1;
	int st = 255 << 8, held;
	void *r;

	if (DUMP_WIN_ALWAYS && !which) {
		skip(2, "every batch copied into the mapped dump: no write to hold");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/hold%d", tmp, which);
	snprintf(map, sizeof(map), "%s/hold%d.map", tmp, which);
	{
		UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map,
				.flags = UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP |
					 UEVENT_JIT_NO_UEVENT);

		j = uevent_jit__open(&o);
	}
	if (!j) {
		ok(0, "open: %s", strerror(errno));
		ok(0, "(not run)");
		return;
	}
	hold_state = hold_done = 0;
	hold_mutex = which ? &j->mlock : &j->wlock;
	pthread_create(&th, NULL, hold_loader, NULL);
	while (!(held = __atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) == 2) &&
	       !__atomic_load_n(&hold_done, __ATOMIC_ACQUIRE))
		sched_yield();
	fflush(stdout);
	if (held && (pid = fork()) == 0)
		hold_child();
	__atomic_store_n(&hold_state, 3, __ATOMIC_RELEASE);
	if (pid > 0)
		waitpid(pid, &st, 0);
	pthread_join(th, &r);
	hold_mutex = NULL;
	ok(held && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "fork while a load's thread holds the %s's write lock: the child's own batches "
	   "are written, it closes (status %#x)", what, st);
	ok(r == NULL && uevent_jit__close(j) == 0, "the parent's loads and close succeed");
}

/* ---- a call's result is its own batch's ---------------------------------------- */

/*
 * Thread T's merge hands batch X off (its load's record in it: handed off at the
 * batch's age, whole) and T stops after the session's lock. E's next merge writes X
 * (a thread with no batch of its own writes one if no write is under way), and the one
 * after hands off Y, E's; then the file takes no more (RLIMIT_FSIZE at Y's offset), T
 * goes on and is let take the write's lock first (E stops after the session's lock
 * until it has). T's call must not fail for Y: its record is in the file, in X.
 */
static pthread_t fx_t, fx_e;
static int fx_state;		/* 1: armed, 2: T stopped, 3: Y's write to fail, 4: T on */
static int fx_go;		/* E tells T to load */
static int fx_res[2][5];	/* T's, E's results */
static int fx_e_i, fx_y = -1;	/* E's load under way; the one that handed Y off */
static __thread uint64_t fx_acq;	/* out_off when this thread took the session's lock */

static int fx_wait(int *v, int want)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 5000 && __atomic_load_n(v, __ATOMIC_ACQUIRE) < want; i++)
		nanosleep(&ms, NULL);
	return __atomic_load_n(v, __ATOMIC_ACQUIRE) >= want;
}

static uint64_t fx_out(void)
{
	return __atomic_load_n(&j->out, __ATOMIC_ACQUIRE) ? j->out_off : UINT64_MAX;
}

static void foreign_locked(pthread_mutex_t *m)
{
	if (j)
		tb_locked(m);
	if (!j || !__atomic_load_n(&fx_state, __ATOMIC_ACQUIRE))
		return;
	if (m == &j->lock)
		fx_acq = fx_out();
	else if (m == &j->wlock && pthread_equal(pthread_self(), fx_t) &&
		 __atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) == 3)
		__atomic_store_n(&fx_state, 4, __ATOMIC_RELEASE);
}

static void foreign_unlocked(pthread_mutex_t *m)
{
	struct timespec ms = { 0, 1000000 };
	struct rlimit rl;
	uint64_t off, x;
	int i;

	if (j)
		tb_unlocked(m);
	if (!j || m != &j->lock || !__atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) ||
	    (off = fx_out()) == UINT64_MAX || off == fx_acq)
		return;	/* this thread's merge handed no batch off */
	if (pthread_equal(pthread_self(), fx_t) &&
	    __atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) == 1) {
		x = off;
		__atomic_store_n(&fx_state, 2, __ATOMIC_RELEASE);
		for (i = 0; i < 5000 && ((off = fx_out()) == UINT64_MAX || off == x); i++)
			nanosleep(&ms, NULL);
		getrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = off;
		setrlimit(RLIMIT_FSIZE, &rl);
		__atomic_store_n(&fx_state, 3, __ATOMIC_RELEASE);
	} else if (pthread_equal(pthread_self(), fx_e)) {
		fx_y = fx_e_i;
		fx_wait(&fx_state, 4);
	}
}

static int fx_load(int who, int i)
{
	unsigned char *c = code[who];
	char name[32];
	int r;

	snprintf(name, sizeof(name), "t%d_%d", who, i);
	if (who)
		fx_e_i = i;
	r = uevent_jit__code_load(j, name, (uintptr_t)c, CODE, NULL);
	res[who][i] = r == 0 ? 1 : r == -EFBIG && errno == EFBIG ? 2 : 3;
	return fx_res[who][i] = r;
}

static void *fx_thread_t(void *arg)
{
	(void)arg;
	fx_load(0, 0);	/* its stage made: the next load's record goes in its merge */
	__atomic_store_n(&fx_go, 1, __ATOMIC_RELEASE);
	fx_wait(&fx_go, 2);
	fx_load(0, 1);
	if (__atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) == 3)	/* it wrote none */
		__atomic_store_n(&fx_state, 4, __ATOMIC_RELEASE);
	return NULL;
}

static void *fx_thread_e(void *arg)
{
	struct timespec age = { 0, 150 * 1000000 };	/* past the batch's 100 ms */

	(void)arg;
	fx_wait(&fx_go, 1);
	fx_load(1, 0);
	nanosleep(&age, NULL);
	__atomic_store_n(&fx_state, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&fx_go, 2, __ATOMIC_RELEASE);
	if (fx_wait(&fx_state, 2)) {
		fx_load(1, 1);
		nanosleep(&age, NULL);
		fx_load(1, 2);	/* writes X (or copies e1, e2 past it: DUMP_WIN_MIN 0) */
		fx_load(1, 3);	/* hands Y off (e1 to e3) */
		if (__atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) < 3) {
			nanosleep(&age, NULL);
			fx_load(1, 4);	/* ... else this one (e3, e4) */
		}
	}
	return NULL;
}

/* After Y's failure (E's loads before it lost, their calls 0): the next flush returns
 * it, the one after 0; a batch lost again, the file limit gone, close returns it. */
static int fx_sticky(void)
{
	struct timespec age = { 0, 150 * 1000000 };
	struct rlimit rl;
	int bad = 0, r;

	errno = 0;
	r = uevent_jit__flush(j);
	diag("flush: %d, errno %d; again: %d", r, errno, uevent_jit__flush(j));
	if (r != -EFBIG || errno != EFBIG || uevent_jit__flush(j) != 0)
		bad |= BAD_STICKY;
	/* the file (now cut back) takes nothing more: a load, then one at the batch's
	 * age, whose merge hands both off, and fails */
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = (rlim_t)lseek(j->dump_fd, 0, SEEK_END);
	setrlimit(RLIMIT_FSIZE, &rl);
	r = uevent_jit__code_load(j, "t0_2", (uintptr_t)code[0], CODE, NULL);
	nanosleep(&age, NULL);
	if (r != 0 || uevent_jit__code_load(j, "t0_3", (uintptr_t)code[0], CODE, NULL) != -EFBIG)
		bad |= BAD_SETUP;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	errno = 0;
	r = uevent_jit__close(j);
	j = NULL;
	diag("close: %d, errno %d", r, errno);
	if (r != -EFBIG || errno != EFBIG)
		bad |= BAD_STICKY;
	return bad;
}

/* A session in dir with the dump batched, no perf map, no markers. */
static struct uevent_jit *open_dump_only(const char *dir)
{
	UEVENT_JIT_OPTS(o, .dir = dir,
			.flags = UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_NO_PERF_MAP |
				 UEVENT_JIT_NO_UEVENT);

	return uevent_jit__open(&o);
}

/* In a child (the file size limit): T's and E's loads; exit status: bits. */
static int run_foreign(const char *dir)
{
	char dump[600];
	unsigned char *buf;
	size_t len, off;
	int bad = 0, t, i;

	if (!(j = open_dump_only(dir)))
		return BAD_SETUP;
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	memset(res, 0, sizeof(res));
	pthread_create(&fx_t, NULL, fx_thread_t, NULL);
	pthread_create(&fx_e, NULL, fx_thread_e, NULL);
	pthread_join(fx_t, NULL);
	pthread_join(fx_e, NULL);
	if (__atomic_load_n(&fx_state, __ATOMIC_ACQUIRE) != 4 || fx_y < 0)
		bad |= BAD_MISSED;
	__atomic_store_n(&fx_state, 0, __ATOMIC_RELEASE);
	diag("T's loads: %d %d; E's: %d %d %d %d %d (Y: E's %d)", fx_res[0][0], fx_res[0][1],
	     fx_res[1][0], fx_res[1][1], fx_res[1][2], fx_res[1][3], fx_res[1][4], fx_y);
	/* every load in the dump: its call succeeded */
	buf = slurp(dump, &len);
	for (off = 40; buf && off + 16 <= len && u32(buf + off + 4) >= 16; off += u32(buf + off + 4))
		if (u32(buf + off) == 0 && load_of((const char *)buf + off + 56, &t, &i) == 0 &&
		    res[t][i] != 1) {
			diag("in the dump: %s, its call failed", (const char *)buf + off + 56);
			bad |= BAD_LOAD;
		}
	free(buf);
	if (fx_res[0][1] != 0 || fx_y < 0 || fx_res[1][fx_y] != -EFBIG)
		bad |= BAD_ERR;
	bad |= fx_sticky();
	return bad;
}

static void test_foreign(void)
{
	char dir[600];
	int st = 255 << 8, bits;
	pid_t pid;

	if (DUMP_WIN_ALWAYS) {
		skip(4, "every batch copied into the mapped dump: no write to fail for another");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/foreign", tmp);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		signal(SIGXFSZ, SIG_IGN);
		_exit(run_foreign(dir));
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	bits = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	ok(bits != 255 && !(bits & (BAD_SETUP | BAD_MISSED)),
	   "a batch handed off, written by another thread, the next one's write fails "
	   "(status %#x)", st);
	ok(!(bits & BAD_LOAD), "each load in the dump: its call succeeded");
	ok(!(bits & BAD_ERR), "the call whose batch was written succeeds, the one whose batch "
	   "failed fails (-EFBIG)");
	ok(!(bits & BAD_STICKY), "the next flush returns the lost batch's error, the one after "
	   "0; close returns it if not flushed");
}

#ifdef JIT_TEST_HOOKS
/* ---- one merge, two batches: where the load's record is ----------------------- */

/*
 * Thread T's merge takes F's big records and T's load's, R, and hands off a batch, X.
 * E (no batch of its own, stopped after its merge until X is out) writes X while the
 * merge goes on. Then:
 * - mode 0: F's records were loaded while T held the session's lock, after R, so R is
 *   in X. X is written; the merge hands off Y, whose write fails (RLIMIT_FSIZE at its
 *   offset). R is in the file: T's call must succeed.
 * - mode 1: F's records were loaded before R, while the test held the session's lock.
 *   X's write fails (the limit at its offset, lifted once it is written), and the
 *   merge's next group, past DUMP_DEFER_MAX, has the batch written, which first cuts
 *   X off. T's call fails (X was its merge's): R must not be put in after the cut.
 * Needs the hook into the handoff (JIT_TEST_HOOKS: t/jit-full-win.test builds
 * t/jit-full.c so).
 */
#define TB_SMALL	(70 * 1024)	/* E's and T's loads: past STAGE_REC_FLUSH */
#define TB_BIG		(400 * 1024)	/* F's first (both, mode 0): X handed off at it */
#define TB_HUGE		(DUMP_DEFER_MAX + 512 * 1024)	/* F's second, mode 1 */
#define TB_GROW		(TB_BIG + TB_HUGE + 4096)	/* F's stage takes both */
static unsigned char tb_code[TB_GROW];
static int tb_mode;
static int tb_state;	/* 1: armed, 2: E stopped, 3: T merging, 4: X out, 5: E on */
static int tb_grown, tb_f, tb_r;	/* F's stage grown; F's loads done; R's turn */
static int tb_handoffs;	/* batches T's merge handed off to out */
static int tb_res[3];	/* T's, E's, F's loads (T's and E's second) */
static pthread_t tb_t, tb_e;

void _uevent_jit_test_handed_off(struct uevent_jit *jj)
{
	struct timespec ms = { 0, 1000000 };
	struct rlimit rl;
	uint64_t x_end = jj->out_off + jj->out_len;
	int i;

	if (__atomic_load_n(&tb_state, __ATOMIC_ACQUIRE) < 3 ||
	    !pthread_equal(pthread_self(), tb_t) || tb_handoffs++)
		return;
	getrlimit(RLIMIT_FSIZE, &rl);
	if (tb_mode) {	/* X's write fails */
		rl.rlim_cur = jj->out_off;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	__atomic_store_n(&tb_state, 4, __ATOMIC_RELEASE);
	for (i = 0; i < 5000 && __atomic_load_n(&jj->out, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
	rl.rlim_cur = tb_mode ? rl.rlim_max : x_end;	/* mode 0: Y's fails */
	setrlimit(RLIMIT_FSIZE, &rl);
}

/* Session lock: T, at its merge's, waits until F has loaded (mode 0). */
static void tb_locked(pthread_mutex_t *m)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	if (m != &j->lock || __atomic_load_n(&tb_state, __ATOMIC_ACQUIRE) != 2 ||
	    !pthread_equal(pthread_self(), tb_t))
		return;
	__atomic_store_n(&tb_state, 3, __ATOMIC_RELEASE);
	for (i = 0; i < 5000 && !__atomic_load_n(&tb_f, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
}

/* ... E, after its merge's, until X is out. */
static void tb_unlocked(pthread_mutex_t *m)
{
	if (m != &j->lock || __atomic_load_n(&tb_state, __ATOMIC_ACQUIRE) != 1 ||
	    !pthread_equal(pthread_self(), tb_e))
		return;
	__atomic_store_n(&tb_state, 2, __ATOMIC_RELEASE);
	if (fx_wait(&tb_state, 4))
		__atomic_store_n(&tb_state, 5, __ATOMIC_RELEASE);
}

static int tb_load(int who, int i, size_t size)
{
	char name[32];
	int r;

	snprintf(name, sizeof(name), "t%d_%d", who, i);
	/* a place of its own for each: no load replaces another */
	r = uevent_jit__code_load(j, name, ((uint64_t)who + 1) << 32 | (uint64_t)i << 24, size,
				  tb_code);
	res[who][i] = r == 0 ? 1 : r == -EFBIG && errno == EFBIG ? 2 : 3;
	return r;
}

static void tb_wait(const int *v, int want)
{
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want)
		sched_yield();
}

static void *tb_thread_t(void *arg)
{
	(void)arg;
	tb_load(0, 0, CODE);	/* its stage made */
	if (tb_mode)
		tb_wait(&tb_r, 1);
	else
		tb_wait(&tb_state, 2);
	tb_res[0] = tb_load(0, 1, TB_SMALL);	/* R: full, merges */
	return NULL;
}

static void *tb_thread_e(void *arg)
{
	(void)arg;
	tb_load(1, 0, CODE);
	tb_wait(&tb_state, 1);
	tb_res[1] = tb_load(1, 1, TB_SMALL);	/* full: merges, stops after the lock */
	return NULL;
}

static void *tb_thread_f(void *arg)
{
	(void)arg;
	tb_res[2] = tb_load(2, 0, TB_GROW);	/* merged by F itself */
	__atomic_store_n(&tb_grown, 1, __ATOMIC_RELEASE);
	tb_wait(&tb_state, 3);
	/* the session's lock held (by T, or the test): they stay in F's stage */
	if (!tb_res[2] && !(tb_res[2] = tb_load(2, 1, TB_BIG)))
		tb_res[2] = tb_load(2, 2, tb_mode ? TB_HUGE : TB_BIG);
	__atomic_store_n(&tb_f, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* In a child (SIGXFSZ ignored): exit status: bits. */
static int run_two_batches(const char *dir, int mode)
{
	pthread_t f, e, t;
	char dump[600];
	unsigned char *buf;
	size_t len, off;
	int bad = 0, who, i, r_in = 0, r;
	struct rlimit rl;

	if (!(j = open_dump_only(dir)))
		return BAD_SETUP;
	tb_mode = mode;
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	memset(res, 0, sizeof(res));
	pthread_create(&f, NULL, tb_thread_f, NULL);
	pthread_create(&e, NULL, tb_thread_e, NULL);
	pthread_create(&t, NULL, tb_thread_t, NULL);
	tb_e = e;
	tb_t = t;
	tb_wait(&tb_grown, 1);
	while (!__atomic_load_n(&res[0][0], __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&res[1][0], __ATOMIC_ACQUIRE))
		sched_yield();	/* T's and E's stages made */
	if (uevent_jit__flush(j) != 0)	/* all in the file */
		bad |= BAD_SETUP;
	pthread_mutex_lock(&j->lock);
	_uevent_jit_pool_free(j);	/* F's big batch buffer: the merge's next is small */
	pthread_mutex_unlock(&j->lock);
	__atomic_store_n(&tb_state, 1, __ATOMIC_RELEASE);
	if (mode) {	/* F's loads before R, while E waits */
		tb_wait(&tb_state, 2);
		pthread_mutex_lock(&j->lock);
		__atomic_store_n(&tb_state, 3, __ATOMIC_RELEASE);
		tb_wait(&tb_f, 1);
		pthread_mutex_unlock(&j->lock);
		__atomic_store_n(&tb_r, 1, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
	pthread_join(e, NULL);
	pthread_join(f, NULL);
	diag("mode %d: T's, E's, F's loads: %d %d %d; T's merge handed off %d", mode, tb_res[0],
	     tb_res[1], tb_res[2], tb_handoffs);
	if (tb_state != 5 || tb_handoffs < 2 - mode || tb_res[1] || tb_res[2])
		bad |= BAD_MISSED;
	__atomic_store_n(&tb_state, 0, __ATOMIC_RELEASE);
	/* a batch lost: the next flush says so */
	errno = 0;
	r = uevent_jit__flush(j);
	if (r != -EFBIG || errno != EFBIG || uevent_jit__flush(j) != 0)
		bad |= BAD_STICKY;
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	if (uevent_jit__close(j) != 0)
		bad |= BAD_ERR;
	j = NULL;
	/* every load in the dump: its call succeeded; R (t0_1) there in mode 0 only */
	buf = slurp(dump, &len);
	for (off = 40; buf && off + 16 <= len && u32(buf + off + 4) >= 16; off += u32(buf + off + 4))
		if (u32(buf + off) == 0 && load_of((const char *)buf + off + 56, &who, &i) == 0) {
			r_in |= who == 0 && i == 1;
			if (res[who][i] != 1) {
				diag("in the dump: %s, its call failed", (const char *)buf + off + 56);
				bad |= BAD_LOAD;
			}
		}
	free(buf);
	if (r_in != !mode || res[0][1] != (mode ? 2 : 1))
		bad |= BAD_ERR;
	return bad;
}

static void test_two_batches(int mode)
{
	char dir[600];
	int st = 255 << 8, bits;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/two%d", tmp, mode);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		signal(SIGXFSZ, SIG_IGN);
		_exit(run_two_batches(dir, mode));
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	bits = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	ok(bits != 255 && !(bits & (BAD_SETUP | BAD_MISSED | BAD_STICKY)),
	   mode ? "a merge's batch, written by another thread, fails; a group past the "
		  "deferred maximum cuts it off (status %#x)"
		: "a merge hands off two batches, the first written by another thread, the "
		  "second's write fails (status %#x)", st);
	ok(!(bits & (BAD_LOAD | BAD_ERR)),
	   mode ? "the load's record after the cut: not in the dump, its call failed"
		: "the load's record in the first: in the dump, its call succeeded");
}
#else
static void tb_locked(pthread_mutex_t *m)
{
	(void)m;
}

static void tb_unlocked(pthread_mutex_t *m)
{
	(void)m;
}
#endif

int main(void)
{
	const char *base = getenv("TMPDIR");
	char cmd[600];

	snprintf(tmp, sizeof(tmp), "%s/uevent-jit-full-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp))
		plan_skip_all("no temporary directory");
	tap_cleanup(tmp);
	/* before any thread: the interposed locks find the real ones */
	real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
#ifdef JIT_TEST_HOOKS
	plan(24);
#else
	plan(20);	/* the two-batch cases need the hook: t/jit-full-win.test */
#endif
	test_fsize();
	test_enospc();
	test_fork_held(0);
	test_fork_held(1);
	test_foreign();
#ifdef JIT_TEST_HOOKS
	test_two_batches(0);
	test_two_batches(1);
#endif
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	return exit_status();
}
