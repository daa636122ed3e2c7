/* scale.c - throughput of each shared path as threads are added: in all, per thread, vs one. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uevent.h"
#include "bench.h"

/*
 * Each point runs `threads` threads for a fixed time (after a barrier, so they start
 * together) and counts the operations they finished; throughput in all is the sum over
 * the time from the start to the last thread's stop. Threads check the stop flag every
 * CHUNK operations, so the check costs nothing measurable.
 */
#define CHUNK		256
#define MAX_THREADS	1024

enum path { DISABLED, FILE_EMIT, JIT_LOAD, JIT_FUNC, JIT_BATCHED, FLOOD };

static const char *const path_name[] = {
	[DISABLED] = "disabled UEVENT_MARK", [FILE_EMIT] = "file uevent_emit",
	[JIT_LOAD] = "jit code_load", [JIT_FUNC] = "jit code_load_func (debug info)",
	[JIT_BATCHED] = "jit code_load_func, batched",
	[FLOOD] = "usdt flood",
};

static pthread_barrier_t start;
static volatile int stop;
static struct uevent_jit *jit;
static unsigned char code[256];
static const char text[] = "a benchmark mark, 32 bytes long";

struct worker {
	pthread_t t;
	int id;
	enum path path;
	long n;			/* FLOOD: marks to emit; else operations done */
	double t0, t1, cpu;	/* cpu: the thread's CPU time, ns */
	char pad[64];
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t base = 0x10000000000ull + ((uint64_t)w->id << 32);
	char name[48];
	long n = 0, i;
	double c0;

	pthread_barrier_wait(&start);
	w->t0 = now();
	c0 = cpu_now();
	switch (w->path) {
	case DISABLED:
		while (!stop) {
			for (i = 0; i < CHUNK * 64; i++) {
				UEVENT_MARK(text);
				__asm__ volatile("" ::: "memory");
			}
			n += CHUNK * 64;
		}
		break;
	case FILE_EMIT:
		while (!stop) {
			for (i = 0; i < CHUNK; i++)
				if (uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)) < 0) {
					perror("uevent_emit");
					exit(1);
				}
			n += CHUNK;
		}
		break;
	case JIT_LOAD:
	case JIT_FUNC:
	case JIT_BATCHED:
		while (!stop) {
			for (i = 0; i < CHUNK; i++, n++) {
				int ret;

				snprintf(name, sizeof(name), "TRACE_%d_%ld", w->id, n);
				if (w->path == JIT_LOAD)
					ret = uevent_jit__code_load(jit, name, base + (uint64_t)n * 256,
								    200, code);
				else
					ret = uevent_jit__code_load_func(jit, name, "mix",
									 base + (uint64_t)n * 256,
									 200, code, "bench.lua",
									 (uint32_t)n);
				if (ret < 0) {
					perror("uevent_jit__code_load");
					exit(1);
				}
			}
		}
		break;
	case FLOOD:
		for (i = 0; i < w->n; i++)
			UEVENT_MARK(text);
		n = w->n;
		break;
	}
	w->t1 = now();
	w->cpu = cpu_now() - c0;
	w->n = n;
	return NULL;
}

/* Operations per second in all, over `dur` seconds (FLOOD: n marks a thread); *cpu:
 * CPU ns an operation, all threads' CPU time over all operations (what contention adds
 * shows here even where other load on the machine takes wall-clock time). */
static double total_ops;	/* over every run of a point: what a profile of it divides by */

static double point(enum path path, int threads, double dur, long n, double *cpu)
{
	static struct worker w[MAX_THREADS];
	double t0 = 1e300, t1 = 0, ops = 0, c = 0;
	int i;

	stop = 0;
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].path = path;
		w[i].n = n;
		if (pthread_create(&w[i].t, NULL, run, &w[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	pthread_barrier_wait(&start);
	if (path != FLOOD) {
		struct timespec ts = { (time_t)dur, (long)((dur - (time_t)dur) * 1e9) };

		nanosleep(&ts, NULL);
		stop = 1;
	}
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].t, NULL);
		ops += (double)w[i].n;
		c += w[i].cpu;
		if (w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	pthread_barrier_destroy(&start);
	total_ops += ops;
	if (cpu)
		*cpu = c / ops;
	return ops / ((t1 - t0) / 1e9);
}

static char tmp[256];
static int repeat = 3;

static int setup(enum path path, int threads);
static void teardown(enum path path, int threads);

/* The best of `repeat` points, each with a fresh setup: other load on the machine only
 * ever takes time away. *cpu: that run's CPU ns an operation. */
static double best(enum path path, int threads, double dur, double *cpu)
{
	double r, c, top = 0;
	int i;

	*cpu = 0;
	for (i = 0; i < repeat; i++) {
		if (i && setup(path, threads) < 0)
			break;
		r = point(path, threads, dur, 0, &c);
		if (i < repeat - 1)
			teardown(path, threads);
		if (r > top) {
			top = r;
			*cpu = c;
		}
	}
	return top;
}

/* Sets up what the path needs for one point (a fresh file, a fresh JIT session). */
static int setup(enum path path, int threads)
{
	char dir[512], map[512], file[512];

	switch (path) {
	case DISABLED: {
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_NONE);

		uevent_open(&o);
		return uevent_enabled() ? -EBUSY : 0;
	}
	case FILE_EMIT: {
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = file);

		snprintf(file, sizeof(file), "%s/file-%d.perf.data", tmp, threads);
		unlink(file);
		return uevent_open(&o) == UEVENT_TRANSPORT_FILE ? 0 : -errno;
	}
	case JIT_LOAD:
	case JIT_FUNC:
	case JIT_BATCHED: {
		unsigned int flags = path == JIT_BATCHED ? UEVENT_JIT_BUFFER_PERF_MAP |
							    UEVENT_JIT_BUFFER_JITDUMP : 0;
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_NONE);

		/* The in-stream uevent is one relaxed load here: nobody listens. */
		uevent_open(&o);
		snprintf(dir, sizeof(dir), "%s/jit-%d-%d", tmp, (int)path, threads);
		snprintf(map, sizeof(map), "%s/jit-%d-%d.map", tmp, (int)path, threads);
		UEVENT_JIT_OPTS(jo, .dir = dir, .perf_map_path = map, .flags = flags);
		jit = uevent_jit__open(&jo);
		return jit ? 0 : -errno;
	}
	case FLOOD:
		break;
	}
	return 0;
}

static void teardown(enum path path, int threads)
{
	char cmd[600];

	if (path == JIT_LOAD || path == JIT_FUNC || path == JIT_BATCHED) {
		uevent_jit__close(jit);
		jit = NULL;
	}
	uevent_close();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/jit-* '%s'/file-*", tmp, tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "scale: cannot clean %s\n", tmp);
	(void)threads;
}

/* SCALE_PATHS="file,jit": the paths whose name holds one of the words ("=jit code_load":
 * the path of that name only). */
static int wanted(const char *only, const char *name)
{
	char w[64];
	size_t n;

	for (; *only; only += n + (only[n] != 0)) {
		n = strcspn(only, ",");
		if (n && n < sizeof(w)) {
			memcpy(w, only, n);
			w[n] = 0;
			if (w[0] == '=' ? !strcmp(name, w + 1) : strstr(name, w) != NULL)
				return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), max;
	double dur = 0.3;
	const char *only = getenv("SCALE_PATHS");
	int p, t, only_t;

	if (argc > 2 && !strcmp(argv[1], "--flood")) {
		/* Run by bench/scale-record.sh under `uevent record`: THREADS MARKS-EACH. */
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USDT);
		int threads = atoi(argv[2]);
		long n = argc > 3 ? atol(argv[3]) : 100000;
		double r;

		if (uevent_open(&o) != UEVENT_TRANSPORT_USDT) {
			fprintf(stderr, "scale: usdt: %s\n", uevent_reason());
			return 1;
		}
		if (threads < 1 || threads > MAX_THREADS)
			return 1;
		r = point(FLOOD, threads, 0, n, NULL);
		printf("flood %d threads %ld marks each: %.0f marks/s\n", threads, n, r);
		uevent_close();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--quick"))
		dur = 0.1;
	if (getenv("SCALE_REPEAT") && atoi(getenv("SCALE_REPEAT")) > 0)
		repeat = atoi(getenv("SCALE_REPEAT"));
	if (getenv("SCALE_SECONDS"))
		dur = atof(getenv("SCALE_SECONDS"));
	/* SCALE_THREADS=N: that point only (a profile of it) */
	only_t = getenv("SCALE_THREADS") ? atoi(getenv("SCALE_THREADS")) : 0;
	max = getenv("SCALE_MAX_THREADS") ? atol(getenv("SCALE_MAX_THREADS")) : 2 * ncpu;
	if (max < 1 || max > MAX_THREADS)
		max = 2 * ncpu;
	if (only_t > max && only_t <= MAX_THREADS)
		max = only_t;
	snprintf(tmp, sizeof(tmp), "%s/uevent-bench-scale-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	printf("# libuevent %s threads sweep on %ld CPUs (best of %d runs of %.2f s a point; "
	       "ratio = in all / 1 thread)\n", uevent_version(), ncpu, repeat, dur);
	printf("%-28s %7s %14s %14s %7s %10s\n", "path", "threads", "ops/s in all", "per thread",
	       "ratio", "CPU ns/op");
	for (p = DISABLED; p <= JIT_BATCHED; p++) {
		double one = 0, r, cpu;
		int ret;

		if (only && !wanted(only, path_name[p]))
			continue;
		for (t = 1; t <= max; t = t * 2 > max && t < max ? (int)max : t * 2) {
			if (only_t && t != only_t)
				continue;
			total_ops = 0;
			if ((ret = setup((enum path)p, t)) < 0) {
				printf("%-28s skipped: %s\n", path_name[p], strerror(-ret));
				teardown((enum path)p, t);
				break;
			}
			r = best((enum path)p, t, dur, &cpu);
			teardown((enum path)p, t);
			if (t == 1)
				one = r;
			printf("%-28s %7d %14.0f %14.0f %7.2f %10.1f\n", path_name[p], t, r, r / t,
			       one ? r / one : 0, cpu);
			/* for `perf stat` of one point (SCALE_THREADS): syscalls per operation */
			fprintf(stderr, "# %s, %d threads: %.0f operations in all runs\n",
				path_name[p], t, total_ops);
			fflush(stdout);
		}
	}
	rmdir(tmp);
	return 0;
}
