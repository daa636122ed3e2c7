/* symbolize-index.c - the symbolizer's code lists (libuevent/symbolize-code.c, built in)
 * against a model that looks at every code: a lookup names, of the codes live at the time
 * over the address, the one started last (the lowest, among those started together),
 * whatever the codes' sizes. The lists are made as the symbolizer makes them: JIT loads,
 * moves and unloads in time order and out of it, a jitdump's loads settled at once, a
 * perf map's lines settled at once; long codes among short ones, codes that reach past
 * 2^64, codes never live. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-internal.h"
#include "tap.h"

/* what symbolize-code.c takes from symbolize.c */
int _uevent_sym_grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = realloc(*v, c * elem)))
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

const char *_uevent_sym_intern(struct uevent_symbolizer *s, const char *str)
{
	(void)s;
	return str;
}

#define BASE	0x7f0000000000ull

/* The answer by its definition: every code looked at. */
static const struct code *model(const struct code_list *l, uint64_t addr, uint64_t t)
{
	const struct code *best = NULL;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct code *c = &l->v[i];

		if (addr < c->addr || addr - c->addr >= (c->size ? c->size : 1) || t < c->start ||
		    t >= c->end)
			continue;
		if (!best || c->start > best->start ||
		    (c->start == best->start && c->addr < best->addr))
			best = c;	/* same start and address: the first added stays */
	}
	return best;
}

/* A code's size: mostly a JIT's, some long (to 2^63), some past 2^64, some none. */
static uint64_t some_size(uint64_t addr)
{
	unsigned int k = (unsigned int)(tap_rand() % 100);

	if (k < 85)
		return 16 + tap_rand() % 200;
	if (k < 91)
		return (uint64_t)1 << (12 + tap_rand() % 52);	/* long: 4 KiB to 2^63 */
	if (k < 94)
		return 0x1000 + tap_rand() % 0x100000;
	if (k < 97)
		return UINT64_MAX - addr + 1 + tap_rand() % 64;	/* past 2^64 */
	return 0;
}

/* An address in a region codes crowd (n codes, 64 bytes each on average). */
static uint64_t some_addr(size_t n)
{
	return BASE + tap_rand() % (64 * (uint64_t)n + 1);
}

/* Lookups near the codes' edges and times, and anywhere: how many answers differ. */
static int probe(struct code_list *l, int k, uint64_t tmax, int pmap)
{
	int bad = 0;

	while (k-- > 0 && l->n) {
		const struct code *c = &l->v[tap_rand() % l->n], *got, *want;
		uint64_t sz = c->size ? c->size : 1, addr, t;

		switch (tap_rand() % 7) {
		case 0: addr = c->addr; break;
		case 1: addr = c->addr + sz / 2; break;
		case 2: addr = c->addr + sz - 1; break;
		case 3: addr = c->addr + sz; break;
		case 4: addr = c->addr - 1; break;
		case 5: addr = c->addr + tap_rand() % 256; break;
		default: addr = some_addr(l->n); break;
		}
		switch (pmap ? 99 : tap_rand() % 6) {
		case 0: t = c->start; break;
		case 1: t = c->start - 1; break;
		case 2: t = c->end; break;
		case 3: t = c->end - 1; break;
		case 4: t = UINT64_MAX - 1; break;
		case 5: t = tap_rand() % (tmax + 2); break;
		default: t = 0; break;
		}
		got = _uevent_sym_code_find(l, addr, t);
		want = model(l, addr, t);
		if (got != want) {
			if (!bad)
				diag("%#llx at %llu: %s, want %s", (unsigned long long)addr,
				     (unsigned long long)t, got ? got->name : "(none)",
				     want ? want->name : "(none)");
			bad++;
		}
	}
	return bad;
}

struct loaded {
	uint64_t	index, addr;
};

/*
 * n JIT loads (bulk: the first half added whole and settled, as a jitdump's are), with
 * moves, unloads, ended overlaps (an unregistered kernel symbol) and an exec among them,
 * times now and then out of order; lookups as it goes. Returns the answers that differ.
 */
static int jit_list(size_t n, int bulk, int *had_sums)
{
	struct code_list l;
	struct loaded *v = calloc(n, sizeof(*v));
	uint64_t t = 10;
	size_t i, nv = 0;
	char name[32];
	int bad = 0;

	memset(&l, 0, sizeof(l));
	for (i = 0; v && i < n; i++) {
		unsigned int op = (unsigned int)(tap_rand() % 100);
		uint64_t at = t, addr = some_addr(n);

		t += tap_rand() % 4;
		if (bulk && i < n / 2) {
			snprintf(name, sizeof(name), "load_%zu", i);
			if (_uevent_sym_jit_load(NULL, &l, addr, some_size(addr), i + 1, name,
						 strlen(name), t, 0, "[jit]", 1) < 0)
				break;
			v[nv++] = (struct loaded){ i + 1, addr };
			if (i + 1 == n / 2)
				_uevent_sym_code_settle(&l);
			continue;
		}
		if (tap_rand() % 10 == 0)
			at = t > 60 ? t - tap_rand() % 60 : t;	/* out of order */
		else
			at = t;
		if (op < 70 || !nv) {
			snprintf(name, sizeof(name), "load_%zu", i);
			if (_uevent_sym_jit_load(NULL, &l, addr, some_size(addr), i + 1, name,
						 strlen(name), at, 0, "[jit]", 0) < 0)
				break;
			v[nv++] = (struct loaded){ i + 1, addr };
		} else if (op < 82) {
			struct loaded *u = &v[tap_rand() % nv];
			struct code *c = _uevent_sym_code_live(&l, u->index, u->addr);

			if (c)
				_uevent_sym_code_end(&l, c, at);
		} else if (op < 94) {
			struct loaded *u = &v[tap_rand() % nv];

			if (_uevent_sym_jit_move(&l, u->index, u->addr, addr, tap_rand() % 3 ? 0 :
						 some_size(addr), at) < 0)
				break;
			u->addr = addr;
		} else if (op < 99) {
			_uevent_sym_code_end_overlap(&l, addr, some_size(addr), at);
		} else {
			size_t k;	/* exec: as symbolize.c ends them all */

			for (k = 0; k < l.n; k++)
				if (l.v[k].end > at)
					l.v[k].end = at;
			l.live = 0;
		}
		if (i % 16 == 15)
			bad += probe(&l, 24, t, 0);
	}
	bad += probe(&l, 4000, t, 0);
	*had_sums |= l.sum_cap != 0;
	_uevent_sym_code_free(&l);
	free(v);
	return bad + (i < n);
}

/*
 * The lines a perf map's rule leaves, by its definition: of two lines, where the one
 * first by address (then by line) reaches into the other's first byte, the earlier line
 * ends. A line's end is addr + size (one byte if none) as the reader takes it: past 2^64
 * it wraps, and reaches into nothing.
 */
static void pmap_model(const uint64_t *addr, const uint64_t *size, size_t n, char *gone)
{
	size_t i, j;

	memset(gone, 0, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			size_t a = addr[i] < addr[j] || (addr[i] == addr[j] && i < j) ? i : j;
			size_t b = a == i ? j : i;

			if (i < j && addr[a] + (size[a] ? size[a] : 1) > addr[b])
				gone[i] = 1;
		}
}

/* A perf map of n lines, settled, looked up (at time 0, as the symbolizer does) against
 * its lines as the rule leaves them. Returns the answers that differ. */
static int pmap_list(size_t n, int *had_sums)
{
	uint64_t *addr = malloc(n * sizeof(*addr)), *size = malloc(n * sizeof(*size));
	char *gone = malloc(n), name[32];
	struct code_list l;
	size_t i;
	int bad = 0, k;

	memset(&l, 0, sizeof(l));
	for (i = 0; addr && size && gone && i < n; i++) {
		addr[i] = tap_rand() % 50 ? some_addr(n) : tap_rand();
		size[i] = some_size(addr[i]);
		snprintf(name, sizeof(name), "line_%zu", i);
		if (!_uevent_sym_code_add(&l, addr[i], size[i], 0, name, strlen(name)))
			break;
	}
	if (i < n || _uevent_sym_pmap_settle(&l) < 0) {
		bad++;
		goto out;
	}
	pmap_model(addr, size, n, gone);
	for (k = 0; k < 4000; k++) {
		size_t c = tap_rand() % n, want = n;
		uint64_t sz = size[c] ? size[c] : 1, at;
		const struct code *got;

		switch (tap_rand() % 6) {
		case 0: at = addr[c]; break;
		case 1: at = addr[c] + sz / 2; break;
		case 2: at = addr[c] + sz - 1; break;
		case 3: at = addr[c] + sz; break;
		case 4: at = addr[c] - 1; break;
		default: at = some_addr(n); break;
		}
		for (i = 0; i < n; i++)	/* the lowest left that holds it */
			if (!gone[i] && at >= addr[i] && at - addr[i] < (size[i] ? size[i] : 1) &&
			    (want == n || addr[i] < addr[want]))
				want = i;
		got = _uevent_sym_code_find(&l, at, 0);
		if (got ? (size_t)(got - l.v) != want : want != n) {
			if (!bad)
				diag("perf map %#llx: %s, want line_%zu", (unsigned long long)at,
				     got ? got->name : "(none)", want);
			bad++;
		}
	}
	*had_sums |= l.sum_cap != 0;
out:
	_uevent_sym_code_free(&l);
	free(addr);
	free(size);
	free(gone);
	return bad;
}

int main(void)
{
	static const size_t sizes[] = { 1, 7, 40, 300, 2000 };
	const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	int bad, round, sums;
	size_t z;

	plan(6);
	for (bad = sums = 0, z = 0; z < nsizes; z++)
		for (round = 0; round < 12; round++)
			bad += jit_list(sizes[z], 0, &sums);
	ok(!bad, "JIT loads, moves, unloads, in and out of order: as the model (%d differ)",
	   bad);
	ok(sums, "... some lists walked by their sums");
	for (bad = sums = 0, z = 0; z < nsizes; z++)
		for (round = 0; round < 12; round++)
			bad += jit_list(sizes[z], 1, &sums);
	ok(!bad, "a jitdump's loads settled at once, then more: as the model (%d differ)", bad);
	ok(sums, "... some lists walked by their sums");
	for (bad = sums = 0, z = 0; z < nsizes; z++)
		for (round = 0; round < 12; round++)
			bad += pmap_list(sizes[z], &sums);
	ok(!bad, "perf maps, a later line over an earlier one ending it: as the model (%d differ)",
	   bad);
	ok(sums, "... some lists walked by their sums");
	return exit_status();
}
