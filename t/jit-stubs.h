/* jit-stubs.h - what libuevent's JIT files (jit*.c, group-append.c) take from the rest
 * of the library, stubbed, for a test built with those files alone and its own flags
 * (t/jit-tsan.test, t/jit-full-win.test): markers are off. Included once, by the test. */
#ifndef UEVENT_JIT_STUBS_H
#define UEVENT_JIT_STUBS_H

#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"

static volatile uint32_t off_word;
volatile uint32_t *const uevent_enabled_ptr = &off_word;

/* JIT_STUB_TICK_NS: a clock that coarse, so that loads from several threads share
 * timestamps (a merge orders those by code index) */
#ifndef JIT_STUB_TICK_NS
#define JIT_STUB_TICK_NS 1
#endif

uint64_t _uevent_now_ns(void)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return t - t % JIT_STUB_TICK_NS;
}

void _uevent_reason(const char *fmt, ...)
{
	(void)fmt;
}

int uevent_emit(uint32_t type, const void *data, size_t size)
{
	(void)type, (void)data, (void)size;
	return 0;
}

size_t uevent_max_payload(void)
{
	return 4096;
}

/* reads the name as the real one does (t/jit-asan.test: a freed name is seen) */
ssize_t uevent_jit_code_load_encode(void *buf, size_t cap, const struct uevent_jit_code_load *in)
{
	volatile size_t n = in->name ? strlen(in->name) : 0;

	(void)buf, (void)cap, (void)n;
	return -1;
}

ssize_t uevent_jit_code_move_encode(void *buf, size_t cap, const struct uevent_jit_code_move *in)
{
	(void)buf, (void)cap, (void)in;
	return -1;
}

ssize_t uevent_jit_code_unload_encode(void *buf, size_t cap,
				      const struct uevent_jit_code_unload *in)
{
	(void)buf, (void)cap, (void)in;
	return -1;
}

ssize_t uevent_jit_debug_info_encode(void *buf, size_t cap, uint64_t code_addr,
				     const struct uevent_jit_debug_entry *entries, uint32_t nr)
{
	(void)buf, (void)cap, (void)code_addr, (void)entries, (void)nr;
	return -1;
}

#endif
