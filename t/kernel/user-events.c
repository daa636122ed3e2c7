/*
 * user-events.c - guest test of the user_events transport end to end (both kernels).
 *
 * Registers an event through /sys/kernel/tracing/user_events_data (DIAG_IOCSREG with
 * enable_addr/enable_bit), checks that the kernel sets the enable bit when a perf event
 * attaches to the tracepoint and clears it when the event closes, and reads the written
 * payloads back as PERF_SAMPLE_RAW.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/user_events.h>

#include "tap.h"
#include "kperf.h"

#define TRACING		"/sys/kernel/tracing"
#define EVENT		"libuevent_ktest"
#define NWRITES		5
#define MAGIC		0x75657674u
#define ENABLE_BIT	3
#define PLAN		10

static volatile uint32_t enabled;

struct seen {
	int n, bad;
	pid_t tid;
	char why[128];
};

static void on_sample(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const unsigned char *p = (const unsigned char *)(h + 1);
	uint32_t pid, tid, raw_size, seq, magic;
	int32_t common_pid;

	if (h->type != PERF_RECORD_SAMPLE)
		return;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	/* TID, then TIME (u64), then RAW: u32 size, trace entry */
	memcpy(&raw_size, p + 16, 4);
	memcpy(&common_pid, p + 20 + 4, 4);
	memcpy(&seq, p + 20 + 8, 4);
	memcpy(&magic, p + 20 + 12, 4);
	if ((pid_t)tid != s->tid || common_pid != s->tid) {
		if (!s->bad++)
			snprintf(s->why, sizeof(s->why), "tid %u/%d, want %d", tid, common_pid, s->tid);
	} else if (raw_size < 16 || magic != MAGIC || seq != (uint32_t)s->n) {
		if (!s->bad++)
			snprintf(s->why, sizeof(s->why), "raw size %u seq %u magic %#x", raw_size,
				 seq, magic);
	}
	s->n++;
}

static int wait_bit(int want)
{
	for (int i = 0; i < 200; i++) {
		if (!!(__atomic_load_n(&enabled, __ATOMIC_RELAXED) & (1u << ENABLE_BIT)) == want)
			return 1;
		usleep(5000);
	}
	return 0;
}

int main(void)
{
	struct user_reg reg = { .size = sizeof(reg) };
	struct user_unreg unreg = { .size = sizeof(unreg) };
	struct perf_event_attr a;
	struct seen s = { .tid = 0 };
	struct ring r;
	char buf[64];
	int dfd, fd, idfd, writes = 0;
	long id = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	plan(PLAN);
	dfd = open(TRACING "/user_events_data", O_RDWR | O_CLOEXEC);
	if (!ok(dfd >= 0, "open " TRACING "/user_events_data (%s)", dfd < 0 ? strerror(errno) : "ok")) {
		skip(PLAN - 1, "no user_events");
		return exit_status();
	}
	reg.enable_bit = ENABLE_BIT;
	reg.enable_size = sizeof(enabled);
	reg.enable_addr = (uintptr_t)&enabled;
	reg.name_args = (uintptr_t)EVENT " u32 seq;u32 magic";
	if (!ok(ioctl(dfd, DIAG_IOCSREG, &reg) == 0 && !(enabled & (1u << ENABLE_BIT)),
		"DIAG_IOCSREG registers '" EVENT "' (write_index %u), enable bit clear",
		reg.write_index)) {
		diag("register: %s", strerror(errno));
		skip(PLAN - 2, "registration failed");
		return exit_status();
	}

	idfd = open(TRACING "/events/user_events/" EVENT "/id", O_RDONLY);
	if (idfd >= 0) {
		ssize_t n = read(idfd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			id = strtol(buf, NULL, 10);
		}
		close(idfd);
	}
	ok(id > 0, "tracepoint user_events:" EVENT " has id %ld", id);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	a.wakeup_events = 1;
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ok(fd >= 0 && ring_map(&r, fd, 16) == 0, "perf event on the tracepoint opens and maps (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	ok(fd >= 0 && wait_bit(1), "the kernel sets the enable bit when perf attaches (%#x)",
	   enabled);

	for (uint32_t seq = 0; seq < NWRITES; seq++) {
		uint32_t payload[2] = { seq, MAGIC };
		struct iovec io[2] = {
			{ &reg.write_index, sizeof(reg.write_index) },
			{ payload, sizeof(payload) },
		};

		if (writev(dfd, io, 2) == (ssize_t)(sizeof(reg.write_index) + sizeof(payload)))
			writes++;
	}
	ok(writes == NWRITES, "%d of %d writes accepted", writes, NWRITES);
	s.tid = ktid();
	if (fd >= 0)
		ring_drain(&r, on_sample, &s);
	ok(s.n == NWRITES, "%d of %d payloads arrive as perf samples", s.n, NWRITES);
	ok(s.n && !s.bad, "payloads byte-exact, in order, with the writer's tid%s%s",
	   s.bad ? ": " : "", s.why);

	if (fd >= 0) {
		ring_unmap(&r);
		close(fd);
	}
	ok(wait_bit(0), "the enable bit clears when the perf event closes (%#x)", enabled);

	unreg.disable_bit = ENABLE_BIT;
	unreg.disable_addr = (uintptr_t)&enabled;
	ok(ioctl(dfd, DIAG_IOCSUNREG, &unreg) == 0 && close(dfd) == 0,
	   "DIAG_IOCSUNREG unregisters (%s)", strerror(errno));
	dfd = open(TRACING "/user_events_data", O_RDWR | O_CLOEXEC);
	if (dfd >= 0) {
		ioctl(dfd, DIAG_IOCSDEL, EVENT);	/* tidy; may be busy for a moment */
		close(dfd);
	}
	return exit_status();
}
