/* decode.c - perf record decoders: samples (AUX, TLS_USER...), side-band records, uevents,
 * and the uevents that usdt and user_events tracepoint samples carry. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"

/* ---- decoding ---------------------------------------------------------------------- */

UEVENT_EXPORT int uevent_perf_format_from_attr(struct uevent_perf_format *fmt,
					       const struct perf_event_attr *attr,
					       size_t attr_size)
{
	struct perf_event_attr a;

	if (!fmt || !attr || attr_size < PERF_ATTR_SIZE_VER0)
		return _uevent_err(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, attr_size < sizeof(a) ? attr_size : sizeof(a));
	memset(fmt, 0, sizeof(*fmt));
	fmt->sz = sizeof(*fmt);
	fmt->sample_type = a.sample_type;
	fmt->read_format = a.read_format;
	fmt->sample_id_all = a.sample_id_all;
	if (attr_size >= PERF_ATTR_SIZE_VER1)
		fmt->branch_sample_type = a.branch_sample_type;
	if (attr_size >= PERF_ATTR_SIZE_VER3)
		fmt->sample_regs_user = a.sample_regs_user;
	if (attr_size >= PERF_ATTR_SIZE_VER4)
		fmt->sample_regs_intr = a.sample_regs_intr;
	return 0;
}

/* A NUL-terminated string filling (with padding) the rest of the cursor. */
static const char *gstr(struct _uevent_cur *c)
{
	const char *s = (const char *)c->p;

	if (c->bad || c->p >= c->end || !memchr(c->p, 0, (size_t)(c->end - c->p))) {
		c->bad = 1;
		return NULL;
	}
	c->p = c->end;
	return s;
}

UEVENT_EXPORT uint64_t uevent_perf_u64(const void *array, uint64_t i, int bo)
{
	uint64_t v;

	if (!array)
		return 0;
	memcpy(&v, (const uint8_t *)array + i * 8, 8);
	return _uevent_need_swap(bo) ? __builtin_bswap64(v) : v;
}

/*
 * The bytes a KSYMBOL or BPF_EVENT record of size bytes really uses: header, body and an
 * idsz-byte sample_id. Some kernels write these records longer than that when more than
 * one event listens: perf_event_header__init_id() adds each listener's sample_id size
 * to the one header all listeners share, so a record's size also counts the sample_id
 * sizes of the listeners served before it (since Linux 5.1, which added these records;
 * a kernel that sets the size afresh per listener does not). The extra bytes
 * at the end are whatever the ring held; the sample_id follows the body, where perf's
 * rule (the sample_id is the record's last bytes) does not look. Returns size for any
 * other record or shape.
 */
size_t _uevent_sideband_used(const void *buf, size_t size, uint32_t type, size_t idsz)
{
	const uint8_t *b = buf, *nul;
	size_t body;

	if (type == PERF_RECORD_BPF_EVENT) {
		body = 24;
	} else if (type == PERF_RECORD_KSYMBOL && size > 24) {
		nul = memchr(b + 24, 0, size - 24);
		if (!nul)
			return size;
		body = ((size_t)(nul - b) + 1 + 7) & ~(size_t)7;
	} else {
		return size;
	}
	return body + idsz < size ? body + idsz : size;
}

static void read_values(struct _uevent_cur *c, uint64_t rf, struct uevent_perf_read *r)
{
	uint32_t per = 8;

	if (rf & PERF_FORMAT_ID)
		per += 8;
	if (rf & PERF_FORMAT_LOST)
		per += 8;
	r->entry_size = per;
	if (rf & PERF_FORMAT_GROUP) {
		struct _uevent_cur e;

		r->nr = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			r->time_enabled = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			r->time_running = _uevent_get64(c);
		if (r->nr > 0xffff) {
			c->bad = 1;
			return;
		}
		r->values = _uevent_take(c, r->nr * per);
		if (r->values && r->nr) {
			e = *c;
			e.p = r->values;
			r->value = _uevent_get64(&e);
			if (rf & PERF_FORMAT_ID)
				r->id = _uevent_get64(&e);
			if (rf & PERF_FORMAT_LOST)
				r->lost = _uevent_get64(&e);
		}
	} else {
		r->nr = 1;
		r->values = c->p;
		r->value = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			r->time_enabled = _uevent_get64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			r->time_running = _uevent_get64(c);
		if (rf & PERF_FORMAT_ID)
			r->id = _uevent_get64(c);
		if (rf & PERF_FORMAT_LOST)
			r->lost = _uevent_get64(c);
		r->values = NULL;
	}
}

/* u64 abi; u64 regs[popcount(mask)] when abi != 0 */
static void read_regs(struct _uevent_cur *c, uint64_t mask, uint64_t *abi, uint32_t *nr, const void **regs)
{
	*abi = _uevent_get64(c);
	if (*abi) {
		*nr = _uevent_bits64(mask);
		*regs = _uevent_take(c, (uint64_t)*nr * 8);
	}
}

/* u64 size; u8 data[size]; u64 dyn_size when size != 0 (STACK_USER and TLS_USER) */
static void read_dump(struct _uevent_cur *c, uint64_t *size, const void **data, uint64_t *dyn)
{
	*size = _uevent_get64(c);
	if (*size) {
		*data = _uevent_take(c, *size);
		*dyn = _uevent_get64(c);
		if (*dyn > *size)
			c->bad = 1;
	}
}

/*
 * The TLS_USER part: the dump (kernels that read it in the sample), or the size word
 * PERF_TLS_USER_DEFERRED and a cookie, the dump then coming in a later
 * PERF_RECORD_TLS_USER_DEFERRED record: until a reader joins it (tls-deferred.c),
 * tls_user_size is 0, tls_user_dyn_size holds the cookie and context_err is
 * -EINPROGRESS.
 */
static void read_tls(struct _uevent_cur *c, struct uevent_perf_sample *s)
{
	struct _uevent_cur peek = *c;

	if (_uevent_get64(&peek) != PERF_TLS_USER_DEFERRED) {
		read_dump(c, &s->tls_user_size, &s->tls_user, &s->tls_user_dyn_size);
		return;
	}
	*c = peek;
	s->tls_user_dyn_size = _uevent_get64(c);
	s->context_err = -EINPROGRESS;
}

/*
 * The TLS dump as the thread's OTEP 4947 record, for every sample: a reader asks
 * context_err rather than knowing whether the event dumped TLS at all.
 */
void _uevent_decode_context(struct uevent_perf_sample *s, int bo)
{
	/* dyn_size is untrusted: more than size fails the sample, and reads nothing here */
	uint64_t len = s->tls_user && s->tls_user_dyn_size <= s->tls_user_size ?
		       s->tls_user_dyn_size : 0;
	struct uevent_trace_context tc;
	int err = errno;

	if (!len) {		/* no dump (most samples): no record, without the call */
		memset(s->context_trace_id, 0, 16);
		memset(s->context_span_id, 0, 8);
		s->context_flags = 0;
		s->context_err = -ENODATA;
		return;
	}
	s->context_err = uevent_thread_context_decode(s->tls_user, (size_t)len, bo, &tc);
	errno = err;
	memcpy(s->context_trace_id, tc.trace_id, 16);
	memcpy(s->context_span_id, tc.span_id, 8);
	s->context_flags = tc.flags;
}

/* The fields of a plain sample: perf record's own (cpu-clock -g), a tracepoint's (RAW). */
#define PLAIN_FIXED	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define PLAIN_SAMPLE	(PLAIN_FIXED | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A sample read whole: what it says of its record, and the uevent its raw data holds. */
static inline int sample_end(const struct uevent_perf_format *f, int bo,
			     struct uevent_perf_record *rec)
{
	uint64_t st = f->sample_type;

	rec->body = UEVENT_BODY_SAMPLE;
	rec->id.fields = (st & PERF_SAMPLE_TID ? UEVENT_ID_TID : 0) |
			 (st & PERF_SAMPLE_TIME ? UEVENT_ID_TIME : 0) |
			 (st & PERF_SAMPLE_ID ? UEVENT_ID_ID : 0) |
			 (st & PERF_SAMPLE_STREAM_ID ? UEVENT_ID_STREAM_ID : 0) |
			 (st & PERF_SAMPLE_CPU ? UEVENT_ID_CPU : 0) |
			 (st & PERF_SAMPLE_IDENTIFIER ? UEVENT_ID_IDENTIFIER : 0);
	return f->raw.kind ? _uevent_raw_to_uevent(rec, f, bo) : 0;
}

/*
 * A sample's body of PLAIN_SAMPLE's fields only, in host order: the fixed fields' room
 * checked once, not the cursor's checks a field. 0 when the record does not add up:
 * decode_sample() reads it again field by field, which sets every field this one did
 * and says what is wrong.
 */
static int plain_sample(const struct _uevent_cur *c, uint64_t st,
			struct uevent_perf_record *rec)
{
	struct uevent_perf_sample *s = &rec->u.sample;
	const uint8_t *p = c->p;
	uint64_t nr;
	uint32_t n;

	if ((size_t)(c->end - p) < 8 * (size_t)_uevent_bits64(st & PLAIN_FIXED))
		return 0;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		rec->id.identifier = s->identifier = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		s->ip = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		rec->id.pid = s->pid = ld32(p);
		rec->id.tid = s->tid = ld32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		rec->id.time = s->time = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		s->addr = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		rec->id.id = s->id = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		rec->id.stream_id = s->stream_id = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		rec->id.cpu = s->cpu = ld32(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		s->period = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (c->end - p < 8)
			return 0;
		nr = ld64(p);
		if (nr > 0xffff || (uint64_t)(c->end - p - 8) / 8 < nr)
			return 0;
		s->callchain_nr = nr;
		s->callchain = p + 8;
		p += 8 + nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (c->end - p < 4)
			return 0;
		n = ld32(p);
		if ((uint64_t)(c->end - p - 4) < n)
			return 0;
		s->raw_size = n;
		s->raw = p + 4;
		p += 4 + (size_t)n;
	}
	return p == c->end;
}

static int decode_sample(struct _uevent_cur *c, const struct uevent_perf_format *f, int bo,
			 struct uevent_perf_record *rec)
{
	struct uevent_perf_sample *s = &rec->u.sample;
	uint64_t st = f->sample_type;

	s->event_index = -1;		/* the reader that knows the events sets it */
	/* rec->id's copies stored as they are read: loaded back, two 4-byte stores as one
	 * 16-byte load stall the store buffer (a tenth of a sample's decode) */
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec->id.identifier = s->identifier = _uevent_get64(c);
	if (st & PERF_SAMPLE_IP)
		s->ip = _uevent_get64(c);
	if (st & PERF_SAMPLE_TID) {
		rec->id.pid = s->pid = _uevent_get32(c);
		rec->id.tid = s->tid = _uevent_get32(c);
	}
	if (st & PERF_SAMPLE_TIME)
		rec->id.time = s->time = _uevent_get64(c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = _uevent_get64(c);
	if (st & PERF_SAMPLE_ID)
		rec->id.id = s->id = _uevent_get64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		rec->id.stream_id = s->stream_id = _uevent_get64(c);
	if (st & PERF_SAMPLE_CPU) {
		rec->id.cpu = s->cpu = _uevent_get32(c);
		_uevent_get32(c);
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = _uevent_get64(c);
	if (st & PERF_SAMPLE_READ)
		read_values(c, f->read_format, &s->read);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = _uevent_get64(c);
		if (s->callchain_nr > 0xffff)
			c->bad = 1;
		s->callchain = _uevent_take(c, s->callchain_nr * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		s->raw_size = _uevent_get32(c);
		s->raw = _uevent_take(c, s->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		s->branch_nr = _uevent_get64(c);
		if (s->branch_nr > 0xffff)
			c->bad = 1;
		if (f->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = _uevent_get64(c);
		s->branch_entries = _uevent_take(c, s->branch_nr * 24);
		if (f->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS)
			s->branch_counters = _uevent_take(c, s->branch_nr * 8);
	}
	if (st & PERF_SAMPLE_REGS_USER)
		read_regs(c, f->sample_regs_user, &s->regs_user_abi, &s->regs_user_nr,
			  &s->regs_user);
	if (st & PERF_SAMPLE_STACK_USER)
		read_dump(c, &s->stack_user_size, &s->stack_user, &s->stack_user_dyn_size);
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		s->weight = _uevent_get64(c);
		s->weight_var1 = (uint32_t)s->weight;
		s->weight_var2 = (uint16_t)(s->weight >> 32);
		s->weight_var3 = (uint16_t)(s->weight >> 48);
		if (st & PERF_SAMPLE_WEIGHT_STRUCT)
			s->weight = s->weight_var1;
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = _uevent_get64(c);
	if (st & PERF_SAMPLE_TRANSACTION)
		s->transaction = _uevent_get64(c);
	if (st & PERF_SAMPLE_REGS_INTR)
		read_regs(c, f->sample_regs_intr, &s->regs_intr_abi, &s->regs_intr_nr,
			  &s->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = _uevent_get64(c);
	if (st & PERF_SAMPLE_CGROUP)
		s->cgroup = _uevent_get64(c);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = _uevent_get64(c);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = _uevent_get64(c);
	if (st & PERF_SAMPLE_TLS_USER) {
		read_tls(c, s);
		if (s->context_err != -EINPROGRESS)
			_uevent_decode_context(s, bo);
	} else {
		s->context_err = -ENODATA;	/* no dump: no record (its ids are zeroed) */
	}
	if (st & PERF_SAMPLE_AUX) {
		s->aux_size = _uevent_get64(c);
		s->aux = _uevent_take(c, s->aux_size);
	}
	if (c->bad || c->p != c->end)
		return _uevent_err(EINVAL);
	return sample_end(f, bo, rec);
}

/*
 * The record zeroed by libc's memset, not by the `rep stos` a constant size is inlined
 * to: that instruction's start-up was half of a sample's decode (a perf.data file of
 * 560,000 samples read in batches: 35 ms, of which the inlined memset about 10).
 */
static void zero_record(struct uevent_perf_record *rec)
{
	size_t n = sizeof(*rec);

	__asm__("" : "+r"(n));		/* not a constant to the compiler */
	memset(rec, 0, n);
}

/* The body of an MMAP or MMAP2 record (with a build id, or the device and inode). */
static void decode_mmap(struct _uevent_cur *c, struct uevent_perf_record *rec)
{
	struct uevent_perf_mmap *m = &rec->u.mmap;

	rec->body = UEVENT_BODY_MMAP;
	m->pid = _uevent_get32(c);
	m->tid = _uevent_get32(c);
	m->addr = _uevent_get64(c);
	m->len = _uevent_get64(c);
	m->pgoff = _uevent_get64(c);
	if (rec->type == PERF_RECORD_MMAP2) {
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			const uint8_t *id = _uevent_take(c, 24);

			if (id)
				m->build_id_size = id[0];
			id = id ? id + 4 : NULL;
			if (id)
				memcpy(m->build_id, id, 20);
			if (m->build_id_size > 20)
				c->bad = 1;
		} else {
			m->maj = _uevent_get32(c);
			m->min = _uevent_get32(c);
			m->ino = _uevent_get64(c);
			m->ino_generation = _uevent_get64(c);
		}
		m->prot = _uevent_get32(c);
		m->flags = _uevent_get32(c);
	}
	m->filename = gstr(c);
}

/* The body of a side-band record (not a sample or a uevent), after the sample_id has
 * been taken off its end: rec->body says which union member it filled. */
static void decode_sideband(struct _uevent_cur *c, const struct uevent_perf_format *f,
			    struct uevent_perf_record *rec)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		decode_mmap(c, rec);
		break;
	case PERF_RECORD_COMM:
		rec->body = UEVENT_BODY_COMM;
		rec->u.comm.pid = _uevent_get32(c);
		rec->u.comm.tid = _uevent_get32(c);
		rec->u.comm.comm = gstr(c);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		rec->body = UEVENT_BODY_TASK;
		rec->u.task.pid = _uevent_get32(c);
		rec->u.task.ppid = _uevent_get32(c);
		rec->u.task.tid = _uevent_get32(c);
		rec->u.task.ptid = _uevent_get32(c);
		rec->u.task.time = _uevent_get64(c);
		break;
	case PERF_RECORD_LOST:
		rec->body = UEVENT_BODY_LOST;
		rec->u.lost.id = _uevent_get64(c);
		rec->u.lost.lost = _uevent_get64(c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rec->body = UEVENT_BODY_LOST;
		rec->u.lost.lost = _uevent_get64(c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		rec->body = UEVENT_BODY_THROTTLE;
		rec->u.throttle.time = _uevent_get64(c);
		rec->u.throttle.id = _uevent_get64(c);
		rec->u.throttle.stream_id = _uevent_get64(c);
		break;
	case PERF_RECORD_SWITCH:
		rec->body = UEVENT_BODY_SW;
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->body = UEVENT_BODY_SW;
		rec->u.sw.next_prev_pid = _uevent_get32(c);
		rec->u.sw.next_prev_tid = _uevent_get32(c);
		break;
	case PERF_RECORD_KSYMBOL:
		if (f->flags & UEVENT_PERF_BPF_EVENT_V0)
			goto bpf_event_v0;
		rec->body = UEVENT_BODY_KSYMBOL;
		rec->u.ksymbol.addr = _uevent_get64(c);
		rec->u.ksymbol.len = _uevent_get32(c);
		rec->u.ksymbol.ksym_type = _uevent_get16(c);
		rec->u.ksymbol.flags = _uevent_get16(c);
		rec->u.ksymbol.name = gstr(c);
		break;
	case PERF_RECORD_BPF_EVENT: {
		const void *tag;

		rec->body = UEVENT_BODY_BPF_EVENT;
		rec->u.bpf_event.type = _uevent_get16(c);
		rec->u.bpf_event.flags = _uevent_get16(c);
		rec->u.bpf_event.id = _uevent_get32(c);
		tag = _uevent_take(c, 8);
		if (tag)
			memcpy(rec->u.bpf_event.tag, tag, 8);
		break;
	}
	bpf_event_v0:
		rec->type = PERF_RECORD_BPF_EVENT;
		rec->body = UEVENT_BODY_BPF_EVENT;
		rec->u.bpf_event.type = _uevent_get16(c);
		rec->u.bpf_event.flags = _uevent_get16(c);
		rec->u.bpf_event.id = _uevent_get32(c);
		break;
	default:
		rec->u.other.data = c->p;
		rec->u.other.size = (uint32_t)(c->end - c->p);
		c->p = c->end;
		break;
	}
}

/* Any record, either byte order: uevent_perf_record_decode()'s long way. */
__attribute__((noinline)) int _uevent_perf_record_decode_long(const uint8_t *b, size_t len,
							      int bo,
							      const struct uevent_perf_format *f,
							      struct uevent_perf_record *rec)
{
	size_t idsz = 0;
	struct _uevent_cur c;
	int err;

	zero_record(rec);
	rec->sz = sizeof(*rec);
	c.p = b;
	c.end = b + len;
	c.swap = _uevent_need_swap(bo);
	c.bad = 0;
	rec->type = _uevent_get32(&c);
	rec->misc = _uevent_get16(&c);
	rec->size = _uevent_get16(&c);
	if (c.bad || rec->size < 8 || rec->size > len)
		return _uevent_err(EINVAL);
	c.end = b + rec->size;

	if (rec->type == PERF_RECORD_SAMPLE)
		return decode_sample(&c, f, bo, rec);
	if (rec->type == PERF_RECORD_UEVENT) {
		struct uevent_record *u = &rec->u.uevent;

		rec->transport = UEVENT_TRANSPORT_PRCTL;
		rec->body = UEVENT_BODY_UEVENT;
		u->sz = sizeof(*u);
		err = uevent_record_decode(b, rec->size, bo,
					   f->sample_id_all ? f->sample_type : 0,
					   (f->flags & UEVENT_PERF_UEVENT_V0) ?
					   UEVENT_RECORD_V0_LAYOUT : 0, u);
		rec->id = u->id;
		return err;
	}
	/* The perf tool's own records (64 and up) have no sample_id trailer. */
	if (f->sample_id_all && rec->type < PERF_RECORD_HEADER_ATTR_TYPE) {
		struct _uevent_cur t;

		idsz = _uevent_sample_id_size(f->sample_type);
		if ((rec->type == PERF_RECORD_KSYMBOL && !(f->flags & UEVENT_PERF_BPF_EVENT_V0)) ||
		    rec->type == PERF_RECORD_BPF_EVENT)
			c.end = b + _uevent_sideband_used(b, rec->size, rec->type, idsz);
		if (idsz > (size_t)rec->size - 8)
			return _uevent_err(EINVAL);
		t = c;
		t.p = c.end - idsz;
		_uevent_read_sample_id(&t, f->sample_type, &rec->id);
		c.end -= idsz;
	}

	decode_sideband(&c, f, rec);
	if (c.bad || c.p != c.end)
		return _uevent_err(EINVAL);
	return 0;
}

/*
 * A plain sample (PLAIN_SAMPLE's fields, in host order: most samples of most files)
 * read ahead of the long way's set-up, which cost as much as reading the fields: the
 * result, or 1 when it is not one or does not add up (the long way says what is wrong).
 */
static inline int plain_record(const uint8_t *b, size_t len, int bo,
			       const struct uevent_perf_format *f,
			       struct uevent_perf_record *rec)
{
	struct _uevent_cur c;
	uint32_t type;
	uint16_t size;

	if (len < 8 || (f->sample_type & ~(uint64_t)PLAIN_SAMPLE) || _uevent_need_swap(bo))
		return 1;
	type = ld32(b);
	memcpy(&size, b + 6, 2);
	if (type != PERF_RECORD_SAMPLE || size < 8 || size > len)
		return 1;
	zero_record(rec);
	c.p = b + 8;
	c.end = b + size;
	if (!plain_sample(&c, f->sample_type, rec))
		return 1;
	rec->sz = sizeof(*rec);
	rec->type = type;
	memcpy(&rec->misc, b + 4, 2);
	rec->size = size;
	rec->u.sample.event_index = -1;		/* the reader that knows the events sets it */
	rec->u.sample.context_err = -ENODATA;	/* no dump: no record (ids zeroed) */
	return sample_end(f, bo, rec);
}

UEVENT_EXPORT int uevent_perf_record_decode(const void *buf, size_t len, int bo,
					    const struct uevent_perf_format *f,
					    struct uevent_perf_record *rec)
{
	struct uevent_perf_format fl;
	int err;

	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!rec || !_uevent_out_ok(rec, sizeof(*rec)) || !f ||
	    (bo != UEVENT_BO_HOST && bo != UEVENT_BO_LITTLE && bo != UEVENT_BO_BIG))
		return _uevent_err(EINVAL);
	if (f->sz != sizeof(*f)) {
		/* a caller's format of another release: ours, zero-filled past theirs */
		err = _uevent_opts_copy(&fl, sizeof(fl), f,
					offsetof(struct uevent_perf_format, flags) + 4);
		if (err < 0)
			return _uevent_err(-err);
		f = &fl;
	}
	err = plain_record(buf, len, bo, f, rec);
	return err <= 0 ? err : _uevent_perf_record_decode_long(buf, len, bo, f, rec);
}

static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST", [PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT", [PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE", [PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ", [PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2", [PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START", [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH", [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE", [PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_RECORD_TLS_USER_DEFERRED] = "TLS_USER_DEFERRED", [PERF_RECORD_UEVENT] = "UEVENT",
	[64] = "HEADER_ATTR", [65] = "HEADER_EVENT_TYPE", [66] = "HEADER_TRACING_DATA",
	[67] = "HEADER_BUILD_ID", [68] = "FINISHED_ROUND", [69] = "ID_INDEX",
	[70] = "AUXTRACE_INFO", [71] = "AUXTRACE", [72] = "AUXTRACE_ERROR",
	[73] = "THREAD_MAP", [74] = "CPU_MAP", [75] = "STAT_CONFIG", [76] = "STAT",
	[77] = "STAT_ROUND", [78] = "EVENT_UPDATE", [79] = "TIME_CONV",
	[80] = "HEADER_FEATURE", [81] = "COMPRESSED", [82] = "FINISHED_INIT",
};

UEVENT_EXPORT const char *uevent_perf_record_name(uint32_t type)
{
	return type < ARRAY_SIZE(record_names) ? record_names[type] : NULL;
}

/* ---- uevents carried by tracepoint samples ----------------------------------------- */

/*
 * A sample of a tracepoint that carries uevents, as the uevent: the layout says where
 * type, size and payload sit in the raw blob. rec keeps its header and sample_id; its
 * sample body is replaced.
 */
int _uevent_raw_to_uevent(struct uevent_perf_record *rec, const struct uevent_perf_format *f,
			  int bo)
{
	const struct uevent_raw_layout *l = &f->raw;
	const uint8_t *raw = rec->u.sample.raw;
	uint32_t n = rec->u.sample.raw_size, loc, off, type, flags = 0;
	struct uevent_record *out = &rec->u.uevent;
	struct _uevent_cur c;
	uint64_t size;

	if (!raw || (uint64_t)l->type_offset + 4 > n)
		return _uevent_err(EINVAL);
	_uevent_cur_init(&c, raw + l->type_offset, 4, bo);
	type = _uevent_get32(&c);
	switch (l->kind) {
	case UEVENT_RAW_USDT:
		if ((uint64_t)l->size_offset + 8 > n ||
		    (uint64_t)l->data_offset + l->data_capacity > n)
			return _uevent_err(EINVAL);
		_uevent_cur_init(&c, raw + l->size_offset, 8, bo);
		size = _uevent_get64(&c);
		if (size > l->data_capacity) {
			flags = UEVENT_RECORD_TRUNCATED;
			size = l->data_capacity;
		}
		off = l->data_offset;
		rec->transport = UEVENT_TRANSPORT_USDT;
		break;
	case UEVENT_RAW_USDT_TEXT:
		if ((uint64_t)l->size_offset + 8 > n || (uint64_t)l->data_offset + 4 > n)
			return _uevent_err(EINVAL);
		_uevent_cur_init(&c, raw + l->size_offset, 8, bo);
		size = _uevent_get64(&c);
		_uevent_cur_init(&c, raw + l->data_offset, 4, bo);
		loc = _uevent_get32(&c);
		/* __data_loc: offset from the start of the raw data (low 16), length (high 16) */
		off = loc & 0xffff;
		if ((uint64_t)off + (loc >> 16) > n)
			return _uevent_err(EINVAL);
		/* the string stops at the payload's first NUL: a binary payload is cut there */
		if (size > loc >> 16) {
			flags = UEVENT_RECORD_TRUNCATED;
			size = loc >> 16;
		}
		rec->transport = UEVENT_TRANSPORT_USDT;
		break;
	case UEVENT_RAW_USER_EVENTS:
		if ((uint64_t)l->data_offset + 4 > n)
			return _uevent_err(EINVAL);
		_uevent_cur_init(&c, raw + l->data_offset, 4, bo);
		loc = _uevent_get32(&c);
		/* __rel_loc: offset from the end of the field (low 16), length (high 16) */
		off = l->data_offset + 4 + (loc & 0xffff);
		size = loc >> 16;
		if ((uint64_t)off + size > n)
			return _uevent_err(EINVAL);
		rec->transport = UEVENT_TRANSPORT_USER_EVENTS;
		break;
	default:
		return _uevent_err(EINVAL);
	}
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	out->record_type = PERF_RECORD_UEVENT;
	out->misc = rec->misc;
	out->record_size = rec->size;
	out->format = PERF_UEVENT_FORMAT_V1;
	out->type = type;
	out->flags = flags;
	out->size = (uint32_t)size;
	out->data = raw + off;
	out->id = rec->id;
	out->event_index = -1;		/* the sample's, which the reader sets */
	rec->type = PERF_RECORD_UEVENT;
	rec->body = UEVENT_BODY_UEVENT;
	return 0;
}

/* Fields "d0", "d1"... back to back from d0: our usdt probe's payload fetch. */
static uint32_t usdt_capacity(const char *fmt, uint32_t d0, uint32_t sz0)
{
	uint32_t cap = sz0, o, sz;
	char nm[8];
	int k;

	for (k = 1; k < 64; k++) {
		snprintf(nm, sizeof(nm), "d%d", k);
		if (_uevent_format_field(fmt, nm, &o, &sz) || o != d0 + cap)
			break;
		cap += sz;
	}
	return cap;
}

UEVENT_EXPORT int uevent_raw_layout_from_format(struct uevent_raw_layout *l, const char *fmt)
{
	uint32_t to, so, d, sz;

	if (!l || !fmt)
		return _uevent_err(EINVAL);
	memset(l, 0, sizeof(*l));
	if (_uevent_format_field(fmt, "type", &to, &sz))
		return _uevent_err(ENOENT);
	if (!_uevent_format_field(fmt, "size", &so, &sz) &&
	    !_uevent_format_field(fmt, "d0", &d, &sz)) {
		l->kind = UEVENT_RAW_USDT;
		l->size_offset = so;
		l->data_capacity = usdt_capacity(fmt, d, sz);
	} else if (!_uevent_format_field(fmt, "size", &so, &sz) &&
		   !_uevent_format_field(fmt, "text", &d, &sz) && strstr(fmt, "__data_loc")) {
		l->kind = UEVENT_RAW_USDT_TEXT;
		l->size_offset = so;
	} else if (!_uevent_format_field(fmt, "data", &d, &sz) && strstr(fmt, "__rel_loc")) {
		l->kind = UEVENT_RAW_USER_EVENTS;
	} else {
		return _uevent_err(ENOENT);
	}
	l->type_offset = to;
	l->data_offset = d;
	return 0;
}
