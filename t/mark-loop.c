/* mark-loop.c - N marks through the UEVENT_MARK() macro, from a PIE executable.
 * The macro's enabled check must see what the kernel writes, also when the tracer
 * attaches after the program started (t/usdt.test). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uevent.h"

int main(int argc, char **argv)
{
	struct uevent_stats st;
	long i, n = argc > 1 ? atol(argv[1]) : 1;
	const char *text = argc > 2 ? argv[2] : "mark";
	long seen = 0;

	/*
	 * "wait": a tracer attaches after start; wait (up to 20 s) until the check sees it.
	 * The semaphore counts tracers (the word's low 16 bits), and other tests' tracers
	 * may already be attached system-wide: wait for the count to rise, not for non-zero.
	 */
	if (argc > 3 && !strcmp(argv[3], "wait")) {
		uint32_t before = *uevent_enabled_ptr & 0xffff;

		for (i = 0; i < 20000 && (*uevent_enabled_ptr & 0xffff) <= before; i++)
			usleep(1000);
		/* perf raises the semaphore when it creates the event, enables it after. */
		usleep(500000);
	}
	/*
	 * "ask": for each line read, print the semaphore (the enabled word's low 16 bits):
	 * is this process, which no one watches, paying for someone else's tracer?
	 */
	if (argc > 3 && !strcmp(argv[3], "ask")) {
		char line[64];

		while (fgets(line, sizeof(line), stdin)) {
			printf("%u\n", (unsigned int)(*uevent_enabled_ptr & 0xffff));
			fflush(stdout);
		}
		return 0;
	}
	/*
	 * "canary": n marks of text, each followed in memory by "CANARY" bytes that are
	 * not part of it: a trace must not hold them (t/record.test).
	 */
	if (argc > 3 && !strcmp(argv[3], "canary")) {
		static char buf[4096];
		size_t len = strlen(text) < 100 ? strlen(text) : 100;

		for (i = 0; i + 6 <= (long)sizeof(buf); i += 6)
			memcpy(buf + i, "CANARY", 6);
		memcpy(buf, text, len);
		buf[len] = 0;
		for (i = 0; i < n; i++) {
			seen += UEVENT_ENABLED() ? 1 : 0;
			UEVENT_MARK(buf);
		}
	} else if (argc > 3 && !strcmp(argv[3], "run")) {
		/* "run": marks for n ms, one every 100 us, while a tracer comes and goes. */
		long total = n * 10;

		for (i = 0; i < total; i++) {
			seen += UEVENT_ENABLED() ? 1 : 0;
			UEVENT_MARK(text);
			usleep(100);
		}
		n = total;
	} else {
		for (i = 0; i < n; i++) {
			seen += UEVENT_ENABLED() ? 1 : 0;
			UEVENT_MARK(text);
		}
	}
	uevent_stats_get(&st, sizeof(st));
	printf("enabled %ld of %ld, emitted %llu\n", seen, n, (unsigned long long)st.emitted);
	return 0;
}
