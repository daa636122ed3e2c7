/* jit-api.c - the JIT hooks' C API without perf: jitdump parsed back field by field,
 * perf-map lines, uevent markers via the file transport, safe creation, threads, fork,
 * and write errors. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"
#include "tap.h"
#include "files.h"

static char tmp[256];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Walks the records after the header; returns how many, -1 if the chain is broken.
 * A file still open ends in the zeros of its reserved space (perf stops at a
 * total_size of 0): allowed only if every byte from there on is zero. */
static int count_records(const unsigned char *buf, size_t len, uint32_t id, int *of_id)
{
	size_t off = 40, k;
	int n = 0;

	*of_id = 0;
	while (off < len) {
		uint32_t size = u32(buf + off + 4);

		if (size == 0) {
			for (k = off; k < len; k++)
				if (buf[k])
					return -1;
			break;
		}
		if (size < 16 || off + size > len || size % 8)
			return -1;
		if (u32(buf + off) == id)
			(*of_id)++;
		off += size;
		n++;
	}
	return n;
}

static struct uevent_jit *open_in(const char *sub, const char *map, unsigned int flags)
{
	char dir[512];
	UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map, .flags = flags);

	snprintf(dir, sizeof(dir), "%s/%s", tmp, sub);
	return uevent_jit__open(&o);
}

static void test_format(void)
{
	static unsigned char code[64] __attribute__((aligned(16)));
	static const unsigned char eh[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct uevent_jit_debug_entry de[2] = {
		{ 0, 10, 0, "a.lua", 0 }, { 0, 11, 2, "b.lua", 0 } };
	char map[512], line[600], dirp[512];
	uint64_t t0, t1, addr = (uint64_t)(uintptr_t)code, off;
	unsigned char *buf, *p;
	struct uevent_jit *j;
	struct stat st;
	size_t len;
	FILE *f;
	int n, k;

	for (n = 0; n < (int)sizeof(code); n++)
		code[n] = (unsigned char)(n * 7);
	snprintf(map, sizeof(map), "%s/fmt.map", tmp);
	t0 = mono_ns();
	j = open_in("fmt", map, 0);
	ok(j != NULL, "open with dir and perf-map overrides");
	if (!j) {
		skip(30, "no session");
		return;
	}
	snprintf(dirp, sizeof(dirp), "%s/fmt", tmp);
	ok(stat(dirp, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	   "missing dir created 0700");
	snprintf(line, sizeof(line), "%s/fmt/jit-%d.dump", tmp, (int)getpid());
	ok(uevent_jit__dump_path(j) && !strcmp(uevent_jit__dump_path(j), line),
	   "dump is DIR/jit-PID.dump");
	ok(stat(line, &st) == 0 && (st.st_mode & 0777) == 0600, "dump file is 0600");
	{
		/* the r-x mapping of the dump is what perf record logs and inject keys on */
		FILE *m = fopen("/proc/self/maps", "r");
		char l[1024];
		int seen = 0;

		while (m && fgets(l, sizeof(l), m))
			if (strstr(l, line) && strstr(l, " r-xp "))
				seen = 1;
		if (m)
			fclose(m);
		ok(seen, "dump is mapped r-xp (MAP_PRIVATE, PROT_READ|PROT_EXEC)");
	}
	de[0].addr = addr;
	de[1].addr = addr + 8;
	ok(uevent_jit__debug_info(j, addr, de, 2) == 0, "debug_info");
	ok(uevent_jit__unwinding_info(j, addr, eh, sizeof(eh), 8, 32) == 0, "unwinding_info");
	ok(uevent_jit__code_load(j, "fn_a", addr, 40, code) == 0, "code_load with bytes");
	ok(uevent_jit__code_move(j, addr, addr + 16, 0) == 0, "code_move");
	ok(uevent_jit__code_load(j, "fn_b", addr, 8, NULL) == 0, "code_load, bytes from addr");
	ok(uevent_jit__code_unload(j, addr, 0) == 0, "code_unload");
	ok(uevent_jit__close(j) == 0, "close");
	t1 = mono_ns();

	buf = slurp(line, &len);
	ok(buf && len >= 40, "dump read back (%zu bytes)", len);
	if (!buf || len < 40) {
		skip(14, "no dump");
		free(buf);
		return;
	}
	ok(u32(buf) == 0x4A695444 && u32(buf + 4) == 1 && u32(buf + 8) == 40,
	   "header: magic JiTD, version 1, total_size 40");
#if defined(__x86_64__)
	ok(u32(buf + 12) == EM_X86_64, "header: elf_mach EM_X86_64");
#else
	ok(u32(buf + 12) != 0, "header: elf_mach set");
#endif
	ok(u32(buf + 16) == 0 && u32(buf + 20) == (uint32_t)getpid() && u64(buf + 32) == 0,
	   "header: pad 0, pid, flags 0 (CLOCK_MONOTONIC, no arch timestamps)");
	ok(u64(buf + 24) >= t0 && u64(buf + 24) <= t1, "header: timestamp in CLOCK_MONOTONIC");
	n = count_records(buf, len, 0, &k);
	ok(n == 6 && k == 2, "6 whole 8-aligned records, 2 loads (got %d, %d)", n, k);
	/* debug info, unwinding info, load a, move, load b, close */
	p = buf + 40;
	ok(u32(p) == 2 && u64(p + 16) == addr && u64(p + 24) == 2 &&
	   u64(p + 32) == addr && u32(p + 40) == 10 && u32(p + 44) == 0 &&
	   !strcmp((char *)p + 48, "a.lua") && u64(p + 54) == addr + 8 &&
	   u32(p + 62) == 11 && u32(p + 66) == 2 && !strcmp((char *)p + 70, "b.lua"),
	   "DEBUG_INFO: code_addr, nr_entry, entries (addr, line, discrim, file)");
	off = u32(p + 4);
	p += off;
	ok(u32(p) == 4 && u64(p + 16) == sizeof(eh) && u64(p + 24) == 8 && u64(p + 32) == 32 &&
	   !memcmp(p + 40, eh, sizeof(eh)),
	   "UNWINDING_INFO: sizes and data, written right before its load");
	p += u32(p + 4);
	ok(u32(p) == 0 && u32(p + 16) == (uint32_t)getpid() &&
	   u32(p + 20) == (uint32_t)syscall(SYS_gettid) && u64(p + 24) == addr &&
	   u64(p + 32) == addr && u64(p + 40) == 40 && u64(p + 48) > 0 &&
	   !strcmp((char *)p + 56, "fn_a") && !memcmp(p + 61, code, 40) &&
	   u32(p + 4) == 104,
	   "CODE_LOAD: pid, tid, vma, code_addr, size, index, name, bytes, padded size");
	k = (int)u64(p + 48);
	ok(u64(p + 8) >= u64(buf + 24) && u64(p + 8) <= t1, "CODE_LOAD timestamp in order");
	p += u32(p + 4);
	ok(u32(p) == 1 && u32(p + 4) == 64 && u64(p + 24) == addr + 16 &&
	   u64(p + 32) == addr && u64(p + 40) == addr + 16 && u64(p + 48) == 40 &&
	   u64(p + 56) == (uint64_t)k,
	   "CODE_MOVE: vma, old, new, size, the load's code_index");
	p += u32(p + 4);
	ok(u32(p) == 0 && u64(p + 48) > (uint64_t)k && !strcmp((char *)p + 56, "fn_b") &&
	   !memcmp(p + 61, code, 8), "second CODE_LOAD: new index, bytes copied from addr");
	p += u32(p + 4);
	ok(u32(p) == 3 && u32(p + 4) == 16 && p + 16 == buf + len, "CODE_CLOSE ends the file");
	free(buf);

	f = fopen(map, "r");
	n = 0;
	{
		char want[3][128];

		snprintf(want[0], 128, "%llx 28 fn_a\n", (unsigned long long)addr);
		snprintf(want[1], 128, "%llx 28 fn_a\n", (unsigned long long)addr + 16);
		snprintf(want[2], 128, "%llx 8 fn_b\n", (unsigned long long)addr);
		while (f && fgets(line, sizeof(line), f))
			if (n < 3 && !strcmp(line, want[n]))
				n++;
			else
				n = 100;
	}
	if (f)
		fclose(f);
	ok(n == 3, "perf-map: 'START SIZE name' in hex, for loads and moves");
}

static void test_marker(void)
{
	static unsigned char code[32];
	struct uevent_jit_debug_entry de = { 0, 7, 0, "m.lua", 0 };
	uint64_t addr = (uint64_t)(uintptr_t)code;
	struct uevent_file_reader *rd;
	struct uevent_record r = { .sz = sizeof(r) };
	struct uevent_jit *j;
	char path[512];
	int got = 0, ret;
	UEVENT_OPTS(uo, .transport = UEVENT_TRANSPORT_FILE, .path = path,
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	snprintf(path, sizeof(path), "%s/marker.perf.data", tmp);
	ret = uevent_open(&uo);
	ok(ret == UEVENT_TRANSPORT_FILE, "file transport for the markers");
	j = open_in("mk", NULL, UEVENT_JIT_NO_PERF_MAP);
	de.addr = addr;
	uevent_jit__debug_info(j, addr, &de, 1);
	uevent_jit__code_load(j, "TRACE_1 m.lua:7", addr, sizeof(code), code);
	uevent_jit__code_move(j, addr, addr + 4, 0);
	uevent_jit__code_unload(j, addr + 4, 0);
	uevent_jit__close(j);
	uevent_close();
	rd = uevent_file_reader__open(path);
	while (rd && uevent_file_reader__next(rd, &r) == 1) {
		if (r.type == UEVENT_TYPE_JIT_CODE_LOAD) {
			struct uevent_jit_code_load l;

			if (uevent_jit_code_load_decode(r.data, r.size, UEVENT_BO_HOST, &l) == 0 &&
			    l.code_addr == addr && l.code_size == sizeof(code) && l.code_index &&
			    !strcmp(l.name, "TRACE_1 m.lua:7") && r.id.pid == (uint32_t)getpid())
				got |= 1;
		} else if (r.type == UEVENT_TYPE_JIT_DEBUG_INFO) {
			struct uevent_jit_debug_info d;
			struct uevent_jit_debug_entry e;
			uint32_t o = 0;

			if (uevent_jit_debug_info_decode(r.data, r.size, UEVENT_BO_HOST, &d) == 0 &&
			    d.code_addr == addr && d.nr_entry == 1 &&
			    uevent_jit_debug_entry_next(&d, UEVENT_BO_HOST, &o, &e) == 1 &&
			    e.line == 7 && !strcmp(e.file, "m.lua"))
				got |= 2;
		} else if (r.type == UEVENT_TYPE_JIT_CODE_MOVE) {
			struct uevent_jit_code_move m;

			if (uevent_jit_code_move_decode(r.data, r.size, UEVENT_BO_HOST, &m) == 0 &&
			    m.old_addr == addr && m.new_addr == addr + 4 &&
			    m.code_size == sizeof(code))
				got |= 4;
		} else if (r.type == UEVENT_TYPE_JIT_CODE_UNLOAD) {
			struct uevent_jit_code_unload u;

			if (uevent_jit_code_unload_decode(r.data, r.size, UEVENT_BO_HOST, &u) == 0 &&
			    u.code_addr == addr + 4 && u.code_size == sizeof(code))
				got |= 8;
		}
	}
	uevent_file_reader__close(rd);
	ok(got & 1, "marker decodes as JIT_CODE_LOAD with addr, size, index, name, pid");
	ok(got & 2, "marker decodes as JIT_DEBUG_INFO with the line table");
	ok(got & 4, "marker decodes as JIT_CODE_MOVE");
	ok(got & 8, "marker decodes as JIT_CODE_UNLOAD");
}

static void test_safety(void)
{
	char dir[512], path[600], target[512], buf[64], map[512];
	struct uevent_jit *j;
	int fd, n;
	UEVENT_JIT_OPTS(o, .dir = dir, .flags = UEVENT_JIT_NO_PERF_MAP);

	snprintf(dir, sizeof(dir), "%s/safe", tmp);
	mkdir(dir, 0700);
	snprintf(target, sizeof(target), "%s/victim", tmp);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	n = write(fd, "precious\n", 9);
	close(fd);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	n = symlink(target, path);
	j = uevent_jit__open(&o);
	ok(!j && errno == EEXIST, "symlink at the dump path refused (errno %d)", errno);
	fd = open(target, O_RDONLY);
	n = fd >= 0 ? (int)read(fd, buf, sizeof(buf)) : -1;
	close(fd);
	ok(n == 9 && !memcmp(buf, "precious\n", 9), "symlink target untouched");
	unlink(path);
	/* someone else's dump of the same name (another pid namespace, a dead process) */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	n = write(fd, "other\n", 6);
	close(fd);
	j = uevent_jit__open(&o);
	ok(!j && errno == EEXIST, "existing dump not clobbered (EEXIST)");
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? (int)read(fd, buf, sizeof(buf)) : -1;
	close(fd);
	ok(n == 6, "existing dump's contents kept");
	unlink(path);

	snprintf(map, sizeof(map), "%s/link.map", tmp);
	n = symlink(target, map);
	{
		UEVENT_JIT_OPTS(o2, .perf_map_path = map, .flags = UEVENT_JIT_NO_JITDUMP);

		j = uevent_jit__open(&o2);
		ok(!j && errno == ELOOP && strstr(uevent_reason(), "link.map"),
		   "symlink at the perf-map path refused (ELOOP), the reason names it: %s",
		   uevent_reason());
	}
	/* The default /tmp/perf-PID.map: a planted symlink is not followed. */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	if (access(map, F_OK) == 0) {
		skip(1, "a /tmp/perf-PID.map of ours already exists");
	} else {
		UEVENT_JIT_OPTS(o4, .flags = UEVENT_JIT_NO_JITDUMP);

		n = symlink(target, map);
		j = uevent_jit__open(&o4);
		fd = open(target, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, buf, sizeof(buf)) : -1;
		close(fd);
		ok(!j && errno == ELOOP && n == 9 && !memcmp(buf, "precious\n", 9),
		   "symlink /tmp/perf-PID.map -> victim: ELOOP, victim untouched");
		uevent_jit__close(j);
		unlink(map);
	}
	/* The default /tmp/perf-PID.map: use it only when it is ours. */
	if (access(map, F_OK) == 0) {
		skip(3, "a /tmp/perf-PID.map of ours already exists");
		return;
	}
	fd = open(map, O_WRONLY | O_CREAT | O_EXCL, 0600);
	n = write(fd, "1000 10 earlier_jit\n", 20);
	close(fd);
	{
		UEVENT_JIT_OPTS(o3, .flags = UEVENT_JIT_NO_JITDUMP);
		static unsigned char c[4];

		j = uevent_jit__open(&o3);
		ok(j && uevent_jit__code_load(j, "mine", (uintptr_t)c, 4, c) == 0 &&
		   uevent_jit__close(j) == 0, "own /tmp/perf-PID.map appended to");
		fd = open(map, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, buf, sizeof(buf)) : -1;
		close(fd);
		ok(n > 20 && !memcmp(buf, "1000 10 earlier_jit\n", 20),
		   "earlier lines (another JIT in this process) kept");
		if (geteuid() == 0 && chown(map, 65534, 65534) == 0) {
			j = uevent_jit__open(&o3);
			ok(!j && errno == EPERM, "/tmp/perf-PID.map owned by another user refused");
		} else {
			skip(1, "needs root to plant another user's file");
		}
	}
	unlink(map);
}


/* 1 if path is a directory with nothing in it. */
static int dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n == 0;
}

/*
 * uevent_jit__open() in a child that first plants a FIFO at the perf-map path (given, or
 * its own /tmp/perf-PID.map), with a reader or without. The alarm is a watchdog, not a
 * measurement: an open() that blocks fails the test instead of hanging it. Returns the
 * errno of the failed open, 0 if it opened, -1 if the child did not finish.
 */
static int map_fifo_in_child(const char *given, int with_reader)
{
	char map[512];
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		UEVENT_JIT_OPTS(o, .perf_map_path = given, .flags = UEVENT_JIT_NO_JITDUMP);
		struct uevent_jit *j;
		int err;

		alarm(60);
		if (given)
			snprintf(map, sizeof(map), "%s", given);
		else
			snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
		unlink(map);
		if (mkfifo(map, 0600) < 0)
			_exit(100);
		if (with_reader && open(map, O_RDONLY | O_NONBLOCK) < 0)
			_exit(101);
		j = uevent_jit__open(&o);
		err = j ? 0 : errno;
		unlink(map);
		_exit(err);
	}
	waitpid(pid, &st, 0);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	unlink(map);
	if (given)
		unlink(given);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Foreign things at the perf-map path and in the jitdump directory chain. */
static void test_planted(void)
{
	char dir[512], sub[600], map[512], base[512], dbg[600], jit[600];
	struct uevent_jit *j;
	struct stat st;
	int r;

	snprintf(map, sizeof(map), "%s/fifo.map", tmp);
	r = map_fifo_in_child(map, 0);
	ok(r == EINVAL, "FIFO as perf map, no reader: EINVAL at once, no hang (%d)", r);
	r = map_fifo_in_child(map, 1);
	ok(r == EINVAL, "FIFO as perf map, with a reader: EINVAL (%d)", r);
	r = map_fifo_in_child(NULL, 0);
	ok(r == EINVAL, "FIFO planted at /tmp/perf-PID.map: EINVAL at once, no hang (%d)", r);
	r = map_fifo_in_child(NULL, 1);
	ok(r == EINVAL, "FIFO planted at /tmp/perf-PID.map, with a reader: EINVAL (%d)", r);

	/* A given directory that is a symlink (to a directory of ours, even). */
	snprintf(dir, sizeof(dir), "%s/real", tmp);
	snprintf(sub, sizeof(sub), "%s/linkdir", tmp);
	mkdir(dir, 0700);
	r = symlink(dir, sub);
	{
		UEVENT_JIT_OPTS(o, .dir = sub, .flags = UEVENT_JIT_NO_PERF_MAP);
		char slash[700];
		UEVENT_JIT_OPTS(o2, .dir = slash, .flags = UEVENT_JIT_NO_PERF_MAP);

		j = uevent_jit__open(&o);
		ok(!j && errno == ELOOP, "dir that is a symlink: ELOOP");
		snprintf(slash, sizeof(slash), "%s/", sub);
		j = uevent_jit__open(&o2);
		ok(!j && errno == ELOOP && dir_empty(dir),
		   "dir given as 'symlink/': ELOOP, nothing made in its target");
	}
	/* The default chain: $JITDUMPDIR/.debug/jit, each refused if planted. */
	snprintf(base, sizeof(base), "%s/base", tmp);
	snprintf(dbg, sizeof(dbg), "%s/.debug", base);
	snprintf(jit, sizeof(jit), "%s/.debug/jit", base);
	mkdir(base, 0755);
	setenv("JITDUMPDIR", base, 1);
	{
		UEVENT_JIT_OPTS(o, .flags = UEVENT_JIT_NO_PERF_MAP);

		r = symlink(dir, dbg);
		j = uevent_jit__open(&o);
		ok(!j && errno == ELOOP && dir_empty(dir),
		   "$JITDUMPDIR/.debug a symlink: ELOOP, nothing made in its target");
		unlink(dbg);
		r = mkfifo(dbg, 0600);
		j = uevent_jit__open(&o);
		ok(!j && errno == ENOTDIR, "$JITDUMPDIR/.debug a FIFO: ENOTDIR, no hang");
		unlink(dbg);
		mkdir(dbg, 0700);
		if (geteuid() == 0 && mkdir(jit, 0700) == 0 && chown(jit, 65534, 65534) == 0) {
			j = uevent_jit__open(&o);
			ok(!j && errno == EPERM && dir_empty(jit),
			   "$JITDUMPDIR/.debug/jit of another user: EPERM, nothing made in it");
			rmdir(jit);
			snprintf(sub, sizeof(sub), "%s/theirs", tmp);
			mkdir(sub, 0700);
			r = chown(sub, 65534, 65534);
			{
				UEVENT_JIT_OPTS(o3, .dir = sub, .flags = UEVENT_JIT_NO_PERF_MAP);

				j = uevent_jit__open(&o3);
				ok(!j && errno == EPERM && dir_empty(sub),
				   "given dir of another user: EPERM, nothing made in it");
			}
		} else {
			skip(2, "needs root to plant another user's directory");
		}
		/* A failed open leaves neither its dump nor its directory behind. */
		{
			UEVENT_JIT_OPTS(o4, .perf_map_path = "/dev/null");

			j = uevent_jit__open(&o4);
			ok(!j && errno == EINVAL && stat(jit, &st) == 0 && dir_empty(jit),
			   "perf map on a device: EINVAL, the new dump and its dir removed");
		}
		j = uevent_jit__open(&o);
		ok(j != NULL, "the chain of our own directories still works");
		uevent_jit__close(j);
	}
	unsetenv("JITDUMPDIR");
}

#define THREADS 8
#define PER_THREAD 2000
static struct uevent_jit *tj;
static unsigned char tcode[THREADS][PER_THREAD][16];
static int tfunc;		/* code_load_func: a DEBUG_INFO record before each load */
static int tbatched;		/* UEVENT_JIT_BUFFER_JITDUMP | _PERF_MAP: staged per thread */
static int tfinished;		/* loaders done */

static void *loader(void *arg)
{
	int t = (int)(intptr_t)arg, i, bad = 0;
	char name[64];

	for (i = 0; i < PER_THREAD; i++) {
		snprintf(name, sizeof(name), "thread%d_fn%d", t, i);
		memset(tcode[t][i], t * 16 + i, 16);
		if (tfunc)
			bad += uevent_jit__code_load_func(tj, name, "f", (uintptr_t)tcode[t][i], 16,
							  NULL, "t.lua", (uint32_t)i) != 0;
		else
			bad += uevent_jit__code_load(tj, name, (uintptr_t)tcode[t][i], 16,
						     NULL) != 0;
	}
	__atomic_add_fetch(&tfinished, 1, __ATOMIC_RELEASE);
	return (void *)(intptr_t)bad;
}

/* The perf map's lines name the dump's loads in the dump's order (perf inject and the
 * in-stream names see one order), each debug-info load right after its DEBUG_INFO. */
static void check_order(const unsigned char *buf, size_t len, const char *map)
{
	size_t off, k = 0;
	int same = 1, paired = 1, prev_debug = 0;
	char line[256], nm[64];
	unsigned long long a, s;
	FILE *f = fopen(map, "r");

	for (off = 40; buf && off + 16 <= len && u32(buf + off + 4); off += u32(buf + off + 4)) {
		if (u32(buf + off) == 2) {	/* JIT_CODE_DEBUG_INFO */
			prev_debug = 1;
			continue;
		}
		if (u32(buf + off))
			continue;
		paired &= !tfunc || prev_debug;
		prev_debug = 0;
		if (!f || !fgets(line, sizeof(line), f))
			line[0] = 0;
		if (sscanf(line, "%llx %llx %63s", &a, &s, nm) != 3 ||
		    strncmp(nm, (const char *)buf + off + 56, strlen(nm)) ||
		    a != u64(buf + off + 32))
			same = 0;
		k++;
	}
	if (f)
		fclose(f);
	ok(same && k == THREADS * PER_THREAD, "%s: perf-map lines in the dump's load order",
	   tfunc ? "code_load_func" : "code_load");
	ok(paired, "%s: each load right after its own DEBUG_INFO",
	   tfunc ? "code_load_func" : "code_load");
}

static void test_threads(void)
{
	pthread_t th[THREADS];
	char map[512];
	unsigned char *buf;
	size_t len, off;
	int t, bad = 0, n, loads, lines = 0, good = 1;
	void *r;
	FILE *f;

	snprintf(map, sizeof(map), "%s/threads%d%d.map", tmp, tfunc, tbatched);
	tj = open_in(tbatched ? tfunc ? "thrfb" : "thrb" : tfunc ? "thrf" : "thr", map,
		     tbatched ? UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP : 0);
	tfinished = 0;
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, loader, (void *)(intptr_t)t);
	/* batched: each thread's records wait in its stage; merges into the batch while
	 * they load (a stage that fills, and these flushes) keep the file in time order */
	if (tbatched) {
		while (__atomic_load_n(&tfinished, __ATOMIC_ACQUIRE) < THREADS) {
			bad += uevent_jit__flush(tj) != 0;
			sched_yield();
		}
	}
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], &r);
		bad += (int)(intptr_t)r;
	}
	ok(bad == 0, "%s%d threads x %d code_loads succeed", tbatched ? "batched: " : "",
	   THREADS, PER_THREAD);
	if (tbatched)
		uevent_jit__flush(tj);
	buf = slurp(uevent_jit__dump_path(tj), &len);
	/* each thread's loads wait in a stage of its own: a lookup from another thread
	 * finds them all, and a later load at an address (from this thread's stage)
	 * replaces the earlier one (from the loader's), whichever is settled first */
	{
		int found = 0, t_, i_, again = 0;

		bad = uevent_jit__code_load(tj, "reloaded", (uintptr_t)tcode[3][7], 16, NULL);
		for (t_ = 0; t_ < THREADS; t_++)
			for (i_ = 0; i_ < PER_THREAD; i_++)
				found += uevent_jit__code_unload(tj, (uintptr_t)tcode[t_][i_], 0) == 0;
		for (t_ = 0; t_ < THREADS; t_++)
			again += uevent_jit__code_unload(tj, (uintptr_t)tcode[t_][0], 0) == -ENOENT;
		ok(bad == 0 && found == THREADS * PER_THREAD && again == THREADS,
		   "%s: every thread's load found once from another thread (%d of %d), then gone",
		   tfunc ? "code_load_func" : "code_load", found, THREADS * PER_THREAD);
	}
	uevent_jit__close(tj);
	/* every load in the dump exactly once */
	{
		static unsigned char seen[THREADS][PER_THREAD];
		int once = 1, th_, i_;

		memset(seen, 0, sizeof(seen));
		for (off = 40; buf && off + 16 <= len && u32(buf + off + 4); off += u32(buf + off + 4))
			if (u32(buf + off) == 0 &&
			    sscanf((char *)buf + off + 56, "thread%d_fn%d", &th_, &i_) == 2 &&
			    th_ >= 0 && th_ < THREADS && i_ >= 0 && i_ < PER_THREAD)
				seen[th_][i_]++;
		for (th_ = 0; th_ < THREADS; th_++)
			for (i_ = 0; i_ < PER_THREAD; i_++)
				once &= seen[th_][i_] == 1;
		ok(buf && once, "%s: every load in the dump exactly once",
		   tfunc ? "code_load_func" : "code_load");
	}
	n = buf ? count_records(buf, len, 0, &loads) : -1;
	if (tfunc && n > 0)
		n /= 2;		/* a DEBUG_INFO record each */
	ok(n == THREADS * PER_THREAD && loads == n, "dump holds %d whole load records (got %d)",
	   THREADS * PER_THREAD, n);
	check_order(buf, len, map);
	/* each record's code bytes belong to its own name: no interleaving */
	for (off = 40; buf && n > 0 && off < len && u32(buf + off + 4); off += u32(buf + off + 4)) {
		int th_, i_;

		if (u32(buf + off) != 0)
			continue;
		if (sscanf((char *)buf + off + 56, "thread%d_fn%d", &th_, &i_) != 2 ||
		    buf[off + 56 + strlen((char *)buf + off + 56) + 1] !=
		    (unsigned char)(th_ * 16 + i_))
			good = 0;
	}
	ok(good, "every load record's bytes match its name");
	/* loads overlap outside the session's lock now: the order of the file is still
	 * the order of time (perf inject applies them in it), and indexes stay unique */
	{
		uint64_t last = 0, *idx = calloc(THREADS * PER_THREAD, sizeof(*idx));
		int rising = 1, k = 0, unique = 1, a;

		for (off = 40; buf && n > 0 && off < len && u32(buf + off + 4);
		     off += u32(buf + off + 4)) {
			rising &= u64(buf + off + 8) >= last;
			last = u64(buf + off + 8);
			if (u32(buf + off) == 0 && idx && k < THREADS * PER_THREAD)
				idx[k++] = u64(buf + off + 48);
		}
		for (a = 1; idx && a < k; a++) {	/* indexes are taken in blocks: sort */
			uint64_t v = idx[a];
			int b = a - 1;

			for (; b >= 0 && idx[b] > v; b--)
				idx[b + 1] = idx[b];
			idx[b + 1] = v;
		}
		for (a = 1; a < k; a++)
			unique &= idx[a] != idx[a - 1];
		ok(rising && n > 0, "timestamps rise in file order across the threads");
		ok(idx && k == THREADS * PER_THREAD && unique, "%d code indexes, all distinct", k);
		free(idx);
	}
	free(buf);
	f = fopen(map, "r");
	{
		char line[256];
		unsigned long long a, s;
		char nm[64];

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %llx %63s", &a, &s, nm) == 3 && s == 16 &&
			    !strncmp(nm, "thread", 6) && line[strlen(line) - 1] == '\n')
				lines++;
	}
	if (f)
		fclose(f);
	ok(lines == THREADS * PER_THREAD, "perf-map has %d whole lines (got %d)",
	   THREADS * PER_THREAD, lines);
}

static const unsigned char *find_load(const unsigned char *buf, size_t len, const char *name,
				      const unsigned char **prev);

/* A load at an address a move took stays the newer (its code index in the next move),
 * batched or not: the table orders them by time. */
static void test_replace_after_move(unsigned int flags)
{
	static unsigned char c[64];
	const unsigned char *r, *prev;
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	unsigned char *buf;
	char dump[600];
	size_t len, off;
	uint64_t idx = 0, moved = 1;

	j = open_in(flags ? "repmb" : "repm", NULL, flags | UEVENT_JIT_NO_PERF_MAP);
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	uevent_jit__code_load(j, "first", a, 16, c);
	uevent_jit__code_move(j, a, a + 16, 16);
	uevent_jit__code_load(j, "second", a + 16, 16, c);
	uevent_jit__code_move(j, a + 16, a + 32, 16);
	uevent_jit__close(j);
	buf = slurp(dump, &len);
	if (buf && (r = find_load(buf, len, "second", &prev)))
		idx = u64(r + 48);
	for (off = 40; buf && off + 16 <= len && u32(buf + off + 4); off += u32(buf + off + 4))
		if (u32(buf + off) == 1 && u64(buf + off + 32) == a + 16)
			moved = u64(buf + off + 56);
	ok(idx && moved == idx, "%s: a load where a move put code replaces it (index %llu, "
	   "the move's %llu)", flags ? "batched" : "unbatched", (unsigned long long)idx,
	   (unsigned long long)moved);
	free(buf);
}

/* Staged (batched) loads wait in their thread's stage: a move of one goes after it in the
 * file all the same, and a child forked meanwhile replays it. */
static void test_staged_move(void)
{
	static unsigned char c[32];
	const unsigned char *r, *prev;
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	unsigned char *buf;
	size_t len, off, at_load = 0, at_move = 0;
	uint64_t last = 0;
	int rising = 1, st = -1;
	pid_t pid;

	j = open_in("stmove", NULL, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_NO_PERF_MAP);
	uevent_jit__code_load(j, "staged_fn", a, 16, c);
	ok(uevent_jit__code_move(j, a, a + 16, 16) == 0, "staged load, then its move");
	pid = fork();
	if (pid == 0) {
		char cdump[600];
		int rc = uevent_jit__code_load(j, "child_fn", a + 8, 8, c) | uevent_jit__close(j);

		snprintf(cdump, sizeof(cdump), "%s/stmove/jit-%d.dump", tmp, (int)getpid());
		buf = slurp(cdump, &len);
		r = buf ? find_load(buf, len, "staged_fn", &prev) : NULL;
		_exit(rc || !r || u64(r + 24) != a + 16 || !find_load(buf, len, "child_fn", &prev));
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "a child replays the staged load at its new address, then its own");
	uevent_jit__close(j);
	{
		char dump[600];

		snprintf(dump, sizeof(dump), "%s/stmove/jit-%d.dump", tmp, (int)getpid());
		buf = slurp(dump, &len);
	}
	for (off = 40; buf && off + 16 <= len && u32(buf + off + 4); off += u32(buf + off + 4)) {
		rising &= u64(buf + off + 8) >= last;
		last = u64(buf + off + 8);
		if (u32(buf + off) == 0 && !strcmp((char *)buf + off + 56, "staged_fn"))
			at_load = off;
		if (u32(buf + off) == 1)
			at_move = off;
	}
	ok(buf && at_load && at_move > at_load && rising,
	   "the parent's dump: the load, then its move, timestamps rising");
	free(buf);
}

/* The load record named name in a dump (NULL if none); *prev is the record before it. */
static const unsigned char *find_load(const unsigned char *buf, size_t len, const char *name,
				      const unsigned char **prev)
{
	size_t off = 40, last = 0;

	while (off + 16 <= len && u32(buf + off + 4)) {
		if (u32(buf + off) == 0 && !strcmp((const char *)buf + off + 56, name)) {
			*prev = last ? buf + last : NULL;
			return buf + off;
		}
		last = off;
		off += u32(buf + off + 4);
	}
	return NULL;
}

static void test_fork(void)
{
	static unsigned char c[64];
	struct uevent_jit_debug_entry e = { 0, 42, 0, "parent.lua", 0 };
	const unsigned char *r, *prev = NULL;
	char cdump[512], pdump[512], cmap[64];
	unsigned char *buf;
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	size_t len;
	pid_t pid;
	int st, n, loads;

	memset(c, 0xc3, sizeof(c));
	j = open_in("fork", NULL, 0);
	e.addr = a;
	uevent_jit__debug_info(j, a, &e, 1);
	uevent_jit__code_load(j, "parent_fn", a, 8, c);
	uevent_jit__code_load(j, "gone_fn", a + 8, 8, c);
	uevent_jit__code_unload(j, a + 8, 0);
	uevent_jit__code_load(j, "moved_fn", a + 16, 8, c);
	uevent_jit__code_move(j, a + 16, a + 24, 8);
	snprintf(pdump, sizeof(pdump), "%s", uevent_jit__dump_path(j));
	pid = fork();
	if (pid == 0) {
		int rc = uevent_jit__code_load(j, "child_fn", a + 32, 8, c);

		rc |= uevent_jit__close(j);
		_exit(rc ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child's code_load and close succeed");
	snprintf(cdump, sizeof(cdump), "%s/fork/jit-%d.dump", tmp, (int)pid);
	buf = slurp(cdump, &len);
	n = buf ? count_records(buf, len, 0, &loads) : -1;
	ok(buf && u32(buf + 20) == (uint32_t)pid && n == 5 && loads == 3,
	   "child wrote its own jit-CHILDPID.dump: header pid, 3 loads, 5 records (got %d, %d)",
	   n, loads);
	r = buf ? find_load(buf, len, "parent_fn", &prev) : NULL;
	ok(r && u32(r + 16) == (uint32_t)pid && u64(r + 24) == a && u64(r + 40) == 8 &&
	   r[56 + 10] == 0xc3 && prev && u32(prev) == 2 && u64(prev + 16) == a &&
	   u32(prev + 40) == 42 && !strcmp((const char *)prev + 48, "parent.lua"),
	   "inherited load replayed: child's pid, address, bytes, its DEBUG_INFO before it");
	r = buf ? find_load(buf, len, "moved_fn", &prev) : NULL;
	ok(r && u64(r + 24) == a + 24 && !memmem(buf, len, "gone_fn", 7),
	   "replay: moved code at its new address, unloaded code left out");
	r = buf ? find_load(buf, len, "child_fn", &prev) : NULL;
	ok(r && u32(r + 16) == (uint32_t)pid, "child's own load follows");
	free(buf);
	snprintf(cmap, sizeof(cmap), "/tmp/perf-%d.map", (int)pid);
	buf = slurp(cmap, &len);
	ok(buf && len && memmem(buf, len, " parent_fn\n", 11) && memmem(buf, len, " moved_fn\n", 10) &&
	   memmem(buf, len, " child_fn\n", 10) && !memmem(buf, len, "gone_fn", 7),
	   "child's perf-CHILDPID.map names the inherited code too");
	free(buf);
	unlink(cmap);
	uevent_jit__code_load(j, "parent_fn2", a + 40, 4, c);
	uevent_jit__close(j);
	buf = slurp(pdump, &len);
	n = buf ? count_records(buf, len, 0, &loads) : -1;
	ok(n == 7 && loads == 4 && !memmem(buf, len, "child_fn", 8),
	   "parent's dump has only the parent's records (got %d, %d)", n, loads);
	free(buf);
	snprintf(cmap, sizeof(cmap), "/tmp/perf-%d.map", (int)getpid());
	unlink(cmap);
}

/* Many loads at once, as a tracing JIT makes them: the table takes them late (a lookup
 * only), with the same answers: a second load at an address replaces
 * the first, move and unload find a load just made, unload_all marks each address
 * once, and a moved code_load_func keeps its name (stored with its line record). */
static void test_many(void)
{
	static unsigned char area[700];
	uintptr_t a = (uintptr_t)area;
	struct uevent_file_reader *rd;
	struct uevent_record r = { .sz = sizeof(r) };
	struct uevent_jit *j;
	char path[512], map[512], name[32], line[128];
	unsigned char *buf;
	size_t len;
	int i, bad = 0, unloads = 0;
	UEVENT_OPTS(uo, .transport = UEVENT_TRANSPORT_FILE, .path = path,
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	snprintf(path, sizeof(path), "%s/many.perf.data", tmp);
	snprintf(map, sizeof(map), "%s/many.map", tmp);
	memset(area, 0xc3, sizeof(area));
	uevent_open(&uo);
	j = open_in("many", map, 0);
	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "TRACE_%d", i);
		bad |= uevent_jit__code_load_func(j, name, "f", a + (uintptr_t)i, 1, NULL, "x.lua",
						  (uint32_t)i + 1);
	}
	bad |= uevent_jit__code_load(j, "again", a, 2, NULL);
	ok(!bad, "600 code_load_func and a second load at the first address");
	ok(uevent_jit__code_unload(j, a, 0) == 0 && uevent_jit__code_unload(j, a, 0) == -ENOENT,
	   "the second load replaced the first: one unload, then ENOENT");
	bad = uevent_jit__code_load_func(j, "TRACE_700", "g", a + 650, 1, NULL, "y.lua", 9);
	ok(!bad && uevent_jit__code_move(j, a + 650, a + 660, 0) == 0 &&
	   uevent_jit__code_unload(j, a + 650, 0) == -ENOENT,
	   "move finds a load just made");
	ok(uevent_jit__code_unload_all(j) == 0 && uevent_jit__code_unload(j, a + 660, 0) == -ENOENT,
	   "unload_all drops loads not yet in the table");
	uevent_jit__close(j);
	uevent_close();
	rd = uevent_file_reader__open(path);
	while (rd && uevent_file_reader__next(rd, &r) == 1)
		unloads += r.type == UEVENT_TYPE_JIT_CODE_UNLOAD;
	uevent_file_reader__close(rd);
	/* 1 unload, 599 + the moved one in unload_all */
	ok(unloads == 601, "one unload marker per address (%d of 601)", unloads);
	snprintf(line, sizeof(line), "%lx 1 TRACE_700 g y.lua:9\n", (unsigned long)(a + 660));
	buf = slurp(map, &len);
	ok(buf && memmem(buf, len, line, strlen(line)), "the moved code keeps its name: %s", line);
	free(buf);
}

static int map_lines(const char *map);
static int dump_loads(const char *dump);

/* What each load keeps for later (its name and line record: for a move's perf-map line
 * and a fork child's replay) comes from 64 KiB slabs, given back as loads go. Across
 * several slabs, unloads one by one and all at once, slabs used again, a move and a
 * fork child's replay, every name stays whole. */
static void test_slabs(void)
{
	static unsigned char area[8192];
	const unsigned char *r, *prev = NULL;
	uintptr_t a = (uintptr_t)area;
	char map[512], name[80], line[160], dump[512];
	struct uevent_jit *j;
	unsigned char *buf;
	size_t len;
	int i, bad = 0, status, n, loads = 0, flushed;
	pid_t pid;

	memset(area, 0xc3, sizeof(area));
	snprintf(map, sizeof(map), "%s/slabs.map", tmp);
	j = open_in("slabs", map, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP);
	for (i = 0; j && i < 3000; i++) {	/* ~150 bytes each: 7 slabs */
		snprintf(name, sizeof(name), "TRACE_%d_%040d", i, i);
		bad |= uevent_jit__code_load_func(j, name, "f", a + (uintptr_t)i, 1, NULL,
						  "slab.lua", (uint32_t)i + 1);
	}
	/* Both batched: the lines come from the dump's batch as it is written (at each 256
	 * KiB boundary), not from the loads: 3000 loads of ~184 bytes cross two. */
	n = map_lines(map);
	ok(n > 2000 && n < 3000, "both batched: perf-map lines for the records written so far "
	   "(%d of 3000), whole lines", n);
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	flushed = uevent_jit__flush(j);
	n = map_lines(map);	/* apart: ok()'s arguments are not sequenced */
	ok(flushed == 0 && n == 3000 && dump_loads(dump) == 3000,
	   "flush: the dump holds all 3000 loads and the map their lines (%d)", n);
	errno = 0;
	ok(uevent_jit__flush(NULL) == -EFAULT && errno == EFAULT, "flush(NULL): -EFAULT");
	for (i = 0; j && i < 3000; i += 2)
		bad |= uevent_jit__code_unload(j, a + (uintptr_t)i, 0);
	ok(j && !bad && uevent_jit__code_unload_all(j) == 0,
	   "3000 loads over several slabs, every other one unloaded, then the rest at once");
	for (i = 0; j && i < 3000; i++) {
		snprintf(name, sizeof(name), "SECOND_%d", i);
		bad |= uevent_jit__code_load_func(j, name, "g", a + (uintptr_t)i, 1, NULL,
						  "two.lua", (uint32_t)i + 1);
	}
	ok(j && !bad && uevent_jit__code_move(j, a + 2999, a + 5000, 0) == 0,
	   "3000 more loads once all were freed, and a move");
	pid = fork();
	if (pid == 0)	/* its first call replays every code still loaded, in its own dump */
		_exit(uevent_jit__code_load(j, "child_fn", a + 6000, 1, NULL) == 0 &&
		      uevent_jit__close(j) == 0 ? 0 : 1);
	status = -1;
	waitpid(pid, &status, 0);
	snprintf(dump, sizeof(dump), "%s/slabs/jit-%d.dump", tmp, (int)pid);
	buf = slurp(dump, &len);
	n = buf ? count_records(buf, len, 0, &loads) : -1;
	r = buf ? find_load(buf, len, "SECOND_1500 g two.lua:1501", &prev) : NULL;
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && loads == 3001 && n == 6002 && r &&
	   prev && u32(prev) == 2 && u32(prev + 40) == 1501,
	   "the fork child replays all 3000 with names and line records (%d loads, %d records)",
	   loads, n);
	r = buf ? find_load(buf, len, "SECOND_2999 g two.lua:3000", &prev) : NULL;
	ok(r && u64(r + 32) == a + 5000 && prev && u64(prev + 16) == a + 5000 &&
	   u64(prev + 32) == a + 5000, "... the moved one at its new address, its line too");
	free(buf);
	unlink(dump);
	ok(uevent_jit__code_load(j, "two\nlines\r", a + 7000, 1, NULL) == 0 &&
	   uevent_jit__close(j) == 0, "close with the slabs in use");
	/* 6000 loads, the move, the name with a newline; the child's 3000 replayed and
	 * its own (it reopens the given path) */
	n = map_lines(map);
	ok(n == 9003, "closed: every load has its perf-map line, whole (%d of 9003)", n);
	buf = slurp(map, &len);
	snprintf(line, sizeof(line), "%lx 1 TRACE_2999_%040d f slab.lua:3000\n",
		 (unsigned long)(a + 2999), 2999);
	ok(buf && memmem(buf, len, line, strlen(line)), "perf map: a name from the first slabs");
	snprintf(line, sizeof(line), "%lx 1 SECOND_2999 g two.lua:3000\n", (unsigned long)(a + 5000));
	ok(buf && memmem(buf, len, line, strlen(line)), "perf map: the moved one's name");
	snprintf(line, sizeof(line), "\n%lx 1 two lines \n", (unsigned long)(a + 7000));
	ok(buf && memmem(buf, len, line, strlen(line)),
	   "perf map, batched: a newline or CR in a name is a space (one line a symbol)");
	free(buf);

	/* exit() without close: the atexit flush makes the lines from the batch too */
	snprintf(map, sizeof(map), "%s/slabs-exit.map", tmp);
	pid = fork();
	if (pid == 0) {
		UEVENT_JIT_OPTS(o, .dir = dump, .perf_map_path = map,
			       .flags = UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_BUFFER_PERF_MAP);
		struct uevent_jit *cj;

		snprintf(dump, sizeof(dump), "%s/slabs-exit", tmp);
		cj = uevent_jit__open(&o);
		exit(cj && uevent_jit__code_load_func(cj, "TRACE_9", "h", a, 1, NULL, "e.lua", 3) == 0
		     ? 0 : 1);
	}
	status = -1;
	waitpid(pid, &status, 0);
	buf = slurp(map, &len);
	snprintf(line, sizeof(line), "%lx 1 TRACE_9 h e.lua:3\n", (unsigned long)a);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf &&
	   memmem(buf, len, line, strlen(line)), "both batched, exit() without close: the line");
	free(buf);
}

/* The buffered dump allocates the file's blocks 1 MiB ahead (FALLOC_FL_KEEP_SIZE): the
 * file holds every record, and once closed no block past its end. */
static void test_dump_alloc(void)
{
	static unsigned char code[1000];
	struct uevent_jit *j;
	char dump[512];
	unsigned char *buf;
	struct stat st;
	size_t len;
	int i, bad = 0, loads = 0, n;

	memset(code, 0x90, sizeof(code));
	j = open_in("alloc", NULL, UEVENT_JIT_NO_PERF_MAP | UEVENT_JIT_BUFFER_JITDUMP);
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	for (i = 0; i < 2500; i++)	/* 2.6 MiB of records */
		bad |= uevent_jit__code_load(j, "alloc_fn", (uintptr_t)code + (uintptr_t)i, 1000, code);
	ok(j && !bad && uevent_jit__close(j) == 0, "2500 buffered loads of 1000 bytes, close");
	buf = slurp(dump, &len);
	n = buf ? count_records(buf, len, 0, &loads) : -1;
	ok(n == 2501 && loads == 2500, "the dump holds them all, and CODE_CLOSE (%d records)", n);
	free(buf);
	if (stat(dump, &st) != 0)
		memset(&st, 0xff, sizeof(st));
	ok(st.st_size > 0 && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size + 64 * 1024,
	   "closed: no blocks allocated past its end (%lld bytes in blocks, %lld long)",
	   (long long)st.st_blocks * 512, (long long)st.st_size);
}

/* code_load_line (one call: name + line record), unload_all, batched perf-map lines. */
static void test_line_and_batch(void)
{
	static unsigned char c[32];
	const unsigned char *r, *prev = NULL;
	char map[512], dump[512], want[256];
	unsigned char *buf;
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	struct stat st;
	size_t len;

	snprintf(map, sizeof(map), "%s/batch.map", tmp);
	j = open_in("batch", map, UEVENT_JIT_BUFFER_PERF_MAP);
	ok(j && uevent_jit__code_load_line(j, "TRACE_7", a, 8, c, "app.lua", 34) == 0 &&
	   uevent_jit__code_load_line(j, "plain", a + 8, 8, c, NULL, 0) == 0,
	   "code_load_line, with and without a file");
	ok(j && uevent_jit__code_load_func(j, "TRACE_46", "mix", a + 16, 8, c, "app.lua", 4) == 0 &&
	   uevent_jit__code_load_func(j, "TRACE_47", "mix", a + 24, 8, NULL, NULL, 0) == 0 &&
	   uevent_jit__code_load_func(j, "TRACE_48", "", a + 32, 8, c, "app.lua", 5) == 0,
	   "code_load_func: with a file, without, with an empty function name");
	ok(stat(map, &st) == 0 && st.st_size == 0, "batched perf-map: nothing written yet");
	ok(j && uevent_jit__code_unload_all(j) == 0 && uevent_jit__code_move(j, a, a + 16, 0) ==
	   -ENOENT && uevent_jit__code_unload(j, a + 8, 0) == -ENOENT,
	   "unload_all: every code gone");
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	uevent_jit__close(j);
	buf = slurp(map, &len);
	snprintf(want, sizeof(want),
		 "%lx 8 TRACE_7 app.lua:34\n%lx 8 plain\n%lx 8 TRACE_46 mix app.lua:4\n"
		 "%lx 8 TRACE_47 mix\n%lx 8 TRACE_48 app.lua:5\n", (unsigned long)a,
		 (unsigned long)a + 8, (unsigned long)a + 16, (unsigned long)a + 24,
		 (unsigned long)a + 32);
	ok(buf && len == strlen(want) && !memcmp(buf, want, len),
	   "close writes the batched lines: 'TRACE_7 app.lua:34', 'plain', 'TRACE_46 mix app.lua:4'...");
	free(buf);
	buf = slurp(dump, &len);
	r = buf ? find_load(buf, len, "TRACE_7 app.lua:34", &prev) : NULL;
	ok(r && prev && u32(prev) == 2 && u64(prev + 16) == a && u64(prev + 24) == 1 &&
	   u64(prev + 32) == a && u32(prev + 40) == 34 && !strcmp((const char *)prev + 48, "app.lua"),
	   "jitdump: DEBUG_INFO (addr, line 34, app.lua) right before the load it names");
	prev = NULL;
	r = buf ? find_load(buf, len, "TRACE_46 mix app.lua:4", &prev) : NULL;
	ok(r && prev && u32(prev) == 2 && u64(prev + 16) == a + 16 && u32(prev + 40) == 4 &&
	   !strcmp((const char *)prev + 48, "app.lua") && u64(r + 8) == u64(prev + 8),
	   "jitdump: code_load_func's DEBUG_INFO before its load, with the load's timestamp");
	free(buf);
}

/* UEVENT_JIT_BUFFER_JITDUMP: records wait in memory, and are in the file, whole, after
 * close, and at exit for a session never closed. */
static void test_buffered_dump(void)
{
	static unsigned char c[64];
	const unsigned char *r, *prev = NULL;
	char dump[600], cdump[512];	/* dump: cdump and "/jit-PID.dump" */
	unsigned char *buf;
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	struct stat st;
	size_t len;
	pid_t pid;
	int status, i, ok1 = 1;

	j = open_in("bufdump", NULL, UEVENT_JIT_BUFFER_JITDUMP | UEVENT_JIT_NO_PERF_MAP);
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	for (i = 0; j && i < 8; i++)
		ok1 &= uevent_jit__code_load_func(j, "TRACE_1", "f", a + 8 * (uintptr_t)i, 8, c,
						  "b.lua", 10 + (uint32_t)i) == 0;
	ok(j && ok1 && stat(dump, &st) == 0 && st.st_size == 40,
	   "buffered jitdump: 8 loads, the file holds only its header until written");
	ok(uevent_jit__close(j) == 0, "close writes them");
	buf = slurp(dump, &len);
	r = buf ? find_load(buf, len, "TRACE_1 f b.lua:17", &prev) : NULL;
	ok(r && prev && u32(prev) == 2 && u32(prev + 40) == 17 && len == (size_t)(r - buf) +
	   u32(r + 4) + 16 && u32(r + u32(r + 4)) == 3,
	   "... whole: the last load with its DEBUG_INFO, then CODE_CLOSE, then the end");
	free(buf);

	/* A child that opens a buffered session and exits without closing it. */
	snprintf(cdump, sizeof(cdump), "%s/bufexit", tmp);
	pid = fork();
	if (pid == 0) {
		UEVENT_JIT_OPTS(o, .dir = cdump, .flags = UEVENT_JIT_BUFFER_JITDUMP |
			       UEVENT_JIT_NO_PERF_MAP);
		struct uevent_jit *cj = uevent_jit__open(&o);

		_exit(cj && uevent_jit__code_load(cj, "at_exit_fn", a, 8, c) == 0 ? 0 : 1);
	}
	/* _exit skips atexit: the child above checks nothing is written without it */
	status = -1;
	waitpid(pid, &status, 0);
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", cdump, (int)pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(dump, &st) == 0 &&
	   st.st_size == 40, "_exit (no atexit): the batch is lost, the header is there");
	pid = fork();
	if (pid == 0) {
		UEVENT_JIT_OPTS(o, .dir = cdump, .flags = UEVENT_JIT_BUFFER_JITDUMP |
			       UEVENT_JIT_NO_PERF_MAP);
		struct uevent_jit *cj = uevent_jit__open(&o);

		exit(cj && uevent_jit__code_load(cj, "at_exit_fn", a, 8, c) == 0 ? 0 : 1);
	}
	status = -1;
	waitpid(pid, &status, 0);
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", cdump, (int)pid);
	buf = slurp(dump, &len);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf &&
	   find_load(buf, len, "at_exit_fn", &prev), "exit() without close writes the batch");
	free(buf);
}

static void test_errors(void)
{
	static unsigned char c[4096];
	struct uevent_jit *j;
	size_t len;
	pid_t pid;
	int st, n, loads;
	unsigned char *buf;
	char dump[512];

	errno = 0;
	ok(uevent_jit__code_load(NULL, "x", 1, 1, c) == -EFAULT && errno == EFAULT,
	   "NULL session: -EFAULT and errno");
	{
		UEVENT_JIT_OPTS(o, .flags = 0x100);
		struct uevent_jit_opts small = { 1, NULL, NULL, 0 };

		ok(!uevent_jit__open(&o) && errno == EINVAL, "unknown flag: EINVAL");
		ok(!uevent_jit__open(&small) && errno == EINVAL, "opts.sz too small: EINVAL");
	}
	j = open_in("err", "/dev/full", 0);
	ok(!j && errno == EINVAL, "perf map on a device (/dev/full): EINVAL");
	snprintf(dump, sizeof(dump), "%s/err/jit-%d.dump", tmp, (int)getpid());
	ok(access(dump, F_OK) < 0 && errno == ENOENT, "the failed open left no dump behind");
	j = open_in("err", NULL, UEVENT_JIT_NO_PERF_MAP);
	ok(uevent_jit__code_load(j, "x", (uintptr_t)c, 0, c) == -EINVAL, "size 0: -EINVAL");
	ok(uevent_jit__code_unload(j, 12345, 0) == -ENOENT, "unload of unknown code: -ENOENT");
	ok(uevent_jit__code_move(j, 12345, 5, 0) == -ENOENT, "move of unknown code: -ENOENT");
	uevent_jit__close(j);

	/* Running into a file size limit is an error, and the file holds whole records. */
	j = open_in("fsize", NULL, UEVENT_JIT_NO_PERF_MAP);
	uevent_jit__code_load(j, "small", (uintptr_t)c, 16, c);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 300 * 1024, 300 * 1024 };
		int r = 0, i, done = 0;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		for (i = 0; i < 200 && (r = uevent_jit__code_load(j, "big", (uintptr_t)c + 16 + i,
								  sizeof(c) - 64, c)) == 0; i++)
			done++;
		snprintf(dump, sizeof(dump), "%s", uevent_jit__dump_path(j));
		buf = slurp(dump, &len);
		n = buf ? count_records(buf, len, 0, &loads) : -1;
		free(buf);
		/* the replayed "small" and every load that succeeded, nothing torn */
		_exit(r == -EFBIG && errno == EFBIG && done > 50 && n == done + 1 &&
		      loads == done + 1 && len <= 300 * 1024 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "file size limit: -EFBIG, the file holds only whole records, one per success");
	uevent_jit__close(j);

	/* A descriptor closed under us is an error, not a crash. */
	j = open_in("ebadf", NULL, 0);
	pid = fork();
	if (pid == 0) {
		int fd, r;

		if (uevent_jit__code_load(j, "before", (uintptr_t)c, 16, c) != 0)
			_exit(2);
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		r = uevent_jit__code_load(j, "after", (uintptr_t)c + 16, 16, c);
		uevent_jit__close(j);
		_exit(r == -EBADF ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "closed fd: -EBADF, no crash");
	{
		char m[64];

		snprintf(m, sizeof(m), "/tmp/perf-%d.map", (int)pid);
		unlink(m);
	}
	uevent_jit__close(j);
	{
		char m[64];

		snprintf(m, sizeof(m), "/tmp/perf-%d.map", (int)getpid());
		unlink(m);
	}

	j = open_in("off", NULL, UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_PERF_MAP);
	ok(j && !uevent_jit__dump_path(j) && !uevent_jit__perf_map_path(j) &&
	   uevent_jit__code_load(j, "quiet", (uintptr_t)c, 16, c) == 0,
	   "jitdump and perf-map off: loads still succeed");
	uevent_jit__close(j);
	ok(uevent_jit__close(NULL) == 0, "close(NULL) is a no-op");
}

static void test_default_dir(void)
{
	char want[512], *p;
	struct uevent_jit *j;
	const char *path;
	struct stat st;
	UEVENT_JIT_OPTS(o, .flags = UEVENT_JIT_NO_PERF_MAP);

	setenv("JITDUMPDIR", tmp, 1);
	j = uevent_jit__open(&o);
	path = j ? uevent_jit__dump_path(j) : NULL;
	snprintf(want, sizeof(want), "%s/.debug/jit/libuevent-jit-", tmp);
	ok(path && !strncmp(path, want, strlen(want)),
	   "default: $JITDUMPDIR/.debug/jit/libuevent-jit-XXXXXX/ (%s)", path ? path : "-");
	if (path) {
		snprintf(want, sizeof(want), "%s", path);
		p = strrchr(want, '/');
		*p = 0;
		ok(stat(want, &st) == 0 && (st.st_mode & 0777) == 0700, "its directory is 0700");
	} else {
		skip(1, "no session");
	}
	uevent_jit__close(j);
	unsetenv("JITDUMPDIR");
}

/* Fills dir's filesystem with the file name (4 KiB at a time) until it is full. */
static void fill_fs(const char *name)
{
	static const char block[4096] = { 1 };
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600), i;

	for (i = 0; fd >= 0 && i < 4096; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			break;
	if (fd >= 0)
		close(fd);
}

/* Whole perf-map lines ("ADDR SIZE NAME\n"), -1 if anything else is in the file. */
static int map_lines(const char *map)
{
	unsigned char *buf, *p, *nl;
	size_t len;
	int n = 0;

	buf = slurp(map, &len);
	if (!buf)
		return len ? -1 : 0;
	for (p = buf; p < buf + len; p = nl + 1) {
		unsigned long long a, sz;
		char name[16];

		nl = memchr(p, '\n', (size_t)(buf + len - p));
		if (!nl || sscanf((char *)p, "%llx %llx %15s", &a, &sz, name) != 3) {
			n = -1;
			break;
		}
		n++;
	}
	free(buf);
	return n;
}

/* Loads in the open dump (whole records only), -1 if it is broken. */
static int dump_loads(const char *dump)
{
	unsigned char *buf;
	size_t len;
	int n, loads;

	buf = slurp(dump, &len);
	n = buf && len >= 40 ? count_records(buf, len, 0, &loads) : -1;
	free(buf);
	return n < 0 ? -1 : loads;
}

/*
 * As root, on a 256 KiB tmpfs: a perf-map line that finds the disk full fails its call
 * whole (no torn line, its jitdump record taken back), a dump reservation that finds it
 * full fails before anything is stored, and after space comes back all goes on.
 */
static void test_enospc(void)
{
	static unsigned char c[4000];
	char mnt[512], dir[600], map[600], fill[600], dump[700], name[600];
	uintptr_t a = (uintptr_t)c;
	struct uevent_jit *j;
	int i, r = 0, good = 0, n1 = 0, n2 = 0, after = 0;

	if (geteuid() != 0) {
		skip(9, "needs root to mount a small tmpfs");
		return;
	}
	snprintf(mnt, sizeof(mnt), "%s/small", tmp);
	mkdir(mnt, 0700);
	/* In a mount namespace of our own: the mount goes away with us, whatever happens. */
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", mnt, "tmpfs", 0, "size=256k,mode=0700") < 0) {
		diag("mount -t tmpfs -o size=256k: %s", strerror(errno));
		skip(9, "cannot mount a small tmpfs");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/jd", mnt);
	snprintf(map, sizeof(map), "%s/jit.map", mnt);
	snprintf(fill, sizeof(fill), "%s/fill", mnt);
	{
		UEVENT_JIT_OPTS(o, .dir = dir, .perf_map_path = map);

		j = uevent_jit__open(&o);
	}
	snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
	good = j && uevent_jit__code_load(j, "first", a, 16, c) == 0;

	/* The dump has room (it reserved 64 KiB); the perf map's page runs out. */
	fill_fs(fill);
	for (i = 0; good && i < 100; i++) {
		snprintf(name, sizeof(name), "long%03d_%0480d", i, 0);
		if ((r = uevent_jit__code_load(j, name, a + 16 + (uintptr_t)i, 16, c)) < 0)
			break;
		n1++;
	}
	ok(good && r == -ENOSPC && errno == ENOSPC && n1 > 0,
	   "perf map on a full tmpfs: -ENOSPC after %d loads", n1);
	ok(map_lines(map) == 1 + n1, "perf map: %d whole lines, no part of the failed one (%d)",
	   1 + n1, map_lines(map));
	ok(dump_loads(dump) == 1 + n1,
	   "jitdump: the failed load's record taken back, %d whole loads (%d)", 1 + n1,
	   dump_loads(dump));

	/* Space back; then the dump's reservation runs out. */
	unlink(fill);
	for (i = 0; good && i < 5; i++)
		after += uevent_jit__code_load(j, "again", a + 200 + (uintptr_t)i, 16, c) == 0;
	ok(after == 5, "space back: the next 5 loads succeed");
	fill_fs(fill);
	truncate(fill, 64 * 1024);
	for (i = 0; good && i < 200; i++) {
		if ((r = uevent_jit__code_load(j, "big", a + 300 + (uintptr_t)i, sizeof(c), c)) < 0)
			break;
		n2++;
	}
	ok(good && r == -ENOSPC && errno == ENOSPC && n2 > 0,
	   "jitdump growing on a full tmpfs: -ENOSPC after %d big loads", n2);
	ok(dump_loads(dump) == 1 + n1 + 5 + n2 && map_lines(map) == 1 + n1 + 5 + n2,
	   "jitdump and perf map: one whole record and line per success (%d, %d of %d)",
	   dump_loads(dump), map_lines(map), 1 + n1 + 5 + n2);

	unlink(fill);
	after = 0;
	for (i = 0; good && i < 3; i++)
		after += uevent_jit__code_load(j, "big2", a + 600 + (uintptr_t)i, sizeof(c), c) == 0;
	ok(after == 3, "space back: big loads succeed again");
	ok(j && uevent_jit__close(j) == 0, "close on the tmpfs");
	{
		unsigned char *buf;
		size_t len;
		int n, loads, total = 1 + n1 + 5 + n2 + 3;

		buf = slurp(dump, &len);
		n = buf ? count_records(buf, len, 0, &loads) : -1;
		ok(n == total + 1 && loads == total && u32(buf + len - 16) == 3 &&
		   map_lines(map) == total,
		   "closed: %d loads and CODE_CLOSE, %d perf-map lines (%d, %d, %d)", total, total,
		   n, loads, map_lines(map));
		free(buf);
	}
	umount2(mnt, MNT_DETACH);
}

int main(void)
{
	const char *base = getenv("TMPDIR");
	pid_t self;

	snprintf(tmp, sizeof(tmp), "%s/uevent-jit-api-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp))
		plan_skip_all("no temporary directory");
	tap_cleanup(tmp);
	self = getpid();
	plan(161);
	test_format();
	test_marker();
	test_safety();
	test_planted();
	test_threads();
	tfunc = 1;
	test_threads();
	tbatched = 1;
	test_threads();
	tfunc = 0;
	test_threads();
	test_staged_move();
	test_replace_after_move(0);
	test_replace_after_move(UEVENT_JIT_BUFFER_JITDUMP);
	test_fork();
	test_slabs();
	test_many();
	test_dump_alloc();
	test_line_and_batch();
	test_buffered_dump();
	test_errors();
	test_default_dir();
	test_enospc();
	if (getpid() == self) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("could not remove %s", tmp);
	}
	return exit_status();
}
