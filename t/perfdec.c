/* perfdec.c - perf record decoders against golden bytes, ring images, truncation, fuzzing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "tap.h"

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[4096];
	const char *top = getenv("top_srcdir");
	FILE *f;
	uint8_t *buf;
	long n;

	snprintf(path, sizeof(path), "%s/t/data/%s", top ? top : "..", name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static struct uevent_perf_format golden_format(void)
{
	struct uevent_perf_format f = { .sz = sizeof(f) };

	f.sample_type = 0x3ffffffull & ~(uint64_t)PERF_SAMPLE_WEIGHT;
	f.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST;
	f.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
	f.sample_regs_user = 0x7;
	f.sample_regs_intr = 0x3;
	f.sample_id_all = 1;
	return f;
}

static uint16_t rec_size(const uint8_t *p, int bo)
{
	uint16_t v;

	memcpy(&v, p + 6, 2);
	return bo == UEVENT_BO_BIG ? __builtin_bswap16(v) : v;
}

/* The records of perf_records.<bo>.bin, in order, checked field by field. */
static void check_golden(const uint8_t *buf, size_t len, int bo, const char *tag)
{
	struct uevent_perf_format f = golden_format();
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_text t;
	size_t off = 0;
	int i = 0, bad = 0;
	static const uint32_t types[] = { 9, 1, 10, 10, 3, 7, 4, 2, 13, 5, 6, 14, 15, 17, 18, 63 };

	while (off < len) {
		int err = uevent_perf_record_decode(buf + off, len - off, bo, &f, &r);

		if (err || i >= (int)(sizeof(types) / sizeof(types[0])) || r.type != types[i]) {
			diag("%s: record %d at %zu: err %d type %u", tag, i, off, err, r.type);
			bad++;
			break;
		}
		if (r.type != PERF_RECORD_SAMPLE && (r.id.pid != 100 || r.id.tid != 101 ||
						     r.id.time != 5000 || r.id.cpu != 1 ||
						     r.id.identifier != 7 || r.id.stream_id != 8 ||
						     r.id.fields != 63)) {
			diag("%s: record %d: sample_id trailer wrong", tag, i);
			bad++;
		}
		switch (i) {
		case 0: {
			const struct uevent_perf_sample *s = &r.u.sample;

			ok(s->identifier == 7 && s->ip == 0x401000 && s->pid == 100 && s->tid == 101 &&
			   s->time == 5000 && s->addr == 0xdead0000 && s->id == 7 && s->stream_id == 8 &&
			   s->cpu == 1 && s->period == 4000, "%s: sample ip/tid/time/addr/id/cpu/period", tag);
			ok(s->read.nr == 2 && s->read.time_enabled == 111 && s->read.time_running == 99 &&
			   s->read.value == 10 && s->read.id == 7 && s->read.lost == 0 &&
			   s->read.entry_size == 24 &&
			   uevent_perf_u64(s->read.values, 3, bo) == 20 &&
			   uevent_perf_u64(s->read.values, 5, bo) == 3, "%s: sample group read", tag);
			ok(s->callchain_nr == 3 && uevent_perf_u64(s->callchain, 2, bo) == 0x401200 &&
			   s->raw_size == 12 && !memcmp(s->raw, "RAWDATA", 8), "%s: callchain and raw", tag);
			ok(s->branch_nr == 1 && s->branch_hw_idx == 5 &&
			   uevent_perf_u64(s->branch_entries, 1, bo) == 0x2000 &&
			   s->regs_user_abi == 2 && s->regs_user_nr == 3 &&
			   uevent_perf_u64(s->regs_user, 2, bo) == 13 &&
			   s->stack_user_size == 16 && s->stack_user_dyn_size == 12 &&
			   ((const uint8_t *)s->stack_user)[15] == 15, "%s: branch, regs_user, stack_user", tag);
			ok(s->weight == 300 && s->weight_var1 == 300 && s->weight_var2 == 4 &&
			   s->weight_var3 == 5 && s->data_src == 0x68100142 && s->transaction == 0x10 &&
			   s->regs_intr_nr == 2 && uevent_perf_u64(s->regs_intr, 1, bo) == 22 &&
			   s->phys_addr == 0x12345000 && s->cgroup == 77 && s->data_page_size == 4096 &&
			   s->code_page_size == 2097152, "%s: weight struct, data_src ... code_page_size", tag);
			ok(s->tls_user_size == 24 && s->tls_user_dyn_size == 24 &&
			   !memcmp(s->tls_user, "TLS:trace-0123456789ab", 22) &&
			   s->aux_size == 8 && !memcmp(s->aux, "AUXBYTES", 8),
			   "%s: PERF_SAMPLE_TLS_USER after CODE_PAGE_SIZE, then AUX", tag);
			break;
		}
		case 1:
			ok(r.u.mmap.addr == 0x400000 && r.u.mmap.len == 0x1000 &&
			   !strcmp(r.u.mmap.filename, "/bin/true"), "%s: MMAP", tag);
			break;
		case 2:
			ok(r.u.mmap.maj == 8 && r.u.mmap.min == 1 && r.u.mmap.ino == 1234 &&
			   r.u.mmap.prot == 5 && r.u.mmap.flags == 2 &&
			   !strcmp(r.u.mmap.filename, "/usr/lib/libc.so.6"), "%s: MMAP2", tag);
			break;
		case 3:
			ok(r.u.mmap.build_id_size == 20 && r.u.mmap.build_id[19] == 20 &&
			   !strcmp(r.u.mmap.filename, "/usr/lib/libbuild.so"), "%s: MMAP2 with build id", tag);
			break;
		case 4:
			ok(r.u.comm.pid == 100 && !strcmp(r.u.comm.comm, "demo"), "%s: COMM", tag);
			break;
		case 5:
			ok(r.u.task.pid == 102 && r.u.task.ppid == 100 && r.u.task.time == 4000, "%s: FORK", tag);
			break;
		case 6:
			ok(r.u.task.time == 6000, "%s: EXIT", tag);
			break;
		case 7:
			ok(r.u.lost.id == 7 && r.u.lost.lost == 42, "%s: LOST", tag);
			break;
		case 8:
			ok(r.u.lost.lost == 5, "%s: LOST_SAMPLES", tag);
			break;
		case 9:
		case 10:
			ok(r.u.throttle.time == (i == 9 ? 5100u : 5200u) && r.u.throttle.id == 7,
			   "%s: %s", tag, uevent_perf_record_name(r.type));
			break;
		case 11:
			ok(r.misc & PERF_RECORD_MISC_SWITCH_OUT, "%s: SWITCH (out)", tag);
			break;
		case 12:
			ok(r.u.sw.next_prev_pid == 200 && r.u.sw.next_prev_tid == 201, "%s: SWITCH_CPU_WIDE", tag);
			break;
		case 13:
			ok(r.u.ksymbol.addr == 0xffffffffc0001000ull && r.u.ksymbol.len == 256 &&
			   r.u.ksymbol.ksym_type == 1 &&
			   !strcmp(r.u.ksymbol.name, "bpf_prog_6deef7357e7b4530_x"), "%s: KSYMBOL", tag);
			break;
		case 14:
			ok(r.u.bpf_event.type == 1 && r.u.bpf_event.id == 42 && r.u.bpf_event.tag[0] == 0x6d &&
			   r.u.bpf_event.tag[7] == 0x30, "%s: BPF_EVENT (mainline 18, with tag)", tag);
			break;
		case 15:
			ok(r.u.uevent.format == 1 && r.u.uevent.type == 0 &&
			   !uevent_text_decode(r.u.uevent.data, r.u.uevent.size, bo, &t) &&
			   !strcmp(t.text, "hello perf") && r.u.uevent.id.time == 5000 && r.body == UEVENT_BODY_UEVENT && r.id.tid == 101,
			   "%s: UEVENT through uevent_record_decode", tag);
			break;
		}
		off += r.size;
		i++;
	}
	ok(!bad && i == 16 && off == len, "%s: 16 records, all decoded (%d)", tag, i);
}

/* Every prefix of every record fails; shrinking header.size and flipping bytes never crash. */
static void torture(const uint8_t *buf, size_t len, int bo, const char *tag)
{
	struct uevent_perf_format f = golden_format(), v0 = golden_format();
	struct uevent_perf_record r = { .sz = sizeof(r) };
	size_t off, k, prefixes = 0, prefix_fail = 0, shrunk = 0, mut = 0;
	unsigned int rnd = 12345;
	int i;

	v0.flags = UEVENT_PERF_UEVENT_V0 | UEVENT_PERF_BPF_EVENT_V0;
	for (off = 0; off < len; off += rec_size(buf + off, bo)) {
		size_t sz = rec_size(buf + off, bo);

		for (k = 0; k < sz; k++) {
			/* an exact-size heap copy: AddressSanitizer sees any overread */
			uint8_t *p = malloc(k ? k : 1);

			memcpy(p, buf + off, k);
			prefixes++;
			if (uevent_perf_record_decode(p, k, bo, &f, &r) < 0)
				prefix_fail++;
			if (k >= 8) {
				uint16_t s16 = (uint16_t)k;

				if (bo == UEVENT_BO_BIG)
					s16 = __builtin_bswap16(s16);
				memcpy(p + 6, &s16, 2);
				uevent_perf_record_decode(p, k, bo, &f, &r);
				uevent_perf_record_decode(p, k, bo, &v0, &r);
				shrunk++;
			}
			free(p);
		}
		for (i = 0; i < 300; i++) {
			uint8_t *p = malloc(sz);
			int flips = 1 + (int)((rnd = rnd * 1103515245u + 12345u) >> 16) % 4, j;

			memcpy(p, buf + off, sz);
			for (j = 0; j < flips; j++) {
				rnd = rnd * 1103515245u + 12345u;
				p[(rnd >> 8) % sz] ^= (uint8_t)(1u << ((rnd >> 4) & 7));
			}
			if (uevent_perf_record_decode(p, sz, bo, &f, &r) == 0 &&
			    r.type == PERF_RECORD_SAMPLE && r.u.sample.raw_size)
				(void)((volatile const uint8_t *)r.u.sample.raw)[r.u.sample.raw_size - 1];
			uevent_perf_record_decode(p, sz, bo, &v0, &r);
			free(p);
			mut++;
		}
	}
	ok(prefixes > 1000 && prefix_fail == prefixes,
	   "%s: all %zu truncated prefixes are errors", tag, prefixes);
	ok(shrunk > 1000 && mut > 4000, "%s: %zu shrunk and %zu corrupted records decoded without a crash",
	   tag, shrunk, mut);
}

static void check_ring(void)
{
	size_t len = 0;
	uint8_t *img = slurp("ring.le.bin", &len), *map, out[8192], small[16];
	struct uevent_perf_format f = { .sz = sizeof(f) };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_mmap_page *pg;
	ssize_t n;
	uint64_t head;
	int err;

	if (!img || len != 8192) {
		skip(7, "t/data/ring.le.bin missing");
		return;
	}
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	skip(7, "the ring image is little-endian");
	return;
#endif
	map = aligned_alloc(4096, len);
	memcpy(map, img, len);
	pg = (void *)map;
	head = pg->data_head;
	n = uevent_ring_read(map, len, small, sizeof(small));
	ok(n == -ENOSPC && pg->data_tail != head, "ring: a record larger than the buffer is -ENOSPC");
	n = uevent_ring_read(map, len, out, sizeof(out));
	ok(n > 0 && pg->data_tail == head, "ring: read %zd bytes, data_tail advanced to data_head", n);
	f.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	f.sample_id_all = 1;
	err = uevent_perf_record_decode(out, (size_t)n, UEVENT_BO_HOST, &f, &r);
	ok(!err && r.type == PERF_RECORD_UEVENT && r.id.time == 1000 &&
	   !strcmp(r.u.uevent.data, "wrapped mark, longer than the 24 bytes left before the end"),
	   "ring: the record that wraps is copied out whole");
	err = uevent_perf_record_decode(out + r.size, (size_t)n - r.size, UEVENT_BO_HOST, &f, &r);
	ok(!err && r.type == PERF_RECORD_LOST && r.u.lost.lost == 3 && r.u.lost.id == 7,
	   "ring: the LOST record says 3 lost");
	ok(uevent_ring_read(map, len, out, sizeof(out)) == 0, "ring: empty after the read");
	pg->data_head = pg->data_tail + 8192;
	ok(uevent_ring_read(map, len, out, sizeof(out)) == -EINVAL && pg->data_tail == pg->data_head,
	   "ring: head - tail > size is corrupt, and the tail catches up");
	memcpy(map, img, len);
	memset(map + 4096 + 4096 - 24, 0xff, 8);	/* the wrapped record's header */
	n = uevent_ring_read(map, len, out, sizeof(out));
	ok(n == -EINVAL, "ring: a bad record size is corrupt");
	free(map);
	free(img);
}

static void check_raw(void)
{
	/* A user_events sample as perf writes it: common fields, u32 type, __rel_loc u8[] data */
	uint8_t rec[96] = { 0 }, raw[48] = { 0 };	/* the text layout below takes 44 */
	struct uevent_perf_format f = { .sz = sizeof(f), .sample_type = PERF_SAMPLE_TID |
					PERF_SAMPLE_TIME | PERF_SAMPLE_RAW };
	struct uevent_raw_layout ue = { .kind = UEVENT_RAW_USER_EVENTS,
					.type_offset = 8, .data_offset = 12 };
	struct uevent_raw_layout us = { .kind = UEVENT_RAW_USDT,
					.type_offset = 16, .size_offset = 20, .data_offset = 28,
					.data_capacity = 8 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	const struct uevent_record *u = &r.u.uevent;
	uint32_t v32, rawsz = 28;
	uint64_t v64;
	size_t n = 0;

	v32 = 3; memcpy(raw + 8, &v32, 4);
	v32 = (11u << 16) | 0; memcpy(raw + 12, &v32, 4);	/* 11 bytes right after the field */
	memcpy(raw + 16, "from guest", 11);
	memcpy(rec + 8, "\x64\0\0\0\x65\0\0\0", 8);		/* pid 100, tid 101 */
	v64 = 777; memcpy(rec + 16, &v64, 8);
	memcpy(rec + 24, &rawsz, 4);
	memcpy(rec + 28, raw, rawsz);
	n = 28 + rawsz;
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == 0 &&
	   r.type == PERF_RECORD_SAMPLE && r.body == UEVENT_BODY_SAMPLE && r.u.sample.raw_size == 28,
	   "a tracepoint sample of an event without a raw layout stays a sample");
	f.raw = ue;
	ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == 0 &&
	   r.type == PERF_RECORD_UEVENT && r.body == UEVENT_BODY_UEVENT &&
	   r.transport == UEVENT_TRANSPORT_USER_EVENTS && u->type == 3 && u->size == 11 &&
	   !strcmp(u->data, "from guest") && u->id.time == 777 && u->id.tid == 101 &&
	   r.id.tid == 101 && u->record_type == PERF_RECORD_UEVENT && !u->flags,
	   "user_events: the decoder turns a libuevent_v1 RAW sample into a uevent record");
	v32 = (200u << 16); memcpy(rec + 28 + 12, &v32, 4);
	ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == -EINVAL,
	   "user_events: a __rel_loc past the end is refused");
	/* usdt: type at 16, u64 size at 20, 8 bytes of fetched data at 28 */
	memset(raw, 0, sizeof(raw));
	v32 = 0; memcpy(raw + 16, &v32, 4);
	v64 = 12; memcpy(raw + 20, &v64, 8);
	memcpy(raw + 28, "usdt-cut", 8);
	rawsz = 36;
	memcpy(rec + 24, &rawsz, 4);
	memcpy(rec + 28, raw, rawsz);
	n = 28 + rawsz + 4;
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	f.raw = us;
	ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == -EINVAL,
	   "a sample with bytes after its last field is corrupt");
	n -= 4;
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == 0 &&
	   r.transport == UEVENT_TRANSPORT_USDT && u->size == 8 &&
	   (u->flags & UEVENT_RECORD_TRUNCATED) && !memcmp(u->data, "usdt-cut", 8),
	   "usdt: a payload over the fetched capacity is cut and says so");
	{
		struct uevent_perf_record small = { .sz = sizeof(small) - 8 };
		struct {
			struct uevent_perf_format f;
			uint64_t newer;
		} big = { .f = f, .newer = 0 };

		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &small) == -EINVAL &&
		   errno == EINVAL, "a record whose sz is below this release's size is refused");
		big.f.sz = sizeof(big);
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &big.f, &r) == 0 &&
		   r.body == UEVENT_BODY_UEVENT, "a newer caller's format with a zero tail decodes");
		big.newer = 1;
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &big.f, &r) == -E2BIG,
		   "a newer caller's format with a field set this library lacks: -E2BIG");
		big.f.sz = offsetof(struct uevent_perf_format, raw);
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &big.f, &r) == 0 &&
		   r.body == UEVENT_BODY_SAMPLE, "an older caller's format (no raw layout) decodes "
		   "samples as samples");
	}
	{
		struct uevent_raw_layout l;
		static const char usdt_fmt[] =
			"name: emit\nID: 1234\nformat:\n"
			"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			"\tfield:u32 type;\toffset:16;\tsize:4;\tsigned:0;\n"
			"\tfield:u64 size;\toffset:20;\tsize:8;\tsigned:0;\n"
			"\tfield:u64 d0[64];\toffset:28;\tsize:512;\tsigned:0;\n"
			"\tfield:u64 d1[2];\toffset:540;\tsize:16;\tsigned:0;\n";
		static const char ue_fmt[] =
			"name: libuevent_v1\nID: 99\nformat:\n"
			"\tfield:u32 type;\toffset:8;\tsize:4;\tsigned:0;\n"
			"\tfield:__rel_loc u8[] data;\toffset:12;\tsize:4;\tsigned:0;\n";

		ok(uevent_raw_layout_from_format(&l, usdt_fmt) == 0 && l.kind == UEVENT_RAW_USDT &&
		   l.type_offset == 16 && l.size_offset == 20 && l.data_offset == 28 &&
		   l.data_capacity == 528, "raw layout of our usdt probe from its format text");
		ok(uevent_raw_layout_from_format(&l, ue_fmt) == 0 &&
		   l.kind == UEVENT_RAW_USER_EVENTS && l.type_offset == 8 && l.data_offset == 12,
		   "raw layout of the user_events tracepoint from its format text");
		ok(uevent_raw_layout_from_format(&l, "name: x\nformat:\n") == -ENOENT &&
		   l.kind == UEVENT_RAW_NONE, "a format without our fields is not a carrier");
	}
	{
		/* uevent probe --perf-event's libuevent:emit, as the kernel formats it */
		static const char text_fmt[] =
			"name: emit\nID: 2331\nformat:\n"
			"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			"\tfield:u32 type;\toffset:16;\tsize:4;\tsigned:0;\n"
			"\tfield:u64 size;\toffset:20;\tsize:8;\tsigned:0;\n"
			"\tfield:__data_loc char[] text;\toffset:28;\tsize:4;\tsigned:1;\n";
		struct uevent_raw_layout l;

		ok(uevent_raw_layout_from_format(&l, text_fmt) == 0 &&
		   l.kind == UEVENT_RAW_USDT_TEXT && l.type_offset == 16 && l.size_offset == 20 &&
		   l.data_offset == 28, "raw layout of libuevent:emit (a __data_loc text)");
		/* raw: type 0 at 16, size at 20, __data_loc at 28 -> "perf text" (10) at 32 */
		memset(raw, 0, sizeof(raw));
		v64 = 10; memcpy(raw + 20, &v64, 8);
		v32 = (10u << 16) | 32; memcpy(raw + 28, &v32, 4);
		memcpy(raw + 32, "perf text", 10);
		rawsz = 44;		/* the string and 2 bytes of padding: u64-aligned */
		memcpy(rec + 24, &rawsz, 4);
		memcpy(rec + 28, raw, rawsz);
		n = 28 + rawsz;
		h.size = (uint16_t)n;
		memcpy(rec, &h, sizeof(h));
		f.raw = l;
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == 0 &&
		   r.transport == UEVENT_TRANSPORT_USDT && u->type == 0 && u->size == 10 &&
		   !u->flags && !strcmp(u->data, "perf text"),
		   "libuevent:emit: a text mark decodes whole");
		v64 = 24; memcpy(rec + 28 + 20, &v64, 8);	/* a binary payload cut at a NUL */
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == 0 && u->size == 10 &&
		   (u->flags & UEVENT_RECORD_TRUNCATED),
		   "libuevent:emit: a payload longer than its string is cut and says so");
		v32 = (10u << 16) | 40; memcpy(rec + 28 + 28, &v32, 4);
		ok(uevent_perf_record_decode(rec, n, UEVENT_BO_HOST, &f, &r) == -EINVAL,
		   "libuevent:emit: a __data_loc past the end is refused");
	}
}

static void check_attr(void)
{
	struct perf_event_attr a;
	struct uevent_feature_info fi;
	uint64_t word;
	uint16_t tls;
	uint32_t aux;
	int fd;

	ok(uevent_attr_init(&a, sizeof(a), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY) == 0 &&
	   a.size == sizeof(a) && a.type == PERF_TYPE_SOFTWARE, "attr_init: zeroed, size set");
	uevent_attr_set_uevents(&a, 1);
	memcpy(&word, (uint8_t *)&a + 40, 8);
	ok(word == 1ull << PERF_ATTR_UEVENTS_BIT, "attr.uevents is bit 63 of the flags word");
	uevent_attr_set_tls_user(&a, 64);
	memcpy(&tls, (uint8_t *)&a + 110, 2);
	uevent_attr_set_aux_sample(&a, 4096);
	memcpy(&aux, (uint8_t *)&a + 112, 4);
	ok(tls == 64 && aux == 4096 && (a.sample_type & (1ull << 25)) &&
	   (a.sample_type & PERF_SAMPLE_AUX), "TLS_USER (bit 25, u16 at 110), AUX (u32 at 112)");
	ok(uevent_attr_set_tls_user(&a, 70000) == -E2BIG, "sample_tls_user over 65535 is -E2BIG");
	uevent_attr_set_bpf_event(&a, 1);
	uevent_attr_set_clock(&a, CLOCK_MONOTONIC);
	ok(a.bpf_event && a.ksymbol && a.use_clockid && a.clockid == CLOCK_MONOTONIC,
	   "bpf_event sets ksymbol too; clock");
	ok(uevent_attr_set_sample_id_all(&a, PERF_SAMPLE_RAW) == -EINVAL,
	   "sample_id_all takes only sample_id bits");

	uevent_attr_init(&a, sizeof(a), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	uevent_attr_set_uevents(&a, 1);
	uevent_feature_probe(UEVENT_FEAT_ATTR_UEVENTS, &fi);
	fd = uevent_perf_open(&a, 0, -1, -1, 0);
	if (fi.state == UEVENT_FEAT_PRESENT) {
		ok(fd >= 0, "perf_open with attr.uevents on a kernel that has it");
	} else if (fd == -EACCES || fd == -EPERM || fd == -ENOSYS) {
		skip(1, "perf_event_open not allowed here");
	} else {
		ok(fd == -EOPNOTSUPP && strstr(uevent_reason(), "attr.uevents") &&
		   strstr(uevent_reason(), "not supported"),
		   "a stock kernel: -EOPNOTSUPP, \"%s\"", uevent_reason());
	}
	if (fd >= 0) {
		ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the fd is close-on-exec");
		close(fd);
	} else {
		uevent_attr_init(&a, sizeof(a), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
		fd = uevent_perf_open(&a, 0, -1, -1, 0);
		if (fd >= 0) {
			ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the fd is close-on-exec");
			close(fd);
		} else {
			skip(1, "perf_event_open not allowed here");
		}
	}
}

/* ---- perf.data files: both byte orders alike, every prefix, random corruption ------- */

static int write_tmp(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok_ = f && fwrite(p, 1, n, f) == n;

	if (f)
		fclose(f);
	return ok_ ? 0 : -1;
}

/* Reads the whole file: the number of records, or -errno where it stopped. */
static long read_all(const char *path, uint64_t *ends, size_t cap)
{
	struct uevent_perf_file *f = uevent_perf_file__open(path);
	struct uevent_perf_record r = { .sz = sizeof(r) };
	long n = 0;
	int ret;

	if (!f)
		return -errno;
	while ((ret = uevent_perf_file__next(f, &r)) != 0) {
		if (ret < 0 && ret != -EPROTO) {
			uevent_perf_file__close(f);
			return ret;
		}
		if (ends && (size_t)n < cap)
			ends[n] = uevent_perf_file__offset(f);
		n++;
	}
	uevent_perf_file__close(f);
	return n;
}

/* p (n bytes) lies within the bytes of f (uevent_perf_file__bytes()), or is NULL. */
static int inside(const struct uevent_perf_file *f, const void *p, size_t n)
{
	size_t len = 0;
	const uint8_t *b = uevent_perf_file__bytes(f, &len);

	return !p || (b && (const uint8_t *)p >= b && n <= len &&
		      (size_t)((const uint8_t *)p - b) <= len - n);
}

/* Every pointer member of rec points into its reader's bytes. */
static int pointers_inside(const struct uevent_perf_file *f, const struct uevent_perf_record *r)
{
	const struct uevent_perf_sample *s = &r->u.sample;

	if (r->type == PERF_RECORD_SAMPLE)
		return inside(f, s->callchain, s->callchain_nr * 8) && inside(f, s->raw, s->raw_size) &&
			inside(f, s->branch_entries, s->branch_nr * 24) &&
			inside(f, s->regs_user, s->regs_user_nr * 8) &&
			inside(f, s->stack_user, s->stack_user_size) &&
			inside(f, s->tls_user, s->tls_user_size) && inside(f, s->aux, s->aux_size);
	if (r->type == PERF_RECORD_UEVENT)
		return inside(f, r->u.uevent.data, r->u.uevent.size);
	return 1;
}

static void check_perf_files(void)
{
	const char *top = getenv("top_srcdir");
	char le_path[4096], be_path[4096], tmp[] = "/tmp/perfdec.XXXXXX";
	struct uevent_perf_file *le, *be;
	struct uevent_perf_record a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
	uint64_t ends[64];
	uint8_t *img, *p;
	size_t len, k, bad = 0, cut = 0, boundary = 0, nb = 0;
	unsigned int rnd = 777;
	char tmp_path[4096];
	long n, nrec, outside = 0, usdt_uevents = 0;
	int same = 1, ra, rb, fd, i, j, bo_ok;

	snprintf(le_path, sizeof(le_path), "%s/t/data/perf_records.le.perf.data", top ? top : "..");
	snprintf(be_path, sizeof(be_path), "%s/t/data/perf_records.be.perf.data", top ? top : "..");
	le = uevent_perf_file__open(le_path);
	be = uevent_perf_file__open(be_path);
	if (!le || !be) {
		skip(5, "t/data/perf_records.*.perf.data missing");
		uevent_perf_file__close(le);
		uevent_perf_file__close(be);
		return;
	}
	bo_ok = uevent_perf_file__byte_order(le) == UEVENT_BO_LITTLE &&
		uevent_perf_file__byte_order(be) == UEVENT_BO_BIG;
	for (n = 0;; n++) {
		ra = uevent_perf_file__next(le, &a);
		rb = uevent_perf_file__next(be, &b);
		if (ra != rb) {
			same = 0;
			break;
		}
		if (ra <= 0)
			break;
		if (!pointers_inside(le, &a) || !pointers_inside(be, &b))
			outside++;
		if (a.type == 64)
			continue;	/* HEADER_ATTR: raw bytes in the file's order */
		if (a.type != b.type || a.size != b.size || memcmp(&a.id, &b.id, sizeof(a.id)))
			same = 0;
		else if (a.type == PERF_RECORD_SAMPLE)
			same &= a.u.sample.ip == b.u.sample.ip && a.u.sample.period == b.u.sample.period &&
				a.u.sample.callchain_nr == 3 && a.u.sample.tls_user_size == 24 &&
				uevent_perf_u64(a.u.sample.callchain, 2, UEVENT_BO_LITTLE) ==
				uevent_perf_u64(b.u.sample.callchain, 2, UEVENT_BO_BIG) &&
				!memcmp(a.u.sample.tls_user, b.u.sample.tls_user, 24);
		else if (a.type == PERF_RECORD_UEVENT)
			same &= a.u.uevent.size == 11 && b.u.uevent.size == 11 &&
				!memcmp(a.u.uevent.data, b.u.uevent.data, 11);
		else if (a.type == PERF_RECORD_BPF_EVENT)
			same &= a.u.bpf_event.id == 42 && b.u.bpf_event.id == 42 &&
				!memcmp(a.u.bpf_event.tag, b.u.bpf_event.tag, 8);
	}
	ok(same && bo_ok && n == 17, "perf.data: the big-endian file decodes as the little-endian one "
	   "(%ld records, byte orders %s)", n, bo_ok ? "reported" : "WRONG");
	for (i = 0; i < 2; i++) {	/* usdt samples: their uevents' payloads are in raw */
		struct uevent_perf_file *u;

		snprintf(tmp_path, sizeof(tmp_path), "%s/t/data/usdt%s.perf.data", top ? top : "..",
			 i ? ".pipe" : "");
		u = uevent_perf_file__open(tmp_path);
		if (!u) {
			outside++;
			continue;
		}
		while (uevent_perf_file__next(u, &a) > 0) {
			usdt_uevents += a.type == PERF_RECORD_UEVENT;
			outside += !pointers_inside(u, &a);
		}
		uevent_perf_file__close(u);
	}
	len = 1;
	ok(!outside && usdt_uevents == 8 && uevent_perf_file__bytes(le, &len) && len > 0 &&
	   !uevent_perf_file__bytes(NULL, &len) && errno == EINVAL &&
	   !uevent_perf_file__bytes(le, NULL) && errno == EINVAL,
	   "perf.data: every record's pointers point into __bytes() (%ld outside, %ld usdt "
	   "uevents); NULL is EINVAL", outside, usdt_uevents);
	uevent_perf_file__close(le);
	uevent_perf_file__close(be);

	/* every prefix of the big-endian pipe file: an error, or a clean end on a boundary */
	nrec = read_all(be_path, ends, 64);
	img = slurp("perf_records.be.perf.data", &len);
	fd = mkstemp(tmp);
	if (fd < 0 || !img || nrec != 17) {
		skip(3, "cannot set up the perf.data torture");
		free(img);
		return;
	}
	close(fd);
	for (k = 0; k < len; k++) {
		int at_boundary = 0;	/* the prefix ends where a record (the attr first) ends */

		for (j = 0; j < nrec; j++)
			at_boundary |= ends[j] == k;
		write_tmp(tmp, img, k);
		n = read_all(tmp, NULL, 0);
		cut++;
		nb += at_boundary;
		if (at_boundary)
			boundary += n >= 0;
		else
			bad += n < 0;
	}
	ok(nb == (size_t)nrec - 1 && bad == cut - nb && boundary == nb,
	   "perf.data: %zu prefixes, %zu cut inside a record are errors, %zu of %zu on a boundary "
	   "read cleanly", cut, bad, boundary, nb);
	/* random corruption of both the pipe file and perf's own file-mode output */
	for (i = 0; i < 2; i++) {
		size_t fails = 0;

		if (i == 1) {
			free(img);
			img = slurp("usdt.perf.data", &len);
			if (!img) {
				skip(1, "t/data/usdt.perf.data missing");
				break;
			}
		}
		p = malloc(len);
		for (j = 0; j < 600; j++) {
			int flips = 1 + (int)((rnd = rnd * 1103515245u + 12345u) >> 16) % 8, m;

			memcpy(p, img, len);
			for (m = 0; m < flips; m++) {
				rnd = rnd * 1103515245u + 12345u;
				/* the headers and the first records, where the lengths live */
				p[(rnd >> 8) % (len < 2048 ? len : 2048)] ^= (uint8_t)(1u << ((rnd >> 4) & 7));
			}
			write_tmp(tmp, p, len);
			fails += read_all(tmp, NULL, 0) < 0;
		}
		free(p);
		ok(fails > 0, "perf.data: 600 corrupted %s files read without a crash (%zu refused)",
		   i ? "perf record" : "pipe", fails);
	}
	unlink(tmp);
	free(img);
}

/* fd holds the first n bytes of p, nothing more */
static int put(int fd, const uint8_t *p, size_t n)
{
	return ftruncate(fd, 0) || pwrite(fd, p, n, 0) != (ssize_t)n ? -1 : 0;
}

/*
 * A recording cut short (a killed writer, a full disk): cut anywhere in its data, a file
 * gives every whole record before the cut, then -ENODATA (again on the next call) with
 * the offset at the cut record. Cut on a record boundary, perf's pipe mode (no end
 * mark) ends cleanly, and file mode, whose header says more data than there is, gives
 * -ENODATA at the cut.
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_cuts(void)
{
	static const char *const names[] = { "usdt.pipe.perf.data", "usdt.perf.data" };
	/* a memfd: thousands of rewrites of a file on disk take seconds (ext4 flushes them) */
	int fd = memfd_create("perfdec-cut", MFD_CLOEXEC), i;
	char tmp[64];

	if (fd < 0) {
		skip(2, "no memfd_create");
		return;
	}
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	for (i = 0; i < 2; i++) {
		static uint64_t ends[1024];
		size_t len, k, m, n, nend = 0, tried = 0, right = 0;
		uint8_t *img = slurp(names[i], &len);
		struct uevent_perf_file *f;
		struct uevent_perf_record r = { .sz = sizeof(r) };
		int ret = 0;

		f = img && !put(fd, img, len) ? uevent_perf_file__open(tmp) : NULL;
		while (f && nend < 1024 && ((ret = uevent_perf_file__next(f, &r)) > 0 || ret == -EPROTO))
			ends[nend++] = uevent_perf_file__offset(f);
		uevent_perf_file__close(f);
		/* the reader gives time order; where each record ends, in file order */
		qsort(ends, nend, sizeof(ends[0]), cmp_u64);
		if (!f || ret != 0 || nend < 100) {
			skip(1, "a golden usdt perf.data missing or unreadable");
			free(img);
			continue;
		}
		for (k = ends[0]; k <= ends[nend - 1]; k += 5) {
			for (m = 0; m < nend && ends[m] <= k; m++)
				;
			put(fd, img, k);
			f = uevent_perf_file__open(tmp);
			n = 0;
			while (f && ((ret = uevent_perf_file__next(f, &r)) > 0 || ret == -EPROTO))
				n++;
			tried++;
			if (f && n == m && (ends[m - 1] == k && (i == 0 || k == ends[nend - 1]) ? ret == 0 :
			    ret == -ENODATA && uevent_perf_file__offset(f) == ends[m - 1] &&
			    uevent_perf_file__next(f, &r) == -ENODATA))
				right++;
			else if (tried - right <= 3)
				diag("%s cut at %zu: %zu records (want %zu), then %d", names[i], k, n, m, ret);
			uevent_perf_file__close(f);
		}
		ok(right == tried, "%s: %zu of %zu prefixes cut in the data give their whole records, "
		   "then -ENODATA at the cut (on a boundary: %s)", names[i], right, tried,
		   i == 0 ? "the end, as perf's pipe mode has no end mark" : "-ENODATA too");
		free(img);
	}
	close(fd);
}

/*
 * Kernels with the shared-header bug (this host's 6.18.44) write a KSYMBOL or BPF_EVENT longer than its contents when more than one
 * event listens (the sizes of earlier listeners' sample_id add up); the sample_id
 * follows the body and the rest is stale. Built here as that kernel wrote them.
 */
static void check_oversized(void)
{
	struct uevent_perf_format f = { .sz = sizeof(f) };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	uint8_t k[128], b[88];
	uint64_t v;
	uint32_t u32;
	uint16_t u16;
	int err;

	f.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	f.sample_id_all = 1;
	memset(k, 0xee, sizeof(k));
	u32 = PERF_RECORD_KSYMBOL; memcpy(k, &u32, 4);
	u16 = 0; memcpy(k + 4, &u16, 2);
	u16 = sizeof(k); memcpy(k + 6, &u16, 2);	/* 24 + 40 + 32 used, 32 stale */
	v = 0xffffffffc0001808ull; memcpy(k + 8, &v, 8);
	u32 = 16; memcpy(k + 16, &u32, 4);
	u16 = 1; memcpy(k + 20, &u16, 2);
	u16 = 0; memcpy(k + 22, &u16, 2);
	memset(k + 24, 0, 40);
	memcpy(k + 24, "bpf_prog_59f4a931744dcdc6_uevent_t", 34);
	u32 = 77; memcpy(k + 64, &u32, 4); memcpy(k + 68, &u32, 4);
	v = 123456789; memcpy(k + 72, &v, 8);
	u32 = 1; memcpy(k + 80, &u32, 4); memset(k + 84, 0, 4);
	v = 0x188806; memcpy(k + 88, &v, 8);
	err = uevent_perf_record_decode(k, sizeof(k), UEVENT_BO_HOST, &f, &r);
	ok(!err && r.size == sizeof(k) &&
	   !strcmp(r.u.ksymbol.name, "bpf_prog_59f4a931744dcdc6_uevent_t") &&
	   r.u.ksymbol.flags == 0 && r.id.pid == 77 && r.id.time == 123456789 && r.id.cpu == 1 &&
	   r.id.identifier == 0x188806,
	   "KSYMBOL written 32 bytes too long: sample_id read after the name (pid %u time %llu id %#llx)",
	   r.id.pid, (unsigned long long)r.id.time, (unsigned long long)r.id.identifier);

	memset(b, 0, sizeof(b));
	u32 = PERF_RECORD_BPF_EVENT; memcpy(b, &u32, 4);
	u16 = sizeof(b); memcpy(b + 6, &u16, 2);	/* 24 + 32 used, 32 stale zeros */
	u16 = 2; memcpy(b + 8, &u16, 2);
	u32 = 276; memcpy(b + 12, &u32, 4);
	memcpy(b + 16, "\x59\xf4\xa9\x31\x74\x4d\xcd\xc6", 8);
	u32 = 88; memcpy(b + 24, &u32, 4); memcpy(b + 28, &u32, 4);
	v = 987654321; memcpy(b + 32, &v, 8);
	v = 0x188806; memcpy(b + 48, &v, 8);
	err = uevent_perf_record_decode(b, sizeof(b), UEVENT_BO_HOST, &f, &r);
	ok(!err && r.u.bpf_event.type == 2 && r.u.bpf_event.id == 276 && r.u.bpf_event.tag[0] == 0x59 &&
	   r.id.tid == 88 && r.id.time == 987654321 && r.id.identifier == 0x188806,
	   "BPF_EVENT written 32 bytes too long: decoded, sample_id read after the tag (err %d)", err);

	/* a well-formed one still reads its sample_id from the end */
	u16 = 56; memcpy(b + 6, &u16, 2);
	err = uevent_perf_record_decode(b, 56, UEVENT_BO_HOST, &f, &r);
	ok(!err && r.size == 56 && r.id.time == 987654321 && r.id.identifier == 0x188806,
	   "BPF_EVENT of the right size: unchanged");
	/* a KSYMBOL whose name has no NUL is corrupt, not read past */
	memset(k + 24, 'x', sizeof(k) - 24);
	ok(uevent_perf_record_decode(k, sizeof(k), UEVENT_BO_HOST, &f, &r) == -EINVAL,
	   "KSYMBOL without a NUL-terminated name: -EINVAL");
}

/*
 * A sample's event and the raw-fields call's refusals: event_index from the file (a
 * bare decode knows none: -1), raw_fields only for a tracepoint sample with raw data
 * (t/perf-events.test decodes real ones).
 */
static void check_event_index(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096], buf[64];
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_perf_file *f;
	int ret, samples = 0, zero = 0, enoent = 0;

	snprintf(path, sizeof(path), "%s/t/data/clock.perf.data", top ? top : "..");
	f = uevent_perf_file__open(path);
	if (!f) {
		skip(2, "t/data/clock.perf.data missing");
		return;
	}
	while ((ret = uevent_perf_file__next(f, &r)) == 1) {
		if (r.body != UEVENT_BODY_SAMPLE)
			continue;
		samples++;
		zero += r.u.sample.event_index == 0;
		enoent += uevent_perf_file__raw_fields(f, &r, 0, buf, sizeof(buf)) == -ENOENT &&
			  buf[0] == 0;
	}
	ok(ret == 0 && samples > 0 && zero == samples &&
	   !strcmp(uevent_perf_file__event_name(f, 0), "task-clock") &&
	   !uevent_perf_file__event_name(f, -1) && errno == EINVAL,
	   "perf.data: each of %d samples has event_index 0 (task-clock); -1 names none",
	   samples);
	r.body = UEVENT_BODY_SAMPLE;
	ok(enoent == samples && uevent_perf_file__raw_fields(NULL, &r, 0, buf, 8) == -EINVAL &&
	   uevent_perf_file__raw_fields(f, &r, 2, buf, 8) == -EINVAL &&
	   uevent_perf_file__raw_fields(f, &r, 0, NULL, 8) == -EINVAL,
	   "raw_fields: -ENOENT for a sample of a non-tracepoint event (%d of %d), -EINVAL "
	   "for bad arguments", enoent, samples);
	uevent_perf_file__close(f);
}

/* uevent_perf_file__read_batch: the rows __next() gives, in any stride; its refusals. */
static void check_batch(void)
{
	const char *top = getenv("top_srcdir");
	struct row { uint64_t time; uint32_t pid, tid; int32_t ev; uint32_t pad; uint64_t ip; } rows[100];
	uint64_t t[10], ip[10], period[10], coff[4], chain[16], dataoff[4];
	uint32_t clen[4], dlen[4], type[4];
	uint8_t data[64];
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_perf_file *f, *g;
	char path[4096];
	size_t k, total = 0, same = 0, odd = 0;
	int ret, calls = 0, untouched = 1;

	snprintf(path, sizeof(path), "%s/t/data/clock.perf.data", top ? top : "..");
	f = uevent_perf_file__open(path);
	g = uevent_perf_file__open(path);
	if (!f || !g) {
		skip(4, "t/data/clock.perf.data missing");
		uevent_perf_file__close(f);
		uevent_perf_file__close(g);
		return;
	}
	/* packed columns, ten rows a call, against __next() */
	for (;;) {
		struct uevent_sample_batch b = { .sz = sizeof(b), .cap = 10, .time = t, .ip = ip,
						 .period = period };

		ret = uevent_perf_file__read_batch(f, &b, NULL);
		if (ret <= 0)
			break;
		calls++;
		for (k = 0; k < b.n; k++) {
			while (uevent_perf_file__next(g, &r) == 1 && r.body != UEVENT_BODY_SAMPLE)
				;
			same += r.u.sample.time == t[k] && r.u.sample.ip == ip[k] &&
				r.u.sample.period == period[k];
		}
		total += b.n;
	}
	ok(ret == 0 && total == 87 && same == total && calls == 9,
	   "read_batch: %zu samples in %d calls of 10 rows, %zu as __next() gives them",
	   total, calls, same);
	uevent_perf_file__close(f);

	/* an array of structs: one stride, a column left NULL untouched */
	memset(rows, 0xee, sizeof(rows));
	f = uevent_perf_file__open(path);
	{
		struct uevent_sample_batch b = { .sz = sizeof(b), .cap = 100, .stride = sizeof(rows[0]),
						 .time = &rows[0].time, .pid = &rows[0].pid,
						 .tid = &rows[0].tid, .event_index = &rows[0].ev,
						 .ip = &rows[0].ip };

		ret = uevent_perf_file__read_batch(f, &b, NULL);
		for (k = 0; k < b.n; k++) {
			untouched &= rows[k].pad == 0xeeeeeeee;
			odd += rows[k].ev != 0 || rows[k].pid != rows[k].tid || !rows[k].time;
		}
		ok(ret == 87 && b.n == 87 && untouched && !odd && rows[87].pad == 0xeeeeeeee &&
		   uevent_perf_file__read_batch(f, &b, NULL) == 0 && b.n == 0,
		   "read_batch into an array of structs (stride %zu): 87 rows, the rest untouched, "
		   "then 0", sizeof(rows[0]));
	}
	uevent_perf_file__close(f);
	uevent_perf_file__close(g);

	/* big endian: the callchain and payload in host order; refusals */
	snprintf(path, sizeof(path), "%s/t/data/perf_records.be.perf.data", top ? top : "..");
	f = uevent_perf_file__open(path);
	if (!f) {
		skip(2, "t/data/perf_records.be.perf.data missing");
		return;
	}
	{
		struct uevent_sample_batch b = { .sz = sizeof(b), .cap = 4, .chain_off = coff,
						 .chain_len = clen, .chain = chain, .chain_cap = 2 };
		struct uevent_record_batch u = { .sz = sizeof(u), .cap = 4, .type = type,
						 .data_off = dataoff, .data_len = dlen,
						 .data = data, .data_cap = sizeof(data) };
		struct { struct uevent_sample_batch b; uint64_t newer; } big = { b, 1 };
		uint64_t at = uevent_perf_file__offset(f);
		int nospc, e2big, einval, enull;

		big.b.sz = sizeof(big);
		nospc = uevent_perf_file__read_batch(f, &b, &u);
		e2big = uevent_perf_file__read_batch(f, &big.b, &u);
		b.stride = 4;
		einval = uevent_perf_file__read_batch(f, &b, &u);
		b.stride = 0;
		enull = uevent_perf_file__read_batch(NULL, &b, &u);
		/* the sample stays the next record: the rows read after say so */
		ok(nospc == -ENOSPC && b.n == 0 && uevent_perf_file__offset(f) > at && e2big == -E2BIG &&
		   einval == -EINVAL && enull == -EINVAL,
		   "read_batch: -ENOSPC for a callchain longer than an empty batch holds (the "
		   "record left where it was), -E2BIG for a newer caller's field, -EINVAL for a "
		   "stride narrower than a column and no file");
		b.chain_cap = 16;
		ret = uevent_perf_file__read_batch(f, &b, &u);
		ok(ret == 2 && b.n == 1 && u.n == 1 && b.chain_n == 3 && clen[0] == 3 &&
		   coff[0] == 0 && chain[0] == 0x401000 && chain[2] == 0x401200 && type[0] == 0 &&
		   dlen[0] == 11 && u.data_n == 11 && !memcmp(data + dataoff[0], "hello perf", 11),
		   "read_batch of a big-endian file: a sample's callchain and a uevent's payload, "
		   "in host order");
	}
	uevent_perf_file__close(f);
}

/*
 * PERF_SAMPLE_TLS_USER read on return to user space: the sample holds a cookie, a
 * PERF_RECORD_TLS_USER_DEFERRED record later in the file the bytes. A bare decode says
 * the context is still to come (-EINPROGRESS, the cookie in tls_user_dyn_size); the
 * perf.data reader joins the record to the samples of the same thread and cookie.
 */
static size_t put_rec(uint8_t *p, uint32_t type, const void *body, size_t n)
{
	struct perf_event_header h = { .type = type, .size = (uint16_t)(8 + n) };

	memcpy(p, &h, 8);
	memcpy(p + 8, body, n);
	return 8 + n;
}

/* A pipe-mode perf.data's start: the magic, then a HEADER_ATTR record of a with id. */
static size_t pipe_head(uint8_t *img, const struct perf_event_attr *a, uint64_t id)
{
	uint8_t body[sizeof(*a) + 8];
	uint64_t v = 0x32454c4946524550ull;		/* "PERFILE2" */

	memcpy(img, &v, 8);
	v = 16;
	memcpy(img + 8, &v, 8);
	memcpy(body, a, sizeof(*a));
	memcpy(body + sizeof(*a), &id, 8);
	return 16 + put_rec(img + 16, 64, body, sizeof(body));	/* PERF_RECORD_HEADER_ATTR */
}

static void check_tls_deferred(void)
{
	static const uint8_t trace[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
					   0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };
	static const uint8_t span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };
	struct uevent_perf_format f = { .sz = sizeof(f) };
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_attr a;
	uint8_t img[2048], body[512], ctx[UEVENT_THREAD_CONTEXT_SIZE];
	uint64_t v, cookie = 0x0000002a00000002ull, id = 42;
	uint32_t u[2];
	size_t n = 0, b;
	struct uevent_perf_file *pf;
	int fd, joined = 0, waiting = 0, deferred = 0, i, ret;
	char tmp[64];

	if (uevent_thread_context_set(trace, span, 1) < 0) {
		skip(3, "uevent_thread_context_set failed");
		return;
	}
	memcpy(ctx, uevent_thread_context_get(), sizeof(ctx));

	/* pipe-mode perf.data: magic, one attr, two samples with the cookie, the record */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER;
	a.sample_tls_user = sizeof(ctx);
	n = pipe_head(img, &a, id);
	for (i = 0; i < 2; i++) {
		b = 0;
		memcpy(body, &id, 8); b += 8;
		u[0] = 10; u[1] = 11 + (uint32_t)i;		/* the second is another thread */
		memcpy(body + b, u, 8); b += 8;
		v = PERF_TLS_USER_DEFERRED; memcpy(body + b, &v, 8); b += 8;
		memcpy(body + b, &cookie, 8); b += 8;
		n += put_rec(img + n, PERF_RECORD_SAMPLE, body, b);
	}
	b = 0;
	u[0] = 10; u[1] = 11;
	memcpy(body, u, 8); b += 8;
	memcpy(body + b, &cookie, 8); b += 8;
	v = sizeof(ctx); memcpy(body + b, &v, 8); b += 8;
	memcpy(body + b, ctx, sizeof(ctx)); b += sizeof(ctx);
	memcpy(body + b, &v, 8); b += 8;			/* dyn_size: all read */
	n += put_rec(img + n, PERF_RECORD_TLS_USER_DEFERRED, body, b);

	f.sample_type = a.sample_type;
	ret = uevent_perf_record_decode(img + 16 + 8 + sizeof(a) + 8, 40, UEVENT_BO_HOST, &f, &r);
	ok(ret == 0 && r.u.sample.tid == 11 && r.u.sample.tls_user_size == 0 &&
	   r.u.sample.tls_user_dyn_size == cookie && r.u.sample.context_err == -EINPROGRESS &&
	   uevent_perf_record_name(PERF_RECORD_TLS_USER_DEFERRED) &&
	   !strcmp(uevent_perf_record_name(PERF_RECORD_TLS_USER_DEFERRED), "TLS_USER_DEFERRED"),
	   "a deferred TLS_USER sample decodes alone: size 0, the cookie, context_err "
	   "-EINPROGRESS (%d)", r.u.sample.context_err);

	fd = memfd_create("perfdec-tls", MFD_CLOEXEC);
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	pf = fd >= 0 && !put(fd, img, n) ? uevent_perf_file__open(tmp) : NULL;
	while (pf && (ret = uevent_perf_file__next(pf, &r)) > 0) {
		const struct uevent_perf_sample *sm = &r.u.sample;

		if (r.type == PERF_RECORD_TLS_USER_DEFERRED)
			deferred++;
		if (r.body != UEVENT_BODY_SAMPLE)
			continue;
		if (sm->tid == 11 && sm->context_err == 0 && sm->tls_user_size == sizeof(ctx) &&
		    sm->tls_user_dyn_size == sizeof(ctx) && !memcmp(sm->context_span_id, span, 8) &&
		    !memcmp(sm->context_trace_id, trace, 16) && sm->context_flags == 1)
			joined++;
		if (sm->tid == 12 && sm->context_err == -EINPROGRESS && sm->tls_user_dyn_size == cookie)
			waiting++;
	}
	ok(pf && ret == 0 && joined == 1,
	   "perf.data: the PERF_RECORD_TLS_USER_DEFERRED record fills the sample of its thread "
	   "and cookie: tls_user and context_* as if dumped in it (%d)", joined);
	ok(waiting == 1 && deferred == 1,
	   "perf.data: another thread's sample with the same cookie is not joined "
	   "(-EINPROGRESS, %d); the record itself is read too (%d)", waiting, deferred);
	uevent_perf_file__close(pf);
	if (fd >= 0)
		close(fd);
	uevent_thread_context_clear();
}

/*
 * Records followed by bytes their size does not count (pipe mode): the tracing data of
 * PERF_RECORD_HEADER_TRACING_DATA (66) and the trace of PERF_RECORD_AUXTRACE (71). The
 * reader steps over them, whatever they look like, to the record after; bytes that run
 * past the end are a cut file.
 */
static void check_trailing(void)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_attr a;
	struct perf_event_header fake = { .type = PERF_RECORD_SAMPLE, .size = 24 };
	uint8_t img[2048], body[512];
	uint64_t v, id = 7;
	uint32_t u[2];
	size_t n, b, i;
	int fd, k, ret = 0, samples = 0, tid77 = 0, aux = 0, td = 0;
	struct uevent_perf_file *pf;
	char tmp[64];

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID;
	n = pipe_head(img, &a, id);
	u[0] = 96; u[1] = 0;					/* 96 bytes of tracing data */
	n += put_rec(img + n, 66, u, 8);
	for (i = 0; i < 96; i += 24)				/* that look like samples */
		memcpy(img + n + i, &fake, sizeof(fake)), memset(img + n + i + 8, 0, 16);
	n += 96;
	memset(body, 0, 40);					/* AUXTRACE: size, offset, ... */
	v = 120; memcpy(body, &v, 8);
	n += put_rec(img + n, 71, body, 40);
	for (i = 0; i < 120; i += 24)
		memcpy(img + n + i, &fake, sizeof(fake)), memset(img + n + i + 8, 0, 16);
	n += 120;
	b = 0;
	memcpy(body, &id, 8); b += 8;
	u[0] = 77; u[1] = 77; memcpy(body + b, u, 8); b += 8;
	n += put_rec(img + n, PERF_RECORD_SAMPLE, body, b);

	for (k = 0; k < 2; k++) {
		/* k = 1: the AUXTRACE record says 4096 bytes follow; the file has 144 */
		if (k == 1) {
			v = 4096;
			memcpy(img + n - 24 - 120 - 40, &v, 8);
		}
		samples = tid77 = aux = td = 0;
		fd = memfd_create("perfdec-trailing", MFD_CLOEXEC);
		snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
		pf = fd >= 0 && !put(fd, img, n) ? uevent_perf_file__open(tmp) : NULL;
		while (pf && (ret = uevent_perf_file__next(pf, &r)) > 0) {
			aux += r.type == 71;
			td += r.type == 66;
			samples += r.body == UEVENT_BODY_SAMPLE;
			tid77 += r.body == UEVENT_BODY_SAMPLE && r.u.sample.tid == 77;
		}
		if (k == 0)
			ok(pf && ret == 0 && samples == 1 && tid77 == 1 && aux == 1 && td == 1,
			   "pipe mode: the bytes after TRACING_DATA and AUXTRACE are stepped over: "
			   "1 sample of tid 77 (%d samples, %d of tid 77, ret %d)", samples, tid77, ret);
		else
			ok(pf && ret == -ENODATA && samples == 0 && td == 1,
			   "pipe mode: AUXTRACE bytes past the end are a cut file: -ENODATA "
			   "after the records before it (ret %d, %d samples)", ret, samples);
		uevent_perf_file__close(pf);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A tracepoint sample's raw fields, by name: an array of characters is printed up to
 * its end when it holds no NUL (libtraceevent prints it with "%s", on past the field:
 * here into the next field and the next record), as text and as JSON. Beside it, a
 * format libtraceevent's parser crashes on (a byte past ASCII after a '['; a field's
 * line cut short): not given it, and the other's fields still known.
 */
static void check_raw_fields_bounds(void)
{
	static const char fmt[] =
		"name: strs\nID: 9\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:char name[4];\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc char[] msg;\toffset:12;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"name=%s msg=%s\", REC->name, __get_str(msg)\n";
	static const char *const bad[] = {
		"name: bad\nID: 10\nformat:\n\tfield:char comm[\317\311];\toffset:8;\tsize:4;"
		"\tsigned:0;\n\nprint fmt: \"%s\", REC->comm\n",
		"name: cut\nID: 11\nformat:\n\tfield:char comm[",
	};
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_attr a;
	uint8_t img[2048], body[64], raw[20] = { 9, 0, 0, 0, 42 };
	uint64_t v;
	uint32_t u, loc = (4u << 16) | 16;	/* "abcd", the raw data's last 4 bytes */
	size_t n, t, b;
	char text[128] = "", json[128] = "", tmp[64];
	int fd, i, rt = -1, rj = -1;
	struct uevent_perf_file *pf;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = 9;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	n = pipe_head(img, &a, 1);
	t = n + 16;					/* the tracing data */
	memcpy(img + t, "\027\010\104tracing0.6", 14);
	t += 14;
	img[t++] = 0;					/* little-endian */
	img[t++] = 8;					/* long size */
	u = 4096; memcpy(img + t, &u, 4); t += 4;	/* page size */
	memcpy(img + t, "header_page", 12); t += 12;
	v = 0; memcpy(img + t, &v, 8); t += 8;
	memcpy(img + t, "header_event", 13); t += 13;
	memcpy(img + t, &v, 8); t += 8;
	u = 0; memcpy(img + t, &u, 4); t += 4;		/* no ftrace formats */
	u = 1; memcpy(img + t, &u, 4); t += 4;		/* one system */
	memcpy(img + t, "fz", 3); t += 3;
	u = 3; memcpy(img + t, &u, 4); t += 4;		/* of three events */
	v = sizeof(fmt) - 1; memcpy(img + t, &v, 8); t += 8;
	memcpy(img + t, fmt, sizeof(fmt) - 1); t += sizeof(fmt) - 1;
	for (i = 0; i < 2; i++) {
		v = strlen(bad[i]); memcpy(img + t, &v, 8); t += 8;
		memcpy(img + t, bad[i], v); t += v;
	}
	while ((t - n - 16) % 8)
		img[t++] = 0;
	u = (uint32_t)(t - n - 16);
	memcpy(body, &u, 4);
	memset(body + 4, 0, 4);
	n += put_rec(img + n, 66, body, 8);		/* HEADER_TRACING_DATA */
	n = t;
	memcpy(raw + 8, "WXYZ", 4);			/* no NUL */
	memcpy(raw + 12, &loc, 4);
	memcpy(raw + 16, "abcd", 4);			/* nor here: raw ends, a record follows */
	for (i = 0; i < 2; i++) {
		b = 0;
		u = 42; memcpy(body + b, &u, 4); memcpy(body + b + 4, &u, 4); b += 8;
		v = 100 + (uint64_t)i; memcpy(body + b, &v, 8); b += 8;
		u = sizeof(raw); memcpy(body + b, &u, 4); b += 4;
		memcpy(body + b, raw, sizeof(raw)); b += sizeof(raw);
		n += put_rec(img + n, PERF_RECORD_SAMPLE, body, b);
	}
	fd = memfd_create("perfdec-fields", MFD_CLOEXEC);
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	pf = fd >= 0 && !put(fd, img, n) ? uevent_perf_file__open(tmp) : NULL;
	while (pf && uevent_perf_file__next(pf, &r) > 0)
		if (r.body == UEVENT_BODY_SAMPLE) {
			rt = uevent_perf_file__raw_fields(pf, &r, 0, text, sizeof(text));
			rj = uevent_perf_file__raw_fields(pf, &r, UEVENT_FIELDS_JSON, json,
							  sizeof(json));
			break;
		}
	if (rt == -EOPNOTSUPP)
		skip(1, "built without libtraceevent");
	else
		ok(rt == (int)strlen(text) && !strcmp(text, "name=WXYZ msg=abcd") &&
		   rj == (int)strlen(json) && !strcmp(json, "{\"name\": \"WXYZ\", \"msg\": \"abcd\"}"),
		   "raw_fields: char arrays without a NUL end with the field, formats "
		   "libtraceevent would crash on are left out (%d '%s', %d '%s')",
		   rt, text, rj, json);
	uevent_perf_file__close(pf);
	if (fd >= 0)
		close(fd);
}

/*
 * A pipe stream is opened in one pass, each record timed by the events known when it
 * comes: an event whose attr comes after other events' samples (its samples' time at
 * another place: it has IP) still has them read in time order with its layout, and a
 * sample before any attr (a hostile file) is read without a crash.
 */
static void check_late_attr(void)
{
	static const uint64_t when[] = { 50, 10, 40, 20, 30, 5, 60 };	/* by record */
	static const int ev_of[] = { 0, 0, 0, 0, 1, 1, 0 };
	uint8_t img[4096], body[sizeof(struct perf_event_attr) + 8];
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_attr a0, a1;
	struct uevent_perf_file *pf;
	uint64_t v[5], prev = 0, id1 = 10;
	size_t n, i;
	int fd, got = 0, bad = 0, ret = 0, stray = -1;
	char tmp[64];

	memset(&a0, 0, sizeof(a0));
	a0.size = sizeof(a0);
	a0.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a1 = a0;
	a1.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
	n = pipe_head(img, &a0, 9);
	for (i = 0; i < 7; i++) {
		if (i == 4) {	/* the second event's attr, after the first's samples */
			memcpy(body, &a1, sizeof(a1));
			memcpy(body + sizeof(a1), &id1, 8);
			n += put_rec(img + n, 64, body, sizeof(body));
		}
		v[0] = ev_of[i] ? id1 : 9;
		v[1] = 0x401000;			/* IP (the second event's only) */
		v[ev_of[i] + 1] = (uint64_t)i << 32 | i;	/* pid, tid: the record */
		v[ev_of[i] + 2] = when[i];
		v[ev_of[i] + 3] = 777;			/* period */
		n += put_rec(img + n, PERF_RECORD_SAMPLE, v, 8 * (3 + 2 * ev_of[i]));
	}
	fd = memfd_create("perfdec-late", MFD_CLOEXEC);
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	pf = fd >= 0 && !put(fd, img, n) ? uevent_perf_file__open(tmp) : NULL;
	while (pf && (ret = uevent_perf_file__next(pf, &r)) > 0) {
		unsigned int at = r.u.sample.tid;

		if (r.body != UEVENT_BODY_SAMPLE)
			continue;
		if (at >= 7 || r.id.time != when[at] || r.id.time < prev ||
		    r.u.sample.event_index != ev_of[at] ||
		    (ev_of[at] && (r.u.sample.period != 777 || r.u.sample.ip != 0x401000)))
			bad++;
		prev = r.id.time;
		got++;
	}
	uevent_perf_file__close(pf);
	/* a sample before the attr: the same bytes with the first sample moved to the front */
	memmove(img + 16 + 32, img + 16, n - 16);
	v[0] = 9;
	v[1] = 1;
	v[2] = 3;
	put_rec(img + 16, PERF_RECORD_SAMPLE, v, 24);
	pf = fd >= 0 && !put(fd, img, n + 32) ? uevent_perf_file__open(tmp) : NULL;
	for (stray = 0; pf && uevent_perf_file__next(pf, &r) > 0;)
		stray += r.body == UEVENT_BODY_SAMPLE;
	uevent_perf_file__close(pf);
	ok(pf && ret == 0 && got == 7 && !bad && stray == 8,
	   "pipe mode, an attr after another event's samples: %d of 7 samples by time with their "
	   "events' layouts (%d wrong); a sample before any attr is read too (%d of 8)",
	   got, bad, stray);
	if (fd >= 0)
		close(fd);
}

/*
 * Time order from runs: records written as 16 rings write them (each ring's share of a
 * round in time order, neighbouring rounds overlapping, many times shared), and in
 * random order, each with a FINISHED_ROUND every 160 records. The first keeps perf's
 * round rule, the second breaks it: both are sorted whole, and so is the first again
 * at over a million records (WINDOW_RECORDS), but a round at a time as it is read; the
 * fourth is the third with two records 3 and 21 rounds late (a 16-CPU recording's
 * kind), read a round at a time with the lag. Each way the reader gives every record
 * once, by time, ties in file order, and a batch reader of 7 rows a call gives the same.
 */
static void check_time_order(void)
{
	enum { NMAX = 1060000 };		/* over WINDOW_RECORDS, 160 a round */
	static uint8_t img[64 + 1024 + NMAX * 40];
	static uint64_t times[NMAX];
	static uint32_t got[NMAX], tids[8];
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct perf_event_attr a;
	struct uevent_perf_file *pf;
	uint64_t body[3], id = 9, prev_t, seen;
	unsigned int rnd = 4242, prev_i;
	size_t n, i, k, m, bad, same;
	int fd, shape, ret = 0;
	size_t NREC;
	char tmp[64];

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	for (shape = 0; shape < 4; shape++) {
		/* shape 0, 2 and 3: rounds of 16 rings of 10; shape 1: any order */
		NREC = shape >= 2 ? NMAX : 4000;
		for (k = 0; k < NREC; k += 10) {
			uint64_t t = (k / 160) * 1000 + (rnd = rnd * 1103515245 + 12345) % 700;

			for (m = 0; m < 10; m++, t += (rnd = rnd * 1103515245 + 12345) % 3 * 40)
				times[k + m] = shape == 1 ? (rnd = rnd * 1103515245 + 12345) % 500 * 10 : t;
		}
		if (shape == 3) {	/* stamped rounds before their ring gave them */
			times[400005] = times[400005 - 3 * 160] - 1;
			times[700009] = times[700009 - 21 * 160] - 1;
		}
		n = pipe_head(img, &a, id);
		for (i = 0; i < NREC; i++) {
			body[0] = id;
			body[1] = (uint64_t)i << 32 | (uint32_t)i;	/* pid, tid: the file's order */
			body[2] = times[i];
			n += put_rec(img + n, PERF_RECORD_SAMPLE, body, sizeof(body));
			if (i % 160 == 159)
				n += put_rec(img + n, 68, body, 0);	/* FINISHED_ROUND */
		}
		fd = memfd_create("perfdec-order", MFD_CLOEXEC);
		snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
		pf = fd >= 0 && !put(fd, img, n) ? uevent_perf_file__open(tmp) : NULL;
		seen = bad = 0;
		prev_t = 0;
		prev_i = 0;
		while (pf && (ret = uevent_perf_file__next(pf, &r)) > 0) {
			unsigned int at = r.u.sample.tid;

			if (r.body != UEVENT_BODY_SAMPLE)
				continue;
			if (at >= NREC || r.id.time != times[at] || r.id.time < prev_t ||
			    (seen && r.id.time == prev_t && at <= prev_i))
				bad++;
			if (seen < NREC)
				got[seen] = at;
			seen++;
			prev_t = r.id.time;
			prev_i = at;
		}
		uevent_perf_file__close(pf);
		pf = seen == NREC ? uevent_perf_file__open(tmp) : NULL;
		for (k = same = 0; pf;) {
			struct uevent_sample_batch sb = { .sz = sizeof(sb), .cap = 7, .tid = tids };

			if (uevent_perf_file__read_batch(pf, &sb, NULL) <= 0)
				break;
			for (m = 0; m < sb.n && k < NREC; m++, k++)
				same += tids[m] == got[k];
		}
		ok(ret == 0 && seen == NREC && !bad && same == NREC, "time order of %s: %" PRIu64
		   " of %zu records, by time, ties in file order (%zu out of place); in batches "
		   "of 7: %zu the same", shape == 1 ? "records in any order" : shape == 3 ?
		   "16 rings' rounds, two records 3 and 21 rounds late, a round at a time" :
		   shape ? "16 rings' rounds, a round at a time" : "16 rings' rounds", seen, NREC,
		   bad, same);
		uevent_perf_file__close(pf);
		if (fd >= 0)
			close(fd);
	}
}

int main(void)
{
	size_t len;
	uint8_t *le, *be;

	plan(22 * 2 + 2 * 2 + 7 + 12 + 8 + 5 + 4 + 2 + 4 + 2 + 4 + 4 + 2 + 3 + 1 + 1);
	le = slurp("perf_records.le.bin", &len);
	if (le) {
		check_golden(le, len, UEVENT_BO_LITTLE, "le");
		torture(le, len, UEVENT_BO_LITTLE, "le");
	} else {
		skip(24, "t/data/perf_records.le.bin missing");
	}
	be = slurp("perf_records.be.bin", &len);
	if (be) {
		check_golden(be, len, UEVENT_BO_BIG, "be");
		torture(be, len, UEVENT_BO_BIG, "be");
	} else {
		skip(24, "t/data/perf_records.be.bin missing");
	}
	check_ring();
	check_raw();
	check_attr();
	check_perf_files();
	check_cuts();
	check_oversized();
	check_trailing();
	check_raw_fields_bounds();
	check_time_order();
	check_late_attr();
	check_event_index();
	check_batch();
	check_tls_deferred();
	free(le);
	free(be);
	return exit_status();
}
