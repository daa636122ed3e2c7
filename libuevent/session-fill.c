/* session-fill.c - a session's read round: every ring's records copied into the
 * session's buffer (or, in overwrite mode, a snapshot of them), then put in order. */
#include "config.h"

#include <sys/ioctl.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/* FORK, EXIT and MMAP2 records just read (from off on): to the set-up hook. */
static void follow_records(struct uevent_session *s, size_t off)
{
	struct perf_event_header h;

	for (; off + sizeof(h) <= s->buf_len; off += h.size) {
		memcpy(&h, s->buf + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > s->buf_len)
			break;
		if (h.type == PERF_RECORD_MMAP2 || h.type == PERF_RECORD_FORK ||
		    h.type == PERF_RECORD_EXIT)
			s->follow(s, s->buf + off);
	}
}

int _uevent_session_fill(struct uevent_session *s, int all)
{
	uint64_t watermark = all ? UINT64_MAX : _uevent_now_ns() - HOLD_MARGIN_NS;
	int i, err;

	if (s->rec.fd >= 0 && _uevent_rec_flush(&s->rec) < 0)
		return s->rec.err;
	err = _uevent_session_keep_held(s);
	if (err < 0)
		return err;
	for (i = 0; i < s->nr_rings; i++) {
		struct ring *r = &s->rings[i];
		size_t from = s->buf_len;
		ssize_t n;

		do {
			err = buf_reserve(s, r->map_size);
			if (err < 0)
				return err;
			n = uevent_ring_read(r->base, r->map_size, s->buf + s->buf_len,
					     s->buf_cap - s->buf_len);
			if (n == -EINVAL)
				s->st.corrupt++;
			if (n > 0) {
				s->buf_len += (size_t)n;
				s->st.bytes += (uint64_t)n;
			}
		} while (n > 0);
		if (s->follow)
			follow_records(s, from);
	}
	return _uevent_session_index(s, watermark);
}

/* Overwrite mode: rings written backward from data_head; walk from head while whole. */
int _uevent_session_snapshot(struct uevent_session *s)
{
	int i, err;

	if (s->rec.fd >= 0 && _uevent_rec_flush(&s->rec) < 0)
		return s->rec.err;
	s->buf_len = 0;
	for (i = 0; i < s->nr_rings; i++) {
		struct ring *r = &s->rings[i];
		struct perf_event_mmap_page *pg = r->base;
		const uint8_t *data = (const uint8_t *)r->base + pg->data_offset;
		uint64_t size = pg->data_size, head, pos;

		ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		err = buf_reserve(s, (size_t)size);
		if (err < 0) {
			ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
			return err;
		}
		for (pos = 0; pos + 8 <= size;) {
			struct perf_event_header h;

			_uevent_ring_copy(data, size, head + pos, &h, sizeof(h));
			if (h.size < 8 || (h.size & 7) || pos + h.size > size || h.type == 0)
				break;
			/* the oldest bytes may be a record the kernel overwrote half of */
			if ((uint64_t)-head < pos + h.size && (uint64_t)-head < size)
				break;
			_uevent_ring_copy(data, size, head + pos, s->buf + s->buf_len, h.size);
			s->buf_len += h.size;
			pos += h.size;
		}
		ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	}
	err = _uevent_session_index(s, UINT64_MAX);
	return err < 0 ? err : (int)s->qn;
}
