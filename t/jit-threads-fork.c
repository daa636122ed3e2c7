/* jit-threads-fork.c - batched JIT loads from several threads while another thread
 * flushes and forks, again and again. A load's merge hands a full batch off and its
 * thread writes it after dropping the session's lock (libuevent/jit-dump.c, out_write):
 * a flush, and fork, wait for that write, so the parent's dump and perf map hold every
 * load once, in time order, and each child (which loads and closes on its own: its
 * writes take the same lock the parent's writer held across fork) writes whole files of
 * its own, without hanging. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uevent.h"
#include "tap.h"
#include "files.h"

#define THREADS		4
#define PER_THREAD	20000
#define CODE		128	/* bytes a load: the batch passes many 256 KiB boundaries */
#define CHILD_LOADS	600

static char tmp[256];
static struct uevent_jit *j;
static unsigned char code[THREADS][CODE];
static unsigned char child_code[CODE];
static int finished;
static int forks;	/* children reaped: loaders wait for two halfway, so that
			   forks come while they load (and their batches are written) */

/*
 * The dump's records checked: a whole chain to the end, timestamps rising in file order
 * (perf inject applies them in it), and the perf map's lines the dump's loads in the
 * same order (address and name). Returns the loads, -1 if any of that fails.
 */
static int check_files(const char *dump, const char *map, unsigned char **bufp, size_t *lenp)
{
	size_t off, len;
	unsigned char *buf = slurp(dump, &len);
	uint64_t last = 0;
	int loads = 0, bad = !buf || len < 40;
	char line[256], nm[64];
	unsigned long long a, s;
	FILE *f = fopen(map, "r");

	for (off = 40; !bad && off < len; off += u32(buf + off + 4)) {
		if (off + 16 > len || u32(buf + off + 4) < 16 || u32(buf + off + 4) % 8 ||
		    off + u32(buf + off + 4) > len || u64(buf + off + 8) < last) {
			bad = 1;
			break;
		}
		last = u64(buf + off + 8);
		if (u32(buf + off) != 0)	/* JIT_CODE_LOAD */
			continue;
		loads++;
		if (!f || !fgets(line, sizeof(line), f) ||
		    sscanf(line, "%llx %llx %63s", &a, &s, nm) != 3 ||
		    strcmp(nm, (const char *)buf + off + 56) || a != u64(buf + off + 32))
			bad = 1;
	}
	if (f) {
		if (!bad && fgets(line, sizeof(line), f))
			bad = 1;	/* a line with no load */
		fclose(f);
	}
	if (lenp)
		*lenp = len;
	if (bufp)
		*bufp = buf;
	else
		free(buf);
	return bad ? -1 : loads;
}

static void *loader(void *arg)
{
	int t = (int)(intptr_t)arg, i, bad = 0;
	char name[64];

	memset(code[t], t + 1, CODE);
	for (i = 0; i < PER_THREAD; i++) {
		if (i == PER_THREAD / 2)
			while (__atomic_load_n(&forks, __ATOMIC_ACQUIRE) < 2)
				sched_yield();
		snprintf(name, sizeof(name), "t%d_%d", t, i);
		/* one address a thread: each load replaces the last in the table */
		bad += uevent_jit__code_load(j, name, (uintptr_t)code[t], CODE, NULL) != 0;
	}
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return (void *)(intptr_t)bad;
}

/* A child: loads of its own, then close; its files checked here. Exit 0: all good. */
static void child(void)
{
	char dump[512], map[64], name[64];
	int i, bad = 0, loads;

	alarm(120);	/* a write lock inherited held would hang it: fail instead */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);	/* another process's of this pid, left behind: appended to */
	for (i = 0; i < CHILD_LOADS; i++) {
		snprintf(name, sizeof(name), "child_%d", i);
		bad += uevent_jit__code_load(j, name, (uintptr_t)child_code + (uintptr_t)(i % 64),
					     CODE - 64, NULL) != 0;
	}
	bad += uevent_jit__close(j) != 0;
	snprintf(dump, sizeof(dump), "%s/jd/jit-%d.dump", tmp, (int)getpid());
	loads = check_files(dump, map, NULL, NULL);
	unlink(map);
	unlink(dump);
	/* its own loads and the replay of what it inherited, each with its line */
	_exit(bad || loads < CHILD_LOADS ? 1 : 0);
}

int main(void)
{
	static unsigned char seen[THREADS][PER_THREAD];
	const char *base = getenv("TMPDIR");
	char dir[512], dump[600], map[64];
	pthread_t th[THREADS];
	int t, i, bad = 0, kids_ok = 0, flushes = 0, loads, once = 1, st, during = 0;
	unsigned char *buf;
	size_t len, off;
	pid_t pid;
	void *r;

	snprintf(tmp, sizeof(tmp), "%s/uevent-jit-fork-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp))
		plan_skip_all("no temporary directory");
	tap_cleanup(tmp);
	plan(4);
	snprintf(dir, sizeof(dir), "%s/jd", tmp);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	tap_cleanup(map);
	{
		/* the default perf map: a child writes /tmp/perf-CHILDPID.map, not ours */
		UEVENT_JIT_OPTS(o, .dir = dir, .flags = UEVENT_JIT_BUFFER_JITDUMP |
							UEVENT_JIT_BUFFER_PERF_MAP);

		j = uevent_jit__open(&o);
	}
	if (!j) {
		printf("Bail out! uevent_jit__open: %s\n", strerror(errno));
		return 1;
	}
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, loader, (void *)(intptr_t)t);
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS || forks < 3) {
		flushes += uevent_jit__flush(j) == 0;
		during += __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS;
		if ((pid = fork()) == 0)
			child();
		if (pid > 0 && waitpid(pid, &st, 0) == pid) {
			__atomic_add_fetch(&forks, 1, __ATOMIC_RELEASE);
			kids_ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
	}
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], &r);
		bad += (int)(intptr_t)r;
	}
	ok(bad == 0 && flushes == forks, "%d threads x %d batched loads succeed, %d flushes",
	   THREADS, PER_THREAD, flushes);
	ok(during >= 2 && kids_ok == forks,
	   "%d children forked, %d while the threads loaded: each loads, closes and writes "
	   "its own whole files, lines in its dump's order (%d good)", forks, during, kids_ok);
	ok(uevent_jit__close(j) == 0, "close");
	loads = check_files(dump, map, &buf, &len);
	for (off = 40; buf && loads > 0 && off < len; off += u32(buf + off + 4))
		if (u32(buf + off) == 0 &&
		    sscanf((const char *)buf + off + 56, "t%d_%d", &t, &i) == 2 &&
		    t >= 0 && t < THREADS && i >= 0 && i < PER_THREAD)
			seen[t][i]++;
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < PER_THREAD; i++)
			once &= seen[t][i] == 1;
	ok(loads == THREADS * PER_THREAD && once,
	   "the parent's dump: every load once, timestamps rising, the perf map's lines in "
	   "its order (%d loads)", loads);
	free(buf);
	unlink(map);
	unlink(dump);
	rmdir(dir);
	rmdir(tmp);
	return exit_status();
}
