/* kperf.h - raw perf_event_open and ring-buffer reading for the guest tests. */
#ifndef KPERF_H
#define KPERF_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#ifndef PERF_RECORD_UEVENT
#include <linux/perf_uevent.h>
#endif

static inline int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

/* prctl(PR_TASK_PERF_UEVENT, ...) by the raw system call: the same call on every libc. */
static inline long kperf_uevent(unsigned long type, unsigned long size, const void *data,
				unsigned long flags)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, type, size, data, flags);
}

static inline pid_t ktid(void)
{
	return syscall(SYS_gettid);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size;		/* data area bytes */
	size_t map_len;
	unsigned char rec[65536] __attribute__((aligned(8)));	/* a record, copied out */
	uint64_t lost;		/* sum of PERF_RECORD_LOST.lost */
};

/* Map 1 + pages pages of fd; pages must be a power of two. */
static inline int ring_map(struct ring *r, int fd, size_t pages)
{
	long psz = sysconf(_SC_PAGESIZE);

	r->fd = fd;
	r->lost = 0;
	r->size = pages * psz;
	r->map_len = (pages + 1) * psz;
	r->meta = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->meta == MAP_FAILED)
		return -errno;
	r->data = (unsigned char *)r->meta + psz;
	return 0;
}

static inline void ring_unmap(struct ring *r)
{
	if (r->meta && r->meta != MAP_FAILED)
		munmap(r->meta, r->map_len);
	r->meta = NULL;
}

typedef void (*ring_cb)(const struct perf_event_header *h, void *arg);

/*
 * Consume every record: data_head is loaded with acquire and data_tail stored with
 * release, as tools/include/linux/ring_buffer.h does. Returns the record count.
 */
static inline int ring_drain(struct ring *r, ring_cb cb, void *arg)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int n = 0;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % r->size, first;

		first = r->size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, r->data + off, sizeof(h));
		} else {
			memcpy(&h, r->data + off, first);
			memcpy((char *)&h + first, r->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (first >= h.size) {
			memcpy(r->rec, r->data + off, h.size);
		} else {
			memcpy(r->rec, r->data + off, first);
			memcpy(r->rec + first, r->data, h.size - first);
		}
		if (h.type == PERF_RECORD_LOST)
			r->lost += ((uint64_t *)(r->rec + sizeof(h)))[1];
		if (cb)
			cb((const struct perf_event_header *)r->rec, arg);
		tail += h.size;
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

#endif /* KPERF_H */
