/* session-drain.c - uevent_session__drain(): what the rings hold copied to the recording
 * as the kernel wrote it, perf record's way: each ring's bytes in turn, then a
 * FINISHED_ROUND; nothing decoded, ordered or handed to a reader. */
#include "config.h"

#include <stddef.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/* The longest a drain waiting for records leaves them in the rings (as __next()). */
#define DRAIN_POLL_MS	100
/* The recording's buffer is written out past this, between rings. */
#define DRAIN_SPILL	(1u << 20)

/*
 * A usdt mark larger than the payload a probe fetches: the size it says is more than
 * the layout's capacity (as _uevent_raw_to_uevent() flags it UEVENT_RECORD_TRUNCATED).
 */
static int usdt_truncated(const struct uevent_session *s, int kind, const uint8_t *r, uint16_t n)
{
	const struct uevent_raw_layout *l = &s->fmt[kind].raw;
	size_t raw_at = sizeof(struct perf_event_header) + _uevent_sample_id_size(BASE_ST) + 4;
	uint64_t size;

	if (l->kind != UEVENT_RAW_USDT || s->fmt[kind].sample_type != (BASE_ST | PERF_SAMPLE_RAW) ||
	    raw_at + l->size_offset + 8 > n)
		return 0;
	memcpy(&size, r + raw_at + l->size_offset, 8);
	return size > l->data_capacity;
}

/*
 * One record just copied to the recording: counted as __next() would count it, its
 * time taken for the end mark, its id made one the recording knows (see record_tee in
 * session-decode.c), and a FORK, EXIT or MMAP2 to the set-up hook.
 */
static void drained(struct uevent_session *s, uint8_t *r, uint16_t size, uint32_t type)
{
	const struct idmap *f = NULL;
	uint64_t ident = 0, t, v;
	int kind;

	if (size >= 16) {
		memcpy(&ident, type == PERF_RECORD_SAMPLE ? r + 8 : r + size - 8, 8);
		f = idmap_find(s, ident);
	}
	kind = f ? f->kind : -1;
	if (f && is_usdt(kind) && f->alias && f->alias != ident) {
		if (type == PERF_RECORD_SAMPLE) {
			size_t raw_at = sizeof(struct perf_event_header) + _uevent_sample_id_size(BASE_ST) + 4;
			uint16_t tp = (uint16_t)s->config[kind];

			memcpy(r + 8, &f->alias, 8);
			if (size >= raw_at + 2)
				memcpy(r + raw_at, &tp, 2);
		} else {
			memcpy(r + size - 8, &f->alias, 8);
			if (type == PERF_RECORD_LOST)
				memcpy(r + 8, &f->alias, 8);
		}
	}
	s->st.records++;
	switch (type) {
	case PERF_RECORD_SAMPLE:
		if (kind == K_SAMPLES) {
			s->st.samples++;
		} else if (is_usdt(kind) || kind == K_USER) {
			s->st.uevents++;
			if (is_usdt(kind) && usdt_truncated(s, kind, r, size))
				s->st.truncated++;
		}
		break;
	case PERF_RECORD_UEVENT:
		s->st.uevents++;
		break;
	case PERF_RECORD_LOST:
		if (size >= 24) {
			memcpy(&v, r + 16, 8);
			s->st.lost += v;
		}
		s->st.lost_records++;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (size >= 16) {
			memcpy(&v, r + 8, 8);
			s->st.lost_samples += v;
		}
		s->st.lost_records++;
		break;
	case PERF_RECORD_BPF_EVENT:
		s->st.bpf_events++;
		break;
	}
	t = _uevent_session_rec_time(s, r);
	if (t) {
		if (!s->rec.t0 || t < s->rec.t0)
			s->rec.t0 = t;
		if (t > s->rec.t1)
			s->rec.t1 = t;
	}
	if (s->follow && (type == PERF_RECORD_MMAP2 || type == PERF_RECORD_FORK ||
			  type == PERF_RECORD_EXIT))
		s->follow(s, r);
}

/*
 * Ring r's records appended to the recording's buffer, in two copies at most (where
 * the ring wraps), then walked: each whole record counted and fixed in place (a
 * KSYMBOL or BPF_EVENT trimmed to its own bytes). The number of records, or -ENOMEM.
 */
static int drain_ring(struct uevent_session *s, struct ring *r)
{
	struct perf_event_mmap_page *pg = r->base;
	struct _uevent_rec *w = &s->rec;
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t off, size, head, tail, n, first, pos;
	size_t at = w->len, out;
	const uint8_t *data;
	int count = 0;

	off = pg->data_offset ? pg->data_offset : (uint64_t)psz;
	size = pg->data_size ? pg->data_size : r->map_size - (uint64_t)psz;
	if (!size || (size & (size - 1)) || off > r->map_size || size > r->map_size - off) {
		s->st.corrupt++;
		return 0;
	}
	data = (const uint8_t *)r->base + off;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	n = head - tail;
	if (!n)
		return 0;
	if (n > size) {
		s->st.corrupt++;
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	if (_uevent_grow(&w->buf, &w->cap, w->len + n) < 0)
		return -ENOMEM;
	first = size - (tail & (size - 1));
	if (first > n)
		first = n;
	memcpy(w->buf + at, data + (tail & (size - 1)), first);
	memcpy(w->buf + at + first, data, n - first);
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	s->st.bytes += n;
	for (pos = 0, out = at; pos + sizeof(struct perf_event_header) <= n;) {
		struct perf_event_header h;
		uint8_t *rec = w->buf + at + pos;
		uint16_t len;

		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > n - pos)
			break;
		len = (uint16_t)_uevent_rec_len(rec, &h);
		if (len < h.size) {
			/* trimmed, so the recorded perf.data holds what perf expects */
			memcpy(rec + offsetof(struct perf_event_header, size), &len, sizeof(len));
			s->st.trimmed++;
		}
		if (out != at + pos)
			memmove(w->buf + out, rec, len);
		drained(s, w->buf + out, len, h.type);
		out += len;
		pos += h.size;
		count++;
	}
	if (pos != n)
		s->st.corrupt++;	/* the rest is not whole records: dropped, as ring_read */
	w->len = out;
	return count;
}

/* Every ring once: the records written, or -errno (the recording's write error). */
static int drain_round(struct uevent_session *s)
{
	int i, n, count = 0;

	for (i = 0; i < s->nr_rings; i++) {
		n = drain_ring(s, &s->rings[i]);
		if (n < 0)
			return n;
		count += n;
		if (s->rec.len >= DRAIN_SPILL && _uevent_rec_write(&s->rec) < 0)
			return s->rec.err;
	}
	if (count && _uevent_rec_round(&s->rec) < 0)
		return s->rec.err;
	return count;
}

/*
 * What __next() read and did not give out yet: to the recording as it would have gone
 * (decoded, counted) before the rings' newer records.
 */
static void drain_held(struct uevent_session *s)
{
	struct uevent_perf_record rec = { .sz = sizeof(rec) };
	int kind;

	while (s->qi < s->qn)
		if (_uevent_session_decode(s, s->q[s->qi++].what, &rec, &kind) == 0)
			_uevent_session_keep(s, &rec, kind);
	s->qi = s->qn = s->qready = 0;
	s->buf_len = 0;
}

int _uevent_session_drain(struct uevent_session *s, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? (int64_t)(_uevent_now_ns() / 1000000) + timeout_ms : 0;

	drain_held(s);
	for (;;) {
		struct epoll_event evs[16];
		int n, i, live = 0, wait;

		if (__atomic_load_n(&s->shut, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		for (i = 0; i < s->nr_rings; i++)
			live += s->rings[i].live;
		n = drain_round(s);
		if (n != 0 || !live || timeout_ms == 0)
			return n;
		wait = DRAIN_POLL_MS;
		if (timeout_ms > 0) {
			int64_t left = deadline - (int64_t)(_uevent_now_ns() / 1000000);

			if (left <= 0)
				return 0;
			if (left < wait)
				wait = (int)left;
		}
		n = epoll_wait(s->epfd, evs, 16, wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		_uevent_session_woken(s, evs, n);	/* a gone task's ring: drained at the top */
	}
}
