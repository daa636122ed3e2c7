/* jit-dump.c - prints a jitdump file one record per line, checking it against the spec. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Output, for the shell tests:
 *   header version=1 size=40 mach=62 pid=P ts=T flags=0
 *   load ts=T pid=P tid=T vma=0x.. addr=0x.. size=N index=I code=HEX name=NAME
 *     (code: the first 256 bytes, "..." after them when there are more)
 *   move ts=T pid=P tid=T vma=0x.. old=0x.. new=0x.. size=N index=I
 *   debug ts=T addr=0x.. nr=N, then "  entry addr=0x.. line=L discrim=D file=F" per entry
 *   unwind ts=T size=N hdr=N mapped=N
 *   close ts=T
 * Exit 1 (with a message) on anything the spec does not allow.
 */
static unsigned char *buf;
static size_t len;

static uint32_t u32(size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, 4);
	return v;
}

static uint64_t u64(size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, 8);
	return v;
}

static int bad(const char *what, size_t off)
{
	fprintf(stderr, "jit-dump: %s at offset %zu\n", what, off);
	return 1;
}

int main(int argc, char **argv)
{
	FILE *f;
	size_t off, cap = 1 << 16, end, p, n;
	uint64_t last_ts = 0, i, nr, k;

	if (argc != 2) {
		fprintf(stderr, "usage: jit-dump FILE\n");
		return 2;
	}
	if (!(f = fopen(argv[1], "rb"))) {
		perror(argv[1]);
		return 1;
	}
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf || len < 40)
		return bad("short header", 0);
	if (u32(0) != 0x4A695444)
		return bad("bad magic", 0);
	if (u32(8) != 40)
		return bad("header total_size not 40", 8);
	printf("header version=%u size=%u mach=%u pid=%u ts=%" PRIu64 " flags=%" PRIu64 "\n",
	       u32(4), u32(8), u32(12), u32(20), u64(24), u64(32));
	last_ts = u64(24);
	for (off = 40; off < len; off = end) {
		uint32_t id, size;
		uint64_t ts;

		if (len - off < 16)
			return bad("truncated record prefix", off);
		id = u32(off);
		size = u32(off + 4);
		ts = u64(off + 8);
		end = off + size;
		if (size < 16 || end > len)
			return bad("bad record size", off);
		if (ts < last_ts)
			return bad("timestamp goes backwards", off);
		last_ts = ts;
		switch (id) {
		case 0:		/* JIT_CODE_LOAD */
			if (size < 16 + 40)
				return bad("short load", off);
			p = off + 56;
			n = strnlen((char *)buf + p, end - p);
			if (p + n + 1 + u64(off + 40) > end)
				return bad("load name/code past record", off);
			printf("load ts=%" PRIu64 " pid=%u tid=%u vma=0x%" PRIx64 " addr=0x%" PRIx64
			       " size=%" PRIu64 " index=%" PRIu64 " code=", ts, u32(off + 16),
			       u32(off + 20), u64(off + 24), u64(off + 32), u64(off + 40),
			       u64(off + 48));
			for (k = 0; k < u64(off + 40) && k < 256; k++)
				printf("%02x", buf[p + n + 1 + k]);
			printf("%s name=%.*s\n", u64(off + 40) > 256 ? "..." : "", (int)n, buf + p);
			break;
		case 1:		/* JIT_CODE_MOVE */
			if (size < 16 + 48)
				return bad("short move", off);
			printf("move ts=%" PRIu64 " pid=%u tid=%u vma=0x%" PRIx64 " old=0x%" PRIx64
			       " new=0x%" PRIx64 " size=%" PRIu64 " index=%" PRIu64 "\n", ts,
			       u32(off + 16), u32(off + 20), u64(off + 24), u64(off + 32),
			       u64(off + 40), u64(off + 48), u64(off + 56));
			break;
		case 2:		/* JIT_CODE_DEBUG_INFO */
			if (size < 32)
				return bad("short debug info", off);
			nr = u64(off + 24);
			printf("debug ts=%" PRIu64 " addr=0x%" PRIx64 " nr=%" PRIu64 "\n", ts,
			       u64(off + 16), nr);
			for (p = off + 32, i = 0; i < nr; i++) {
				if (p + 17 > end)
					return bad("debug entry past record", p);
				n = strnlen((char *)buf + p + 16, end - p - 16);
				if (p + 16 + n >= end)
					return bad("debug file name not terminated", p);
				printf("  entry addr=0x%" PRIx64 " line=%u discrim=%u file=%s\n",
				       u64(p), u32(p + 8), u32(p + 12), (char *)buf + p + 16);
				p += 16 + n + 1;
			}
			break;
		case 3:		/* JIT_CODE_CLOSE */
			printf("close ts=%" PRIu64 "\n", ts);
			break;
		case 4:		/* JIT_CODE_UNWINDING_INFO */
			if (size < 40 || 40 + u64(off + 16) > size)
				return bad("bad unwinding info", off);
			printf("unwind ts=%" PRIu64 " size=%" PRIu64 " hdr=%" PRIu64 " mapped=%"
			       PRIu64 "\n", ts, u64(off + 16), u64(off + 24), u64(off + 32));
			break;
		default:
			return bad("unknown record id", off);
		}
	}
	return 0;
}
