/* thread-context.c - the OTEP 4947 record: layout, write protocol, decode, samples, threads. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "tap.h"

static const uint8_t trace[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
				   0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };
static const uint8_t span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };

/* OTEP 4947's symbol, exported by libuevent for readers outside the process. */
extern __thread struct uevent_thread_context_record *otel_thread_ctx_v1;

/* The record of OTEP 4947, by offset, as a profiler that reads the bytes sees it. */
static void layout(void)
{
	ok(sizeof(struct uevent_thread_context_record) == 256 &&
	   UEVENT_THREAD_CONTEXT_SIZE == 256 && UEVENT_THREAD_CONTEXT_HEADER_SIZE == 28 &&
	   offsetof(struct uevent_thread_context_record, trace_id) == 0 &&
	   offsetof(struct uevent_thread_context_record, span_id) == 16 &&
	   offsetof(struct uevent_thread_context_record, valid) == 24 &&
	   offsetof(struct uevent_thread_context_record, trace_flags) == 25 &&
	   offsetof(struct uevent_thread_context_record, attrs_data_size) == 26 &&
	   offsetof(struct uevent_thread_context_record, attrs_data) == 28,
	   "record: 256 bytes, trace_id 0, span_id 16, valid 24, trace_flags 25, "
	   "attrs_data_size 26, attrs_data 28");
}

/* Walk a record's attributes into "k=v;" text. */
static const char *attrs_text(const void *rec, size_t len, int bo)
{
	static char out[1024];
	const char *v;
	uint32_t off = 0;
	uint8_t k, n;
	size_t o = 0;

	out[0] = 0;
	while (uevent_thread_context_attr_next(rec, len, bo, &off, &k, &v, &n) == 0 &&
	       o + n + 8 < sizeof(out))
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%u=%.*s;", k, (int)n, v);
	return out;
}

static void set_and_read(void)
{
	const struct uevent_thread_context_record *r = uevent_thread_context_get();
	struct uevent_trace_context tc;
	struct uevent_feature_info fi;
	struct uevent_thread_context_record saved, none;
	char big[200];

	ok(r && ((uintptr_t)r & 7) == 0 && r->valid == 0 && otel_thread_ctx_v1 == NULL,
	   "before any set: the record is 8-aligned, invalid, otel_thread_ctx_v1 NULL");
	ok(uevent_thread_context_clear() == 0 && otel_thread_ctx_v1 == NULL,
	   "clear before any set: 0, and nothing published (no registration either)");
	errno = 0;
	ok(uevent_thread_context_set(NULL, span, 1) == -EFAULT && errno == EFAULT &&
	   uevent_thread_context_set(trace, NULL, 1) == -EFAULT && r->valid == 0,
	   "a NULL id: -EFAULT, errno EFAULT, nothing stored");
	ok(uevent_thread_context_set_attr(0, "x", 1) == -ENODATA,
	   "set_attr before any set: -ENODATA");
	ok(uevent_thread_context_set(trace, span, 1) == 0, "set: 0");
	ok(otel_thread_ctx_v1 == r && r->valid == 1 && r->trace_flags == 1 &&
	   r->attrs_data_size == 0 && !memcmp(r->trace_id, trace, 16) &&
	   !memcmp(r->span_id, span, 8),
	   "set: otel_thread_ctx_v1 points at the record; valid 1, ids, flags, no attributes");
	/* The kernel took the record or refused it; the feature probe says which kind this is. */
	uevent_feature_probe(UEVENT_FEAT_THREAD_CONTEXT, &fi);
	ok(uevent_thread_context_registered() == (fi.state == UEVENT_FEAT_PRESENT),
	   "registered (%d) exactly when the kernel has PR_PERF_TLS_AREA (%s: %s)",
	   uevent_thread_context_registered(), fi.state == UEVENT_FEAT_PRESENT ? "yes" : "no",
	   fi.detail);
	ok(uevent_thread_context_decode(r, sizeof(*r), UEVENT_BO_HOST, &tc) == 0 &&
	   !memcmp(tc.trace_id, trace, 16) && !memcmp(tc.span_id, span, 8) && tc.flags == 1,
	   "decode of the live record gives the ids and flags back");
	ok(uevent_thread_context_set_attr(0, "GET /a", 6) == 0 &&
	   uevent_thread_context_set_attr(2, "", 0) == 0 && r->attrs_data_size == 10 &&
	   !memcmp(r->attrs_data, "\0\6GET /a\2\0", 10),
	   "set_attr appends {key, len, value} entries and grows attrs_data_size");
	ok(uevent_thread_context_set_attr(0, "GET /b", 6) == 0 && r->attrs_data_size == 18 &&
	   !strcmp(attrs_text(r, sizeof(*r), UEVENT_BO_HOST), "0=GET /a;2=;0=GET /b;"),
	   "a key set again is appended: readers take the last (%s)",
	   attrs_text(r, sizeof(*r), UEVENT_BO_HOST));
	ok(!strcmp(attrs_text(r, 28 + 12, UEVENT_BO_HOST), "0=GET /a;2=;"),
	   "a dump cut inside an entry yields only the whole ones before it");
	memset(big, 'v', sizeof(big));
	ok(uevent_thread_context_set_attr(1, big, 256) == -EINVAL &&
	   uevent_thread_context_set_attr(1, NULL, 3) == -EFAULT, "len 256: -EINVAL; NULL: -EFAULT");
	/* 228 bytes of room: two 102-byte entries fill most; a third only fits by replacing. */
	ok(uevent_thread_context_set_attr(1, big, 100) == 0 &&
	   uevent_thread_context_set_attr(1, big, 100) == 0 && r->attrs_data_size == 18 + 204,
	   "two 102-byte entries of key 1: 222 bytes");
	ok(uevent_thread_context_set_attr(1, big, 100) == 0 && r->valid == 1 &&
	   r->attrs_data_size == 18 + 102 &&
	   !strncmp(attrs_text(r, sizeof(*r), UEVENT_BO_HOST), "0=GET /a;2=;0=GET /b;1=vvv", 26),
	   "full: the key's older values are dropped to make room, the record valid again");
	ok(uevent_thread_context_set_attr(3, big, 100) == 0 &&
	   uevent_thread_context_set_attr(4, big, 100) == -ENOSPC && errno == ENOSPC &&
	   r->valid == 1 && r->attrs_data_size == 18 + 102 + 102,
	   "no room even so: -ENOSPC, the record unchanged and still valid");
	ok(uevent_thread_context_set(trace, trace + 8, 0) == 0 && r->attrs_data_size == 0 &&
	   !memcmp(r->span_id, trace + 8, 8) && r->trace_flags == 0 && r->valid == 1,
	   "a second set: the new span, no attributes");
	ok(uevent_thread_context_set_attr(5, "on", 2) == 0 && (saved = *r, none = *r, 1) &&
	   uevent_thread_context_set(span, trace, 3) == 0 &&
	   uevent_thread_context_restore(&saved, sizeof(saved)) == 0 &&
	   !memcmp(r, &saved, sizeof(saved)) && (none.valid = 0, 1) &&
	   uevent_thread_context_restore(&none, sizeof(none)) == 0 && r->valid == 0 &&
	   uevent_thread_context_restore(&saved, 27) == -EINVAL && errno == EINVAL,
	   "restore: a saved copy is the context again, attributes included; an invalid one "
	   "clears; a short one: -EINVAL");
	ok(uevent_thread_context_clear() == 0 && r->valid == 0 && otel_thread_ctx_v1 == r &&
	   r->span_id[0] == 0 && uevent_thread_context_decode(r, sizeof(*r), UEVENT_BO_HOST,
							       &tc) == -ENODATA &&
	   uevent_thread_context_set_attr(0, "x", 1) == -ENODATA,
	   "clear: valid 0 (the pointer stays: one protocol), decode and set_attr -ENODATA");
}

/* Record bytes as the sampled machine wrote them, in byte order big or little. */
static void record_bytes(uint8_t *b, int big, int valid, uint16_t attrs)
{
	memset(b, 0, 64);
	memcpy(b, trace, 16);
	memcpy(b + 16, span, 8);
	b[24] = (uint8_t)valid;
	b[25] = 1;
	b[26] = big ? attrs >> 8 : attrs & 0xff;
	b[27] = big ? attrs & 0xff : attrs >> 8;
	memcpy(b + 28, "\1\3abc\0\2xy", 9);
}

static void decode(void)
{
	struct uevent_trace_context tc;
	uint8_t b[64];
	int big;

	for (big = 0; big < 2; big++) {
		int bo = big ? UEVENT_BO_BIG : UEVENT_BO_LITTLE;
		const char *tag = big ? "big-endian" : "little-endian";

		record_bytes(b, big, 1, 9);
		ok(uevent_thread_context_decode(b, 28, bo, &tc) == 0 &&
		   !memcmp(tc.trace_id, trace, 16) && !memcmp(tc.span_id, span, 8) && tc.flags == 1 &&
		   !strcmp(attrs_text(b, 64, bo), "1=abc;0=xy;"),
		   "%s record decodes, attributes too", tag);
		record_bytes(b, big, 1, 0x1000);
		ok(!strcmp(attrs_text(b, 28 + 9, bo), "1=abc;0=xy;") &&
		   !strcmp(attrs_text(b, 28 + 8, bo), "1=abc;"),
		   "%s: an attrs_data_size past the dump reads only what is there", tag);
	}
	record_bytes(b, 0, 0, 0);
	ok(uevent_thread_context_decode(b, 64, UEVENT_BO_LITTLE, &tc) == -ENODATA &&
	   tc.trace_id[0] == 0, "valid 0 (cleared, or being written): -ENODATA, ids zeroed");
	record_bytes(b, 0, 2, 0);
	ok(uevent_thread_context_decode(b, 64, UEVENT_BO_LITTLE, &tc) == -ENODATA,
	   "valid 2 (reserved): -ENODATA");
	ok(uevent_thread_context_decode(NULL, 0, UEVENT_BO_LITTLE, &tc) == -ENODATA,
	   "an empty dump (no record registered): -ENODATA");
	record_bytes(b, 0, 1, 0);
	ok(uevent_thread_context_decode(b, 27, UEVENT_BO_LITTLE, &tc) == -EINVAL &&
	   uevent_thread_context_decode(b, 4, UEVENT_BO_LITTLE, &tc) == -EINVAL,
	   "shorter than the 28-byte header: -EINVAL");
	ok(uevent_thread_context_decode(b, 28, 7, &tc) == -EINVAL &&
	   uevent_thread_context_decode(b, 28, UEVENT_BO_LITTLE, NULL) == -EINVAL &&
	   uevent_thread_context_decode(NULL, 28, UEVENT_BO_LITTLE, &tc) == -EFAULT,
	   "bad byte order, NULL out: -EINVAL; NULL bytes: -EFAULT");
}

/* A PERF_RECORD_SAMPLE with TID and a TLS_USER dump of dump bytes, dyn_size dyn. */
static size_t sample(uint8_t *buf, const uint8_t *dump, uint64_t size, uint64_t dyn)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };
	uint32_t tid[2] = { 10, 11 };
	size_t n = sizeof(h);

	memcpy(buf + n, tid, 8);
	n += 8;
	memcpy(buf + n, &size, 8);
	n += 8;
	if (size) {
		memcpy(buf + n, dump, size);
		n += size;
		memcpy(buf + n, &dyn, 8);
		n += 8;
	}
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	return n;
}

static void samples(void)
{
	struct uevent_perf_format f = { .sz = sizeof(f),
					.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	uint8_t area[64], buf[128];
	size_t n;

	record_bytes(area, 0, 1, 0);
	n = sample(buf, area, 32, 32);
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == 0 && !memcmp(r.u.sample.context_trace_id, trace, 16) &&
	   !memcmp(r.u.sample.context_span_id, span, 8) && r.u.sample.context_flags == 1,
	   "a sample whose TLS dump is a record: context_* hold its trace context");
	n = sample(buf, area, 0, 0);
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == -ENODATA && r.u.sample.context_span_id[0] == 0,
	   "a sample with an empty dump (unregistered thread): context_err -ENODATA");
	n = sample(buf, area, 32, 16);
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == -EINVAL,
	   "a dump the kernel could read only 16 bytes of: context_err -EINVAL");
	f.sample_type = PERF_SAMPLE_TID;
	n = sample(buf, area, 0, 0) - 8;
	buf[6] = (uint8_t)n;
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == -ENODATA, "a sample without TLS_USER: context_err -ENODATA");
}

struct peer {
	const struct uevent_thread_context_record *rec, *ptr;
	int set_ret, valid_before, registered;
	uint8_t span0;
};

static void *peer(void *arg)
{
	struct peer *p = arg;
	uint8_t other[8] = { 0x99, 1, 2, 3, 4, 5, 6, 7 };

	p->rec = uevent_thread_context_get();
	p->valid_before = p->rec->valid;
	p->set_ret = uevent_thread_context_set(trace, other, 0);
	p->span0 = p->rec->span_id[0];
	p->ptr = otel_thread_ctx_v1;
	p->registered = uevent_thread_context_registered();
	return NULL;
}

static void threads(void)
{
	const struct uevent_thread_context_record *mine = uevent_thread_context_get();
	struct peer p = { 0 };
	pthread_t th;

	uevent_thread_context_set(trace, span, 1);
	pthread_create(&th, NULL, peer, &p);
	pthread_join(th, NULL);
	ok(p.rec != mine && p.ptr == p.rec && otel_thread_ctx_v1 == mine && p.valid_before == 0 &&
	   p.set_ret == 0 && p.span0 == 0x99 && mine->span_id[0] == span[0] && mine->valid == 1,
	   "another thread: its own record and pointer, starts empty; its set leaves ours alone");
	ok(p.registered == uevent_thread_context_registered(),
	   "another thread registers (or is refused) like this one");
}

/*
 * A writer hammering set() with two contexts while a reader samples it the way OTEP 4947
 * says readers do, interrupting the thread (a signal here): a record marked valid always
 * holds one whole context, never one's trace id with the other's span id or flags.
 */
/* the two contexts the writer alternates in hammer() and nested() */
static const uint8_t id[2][16] = {
	{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
	  0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11 },
	{ 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
	  0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22 } };

static volatile sig_atomic_t hammer_stop;
static volatile long seen_valid, seen_invalid, seen_torn;

static int one_context(const struct uevent_thread_context_record *r)
{
	uint8_t c = r->trace_id[0];
	int i;

	for (i = 0; i < 16; i++)
		if (r->trace_id[i] != c)
			return 0;
	for (i = 0; i < 8; i++)
		if (r->span_id[i] != c)
			return 0;
	return r->trace_flags == c && (c == 0x11 || c == 0x22) &&
	       (r->attrs_data_size == 0 || (r->attrs_data_size == 3 && r->attrs_data[2] == c));
}

static void sample_handler(int sig)
{
	const struct uevent_thread_context_record *r = otel_thread_ctx_v1;

	(void)sig;
	if (!r)
		return;
	if (r->valid != 1)
		seen_invalid++;
	else if (one_context(r))
		seen_valid++;
	else
		seen_torn++;
}

static void *sampler(void *arg)
{
	pthread_t writer = *(pthread_t *)arg;
	int i;

	for (i = 0; i < 200000 && !hammer_stop; i++)
		pthread_kill(writer, SIGUSR1);
	hammer_stop = 1;
	return NULL;
}

static void hammer(void)
{
	struct sigaction sa = { .sa_handler = sample_handler };
	pthread_t self = pthread_self(), th;
	long sets = 0;

	/* the record threads() left (another context, valid) is not one of the two: a
	 * sample before the loop's first set would count it torn */
	uevent_thread_context_clear();
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, sampler, &self);
	while (!hammer_stop) {
		int k = (int)(sets++ & 1);
		char v = (char)id[k][0];

		uevent_thread_context_set(id[k], id[k], id[k][0]);
		if (sets & 2)
			uevent_thread_context_set_attr(5, &v, 1);
	}
	pthread_join(th, NULL);
	signal(SIGUSR1, SIG_IGN);
	ok(seen_torn == 0 && seen_valid > 100,
	   "%ld sets sampled by signals: %ld whole contexts, %ld mid-write (invalid), %ld torn",
	   sets, seen_valid, seen_invalid, seen_torn);
}

/*
 * A handler that sets or clears the context over the thread's own set() (a signal in
 * the middle of its write): after each set returns, the record is invalid or holds one
 * whole context (the set's or the handler's), never a mix of the two.
 */
static volatile long nest_hits;

static void nest_handler(int sig)
{
	static const uint8_t id3[16] = { 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33,
					 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33 };

	(void)sig;
	if (nest_hits++ & 1)
		uevent_thread_context_clear();
	else
		uevent_thread_context_set(id3, id3, 0x33);
}

static void nested(void)
{
	const struct uevent_thread_context_record *r = uevent_thread_context_get();
	struct sigaction sa = { .sa_handler = nest_handler };
	pthread_t self = pthread_self(), th;
	long sets = 0, whole = 0, invalid = 0, mixed = 0;
	struct uevent_thread_context_record snap;
	const struct uevent_thread_context_record *rec = r;
	long h;

	hammer_stop = 0;
	/* the record threads() left (another context, valid) is not one of the two: a
	 * sample before the loop's first set would count it torn */
	uevent_thread_context_clear();
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, sampler, &self);
	while (!hammer_stop) {
		int k = (int)(sets++ & 1);
		uint8_t c;
		int i, same = 1;

		r = rec;
		uevent_thread_context_set(id[k], id[k], id[k][0]);
		/* the record as the set left it: a copy no handler came over */
		h = nest_hits;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memcpy(&snap, r, sizeof(snap));
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (nest_hits != h)
			continue;
		if (snap.valid != 1) {
			invalid++;
			continue;
		}
		r = &snap;
		c = r->trace_id[0];
		for (i = 0; i < 16; i++)
			same &= r->trace_id[i] == c;
		for (i = 0; i < 8; i++)
			same &= r->span_id[i] == c;
		same &= r->trace_flags == c && (c == 0x11 || c == 0x22 || c == 0x33);
		if (same)
			whole++;
		else
			mixed++;
	}
	pthread_join(th, NULL);
	signal(SIGUSR1, SIG_IGN);
	ok(mixed == 0 && whole > 100 && nest_hits > 10,
	   "%ld sets, %ld handlers' sets and clears over them: %ld whole, %ld invalid, %ld mixed",
	   sets, (long)nest_hits, whole, invalid, mixed);
}

/* The process context's calls, their refusals (t/otel-reader.test reads what they write). */
static void process_context(void)
{
	static const char *const keys[] = { "a", "b" }, *const other[] = { "x", "b" };
	struct uevent_process_context_opts o = { .sz = sizeof(o), .service_name = "t",
						 .attr_keys = keys, .nr_attr_keys = 1 };
	struct uevent_process_context_opts bad = o;

	ok(uevent_process_context_add_keys(keys, 1) == -ENODATA,
	   "add_keys before any publish: -ENODATA");
	bad.nr_attr_keys = 1;
	bad.attr_keys = NULL;
	ok(uevent_process_context_publish(&bad) == -EFAULT && errno == EFAULT,
	   "keys counted but NULL: -EFAULT");
	ok(uevent_process_context_publish(&o) == 0 && uevent_process_context_add_keys(keys + 1, 1) == 1,
	   "publish with key a, then add_keys(b): index 1");
	bad = o;
	bad.attr_keys = other;
	bad.nr_attr_keys = 2;
	ok(uevent_process_context_publish(&bad) == -EINVAL,
	   "a publish that renames key 0: -EINVAL (the map is append-only)");
	o.nr_attr_keys = 2;
	ok(uevent_process_context_drop() == 0 && uevent_process_context_drop() == 0 &&
	   uevent_process_context_add_keys(keys, 1) == -ENODATA &&
	   uevent_process_context_publish(&o) == 0 && uevent_process_context_drop() == 0,
	   "drop, twice: 0; then nothing to add to; publish again works");
}

int main(void)
{
	plan(41);
	layout();
	set_and_read();
	decode();
	samples();
	threads();
	hammer();
	nested();
	process_context();
	return exit_status();
}
