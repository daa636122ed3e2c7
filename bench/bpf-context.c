/* bpf-context.c - what the BPF context path costs a sample, against sampling without it. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <linux/perf_event.h>

#include "uevent.h"

#if HAVE_BPF_CONTEXT
#include <unistd.h>
#include <bpf/bpf.h>

/*
 * The kernel's own count of the sample program's runs and time (bpf_stats_enabled,
 * on while the fd of bpf_enable_stats() is open): the program's cost, apart from the
 * sample it rides on. 0 when not found.
 */
static int prog_stats(uint64_t *cnt, uint64_t *ns)
{
	uint32_t id = 0;

	while (bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    !strncmp(info.name, "uevent_ctx_samp", 15)) {
			*cnt = info.run_cnt;
			*ns = info.run_time_ns;
			close(fd);
			return 1;
		}
		close(fd);
	}
	return 0;
}
#endif

#define PERIOD_NS	100000ull	/* cpu-clock: 10 000 samples a CPU second */
#define WORK		300000000L	/* iterations of the sampled loop */
#define ROUNDS		3

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct reader {
	struct uevent_session *s;
	volatile int stop;
	long samples, with;
	uint64_t cpu;
	uint64_t runs, run_ns;		/* the BPF program's, from the kernel */			/* the reader thread's CPU time */
};

static void *read_all(void *arg)
{
	struct reader *rd = arg;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	uint64_t t0 = thread_cpu_ns();
	int ret;

	for (;;) {
		int last = rd->stop;

		while ((ret = uevent_session__next(rd->s, &r, last ? 100 : 20)) == 1)
			if (r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE) {
				rd->samples++;
				rd->with += r.u.sample.context_err == 0;
			}
		if (last)
			break;
	}
	rd->cpu = thread_cpu_ns() - t0;
	return NULL;
}

/* The sampled loop's CPU time (the samples' interrupts are charged to it). */
static uint64_t work(void)
{
	volatile uint64_t x = 0;
	uint64_t t0 = thread_cpu_ns();

	for (long i = 0; i < WORK; i++)
		x += (uint64_t)i;
	return thread_cpu_ns() - t0;
}

/* One run: 0 no session, 1 samples, 2 samples with context. */
static int run(int mode, uint64_t *work_ns, struct reader *rd)
{
	struct uevent_session_opts so = { .sz = sizeof(so), .pid = 0,
					  .sample_period_ns = PERIOD_NS,
					  .transports = 1u << UEVENT_TRANSPORT_USDT };
	pthread_t th;

	memset(rd, 0, sizeof(*rd));
	if (!mode) {
		*work_ns = work();
		return 0;
	}
	if (mode == 2)
		so.flags |= UEVENT_SESSION_CONTEXT;
	rd->s = uevent_session__open(&so);
	if (!rd->s)
		return -errno;
	if (mode == 2 && strstr(uevent_reason(), "context")) {
		fprintf(stderr, "bpf-context: %s\n", uevent_reason());
		uevent_session__close(rd->s);
		return -ENOTSUP;
	}
	pthread_create(&th, NULL, read_all, rd);
	*work_ns = work();
	rd->stop = 1;
	pthread_join(th, NULL);
#if HAVE_BPF_CONTEXT
	if (mode == 2)
		prog_stats(&rd->runs, &rd->run_ns);
#endif
	uevent_session__close(rd->s);
	return 0;
}

int main(void)
{
	static const uint8_t trace[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const uint8_t span[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t best[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX }, w;
	struct reader rd, keep[3];
	struct uevent_feature_info fi;

	if (uevent_feature_probe(UEVENT_FEAT_BPF_CONTEXT, &fi) < 0 ||
	    fi.state != UEVENT_FEAT_PRESENT) {
		printf("bpf-context: SKIP: %s\n", fi.detail);
		return 0;
	}
	uevent_thread_context_set(trace, span, 1);
	memset(keep, 0, sizeof(keep));
#if HAVE_BPF_CONTEXT
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
#endif
	/* interleaved, best of ROUNDS: drift on a shared machine hits each mode alike */
	for (int r = 0; r < ROUNDS; r++)
		for (int m = 0; m < 3; m++) {
			int err = run(m, &w, &rd);

			if (err < 0) {
				fprintf(stderr, "bpf-context: mode %d: %s (%s)\n", m, strerror(-err),
					uevent_reason());
				return 1;
			}
			if (w < best[m]) {
				best[m] = w;
				keep[m] = rd;
			}
		}
	{
		double plain = (double)(best[1] - best[0]) / (double)(keep[1].samples ? keep[1].samples : 1);
		double ctx = (double)(best[2] - best[0]) / (double)(keep[2].samples ? keep[2].samples : 1);
		double rplain = (double)keep[1].cpu / (double)(keep[1].samples ? keep[1].samples : 1);
		double rctx = (double)keep[2].cpu / (double)(keep[2].samples ? keep[2].samples : 1);

		printf("bpf-context: a sample every %llu ns of CPU, %ld-iteration loop, best of %d\n",
		       PERIOD_NS, WORK, ROUNDS);
		printf("  loop alone               %8.1f ms\n", best[0] / 1e6);
		printf("  sampled                  %8.1f ms  %6ld samples  %7.0f ns a sample (sampled thread)\n",
		       best[1] / 1e6, keep[1].samples, plain);
		printf("  sampled + BPF context    %8.1f ms  %6ld samples  %7.0f ns a sample (sampled thread), "
		       "%ld with context\n", best[2] / 1e6, keep[2].samples, ctx, keep[2].with);
		printf("  sampled thread: BPF context / without, per sample: %.2fx; the loop: %.3fx\n",
		       plain > 0 ? ctx / plain : 0, (double)best[2] / (double)best[1]);
		printf("  reader: %.0f ns a sample without, %.0f ns with: %.2fx\n", rplain, rctx,
		       rplain > 0 ? rctx / rplain : 0);
		if (keep[2].runs)
			printf("  the BPF program itself (kernel's bpf_stats): %.0f ns a run, %" PRIu64
			       " runs; against the sampled thread's cost of a sample without it: "
			       "%.3fx\n", (double)keep[2].run_ns / (double)keep[2].runs,
			       keep[2].runs, plain > 0 ? (plain + (double)keep[2].run_ns /
							 (double)keep[2].runs) / plain : 0);
	}
#if HAVE_BPF_CONTEXT
	if (stats_fd >= 0)
		close(stats_fd);
#endif
	return 0;
}
