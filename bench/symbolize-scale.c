/* symbolize-scale.c - what reading a perf map and a jitdump costs the symbolizer as they
 * grow: n and 4n entries timed in the same run, the ratio printed (linear and n log n
 * give about 4x-4.5x; the quadratic insertion this replaced gave about 16x).
 * Usage: symbolize-scale [N [ascending]] (N 50000). Exit 1 if 4N cost more than 5x N. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include <time.h>
#include "uevent.h"

#define PID 4747

static char dir[] = "/tmp/uevent-bench-sym-XXXXXX";

/* This process's CPU time, in ns: on a shared machine, what other jobs take of the wall
 * clock is not ours (the I/O here is from the page cache). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int ascending;

/* Entry i's address, 64 bytes apart, never shared: one after the other as a JIT's code
 * heap hands them out (ascending), or scattered by a multiplicative hash (the default:
 * the treap's walks then miss the cache as the entries grow). */
static uint64_t addr_of(long i)
{
	return 0x7f0000000000ull +
	       (ascending ? (uint64_t)i : (uint64_t)i * 2654435761u % 0x40000000u) * 64;
}

static void write_map(long n)
{
	char path[600];
	FILE *f;
	long i;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%llx 40 fn_%ld\n", (unsigned long long)addr_of(i), i);
	fclose(f);
}

/*
 * CPU seconds, best of 5, for a fresh symbolizer (fed rec first, if any) to name entry
 * n/2 of pid at time t: each run in a child of its own, so every run starts as a reader
 * does, with none of its memory mapped yet. In one process, glibc keeps what a run of
 * fewer than ~32 MiB frees for the next run and returns a larger one's to the kernel
 * (its dynamic mmap threshold): n ran warm, 4n cold, and the page faults of 4n alone
 * (dear under a hypervisor) made the ratio 10-40x.
 */
static double time_naming(const struct uevent_symbolizer_opts *o,
			  const struct uevent_perf_record *rec, uint32_t pid, uint64_t t, long n,
			  const char *what)
{
	double best = 1e30;
	int r;

	for (r = 0; r < 5; r++) {
		int fd[2], st;
		double d = -1;
		pid_t child;

		if (pipe(fd) < 0 || (child = fork()) < 0) {
			perror("fork");
			exit(1);
		}
		if (child == 0) {
			struct uevent_symbol sym = { .sz = sizeof(sym) };
			double t0 = cpu_now();
			struct uevent_symbolizer *s = uevent_symbolizer__new(o);

			if ((rec && uevent_symbolizer__feed(s, rec) != 1) ||
			    uevent_symbolizer__lookup(s, pid, addr_of(n / 2) + 8, t, &sym) < 0 ||
			    sym.offset != 8) {
				fprintf(stderr, "%s of %ld: entry %ld not named\n", what, n, n / 2);
				_exit(1);
			}
			d = cpu_now() - t0;
			_exit(write(fd[1], &d, sizeof(d)) == sizeof(d) ? 0 : 1);
		}
		close(fd[1]);
		if (read(fd[0], &d, sizeof(d)) != sizeof(d))
			d = -1;
		close(fd[0]);
		if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || d < 0)
			exit(1);
		if (d < best)
			best = d;
	}
	return best / 1e9;
}

/* The perf map read whole (by a first lookup in anonymous memory). */
static double time_map(long n)
{
	UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = dir, .flags = UEVENT_SYMBOLIZER_NO_KERNEL);

	write_map(n);
	return time_naming(&o, NULL, PID, 1, n, "perf map");
}

/* A jitdump of n loads, written by the JIT API, read when its MMAP is fed. */
static double time_jitdump(long n)
{
	UEVENT_JIT_OPTS(jo, .dir = dir, .flags = UEVENT_JIT_NO_UEVENT | UEVENT_JIT_NO_PERF_MAP);
	static const unsigned char code[64] = { 0xc3 };
	struct uevent_jit *j = uevent_jit__open(&jo);
	struct uevent_perf_record rec = { .sz = sizeof(rec) };
	char dump[600], name[32];
	double t;
	long i;

	if (!j) {
		fprintf(stderr, "uevent_jit__open: %s\n", uevent_reason());
		exit(1);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "jfn_%ld", i);
		uevent_jit__code_load(j, name, addr_of(i), 64, code);
	}
	snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
	uevent_jit__close(j);
	rec.type = PERF_RECORD_MMAP2;
	rec.body = UEVENT_BODY_MMAP;
	rec.id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	rec.id.pid = rec.id.tid = rec.u.mmap.pid = rec.u.mmap.tid = (uint32_t)getpid();
	rec.id.time = 1;
	rec.u.mmap.addr = 0x10000;
	rec.u.mmap.len = 4096;
	rec.u.mmap.prot = PROT_READ | PROT_EXEC;
	rec.u.mmap.filename = dump;
	t = time_naming(NULL, &rec, (uint32_t)getpid(), UINT64_MAX, n, "jitdump");
	unlink(dump);
	return t;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000;

	ascending = argc > 2 && !strcmp(argv[2], "ascending");
	double m1, m4, j1, j4;
	char cmd[128];
	int bad;

	if (n < 1000 || !mkdtemp(dir))
		return 2;
	m1 = time_map(n);
	m4 = time_map(4 * n);
	j1 = time_jitdump(n);
	j4 = time_jitdump(4 * n);
	printf("%s addresses\n%-26s %10s %10s %10s %8s\n", ascending ? "ascending" : "scattered",
	       "CPU time, best of 5", "n", "seconds", "4n seconds", "ratio");
	printf("%-26s %10ld %10.3f %10.3f %7.2fx\n", "perf map lines", n, m1, m4, m4 / m1);
	printf("%-26s %10ld %10.3f %10.3f %7.2fx\n", "jitdump loads", n, j1, j4, j4 / j1);
	bad = m4 / m1 > 5 || j4 / j1 > 5;
	printf("4x the entries cost %s 5x the time\n", bad ? "MORE than" : "at most");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return bad;
}
