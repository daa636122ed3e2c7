/* symbolize-scale.c - what reading a perf map and a jitdump costs the symbolizer as they
 * grow: n and 4n entries timed in the same run, the ratio printed (linear and n log n
 * give about 4x-4.5x; the quadratic insertion this replaced gave about 16x).
 * Usage: symbolize-scale [N [ascending]] (N 50000). Exit 1 if 4N cost more than 5x N.
 *
 * symbolize-scale long [N [BASE_LIBDIR]] (N 20000): one long entry (1 TiB) among N short
 * ones, in a perf map, a jitdump and a stream of JIT uevents, and N lookups, one at each
 * short entry; a perf map of N lines that all reach past 2^64; then 200000 entries with
 * no long one, and as many lookups. With a
 * BASE_LIBDIR (another build's libuevent.so.0), each row runs with that library too, the
 * two in turn, and the ratio is printed. Exit 1 if a lookup named the wrong entry. */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include <time.h>
#include "internal.h"	/* the jitdump's records */
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

/* ---- long: one long entry among short ones ------------------------------------------ */

enum row { MAP_FIRST, MAP_LAST, MAP_APART, MAP_WRAP, DUMP_FIRST, STREAM_FIRST, MAP_NONE,
	   DUMP_NONE, STREAM_NONE, NROWS };

static const char *const row_name[NROWS] = {
	"perf map, long line first",	/* the short lines over it end it */
	"perf map, long line last",	/* it ends them all: each lookup names it */
	"perf map, long line apart",	/* below them, touching none */
	"perf map, every line past 2^64",	/* none ends another: the lowest named */
	"jitdump, long load first",	/* the loads over it end it */
	"JIT uevents, long load first",	/* a lookup after each load, as report does */
	"perf map, no long line",
	"jitdump, no long load",
	"JIT uevents, no long load",
};

#define LONG		(1ull << 40)
#define LONG_AT		0x7f0000000000ull	/* addr_of(0): at or below every short one */
#define NORMAL_N	200000

/* A JIT_CODE_LOAD of pid's, its code not in the file (a size is what the record says) */
static int jd_load(FILE *f, uint64_t t, uint64_t addr, uint64_t size, uint64_t index,
		   const char *name)
{
	struct jd_prefix p = { JIT_CODE_LOAD, 0, t };
	uint64_t v[5] = { (uint64_t)PID << 32 | PID, addr, addr, size, index };
	size_t n = strlen(name) + 1;

	p.total_size = (uint32_t)(sizeof(p) + sizeof(v) + n);
	return fwrite(&p, sizeof(p), 1, f) == 1 && fwrite(v, sizeof(v), 1, f) == 1 &&
	       fwrite(name, n, 1, f) == 1 ? 0 : -1;
}

/* Row r's input, made before the clock starts: the perf map, or the jitdump (path). */
static void long_input(enum row r, long n, char *dump, size_t cap)
{
	char path[600];
	FILE *f;
	long i;

	if (r == MAP_FIRST || r == MAP_LAST || r == MAP_APART || r == MAP_WRAP || r == MAP_NONE) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
		if (!(f = fopen(path, "w")))
			exit(2);
		if (r == MAP_FIRST)
			fprintf(f, "%llx %llx long_first\n", LONG_AT, LONG);
		for (i = 0; i < n; i++)
			fprintf(f, "%llx %s fn_%ld\n", (unsigned long long)addr_of(i),
				r == MAP_WRAP ? "ffffffffffffffff" : "40", i);
		if (r == MAP_LAST)
			fprintf(f, "%llx %llx long_last\n", LONG_AT, LONG);
		if (r == MAP_APART)
			fprintf(f, "%llx %llx long_apart\n", LONG_AT - LONG, LONG);
		if (fclose(f))
			exit(2);
	} else if (r == DUMP_FIRST || r == DUMP_NONE) {
		struct jd_header h = { .magic = JITDUMP_MAGIC, .version = JITDUMP_VERSION,
				       .total_size = sizeof(h), .elf_mach = 62, .pid = PID };
		char name[32];
		int bad;

		snprintf(dump, cap, "%s/jit-%d.dump", dir, PID);
		if (!(f = fopen(dump, "w")))
			exit(2);
		bad = fwrite(&h, sizeof(h), 1, f) != 1 ||
		      (r == DUMP_FIRST && jd_load(f, 1, LONG_AT, LONG, 1ull << 40, "long_first"));
		for (i = 0; !bad && i < n; i++) {
			snprintf(name, sizeof(name), "jfn_%ld", i);
			bad = jd_load(f, 2 + (uint64_t)i, addr_of(i), 64, (uint64_t)i + 1, name);
		}
		if (fclose(f) || bad)
			exit(2);
	}
}

static unsigned char payload[512];

/* A JIT uevent's load of pid's at time t. */
static void jit_uevent(struct uevent_perf_record *rec, uint64_t t, uint64_t addr,
		       uint64_t size, uint64_t index, const char *name)
{
	struct uevent_jit_code_load l = { addr, size, index, name, (uint32_t)strlen(name) };
	ssize_t k = uevent_jit_code_load_encode(payload, sizeof(payload), &l);

	memset(rec, 0, sizeof(*rec));
	rec->sz = sizeof(*rec);
	rec->type = PERF_RECORD_UEVENT;
	rec->body = UEVENT_BODY_UEVENT;
	rec->id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	rec->id.pid = rec->id.tid = PID;
	rec->id.time = t;
	rec->u.uevent.sz = sizeof(rec->u.uevent);
	rec->u.uevent.type = UEVENT_TYPE_JIT_CODE_LOAD;
	rec->u.uevent.size = k > 0 ? (uint32_t)k : 0;
	rec->u.uevent.data = payload;
	rec->u.uevent.id = rec->id;
}

/* Whether a lookup of short entry i's byte 8 named what row r should. */
static int long_named(enum row r, long i, const struct uevent_symbol *sym)
{
	char want[32];

	if (r == MAP_LAST)
		return !strcmp(sym->name, "long_last");
	if (r == MAP_WRAP)	/* addr_of(0): the lowest */
		return !strcmp(sym->name, "fn_0");
	snprintf(want, sizeof(want), r == DUMP_FIRST || r == DUMP_NONE || r == STREAM_FIRST ||
		 r == STREAM_NONE ? "jfn_%ld" : "fn_%ld", i);
	return sym->offset == 8 && !strcmp(sym->name, want);
}

/*
 * Row r run here: its input made, then on the clock a fresh symbolizer reads it and
 * names each short entry (a stream: feeds each load, then names it). CPU seconds, or -1
 * if a lookup named the wrong entry.
 */
static double long_row(enum row r, long n)
{
	UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = dir, .flags = UEVENT_SYMBOLIZER_NO_KERNEL |
			       UEVENT_SYMBOLIZER_NO_DEMANGLE);
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	struct uevent_perf_record rec;
	struct uevent_symbolizer *s;
	char dump[600], name[32];
	uint64_t t = UINT64_MAX;
	double t0;
	long i, bad = 0;

	if (r == STREAM_FIRST || r == STREAM_NONE)
		ascending = 1;	/* as a JIT's code heap hands them out */
	long_input(r, n, dump, sizeof(dump));
	t0 = cpu_now();
	s = uevent_symbolizer__new(&o);
	if (r == DUMP_FIRST || r == DUMP_NONE) {
		memset(&rec, 0, sizeof(rec));
		rec.sz = sizeof(rec);
		rec.type = PERF_RECORD_MMAP2;
		rec.body = UEVENT_BODY_MMAP;
		rec.id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
		rec.id.pid = rec.id.tid = rec.u.mmap.pid = rec.u.mmap.tid = PID;
		rec.id.time = 1;
		rec.u.mmap.addr = 0x10000;
		rec.u.mmap.len = 4096;
		rec.u.mmap.prot = PROT_READ | PROT_EXEC;
		rec.u.mmap.filename = dump;
		if (uevent_symbolizer__feed(s, &rec) != 1)
			return -1;
	}
	if (r == STREAM_FIRST) {
		jit_uevent(&rec, 1, LONG_AT, LONG, 1ull << 40, "long_first");
		uevent_symbolizer__feed(s, &rec);
	}
	for (i = 0; i < n; i++) {
		if (r == STREAM_FIRST || r == STREAM_NONE) {
			snprintf(name, sizeof(name), "jfn_%ld", i);
			jit_uevent(&rec, 2 + (uint64_t)i, addr_of(i), 64, (uint64_t)i + 1, name);
			if (uevent_symbolizer__feed(s, &rec) != 1)
				return -1;
			t = 2 + (uint64_t)i;
		}
		bad += uevent_symbolizer__lookup(s, PID, addr_of(i) + 8, t, &sym) < 0 ||
		       !long_named(r, i, &sym);
	}
	uevent_symbolizer__free(s);
	t0 = cpu_now() - t0;
	return bad ? -1 : t0 / 1e9;
}

/* Row r in a process of its own (self, exec'd), with lib's libuevent.so.0 first if lib:
 * its seconds; *so, the library it ran. */
static double long_run(const char *self, enum row r, long n, const char *lib, char *so,
		       size_t cap)
{
	char rs[16], ns[32], env[4096], line[1200];
	double d = -1;
	int fd[2], st;
	pid_t child;
	FILE *f;

	snprintf(rs, sizeof(rs), "%d", (int)r);
	snprintf(ns, sizeof(ns), "%ld", n);
	if (pipe(fd) < 0 || (child = fork()) < 0)
		exit(2);
	if (child == 0) {
		const char *old = getenv("LD_LIBRARY_PATH");

		if (lib) {
			snprintf(env, sizeof(env), "%s%s%s", lib, old ? ":" : "", old ? old : "");
			setenv("LD_LIBRARY_PATH", env, 1);
		}
		dup2(fd[1], 1);
		close(fd[0]);
		execl(self, self, "long-row", rs, ns, dir, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (f && fgets(line, sizeof(line), f) && sscanf(line, "%lf %1023s", &d, so) == 2)
		so[cap - 1] = 0;
	if (f)
		fclose(f);
	if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		d = -1;
	return d;
}

static int long_main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 20000;
	const char *base = argc > 3 ? argv[3] : NULL;
	char self[4096], so[1024] = "", base_so[1024] = "", cmd[700];
	double best[NROWS][2];
	ssize_t k;
	int r, round, bad = 0;

	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 1000 || k < 0 || !mkdtemp(dir))
		return 2;
	self[k] = 0;
	for (r = 0; r < NROWS; r++) {
		long rn = r >= MAP_NONE ? NORMAL_N : n;

		best[r][0] = best[r][1] = 1e30;
		for (round = 0; round < 3; round++) {	/* best of 3, the two in turn */
			double d = long_run(self, (enum row)r, rn, NULL, so, sizeof(so)), e = 0;

			if (base)
				e = long_run(self, (enum row)r, rn, base, base_so, sizeof(base_so));
			if (d < 0 || e < 0) {
				fprintf(stderr, "%s: a lookup named the wrong entry, or failed\n",
					row_name[r]);
				bad = 1;
				break;
			}
			if (d < best[r][0])
				best[r][0] = d;
			if (e < best[r][1])
				best[r][1] = e;
		}
	}
	printf("CPU seconds, best of 3: read and name each short entry once\n");
	printf("this:  %s\n", so);
	if (base)
		printf("base:  %s\n", base_so);
	printf("%-30s %8s %10s", "", "entries", "this");
	if (base)
		printf(" %10s %9s", "base", "base/this");
	printf("\n");
	for (r = 0; r < NROWS; r++) {
		printf("%-30s %8ld %10.4f", row_name[r], r >= MAP_NONE ? (long)NORMAL_N : n,
		       best[r][0]);
		if (base)
			printf(" %10.4f %8.2fx", best[r][1], best[r][1] / best[r][0]);
		printf("\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return bad;
}

/* The library this process runs, as the dynamic linker found it. */
static const char *this_so(void)
{
	Dl_info info;

	return dladdr((void *)uevent_symbolizer__new, &info) && info.dli_fname ?
	       info.dli_fname : "?";
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000;

	if (argc > 1 && !strcmp(argv[1], "long"))
		return long_main(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "long-row")) {	/* long_run's child */
		double d;

		snprintf(dir, sizeof(dir), "%s", argv[4]);
		d = long_row((enum row)atoi(argv[2]), atol(argv[3]));
		printf("%.6f %s\n", d, this_so());
		return d < 0;
	}

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
