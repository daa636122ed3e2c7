/* time-sort.c - records put in time order as perf's rings wrote them: in runs. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "perf-internal.h"

/* The end of the run in time order that starts at v[i] (v[i] itself at least). */
static size_t run_end(const struct _uevent_timed *v, size_t i, size_t n)
{
	for (i++; i < n && v[i - 1].time <= v[i].time; i++)
		;
	return i;
}

/*
 * v[0..n) stably sorted with tmp (n entries): each pass merges each two neighbouring
 * runs into one, so k runs take log2(k) passes over the entries, with no comparison
 * callback. Inlined: called, its merge loop took 10% longer on a 64-ring file.
 */
static inline __attribute__((always_inline)) void
merge_runs(struct _uevent_timed *v, size_t n, struct _uevent_timed *tmp)
{
	struct _uevent_timed *src = v, *dst = tmp, *t;
	size_t i, a, b, x, y, k, runs;

	do {
		for (runs = 0, i = 0; i < n; i = b, runs++) {
			a = run_end(src, i, n);
			b = a < n ? run_end(src, a, n) : n;
			/* the left run's entry first on a tie: stable */
			for (x = i, y = a, k = i; x < a && y < b; k++)
				dst[k] = src[y].time < src[x].time ? src[y++] : src[x++];
			memcpy(dst + k, src + x, (a - x) * sizeof(*dst));
			memcpy(dst + k + (a - x), src + y, (b - y) * sizeof(*dst));
		}
		t = src, src = dst, dst = t;
	} while (runs > 1);
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

/* A piece of many runs and times within 2^33 ns (8.6 s) is sorted by radix instead. */
#define RADIX_MIN	16384		/* entries: fewer merge as fast */
#define RADIX_RUNS	8		/* runs: fewer take as few passes merged */
#define RADIX_BITS	11
#define RADIX_PASSES	3

/*
 * v[0..n) stably sorted with tmp by radix passes of up to 11 bits of each time less the
 * least, with no comparison. Rings that a recorder read in rounds interleave at random,
 * and merging 16 of them took log2 of the runs in passes at about 2 ns a move (a third
 * of reading a 16-CPU recording); the radix passes took less than half that. -1 for a
 * piece of fewer runs or wider times: merge it.
 */
static int radix_piece(struct _uevent_timed *v, size_t n, struct _uevent_timed *tmp)
{
	uint32_t cnt[RADIX_PASSES][1u << RADIX_BITS];
	struct _uevent_timed *src = v, *dst = tmp, *t;
	uint64_t lo = v[0].time, hi = v[0].time, k, mask;
	size_t i, runs = 1, p, passes, bits, w, b, sum, c;

	if (n >= UINT32_MAX)
		return -1;
	for (i = 1; i < n; i++) {
		k = v[i].time;
		runs += k < v[i - 1].time;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	if (runs < RADIX_RUNS || (hi - lo) >> (RADIX_BITS * RADIX_PASSES))
		return -1;
	/* as few passes as the times' span needs, of digits as narrow as those passes
	 * allow: fewer buckets to scatter into (9 bits rather than 11 took 15% less) */
	for (bits = 1; bits < 64 && (hi - lo) >> bits; bits++)
		;
	passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
	w = (bits + passes - 1) / passes;
	mask = ((uint64_t)1 << w) - 1;
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < n; i++)
		for (k = v[i].time - lo, p = 0; p < passes; p++, k >>= w)
			cnt[p][k & mask]++;
	for (p = 0; p < passes; p++) {
		for (sum = 0, b = 0; b <= mask; b++) {
			c = cnt[p][b];
			cnt[p][b] = (uint32_t)sum;
			sum += c;
		}
		/* in order within a digit: stable, so the passes sort by the whole time */
		for (i = 0; i < n; i++) {
			k = ((src[i].time - lo) >> (w * p)) & mask;
			dst[cnt[p][k]++] = src[i];
		}
		t = src, src = dst, dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	return 0;
}

/*
 * Stable by time, so entries of one time keep their order (the file's, the ring's).
 * Only the pieces of v out of place are merged: an entry earlier than one before it
 * makes a piece from the first entry later than it, and pieces that meet are one. Every
 * entry outside them is no earlier than those before it and no later than those after,
 * so each piece is sorted alone. perf's own files are most of them in order (what is out
 * of place is the records perf made of the threads it found, before the first samples,
 * and a few late ones): a few thousand entries are merged, not the whole file. A record
 * of the next round that comes before some of this round's (FINISHED_ROUND only bounds
 * how far) is merged in like any other. -ENOMEM leaves v as it was.
 */
int _uevent_time_sort(struct _uevent_timed *v, size_t n)
{
	struct _uevent_timed *tmp;
	size_t i, j, k = 0;
	uint64_t most;

	i = run_end(v, 0, n);
	if (i >= n)
		return 0;
	/* the pieces (first, last) in tmp[0..k), merged last first with tmp[first..last]:
	 * a piece is 2 entries at least, so the k-th starts at 2k or later */
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (most = v[i - 1].time; i < n; i++) {
		uint64_t t = v[i].time;

		if (t >= most) {
			most = t;
			continue;
		}
		/* no earlier than all before the last piece (the entry before a piece is in
		 * place: the greatest before), and the first after it later (or this one):
		 * the piece goes on to this one */
		if (k) {
			size_t first = tmp[k - 1].time, after = tmp[k - 1].what + 1;

			if ((!first || v[first - 1].time <= t) &&
			    (after == i || v[after].time > t)) {
				tmp[k - 1].what = i;
				continue;
			}
		}
		/* else back over the entries in place (in order) later than it, and every
		 * piece met */
		for (j = i;;) {
			size_t lo = k ? tmp[k - 1].what + 1 : 0;

			while (j > lo && v[j - 1].time > t)
				j--;
			if (j > lo || !k)
				break;
			j = tmp[--k].time;
		}
		tmp[k].time = j;
		tmp[k++].what = i;
	}
	while (k-- > 0) {
		j = tmp[k].time;
		i = tmp[k].what + 1 - j;
		if (i < RADIX_MIN || radix_piece(v + j, i, tmp + j) < 0)
			merge_runs(v + j, i, tmp + j);
	}
	free(tmp);
	return 0;
}
