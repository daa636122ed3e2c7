/* time-sort.c - _uevent_time_sort() against a plain stable sort, on the shapes the
 * readers give it: in order, perf's own files (a few entries out of place, early
 * records made of the threads perf found), rings merged (k runs), runs of equal times,
 * pieces that meet and nest, and no order at all: over seconds (sorted by radix) and
 * over hours (too wide for it: merged). Stable: entries of one time keep their order, so
 * .what (the entry's place before the sort) must rise among equal times. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "perf-internal.h"
#include "tap.h"

static int by_time_then_place(const void *a, const void *b)
{
	const struct _uevent_timed *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->what < y->what ? -1 : x->what > y->what;
}

/* v sorted by _uevent_time_sort() equals the reference; what it says on failure */
static int same_as_reference(const struct _uevent_timed *in, size_t n, const char **why)
{
	struct _uevent_timed *v = malloc((n + 1) * sizeof(*v)), *r = malloc((n + 1) * sizeof(*r));
	int good = 0;

	*why = "out of memory";
	if (!v || !r)
		goto out;
	memcpy(v, in, n * sizeof(*v));
	memcpy(r, in, n * sizeof(*r));
	qsort(r, n, sizeof(*r), by_time_then_place);
	if (_uevent_time_sort(v, n) != 0) {
		*why = "returned an error";
		goto out;
	}
	*why = "differs from a stable sort";
	good = n == 0 || memcmp(v, r, n * sizeof(*v)) == 0;
out:
	free(v);
	free(r);
	return good;
}

enum shape { IN_ORDER, FEW_LATE, EARLY_BLOCK, RINGS, EQUAL_RUNS, BACKWARDS, SECONDS, WIDE,
	     NO_ORDER, NSHAPES };

static const char *const shape_name[NSHAPES] = {
	"in order", "a few late entries", "an early block at the end", "k rings merged",
	"runs of equal times", "backwards", "no order over seconds (three radix passes)",
	"no order over hours (too wide for the radix: merged)", "no order",
};

/* entries .what = i (their place), times of the shape */
static void fill(struct _uevent_timed *v, size_t n, enum shape s)
{
	size_t i, k = 1 + tap_rand() % 16, late = 1 + tap_rand() % 8;

	for (i = 0; i < n; i++) {
		v[i].what = i;
		switch (s) {
		case IN_ORDER:
			v[i].time = (i ? v[i - 1].time : 1000) + tap_rand() % 3;
			break;
		case FEW_LATE:	/* in order, but some come after a later one: late by up to 40 */
			v[i].time = 1000 + 10 * i - (tap_rand() % late == 0 ? tap_rand() % 400 : 0);
			break;
		case EARLY_BLOCK:	/* perf's thread records: early, written last */
			v[i].time = i < n - n / 8 ? 1000 + 10 * i : 1 + tap_rand() % 2000;
			break;
		case RINGS:	/* k rings' records, each ring in order, round robin */
			v[i].time = 1000 + (i / k) * 10 + (i % k) * (tap_rand() % 30);
			break;
		case EQUAL_RUNS:	/* few times, many equal: only stability tells them apart */
			v[i].time = (i / 7) % 5 + (tap_rand() % 3 == 0);
			break;
		case BACKWARDS:
			v[i].time = n - i;
			break;
		case SECONDS:	/* under 2^33 ns apart */
			v[i].time = 5000 + (((uint64_t)tap_rand() << 16) ^ tap_rand()) % (1ull << 33);
			break;
		case WIDE:	/* 2^40 ns apart, some of them */
			v[i].time = 5000 + (((uint64_t)tap_rand() << 24) ^ tap_rand()) % (1ull << 40);
			break;
		default:
			v[i].time = tap_rand() % (n + 1);
			break;
		}
	}
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 5, 17, 100, 1000, 50000 };
	const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	struct _uevent_timed *v = malloc(50000 * sizeof(*v));
	const char *why = "";
	size_t z;
	int s, round, good;

	if (!v)
		return 99;
	plan(NSHAPES * 2 + 1);
	for (s = 0; s < NSHAPES; s++) {
		for (z = 0; z < nsizes; z++) {
			for (good = 1, round = 0; good && round < (sizes[z] > 1000 ? 5 : 200); round++) {
				fill(v, sizes[z], (enum shape)s);
				good = same_as_reference(v, sizes[z], &why);
			}
			if (!good)
				break;
		}
		ok(good, "%s: sorted and stable at every size%s%s", shape_name[s],
		   good ? "" : ": ", good ? "" : why);
	}
	/* pieces that meet, nest and chain: short arrays of small times, every one of them */
	for (s = 0; s < NSHAPES; s++) {
		for (good = 1, round = 0; good && round < 20000; round++) {
			size_t i, n = 2 + tap_rand() % 12;

			for (i = 0; i < n; i++) {
				v[i].what = i;
				v[i].time = s == NO_ORDER ? tap_rand() % 4 : tap_rand() % (2 + (size_t)s * 3);
			}
			good = same_as_reference(v, n, &why);
		}
		ok(good, "short arrays, times below %d: %d of 20000 right%s%s",
		   s == NO_ORDER ? 4 : 2 + s * 3, good ? 20000 : round - 1, good ? "" : ": ",
		   good ? "" : why);
	}
	/* a sorted array is left alone and costs no memory: nothing to check but the order */
	for (z = 0; z < 1000; z++)
		v[z] = (struct _uevent_timed){ z / 3, z };
	ok(same_as_reference(v, 1000, &why), "an array in order stays as it is");
	free(v);
	return exit_status();
}
