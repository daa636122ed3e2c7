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
		merge_runs(v + j, tmp[k].what + 1 - j, tmp + j);
	}
	free(tmp);
	return 0;
}
