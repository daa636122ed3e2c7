/* perfdata.c - reads perf.data files (file and pipe mode) written by `perf record`. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"

#define PERF_MAGIC2		0x32454c4946524550ull	/* "PERFILE2" */
#define FEAT_TRACING_DATA	1
#define FEAT_EVENT_DESC		12
#define FEAT_CLOCKID		23
#define FEAT_CLOCK_DATA		29
#define REC_HEADER_ATTR		64
#define REC_TRACING_DATA	66
#define REC_AUXTRACE		71
#define REC_HEADER_FEATURE	80

struct pevent {
	struct uevent_perf_format fmt;
	uint64_t *ids;
	size_t nids;
	char *name;
	uint32_t type;
	uint64_t config;
	struct uevent_raw_layout layout;	/* kind 0: not a uevent carrier */
	int clockid;
};

struct uevent_perf_file {
	uint8_t *map;
	size_t len;
	int mapped;
	uint64_t off, end;
	int pipe;
	struct pevent *ev;
	int nev;
	int id_pos_sample, id_pos_other;	/* u64 index from start / from end; -1 none */
	int64_t clock_res;
	int clockid;
	char *tracing;				/* event format texts, NUL separated */
	size_t tracing_len;
};

static int add_event(struct uevent_perf_file *f, const void *attr, size_t asz,
		     const void *ids, size_t nids)
{
	struct perf_event_attr a;
	struct pevent *e, *n = realloc(f->ev, (size_t)(f->nev + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	f->ev = n;
	e = &f->ev[f->nev];
	memset(e, 0, sizeof(*e));
	if (asz < PERF_ATTR_SIZE_VER0)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, asz < sizeof(a) ? asz : sizeof(a));
	uevent_perf_format_from_attr(&e->fmt, &a, asz < sizeof(a) ? asz : sizeof(a));
	e->type = a.type;
	e->config = a.config;
	e->clockid = a.use_clockid ? a.clockid : -1;
	if (nids) {
		e->ids = malloc(nids * 8);
		if (!e->ids)
			return -ENOMEM;
		memcpy(e->ids, ids, nids * 8);
		e->nids = nids;
	}
	f->nev++;
	return 0;
}

static struct pevent *find_by_id(struct uevent_perf_file *f, uint64_t id)
{
	int i;
	size_t j;

	for (i = 0; i < f->nev; i++)
		for (j = 0; j < f->ev[i].nids; j++)
			if (f->ev[i].ids[j] == id)
				return &f->ev[i];
	return NULL;
}

/* Where the event id sits, as perf computes it from the first event's sample_type. */
static void id_positions(struct uevent_perf_file *f)
{
	uint64_t st = f->nev ? f->ev[0].fmt.sample_type : 0;

	f->id_pos_sample = f->id_pos_other = -1;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		f->id_pos_sample = 0;
		f->id_pos_other = 1;
	} else if (st & PERF_SAMPLE_ID) {
		f->id_pos_sample = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				   !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
		f->id_pos_other = 1 + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
	}
}

/* ---- HEADER_EVENT_DESC and the tracing data: names and tracepoint layouts ---------- */

static void set_name(struct uevent_perf_file *f, uint64_t id, const char *name, size_t n)
{
	struct pevent *e = find_by_id(f, id);

	if (!e || e->name)
		return;
	e->name = strndup(name, n);
}

static void parse_event_desc(struct uevent_perf_file *f, const uint8_t *p, uint64_t len)
{
	uint32_t nr, asz, i, nids, slen;
	uint64_t off = 8, id;

	if (len < 8)
		return;
	memcpy(&nr, p, 4);
	memcpy(&asz, p + 4, 4);
	for (i = 0; i < nr; i++) {
		if (off + asz + 8 > len)
			return;
		off += asz;
		memcpy(&nids, p + off, 4);
		memcpy(&slen, p + off + 4, 4);
		off += 8;
		if (slen > len - off || (uint64_t)nids * 8 > len - off - slen)
			return;
		if (nids) {
			memcpy(&id, p + off + slen, 8);
			set_name(f, id, (const char *)p + off, strnlen((const char *)p + off, slen));
		}
		off += slen + (uint64_t)nids * 8;
	}
}

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

static int td_u32(const uint8_t *p, uint64_t len, uint64_t *off, uint32_t *v)
{
	if (*off + 4 > len)
		return -1;
	memcpy(v, p + *off, 4);
	*off += 4;
	return 0;
}

/* A u64 size, then that many bytes: *blob points at them. */
static int td_blob(const uint8_t *p, uint64_t len, uint64_t *off, const uint8_t **blob,
		   uint64_t *sz)
{
	if (*off + 8 > len)
		return -1;
	memcpy(sz, p + *off, 8);
	*off += 8;
	if (*sz > len - *off)
		return -1;
	*blob = p + *off;
	*off += *sz;
	return 0;
}

static void parse_tracing(struct uevent_perf_file *f, const uint8_t *p, uint64_t len)
{
	uint64_t off = 10, sz;
	uint32_t n, i, nsys, s;
	const uint8_t *blob;

	if (len < 10 || memcmp(p, "\027\010\104tracing", 10))
		return;
	if (td_str(p, len, &off, NULL) < 0)
		return;
	off += 2 + 4;				/* endian, long size, page size */
	for (i = 0; i < 2; i++)			/* header_page, header_event */
		if (td_str(p, len, &off, NULL) < 0 || td_blob(p, len, &off, &blob, &sz) < 0)
			return;
	if (td_u32(p, len, &off, &n) < 0)	/* ftrace formats */
		return;
	for (i = 0; i < n; i++)
		if (td_blob(p, len, &off, &blob, &sz) < 0)
			return;
	if (td_u32(p, len, &off, &nsys) < 0)
		return;
	for (s = 0; s < nsys; s++) {
		if (td_str(p, len, &off, NULL) < 0 || td_u32(p, len, &off, &n) < 0)
			return;
		for (i = 0; i < n; i++) {
			char *t;

			if (td_blob(p, len, &off, &blob, &sz) < 0)
				return;
			t = realloc(f->tracing, f->tracing_len + sz + 1);
			if (!t)
				return;
			f->tracing = t;
			memcpy(t + f->tracing_len, blob, sz);
			t[f->tracing_len + sz] = 0;
			f->tracing_len += sz + 1;
		}
	}
}

/* Give each tracepoint event whose format carries uevents a raw layout. */
static void find_layouts(struct uevent_perf_file *f)
{
	size_t at;
	int i;

	for (i = 0; i < f->nev; i++) {
		struct pevent *e = &f->ev[i];
		uint32_t to, so, d, sz, ds;

		if (e->type != PERF_TYPE_TRACEPOINT || !(e->fmt.sample_type & PERF_SAMPLE_RAW))
			continue;
		for (at = 0; at < f->tracing_len; at += strlen(f->tracing + at) + 1) {
			const char *fmt = f->tracing + at, *idl = strstr(fmt, "\nID: ");

			if (!idl || strtoull(idl + 5, NULL, 10) != e->config)
				continue;
			if (_uevent_format_field(fmt, "type", &to, &sz))
				break;
			e->layout.sz = sizeof(e->layout);
			e->layout.type_offset = to;
			if (!_uevent_format_field(fmt, "size", &so, &sz) &&
			    !_uevent_format_field(fmt, "d0", &d, &sz)) {
				/* our usdt fetch args: d0, d1... back to back */
				char nm[8];
				int k;

				for (k = 1, ds = sz; k < 64; k++) {
					uint32_t o2, s2;

					snprintf(nm, sizeof(nm), "d%d", k);
					if (_uevent_format_field(fmt, nm, &o2, &s2) || o2 != d + ds)
						break;
					ds += s2;
				}
				e->layout.kind = UEVENT_RAW_USDT;
				e->layout.size_offset = so;
				e->layout.data_offset = d;
				e->layout.data_capacity = ds;
			} else if (!_uevent_format_field(fmt, "data", &d, &sz) &&
				   strstr(fmt, "__rel_loc")) {
				e->layout.kind = UEVENT_RAW_USER_EVENTS;
				e->layout.data_offset = d;
			} else {
				e->layout.sz = 0;
			}
			break;
		}
	}
}

/* ---- open ---------------------------------------------------------------------------- */

static int load(struct uevent_perf_file *f, const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	size_t cap = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		f->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map != MAP_FAILED) {
			f->len = (size_t)st.st_size;
			f->mapped = 1;
			if (fd)
				close(fd);
			return 0;
		}
		f->map = NULL;
	}
	for (;;) {		/* a pipe: read it all */
		ssize_t n;

		if (f->len == cap) {
			uint8_t *p = realloc(f->map, cap = cap ? cap * 2 : 1 << 20);

			if (!p) {
				if (fd)
					close(fd);
				return -ENOMEM;
			}
			f->map = p;
		}
		n = read(fd, f->map + f->len, cap - f->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			if (fd)
				close(fd);
			return -err;
		}
		if (n == 0)
			break;
		f->len += (size_t)n;
	}
	if (fd)
		close(fd);
	return 0;
}

static int open_file_mode(struct uevent_perf_file *f)
{
	uint64_t hsize, attr_size, a_off, a_size, d_off, d_size, feats[4], i, fo;
	const uint8_t *p = f->map;
	int bit, nfeat = 0, err;

	if (f->len < 104)
		return -EINVAL;
	memcpy(&hsize, p + 8, 8);
	memcpy(&attr_size, p + 16, 8);
	memcpy(&a_off, p + 24, 8);
	memcpy(&a_size, p + 32, 8);
	memcpy(&d_off, p + 40, 8);
	memcpy(&d_size, p + 48, 8);
	memcpy(feats, p + 72, 32);
	if (hsize < 104 || attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096 ||
	    a_off > f->len || a_size > f->len - a_off || d_off > f->len || d_size > f->len - d_off)
		return -EINVAL;
	for (i = 0; i + attr_size <= a_size; i += attr_size) {
		const uint8_t *fa = p + a_off + i;
		uint64_t ioff, isz;

		memcpy(&ioff, fa + attr_size - 16, 8);
		memcpy(&isz, fa + attr_size - 8, 8);
		if (ioff > f->len || isz > f->len - ioff)
			return -EINVAL;
		err = add_event(f, fa, (size_t)(attr_size - 16), p + ioff, (size_t)(isz / 8));
		if (err)
			return err;
	}
	if (!f->nev)
		return -EINVAL;
	f->off = d_off;
	f->end = d_off + d_size;
	/* feature sections follow the data: one {offset, size} per set bit, in order */
	fo = d_off + d_size;
	for (bit = 0; bit < 256; bit++) {
		uint64_t so, ss;

		if (!(feats[bit / 64] >> (bit % 64) & 1))
			continue;
		if (fo + (uint64_t)(nfeat + 1) * 16 > f->len)
			break;
		memcpy(&so, p + fo + (uint64_t)nfeat * 16, 8);
		memcpy(&ss, p + fo + (uint64_t)nfeat * 16 + 8, 8);
		nfeat++;
		if (so > f->len || ss > f->len - so)
			continue;
		if (bit == FEAT_EVENT_DESC)
			parse_event_desc(f, p + so, ss);
		else if (bit == FEAT_TRACING_DATA)
			parse_tracing(f, p + so, ss);
		else if (bit == FEAT_CLOCKID && ss >= 8)
			memcpy(&f->clock_res, p + so, 8);
		else if (bit == FEAT_CLOCK_DATA && ss >= 8) {
			uint32_t cid;

			memcpy(&cid, p + so + 4, 4);
			f->clockid = (int)cid;
		}
	}
	return 0;
}

/* Pipe mode: the attrs, names and tracing data come as records before the events. */
static int scan_pipe_headers(struct uevent_perf_file *f)
{
	uint64_t off = 16;
	int err;

	while (off + 8 <= f->len) {
		struct perf_event_header h;

		memcpy(&h, f->map + off, 8);
		if (h.size < 8 || h.size > f->len - off)
			return -EINVAL;
		if (h.type == REC_HEADER_ATTR) {
			uint32_t asz;

			if (h.size < 8 + PERF_ATTR_SIZE_VER0)
				return -EINVAL;
			memcpy(&asz, f->map + off + 8 + 4, 4);
			if (asz < PERF_ATTR_SIZE_VER0 || asz > (uint32_t)h.size - 8)
				return -EINVAL;
			err = add_event(f, f->map + off + 8, asz, f->map + off + 8 + asz,
					((size_t)h.size - 8 - asz) / 8);
			if (err)
				return err;
		} else if (h.type == REC_TRACING_DATA && h.size >= 12) {
			uint32_t sz;

			memcpy(&sz, f->map + off + 8, 4);
			if (sz > f->len - off - h.size)
				return -EINVAL;
			parse_tracing(f, f->map + off + h.size, sz);
			off += sz;
		} else if (h.type == REC_HEADER_FEATURE && h.size >= 16) {
			uint64_t feat;

			memcpy(&feat, f->map + off + 8, 8);
			if (feat == FEAT_EVENT_DESC)
				parse_event_desc(f, f->map + off + 16, h.size - 16u);
			else if (feat == FEAT_CLOCKID && h.size >= 24)
				memcpy(&f->clock_res, f->map + off + 16, 8);
		} else if (h.type == REC_AUXTRACE && h.size >= 16) {
			uint64_t sz;

			memcpy(&sz, f->map + off + 8, 8);
			if (sz > f->len - off - h.size)
				return -EINVAL;
			off += sz;
		}
		off += h.size;
	}
	return f->nev ? 0 : -EINVAL;
}

UEVENT_EXPORT struct uevent_perf_file *uevent_perf_file__open(const char *path)
{
	struct uevent_perf_file *f;
	uint64_t magic = 0, hsize = 0;
	int err, i;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->clockid = -1;
	f->clock_res = -1;
	err = load(f, path);
	if (err)
		goto fail;
	err = -EINVAL;
	if (f->len < 16)
		goto fail;
	memcpy(&magic, f->map, 8);
	memcpy(&hsize, f->map + 8, 8);
	if (magic == __builtin_bswap64(PERF_MAGIC2)) {
		err = -EPROTONOSUPPORT;		/* another byte order: not supported yet */
		goto fail;
	}
	if (magic != PERF_MAGIC2)
		goto fail;
	if (hsize == 16) {
		f->pipe = 1;
		f->off = 16;
		f->end = f->len;
		err = scan_pipe_headers(f);
	} else {
		err = open_file_mode(f);
	}
	if (err)
		goto fail;
	for (i = 0; i < f->nev && f->clockid < 0; i++)
		f->clockid = f->ev[i].clockid;
	id_positions(f);
	find_layouts(f);
	return f;
fail:
	uevent_perf_file__close(f);
	errno = -err;
	return NULL;
}

static struct pevent *event_of(struct uevent_perf_file *f, const uint8_t *r, uint16_t size,
			       uint32_t type)
{
	uint64_t id;

	if (f->nev == 1)
		return &f->ev[0];
	if (type == PERF_RECORD_SAMPLE && f->id_pos_sample >= 0 &&
	    (size_t)(f->id_pos_sample + 2) * 8 <= size) {
		memcpy(&id, r + 8 + f->id_pos_sample * 8, 8);
		return find_by_id(f, id);
	}
	if (type != PERF_RECORD_SAMPLE && f->id_pos_other >= 0 &&
	    (size_t)(f->id_pos_other + 1) * 8 <= size) {
		memcpy(&id, r + size - f->id_pos_other * 8, 8);
		return find_by_id(f, id);
	}
	return &f->ev[0];
}

UEVENT_EXPORT int uevent_perf_file__next(struct uevent_perf_file *f, struct uevent_perf_record *rec)
{
	struct perf_event_header h;
	struct pevent *e;
	const uint8_t *r;
	int err;

	if (!f || !rec)
		return _uevent_err(EINVAL);
	for (;;) {
		if (f->off >= f->end)
			return 0;
		if (f->end - f->off < 8)
			return _uevent_err(EINVAL);
		r = f->map + f->off;
		memcpy(&h, r, 8);
		if (h.size < 8 || h.size > f->end - f->off)
			return _uevent_err(EINVAL);
		/* records followed by bytes their size does not count */
		if (h.type == REC_TRACING_DATA && h.size >= 12) {
			uint32_t sz;

			memcpy(&sz, r + 8, 4);
			if (sz > f->end - f->off - h.size)
				return _uevent_err(EINVAL);
			f->off += sz;
		} else if (h.type == REC_AUXTRACE && h.size >= 16) {
			uint64_t sz;

			memcpy(&sz, r + 8, 8);
			if (sz > f->end - f->off - h.size)
				return _uevent_err(EINVAL);
			f->off += sz;
		}
		e = event_of(f, r, h.size, h.type);
		if (!e)
			e = &f->ev[0];
		err = uevent_perf_record_decode(r, h.size, UEVENT_BO_HOST, &e->fmt, rec);
		if (err < 0 && err != -EPROTO)
			return err;
		f->off += h.size;
		if (err == -EPROTO)
			return err;
		if (rec->type == PERF_RECORD_SAMPLE && e->layout.sz) {
			struct uevent_perf_record tmp = *rec;

			if (uevent_raw_to_record(&tmp, &e->layout, UEVENT_BO_HOST, &rec->u.uevent) >= 0) {
				rec->type = PERF_RECORD_UEVENT;
				rec->transport = e->layout.kind == UEVENT_RAW_USDT ?
						 UEVENT_TRANSPORT_USDT : UEVENT_TRANSPORT_USER_EVENTS;
			} else {
				*rec = tmp;
			}
		}
		return 1;
	}
}

UEVENT_EXPORT uint64_t uevent_perf_file__offset(const struct uevent_perf_file *f)
{
	return f ? f->off : 0;
}

UEVENT_EXPORT int uevent_perf_file__nr_events(const struct uevent_perf_file *f)
{
	return f ? f->nev : _uevent_err(EINVAL);
}

UEVENT_EXPORT const char *uevent_perf_file__event_name(const struct uevent_perf_file *f, int i)
{
	if (!f || i < 0 || i >= f->nev) {
		errno = EINVAL;
		return NULL;
	}
	return f->ev[i].name ? f->ev[i].name : "";
}

UEVENT_EXPORT int uevent_perf_file__clockid(const struct uevent_perf_file *f)
{
	return f ? f->clockid : -1;
}

UEVENT_EXPORT int64_t uevent_perf_file__clock_res_ns(const struct uevent_perf_file *f)
{
	return f ? f->clock_res : -1;
}

UEVENT_EXPORT void uevent_perf_file__close(struct uevent_perf_file *f)
{
	int i;

	if (!f)
		return;
	if (f->mapped)
		munmap(f->map, f->len);
	else
		free(f->map);
	for (i = 0; i < f->nev; i++) {
		free(f->ev[i].ids);
		free(f->ev[i].name);
	}
	free(f->ev);
	free(f->tracing);
	free(f);
}
