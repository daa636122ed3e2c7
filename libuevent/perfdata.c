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
#include "perfdata-internal.h"

#define PERF_MAGIC2		0x32454c4946524550ull	/* "PERFILE2" */
#define FEAT_TRACING_DATA	1
#define FEAT_EVENT_DESC		12
#define FEAT_CLOCKID		23
#define FEAT_CLOCK_DATA		29

static uint8_t revbits(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	return (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

/*
 * An attr of the other byte order, in place: every field swapped by its width. The
 * flag bits (offset 40) are a bitfield: a big-endian compiler numbers them from the
 * top bit of each byte, so the bits of each byte are reversed instead (as perf does).
 */
static void attr_swap(uint8_t *a, size_t asz)
{
	static const uint8_t width[][2] = {	/* offset / 4, bytes */
		{ 0, 4 }, { 1, 4 }, { 2, 8 }, { 4, 8 }, { 6, 8 }, { 8, 8 }, { 10, 0 },
		{ 12, 4 }, { 13, 4 }, { 14, 8 }, { 16, 8 }, { 18, 8 }, { 20, 8 }, { 22, 4 },
		{ 23, 4 }, { 24, 8 }, { 26, 4 }, { 27, 2 }, { 28, 4 }, { 29, 4 }, { 30, 8 },
		{ 32, 8 },
	};
	size_t i, j;

	for (i = 0; i < sizeof(width) / sizeof(width[0]); i++) {
		uint8_t *p = a + width[i][0] * 4;
		size_t w = width[i][1];

		if ((size_t)width[i][0] * 4 + (w == 0 ? 8 : w == 2 ? 4 : w) > asz)
			break;
		if (w == 0) {			/* the bitfield word */
			for (j = 0; j < 8; j++)
				p[j] = revbits(p[j]);
		} else if (w == 2) {		/* sample_max_stack, then sample_tls_user */
			uint16_t v[2];

			memcpy(v, p, 4);
			v[0] = __builtin_bswap16(v[0]);
			v[1] = __builtin_bswap16(v[1]);
			memcpy(p, v, 4);
		} else if (w == 4) {
			uint32_t v;

			memcpy(&v, p, 4);
			v = __builtin_bswap32(v);
			memcpy(p, &v, 4);
		} else {
			uint64_t v;

			memcpy(&v, p, 8);
			v = __builtin_bswap64(v);
			memcpy(p, &v, 8);
		}
	}
}

static int add_event(struct uevent_perf_file *f, const void *attr, size_t asz,
		     const void *ids, size_t nids)
{
	struct perf_event_attr a;
	size_t j;
	struct pevent *e, *n = realloc(f->ev, (size_t)(f->nev + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	f->ev = n;
	f->last_ev = NULL;			/* the array may have moved */
	e = &f->ev[f->nev];
	memset(e, 0, sizeof(*e));
	if (asz < PERF_ATTR_SIZE_VER0)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, asz < sizeof(a) ? asz : sizeof(a));
	if (f->swap)
		attr_swap((uint8_t *)&a, asz < sizeof(a) ? asz : sizeof(a));
	uevent_perf_format_from_attr(&e->fmt, &a, asz < sizeof(a) ? asz : sizeof(a));
	e->type = a.type;
	e->config = a.config;
	e->clockid = a.use_clockid ? a.clockid : -1;
	if (nids) {
		e->ids = malloc(nids * 8);
		if (!e->ids)
			return -ENOMEM;
		for (j = 0; j < nids; j++)
			e->ids[j] = fr64(f, (const uint8_t *)ids + j * 8);
		e->nids = nids;
	}
	f->nev++;
	return 0;
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
	nr = fr32(f, p);
	asz = fr32(f, p + 4);
	for (i = 0; i < nr; i++) {
		if (off + asz + 8 > len)
			return;
		off += asz;
		nids = fr32(f, p + off);
		slen = fr32(f, p + off + 4);
		off += 8;
		if (slen > len - off || (uint64_t)nids * 8 > len - off - slen)
			return;
		if (nids) {
			id = fr64(f, p + off + slen);
			set_name(f, id, (const char *)p + off, strnlen((const char *)p + off, slen));
		}
		off += slen + (uint64_t)nids * 8;
	}
}

/* Give each tracepoint event whose format carries uevents its raw layout. */
static void find_layouts(struct uevent_perf_file *f)
{
	size_t at;
	int i;

	for (i = 0; i < f->nev; i++) {
		struct pevent *e = &f->ev[i];

		if (e->type != PERF_TYPE_TRACEPOINT || !(e->fmt.sample_type & PERF_SAMPLE_RAW))
			continue;
		for (at = 0; at < f->tracing_len; at += strlen(f->tracing + at) + 1) {
			const char *fmt = f->tracing + at, *idl = strstr(fmt, "\nID: ");

			if (idl && strtoull(idl + 5, NULL, 10) == e->config) {
				uevent_raw_layout_from_format(&e->fmt.raw, fmt);
				break;
			}
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
	/* the doubling left up to half unused: give it back (and end the buffer at the data) */
	if (f->len && f->len < cap) {
		uint8_t *p = realloc(f->map, f->len);

		if (p)
			f->map = p;
	}
	return 0;
}

static int open_file_mode(struct uevent_perf_file *f)
{
	uint64_t hsize, attr_size, a_off, a_size, d_off, d_size, feats[4], i, fo;
	const uint8_t *p = f->map;
	int bit, nfeat = 0, err;

	if (f->len < 104)
		return -EINVAL;
	hsize = fr64(f, p + 8);
	attr_size = fr64(f, p + 16);
	a_off = fr64(f, p + 24);
	a_size = fr64(f, p + 32);
	d_off = fr64(f, p + 40);
	d_size = fr64(f, p + 48);
	for (i = 0; i < 4; i++)
		feats[i] = fr64(f, p + 72 + i * 8);
	if (hsize < 104 || attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096 ||
	    a_off > f->len || a_size > f->len - a_off || d_off > f->len)
		return -EINVAL;
	/*
	 * perf record writes the data size at exit: 0 when the writer was killed, more than
	 * the file holds when the file was cut (disk full, a copy cut short). Read what is
	 * there, as perf does; the features after the data are then lost.
	 */
	if (d_size == 0 || d_size > f->len - d_off) {
		d_size = f->len - d_off;
		f->cut = 1;
		f->unfinished = 1;
	}
	for (i = 0; i + attr_size <= a_size; i += attr_size) {
		const uint8_t *fa = p + a_off + i;
		uint64_t ioff, isz;

		ioff = fr64(f, fa + attr_size - 16);
		isz = fr64(f, fa + attr_size - 8);
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
		so = fr64(f, p + fo + (uint64_t)nfeat * 16);
		ss = fr64(f, p + fo + (uint64_t)nfeat * 16 + 8);
		nfeat++;
		if (so > f->len || ss > f->len - so)
			continue;
		if (bit == FEAT_EVENT_DESC)
			parse_event_desc(f, p + so, ss);
		else if (bit == FEAT_TRACING_DATA)
			_uevent_pf_parse_tracing(f, p + so, ss);
		else if (bit == FEAT_CLOCKID && ss >= 8)
			f->clock_res = (int64_t)fr64(f, p + so);
		else if (bit == FEAT_CLOCK_DATA && ss >= 8) {
			f->clockid = (int)fr32(f, p + so + 4);
		}
	}
	return 0;
}

/*
 * Pipe mode: the attrs, names and tracing data come as records before the events, the
 * end mark after them. One pass reads them and takes every record's time for the order
 * (w), by the events known at that record: a stream gives an event's attr before its
 * samples. (Two passes mapped a big file in twice: a quarter of reading it.)
 */
static int scan_pipe_headers(struct uevent_perf_file *f, struct _uevent_pf_walk *w)
{
	uint64_t off = 16;
	int err, promised = 0, ended = 0;

	while (off + 8 <= f->len) {
		struct perf_event_header h;
		int64_t extra;

		map_ahead(f, off);
		frheader(f, f->map + off, &h);
		/* a cut or corrupt record: __next() says which, at its offset */
		if (h.size < 8 || h.size > f->len - off)
			break;
		extra = trailing(f, f->map + off, &h, f->len - off - h.size);
		if (extra < 0)
			break;
		give_back(f, off);	/* a long stream is not kept whole */
		if (h.type == REC_HEADER_ATTR) {
			uint32_t asz;

			if (h.size < 8 + PERF_ATTR_SIZE_VER0)
				return -EINVAL;
			asz = fr32(f, f->map + off + 8 + 4);
			if (asz < PERF_ATTR_SIZE_VER0 || asz > (uint32_t)h.size - 8)
				return -EINVAL;
			err = add_event(f, f->map + off + 8, asz, f->map + off + 8 + asz,
					((size_t)h.size - 8 - asz) / 8);
			if (err)
				return err;
			id_positions(f);
		} else if (h.type == REC_TRACING_DATA && h.size >= 12) {
			_uevent_pf_parse_tracing(f, f->map + off + h.size, (uint64_t)extra);
		} else if (h.type == REC_HEADER_FEATURE && h.size >= 16) {
			uint64_t feat;

			feat = fr64(f, f->map + off + 8);
			if (feat == FEAT_VERSION && h.size >= 16 + 4 + sizeof(_UEVENT_REC_VERSION_PREFIX) &&
			    !memcmp(f->map + off + 20, _UEVENT_REC_VERSION_PREFIX,
				    sizeof(_UEVENT_REC_VERSION_PREFIX) - 1))
				promised++;
			else if (feat == FEAT_SAMPLE_TIME && promised)
				ended = 1;
			else if (feat == FEAT_EVENT_DESC)
				parse_event_desc(f, f->map + off + 16, h.size - 16u);
			else if (feat == FEAT_CLOCKID && h.size >= 24)
				f->clock_res = (int64_t)fr64(f, f->map + off + 16);
		}
		if (_uevent_pf_walk_step(f, w, off, &h) < 0)
			return -ENOMEM;
		off += h.size + (uint64_t)extra;
	}
	f->stop = off;			/* _uevent_pf_walk_end() takes it from here */
	/* a stream that promised an end mark and ends without it was cut */
	f->unfinished = promised && !ended;
	return f->nev ? 0 : -EINVAL;
}

static void drop_behind(struct uevent_perf_file *f)
{
	if (f->keep)
		return;		/* nor did settle() say what it would give back */
	give_back(f, !f->reorder ? f->off : f->iorder < f->nready ? f->order[f->iorder].time :
		  f->scan);
}

UEVENT_EXPORT struct uevent_perf_file *uevent_perf_file__open(const char *path)
{
	struct _uevent_pf_walk w;
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
	f->keep = f->len <= KEEP_WINDOWS * DROP_WINDOW;
	err = -EINVAL;
	if (f->len < 16)
		goto fail;
	memcpy(&magic, f->map, 8);
	if (magic == __builtin_bswap64(PERF_MAGIC2))
		f->swap = 1;		/* written on a machine of the other byte order */
	else if (magic != PERF_MAGIC2)
		goto fail;
	f->bo = !f->swap ? UEVENT_BO_HOST :
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? UEVENT_BO_BIG : UEVENT_BO_LITTLE;
	hsize = fr64(f, f->map + 8);
	if (hsize == 16) {
		f->pipe = 1;
		f->cut = 1;		/* a killed writer leaves half a record */
		f->off = 16;
		f->end = f->len;
		_uevent_pf_walk_init(&w);
		err = scan_pipe_headers(f, &w);
	} else {
		err = open_file_mode(f);
	}
	if (err)
		goto fail;
	for (i = 0; i < f->nev && f->clockid < 0; i++)
		f->clockid = f->ev[i].clockid;
	for (i = 0; i < f->nev; i++)
		f->ev[i].file = f->ev[i].name && !strcmp(f->ev[i].name, _UEVENT_FILE_EVENT);
	id_positions(f);
	find_layouts(f);
	err = f->pipe ? _uevent_pf_walk_end(f, &w, f->stop) : _uevent_pf_build_order(f);
	if (err)
		goto fail;
	return f;
fail:
	uevent_perf_file__close(f);
	errno = -err;
	return NULL;
}

/* A record that runs past the data: the end of a file cut short, or a corrupt size. */
static int overrun(const struct uevent_perf_file *f)
{
	return _uevent_err(f->cut ? ENODATA : EINVAL);
}

/*
 * The next record, decoded into rec; with data_only, the next sample or uevent (other
 * records are stepped over undecoded: batch.c's rows are made of nothing else).
 */
static int next_record(struct uevent_perf_file *f, struct uevent_perf_record *rec, int data_only)
{
	struct perf_event_header h;
	struct pevent *e;
	const uint8_t *r;
	int64_t extra;
	int err;

	for (;;) {
		while (f->reorder && f->iorder == f->nready && f->scan < f->stop)
			if ((err = _uevent_pf_refill(f, 0)) < 0)
				return err;
		f->last_off = f->off;
		f->last_iorder = f->iorder;
		drop_behind(f);
		if (f->reorder) {
			/* the records in time order, then what ended them (the end, a cut) */
			if (f->iorder + 16 < f->nready) {	/* a miss in time order: start it */
				const uint8_t *ahead = f->map + f->order[f->iorder + 16].what;

				__builtin_prefetch(ahead);
				__builtin_prefetch(ahead + 64);
				__builtin_prefetch(ahead + 128);
			}
			if (f->iorder < f->nready)
				f->off = f->order[f->iorder++].what;
			else
				f->off = f->stop;
		}
		/* a cut that falls between two records is a cut all the same */
		if (f->off >= f->end)
			return f->unfinished ? overrun(f) : 0;
		if (f->end - f->off < 8)
			return overrun(f);
		map_ahead(f, f->off);
		r = f->map + f->off;
		frheader(f, r, &h);
		if (h.size < 8)
			return _uevent_err(EINVAL);
		if (h.size > f->end - f->off)
			return overrun(f);
		extra = trailing(f, r, &h, f->end - f->off - h.size);
		if (extra < 0)
			return overrun(f);
		f->off += (uint64_t)extra;
		if (data_only && h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_UEVENT) {
			f->off += h.size;
			continue;
		}
		e = event_of(f, r, h.size, h.type);
		/* an unknown id: decoded as perf does, by the first event's layout */
		err = uevent_perf_record_decode(r, h.size, f->bo, e ? &e->fmt : &f->ev[0].fmt,
						rec);
		if (err < 0 && err != -EPROTO) {
			f->iorder = f->last_iorder;	/* corrupt: the same answer next time */
			return err;
		}
		if (rec->body == UEVENT_BODY_SAMPLE) {
			rec->u.sample.event_index = e ? (int32_t)(e - f->ev) : -1;
			/* a deferred TLS dump, later in the file (tls-deferred.c) */
			if (rec->u.sample.context_err == -EINPROGRESS)
				_uevent_tls_join_scan(rec, r + h.size, f->map + f->end, f->bo);
		}
		else if (rec->body == UEVENT_BODY_UEVENT && !err) {
			rec->u.uevent.event_index = e ? (int32_t)(e - f->ev) : -1;
			if (e && e->file)
				rec->transport = UEVENT_TRANSPORT_FILE;
		}
		f->off += h.size;
		return err == -EPROTO ? err : 1;
	}
}

UEVENT_EXPORT int uevent_perf_file__next(struct uevent_perf_file *f, struct uevent_perf_record *rec)
{
	if (!f || !rec)
		return _uevent_err(EINVAL);
	return next_record(f, rec, 0);
}

/* The next sample or uevent (batch.c). */
int _uevent_perf_file_next_data(struct uevent_perf_file *f, struct uevent_perf_record *rec)
{
	return next_record(f, rec, 1);
}

UEVENT_EXPORT uint64_t uevent_perf_file__offset(const struct uevent_perf_file *f)
{
	return f ? f->off : 0;
}

UEVENT_EXPORT const void *uevent_perf_file__bytes(const struct uevent_perf_file *f, size_t *len)
{
	if (!f || !len) {
		errno = EINVAL;
		return NULL;
	}
	*len = f->len;
	return f->map;
}

/* Takes back the last __next(): its record comes again (batch.c, for a full batch). */
void _uevent_perf_file_unread(struct uevent_perf_file *f)
{
	f->off = f->last_off;
	f->iorder = f->last_iorder;
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

/* libtraceevent's view of the file's tracepoint formats, made on first use. */
static int tep_ready(struct uevent_perf_file *f)
{
	size_t at, sat;

	if (f->tep_err)
		return f->tep_err;
	f->tep = _uevent_tep_new(f->td_big, f->td_long, f->td_page);
	if (!f->tep)
		return f->tep_err = -errno;
	for (at = sat = 0; at < f->tracing_len && sat < f->tracing_sys_len;
	     at += strlen(f->tracing + at) + 1, sat += strlen(f->tracing_sys + sat) + 1)
		_uevent_tep_add(f->tep, f->tracing_sys + sat, f->tracing + at,
				strlen(f->tracing + at));	/* a bad one: its events stay raw */
	return f->tep_err = 1;
}

UEVENT_EXPORT int uevent_perf_file__raw_fields(struct uevent_perf_file *f,
					       const struct uevent_perf_record *rec,
					       unsigned int flags, char *buf, size_t cap)
{
	const struct uevent_perf_sample *smp;
	const struct pevent *e;
	int err;

	if (!f || !rec || (!buf && cap) || (flags & ~(unsigned int)UEVENT_FIELDS_JSON) ||
	    !_uevent_out_ok(rec, sizeof(*rec)))
		return _uevent_err(EINVAL);
	if (cap)
		buf[0] = 0;
	smp = &rec->u.sample;
	if (rec->body != UEVENT_BODY_SAMPLE || !smp->raw || !smp->raw_size ||
	    smp->event_index < 0 || smp->event_index >= f->nev)
		return _uevent_err(ENOENT);
	e = &f->ev[smp->event_index];
	if (e->type != PERF_TYPE_TRACEPOINT)
		return _uevent_err(ENOENT);
	err = tep_ready(f);
	if (err < 0)
		return _uevent_err(-err);
	return _uevent_tep_fields(f->tep, e->config, smp->raw, smp->raw_size, flags, buf, cap);
}

UEVENT_EXPORT int uevent_perf_file__clockid(const struct uevent_perf_file *f)
{
	return f ? f->clockid : -1;
}

UEVENT_EXPORT int uevent_perf_file__byte_order(const struct uevent_perf_file *f)
{
	if (!f)
		return _uevent_err(EINVAL);
	if (f->bo != UEVENT_BO_HOST)
		return f->bo;
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? UEVENT_BO_LITTLE : UEVENT_BO_BIG;
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
	free(f->order);
	free(f->tracing);
	free(f->tracing_sys);
	_uevent_tep_free(f->tep);
	free(f);
}
