/* session-drain.c - uevent_session__drain(): what the rings hold copied to the recording
 * as the kernel wrote it, perf record's way: each ring's bytes in turn, then a
 * FINISHED_ROUND; nothing decoded, ordered or handed to a reader. */
#include "config.h"

#include <stddef.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/* The longest a drain waiting for records leaves them in the rings (as __next()). */
#define DRAIN_POLL_MS	100

/* The pieces of one writev: a round's records, the rings' and the copies. */
#define DRAIN_IOV	256
/* The rings whose tails move once that writev is written. */
#define DRAIN_REL	64
/* Room kept in the recording's buffer for the records a walk copies (16 of the longest). */
#define DRAIN_COPY	(1u << 20)

/*
 * A drain round's walk of the rings. The kernel's ring pages are read-only to us (only
 * the control page takes writes), so the bytes go out where they lie, as pieces of one
 * writev a round (perf record writes each ring's alike), and a record that must change
 * (its id made ours, cut to its own bytes) or that wraps round the ring's end goes out
 * as a copy in the recording's buffer, which has room kept for that and does not move
 * while pieces point into it. A ring's tail moves once its pieces are written.
 */
struct drain_walk {
	struct uevent_session *s;
	struct perf_event_mmap_page *pg;	/* the ring walked now */
	const uint8_t *data;
	uint64_t size, tail;		/* its data size; its tail when the walk began */
	uint64_t from;			/* walked bytes not in a piece yet start here */
	struct iovec iov[DRAIN_IOV];
	int niov;
	struct {
		struct perf_event_mmap_page *pg;
		uint64_t tail;
	} rel[DRAIN_REL];		/* rings walked, their tails to move */
	int nrel;
	uint64_t ident;			/* the last record's event id, and its entry */
	const struct idmap *f;
	size_t raw_at;			/* a usdt mark's raw data (past its u32 size) */
};

/*
 * A usdt mark larger than the payload a probe fetches: the size it says is more than
 * the layout's capacity (as _uevent_raw_to_uevent() flags it UEVENT_RECORD_TRUNCATED).
 */
static int usdt_truncated(const struct drain_walk *dw, int kind, const uint8_t *r, uint16_t n)
{
	const struct uevent_raw_layout *l = &dw->s->fmt[kind].raw;
	size_t at = dw->raw_at + l->size_offset;
	uint64_t size;

	if (l->kind != UEVENT_RAW_USDT ||
	    dw->s->fmt[kind].sample_type != (BASE_ST | PERF_SAMPLE_RAW) || at + 8 > n)
		return 0;
	memcpy(&size, r + at, 8);
	return size > l->data_capacity;
}

/* The entry of the event record r (size bytes, of type) is from, or NULL. */
static const struct idmap *drain_event(struct drain_walk *dw, const uint8_t *r, uint16_t size,
				       uint32_t type)
{
	uint64_t ident;

	if (size < 16)
		return NULL;
	memcpy(&ident, type == PERF_RECORD_SAMPLE ? r + 8 : r + size - 8, 8);
	if (ident != dw->ident || !dw->f) {	/* a ring's records: mostly one event's */
		dw->f = idmap_find(dw->s, ident);
		dw->ident = ident;
	}
	return dw->f;
}

/* A usdt event of another object's: its records get an id of ours (record_tee in
 * session-decode.c), written into them. */
static int drain_aliased(const struct idmap *f)
{
	return f && is_usdt(f->kind) && f->alias && f->alias != f->id;
}

/*
 * Record r (size bytes of its own), of event f, about to go to the recording: its id
 * made one the recording knows, counted as __next() would count it, its time taken for
 * the end mark, and a FORK, EXIT or MMAP2 to the set-up hook.
 */
static void drained(struct drain_walk *dw, const struct idmap *f, uint8_t *r, uint16_t size,
		    uint32_t type)
{
	struct uevent_session *s = dw->s;
	int kind = f ? f->kind : -1;
	uint64_t t, v;

	if (drain_aliased(f)) {		/* r is a copy */
		if (type == PERF_RECORD_SAMPLE) {
			uint16_t tp = (uint16_t)s->config[kind];

			memcpy(r + 8, &f->alias, 8);
			if (size >= dw->raw_at + 2)
				memcpy(r + dw->raw_at, &tp, 2);
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
			if (is_usdt(kind) && usdt_truncated(dw, kind, r, size))
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
	t = _uevent_session_time_of(s, r, size, type, kind);
	if (t) {
		if (!s->rec.t0 || t < s->rec.t0)
			s->rec.t0 = t;
		if (t > s->rec.t1)
			s->rec.t1 = t;
	}
	if (s->follow && (type == PERF_RECORD_MMAP2 || type == PERF_RECORD_FORK ||
			  type == PERF_RECORD_EXIT)) {
		s->follow(s, r);
		dw->f = NULL;	/* it may have added events: the table moved */
	}
}

/* The walked ring bytes [dw->from, to) as pieces: two where the ring wraps. */
static void drain_piece(struct drain_walk *dw, uint64_t to)
{
	uint64_t at = (dw->tail + dw->from) & (dw->size - 1), n = to - dw->from;

	if (to <= dw->from)
		return;
	if (at + n > dw->size) {
		dw->iov[dw->niov++] = (struct iovec){ (void *)(dw->data + at), (size_t)(dw->size - at) };
		dw->iov[dw->niov++] = (struct iovec){ (void *)dw->data, (size_t)(n - (dw->size - at)) };
	} else {
		dw->iov[dw->niov++] = (struct iovec){ (void *)(dw->data + at), (size_t)n };
	}
	dw->from = to;
}

/*
 * The pieces so far written in one writev, then the tails of the rings they came from
 * moved past them; the recording's buffer is empty again. 0 or the recording's error
 * (the walk then stops: the recording is over).
 */
static int drain_flush(struct drain_walk *dw)
{
	struct _uevent_rec *w = &dw->s->rec;
	struct iovec *v = dw->iov;
	size_t all = 0;
	int cnt, i;
	ssize_t got;

	for (i = 0; i < dw->niov; i++)
		all += dw->iov[i].iov_len;
	_uevent_rec_reserve(w, all);
	for (cnt = dw->niov; !w->err && cnt > 0;) {
		got = writev(w->fd, v, cnt);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			w->err = got < 0 ? -errno : -EIO;
			break;
		}
		w->pos += (uint64_t)got;
		for (; cnt > 0 && (size_t)got >= v->iov_len; v++, cnt--)
			got -= (ssize_t)v->iov_len;
		if (cnt > 0) {
			v->iov_base = (uint8_t *)v->iov_base + got;
			v->iov_len -= (size_t)got;
		}
	}
	w->len = 0;
	dw->niov = 0;
	for (i = 0; i < dw->nrel; i++)
		__atomic_store_n(&dw->rel[i].pg->data_tail, dw->rel[i].tail, __ATOMIC_RELEASE);
	dw->nrel = 0;
	return w->err;
}

/* The ring walked now done up to `to` of its walk: its tail moves there with the next
 * write, or now (flush) or when the pieces or the rings waiting are many. */
static int drain_done(struct drain_walk *dw, uint64_t to, int flush)
{
	drain_piece(dw, to);
	dw->rel[dw->nrel].pg = dw->pg;
	dw->rel[dw->nrel++].tail = dw->tail + to;
	if (flush || dw->niov > DRAIN_IOV - 8 || dw->nrel == DRAIN_REL)
		return drain_flush(dw);
	return 0;
}

/* The pieces so far, and the ring bytes up to `to` of the walk, written now. */
static int drain_out(struct drain_walk *dw, uint64_t to)
{
	return drain_done(dw, to, 1);
}

/* The record at walk position pos (hsize bytes) copied into the recording's buffer as a
 * piece of its own; the copy, or NULL on the recording's error. */
static uint8_t *drain_copy(struct drain_walk *dw, uint64_t pos, uint16_t hsize)
{
	struct _uevent_rec *w = &dw->s->rec;
	uint64_t at = (dw->tail + pos) & (dw->size - 1), first = dw->size - at;
	uint8_t *c;

	drain_piece(dw, pos);
	if ((w->len + hsize > w->cap || dw->niov > DRAIN_IOV - 4) && drain_out(dw, pos) < 0)
		return NULL;
	c = w->buf + w->len;
	if (first >= hsize) {
		memcpy(c, dw->data + at, hsize);
	} else {
		memcpy(c, dw->data + at, (size_t)first);
		memcpy(c + first, dw->data, (size_t)(hsize - first));
	}
	w->len += hsize;
	if (dw->niov && (uint8_t *)dw->iov[dw->niov - 1].iov_base +
			dw->iov[dw->niov - 1].iov_len == c)
		dw->iov[dw->niov - 1].iov_len += hsize;	/* after the copy before */
	else
		dw->iov[dw->niov++] = (struct iovec){ c, hsize };
	dw->from = pos + hsize;
	return c;
}

/*
 * The ring's walk from pos to n (its bytes) the other way: what comes before written
 * out, then the rest copied into the recording's buffer at once and each whole record
 * fixed there (its id, its length: a trimmed one's bytes close up). Bytes walked, or
 * -errno; *count counts the records.
 */
static int64_t drain_rest_copied(struct drain_walk *dw, uint64_t pos, uint64_t n, int *count)
{
	struct _uevent_rec *w = &dw->s->rec;
	uint64_t at = (dw->tail + pos) & (dw->size - 1), first = dw->size - at, len = n - pos, p;
	size_t out;

	if (drain_out(dw, pos) < 0)	/* the buffer is empty after: it may grow */
		return w->err;
	if (_uevent_grow(&w->buf, &w->cap, (size_t)len) < 0)
		return -ENOMEM;
	if (first >= len) {
		memcpy(w->buf, dw->data + at, (size_t)len);
	} else {
		memcpy(w->buf, dw->data + at, (size_t)first);
		memcpy(w->buf + first, dw->data, (size_t)(len - first));
	}
	for (p = 0, out = 0; p + sizeof(struct perf_event_header) <= len;) {
		struct perf_event_header h;
		uint8_t *rec = w->buf + p;
		uint16_t rlen;

		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > len - p)
			break;
		rlen = h.size;
		if (h.type == PERF_RECORD_KSYMBOL || h.type == PERF_RECORD_BPF_EVENT)
			rlen = (uint16_t)_uevent_rec_len(rec, &h);
		if (rlen < h.size) {
			memcpy(rec + offsetof(struct perf_event_header, size), &rlen, 2);
			dw->s->st.trimmed++;
		}
		if (out != p)
			memmove(w->buf + out, rec, rlen);
		drained(dw, drain_event(dw, w->buf + out, rlen, h.type), w->buf + out, rlen, h.type);
		out += rlen;
		p += h.size;
		(*count)++;
	}
	w->len = out;
	dw->iov[dw->niov++] = (struct iovec){ w->buf, out };
	dw->from = n;		/* in the buffer, or not whole records: dropped */
	return (int64_t)p;
}

/*
 * Ring r's records to the recording as they lie, as perf record writes them, with what
 * the recording's buffer held before them, in one writev (more where many records are
 * copied); each whole record is walked once, and the ring's tail moves only past what
 * is written. The number of records, or -errno.
 */
static int drain_ring(struct drain_walk *dw, struct ring *r)
{
	struct uevent_session *s = dw->s;
	struct perf_event_mmap_page *pg = r->base;
	struct _uevent_rec *w = &s->rec;
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t off, size, head, tail, n, pos;
	int count = 0;

	off = pg->data_offset ? pg->data_offset : (uint64_t)psz;
	size = pg->data_size ? pg->data_size : r->map_size - (uint64_t)psz;
	if (!size || (size & (size - 1)) || off > r->map_size || size > r->map_size - off) {
		s->st.corrupt++;
		return 0;
	}
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
	dw->pg = pg;
	dw->data = (const uint8_t *)r->base + off;
	dw->size = size;
	dw->tail = tail;
	dw->from = 0;
	s->st.bytes += n;
	for (pos = 0; pos + sizeof(struct perf_event_header) <= n;) {
		uint64_t at = (tail + pos) & (size - 1);	/* a header never wraps */
		uint8_t *rec = (uint8_t *)(uintptr_t)(dw->data + at);
		const struct idmap *f;
		struct perf_event_header h;
		uint16_t len;
		int copied;

		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > n - pos)
			break;
		copied = at + h.size > size;	/* it wraps: read as a copy */
		if (copied && !(rec = drain_copy(dw, pos, h.size)))
			return w->err;
		len = h.size;
		if (h.type == PERF_RECORD_KSYMBOL || h.type == PERF_RECORD_BPF_EVENT)
			len = (uint16_t)_uevent_rec_len(rec, &h);
		f = drain_event(dw, rec, len, h.type);
		if (!copied && (len < h.size || drain_aliased(f))) {
			/* from here on records change (another copy of the probes' marks
			 * come in runs): the rest as one copy, each record fixed there */
			int64_t walked = drain_rest_copied(dw, pos, n, &count);

			if (walked < 0)
				return (int)walked;
			pos += (uint64_t)walked;
			break;
		}
		if (len < h.size) {
			/* trimmed, so the recorded perf.data holds what perf expects */
			memcpy(rec + offsetof(struct perf_event_header, size), &len, 2);
			dw->iov[dw->niov - 1].iov_len -= h.size - len;	/* the copy's end */
			w->len -= h.size - len;
			s->st.trimmed++;
		}
		drained(dw, f, rec, len, h.type);
		pos += h.size;
		count++;
		if (dw->niov > DRAIN_IOV - 4 && drain_out(dw, pos) < 0)
			return w->err;
	}
	if (pos != n)
		s->st.corrupt++;	/* the rest is not whole records: dropped, as ring_read */
	drain_piece(dw, pos);
	dw->from = n;		/* the rest is dropped: the tail moves past it */
	if (drain_done(dw, n, 0) < 0)
		return w->err;
	return count;
}

/* Every ring once: the records written, or -errno (the recording's write error). */
static int drain_round(struct uevent_session *s)
{
	static const struct perf_event_header fin = { .type = REC_FINISHED_ROUND,
						      .size = sizeof(fin) };
	struct _uevent_rec *w = &s->rec;
	struct drain_walk dw;
	int i, n, count = 0;

	if (_uevent_grow(&w->buf, &w->cap, w->len + DRAIN_COPY) < 0)
		return -ENOMEM;
	dw.s = s;
	dw.niov = dw.nrel = 0;
	dw.ident = 0;
	dw.f = NULL;
	dw.raw_at = sizeof(struct perf_event_header) + _uevent_sample_id_size(BASE_ST) + 4;
	if (w->len)	/* what the recording's writer put there before goes first */
		dw.iov[dw.niov++] = (struct iovec){ w->buf, w->len };
	for (i = 0; i < s->nr_rings; i++) {
		n = drain_ring(&dw, &s->rings[i]);
		if (n < 0)
			return n;
		count += n;
	}
	/* the round's end, as perf record marks it: perf may sort what came before */
	if (count && w->len + sizeof(fin) > w->cap && drain_flush(&dw) < 0)
		return w->err;
	if (count) {
		memcpy(w->buf + w->len, &fin, sizeof(fin));
		dw.iov[dw.niov++] = (struct iovec){ w->buf + w->len, sizeof(fin) };
		w->len += sizeof(fin);
	}
	if (drain_flush(&dw) < 0)
		return w->err;
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
