/* thread-context.c - uevent_thread_context_set()'s area: layout, seqlock, decode, samples. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
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

/* The documented layout, by offset, as a profiler that reads the bytes sees it. */
static void layout(void)
{
	ok(sizeof(struct uevent_thread_context_area) == 40 && UEVENT_THREAD_CONTEXT_SIZE == 40 &&
	   offsetof(struct uevent_thread_context_area, seq) == 0 &&
	   offsetof(struct uevent_thread_context_area, version) == 4 &&
	   offsetof(struct uevent_thread_context_area, size) == 6 &&
	   offsetof(struct uevent_thread_context_area, trace_id) == 8 &&
	   offsetof(struct uevent_thread_context_area, span_id) == 24 &&
	   offsetof(struct uevent_thread_context_area, flags) == 32 &&
	   offsetof(struct uevent_thread_context_area, valid) == 33 &&
	   offsetof(struct uevent_thread_context_area, reserved) == 34,
	   "area: 40 bytes, seq 0, version 4, size 6, trace_id 8, span_id 24, flags 32, valid 33");
}

static void set_and_read(void)
{
	const struct uevent_thread_context_area *a = uevent_thread_context_area();
	struct uevent_trace_context tc;
	struct uevent_feature_info fi;
	uint32_t seq;

	ok(a && ((uintptr_t)a & 7) == 0 && a->valid == 0 && a->seq == 0,
	   "before any set: the area is 8-aligned, no context, seq 0");
	ok(uevent_thread_context_clear() == 0 && a->seq == 0,
	   "clear before any set: 0, and nothing written (no registration either)");
	errno = 0;
	ok(uevent_thread_context_set(NULL, span, 1) == -EFAULT && errno == EFAULT &&
	   uevent_thread_context_set(trace, NULL, 1) == -EFAULT && a->valid == 0,
	   "a NULL id: -EFAULT, errno EFAULT, nothing stored");
	ok(uevent_thread_context_set(trace, span, 1) == 0, "set: 0");
	ok(a->version == UEVENT_THREAD_CONTEXT_VERSION && a->size == 40 && a->valid == 1 &&
	   a->flags == 1 && !memcmp(a->trace_id, trace, 16) && !memcmp(a->span_id, span, 8) &&
	   a->seq == 2, "set: version 1, size 40, ids and flags stored, seq 2 (even)");
	/* The kernel took the area or refused it; the feature probe says which kind this is. */
	uevent_feature_probe(UEVENT_FEAT_THREAD_CONTEXT, &fi);
	ok(uevent_thread_context_registered() == (fi.state == UEVENT_FEAT_PRESENT),
	   "registered (%d) exactly when the kernel has PR_PERF_TLS_AREA (%s: %s)",
	   uevent_thread_context_registered(), fi.state == UEVENT_FEAT_PRESENT ? "yes" : "no",
	   fi.detail);
	ok(uevent_thread_context_decode(a, sizeof(*a), UEVENT_BO_HOST, &tc) == 0 &&
	   !memcmp(tc.trace_id, trace, 16) && !memcmp(tc.span_id, span, 8) && tc.flags == 1,
	   "decode of the live area gives the ids and flags back");
	seq = a->seq;
	ok(uevent_thread_context_set(trace, trace + 8, 0) == 0 && a->seq == seq + 2 &&
	   !memcmp(a->span_id, trace + 8, 8) && a->flags == 0,
	   "a second set: the new span, seq advanced by 2");
	ok(uevent_thread_context_clear() == 0 && a->valid == 0 && a->seq == seq + 4 &&
	   uevent_thread_context_decode(a, sizeof(*a), UEVENT_BO_HOST, &tc) == -ENODATA,
	   "clear: valid 0, seq advanced by 2, decode says -ENODATA");
	/*
	 * A set from a signal handler that interrupted one on this thread finds seq odd:
	 * it must leave it odd (the interrupted write ends it), as seen by faking the odd
	 * word the interrupted set would have left.
	 */
	seq = a->seq;
	((struct uevent_thread_context_area *)a)->seq = seq + 1;
	ok(uevent_thread_context_set(trace, span, 1) == 0 && a->seq == seq + 1 &&
	   uevent_thread_context_decode(a, sizeof(*a), UEVENT_BO_HOST, &tc) == -EAGAIN,
	   "a set nested in an unfinished one leaves seq odd: still -EAGAIN to a reader");
	((struct uevent_thread_context_area *)a)->seq = seq;
}

/* Area bytes as the sampled machine wrote them, in byte order bo. */
static void area_bytes(uint8_t *b, uint32_t seq, uint16_t ver, uint16_t size, int big, int valid)
{
	memset(b, 0, 40);
	if (big) {
		b[0] = seq >> 24; b[1] = seq >> 16; b[2] = seq >> 8; b[3] = seq;
		b[4] = ver >> 8; b[5] = ver; b[6] = size >> 8; b[7] = size;
	} else {
		b[0] = seq; b[1] = seq >> 8; b[2] = seq >> 16; b[3] = seq >> 24;
		b[4] = ver; b[5] = ver >> 8; b[6] = size; b[7] = size >> 8;
	}
	memcpy(b + 8, trace, 16);
	memcpy(b + 24, span, 8);
	b[32] = 1;
	b[33] = valid;
}

static void decode(void)
{
	uint8_t b[48];
	struct uevent_trace_context tc;
	int big;

	for (big = 0; big < 2; big++) {
		int bo = big ? UEVENT_BO_BIG : UEVENT_BO_LITTLE;
		const char *tag = big ? "big-endian" : "little-endian";

		area_bytes(b, 6, 1, 40, big, 1);
		ok(uevent_thread_context_decode(b, 40, bo, &tc) == 0 &&
		   !memcmp(tc.trace_id, trace, 16) && !memcmp(tc.span_id, span, 8) && tc.flags == 1,
		   "%s area decodes", tag);
		area_bytes(b, 7, 1, 40, big, 1);
		ok(uevent_thread_context_decode(b, 40, bo, &tc) == -EAGAIN && tc.flags == 0 &&
		   tc.trace_id[0] == 0, "%s: odd seq (torn write) is -EAGAIN, ids zeroed", tag);
	}
	area_bytes(b, 2, 1, 40, 0, 0);
	ok(uevent_thread_context_decode(b, 40, UEVENT_BO_LITTLE, &tc) == -ENODATA,
	   "valid 0: -ENODATA");
	ok(uevent_thread_context_decode(NULL, 0, UEVENT_BO_LITTLE, &tc) == -ENODATA,
	   "an empty dump (no area registered): -ENODATA");
	area_bytes(b, 2, 1, 40, 0, 1);
	ok(uevent_thread_context_decode(b, 39, UEVENT_BO_LITTLE, &tc) == -EINVAL &&
	   uevent_thread_context_decode(b, 4, UEVENT_BO_LITTLE, &tc) == -EINVAL,
	   "shorter than 40 bytes: -EINVAL");
	area_bytes(b, 2, 0, 40, 0, 1);
	ok(uevent_thread_context_decode(b, 40, UEVENT_BO_LITTLE, &tc) == -EINVAL, "version 0: -EINVAL");
	area_bytes(b, 2, 1, 32, 0, 1);
	ok(uevent_thread_context_decode(b, 40, UEVENT_BO_LITTLE, &tc) == -EINVAL,
	   "a size word below 40: -EINVAL");
	area_bytes(b, 2, 2, 48, 0, 1);
	ok(uevent_thread_context_decode(b, 48, UEVENT_BO_LITTLE, &tc) == 0 &&
	   !memcmp(tc.span_id, span, 8), "a later version, 48 bytes: its first 40 still decode");
	ok(uevent_thread_context_decode(b, 40, 7, &tc) == -EINVAL &&
	   uevent_thread_context_decode(b, 40, UEVENT_BO_LITTLE, NULL) == -EINVAL &&
	   uevent_thread_context_decode(NULL, 40, UEVENT_BO_LITTLE, &tc) == -EFAULT,
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
	uint8_t area[40], buf[128];
	size_t n;

	area_bytes(area, 4, 1, 40, 0, 1);
	n = sample(buf, area, 40, 40);
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == 0 && !memcmp(r.u.sample.context_trace_id, trace, 16) &&
	   !memcmp(r.u.sample.context_span_id, span, 8) && r.u.sample.context_flags == 1,
	   "a sample whose TLS dump is an area: context_* hold its trace context");
	n = sample(buf, area, 0, 0);
	ok(uevent_perf_record_decode(buf, n, UEVENT_BO_LITTLE, &f, &r) == 0 &&
	   r.u.sample.context_err == -ENODATA && r.u.sample.context_span_id[0] == 0,
	   "a sample with an empty dump (unregistered thread): context_err -ENODATA");
	n = sample(buf, area, 40, 16);
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
	const struct uevent_thread_context_area *area;
	int set_ret, valid_before, registered;
	uint8_t span0;
};

static void *peer(void *arg)
{
	struct peer *p = arg;
	uint8_t other[8] = { 0x99, 1, 2, 3, 4, 5, 6, 7 };

	p->area = uevent_thread_context_area();
	p->valid_before = p->area->valid;
	p->set_ret = uevent_thread_context_set(trace, other, 0);
	p->span0 = p->area->span_id[0];
	p->registered = uevent_thread_context_registered();
	return NULL;
}

static void threads(void)
{
	const struct uevent_thread_context_area *mine = uevent_thread_context_area();
	struct peer p = { 0 };
	pthread_t th;

	uevent_thread_context_set(trace, span, 1);
	pthread_create(&th, NULL, peer, &p);
	pthread_join(th, NULL);
	ok(p.area != mine && p.valid_before == 0 && p.set_ret == 0 && p.span0 == 0x99 &&
	   mine->span_id[0] == span[0] && mine->valid == 1,
	   "another thread: its own area, starts empty; its set leaves ours alone");
	ok(p.registered == uevent_thread_context_registered(),
	   "another thread registers (or is refused) like this one");
}

int main(void)
{
	plan(28);
	layout();
	set_and_read();
	decode();
	samples();
	threads();
	return exit_status();
}
