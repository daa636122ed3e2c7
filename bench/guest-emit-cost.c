/*
 * guest-emit-cost.c - in the patched guest: what one event costs through the prctl
 * (PR_TASK_PERF_UEVENT) and through user_events, with no listener and with one perf
 * listener on the emitting task, for 16-byte and 4 KiB payloads (issue 13 item 7: "why
 * not user_events?"). Raw system calls, no library: the kernel paths alone.
 *
 * Each cell is the best of BATCHES interleaved batches (TCG timing is noisy; the minimum
 * is the cost), in ns per event, and its ratio to a bare getppid() timed in the same run.
 * user_events "off" is what a user_events writer pays when nobody listens: a load of the
 * enable bit the kernel maintains, no system call; "off, write" is a write() anyway.
 * A listener's ring is emptied between batches (data_tail = data_head) so that no
 * record is lost: a lost record costs less than a written one.
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
#include <linux/perf_uevent.h>
#include <linux/user_events.h>

#include "kperf.h"

#define TRACING		"/sys/kernel/tracing"
#define EVENT		"uevent_bench"
#define ENABLE_BIT	0
#define BATCHES		7
#define RING_PAGES	512	/* 2 MiB: a batch of 4 KiB records fits */

static const int sizes[2] = { 16, PERF_UEVENT_MAX_PAYLOAD };
static int batch_of(int size)
{
	return size > 64 ? 200 : 2000;
}

static unsigned char payload[PERF_UEVENT_MAX_PAYLOAD];
static volatile uint32_t enabled;
static int dfd = -1;
static uint32_t write_index;

enum path { GETPPID, PRCTL, UE_BIT, UE_WRITE, NPATH };

static long emit_once(enum path p, int size)
{
	uint32_t type = 1, rel_loc = (uint32_t)size << 16;
	struct iovec iov[4] = {
		{ &write_index, sizeof(write_index) },
		{ &type, sizeof(type) },
		{ &rel_loc, sizeof(rel_loc) },
		{ payload, (size_t)size },
	};

	switch (p) {
	case GETPPID:
		return syscall(SYS_getppid);
	case PRCTL:
		return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, 1UL, (unsigned long)size, payload, 0UL);
	case UE_BIT:
		/* the user_events way: write only when the kernel says someone listens */
		if (!(__atomic_load_n(&enabled, __ATOMIC_RELAXED) & (1u << ENABLE_BIT)))
			return 0;
		return writev(dfd, iov, 4);
	case UE_WRITE:
		return writev(dfd, iov, 4);
	default:
		return -1;
	}
}

/* ns per call of one batch; the ring (if any) is emptied after it */
static double batch(enum path p, int size, struct ring *r)
{
	int n = batch_of(size);
	uint64_t t = now_ns();

	for (int i = 0; i < n; i++)
		emit_once(p, size);
	t = now_ns() - t;
	if (r && r->meta)
		__atomic_store_n(&r->meta->data_tail,
				 __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
	return (double)t / n;
}

static int open_prctl_listener(struct ring *r)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.uevents = 1;
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0 && ring_map(r, fd, RING_PAGES)) {
		close(fd);
		return -1;
	}
	return fd;
}

static long tracepoint_id(void)
{
	char buf[32];
	long id = -1;
	int fd = open(TRACING "/events/user_events/" EVENT "/id", O_RDONLY);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			id = strtol(buf, NULL, 10);
		}
		close(fd);
	}
	return id;
}

/* perf's way to listen to a user_event: a sample per write with the fields in RAW */
static int open_ue_listener(struct ring *r)
{
	struct perf_event_attr a;
	long id = tracepoint_id();
	int fd;

	if (id < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0 && ring_map(r, fd, RING_PAGES)) {
		close(fd);
		return -1;
	}
	/* the kernel sets the enable bit when perf attaches */
	for (int i = 0; fd >= 0 && i < 200 && !(enabled & (1u << ENABLE_BIT)); i++)
		usleep(5000);
	return fd;
}

static int ue_register(void)
{
	struct user_reg reg = { .size = sizeof(reg) };

	dfd = open(TRACING "/user_events_data", O_RDWR | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	reg.enable_bit = ENABLE_BIT;
	reg.enable_size = sizeof(enabled);
	reg.enable_addr = (uintptr_t)&enabled;
	reg.name_args = (uintptr_t)EVENT " u32 type;__rel_loc u8[] data";
	if (ioctl(dfd, DIAG_IOCSREG, &reg) < 0)
		return -1;
	write_index = reg.write_index;
	return 0;
}

/* the cells: [row][size] best ns */
enum row { R_GETPPID, R_PRCTL_OFF, R_PRCTL_ON, R_UE_OFF, R_UE_OFF_WRITE, R_UE_ON, NROW };
static const char *const row_name[NROW] = {
	"getppid() (baseline)", "prctl, no listener", "prctl, one perf listener",
	"user_events, no listener (enable bit)", "user_events, no listener, write() anyway",
	"user_events, one perf listener",
};
static double best[NROW][2];

static void take(enum row row, int s, double ns)
{
	if (ns < best[row][s])
		best[row][s] = ns;
}

int main(void)
{
	struct ring pr = { 0 }, ur = { 0 };
	int pfd, ufd, have_ue;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)i;
	for (int r = 0; r < NROW; r++)
		best[r][0] = best[r][1] = 1e30;
	if (syscall(SYS_prctl, PR_TASK_PERF_UEVENT, 1UL, 0UL, payload, 0UL) < 0) {
		printf("guest-emit-cost: skipped: no PR_TASK_PERF_UEVENT (%s)\n", strerror(errno));
		return 0;
	}
	have_ue = ue_register() == 0;
	if (!have_ue)
		printf("guest-emit-cost: user_events rows skipped: %s\n", strerror(errno));

	for (int b = 0; b < BATCHES; b++) {
		for (int s = 0; s < 2; s++) {
			take(R_GETPPID, s, batch(GETPPID, sizes[s], NULL));
			take(R_PRCTL_OFF, s, batch(PRCTL, sizes[s], NULL));
			if (have_ue) {
				take(R_UE_OFF, s, batch(UE_BIT, sizes[s], NULL));
				take(R_UE_OFF_WRITE, s, batch(UE_WRITE, sizes[s], NULL));
			}
		}
		/* one listener at a time, each on this task only */
		pfd = open_prctl_listener(&pr);
		if (pfd >= 0) {
			for (int s = 0; s < 2; s++)
				take(R_PRCTL_ON, s, batch(PRCTL, sizes[s], &pr));
			ring_unmap(&pr);
			close(pfd);
		}
		if (have_ue) {
			ufd = open_ue_listener(&ur);
			if (ufd >= 0 && (enabled & (1u << ENABLE_BIT))) {
				for (int s = 0; s < 2; s++)
					take(R_UE_ON, s, batch(UE_BIT, sizes[s], &ur));
			}
			if (ufd >= 0) {
				ring_unmap(&ur);
				close(ufd);
			}
			for (int i = 0; i < 200 && (enabled & (1u << ENABLE_BIT)); i++)
				usleep(5000);
		}
	}

	printf("guest-emit-cost: best of %d batches (%d calls of 16 B, %d of 4 KiB), ns per "
	       "event and x getppid() of this run\n", BATCHES, batch_of(16), batch_of(4096));
	printf("| path | 16 B | x getppid | 4 KiB | x getppid |\n|---|---|---|---|---|\n");
	for (int r = 0; r < NROW; r++) {
		if (best[r][0] >= 1e30) {
			printf("| %s | - | - | - | - |\n", row_name[r]);
			continue;
		}
		printf("| %s | %.0f | %.2f | %.0f | %.2f |\n", row_name[r], best[r][0],
		       best[r][0] / best[R_GETPPID][0], best[r][1], best[r][1] / best[R_GETPPID][1]);
	}
	if (best[R_UE_ON][0] < 1e30 && best[R_PRCTL_ON][0] < 1e30)
		printf("guest-emit-cost: ratio user_events/prctl with one listener: 16 B %.2f, "
		       "4 KiB %.2f\n", best[R_UE_ON][0] / best[R_PRCTL_ON][0],
		       best[R_UE_ON][1] / best[R_PRCTL_ON][1]);
	if (best[R_UE_OFF_WRITE][0] < 1e30)
		printf("guest-emit-cost: ratio prctl/user_events write() with no listener: 16 B "
		       "%.2f, 4 KiB %.2f\n", best[R_PRCTL_OFF][0] / best[R_UE_OFF_WRITE][0],
		       best[R_PRCTL_OFF][1] / best[R_UE_OFF_WRITE][1]);
	return 0;
}
