/* session-record.c - the writer of uevent_session__record_to(): what a session reads, as
 * a pipe-mode perf.data stream (perf record -o - writes the same), over rec-writer.h's
 * small struct. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "rec-writer.h"


static int rec_put(struct _uevent_rec *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (_uevent_grow(&w->buf, &w->cap, w->len + n) < 0)
		return w->err = -ENOMEM;
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

/*
 * A regular file's blocks are allocated REC_AHEAD at a time ahead of the writes
 * (_uevent_alloc_ahead(): ext4's block reservation of each page was the drain's largest
 * cost at millions of records a second). The end gives back what is left past the
 * file's end; a recording killed before it keeps up to REC_AHEAD allocated there.
 */
#define REC_AHEAD	((uint64_t)4 << 20)

static void rec_ahead_start(struct _uevent_rec *w)
{
	struct stat st;
	off_t at;

	w->ahead = 0;
	if (fstat(w->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (at = lseek(w->fd, 0, SEEK_CUR)) < 0)
		return;
	w->pos = w->alloc = (uint64_t)at;
	w->ahead = 1;
}

void _uevent_rec_reserve(struct _uevent_rec *w, size_t n)
{
	if (w->ahead)
		_uevent_alloc_ahead(w->fd, &w->alloc, w->pos + n, REC_AHEAD);
}

/* The blocks allocated past the file's end given back (a truncation to its size). */
static void rec_ahead_end(struct _uevent_rec *w)
{
	struct stat st;

	if (w->ahead && w->alloc != UINT64_MAX && w->alloc > w->pos &&
	    fstat(w->fd, &st) == 0 && ftruncate(w->fd, st.st_size) < 0) {
		/* nothing lost: the blocks stay allocated past the end */
	}
	w->ahead = 0;
}

static int rec_write_out(struct _uevent_rec *w)
{
	size_t done = 0;

	_uevent_rec_reserve(w, w->len);
	while (!w->err && done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->err = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	w->pos += done;
	w->len = 0;
	return w->err;
}

void _uevent_rec_append(struct _uevent_rec *w, const void *r, size_t n)
{
	if (rec_put(w, r, n) == 0 && w->len >= (1u << 20))
		rec_write_out(w);
}

/* A read round is over: perf may sort what came before; write it all out. */
int _uevent_rec_flush(struct _uevent_rec *w)
{
	struct perf_event_header h = { .type = REC_FINISHED_ROUND, .size = sizeof(h) };

	if (w->len)
		rec_put(w, &h, sizeof(h));
	return rec_write_out(w);
}

static void put_u32(struct _uevent_rec *w, uint32_t v) { rec_put(w, &v, 4); }
static void put_u64(struct _uevent_rec *w, uint64_t v) { rec_put(w, &v, 8); }

static void put_file(struct _uevent_rec *w, const char *name)
{
	char path[256], buf[4096];
	const char *dir = _uevent_tracefs();
	int n = -1;

	if (dir) {
		snprintf(path, sizeof(path), "%s/events/%s", dir, name);
		n = _uevent_read_small(path, buf, sizeof(buf));
	}
	rec_put(w, name, strlen(name) + 1);
	put_u64(w, n > 0 ? (uint64_t)strlen(buf) : 0);
	if (n > 0)
		rec_put(w, buf, strlen(buf));
}

/*
 * A usdt event's format as the file gives it: its payload arrays (d0, d1... of u64) as
 * one char array d0, and a print fmt showing the text, so that `perf script` prints a
 * mark's text instead of the arrays' numbers. The layout decoders read is unchanged:
 * d0 at the same offset, as many bytes. The kernel's format otherwise.
 */
static char *usdt_file_format(const char *fmt)
{
	struct uevent_raw_layout l;
	const char *line, *eol;
	char *out, *o;
	int d0 = 0;

	if (uevent_raw_layout_from_format(&l, fmt) < 0 || l.kind != UEVENT_RAW_USDT ||
	    !(out = malloc(strlen(fmt) + 256)))
		return NULL;
	o = out;
	for (line = fmt; *line; line = eol) {
		const char *f = strstr(line, "field:u64 d");

		eol = strchr(line, '\n');
		eol = eol ? eol + 1 : line + strlen(line);
		if (f && f < eol && f[11] >= '0' && f[11] <= '9') {
			if (!d0++)
				o += sprintf(o, "\tfield:char d0[%u];\toffset:%u;\tsize:%u;\tsigned:0;\n",
					     l.data_capacity, l.data_offset, l.data_capacity);
		} else if (!strncmp(line, "print fmt:", 10)) {
			o += sprintf(o, "print fmt: \"type=%%u size=%%Lu text=\\\"%%s\\\"\", "
				     "REC->type, REC->size, REC->d0\n");
		} else {
			memcpy(o, line, (size_t)(eol - line));
			o += eol - line;
		}
	}
	*o = 0;
	return out;
}

/*
 * The tracing data (trace-cmd's format, version 0.6) describing the usdt and
 * user_events tracepoints, so that readers turn their samples into uevents.
 */
static void put_tracing_data(struct _uevent_rec *w, const struct _uevent_rec_event *ev,
			     int nev)
{
	static const uint8_t zeros[8];
	struct { struct perf_event_header h; uint32_t size, pad; } rec;
	size_t at, len;
	uint32_t nsys = 0, page = (uint32_t)sysconf(_SC_PAGESIZE);
	uint8_t misc[2] = { __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__, sizeof(long) };
	const char *sys = NULL;
	int i, j;

	/* the tracepoints of a system come one after another: the usdt group's, user_events' */
	for (i = 0; i < nev; i++)
		if (ev[i].tp_format && (!sys || strcmp(sys, ev[i].tp_system))) {
			sys = ev[i].tp_system;
			nsys++;
		}
	if (!nsys)
		return;
	at = w->len;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = REC_TRACING_DATA;
	rec.h.size = sizeof(rec);
	rec_put(w, &rec, sizeof(rec));
	rec_put(w, "\027\010\104tracing", 10);
	rec_put(w, "0.6", 4);
	rec_put(w, misc, 2);
	put_u32(w, page);
	put_file(w, "header_page");
	put_file(w, "header_event");
	put_u32(w, 0);				/* ftrace formats */
	put_u32(w, nsys);
	for (sys = NULL, i = 0; i < nev; i++) {
		char *fmt;

		if (!ev[i].tp_format)
			continue;
		if (!sys || strcmp(sys, ev[i].tp_system)) {
			uint32_t n = 0;

			sys = ev[i].tp_system;
			for (j = i; j < nev && (!ev[j].tp_format || !strcmp(sys, ev[j].tp_system)); j++)
				n += !!ev[j].tp_format;
			rec_put(w, sys, strlen(sys) + 1);
			put_u32(w, n);
		}
		fmt = ev[i].usdt ? usdt_file_format(ev[i].tp_format) : NULL;
		if (!fmt)
			fmt = strdup(ev[i].tp_format);
		if (!fmt) {
			w->err = -ENOMEM;
			return;
		}
		put_u64(w, strlen(fmt));
		rec_put(w, fmt, strlen(fmt));
		free(fmt);
	}
	put_u32(w, 0);				/* kallsyms */
	put_u32(w, 0);				/* printk formats */
	put_u64(w, 0);				/* saved cmdlines */
	len = w->len - at - sizeof(rec);
	rec_put(w, zeros, (8 - len % 8) % 8);
	if (!w->err) {
		rec.size = (uint32_t)(w->len - at - sizeof(rec));
		memcpy(w->buf + at, &rec, sizeof(rec));
	}
}

/*
 * HEADER_VERSION as a pipe-mode feature record: "libuevent X.Y.Z", perf's string
 * (u32 length, NUL, padded to 64). It also says that the stream ends with a
 * HEADER_SAMPLE_TIME record, so that a reader tells a finished recording from one
 * cut between two records (its writer killed, the disk full).
 */
static void put_version(struct _uevent_rec *w)
{
	static const char v[64] = _UEVENT_REC_VERSION_PREFIX PACKAGE_VERSION;
	struct perf_event_header h = { .type = REC_HEADER_FEATURE,
				       .size = sizeof(h) + 8 + 4 + sizeof(v) + 4 };

	rec_put(w, &h, sizeof(h));
	put_u64(w, FEAT_VERSION);
	put_u32(w, sizeof(v));
	rec_put(w, v, sizeof(v));
	put_u32(w, 0);					/* to 8 bytes */
}

/* HEADER_EVENT_DESC as a pipe-mode feature record: the events' names. */
static void put_event_desc(struct _uevent_rec *w, const struct _uevent_rec_event *ev, int nev)
{
	struct perf_event_header h = { .type = REC_HEADER_FEATURE };
	size_t at = w->len, i;
	int k;

	rec_put(w, &h, sizeof(h));
	put_u64(w, 12);					/* HEADER_EVENT_DESC */
	put_u32(w, (uint32_t)nev);
	put_u32(w, sizeof(struct perf_event_attr));
	for (k = 0; k < nev; k++) {
		static const uint8_t zeros[64];
		const char *name = ev[k].name;
		uint32_t len;

		rec_put(w, &ev[k].attr, sizeof(ev[k].attr));
		put_u32(w, (uint32_t)ev[k].nids);
		len = (uint32_t)(strlen(name) + 1 + 63) / 64 * 64;
		put_u32(w, len);
		rec_put(w, name, strlen(name));
		rec_put(w, zeros, len - strlen(name));
		for (i = 0; i < ev[k].nids; i++)
			put_u64(w, ev[k].ids[i]);
	}
	if (!w->err && w->len - at <= 65535) {
		h.size = (uint16_t)(w->len - at);
		memcpy(w->buf + at, &h, sizeof(h));
	} else if (!w->err) {
		w->len = at;			/* too many ids to name: leave the names out */
	}
}

/*
 * At the end of a recording, the records the kernel counted lost whose LOST record
 * never came (nothing was written to the ring after them): one LOST record for them,
 * so that the file's LOST records sum to what was lost, as the session's stats do.
 */
static void rec_final_lost(struct _uevent_rec *w, uint64_t lost, uint64_t id)
{
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t ident;
	} r;

	if (!lost)
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_LOST;
	r.h.size = sizeof(r);
	r.id = r.ident = id;
	r.lost = lost;
	r.pid = r.tid = (uint32_t)-1;
	r.time = _uevent_now_ns();
	_uevent_rec_append(w, &r, sizeof(r));
}

/*
 * The end of a recording: the LOST record still owed, then HEADER_SAMPLE_TIME (the
 * first and last time written), the mark that the stream is whole.
 */
void _uevent_rec_end(struct _uevent_rec *w, uint64_t lost, uint64_t lost_id)
{
	struct perf_event_header h = { .type = REC_HEADER_FEATURE, .size = sizeof(h) + 24 };

	rec_final_lost(w, lost, lost_id);
	rec_put(w, &h, sizeof(h));
	put_u64(w, FEAT_SAMPLE_TIME);
	put_u64(w, w->t0);
	put_u64(w, w->t1);
	_uevent_rec_flush(w);
	rec_ahead_end(w);
}

int _uevent_rec_head(struct _uevent_rec *w, const struct _uevent_rec_event *ev, int nev)
{
	uint64_t magic = 0x32454c4946524550ull, hsize = 16;
	size_t i;
	int k;

	for (k = 0; k < nev; k++)
		if (ev[k].nids > (65535 - sizeof(struct perf_event_header) -
				  sizeof(struct perf_event_attr)) / 8)
			return -E2BIG;		/* more ids than one record holds */
	w->err = 0;
	put_u64(w, magic);
	put_u64(w, hsize);
	if (!w->open_ended)
		put_version(w);
	for (k = 0; k < nev; k++) {
		struct perf_event_header h = { .type = PERF_RECORD_HEADER_ATTR_TYPE };

		h.size = (uint16_t)(sizeof(h) + sizeof(ev[k].attr) + ev[k].nids * 8);
		rec_put(w, &h, sizeof(h));
		rec_put(w, &ev[k].attr, sizeof(ev[k].attr));
		for (i = 0; i < ev[k].nids; i++)
			put_u64(w, ev[k].ids[i]);
	}
	put_tracing_data(w, ev, nev);
	put_event_desc(w, ev, nev);
	return w->err;
}

int _uevent_rec_start(struct _uevent_rec *w, int fd, const struct _uevent_rec_event *ev,
		      int nev)
{
	int err;

	w->fd = fd;
	rec_ahead_start(w);
	err = _uevent_rec_head(w, ev, nev);
	if (err < 0 || rec_write_out(w) < 0) {
		w->fd = -1;
		return err < 0 ? err : w->err;
	}
	return 0;
}
