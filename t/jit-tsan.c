/* jit-tsan.c - the JIT session's threads under ThreadSanitizer: t/jit-tsan.test builds
 * this with libuevent's JIT files (jit*.c, group-append.c) and -fsanitize=thread, and
 * fails on any report. Loads from several threads, batched (per-thread stages merged
 * into the batch) and not (the session's lock, group-committed perf-map lines), while
 * another thread flushes, moves and unloads its own, then unloads everyone's (each
 * stage settled into the table from another thread) and closes. The rest of the
 * library is stubbed (jit-stubs.h): markers are off. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "jit-stubs.h"

/* ---- the threads ------------------------------------------------------------------- */

#define THREADS	4
#define LOADS	1500

static struct uevent_jit *j;
static unsigned char code[THREADS + 1][LOADS][16];
static int finished, failed;
static unsigned char big[2048];		/* run_big's code bytes */
static int big_run;			/* loads of big's size, the main thread only waits */

static void *loader(void *arg)
{
	int t = (int)(intptr_t)arg, i, bad = 0;
	char name[64];

	for (i = 0; i < LOADS; i++) {
		uintptr_t a = (uintptr_t)code[t][i];
		struct uevent_jit_debug_entry e = { a, (uint32_t)i, 0, "t.lua", 0 };

		snprintf(name, sizeof(name), "t%d_%d", t, i);
		if (big_run)	/* batches past the file's 256 KiB boundaries at merges' ends */
			bad |= uevent_jit__code_load(j, name, a, sizeof(big), big);
		else if (i % 3 == 0)
			bad |= uevent_jit__code_load(j, name, a, 16, NULL);
		else if (i % 3 == 1)
			bad |= uevent_jit__code_load_func(j, name, "f", a, 16, NULL, "t.lua",
							  (uint32_t)i);
		else
			bad |= uevent_jit__debug_info(j, a, &e, 1) |
			       uevent_jit__code_load(j, name, a, 16, NULL);
	}
	if (bad)
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The dump after close: whole records, loads' and moves' timestamps rising in file
 * order, the loads and moves made (whether a batch was written with pwrite or copied
 * into the file's mapping); the perf map (if any): a line for each. 0: all so.
 */
static int check_files(const char *dump, const char *map, int loads, int moves)
{
	unsigned char h[16];
	uint64_t ts, last = 0;
	uint32_t id, size;
	int nl = 0, nm = 0, lines = 0, bad = 0, c;
	FILE *f = fopen(dump, "rb");

	if (!f || fseek(f, 40, SEEK_SET) < 0)
		bad = 1;
	while (!bad && fread(h, 1, 16, f) == 16) {
		memcpy(&id, h, 4);
		memcpy(&size, h + 4, 4);
		memcpy(&ts, h + 8, 8);
		/* a DEBUG_INFO record called for before its load keeps its own time */
		if (size < 16 || size % 8 || (id <= 1 && ts < last) ||
		    fseek(f, size - 16, SEEK_CUR) < 0)
			bad = 1;
		if (id <= 1)
			last = ts;
		nl += id == 0;
		nm += id == 1;
	}
	if (f)
		fclose(f);
	if (map && (f = fopen(map, "r"))) {
		while ((c = getc(f)) != EOF)
			lines += c == '\n';
		fclose(f);
	}
	if (bad || nl != loads || nm != moves || (map && lines != loads + moves)) {
		printf("# %s: %s, %d loads (of %d), %d moves (of %d), %d perf-map lines\n", dump,
		       bad ? "broken or out of time order" : "whole", nl, loads, nm, moves, lines);
		return 1;
	}
	return 0;
}

static int run(const char *dir, unsigned int flags)
{
	char map[600], dump[700];
	pthread_t th[THREADS];
	int t, i, n = 0, bad = 0, found = 0;
	UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map, .flags = flags);

	snprintf(map, sizeof(map), "%s.map", dir);
	finished = failed = 0;
	if (!(j = uevent_jit__open(&o))) {
		fprintf(stderr, "jit open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, loader, (void *)(intptr_t)t);
	/* meanwhile: merges (flush), a move and an unload of our own, lookups that settle
	 * every stage */
	while (big_run && __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < THREADS) {
		uintptr_t a = (uintptr_t)code[THREADS][n % LOADS];

		bad |= uevent_jit__code_load(j, "main", a, 16, NULL);
		bad |= uevent_jit__code_move(j, a, a + 8, 8);
		bad |= uevent_jit__code_unload(j, a + 8, 0);
		bad |= uevent_jit__flush(j);
		n++;
	}
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < LOADS; i++)
			found += uevent_jit__code_unload(j, (uintptr_t)code[t][i], 0) == 0;
	bad |= uevent_jit__code_unload_all(j);
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	bad |= uevent_jit__close(j);
	bad |= check_files(dump, flags & UEVENT_JIT_NO_PERF_MAP ? NULL : map, THREADS * LOADS + n, n);
	printf("# %s: %d threads x %d loads, %d found again, %d rounds of the main thread\n",
	       dir, THREADS, LOADS, found, n);
	return bad || failed || found != THREADS * LOADS;
}

int main(int argc, char **argv)
{
	char dir[600];
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: jit-tsan DIR\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/batched", argv[1]);
	bad |= run(dir, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP);
	snprintf(dir, sizeof(dir), "%s/unbatched", argv[1]);
	bad |= run(dir, 0);
	snprintf(dir, sizeof(dir), "%s/dumponly", argv[1]);
	bad |= run(dir, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_NO_PERF_MAP);
	big_run = 1;
	snprintf(dir, sizeof(dir), "%s/big", argv[1]);
	bad |= run(dir, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP);
	return bad;
}
