/* codec.c - well-known payload encoders/decoders and the PERF_RECORD_UEVENT codec. */
#include "config.h"

#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"

/* ---- byte order ------------------------------------------------------------------ */

static int bad_bo(int bo)
{
	return bo != UEVENT_BO_HOST && bo != UEVENT_BO_LITTLE && bo != UEVENT_BO_BIG;
}

/* A NUL-terminated string of exactly n bytes + NUL. */
static const char *rd_str(struct _uevent_cur *r, uint32_t n)
{
	const char *s;

	if (n == UINT32_MAX) {
		r->bad = 1;
		return NULL;
	}
	s = _uevent_take(r, (size_t)n + 1);
	if (!s || s[n] != 0 || memchr(s, 0, n)) {
		r->bad = 1;
		return NULL;
	}
	return s;
}

/* Writer: counts what it would write; copies only while it fits. */
struct wr {
	uint8_t *p;
	size_t cap, len;
};

static void wr_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->len + n <= w->cap && n)
		memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void wr32(struct wr *w, uint32_t v) { wr_bytes(w, &v, 4); }
static void wr64(struct wr *w, uint64_t v) { wr_bytes(w, &v, 8); }

static int wr_str(struct wr *w, const char *s)
{
	size_t n;

	if (!s)
		return -EFAULT;
	n = strnlen(s, UEVENT_MAX_PAYLOAD);
	if (n >= UEVENT_MAX_PAYLOAD)
		return -E2BIG;
	wr32(w, (uint32_t)n);
	return (int)n;
}

static ssize_t wr_done(struct wr *w, int err)
{
	if (err < 0)
		return _uevent_err(-err);
	if (w->len > w->cap || w->len > UEVENT_MAX_PAYLOAD)
		return _uevent_err(E2BIG);
	return (ssize_t)w->len;
}

#define DEC_BEGIN(buf, len, bo, out)				\
	struct _uevent_cur r;						\
	if (!(buf) && (len))					\
		return _uevent_err(EFAULT);			\
	if (!(out) || bad_bo(bo))				\
		return _uevent_err(EINVAL);			\
	_uevent_cur_init(&r, (buf), (len), (bo))

/* A payload must be consumed exactly: trailing bytes mean a different layout. */
#define DEC_END() \
	return (r.bad || r.p != r.end) ? _uevent_err(EINVAL) : 0

/* ---- text ------------------------------------------------------------------------ */

UEVENT_EXPORT ssize_t uevent_text_encode(void *buf, size_t cap, const char *text)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	size_t n;

	if (!text)
		return _uevent_err(EFAULT);
	n = strnlen(text, UEVENT_MAX_PAYLOAD);
	wr_bytes(&w, text, n);
	wr_bytes(&w, "", 1);
	return wr_done(&w, 0);
}

UEVENT_EXPORT int uevent_text_decode(const void *buf, size_t len, int bo, struct uevent_text *out)
{
	const char *s = buf, *nul;

	(void)bo;
	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!out || bad_bo(bo) || len == 0)
		return _uevent_err(EINVAL);
	nul = memchr(s, 0, len);
	if (!nul || (size_t)(nul - s) != len - 1)
		return _uevent_err(EINVAL);
	out->text = s;
	out->len = (uint32_t)(len - 1);
	return 0;
}

/* ---- ranges ---------------------------------------------------------------------- */

UEVENT_EXPORT ssize_t uevent_range_begin_encode(void *buf, size_t cap,
						const struct uevent_range_begin *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	int n;

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, in->id);
	wr64(&w, in->parent);
	wr32(&w, in->flags);
	n = wr_str(&w, in->name);
	if (n >= 0)
		wr_bytes(&w, in->name, (size_t)n + 1);
	return wr_done(&w, n);
}

UEVENT_EXPORT int uevent_range_begin_decode(const void *buf, size_t len, int bo,
					    struct uevent_range_begin *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->id = _uevent_get64(&r);
	out->parent = _uevent_get64(&r);
	out->flags = _uevent_get32(&r);
	out->name_len = _uevent_get32(&r);
	out->name = rd_str(&r, out->name_len);
	DEC_END();
}

UEVENT_EXPORT ssize_t uevent_range_end_encode(void *buf, size_t cap,
					      const struct uevent_range_end *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, in->id);
	wr32(&w, in->flags);
	wr32(&w, 0);
	return wr_done(&w, 0);
}

UEVENT_EXPORT int uevent_range_end_decode(const void *buf, size_t len, int bo,
					  struct uevent_range_end *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->id = _uevent_get64(&r);
	out->flags = _uevent_get32(&r);
	if (_uevent_get32(&r) != 0)
		r.bad = 1;
	DEC_END();
}

/* ---- counter --------------------------------------------------------------------- */

UEVENT_EXPORT ssize_t uevent_counter_encode(void *buf, size_t cap, const struct uevent_counter *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	int n;

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, (uint64_t)in->value);
	n = wr_str(&w, in->name);
	wr32(&w, 0);
	if (n >= 0)
		wr_bytes(&w, in->name, (size_t)n + 1);
	return wr_done(&w, n);
}

UEVENT_EXPORT int uevent_counter_decode(const void *buf, size_t len, int bo,
					struct uevent_counter *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->value = (int64_t)_uevent_get64(&r);
	out->name_len = _uevent_get32(&r);
	if (_uevent_get32(&r) != 0)
		r.bad = 1;
	out->name = rd_str(&r, out->name_len);
	DEC_END();
}

/* ---- JIT ------------------------------------------------------------------------- */

UEVENT_EXPORT ssize_t uevent_jit_code_load_encode(void *buf, size_t cap,
						  const struct uevent_jit_code_load *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	int n;

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, in->code_addr);
	wr64(&w, in->code_size);
	wr64(&w, in->code_index);
	n = wr_str(&w, in->name);
	wr32(&w, 0);
	if (n >= 0)
		wr_bytes(&w, in->name, (size_t)n + 1);
	return wr_done(&w, n);
}

UEVENT_EXPORT int uevent_jit_code_load_decode(const void *buf, size_t len, int bo,
					      struct uevent_jit_code_load *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->code_addr = _uevent_get64(&r);
	out->code_size = _uevent_get64(&r);
	out->code_index = _uevent_get64(&r);
	out->name_len = _uevent_get32(&r);
	if (_uevent_get32(&r) != 0)
		r.bad = 1;
	out->name = rd_str(&r, out->name_len);
	DEC_END();
}

UEVENT_EXPORT ssize_t uevent_jit_code_move_encode(void *buf, size_t cap,
						  const struct uevent_jit_code_move *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, in->code_index);
	wr64(&w, in->old_addr);
	wr64(&w, in->new_addr);
	wr64(&w, in->code_size);
	return wr_done(&w, 0);
}

UEVENT_EXPORT int uevent_jit_code_move_decode(const void *buf, size_t len, int bo,
					      struct uevent_jit_code_move *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->code_index = _uevent_get64(&r);
	out->old_addr = _uevent_get64(&r);
	out->new_addr = _uevent_get64(&r);
	out->code_size = _uevent_get64(&r);
	DEC_END();
}

UEVENT_EXPORT ssize_t uevent_jit_code_unload_encode(void *buf, size_t cap,
						    const struct uevent_jit_code_unload *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };

	if (!in)
		return _uevent_err(EFAULT);
	wr64(&w, in->code_addr);
	wr64(&w, in->code_size);
	wr64(&w, in->code_index);
	return wr_done(&w, 0);
}

UEVENT_EXPORT int uevent_jit_code_unload_decode(const void *buf, size_t len, int bo,
						struct uevent_jit_code_unload *out)
{
	DEC_BEGIN(buf, len, bo, out);
	out->code_addr = _uevent_get64(&r);
	out->code_size = _uevent_get64(&r);
	out->code_index = _uevent_get64(&r);
	DEC_END();
}

UEVENT_EXPORT ssize_t uevent_jit_debug_info_encode(void *buf, size_t cap, uint64_t code_addr,
						   const struct uevent_jit_debug_entry *e,
						   uint32_t nr)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	uint32_t i;
	int n = 0;

	if (!e && nr)
		return _uevent_err(EFAULT);
	wr64(&w, code_addr);
	wr32(&w, nr);
	wr32(&w, 0);
	for (i = 0; i < nr && n >= 0; i++) {
		wr64(&w, e[i].addr);
		wr32(&w, e[i].line);
		wr32(&w, e[i].discrim);
		n = wr_str(&w, e[i].file);
		if (n >= 0)
			wr_bytes(&w, e[i].file, (size_t)n + 1);
		if (w.len > UEVENT_MAX_PAYLOAD)
			break;
	}
	return wr_done(&w, n);
}

static int debug_entry(struct _uevent_cur *r, struct uevent_jit_debug_entry *out)
{
	out->addr = _uevent_get64(r);
	out->line = _uevent_get32(r);
	out->discrim = _uevent_get32(r);
	out->file_len = _uevent_get32(r);
	out->file = rd_str(r, out->file_len);
	return r->bad ? -EINVAL : 0;
}

UEVENT_EXPORT int uevent_jit_debug_info_decode(const void *buf, size_t len, int bo,
					       struct uevent_jit_debug_info *out)
{
	struct uevent_jit_debug_entry e;
	uint32_t i;

	DEC_BEGIN(buf, len, bo, out);
	out->code_addr = _uevent_get64(&r);
	out->nr_entry = _uevent_get32(&r);
	if (_uevent_get32(&r) != 0)
		r.bad = 1;
	out->entries = r.p;
	out->entries_len = (uint32_t)(r.end - r.p);
	/* Validate every entry now, so walking them later cannot fail half way. */
	for (i = 0; i < out->nr_entry && !r.bad; i++)
		debug_entry(&r, &e);
	DEC_END();
}

UEVENT_EXPORT int uevent_jit_debug_entry_next(const struct uevent_jit_debug_info *info, int bo,
					      uint32_t *offset, struct uevent_jit_debug_entry *out)
{
	struct _uevent_cur r;

	if (!info || !offset || !out || bad_bo(bo))
		return _uevent_err(EINVAL);
	if (*offset >= info->entries_len)
		return 0;
	_uevent_cur_init(&r, (const uint8_t *)info->entries + *offset, info->entries_len - *offset, bo);
	if (debug_entry(&r, out) < 0)
		return _uevent_err(EINVAL);
	*offset = (uint32_t)(r.p - (const uint8_t *)info->entries);
	return 1;
}

/* ---- trace context --------------------------------------------------------------- */

UEVENT_EXPORT ssize_t uevent_trace_context_encode(void *buf, size_t cap,
						  const struct uevent_trace_context *in)
{
	struct wr w = { buf, buf ? cap : 0, 0 };
	static const uint8_t zero[7];

	if (!in)
		return _uevent_err(EFAULT);
	wr_bytes(&w, in->trace_id, 16);
	wr_bytes(&w, in->span_id, 8);
	wr_bytes(&w, &in->flags, 1);
	wr_bytes(&w, zero, 7);
	return wr_done(&w, 0);
}

UEVENT_EXPORT int uevent_trace_context_decode(const void *buf, size_t len, int bo,
					      struct uevent_trace_context *out)
{
	const uint8_t *p;

	DEC_BEGIN(buf, len, bo, out);
	p = _uevent_take(&r, 32);
	if (p) {
		memcpy(out->trace_id, p, 16);
		memcpy(out->span_id, p + 16, 8);
		out->flags = p[24];
	}
	DEC_END();
}

UEVENT_EXPORT const char *uevent_type_name(uint32_t type)
{
	static const char *const names[] = {
		"text", "range_begin", "range_end", "counter", "jit_code_load",
		"jit_code_move", "jit_code_unload", "jit_debug_info", "trace_context",
	};

	return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

/* ---- PERF_RECORD_UEVENT ---------------------------------------------------------- */


size_t _uevent_sample_id_size(uint64_t st)
{
	return 8 * (size_t)_uevent_bits64(st & _UEVENT_ID_BITS);
}

void _uevent_read_sample_id(struct _uevent_cur *c, uint64_t st, struct uevent_sample_id *id)
{
	if (st & PERF_SAMPLE_TID) {
		id->pid = _uevent_get32(c);
		id->tid = _uevent_get32(c);
		id->fields |= UEVENT_ID_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		id->time = _uevent_get64(c);
		id->fields |= UEVENT_ID_TIME;
	}
	if (st & PERF_SAMPLE_ID) {
		id->id = _uevent_get64(c);
		id->fields |= UEVENT_ID_ID;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		id->stream_id = _uevent_get64(c);
		id->fields |= UEVENT_ID_STREAM_ID;
	}
	if (st & PERF_SAMPLE_CPU) {
		id->cpu = _uevent_get32(c);
		_uevent_get32(c);
		id->fields |= UEVENT_ID_CPU;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		id->identifier = _uevent_get64(c);
		id->fields |= UEVENT_ID_IDENTIFIER;
	}
}

UEVENT_EXPORT int uevent_record_decode(const void *buf, size_t len, int bo, uint64_t st,
				       unsigned int flags, struct uevent_record *out)
{
	size_t body, idsz, data_end;
	struct _uevent_cur r;

	if (!buf && len)
		return _uevent_err(EFAULT);
	if (!out || !_uevent_out_ok(out, sizeof(*out)) || bad_bo(bo) ||
	    (flags & ~UEVENT_RECORD_V0_LAYOUT))
		return _uevent_err(EINVAL);
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	out->event_index = -1;		/* the reader that knows the events sets it */
	_uevent_cur_init(&r, buf, len, bo);
	out->record_type = _uevent_get32(&r);
	out->misc = _uevent_get16(&r);
	out->record_size = _uevent_get16(&r);
	if (r.bad || out->record_size < 16 || out->record_size > len ||
	    (out->record_size & 7))
		return _uevent_err(EINVAL);
	r.end = (const uint8_t *)buf + out->record_size;

	if (flags & UEVENT_RECORD_V0_LAYOUT) {
		out->format = 0;
		out->type = _uevent_get32(&r);
		out->size = _uevent_get32(&r);
	} else {
		out->format = _uevent_get32(&r);
		out->size = _uevent_get32(&r);
		if (out->format != PERF_UEVENT_FORMAT_V1)
			return _uevent_err(EPROTO);
		out->type = _uevent_get32(&r);
		out->flags = _uevent_get32(&r);
	}
	if (r.bad)
		return _uevent_err(EINVAL);
	body = (size_t)(r.p - (const uint8_t *)buf);
	data_end = body + (size_t)out->size + (-(size_t)out->size & 7);
	idsz = _uevent_sample_id_size(st);
	if ((size_t)out->size > out->record_size || data_end + idsz != out->record_size)
		return _uevent_err(EINVAL);
	out->data = (const uint8_t *)buf + body;

	r.p = (const uint8_t *)buf + data_end;
	_uevent_read_sample_id(&r, st, &out->id);
	return r.bad ? _uevent_err(EINVAL) : 0;
}

UEVENT_EXPORT ssize_t uevent_record_encode(void *buf, size_t cap, uint32_t type, const void *data,
					   uint32_t size, uint32_t pid, uint32_t tid,
					   uint64_t time)
{
	struct perf_event_header h;
	struct perf_uevent_record_v1 v = { PERF_UEVENT_FORMAT_V1, size, type, 0 };
	struct wr w = { buf, buf ? cap : 0, 0 };
	static const uint8_t zero[8];
	size_t total = sizeof(h) + sizeof(v) + size + (-size & 7) + 16;

	if (!data && size)
		return _uevent_err(EFAULT);
	if (size > UEVENT_MAX_PAYLOAD || total > cap)
		return _uevent_err(E2BIG);
	h.type = PERF_RECORD_UEVENT;
	h.misc = PERF_RECORD_MISC_USER;
	h.size = (uint16_t)total;
	wr_bytes(&w, &h, sizeof(h));
	wr_bytes(&w, &v, sizeof(v));
	wr_bytes(&w, data, size);
	wr_bytes(&w, zero, -size & 7);
	wr32(&w, pid);
	wr32(&w, tid);
	wr64(&w, time);
	return (ssize_t)w.len;
}

/* ---- the uevents of a capture ------------------------------------------------------ */

/*
 * A view of the perf.data reader (perfdata.c) that returns the uevents only: the file
 * transport's captures are pipe-mode perf.data, read by the same reader as any other.
 */
struct uevent_file_reader {
	struct uevent_perf_file *f;
	struct uevent_perf_record pr;
};

UEVENT_EXPORT struct uevent_file_reader *uevent_file_reader__open(const char *path)
{
	struct uevent_file_reader *r;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->f = uevent_perf_file__open(path);
	if (!r->f) {
		err = errno;
		free(r);
		errno = err;
		return NULL;
	}
	return r;
}

UEVENT_EXPORT int uevent_file_reader__next(struct uevent_file_reader *r, struct uevent_record *rec)
{
	size_t sz;
	int ret;

	if (!r || !rec || !_uevent_out_ok(rec, sizeof(*rec)))
		return _uevent_err(EINVAL);
	for (;;) {
		memset(&r->pr, 0, sizeof(r->pr));
		r->pr.sz = sizeof(r->pr);
		r->pr.u.uevent.sz = sizeof(r->pr.u.uevent);
		ret = uevent_perf_file__next(r->f, &r->pr);
		if (ret < 0 && ret != -EPROTO)
			return ret;
		if (ret == 0)
			return 0;
		if (r->pr.body == UEVENT_BODY_UEVENT)
			break;
	}
	memcpy(&sz, rec, sizeof(sz));
	memcpy(rec, &r->pr.u.uevent, sizeof(*rec));
	rec->sz = sz;
	return ret == -EPROTO ? _uevent_err(EPROTO) : 1;
}

UEVENT_EXPORT uint64_t uevent_file_reader__offset(const struct uevent_file_reader *r)
{
	return r ? uevent_perf_file__offset(r->f) : 0;
}

UEVENT_EXPORT int uevent_file_reader__byte_order(const struct uevent_file_reader *r)
{
	if (!r)
		return _uevent_err(EINVAL);
	return uevent_perf_file__byte_order(r->f);
}

UEVENT_EXPORT void uevent_file_reader__close(struct uevent_file_reader *r)
{
	if (!r)
		return;
	uevent_perf_file__close(r->f);
	free(r);
}
