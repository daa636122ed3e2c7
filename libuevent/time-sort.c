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
 * Stable by time, so entries of one time keep their order (the file's, the ring's).
 * Each ring's share of a round is in time order already: a pass merges each two
 * neighbouring runs into one, so k runs take log2(k) passes over the entries, with no
 * comparison callback. A record of the next round that comes before some of this
 * round's (FINISHED_ROUND only bounds how far) is merged in like any other.
 * -ENOMEM leaves v as it was.
 */
int _uevent_time_sort(struct _uevent_timed *v, size_t n)
{
	struct _uevent_timed *tmp, *src = v, *dst, *t;
	size_t i, a, b, x, y, k, runs;

	if (n < 2 || run_end(v, 0, n) == n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
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
	free(tmp);
	return 0;
}
