/* nvtx-check.c - libuevent-nvtx.so end to end: inject/nvtx-client calls NVTX through its
 * own loader with NVTX_INJECTION64_PATH set; its uevents are read back (file transport, and
 * a live usdt session that starts while the client runs) and checked by name, nesting and
 * count; a chained second injection library gets every call too. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "tap.h"
#include "inject.h"

#define THREADS	8
#define ROUNDS	100

struct ev {
	uint32_t	type, tid;
	struct uevent_range_begin b;	/* type RANGE_BEGIN */
	struct uevent_range_end e;	/* type RANGE_END */
	char		*text;		/* a mark's or side record's text, a begin's name */
};

static struct ev *evs;
static size_t nev, cap_ev;

static void take(uint32_t type, uint32_t tid, const void *data, uint32_t size, int bo)
{
	struct ev *e;

	if (nev == cap_ev) {
		cap_ev = cap_ev ? cap_ev * 2 : 1024;
		evs = realloc(evs, cap_ev * sizeof(*evs));
		if (!evs)
			abort();
	}
	e = &evs[nev];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->tid = tid;
	if (type == UEVENT_TYPE_RANGE_BEGIN && !uevent_range_begin_decode(data, size, bo, &e->b))
		e->text = strdup(e->b.name);
	else if (type == UEVENT_TYPE_RANGE_END && !uevent_range_end_decode(data, size, bo, &e->e))
		;
	else if ((type == UEVENT_TYPE_TEXT || type == INJECT_META_TYPE) && size &&
		 ((const char *)data)[size - 1] == 0)
		e->text = strdup(data);
	else
		return;
	nev++;
}

static void forget(void)
{
	size_t i;

	for (i = 0; i < nev; i++)
		free(evs[i].text);
	nev = 0;
}

static size_t count(uint32_t type, const char *text)
{
	size_t i, n = 0;

	for (i = 0; i < nev; i++)
		n += evs[i].type == type && evs[i].text && !strcmp(evs[i].text, text);
	return n;
}

static const struct ev *find(uint32_t type, const char *text)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == type && evs[i].text && !strcmp(evs[i].text, text))
			return &evs[i];
	return NULL;
}

static const struct ev *end_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == UEVENT_TYPE_RANGE_END && evs[i].e.id == id)
			return &evs[i];
	return NULL;
}

static const struct ev *begin_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == UEVENT_TYPE_RANGE_BEGIN && evs[i].b.id == id)
			return &evs[i];
	return NULL;
}

static int meta_has(const char *prefix, const char *needle)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].type == INJECT_META_TYPE && !strncmp(evs[i].text, prefix, strlen(prefix)) &&
		    strstr(evs[i].text, needle))
			return 1;
	return 0;
}

static char dir[4096], client[4096 + 64], lib[4096 + 64], chain[4096 + 64], module[4096 + 64];

/* Runs the client to completion with env set; its exit status. */
static int run(char *const argv[], const char *transport, const char *file, const char *counts)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setenv("NVTX_INJECTION64_PATH", lib, 1);
		setenv("UEVENT_TRANSPORT", transport, 1);
		if (file)
			setenv("UEVENT_FILE", file, 1);
		if (counts) {
			setenv("UEVENT_NVTX_CHAIN", chain, 1);
			setenv("NVTX_CHAIN_COUNTS", counts, 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned long chain_count(const char *path, const char *name)
{
	char line[128], n[64];
	unsigned long v, found = (unsigned long)-1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lu", n, &v) == 2 && !strcmp(n, name))
			found = v;
	if (f)
		fclose(f);
	return found;
}

static void file_transport(void)
{
	char file[] = "/tmp/nvtx-check-XXXXXX", counts[] = "/tmp/nvtx-chain-XXXXXX";
	char *argv[] = { client, "all", module, NULL };
	struct uevent_record rec = { .sz = sizeof(rec) };
	struct uevent_file_reader *r;
	const struct ev *outer, *inner, *innermost, *a, *reg, *plain, *e;
	size_t i, work = 0, step = 0, nested = 0;
	int fd, st, ret, bo;
	static const struct { const char *name; unsigned long n; } want[] = {
		{ "MarkA", 2 }, { "MarkW", 1 }, { "MarkEx", 1 },
		{ "RangePushA", 2 + 2 * THREADS * ROUNDS + 1 }, { "RangePushW", 1 },
		{ "RangePushEx", 1 }, { "RangePop", 5 + 2 * THREADS * ROUNDS + 1 },
		{ "RangeStartA", 1 }, { "RangeEnd", 1 }, { "NameCategoryA", 1 },
		{ "NameOsThreadA", 1 }, { "DomainCreateA", 1 }, { "DomainNameCategoryA", 1 },
		{ "DomainRegisterStringA", 1 }, { "DomainRangePushEx", 1 }, { "DomainMarkEx", 1 },
		{ "DomainRangeStartEx", 1 }, { "DomainRangeEnd", 1 }, { "DomainRangePop", 1 },
		{ "DomainDestroy", 1 }, { "mismatch", 0 }, { "inits", 1 },
	};
	char wrong[512] = "";

	fd = mkstemp(file);
	close(fd);
	unlink(file);
	fd = mkstemp(counts);
	close(fd);
	st = run(argv, "file", file, counts);
	ok(st == 0, "the client ran, NVTX's return values as NVTX defines them (exit %d)", st);
	r = uevent_file_reader__open(file);
	if (!r) {
		ok(0, "its uevents file opens: %s", strerror(errno));
		return;
	}
	bo = uevent_file_reader__byte_order(r);
	while ((ret = uevent_file_reader__next(r, &rec)) == 1)
		take(rec.type, rec.id.tid, rec.data, rec.size, bo);
	uevent_file_reader__close(r);
	ok(ret == 0 && nev > 0, "the uevents file reads to its end (%zu records)", nev);

	ok(count(UEVENT_TYPE_TEXT, "mark A") == 1 && count(UEVENT_TYPE_TEXT, "mark W \xc3\xbc") == 1 &&
	   count(UEVENT_TYPE_TEXT, "mark Ex") == 1,
	   "nvtxMarkA, nvtxMarkW (as UTF-8) and nvtxMarkEx are marks");
	ok(meta_has("nvtx mark", "category=7 category_name=seven color=#ff00ff00 payload=i64:42"),
	   "nvtxMarkEx's category (named by nvtxNameCategoryA), colour and payload follow it");

	outer = find(UEVENT_TYPE_RANGE_BEGIN, "outer");
	inner = find(UEVENT_TYPE_RANGE_BEGIN, "inner");
	innermost = find(UEVENT_TYPE_RANGE_BEGIN, "innermost");
	ok(outer && inner && innermost && !outer->b.parent && inner->b.parent == outer->b.id &&
	   innermost->b.parent == inner->b.id && !(inner->b.flags & UEVENT_RANGE_ASYNC),
	   "push/pop: nested ranges, each the parent of the next");
	ok(outer && inner && innermost && end_of(outer->b.id) && end_of(inner->b.id) &&
	   end_of(innermost->b.id) &&
	   end_of(innermost->b.id) < end_of(inner->b.id) && end_of(inner->b.id) < end_of(outer->b.id),
	   "each pop ends the innermost range, in order");
	if (inner) {
		char want_attr[128];

		snprintf(want_attr, sizeof(want_attr), "nvtx range=%#" PRIx64 " ", inner->b.id);
		ok(meta_has(want_attr, "category=7 category_name=seven color=#ff00ff00 payload=i64:42"),
		   "nvtxRangePushEx's attributes are kept, keyed by the range's id");
	} else {
		ok(0, "nvtxRangePushEx's attributes are kept");
	}

	a = find(UEVENT_TYPE_RANGE_BEGIN, "async");
	e = a ? end_of(a->b.id) : NULL;
	ok(a && e && (a->b.flags & UEVENT_RANGE_ASYNC) && (e->e.flags & UEVENT_RANGE_ASYNC) &&
	   e->tid != a->tid, "start/end: an async range, ended on another thread");

	plain = find(UEVENT_TYPE_RANGE_BEGIN, "plain");
	reg = find(UEVENT_TYPE_RANGE_BEGIN, "dom:reg");
	ok(plain && reg && reg->b.parent == plain->b.id && end_of(reg->b.id),
	   "a domain's push of a registered string: named domain:string, nested, ended");
	ok(count(UEVENT_TYPE_TEXT, "dom:dmark") == 1 && find(UEVENT_TYPE_RANGE_BEGIN, "dom:dasync") &&
	   end_of(find(UEVENT_TYPE_RANGE_BEGIN, "dom:dasync")->b.id),
	   "a domain's mark and start/end range carry the domain in their name");
	ok(meta_has("nvtx category", "domain=dom id=3 name=three") &&
	   meta_has("nvtx range=", "domain=dom category=3 category_name=three") &&
	   meta_has("nvtx domain", "name=dom") && meta_has("nvtx domain_destroy", "name=dom"),
	   "domain create/destroy, its categories and its ranges' category in side records");
	ok(meta_has("nvtx thread", "name=client main"), "nvtxNameOsThreadA is a side record");

	for (i = 0; i < nev; i++) {
		const struct ev *p;

		if (evs[i].type != UEVENT_TYPE_RANGE_BEGIN)
			continue;
		if (!strcmp(evs[i].text, "thread work"))
			work += end_of(evs[i].b.id) && end_of(evs[i].b.id)->tid == evs[i].tid;
		if (!strcmp(evs[i].text, "thread step")) {
			step++;
			p = begin_of(evs[i].b.parent);
			nested += p && !strcmp(p->text, "thread work") && p->tid == evs[i].tid &&
				  end_of(evs[i].b.id);
		}
	}
	ok(work == THREADS * ROUNDS && step == THREADS * ROUNDS && nested == THREADS * ROUNDS,
	   "%d threads: %zu, %zu of %d ranges, %zu nested in their own thread's",
	   THREADS, work, step, THREADS * ROUNDS, nested);
	ok(count(UEVENT_TYPE_RANGE_BEGIN, "module range") == 1 && count(UEVENT_TYPE_TEXT, "module mark") == 1,
	   "a second NVTX module's calls land in the same stream");

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned long got = chain_count(counts, want[i].name);

		if (got != want[i].n)
			snprintf(wrong + strlen(wrong), sizeof(wrong) - strlen(wrong), " %s=%ld (want %lu)",
				 want[i].name, (long)got, want[i].n);
	}
	ok(!*wrong, "UEVENT_NVTX_CHAIN: the chained library got every call, its own handles and ids back%s",
	   wrong);
	forget();
	unlink(file);
	unlink(counts);
}

/* The client calls NVTX, then a session starts on it, then it calls again. */
static void live_session(void)
{
	struct uevent_session_opts so = { .sz = sizeof(so),
					  .transports = 1u << UEVENT_TRANSPORT_USDT };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s = NULL;
	int to[2], from[2], idle = 0, ret, st = -1, exited = 0;
	const struct ev *late;
	char c;
	pid_t pid;
	size_t i, orphan_ends = 0;

	if (getuid() != 0 || access("/sys/bus/event_source/devices/uprobe", F_OK) < 0) {
		skip(3, "a live session needs root and uprobes");
		return;
	}
	if (pipe(to) < 0 || pipe(from) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		setenv("NVTX_INJECTION64_PATH", lib, 1);
		setenv("UEVENT_TRANSPORT", "usdt", 1);
		unsetenv("UEVENT_NVTX_CHAIN");
		execl(client, client, "late", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	if (read(from[0], &c, 1) == 1) {
		so.pid = pid;
		s = uevent_session__open(&so);
	}
	if (write(to[1], "1", 1) != 1)
		kill(pid, SIGKILL);
	while (s && idle < 3 && (ret = uevent_session__next(s, &r, 200)) >= 0) {
		if (ret == 0) {
			if (!exited && waitpid(pid, &st, WNOHANG) == pid)
				exited = 1;
			idle += exited;
			continue;
		}
		if (r.type == PERF_RECORD_UEVENT)
			take(r.u.uevent.type, r.id.tid, r.u.uevent.data, r.u.uevent.size, UEVENT_BO_HOST);
	}
	if (!exited)
		waitpid(pid, &st, 0);
	uevent_session__close(s);
	ok(s && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "a session opened on the running client, which exited 0 (%d)", st);
	late = find(UEVENT_TYPE_RANGE_BEGIN, "late range");
	ok(count(UEVENT_TYPE_TEXT, "late mark") == 1 && late && end_of(late->b.id),
	   "calls after the session started are uevents");
	for (i = 0; i < nev; i++)
		orphan_ends += evs[i].type == UEVENT_TYPE_RANGE_END && !begin_of(evs[i].e.id);
	ok(!count(UEVENT_TYPE_TEXT, "early mark") && !find(UEVENT_TYPE_RANGE_BEGIN, "early outer") &&
	   !orphan_ends, "calls before it are not, and the pop of a range pushed before it ends nothing");
	forget();
}

int main(void)
{
	const char *b = getenv("top_builddir");

	snprintf(dir, sizeof(dir), "%s/inject", b ? b : ".");
	snprintf(client, sizeof(client), "%s/nvtx-client", dir);
	snprintf(lib, sizeof(lib), "%s/.libs/libuevent-nvtx.so", dir);
	snprintf(chain, sizeof(chain), "%s/.libs/nvtx-chain.so", dir);
	snprintf(module, sizeof(module), "%s/.libs/nvtx-module.so", dir);
	if (access(client, X_OK) < 0 || access(lib, R_OK) < 0)
		plan_skip_all("no NVTX headers: ./configure --with-nvtx-include=DIR (DIR/nvtx3/nvToolsExt.h)");
	plan(18);
	file_transport();
	live_session();
	return exit_status();
}
