/* jit-code.c - the JIT session's loaded code: slabs for what a load keeps, the address
 * table (move, unload, a fork child's replay), code indexes and info waiting for its load. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "jit-internal.h"

static struct slab *slab_of(const void *p)
{
	return (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

static void slab_empty(struct slab *s);

/* A piece freed: the last of a retired slab empties it (any thread, any lock). */
static void slab_put(struct slab *s)
{
	if (__atomic_sub_fetch(&s->live, 1, __ATOMIC_ACQ_REL) == 0)
		slab_empty(s);
}

/* What a code owns. */
void _uevent_jit_code_free(const struct code *c)
{
	struct pending *p, *n;
	struct slab *s;

	switch (c->name_in_info) {
	case NAME_IN_SLAB:
		/* blocks of debug_info calls before the load (malloc'd), then ours */
		s = slab_of(c->name);
		for (p = c->info; p && slab_of(p) != s; p = n) {
			n = p->next;
			free(p);
		}
		slab_put(s);
		return;
	case NAME_OWN:
		free(c->name);
		break;
	}
	_uevent_jit_free_pending(c->info);
}

static uint64_t next_index = 1;		/* process-wide: perf names files by it */

/*
 * A code index, unique in the process (perf names jitted-PID-INDEX.so by it). A session
 * takes them 256 at a time: one atomic add on the shared counter per 256 loads, not one
 * per load, whose cache line a JIT's compile path (LuaJIT's, for every trace) has
 * always evicted. Lock held.
 */
#define INDEX_BLOCK	256

UEVENT_HOT uint64_t _uevent_jit_take_index(struct uevent_jit *j)
{
	if (j->index_next == j->index_end) {
		j->index_next = __atomic_fetch_add(&next_index, INDEX_BLOCK, __ATOMIC_RELAXED);
		j->index_end = j->index_next + INDEX_BLOCK;
	}
	return j->index_next++;
}

/* An empty slab: kept for the next slab_alloc (its pages are in), up to SLAB_SPARE.
 * Before it is retired live counts minus the pieces freed, so only the retire or the
 * last free after it brings live to 0: exactly one empties it. */
static void slab_empty(struct slab *s)
{
	struct uevent_jit *j = s->j;

	pthread_mutex_lock(&j->slab_lock);
	if (j->nspare < SLAB_SPARE) {
		s->next = j->spare;
		j->spare = s;
		j->nspare++;
		s = NULL;
	}
	pthread_mutex_unlock(&j->slab_lock);
	free(s);
}

/* cur allocates from no slab any more: what it gave counts in the slab's live. */
void _uevent_jit_slab_retire(struct uevent_jit *j, struct slab_cur *cur)
{
	struct slab *s = cur->slab;
	long n = cur->n;

	(void)j;
	*cur = (struct slab_cur){ NULL, NULL, 0, NULL };
	/* ACQ_REL: our writes to its pieces come before whoever empties it */
	if (s && __atomic_add_fetch(&s->live, n, __ATOMIC_ACQ_REL) == 0)
		slab_empty(s);
}

static __attribute__((cold)) int slab_new(struct uevent_jit *j, struct slab_cur *cur)
{
	struct slab *s;

	pthread_mutex_lock(&j->slab_lock);
	if ((s = j->spare)) {
		j->spare = s->next;
		j->nspare--;
	}
	pthread_mutex_unlock(&j->slab_lock);
	if (!s && !(s = aligned_alloc(SLAB_SIZE, SLAB_SIZE)))
		return -ENOMEM;
	*s = (struct slab){ .j = j };
	_uevent_jit_slab_retire(j, cur);
	cur->slab = s;
	cur->next = (char *)s + SLAB_HEAD;
	cur->end = (char *)s + SLAB_SIZE;
	cur->n = 0;
	return 0;
}

/* n bytes (16-aligned) for a code's piece from cur (the session's, lock held, or this
 * thread's stage's); NULL: take it from malloc (too big for a slab, or out of memory). */
UEVENT_HOT void *_uevent_jit_slab_alloc(struct uevent_jit *j, struct slab_cur *cur, size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > SLAB_SIZE / 8)
		return NULL;
	if (unlikely((size_t)(cur->end - cur->next) < n) && slab_new(j, cur) < 0)
		return NULL;
	p = cur->next;
	cur->next += n;
	cur->n++;
	return p;
}

/* At close, every code freed and every stage's slab retired: the slabs back to malloc. */
void _uevent_jit_slab_free_all(struct uevent_jit *j)
{
	struct slab *s;

	_uevent_jit_slab_retire(j, &j->slab);
	while ((s = j->spare)) {
		j->spare = s->next;
		free(s);
	}
	j->nspare = 0;
}

/* ---- address table ------------------------------------------------------------- */

static size_t slot_of(const struct uevent_jit *j, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (j->cap - 1);
}

struct code *_uevent_jit_code_find(struct uevent_jit *j, uint64_t addr)
{
	size_t i;

	_uevent_jit_code_settle(j);
	if (!j->cap)
		return NULL;
	for (i = slot_of(j, addr); j->codes[i].addr; i = (i + 1) & (j->cap - 1))
		if (j->codes[i].addr == addr)
			return &j->codes[i];
	return NULL;
}

static int code_grow(struct uevent_jit *j)
{
	size_t cap = j->cap ? j->cap * 2 : 64, i, k;
	struct code *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < j->cap; i++) {
		if (!j->codes[i].addr)
			continue;
		k = (size_t)((j->codes[i].addr * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
		while (n[k].addr)
			k = (k + 1) & (cap - 1);
		n[k] = j->codes[i];
	}
	free(j->codes);
	j->codes = n;
	j->cap = cap;
	return 0;
}

void _uevent_jit_free_pending(struct pending *p)
{
	struct pending *n;

	for (; p; p = n) {
		n = p->next;
		free(p);
	}
}

/* Inserts or replaces, in the table; there is room (code_put made it). */
static void code_insert(struct uevent_jit *j, const struct code *n)
{
	struct code *c;
	size_t i;

	for (i = slot_of(j, n->addr); (c = &j->codes[i])->addr; i = (i + 1) & (j->cap - 1))
		if (c->addr == n->addr) {
			_uevent_jit_code_free(c);
			*c = *n;
			return;
		}
	*c = *n;
	j->ncodes++;
}

/* A staged load into the table: the later load at an address (the later in the dump:
 * by timestamp, then index, as stage_merge orders them) stays, whichever stage is
 * settled first. */
static void code_insert_staged(struct uevent_jit *j, const struct code *n)
{
	struct code *c;
	size_t i;

	for (i = slot_of(j, n->addr); (c = &j->codes[i])->addr; i = (i + 1) & (j->cap - 1))
		if (c->addr == n->addr) {
			if (c->ts > n->ts || (c->ts == n->ts && c->index > n->index)) {
				_uevent_jit_code_free(n);
				return;
			}
			_uevent_jit_code_free(c);
			*c = *n;
			return;
		}
	*c = *n;
	j->ncodes++;
}

/*
 * The fresh loads into the table, in order (a later load at an address replaces): the
 * session's own list (moves) first, then each thread's stage. Lock held. A table that
 * cannot grow (out of memory) leaves a stage's loads where they are.
 */
void _uevent_jit_code_settle(struct uevent_jit *j)
{
	struct stage *s;
	size_t i;

	for (i = 0; i < j->nfresh; i++)
		code_insert(j, &j->fresh[i]);
	j->nfresh = 0;
	for (s = j->stages; s; s = s->next) {
		if (!__atomic_load_n(&s->n, __ATOMIC_RELAXED))
			continue;
		pthread_mutex_lock(&s->lock);
		while ((j->ncodes + s->n + 1) * 4 > j->cap * 3)
			if (code_grow(j) < 0)
				break;
		if ((j->ncodes + s->n + 1) * 4 <= j->cap * 3) {
			for (i = 0; i < s->n; i++)
				code_insert_staged(j, &s->code[i]);
			__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&s->lock);
	}
}

/* ---- per-thread stages ---------------------------------------------------------- */

#define STAGE_CACHE	4

static __thread struct {
	const struct uevent_jit *j;
	uint64_t serial;
	struct stage *s;
} stage_cache[STAGE_CACHE];
static __thread unsigned int stage_next;

/* This thread's stage in j, if it looked it up before: no lock. */
UEVENT_HOT struct stage *_uevent_jit_stage_cached(const struct uevent_jit *j)
{
	int i;

	for (i = 0; i < STAGE_CACHE; i++)
		if (stage_cache[i].j == j && stage_cache[i].serial == j->serial)
			return stage_cache[i].s;
	return NULL;
}

/* A lock that loads from many threads hold briefly: it spins a little before sleeping
 * (a futex sleep and wake cost more than the wait). */
void _uevent_jit_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

/* This thread's stage (tid) in j, made if it has none; lock held. NULL: out of memory. */
struct stage *_uevent_jit_stage_find(struct uevent_jit *j, pid_t tid)
{
	struct stage *s;
	unsigned int k;

	for (s = j->stages; s; s = s->next)
		if (s->tid == tid)
			break;
	if (!s) {
		size_t ns = j->nstages + 1;
		struct merge_cur *m = realloc(j->pcur, MERGE_PIECES * ns * sizeof(*m));

		if (!m)
			return NULL;
		j->pcur = m;
		if (!(m = realloc(j->mcur, ns * sizeof(*m))))
			return NULL;
		j->mcur = m;
		/* aligned: the merge's line is its own */
		if (!(s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63)))
			return NULL;
		/* atomic: a load reads it without the lock (staged_load) */
		__atomic_store_n(&j->nstages, j->nstages + 1, __ATOMIC_RELAXED);
		memset(s, 0, sizeof(*s));
		_uevent_jit_mutex_init(&s->lock);	/* its thread's, and a merge's briefly */
		s->tid = tid;
		s->next = j->stages;
		j->stages = s;
	}
	k = stage_next++ % STAGE_CACHE;
	stage_cache[k].j = j;
	stage_cache[k].serial = j->serial;
	stage_cache[k].s = s;
	return s;
}

/* Room in s for one more load, made before the load takes its place in the dump (so the
 * put after cannot fail). Only s's thread appends. */
UEVENT_HOT int _uevent_jit_stage_room(struct stage *s)
{
	struct code *c;
	size_t cap;

	/* only a settle changes n meanwhile: down */
	if (likely(__atomic_load_n(&s->n, __ATOMIC_RELAXED) < s->cap))
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 256;
		if (!(c = realloc(s->code, cap * sizeof(*c)))) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		s->code = c;
		s->cap = cap;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Takes ownership of what c owns; stage_room() made the room. */
UEVENT_HOT void _uevent_jit_stage_put(struct stage *s, const struct code *c)
{
	pthread_mutex_lock(&s->lock);
	s->code[s->n] = *c;
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->lock);
}

/* Takes back this thread's last load (addr, index) if it is still in its stage: 1. */
int _uevent_jit_stage_undo(struct stage *s, uint64_t addr, uint64_t index)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (s->n && s->code[s->n - 1].addr == addr && s->code[s->n - 1].index == index) {
		_uevent_jit_code_free(&s->code[s->n - 1]);
		__atomic_store_n(&s->n, s->n - 1, __ATOMIC_RELAXED);
		ret = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* A code index for a load from s's thread (its lock held): a block at a time from the
 * process's counter, so threads share no line for it. */
UEVENT_HOT uint64_t _uevent_jit_stage_index(struct stage *s)
{
	if (s->index_next == s->index_end) {
		s->index_next = __atomic_fetch_add(&next_index, INDEX_BLOCK, __ATOMIC_RELAXED);
		s->index_end = s->index_next + INDEX_BLOCK;
	}
	return s->index_next++;
}

/* Around fork (session lock held): no stage is mid-append in the child. */
void _uevent_jit_stage_lock_all(struct uevent_jit *j)
{
	struct stage *s;

	for (s = j->stages; s; s = s->next)
		pthread_mutex_lock(&s->lock);
}

void _uevent_jit_stage_unlock_all(struct uevent_jit *j)
{
	struct stage *s;

	for (s = j->stages; s; s = s->next)
		pthread_mutex_unlock(&s->lock);
}

/* Every staged load freed (unload_all); destroy: the stages too (close). Lock held. */
void _uevent_jit_stage_free_all(struct uevent_jit *j, int destroy)
{
	struct stage *s, *next;
	size_t i;

	for (s = j->stages; s; s = next) {
		next = s->next;
		pthread_mutex_lock(&s->lock);
		for (i = 0; i < s->n; i++)
			_uevent_jit_code_free(&s->code[i]);
		__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&s->lock);
		if (destroy) {
			_uevent_jit_slab_retire(j, &s->slab);
			pthread_mutex_destroy(&s->lock);
			free(s->code);
			free(s->rec);
			free(s->ix);
			free(s);
		}
	}
	if (destroy) {
		j->stages = NULL;
		free(j->mcur);
		free(j->pcur);
		j->mcur = j->pcur = NULL;
		__atomic_store_n(&j->nstages, 0, __ATOMIC_RELAXED);
	}
}

/* Inserts or replaces; takes ownership of name and info (also on failure). The table
 * grows here, so that settling never has to allocate. */
UEVENT_HOT int _uevent_jit_code_put(struct uevent_jit *j, const struct code *c)
{
	struct code n = *c;

	if ((j->ncodes + j->nfresh + 1) * 4 > j->cap * 3 && code_grow(j) < 0) {
		_uevent_jit_code_free(c);
		return -ENOMEM;
	}
	if (j->nfresh == j->freshcap) {
		size_t cap = j->freshcap ? j->freshcap * 2 : 256;
		struct code *f = realloc(j->fresh, cap * sizeof(*f));

		if (!f) {		/* the table has room: no list, then */
			_uevent_jit_code_settle(j);
			code_insert(j, &n);
			return 0;
		}
		j->fresh = f;
		j->freshcap = cap;
	}
	j->fresh[j->nfresh++] = n;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void _uevent_jit_code_del(struct uevent_jit *j, struct code *c)
{
	size_t i = (size_t)(c - j->codes), k, home;

	_uevent_jit_code_free(c);
	j->codes[i] = (struct code){ 0, 0, 0, NULL, NULL, 0 };
	j->ncodes--;
	for (k = (i + 1) & (j->cap - 1); j->codes[k].addr; k = (k + 1) & (j->cap - 1)) {
		home = slot_of(j, j->codes[k].addr);
		/* move k into the hole at i unless its home lies cyclically in (i, k] */
		if ((k > i && (home <= i || home > k)) || (k < i && (home <= i && home > k))) {
			j->codes[i] = j->codes[k];
			j->codes[k] = (struct code){ 0, 0, 0, NULL, NULL };
			i = k;
		}
	}
}

UEVENT_HOT struct pending *_uevent_jit_take_pending(struct uevent_jit *j, uint64_t addr)
{
	struct pending **pp, *p, *out = NULL, **tail = &out;

	for (pp = &j->pending; (p = *pp);) {
		if (p->addr == addr) {
			/* atomic: a staged load reads j->pending without the lock */
			__atomic_store_n(pp, p->next, __ATOMIC_RELAXED);
			p->next = NULL;
			*tail = p;
			tail = &p->next;
		} else {
			pp = &p->next;
		}
	}
	return out;
}

void _uevent_jit_add_pending(struct uevent_jit *j, struct pending *p)
{
	struct pending **pp = &j->pending;

	while (*pp)
		pp = &(*pp)->next;
	__atomic_store_n(pp, p, __ATOMIC_RELEASE);
}
