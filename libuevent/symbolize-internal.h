/* symbolize-internal.h - what the symbolizer's files share: its state (processes, code
 * lists, files) and each part's functions. */
#ifndef UEVENT_SYMBOLIZE_INTERNAL_H
#define UEVENT_SYMBOLIZE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

#include "internal.h"
#include "uevent.h"

#define TIME_MAX UINT64_MAX

/* A named address range live over [start, end) of the recording's time. Once added, a
 * code's end is only ever lowered: the lookup's sums (struct code_sum) rely on it. */
struct code {
	uint64_t	addr, size, index, start, end;
	char		*name;
	const char	*dso;		/* interned */
	char		*file;		/* jitdump line: "FILE" */
	uint32_t	line;
	uint32_t	source;
};

/* A live code in the treap: its key beside the links, so a walk stays in a small array. */
struct live_node {
	uint64_t	addr, to;	/* [addr, to): its bytes (one, if no size) */
	uint32_t	kid[2];		/* v indexes + 1, 0 none */
};

/* What a run of codes next by address holds, for a lookup to pass over it: the furthest
 * byte any of them reaches, the earliest start and the latest end (of those ever live). */
struct code_sum {
	uint64_t	last, start, end;
};

struct code_list {
	struct code	*v;		/* in the order added (time order) */
	size_t		n, cap;
	size_t		*by_addr;	/* indexes into v by address, for lookups: sorted up */
	size_t		sorted;		/* to here, the rest sorted in on the next lookup */
	size_t		idx_cap;
	uint32_t	live;		/* the live codes (end TIME_MAX) by address: a treap
					   root, v index + 1 (0: none) */
	struct live_node *node;		/* the treap's nodes, by v index */
	size_t		node_cap;
	uint64_t	max_size;	/* the largest code: how far back a search looks */
	struct code_sum	*sum;		/* over runs of by_addr, and runs of runs: made by
					   the first lookup that a long code made walk far */
	size_t		sum_cap;	/* by_addr positions it has room for (0: none) */
	size_t		sum_ok;		/* positions below it summed as they stand */
	int		no_index;	/* kallsyms: sorted whole instead */
	/* the codes' names, packed in blocks (a malloc each cost a header, a page fault a
	 * few hundred names, and glibc's bookkeeping) and freed with the list */
	struct name_block *names;
	size_t		names_left;	/* bytes free at the end of names */
};

struct fsym {
	uint64_t	addr, size;
	const char	*name;		/* libdwfl's, valid while the Dwfl is */
	int		global;
};

/* An ELF file, opened once, named through libdwfl. */
struct file {
	char		*path;		/* as the stream names it */
	int		tried, ok;
#ifdef HAVE_LIBDW
	Dwfl		*dwfl;
	void		*cb;		/* its Dwfl_Callbacks and debug path */
	Dwfl_Module	*mod;
	GElf_Addr	bias;
	size_t		nload;
	struct { uint64_t off, vaddr, filesz; } *load;
	struct fsym	*syms;		/* its functions by address, for a binary search
					   (libdwfl's own lookup walks the whole table) */
	size_t		nsyms;
#endif
};

struct map {
	uint64_t	addr, len, pgoff, start;
	struct file	*file;
};

struct comm {
	uint64_t	time;
	char		*name;
};

struct proc {
	uint32_t	pid, ppid;
	uint64_t	fork_time;
	struct map	*maps;
	size_t		nmaps, maps_cap;
	struct code_list jit;		/* the JIT uevents */
	struct code_list jd;		/* jitdump records (no unloads: apart) */
	struct code_list pmap;		/* perf-PID.map, read on first need */
	int		pmap_read;
	int		proc_maps_read;	/* UEVENT_SYMBOLIZER_PROC_MAPS */
};

struct thread {
	uint32_t	tid, ptid;
	uint64_t	fork_time;
	struct comm	*comms;
	size_t		ncomms;
};

struct uevent_symbolizer {
	struct uevent_symbolizer_opts o;
	struct proc	**procs;
	size_t		nprocs, procs_cap;
	struct thread	**threads;
	size_t		nthreads, threads_cap;
	struct file	**files;
	size_t		nfiles, files_cap;
	char		**strs;		/* interned strings */
	size_t		nstrs, strs_cap;
	struct code_list kern;		/* kallsyms, sorted by addr, end = next start */
	struct code_list ksym;		/* KSYMBOL records */
	int		kern_read;
	char		**jitdumps;	/* jitdump files read (once each) */
	size_t		njitdumps;
	struct _uevent_demangler *dem;	/* demangle.c's names */
};

/* symbolize.c: the symbolizer's helpers (growing arrays, interned strings, opening
 * inputs safely). */
int _uevent_sym_grow(void **v, size_t *cap, size_t n, size_t elem);
const char *_uevent_sym_intern(struct uevent_symbolizer *s, const char *str);
void _uevent_sym_real_path(const struct uevent_symbolizer *s, const char *path, char *buf,
			   size_t cap);
int _uevent_sym_open_input_fd(const char *path, int nofollow, off_t *size);
FILE *_uevent_sym_open_input(const char *path, off_t *size);

/* symbolize-code.c: code lists (JIT code, perf maps, kernel symbols) and their indexes. */
struct code *_uevent_sym_code_add(struct code_list *l, uint64_t addr, uint64_t size,
				  uint64_t start, const char *name, size_t name_len);
void _uevent_sym_code_end(struct code_list *l, struct code *c, uint64_t t);
uint64_t _uevent_sym_code_end_overlap(struct code_list *l, uint64_t addr, uint64_t size,
				      uint64_t t);
struct code *_uevent_sym_code_replace(struct code_list *l, uint64_t addr, uint64_t size,
				      uint64_t t, const char *name, size_t name_len);
const struct code *_uevent_sym_code_find(struct code_list *l, uint64_t addr, uint64_t t);
void _uevent_sym_code_free(struct code_list *l);
struct code *_uevent_sym_code_live(struct code_list *l, uint64_t index, uint64_t addr);
int _uevent_sym_jit_load(struct uevent_symbolizer *s, struct code_list *l, uint64_t addr,
			 uint64_t size, uint64_t index, const char *name, size_t len, uint64_t t,
			 uint32_t source, const char *dso, int add_only);
int _uevent_sym_jit_move(struct code_list *l, uint64_t index,
			 uint64_t old_addr, uint64_t new_addr, uint64_t size, uint64_t t);
int _uevent_sym_pmap_settle(struct code_list *l);
int _uevent_sym_code_settle(struct code_list *l);

/* symbolize-read.c: the side-band files (jitdumps, perf maps, kallsyms) read into code lists. */
int _uevent_sym_read_jitdump(struct uevent_symbolizer *s, struct proc *p, const char *path);
int _uevent_sym_is_jitdump_name(const char *path);
void _uevent_sym_read_perf_map(struct uevent_symbolizer *s, struct proc *p);
const struct code *_uevent_sym_kern_find(struct uevent_symbolizer *s, uint64_t addr, uint64_t t);

/* symbolize-elf.c: ELF files named through libdwfl. */
struct file *_uevent_sym_file_get(struct uevent_symbolizer *s, const char *path);
int _uevent_sym_file_lookup(struct uevent_symbolizer *s, struct file *f, uint64_t off,
			    uint64_t addr, struct uevent_symbol *out);
void _uevent_sym_file_close(struct file *f);

#endif
