/* perfdata-order.c - the perf.data reader's time order: the records' times, taken in
 * one pass, sorted whole or a round at a time as perf's ordered events do. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "perf-internal.h"
#include "perfdata-internal.h"

/*
 * The time of the record at r (its sample's TIME, or its sample_id's when the event
 * has sample_id_all), or -1 when it carries none (perf's own records, an event
 * without PERF_SAMPLE_TIME).
 */
static int rec_time(struct uevent_perf_file *f, const uint8_t *r, uint16_t size, uint32_t type,
		    uint64_t *t)
{
	const struct pevent *e = event_of(f, r, size, type);
	uint64_t st = (e ? e : &f->ev[0])->fmt.sample_type;
	size_t pos;

	if (!(st & PERF_SAMPLE_TIME))
		return -1;
	if (type == PERF_RECORD_SAMPLE) {
		pos = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
			       !!(st & PERF_SAMPLE_TID));
	} else {
		size_t back = 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_CPU) +
				   !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_ID));

		if (type >= REC_HEADER_ATTR || !(e ? e : &f->ev[0])->fmt.sample_id_all ||
		    back + 8 > size)
			return -1;
		pos = size - back;
	}
	if (pos + 8 > size)
		return -1;
	*t = fr64(f, r + pos);
	return 0;
}

/* The record at off: its time, type and bytes with what follows (trailing()). 1, 0
 * when it has no time (it takes the one before's), -1 where the records stop. */
static inline int peek(struct uevent_perf_file *f, uint64_t off, uint64_t *t, uint32_t *type,
		uint64_t *step)
{
	struct perf_event_header h;
	const uint8_t *r = f->map + off;
	int64_t extra;

	if (f->end - off < 8)
		return -1;
	map_ahead(f, off);
	frheader(f, r, &h);
	if (h.size < 8 || h.size > f->end - off)
		return -1;
	extra = trailing(f, r, &h, f->end - off - h.size);
	if (extra < 0)
		return -1;
	*type = h.type;
	*step = h.size + (uint64_t)extra;
	return rec_time(f, r, h.size, h.type, t) == 0;
}

/* A record's time into the rounds' greatest (m[0] the open round's, m[1] the closed
 * ones', m[2] all of those but the last's); a FINISHED_ROUND closes the open round. */
static inline void round_step(uint64_t *m, uint64_t t, uint32_t type)
{
	if (t > m[0])
		m[0] = t;
	if (type != REC_FINISHED_ROUND)
		return;
	m[2] = m[1];
	if (m[0] > m[1])
		m[1] = m[0];
	m[0] = 0;
}

/* (t, off) appended to order[]: 0 or -ENOMEM. */
static inline int put(struct uevent_perf_file *f, uint64_t t, uint64_t off)
{
	if (f->norder == f->ordercap) {
		size_t cap = f->ordercap ? 2 * f->ordercap : 4096;
		struct _uevent_timed *n = realloc(f->order, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->order = n;
		f->ordercap = cap;
	}
	f->order[f->norder].time = t;
	f->order[f->norder++].what = off;
	return 0;
}

/*
 * Sorts what order[] holds and makes ready those no record past f->scan can precede:
 * perf record reads each ring once a round, so a round's records are no older than any
 * of the round before last's (or, f->lag rounds back, where the first pass found
 * records that late), and those no later than every round but the last f->lag - 1
 * closed ones may go (all of them once the scan is at the end).
 */
static int settle(struct uevent_perf_file *f)
{
	uint64_t least = f->scan, limit = f->scan >= f->stop ? UINT64_MAX :
		f->npmax >= f->lag ? f->pmax[(f->npmax - f->lag) % LAG_MAX] : 0;
	size_t i;

	if (_uevent_time_sort(f->order, f->norder) < 0)
		return -ENOMEM;
	if (limit == UINT64_MAX)
		f->nready = f->norder;
	while (f->nready < f->norder && f->order[f->nready].time <= limit)
		f->nready++;
	if (f->keep)
		return 0;	/* its pages stay: drop_behind() asks nothing */
	for (i = f->nready; i < f->norder; i++)		/* drop_behind's */
		if (f->order[i].what < least)
			least = f->order[i].what;
	for (i = f->nready; i-- > 0;) {
		if (f->order[i].what < least)
			least = f->order[i].what;
		f->order[i].time = least;
	}
	return 0;
}

/* Takes the records from f->scan into order[], after those still held, and settles:
 * the next rounds (up to a FINISHED_ROUND), as many records as are held and
 * REFILL_LEAST at least (so that each is sorted and moved down a few times, not once a
 * round: 16 CPUs' rounds of a hundred records, held 21 rounds a refill each, were read
 * in 111 ms, against 71), or with all every one left. */
#define REFILL_LEAST	4096
int _uevent_pf_refill(struct uevent_perf_file *f, int all)
{
	size_t held = f->norder - f->nready;
	uint64_t t, step;
	uint32_t type;
	int has;

	if (held)
		memmove(f->order, f->order + f->nready, held * sizeof(*f->order));
	f->norder = held;
	f->iorder = f->nready = 0;
	while (f->scan < f->stop && (has = peek(f, f->scan, &t, &type, &step)) >= 0) {
		if (!has)
			t = f->tprev;
		f->tprev = t;
		if (put(f, t, f->scan) < 0)
			return -ENOMEM;
		round_step(f->rmax, t, type);
		if (type == REC_FINISHED_ROUND)
			f->pmax[f->npmax++ % LAG_MAX] = f->rmax[1];
		f->scan += step;
		if (all)
			give_back(f, f->scan);	/* read again from the start */
		else if (type == REC_FINISHED_ROUND && f->norder - held >= REFILL_LEAST &&
			 f->norder >= 2 * held)
			break;
	}
	if (all)
		rewind_pages(f);
	return settle(f);
}

/*
 * Time order, as perf report and perf script read a file: each CPU's ring is written in
 * turn, so a process that moved between CPUs can have samples in the file before the
 * COMM and MMAP records that name them. One pass takes the records' times: a file in
 * order keeps nothing, and any other is sorted whole, its rings' runs merged (16 bytes
 * a record, as much again while sorting). One of more than WINDOW_RECORDS (16 MB of
 * them) that keeps perf's round rule, in rounds of an eighth of it at most, is sorted a
 * round at a time as it is read instead (refill: its records' times taken again); one
 * that does not, whole after all (a round as big as the file would be held whole, and
 * its pages too).
 */
#define WINDOW_RECORDS	((size_t)1 << 20)

void _uevent_pf_walk_init(struct _uevent_pf_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->sorted = w->rounds = 1;
	w->lag = 2;
}

/* A record earlier than every round but the last closed one held: how many rounds late
 * it is (the rounds whose greatest so far is later than t, plus one) raises the lag;
 * past LAG_MAX - 1 the file is sorted whole. Apart: in a 16-CPU recording of 1.6 M
 * records, 6 were. */
static __attribute__((noinline)) void walk_late(struct _uevent_pf_walk *w, uint64_t t)
{
	size_t c = 0, have = w->npm < LAG_MAX ? w->npm : LAG_MAX;

	while (c < have && w->pm[(w->npm - 1 - c) % LAG_MAX] > t)
		c++;
	if (c >= LAG_MAX - 1)
		w->rounds = 0;
	else if (c + 1 > w->lag)
		w->lag = c + 1;
}

/*
 * The record at off, of time t (has) or none (it takes the one before's), and type.
 * Inlined in each walk, and put() with it: called, they took a sixth of the walk.
 */
static inline __attribute__((always_inline)) int
walk_put(struct uevent_perf_file *f, struct _uevent_pf_walk *w, uint64_t off, int has,
	 uint64_t t, uint32_t type)
{
	if (!has)
		t = w->prev;
	w->sorted &= t >= w->prev;
	if (unlikely(t < w->m[2]))	/* later than perf's rule allows: lag 3 or more */
		walk_late(w, t);
	round_step(w->m, t, type);
	if (type == REC_FINISHED_ROUND)
		w->pm[w->npm++ % LAG_MAX] = w->m[1];
	w->prev = t;
	if (++w->rn > w->maxr)
		w->maxr = w->rn;
	if (type == REC_FINISHED_ROUND)
		w->rn = 0;
	return w->n++ < WINDOW_RECORDS && put(f, t, off) < 0 ? -ENOMEM : 0;
}

int _uevent_pf_walk_step(struct uevent_perf_file *f, struct _uevent_pf_walk *w, uint64_t off,
			 const struct perf_event_header *h)
{
	uint64_t t = 0;
	int has = f->nev && rec_time(f, f->map + off, h->size, h->type, &t) == 0;

	return walk_put(f, w, off, has, t, h->type);
}

int _uevent_pf_walk_end(struct uevent_perf_file *f, struct _uevent_pf_walk *w, uint64_t stop)
{
	f->stop = stop;
	rewind_pages(f);
	f->reorder = !w->sorted;
	f->lag = w->lag;
	if (w->sorted || w->n > WINDOW_RECORDS) {
		free(f->order);		/* in order, or taken again, a round at a time */
		f->order = NULL;
		f->norder = f->ordercap = 0;
		f->scan = f->off;
		return w->sorted || (w->rounds && w->maxr <= w->n / 8) ? 0 : _uevent_pf_refill(f, 1);
	}
	f->scan = f->stop;
	return settle(f);
}

int _uevent_pf_build_order(struct uevent_perf_file *f)
{
	struct _uevent_pf_walk w;
	uint64_t off = f->off, t, step;
	uint32_t type;
	int has;

	_uevent_pf_walk_init(&w);
	for (; (has = peek(f, off, &t, &type, &step)) >= 0; off += step) {
		if (walk_put(f, &w, off, has, t, type) < 0)
			return -ENOMEM;
		give_back(f, off + step);	/* read again from the start */
	}
	return _uevent_pf_walk_end(f, &w, off);
}
