/* emit.c - ns per emit for each transport against the bare mechanism it rests on. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>
#include <linux/user_events.h>
#include <sys/ioctl.h>

#include "uevent.h"
#include "bench.h"

#if HAVE_SYS_SDT_H
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
/* A bare probe site, the baseline for the usdt transport with a tracer attached. */
__extension__ unsigned short uevent_bench_bare_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));
#endif

/* errno of a failed baseline call in the current comparison: its row is not printed. */
static int failed;

static void row(const char *what, double ours, const char *base, double bare)
{
	if (failed) {
		printf("%-26s skipped: the baseline call failed: %s\n", what, strerror(failed));
		failed = 0;
		return;
	}
	if (bare > 0)
		printf("%-26s %9.2f ns   %-30s %9.2f ns   ratio %.3f\n", what, ours, base, bare,
		       ours / bare);
	else
		printf("%-26s %9.2f ns\n", what, ours);
}

static volatile uint32_t plain_word;

/*
 * A listener on this task: a perf event with a small ring that nobody reads, so the
 * kernel takes its full delivery path (and drops what does not fit, alike for both
 * loops of a comparison). Returns the fd, or -1.
 */
static int listen_self(struct perf_event_attr *a)
{
	int fd = (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (mmap(NULL, 17 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	static const char text[] = "a benchmark mark, 32 bytes long";
	long n_fast = 200000000, n_sys = 200000;
	char path[64];
	int fd;

	if (argc > 1 && !strcmp(argv[1], "--quick")) {
		n_fast /= 20;
		n_sys /= 20;
	}
#if HAVE_SYS_SDT_H
	/* Run by bench/usdt-hit.sh under `perf stat` with both probes attached. */
	if (argc > 1 && !strcmp(argv[1], "--usdt-hit")) {
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USDT);
		volatile unsigned short *bare_sem = &uevent_bench_bare_semaphore;
		uint32_t type = UEVENT_TYPE_TEXT;
		const void *data = text;
		size_t size = sizeof(text);
		long n = 50000;
		double bare, ours;

		if (uevent_open(&o) != UEVENT_TRANSPORT_USDT || !*bare_sem ||
		    !(uevent_enabled_word & 0xffff)) {
			printf("usdt hit                   skipped: attach both probes "
			       "(bench/usdt-hit.sh does)\n");
			return 0;
		}
		MEASURE2(n, bare, ours,
			 if (*bare_sem) STAP_PROBE3(uevent_bench, bare, type, data, size),
			 UEVENT_EMIT(UEVENT_TYPE_TEXT, text, sizeof(text)));
		row("usdt hit UEVENT_EMIT()", ours, "bare STAP_PROBE3 hit", bare);
		return 0;
	}
#endif
	printf("# libuevent %s emit benchmark (best of 5 or 7 interleaved runs; ratio = ours / bare)\n", uevent_version());

	/* disabled: transport none, nobody attached */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_NONE);
		double d, f, base;

		uevent_open(&o);
		if (uevent_enabled())
			printf("# note: a uprobe holds the USDT semaphore; disabled numbers are off\n");
		MEASURE2(n_fast, base, d, (void)plain_word, UEVENT_MARK(text));
		f = MEASURE(n_fast / 10, uevent_mark(text));
		row("disabled UEVENT_MARK()", d, "volatile load (loop floor)", base);
		row("disabled uevent_mark()", f, "", 0);
	}

	/* file: one writev of a whole record with O_APPEND, against the same writev by hand */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = path);
		struct {
			struct perf_event_header h;
			struct perf_uevent_record_v1 v;
		} head = { { PERF_RECORD_UEVENT, 0, 64 }, { 1, sizeof(text), 0, 0 } };
		uint64_t id[2] = { 1, 2 };
		static const uint8_t pad[8];
		struct iovec iov[4] = {
			{ &head, sizeof(head) }, { (void *)text, sizeof(text) },
			{ (void *)pad, 0 }, { id, sizeof(id) },
		};
		double ours, bare, stamped;

		char bpath[80];

		snprintf(path, sizeof(path), "/tmp/uevent-bench-%d.perf.data", (int)getpid());
		snprintf(bpath, sizeof(bpath), "%s.bare", path);
		fd = open(bpath, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || uevent_open(&o) != UEVENT_TRANSPORT_FILE) {
			printf("%-26s skipped: %s: %s\n", "file", path, strerror(errno));
		} else {
			MEASURE2(n_sys, bare, ours, if (writev(fd, iov, 4) < 0) failed = errno,
				 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));
			row("file uevent_emit()", ours, "writev(O_APPEND) same record", bare);
			/* Both files start empty again: in the guest /tmp is a small RAM disk. */
			if (ftruncate(fd, 0) < 0 || truncate(path, 0) < 0)
				failed = errno;
			/* What a hand-written timestamped logger does: read the clock, writev. */
			MEASURE2(n_sys, stamped, ours,
				 id[1] = (uint64_t)now(); if (writev(fd, iov, 4) < 0) failed = errno,
				 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));
			row("file uevent_emit()", ours, "clock_gettime + writev", stamped);
		}
		if (fd >= 0)
			close(fd);
		unlink(bpath);
		unlink(path);
	}

	/* ftrace: trace_marker_raw */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FTRACE);
		int tfd = open("/sys/kernel/tracing/trace_marker_raw", O_WRONLY);
		char buf[8 + sizeof(text)] = "uev1\0\0\0";

		memcpy(buf + 8, text, sizeof(text));
		if (tfd >= 0 && uevent_open(&o) == UEVENT_TRANSPORT_FTRACE) {
			double bare, ours;

			MEASURE2(n_sys, bare, ours, if (write(tfd, buf, sizeof(buf)) < 0) failed = errno,
				 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));

			row("ftrace uevent_emit()", ours, "write(trace_marker_raw)", bare);
			close(tfd);
		} else {
			printf("%-26s skipped: %s\n", "ftrace", uevent_reason());
		}
	}

	/* prctl: only on the patched kernel; elsewhere show the syscall floor */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_PRCTL);
		double bare = MEASURE(n_sys, prctl(PR_TASK_PERF_UEVENT, 0UL, sizeof(text),
						   (unsigned long)text, 0UL));

		if (uevent_open(&o) == UEVENT_TRANSPORT_PRCTL) {
			struct perf_event_attr a;
			double ours;
			int lfd;

			MEASURE2(n_sys, bare, ours,
				 prctl(PR_TASK_PERF_UEVENT, 0UL, sizeof(text), (unsigned long)text, 0UL),
				 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));
			row("prctl, no listener", ours, "prctl(PR_TASK_PERF_UEVENT)", bare);

			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_SOFTWARE;
			a.config = PERF_COUNT_SW_DUMMY;
			a.uevents = 1;
			a.sample_id_all = 1;
			a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
			lfd = listen_self(&a);
			if (lfd >= 0) {
				MEASURE2(n_sys, bare, ours,
					 prctl(PR_TASK_PERF_UEVENT, 0UL, sizeof(text),
					       (unsigned long)text, 0UL),
					 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));
				row("prctl, one listener", ours, "prctl(PR_TASK_PERF_UEVENT)", bare);
				close(lfd);
			}
		} else {
			printf("%-26s skipped: %s (bare prctl: %.1f ns)\n", "prctl",
			       uevent_reason(), bare);
		}
	}

	/* user_events: with perf attached to our tracepoint, against the same writev */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USER_EVENTS,
			    .flags = UEVENT_OPEN_IGNORE_ENV);
		struct perf_event_attr a;
		char buf[32];
		int lfd = -1, ufd, idfd;
		ssize_t n;

		if (uevent_open(&o) != UEVENT_TRANSPORT_USER_EVENTS) {
			printf("%-26s skipped: %s\n", "user_events", uevent_reason());
		} else if ((idfd = open("/sys/kernel/tracing/events/user_events/libuevent_v1/id",
					O_RDONLY)) < 0 ||
			   (n = read(idfd, buf, sizeof(buf) - 1)) <= 0) {
			printf("%-26s skipped: no tracepoint id\n", "user_events");
		} else {
			struct user_reg reg;
			static const char args[] = "libuevent_v1 u32 type;__rel_loc u8[] data";
			static uint32_t bare_word;
			uint32_t type = UEVENT_TYPE_TEXT, rel = (uint32_t)sizeof(text) << 16;
			struct iovec iov[4];
			double bare, ours;

			buf[n] = 0;
			close(idfd);
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = strtoull(buf, NULL, 10);
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_RAW;
			lfd = listen_self(&a);
			/* The bare side registers its own enabler on the same event. */
			ufd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
			memset(&reg, 0, sizeof(reg));
			reg.size = sizeof(reg);
			reg.enable_bit = 0;
			reg.enable_size = 4;
			reg.enable_addr = (uintptr_t)&bare_word;
			reg.name_args = (uintptr_t)args;
			if (lfd < 0 || ufd < 0 || ioctl(ufd, DIAG_IOCSREG, &reg) < 0 ||
			    !uevent_enabled()) {
				printf("%-26s skipped: cannot attach perf to the tracepoint\n",
				       "user_events");
			} else {
				iov[0] = (struct iovec){ &reg.write_index, 4 };
				iov[1] = (struct iovec){ &type, 4 };
				iov[2] = (struct iovec){ &rel, 4 };
				iov[3] = (struct iovec){ (void *)text, sizeof(text) };
				MEASURE2(n_sys, bare, ours, if (writev(ufd, iov, 4) < 0) failed = errno,
					 uevent_emit(UEVENT_TYPE_TEXT, text, sizeof(text)));
				row("user_events, perf attached", ours, "writev(user_events_data)", bare);
			}
			if (lfd >= 0)
				close(lfd);
			if (ufd >= 0)
				close(ufd);
		}
	}

	/* usdt with nobody attached: the emit is the enabled check */
	{
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USDT);

		if (uevent_open(&o) == UEVENT_TRANSPORT_USDT && !uevent_enabled()) {
			double base, ours;

			MEASURE2(n_fast, base, ours, (void)plain_word,
				 UEVENT_EMIT(UEVENT_TYPE_TEXT, text, sizeof(text)));

			row("usdt idle UEVENT_EMIT()", ours, "volatile load (loop floor)", base);
		} else {
			printf("%-26s skipped: %s\n", "usdt idle", uevent_reason());
		}
	}
	uevent_close();
	return 0;
}
