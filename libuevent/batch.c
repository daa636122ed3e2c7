/* batch.c - reads samples and uevents (of a perf.data file or a session) into caller-allocated
 * columns. */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"

/* Row i of a column of elements of size el, rows stride bytes apart (0: packed). */
#define CELL(col, i, el, stride) ((char *)(col) + (i) * ((stride) ? (stride) : (el)))
#define PUT(b, col, i, v) do {							\
		if ((b)->col)							\
			*(__typeof__((b)->col))CELL((b)->col, i, sizeof(*(b)->col),	\
						    (b)->stride) = (v);		\
	} while (0)

/* A batch as this library knows it, from what the caller has (NULL: none). */
static int batch_copy(void *out, size_t known, const void *in, size_t min)
{
	int err;

	if (!in) {
		memset(out, 0, known);
		return 0;
	}
	err = _uevent_opts_copy(out, known, in, min);
	return err;
}

/* 8 bytes as a big-endian number */
static uint64_t be64(const uint8_t *b)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* Columns whose stride cannot hold their element, or rows without room: -EINVAL. */
static int stride_ok(size_t stride, size_t widest)
{
	return !stride || stride >= widest;
}

/* 1: the sample went in; 0: full (no room for it now). */
static int put_sample(struct uevent_sample_batch *b, const struct uevent_perf_sample *s, int bo)
{
	size_t i = b->n, k;

	if (i >= b->cap || (s->callchain_nr && (!b->chain ||
	    s->callchain_nr > b->chain_cap - b->chain_n)))
		return 0;
	PUT(b, time, i, s->time);
	PUT(b, pid, i, s->pid);
	PUT(b, tid, i, s->tid);
	PUT(b, cpu, i, s->cpu);
	PUT(b, event_index, i, s->event_index);
	PUT(b, ip, i, s->ip);
	PUT(b, period, i, s->period);
	PUT(b, chain_off, i, b->chain_n);
	PUT(b, chain_len, i, (uint32_t)s->callchain_nr);
	PUT(b, context_trace_hi, i, s->context_err ? 0 : be64(s->context_trace_id));
	PUT(b, context_trace_lo, i, s->context_err ? 0 : be64(s->context_trace_id + 8));
	PUT(b, context_span, i, s->context_err ? 0 : be64(s->context_span_id));
	if (s->callchain_nr && !_uevent_need_swap(bo)) {
		memcpy(b->chain + b->chain_n, s->callchain, s->callchain_nr * 8);
	} else {
		for (k = 0; k < s->callchain_nr; k++)
			b->chain[b->chain_n + k] = uevent_perf_u64(s->callchain, k, bo);
	}
	b->chain_n += s->callchain_nr;
	b->n++;
	return 1;
}

static int put_uevent(struct uevent_record_batch *b, const struct uevent_perf_record *r)
{
	const struct uevent_record *u = &r->u.uevent;
	const struct uevent_sample_id *id = &u->id;
	size_t i = b->n;

	if (i >= b->cap || (u->size && (!b->data || u->size > b->data_cap - b->data_n)))
		return 0;
	PUT(b, time, i, id->fields & UEVENT_ID_TIME ? id->time : 0);
	PUT(b, pid, i, id->fields & UEVENT_ID_TID ? id->pid : 0);
	PUT(b, tid, i, id->fields & UEVENT_ID_TID ? id->tid : 0);
	PUT(b, cpu, i, id->fields & UEVENT_ID_CPU ? id->cpu : 0);
	PUT(b, event_index, i, u->event_index);
	PUT(b, type, i, u->type);
	PUT(b, flags, i, u->flags);
	PUT(b, transport, i, r->transport);
	PUT(b, data_off, i, b->data_n);
	PUT(b, data_len, i, u->size);
	if (u->size)
		memcpy(b->data + b->data_n, u->data, u->size);
	b->data_n += u->size;
	b->n++;
	return 1;
}

/* Room for the largest record: a session, which cannot put one back, stops short of it. */
#define MAX_CHAIN	(65535 / 8)
#define MAX_DATA	65535

/* One source of records: a file (which can put one back) or a session. */
struct source {
	struct uevent_perf_file *f;
	struct uevent_session *s;
	int timeout_ms;
};

static int batch_read(struct source *src, struct uevent_sample_batch *samples,
		      struct uevent_record_batch *uevents)
{
	struct uevent_perf_record rec = { .sz = sizeof(rec) };
	struct uevent_sample_batch sb;
	struct uevent_record_batch ub;
	int bo, err, ret = 0, full = 0;

	/* a caller built before the context columns has them NULL */
	err = batch_copy(&sb, sizeof(sb), samples,
			 offsetof(struct uevent_sample_batch, context_trace_hi));
	if (!err)
		err = batch_copy(&ub, sizeof(ub), uevents, sizeof(ub));
	if (err)
		return _uevent_err(-err);
	if (!stride_ok(sb.stride, 8) || !stride_ok(ub.stride, 8) ||
	    (sb.chain_cap && !sb.chain) || (ub.data_cap && !ub.data))
		return _uevent_err(EINVAL);
	sb.n = sb.chain_n = ub.n = ub.data_n = 0;
	if (src->s && ((samples && (!sb.cap || sb.chain_cap < MAX_CHAIN)) ||
		       (uevents && (!ub.cap || ub.data_cap < MAX_DATA))))
		return _uevent_err(ENOSPC);
	bo = src->f ? uevent_perf_file__byte_order(src->f) : UEVENT_BO_HOST;
	while (!full && sb.n + ub.n < INT_MAX) {
		if (src->f) {
			err = _uevent_perf_file_next_data(src->f, &rec);
		} else {
			/* only the first record is waited for */
			err = uevent_session__next(src->s, &rec, sb.n + ub.n ? 0 : src->timeout_ms);
		}
		if (err == -EPROTO)
			continue;		/* a uevent of an unknown format: skipped */
		if (err <= 0)
			break;
		if (rec.body == UEVENT_BODY_SAMPLE && samples)
			full = !put_sample(&sb, &rec.u.sample, bo);
		else if (rec.body == UEVENT_BODY_UEVENT && uevents)
			full = !put_uevent(&ub, &rec);
		if (full && src->f)
			_uevent_perf_file_unread(src->f);	/* left for the next call */
		/* a session's next record must fit whatever it is */
		if (src->s && ((samples && (sb.n == sb.cap || sb.chain_cap - sb.chain_n < MAX_CHAIN)) ||
			       (uevents && (ub.n == ub.cap || ub.data_cap - ub.data_n < MAX_DATA))))
			break;
	}
	ret = (int)(sb.n + ub.n);
	if (samples) {
		samples->n = sb.n;
		samples->chain_n = sb.chain_n;
	}
	if (uevents) {
		uevents->n = ub.n;
		uevents->data_n = ub.data_n;
	}
	if (ret)
		return ret;		/* an error after rows comes with the next call */
	if (full)
		return _uevent_err(ENOSPC);
	return err < 0 ? _uevent_err(-err) : 0;
}

UEVENT_EXPORT int uevent_perf_file__read_batch(struct uevent_perf_file *f,
					       struct uevent_sample_batch *samples,
					       struct uevent_record_batch *uevents)
{
	struct source src = { .f = f };

	return f ? batch_read(&src, samples, uevents) : _uevent_err(EINVAL);
}

/* uevent_session__read_batch(), inside the session's reader count (session.c) */
int _uevent_session_batch(struct uevent_session *s, struct uevent_sample_batch *samples,
			  struct uevent_record_batch *uevents, int timeout_ms)
{
	struct source src = { .s = s, .timeout_ms = timeout_ms };

	return batch_read(&src, samples, uevents);
}
