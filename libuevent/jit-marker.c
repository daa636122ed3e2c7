/* jit-marker.c - the JIT session's uevents: the in-stream twins of its loads, moves,
 * unloads and line tables. */
#include "config.h"

#include <stdio.h>

#include "jit-internal.h"

/* ---- uevent markers ----------------------------------------------------------- */

static size_t marker_cap(void)
{
	size_t m = uevent_max_payload();

	return m && m < UEVENT_MAX_PAYLOAD ? m : UEVENT_MAX_PAYLOAD;
}

void _uevent_jit_marker_load(uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	char tname[UEVENT_MAX_PAYLOAD];
	struct uevent_jit_code_load in = { addr, size, index, name, 0 };
	size_t cap = marker_cap();
	ssize_t n;

	n = uevent_jit_code_load_encode(buf, cap, &in);
	if (n == -E2BIG && cap > 40) {
		/* The name is the only variable part: shorten it to fit. */
		snprintf(tname, cap - 40, "%s", name);
		in.name = tname;
		n = uevent_jit_code_load_encode(buf, cap, &in);
	}
	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_LOAD, buf, (size_t)n);
}

void _uevent_jit_marker_debug(uint64_t code_addr, const struct uevent_jit_debug_entry *e,
			      uint32_t nr)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	size_t cap = marker_cap();
	uint32_t i = 0, k;
	ssize_t n;

	/* As many entries per payload as fit; every payload names its code_addr. */
	while (i < nr) {
		for (k = nr - i; k > 0; k = k / 2) {
			n = uevent_jit_debug_info_encode(buf, cap, code_addr, e + i, k);
			if (n > 0)
				break;
		}
		if (k == 0)
			return;		/* one entry alone is too big: give up quietly */
		uevent_emit(UEVENT_TYPE_JIT_DEBUG_INFO, buf, (size_t)n);
		i += k;
	}
}

void _uevent_jit_marker_move(uint64_t index, uint64_t old_addr, uint64_t new_addr,
			     uint64_t size)
{
	unsigned char buf[64];
	struct uevent_jit_code_move in = { index, old_addr, new_addr, size };
	ssize_t n = uevent_jit_code_move_encode(buf, sizeof(buf), &in);

	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_MOVE, buf, (size_t)n);
}

void _uevent_jit_marker_unload(uint64_t addr, uint64_t size, uint64_t index)
{
	unsigned char buf[64];
	struct uevent_jit_code_unload in = { addr, size, index };
	ssize_t n = uevent_jit_code_unload_encode(buf, sizeof(buf), &in);

	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_UNLOAD, buf, (size_t)n);
}
