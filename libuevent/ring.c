/* ring.c - reading a perf ring buffer: whole records, wrapped ones made whole. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "internal.h"
#include "perf-internal.h"

void _uevent_ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
	uint64_t at = pos & (size - 1);
	size_t first = n;

	if (at + n > size)
		first = (size_t)(size - at);
	memcpy(dst, data + at, first);
	if (first < n)
		memcpy((uint8_t *)dst + first, data, n - first);
}

UEVENT_EXPORT ssize_t uevent_ring_read(void *base, size_t map_size, void *buf, size_t cap)
{
	struct perf_event_mmap_page *pg = base;
	uint64_t head, tail, off, size, pos;
	size_t copied = 0;
	const uint8_t *data;
	long psz = sysconf(_SC_PAGESIZE);

	if (!base || (!buf && cap) || map_size < (size_t)psz)
		return _uevent_err(EINVAL);
	off = pg->data_offset ? pg->data_offset : (uint64_t)psz;
	size = pg->data_size ? pg->data_size : map_size - (uint64_t)psz;
	if (!size || (size & (size - 1)) || off > map_size || size > map_size - off)
		return _uevent_err(EINVAL);
	data = (const uint8_t *)base + off;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	if (head - tail > size)
		goto corrupt;
	for (pos = tail; pos != head;) {
		struct perf_event_header h;

		if (head - pos < sizeof(h))
			goto corrupt;
		_uevent_ring_copy(data, size, pos, &h, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > head - pos)
			goto corrupt;
		if (copied + h.size > cap)
			break;
		_uevent_ring_copy(data, size, pos, (uint8_t *)buf + copied, h.size);
		copied += h.size;
		pos += h.size;
	}
	__atomic_store_n(&pg->data_tail, pos, __ATOMIC_RELEASE);
	if (!copied && pos != head)
		return _uevent_err(ENOSPC);
	return (ssize_t)copied;
corrupt:
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return _uevent_err(EINVAL);
}

