/*
 * series-smoke.c - the guest smoke test of one prefix of the kernel series
 * (kernel/check-series, make check-kernel-series).
 *
 * usage: series-smoke boot|prctl   (default: $UEVENT_KERNEL)
 * boot:  the prefix does not wire up the prctl yet: the kernel booted, ran /init and
 *        refuses PR_TASK_PERF_UEVENT as an unknown option (EINVAL).
 * prctl: the prctl is there: the ABI query answers, one mark reaches a per-task
 *        uevents listener; then each feature the query reports is exercised once (the
 *        enable word follows a listener's open and close; a context area registers).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tap.h"
#include "kperf.h"	/* errno, stdint, string, syscall, unistd, perf_event, perf_uevent */

#define MARK_TYPE	0x5e7e5
#define WORD_BIT	3

static int listener(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID;
	a.uevents = 1;
	return perf_open(&a, 0, -1, -1, 0);
}

struct seen {
	int marks;
	int right;
};

static void on_record(const struct perf_event_header *h, void *arg)
{
	const struct perf_uevent_record_v1 *r = (const void *)(h + 1);
	struct seen *s = arg;

	if (h->type != PERF_RECORD_UEVENT)
		return;
	s->marks++;
	if (r->format == PERF_UEVENT_FORMAT_V1 && r->type == MARK_TYPE && r->size == 5 &&
	    !memcmp(r + 1, "smoke", 5))
		s->right++;
}

static void prctl_smoke(void)
{
	static struct ring ring;
	struct perf_uevent_abi abi;
	struct seen seen = { 0, 0 };
	volatile uint32_t word = 0;
	static uint64_t area[8];
	long r;
	int fd;

	memset(&abi, 0, sizeof(abi));
	r = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(r == 0 && abi.record_type == PERF_RECORD_UEVENT &&
	   abi.format == PERF_UEVENT_FORMAT_CURRENT,
	   "the ABI query answers (%ld, %s; record type %u, format %u, features %#x)", r,
	   r ? strerror(errno) : "ok", abi.record_type, abi.format, abi.features);

	fd = listener();
	if (fd < 0 || ring_map(&ring, fd, 8)) {
		ok(0, "a uevents listener opens and maps (%s)", strerror(errno));
	} else {
		r = kperf_uevent(MARK_TYPE, 5, "smoke", 0);
		ring_drain(&ring, on_record, &seen);
		ok(r >= 0 && seen.marks == 1 && seen.right == 1,
		   "a mark reaches the listener (%ld; %d records, %d right)", r, seen.marks,
		   seen.right);
		ring_unmap(&ring);
		close(fd);
	}

	if (abi.features & PERF_UEVENT_FEAT_ENABLE_WORD) {
		uint32_t on, off;

		r = kperf_uevent(WORD_BIT, 0, (const void *)&word, PR_PERF_UEVENT_ENABLE_WORD);
		fd = listener();
		on = word;
		if (fd >= 0)
			close(fd);
		off = word;
		ok(r == 0 && fd >= 0 && (on >> WORD_BIT & 1) && !(off >> WORD_BIT & 1),
		   "the enable word follows a listener (%ld, set %#x, then %#x)", r, on, off);
	} else {
		skip(1, "the query reports no enable word in this prefix");
	}

	if (abi.features & PERF_UEVENT_FEAT_TLS_AREA) {
		r = syscall(SYS_prctl, PR_PERF_TLS_AREA, (unsigned long)area, sizeof(area), 0,
			    0);
		ok(r == 0, "a context area registers (%ld)", r);
	} else {
		skip(1, "the query reports no context area in this prefix");
	}
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");
	int with_prctl = want && !strcmp(want, "prctl");
	long r;

	plan(with_prctl ? 5 : 2);
	ok(1, "the kernel booted and ran /init (%s)", want ? want : "?");
	if (!with_prctl) {
		r = kperf_uevent(0, 0, NULL, PR_PERF_UEVENT_QUERY);
		ok(r == -1 && errno == EINVAL,
		   "no prctl in this prefix: PR_TASK_PERF_UEVENT is an unknown option (%ld, %s)",
		   r, r ? strerror(errno) : "ok");
		return exit_status();
	}
	prctl_smoke();
	return exit_status();
}
