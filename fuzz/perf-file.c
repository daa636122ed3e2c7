/*
 * perf-file.c - libFuzzer target: uevent_perf_file__open() and __next() to the end of
 * the input as a perf.data (file or pipe mode), read from a pipe on standard input
 * ("-", into a buffer of the input's size) or, one input in four, mapped from a memfd.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct uevent_perf_file *f;
	struct uevent_perf_record rec;
	uint64_t last;
	size_t nrec;
	int i, n, ret, bo;

	if (fuzz_input(&in, data, size, size % 4 != 3) < 0) {
		fuzz_input_done(&in);
		return 0;
	}
	f = uevent_perf_file__open(in.path);
	if (!f) {
		fuzz_input_done(&in);
		return 0;
	}
	n = uevent_perf_file__nr_events(f);
	for (i = 0; i < n; i++) {
		const char *name = uevent_perf_file__event_name(f, i);

		touch(name, strlen(name));
	}
	fuzz_sink ^= (uint8_t)(uevent_perf_file__clockid(f) ^ uevent_perf_file__clock_res_ns(f));
	bo = uevent_perf_file__byte_order(f);
	for (nrec = 0;;) {
		perf_record_init(&rec);
		ret = uevent_perf_file__next(f, &rec);
		if (ret == 1)
			touch_perf_record(&rec, bo);
		else if (ret != -EPROTO)
			break;
		/*
		 * each record is 8 bytes or more of the input, read once (in time order, so
		 * the offsets need not grow): no loop on the same bytes
		 */
		if (++nrec > size / 8 || uevent_perf_file__offset(f) > size)
			__builtin_trap();
	}
	last = uevent_perf_file__offset(f);
	/* a cut or corrupt record is where __offset() says, and stays the answer */
	if (ret < 0 && (uevent_perf_file__next(f, &rec) != ret || uevent_perf_file__offset(f) != last))
		__builtin_trap();
	uevent_perf_file__close(f);
	fuzz_input_done(&in);
	return 0;
}
