/* jit-errors.c - the batched JIT path when a file refuses a write, and the calls that
 * race with unloads and fork (each case found by review, each broke before its fix):
 * - a batch handed off whose write fails while a flush's merge appends, so the dump is
 *   cut back under that merge: every load left in the dump keeps its perf-map line;
 * - a perf map that takes no line (a file size limit): every load still goes into the
 *   dump and every call succeeds; the next flush returns the error, the one after 0;
 * - a move after loads whose lines are made from the dump's records: its line comes
 *   after theirs, as its record does;
 * - code_load_func with markers on, everything unloaded as each load's entry goes in
 *   (as another thread could): no read of a freed name or record (t/jit-asan.test
 *   builds this with AddressSanitizer, which sees such a read);
 * - fork from a thread that loaded: in the child its stage is under the child's tid,
 *   which no other thread of the child can be given.
 * Built as it is (t/jit-errors) and by t/jit-asan.test from the JIT files with stubs. */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uevent.h"
#include "jit-internal.h"
#ifdef JIT_STUBS
#include "jit-stubs.h"
#endif
#include "tap.h"
#include "files.h"

#define CODE	900	/* about 970 bytes a load */
#define BATCHED	(UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP | UEVENT_JIT_NO_UEVENT)

static char tmp[256];
static unsigned char code[CODE];

/* A session in tmp/NAME (perf map tmp/NAME.map); NULL on failure. */
static struct uevent_jit *open_in(const char *name, unsigned int flags, char *map, size_t cap)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	snprintf(map, cap, "%s/%s.map", tmp, name);
	{
		UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map, .flags = flags);

		return uevent_jit__open(&o);
	}
}

/* The names of the dump's CODE_LOAD records, in file order (whole records, time
 * order checked: -1 if not); *n: how many. */
static char **dump_names(const char *dump, int *n)
{
	size_t len, off = 40;
	unsigned char *b = slurp(dump, &len);
	char **names = NULL;
	uint64_t last = 0;
	uint32_t size;

	*n = 0;
	if (!b || len < 40)
		goto bad;
	for (; off < len; off += size) {
		size = off + 16 <= len ? u32(b + off + 4) : 0;
		if (size < 16 || size % 8 || size > len - off || u64(b + off + 8) < last)
			goto bad;
		last = u64(b + off + 8);
		if (u32(b + off) != 0)
			continue;
		if (size < 57 || !memchr(b + off + 56, 0, size - 56))
			goto bad;
		names = realloc(names, (size_t)(*n + 1) * sizeof(*names));
		names[(*n)++] = strdup((const char *)b + off + 56);
	}
	free(b);
	return names;
bad:
	free(b);
	*n = -1;
	return names;
}

/* How many lines of the perf map name `name`, and (*last) whether the last line for
 * addr names it; the map's lines must be whole. -1: not whole. */
static int map_count(const char *map, const char *name, uint64_t addr, int *last)
{
	size_t len;
	char *b = (char *)slurp(map, &len), *p, *nl, found[256];
	unsigned long long a, s;
	int n = 0, k;

	if (last)
		*last = 0;
	if (!b)
		return -1;
	for (p = b; p < b + len; p = nl + 1) {
		k = -1;
		if (!(nl = memchr(p, '\n', (size_t)(b + len - p))) ||
		    sscanf(p, "%llx %llx %255s%n", &a, &s, found, &k) != 3 || p + k != nl) {
			n = -1;
			break;
		}
		if (!strcmp(found, name))
			n++;
		if (last && a == addr)
			*last = !strcmp(found, name);
	}
	free(b);
	return n;
}

/* ---- a batch handed off fails while a flush's merge appends -------------------------- */

#define HELPERS	5
#define HLOADS	55	/* about 53 KiB a stage: none merges before the flush */

static struct uevent_jit *hj;		/* the session whose lock the interposer watches */
static pthread_t hold_t;
static int hold_armed, hold_state;	/* 1: the thread held, 2: let go */
static size_t hold_limit;		/* the file size limit set as it was held */
static int (*real_unlock)(pthread_mutex_t *);
static pthread_barrier_t hbar;
static struct uevent_jit *unload_j;	/* set: a stage's lock let go unloads everything */
static __thread int in_unload;

/* m is the lock of one of j's stages (one thread loads: the list holds still). */
static int stage_lock_of(struct uevent_jit *j, pthread_mutex_t *m)
{
	struct stage *s;

	for (s = j->stages; s; s = s->next)
		if (m == &s->lock)
			return 1;
	return 0;
}

/*
 * The loading thread, once its merge has handed a batch off and let go of the session's
 * lock (its thread writes the batch next): held here, and the file size limit set to
 * half way into that batch, so that whichever thread writes it fails. With unload_j
 * set, every stage lock let go (the last as a load has put its table entry there)
 * unloads everything at once, as another thread could at that moment.
 */
int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int held, r;

	if (!real_unlock)
		real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	held = hj && m == &hj->lock && __atomic_load_n(&hold_armed, __ATOMIC_ACQUIRE) &&
	       pthread_equal(pthread_self(), hold_t) && __atomic_load_n(&hj->out, __ATOMIC_ACQUIRE);
	r = real_unlock(m);
	/* (not in a merge: the session's lock is ours there) */
	if (unload_j && !in_unload && stage_lock_of(unload_j, m) &&
	    pthread_mutex_trylock(&unload_j->lock) == 0) {
		in_unload = 1;
		real_unlock(&unload_j->lock);
		uevent_jit__code_unload_all(unload_j);
		in_unload = 0;
	}
	if (held) {
		struct rlimit rl;

		__atomic_store_n(&hold_armed, 0, __ATOMIC_RELEASE);
		hold_limit = (size_t)(hj->out_off + hj->out_len / 2);
		rl.rlim_cur = rl.rlim_max = hold_limit;
		setrlimit(RLIMIT_FSIZE, &rl);
		__atomic_store_n(&hold_state, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	}
	return r;
}

static void *cut_helper(void *arg)
{
	long t = (long)arg;
	char name[32];
	int i, bad = 0;

	for (i = 0; i < HLOADS; i++) {
		snprintf(name, sizeof(name), "h%ld_%d", t, i);
		bad |= uevent_jit__code_load(hj, name, 0x20000000 + (uint64_t)(t * 1000 + i) * 0x1000,
					     CODE, code) != 0;
		if (i == 0) {
			pthread_barrier_wait(&hbar);	/* every stage made */
			pthread_barrier_wait(&hbar);	/* the loading thread held */
		}
	}
	return (void *)(intptr_t)bad;
}

static void *cut_loader(void *arg)
{
	char name[32];
	int i;

	(void)arg;
	__atomic_store_n(&hold_t, pthread_self(), __ATOMIC_RELEASE);
	__atomic_store_n(&hold_armed, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 100000 && __atomic_load_n(&hold_armed, __ATOMIC_ACQUIRE); i++) {
		snprintf(name, sizeof(name), "T_%d", i);
		uevent_jit__code_load(hj, name, 0x10000000 + (uint64_t)i * 0x1000, CODE, code);
	}
	return NULL;
}

/* In a child: exit status 0, or 1 not held, 2 flush's result, 4 a load left in the
 * dump without its line (or a line twice), 8 files not whole. */
static int run_cut(void)
{
	pthread_t h[HELPERS], t;
	char map[512], dump[700], **names;
	int i, n, bad = 0, r;

	signal(SIGXFSZ, SIG_IGN);
	if (!(hj = open_in("cut", BATCHED, map, sizeof(map))))
		return 16;
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(hj));
	pthread_barrier_init(&hbar, NULL, HELPERS + 1);
	for (i = 0; i < HELPERS; i++)
		pthread_create(&h[i], NULL, cut_helper, (void *)(intptr_t)i);
	pthread_barrier_wait(&hbar);
	pthread_create(&t, NULL, cut_loader, NULL);
	for (i = 0; i < 20000 && __atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) != 1; i++)
		usleep(1000);
	if (__atomic_load_n(&hold_state, __ATOMIC_ACQUIRE) != 1) {
		printf("# no batch handed off in 20 s\n");
		_exit(1);	/* the loader spins in the interposer */
	}
	pthread_barrier_wait(&hbar);
	/* (a helper's load may merge too, at the batch's age, and fail with the batch) */
	for (i = 0; i < HELPERS; i++)
		pthread_join(h[i], NULL);
	/* the flush's merge fills the batch past the next boundary: it writes the held one
	 * first, which fails and cuts the dump back under the merge */
	errno = 0;
	r = uevent_jit__flush(hj);
	if (r != -EFBIG || errno != EFBIG)
		bad |= 2;
	printf("# flush: %d (limit %zu)\n", r, hold_limit);
	__atomic_store_n(&hold_state, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	uevent_jit__close(hj);
	names = dump_names(dump, &n);
	if (n < 0)
		bad |= 8;
	for (i = 0; i < n; i++) {
		if (map_count(map, names[i], 0, NULL) != 1) {
			if (!(bad & 4))
				printf("# %s: %d perf-map lines\n", names[i],
				       map_count(map, names[i], 0, NULL));
			bad |= 4;
		}
		free(names[i]);
	}
	free(names);
	printf("# %d loads in the dump after the cut\n", n);
	return bad | (n <= 0 ? 4 : 0);
}

/* ---- a perf map that takes no line -------------------------------------------------- */

#define MTHREADS	8
#define MLOADS		200	/* several merges a thread, lines handed off */

static struct uevent_jit *mj;
static pthread_barrier_t mbar;

static void *map_loader(void *arg)
{
	long t = (long)arg;
	char name[32];
	int i, failed = 0;

	for (i = 0; i < MLOADS; i++) {
		snprintf(name, sizeof(name), "m%ld_%d", t, i);
		failed += uevent_jit__code_load(mj, name, 0x100000 + (uint64_t)(t * MLOADS + i) * 0x1000,
						CODE, code) != 0;
		if (i == 0)
			pthread_barrier_wait(&mbar);	/* every thread has a stage */
	}
	return (void *)(intptr_t)failed;
}

/* In a child: 0, or 1 a call failed, 2 flush's results, 4 a load missing from the dump
 * (or twice), 8 not whole or out of time order, 16 close. */
static int run_map_full(void)
{
	static unsigned char seen[MTHREADS][MLOADS];
	pthread_t th[MTHREADS];
	char map[512], dump[700], **names;
	struct rlimit rl = { 4 << 20, 4 << 20 };
	int t, i, n, fd, bad = 0, r1, r2, r3;
	void *r;

	signal(SIGXFSZ, SIG_IGN);
	snprintf(map, sizeof(map), "%s/mapfull.map", tmp);
	/* the perf map past the size limit: every write of lines fails (EFBIG); the dump
	 * (1.6 MB) stays under it */
	if ((fd = open(map, O_CREAT | O_WRONLY, 0600)) < 0 || ftruncate(fd, 8 << 20) < 0)
		return 32;
	close(fd);
	setrlimit(RLIMIT_FSIZE, &rl);
	if (!(mj = open_in("mapfull", BATCHED, map, sizeof(map))))
		return 32;
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(mj));
	pthread_barrier_init(&mbar, NULL, MTHREADS);
	for (t = 0; t < MTHREADS; t++)
		pthread_create(&th[t], NULL, map_loader, (void *)(intptr_t)t);
	for (t = 0; t < MTHREADS; t++) {
		pthread_join(th[t], &r);
		bad |= r ? 1 : 0;
	}
	r1 = uevent_jit__flush(mj);
	r2 = uevent_jit__flush(mj);
	r3 = uevent_jit__close(mj);
	printf("# flush %d, flush %d, close %d\n", r1, r2, r3);
	if (r1 != -EFBIG || r2 != 0)
		bad |= 2;
	if (r3 != 0)
		bad |= 16;
	names = dump_names(dump, &n);
	if (n < 0)
		bad |= 8;
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		int a, b;

		if (sscanf(names[i], "m%d_%d", &a, &b) != 2 || a < 0 || a >= MTHREADS || b < 0 ||
		    b >= MLOADS || seen[a][b]++)
			bad |= 4;
		free(names[i]);
	}
	free(names);
	printf("# %d of %d loads in the dump\n", n, MTHREADS * MLOADS);
	return bad | (n != MTHREADS * MLOADS ? 4 : 0);
}

/* ---- children --------------------------------------------------------------------- */

static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		st = fn();
		fflush(stdout);
		_exit(st);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 255;
	if (!WIFEXITED(st))
		diag("killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static void test_cut(void)
{
	int bits = in_child(run_cut);

	ok(bits != 255 && !(bits & (1 | 16)), "a batch handed off, held, its write to fail: "
	   "flushed, closed (%d)", bits);
	ok(!(bits & (2 | 8)), "the flush that wrote it returns EFBIG; the dump whole, in "
	   "time order");
	ok(!(bits & 4), "every load left in the dump has its perf-map line, once");
}

static void test_map_full(void)
{
	int bits = in_child(run_map_full);

	ok(bits != 255 && !(bits & (1 | 32)), "8 threads load into a perf map that takes no "
	   "line: every call succeeds (%d)", bits);
	ok(!(bits & (4 | 8)), "every load in the dump, once, in time order");
	ok(!(bits & (2 | 16)), "the next flush returns EFBIG, the one after 0, close 0");
}

/* ---- a move's line after the lines of the loads before it ---------------------------- */

static void test_move_order(void)
{
	struct uevent_jit *j;
	char map[512];
	int last = 0, r;

	if (!(j = open_in("move", BATCHED, map, sizeof(map)))) {
		ok(0, "open: %s", strerror(errno));
		return;
	}
	r = uevent_jit__code_load(j, "old_at_3000", 0x3000, 64, code) |
	    uevent_jit__code_load(j, "first", 0x1000, 64, code) |
	    uevent_jit__code_load(j, "second", 0x2000, 64, code) |
	    uevent_jit__code_move(j, 0x2000, 0x3000, 64) | uevent_jit__close(j);
	ok(r == 0 && map_count(map, "second", 0x3000, &last) == 2 && last,
	   "a load, two more, a move onto the first's address: the map's last line for it "
	   "names the moved code");
}

/* ---- markers read the name the call made, not the table's ----------------------------- */

static char long_name[9000];

/* code_load_func with markers on, everything unloaded the moment each load has put its
 * entry in the table (from inside the call: an unlock interposed), as another thread's
 * unload_all could: the call reads none of what that frees (the name, the records). */
static void test_markers(unsigned int flags, const char *what)
{
	struct uevent_jit *j;
	char map[512];
	int i, failed = 0;

	if (!(j = open_in(what, flags | UEVENT_JIT_NO_PERF_MAP, map, sizeof(map)))) {
		ok(0, "%s: open: %s", what, strerror(errno));
		return;
	}
	/* the stage made first, by a load with nothing unloaded */
	failed += uevent_jit__code_load(j, "first", 0x7000, 64, code) != 0;
	__atomic_store_n(&unload_j, j, __ATOMIC_RELEASE);
	for (i = 0; i < 20; i++)
		failed += uevent_jit__code_load_func(j, long_name, "f", 0x10000 + (uint64_t)i * 0x100,
						     64, code, "x.lua", (uint32_t)i) != 0;
	__atomic_store_n(&unload_j, NULL, __ATOMIC_RELEASE);
	ok(failed == 0 && uevent_jit__code_unload(j, 0x10000, 0) == -ENOENT &&
	   uevent_jit__close(j) == 0, "%s: 20 loads with markers on, each unloaded as its "
	   "entry went in: every call succeeds, no freed name read", what);
}

/* ---- fork from a thread that loaded --------------------------------------------------- */

static struct uevent_jit *fj;
static pid_t fork_parent_tid;

static void *fork_thread(void *arg)
{
	struct stage *s;
	pid_t pid;
	int st, i, bad = 0, mine = 0;

	(void)arg;
	fork_parent_tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < 10; i++)
		bad |= uevent_jit__code_load(fj, "before", 0x5000 + (uint64_t)i * 0x100, 64, code);
	if ((pid = fork()) == 0) {
		/* the only thread here: no stage under the parent's tid, its own under ours */
		for (s = fj->stages; s; s = s->next) {
			bad |= s->tid == fork_parent_tid;
			mine += s->tid == getpid();
		}
		bad |= uevent_jit__code_load(fj, "child", 0x9000, 64, code) != 0;
		_exit(bad || mine != 1);
	}
	return (void *)(intptr_t)(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
				  WEXITSTATUS(st) == 0 && !bad);
}

static void test_fork_tid(void)
{
	char map[512];
	pthread_t t;
	void *r = NULL;

	if (!(fj = open_in("forktid", BATCHED, map, sizeof(map)))) {
		ok(0, "open: %s", strerror(errno));
		return;
	}
	pthread_create(&t, NULL, fork_thread, NULL);
	pthread_join(t, &r);
	ok(r && uevent_jit__close(fj) == 0, "fork from a thread that loaded: in the child its "
	   "stage is under the child's tid, none under the parent's");
}

int main(void)
{
	const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(tmp, sizeof(tmp), "%s/jit-errors.XXXXXX", base);
	if (!mkdtemp(tmp))
		plan_skip_all("no temporary directory");
	tap_cleanup(tmp);
	memset(code, 0x90, sizeof(code));
	memset(long_name, 'n', sizeof(long_name) - 1);
	plan(10);
	test_cut();
	test_map_full();
	test_move_order();
#ifdef JIT_STUBS
	off_word = 1;		/* markers on (the stubs' uevent_emit takes them) */
#else
	{
		char marks[512];
		UEVENT_OPTS(uo, .transport = UEVENT_TRANSPORT_FILE, .path = marks,
			    .flags = UEVENT_OPEN_IGNORE_ENV);

		snprintf(marks, sizeof(marks), "%s/marks.perf.data", tmp);
		if (uevent_open(&uo) != UEVENT_TRANSPORT_FILE)
			diag("file transport: %s (markers off)", strerror(errno));
	}
#endif
	test_markers(BATCHED & ~UEVENT_JIT_NO_UEVENT, "staged");
	test_markers(0, "unbatched");
	test_fork_tid();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("cannot remove %s", tmp);
	}
	return exit_status();
}
