/*
 * tls-user.c - guest test of PERF_SAMPLE_TLS_USER.
 *
 * usage: tls-user [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * Two threads each write their own pattern into a __thread array; a cpu-clock sampling
 * event on each thread with PERF_SAMPLE_TID|PERF_SAMPLE_TLS_USER must show that thread's
 * pattern at offset (var - (tp - size)) of every dump, where tp is the word at %fs:0,
 * and never the other thread's. Then the dump at its largest next to STACK_USER,
 * REGS_USER, REGS_INTR and RAW, in every combination: each sample's header.size must be
 * the bytes its fields take, so the ring parses record by record up to data_head (a u16
 * size that wraps leaves the rest of the sample over unread data). On the stock kernel
 * the sample type is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <asm/perf_regs.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "kperf.h"

#define NTHREADS	2
#define MARK_WORDS	8
#define NCOMBO		16	/* STACK_USER x REGS_USER x REGS_INTR x RAW */
#define PLAN		(15 + 4 + NCOMBO)

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

/* x86-64 registers perf dumps: all but the segment registers a 64-bit task lacks */
#define REGS_MASK	(((1ULL << PERF_REG_X86_64_MAX) - 1) & \
			 ~(1ULL << PERF_REG_X86_DS | 1ULL << PERF_REG_X86_ES | \
			   1ULL << PERF_REG_X86_FS | 1ULL << PERF_REG_X86_GS))

struct walk {
	const unsigned char *data;
	uint64_t size, head;
	int samples, bad, max_tls, with_tls;
	unsigned int max_size;
	char why[160];
};

static uint64_t wget(const struct walk *wk, uint64_t pos, size_t n)
{
	uint64_t v = 0;

	for (size_t k = 0; k < n; k++)
		v |= (uint64_t)wk->data[(pos + k) % wk->size] << (8 * k);
	return v;
}

/*
 * Parse every record from 0 to data_head; a sample by its fields (the order of
 * perf_output_sample()): the bytes they take must be header.size.
 */
static void walk_ring(struct walk *wk, uint64_t st)
{
	uint64_t pos = 0;

	while (pos < wk->head) {
		uint64_t hsize = wget(wk, pos + 6, 2), type = wget(wk, pos, 4), p, n;

		if (hsize < 8 || pos + hsize > wk->head) {
			snprintf(wk->why, sizeof(wk->why), "record at %llu: size %llu past head %llu",
				 (unsigned long long)pos, (unsigned long long)hsize,
				 (unsigned long long)wk->head);
			wk->bad++;
			return;
		}
		if (type != PERF_RECORD_SAMPLE) {
			pos += hsize;
			continue;
		}
		wk->samples++;
		p = pos + 8 + 8;			/* header, TID */
		if (st & PERF_SAMPLE_RAW)
			p += 4 + wget(wk, p, 4);
		if (st & PERF_SAMPLE_REGS_USER)
			p += 8 + (wget(wk, p, 8) ? 8 * __builtin_popcountll(REGS_MASK) : 0);
		if (st & PERF_SAMPLE_STACK_USER) {
			n = wget(wk, p, 8);
			p += 8 + (n ? n + 8 : 0);
		}
		if (st & PERF_SAMPLE_REGS_INTR)
			p += 8 + (wget(wk, p, 8) ? 8 * __builtin_popcountll(REGS_MASK) : 0);
		n = wget(wk, p, 8);			/* TLS_USER */
		if (n) {
			wk->with_tls++;
			if ((int)n > wk->max_tls)
				wk->max_tls = (int)n;
		}
		p += 8 + (n ? n + 8 : 0);
		if (p - pos != hsize) {
			snprintf(wk->why, sizeof(wk->why), "sample at %llu: header.size %llu, "
				 "fields take %llu", (unsigned long long)pos,
				 (unsigned long long)hsize, (unsigned long long)(p - pos));
			wk->bad++;
			return;
		}
		if (hsize > wk->max_size)
			wk->max_size = (unsigned int)hsize;
		pos += hsize;
	}
}

/* One combination: the largest TLS dump with the other parts at their largest. */
static void combo(int c)
{
	static const char *names[] = { "STACK_USER", "REGS_USER", "REGS_INTR", "RAW" };
	static const uint64_t bits[] = { PERF_SAMPLE_STACK_USER, PERF_SAMPLE_REGS_USER,
					 PERF_SAMPLE_REGS_INTR, PERF_SAMPLE_RAW };
	struct perf_event_attr a;
	static struct ring r;
	struct walk wk;
	char what[80] = "TLS_USER";
	uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER;
	volatile uint64_t sink = 0;
	uint64_t t;
	int fd;

	for (int b = 0; b < 4; b++)
		if (c & 1 << b) {
			st |= bits[b];
			strcat(what, "+");
			strcat(what, names[b]);
		}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 200000;
	a.sample_type = st;
	a.sample_tls_user = PERF_SAMPLE_TLS_USER_MAX;
	a.sample_stack_user = (st & PERF_SAMPLE_STACK_USER) ? 65528 : 0;
	a.sample_regs_user = (st & PERF_SAMPLE_REGS_USER) ? REGS_MASK : 0;
	a.sample_regs_intr = (st & PERF_SAMPLE_REGS_INTR) ? REGS_MASK : 0;
	a.disabled = 1;
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ring_map(&r, fd, 64)) {
		ok(0, "%s: open and map (%s)", what, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/*
	 * a few samples (the ring holds 4 of the largest): 3 ms of spinning, longer until
	 * the first one comes when a loaded host gives the guest little of that time
	 */
	t = now_ns();
	while (now_ns() - t < 3000000 ||
	       (!__atomic_load_n(&r.meta->data_head, __ATOMIC_ACQUIRE) &&
		now_ns() - t < 10000000000ull))
		for (int i = 0; i < 1000; i++)
			sink += i;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	memset(&wk, 0, sizeof(wk));
	wk.data = r.data;
	wk.size = r.size;
	wk.head = __atomic_load_n(&r.meta->data_head, __ATOMIC_ACQUIRE);
	if (wk.head > wk.size)
		wk.head = wk.size;	/* wrapped: the first ring's worth is still whole */
	walk_ring(&wk, st);
	ok(wk.samples > 0 && !wk.bad && wk.with_tls == wk.samples,
	   "%s: %d samples, header.size == bytes of the fields in each (largest %u, TLS "
	   "dump up to %d)%s%s", what, wk.samples, wk.max_size, wk.max_tls,
	   wk.bad ? ": " : "", wk.why);
	ring_unmap(&r);
	close(fd);
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
	fd = open_tls(0, 0, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd < 0 && errno == EINVAL, "PERF_SAMPLE_TLS_USER with sample_tls_user 0: EINVAL (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_tls(0, PERF_SAMPLE_TLS_USER_MAX + 8, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd < 0 && errno == EINVAL, "sample_tls_user %d (max + 8): EINVAL (%s)",
	   PERF_SAMPLE_TLS_USER_MAX + 8, fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_tls(0, 65528, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd < 0 && errno == EINVAL, "sample_tls_user 65528: EINVAL (%s)",
	   fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_tls(0, PERF_SAMPLE_TLS_USER_MAX, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	ok(fd >= 0, "sample_tls_user %d (the max) opens (%s)", PERF_SAMPLE_TLS_USER_MAX,
	   fd < 0 ? strerror(errno) : "ok");
	if (fd >= 0)
		close(fd);

	for (int c = 0; c < NCOMBO; c++)
		combo(c);

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
