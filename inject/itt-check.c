/* itt-check.c - libuevent-itt.so end to end: inject/itt-client, two ITT static parts
 * following Intel's collector protocol with INTEL_LIBITTNOTIFY64 set, is read back (file
 * transport, and a live usdt session that starts while it runs) and checked by name,
 * nesting and count; a chained second collector gets every call too. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uevent.h"
#include "tap.h"
#include "inject.h"
#include "check.h"

#define THREADS	4
#define ROUNDS	50

static char client[2048 + 64], lib[2048 + 64], chain[2048 + 64];

/* The values of the counter name, in order, as "7,8,..." */
static void counter_values(const char *name, char *out, size_t cap)
{
	size_t i, n = 0;

	*out = 0;
	for (i = 0; i < nev && n < cap - 24; i++)
		if (evs[i].type == UEVENT_TYPE_COUNTER && !strcmp(evs[i].c.name, name))
			n += (size_t)snprintf(out + n, cap - n, "%s%lld", n ? "," : "",
					      (long long)evs[i].c.value);
}

static void file_transport(void)
{
	char counts[] = "/tmp/itt-chain-XXXXXX";
	char *argv[] = { client, "all", NULL }, vals[256], wrong[512];
	const struct ev *work, *step, *o, *e;
	size_t i, frames = 0, olaps = 0, cross = 0;
	int fd, st, ret;
	static const struct check_want want[] = {
		{ "domain_create", 1 }, { "string_handle_create", 7 }, { "thread_set_name", 1 },
		{ "task_begin", 2 + 2 * THREADS * ROUNDS + 1 }, { "task_begin_fn", 1 },
		{ "task_end", 3 + 2 * THREADS * ROUNDS + 1 }, { "task_begin_overlapped", 2 },
		{ "task_end_overlapped", 2 }, { "frame_begin_v3", 3 }, { "frame_end_v3", 3 },
		{ "marker", 1 }, { "counter_create", 1 }, { "counter_set_value", 1 },
		{ "counter_inc", 2 }, { "counter_inc_delta", 2 }, { "counter_dec", 1 },
		{ "counter_inc_v3", 2 }, { "metadata_add", 1 }, { "sync_create", 1 },
		{ "mismatch", 0 },
	};

	fd = mkstemp(counts);
	if (fd >= 0)
		close(fd);
	st = check_run_file(argv, "INTEL_LIBITTNOTIFY64", lib, "UEVENT_ITT_CHAIN", chain, counts, &ret);
	ok(st == 0, "the client ran: one domain per name across its two static parts (exit %d)", st);
	ok(ret > 0, "the uevents file reads to its end (%d records)", ret);

	work = check_find(UEVENT_TYPE_RANGE_BEGIN, "tbb:work");
	step = check_find(UEVENT_TYPE_RANGE_BEGIN, "tbb:step");
	ok(work && step && step->b.parent == work->b.id && check_end_of(step->b.id) &&
	   check_end_of(work->b.id) && check_end_of(step->b.id) < check_end_of(work->b.id),
	   "task_begin/task_end: nested ranges named domain:name");
	e = check_find(UEVENT_TYPE_RANGE_BEGIN, "tbb:qsort");
	ok(e && check_end_of(e->b.id), "task_begin_fn: a range named by the function's symbol");
	for (i = 0; i < nev; i++) {
		o = &evs[i];
		if (o->type != UEVENT_TYPE_RANGE_BEGIN || !(o->b.flags & UEVENT_RANGE_ASYNC))
			continue;
		e = check_end_of(o->b.id);
		if (!e || !(e->e.flags & UEVENT_RANGE_ASYNC))
			continue;
		frames += !strcmp(o->text, "tbb:frame");
		olaps += !strcmp(o->text, "tbb:olap");
		cross += !strcmp(o->text, "tbb:olap") && e->tid != o->tid;
	}
	ok(olaps == 2 && cross == 1,
	   "overlapped tasks: %zu async ranges by id, %zu ended on another thread", olaps, cross);
	ok(frames == 3, "frames: %zu of 3 async ranges domain:frame", frames);
	ok(check_count(UEVENT_TYPE_TEXT, "tbb:tick") == 1, "a marker is a mark");
	counter_values("tbb:depth", vals, sizeof(vals));
	ok(!strcmp(vals, "7,8,13,12"), "a counter: set 7, inc, inc by 5, dec: %s", vals);
	counter_values("tbb:early", vals, sizeof(vals));
	ok(!strcmp(vals, "3,4"), "a counter the static part made before it loaded us: %s", vals);
	counter_values("tbb:queue", vals, sizeof(vals));
	ok(!strcmp(vals, "1,2"), "a v3 counter by domain and string handle: %s", vals);
	ok(check_meta_has("itt metadata", "domain=tbb key=sizes values=3,4") &&
	   check_meta_has("itt thread", "name=itt main") && check_meta_has("itt domain", "name=tbb"),
	   "metadata, the thread's name and the domain in side records");
	ok(check_nested("tbb:work", NULL) == 1 + THREADS * ROUNDS &&
	   check_nested("tbb:step", "tbb:work") == 1 + THREADS * ROUNDS,
	   "%d threads: each's tasks nested in its own", THREADS);
	ok(check_nested("tbb:module task", NULL) == 1, "the second static part's calls are in the stream");

	check_chain(counts, want, sizeof(want) / sizeof(want[0]), wrong, sizeof(wrong));
	ok(!*wrong, "UEVENT_ITT_CHAIN: the chained collector got every call (sync_create, ours "
	   "lacks, straight), its own handles back%s", wrong);
	check_forget();
	unlink(counts);
}

int main(void)
{
	const char *b = getenv("top_builddir");

	snprintf(client, sizeof(client), "%s/inject/itt-client", b ? b : ".");
	snprintf(lib, sizeof(lib), "%s/inject/.libs/libuevent-itt.so", b ? b : ".");
	snprintf(chain, sizeof(chain), "%s/inject/.libs/itt-chain.so", b ? b : ".");
	if (access(client, X_OK) < 0 || access(lib, R_OK) < 0)
		plan_skip_all("inject/itt-client or libuevent-itt.so not built");
	plan(17);
	file_transport();
	/* the client calls, then a session starts on it, then it calls again */
	check_late_tap(client, "INTEL_LIBITTNOTIFY64", lib, "UEVENT_ITT_CHAIN", "tbb:", "task");
	return exit_status();
}
