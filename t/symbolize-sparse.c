/* symbolize-sparse.c - a perf map and a jitdump that are big sparse files (a few real
 * entries, then a hole), and a jitdump whose records are 60 MiB each (their code or data
 * a hole): the symbolizer still names the entries and its memory stays near what it
 * parsed, not what the files' or the records' sizes could hold; a load that says more
 * code than its record holds names nothing. Needs no privileges. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "internal.h"	/* the jitdump's records */

#include "tap.h"
#include "uevent.h"

#define PID	4848
#define LIMIT	(32L << 10)	/* KiB a lookup may add: the entries here need a few */
#define BIG_LIMIT (1L << 10)	/* KiB reading 60 MiB records may add: a name's buffer */

/*
 * Peak RSS counts only the pages written, and glibc maps a big block without writing it:
 * run under MALLOC_PERTURB_, which fills each block malloc hands out, so that what the
 * symbolizer allocates is resident and ru_maxrss sees it. VmSize sees it either way.
 */
static long maxrss_kib(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/* VmSize, or (peak) the most it was since the fork */
static long vm_kib(int peak)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, peak ? "VmPeak: %ld kB" : "VmSize: %ld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static const char *name_at(struct uevent_symbolizer *s, uint32_t pid, uint64_t addr,
			   uint64_t t)
{
	struct uevent_symbol sym = { .sz = sizeof(sym) };

	return uevent_symbolizer__lookup(s, pid, addr, t, &sym) == 0 ? sym.name : "(none)";
}

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* What a part found, written by the child that ran it. */
struct result {
	int	done, resolved, exact;
	long	rss, vm;		/* KiB the reading added: peak RSS, address space */
};

static void perf_map_part(const char *dir, struct result *res)
{
	char path[600];
	struct uevent_symbolizer *s;
	long r0, v0;
	FILE *f;
	int i;

	/* 64 MiB: 4M lines of 16 bytes, the most the old reservation took */
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, PID);
	f = fopen(path, "w");
	for (i = 0; f && i < 100; i++)
		fprintf(f, "%llx 40 sparse_fn_%d\n", 0x7f0000100000ull + 0x40ull * i, i);
	if (!f || fclose(f) || truncate(path, 64L << 20) < 0)
		return;
	{
		UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = dir,
				       .flags = UEVENT_SYMBOLIZER_NO_KERNEL);

		s = uevent_symbolizer__new(&o);
		r0 = maxrss_kib();
		v0 = vm_kib(0);
		res->resolved = is(name_at(s, PID, 0x7f0000100000ull + 0x40 * 99 + 8, 0),
				   "sparse_fn_99");	/* reads the map */
		res->rss = maxrss_kib() - r0;
		res->vm = vm_kib(0) - v0;
		res->exact = is(name_at(s, PID, 0x7f0000100000ull + 0x40 * 7, 0), "sparse_fn_7") &&
			     is(name_at(s, PID, 0x7f0000100000ull + 0x40 * 100, 0), "(none)");
		uevent_symbolizer__free(s);
	}
	res->done = 1;
}

/* Feeds s the MMAP2 of pid's jitdump at dump, which reads it: what that read cost goes
 * into res (peak: VmPeak's growth, else VmSize's). The feed's result. */
static int feed_dump(struct uevent_symbolizer *s, uint32_t pid, const char *dump, int peak,
		     struct result *res)
{
	struct uevent_perf_record r;
	long r0, v0;
	int err;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.type = PERF_RECORD_MMAP2;
	r.body = UEVENT_BODY_MMAP;
	r.id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	r.id.pid = r.id.tid = r.u.mmap.pid = r.u.mmap.tid = pid;
	r.id.time = 1;
	r.u.mmap.addr = 0x10000;
	r.u.mmap.len = 4096;
	r.u.mmap.prot = PROT_READ | PROT_EXEC;
	r.u.mmap.filename = dump;
	r0 = maxrss_kib();
	v0 = vm_kib(peak);
	err = uevent_symbolizer__feed(s, &r);
	res->rss = maxrss_kib() - r0;
	res->vm = vm_kib(peak) - v0;
	return err;
}

/* dir's jitdump of PID (its path into dump), begun with its header: its descriptor,
 * or -1. */
static int dump_create(const char *dir, char *dump, size_t n)
{
	struct jd_header h = { .magic = JITDUMP_MAGIC, .version = JITDUMP_VERSION,
			       .total_size = sizeof(h), .elf_mach = 62, .pid = PID };
	int fd;

	snprintf(dump, n, "%s/jit-%d.dump", dir, PID);
	fd = open(dump, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A symbolizer (no kernel, no perf maps) fed pid's jitdump at dump (feed_dump): *err
 * the feed's result. */
static struct uevent_symbolizer *dump_symbolizer(uint32_t pid, const char *dump, int peak,
						 struct result *res, int *err)
{
	UEVENT_SYMBOLIZER_OPTS(o, .flags = UEVENT_SYMBOLIZER_NO_KERNEL |
			       UEVENT_SYMBOLIZER_NO_PERF_MAP);
	struct uevent_symbolizer *s = uevent_symbolizer__new(&o);

	*err = feed_dump(s, pid, dump, peak, res);
	return s;
}

static void jitdump_part(const char *dir, struct result *res)
{
	UEVENT_JIT_OPTS(jo, .dir = dir, .flags = UEVENT_JIT_NO_UEVENT | UEVENT_JIT_NO_PERF_MAP);
	static const unsigned char code[64] = { 0xc3 };
	const uint64_t X = 0x7f0000800000ull;
	const uint32_t pid = (uint32_t)getpid();
	struct uevent_jit *j = uevent_jit__open(&jo);
	struct uevent_symbolizer *s;
	char dump[600], name[32];
	int i, err = j ? 0 : -1;

	for (i = 0; !err && i < 100; i++) {
		snprintf(name, sizeof(name), "dumped_fn_%d", i);
		err = uevent_jit__code_load(j, name, X + 64 * (uint64_t)i, 64, code);
	}
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	uevent_jit__close(j);
	/* 256 MiB: 4M loads of 64 bytes, the most the old reservation took */
	if (err || truncate(dump, 256L << 20) < 0)
		return;
	s = dump_symbolizer(pid, dump, 0, res, &err);
	res->resolved = err == 1 && is(name_at(s, pid, X + 64 * 99 + 4, UINT64_MAX), "dumped_fn_99");
	res->exact = is(name_at(s, pid, X + 64 * 3, UINT64_MAX), "dumped_fn_3") &&
		     is(name_at(s, pid, X + 64 * 100, UINT64_MAX), "(none)") &&
		     is(name_at(s, pid, X + 64 * 3, 0), "(none)");
	uevent_symbolizer__free(s);
	res->done = 1;
}

/* A record of the jitdump being written: its prefix, then n bytes of body at off. */
static int jd_put(int fd, off_t *off, uint32_t id, uint32_t total, uint64_t t,
		  const void *body, size_t n)
{
	struct jd_prefix p = { .id = id, .total_size = total, .timestamp = t };

	if (pwrite(fd, &p, sizeof(p), *off) != (ssize_t)sizeof(p) ||
	    pwrite(fd, body, n, *off + (off_t)sizeof(p)) != (ssize_t)n)
		return -1;
	*off += total;
	return 0;
}

/* A JIT_CODE_LOAD of name at addr, of size bytes of code, of which the record holds
 * held (a hole): written are the fixed part and the name. */
static int jd_load_held(int fd, off_t *off, uint64_t t, uint64_t addr, uint64_t size,
			uint64_t held, uint64_t index, const char *name)
{
	unsigned char b[40 + 1024];
	uint32_t pid = PID;
	size_t n = strlen(name) + 1;

	if (n > sizeof(b) - 40)
		return -1;
	memcpy(b, &pid, 4);
	memcpy(b + 4, &pid, 4);
	memcpy(b + 8, &addr, 8);
	memcpy(b + 16, &addr, 8);
	memcpy(b + 24, &size, 8);
	memcpy(b + 32, &index, 8);
	memcpy(b + 40, name, n);
	return jd_put(fd, off, JIT_CODE_LOAD, (uint32_t)(sizeof(struct jd_prefix) + 40 + n + held),
		      t, b, 40 + n);
}

/* ... that holds all of its code */
static int jd_load(int fd, off_t *off, uint64_t t, uint64_t addr, uint64_t size,
		   uint64_t index, const char *name)
{
	return jd_load_held(fd, off, t, addr, size, size, index, name);
}

#define BIG	(60u << 20)	/* under the 64 MiB a record may declare */

static void big_record_part(const char *dir, struct result *res)
{
	const uint64_t X = 0x7f0000800000ull;
	uint64_t unwind[3] = { BIG - 40, 0, BIG - 40 };
	struct uevent_symbolizer *s;
	char dump[600], after[400];
	off_t off = sizeof(struct jd_header);
	int fd, err;

	/* an UNWINDING_INFO (a kind the reader skips), a load of 60 MiB of code, a load
	 * whose name is longer than a read of one */
	memset(after, 'x', sizeof(after) - 1);
	after[sizeof(after) - 1] = 0;
	memcpy(after, "after_big_fn_", 13);
	fd = dump_create(dir, dump, sizeof(dump));
	err = fd < 0 || jd_put(fd, &off, JIT_CODE_UNWINDING_INFO, BIG, 1, unwind, sizeof(unwind)) ||
	      jd_load(fd, &off, 2, X, BIG - 64, 1, "big_fn") ||
	      jd_load(fd, &off, 3, X - 64, 64, 2, after) || ftruncate(fd, off) < 0;
	if (fd >= 0)
		close(fd);
	if (err)
		return;
	s = dump_symbolizer(PID, dump, 1, res, &err);
	res->resolved = err == 1 && is(name_at(s, PID, X + (BIG >> 1), UINT64_MAX), "big_fn") &&
			is(name_at(s, PID, X - 60, UINT64_MAX), after);
	res->exact = is(name_at(s, PID, X, UINT64_MAX), "big_fn") &&
		     is(name_at(s, PID, X + BIG - 65, UINT64_MAX), "big_fn") &&
		     is(name_at(s, PID, X + BIG - 64, UINT64_MAX), "(none)") &&
		     is(name_at(s, PID, X, 1), "(none)");
	uevent_symbolizer__free(s);
	res->done = 1;
}

/* A load whose code_size reaches past its record (it holds 16 bytes, it says 1 TiB) is
 * not named over that span, nor at all; the load after it is. */
static void short_code_part(const char *dir, struct result *res)
{
	const uint64_t X = 0x7f0000800000ull;
	struct uevent_symbolizer *s;
	char dump[600];
	off_t off = sizeof(struct jd_header);
	int fd, err;

	fd = dump_create(dir, dump, sizeof(dump));
	err = fd < 0 || jd_load_held(fd, &off, 1, X, 1ull << 40, 16, 1, "short_fn") ||
	      jd_load(fd, &off, 2, X - 4096, 64, 2, "after_short_fn") ||
	      ftruncate(fd, off) < 0;
	if (fd >= 0)
		close(fd);
	if (err)
		return;
	s = dump_symbolizer(PID, dump, 1, res, &err);
	res->resolved = err == 1 && is(name_at(s, PID, X - 4096 + 4, UINT64_MAX), "after_short_fn");
	res->exact = is(name_at(s, PID, X, UINT64_MAX), "(none)") &&
		     is(name_at(s, PID, X + (1u << 30), UINT64_MAX), "(none)") &&
		     is(name_at(s, PID, X - 4096 + 64, UINT64_MAX), "(none)");
	uevent_symbolizer__free(s);
	res->done = 1;
}

/* Runs part in a child: peak RSS is the process's, so each part starts from this small
 * one rather than from what the part before it reached. */
static void run_part(const char *what, void (*part)(const char *, struct result *),
		     const char *dir, long limit)
{
	struct result *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	if (res == MAP_FAILED || (pid = fork()) < 0) {
		skip(4, "cannot run a child");
		return;
	}
	if (!pid) {
		part(dir, res);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	if (!res->done) {
		skip(4, "cannot write a sparse file");
		return;
	}
	ok(res->resolved, "%s: its entries resolve", what);
	ok(res->exact, "%s: exactly (an entry at its start, nothing past the last)", what);
	ok(res->rss < limit, "%s: peak RSS grew %ld KiB (at most %ld)", what, res->rss, limit);
	ok(res->vm < limit, "%s: address space grew %ld KiB (at most %ld)", what, res->vm, limit);
	munmap(res, sizeof(*res));
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/uevent-symsparse-XXXXXX", cmd[128];

	(void)argc;
	if (!getenv("MALLOC_PERTURB_")) {	/* see maxrss_kib */
		setenv("MALLOC_PERTURB_", "165", 1);
		execv("/proc/self/exe", argv);
		diag("cannot run again under MALLOC_PERTURB_ (%s): RSS is what was written",
		     strerror(errno));
	}
	plan(16);
	if (!mkdtemp(dir)) {
		skip(16, "mkdtemp failed");
		return exit_status();
	}
	tap_cleanup(dir);
	run_part("a 64 MiB sparse perf map", perf_map_part, dir, LIMIT);
	run_part("a 256 MiB sparse jitdump", jitdump_part, dir, LIMIT);
	/* its peak: the old reader read each record whole into a buffer of its size */
	run_part("a jitdump of two 60 MiB records (peak)", big_record_part, dir, BIG_LIMIT);
	run_part("a jitdump load whose code_size is past its record", short_code_part, dir,
		 BIG_LIMIT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return exit_status();
}
