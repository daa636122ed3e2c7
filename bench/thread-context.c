/* thread-context.c - ns per uevent_thread_context_set() against a plain thread-local store. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "uevent.h"
#include "bench.h"

/*
 * The baseline is what a writer with no protocol at all does: copy the ids and flags into
 * a thread-local buffer of its own, inlined. set() adds a call (through the PLT in the
 * shared build), the TLSDESC lookup, the valid-flag protocol and the attribute reset.
 */
static __thread struct uevent_thread_context_record plain __attribute__((aligned(8)));

int main(void)
{
	uint8_t ids[2][24];
	double base = 1e30, set = 1e30, attr, clear, b, t;
	/* Short runs, many of them: on a shared machine the best one is the least disturbed. */
	const long n = 2000000;

	memset(ids[0], 0x11, 24);
	memset(ids[1], 0x22, 24);
	uevent_thread_context_set(ids[0], ids[0] + 16, 1);	/* the once-per-thread prctl */
	for (int k = 0; k < 10; k++) {
		MEASURE2(n, b, t,
			 ({ const uint8_t *p = ids[i_ & 1];
			    memcpy(plain.trace_id, p, 16); memcpy(plain.span_id, p + 16, 8);
			    plain.trace_flags = 1; plain.valid = 1; }),
			 uevent_thread_context_set(ids[i_ & 1], ids[i_ & 1] + 16, 1));
		base = b < base ? b : base;
		set = t < set ? t : set;
	}
	attr = clear = 1e30;
	for (int k = 0; k < 10; k++) {
		t = MEASURE(n, ({ uevent_thread_context_set(ids[i_ & 1], ids[i_ & 1] + 16, 1);
			     uevent_thread_context_set_attr(0, "/api/v1/orders", 14);
			     uevent_thread_context_set_attr(1, "alice", 5); }));
		attr = t < attr ? t : attr;
		t = MEASURE(n, uevent_thread_context_clear());
		clear = t < clear ? t : clear;
	}
	printf("plain thread-local store of ids+flags: %6.2f ns\n", base);
	printf("uevent_thread_context_set():           %6.2f ns  (%.2fx the plain store, "
	       "+%.2f ns)\n", set, set / base, set - base);
	printf("set() + set_attr() x2 (14 B, 5 B):     %6.2f ns  (a span with two attributes)\n",
	       attr);
	printf("uevent_thread_context_clear():         %6.2f ns\n", clear);
	printf("registered with the kernel: %s\n", uevent_thread_context_registered() ? "yes" : "no");
	return 0;
}
