/*
 * record.c - libFuzzer target: uevent_record_decode() of one PERF_RECORD_UEVENT, then
 * its payload through the decoder of its type. Input: sample_type (u64), flags (u32),
 * byte order (u8), 3 bytes unused, then the record.
 */
#include "fuzz.h"

#define PREFIX 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevent_record r;
	uint64_t st;
	uint32_t flags;
	int bo, ret;

	if (size < PREFIX)
		return 0;
	memcpy(&st, data, 8);
	memcpy(&flags, data + 8, 4);
	bo = data[12] % 3;
	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	ret = uevent_record_decode(data + PREFIX, size - PREFIX, bo, st,
				   flags & UEVENT_RECORD_V0_LAYOUT, &r);
	if (ret == 0 || ret == -EPROTO) {
		if (r.record_size > size - PREFIX)
			__builtin_trap();
	}
	if (ret == 0) {
		if ((const uint8_t *)r.data + r.size > data + PREFIX + r.record_size)
			__builtin_trap();	/* the payload leaves its record */
		touch_uevent(&r, bo);
	}
	return 0;
}
