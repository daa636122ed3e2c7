/*
 * uevent-prctl.c - guest test of PR_TASK_PERF_UEVENT through the raw syscalls.
 *
 * usage: uevent-prctl [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * On the patched kernel: delivery to per-task and per-CPU rings, byte-exact and in
 * order with sample_id; who must not get records; the documented errors; the query;
 * the listener fast path, per task and per CPU (another task's or another CPU's listener
 * is no listener, and no oracle: an unreadable payload is EFAULT listened to or not);
 * what an unprivileged caller learns (nothing: 0 and listeners 0). On
 * the stock kernel: every patched feature is absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "kperf.h"

#define N_EMIT		48
#define N_FAST		20000
#define MAX_CPUS	64
#define PLAN		(33 + 3 + 5 + 3)

/* the attr of a uevents listener: dummy event, sample_id_all with TID|TIME */
static void listener_attr(struct perf_event_attr *a, int uevents)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->uevents = uevents;
}

/* payload i: size and bytes that differ between emits and cross the stack-copy size */
static size_t payload_size(int i)
{
	if (i == N_EMIT - 1)
		return PERF_UEVENT_MAX_PAYLOAD;
	return (size_t)(i * 37) % 700;
}

static void payload_fill(unsigned char *p, int i, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)(i * 131 + k * 7 + 1);
}

struct seen {
	int n;			/* uevent records */
	int other;		/* records of other types */
	int bad;		/* records that failed a check */
	int out_of_order;
	uint64_t last_time;
	uint64_t t0, t1;
	pid_t pid, tid;
	struct {
		uint32_t type;
		uint64_t time;
	} rec[N_EMIT + 8];
	char why[160];
};

static void note_bad(struct seen *s, const char *what, int idx)
{
	if (!s->bad++)
		snprintf(s->why, sizeof(s->why), "%s (record %d)", what, idx);
}

/* check one PERF_RECORD_UEVENT against payload rec.type, record its time */
static void on_record(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const unsigned char *p = (const unsigned char *)(h + 1);
	struct perf_uevent_record_v1 r;
	static unsigned char want[PERF_UEVENT_MAX_PAYLOAD];
	uint32_t pid, tid;
	uint64_t time;
	size_t pad, body;

	if (h->type != PERF_RECORD_UEVENT) {
		s->other++;
		return;
	}
	memcpy(&r, p, sizeof(r));
	p += sizeof(r);
	pad = -(size_t)r.size & 7;
	body = sizeof(*h) + sizeof(r) + r.size + pad;
	if (h->size != body + 16) {
		note_bad(s, "header.size != header + v1 + data + pad + sample_id", s->n);
		goto out;
	}
	if (r.format != PERF_UEVENT_FORMAT_V1 || r.flags != 0)
		note_bad(s, "format != 1 or flags != 0", s->n);
	if (h->misc != PERF_RECORD_MISC_USER)
		note_bad(s, "misc != PERF_RECORD_MISC_USER", s->n);
	if (r.type >= N_EMIT || r.size != payload_size(r.type)) {
		note_bad(s, "type/size not one we emitted", s->n);
		goto out;
	}
	payload_fill(want, r.type, r.size);
	if (memcmp(p, want, r.size))
		note_bad(s, "payload differs", s->n);
	for (size_t k = 0; k < pad; k++)
		if (p[r.size + k])
			note_bad(s, "padding not zero", s->n);
	p += r.size + pad;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	memcpy(&time, p + 8, 8);
	if ((pid_t)pid != s->pid || (pid_t)tid != s->tid)
		note_bad(s, "sample_id pid/tid is not the emitter's", s->n);
	if (time < s->t0 || time > s->t1)
		note_bad(s, "sample_id time outside the emit window", s->n);
	if (time < s->last_time)
		s->out_of_order++;
	s->last_time = time;
	if (s->n < N_EMIT + 8) {
		s->rec[s->n].type = r.type;
		s->rec[s->n].time = time;
	}
out:
	s->n++;
}

static int in_order(const struct seen *s)
{
	if (s->n != N_EMIT)
		return 0;
	for (int i = 0; i < N_EMIT; i++)
		if (s->rec[i].type != (uint32_t)i)
			return 0;
	return 1;
}

static void seen_init(struct seen *s, uint64_t t0, uint64_t t1)
{
	memset(s, 0, sizeof(*s));
	s->t0 = t0;
	s->t1 = t1;
	s->pid = getpid();
	s->tid = ktid();
}

static int drain(struct ring *r, struct seen *s)
{
	return ring_drain(r, on_record, s);
}

static int open_listener(int uevents, pid_t pid, int cpu, struct ring *r, size_t pages)
{
	struct perf_event_attr a;
	int fd;

	listener_attr(&a, uevents);
	fd = perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (r && ring_map(r, fd, pages)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* time iters emits; *sum gets the sum of their return values */
static double per_call_ns(unsigned long size, int iters, long *sum)
{
	static const char msg[16] = "fast path check";
	uint64_t t = now_ns();

	*sum = 0;
	for (int i = 0; i < iters; i++)
		*sum += kperf_uevent(1, size, msg, 0);
	return (double)(now_ns() - t) / iters;
}

static double bare_ns(long (*f)(void), int iters)
{
	uint64_t t = now_ns();

	for (int i = 0; i < iters; i++)
		f();
	return (double)(now_ns() - t) / iters;
}

static long do_getppid(void)
{
	return syscall(SYS_getppid);
}

static long do_prctl_unknown(void)
{
	return syscall(SYS_prctl, 0x7fffffff, 0, 0, 0, 0);
}

/* open a uevents listener on another (paused) task only */
static pid_t paused_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* best of 9 interleaved batches of 4 KiB emits (TCG timing is noisy) */
static void bench_other_task(const unsigned char *buf, double *unwatched, double *watched,
			     pid_t other)
{
	struct ring r;
	long sum;
	int fd;

	*unwatched = *watched = 1e30;
	for (int b = 0; b < 9; b++) {
		double t;
		uint64_t t0 = now_ns();

		sum = 0;
		for (int i = 0; i < N_FAST / 10; i++)
			sum += kperf_uevent(2, PERF_UEVENT_MAX_PAYLOAD, buf, 0);
		t = (double)(now_ns() - t0) / (N_FAST / 10);
		*unwatched = t < *unwatched ? t : *unwatched;
		fd = open_listener(1, other, -1, &r, 1);
		t0 = now_ns();
		for (int i = 0; i < N_FAST / 10; i++)
			sum += kperf_uevent(2, PERF_UEVENT_MAX_PAYLOAD, buf, 0);
		t = (double)(now_ns() - t0) / (N_FAST / 10);
		*watched = t < *watched ? t : *watched;
		if (fd >= 0) {
			ring_unmap(&r);
			close(fd);
		}
	}
}

/*
 * Listeners are per task and per CPU: another task's listener, or a per-CPU listener on
 * another CPU, is no listener for us (nothing is written). The answer does not tell:
 * an unreadable payload is EFAULT whoever listens.
 */
static void per_task_and_cpu(int ncpu, unsigned char *buf)
{
	char *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ring r_other, r_cpu;
	pid_t other = paused_child();
	double unwatched, watched;
	int fd_other, fd_cpu;
	long ret;

	fd_other = open_listener(1, other, -1, &r_other, 4);
	errno = 0;
	ret = kperf_uevent(0, 64, hole, 0);
	ok(fd_other >= 0 && ret == -1 && errno == EFAULT,
	   "only another task watched: an unreadable payload is EFAULT as always (%ld, %s)",
	   ret, strerror(errno));
	payload_fill(buf, 3, PERF_UEVENT_MAX_PAYLOAD);
	ret = kperf_uevent(3, PERF_UEVENT_MAX_PAYLOAD, buf, 0);
	ok(ret == 0 && ring_drain(&r_other, NULL, NULL) == 0,
	   "only another task watched: a 4 KiB emit returns 0, the other task's ring stays empty");
	if (fd_other >= 0) {
		ring_unmap(&r_other);
		close(fd_other);
	}

	if (ncpu >= 2 && pin_cpu(0) == 0) {
		fd_cpu = open_listener(1, -1, 1, &r_cpu, 4);
		errno = 0;
		ret = kperf_uevent(0, 64, hole, 0);
		ok(fd_cpu >= 0 && ret == -1 && errno == EFAULT,
		   "per-CPU listener on CPU 1, we run on CPU 0: unreadable is EFAULT as always "
		   "(%ld, %s)", ret, strerror(errno));
		pin_cpu(1);
		errno = 0;
		ret = kperf_uevent(0, 64, hole, 0);
		ok(ret == -1 && errno == EFAULT,
		   "on CPU 1 with its listener: the same EFAULT (%s)", strerror(errno));
		ret = kperf_uevent(4, 8, "on cpu 1", 0);
		ok(ret == 1 && ring_drain(&r_cpu, NULL, NULL) == 1,
		   "on CPU 1: one record in CPU 1's ring (%ld)", ret);
		if (fd_cpu >= 0) {
			ring_unmap(&r_cpu);
			close(fd_cpu);
		}
		{
			cpu_set_t all;

			CPU_ZERO(&all);
			for (int c = 0; c < ncpu; c++)
				CPU_SET(c, &all);
			sched_setaffinity(0, sizeof(all), &all);
		}
	} else {
		skip(3, "needs 2 CPUs");
	}
	munmap(hole, 4096);

	bench_other_task(buf, &unwatched, &watched, other);
	printf("# ratio other-task-watched/unwatched %.3f (4 KiB emit: unwatched %.0f ns, "
	       "another task watched %.0f ns)\n", watched / unwatched, unwatched, watched);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
}

/*
 * An unprivileged task watched by root learns nothing from the prctl: it returns 0 and
 * the query says 0 listeners; the record still reaches root's ring.
 */
static void unprivileged(void)
{
	int go[2], res[2];
	struct ring r;
	pid_t child;
	int fd, status = -1, n;
	unsigned char got[3] = { 0xff, 0xff, 0xff };

	if (pipe(go) || pipe(res)) {
		skip(3, "pipe failed");
		return;
	}
	child = fork();
	if (child == 0) {
		struct perf_uevent_abi abi;
		unsigned char out[3];
		char c;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		out[0] = kperf_uevent(5, 8, "unpriv!", 0) == 0;
		memset(&abi, 0xa5, sizeof(abi));
		out[1] = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY) == 0 &&
			 abi.listeners == 0;
		out[2] = abi.format == PERF_UEVENT_FORMAT_CURRENT &&
			 abi.record_type == PERF_RECORD_UEVENT;
		_exit(write(res[1], out, 3) == 3 ? 0 : 4);
	}
	fd = open_listener(1, child, -1, &r, 4);
	if (write(go[1], "g", 1) != 1 || read(res[0], got, 3) != 3)
		diag("unprivileged child did not report");
	waitpid(child, &status, 0);
	n = fd >= 0 ? ring_drain(&r, NULL, NULL) : -1;
	ok(fd >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && got[0] == 1,
	   "unprivileged and watched by root: the emit returns 0 (status %d)", status);
	ok(got[1] == 1 && got[2] == 1,
	   "unprivileged: the query says 0 listeners and the ABI numbers");
	ok(n == 1, "root's ring on the unprivileged task got its record (%d)", n);
	if (fd >= 0) {
		ring_unmap(&r);
		close(fd);
	}
	close(go[0]);
	close(go[1]);
	close(res[0]);
	close(res[1]);
}

static int run_stock(void)
{
	struct perf_event_attr a;
	struct perf_uevent_abi abi;
	long ret;
	int fd;

	plan(4);
	errno = 0;
	ret = kperf_uevent(0, 8, "message", 0);
	ok(ret == -1 && errno == EINVAL, "stock: PR_TASK_PERF_UEVENT is unknown (EINVAL), got %ld/%s",
	   ret, strerror(errno));
	errno = 0;
	ret = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(ret == -1 && errno == EINVAL, "stock: the query is unknown (EINVAL)");
	listener_attr(&a, 1);
	fd = perf_open(&a, 0, -1, -1, 0);
	ok(fd < 0 && (errno == EINVAL || errno == E2BIG),
	   "stock: attr.uevents is refused (%s)", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	listener_attr(&a, 0);
	fd = perf_open(&a, 0, -1, -1, 0);
	ok(fd >= 0, "stock: the same attr without uevents opens (%s)",
	   fd < 0 ? strerror(errno) : "ok");
	if (fd >= 0)
		close(fd);
	return exit_status();
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");
	static unsigned char buf[PERF_UEVENT_MAX_PAYLOAD + 64];
	struct ring r_task, r_task2, r_plain, r_other, r_cpu[MAX_CPUS], r_fast;
	static struct seen s_task, s_task2, s_plain, s_other, s_cpu;
	struct perf_uevent_abi abi;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd_task, fd_task2, fd_plain, fd_other, fd_cpu[MAX_CPUS], fd_fast;
	int all_three = 1, cpu_bad = 0;
	uint64_t t0, t1;
	pid_t child;
	long ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();

	plan(PLAN);
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	diag("patched kernel, %d CPUs", ncpu);

	/* --- query and the no-listener path --- */
	memset(&abi, 0xa5, sizeof(abi));
	ret = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(ret == 0 && abi.size == sizeof(abi) && abi.format == PERF_UEVENT_FORMAT_CURRENT &&
	   abi.record_type == PERF_RECORD_UEVENT && abi.max_payload == PERF_UEVENT_MAX_PAYLOAD &&
	   abi.attr_uevents_bit == PERF_ATTR_UEVENTS_BIT &&
	   abi.sample_tls_user_bit == PERF_SAMPLE_TLS_USER_BIT && abi.listeners == 0,
	   "query reports the ABI (size %u format %u type %u max %u bits %u/%u listeners %u)",
	   abi.size, abi.format, abi.record_type, abi.max_payload, abi.attr_uevents_bit,
	   abi.sample_tls_user_bit, abi.listeners);
	memset(&abi, 0xa5, sizeof(abi));
	ret = kperf_uevent(0, 4, &abi, PR_PERF_UEVENT_QUERY);
	ok(ret == 0 && abi.size == sizeof(abi) && abi.format == 0xa5a5a5a5,
	   "query writes no more than the caller's size");
	ok(kperf_uevent(0, 8, "no-one", 0) == 0, "emit with no listener returns 0");
	{
		char *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		errno = 0;
		ret = kperf_uevent(0, 64, hole, 0);
		ok(ret == -1 && errno == EFAULT,
		   "with no listener an unreadable payload is EFAULT all the same (%s)",
		   strerror(errno));
		munmap(hole, 4096);
	}
	errno = 0;
	ret = kperf_uevent(0, 64, NULL, 0);
	ok(ret == -1 && errno == EFAULT, "NULL data is EFAULT with no listener too (%s)",
	   strerror(errno));
	errno = 0;
	ret = kperf_uevent(0, 8, (void *)0xffffffff81000000UL, 0);
	ok(ret == -1 && errno == EFAULT, "a kernel address is EFAULT with no listener too (%s)",
	   strerror(errno));
	ok(kperf_uevent(0, 0, NULL, 0) == 0, "size 0 with NULL data is a valid empty marker");

	/* --- listeners --- */
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	fd_task = open_listener(1, 0, -1, &r_task, 64);
	fd_task2 = open_listener(1, 0, -1, &r_task2, 64);
	fd_plain = open_listener(0, 0, -1, &r_plain, 64);
	fd_other = open_listener(1, child, -1, &r_other, 64);
	ok(fd_task >= 0 && fd_task2 >= 0 && fd_plain >= 0 && fd_other >= 0,
	   "per-task events open (uevents=1 x2, uevents=0, uevents=1 on another task)");
	for (int c = 0; c < ncpu; c++) {
		fd_cpu[c] = open_listener(1, -1, c, &r_cpu[c], 64);
		if (fd_cpu[c] < 0)
			cpu_bad++;
	}
	ok(!cpu_bad, "per-CPU uevents=1 events open on all %d CPUs", ncpu);
	if (fd_task < 0 || fd_task2 < 0 || fd_plain < 0 || fd_other < 0 || cpu_bad) {
		diag("cannot open listeners: %s", strerror(-fd_task));
		kill(child, SIGKILL);
		skip(PLAN - 9, "no listeners");
		return exit_status();
	}
	ret = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(ret == 0 && abi.listeners == (unsigned)(3 + ncpu),
	   "query counts the listeners (%u, want %d)", abi.listeners, 3 + ncpu);

	/* --- N emits --- */
	t0 = now_ns();
	for (int i = 0; i < N_EMIT; i++) {
		size_t n = payload_size(i);

		payload_fill(buf, i, n);
		ret = kperf_uevent(i, n, buf, 0);
		if (ret != 3 && all_three) {
			diag("emit %d (size %zu) returned %ld (%s), want 3", i, n, ret,
			     ret < 0 ? strerror(errno) : "");
			all_three = 0;
		}
	}
	t1 = now_ns();
	ok(all_three, "each emit reports 3 buffers written (2 per-task + this CPU's)");

	seen_init(&s_task, t0, t1);
	drain(&r_task, &s_task);
	ok(s_task.n == N_EMIT, "per-task ring: %d of %d records", s_task.n, N_EMIT);
	ok(!s_task.bad, "per-task ring: byte-exact payloads, zero padding, format 1, "
	   "sample_id pid/tid/time right%s%s", s_task.bad ? ": " : "", s_task.why);
	ok(in_order(&s_task) && !s_task.out_of_order, "per-task ring: in emit order, time ascending");

	seen_init(&s_task2, t0, t1);
	drain(&r_task2, &s_task2);
	ok(s_task2.n == N_EMIT && !s_task2.bad && in_order(&s_task2),
	   "second observer gets the same %d records (%d, bad %d)", N_EMIT, s_task2.n,
	   s_task2.bad);

	seen_init(&s_cpu, t0, t1);
	{
		/* merge the per-CPU rings by time; the task may have migrated */
		static struct seen one;
		int n = 0, bad = 0;

		for (int c = 0; c < ncpu; c++) {
			seen_init(&one, t0, t1);
			drain(&r_cpu[c], &one);
			bad += one.bad;
			if (one.bad)
				diag("cpu %d: %s", c, one.why);
			for (int k = 0; k < one.n && n < N_EMIT + 8; k++)
				s_cpu.rec[n++] = one.rec[k];
			if (one.out_of_order)
				bad++;
		}
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && s_cpu.rec[j].time < s_cpu.rec[j - 1].time; j--) {
				typeof(s_cpu.rec[0]) t = s_cpu.rec[j];

				s_cpu.rec[j] = s_cpu.rec[j - 1];
				s_cpu.rec[j - 1] = t;
			}
		s_cpu.n = n;
		ok(n == N_EMIT, "per-CPU rings: %d of %d records in all", n, N_EMIT);
		ok(!bad && in_order(&s_cpu), "per-CPU rings: byte-exact with sample_id, in order by time");
	}

	seen_init(&s_plain, t0, t1);
	drain(&r_plain, &s_plain);
	ok(s_plain.n == 0, "event without uevents gets no records (%d)", s_plain.n);
	seen_init(&s_other, t0, t1);
	drain(&r_other, &s_other);
	ok(s_other.n == 0, "uevents event on another task gets no records (%d)", s_other.n);
	ok(r_task.lost == 0 && r_task2.lost == 0, "no PERF_RECORD_LOST with room in the ring");

	/* --- bad input, with listeners --- */
	{
		char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		errno = 0;
		ret = kperf_uevent(0, PERF_UEVENT_MAX_PAYLOAD + 1, buf, 0);
		ok(ret == -1 && errno == E2BIG, "size max+1: E2BIG (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, ~0UL, buf, 0);
		ok(ret == -1 && errno == E2BIG, "size ~0: E2BIG (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, 8, NULL, 0);
		ok(ret == -1 && errno == EFAULT, "NULL data: EFAULT (%s)", strerror(errno));
		munmap(page + 4096, 4096);
		memset(page, 'x', 4096);
		errno = 0;
		ret = kperf_uevent(0, 64, page + 4096 - 32, 0);
		ok(ret == -1 && errno == EFAULT, "data running into an unmapped page: EFAULT (%s)",
		   strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, 8, (void *)(0xffffffffff600000UL - 4096), 0);
		ok(ret == -1 && errno == EFAULT, "kernel address: EFAULT (%s)", strerror(errno));
		munmap(page, 4096);
		errno = 0;
		ret = kperf_uevent(0, 8, "badflag", 1UL << 1);
		ok(ret == -1 && errno == EINVAL, "flag bit 1: EINVAL (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, 8, "badflag", 1UL << 63);
		ok(ret == -1 && errno == EINVAL, "flag bit 63: EINVAL (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, 8, "format2", PR_PERF_UEVENT_FORMAT(2));
		ok(ret == -1 && errno == EINVAL, "format 2: EINVAL (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(0, 8, "fmt255!", PR_PERF_UEVENT_FORMAT(255));
		ok(ret == -1 && errno == EINVAL, "format 255: EINVAL (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(1UL << 32, 8, "bigtype", 0);
		ok(ret == -1 && errno == EINVAL, "type above 32 bits: EINVAL (%s)", strerror(errno));
		errno = 0;
		ret = kperf_uevent(1, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
		ok(ret == -1 && errno == EINVAL, "query with type != 0: EINVAL (%s)", strerror(errno));
		payload_fill(buf, 0, payload_size(0));
		ret = kperf_uevent(0, payload_size(0), buf, PR_PERF_UEVENT_FORMAT(PERF_UEVENT_FORMAT_V1));
		ok(ret == 3, "explicit format 1 emits (%ld), the kernel is still up", ret);
		seen_init(&s_task, t0, now_ns());
		drain(&r_task, &s_task);
		ok(s_task.n == 1 && !s_task.bad, "rejected calls wrote nothing (%d record, want 1)",
		   s_task.n);
	}

	/* --- fast path: cost with no listener vs one --- */
	close(fd_task);
	close(fd_task2);
	close(fd_plain);
	close(fd_other);
	for (int c = 0; c < ncpu; c++)
		close(fd_cpu[c]);
	ring_unmap(&r_task);
	ring_unmap(&r_task2);
	ring_unmap(&r_plain);
	ring_unmap(&r_other);
	for (int c = 0; c < ncpu; c++)
		ring_unmap(&r_cpu[c]);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ret = kperf_uevent(0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(ret == 0 && abi.listeners == 0, "closing the events drops the listener count to 0 (%u)",
	   abi.listeners);
	per_task_and_cpu(ncpu, buf);
	unprivileged();
	{
		double none, one, bare, unknown;
		long sum_none, sum_one;
		int count = 0, bad = 0;

		long part;

		/* best of 5 batches each: TCG timing is noisy, the minimum is the cost */
		bare = unknown = none = one = 1e30;
		sum_none = sum_one = 0;
		for (int b = 0; b < 5; b++) {
			double t;

			t = bare_ns(do_getppid, N_FAST / 5);
			bare = t < bare ? t : bare;
			t = bare_ns(do_prctl_unknown, N_FAST / 5);
			unknown = t < unknown ? t : unknown;
			t = per_call_ns(16, N_FAST / 5, &part);
			none = t < none ? t : none;
			sum_none += part;
		}
		fd_fast = open_listener(1, 0, -1, &r_fast, 1024);	/* 4 MiB: room for all */
		for (int b = 0; b < 5; b++) {
			double t = per_call_ns(16, N_FAST / 5, &part);

			one = t < one ? t : one;
			sum_one += part;
		}
		if (fd_fast >= 0) {
			uint64_t head = __atomic_load_n(&r_fast.meta->data_head, __ATOMIC_ACQUIRE);
			const unsigned char *p = r_fast.data;
			uint64_t off = 0;

			while (off < head && off < r_fast.size) {
				const struct perf_event_header *h = (const void *)(p + off);

				if (h->type == PERF_RECORD_UEVENT)
					count++;
				else if (h->type == PERF_RECORD_LOST)
					bad++;
				if (!h->size)
					break;
				off += h->size;
			}
		}
		ok(fd_fast >= 0 && count == N_FAST && !bad,
		   "one listener: %d of %d records, %d lost records", count, N_FAST, bad);
		printf("# ratio one-listener/no-listener %.2f (no listener %.0f ns, one listener %.0f ns,"
		       " unknown prctl %.0f ns, getppid %.0f ns; no-listener/unknown-prctl %.2f)\n",
		       one / none, none, one, unknown, bare, none / unknown);
		ok(sum_none == 0 && sum_one == N_FAST,
		   "timed emits returned 0 each without and 1 each with the listener (%ld, %ld)",
		   sum_none, sum_one);
		close(fd_fast);
	}
	return exit_status();
}
