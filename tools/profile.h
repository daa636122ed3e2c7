/* profile.h - a perf.data's samples named by uevent_symbolizer: what report.c and
 * export-profile.c read them into (profile.c). */
#ifndef UEVENT_TOOLS_PROFILE_H
#define UEVENT_TOOLS_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "uevent.h"

struct frame {
	const char	*sym;		/* the symbolizer's (demangled unless
					   --no-demangle), or one of ours (unknowns) */
	const char	*dso;
	const char	*file;		/* its source file (DWARF), NULL if not known */
	uint64_t	addr;		/* the address named (a call's, for return addresses) */
	uint64_t	sym_addr;	/* the symbol's start, 0 if not named */
	uint32_t	line;		/* its source line, 0 if not known */
	int		kernel;
	int32_t		map;		/* the mapping (struct profile's maps) or -1 */
};

/* An executable mapping (MMAP, MMAP2), for pprof's mappings. */
struct pmap {
	uint32_t	pid;
	uint64_t	addr, len, pgoff, time;
	const char	*file;
	uint8_t		build_id[20];
	uint32_t	build_id_size;	/* from MMAP2, else read from the file when asked */
	int		bid_read;
};

/*
 * The uevent ranges open on a thread, as a persistent stack: a node is a range over the
 * node of the ranges open around it, made once for each (outer node, name) and never
 * changed, so one node stands for one list and a sample keeps a pointer, however deep
 * the list. A copy of the list in each sample costs the square of the run time when a
 * program leaves its ranges open.
 */
struct range_node {
	const struct range_node *up;	/* the ranges around it; NULL: none */
	const char	*name;		/* prof_own()'s */
	uint32_t	depth;		/* ranges open, this one included */
};

/* The most ranges a sample keeps, the innermost (as perf keeps a callchain's leaf end,
 * and the NVTX layer records 256 open pushes): a program that leaks range begins would
 * put thousands in every folded line and pprof sample. */
#define PROF_MAX_RANGES	256

/*
 * A kind of sample: what report and the exports tell samples apart by (its process,
 * command, stack, the uevent ranges open on its thread, its trace context), one entry
 * for all the samples of that kind, counted as they are read: memory grows with the
 * distinct stacks, not with the samples.
 */
struct kind {
	/* the key: its bytes (no padding) name the kind */
	uint32_t	pid;
	uint32_t	nframes;	/* leaf first */
	const char	*comm;
	struct frame	*frames;	/* shared with every kind of that stack */
	const struct range_node *ranges; /* the innermost uevent range open on its thread */
	uint32_t	nranges;	/* how many of them it keeps (prof_kind_ranges) */
	int32_t		has_ctx;	/* its thread's OpenTelemetry context (context_*) */
	uint8_t		trace_id[16], span_id[8];
	/* its samples */
	uint64_t	count, period;	/* how many, their periods summed */
	uint64_t	time;		/* the first one's in the file (its pid's names) */
	uint64_t	tmin, tmax;	/* the earliest, the latest */
};
#define PROF_KIND_KEY	offsetof(struct kind, count)

/* A sample in the file's order: kept only with PROF_TICKS (export --chrome writes an
 * event a sample, and its spans need each thread's samples in time order). */
struct tick {
	uint32_t	kind, tid;
	uint64_t	time, period;
};

struct row {
	char		*key;		/* the sort keys' text, tab-separated */
	uint64_t	self, children;
	uint64_t	seen;		/* the kind that last counted it (children) */
};

struct table {
	struct row	*v;
	size_t		n, cap;		/* open addressing, cap a power of two */
};

struct open_range {
	uint64_t	id, begin;
	const char	*name;
	const struct range_node *node;	/* the thread's ranges up to and with this one */
};

struct thread_ranges {
	uint32_t	tid;
	struct open_range *v;
	size_t		n, cap;
};

struct range_stat {
	const char	*name;
	uint64_t	count, ns, samples, period;
};

struct blob {
	uint64_t	hash;
	size_t		len;
	void		*data;		/* NULL: an empty slot */
};

struct profile {
	struct uevent_symbolizer *sym;
	struct kind	*k;		/* in the order of their first samples */
	size_t		nk, kcap;
	uint32_t	*kidx;		/* k's index + 1 by the key's hash; 0: empty */
	size_t		kicap;
	struct tick	*t;		/* PROF_TICKS: every sample, n of them */
	size_t		tcap;
	size_t		n;		/* samples */
	uint64_t	total_period, with_chain, period0;	/* period0: the first's */
	struct thread_ranges *tr;
	size_t		ntr;
	struct range_stat *rs;
	size_t		nrs;
	struct table	strs;		/* our own strings: names, unknowns */
	const char	*path;
	int		cut;		/* the file ended inside a record */
	int		ticks;		/* PROF_TICKS asked */
	unsigned long	bad_jit;	/* JIT uevents that did not decode */
	uint64_t	filtered;	/* samples --pid, --tid, --comm, --time left out */
	const char	*cmd;
	struct pmap	*maps;
	size_t		nmaps, mcap;
	/* the kinds' stacks, one copy of each distinct one (a kind points at its) */
	struct blob	*blobs;
	size_t		nblobs, bcap;
	struct frame	*fbuf;		/* a sample's stack, built here first */
	size_t		fcap;
	struct range_node **rnodes;	/* every range_node, by (up, name)'s hash */
	size_t		nrnodes, rncap;
	uint64_t	deep;		/* samples under more than PROF_MAX_RANGES ranges */
	char		said[640];	/* the last file the symbolizer skipped, said */
};

/* report's --pid, --tid, --comm, --time (NULL: every sample) */
extern const struct cli_filter *prof_sample_filter;

/* Our copy of str, one per distinct string (names, unknown addresses). */
const char *prof_own(struct profile *p, const char *str);
/* The row of key in t, made if new (NULL: no memory). */
struct row *prof_row_get(struct table *t, const char *key);
/* qsort's order of rows: by self, largest first, then key. */
int prof_row_cmp_self(const void *a, const void *b);
uint64_t prof_hash(const char *s);
/* n bytes as lowercase hex, as W3C trace context writes ids (buf: 2n + 1) */
char *prof_hex(char *buf, const uint8_t *b, size_t n);
struct range_stat *prof_range_stat(struct profile *p, const char *name);
struct thread_ranges *prof_ranges_of(struct profile *p, uint32_t tid);
/* The ranges kind s keeps into v (s->nranges of them, at most PROF_MAX_RANGES), outer
 * first. */
void prof_kind_ranges(const struct kind *s, const char **v);
const char *prof_base_name(const char *path);
/* prof_profile_read's flags: also each sample in the file's order (p->t) */
#define PROF_TICKS	1
/* Reads path whole: the side-band into the symbolizer, the samples named as of their
 * time and counted by kind (cmd: the command, for messages; flags: PROF_*). Returns 0,
 * or 1 after saying why, with nothing left to free. */
int prof_profile_read(struct profile *p, const char *cmd, const char *path,
		      const struct uevent_symbolizer_opts *so_in, unsigned int flags);
void prof_profile_free(struct profile *p);
/* Says the file had no samples, and what to do; the exit code. */
int prof_no_samples(const struct profile *p, const char *cmd);
/* report's pager on a terminal, as perf's */
void prof_pager_start(void);
void prof_pager_end(void);

/* a + b, UINT64_MAX past it: sums of periods, which a corrupt file may make 2^63 and
 * more, must not wrap to a small number (a share of 1e18 %, or none at all). */
static inline uint64_t prof_add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
