/*
 * uevent-file.c - libFuzzer target: the file-transport reader (uevent_file_reader__*)
 * over the input as a capture, from a pipe on standard input ("-") or, one input in
 * four, a memfd; each record's payload through the decoder of its type. The captures
 * are pipe-mode perf.data: this is the uevents' view of the perf-file target's reader.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct uevent_file_reader *r;
	struct uevent_record rec = { .sz = sizeof(rec) };
	uint64_t last;
	size_t nrec = 0;
	int ret, bo;

	if (fuzz_input(&in, data, size, size % 4 != 3) < 0) {
		fuzz_input_done(&in);
		return 0;
	}
	r = uevent_file_reader__open(in.path);
	if (!r) {
		fuzz_input_done(&in);
		return 0;
	}
	bo = uevent_file_reader__byte_order(r);
	while ((ret = uevent_file_reader__next(r, &rec)) == 1 || ret == -EPROTO) {
		if (ret == 1)
			touch_uevent(&rec, bo);
		/*
		 * the perf.data reader returns records in time order, so the offsets need
		 * not grow (as in perf-file.c): no loop on the same bytes, none past the end
		 */
		if (++nrec > size / 8 || uevent_file_reader__offset(r) > size)
			__builtin_trap();
	}
	last = uevent_file_reader__offset(r);
	/* a cut stays a cut, where __offset() says */
	if (ret == -ENODATA && (uevent_file_reader__next(r, &rec) != -ENODATA ||
				uevent_file_reader__offset(r) != last))
		__builtin_trap();
	uevent_file_reader__close(r);
	fuzz_input_done(&in);
	return 0;
}
