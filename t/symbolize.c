/* symbolize.c - uevent_symbolizer against this very program (ELF, DWARF, a stripped
 * copy with a .gnu_debuglink), JIT code that moves, unloads and is replaced, jitdump,
 * perf maps and a kallsyms file. Needs no privileges: records are made up here. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "uevent.h"

/* A function with a name and a line to find. */
int symtest_known_function(int x);
__attribute__((noinline, used)) int symtest_known_function(int x)
{
	return x * 3 + 1;	/* SYMTEST_LINE */
}

static int symtest_line(void)
{
	FILE *f = fopen(SRCDIR "/t/symbolize.c", "r");
	char buf[512];
	int n = 0;

	while (f && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, "/* SYMTEST_LINE */") && !strstr(buf, "strstr"))
			break;
	}
	if (f)
		fclose(f);
	return n;
}

/* This program's mapping of the bytes at addr, from /proc/self/maps. */
static int self_map(uint64_t addr, uint64_t *start, uint64_t *len, uint64_t *pgoff,
		    char *path, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &n) < 4)
			continue;
		if (addr >= a && addr < b) {
			*start = a;
			*len = b - a;
			*pgoff = off;
			snprintf(path, cap, "%s", line + n);
			path[strcspn(path, "\n")] = 0;
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	return -1;
}

static void mk_mmap(struct uevent_perf_record *r, uint32_t pid, uint64_t t, uint64_t addr,
		    uint64_t len, uint64_t pgoff, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->type = PERF_RECORD_MMAP2;
	r->body = UEVENT_BODY_MMAP;
	r->id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	r->id.pid = r->id.tid = pid;
	r->id.time = t;
	r->u.mmap.pid = r->u.mmap.tid = pid;
	r->u.mmap.addr = addr;
	r->u.mmap.len = len;
	r->u.mmap.pgoff = pgoff;
	r->u.mmap.prot = PROT_READ | PROT_EXEC;
	r->u.mmap.filename = path;
}

static unsigned char payload[512];

static void mk_uevent(struct uevent_perf_record *r, uint32_t pid, uint64_t t, uint32_t type,
		      ssize_t n)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->type = PERF_RECORD_UEVENT;
	r->body = UEVENT_BODY_UEVENT;
	r->id.fields = UEVENT_ID_TID | UEVENT_ID_TIME;
	r->id.pid = r->id.tid = pid;
	r->id.time = t;
	r->u.uevent.sz = sizeof(r->u.uevent);
	r->u.uevent.type = type;
	r->u.uevent.size = n > 0 ? (uint32_t)n : 0;
	r->u.uevent.data = payload;
	r->u.uevent.id = r->id;
}

static void jit_load(struct uevent_symbolizer *s, uint32_t pid, uint64_t t, uint64_t addr,
		     uint64_t size, uint64_t index, const char *name)
{
	struct uevent_jit_code_load l = { addr, size, index, name, 0 };
	struct uevent_perf_record r;

	mk_uevent(&r, pid, t, UEVENT_TYPE_JIT_CODE_LOAD,
		  uevent_jit_code_load_encode(payload, sizeof(payload), &l));
	uevent_symbolizer__feed(s, &r);
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

static void test_jit_uevents(void)
{
	struct uevent_symbolizer *s = uevent_symbolizer__new(NULL);
	struct uevent_perf_record r;
	const uint64_t X = 0x7f0000001000, Y = 0x7f0000009000;
	struct uevent_jit_code_move m = { 1, X, Y, 64 };
	struct uevent_jit_code_unload u = { Y, 64, 1 };

	/* t=100 A at X; 200 A moves to Y; 300 A unloaded; 400 B loaded at X (reused) */
	jit_load(s, 42, 100, X, 64, 1, "jit_fn_a");
	mk_uevent(&r, 42, 200, UEVENT_TYPE_JIT_CODE_MOVE,
		  uevent_jit_code_move_encode(payload, sizeof(payload), &m));
	ok(uevent_symbolizer__feed(s, &r) == 1, "a JIT move is taken");
	mk_uevent(&r, 42, 300, UEVENT_TYPE_JIT_CODE_UNLOAD,
		  uevent_jit_code_unload_encode(payload, sizeof(payload), &u));
	ok(uevent_symbolizer__feed(s, &r) == 1, "a JIT unload is taken");
	jit_load(s, 42, 400, X, 32, 2, "jit_fn_b");

	/* asked out of time order on purpose: each answer is the code live then */
	ok(is(name_at(s, 42, X + 10, 450), "jit_fn_b"), "X at 450: the later load (jit_fn_b)");
	ok(is(name_at(s, 42, X + 10, 150), "jit_fn_a"), "X at 150: jit_fn_a, before it moved");
	ok(is(name_at(s, 42, X + 10, 250), "(none)"), "X at 250: nothing (A moved away)");
	ok(is(name_at(s, 42, Y + 10, 250), "jit_fn_a"), "Y at 250: jit_fn_a, moved there");
	ok(is(name_at(s, 42, Y + 10, 350), "(none)"), "Y at 350: nothing (A unloaded)");
	ok(is(name_at(s, 42, X + 40, 450), "(none)"), "X+40 at 450: past B's 32 bytes");
	ok(is(name_at(s, 43, X + 10, 450), "(none)"), "another process does not see it");
	{
		struct uevent_symbol sym = { .sz = sizeof(sym) };

		ok(uevent_symbolizer__lookup(s, 42, X + 10, 450, &sym) == 0 &&
		   sym.offset == 10 && sym.sym_addr == X && sym.source == UEVENT_SYM_JIT_UEVENT &&
		   is(sym.dso, "[jit]"), "offset, start, source and dso of a JIT symbol");
	}
	/* a child forked at 250 sees its parent's code as it was then, for good */
	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.type = PERF_RECORD_FORK;
	r.body = UEVENT_BODY_TASK;
	r.id.fields = UEVENT_ID_TIME;
	r.id.time = 250;
	r.u.task = (struct uevent_perf_task){ 77, 42, 77, 42, 250 };
	uevent_symbolizer__feed(s, &r);
	ok(is(name_at(s, 77, X + 10, 500), "(none)") && is(name_at(s, 77, Y + 1, 500), "jit_fn_a"),
	   "a forked child: its parent's code at the fork");
	{
		struct uevent_perf_record bad;

		mk_uevent(&bad, 42, 500, UEVENT_TYPE_JIT_CODE_LOAD, 3);
		ok(uevent_symbolizer__feed(s, &bad) == -EINVAL &&
		   is(name_at(s, 42, X + 10, 600), "jit_fn_b"),
		   "a JIT load that does not decode is -EINVAL and loses nothing");
	}
	uevent_symbolizer__free(s);
}

/* Many codes, one large: each found by address and time (the by-address index). */
static void test_many(void)
{
	struct uevent_symbolizer *s = uevent_symbolizer__new(NULL);
	const uint64_t base = 0x7f1000000000;
	char name[32];
	int i, bad = 0;

	jit_load(s, 7, 1, base - 0x100000, 0x200000, 99999, "big_code");	/* 2 MiB */
	for (i = 2999; i >= 0; i--) {		/* loaded from the top down */
		snprintf(name, sizeof(name), "code_%d", i);
		jit_load(s, 7, 10 + (uint64_t)(3000 - i), base + 0x200000 + (uint64_t)i * 64, 64,
			 (uint64_t)i + 1, name);
	}
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "code_%d", i);
		if (!is(name_at(s, 7, base + 0x200000 + (uint64_t)i * 64 + 63, 100000), name))
			bad++;
	}
	ok(!bad, "3000 codes, each named at its last byte (%d wrong)", bad);
	ok(is(name_at(s, 7, base + 0xfff00, 5), "big_code") &&
	   is(name_at(s, 7, base + 0x200000, 5), "(none)"),
	   "a 2 MiB code named far from its start; past it, nothing");
	uevent_symbolizer__free(s);
}

/* A KSYMBOL record: [addr, addr+len) named from time t. */
static void ksym(struct uevent_symbolizer *s, uint64_t t, uint64_t addr, uint32_t len,
		 const char *name)
{
	struct uevent_perf_record r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.type = PERF_RECORD_KSYMBOL;
	r.body = UEVENT_BODY_KSYMBOL;
	r.id.fields = UEVENT_ID_TIME;
	r.id.time = t;
	r.u.ksymbol.addr = addr;
	r.u.ksymbol.len = len;
	r.u.ksymbol.name = name;
	uevent_symbolizer__feed(s, &r);
}

/*
 * One long code among many short ones (a lookup once walked back over all of them): the
 * short ones named, the long one wherever it holds at the time (before the loads over it
 * end it, while it is live), nothing where neither does.
 */
static void test_long_jit(void)
{
	UEVENT_SYMBOLIZER_OPTS(o, .flags = UEVENT_SYMBOLIZER_NO_KERNEL);
	struct uevent_symbolizer *s = uevent_symbolizer__new(&o);
	const uint64_t X = 0x7f2000000000, L = (uint64_t)1 << 40, K = 0xffffffff00000000ull;
	struct uevent_jit_code_unload u = { X - 0x1000, 0, 999 };
	struct uevent_perf_record r;
	int i, under = 0, ended = 0, live = 0, gone = 0, kern = 0;
	char name[32];

	jit_load(s, 50, 5, X, L, 1000, "long_first");		/* 1 TiB from X, at 5 */
	for (i = 0; i < 2000; i++) {	/* 128 bytes apart, from 10 on: the first ends it */
		snprintf(name, sizeof(name), "short_%d", i);
		jit_load(s, 50, 10 + (uint64_t)i, X + 0x100000 + 128 * (uint64_t)i, 64,
			 (uint64_t)i + 1, name);
	}
	for (i = 0; i < 2000; i++) {
		uint64_t a = X + 0x100000 + 128 * (uint64_t)i;

		snprintf(name, sizeof(name), "short_%d", i);
		under += !is(name_at(s, 50, a + 8, 7), "long_first");
		ended += !is(name_at(s, 50, a + 63, 100000), name) ||
			 !is(name_at(s, 50, a + 64, 100000), "(none)");
	}
	ok(!under && is(name_at(s, 50, X, 7), "long_first") &&
	   is(name_at(s, 50, X + L - 1, 9), "long_first") && is(name_at(s, 50, X + L, 7), "(none)") &&
	   is(name_at(s, 50, X + 8, 4), "(none)"),
	   "a 1 TiB JIT code: named over all its bytes while live (%d wrong)", under);
	ok(!ended && is(name_at(s, 50, X + 8, 100000), "(none)") &&
	   is(name_at(s, 50, X + L - 1, 100000), "(none)"),
	   "... once loads over it end it: the short codes, nothing between (%d wrong)", ended);
	/* a long code over them all, loaded last: live from 200000 until unloaded at 400000 */
	jit_load(s, 50, 200000, X - 0x1000, L, 999, "long_last");
	mk_uevent(&r, 50, 400000, UEVENT_TYPE_JIT_CODE_UNLOAD,
		  uevent_jit_code_unload_encode(payload, sizeof(payload), &u));
	uevent_symbolizer__feed(s, &r);
	for (i = 0; i < 2000; i++) {
		uint64_t a = X + 0x100000 + 128 * (uint64_t)i;

		snprintf(name, sizeof(name), "short_%d", i);
		live += !is(name_at(s, 50, a + 64, 300000), "long_last") ||
			!is(name_at(s, 50, a, 150000), name);
		gone += !is(name_at(s, 50, a, 500000), "(none)");
	}
	ok(!live && !gone && is(name_at(s, 50, X - 0x1001, 300000), "(none)") &&
	   is(name_at(s, 50, X - 0x1000 + L - 1, 300000), "long_last"),
	   "a long code loaded over them all: named while live, the short ones before it, "
	   "nothing once unloaded (%d, %d wrong)", live, gone);
	/* kernel symbols (KSYMBOL): a 4 GiB one, then short ones over it */
	ksym(s, 5, K, UINT32_MAX, "ksym_long");
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "ksym_%d", i);
		ksym(s, 10 + (uint64_t)i, K + 0x1000 + 64 * (uint64_t)i, 32, name);
	}
	for (i = 0; i < 1000; i++) {
		uint64_t a = K + 0x1000 + 64 * (uint64_t)i;

		snprintf(name, sizeof(name), "ksym_%d", i);
		kern += !is(name_at(s, 1, a, 7), "ksym_long") || !is(name_at(s, 1, a, 5000), name) ||
			!is(name_at(s, 1, a + 32, 5000), "(none)");
	}
	ok(!kern, "a 4 GiB KSYMBOL, then short ones over it: each named at its time (%d wrong)",
	   kern);
	uevent_symbolizer__free(s);
}

/* A perf map of 2000 short lines 128 bytes apart from 0x7f0000100000, and a long line:
 * first (ends before the short ones, which end it), last (ends them all), apart (touches
 * none). */
static int long_map(const char *dir, uint32_t pid, const char *where)
{
	char path[600];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
	if (!(f = fopen(path, "w")))
		return -1;
	if (!strcmp(where, "first"))
		fprintf(f, "7f0000000000 10000000000 long_first\n");	/* 1 TiB */
	for (i = 0; i < 2000; i++)
		fprintf(f, "%llx 40 short_%d\n", 0x7f0000100000ull + 128 * (unsigned long long)i, i);
	if (!strcmp(where, "last"))
		fprintf(f, "7f0000000000 10000000000 long_last\n");
	if (!strcmp(where, "apart"))
		fprintf(f, "7e0000000000 10000000000 long_apart\n");	/* up to 7f0000000000 */
	return fclose(f) ? -1 : 0;
}

/* How many short lines of long_map() are not named (want NULL: by their own names). */
static int long_map_wrong(struct uevent_symbolizer *s, uint32_t pid, const char *want)
{
	char name[32];
	int i, bad = 0;

	for (i = 0; i < 2000; i++) {
		uint64_t a = 0x7f0000100000ull + 128 * (uint64_t)i;

		snprintf(name, sizeof(name), "short_%d", i);
		bad += !is(name_at(s, pid, a, 5), want ? want : name) ||
		       !is(name_at(s, pid, a + 63, 5), want ? want : name) ||
		       !is(name_at(s, pid, a + 64, 5), want ? want : "(none)");
	}
	return bad;
}

/* Perf maps with one long line among 2000 short ones, the long one ended or not. */
static void test_long_maps(const char *tmp)
{
	UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = tmp, .flags = UEVENT_SYMBOLIZER_NO_KERNEL);
	struct uevent_symbolizer *s;
	const uint64_t L = (uint64_t)1 << 40;
	char path[600];
	int bad;

	FILE *f;

	snprintf(path, sizeof(path), "%s/perf-%d.map", tmp, 4253);
	if (long_map(tmp, 4250, "first") < 0 || long_map(tmp, 4251, "last") < 0 ||
	    long_map(tmp, 4252, "apart") < 0 || !(f = fopen(path, "w"))) {
		skip(4, "could not write the maps");
		return;
	}
	/* lines past 2^64: not ended by the lines over them, and the lowest holds them */
	fprintf(f, "7f0000000000 40 below\n7f0000001000 ffffffffffffffff wrap_low\n"
		"7f0000002000 40 above_a\n7f0000003000 ffffffffffffffff wrap_high\n"
		"7f0000004000 40 above_b\n");
	fclose(f);
	s = uevent_symbolizer__new(&o);
	bad = long_map_wrong(s, 4250, NULL);
	ok(!bad && is(name_at(s, 4250, 0x7f0000000000ull, 5), "(none)") &&
	   is(name_at(s, 4250, 0x7f0000000000ull + L - 1, 5), "(none)"),
	   "perf map, a 1 TiB line first: the short lines over it end it (%d wrong)", bad);
	bad = long_map_wrong(s, 4251, "long_last");
	ok(!bad && is(name_at(s, 4251, 0x7f0000000000ull + L - 1, 5), "long_last") &&
	   is(name_at(s, 4251, 0x7f0000000000ull + L, 5), "(none)") &&
	   is(name_at(s, 4251, 0x7effffffffffull, 5), "(none)"),
	   "perf map, a 1 TiB line last: it ends them all, named over all its bytes (%d wrong)",
	   bad);
	bad = long_map_wrong(s, 4252, NULL);
	ok(!bad && is(name_at(s, 4252, 0x7e0000000000ull, 5), "long_apart") &&
	   is(name_at(s, 4252, 0x7effffffffffull, 5), "long_apart") &&
	   is(name_at(s, 4252, 0x7f0000000000ull, 5), "(none)"),
	   "perf map, a 1 TiB line below the others: each line named (%d wrong)", bad);
	ok(is(name_at(s, 4253, 0x7f0000000010ull, 5), "below") &&
	   is(name_at(s, 4253, 0x7f0000000040ull, 5), "(none)") &&
	   is(name_at(s, 4253, 0x7f0000001000ull, 5), "wrap_low") &&
	   is(name_at(s, 4253, 0x7f0000002010ull, 5), "wrap_low") &&
	   is(name_at(s, 4253, 0x7f0000004010ull, 5), "wrap_low") &&
	   is(name_at(s, 4253, 0x7fffffffffffull, 5), "wrap_low"),
	   "perf map, lines past 2^64: the lowest named above it, the lines below it too");
	uevent_symbolizer__free(s);
}

static void test_comm(void)
{
	struct uevent_symbolizer *s = uevent_symbolizer__new(NULL);
	struct uevent_perf_record r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.type = PERF_RECORD_COMM;
	r.body = UEVENT_BODY_COMM;
	r.id.fields = UEVENT_ID_TIME;
	r.id.time = 10;
	r.u.comm.pid = r.u.comm.tid = 5;
	r.u.comm.comm = "sh";
	uevent_symbolizer__feed(s, &r);
	r.id.time = 20;
	r.misc = PERF_RECORD_MISC_COMM_EXEC;
	r.u.comm.comm = "burn";
	uevent_symbolizer__feed(s, &r);
	ok(is(uevent_symbolizer__comm(s, 5, 15), "sh") && is(uevent_symbolizer__comm(s, 5, 25),
	   "burn") && !uevent_symbolizer__comm(s, 6, 25), "COMM: the name a thread had then");
	uevent_symbolizer__free(s);
}

static void test_files(const char *tmp)
{
	char path[512], exe[2048], cmd[8192], dbgdir[600];
	uint64_t start, len, pgoff, addr = (uint64_t)(uintptr_t)&symtest_known_function;
	struct uevent_symbolizer *s;
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	struct uevent_perf_record r;
	FILE *f;
	int ret;

	/* kallsyms: a file of ours */
	snprintf(path, sizeof(path), "%s/kallsyms", tmp);
	f = fopen(path, "w");
	fprintf(f, "ffffffff81000000 T _stext\nffffffff81000100 t kfunc_one\n"
		"ffffffff81000200 d kdata\nffffffff81000300 T kfunc_two\n");
	fclose(f);
	{
		UEVENT_SYMBOLIZER_OPTS(o, .kallsyms = path);

		s = uevent_symbolizer__new(&o);
		ret = uevent_symbolizer__lookup(s, 1, 0xffffffff81000110ull, 5, &sym);
		ok(ret == 0 && is(sym.name, "kfunc_one") && sym.offset == 0x10 &&
		   is(sym.dso, "[kernel.kallsyms]"), "kallsyms: a kernel text symbol");
		ok(is(name_at(s, 1, 0xffffffff81000250ull, 5), "kfunc_one"),
		   "kallsyms: data symbols are not code");
		uevent_symbolizer__free(s);
	}
	/* perf map: no times, the last line for an address wins */
	snprintf(path, sizeof(path), "%s/perf-%d.map", tmp, 4242);
	f = fopen(path, "w");
	fprintf(f, "7f0000100000 40 old map name\n7f0000100000 40 Lua:hot loop.lua:3\n");
	fclose(f);
	{
		UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = tmp);

		s = uevent_symbolizer__new(&o);
		ok(is(name_at(s, 4242, 0x7f0000100010ull, 5), "Lua:hot loop.lua:3"),
		   "perf map: its last line for the address, spaces kept");
		uevent_symbolizer__free(s);
	}
	/* perf map: a later line over some of an earlier one's bytes ends all of it,
	 * whichever starts first; lines that only touch stay */
	snprintf(path, sizeof(path), "%s/perf-%d.map", tmp, 4243);
	f = fopen(path, "w");
	fprintf(f, "7f0000200000 100 wide_old\n7f0000200040 10 inner_new\n"
		"7f0000400010 10 inner_old\n7f0000400000 40 wide_new\n"
		"7f0000500000 40 first\n7f0000500040 40 touching\n7f0000500020 40 second\n"
		"7f0000600000 40 alone\n");
	fclose(f);
	{
		UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = tmp);

		s = uevent_symbolizer__new(&o);
		ok(is(name_at(s, 4243, 0x7f0000200020ull, 5), "(none)") &&
		   is(name_at(s, 4243, 0x7f0000200045ull, 5), "inner_new"),
		   "perf map: a later line inside an earlier one ends it");
		ok(is(name_at(s, 4243, 0x7f0000400015ull, 5), "wide_new"),
		   "perf map: a later line around an earlier one ends it");
		ok(is(name_at(s, 4243, 0x7f0000500010ull, 5), "(none)") &&
		   is(name_at(s, 4243, 0x7f0000500030ull, 5), "second") &&
		   is(name_at(s, 4243, 0x7f0000500070ull, 5), "(none)") &&
		   is(name_at(s, 4243, 0x7f0000600000ull, 5), "alone"),
		   "perf map: overlaps end both neighbours, the untouched line stays");
		uevent_symbolizer__free(s);
	}
	/* jitdump: written by our own JIT API, found through its MMAP */
	{
		UEVENT_JIT_OPTS(jo, .dir = tmp, .flags = UEVENT_JIT_NO_UEVENT | UEVENT_JIT_NO_PERF_MAP);
		struct uevent_jit *j = uevent_jit__open(&jo);
		static const unsigned char code[16] = { 0xc3 };
		const uint64_t X = 0x7f0000200000;
		char dump[600];

		ret = j ? uevent_jit__code_load(j, "dumped_fn", X, 16, code) : -1;
		snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
		uevent_jit__close(j);
		s = uevent_symbolizer__new(NULL);
		mk_mmap(&r, (uint32_t)getpid(), 1, 0x10000, 4096, 0, dump);
		ok(ret == 0 && uevent_symbolizer__feed(s, &r) == 1 &&
		   is(name_at(s, (uint32_t)getpid(), X + 4, UINT64_MAX), "dumped_fn") &&
		   is(name_at(s, (uint32_t)getpid(), X + 4, 0), "(none)"),
		   "jitdump: a load named from its time on");
		uevent_symbolizer__free(s);
	}
	/* jitdump: a later load over some of an earlier one's bytes ends all of it from its
	 * time on (the loads of a dump are settled at once, not one by one); a move after
	 * them finds its code */
	{
		char dir[600];
		struct uevent_jit *j;
		static const unsigned char code[256] = { 0xc3 };
		const uint64_t X = 0x7f0000300000, pid = (uint64_t)getpid();
		char dump[600];

		snprintf(dir, sizeof(dir), "%s/jd2", tmp);	/* a dump of our pid of its own */
		{
			UEVENT_JIT_OPTS(jo, .dir = dir,
					.flags = UEVENT_JIT_NO_UEVENT | UEVENT_JIT_NO_PERF_MAP);

			j = uevent_jit__open(&jo);
		}
		ret = !j || uevent_jit__code_load(j, "wide", X, 0x100, code) ||
		      uevent_jit__code_load(j, "inner", X + 0x40, 0x10, code) ||
		      uevent_jit__code_load(j, "same1", X + 0x200, 0x10, code) ||
		      uevent_jit__code_load(j, "same2", X + 0x200, 0x10, code) ||
		      uevent_jit__code_load(j, "kept", X + 0x300, 0x10, code) ||
		      uevent_jit__code_load(j, "mover", X + 0x400, 0x10, code) ||
		      uevent_jit__code_move(j, X + 0x400, X + 0x500, 0x10);
		snprintf(dump, sizeof(dump), "%s", j ? uevent_jit__dump_path(j) : "");
		uevent_jit__close(j);
		s = uevent_symbolizer__new(NULL);
		mk_mmap(&r, (uint32_t)pid, 1, 0x10000, 4096, 0, dump);
		ok(ret == 0 && uevent_symbolizer__feed(s, &r) == 1 &&
		   is(name_at(s, (uint32_t)pid, X + 0x10, UINT64_MAX), "(none)") &&
		   is(name_at(s, (uint32_t)pid, X + 0x45, UINT64_MAX), "inner") &&
		   is(name_at(s, (uint32_t)pid, X + 0x205, UINT64_MAX), "same2") &&
		   is(name_at(s, (uint32_t)pid, X + 0x305, UINT64_MAX), "kept"),
		   "jitdump: a later load over an earlier one's bytes ends it");
		ok(is(name_at(s, (uint32_t)pid, X + 0x505, UINT64_MAX), "mover") &&
		   is(name_at(s, (uint32_t)pid, X + 0x405, UINT64_MAX), "(none)"),
		   "jitdump: a move after the loads finds its code");
		uevent_symbolizer__free(s);
	}

	if (self_map(addr, &start, &len, &pgoff, exe, sizeof(exe)) < 0 || exe[0] != '/') {
		skip(7, "this program's mapping not in /proc/self/maps");
		return;
	}
#ifndef HAVE_LIBDW
	skip(7, "built without libdw (Debian: libdw-dev)");
	return;
#endif
	s = uevent_symbolizer__new(NULL);
	mk_mmap(&r, 9, 100, start, len, pgoff, exe);
	uevent_symbolizer__feed(s, &r);
	ret = uevent_symbolizer__lookup(s, 9, addr + 1, 200, &sym);
	ok(ret == 0 && is(sym.name, "symtest_known_function") && sym.offset == 1 &&
	   sym.source == UEVENT_SYM_ELF && is(sym.dso, exe), "ELF: this program's function");
	ok(sym.file && strstr(sym.file, "symbolize.c") && sym.line > 0 &&
	   (int)sym.line <= symtest_line() && (int)sym.line >= symtest_line() - 2,
	   "DWARF: its file and line (%s:%u, want about %d)", sym.file ? sym.file : "-",
	   sym.line, symtest_line());
	ok(uevent_symbolizer__lookup(s, 9, addr, 50, &sym) == -ENOENT && !sym.dso,
	   "before its MMAP the address is nobody's");
	uevent_symbolizer__free(s);
	{
		UEVENT_SYMBOLIZER_OPTS(o, .flags = UEVENT_SYMBOLIZER_PROC_MAPS);

		s = uevent_symbolizer__new(&o);
		ok(is(name_at(s, (uint32_t)getpid(), addr, 5), "symtest_known_function"),
		   "PROC_MAPS: a live process's mappings from before the recording");
		uevent_symbolizer__free(s);
	}

	/* a stripped copy whose .gnu_debuglink names a debug file kept elsewhere */
	snprintf(dbgdir, sizeof(dbgdir), "%s/debug", tmp);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && objcopy --only-keep-debug '%s' '%s/symtest.debug' && "
		 "cp '%s' '%s/symtest' && strip --strip-all '%s/symtest' && cd '%s' && "
		 "objcopy --add-gnu-debuglink=symtest.debug ../symtest",
		 dbgdir, exe, dbgdir, exe, tmp, tmp, dbgdir);
	if (system(cmd) != 0) {
		skip(3, "objcopy/strip failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/symtest", tmp);
	s = uevent_symbolizer__new(NULL);
	mk_mmap(&r, 9, 100, start, len, pgoff, path);
	uevent_symbolizer__feed(s, &r);
	ret = uevent_symbolizer__lookup(s, 9, addr + 1, 200, &sym);
	ok(ret == -ENOENT && is(sym.dso, path), "stripped, debug file not found: not named, "
	   "dso known (%s)", sym.name ? sym.name : "-");
	uevent_symbolizer__free(s);
	{
		UEVENT_SYMBOLIZER_OPTS(o, .debug_dir = dbgdir);

		s = uevent_symbolizer__new(&o);
		mk_mmap(&r, 9, 100, start, len, pgoff, path);
		uevent_symbolizer__feed(s, &r);
		ret = uevent_symbolizer__lookup(s, 9, addr + 1, 200, &sym);
		ok(ret == 0 && is(sym.name, "symtest_known_function") && sym.offset == 1,
		   "stripped + .gnu_debuglink in debug_dir: named");
		ok(sym.file && strstr(sym.file, "symbolize.c") && sym.line > 0,
		   "stripped + debug file: lines too");
		uevent_symbolizer__free(s);
	}
}

/* pid's perf map in dir names nothing, and the reason channel says why. */
static int planted_map(const char *dir, uint32_t pid, const char *why)
{
	UEVENT_SYMBOLIZER_OPTS(o, .perf_map_dir = dir);
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	struct uevent_symbolizer *s = uevent_symbolizer__new(&o);
	int ret = uevent_symbolizer__lookup(s, pid, 0x7f0000100010ull, 5, &sym);

	uevent_symbolizer__free(s);
	return ret == -ENOENT && strstr(uevent_reason(), why);
}

/*
 * A stripped copy of this program in a directory others can write to (/tmp): the debug
 * file its .gnu_debuglink names beside it, or in .debug/, is looked for there. Planted
 * as a FIFO, libdwfl's own open() of it waited for a writer for ever; skipped now, and
 * said. A real one there is still found.
 */
static void test_planted_debug(const char *dir)
{
	uint64_t start, len, pgoff, addr = (uint64_t)(uintptr_t)&symtest_known_function;
	char exe[2048], cmd[8192], prog[600], dbg[600];
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	struct uevent_perf_record r;
	struct uevent_symbolizer *s;
	int ret;

	if (self_map(addr, &start, &len, &pgoff, exe, sizeof(exe)) < 0 || exe[0] != '/') {
		skip(2, "this program's mapping not in /proc/self/maps");
		return;
	}
#ifndef HAVE_LIBDW
	skip(2, "built without libdw (Debian: libdw-dev)");
	return;
#endif
	snprintf(prog, sizeof(prog), "%s/stripped", dir);
	snprintf(dbg, sizeof(dbg), "%s/stripped.debug", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' '%s' && strip --strip-all -o '%s' '%s' && "
		 "cd '%s' && objcopy --add-gnu-debuglink=stripped.debug stripped && "
		 "mkdir -p .debug && mv stripped.debug .debug/", exe, dbg, prog, exe, dir);
	if (system(cmd) != 0) {
		skip(2, "objcopy/strip failed");
		return;
	}
	ret = mkfifo(dbg, 0600);	/* beside it, looked at before .debug/ */
	s = uevent_symbolizer__new(NULL);
	mk_mmap(&r, 9, 100, start, len, pgoff, prog);
	uevent_symbolizer__feed(s, &r);
	ret |= uevent_symbolizer__lookup(s, 9, addr + 1, 200, &sym);
	ok(ret == 0 && is(sym.name, "symtest_known_function") && sym.line > 0 &&
	   strstr(uevent_reason(), "a FIFO, not a regular file"),
	   "debug file beside a stripped file a FIFO: skipped, said; the one in .debug/ "
	   "named (%s)", uevent_reason());
	uevent_symbolizer__free(s);
	/* one of another build (a build-id not the file's): not taken */
	unlink(dbg);
	snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f .debug/stripped.debug && cp /bin/true "
		 "stripped.debug", dir);
	ret = system(cmd);
	s = uevent_symbolizer__new(NULL);
	mk_mmap(&r, 9, 100, start, len, pgoff, prog);
	uevent_symbolizer__feed(s, &r);
	ret |= uevent_symbolizer__lookup(s, 9, addr + 1, 200, &sym) != -ENOENT;
	ok(ret == 0, "a debug file beside it of another build: not taken (%s)",
	   sym.name ? sym.name : "-");
	uevent_symbolizer__free(s);
}

/* What others plant where the symbolizer looks: skipped at once, and said. An alarm
 * fails the test rather than letting a reader that blocks hang the suite. */
static void test_planted(const char *tmp)
{
	char dir[512], path[600], exe[600];
	struct uevent_symbolizer *s;
	struct uevent_symbol sym = { .sz = sizeof(sym) };
	struct uevent_perf_record r;
	int ret;

	alarm(30);
	snprintf(dir, sizeof(dir), "%s/planted", tmp);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, 4343);
	ret = mkfifo(path, 0600);
	ok(ret == 0 && planted_map(dir, 4343, "a FIFO, not a regular file"),
	   "perf map a FIFO: skipped at once, said (%s)", uevent_reason());
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, 4344);
	ret = symlink("/dev/zero", path);
	ok(ret == 0 && planted_map(dir, 4344, "a symlink (not followed)"),
	   "perf map a link to /dev/zero: not followed, said (%s)", uevent_reason());
	/* a mapped binary and a jitdump the stream names, now FIFOs */
	snprintf(exe, sizeof(exe), "%s/prog", dir);
	snprintf(path, sizeof(path), "%s/jit-4345.dump", dir);
	ret = mkfifo(exe, 0600) | mkfifo(path, 0600);
	s = uevent_symbolizer__new(NULL);
	mk_mmap(&r, 4345, 1, 0x10000, 4096, 0, path);
	ret |= uevent_symbolizer__feed(s, &r) != 1;
	mk_mmap(&r, 4345, 2, 0x400000, 0x1000, 0, exe);
	ret |= uevent_symbolizer__feed(s, &r) != 1;
	ok(ret == 0 && uevent_symbolizer__lookup(s, 4345, 0x400010, 5, &sym) == -ENOENT &&
	   is(sym.dso, exe), "a jitdump and a mapped file that are FIFOs: skipped (%s)",
	   uevent_reason());
	uevent_symbolizer__free(s);
	test_planted_debug(dir);
	alarm(0);
}

/* feed_file: the records a file's reader gives, each fed as feed() takes it; a cut
 * copy feeds what is whole and says where it ends. */
static void test_feed_file(const char *tmp)
{
	const char *golden = SRCDIR "/t/data/perf_records.le.perf.data";
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_symbolizer *s = uevent_symbolizer__new(NULL);
	struct uevent_perf_file *f = uevent_perf_file__open(golden);
	int64_t n = 0, got;
	char cut[600];
	FILE *in, *out;
	char buf[1 << 16];
	size_t len, k, i;
	int ret;

	while (f && (ret = uevent_perf_file__next(f, &r)) != 0)
		if (ret > 0)
			n += uevent_symbolizer__feed(s, &r) > 0;
	uevent_perf_file__close(f);
	uevent_symbolizer__free(s);
	s = uevent_symbolizer__new(NULL);
	got = uevent_symbolizer__feed_file(s, golden);
	ok(f && n > 0 && got == n, "feed_file: the %" PRId64 " records feed() uses, one by one: %"
	   PRId64, n, got);
	uevent_symbolizer__free(s);

	snprintf(cut, sizeof(cut), "%s/cut.perf.data", tmp);
	in = fopen(golden, "rb");
	out = fopen(cut, "wb");
	len = in ? fread(buf, 1, sizeof(buf), in) : 0;
	if (out)
		fwrite(buf, 1, len * 2 / 3, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	s = uevent_symbolizer__new(NULL);
	got = uevent_symbolizer__feed_file(s, cut);
	ok(len > 0 && len < sizeof(buf) && got == -ENODATA && errno == ENODATA &&
	   strstr(uevent_reason(), "at offset"), "feed_file of a cut copy: -ENODATA, where (%s)",
	   uevent_reason());
	/* a corrupt record (a size under 8, the reader's -EINVAL each time it is asked):
	 * an error, not a feed's -EINVAL to step over (that looped for ever) */
	snprintf(cut, sizeof(cut), "%s/bad.perf.data", tmp);
	for (k = 16, i = 0; k + 8 <= len && i < 5; i++) {	/* the 6th record */
		uint16_t sz;

		memcpy(&sz, buf + k + 6, 2);
		k += sz;
	}
	if (k + 8 <= len)
		memcpy(buf + k + 6, &(uint16_t){ 4 }, 2);
	out = fopen(cut, "wb");
	if (out) {
		fwrite(buf, 1, len, out);
		fclose(out);
	}
	alarm(10);
	got = uevent_symbolizer__feed_file(s, cut);
	alarm(0);
	ok(k + 8 <= len && got == -EINVAL && strstr(uevent_reason(), "at offset"),
	   "feed_file of a corrupt record: -EINVAL, where (%s)", uevent_reason());
	snprintf(cut, sizeof(cut), "%s/none.perf.data", tmp);
	ok(uevent_symbolizer__feed_file(s, cut) == -ENOENT && errno == ENOENT &&
	   !strcmp(uevent_reason(), cut) && uevent_symbolizer__feed_file(NULL, cut) == -EINVAL,
	   "feed_file: a missing file is -ENOENT, named; no symbolizer -EINVAL");
	uevent_symbolizer__free(s);
}

int main(void)
{
	char tmp[] = "/tmp/uevent-symtest-XXXXXX";
	char cmd[128];

	plan(51);
	symtest_known_function(1);
	ok(!uevent_symbolizer__new(&(struct uevent_symbolizer_opts){ .sz = 4 }) && errno == EINVAL,
	   "new: opts with a short sz are EINVAL");
	{
		struct uevent_symbol sym = { .sz = 8 };
		struct uevent_symbolizer *s = uevent_symbolizer__new(NULL);

		ok(uevent_symbolizer__lookup(s, 1, 1, 1, &sym) == -EINVAL,
		   "lookup: an output struct too small is EINVAL");
		ok(uevent_symbolizer__feed(s, NULL) == -EINVAL, "feed: NULL is EINVAL");
		uevent_symbolizer__free(s);
	}
	test_jit_uevents();
	test_many();
	test_long_jit();
	test_comm();
	if (!mkdtemp(tmp)) {
		skip(24, "mkdtemp failed");
		return exit_status();
	}
	tap_cleanup(tmp);
	test_planted(tmp);
	test_files(tmp);
	test_long_maps(tmp);
	test_feed_file(tmp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	return exit_status();
}
