/*
 * tracing.c - libFuzzer target: a perf.data's tracing data (trace-cmd's format: the
 * event format texts) and tracepoint samples of it. The input is
 *   u32 config, u32 len (little-endian), len bytes of tracing data, then samples' raw
 *   data, each a u16 length and its bytes,
 * made into a pipe-mode perf.data of one tracepoint event of that config (TID, TIME,
 * RAW). It is read by uevent_perf_file__open() (the tracing data parsed, the event's
 * uevent layout taken from its format), __next() (each sample's raw data decoded, as a
 * uevent where the layout says so) and __raw_fields() (libtraceevent's fields as text
 * and as JSON) of a copy of the sample whose raw data is a block of its exact size (so
 * that AddressSanitizer sees a field read past it), whose return must be the length of
 * the whole text, as snprintf's.
 */
#include "fuzz.h"

#include <stdlib.h>

#define SAME(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static uint8_t file[65536 * 2 + 4096];
static char text[1 << 16], small[8];

static size_t put(size_t at, const void *b, size_t n)
{
	if (at + n > sizeof(file))
		return sizeof(file) + 1;
	memcpy(file + at, b, n);
	return at + n;
}

static size_t header(size_t at, uint32_t type, uint16_t size)
{
	struct perf_event_header h = { .type = type, .size = size };

	return put(at, &h, sizeof(h));
}

/* The perf.data the input describes, its length (0: the input does not fit). */
static size_t build(const uint8_t *data, size_t size)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr),
					.sample_period = 1, .sample_id_all = 1,
					.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						       PERF_SAMPLE_RAW };
	uint32_t config, len, n = 0;
	uint64_t magic = 0x32454c4946524550ull, hsize = 16, id = 1, t;
	size_t at = 0, in = 8;

	if (size < 8)
		return 0;
	memcpy(&config, data, 4);
	memcpy(&len, data + 4, 4);
	if (len > size - 8)
		return 0;
	attr.config = config;
	at = put(at, &magic, 8);
	at = put(at, &hsize, 8);
	at = header(at, 64 /* HEADER_ATTR */, 8 + sizeof(attr) + 8);
	at = put(at, &attr, sizeof(attr));
	at = put(at, &id, 8);
	at = header(at, 66 /* HEADER_TRACING_DATA */, 16);
	at = put(at, &len, 4);
	at = put(at, &n, 4);
	at = put(at, data + in, len);
	at = put(at, "\0\0\0\0\0\0\0", (8 - len % 8) % 8);	/* its records stay aligned */
	in += len;
	for (t = 1; in + 2 <= size && at <= sizeof(file); t++) {
		uint16_t rl;
		uint32_t pid = 4242, raw;
		static const uint8_t zero[8];

		memcpy(&rl, data + in, 2);
		in += 2;
		if (rl > size - in)
			rl = (uint16_t)(size - in);
		raw = (uint32_t)((rl + 4 + 7) / 8 * 8 - 4);	/* the kernel pads it so */
		if (8 + 8 + 8 + 4 + (size_t)raw > 65535)
			break;
		at = header(at, PERF_RECORD_SAMPLE, (uint16_t)(8 + 8 + 8 + 4 + raw));
		at = put(at, &pid, 4);
		at = put(at, &pid, 4);
		at = put(at, &t, 8);
		at = put(at, &raw, 4);
		at = put(at, data + in, rl);
		at = put(at, zero, raw - rl);
		in += rl;
	}
	return at <= sizeof(file) ? at : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct uevent_perf_file *f;
	struct uevent_perf_record rec;
	size_t len = build(data, size), nrec = 0;
	unsigned int flags;
	int n, i, r, r2, bo;
	void *raw;

	if (!len)
		return 0;
	if (fuzz_input(&in, file, len, size % 2) < 0) {
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
	bo = uevent_perf_file__byte_order(f);
	for (;;) {
		perf_record_init(&rec);
		r = uevent_perf_file__next(f, &rec);
		if (r == -EPROTO)
			continue;
		if (r != 1 || ++nrec > len / 8)
			break;
		touch_perf_record(&rec, bo);
		if (rec.body != UEVENT_BODY_SAMPLE || !rec.u.sample.raw)
			continue;
		raw = malloc(rec.u.sample.raw_size ? rec.u.sample.raw_size : 1);
		if (!raw)
			break;
		memcpy(raw, rec.u.sample.raw, rec.u.sample.raw_size);
		rec.u.sample.raw = raw;
		for (flags = 0; flags <= UEVENT_FIELDS_JSON; flags++) {
			r = uevent_perf_file__raw_fields(f, &rec, flags, text, sizeof(text));
			SAME(r >= 0 || r == -ENOENT || r == -EOPNOTSUPP || r == -E2BIG);
			if (r < 0)
				continue;
			/* the whole text's length, as snprintf: a cut copy is its prefix */
			SAME((size_t)r >= sizeof(text) || strlen(text) == (size_t)r);
			r2 = uevent_perf_file__raw_fields(f, &rec, flags, small, sizeof(small));
			SAME(r2 == r && strlen(small) < sizeof(small) &&
			     !strncmp(small, text, strlen(small)));
			SAME(uevent_perf_file__raw_fields(f, &rec, flags, NULL, 0) == r);
		}
		free(raw);
	}
	uevent_perf_file__close(f);
	fuzz_input_done(&in);
	return 0;
}
