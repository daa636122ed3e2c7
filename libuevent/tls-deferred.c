/* tls-deferred.c - joins PERF_RECORD_TLS_USER_DEFERRED to the samples that carry its cookie. */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/*
 * A kernel with the deferred read (PERF_UEVENT_FEAT_TLS_DEFERRED) puts a cookie in the
 * sample and the thread's area, read on its way back to user space, in a record of
 * its own, after the sample and maybe on another CPU's buffer:
 *	header; u32 pid, tid; u64 cookie; u64 size; u8 data[size]; u64 dyn_size; sample_id
 * The readers join them here, so the sample looks as if the kernel had dumped the area
 * into it: every binding reads context_* off the sample as before.
 */

/* How far a perf.data reader looks ahead for the record: it follows within a round. */
#define JOIN_SCAN_BYTES	(8u << 20)

struct deferred {
	uint32_t pid, tid;
	uint64_t cookie, size, dyn_size;
	const void *data;
};

/* The record at p (header included, len bytes), or -1 when it is not a good one. */
static int parse(const uint8_t *p, size_t len, int bo, struct deferred *d)
{
	struct _uevent_cur c;

	_uevent_cur_init(&c, p + 8, len - 8, bo);
	d->pid = _uevent_get32(&c);
	d->tid = _uevent_get32(&c);
	d->cookie = _uevent_get64(&c);
	d->size = _uevent_get64(&c);
	/* never trust a length: the data and dyn_size must lie inside the record */
	if (c.bad || d->size > (uint64_t)(c.end - c.p) || d->size > PERF_SAMPLE_TLS_USER_MAX)
		return -1;
	d->data = _uevent_take(&c, d->size);
	d->dyn_size = _uevent_get64(&c);
	return c.bad || d->dyn_size > d->size ? -1 : 0;
}

static uint64_t waiting_cookie(const struct uevent_perf_record *rec)
{
	const struct uevent_perf_sample *s = &rec->u.sample;

	if (rec->body != UEVENT_BODY_SAMPLE || s->context_err != -EINPROGRESS)
		return 0;
	return s->tls_user_dyn_size;
}

/* Whether the record at p (len bytes) completes the sample; fills it then. */
static int try_join(struct uevent_perf_record *rec, const uint8_t *p, size_t len, int bo)
{
	struct uevent_perf_sample *s = &rec->u.sample;
	struct _uevent_cur c;
	struct deferred d;
	uint32_t type;

	_uevent_cur_init(&c, p, len, bo);
	type = _uevent_get32(&c);
	if (type != PERF_RECORD_TLS_USER_DEFERRED || len < 32 || parse(p, len, bo, &d) < 0)
		return 0;
	if (d.cookie != s->tls_user_dyn_size)
		return 0;
	/* the cookie is per CPU and kernel entry; pid and tid make it the same thread's */
	if ((rec->id.fields & UEVENT_ID_TID) && (d.pid != s->pid || d.tid != s->tid))
		return 0;
	s->tls_user_size = d.size;
	s->tls_user = d.data;
	s->tls_user_dyn_size = d.dyn_size;
	_uevent_decode_context(s, bo);
	return 1;
}

int _uevent_tls_join_scan(struct uevent_perf_record *rec, const uint8_t *p, const uint8_t *end,
			  int bo)
{
	const uint8_t *stop;

	if (!waiting_cookie(rec))
		return 0;
	stop = (size_t)(end - p) > JOIN_SCAN_BYTES ? p + JOIN_SCAN_BYTES : end;
	while (stop - p >= 8) {
		struct _uevent_cur c;
		uint16_t sz;

		_uevent_cur_init(&c, p + 6, 2, bo);
		sz = _uevent_get16(&c);
		if (sz < 8 || sz > stop - p)
			break;
		if (try_join(rec, p, sz, bo))
			return 1;
		p += sz;
	}
	return 0;
}

int _uevent_session_tls_join(struct uevent_session *s, struct uevent_perf_record *rec)
{
	size_t i;

	if (!waiting_cookie(rec))
		return 0;
	/* what the session has read and not given out: the record follows the sample */
	for (i = s->qi; i < s->qn; i++) {
		const uint8_t *p = s->buf + s->q[i].what;
		uint16_t sz;

		memcpy(&sz, p + 6, 2);
		if (try_join(rec, p, sz, UEVENT_BO_HOST))
			return 1;
	}
	return 0;
}
