/*
 * tls-user.c - guest test of PERF_SAMPLE_TLS_USER.
 *
 * usage: tls-user [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * Two threads each write their own pattern into a __thread array; a cpu-clock sampling
 * event on each thread with PERF_SAMPLE_TID|PERF_SAMPLE_TLS_USER must show that thread's
 * pattern at offset (var - (tp - size)) of every dump, where tp is the word at %fs:0,
 * and never the other thread's. On the stock kernel the sample type is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "kperf.h"

#define NTHREADS	2
#define MARK_WORDS	8
#define PLAN		15

static __thread uint64_t tls_mark[MARK_WORDS] __attribute__((aligned(8)));

struct worker {
	pthread_t th;
	int idx;
	pid_t tid;
	uintptr_t tp;		/* word at %fs:0 */
	uintptr_t fsbase;	/* ARCH_GET_FS */
	uintptr_t var;		/* &tls_mark */
	volatile int ready;
	uint64_t pattern[MARK_WORDS];
	struct ring ring;
	int fd;
	/* results */
	int samples, wrong_tid, wrong_size, short_read, found, foreign, lost;
};

static struct worker w[NTHREADS];
static volatile int go, stop;
static unsigned int dump_size;

static void *work(void *arg)
{
	struct worker *me = arg;
	volatile uint64_t sink = 0;

	for (int k = 0; k < MARK_WORDS; k++)
		tls_mark[k] = me->pattern[k];
	__asm__ volatile("mov %%fs:0, %0" : "=r"(me->tp));
	syscall(SYS_arch_prctl, ARCH_GET_FS, &me->fsbase);
	me->var = (uintptr_t)&tls_mark[0];
	me->tid = ktid();
	__atomic_store_n(&me->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 1000; i++)
			sink += i;
		/* keep the value live in TLS, as a tracer's context would be */
		tls_mark[MARK_WORDS - 1] = me->pattern[MARK_WORDS - 1];
	}
	return NULL;
}

static void on_sample(const struct perf_event_header *h, void *arg)
{
	struct worker *me = arg;
	const unsigned char *p = (const unsigned char *)(h + 1);
	const struct worker *other = &w[!me->idx];
	uint32_t pid, tid;
	uint64_t size, dyn;
	size_t off;

	if (h->type == PERF_RECORD_LOST) {
		me->lost++;
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	me->samples++;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	memcpy(&size, p + 8, 8);
	if ((pid_t)tid != me->tid)
		me->wrong_tid++;
	if (size != dump_size || h->size != sizeof(*h) + 16 + size + 8) {
		me->wrong_size++;
		return;
	}
	memcpy(&dyn, p + 16 + size, 8);
	if (dyn != size)
		me->short_read++;
	off = me->var - (me->tp - size);
	if (off + sizeof(me->pattern) <= size &&
	    !memcmp(p + 16 + off, me->pattern, sizeof(me->pattern)))
		me->found++;
	if (memmem(p + 16, size, other->pattern, sizeof(other->pattern)))
		me->foreign++;
}

static int open_tls(pid_t tid, unsigned int size, uint64_t sample_type)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 250000;	/* ns of the thread's CPU time */
	a.sample_type = sample_type;
	a.sample_tls_user = size;
	a.disabled = 0;
	return perf_open(&a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int run_stock(void)
{
	int fd;

	plan(2);
	fd = open_tls(0, 64, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd < 0 && errno == EINVAL, "stock: PERF_SAMPLE_TLS_USER is refused (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_tls(0, 64, PERF_SAMPLE_TID);
	ok(fd < 0 && errno == EINVAL, "stock: sample_tls_user (__reserved_2) must be 0 (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	return exit_status();
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");
	uintptr_t need;
	int fd, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();

	plan(PLAN);
	fd = open_tls(0, 12, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd < 0 && errno == EINVAL, "sample_tls_user not a multiple of 8: EINVAL (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_tls(0, 64, PERF_SAMPLE_TID);
	ok(fd < 0 && errno == EINVAL, "sample_tls_user without PERF_SAMPLE_TLS_USER: EINVAL (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);

	for (i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		for (int k = 0; k < MARK_WORDS; k++)
			w[i].pattern[k] = 0x544c53ULL << 40 | (uint64_t)(i + 1) << 32 |
					  (0x9e3779b9u * (k + 1) * (i + 7));
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	for (i = 0; i < NTHREADS; i++)
		while (!__atomic_load_n(&w[i].ready, __ATOMIC_ACQUIRE))
			usleep(1000);

	ok(w[0].tp == w[0].fsbase && w[1].tp == w[1].fsbase && w[0].tp != w[1].tp,
	   "the word at %%fs:0 is the FS base (TCB self pointer), one per thread");
	need = w[0].tp - w[0].var;
	dump_size = 512;
	while (dump_size < need + 64 && dump_size < 32768)
		dump_size *= 2;
	ok(w[0].var < w[0].tp && need + sizeof(w[0].pattern) <= dump_size &&
	   w[1].tp - w[1].var == need,
	   "__thread variable sits %lu bytes below the thread pointer (static TLS, variant II);"
	   " dumping %u bytes", (unsigned long)need, dump_size);

	for (i = 0; i < NTHREADS; i++) {
		w[i].fd = open_tls(w[i].tid, dump_size, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
		if (w[i].fd < 0 || ring_map(&w[i].ring, w[i].fd, 128)) {
			diag("thread %d: %s", i, strerror(errno));
			w[i].fd = -1;
		}
	}
	ok(w[0].fd >= 0 && w[1].fd >= 0, "task-clock events with PERF_SAMPLE_TLS_USER open on "
	   "each thread");

	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (int round = 0; round < 40; round++) {
		usleep(20000);
		for (i = 0; i < NTHREADS; i++)
			if (w[i].fd >= 0)
				ring_drain(&w[i].ring, on_sample, &w[i]);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(w[i].th, NULL);
	for (i = 0; i < NTHREADS; i++)
		if (w[i].fd >= 0)
			ring_drain(&w[i].ring, on_sample, &w[i]);

	for (i = 0; i < NTHREADS; i++) {
		struct worker *me = &w[i];

		diag("thread %d tid %d: %d samples, %d with its pattern, %d foreign, %d lost", i,
		     me->tid, me->samples, me->found, me->foreign, me->lost);
		ok(me->samples > 0, "thread %d: samples taken (%d)", i, me->samples);
		ok(me->samples && !me->wrong_tid && !me->wrong_size,
		   "thread %d: every sample is the thread's, size %u, layout size/data/dyn_size", i,
		   dump_size);
		ok(me->samples && !me->short_read, "thread %d: dyn_size == size (whole dump read)", i);
		ok(me->samples && me->found == me->samples - me->wrong_size,
		   "thread %d: own pattern at var - (tp - size) in every sample (%d/%d)", i,
		   me->found, me->samples);
		ok(me->samples && me->foreign == 0, "thread %d: the other thread's pattern never "
		   "appears (%d)", i, me->foreign);
		close(me->fd);
	}
	return exit_status();
}
