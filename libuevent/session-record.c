/* session-record.c - uevent_session__record_to(): what a session reads, as a pipe-mode
 * perf.data stream (perf record -o - writes the same). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

#define REC_FINISHED_ROUND	68
#define REC_TRACING_DATA	66
#define REC_HEADER_FEATURE	80
#define FEAT_VERSION		5
#define FEAT_SAMPLE_TIME	21

static int rec_put(struct uevent_session *s, const void *p, size_t n)
{
	if (s->rec_err)
		return s->rec_err;
	if (_uevent_grow(&s->wbuf, &s->wcap, s->wlen + n) < 0)
		return s->rec_err = -ENOMEM;
	memcpy(s->wbuf + s->wlen, p, n);
	s->wlen += n;
	return 0;
}

static int rec_write_out(struct uevent_session *s)
{
	size_t done = 0;

	while (!s->rec_err && done < s->wlen) {
		ssize_t n = write(s->rec_fd, s->wbuf + done, s->wlen - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			s->rec_err = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	s->wlen = 0;
	return s->rec_err;
}

void _uevent_rec_append(struct uevent_session *s, const void *r, size_t n)
{
	if (rec_put(s, r, n) == 0 && s->wlen >= (1u << 20))
		rec_write_out(s);
}

/* A read round is over: perf may sort what came before; write it all out. */
int _uevent_rec_flush(struct uevent_session *s)
{
	struct perf_event_header h = { .type = REC_FINISHED_ROUND, .size = sizeof(h) };

	if (s->wlen)
		rec_put(s, &h, sizeof(h));
	return rec_write_out(s);
}

static void put_u32(struct uevent_session *s, uint32_t v) { rec_put(s, &v, 4); }
static void put_u64(struct uevent_session *s, uint64_t v) { rec_put(s, &v, 8); }

static void put_file(struct uevent_session *s, const char *name)
{
	char path[256], buf[4096];
	const char *dir = _uevent_tracefs();
	int n = -1;

	if (dir) {
		snprintf(path, sizeof(path), "%s/events/%s", dir, name);
		n = _uevent_read_small(path, buf, sizeof(buf));
	}
	rec_put(s, name, strlen(name) + 1);
	put_u64(s, n > 0 ? (uint64_t)strlen(buf) : 0);
	if (n > 0)
		rec_put(s, buf, strlen(buf));
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
static void put_tracing_data(struct uevent_session *s)
{
	static const uint8_t zeros[8];
	struct { struct perf_event_header h; uint32_t size, pad; } rec;
	size_t at, len;
	uint32_t nsys, nev[2] = { 0, 0 }, first_usdt = 0, page = (uint32_t)sysconf(_SC_PAGESIZE);
	uint8_t misc[2] = { __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__, sizeof(long) };
	int k;

	for (k = K_USDT; k <= K_USER; k++)
		nev[is_usdt(k) ? 0 : 1] += s->want[k] && s->tp_format[k];
	nsys = !!nev[0] + !!nev[1];
	if (!nsys)
		return;
	at = s->wlen;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = REC_TRACING_DATA;
	rec.h.size = sizeof(rec);
	rec_put(s, &rec, sizeof(rec));
	rec_put(s, "\027\010\104tracing", 10);
	rec_put(s, "0.6", 4);
	rec_put(s, misc, 2);
	put_u32(s, page);
	put_file(s, "header_page");
	put_file(s, "header_event");
	put_u32(s, 0);				/* ftrace formats */
	put_u32(s, nsys);
	/* the usdt group's events, then user_events' */
	for (k = K_USDT; k <= K_USER; k++) {
		const char *sys = is_usdt(k) ? _UEVENT_USDT_FILE_GROUP : "user_events";
		char *fmt;

		if (!s->want[k] || !s->tp_format[k])
			continue;
		if (k == K_USER || !first_usdt++) {
			rec_put(s, sys, strlen(sys) + 1);
			put_u32(s, nev[is_usdt(k) ? 0 : 1]);
		}
		fmt = is_usdt(k) ? usdt_file_format(s->tp_format[k]) : NULL;
		if (!fmt)
			fmt = strdup(s->tp_format[k]);
		if (!fmt) {
			s->rec_err = -ENOMEM;
			return;
		}
		put_u64(s, strlen(fmt));
		rec_put(s, fmt, strlen(fmt));
		free(fmt);
	}
	put_u32(s, 0);				/* kallsyms */
	put_u32(s, 0);				/* printk formats */
	put_u64(s, 0);				/* saved cmdlines */
	len = s->wlen - at - sizeof(rec);
	rec_put(s, zeros, (8 - len % 8) % 8);
	if (!s->rec_err) {
		rec.size = (uint32_t)(s->wlen - at - sizeof(rec));
		memcpy(s->wbuf + at, &rec, sizeof(rec));
	}
}

/*
 * HEADER_VERSION as a pipe-mode feature record: "libuevent X.Y.Z", perf's string
 * (u32 length, NUL, padded to 64). It also says that the stream ends with a
 * HEADER_SAMPLE_TIME record, so that a reader tells a finished recording from one
 * cut between two records (its writer killed, the disk full).
 */
static void put_version(struct uevent_session *s)
{
	static const char v[64] = _UEVENT_REC_VERSION_PREFIX PACKAGE_VERSION;
	struct perf_event_header h = { .type = REC_HEADER_FEATURE,
				       .size = sizeof(h) + 8 + 4 + sizeof(v) + 4 };

	rec_put(s, &h, sizeof(h));
	put_u64(s, FEAT_VERSION);
	put_u32(s, sizeof(v));
	rec_put(s, v, sizeof(v));
	put_u32(s, 0);					/* to 8 bytes */
}

/* HEADER_EVENT_DESC as a pipe-mode feature record: the events' names. */
static void put_event_desc(struct uevent_session *s)
{
	struct perf_event_header h = { .type = REC_HEADER_FEATURE };
	size_t at = s->wlen, i;
	uint32_t nr = 0;
	int k;

	for (k = 0; k < K_COUNT; k++)
		nr += !!s->want[k];
	rec_put(s, &h, sizeof(h));
	put_u64(s, 12);					/* HEADER_EVENT_DESC */
	put_u32(s, nr);
	put_u32(s, sizeof(struct perf_event_attr));
	for (k = 0; k < K_COUNT; k++) {
		static const uint8_t zeros[64];
		struct perf_event_attr a;
		char name[96];
		uint32_t n = 0, len;

		if (!s->want[k])
			continue;
		_uevent_session_make_attr(s, k, s->config[k], &a);
		rec_put(s, &a, sizeof(a));
		for (i = 0; i < s->nids; i++)
			n += s->ids[i].kind == k && !s->ids[i].obj;
		put_u32(s, n);
		_uevent_session_kind_name(k, name, sizeof(name));
		len = (uint32_t)(strlen(name) + 1 + 63) / 64 * 64;
		put_u32(s, len);
		rec_put(s, name, strlen(name));
		rec_put(s, zeros, len - strlen(name));
		for (i = 0; i < s->nids; i++)
			if (s->ids[i].kind == k && !s->ids[i].obj)
				put_u64(s, s->ids[i].id);
	}
	if (!s->rec_err && s->wlen - at <= 65535) {
		h.size = (uint16_t)(s->wlen - at);
		memcpy(s->wbuf + at, &h, sizeof(h));
	} else if (!s->rec_err) {
		s->wlen = at;			/* too many ids to name: leave the names out */
	}
}

/*
 * At the end of a recording, the records the kernel counted lost whose LOST record
 * never came (nothing was written to the ring after them): one LOST record for them,
 * so that the file's LOST records sum to what was lost, as the session's stats do.
 */
static void rec_final_lost(struct uevent_session *s)
{
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t ident;
	} r;
	uint64_t counted = _uevent_session_lost_counted(s);

	if (counted <= s->st.lost || !s->nids)
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_LOST;
	r.h.size = sizeof(r);
	r.id = r.ident = s->ids[0].id;
	r.lost = counted - s->st.lost;
	r.pid = r.tid = (uint32_t)-1;
	r.time = _uevent_now_ns();
	_uevent_rec_append(s, &r, sizeof(r));
}

/*
 * The end of a recording: the LOST record still owed, then HEADER_SAMPLE_TIME (the
 * first and last time written), the mark that the stream is whole.
 */
void _uevent_rec_end(struct uevent_session *s)
{
	struct perf_event_header h = { .type = REC_HEADER_FEATURE, .size = sizeof(h) + 24 };

	rec_final_lost(s);
	rec_put(s, &h, sizeof(h));
	put_u64(s, FEAT_SAMPLE_TIME);
	put_u64(s, s->rec_t0);
	put_u64(s, s->rec_t1);
	_uevent_rec_flush(s);
}

UEVENT_EXPORT int uevent_session__record_to(struct uevent_session *s, int fd)
{
	uint64_t magic = 0x32454c4946524550ull, hsize = 16;
	size_t i;
	int k;

	if (!s || fd < 0)
		return _uevent_err(EINVAL);
	if (s->rec_fd >= 0)
		return _uevent_err(EBUSY);
	s->rec_fd = fd;
	s->rec_err = 0;
	put_u64(s, magic);
	put_u64(s, hsize);
	put_version(s);
	for (k = 0; k < K_COUNT; k++) {
		struct perf_event_attr a;
		struct perf_event_header h = { .type = PERF_RECORD_HEADER_ATTR_TYPE };
		size_t n = 0;

		if (!s->want[k])
			continue;
		_uevent_session_make_attr(s, k, s->config[k], &a);
		for (i = 0; i < s->nids; i++)
			n += s->ids[i].kind == k && !s->ids[i].obj;
		if (n > (65535 - sizeof(h) - sizeof(a)) / 8)
			return _uevent_err(E2BIG);	/* more ids than one record holds */
		h.size = (uint16_t)(sizeof(h) + sizeof(a) + n * 8);
		rec_put(s, &h, sizeof(h));
		rec_put(s, &a, sizeof(a));
		for (i = 0; i < s->nids; i++)
			if (s->ids[i].kind == k && !s->ids[i].obj)
				put_u64(s, s->ids[i].id);
	}
	put_tracing_data(s);
	put_event_desc(s);
	if (rec_write_out(s) < 0) {
		int err = s->rec_err;

		s->rec_fd = -1;
		return _uevent_err(-err);
	}
	return 0;
}

