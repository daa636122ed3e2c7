/*
 * guest-enable-word.c - in each guest (patched and stock), what a mark nobody listens to
 * costs through libuevent (linked statically): on the patched kernel through the prctl
 * transport, whose enabled-word bit the kernel keeps (patch 0007, PR_PERF_UEVENT_ENABLE_
 * WORD); on the stock kernel through the usdt transport with no probe attached (the
 * semaphore the kernel keeps is 0). Both should be one load. bench/guest.sh puts the two
 * runs side by side (issue 13 item 5: patched / stock <= 1.1).
 *
 * usage: guest-enable-word [patched|stock]
 * Prints, per run, the best of BATCHES interleaved batches in ns per call of:
 * UEVENT_MARK() (the macro: the load), uevent_mark() (its out-of-line twin, for FFI
 * callers), a loop doing only a relaxed load of a volatile word (this boot's speed, for
 * a ratio that does not depend on how fast TCG ran this boot), getppid(), and on the
 * patched kernel the bare prctl with no listener (what a disabled mark cost before 0007,
 * when the prctl transport set the ALWAYS bit). The last line, "enable-word-ns FLAVOUR
 * MARK LOAD", is for guest.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_uevent.h>

#include "uevent.h"

#define BATCHES	7
#define N_LOAD	4000000
#define N_SYS	4000

static volatile uint32_t plain;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum what { MARK_MACRO, MARK_FN, LOAD, GETPPID, PRCTL_OFF, NWHAT };
static const char *const names[NWHAT] = {
	"UEVENT_MARK()", "uevent_mark()", "plain load", "getppid()", "prctl, no listener",
};

/* One loop per kind, each its own function: no dispatch inside a timed loop. */
#define LOOP(name, n, expr)						\
	static __attribute__((noinline)) int name(void)			\
	{								\
		int hits = 0;						\
		for (int i = 0; i < (n); i++)				\
			hits += (expr);					\
		return hits;						\
	}
LOOP(loop_macro, N_LOAD, UEVENT_MARK("disabled"))
LOOP(loop_fn, N_LOAD, uevent_mark("disabled"))
LOOP(loop_load, N_LOAD, __builtin_expect(__atomic_load_n(&plain, __ATOMIC_RELAXED) != 0, 0))
LOOP(loop_getppid, N_SYS, (int)syscall(SYS_getppid) < 0)
LOOP(loop_prctl, N_SYS, (int)syscall(SYS_prctl, PR_TASK_PERF_UEVENT, 1UL, 9UL, "disabled",
				     0UL) != 0)

static int (*const loops[NWHAT])(void) = {
	loop_macro, loop_fn, loop_load, loop_getppid, loop_prctl,
};

static double batch(enum what w)
{
	int n = w >= GETPPID ? N_SYS : N_LOAD, hits;
	uint64_t t0 = now_ns();

	hits = loops[w]();
	if (hits)
		printf("guest-enable-word: %s returned non-zero %d times\n", names[w], hits);
	return (double)(now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : "patched";
	int patched = !strcmp(flavour, "patched");
	const char *want = patched ? "prctl" : "usdt";
	double best[NWHAT];
	int t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("UEVENT_TRANSPORT", want, 1);
	t = uevent_open(NULL);
	if (t < 0 || strcmp(uevent_transport_name(t), want)) {
		printf("guest-enable-word: skipped: transport %s not opened (%s)\n", want,
		       uevent_reason());
		return 0;
	}
	if (uevent_enabled()) {
		printf("guest-enable-word: skipped: %s is enabled with nobody listening (%#x)\n",
		       want, *uevent_enabled_ptr);
		return 0;
	}
	for (int w = 0; w < NWHAT; w++)
		best[w] = 1e30;
	for (int b = 0; b < BATCHES; b++)
		for (int w = 0; w < NWHAT; w++) {
			double ns;

			if (w == PRCTL_OFF && !patched)
				continue;
			ns = batch(w);
			if (ns < best[w])
				best[w] = ns;
		}
	printf("guest-enable-word: %s kernel, %s transport, nobody listening; best of %d "
	       "batches (%d calls, syscalls %d), ns per call:\n", flavour, want, BATCHES,
	       N_LOAD, N_SYS);
	for (int w = 0; w < NWHAT; w++)
		if (best[w] < 1e30)
			printf("guest-enable-word:   %-20s %9.2f ns  (x plain load %.2f)\n", names[w],
			       best[w], best[w] / best[LOAD]);
	printf("enable-word-ns %s %.3f %.3f\n", flavour, best[MARK_MACRO], best[LOAD]);
	return 0;
}
