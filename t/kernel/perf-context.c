/*
 * perf-context - a thread with an OpenTelemetry thread context, for perf itself in the
 * guest (t/kernel/perf-guest.sh, make check-kernel-perf).
 *
 * Sets the calling thread's context with libuevent (uevent_thread_context_set(): the
 * OTEP 4947 record, which on the patched kernel is the thread's PR_PERF_TLS_AREA
 * area), prints the record's first BYTES bytes in hex, as perf script prints a
 * sample's context, then runs in user space for about MS milliseconds so that
 * `perf record --tls-user=BYTES -e task-clock` takes samples of it.
 *
 * usage: perf-context [MS [BYTES]]        (default: 300 ms, 32 bytes)
 * Output: "registered 0|1" (whether the kernel dumps the record into samples), then
 * "context XX XX ...". Exits 1 when the context cannot be set.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uevent.h"

/* W3C's example ids (trace-context, "traceparent" header) */
static const uint8_t trace_id[16] = {
	0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
	0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36,
};
static const uint8_t span_id[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 0) : 32, i;
	const unsigned char *rec;
	struct timespec t0;
	uint64_t sink = 0;
	int rc;

	rc = uevent_thread_context_set(trace_id, span_id, 0x01);
	if (rc < 0) {
		fprintf(stderr, "perf-context: uevent_thread_context_set: %d\n", rc);
		return 1;
	}
	if (bytes > UEVENT_THREAD_CONTEXT_SIZE)
		bytes = UEVENT_THREAD_CONTEXT_SIZE;
	printf("registered %d\n", uevent_thread_context_registered());
	rec = (const unsigned char *)uevent_thread_context_get();
	printf("context");
	for (i = 0; i < bytes; i++)
		printf(" %02x", rec[i]);
	printf("\n");
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (i = 0; i < 100000; i++) {
			sink += i;
			__asm__ __volatile__("" : "+r"(sink));
		}
	} while (elapsed_ms(&t0) < ms);
	return 0;
}
