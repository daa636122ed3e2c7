/*
 * tls-user.c - guest test of PERF_SAMPLE_TLS_USER.
 *
 * usage: tls-user [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * The area a thread registers with PR_PERF_TLS_AREA is what the dump holds: two threads
 * each register a __thread array holding their own pattern; a task-clock sampling event
 * on each thread with PERF_SAMPLE_TID|PERF_SAMPLE_TLS_USER must show exactly that
 * thread's pattern in every dump, never the other's. The registration's rules: bad
 * arguments refused, an unregistered thread and a new thread (clone(CLONE_VM)) dump
 * nothing, fork's child keeps its copy, execve drops it, an unmapped area gives a dump
 * that could not be read (dyn_size 0), never a crash. Then the dump at its largest next
 * to STACK_USER, REGS_USER, REGS_INTR and RAW, in every combination: each sample's
 * header.size must be the bytes its fields take, so the ring parses record by record up
 * to data_head (a u16 size that wraps leaves the rest of the sample over unread data).
 * The area is read on the thread's way back to user space, not in the sample: a sample
 * carries PERF_TLS_USER_DEFERRED and a cookie, and a PERF_RECORD_TLS_USER_DEFERRED
 * record with that cookie, later in the ring, carries the bytes; the checks above are
 * made on the record, for each sample it completes.
 * On the stock kernel the sample type and the registration are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <asm/perf_regs.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "kperf.h"

#define NTHREADS	2
#define MARK_WORDS	8
#define NCOMBO		16	/* STACK_USER x REGS_USER x REGS_INTR x RAW */
#define PLAN		(31 + NCOMBO)

static __thread uint64_t tls_mark[MARK_WORDS] __attribute__((aligned(8)));
/* the main thread's area for the combinations: the largest dump there is */
static uint64_t big_area[PERF_SAMPLE_TLS_USER_MAX / 8];

static int tls_area(const void *addr, unsigned long size)
{
	return prctl(PR_PERF_TLS_AREA, (unsigned long)addr, size, 0UL, 0UL);
}

/*
 * Cookies of samples still waiting for their record. Usually one, but a sample that
 * lands in the task work itself (after it took its cookie) has a new cookie, and its
 * record comes after the older one's.
 */
struct pend {
	uint64_t cookie[16];
	int n[16], len;
};

static void pend_add(struct pend *p, uint64_t c)
{
	for (int i = 0; i < p->len; i++)
		if (p->cookie[i] == c) {
			p->n[i]++;
			return;
		}
	if (p->len < 16) {
		p->cookie[p->len] = c;
		p->n[p->len++] = 1;
	}
}

/* The samples a record with cookie c completes (0: none waits for it). */
static int pend_take(struct pend *p, uint64_t c)
{
	for (int i = 0; i < p->len; i++)
		if (p->cookie[i] == c) {
			int n = p->n[i];

			p->len--;
			p->cookie[i] = p->cookie[p->len];
			p->n[i] = p->n[p->len];
			return n;
		}
	return 0;
}

static int pend_left(const struct pend *p)
{
	int n = 0;

	for (int i = 0; i < p->len; i++)
		n += p->n[i];
	return n;
}

struct worker {
	pthread_t th;
	int idx;
	pid_t tid;
	int reg;		/* PR_PERF_TLS_AREA's return */
	volatile int ready;
	uint64_t pattern[MARK_WORDS];
	struct ring ring;
	int fd;
	/* results */
	int samples, wrong_tid, wrong_size, short_read, found, foreign, lost;
	int unmatched;		/* records of no sample */
	int exiting;		/* samples of the thread's exit: nothing to read then */
	int after_exit;		/* a readable sample or record after one of the exit's */
	struct pend pend;	/* samples whose record has not come */
};

/* A PERF_RECORD_TLS_USER_DEFERRED record's fields (no sample_id_all in these events). */
struct deferred {
	uint32_t pid, tid;
	uint64_t cookie, size, dyn;
	const unsigned char *data;
	int whole;		/* header.size is the bytes of its fields */
};

static int deferred_of(const struct perf_event_header *h, struct deferred *d)
{
	const unsigned char *p = (const unsigned char *)(h + 1);

	if (h->type != PERF_RECORD_TLS_USER_DEFERRED || h->size < sizeof(*h) + 32)
		return 0;
	memcpy(&d->pid, p, 4);
	memcpy(&d->tid, p + 4, 4);
	memcpy(&d->cookie, p + 8, 8);
	memcpy(&d->size, p + 16, 8);
	d->whole = d->size <= PERF_SAMPLE_TLS_USER_MAX &&
		   h->size == sizeof(*h) + 24 + d->size + 8;
	d->data = p + 24;
	d->dyn = 0;
	if (d->whole)
		memcpy(&d->dyn, p + 24 + d->size, 8);
	return 1;
}

static struct worker w[NTHREADS];
static volatile int go, stop;
static unsigned int dump_size;

static void *work(void *arg)
{
	struct worker *me = arg;
	volatile uint64_t sink = 0;

	for (int k = 0; k < MARK_WORDS; k++)
		tls_mark[k] = me->pattern[k];
	me->reg = tls_area(tls_mark, sizeof(tls_mark));
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
	struct deferred d;
	uint32_t pid, tid;
	uint64_t size, cookie;
	int n;

	if (h->type == PERF_RECORD_LOST) {
		me->lost++;
		return;
	}
	if (deferred_of(h, &d)) {
		n = pend_take(&me->pend, d.cookie);
		if (!n) {
			me->unmatched++;
			return;
		}
		if ((pid_t)d.tid != me->tid)
			me->wrong_tid += n;
		/* the exit's entry: its record comes from do_exit(), the memory gone */
		if (d.whole && d.size == 0) {
			me->exiting += n;
			me->samples -= n;
			return;
		}
		/* the registered area's size, not the asked-for dump_size */
		if (!d.whole || d.size != sizeof(tls_mark)) {
			me->wrong_size += n;
			return;
		}
		if (me->exiting)
			me->after_exit += n;
		if (d.dyn != d.size)
			me->short_read += n;
		if (!memcmp(d.data, me->pattern, sizeof(me->pattern)))
			me->found += n;
		if (memmem(d.data, d.size, other->pattern, sizeof(other->pattern)))
			me->foreign += n;
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
	/* size 0: a sample of an exiting thread, after PF_EXITING */
	if (size == 0 && h->size == sizeof(*h) + 8 + 8) {
		me->exiting++;
		me->samples--;
		return;
	}
	/* the sample holds the cookie only: size word, cookie */
	if (size != PERF_TLS_USER_DEFERRED || h->size != sizeof(*h) + 8 + 16) {
		me->wrong_size++;
		return;
	}
	if (me->exiting)
		me->after_exit++;
	memcpy(&cookie, p + 16, 8);
	pend_add(&me->pend, cookie);
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
	int samples, bad, max_tls, with_tls, records;
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
		if (type == PERF_RECORD_TLS_USER_DEFERRED) {
			/* the dump: header, pid/tid, cookie, size, data[size], dyn_size */
			n = wget(wk, pos + 24, 8);
			if (hsize != 8 + 24 + n + 8) {
				snprintf(wk->why, sizeof(wk->why), "deferred record at %llu: "
					 "header.size %llu, fields take %llu", (unsigned long long)pos,
					 (unsigned long long)hsize, (unsigned long long)(40 + n));
				wk->bad++;
				return;
			}
			if ((int)n > wk->max_tls)
				wk->max_tls = (int)n;
			wk->records++;
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
		n = wget(wk, p, 8);			/* TLS_USER: size 0, or a cookie */
		if (n == PERF_TLS_USER_DEFERRED)
			wk->with_tls++;
		p += 8 + (n == PERF_TLS_USER_DEFERRED ? 8 : 0);
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

/* What the calling thread's own samples dumped, checked against an expected area. */
struct self {
	int samples, sized, read, match;
	int tail;		/* samples after the last deferred record */
	int closing;		/* of those, left without one: the close's kernel entry */
	uint64_t last_size, last_dyn, lost;
	struct pend pend;
};

static void on_self(const struct perf_event_header *h, void *arg)
{
	struct self *sf = ((void **)arg)[0];
	const struct self *want = ((void **)arg)[1];
	const uint8_t *pat = ((void **)arg)[2];
	const unsigned char *p = (const unsigned char *)(h + 1);
	struct deferred d;
	uint64_t size;
	int n;

	if (deferred_of(h, &d)) {
		sf->tail = 0;
		n = pend_take(&sf->pend, d.cookie);
		if (!n)
			return;
		sf->last_size = d.size;
		sf->last_dyn = d.dyn;
		if (d.whole && d.size == want->last_size)
			sf->sized += n;
		if (d.whole && d.dyn == want->last_dyn)
			sf->read += n;
		if (pat && d.whole && d.size && !memcmp(d.data, pat, d.size))
			sf->match += n;
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	sf->samples++;
	memcpy(&size, p + 8, 8);
	if (size == PERF_TLS_USER_DEFERRED && h->size == sizeof(*h) + 8 + 16) {
		/* checked on its record */
		memcpy(&size, p + 16, 8);
		pend_add(&sf->pend, size);
		sf->tail++;
		return;
	}
	/* nothing to dump: the size word alone */
	sf->last_size = size;
	sf->last_dyn = 0;
	if (size == 0 && want->last_size == 0 && h->size == sizeof(*h) + 16)
		sf->sized++;
	if (size == 0 && want->last_dyn == 0)
		sf->read++;
}

/*
 * Sample the calling thread (task-clock, TID|TLS_USER of ask bytes) while it spins
 * until samples come; each must dump want_size bytes of which want_dyn were read,
 * equal to pat when pat is given.
 */
static struct self sample_self(unsigned int ask, uint64_t want_size, uint64_t want_dyn,
			       const void *pat)
{
	static struct ring r;
	struct self sf = { 0 }, want = { .last_size = want_size, .last_dyn = want_dyn };
	void *args[3] = { &sf, &want, (void *)pat };
	volatile uint64_t sink = 0;
	uint64_t t;
	int fd;

	fd = open_tls(0, ask, PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER);
	if (fd < 0 || ring_map(&r, fd, 16)) {
		diag("sample_self: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		sf.samples = -1;
		return sf;
	}
	t = now_ns();
	while (now_ns() - t < 5000000 ||
	       (!sf.samples && now_ns() - t < 10000000000ull)) {
		for (int i = 0; i < 1000; i++)
			sink += i;
		ring_drain(&r, on_self, args);	/* a slow kernel must not fill the ring */
	}
	close(fd);
	ring_drain(&r, on_self, args);
	ring_unmap(&r);
	/*
	 * The samples of the last kernel entry, close() itself, may stay without their
	 * record: close's task work frees the event before the area is read. Those are
	 * the samples after the last record, and only those may be left waiting.
	 */
	sf.lost = r.lost;
	if (pend_left(&sf.pend) <= sf.tail)
		sf.closing = pend_left(&sf.pend);
	if (sf.closing)
		diag("sample_self: %d of %d samples came after the last record, in close()'s "
		     "entry, whose task work frees the event first", sf.closing, sf.samples);
	return sf;
}

static int self_ok(const struct self *sf, int match)
{
	int n = sf->samples - sf->closing;

	if (sf->lost || n <= 0 || sf->sized != n || sf->read != n || (match && sf->match != n))
		diag("sample_self: %d samples (%d in close), %d sized, %d read, %d matched, "
		     "%d still waiting, %llu lost", sf->samples, sf->closing, sf->sized, sf->read,
		     sf->match, pend_left(&sf->pend), (unsigned long long)sf->lost);
	return !sf->lost && n > 0 && sf->sized == n && sf->read == n && (!match || sf->match == n);
}

static void *new_thread(void *arg)
{
	*(struct self *)arg = sample_self(64, 0, 0, NULL);
	return NULL;
}

/* The registration's rules, on the main thread, a new thread, fork's child, execve. */
static void registration(const char *self_exe)
{
	static const unsigned long kaddr = 0xffff888000000000UL;
	uint64_t pat[MARK_WORDS];
	struct self sf, th_sf;
	pthread_t th;
	void *page;
	pid_t pid;
	int st, r[6], e[6];

#define TRY(k, a, sz, a4) (errno = 0, r[k] = prctl(PR_PERF_TLS_AREA, (unsigned long)(a), \
			   (unsigned long)(sz), (unsigned long)(a4), 0UL), e[k] = errno)
	TRY(0, (char *)tls_mark + 4, 64, 0);
	TRY(1, tls_mark, 12, 0);
	TRY(2, tls_mark, 0, 0);
	TRY(3, big_area, PERF_SAMPLE_TLS_USER_MAX + 8, 0);
	TRY(4, tls_mark, 64, 1);
	ok(r[0] < 0 && e[0] == EINVAL && r[1] < 0 && e[1] == EINVAL && r[2] < 0 && e[2] == EINVAL &&
	   r[3] < 0 && e[3] == EINVAL && r[4] < 0 && e[4] == EINVAL,
	   "PR_PERF_TLS_AREA: EINVAL for an unaligned address, size 12, size 0 with an address, "
	   "max + 8, arg4 set (%s %s %s %s %s)", strerror(e[0]), strerror(e[1]), strerror(e[2]),
	   strerror(e[3]), strerror(e[4]));
	TRY(5, kaddr, 64, 0);
	ok(r[5] < 0 && e[5] == EFAULT, "a kernel address: EFAULT (%s)", strerror(e[5]));
#undef TRY

	ok(tls_area(NULL, 0) == 0, "address 0, size 0: unregisters (nothing registered): 0");
	sf = sample_self(64, 0, 0, NULL);
	ok(self_ok(&sf, 0), "a thread without an area: every dump is empty, size 0 (%d/%d "
	   "samples, last size %llu)", sf.sized, sf.samples, (unsigned long long)sf.last_size);

	for (int k = 0; k < MARK_WORDS; k++)
		pat[k] = tls_mark[k] = 0xc0de0000ULL + k;
	ok(tls_area(tls_mark, sizeof(tls_mark)) == 0, "registering a 64-byte __thread area: 0");
	sf = sample_self(32, 32, 32, pat);
	ok(self_ok(&sf, 1), "sample_tls_user 32 of a 64-byte area: the area's first 32 bytes "
	   "in every dump (%d/%d samples)", sf.match, sf.samples);

	pthread_create(&th, NULL, new_thread, &th_sf);
	pthread_join(th, NULL);
	ok(self_ok(&th_sf, 0), "a thread created after the registration (clone(CLONE_VM)) has "
	   "no area: empty dumps (%d/%d, last size %llu)", th_sf.sized, th_sf.samples,
	   (unsigned long long)th_sf.last_size);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		sf = sample_self(64, 64, 64, pat);
		if (!self_ok(&sf, 1))
			_exit(1);
		execl(self_exe, self_exe, "exec-child", (char *)NULL);
		_exit(3);
	}
	st = -1;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) != 1,
	   "fork's child keeps the area: its own copy in every dump (status %#x)", st);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "after execve the child has no area: empty dumps (status %#x: %s)", st,
	   !WIFEXITED(st) ? "killed" : WEXITSTATUS(st) == 2 ? "a dump after exec" :
	   WEXITSTATUS(st) == 3 ? "exec failed" : WEXITSTATUS(st) ? "before exec" : "ok");

	/*
	 * PROT_NONE, not munmap()ed: the read on return to user space may fault, and an
	 * unmapped page could be reused by the next mapping (the ring) before it runs
	 */
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	st = tls_area(page, 64);
	sf = sample_self(64, 64, 0, NULL);
	munmap(page, 4096);
	ok(st == 0 && self_ok(&sf, 0), "an unreadable area registers (it is not read then); "
	   "dumps say size 64, dyn_size 0, no crash (%d/%d samples, last dyn %llu)", sf.read,
	   sf.samples, (unsigned long long)sf.last_dyn);
	tls_area(NULL, 0);
}

/* The execve()d child: nothing registered any more. */
static int exec_child(void)
{
	struct self sf = sample_self(64, 0, 0, NULL);

	return self_ok(&sf, 0) ? 0 : 2;
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
	/* 128 pages: the samples of one kernel entry and then its 32 KiB record fit */
	if (fd < 0 || ring_map(&r, fd, 128)) {
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
	/*
	 * The record comes on the way back to user space; when the samples of one kernel
	 * entry fill the ring first (64 KiB stack dumps copied slower than the period, under
	 * TCG), it finds no room: then only the samples are checked
	 */
	ok(wk.samples > 0 && !wk.bad && wk.with_tls == wk.samples &&
	   (wk.records ? wk.max_tls == PERF_SAMPLE_TLS_USER_MAX : wk.head + 65536 > wk.size),
	   "%s: %d samples with a cookie, %d deferred records, header.size == bytes of the "
	   "fields in each (largest sample %u, TLS dump %d)%s%s", what, wk.samples, wk.records,
	   wk.max_size, wk.max_tls,
	   wk.bad ? ": " : "", wk.why);
	ring_unmap(&r);
	close(fd);
}

static int run_stock(void)
{
	int fd;

	plan(3);
	errno = 0;
	fd = tls_area(tls_mark, sizeof(tls_mark));
	ok(fd < 0 && errno == EINVAL, "stock: PR_PERF_TLS_AREA is an unknown prctl: EINVAL (%s)",
	   fd < 0 ? strerror(errno) : "accepted");
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
	int fd, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "exec-child"))
		return exec_child();
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

	registration("/proc/self/exe");

	ok(tls_area(big_area, sizeof(big_area)) == 0, "registering a %zu-byte area: 0",
	   sizeof(big_area));
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

	ok(w[0].reg == 0 && w[1].reg == 0, "each thread registers its __thread array (%d, %d)",
	   w[0].reg, w[1].reg);
	dump_size = 512;	/* more than the area: the dump is the area's 64 bytes */

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

		diag("thread %d tid %d: %d samples, %d with its pattern, %d foreign, %d lost, "
		     "%d without a record, %d records of no sample", i, me->tid, me->samples,
		     me->found, me->foreign, me->lost, pend_left(&me->pend), me->unmatched);
		ok(me->samples > 0, "thread %d: samples taken (%d)", i, me->samples);
		/*
		 * How many samples land in the exit is how many periods do_exit() takes:
		 * unbounded on a loaded TCG host with a debug kernel. What must hold is that
		 * they are the last: once the thread is seen exiting, no sample or record
		 * after it reads the area.
		 */
		ok(me->samples && !me->wrong_tid && !me->wrong_size && !me->after_exit,
		   "thread %d: every sample is the thread's, dump of the area's %zu bytes (asked "
		   "%u), layout size/data/dyn_size (%d samples of its exit, with nothing to read, "
		   "%d readable after them)", i, sizeof(tls_mark), dump_size, me->exiting,
		   me->after_exit);
		ok(me->samples && !me->short_read, "thread %d: dyn_size == size (whole dump read)", i);
		/* a record may come without a sample: the kernel writes one per entry to every
		   TLS_USER event that sees the thread (kernel/README.md, patch 5) */
		/* but for the exit syscall's entry: do_exit() drops perf's context first */
		/* the exit's entry may hold several samples (a slow guest), all of one cookie */
		ok(me->samples && me->pend.len <= 1,
		   "thread %d: each sample's cookie has its PERF_RECORD_TLS_USER_DEFERRED after "
		   "it (%d cookies left of %d samples, at most the exit's one; %d records of no "
		   "sample)", i, me->pend.len, pend_left(&me->pend), me->unmatched);
		ok(me->samples && me->found >= me->samples - me->wrong_size - pend_left(&me->pend),
		   "thread %d: its own area, byte for byte, in every sample (%d/%d)", i,
		   me->found, me->samples);
		ok(me->samples && me->foreign == 0, "thread %d: the other thread's pattern never "
		   "appears (%d)", i, me->foreign);
		close(me->fd);
	}
	return exit_status();
}
