/*
 * perf-record.c - libFuzzer target: uevent_perf_record_decode() of one record under a
 * format taken from the input, then uevent_raw_to_record() of a sample under a layout
 * also taken from it. Input: a 72-byte prefix (below), then the record.
 */
#include "fuzz.h"

#define PREFIX 72

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t u32at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevent_perf_format fmt;
	struct uevent_raw_layout l;
	struct uevent_perf_record rec;
	struct uevent_record u;
	int bo, ret;

	if (size < PREFIX)
		return 0;
	memset(&fmt, 0, sizeof(fmt));
	fmt.sz = sizeof(fmt);
	fmt.sample_type = u64at(data);			/* 0: the attr's fields */
	fmt.read_format = u64at(data + 8);
	fmt.branch_sample_type = u64at(data + 16);
	fmt.sample_regs_user = u64at(data + 24);
	fmt.sample_regs_intr = u64at(data + 32);
	fmt.sample_id_all = u32at(data + 40) & 1;	/* 40 */
	fmt.flags = u32at(data + 44) & 3;		/* 44: UEVENT_PERF_SEED_* */
	bo = data[48] % 3;				/* 48: enum uevent_byte_order */
	memset(&l, 0, sizeof(l));			/* 49: layout kind, 52..68: offsets */
	l.sz = sizeof(l);
	l.kind = data[49] % 3;
	l.type_offset = u32at(data + 52);
	l.size_offset = u32at(data + 56);
	l.data_offset = u32at(data + 60);
	l.data_capacity = u32at(data + 64);

	perf_record_init(&rec);
	ret = uevent_perf_record_decode(data + PREFIX, size - PREFIX, bo, &fmt, &rec);
	if (ret == 0 || ret == -EPROTO) {
		if (rec.size > size - PREFIX)
			__builtin_trap();	/* a record larger than the bytes given */
		if (ret == 0)
			touch_perf_record(&rec, bo);
	}
	if (ret == 0 && rec.type == PERF_RECORD_SAMPLE && l.kind) {
		ret = uevent_raw_to_record(&rec, &l, bo, &u);
		if (ret >= 0)
			touch_uevent(&u, bo);
	}
	return 0;
}
