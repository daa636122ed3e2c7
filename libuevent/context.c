/* context.c - the thread's trace context as OpenTelemetry's thread-local record (OTEP 4947). */
#include "config.h"

#include <stddef.h>
#include <sys/prctl.h>

#include <linux/perf_uevent.h>

#include "internal.h"

/*
 * One record per thread, 8-aligned (PR_PERF_TLS_AREA wants that), with the two private
 * words the writer needs beside it, in initial-exec TLS: one %fs-relative address, no
 * call. libuevent has initial-exec TLS anyway (the emit fast path's), so its whole TLS
 * block sits in static TLS, where a dlopen()ed copy takes glibc's small surplus: a
 * 640-byte record made LuaJIT's dlopen fail, hence 256. otel_thread_ctx_v1, which
 * readers outside the process resolve, keeps the TLSDESC dialect that OTEP 4947
 * recommends (-mtls-dialect=gnu2 where the compiler has it).
 */
/* tstate.writing: a write is under way; a signal handler's set or clear came over it */
enum { WRITING = 1, WRITE_DISTURBED = 2 };

struct tstate {
	struct uevent_thread_context_record rec;
	uint8_t writing;	/* 0, WRITING (a set or set_attr under way) or WRITE_DISTURBED */
	int8_t registered;	/* 0: no set yet; 1: the kernel dumps rec; -1: it refused */
};

static __thread struct tstate ts __attribute__((tls_model("initial-exec"), aligned(8)));

/*
 * What readers outside the process look up in .dynsym (OTEP 4947): a pointer to the
 * thread's record, NULL until the thread's first set. It then stays pointed at the one
 * fixed record and only `valid` changes (the OTEP's in-place protocol: a writer uses
 * either the pointer or the valid flag, not both).
 */
UEVENT_EXPORT __thread struct uevent_thread_context_record *otel_thread_ctx_v1;

/*
 * Where the record lies from the thread pointer (x86-64: the %fs base), the same in all
 * threads since the record is in static TLS; 0 until a thread's first set. Readers that
 * come after the threads' first set (a BPF session attaching to a running process,
 * which otherwise learns it from that set's prctl) look it up in the symbol tables
 * and read it out of the process (bpf-context.c's tp_offset_of()).
 */
UEVENT_EXPORT volatile long uevent_thread_context_tp_offset;

_Static_assert(sizeof(struct uevent_thread_context_record) == UEVENT_THREAD_CONTEXT_SIZE &&
	       offsetof(struct uevent_thread_context_record, valid) == 24 &&
	       offsetof(struct uevent_thread_context_record, attrs_data_size) == 26 &&
	       offsetof(struct uevent_thread_context_record, attrs_data) ==
	       UEVENT_THREAD_CONTEXT_HEADER_SIZE,
	       "OTEP 4947's record: packed, 28-byte header, 256 bytes");
_Static_assert(UEVENT_THREAD_CONTEXT_SIZE % 8 == 0, "PR_PERF_TLS_AREA takes multiples of 8");

/*
 * The readers are a profiler that stopped or interrupted this thread, or the kernel
 * taking a sample of it: program order is all they can see, so compiler fences suffice
 * and volatile stores keep the compiler from merging or dropping the flag writes.
 */
#define barrier()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define READ_ONCE(x)	(*(volatile __typeof__(x) *)&(x))

static __attribute__((noinline)) void first_set(struct tstate *t)
{
	barrier();
	WRITE_ONCE(otel_thread_ctx_v1, &t->rec);
#if defined(__x86_64__)
	{
		unsigned long tp;

		/* the TCB's first word points at itself */
		__asm__("mov %%fs:0, %0" : "=r"(tp));
		uevent_thread_context_tp_offset = (long)((unsigned long)&t->rec - tp);
	}
#endif
	/*
	 * Once per thread, after the record is whole: a sample taken as the prctl returns
	 * finds it already valid. A kernel without PR_PERF_TLS_AREA says EINVAL (an
	 * unknown prctl option); the stores still happen, samples just do not carry them.
	 */
	t->registered = prctl(PR_PERF_TLS_AREA, (unsigned long)&t->rec,
			      (unsigned long)sizeof(t->rec), 0UL, 0UL) == 0 ? 1 : -1;
}

/*
 * The end of a write (writing WRITING, the record whole): valid set back to 1, unless a
 * handler's set or clear came over the write. Looked at before and after the store: a
 * handler just before it leaves either its own whole record (a set) or nothing new (a
 * clear), so the moment of valid is never a mixed record's, and the look after takes it
 * back; a handler after the look finds `writing` still set and leaves valid at 0 itself.
 */
static void revalidate(struct tstate *t)
{
	barrier();
	if (likely(READ_ONCE(t->writing) == WRITING)) {
		WRITE_ONCE(t->rec.valid, 1);
		barrier();
		if (unlikely(READ_ONCE(t->writing) != WRITING))
			WRITE_ONCE(t->rec.valid, 0);
	}
}

/*
 * valid goes to 0 first and back to 1 last. A set or clear in a signal handler that
 * interrupts a write on the same thread finds `writing`, marks it WRITE_DISTURBED and
 * leaves valid at 0. The outer write then finds its bytes mixed with the handler's and
 * leaves the record invalid too (the context is unknown until the thread's next set):
 * no reader ever sees a half-written or mixed record as valid (t/context-step checks
 * a handler at every instruction of the outer call). attrs: asize bytes of whole
 * entries, at most the record's, that come with the ids in the same write (restore).
 */
static int write_context(const uint8_t *trace_id16, const uint8_t *span_id8, uint8_t flags,
			 const uint8_t *attrs, uint16_t asize)
{
	struct tstate *t = &ts;
	int8_t registered = t->registered;
	uint8_t nested;

	nested = t->writing;
	WRITE_ONCE(t->writing, nested ? WRITE_DISTURBED : WRITING);
	barrier();
	WRITE_ONCE(t->rec.valid, 0);
	barrier();
	memcpy(t->rec.trace_id, trace_id16, 16);
	memcpy(t->rec.span_id, span_id8, 8);
	t->rec.trace_flags = flags;
	if (asize)
		memcpy(t->rec.attrs_data, attrs, asize);
	t->rec.attrs_data_size = asize;
	if (likely(!nested)) {
		revalidate(t);	/* (WRITE_DISTURBED: a handler wrote or cleared meanwhile) */
		barrier();
		WRITE_ONCE(t->writing, 0);
	}
	if (unlikely(!registered))
		first_set(t);
	return 0;
}

UEVENT_EXPORT int uevent_thread_context_set(const uint8_t *trace_id16, const uint8_t *span_id8,
					    uint8_t flags)
{
	if (unlikely(!trace_id16 || !span_id8))
		return _uevent_err(EFAULT);
	return write_context(trace_id16, span_id8, flags, NULL, 0);
}

/*
 * Also before the thread's first set has returned (its record is valid from before the
 * prctl: a handler's clear there must stick) and with nothing ever set (the record is
 * zero). The zeroing is a write as a set's is: a handler's set over it does not publish.
 */
UEVENT_EXPORT int uevent_thread_context_clear(void)
{
	struct tstate *t = &ts;
	uint8_t nested = t->writing;

	WRITE_ONCE(t->writing, nested ? WRITE_DISTURBED : WRITING);
	barrier();
	WRITE_ONCE(t->rec.valid, 0);
	if (unlikely(nested))	/* in a handler, over this thread's own write */
		return 0;
	barrier();
	memset(t->rec.trace_id, 0, sizeof(t->rec.trace_id));
	memset(t->rec.span_id, 0, sizeof(t->rec.span_id));
	t->rec.trace_flags = 0;
	t->rec.attrs_data_size = 0;
	barrier();
	WRITE_ONCE(t->writing, 0);
	return 0;
}

/* Drop the entries of key from attrs_data (the record is invalid meanwhile). */
static uint16_t attrs_without(struct uevent_thread_context_record *r, uint8_t key)
{
	uint16_t in = 0, out = 0, n;

	while (in + 2 <= r->attrs_data_size) {
		n = (uint16_t)(2 + r->attrs_data[in + 1]);
		if (in + n > r->attrs_data_size)
			break;
		if (r->attrs_data[in] != key) {
			memmove(r->attrs_data + out, r->attrs_data + in, n);
			out = (uint16_t)(out + n);
		}
		in = (uint16_t)(in + n);
	}
	return out;
}

UEVENT_EXPORT int uevent_thread_context_set_attr(uint8_t key, const char *value, size_t len)
{
	struct tstate *t = &ts;
	struct uevent_thread_context_record *r = &t->rec;
	uint16_t size;
	int err = 0;

	if (len > 255)
		return _uevent_err(EINVAL);
	if (!value && len)
		return _uevent_err(EFAULT);
	if (READ_ONCE(r->valid) != 1)	/* (also before the first set's prctl returned) */
		return _uevent_err(ENODATA);
	/* A handler interrupting this thread's own write: the bytes are not ours to touch. */
	if (t->writing)
		return _uevent_err(EBUSY);
	WRITE_ONCE(t->writing, WRITING);
	barrier();
	size = r->attrs_data_size;
	if (size + 2 + len > sizeof(r->attrs_data)) {
		/* Full: drop the key's older values, the record invalid while it moves. */
		WRITE_ONCE(r->valid, 0);
		barrier();
		size = attrs_without(r, key);
		r->attrs_data_size = size;
		revalidate(t);	/* unless a handler's set or clear came meanwhile */
		barrier();
		if (size + 2 + len > sizeof(r->attrs_data))
			err = ENOSPC;
	}
	if (!err) {
		/*
		 * Past attrs_data_size readers look at nothing: write the entry there, then
		 * publish it by the size (the OTEP's growing rule; a later entry of the same
		 * key wins for readers).
		 */
		r->attrs_data[size] = key;
		r->attrs_data[size + 1] = (uint8_t)len;
		if (len)
			memcpy(r->attrs_data + size + 2, value, len);
		barrier();
		WRITE_ONCE(r->attrs_data_size, (uint16_t)(size + 2 + len));
	}
	barrier();
	WRITE_ONCE(t->writing, 0);
	return err ? _uevent_err(err) : 0;
}

/*
 * One write, as a set's: the ids and the attributes publish together, so a reader never
 * sees the restored ids without their attributes, nor, after a handler's set over it,
 * the restored attributes under the handler's ids.
 */
UEVENT_EXPORT int uevent_thread_context_restore(const void *rec, size_t len)
{
	struct uevent_trace_context tc;
	uint32_t off = 0;
	const char *value;
	uint8_t key, n;
	int ret;

	if (!rec || len < UEVENT_THREAD_CONTEXT_HEADER_SIZE)
		return _uevent_err(EINVAL);
	/* the copy read as any reader reads a record: not valid, none */
	ret = uevent_thread_context_decode(rec, len, UEVENT_BO_HOST, &tc);
	if (ret == -ENODATA)
		return uevent_thread_context_clear();
	if (ret < 0)
		return ret;
	/* its attributes as a reader takes them: whole entries, up to its size and len */
	while (uevent_thread_context_attr_next(rec, len, UEVENT_BO_HOST, &off, &key, &value, &n) == 0)
		;
	if (off > sizeof(ts.rec.attrs_data))
		return _uevent_err(ENOSPC);
	return write_context(tc.trace_id, tc.span_id, tc.flags,
			     (const uint8_t *)rec + UEVENT_THREAD_CONTEXT_HEADER_SIZE, (uint16_t)off);
}

UEVENT_EXPORT int uevent_thread_context_registered(void)
{
	return ts.registered > 0;
}

UEVENT_EXPORT const struct uevent_thread_context_record *uevent_thread_context_get(void)
{
	return &ts.rec;
}

UEVENT_EXPORT int uevent_thread_context_decode(const void *buf, size_t len, int bo,
					       struct uevent_trace_context *out)
{
	const uint8_t *p = buf;

	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!out || bo < UEVENT_BO_HOST || bo > UEVENT_BO_BIG)
		return _uevent_err(EINVAL);
	memset(out, 0, sizeof(*out));
	/* An empty dump: the thread registered no record (or the kernel could not read it). */
	if (!len)
		return _uevent_err(ENODATA);
	if (len < UEVENT_THREAD_CONTEXT_HEADER_SIZE)
		return _uevent_err(EINVAL);
	/* Not set, cleared, or caught while being written: OTEP 4947 says ignore it. */
	if (p[24] != 1)
		return _uevent_err(ENODATA);
	memcpy(out->trace_id, p, 16);
	memcpy(out->span_id, p + 16, 8);
	out->flags = p[25];
	return 0;
}

UEVENT_EXPORT int uevent_thread_context_attr_next(const void *buf, size_t len, int bo,
						  uint32_t *offset, uint8_t *key,
						  const char **value, uint8_t *value_len)
{
	const uint8_t *attrs = (const uint8_t *)buf + UEVENT_THREAD_CONTEXT_HEADER_SIZE;
	struct _uevent_cur c;
	uint64_t end;
	uint16_t size;
	uint32_t o;

	if (!buf || !offset || !key || !value || !value_len || bo < UEVENT_BO_HOST ||
	    bo > UEVENT_BO_BIG || len < UEVENT_THREAD_CONTEXT_HEADER_SIZE)
		return _uevent_err(EINVAL);
	_uevent_cur_init(&c, (const uint8_t *)buf + 26, 2, bo);
	size = _uevent_get16(&c);
	/* The size is untrusted, and a dump may stop short of it (sample_tls_user). */
	end = size < len - UEVENT_THREAD_CONTEXT_HEADER_SIZE ? size :
	      len - UEVENT_THREAD_CONTEXT_HEADER_SIZE;
	o = *offset;
	if ((uint64_t)o + 2 > end || (uint64_t)o + 2 + attrs[o + 1] > end)
		return _uevent_err(ENOENT);
	*key = attrs[o];
	*value_len = attrs[o + 1];
	*value = (const char *)attrs + o + 2;
	*offset = o + 2 + attrs[o + 1];
	return 0;
}
