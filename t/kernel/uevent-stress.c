/*
 * uevent-stress.c - adversarial guest test of PR_TASK_PERF_UEVENT (raw syscalls).
 *
 * usage: uevent-stress [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * What a kernel maintainer tries: sizes 0, 4097, 2^32+8; NULL, unmapped and kernel
 * pointers; disabled and inherited events; 16 threads emitting while listeners come
 * and go; a full ring (lost records counted) and an overwrite (backward) ring. Every
 * record that arrives is checked byte for byte. guest.test fails the run on any
 * WARN/BUG/KASAN/lockdep line these leave in the kernel log. On the stock kernel the
 * prctl is unknown whatever the arguments.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "tap.h"
#include "kperf.h"	/* errno, stdint, stdlib, string, mman, syscall, unistd, perf */

#define NTHREADS	16
#define PLAN		14

static int open_listener(pid_t pid, int cpu, int disabled, int inherit, int backward)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID;
	a.sample_id_all = 1;
	a.uevents = 1;
	a.disabled = disabled;
	a.inherit = inherit;
	a.write_backward = backward;
	return perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* payload of type t: n bytes derived from t */
static void fill(unsigned char *p, uint32_t t, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)(t * 29 + k * 13 + 5);
}

struct check {
	int n, bad, other;
	uint32_t last_type;
	pid_t pid;		/* sample_id pid wanted, 0 = any */
	char why[120];
};

static void on_rec(const struct perf_event_header *h, void *arg)
{
	struct check *c = arg;
	struct perf_uevent_record_v1 r;
	static unsigned char want[PERF_UEVENT_MAX_PAYLOAD];
	const unsigned char *p = (const unsigned char *)(h + 1);
	uint32_t pid;

	if (h->type != PERF_RECORD_UEVENT) {
		c->other++;
		return;
	}
	c->n++;
	memcpy(&r, p, sizeof(r));
	if (r.size > PERF_UEVENT_MAX_PAYLOAD ||
	    h->size != sizeof(*h) + sizeof(r) + r.size + (-r.size & 7) + 8) {
		if (!c->bad++)
			snprintf(c->why, sizeof(c->why), "type %u: size %u in a %u-byte record",
				 r.type, r.size, h->size);
		return;
	}
	fill(want, r.type, r.size);
	if (r.format != PERF_UEVENT_FORMAT_V1 || memcmp(p + sizeof(r), want, r.size)) {
		if (!c->bad++)
			snprintf(c->why, sizeof(c->why), "type %u: payload differs", r.type);
	}
	memcpy(&pid, p + sizeof(r) + r.size + (-r.size & 7), 4);
	if (c->pid && (pid_t)pid != c->pid) {
		if (!c->bad++)
			snprintf(c->why, sizeof(c->why), "type %u: pid %u, want %d", r.type, pid,
				 c->pid);
	}
	c->last_type = r.type;
}

static int drain(struct ring *r, struct check *c, pid_t pid)
{
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	return ring_drain(r, on_rec, c);
}

static void sizes_and_pointers(void)
{
	static unsigned char buf[PERF_UEVENT_MAX_PAYLOAD + 16];
	struct ring r;
	struct check c;
	long ret, e1, e2, e3, e4;
	char *page;
	int fd = open_listener(0, -1, 0, 0, 0);

	if (fd < 0 || ring_map(&r, fd, 16)) {
		skip(4, "cannot open a listener");
		return;
	}
	ret = kperf_uevent(7, 0, NULL, 0);
	drain(&r, &c, getpid());
	ok(ret == 1 && c.n == 1 && !c.bad && c.last_type == 7,
	   "size 0, NULL data: an empty record (%ld, %d records)%s%s", ret, c.n,
	   c.bad ? ": " : "", c.why);

	errno = 0;
	e1 = kperf_uevent(0, PERF_UEVENT_MAX_PAYLOAD + 1, buf, 0) == -1 && errno == E2BIG;
	errno = 0;
	/* 2^32 + 8 must not be taken as 8 */
	e2 = kperf_uevent(0, (1UL << 32) + 8, buf, 0) == -1 && errno == E2BIG;
	errno = 0;
	e3 = kperf_uevent(0, ~0UL, NULL, 0) == -1 && errno == E2BIG;
	drain(&r, &c, 0);
	ok(e1 && e2 && e3 && c.n == 0, "sizes 4097, 2^32+8, ~0: E2BIG, nothing written");

	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page + 4096, 4096);
	errno = 0;
	e1 = kperf_uevent(0, 8, NULL, 0) == -1 && errno == EFAULT;
	errno = 0;
	e2 = kperf_uevent(0, 4096, page + 8, 0) == -1 && errno == EFAULT;	/* runs off the end */
	errno = 0;
	e3 = kperf_uevent(0, 64, (void *)0xffff888000000000UL, 0) == -1 && errno == EFAULT;
	errno = 0;
	/* user address whose end crosses into the kernel half */
	e4 = kperf_uevent(0, 4096, (void *)(0x800000000000UL - 8), 0) == -1 && errno == EFAULT;
	drain(&r, &c, 0);
	ok(e1 && e2 && e3 && e4 && c.n == 0,
	   "NULL, half-unmapped, kernel, crossing TASK_SIZE: EFAULT, nothing written "
	   "(%ld %ld %ld %ld)", e1, e2, e3, e4);
	munmap(page, 4096);
	fill(buf, 9, 100);
	ret = kperf_uevent(9, 100, buf, 0);
	drain(&r, &c, getpid());
	ok(ret == 1 && c.n == 1 && !c.bad, "after the bad calls a good one still arrives whole");
	ring_unmap(&r);
	close(fd);
}

static void disabled_and_inherited(void)
{
	unsigned char buf[64];
	struct ring r;
	struct check c;
	long ret;
	pid_t child;
	int fd, status;

	fd = open_listener(0, -1, 1, 0, 0);
	if (fd < 0 || ring_map(&r, fd, 4)) {
		skip(4, "cannot open a listener");
		return;
	}
	fill(buf, 11, sizeof(buf));
	ret = kperf_uevent(11, sizeof(buf), buf, 0);
	drain(&r, &c, 0);
	ok(ret == 0 && c.n == 0, "disabled listener: the emit writes nothing (%ld, %d)", ret, c.n);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ret = kperf_uevent(11, sizeof(buf), buf, 0);
	drain(&r, &c, getpid());
	ok(ret == 1 && c.n == 1 && !c.bad, "enabled: one record (%ld, %d)", ret, c.n);
	ring_unmap(&r);
	close(fd);

	/* inherited per-task events can be mapped per CPU only: one on each CPU */
	{
		static struct ring ri[8];
		int ncpu = sysconf(_SC_NPROCESSORS_ONLN), fds[8], nfd = 0, n = 0, bad = 0;
		char why[120] = "";

		if (ncpu > 8)
			ncpu = 8;
		for (int cpu = 0; cpu < ncpu; cpu++) {
			fds[nfd] = open_listener(0, cpu, 0, 1, 0);
			if (fds[nfd] < 0 || ring_map(&ri[nfd], fds[nfd], 4)) {
				diag("inherited listener on CPU %d: %s", cpu, strerror(errno));
				if (fds[nfd] >= 0)
					close(fds[nfd]);
				continue;
			}
			nfd++;
		}
		if (nfd != ncpu) {
			skip(2, "cannot open inherited listeners");
			for (int i = 0; i < nfd; i++) {
				ring_unmap(&ri[i]);
				close(fds[i]);
			}
			return;
		}
		child = fork();
		if (child == 0) {
			unsigned char b[64];

			fill(b, 12, sizeof(b));
			_exit(kperf_uevent(12, sizeof(b), b, 0) == 1 ? 0 : 1);
		}
		waitpid(child, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "inherited listener: the child's emit is written once");
		for (int i = 0; i < nfd; i++) {
			drain(&ri[i], &c, child);
			n += c.n;
			if (c.bad && !bad++)
				snprintf(why, sizeof(why), "%s", c.why);
			if (c.n)
				bad += c.last_type != 12;
			ring_unmap(&ri[i]);
			close(fds[i]);
		}
		ok(n == 1 && !bad, "inherited listener: the child's record is in the parent's ring, "
		   "with its pid (%d)%s%s", n, bad ? ": " : "", why);
	}
}

struct emitter {
	pthread_t th;
	pid_t tid;
	volatile int ready;
	long calls, written, errors;
};

static volatile int stop_emit;

static void *emit_loop(void *arg)
{
	struct emitter *e = arg;
	unsigned char buf[600];
	uint32_t t = 0;

	e->tid = ktid();
	__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop_emit, __ATOMIC_ACQUIRE)) {
		size_t n = (t * 41) % sizeof(buf);
		long ret;

		fill(buf, t, n);
		ret = kperf_uevent(t, n, buf, 0);
		if (ret < 0)
			e->errors++;
		else
			e->written += ret;
		e->calls++;
		t = (t + 1) % 1000;
		if (!(t & 63))
			sched_yield();	/* 16 spinners on 2 CPUs: let the listeners come */
	}
	return NULL;
}

/* 16 threads emit while per-thread and per-CPU listeners open and close under them. */
static void churn(void)
{
	static struct emitter e[NTHREADS];
	static struct ring r;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rounds = 0, bad = 0, opened = 0;
	long calls = 0, errors = 0, records = 0;
	uint64_t t0;
	char why[120] = "";

	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&e[i].th, NULL, emit_loop, &e[i]);
	for (int i = 0; i < NTHREADS; i++)
		while (!__atomic_load_n(&e[i].ready, __ATOMIC_ACQUIRE))
			usleep(1000);
	/* 1.5 s of churn, longer until 8 listeners came and went on a slow (debug) guest */
	t0 = now_ns();
	while (now_ns() - t0 < 1500000000ull ||
	       (opened < 8 && now_ns() - t0 < 30000000000ull)) {
		int per_cpu = rounds % 3 == 2;
		int fd = per_cpu ? open_listener(-1, rounds % ncpu, 0, 0, 0)
				 : open_listener(e[rounds % NTHREADS].tid, -1, 0, 0, 0);
		struct check c;

		rounds++;
		if (fd < 0 || ring_map(&r, fd, 8)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		opened++;
		usleep(2000);
		drain(&r, &c, 0);
		records += c.n;
		if (c.bad && !bad++)
			snprintf(why, sizeof(why), "%s", c.why);
		ring_unmap(&r);
		close(fd);
	}
	__atomic_store_n(&stop_emit, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(e[i].th, NULL);
		calls += e[i].calls;
		errors += e[i].errors;
	}
	diag("%d listeners opened and closed, %ld emits, %ld records checked", opened, calls,
	     records);
	ok(opened >= 8 && calls > 1000 && errors == 0,
	   "%d threads: every emit succeeded while %d listeners came and went (%ld errors)",
	   NTHREADS, opened, errors);
	ok(records > 0 && !bad, "%ld records from the churn, all byte-exact%s%s", records,
	   bad ? ": " : "", why);
}

static void full_and_overwrite(void)
{
	static unsigned char buf[512];
	struct ring r;
	struct check c;
	long written = 0, ret;
	int fd, n = 64;

	/* one data page: 7 records of 512 + 32 bytes fit */
	fd = open_listener(0, -1, 0, 0, 0);
	if (fd < 0 || ring_map(&r, fd, 1)) {
		skip(4, "cannot open a listener");
		return;
	}
	for (int i = 0; i < n; i++) {
		fill(buf, i, sizeof(buf));
		ret = kperf_uevent(i, sizeof(buf), buf, 0);
		written += ret > 0 ? ret : 0;
	}
	drain(&r, &c, getpid());
	ok(written == c.n && c.n > 0 && c.n < n && !c.bad,
	   "full ring: %ld emits reported written, %d records there, all whole", written, c.n);
	fill(buf, 100, sizeof(buf));
	ret = kperf_uevent(100, sizeof(buf), buf, 0);
	drain(&r, &c, getpid());
	ok(ret == 1 && c.n == 1 && r.lost == (uint64_t)(n - written),
	   "after draining: PERF_RECORD_LOST says %llu lost (want %ld), the next record arrives",
	   (unsigned long long)r.lost, n - written);
	ring_unmap(&r);
	close(fd);

	/* overwrite: write_backward, read-only mapping; the newest records are whole */
	fd = open_listener(0, -1, 0, 0, 1);
	if (fd < 0) {
		skip(2, "cannot open a backward listener");
		return;
	}
	{
		long psz = sysconf(_SC_PAGESIZE);
		unsigned char *m = mmap(NULL, 2 * psz, PROT_READ, MAP_SHARED, fd, 0);
		struct perf_event_mmap_page *meta = (void *)m;
		long all = 0;

		if (m == MAP_FAILED) {
			skip(2, "cannot map the backward ring");
			close(fd);
			return;
		}
		for (int i = 0; i < n; i++) {
			fill(buf, i, sizeof(buf));
			all += kperf_uevent(i, sizeof(buf), buf, 0) == 1;
		}
		ok(all == n, "overwrite ring: all %d emits written (%ld)", n, all);
		{
			/* walk from data_head (newest first) while whole records fit */
			uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
			uint64_t pos = head, size = psz;
			static unsigned char rec[1024];
			int k = 0, good = 1;

			memset(&c, 0, sizeof(c));
			c.pid = getpid();
			while (pos - head + sizeof(struct perf_event_header) <= size) {
				struct perf_event_header h;

				for (size_t b = 0; b < sizeof(h); b++)
					((unsigned char *)&h)[b] = m[psz + (pos + b) % size];
				if (h.size < sizeof(h) || h.size > sizeof(rec) ||
				    pos - head + h.size > size)
					break;
				for (size_t b = 0; b < h.size; b++)
					rec[b] = m[psz + (pos + b) % size];
				on_rec((void *)rec, &c);
				if (c.last_type != (uint32_t)(n - 1 - k))
					good = 0;
				k++;
				pos += h.size;
			}
			ok(k > 0 && good && !c.bad,
			   "overwrite ring: newest %d records whole, newest first (last %u)%s%s", k,
			   c.last_type, c.bad ? ": " : "", c.why);
		}
		munmap(m, 2 * psz);
		close(fd);
	}
}

static int run_stock(void)
{
	long ret;

	plan(2);
	errno = 0;
	ret = kperf_uevent(0, 0, NULL, 0);
	ok(ret == -1 && errno == EINVAL, "stock: size 0 NULL: EINVAL (unknown prctl)");
	errno = 0;
	ret = kperf_uevent(0, (1UL << 32) + 8, (void *)0xffff888000000000UL, 0);
	ok(ret == -1 && errno == EINVAL, "stock: huge size, kernel pointer: EINVAL");
	return exit_status();
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();
	plan(PLAN);
	sizes_and_pointers();
	disabled_and_inherited();
	churn();
	full_and_overwrite();
	return exit_status();
}
