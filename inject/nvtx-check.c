/* nvtx-check.c - libuevent-nvtx.so end to end: inject/nvtx-client calls NVTX through its
 * own loader with NVTX_INJECTION64_PATH set; its uevents are read back (file transport, and
 * a live usdt session that starts while the client runs) and checked by name, nesting and
 * count; a chained second injection library gets every call too. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "uevent.h"
#include "tap.h"
#include "inject.h"
#include "check.h"

#define THREADS	8
#define ROUNDS	100

static char dir[2048], client[2048 + 64], lib[2048 + 64], chain[2048 + 64], module[2048 + 64];

static void file_transport(void)
{
	char counts[] = "/tmp/nvtx-chain-XXXXXX";
	char *argv[] = { client, "all", module, NULL };
	const struct ev *outer, *inner, *innermost, *a, *reg, *plain, *e;
	size_t work, step;
	int fd, st, ret;
	static const struct check_want want[] = {
		{ "MarkA", 2 }, { "MarkW", 1 }, { "MarkEx", 1 },
		{ "RangePushA", 2 + 2 * THREADS * ROUNDS + 1 }, { "RangePushW", 1 },
		{ "RangePushEx", 1 }, { "RangePop", 5 + 2 * THREADS * ROUNDS + 1 },
		{ "RangeStartA", 1 }, { "RangeEnd", 1 }, { "NameCategoryA", 1 },
		{ "NameOsThreadA", 1 }, { "DomainCreateA", 1 }, { "DomainNameCategoryA", 1 },
		{ "DomainRegisterStringA", 1 }, { "DomainRangePushEx", 1 }, { "DomainMarkEx", 1 },
		{ "DomainRangeStartEx", 1 }, { "DomainRangeEnd", 1 }, { "DomainRangePop", 1 },
		{ "DomainDestroy", 1 }, { "mismatch", 0 }, { "inits", 1 },
	};
	char wrong[512];

	fd = mkstemp(counts);
	if (fd >= 0)
		close(fd);
	st = check_run_file(argv, "NVTX_INJECTION64_PATH", lib, "UEVENT_NVTX_CHAIN", chain, counts, &ret);
	ok(st == 0, "the client ran, NVTX's return values as NVTX defines them (exit %d)", st);
	ok(ret > 0, "the uevents file reads to its end (%d records)", ret);

	ok(check_count(UEVENT_TYPE_TEXT, "mark A") == 1 && check_count(UEVENT_TYPE_TEXT, "mark W \xc3\xbc") == 1 &&
	   check_count(UEVENT_TYPE_TEXT, "mark Ex") == 1,
	   "nvtxMarkA, nvtxMarkW (as UTF-8) and nvtxMarkEx are marks");
	ok(check_meta_has("nvtx mark", "category=7 category_name=seven color=#ff00ff00 payload=i64:42"),
	   "nvtxMarkEx's category (named by nvtxNameCategoryA), colour and payload follow it");

	outer = check_find(UEVENT_TYPE_RANGE_BEGIN, "outer");
	inner = check_find(UEVENT_TYPE_RANGE_BEGIN, "inner");
	innermost = check_find(UEVENT_TYPE_RANGE_BEGIN, "innermost");
	ok(outer && inner && innermost && !outer->b.parent && inner->b.parent == outer->b.id &&
	   innermost->b.parent == inner->b.id && !(inner->b.flags & UEVENT_RANGE_ASYNC),
	   "push/pop: nested ranges, each the parent of the next");
	ok(outer && inner && innermost && check_end_of(outer->b.id) && check_end_of(inner->b.id) &&
	   check_end_of(innermost->b.id) &&
	   check_end_of(innermost->b.id) < check_end_of(inner->b.id) && check_end_of(inner->b.id) < check_end_of(outer->b.id),
	   "each pop ends the innermost range, in order");
	if (inner) {
		char want_attr[128];

		snprintf(want_attr, sizeof(want_attr), "nvtx range=%#" PRIx64 " ", inner->b.id);
		ok(check_meta_has(want_attr, "category=7 category_name=seven color=#ff00ff00 payload=i64:42"),
		   "nvtxRangePushEx's attributes are kept, keyed by the range's id");
	} else {
		ok(0, "nvtxRangePushEx's attributes are kept");
	}

	a = check_find(UEVENT_TYPE_RANGE_BEGIN, "async");
	e = a ? check_end_of(a->b.id) : NULL;
	ok(a && e && (a->b.flags & UEVENT_RANGE_ASYNC) && (e->e.flags & UEVENT_RANGE_ASYNC) &&
	   e->tid != a->tid, "start/end: an async range, ended on another thread");

	plain = check_find(UEVENT_TYPE_RANGE_BEGIN, "plain");
	reg = check_find(UEVENT_TYPE_RANGE_BEGIN, "dom:reg");
	ok(plain && reg && reg->b.parent == plain->b.id && check_end_of(reg->b.id),
	   "a domain's push of a registered string: named domain:string, nested, ended");
	ok(check_count(UEVENT_TYPE_TEXT, "dom:dmark") == 1 && check_find(UEVENT_TYPE_RANGE_BEGIN, "dom:dasync") &&
	   check_end_of(check_find(UEVENT_TYPE_RANGE_BEGIN, "dom:dasync")->b.id),
	   "a domain's mark and start/end range carry the domain in their name");
	ok(check_meta_has("nvtx category", "domain=dom id=3 name=three") &&
	   check_meta_has("nvtx range=", "domain=dom category=3 category_name=three") &&
	   check_meta_has("nvtx domain", "name=dom") && check_meta_has("nvtx domain_destroy", "name=dom"),
	   "domain create/destroy, its categories and its ranges' category in side records");
	ok(check_meta_has("nvtx thread", "name=client main"), "nvtxNameOsThreadA is a side record");

	work = check_nested("thread work", NULL);
	step = check_nested("thread step", "thread work");
	ok(work == THREADS * ROUNDS && step == THREADS * ROUNDS,
	   "%d threads: %zu, %zu of %d ranges, the inner nested in their own thread's outer",
	   THREADS, work, step, THREADS * ROUNDS);
	ok(check_count(UEVENT_TYPE_RANGE_BEGIN, "module range") == 1 && check_count(UEVENT_TYPE_TEXT, "module mark") == 1,
	   "a second NVTX module's calls land in the same stream");

	check_chain(counts, want, sizeof(want) / sizeof(want[0]), wrong, sizeof(wrong));
	ok(!*wrong, "UEVENT_NVTX_CHAIN: the chained library got every call, its own handles and ids back%s",
	   wrong);
	check_forget();
	unlink(counts);
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
	/* the client calls, then a session starts on it, then it calls again */
	check_late_tap(client, "NVTX_INJECTION64_PATH", lib, "UEVENT_NVTX_CHAIN", "", "range pushed");
	return exit_status();
}
