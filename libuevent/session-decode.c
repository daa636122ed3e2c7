/* session-decode.c - a session's record decoded for its reader, and written as read to
 * the recording (under the ids the recording knows). */
#include "config.h"

#include <stddef.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "bpf-context.h"
#include "session-internal.h"

/* The id a record of event ident is recorded under. */
static uint64_t rec_id(const struct uevent_session *s, uint64_t ident)
{
	const struct idmap *f = idmap_find(s, ident);

	return f && f->alias ? f->alias : ident;
}

/*
 * The identifier: first in a sample, last in the others (and LOST's id); a sample's raw
 * data starts with its event's tracepoint id (common_type). A recording has the records
 * of another object's usdt events under an id of ours (see usdt_alias).
 */
static void record_tee(struct uevent_session *s, uint32_t off, const struct perf_event_header *h,
		       uint64_t ident, int kind, const struct uevent_perf_record *rec)
{
	uint64_t alias = is_usdt(kind) ? rec_id(s, ident) : ident;

	if (alias != ident && h->type == PERF_RECORD_SAMPLE) {
		/* BASE_ST's fields (IDENTIFIER, TID, TIME, CPU), the raw size, raw */
		size_t raw_at = sizeof(*h) + _uevent_sample_id_size(BASE_ST) + 4;
		uint16_t type = (uint16_t)s->config[kind];

		memcpy(s->buf + off + 8, &alias, 8);
		if (rec->body == UEVENT_BODY_UEVENT && h->size >= raw_at + 2)
			memcpy(s->buf + off + raw_at, &type, 2);
	} else if (alias != ident) {
		memcpy(s->buf + off + h->size - 8, &alias, 8);
		if (h->type == PERF_RECORD_LOST)
			memcpy(s->buf + off + 8, &alias, 8);
	}
	if (rec->id.fields & UEVENT_ID_TIME) {
		if (!s->rec.t0 || rec->id.time < s->rec.t0)
			s->rec.t0 = rec->id.time;
		if (rec->id.time > s->rec.t1)
			s->rec.t1 = rec->id.time;
	}
	if (s->bpf_ctx && kind == K_SAMPLES)
		_uevent_bpf_ctx_rec_append(s, s->buf + off, h->size, rec);
	else
		_uevent_rec_append(&s->rec, s->buf + off, h->size);
}

/*
 * Decodes s->buf at off into rec, with its event's kind (-1: not the session's), and
 * writes it to the recording: 0, or -EINVAL (counted corrupt) when it does not decode.
 */
int _uevent_session_decode(struct uevent_session *s, uint32_t off, struct uevent_perf_record *rec,
			   int *kindp)
{
	const uint8_t *r = s->buf + off;
	struct perf_event_header h;
	uint64_t ident = 0;
	int kind, err;

	memcpy(&h, r, sizeof(h));
	if (_uevent_rec_len(r, &h) < h.size) {
		/* trimmed to its own bytes, so the recorded perf.data holds what perf expects */
		h.size = (uint16_t)_uevent_rec_len(r, &h);
		memcpy(s->buf + off + offsetof(struct perf_event_header, size), &h.size,
		       sizeof(h.size));
		s->st.trimmed++;
	}
	if (h.size >= 16) {
		if (h.type == PERF_RECORD_SAMPLE)
			memcpy(&ident, r + 8, 8);
		else
			memcpy(&ident, r + h.size - 8, 8);
	}
	*kindp = kind = kind_of(s, ident);
	err = uevent_perf_record_decode(r, h.size, UEVENT_BO_HOST,
					&s->fmt[kind < 0 ? K_DUMMY : kind], rec);
	if (err < 0) {
		s->st.corrupt++;
		return -EINVAL;
	}
	if (s->bpf_ctx && kind == K_SAMPLES)
		_uevent_bpf_ctx_fill(s->bpf_ctx, rec);
	if (s->rec.fd >= 0)
		record_tee(s, off, &h, ident, kind, rec);
	if (rec->body == UEVENT_BODY_SAMPLE)
		rec->u.sample.event_index = kind < 0 ? -1 : s->kind_ev[kind];
	else if (rec->body == UEVENT_BODY_UEVENT)
		rec->u.uevent.event_index = kind < 0 ? -1 : s->kind_ev[kind];
	return 0;
}
