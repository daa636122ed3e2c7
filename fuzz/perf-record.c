/*
 * perf-record.c - libFuzzer target: uevent_perf_record_decode() of one record under a
 * format taken from the input, the format's raw layout (a tracepoint that carries
 * uevents) taken from it too. Input: a 72-byte prefix (below), then the record. The
 * decoder's long way (every record) must give what the public function gave (a plain
 * sample read on its own first): the same result, errno and record.
 */
#include "fuzz.h"

#include "internal.h"
#include "perf-internal.h"

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
	struct uevent_perf_record rec, rec_long;
	int bo, ret, err;

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
	fmt.flags = u32at(data + 44) & 3;		/* 44: UEVENT_PERF_*_V0 */
	bo = data[48] % 3;				/* 48: enum uevent_byte_order */
	fmt.raw.kind = data[49] % 3;			/* 49: layout kind, 52..68: offsets */
	fmt.raw.type_offset = u32at(data + 52);
	fmt.raw.size_offset = u32at(data + 56);
	fmt.raw.data_offset = u32at(data + 60);
	fmt.raw.data_capacity = u32at(data + 64);

	perf_record_init(&rec);
	errno = 0;
	ret = uevent_perf_record_decode(data + PREFIX, size - PREFIX, bo, &fmt, &rec);
	err = errno;
	perf_record_init(&rec_long);
	errno = 0;
	if (_uevent_perf_record_decode_long(data + PREFIX, size - PREFIX, bo, &fmt,
					    &rec_long) != ret ||
	    (ret < 0 && errno != err) ||
	    ((ret == 0 || ret == -EPROTO) && memcmp(&rec, &rec_long, sizeof(rec)) != 0))
		__builtin_trap();	/* the two ways disagree */
	if (ret == 0 || ret == -EPROTO) {
		if (rec.size > size - PREFIX)
			__builtin_trap();	/* a record larger than the bytes given */
		if (ret == 0)
			touch_perf_record(&rec, bo);
	}
	return 0;
}
