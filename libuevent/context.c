/* context.c - the thread's trace context in a registered area that perf samples carry. */
#include "config.h"

#include <sys/prctl.h>

#include <linux/perf_uevent.h>

#include "internal.h"

/*
 * The area is a struct uevent_thread_context_area in static TLS (initial-exec: no
 * allocation, no lock, usable from a signal handler). Its reader is the kernel taking a
 * sample of this very thread, that is an interrupt of it: program order is all it can
 * see, so the seqlock needs compiler barriers, not fences.
 */
static __thread struct uevent_thread_context_area area
	__attribute__((tls_model("initial-exec"), aligned(8)));

/* 0: not tried yet; 1: the kernel dumps the area; -1: it refused (remembered). */
static __thread int registered __attribute__((tls_model("initial-exec")));

_Static_assert(sizeof(struct uevent_thread_context_area) == UEVENT_THREAD_CONTEXT_SIZE,
	       "the documented layout is 40 bytes");

static void do_register(void)
{
	area.version = UEVENT_THREAD_CONTEXT_VERSION;
	area.size = UEVENT_THREAD_CONTEXT_SIZE;
	/*
	 * Once per thread. A kernel without PR_PERF_TLS_AREA says EINVAL (an unknown
	 * prctl option); the stores below still happen, samples just do not carry them.
	 */
	if (prctl(PR_PERF_TLS_AREA, (unsigned long)&area, (unsigned long)sizeof(area),
		  0UL, 0UL) == 0)
		registered = 1;
	else
		registered = -1;
}

/*
 * seq odd while writing. A signal handler's set that interrupts one on the same thread
 * finds seq odd and leaves it so: only the outer write makes it even again, so no sample
 * sees a half-written area as whole (the area may end up holding a mix of the two).
 */
static inline uint32_t write_begin(void)
{
	uint32_t seq = __atomic_load_n(&area.seq, __ATOMIC_RELAXED);

	if (!(seq & 1))
		__atomic_store_n(&area.seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return seq;
}

static inline void write_end(uint32_t seq)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!(seq & 1))
		__atomic_store_n(&area.seq, seq + 2, __ATOMIC_RELAXED);
}

UEVENT_EXPORT int uevent_thread_context_set(const uint8_t *trace_id16, const uint8_t *span_id8,
					    uint8_t flags)
{
	uint32_t seq;

	if (!trace_id16 || !span_id8)
		return _uevent_err(EFAULT);
	seq = write_begin();
	memcpy(area.trace_id, trace_id16, 16);
	memcpy(area.span_id, span_id8, 8);
	area.flags = flags;
	area.valid = 1;
	write_end(seq);
	/*
	 * Registered after the first write: a sample taken as the prctl returns (a timer
	 * that expired during the call fires there) then finds the context already whole.
	 */
	if (unlikely(!registered))
		do_register();
	return 0;
}

UEVENT_EXPORT int uevent_thread_context_clear(void)
{
	uint32_t seq;

	/* Nothing set on this thread yet: nothing to clear, and no system call for it. */
	if (!registered)
		return 0;
	seq = write_begin();
	memset(area.trace_id, 0, sizeof(area.trace_id));
	memset(area.span_id, 0, sizeof(area.span_id));
	area.flags = 0;
	area.valid = 0;
	write_end(seq);
	return 0;
}

UEVENT_EXPORT int uevent_thread_context_registered(void)
{
	return registered > 0;
}

UEVENT_EXPORT const struct uevent_thread_context_area *uevent_thread_context_area(void)
{
	return &area;
}

UEVENT_EXPORT int uevent_thread_context_decode(const void *buf, size_t len, int bo,
					       struct uevent_trace_context *out)
{
	struct _uevent_cur c;
	const uint8_t *p;
	uint32_t seq;
	uint16_t version, size;

	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!out || bo < UEVENT_BO_HOST || bo > UEVENT_BO_BIG)
		return _uevent_err(EINVAL);
	memset(out, 0, sizeof(*out));
	/* An empty dump: the thread registered no area (or the kernel could not read it). */
	if (!len)
		return _uevent_err(ENODATA);
	_uevent_cur_init(&c, buf, len, bo);
	seq = _uevent_get32(&c);
	version = _uevent_get16(&c);
	size = _uevent_get16(&c);
	/* Later versions only append: the first 40 bytes keep their meaning. */
	if (c.bad || version < UEVENT_THREAD_CONTEXT_VERSION || size < UEVENT_THREAD_CONTEXT_SIZE ||
	    len < UEVENT_THREAD_CONTEXT_SIZE)
		return _uevent_err(EINVAL);
	/* Sampled in the middle of a set or clear: neither the old nor the new context. */
	if (seq & 1)
		return _uevent_err(EAGAIN);
	p = _uevent_take(&c, 32);
	if (!p[25])
		return _uevent_err(ENODATA);
	memcpy(out->trace_id, p, 16);
	memcpy(out->span_id, p + 16, 8);
	out->flags = p[24];
	return 0;
}
