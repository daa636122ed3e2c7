/* perfdata-internal.h - the perf.data reader's state, shared by its files (perfdata.c,
 * perfdata-order.c, perfdata-tracing.c), and what each record's read calls on it. */
#ifndef UEVENT_PERFDATA_INTERNAL_H
#define UEVENT_PERFDATA_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#define REC_HEADER_ATTR		64
#define REC_FINISHED_ROUND	68
#define REC_AUXTRACE		71

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

/*
 * perf's FINISHED_ROUND rule: no record is earlier than every round but the last
 * closed one held. A recording made on 16 CPUs broke it with 6 of 1.6 M records, one
 * of them 21 rounds late (stamped, it seems, long before its ring gave it up): such a
 * file still goes a round at a time if each record is at most LAG_MAX rounds late,
 * held until that many rounds after it have closed.
 */
#define LAG_MAX		64

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
	 * least offset of its record and every one still to come (not in a file kept
	 * whole: nothing is given back). Windowed (a big file that keeps perf's
	 * FINISHED_ROUND rule): order[] holds the rounds from where the last ready record
	 * came to scan, and records past scan are taken a round at a time.
	 */
	int reorder;				/* records go out through order[] */
	struct _uevent_timed *order;		/* .what: the record's offset */
	size_t norder, nready, ordercap, iorder, last_iorder;
	uint64_t scan, tprev;			/* the next record to take; the time of the
						   one before it (a record without one) */
	uint64_t rmax[3];			/* the open round's greatest time, the closed
						   rounds' (round_step: the third, which
						   perf's rule reads, is the walk's only) */
	uint64_t pmax[LAG_MAX];			/* rmax[1] as each of the last rounds closed */
	size_t npmax, lag;			/* rounds closed; how many rounds late a
						   record may be (_uevent_pf_walk's) */
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

static inline void frheader(const struct uevent_perf_file *f, const void *p,
			    struct perf_event_header *h)
{
	const uint8_t *b = p;

	h->type = fr32(f, b);
	h->misc = fr16(f, b + 4);
	h->size = fr16(f, b + 6);
}

static inline struct pevent *find_by_id(struct uevent_perf_file *f, uint64_t id)
{
	int i;
	size_t j;

	/* runs of records of one event are the rule: the last answer first */
	if (f->last_ev && f->last_id == id)
		return f->last_ev;
	for (i = 0; i < f->nev; i++)
		for (j = 0; j < f->ev[i].nids; j++)
			if (f->ev[i].ids[j] == id) {
				f->last_id = id;
				return f->last_ev = &f->ev[i];
			}
	return NULL;
}

/*
 * The event a record belongs to, by the id at perf's id position: NULL when the id
 * maps to no attr, or cannot be read with several events.
 */
static inline struct pevent *event_of(struct uevent_perf_file *f, const uint8_t *r,
				      uint16_t size, uint32_t type)
{
	uint64_t id;

	if (f->nev == 1)
		return &f->ev[0];
	if (type == PERF_RECORD_SAMPLE && f->id_pos_sample >= 0 &&
	    (size_t)(f->id_pos_sample + 2) * 8 <= size) {
		id = fr64(f, r + 8 + f->id_pos_sample * 8);
		return find_by_id(f, id);
	}
	if (type != PERF_RECORD_SAMPLE && f->id_pos_other >= 0 &&
	    (size_t)(f->id_pos_other + 1) * 8 <= size) {
		id = fr64(f, r + size - f->id_pos_other * 8);
		return find_by_id(f, id);
	}
	return NULL;
}

/* The bytes after the record at r that its size does not count (HEADER_TRACING_DATA's
 * tracing data, AUXTRACE's trace), or -1 when they run past room. */
static inline int64_t trailing(const struct uevent_perf_file *f, const uint8_t *r,
			       const struct perf_event_header *h, uint64_t room)
{
	uint64_t n = 0;

	if (h->type == REC_TRACING_DATA && h->size >= 12)
		n = fr32(f, r + 8);
	else if (h->type == REC_AUXTRACE && h->size >= 16)
		n = fr64(f, r + 8);
	return n > room ? -1 : (int64_t)n;
}

/*
 * A mapped file is read a 2 MB window at a time, as perf report maps it: each window
 * mapped in before its records are read (map_ahead()), the pages behind given back (in
 * time order: those below every record still to come). They are the file's (PROT_READ,
 * MAP_PRIVATE): read again (a record kept, the headers), they fault back in the same.
 */
#define DROP_WINDOW	((uint64_t)2 << 20)

/*
 * A file of KEEP_WINDOWS windows (32 MB) or fewer keeps its pages from the first pass
 * to the close: read again in time order after the pass that took the times, it is
 * mapped in once, not twice (a third of reading a 6 MB perf record -g file here). perf
 * maps every file whole on 64-bit; bigger ones here keep the 2 MB window.
 */
#define KEEP_WINDOWS	16

/* The pages below off's window, given back (rewind_pages() starts over). */
static inline void give_back(struct uevent_perf_file *f, uint64_t off)
{
	uint64_t to = off & ~(DROP_WINDOW - 1);

	if (!f->mapped || f->keep || to <= f->dropped)
		return;
	(void)madvise(f->map + f->dropped, to - f->dropped, MADV_DONTNEED);
	f->dropped = to;
}

/* A scan is over and the records are read again from the start: their pages come back
 * as they are read (a small file's never went). */
static inline void rewind_pages(struct uevent_perf_file *f)
{
	if (!f->keep)
		f->dropped = f->populated = 0;
}

/*
 * The window that off is in, mapped in: a load every FAULT_AROUND bytes, each fault
 * mapping that many bytes' pages at once (the kernel's fault-around, 64 KB unless set
 * otherwise). Faults taken while the records are read stop the walk for each, and
 * MADV_POPULATE_READ maps one page at a time: with it, reading perf's own files took
 * 5-10% longer, a 54 MB usdt flood 15%.
 */
#define FAULT_AROUND	((uintptr_t)64 << 10)
static inline void map_ahead(struct uevent_perf_file *f, uint64_t off)
{
	const uint8_t *p, *end;
	uint64_t from;

	if (!f->mapped || off < f->populated)
		return;
	from = off & ~(DROP_WINDOW - 1);
	f->populated = from + DROP_WINDOW < f->len ? from + DROP_WINDOW : f->len;
	/* its first byte, then each FAULT_AROUND boundary: one load a fault-around block */
	for (p = f->map + from, end = f->map + f->populated; p < end;
	     p = (const uint8_t *)(((uintptr_t)p | (FAULT_AROUND - 1)) + 1))
		(void)*(volatile const uint8_t *)p;
}

/* Time order (perfdata-order.c): the records' times taken from f->off, then sorted, or
 * the next round taken (refill) as the reader gets to it. 0 or -ENOMEM. */
int _uevent_pf_build_order(struct uevent_perf_file *f);
int _uevent_pf_refill(struct uevent_perf_file *f, int all);

/* What a pass over the records learns of their order (_uevent_pf_walk_*): build_order's,
 * or the pipe header scan's, which takes the times as it goes (one pass, not two). */
struct _uevent_pf_walk {
	uint64_t prev, m[3];		/* the last time; the rounds' greatest (round_step) */
	size_t n, rn, maxr;		/* records; in the open round; in the biggest round */
	int sorted, rounds;		/* in time order; keeping the rule with a lag */
	uint64_t pm[LAG_MAX];		/* the last closed rounds' greatest of all so far */
	size_t npm, lag;		/* rounds closed; the rule's lag (perf's: 2) */
};
void _uevent_pf_walk_init(struct _uevent_pf_walk *w);
/* The record at off (header h), by the events known so far: 0 or -ENOMEM. */
int _uevent_pf_walk_step(struct uevent_perf_file *f, struct _uevent_pf_walk *w, uint64_t off,
			 const struct perf_event_header *h);
/* The pass ended at stop (the end, or a cut or corrupt record): the order made. */
int _uevent_pf_walk_end(struct uevent_perf_file *f, struct _uevent_pf_walk *w, uint64_t stop);

#endif
