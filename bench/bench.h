/* bench.h - timing helpers shared by the benchmarks. */
#ifndef UEVENT_BENCH_H
#define UEVENT_BENCH_H

#include <time.h>

/* CLOCK_MONOTONIC, in ns. */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best of 5 runs of n iterations, in ns per iteration: the least disturbed run. The
 * empty asm keeps the compiler from hoisting or merging the body across iterations. */
#define MEASURE(n, body)						\
	({								\
		double best_ = 1e30;					\
		for (int r_ = 0; r_ < 5; r_++) {			\
			double t0_ = now();				\
			for (long i_ = 0; i_ < (n); i_++) {		\
				body;					\
				__asm__ volatile("" ::: "memory");	\
			}						\
			double d_ = (now() - t0_) / (n);		\
			if (d_ < best_)					\
				best_ = d_;				\
		}							\
		best_;							\
	})

/* Interleaved best-of-7 of two loops, so drift on a shared machine hits both alike. */
#define MEASURE2(n, a, b, body_a, body_b)				\
	do {								\
		(a) = (b) = 1e30;					\
		for (int r_ = 0; r_ < 7; r_++) {			\
			double t0_ = now(), d_;				\
			for (long i_ = 0; i_ < (n); i_++) {		\
				body_a;					\
				__asm__ volatile("" ::: "memory");	\
			}						\
			d_ = (now() - t0_) / (n);			\
			if (d_ < (a))					\
				(a) = d_;				\
			t0_ = now();					\
			for (long i_ = 0; i_ < (n); i_++) {		\
				body_b;					\
				__asm__ volatile("" ::: "memory");	\
			}						\
			d_ = (now() - t0_) / (n);			\
			if (d_ < (b))					\
				(b) = d_;				\
		}							\
	} while (0)

#endif
