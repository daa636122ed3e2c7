/* bpf-context.c - samples carry their thread's span on a stock kernel (the BPF path). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/wait.h>

#include "uevent.h"
#include "tap.h"

#define NSPAN	3
#define PERIOD_NS	250000ull		/* cpu-clock: 4 samples a ms of a thread's CPU */

/* What a worker did and when, on the session's clock (CLOCK_MONOTONIC). */
struct worker {
	int i;
	pthread_t th;
	uint32_t tid;
	uint8_t trace[16], span[8];
	uint64_t none0, none1;		/* no context set yet */
	uint64_t in0, in1;		/* inside its span */
	uint64_t clr0, clr1;		/* after clear() */
	/* samples, by phase: with its ids, with nothing, with another's */
	long in_own, in_none, in_other, none_empty, none_other, clr_empty, clr_other;
	long in_attr;		/* of in_own: with its attribute, "route" key 0 */
	char route[16];
};

static struct worker w[NSPAN];
static struct {
	uint32_t tid;
	uint64_t t0, t1;
	long whole, empty, torn;
	long sets;
} hammer;
static volatile int go;

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs for ms of this thread's CPU time: so many samples whatever else the host runs. */
static void burn(unsigned int ms)
{
	uint64_t end = cpu_ns() + ms * 1000000ull;
	volatile uint64_t x = 0;

	while (cpu_ns() < end)
		for (int k = 0; k < 1000; k++)
			x += (uint64_t)k;
}

static void *work(void *arg)
{
	struct worker *me = arg;

	me->tid = (uint32_t)syscall(SYS_gettid);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	me->none0 = mono();
	burn(60);
	me->none1 = mono();
	uevent_thread_context_set(me->trace, me->span, 1);
	uevent_thread_context_set_attr(0, me->route, strlen(me->route));
	me->in0 = mono();
	burn(200);
	me->in1 = mono();
	uevent_thread_context_clear();
	me->clr0 = mono();
	burn(60);
	me->clr1 = mono();
	return NULL;
}

/* Two contexts, each all one byte, set back to back: a mixed sample is a torn read. */
static void *hammer_work(void *arg)
{
	static const uint8_t t1[16] = { [0 ... 15] = 0x11 }, s1[8] = { [0 ... 7] = 0x11 };
	static const uint8_t t2[16] = { [0 ... 15] = 0x22 }, s2[8] = { [0 ... 7] = 0x22 };
	uint64_t end;

	(void)arg;
	hammer.tid = (uint32_t)syscall(SYS_gettid);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	hammer.t0 = mono();
	end = cpu_ns() + 200 * 1000000ull;
	while (cpu_ns() < end) {
		for (int k = 0; k < 256; k++) {
			uevent_thread_context_set(t1, s1, 1);
			uevent_thread_context_set(t2, s2, 0);
		}
		hammer.sets += 512;
	}
	hammer.t1 = mono();
	return NULL;
}

static int all_one(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != v)
			return 0;
	return 1;
}

/* A sample as the session gave it, kept until the phases' bounds are all known. */
struct seen {
	uint64_t time;
	uint32_t tid;
	int has;
	uint8_t trace[16], span[8], flags;
	char attr0[16];		/* the record's key 0 attribute, as the sample has it */
};

static struct seen *seen;
static size_t nseen, seen_cap;

static void keep(const struct uevent_perf_record *r)
{
	struct seen *e;

	if (nseen == seen_cap) {
		seen_cap = seen_cap ? seen_cap * 2 : 4096;
		seen = realloc(seen, seen_cap * sizeof(*seen));
		if (!seen)
			abort();
	}
	e = &seen[nseen++];
	e->time = r->id.time;
	e->tid = r->id.tid;
	e->has = r->u.sample.context_err == 0;
	memcpy(e->trace, r->u.sample.context_trace_id, 16);
	memcpy(e->span, r->u.sample.context_span_id, 8);
	e->flags = r->u.sample.context_flags;
	e->attr0[0] = 0;
	/* the attributes as the kernel path has them: the sample's TLS dump of the record */
	if (e->has && r->u.sample.tls_user) {
		uint32_t off = 0;
		uint8_t key, len;
		const char *v;

		while (uevent_thread_context_attr_next(r->u.sample.tls_user,
						       r->u.sample.tls_user_dyn_size,
						       UEVENT_BO_HOST, &off, &key, &v, &len) == 0)
			if (key == 0 && len < sizeof(e->attr0)) {
				memcpy(e->attr0, v, len);
				e->attr0[len] = 0;
			}
	}
}

static void classify(const struct seen *s)
{
	uint64_t t = s->time;
	int has = s->has;

	if (s->tid == hammer.tid && hammer.tid) {
		if (!has)
			hammer.empty++;
		else if ((all_one(s->trace, 16, 0x11) && all_one(s->span, 8, 0x11) &&
			  s->flags == 1) ||
			 (all_one(s->trace, 16, 0x22) && all_one(s->span, 8, 0x22) &&
			  s->flags == 0))
			hammer.whole++;
		else
			hammer.torn++;
		return;
	}
	for (int i = 0; i < NSPAN; i++) {
		struct worker *me = &w[i];
		int own = has && !memcmp(s->trace, me->trace, 16) && !memcmp(s->span, me->span, 8);

		if (s->tid != me->tid)
			continue;
		/* between a phase's bounds only: a sample at a set() may see either side */
		if (t > me->none0 && t < me->none1) {
			me->none_empty += !has;
			me->none_other += has;
		} else if (t > me->in0 && t < me->in1) {
			me->in_own += own;
			me->in_attr += own && !strcmp(s->attr0, me->route);
			me->in_none += !has;
			me->in_other += has && !own;
		} else if (t > me->clr0 && t < me->clr1) {
			me->clr_empty += !has;
			me->clr_other += has;
		} else if (has && !own) {
			me->in_other++;		/* another's ids, at any time */
		}
	}
}

/*
 * Without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (a child dropping them): the session
 * asked for context says why it has none, whether or not it opens without them.
 */
static void unprivileged(void)
{
	int fds[2], status = 0;
	char why[512] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(fds) < 0) {
		ok(0, "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2];
		struct uevent_session_opts so = { .sz = sizeof(so), .pid = 0,
						  .sample_period_ns = PERIOD_NS, .ring_pages = 1,
						  .transports = 1u << UEVENT_TRANSPORT_USDT,
						  .flags = UEVENT_SESSION_CONTEXT };
		struct uevent_session *s;
		const char *r;

		close(fds[0]);
		if (syscall(SYS_capget, &h, d) < 0)
			_exit(1);
		for (int k = 0; k < 2; k++) {
			const unsigned int drop[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN };

			for (size_t j = 0; j < sizeof(drop) / sizeof(drop[0]); j++)
				if (drop[j] / 32 == (unsigned int)k)
					d[k].effective &= ~(1u << (drop[j] % 32));
		}
		if (syscall(SYS_capset, &h, d) < 0)
			_exit(1);
		s = uevent_session__open(&so);
		r = uevent_reason();
		if (write(fds[1], r, strlen(r)) < 0)
			_exit(1);
		uevent_session__close(s);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(strstr(why, "context: ") && strstr(why, "CAP_BPF"),
	   "without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: the session says why samples go "
	   "without context ('%s')", why);
}

/*
 * A process whose threads all set their context before the session opened (so no
 * prctl for the program to see): the session reads where its records lie out of the
 * process. The child's threads set, say their tids, spin until told to go, then burn.
 */
static struct {
	uint32_t tid[NSPAN];
	long own[NSPAN], none[NSPAN], other[NSPAN];
} late;
static volatile int late_go;

static void late_ids(int i, uint8_t *trace, uint8_t *span)
{
	for (int k = 0; k < 16; k++)
		trace[k] = (uint8_t)(0x30 + i * 16 + k);
	for (int k = 0; k < 8; k++)
		span[k] = (uint8_t)(0xc0 + i * 8 + k);
}

static void *late_work(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint8_t trace[16], span[8];

	late_ids(i, trace, span);
	uevent_thread_context_set(trace, span, 1);
	late.tid[i] = (uint32_t)syscall(SYS_gettid);
	__atomic_fetch_add(&late_go, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&late_go, __ATOMIC_ACQUIRE) < 1000)
		;
	burn(150);
	return NULL;
}

static void late_child(int in, int out)
{
	pthread_t th[NSPAN];
	char g;

	for (int i = 0; i < NSPAN; i++)
		pthread_create(&th[i], NULL, late_work, (void *)(intptr_t)i);
	while (__atomic_load_n(&late_go, __ATOMIC_ACQUIRE) < NSPAN)
		usleep(1000);
	if (write(out, late.tid, sizeof(late.tid)) != (ssize_t)sizeof(late.tid) ||
	    read(in, &g, 1) != 1)
		_exit(1);
	__atomic_store_n(&late_go, 1000, __ATOMIC_RELEASE);
	for (int i = 0; i < NSPAN; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static void late_sample(const struct uevent_perf_record *r)
{
	const struct uevent_perf_sample *x = &r->u.sample;

	for (int i = 0; i < NSPAN; i++) {
		uint8_t trace[16], span[8];

		if (r->id.tid != late.tid[i])
			continue;
		late_ids(i, trace, span);
		if (x->context_err)
			late.none[i]++;
		else if (!memcmp(x->context_trace_id, trace, 16) &&
			 !memcmp(x->context_span_id, span, 8))
			late.own[i]++;
		else
			late.other[i]++;
	}
}

static void attach_late(void)
{
	struct uevent_session_opts so = { .sz = sizeof(so), .sample_period_ns = PERIOD_NS,
					  .transports = 1u << UEVENT_TRANSPORT_USDT,
					  .flags = UEVENT_SESSION_CONTEXT };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	int to[2], from[2], status = 0, done = 0;
	pid_t pid;

	if (pipe(to) < 0 || pipe(from) < 0) {
		for (int i = 0; i < NSPAN; i++)
			ok(0, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		late_child(to[0], from[1]);
	close(to[0]);
	close(from[1]);
	if (read(from[0], late.tid, sizeof(late.tid)) != (ssize_t)sizeof(late.tid))
		memset(late.tid, 0, sizeof(late.tid));
	so.pid = pid;
	s = uevent_session__open(&so);
	/* now go: the threads are in their spans since before the session */
	if (write(to[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	while (s && !done) {
		while (uevent_session__next(s, &r, 20) == 1)
			if (r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE)
				late_sample(&r);
		done = waitpid(pid, &status, WNOHANG) == pid;
	}
	while (s && uevent_session__next(s, &r, 100) == 1)
		if (r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE)
			late_sample(&r);
	if (!s)
		waitpid(pid, &status, 0);
	for (int i = 0; i < NSPAN; i++) {
		long n = late.own[i] + late.none[i] + late.other[i];

		ok(s && late.tid[i] && n >= 20 && late.own[i] * 100 >= n * 95 && !late.other[i],
		   "a process whose thread %d set its span before the session opened on it: %ld "
		   "of %ld samples carry its ids (>= 95%%), %ld another's (none)%s%s", i,
		   late.own[i], n, late.other[i], s ? "" : ": ", s ? "" : uevent_reason());
	}
	uevent_session__close(s);
	close(to[1]);
	close(from[0]);
}

int main(void)
{
	struct uevent_session_opts so = { .sz = sizeof(so), .pid = 0, .sample_period_ns = PERIOD_NS,
					  .transports = 1u << UEVENT_TRANSPORT_USDT,
					  .flags = UEVENT_SESSION_CONTEXT };
	struct uevent_feature_info fi = { 0 };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	pthread_t hth;
	int i, running = NSPAN + 1, ret;
	char why[512];

	if (uevent_feature_probe(UEVENT_FEAT_THREAD_CONTEXT, &fi) == 0 &&
	    fi.state == UEVENT_FEAT_PRESENT) {
		plan_skip_all("this kernel dumps the record itself (PR_PERF_TLS_AREA): "
			      "the BPF path is not the one sessions take here");
		return 0;
	}
	if (uevent_feature_probe(UEVENT_FEAT_BPF_CONTEXT, &fi) < 0 ||
	    fi.state != UEVENT_FEAT_PRESENT) {
		plan_skip_all(fi.detail[0] ? fi.detail : "no BPF path on this host");
		return 0;
	}
	s = uevent_session__open(&so);
	if (!s) {
		plan_skip_all(uevent_reason());
		return 0;
	}
	snprintf(why, sizeof(why), "%s", uevent_reason());	/* what the session opened */
	plan(NSPAN * 4 + 5);
	unprivileged();
	ok(!strstr(why, "context"),
	   "probe: '%s'; a session asked for context opens with it (reason '%s')", fi.detail,
	   why);
	for (i = 0; i < NSPAN; i++) {
		w[i].i = i;
		for (int k = 0; k < 16; k++)
			w[i].trace[k] = (uint8_t)(0xa0 + i * 16 + k);
		for (int k = 0; k < 8; k++)
			w[i].span[k] = (uint8_t)(0x10 * (i + 1) + k);
		snprintf(w[i].route, sizeof(w[i].route), "/route/%d", i);
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	pthread_create(&hth, NULL, hammer_work, NULL);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	/* read while they run: the rings hold a few ms of samples, not the whole run */
	while (running) {
		while ((ret = uevent_session__next(s, &r, 20)) == 1)
			if (r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE)
				keep(&r);
		running = 0;
		for (i = 0; i < NSPAN; i++)
			running += !__atomic_load_n(&w[i].clr1, __ATOMIC_ACQUIRE);
		running += !__atomic_load_n(&hammer.t1, __ATOMIC_ACQUIRE);
	}
	for (i = 0; i < NSPAN; i++)
		pthread_join(w[i].th, NULL);
	pthread_join(hth, NULL);
	while (uevent_session__next(s, &r, 100) == 1)
		if (r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE)
			keep(&r);
	for (size_t k = 0; k < nseen; k++)
		classify(&seen[k]);
	diag("%zu samples", nseen);
	for (i = 0; i < NSPAN; i++) {
		struct worker *me = &w[i];
		long in = me->in_own + me->in_none + me->in_other;

		ok(in >= 20 && me->in_own * 100 >= in * 95 && me->in_other == 0,
		   "thread %d in its span: %ld of %ld samples carry its ids (>= 95%%), %ld "
		   "another's (none)", i, me->in_own, in, me->in_other);
		ok(me->none_empty > 0 && me->none_other == 0,
		   "thread %d before any set(): %ld samples, all without context (%ld with)", i,
		   me->none_empty, me->none_other);
		ok(me->clr_empty > 0 && me->clr_other == 0,
		   "thread %d after clear(): %ld samples, all without context (%ld with)", i,
		   me->clr_empty, me->clr_other);
	}
	{
		long own = 0, attr = 0;

		for (i = 0; i < NSPAN; i++) {
			own += w[i].in_own;
			attr += w[i].in_attr;
		}
		ok(own > 0 && attr == own, "the attributes too: %ld of the %ld samples in their "
		   "thread's span carry its attribute (key 0 \"/route/N\") in the record dump",
		   attr, own);
	}
	ok(hammer.whole > 0 && hammer.torn == 0,
	   "a thread setting two contexts back to back (%ld sets): %ld samples whole, %ld "
	   "mid-write (none given), %ld torn", hammer.sets, hammer.whole, hammer.empty,
	   hammer.torn);
	{
		struct uevent_session_stats st = { 0 };

		uevent_session__stats(s, &st, sizeof(st));
		ok(st.lost == 0 && st.lost_samples == 0, "no samples lost (%" PRIu64 " LOST, %"
		   PRIu64 " LOST_SAMPLES): the counts above are every sample", st.lost,
		   st.lost_samples);
	}
	uevent_session__close(s);
	free(seen);
	attach_late();
	return exit_status();
}
