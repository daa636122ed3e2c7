/* jit-merge.c - the staged loads' merge: every thread's record groups up to a time taken
 * into the dump's batch in time order (a heap of the stages), when what is held is due,
 * and the merge's copies and pieces, made with the threads that wait for room. The
 * batch it appends to is jit-dump.c's; the stages are jit-stage.c's. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "jit-internal.h"

/* ---- a merge's copies, made with the threads that wait for it --------------------- */

#define CP_CHUNK	8	/* copies a claim takes: about 3 KiB */

/*
 * Lock held, in a merge: len bytes from src to the dump's batch (buf 0) or the perf
 * map's (buf 1) at dst, queued if a thread waits for room (it copies them with the
 * merge: _uevent_jit_cp_run), which src outlives (it is a stage's, moved or reused
 * only at the merge's end). 0: queued; else the caller copies.
 */
UEVENT_HOT int _uevent_jit_cp_push(struct uevent_jit *j, int buf, size_t dst, const void *src,
				   size_t len)
{
	struct cp_item *c;
	size_t cap;

	if (likely(!j->cp_merge ||
		   (!__atomic_load_n(&j->cp_waiters, __ATOMIC_RELAXED) && !JIT_CP_ALWAYS)))
		return -EAGAIN;
	if (j->cp_n == j->cp_cap) {
		if (j->cp_n >= UINT32_MAX / 2)
			return -ENOMEM;
		cap = j->cp_cap ? 2 * j->cp_cap : 512;
		if (!(c = realloc(j->cp, cap * sizeof(*c))))
			return -ENOMEM;
		j->cp = c;
		j->cp_cap = cap;
	}
	j->cp[j->cp_n++] = (struct cp_item){ src, dst, len, buf };
	return 0;
}

static void piece_run(struct uevent_jit *j, size_t k);

/* The live phase's items (copies CP_CHUNK at a time, or pieces one at a time) until
 * none is left to take. */
static void cp_work(struct uevent_jit *j, uint64_t c)
{
	uint32_t phase = (uint32_t)(c >> 32), i, end;
	const struct cp_item *it;
	size_t n;
	int pieces;

	for (;;) {
		if (!phase || (uint32_t)(c >> 32) != phase)
			return;
		n = __atomic_load_n(&j->cp_live, __ATOMIC_RELAXED);
		pieces = __atomic_load_n(&j->cp_pieces, __ATOMIC_RELAXED);
		i = (uint32_t)c;
		if (i >= n)
			return;
		end = pieces ? i + 1 : n - i > CP_CHUNK ? i + CP_CHUNK : (uint32_t)n;
		if (!__atomic_compare_exchange_n(&j->cp_claim, &c, ((uint64_t)phase << 32) | end, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			continue;
		/* taken: the phase lasts until these are made, and nothing in it moves */
		if (pieces)
			piece_run(j, i);
		else
			for (it = j->cp + i; i < end; i++, it++)
				memcpy(j->cp_base[it->buf] + it->dst, it->src, it->len);
		__atomic_add_fetch(&j->cp_done, end - (uint32_t)c, __ATOMIC_RELEASE);
		c = __atomic_load_n(&j->cp_claim, __ATOMIC_ACQUIRE);
	}
}

/* A thread waiting for room: the live phase's items it can take. */
void _uevent_jit_cp_help(struct uevent_jit *j)
{
	uint64_t c = __atomic_load_n(&j->cp_claim, __ATOMIC_ACQUIRE);

	if (c >> 32)
		cp_work(j, c);
}

/* Lock held: a phase of n items (pieces: merge pieces, else the queued copies) made,
 * by this thread and the waiting ones. */
static void phase_run(struct uevent_jit *j, size_t n, int pieces)
{
	unsigned int spins = 0;

	j->cp_base[0] = j->dumpbuf;
	j->cp_base[1] = (unsigned char *)j->mapbuf;
	__atomic_store_n(&j->cp_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->cp_live, n, __ATOMIC_RELAXED);
	__atomic_store_n(&j->cp_pieces, pieces, __ATOMIC_RELAXED);
	if (!++j->cp_phase)
		j->cp_phase = 1;
	__atomic_store_n(&j->cp_claim, (uint64_t)j->cp_phase << 32, __ATOMIC_RELEASE);
	cp_work(j, (uint64_t)j->cp_phase << 32);
	/* the helpers' last items: about a microsecond, unless one was preempted */
	while (__atomic_load_n(&j->cp_done, __ATOMIC_ACQUIRE) < n)
		_uevent_spin_turn(spins++, 256);
	__atomic_store_n(&j->cp_claim, 0, __ATOMIC_RELAXED);
}

/* Lock held: the queued copies made, by this thread and the waiting ones, then none. */
void _uevent_jit_cp_run(struct uevent_jit *j)
{
	phase_run(j, j->cp_n, 0);
	j->cp_n = 0;
}

/* ---- per-thread record groups (stage.rec) ----------------------------------------- */

/* Lowers j->flush_due to due (a stage that holds records now). */
void _uevent_jit_due_min(struct uevent_jit *j, uint64_t due)
{
	uint64_t cur = __atomic_load_n(&j->flush_due, __ATOMIC_RELAXED);

	while (due < cur && !__atomic_compare_exchange_n(&j->flush_due, &cur, due, 1,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Session lock held, after the batch changed: when what it holds is due (a stage that
 * holds records lowers it itself, stage_merge for those it leaves). */
void _uevent_jit_due_update(struct uevent_jit *j)
{
	__atomic_store_n(&j->flush_due, j->dumplen ? j->dump_t0 + DUMP_BUF_AGE_NS : UINT64_MAX,
			 __ATOMIC_RELAXED);
}

/* By (ts, index): distinct. The index is read from the heads only at a tie. */
static int cur_before(const struct merge_cur *a, const struct merge_cur *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->h->index < b->h->index);
}

/* Restores the min-heap of n cursors by (ts, index) from place i down. */
static void merge_sift(struct merge_cur *c, size_t n, size_t i)
{
	struct merge_cur t = c[i];
	size_t k;

	while ((k = 2 * i + 1) < n) {
		if (k + 1 < n && cur_before(&c[k + 1], &c[k]))
			k++;
		if (!cur_before(&c[k], &t))
			break;
		c[i] = c[k];
		i = k;
	}
	c[i] = t;
}

/* ---- a parallel merge ------------------------------------------------------------ */

/*
 * Piece k of the live phase: its groups merged in time order into its place in the
 * batch, their lines into theirs, and the 256 KiB boundary they pass (if any) noted
 * with the record about it. Its cursors' ranges hold only its groups.
 */
static void piece_run(struct uevent_jit *j, size_t k)
{
	struct merge_piece *p = &j->piece[k];
	struct merge_cur *c = j->pcur + k * j->pstride;
	unsigned char *d = j->cp_base[0] + p->dst, *m = j->pmap ? j->cp_base[1] + p->mdst : NULL;
	uint64_t fo = j->pfile + p->dst, at;
	const struct rec_head *h;
	const struct rec_ix *x;
	size_t n = p->n, i;

	for (i = n / 2; i-- > 0;)
		merge_sift(c, n, i);
	while (n) {
		h = c[0].h;
		x = c[0].x;
		memcpy(d, h + 1, x->len);
		at = (fo + x->len) & ~(DUMP_ALIGN - 1);
		if (unlikely(at > fo))
			p->bnd_at = _uevent_jit_bound_find(d, fo, x->len, at, &p->bnd_whole,
							   &p->bnd_next) < 0 ? 0 : at;
		d += x->len;
		fo += x->len;
		if (m && x->mlen) {
			memcpy(m, (const char *)(h + 1) + x->len, x->mlen);
			m += x->mlen;
		}
		h = _uevent_jit_rec_next(h, x++);
		if (x < c[0].xend) {
			c[0].h = h;
			c[0].x = x;
			c[0].ts = x->ts;
		} else {
			c[0] = c[--n];
		}
		merge_sift(c, n, 0);
	}
}

/*
 * Lock held, in a load's merge, the n stages' cursors c taken (up to t0): the groups
 * merged in up to MERGE_PIECES pieces at once, by this thread and the threads that
 * wait for room (one whose stage fills meanwhile takes the next piece not taken), where
 * the batch and the lines' buffer have room for them all: nothing is written meanwhile,
 * and nothing fails. The merge's time is cut in equal spans; a piece is a span's groups
 * from every stage, whose place the index gives without reading them. At 16 threads on
 * 16 cores one thread merging every group was the ceiling (about 100 ns a group, the
 * session's lock never free). 0: merged (each stage's m_pos and m_ixpos set); 1: not
 * (the caller merges them one by one, from c, whose ends may be cut back to t0).
 */
static int merge_parallel(struct uevent_jit *j, struct merge_cur *c, size_t n, uint64_t t0)
{
	uint64_t cut[MERGE_PIECES], tmin = UINT64_MAX, dlen[MERGE_PIECES] = { 0 }, d = 0, md = 0;
	size_t mlen[MERGE_PIECES] = { 0 }, groups = 0, np, k, q, m;
	int map = j->mapbuf && j->map_fd >= 0;
	const struct rec_head *h;
	const struct rec_ix *x, *e;
	struct merge_cur *pc;

	/* pieces for as many threads as can help, whether they wait yet or not: a thread
	 * whose stage fills meanwhile takes the next piece not taken */
	np = n < MERGE_PIECES ? n : MERGE_PIECES;
	if (!j->defer || j->dump_fd < 0 || !j->dumpbuf || (map && j->map_scan != j->dump_off))
		return 1;
	for (k = 0; k < n; k++) {	/* each stage's groups up to t0 */
		for (e = c[k].xend; e > c[k].x && e[-1].ts > t0; e--)
			;
		c[k].xend = e;
		groups += (size_t)(e - c[k].x);
		if (c[k].ts < tmin)
			tmin = c[k].ts;
	}
	if (!JIT_CP_ALWAYS && np > groups / PIECE_GROUPS)
		np = groups / PIECE_GROUPS;
	if (np > groups)
		np = groups;
	if (np < 2)
		return 1;
	for (q = 0; q + 1 < np; q++)
		cut[q] = tmin + (t0 - tmin) / np * (q + 1);
	cut[np - 1] = UINT64_MAX;
	j->pstride = n;
	for (q = 0; q < np; q++)
		j->piece[q].n = 0;
	/* each stage's groups into the pieces of their spans, which are summed */
	for (k = 0; k < n; k++) {
		h = c[k].h;
		x = c[k].x;
		for (q = 0; x < c[k].xend; q++) {
			if (x->ts > cut[q])
				continue;
			pc = j->pcur + q * n + j->piece[q].n++;
			*pc = (struct merge_cur){ x->ts, x, x, h, c[k].s };
			for (; x < c[k].xend && x->ts <= cut[q]; h = _uevent_jit_rec_next(h, x++)) {
				if (map && !x->mlen)
					return 1;	/* a line the scan makes: in order */
				dlen[q] += x->len;
				mlen[q] += x->mlen;
			}
			pc->xend = x;
		}
		c[k].s->m_pos = (size_t)((const unsigned char *)h - c[k].s->m_rec);
		c[k].s->m_ixpos = (size_t)(x - c[k].s->ix);
	}
	for (q = 0; q < np; q++) {
		d += dlen[q];
		md += mlen[q];
	}
	if (_uevent_jit_dump_room(j, d) < 0 ||
	    (map && (_uevent_jit_map_room(j, (size_t)md) < 0 || j->maplen + md > MAP_BUF_MAX)))
		return 1;
	for (q = 0, d = j->dumplen, m = map ? j->maplen : 0; q < np; q++) {
		j->piece[q].dst = (size_t)d;
		j->piece[q].mdst = m;
		j->piece[q].bnd_at = 0;
		d += dlen[q];
		m += mlen[q];
	}
	if (!j->dumplen)
		j->dump_t0 = tmin;
	j->pfile = j->dump_file;
	j->pmap = map;
	phase_run(j, np, 1);
	for (q = 0; q < np; q++)
		if (j->piece[q].bnd_at) {	/* the last one passed */
			j->bnd_at = j->piece[q].bnd_at;
			j->bnd_whole = j->piece[q].bnd_whole;
			j->bnd_next = j->piece[q].bnd_next;
		}
	j->dump_off += d - j->dumplen;
	j->dumplen = (size_t)d;
	if (map) {
		j->maplen = m;
		j->map_scan = j->dump_off;
	}
	return 0;
}

/*
 * Session lock held: every stage's record groups stamped at t0 or before into the
 * batch, in time order (by timestamp, then index: distinct), and out of the stages;
 * locked: the caller holds every stage's lock (fork). t0 is read before this is
 * called, and an append reads the clock under its stage's lock: a group appended after
 * this took its stage's length is stamped t0 or later, so every group up to t0 is in
 * this merge and every later merge's are stamped t0 or later: the file stays in time
 * order. The groups a merge takes stay where they are while it copies them (their
 * thread appends after them, and moves them only holding the session's lock, as the
 * merge does at its end). Where it can, it merges in pieces at once (merge_parallel).
 * A batch the file does not take fails the merge; the groups it took are lost with it
 * (dump_write). A perf-map
 * write that fails does not: every group still goes into the dump (their loads
 * succeeded), and the error waits for the next flush and close (j->werr).
 */
int _uevent_jit_stage_merge(struct uevent_jit *j, uint64_t t0, int locked)
{
	struct merge_cur *c = j->mcur;
	const struct rec_head *h;
	const struct rec_ix *x;
	struct stage *s;
	struct iovec iov;
	size_t n = 0, i, xend;
	int ret = 0, merr = 0;	/* the perf map's: for the next flush (j->werr) */

	if (unlikely(__atomic_load_n(&j->wfail, __ATOMIC_RELAXED)))
		_uevent_jit_out_wait(j);	/* a failed write's loss, before more is added */
	j->merge_start = j->dump_off;
	j->cp_merge = 1;
	for (s = j->stages; s; s = s->next) {
		/* under its lock even when it looks empty: a load may have read the clock
		 * (before t0) and not yet stored its length */
		if (!locked)
			pthread_mutex_lock(&s->lock);
		s->m_pos = s->rechead;
		s->m_ixpos = s->ixhead;
		xend = s->ixlen;
		s->m_rec = s->rec;
		if (!locked)
			pthread_mutex_unlock(&s->lock);
		x = s->ix + s->m_ixpos;
		if (xend > s->m_ixpos && x->ts <= t0)
			c[n++] = (struct merge_cur){ x->ts, x, s->ix + xend,
						     (const void *)(s->m_rec + s->m_pos), s };
	}
	/*
	 * The groups in time order: a heap of the stages by their next group, in the
	 * session's memory (the stages' own lines are their threads' to write), each
	 * group's entry read once, when its stage comes up; its bytes are only copied.
	 */
	if (n > 1 && merge_parallel(j, c, n, t0) == 0)
		n = 0;
	for (i = n / 2; i-- > 0;)
		merge_sift(c, n, i);
	while (n) {
		h = c[0].h;
		x = c[0].x;
		iov = (struct iovec){ (void *)(h + 1), (size_t)x->len };
		if (ret == 0 && j->dump_fd >= 0) {
			ret = _uevent_jit_dump_append(j, &iov, 1, x->ts, &merr);
			/* its place read after: the append may have cut the dump back (a
			 * failed write of a batch handed off) before it put the group */
			if (ret == 0 && x->mlen)
				_uevent_jit_map_add(j, j->dump_off - x->len,
						    (const char *)(h + 1) + x->len,
						    (size_t)x->mlen, j->dump_off);
		}
		h = _uevent_jit_rec_next(h, x++);
		if (x < c[0].xend && x->ts <= t0) {
			c[0].h = h;
			c[0].x = x;
			c[0].ts = x->ts;
		} else {
			/* the rest of it is later still */
			c[0].s->m_pos = (size_t)((const unsigned char *)h - c[0].s->m_rec);
			c[0].s->m_ixpos = (size_t)(x - c[0].s->ix);
			c[0] = c[--n];
		}
		merge_sift(c, n, 0);
	}
	/* the groups taken are copied before their stages move or reuse them */
	_uevent_jit_cp_sync(j);
	j->cp_merge = 0;
	/* when something held is due: the batch, then (under each one's lock: one that
	 * fills after that lowers it itself) every stage that holds records still */
	_uevent_jit_due_update(j);
	for (s = j->stages; s; s = s->next) {
		if (!locked)
			pthread_mutex_lock(&s->lock);
		if (s->m_pos == s->reclen) {	/* all of it taken: empty again */
			__atomic_store_n(&s->reclen, 0, __ATOMIC_RELAXED);
			s->rechead = s->ixlen = s->ixhead = 0;
		} else if (s->m_pos != s->rechead) {
			/* what its thread added meanwhile stays where it is: moving it down
			 * here, under the lock its thread appends under, held that up */
			s->rechead = s->m_pos;
			s->ixhead = s->m_ixpos;
			s->rec_t0 = s->ix[s->ixhead].ts;
		}
		if (__atomic_load_n(&s->wants_room, __ATOMIC_RELAXED))
			_uevent_jit_stage_compact(s);	/* its thread waits for that */
		if (s->reclen > s->rechead)
			_uevent_jit_due_min(j, s->rec_t0 + DUMP_BUF_AGE_NS);
		s->m_pos = 0;
		if (!locked)
			pthread_mutex_unlock(&s->lock);
	}
	return ret;
}
