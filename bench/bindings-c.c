/* bindings-c.c - the C baseline for bench/bindings: ns per disabled and enabled mark. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uevent.h"
#include "bench.h"

int main(void)
{
	UEVENT_OPTS(none, .transport = UEVENT_TRANSPORT_NONE, .flags = UEVENT_OPEN_IGNORE_ENV);
	const char *path = getenv("UEVENT_BENCH_FILE");
	UEVENT_OPTS(file, .transport = UEVENT_TRANSPORT_FILE, .path = path ? path : "bench.perf.data",
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	if (uevent_open(&none) < 0)
		return 1;
	printf("c disabled UEVENT_MARK %.2f\n", MEASURE(20000000, UEVENT_MARK("x")));
	printf("c disabled uevent_mark %.2f\n", MEASURE(20000000, uevent_mark("x")));
	if (uevent_open(&file) < 0)
		return 1;
	printf("c enabled uevent_mark %.2f\n", MEASURE(100000, uevent_mark("x")));
	return 0;
}
