/* codec.c - golden-byte tests of every payload codec and the record codec. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "tap.h"
#include "uevent.h"

static const char *srcdir;

/* Reads t/data/NAME.TAG.bin; returns its size or -1. */
static long load(const char *name, const char *tag, uint8_t *buf, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/t/data/%s.%s.%s", srcdir, name, tag,
		 strcmp(name, "capture") ? "bin" : "perf.data");
	f = fopen(path, "rb");
	if (!f) {
		diag("cannot open %s", path);
		return -1;
	}
	n = fread(buf, 1, cap, f);
	fclose(f);
	return (long)n;
}

static int same(const uint8_t *a, long an, const uint8_t *b, long bn)
{
	return an == bn && an >= 0 && !memcmp(a, b, (size_t)an);
}

/* Every strict prefix of a golden payload must be refused by its decoder. */
#define ALL_PREFIXES_FAIL(decode, buf, n, outp)                              \
	({                                                                    \
		long i_;                                                      \
		int bad_ = 0;                                                 \
		for (i_ = 0; i_ < (n); i_++)                                  \
			if (decode((buf), (size_t)i_, UEVENT_BO_LITTLE, (outp)) != -EINVAL) \
				bad_++;                                       \
		bad_ == 0;                                                    \
	})

static const uint8_t trace_id[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const uint8_t span_id[8] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7 };

int main(void)
{
	uint8_t gold[1024], be[1024], enc[1024];
	long gn, bn;
	ssize_t en;
	const char *bos[2] = { "le", "be" };
	int b;

	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = "..";
	plan(60);

	/* text */
	gn = load("text", "le", gold, sizeof(gold));
	en = uevent_text_encode(enc, sizeof(enc), "hello, perf");
	ok(same(enc, en, gold, gn), "text: encoder matches golden bytes");
	for (b = 0; b < 2; b++) {
		struct uevent_text t;

		bn = load("text", bos[b], be, sizeof(be));
		ok(bn > 0 && uevent_text_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &t) == 0 &&
		   t.len == 11 && !strcmp(t.text, "hello, perf"), "text: %s golden decodes", bos[b]);
	}
	{
		struct uevent_text t;

		ok(uevent_text_decode("abc", 3, 0, &t) == -EINVAL && errno == EINVAL,
		   "text: missing NUL is -EINVAL with errno set");
		ok(uevent_text_decode("a\0bc", 5, 0, &t) == -EINVAL, "text: inner NUL is refused");
		ok(uevent_text_encode(enc, 4, "hello") == -E2BIG, "text: small buffer is -E2BIG");
	}

	/* range begin / end */
	{
		struct uevent_range_begin in = { .id = 0x1122334455667788ull, .parent = 0x42,
						 .flags = UEVENT_RANGE_ASYNC, .name = "parse" }, out;
		struct uevent_range_end ein = { .id = 0x1122334455667788ull, .flags = 1 }, eout;

		gn = load("range_begin", "le", gold, sizeof(gold));
		en = uevent_range_begin_encode(enc, sizeof(enc), &in);
		ok(same(enc, en, gold, gn), "range_begin: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("range_begin", bos[b], be, sizeof(be));
			memset(&out, 0, sizeof(out));
			ok(uevent_range_begin_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &out) == 0 &&
			   out.id == in.id && out.parent == 0x42 && out.flags == 1 &&
			   out.name_len == 5 && !strcmp(out.name, "parse"),
			   "range_begin: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_range_begin_decode, gold, gn, &out),
		   "range_begin: every truncation is refused");

		gn = load("range_end", "le", gold, sizeof(gold));
		en = uevent_range_end_encode(enc, sizeof(enc), &ein);
		ok(same(enc, en, gold, gn), "range_end: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("range_end", bos[b], be, sizeof(be));
			ok(uevent_range_end_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &eout) == 0 &&
			   eout.id == ein.id && eout.flags == 1, "range_end: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_range_end_decode, gold, gn, &eout),
		   "range_end: every truncation is refused");
	}

	/* counter */
	{
		struct uevent_counter in = { .value = -12345, .name = "queue_depth" }, out;

		gn = load("counter", "le", gold, sizeof(gold));
		en = uevent_counter_encode(enc, sizeof(enc), &in);
		ok(same(enc, en, gold, gn), "counter: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("counter", bos[b], be, sizeof(be));
			ok(uevent_counter_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &out) == 0 &&
			   out.value == -12345 && !strcmp(out.name, "queue_depth"),
			   "counter: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_counter_decode, gold, gn, &out),
		   "counter: every truncation is refused");
		gold[8] = 200;	/* name_len pointing past the end */
		ok(uevent_counter_decode(gold, (size_t)gn, UEVENT_BO_LITTLE, &out) == -EINVAL,
		   "counter: lying length field is refused");
	}

	/* the name room the header states: a payload less an empty name's encoding */
	{
		struct uevent_range_begin r = { .name = "" };
		struct uevent_counter c = { .name = "" };

		ok(uevent_range_begin_encode(enc, sizeof(enc), &r) ==
		   UEVENT_MAX_PAYLOAD - UEVENT_RANGE_NAME_MAX &&
		   uevent_counter_encode(enc, sizeof(enc), &c) ==
		   UEVENT_MAX_PAYLOAD - UEVENT_COUNTER_NAME_MAX,
		   "RANGE_NAME_MAX, COUNTER_NAME_MAX: a payload less an empty name's encoding");
	}

	/* JIT code load / move / unload */
	{
		struct uevent_jit_code_load in = { 0x7f0000001000ull, 0x80, 7, "TRACE_12 app.lua:34", 0 }, out;
		struct uevent_jit_code_move min = { 7, 0x7f0000001000ull, 0x7f0000002000ull, 0x80 }, mout;
		struct uevent_jit_code_unload uin = { 0x7f0000002000ull, 0x80, 7 }, uout;

		gn = load("jit_code_load", "le", gold, sizeof(gold));
		en = uevent_jit_code_load_encode(enc, sizeof(enc), &in);
		ok(same(enc, en, gold, gn), "jit_code_load: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("jit_code_load", bos[b], be, sizeof(be));
			ok(uevent_jit_code_load_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &out) == 0 &&
			   out.code_addr == in.code_addr && out.code_size == 0x80 &&
			   out.code_index == 7 && !strcmp(out.name, in.name),
			   "jit_code_load: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_jit_code_load_decode, gold, gn, &out),
		   "jit_code_load: every truncation is refused");

		gn = load("jit_code_move", "le", gold, sizeof(gold));
		en = uevent_jit_code_move_encode(enc, sizeof(enc), &min);
		ok(same(enc, en, gold, gn), "jit_code_move: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("jit_code_move", bos[b], be, sizeof(be));
			ok(uevent_jit_code_move_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &mout) == 0 &&
			   !memcmp(&mout, &min, sizeof(min)), "jit_code_move: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_jit_code_move_decode, gold, gn, &mout),
		   "jit_code_move: every truncation is refused");

		gn = load("jit_code_unload", "le", gold, sizeof(gold));
		en = uevent_jit_code_unload_encode(enc, sizeof(enc), &uin);
		ok(same(enc, en, gold, gn), "jit_code_unload: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("jit_code_unload", bos[b], be, sizeof(be));
			ok(uevent_jit_code_unload_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &uout) == 0 &&
			   !memcmp(&uout, &uin, sizeof(uin)), "jit_code_unload: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_jit_code_unload_decode, gold, gn, &uout),
		   "jit_code_unload: every truncation is refused");
	}

	/* JIT debug info */
	{
		struct uevent_jit_debug_entry e[2] = {
			{ 0x7f0000001000ull, 34, 0, "app.lua", 0 },
			{ 0x7f0000001010ull, 35, 1, "app.lua", 0 },
		}, got;
		struct uevent_jit_debug_info info;
		uint32_t off = 0;
		int n = 0, good = 1;

		gn = load("jit_debug_info", "le", gold, sizeof(gold));
		en = uevent_jit_debug_info_encode(enc, sizeof(enc), 0x7f0000001000ull, e, 2);
		ok(same(enc, en, gold, gn), "jit_debug_info: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			int bo = b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE;

			bn = load("jit_debug_info", bos[b], be, sizeof(be));
			off = 0;
			n = 0;
			good = uevent_jit_debug_info_decode(be, (size_t)bn, bo, &info) == 0 &&
			       info.nr_entry == 2 && info.code_addr == 0x7f0000001000ull;
			while (good && uevent_jit_debug_entry_next(&info, bo, &off, &got) == 1) {
				good = got.addr == e[n].addr && got.line == e[n].line &&
				       got.discrim == e[n].discrim && !strcmp(got.file, "app.lua");
				n++;
			}
			ok(good && n == 2, "jit_debug_info: %s golden decodes, entries walk", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_jit_debug_info_decode, gold, gn, &info),
		   "jit_debug_info: every truncation is refused");
		gold[8] = 3;	/* nr_entry larger than what follows */
		ok(uevent_jit_debug_info_decode(gold, (size_t)gn, UEVENT_BO_LITTLE, &info) == -EINVAL,
		   "jit_debug_info: entry count beyond the data is refused");
	}

	/* trace context */
	{
		struct uevent_trace_context in, out;

		memcpy(in.trace_id, trace_id, 16);
		memcpy(in.span_id, span_id, 8);
		in.flags = 1;
		gn = load("trace_context", "le", gold, sizeof(gold));
		en = uevent_trace_context_encode(enc, sizeof(enc), &in);
		ok(same(enc, en, gold, gn), "trace_context: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("trace_context", bos[b], be, sizeof(be));
			ok(uevent_trace_context_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &out) == 0 &&
			   !memcmp(out.trace_id, trace_id, 16) && !memcmp(out.span_id, span_id, 8) &&
			   out.flags == 1, "trace_context: %s golden decodes", bos[b]);
		}
		ok(ALL_PREFIXES_FAIL(uevent_trace_context_decode, gold, gn, &out),
		   "trace_context: every truncation is refused");
	}

	/* PERF_RECORD_UEVENT */
	{
		struct uevent_record r = { .sz = sizeof(r) };
		uint64_t st = (1u << 1) | (1u << 2);	/* PERF_SAMPLE_TID | PERF_SAMPLE_TIME */
		long i;
		int bad = 0;

		gn = load("record_v1", "le", gold, sizeof(gold));
		en = uevent_record_encode(enc, sizeof(enc), 0, "hello, perf", 12, 100, 101, 123456789);
		ok(same(enc, en, gold, gn), "record: encoder matches golden bytes");
		for (b = 0; b < 2; b++) {
			bn = load("record_v1", bos[b], be, sizeof(be));
			ok(uevent_record_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, st, 0, &r) == 0 &&
			   r.record_type == 63 && r.format == 1 && r.type == 0 && r.size == 12 &&
			   !memcmp(r.data, "hello, perf", 12) && r.id.pid == 100 && r.id.tid == 101 &&
			   r.id.time == 123456789 && r.id.fields == (UEVENT_ID_TID | UEVENT_ID_TIME),
			   "record: %s golden decodes with sample_id", bos[b]);
		}
		for (i = 0; i < gn; i++)
			if (uevent_record_decode(gold, (size_t)i, UEVENT_BO_LITTLE, st, 0, &r) >= 0)
				bad++;
		ok(bad == 0, "record: every truncation is refused");
		ok(uevent_record_decode(gold, (size_t)gn, UEVENT_BO_LITTLE, 0, 0, &r) == -EINVAL,
		   "record: a sample_type that disagrees with the size is refused");
		memcpy(be, gold, (size_t)gn);
		be[8] = 9;	/* unknown format */
		ok(uevent_record_decode(be, (size_t)gn, UEVENT_BO_LITTLE, st, 0, &r) == -EPROTO &&
		   r.format == 9 && r.record_size == gn,
		   "record: unknown format is -EPROTO with the size to skip it");
		memcpy(be, gold, (size_t)gn);
		be[12] = 0xff;	/* payload size beyond the record */
		ok(uevent_record_decode(be, (size_t)gn, UEVENT_BO_LITTLE, st, 0, &r) == -EINVAL,
		   "record: payload size beyond the record is refused");
		/* Random corruptions: decoding must not crash or read out of bounds (ASan). */
		/* Random corruptions: every result is success or a documented error, and
		 * a success's payload lies inside the record (ASan: t/asan.test). */
		srand(42);
		bad = 0;
		for (i = 0; i < 20000; i++) {
			struct uevent_text tx;
			int rr, tr;

			memcpy(be, gold, (size_t)gn);
			be[rand() % gn] ^= (uint8_t)(1u << (rand() % 8));
			be[rand() % gn] = (uint8_t)rand();
			rr = uevent_record_decode(be, (size_t)gn, UEVENT_BO_LITTLE, st, 0, &r);
			if (rr != 0 && rr != -EINVAL && rr != -EPROTO)
				bad++;
			if (rr == 0 && ((const uint8_t *)r.data < be ||
					(const uint8_t *)r.data + r.size > be + gn))
				bad++;
			tr = uevent_text_decode(be + 24, (size_t)(rand() % (gn - 24)), 0, &tx);
			if (tr != 0 && tr != -EINVAL)
				bad++;
		}
		ok(bad == 0, "record: 20000 random corruptions give success in bounds or "
		   "EINVAL/EPROTO (%d otherwise)", bad);

		for (b = 0; b < 2; b++) {
			bn = load("record_v0", bos[b], be, sizeof(be));
			ok(uevent_record_decode(be, (size_t)bn, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, st,
						UEVENT_RECORD_V0_LAYOUT, &r) == 0 &&
			   r.record_type == 11 && r.format == 0 && r.size == 12 &&
			   !memcmp(r.data, "hello, perf", 12) && r.id.tid == 101,
			   "record: V0 layout (%s) decodes on request", bos[b]);
		}
	}

	/* file-transport capture: pipe-mode perf.data, read through its uevents' view */
	for (b = 0; b < 2; b++) {
		char path[512];
		struct uevent_file_reader *rd;
		struct uevent_record r = { .sz = sizeof(r) };
		struct uevent_counter c;
		int n = 0, good = 1, ret;

		snprintf(path, sizeof(path), "%s/t/data/capture.%s.perf.data", srcdir, bos[b]);
		rd = uevent_file_reader__open(path);
		ok(rd != NULL, "capture: %s file opens", bos[b]);
		while (rd && (ret = uevent_file_reader__next(rd, &r)) == 1) {
			n++;
			if (r.id.time != (uint64_t)n * 1000)
				good = 0;
			if (n == 2)
				good &= r.type == UEVENT_TYPE_COUNTER && r.id.tid == 102 &&
					uevent_counter_decode(r.data, r.size, b ? UEVENT_BO_BIG : UEVENT_BO_LITTLE, &c) == 0 &&
					c.value == -12345;
		}
		ok(rd && ret == 0 && n == 3 && good, "capture: %s file yields its 3 records", bos[b]);
		uevent_file_reader__close(rd);
	}
	{
		char path[] = "/tmp/uevent-codec-XXXXXX";
		int fd = mkstemp(path);
		struct uevent_file_reader *rd;
		struct uevent_record r = { .sz = sizeof(r) };
		uint64_t cut = 0;

		gn = load("capture", "le", gold, sizeof(gold));
		if (write(fd, gold, (size_t)gn - 5) != gn - 5)
			diag("short write");
		close(fd);
		rd = uevent_file_reader__open(path);
		ok(rd && uevent_file_reader__next(rd, &r) == 1 && uevent_file_reader__next(rd, &r) == 1 &&
		   (cut = uevent_file_reader__offset(rd)) > 408 &&
		   uevent_file_reader__next(rd, &r) == -ENODATA && uevent_file_reader__offset(rd) == cut &&
		   uevent_file_reader__next(rd, &r) == -ENODATA,
		   "capture: cut in its last record: 2 records, then -ENODATA (again) at the cut");
		uevent_file_reader__close(rd);
		{	/* "-": standard input, here a pipe (no seeking) */
			int pfd[2], saved = dup(0), n = 0, ret = -1;

			if (pipe(pfd) || write(pfd[1], gold, (size_t)gn) != gn)
				diag("pipe: %s", strerror(errno));
			close(pfd[1]);
			dup2(pfd[0], 0);
			close(pfd[0]);
			rd = uevent_file_reader__open("-");
			while (rd && (ret = uevent_file_reader__next(rd, &r)) == 1)
				n++;
			ok(rd && ret == 0 && n == 3, "capture: \"-\" reads standard input, a pipe (%d records)", n);
			uevent_file_reader__close(rd);
			dup2(saved, 0);
			close(saved);
		}
		fd = open(path, O_WRONLY | O_TRUNC);
		if (write(fd, "NOTAFILE-but-long-enough-for-a-header", 37) != 37)
			diag("short write");
		close(fd);
		errno = 0;
		ok(uevent_file_reader__open(path) == NULL && errno == EINVAL,
		   "capture: not perf.data (bad magic) is EINVAL");
		ok(uevent_file_reader__open("/nonexistent/x.perf.data") == NULL && errno == ENOENT,
		   "capture: missing file is ENOENT");
		unlink(path);
	}
	ok(uevent_type_name(UEVENT_TYPE_TRACE_CONTEXT) && !strcmp(uevent_type_name(8), "trace_context") &&
	   uevent_type_name(UEVENT_TYPE_USER) == NULL, "type names");
	return exit_status();
}
