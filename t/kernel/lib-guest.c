/*
 * lib-guest.c - libuevent itself (statically linked) inside the test kernel.
 *
 * usage: lib-guest [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * Patched kernel: auto-probe picks prctl; uevent_kernel_abi() reports the ABI; the
 * kernel keeps the library's enable word (patch 4): uevent_enabled() is 0 with nobody
 * listening, so marks cost nothing and count nothing, 1 while a uevents=1 listener is
 * open; marks emitted through the library arrive in that ring and decode with
 * uevent_record_decode(). Stock kernel: auto-probe picks user_events, prctl is refused,
 * and every mark arrives through the user_events tracepoint.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "tap.h"
#include "kperf.h"

#define N_MARKS	32

struct got {
	int n, bad;
	char why[128];
	uint64_t sample_type;
};

static void mark_text(char *buf, size_t cap, int i)
{
	snprintf(buf, cap, "libuevent guest mark %d %.*s", i, i % 40,
		 "........................................");
}

static void note(struct got *g, const char *what)
{
	if (!g->bad++)
		snprintf(g->why, sizeof(g->why), "record %d: %s", g->n, what);
}

/* a PERF_RECORD_UEVENT through uevent_record_decode + uevent_text_decode */
static void on_uevent(const struct perf_event_header *h, void *arg)
{
	struct got *g = arg;
	struct uevent_record rec = { .sz = sizeof(rec) };
	struct uevent_text text;
	char want[128];

	if (h->type != PERF_RECORD_UEVENT)
		return;
	if (uevent_record_decode(h, h->size, UEVENT_BO_HOST, g->sample_type, 0, &rec) < 0) {
		note(g, "uevent_record_decode failed");
	} else if (rec.type != UEVENT_TYPE_TEXT ||
		   uevent_text_decode(rec.data, rec.size, UEVENT_BO_HOST, &text) < 0) {
		note(g, "not a text payload");
	} else {
		mark_text(want, sizeof(want), g->n);
		if (strcmp(text.text, want))
			note(g, "text differs");
		if (!(rec.id.fields & UEVENT_ID_TID) || (pid_t)rec.id.tid != ktid())
			note(g, "sample_id tid is not ours");
	}
	g->n++;
}

/* a user_events sample: RAW = common header (8), u32 type, u32 __rel_loc, data */
static void on_user_event(const struct perf_event_header *h, void *arg)
{
	struct got *g = arg;
	const unsigned char *p = (const unsigned char *)(h + 1);
	uint32_t raw_size, type, rel_loc;
	const unsigned char *raw;
	struct uevent_text text;
	char want[128];

	if (h->type != PERF_RECORD_SAMPLE)
		return;
	memcpy(&raw_size, p + 8, 4);	/* after TID */
	raw = p + 12;
	memcpy(&type, raw + 8, 4);
	memcpy(&rel_loc, raw + 12, 4);
	mark_text(want, sizeof(want), g->n);
	if (raw_size < 16 + (rel_loc >> 16) || type != UEVENT_TYPE_TEXT) {
		note(g, "bad raw layout");
	} else if (uevent_text_decode(raw + 16 + (rel_loc & 0xffff), rel_loc >> 16,
				      UEVENT_BO_HOST, &text) < 0 || strcmp(text.text, want)) {
		note(g, "text differs");
	}
	g->n++;
}

static int emit_marks(void)
{
	char buf[128];
	int fails = 0;

	for (int i = 0; i < N_MARKS; i++) {
		mark_text(buf, sizeof(buf), i);
		if (uevent_mark(buf) < 0)
			fails++;
	}
	return fails;
}

static long tracepoint_id(const char *name)
{
	char path[256], buf[32];
	long id = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/user_events/%s/id", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		id = strtol(buf, NULL, 10);
	}
	close(fd);
	return id;
}

static int run_patched(void)
{
	struct uevent_kernel_abi abi;
	struct uevent_stats st;
	struct perf_event_attr a;
	struct got g = { 0 };
	struct ring r;
	int t, fd, fails;

	plan(12);
	unsetenv("UEVENT_TRANSPORT");
	t = uevent_open(NULL);
	ok(t == UEVENT_TRANSPORT_PRCTL, "auto-probe picks prctl (%s: %s)",
	   t > 0 ? uevent_transport_name(t) : strerror(-t), uevent_reason());
	memset(&abi, 0, sizeof(abi));
	t = uevent_kernel_abi(&abi);
	ok(t == 0 && abi.record_type == PERF_RECORD_UEVENT &&
	   abi.format == PERF_UEVENT_FORMAT_V1 && abi.max_payload == PERF_UEVENT_MAX_PAYLOAD &&
	   (abi.features & PERF_UEVENT_FEAT_ENABLE_WORD),
	   "uevent_kernel_abi: record %u format %u max %u features %#x", abi.record_type,
	   abi.format, abi.max_payload, abi.features);

	setenv("UEVENT_TRANSPORT", "prctl", 1);
	t = uevent_open(NULL);
	ok(t == UEVENT_TRANSPORT_PRCTL, "UEVENT_TRANSPORT=prctl opens prctl");

	ok(!uevent_enabled() && !UEVENT_ENABLED(),
	   "nobody listening: the kernel keeps the enabled word clear (%#x)", *uevent_enabled_ptr);
	uevent_stats_reset();
	ok(emit_marks() == 0, "%d marks with nobody listening return 0", N_MARKS);
	t = uevent_stats_get(&st, sizeof(st));
	ok(t == 0 && st.emitted == 0 && st.unobserved == 0,
	   "stats: the disabled marks never reached the transport (%llu emitted, %llu unobserved)",
	   (unsigned long long)st.emitted, (unsigned long long)st.unobserved);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.uevents = 1;
	a.exclude_kernel = 1;
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ring_map(&r, fd, 16)) {
		ok(0, "uevents=1 listener opens (%s)", strerror(errno));
		skip(4, "no listener");
		return exit_status();
	}
	ok(uevent_enabled() && UEVENT_ENABLED(),
	   "a uevents=1 listener on this task: enabled (%#x)", *uevent_enabled_ptr);
	uevent_stats_reset();
	fails = emit_marks();
	g.sample_type = a.sample_type;
	ring_drain(&r, on_uevent, &g);
	ok(!fails && g.n == N_MARKS, "%d of %d marks arrive in the uevents=1 ring", g.n, N_MARKS);
	ok(g.n && !g.bad, "they decode with uevent_record_decode, text and tid right%s%s",
	   g.bad ? ": " : "", g.why);
	t = uevent_stats_get(&st, sizeof(st));
	ok(t == 0 && st.emitted == N_MARKS && st.unobserved == 0 && st.dropped == 0, "stats: %llu emitted, %llu unobserved, %llu dropped",
	   (unsigned long long)st.emitted, (unsigned long long)st.unobserved,
	   (unsigned long long)st.dropped);
	ring_unmap(&r);
	close(fd);
	ok(!uevent_enabled(), "its close (and unmap): disabled again (%#x)", *uevent_enabled_ptr);

	/*
	 * Unprivileged, the kernel does not say whether anyone listens, but the enable word
	 * does: with nobody listening the marks stop at the word, nothing counted; with a
	 * listener they are counted delivered, none unobserved.
	 */
	{
		pid_t child = fork();
		int status = -1;

		if (child == 0) {
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(2);
			setenv("UEVENT_TRANSPORT", "prctl", 1);
			if (uevent_open(NULL) != UEVENT_TRANSPORT_PRCTL)
				_exit(3);
			uevent_stats_reset();
			if (emit_marks() || uevent_enabled())
				_exit(4);
			if (uevent_stats_get(&st, sizeof(st)) || st.emitted != 0)
				_exit(5);
			fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0 || !uevent_enabled() || emit_marks())
				_exit(7);
			if (uevent_stats_get(&st, sizeof(st)) || st.emitted != N_MARKS)
				_exit(8);
			_exit(st.unobserved == 0 ? 0 : 6);
		}
		waitpid(child, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "unprivileged: disabled marks stop at the word; with its own listener the "
		   "kernel tells no count and no mark is counted unobserved (status %d)", status);
	}
	return exit_status();
}

static int run_stock(void)
{
	struct uevent_kernel_abi abi;
	struct perf_event_attr a;
	struct got g = { 0 };
	struct ring r;
	long id;
	int t, fd, fails;

	plan(6);
	setenv("UEVENT_TRANSPORT", "prctl", 1);
	t = uevent_open(NULL);
	ok(t == -ENODEV, "UEVENT_TRANSPORT=prctl is refused: %s (%s)",
	   t < 0 ? strerror(-t) : uevent_transport_name(t), uevent_reason());
	unsetenv("UEVENT_TRANSPORT");
	t = uevent_open(NULL);
	ok(t == UEVENT_TRANSPORT_USER_EVENTS, "auto-probe falls back to user_events (%s: %s)",
	   t > 0 ? uevent_transport_name(t) : strerror(-t), uevent_reason());
	ok(uevent_kernel_abi(&abi) < 0, "uevent_kernel_abi reports no patched ABI");

	id = tracepoint_id("libuevent_v1");
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	fd = id > 0 ? perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) : -1;
	if (fd < 0 || ring_map(&r, fd, 64)) {
		ok(0, "perf attaches to user_events:libuevent_v1 (id %ld, %s)", id, strerror(errno));
		skip(2, "no tracepoint");
		return exit_status();
	}
	for (int i = 0; i < 200 && !uevent_enabled(); i++)
		usleep(5000);
	ok(uevent_enabled(), "perf attaches to user_events:libuevent_v1; the kernel enables it");
	fails = emit_marks();
	ring_drain(&r, on_user_event, &g);
	ok(!fails && g.n == N_MARKS, "no mark lost: %d of %d arrive through user_events", g.n,
	   N_MARKS);
	ok(g.n && !g.bad, "payloads byte-exact%s%s", g.bad ? ": " : "", g.why);
	close(fd);
	return exit_status();
}

/*
 * `lib-guest spin-context`: a workload for probe-guest.sh's `uevent record --tls`: sets
 * the thread context 4bf92f3577b34da6a3ce929d0e0e4736 / 00f067aa0ba902b7 (flags 01, the
 * W3C example) and spins for 300 ms of CPU time.
 */
static int spin_context(void)
{
	static const uint8_t trace[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
					   0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };
	static const uint8_t span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };
	volatile uint64_t sink = 0;
	struct timespec ts;
	uint64_t t0, t;

	if (uevent_thread_context_set(trace, span, 1))
		return 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	do {
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	} while (t - t0 < 300000000u);
	return 0;
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "spin-context"))
		return spin_context();
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();
	return run_patched();
}
