/* session-order.c - a session's records in time order: each read round's records indexed
 * by time, those that may still have company held back for the next round. */
#include "config.h"

#include <stdlib.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"


/*
 * Time of a record: a sample's TIME (after IDENTIFIER, IP and TID as its event's
 * sample_type has them), else the sample_id trailer's (..., time, cpu, identifier).
 */
/*
 * The bytes of record r that are its own: less than its size for a KSYMBOL or BPF_EVENT
 * the kernel wrote too long (see _uevent_sideband_used).
 */
size_t _uevent_rec_len(const uint8_t *r, const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_KSYMBOL && h->type != PERF_RECORD_BPF_EVENT)
		return h->size;
	return _uevent_sideband_used(r, h->size, h->type, _uevent_sample_id_size(BASE_ST));
}

uint64_t _uevent_session_time_of(const struct uevent_session *s, const uint8_t *r, size_t size,
				 uint32_t type, int kind)
{
	uint64_t t = 0, st;
	size_t at;

	if (type == PERF_RECORD_SAMPLE) {
		st = s->fmt[kind < 0 ? K_DUMMY : kind].sample_type;
		at = 16 + ((st & PERF_SAMPLE_IP) ? 8 : 0) + ((st & PERF_SAMPLE_TID) ? 8 : 0);
		if ((st & PERF_SAMPLE_TIME) && at + 8 <= size)
			memcpy(&t, r + at, 8);
	} else if (type < PERF_RECORD_HEADER_ATTR_TYPE && size >= 8 + 32) {
		/* the BASE_ST sample_id: tid, time, cpu, identifier */
		memcpy(&t, r + size - 24, 8);
	}
	return t;
}

uint64_t _uevent_session_rec_time(const struct uevent_session *s, const uint8_t *r)
{
	struct perf_event_header h;
	uint64_t ident;

	memcpy(&h, r, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE)
		return _uevent_session_time_of(s, r, _uevent_rec_len(r, &h), h.type, -1);
	if (h.size < 16)
		return 0;
	memcpy(&ident, r + 8, 8);
	return _uevent_session_time_of(s, r, h.size, h.type, kind_of(s, ident));
}

int _uevent_session_index(struct uevent_session *s, uint64_t watermark)
{
	size_t off = 0, n = 0;

	for (off = 0; off + 8 <= s->buf_len;) {
		uint16_t sz;

		memcpy(&sz, s->buf + off + 6, 2);
		if (sz < 8)
			break;
		n++;
		off += sz;
	}
	if (n > s->q_cap) {
		struct _uevent_timed *q = realloc(s->q, n * sizeof(*q));

		if (!q)
			return -ENOMEM;
		s->q = q;
		s->q_cap = n;
	}
	s->qn = s->qi = 0;
	for (off = 0; off + 8 <= s->buf_len && s->qn < n;) {
		uint16_t sz;

		memcpy(&sz, s->buf + off + 6, 2);
		s->q[s->qn].time = _uevent_session_rec_time(s, s->buf + off);
		s->q[s->qn++].what = off;
		off += sz;
	}
	if (_uevent_time_sort(s->q, s->qn) < 0)
		return -ENOMEM;
	for (s->qready = 0; s->qready < s->qn && s->q[s->qready].time < watermark; s->qready++)
		;
	return 0;
}

/* Moves the records not yet delivered to the start of s->buf, in their order. */
int _uevent_session_keep_held(struct uevent_session *s)
{
	size_t i, len = 0;

	for (i = s->qi; i < s->qn; i++) {
		uint16_t sz;

		memcpy(&sz, s->buf + s->q[i].what + 6, 2);
		if (_uevent_grow(&s->hold, &s->hold_cap, len + sz) < 0)
			return -ENOMEM;
		memcpy(s->hold + len, s->buf + s->q[i].what, sz);
		len += sz;
	}
	s->qi = s->qn = s->qready = 0;
	s->buf_len = 0;
	if (len) {
		int err = buf_reserve(s, len);

		if (err < 0)
			return err;
		memcpy(s->buf, s->hold, len);
		s->buf_len = len;
	}
	return 0;
}
