/* bt-load.c - a known load of marks, counters and ranges for t/bpftrace.test to count:
 * marks "alpha" x3 and "beta" x1, counter queue_depth = 1, 2, 4, 8, 100, and ranges
 * "parse" x3 of 2 ms and "io" x2 of 20 ms. */
#include "config.h"

#include <time.h>

#include "uevent.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
}

int main(void)
{
	static const long depths[] = { 1, 2, 4, 8, 100 };
	unsigned i;

	for (i = 0; i < 3; i++)
		uevent_mark("alpha");
	uevent_mark("beta");
	for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++)
		uevent_counter_set("queue_depth", depths[i]);
	for (i = 0; i < 5; i++) {
		uint64_t r = uevent_range_begin(i < 3 ? "parse" : "io");

		sleep_ms(i < 3 ? 2 : 20);
		uevent_range_end(r);
	}
	return 0;
}
