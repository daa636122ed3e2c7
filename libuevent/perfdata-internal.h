/* perfdata-internal.h - the perf.data reader's state, shared by its files (perfdata.c,
 * perfdata-tracing.c). */
#ifndef UEVENT_PERFDATA_INTERNAL_H
#define UEVENT_PERFDATA_INTERNAL_H

#include <stdint.h>
#include <string.h>

struct pevent {
	struct uevent_perf_format fmt;
	uint64_t *ids;
	size_t nids;
	char *name;
	uint32_t type;
	uint64_t config;
	int clockid;
	int file;			/* the file transport's event: its uevents' transport */
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
	char *tracing_sys;			/* the system of each, NUL separated */
	size_t tracing_sys_len;
	int td_big, td_long, td_page;		/* the tracing data's byte order, sizes */
	struct _uevent_tep *tep;		/* the formats parsed, on first use */
	int tep_err;				/* 0 until tried, then 1 or -errno */
	int swap;				/* written in the other byte order */
	int bo;					/* UEVENT_BO_* of the records */
	int cut;				/* the data may end mid-record (pipe mode, a
						   file shorter than its header says) */
	/*
	 * Time order, when the file's is not: order[] holds (time, offset) of records, the
	 * first nready of them sorted and free to go out; once ready, each time is the
	 * least offset of its record and every one still to come. Windowed (a big file
	 * that keeps perf's FINISHED_ROUND rule): order[] holds the rounds from where the
	 * last ready record came to scan, and records past scan are taken a round at a time.
	 */
	int reorder;				/* records go out through order[] */
	struct _uevent_timed *order;		/* .what: the record's offset */
	size_t norder, nready, ordercap, iorder, last_iorder;
	uint64_t scan, tprev;			/* the next record to take; the time of the
						   one before it (a record without one) */
	uint64_t rmax[3];			/* the open round's greatest time, the closed
						   rounds', all of those but the last's */
	uint64_t stop;				/* where the ordered records end: the end,
						   or the first cut or corrupt record */
	uint64_t last_off;			/* where the last __next() started */
	uint64_t dropped;			/* the map's pages given back below here */
	uint64_t populated;			/* the last window mapped in ends here */
	int keep;				/* a small file: its pages stay mapped */
	struct pevent *last_ev;			/* find_by_id()'s last answer, */
	uint64_t last_id;			/* for this id */
	int unfinished;				/* the file holds less than its header says,
						   or its writer never said how much, or a
						   libuevent stream lacks its end mark */
};

/* Numbers as the file stores them, in host order. */
static inline uint16_t fr16(const struct uevent_perf_file *f, const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return f->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t fr32(const struct uevent_perf_file *f, const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return f->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t fr64(const struct uevent_perf_file *f, const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return f->swap ? __builtin_bswap64(v) : v;
}

/* The tracing data's event formats into f->tracing (perfdata-tracing.c). */
void _uevent_pf_parse_tracing(struct uevent_perf_file *f, const uint8_t *p, uint64_t len);

#endif
