/* burn.c - a CPU burner with known function names for t/report.test: burn_hot takes
 * about three quarters of the time, inside a uevent range "parse", burn_cold the rest. */
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

	burn_spin(1000);
	burn_parse(secs * 0.75);
	burn_cold(secs * 0.25);
	return 0;
}
