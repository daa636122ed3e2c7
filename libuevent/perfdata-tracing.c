/* perfdata-tracing.c - a perf.data's tracing data: the event format texts. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "perf-internal.h"
#include "perfdata-internal.h"

/*
 * The tracing data (trace-cmd's format): "\027\010\104tracing", version, endian, long
 * size, page size, header_page, header_event, ftrace formats, then per system the event
 * format texts. We keep the event formats only.
 */
/* Cursor steps over the tracing data; each returns 0, or -1 past the end. */
static int td_str(const uint8_t *p, uint64_t len, uint64_t *off, const char **out)
{
	const char *str = (const char *)p + *off;

	if (*off >= len || !memchr(str, 0, (size_t)(len - *off)))
		return -1;
	*off += strlen(str) + 1;
	if (out)
		*out = str;
	return 0;
}

static int td_u32(const struct uevent_perf_file *f, const uint8_t *p, uint64_t len,
		  uint64_t *off, uint32_t *v)
{
	if (*off + 4 > len)
		return -1;
	*v = fr32(f, p + *off);
	*off += 4;
	return 0;
}

/* A u64 size, then that many bytes: *blob points at them. */
static int td_blob(const struct uevent_perf_file *f, const uint8_t *p, uint64_t len,
		   uint64_t *off, const uint8_t **blob, uint64_t *sz)
{
	if (*off + 8 > len)
		return -1;
	*sz = fr64(f, p + *off);
	*off += 8;
	if (*sz > len - *off)
		return -1;
	*blob = p + *off;
	*off += *sz;
	return 0;
}

void _uevent_pf_parse_tracing(struct uevent_perf_file *f, const uint8_t *p, uint64_t len)
{
	uint64_t off = 10, sz;
	uint32_t n, i, nsys, s;
	const uint8_t *blob;

	if (len < 10 || memcmp(p, "\027\010\104tracing", 10))
		return;
	if (td_str(p, len, &off, NULL) < 0 || off + 6 > len)
		return;
	f->td_big = p[off];
	f->td_long = p[off + 1];
	off += 2;
	if (td_u32(f, p, len, &off, &n) < 0)
		return;
	f->td_page = n <= (1u << 30) ? (int)n : 0;
	for (i = 0; i < 2; i++)			/* header_page, header_event */
		if (td_str(p, len, &off, NULL) < 0 || td_blob(f, p, len, &off, &blob, &sz) < 0)
			return;
	if (td_u32(f, p, len, &off, &n) < 0)	/* ftrace formats */
		return;
	for (i = 0; i < n; i++)
		if (td_blob(f, p, len, &off, &blob, &sz) < 0)
			return;
	if (td_u32(f, p, len, &off, &nsys) < 0)
		return;
	for (s = 0; s < nsys; s++) {
		const char *sys;

		if (td_str(p, len, &off, &sys) < 0 || td_u32(f, p, len, &off, &n) < 0)
			return;
		for (i = 0; i < n; i++) {
			size_t sl = strlen(sys);
			char *t;

			if (td_blob(f, p, len, &off, &blob, &sz) < 0)
				return;
			t = realloc(f->tracing_sys, f->tracing_sys_len + sl + 1);
			if (!t)
				return;
			f->tracing_sys = t;
			memcpy(t + f->tracing_sys_len, sys, sl + 1);
			t = realloc(f->tracing, f->tracing_len + sz + 1);
			if (!t)
				return;
			f->tracing = t;
			memcpy(t + f->tracing_len, blob, sz);
			t[f->tracing_len + sz] = 0;
			f->tracing_len += sz + 1;
			f->tracing_sys_len += sl + 1;
		}
	}
}
