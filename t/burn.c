/* burn.c - a CPU burner with known function names for t/report.test: burn_hot takes
 * about three quarters of the time, inside a uevent range "parse", burn_cold the rest.
 * `burn SECS CPU` first moves itself to CPU: started elsewhere, its exec's COMM and
 * MMAP records are in another CPU's ring than its samples. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "uevent.h"

/* external, so their names stay in the symbol table as written */
void burn_spin(uint64_t n);
void burn_hot(double secs);
void burn_cold(double secs);
void burn_parse(double secs);

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_spin(uint64_t n)
{
	uint64_t i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

/* The spinning happens here, not in a shared callee, so each owns its samples. */
__attribute__((noinline)) void burn_hot(double secs)
{
	double end = now() + secs;
	uint64_t i, x = sink;

	while (now() < end)
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void burn_cold(double secs)
{
	double end = now() + secs;
	uint64_t i, x = sink;

	while (now() < end)
		for (i = 0; i < 100000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	sink = x;
}

__attribute__((noinline)) void burn_parse(double secs)
{
	uint64_t r = uevent_range_begin("parse");

	burn_hot(secs);
	uevent_range_end(r);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.4;

	if (argc > 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			return 2;
	}

	burn_spin(1000);
	burn_parse(secs * 0.75);
	burn_cold(secs * 0.25);
	return 0;
}
