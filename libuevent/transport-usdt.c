/* transport-usdt.c - the libuevent:emit SDT probes: perf, bpftrace, uevent record. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "transport.h"

#if HAVE_SYS_SDT_H
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* The semaphores are the enabled word's low half: defined beside it, in emit.c. */
#define SDT_SEMAPHORE(name) extern volatile unsigned short libuevent_##name##_semaphore;
#define SDT_CLASS_SEMAPHORE(n) SDT_SEMAPHORE(emit##n)
SDT_SEMAPHORE(emit)
SDT_SEMAPHORE(text)
_UEVENT_USDT_CLASSES(SDT_CLASS_SEMAPHORE)

/*
 * libuevent:text: the payload of every mark in a zero-padded copy that always ends in
 * a NUL, so a tracer's string fetch of it (`uevent probe --perf-event`, bpftrace's
 * str()) reads the mark's text and never past the copy. One site for all the size
 * classes, so one uprobe event sees every mark.
 */
static __attribute__((noinline)) void fire_text(uint32_t type, const void *buf, size_t size)
{
	STAP_PROBE3(libuevent, text, type, buf, size);
}

/*
 * A uprobe fetches a fixed number of bytes from the data pointer, whatever the size:
 * fetching from the caller's buffer would put the process's neighbouring memory into
 * the trace. So each size class has its own probe site, libuevent:emitN (N: the sizes
 * of _UEVENT_USDT_CLASSES in internal.h), whose data argument is a copy of the payload zero-padded to N
 * bytes on this thread's stack (and 8 more, for libuevent:text's NUL); a tracer fetches
 * N bytes there, so a record's size follows its payload and holds nothing else. libuevent:emit keeps the caller's
 * pointer for tracers that fetch by size themselves (perf probe, bpftrace).
 */
#define USDT_CLASS(n)								\
static __attribute__((noinline)) void fire_usdt##n(uint32_t type, const void *data,	\
						     size_t size)			\
{										\
	uint64_t buf[(n) / 8 + 1];						\
										\
	if (size)								\
		memcpy(buf, data, size);					\
	memset((uint8_t *)buf + size, 0, (n) + 8 - size);			\
	/* the probe reads buf behind the compiler's back: the stores must be done */	\
	__asm__ __volatile__("" : : "r"(buf) : "memory");			\
	STAP_PROBE3(libuevent, emit##n, type, buf, size);			\
	fire_text(type, buf, size);						\
}
_UEVENT_USDT_CLASSES(USDT_CLASS)

/*
 * Out of line so the probe's arguments are the incoming argument registers: a
 * tracer's fetch of a register is cheaper than one of a stack slot, and the call is
 * only made while a tracer holds the semaphore.
 */
__attribute__((noinline)) void _uevent_usdt_fire(uint32_t type, const void *data, size_t size)
{
	STAP_PROBE3(libuevent, emit, type, data, size);
#define FIRE_CLASS(n)						\
	if (size <= (n)) {					\
		fire_usdt##n(type, data, size);			\
		return;						\
	}
	_UEVENT_USDT_CLASSES(FIRE_CLASS)
}
#else
void _uevent_usdt_fire(uint32_t type, const void *data, size_t size)
{
	(void)type;
	(void)data;
	(void)size;
}
#endif

static int usdt_open(struct _uevent_tstate *ts, const char *path)
{
	(void)path;
#if HAVE_SYS_SDT_H
	if (access("/sys/bus/event_source/devices/uprobe", F_OK) < 0) {
		_uevent_set_reason("usdt: kernel has no uprobes (no /sys/bus/event_source/devices/uprobe)");
		return -ENODEV;
	}
	ts->max_payload = UEVENT_MAX_PAYLOAD;
	return 0;
#else
	(void)ts;
	_uevent_set_reason("usdt: libuevent was built without <sys/sdt.h>");
	return -ENODEV;
#endif
}

/* The probe already fired (emit.c's tap); a tracer holds the semaphore or nobody listens. */
static int usdt_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		      uint32_t word)
{
	(void)ts;
	(void)type;
	(void)data;
	(void)size;
	return !(word & _UEVENT_EN_USDT_MASK);
}

const struct _uevent_transport_ops _uevent_usdt_ops = {
	.open = usdt_open, .write = usdt_write,
};
