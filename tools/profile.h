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

struct sample {
	uint32_t	pid, tid;
	uint64_t	time, period;
	const char	*comm;
	uint32_t	nframes;	/* leaf first */
	struct frame	*frames;
	uint32_t	nranges;	/* the uevent ranges open on its thread, outer first */
	const char	**ranges;
	int		has_ctx;	/* its thread's OpenTelemetry context (context_*) */
	uint8_t		trace_id[16], span_id[8];
};

struct row {
	char		*key;		/* the sort keys' text, tab-separated */
	uint64_t	self, children;
	uint64_t	seen;		/* the sample that last counted it (children) */
};

struct table {
	struct row	*v;
	size_t		n, cap;		/* open addressing, cap a power of two */
};

struct open_range {
	uint64_t	id, begin;
	const char	*name;
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
	struct sample	*s;
	size_t		n, cap;
	uint64_t	total_period, with_chain;
	struct thread_ranges *tr;
	size_t		ntr;
	struct range_stat *rs;
	size_t		nrs;
	struct table	strs;		/* our own strings: names, unknowns */
	const char	*path;
	int		cut;		/* the file ended inside a record */
	unsigned long	bad_jit;	/* JIT uevents that did not decode */
	uint64_t	filtered;	/* samples --pid, --tid, --comm, --time left out */
	const char	*cmd;
	struct pmap	*maps;
	size_t		nmaps, mcap;
	/* the samples' stacks and range lists, one copy of each distinct one (a
	 * sample points at its): memory grows with the distinct stacks, not samples */
	struct blob	*blobs;
	size_t		nblobs, bcap;
	struct frame	*fbuf;		/* a sample's stack, built here first */
	size_t		fcap;
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
const char *prof_base_name(const char *path);
/* Reads path whole: the side-band into the symbolizer, the samples named as of their
 * time (cmd: the command, for messages). Returns 0, or 1 after saying why. */
int prof_profile_read(struct profile *p, const char *cmd, const char *path,
		      const struct uevent_symbolizer_opts *so_in);
void prof_profile_free(struct profile *p);
/* Says the file had no samples, and what to do; the exit code. */
int prof_no_samples(const struct profile *p, const char *cmd);
/* report's pager on a terminal, as perf's */
void prof_pager_start(void);
void prof_pager_end(void);

#endif
