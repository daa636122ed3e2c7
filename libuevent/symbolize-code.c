/* symbolize-code.c - the symbolizer's code lists: named address ranges live over a span
 * of the recording's time (JIT code, perf maps, kernel symbols), indexed by address. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-internal.h"

/* ---- code lists: JIT code, perf maps, kernel symbols ------------------------------ */

/* A block of names: the newest first, its bytes after the header. */
struct name_block {
	struct name_block	*next;
	size_t			size;
	char			bytes[];
};

#define NAME_BLOCK	(64u << 10)

/* A copy of name[0..len) with a NUL, kept until the list is freed (NULL: no memory). */
static char *name_copy(struct code_list *l, const char *name, size_t len)
{
	struct name_block *b = l->names;
	char *d;

	if (!b || l->names_left < len + 1) {
		size_t size = len + 1 > NAME_BLOCK - sizeof(*b) ? len + 1 : NAME_BLOCK - sizeof(*b);

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		/* a long name's own block goes behind the current one: its room stays in use */
		if (l->names && size > NAME_BLOCK - sizeof(*b)) {
			b->next = l->names->next;
			l->names->next = b;
			memcpy(b->bytes, name, len);
			b->bytes[len] = 0;
			return b->bytes;
		}
		b->next = l->names;
		l->names = b;
		l->names_left = size;
	}
	d = b->bytes + b->size - l->names_left;
	memcpy(d, name, len);
	d[len] = 0;
	l->names_left -= len + 1;
	return d;
}

/*
 * Adding n codes costs O(n log n): a code goes to the end of by_addr, and the next lookup
 * sorts what came since and merges it in (one pass); the live codes, which never overlap
 * (a load ends what it covers), sit in a treap by address, so finding the ones a load
 * replaces costs O(log n) rather than a scan of every code ever added. The arrays double
 * as codes come, never sized from a file's length: a big sparse or a hostile file would
 * have them take room for millions of codes it does not hold.
 */
struct code *_uevent_sym_code_add(struct code_list *l, uint64_t addr, uint64_t size,
				  uint64_t start, const char *name, size_t name_len)
{
	struct code *c;

	if (_uevent_sym_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) < 0)
		return NULL;
	c = &l->v[l->n];
	memset(c, 0, sizeof(*c));
	c->name = name_copy(l, name, name_len);
	if (!c->name)
		return NULL;
	c->addr = addr;
	c->size = size;
	c->start = start;
	c->end = TIME_MAX;
	if (!l->no_index) {
		if (l->n >= UINT32_MAX ||
		    _uevent_sym_grow((void **)&l->by_addr, &l->idx_cap, l->n,
				     sizeof(*l->by_addr)) < 0 ||
		    _uevent_sym_grow((void **)&l->node, &l->node_cap, l->n, sizeof(*l->node)) < 0)
			return NULL;	/* its name stays in the block, unused */
		l->node[l->n].addr = addr;
		l->node[l->n].to = addr + (size ? size : 1);
		l->by_addr[l->n] = l->n;
		if (size > l->max_size)
			l->max_size = size;
	}
	l->n++;
	return c;
}

/* A sort key: the address beside the index, so that sorting reads one array in order
 * rather than each code's struct at random (at 800k codes, 16M cache misses). */
struct addr_key {
	uint64_t	addr;
	size_t		i;
};

#define RADIX_BITS	11
#define RADIX		(1u << RADIX_BITS)

/*
 * Sorts n keys by address, keys of one address kept in the order given (an LSD radix
 * sort, 11 bits a pass, a pass skipped where every key has the same digit: addresses
 * share their top bits). Linear, and each pass reads and writes in order, where a
 * comparison sort of a million keys misses the cache at every level. tmp: room for n.
 */
static void key_sort(struct addr_key *k, struct addr_key *tmp, size_t n)
{
	struct addr_key *t, *out = k;
	size_t count[RADIX], i, sum, c;
	unsigned int shift;

	for (shift = 0; shift < 64; shift += RADIX_BITS) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(k[i].addr >> shift) & (RADIX - 1)]++;
		if (count[(k[0].addr >> shift) & (RADIX - 1)] == n)
			continue;
		for (i = sum = 0; i < RADIX; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[count[(k[i].addr >> shift) & (RADIX - 1)]++] = k[i];
		t = k;
		k = tmp;
		tmp = t;
	}
	if (k != out)
		memcpy(out, k, n * sizeof(*k));
}

static int by_addr_less(const struct code *v, size_t x, size_t y)
{
	return v[x].addr < v[y].addr || (v[x].addr == v[y].addr && x < y);
}

/* Sorts the codes added since the last lookup into by_addr. */
static int code_index(struct code_list *l)
{
	size_t *m, i, j, k, n = l->n, s = l->sorted, first = s;
	struct addr_key *key;

	if (s == n)
		return 0;
	key = malloc(2 * (n - s) * sizeof(*key));
	if (!key)
		return -ENOMEM;
	for (i = s; i < n; i++)	/* in the order added: the sort keeps it among equals */
		key[i - s] = (struct addr_key){ l->v[l->by_addr[i]].addr, l->by_addr[i] };
	key_sort(key, key + (n - s), n - s);
	for (i = s; i < n; i++)
		l->by_addr[i] = key[i - s].i;
	free(key);
	if (s && by_addr_less(l->v, l->by_addr[s], l->by_addr[s - 1])) {
		m = malloc(n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (i = 0, j = s, k = 0; k < n; k++) {
			if (j < n && (i == s || !by_addr_less(l->v, l->by_addr[i], l->by_addr[j]))) {
				if (j == s)	/* below it, each position holds what it held */
					first = k;
				m[k] = l->by_addr[j++];
			} else {
				m[k] = l->by_addr[i++];
			}
		}
		memcpy(l->by_addr, m, n * sizeof(*m));
		free(m);
	}
	if (l->sum_ok > first)
		l->sum_ok = first;
	l->sorted = n;
	return 0;
}

/* ---- the lookup's sums: runs of codes by address it can pass over ------------------ */

/*
 * A lookup walks down by_addr from the last code at or below its address, as far back as
 * the longest code reaches: one long code (a perf-map line of a huge size, even one that a
 * later line ended) would have every lookup walk the whole list. So, once a lookup has
 * walked far, the list gets sums: for each run of SUM_RUN positions, then each run of
 * SUM_RUN runs and so on up to one, the furthest byte, earliest start and latest end of
 * its codes (a code never live counts for nothing). A walk passes over the largest run
 * below it whose codes cannot hold the address at the time, so it looks at the codes
 * that can and at most a run's worth beside each. The sums stay bounds as codes end
 * (ends only fall); an ended code's runs are summed again, for a walk to pass them by.
 */
#define SUM_BITS	4
#define SUM_RUN		((size_t)1 << SUM_BITS)
#define SCAN_MAX	32	/* codes a lookup looks at before it makes the sums (it
				   uses them at once where they are made and current) */

/* A level's node count: level k sums runs of SUM_RUN^(k+1) of cap positions. */
static size_t sum_nodes(size_t cap, unsigned int k)
{
	unsigned int shift = SUM_BITS * (k + 1);

	return shift >= 64 ? 1 : ((cap - 1) >> shift) + 1;
}

static void sum_add(struct code_sum *to, const struct code_sum *s)
{
	if (s->last > to->last)
		to->last = s->last;
	if (s->start < to->start)
		to->start = s->start;
	if (s->end > to->end)
		to->end = s->end;
}

/*
 * Node i of level k (off: its first) made again, over the positions below n: from the
 * codes (level 0) or from the level below's nodes (below: that level's first).
 */
static void sum_make(struct code_list *l, unsigned int k, size_t off, size_t below, size_t i,
		     size_t n)
{
	struct code_sum sum = { 0, UINT64_MAX, 0 };
	size_t j = i << SUM_BITS, e = j + SUM_RUN;

	if (!k) {
		for (e = e < n ? e : n; j < e; j++) {
			const struct code *c = &l->v[l->by_addr[j]];
			uint64_t size = c->size ? c->size : 1;
			struct code_sum s = { size - 1 > UINT64_MAX - c->addr ? UINT64_MAX :
					      c->addr + size - 1, c->start, c->end };

			if (c->end > c->start)	/* else never live: never found */
				sum_add(&sum, &s);
		}
	} else {
		size_t m = ((n - 1) >> (SUM_BITS * k)) + 1;	/* level k - 1's nodes in use */

		for (e = e < m ? e : m; j < e; j++)
			sum_add(&sum, &l->sum[below + j]);
	}
	l->sum[off + i] = sum;
}

/* The sums over every position, made where they are stale (or first). */
static int sum_refresh(struct code_list *l)
{
	size_t n = l->n, from = l->sum_ok, off = 0, below = 0, nodes = 0, i;
	unsigned int k;

	if (from >= n)
		return 0;
	if (n > l->sum_cap) {
		size_t cap = l->sum_cap ? l->sum_cap : 1024, all = 0;
		struct code_sum *sum;

		while (cap < n)
			cap *= 2;
		for (k = 0; !k || sum_nodes(cap, k - 1) > 1; k++)
			all += sum_nodes(cap, k);
		sum = malloc(all * sizeof(*sum));
		if (!sum)
			return -ENOMEM;
		free(l->sum);
		l->sum = sum;
		l->sum_cap = cap;
		from = 0;
	}
	for (k = 0; !k || nodes > 1; k++, below = off, off += nodes) {
		nodes = sum_nodes(l->sum_cap, k);
		for (i = from >> (SUM_BITS * (k + 1)); i <= (n - 1) >> (SUM_BITS * (k + 1)); i++)
			sum_make(l, k, off, below, i, n);
	}
	l->sum_ok = n;
	return 0;
}

/* Code i's end fell: its runs summed again, so that walks can pass them. */
static void sum_ended(struct code_list *l, size_t i)
{
	size_t lo = 0, hi = l->sorted, off = 0, below = 0, nodes = 0;
	unsigned int k;

	if (!l->sum_cap || i >= l->sorted)
		return;		/* no sums, or it is not in them yet */
	while (lo < hi) {	/* its position */
		size_t mid = lo + (hi - lo) / 2;

		if (by_addr_less(l->v, l->by_addr[mid], i))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= l->sum_ok)
		return;
	for (k = 0; !k || nodes > 1; k++, below = off, off += nodes) {
		nodes = sum_nodes(l->sum_cap, k);
		sum_make(l, k, off, below, lo >> (SUM_BITS * (k + 1)), l->sum_ok);
	}
}

/*
 * Where a walk down from position p (the next to look at: p - 1) may go on from: the
 * first position of the largest run holding p - 1 whose codes cannot hold addr at time
 * t, or p.
 */
static size_t sum_skip(const struct code_list *l, size_t p, uint64_t addr, uint64_t t)
{
	size_t to = p, off = 0, nodes = 0;
	unsigned int k, shift;

	for (k = 0; !k || nodes > 1; k++, off += nodes) {
		const struct code_sum *s;

		shift = SUM_BITS * (k + 1);
		nodes = sum_nodes(l->sum_cap, k);
		s = &l->sum[off + ((p - 1) >> shift)];
		if (s->last >= addr && s->start <= t && t < s->end)
			break;
		to = ((p - 1) >> shift) << shift;
	}
	return to;
}

/* ---- the live treap: keys (addr, v index), heap on a hash of the index ---- */

/* splitmix64's finalizer: a multiplicative hash alone tracks keys made the same way */
static uint32_t live_prio(size_t t)
{
	uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ull;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)(x ^ (x >> 31));
}

/* t into lo (keys below (addr, i)) and hi (the rest). */
static void live_split(struct live_node *v, uint32_t t, uint64_t addr, size_t i, uint32_t *lo,
		       uint32_t *hi)
{
	while (t) {
		struct live_node *c = &v[t - 1];

		if (c->addr < addr || (c->addr == addr && t - 1 < i)) {
			*lo = t;
			lo = &c->kid[1];
			t = c->kid[1];
		} else {
			*hi = t;
			hi = &c->kid[0];
			t = c->kid[0];
		}
	}
	*lo = *hi = 0;
}

/* a's keys all below b's */
static uint32_t live_merge(struct live_node *v, uint32_t a, uint32_t b)
{
	uint32_t root = 0, *at = &root;

	while (a && b) {
		if (live_prio(a) > live_prio(b)) {
			*at = a;
			at = &v[a - 1].kid[1];
			a = v[a - 1].kid[1];
		} else {
			*at = b;
			at = &v[b - 1].kid[0];
			b = v[b - 1].kid[0];
		}
	}
	*at = a ? a : b;
	return root;
}

static void live_insert(struct code_list *l, size_t i)
{
	uint32_t lo, hi;

	l->node[i].kid[0] = l->node[i].kid[1] = 0;
	live_split(l->node, l->live, l->node[i].addr, i, &lo, &hi);
	l->live = live_merge(l->node, live_merge(l->node, lo, (uint32_t)i + 1), hi);
}

static void live_remove(struct code_list *l, size_t i)
{
	uint32_t lo, mid, hi;

	live_split(l->node, l->live, l->node[i].addr, i, &lo, &mid);
	live_split(l->node, mid, l->node[i].addr, i + 1, &mid, &hi);
	l->live = live_merge(l->node, lo, hi);
}

/* The first live code at or after (addr, i) (into *above), and the last before addr
 * (*below): v index + 1, 0 if none. One walk down. */
static void live_seek(const struct code_list *l, uint64_t addr, size_t i, uint32_t *below,
		      uint32_t *above)
{
	uint32_t t = l->live;

	*below = *above = 0;
	while (t) {
		const struct live_node *c = &l->node[t - 1];

		if (c->addr < addr || (c->addr == addr && t - 1 < i)) {
			*below = t;
			t = c->kid[1];
		} else {
			*above = t;
			t = c->kid[0];
		}
	}
}

/* Ends c at time t (unloaded, moved, replaced). */
void _uevent_sym_code_end(struct code_list *l, struct code *c, uint64_t t)
{
	if (c->end == TIME_MAX && !l->no_index)
		live_remove(l, (size_t)(c - l->v));
	c->end = t;
	sum_ended(l, (size_t)(c - l->v));
}

/*
 * Ends, at time t, the live code of l that overlaps [addr, addr+size): it was replaced.
 * Returns when the new code ends: TIME_MAX, or the start of a live code over the same
 * bytes loaded after t (records a little out of time order), which replaced it.
 */
uint64_t _uevent_sym_code_end_overlap(struct code_list *l, uint64_t addr, uint64_t size, uint64_t t)
{
	uint64_t end = addr + (size ? size : 1), until = TIME_MAX;
	uint32_t below, k;

	live_seek(l, addr, 0, &below, &k);
	if (below && l->node[below - 1].to > addr)
		k = below;	/* the one below reaches into it */
	while (k && l->node[k - 1].addr < end) {
		struct code *c = &l->v[k - 1];
		uint64_t a = c->addr;

		if (c->start <= t)
			_uevent_sym_code_end(l, c, t);
		else if (c->start < until)
			until = c->start;
		live_seek(l, a, k, &below, &k);	/* the next after it */
	}
	return until;
}

/* A new code over [addr, addr+size) from time t, ending the ones it replaces. */
struct code *_uevent_sym_code_replace(struct code_list *l, uint64_t addr, uint64_t size,
				      uint64_t t, const char *name, size_t name_len)
{
	uint64_t until = _uevent_sym_code_end_overlap(l, addr, size, t);
	struct code *c = _uevent_sym_code_add(l, addr, size, t, name, name_len);

	if (c && until != TIME_MAX)
		c->end = until;
	else if (c)
		live_insert(l, (size_t)(c - l->v));
	return c;
}

/* The live code at addr of l at time t: the latest started of those covering it. */
const struct code *_uevent_sym_code_find(struct code_list *l, uint64_t addr, uint64_t t)
{
	const struct code *best = NULL;
	size_t lo = 0, hi = l->n, left = SCAN_MAX, to;
	uint64_t span = l->max_size ? l->max_size : 1;
	int sums;	/* 1: walking by the sums, 0: not yet, -1: none to be had */

	if (code_index(l) < 0)
		return NULL;
	sums = l->sum_cap && l->sum_ok == l->n;
	/* the codes starting at or below addr, back as far as the largest one reaches */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->v[l->by_addr[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0) {
		const struct code *c;

		if (sums > 0) {
			if ((to = sum_skip(l, lo, addr, t)) < lo) {
				lo = to;
				continue;
			}
		} else if (!sums && !left--) {
			sums = sum_refresh(l) < 0 ? -1 : 1;
			continue;
		}
		c = &l->v[l->by_addr[--lo]];
		if (addr - c->addr >= span)
			break;
		if (addr - c->addr < (c->size ? c->size : 1) && c->start <= t && t < c->end &&
		    (!best || c->start >= best->start))
			best = c;
	}
	return best;
}

void _uevent_sym_code_free(struct code_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].file);
	while (l->names) {
		struct name_block *b = l->names;

		l->names = b->next;
		free(b);
	}
	free(l->v);
	free(l->by_addr);
	free(l->node);
	free(l->sum);
	memset(l, 0, sizeof(*l));
}

/* A live code of the process whose index (or, index 0, address) is given: the one live
 * at addr (the treap: O(log n)) when it has that index, else by a scan. */
struct code *_uevent_sym_code_live(struct code_list *l, uint64_t index, uint64_t addr)
{
	uint32_t below, at;
	size_t i;

	live_seek(l, addr, 0, &below, &at);
	if (at && l->node[at - 1].addr == addr && (!index || l->v[at - 1].index == index))
		return &l->v[at - 1];
	for (i = l->n; i-- > 0;) {
		struct code *c = &l->v[i];

		if (c->end == TIME_MAX && (index ? c->index == index : c->addr == addr))
			return c;
	}
	for (i = l->n; i-- > 0;)	/* an index we never saw: by address */
		if (l->v[i].end == TIME_MAX && l->v[i].addr == addr)
			return &l->v[i];
	return NULL;
}

/* A JIT load at time t, ending what it replaces; add_only: not yet (code_settle does it
 * for all the loads added so at once). */
int _uevent_sym_jit_load(struct uevent_symbolizer *s, struct code_list *l, uint64_t addr,
			 uint64_t size, uint64_t index, const char *name, size_t len, uint64_t t,
			 uint32_t source, const char *dso, int add_only)
{
	struct code *c;

	c = add_only ? _uevent_sym_code_add(l, addr, size, t, name, len) :
		       _uevent_sym_code_replace(l, addr, size, t, name, len);
	if (!c)
		return -ENOMEM;
	c->index = index;
	c->source = source;
	c->dso = _uevent_sym_intern(s, dso);
	return c->dso ? 1 : -ENOMEM;
}

int _uevent_sym_jit_move(struct code_list *l, uint64_t index,
			 uint64_t old_addr, uint64_t new_addr, uint64_t size, uint64_t t)
{
	struct code *c = _uevent_sym_code_live(l, index, old_addr), *n;
	char *name, *file;
	uint32_t line, source;
	const char *dso;

	if (!c)
		return 0;	/* moved code we never saw loaded */
	_uevent_sym_code_end(l, c, t);
	name = c->name;
	file = c->file;
	line = c->line;
	source = c->source;
	dso = c->dso;
	if (!size)
		size = c->size;
	n = _uevent_sym_code_replace(l, new_addr, size, t, name, strlen(name));	/* may move l->v */
	if (!n)
		return -ENOMEM;
	n->index = index;
	n->source = source;
	n->dso = dso;
	n->line = line;
	n->file = file ? strdup(file) : NULL;
	return 1;
}

/* A line in the sweep below: where its bytes end, and which it is. */
struct sweep {
	uint64_t	to;
	size_t		i;
};

/* A binary heap of sweeps by i, the largest (up) or the smallest on top. */
static int sweep_above(struct sweep a, struct sweep b, int up)
{
	return up ? a.i > b.i : a.i < b.i;
}

static void sweep_push(struct sweep *h, size_t *n, struct sweep e, int up)
{
	size_t k = (*n)++;

	for (; k && sweep_above(e, h[(k - 1) / 2], up); k = (k - 1) / 2)
		h[k] = h[(k - 1) / 2];
	h[k] = e;
}

static void sweep_pop(struct sweep *h, size_t *n, int up)
{
	struct sweep e = h[--*n];
	size_t k = 0, c;

	for (; (c = 2 * k + 1) < *n; k = c) {
		if (c + 1 < *n && sweep_above(h[c + 1], h[c], up))
			c++;
		if (!sweep_above(h[c], e, up))
			break;
		h[k] = h[c];
	}
	h[k] = e;
}

/*
 * The map has no times: a later line for some of the same bytes replaces an earlier one
 * (ends it at 0: never named). Lines are added whole and settled here at once: a line
 * ends if any later line overlaps it. One sweep by address, the lines begun before the
 * current one and reaching into it in two heaps: the latest (does a later one cover the
 * current?) and the earliest (which earlier ones does the current end?). O(n log n),
 * over two arrays read in order, not a tree walked at random per line.
 */
int _uevent_sym_pmap_settle(struct code_list *l)
{
	struct sweep *hi, *lo;
	size_t nhi = 0, nlo = 0, k, w = SIZE_MAX;	/* w: the lowest line past 2^64 */

	if (code_index(l) < 0 || !(hi = malloc(2 * (l->n + 1) * sizeof(*hi))))
		return -ENOMEM;
	lo = hi + l->n + 1;
	for (k = 0; k < l->n; k++) {
		size_t b = l->by_addr[k];
		uint64_t addr = l->node[b].addr;	/* not v[b]: 3x the bytes */
		struct sweep e = { l->node[b].to, b };

		while (nhi && hi[0].to <= addr)
			sweep_pop(hi, &nhi, 1);
		if (nhi && hi[0].i > b)
			l->v[b].end = 0;
		while (nlo && (lo[0].to <= addr || lo[0].i < b)) {
			if (lo[0].to > addr)
				l->v[lo[0].i].end = 0;
			sweep_pop(lo, &nlo, 0);
		}
		sweep_push(hi, &nhi, e, 1);
		sweep_push(lo, &nlo, e, 0);
	}
	free(hi);
	/*
	 * A line that reaches past 2^64 (its end wraps) neither ends the lines above it nor
	 * is ended by them, and holds every address above it: a lookup there names the
	 * lowest such line, never one above it. Those are ended, so that lookups pass them
	 * by; and lookups look back only as far as the longest line left. Two passes in the
	 * order added: arrays read in order.
	 */
	for (k = 0; k < l->n; k++)
		if (l->v[k].end && l->node[k].to <= l->node[k].addr &&
		    (w == SIZE_MAX || by_addr_less(l->v, k, w)))
			w = k;
	for (k = 0, l->max_size = 0; k < l->n; k++) {
		struct code *c = &l->v[k];

		if (c->end && w != SIZE_MAX && by_addr_less(l->v, w, k))
			c->end = 0;
		else if (c->end && c->size > l->max_size)
			l->max_size = c->size;
	}
	return 0;
}

/* ---- settling many loads at once: a jitdump's ------------------------------------ */

/*
 * A min-tree over address cells, updated with ever smaller values (the loads are settled
 * from the latest back) and asked for the least over a range. No push-down: a node's
 * tag holds for every cell under it, its mn is the least of any cell under it.
 */
struct mintree {
	uint32_t	*mn, *tag;
};

static uint32_t mt_query(const struct mintree *t, size_t node, size_t nl, size_t nr,
			 size_t l, size_t r)
{
	size_t mid = nl + (nr - nl) / 2;
	uint32_t m, q;

	if (r <= nl || nr <= l)
		return UINT32_MAX;
	if (l <= nl && nr <= r)
		return t->mn[node];
	m = t->tag[node];
	if ((q = mt_query(t, 2 * node, nl, mid, l, r)) < m)
		m = q;
	if ((q = mt_query(t, 2 * node + 1, mid, nr, l, r)) < m)
		m = q;
	return m;
}

static void mt_update(struct mintree *t, size_t node, size_t nl, size_t nr, size_t l,
		      size_t r, uint32_t v)
{
	size_t mid = nl + (nr - nl) / 2;

	if (r <= nl || nr <= l)
		return;
	if (v < t->mn[node])
		t->mn[node] = v;	/* a cell under it is covered */
	if (l <= nl && nr <= r) {
		if (v < t->tag[node])
			t->tag[node] = v;
		return;
	}
	mt_update(t, 2 * node, nl, mid, l, r, v);
	mt_update(t, 2 * node + 1, mid, nr, l, r, v);
}

/* The treap of the live codes, built in one pass over them by address (a Cartesian tree
 * on their priorities), for a list whose treap is empty. */
static int live_build(struct code_list *l)
{
	uint32_t *stack, x, last;
	size_t sp = 0, k, i;

	if (code_index(l) < 0 || !(stack = malloc(l->n * sizeof(*stack) + 1)))
		return -ENOMEM;
	for (k = 0; k < l->n; k++) {
		i = l->by_addr[k];
		if (l->v[i].end != TIME_MAX)
			continue;
		x = (uint32_t)i + 1;
		last = 0;
		while (sp && live_prio(stack[sp - 1]) < live_prio(x))
			last = stack[--sp];
		l->node[i].kid[0] = last;
		l->node[i].kid[1] = 0;
		if (sp)
			l->node[stack[sp - 1] - 1].kid[1] = x;
		stack[sp++] = x;
	}
	l->live = sp ? stack[0] : 0;
	free(stack);
	return 0;
}

/*
 * The codes of a list with no live code before them, added whole (jit_load's add_only)
 * with times that never fall: each ends when the first code after it over any of its
 * bytes starts, which is what adding them one by one gives. Found from the latest back,
 * with a min-tree over the distinct edges of the codes, in O(n log n) over arrays
 * rather than a treap walked at random for each (a cache miss a step once the codes
 * outgrow the cache); then the live ones make the treap, in one pass.
 */
int _uevent_sym_code_settle(struct code_list *l)
{
	size_t u = 0, i, size = 1, n = l->n;
	struct addr_key *e;
	struct mintree t;
	uint32_t q, *edge;

	if (!n || l->no_index)
		return 0;
	/* no two overlap (no address reused): every one stays live */
	if (code_index(l) < 0)
		return -ENOMEM;
	for (i = 1; i < n && l->node[l->by_addr[i - 1]].to <= l->node[l->by_addr[i]].addr; i++)
		;
	if (i >= n)
		return live_build(l);
	/* each code's two edges, sorted, numbered: the cells between them */
	if (!(e = malloc(4 * n * sizeof(*e))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		e[2 * i] = (struct addr_key){ l->node[i].addr, 2 * i };
		e[2 * i + 1] = (struct addr_key){ l->node[i].to, 2 * i + 1 };
	}
	key_sort(e, e + 2 * n, 2 * n);
	edge = (uint32_t *)(void *)(e + 2 * n);	/* the sort's room, free again */
	for (i = 0; i < 2 * n; i++) {
		if (i && e[i].addr != e[i - 1].addr)
			u++;
		edge[e[i].i] = (uint32_t)u;
	}
	while (size < u + 1)
		size *= 2;
	t.mn = malloc(4 * size * sizeof(*t.mn));
	if (!t.mn) {
		free(e);
		return -ENOMEM;
	}
	t.tag = t.mn + 2 * size;
	memset(t.mn, 0xff, 4 * size * sizeof(*t.mn));
	for (i = n; i-- > 0;) {
		if ((q = mt_query(&t, 1, 0, size, edge[2 * i], edge[2 * i + 1])) != UINT32_MAX)
			l->v[i].end = l->v[q].start;
		mt_update(&t, 1, 0, size, edge[2 * i], edge[2 * i + 1], (uint32_t)i);
	}
	free(t.mn);
	free(e);
	return live_build(l);
}
