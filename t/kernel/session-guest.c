/*
 * session-guest.c - the library's reading side (uevent_session__*, record_to and the
 * perf.data reader) inside the test kernel, statically linked.
 *
 * usage: session-guest [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * Patched kernel:
 *   - prctl marks read by a live session and from the perf.data it recorded: the same
 *     marks, in order, with the same times and tids;
 *   - user_events marks through the same session API, live and recorded;
 *   - a one-page ring that overflows: received + lost == emitted, exactly, and the
 *     recorded LOST records say the same;
 *   - PERF_SAMPLE_TLS_USER samples through the session: each thread's own
 *     uevent_thread_context_set() span, decoded by the library;
 *   - a JIT's code-load marker is in the stream before any sample of that code.
 * Stock kernel: the session refuses prctl and TLS with a reason, and user_events works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "tap.h"
#include "kperf.h"

#define N_MARKS		200
#define N_FLOOD		3000

struct mark {
	uint64_t time;
	uint32_t tid, transport;
	char text[64];
};

static int use(int transport)
{
	struct uevent_open_opts o = { .sz = sizeof(o), .transport = transport,
				      .flags = UEVENT_OPEN_IGNORE_ENV };

	return uevent_open(&o);
}

static int text_of(const struct uevent_record *u, char *out, size_t cap)
{
	struct uevent_text t;

	if (u->type != UEVENT_TYPE_TEXT || uevent_text_decode(u->data, u->size, 0, &t))
		return -1;
	snprintf(out, cap, "%s", t.text);
	return 0;
}

/* One uevent record as a mark. */
static void take(struct mark *m, const struct uevent_perf_record *r)
{
	m->time = r->u.uevent.id.time;
	m->tid = r->u.uevent.id.tid;
	m->transport = r->transport;
	if (text_of(&r->u.uevent, m->text, sizeof(m->text)))
		snprintf(m->text, sizeof(m->text), "?type %u", r->u.uevent.type);
}

/* Reads uevents from s until want arrived or 2 s passed without one. */
static int collect(struct uevent_session *s, struct mark *m, int want, uint64_t *lost)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	int n = 0, ret;

	while (n < want && (ret = uevent_session__next(s, &r, 2000)) > 0) {
		if (r.type == PERF_RECORD_LOST && lost)
			*lost += r.u.lost.lost;
		if (r.type != PERF_RECORD_UEVENT)
			continue;
		take(&m[n++], &r);
	}
	return n;
}

/* The uevents (and LOST counts) of a recorded perf.data file. */
static int read_back(const char *path, struct mark *m, int cap, uint64_t *lost)
{
	struct uevent_perf_file *f = uevent_perf_file__open(path);
	struct uevent_perf_record r = { .sz = sizeof(r) };
	int n = 0, ret;

	if (!f)
		return -errno;
	while ((ret = uevent_perf_file__next(f, &r)) != 0) {
		if (ret < 0) {
			uevent_perf_file__close(f);
			return ret;
		}
		if (r.type == PERF_RECORD_LOST && lost)
			*lost += r.u.lost.lost;
		if (r.type != PERF_RECORD_UEVENT || n >= cap)
			continue;
		take(&m[n++], &r);
	}
	uevent_perf_file__close(f);
	return n;
}

static int same_marks(const struct mark *a, const struct mark *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].time != b[i].time || a[i].tid != b[i].tid || strcmp(a[i].text, b[i].text))
			return 0;
	return 1;
}

/* Live and recorded marks of one transport: 3 results. */
static void live_and_recorded(int transport, const char *name)
{
	struct uevent_session_opts o = { .sz = sizeof(o), .transports = 1u << transport };
	static struct mark live[N_MARKS], file[N_MARKS];
	struct uevent_session_stats st;
	struct uevent_session *s;
	char path[64], buf[64];
	int fd, n, nf, order = 1, t;
	pid_t me = ktid();

	snprintf(path, sizeof(path), "/tmp/%s.data", name);
	s = uevent_session__open(&o);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!s || fd < 0 || uevent_session__record_to(s, fd) < 0) {
		ok(0, "%s: a session recording to %s opens (%s; %s)", name, path, strerror(errno),
		   uevent_reason());
		skip(2, "no session");
		uevent_session__close(s);
		return;
	}
	t = use(transport);
	for (int i = 0; i < N_MARKS; i++) {
		snprintf(buf, sizeof(buf), "%s mark %d", name, i);
		uevent_mark(buf);
	}
	n = collect(s, live, N_MARKS, NULL);
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%s mark %d", name, i);
		order &= !strcmp(live[i].text, buf) && live[i].tid == (uint32_t)me &&
			 live[i].transport == (uint32_t)transport && (!i || live[i].time >= live[i - 1].time);
	}
	uevent_session__stats(s, &st, sizeof(st));
	ok(t == transport && n == N_MARKS && order && st.lost == 0,
	   "%s: %d of %d marks read live, in order, text, tid and transport right, lost %llu",
	   name, n, N_MARKS, (unsigned long long)st.lost);
	uevent_session__close(s);	/* flushes the recording */
	close(fd);
	nf = read_back(path, file, N_MARKS, NULL);
	ok(nf == n && same_marks(live, file, n),
	   "%s: the recorded perf.data gives the same %d marks, times and tids", name, nf);
	{
		struct uevent_perf_file *f = uevent_perf_file__open(path);
		int named = 0;

		for (int i = 0; f && i < uevent_perf_file__nr_events(f); i++)
			named += uevent_perf_file__event_name(f, i)[0] != 0;
		ok(f && named == uevent_perf_file__nr_events(f) && named > 0,
		   "%s: the file names its %d events", name, named);
		uevent_perf_file__close(f);
	}
	unlink(path);
}

/* A ring of one page, flooded: every mark is either read or counted lost. 2 results. */
static void lost_exact(void)
{
	struct uevent_session_opts o = { .sz = sizeof(o), .ring_pages = 1,
					 .transports = 1u << UEVENT_TRANSPORT_PRCTL };
	static struct mark got[N_FLOOD], file[N_FLOOD];
	struct uevent_session_stats st;
	struct uevent_session *s;
	uint64_t lost_recs = 0, file_lost = 0;
	cpu_set_t was, one;
	int fd, n, nf;

	/*
	 * On one CPU: the kernel writes a ring's LOST record with that ring's next record,
	 * so the mark after the flood must go where the flood went (a preemptible kernel
	 * migrates the task between per-CPU rings mid-flood).
	 */
	sched_getaffinity(0, sizeof(was), &was);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	use(UEVENT_TRANSPORT_PRCTL);
	s = uevent_session__open(&o);
	fd = open("/tmp/lost.data", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!s || fd < 0 || uevent_session__record_to(s, fd) < 0) {
		ok(0, "one-page session opens (%s)", strerror(errno));
		skip(1, "no session");
		uevent_session__close(s);
		return;
	}
	for (int i = 0; i < N_FLOOD; i++)
		uevent_mark("flood mark, long enough to fill a small ring soon");
	n = collect(s, got, N_FLOOD, &lost_recs);
	/* the kernel writes its LOST record with the next record that fits */
	uevent_mark("after the flood");
	n += collect(s, got + n, N_FLOOD - n, &lost_recs);
	uevent_session__stats(s, &st, sizeof(st));
	ok(st.lost > 0 && (uint64_t)n + st.lost == N_FLOOD + 1 && lost_recs == st.lost,
	   "flooded one-page ring: %d read + %llu lost == %d emitted (LOST records say %llu)",
	   n, (unsigned long long)st.lost, N_FLOOD + 1, (unsigned long long)lost_recs);
	uevent_session__close(s);
	close(fd);
	sched_setaffinity(0, sizeof(was), &was);
	nf = read_back("/tmp/lost.data", file, N_FLOOD, &file_lost);
	ok(nf == n && file_lost == st.lost,
	   "the recording holds the same %d marks and LOST records summing to %llu", nf,
	   (unsigned long long)file_lost);
	unlink("/tmp/lost.data");
}

/* ---- thread context in samples ------------------------------------------------- */

/* CLOCK_MONOTONIC is past end. */
static int past(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > end->tv_sec || (now.tv_sec == end->tv_sec && now.tv_nsec > end->tv_nsec);
}

static volatile int tls_stop;
static const uint8_t ctx_trace[16] = { 0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
				       0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c };

struct ctx_worker {
	uint8_t span[8];
	volatile pid_t tid;
	int set, registered;
};

/* Each worker sets its own span with uevent_thread_context_set() and spins. */
static void *tls_worker(void *arg)
{
	struct ctx_worker *me = arg;
	volatile uint64_t sink = 0;

	me->set = uevent_thread_context_set(ctx_trace, me->span, 1);
	me->registered = uevent_thread_context_registered();
	__atomic_store_n(&me->tid, ktid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&tls_stop, __ATOMIC_ACQUIRE))
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
	return NULL;
}

/*
 * End to end: two threads' spans set through the library, samples taken by a session
 * with tls_user, each sample decoded by the library into the span of the thread it is
 * a sample of. The main thread set no context: its samples carry none.
 */
static void tls_samples(int patched)
{
	struct uevent_session_opts o = { .sz = sizeof(o), .pid = 0,
					 .transports = 1u << UEVENT_TRANSPORT_PRCTL,
					 .sample_period_ns = 200000, .tls_user = 64 };
	struct uevent_session *s;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct ctx_worker wk[2] = { { .span = { 0x5a, 1, 2, 3, 4, 5, 6, 0xa1 } },
				    { .span = { 0x5b, 1, 2, 3, 4, 5, 6, 0xb2 } } };
	pthread_t th[2];
	int samples = 0, own[2] = { 0, 0 }, foreign = 0, none = 0, main_ctx = 0, main_n = 0;
	int ret;
	struct timespec end;

	s = uevent_session__open(&o);
	if (!patched) {
		ok(!s && errno == EOPNOTSUPP && strstr(uevent_reason(), "TLS_USER"),
		   "stock: a session asking for TLS_USER is refused with EOPNOTSUPP (%s): %s",
		   strerror(errno), uevent_reason());
		uevent_session__close(s);
		ok(uevent_thread_context_set(ctx_trace, wk[0].span, 1) == 0 &&
		   !uevent_thread_context_registered() &&
		   uevent_thread_context_get()->span_id[0] == 0x5a,
		   "stock: uevent_thread_context_set() still returns 0 and stores, unregistered");
		return;
	}
	if (!s) {
		ok(0, "a sampling session with tls_user opens (%s: %s)", strerror(errno),
		   uevent_reason());
		return;
	}
	tls_stop = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, tls_worker, &wk[i]);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 2;
	while ((ret = uevent_session__next(s, &r, 200)) >= 0) {
		const struct uevent_perf_sample *sm = &r.u.sample;
		int k;

		if (past(&end))
			break;
		if (ret == 0 || r.type != PERF_RECORD_SAMPLE)
			continue;
		if (sm->tid == (uint32_t)getpid()) {
			main_n++;
			main_ctx += sm->context_err != -ENODATA;
			continue;
		}
		for (k = 0; k < 2; k++)
			if ((pid_t)sm->tid == __atomic_load_n(&wk[k].tid, __ATOMIC_ACQUIRE))
				break;
		/* a sample before the worker's set (or its tid known) has no context yet */
		if (k == 2 || sm->context_err) {
			none++;
			continue;
		}
		samples++;
		if (!memcmp(sm->context_span_id, wk[k].span, 8) &&
		    !memcmp(sm->context_trace_id, ctx_trace, 16) && sm->context_flags == 1)
			own[k]++;
		else
			foreign++;
	}
	__atomic_store_n(&tls_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ok(wk[0].set == 0 && wk[1].set == 0 && wk[0].registered && wk[1].registered &&
	   samples > 20 && own[0] > 0 && own[1] > 0 && own[0] + own[1] == samples &&
	   !foreign && !main_ctx,
	   "thread context through the session: %d worker samples decode to their own "
	   "thread's span (%d + %d), %d to another, %d before the set; the main thread's %d "
	   "carry none (%d do)", samples, own[0], own[1], foreign, none, main_n, main_ctx);
	uevent_session__close(s);
}

/* ---- a JIT's marker precedes the samples of its code ---------------------------- */

static void jit_order(void)
{
	/* mov eax, imm32; 1: dec eax; jnz 1b; ret */
	static const uint8_t code[] = { 0xb8, 0x00, 0x00, 0x40, 0x00, 0xff, 0xc8, 0x75, 0xfc, 0xc3 };
	struct uevent_session_opts o = { .sz = sizeof(o), .sample_period_ns = 100000,
					 .transports = 1u << UEVENT_TRANSPORT_PRCTL };
	struct uevent_jit_opts jo = { .sz = sizeof(jo), .dir = "/tmp/jit",
				      .perf_map_path = "/tmp/jit.map" };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	struct uevent_jit *j;
	struct timespec end;
	uint64_t marker_time = 0, first_in = 0, addr;
	long marker_pos = -1, first_pos = -1, pos = 0, before = 0, in_code = 0;
	uint8_t *mem;
	int ret;

	use(UEVENT_TRANSPORT_PRCTL);
	s = uevent_session__open(&o);
	j = uevent_jit__open(&jo);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (!s || !j || mem == MAP_FAILED) {
		ok(0, "JIT ordering: session, JIT session and code page (%s)", strerror(errno));
		uevent_session__close(s);
		uevent_jit__close(j);
		return;
	}
	memcpy(mem, code, sizeof(code));
	addr = (uint64_t)(uintptr_t)mem;
	/* announce, then run: the marker goes out before the first instruction */
	uevent_jit__code_load(j, "jit_hot_loop", addr, sizeof(code), mem);
	for (int i = 0; i < 6; i++)
		((void (*)(void))mem)();
	/*
	 * No more samples: reading takes CPU too, and where a read round costs more than
	 * the period (a debug kernel under emulation) each one would sample the next, and
	 * the loop below, which ends after 500 ms without a record, would never end.
	 */
	uevent_session__disable(s);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 30;	/* and if it did not stop, an end all the same */
	while ((ret = uevent_session__next(s, &r, 500)) > 0 && !past(&end)) {
		pos++;
		if (r.type == PERF_RECORD_UEVENT && r.u.uevent.type == UEVENT_TYPE_JIT_CODE_LOAD) {
			struct uevent_jit_code_load cl;

			if (!uevent_jit_code_load_decode(r.u.uevent.data, r.u.uevent.size, 0, &cl) &&
			    cl.code_addr == addr && marker_pos < 0) {
				marker_pos = pos;
				marker_time = r.u.uevent.id.time;
			}
		} else if (r.type == PERF_RECORD_SAMPLE && r.u.sample.ip >= addr &&
			   r.u.sample.ip < addr + sizeof(code)) {
			in_code++;
			if (first_pos < 0) {
				first_pos = pos;
				first_in = r.u.sample.time;
			}
			if (marker_pos < 0)
				before++;
		}
	}
	diag("JIT: %ld records read, the last read returned %d", pos, ret);
	ok(marker_pos > 0 && in_code > 0 && !before && marker_pos < first_pos &&
	   marker_time < first_in,
	   "JIT: the code-load marker (record %ld, t=%llu) comes before all %ld samples in the "
	   "code (first: record %ld, t=%llu; %ld before it)", marker_pos,
	   (unsigned long long)marker_time, in_code, first_pos, (unsigned long long)first_in,
	   before);
	uevent_jit__close(j);
	uevent_session__close(s);
	munmap(mem, 4096);
}

static int run_patched(void)
{
	plan(3 + 3 + 2 + 1 + 1);
	live_and_recorded(UEVENT_TRANSPORT_PRCTL, "prctl");
	live_and_recorded(UEVENT_TRANSPORT_USER_EVENTS, "user_events");
	lost_exact();
	tls_samples(1);
	jit_order();
	return exit_status();
}

static int run_stock(void)
{
	struct uevent_session_opts o = { .sz = sizeof(o),
					 .transports = 1u << UEVENT_TRANSPORT_PRCTL };
	struct uevent_session *s;

	plan(1 + 3 + 2);
	s = uevent_session__open(&o);
	ok(!s && errno == ENODEV && strstr(uevent_reason(), "prctl"),
	   "stock: a prctl-only session is refused: %s", uevent_reason());
	uevent_session__close(s);
	live_and_recorded(UEVENT_TRANSPORT_USER_EVENTS, "user_events");
	tls_samples(0);
	return exit_status();
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();
	return run_patched();
}
