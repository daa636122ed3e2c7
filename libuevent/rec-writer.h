/* rec-writer.h - the pipe-mode perf.data writer (session-record.c): the stream it
 * writes to, and the events a recording describes. It knows nothing of sessions. */
#ifndef UEVENT_REC_WRITER_H
#define UEVENT_REC_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

/* perf's record that ends a round: what came before it may be sorted */
#define REC_FINISHED_ROUND	68

/* A recording being written; fd -1: none. */
struct _uevent_rec {
	int fd;
	uint8_t *buf;			/* what is not written out yet */
	size_t len, cap;
	int err;			/* the first error, which ends the recording */
	uint64_t t0, t1;		/* the first and last time written */
	int open_ended;			/* set before the start: no end mark promised
					   (the file transport's appenders never end it) */
	uint64_t pos, alloc;		/* a regular file's: where the next write goes, and
					   the end of the blocks allocated ahead of it */
	int ahead;			/* ... allocating ahead (_uevent_rec_reserve) */
};

/* An event a recording describes, in the order samples number them. */
struct _uevent_rec_event {
	struct perf_event_attr attr;
	const char *name;		/* as perf names it */
	const uint64_t *ids;		/* the ids its records carry */
	size_t nids;
	const char *tp_format;		/* a tracepoint's format, or NULL */
	const char *tp_system;		/* and its system, as the file names it */
	int usdt;			/* of the usdt group: its format as the file gives it */
};

/* Starts a recording to fd: its header, attrs, tracing data and event names; 0 or -errno
 * (-E2BIG: more ids than an attr record holds). */
int _uevent_rec_start(struct _uevent_rec *w, int fd, const struct _uevent_rec_event *ev,
		      int nev);
/* The same head, into w->buf only (w->len bytes): nothing is written. */
int _uevent_rec_head(struct _uevent_rec *w, const struct _uevent_rec_event *ev, int nev);
/* Before a write of n bytes: blocks allocated ahead of it; after, *pos moved on. */
void _uevent_rec_reserve(struct _uevent_rec *w, size_t n);
/* A record, as read. */
void _uevent_rec_append(struct _uevent_rec *w, const void *r, size_t n);
/* A read round is over: perf may sort what came before; written out. 0 or the error. */
int _uevent_rec_flush(struct _uevent_rec *w);
/* The end: a LOST record for the lost records owed (lost of event id lost_id, when not
 * 0), then the mark that the stream is whole. */
void _uevent_rec_end(struct _uevent_rec *w, uint64_t lost, uint64_t lost_id);

#endif
