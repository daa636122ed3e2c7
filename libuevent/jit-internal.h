/* jit-internal.h - what the JIT session's files share: the jitdump records, the session
 * and its code, and each part's functions. */
#ifndef UEVENT_JIT_INTERNAL_H
#define UEVENT_JIT_INTERNAL_H

#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "group-append.h"

/* ---- jitdump format: internal.h ------------------------------------------------ */

struct jd_load {
	struct jd_prefix p;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	/* name, NUL, code bytes */
};

struct jd_move {
	struct jd_prefix p;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

struct jd_debug {
	struct jd_prefix p;
	uint64_t code_addr, nr_entry;
	/* per entry: u64 addr, u32 line, u32 discrim, name, NUL */
};

struct jd_unwind {
	struct jd_prefix p;
	uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
	/* unwinding data */
};

#if defined(__x86_64__)
#define JD_ELF_MACH EM_X86_64
#elif defined(__i386__)
#define JD_ELF_MACH EM_386
#elif defined(__aarch64__)
#define JD_ELF_MACH EM_AARCH64
#elif defined(__arm__)
#define JD_ELF_MACH EM_ARM
#elif defined(__powerpc64__) || defined(__powerpc__)
#define JD_ELF_MACH EM_PPC64
#elif defined(__riscv)
#define JD_ELF_MACH EM_RISCV
#elif defined(__s390x__)
#define JD_ELF_MACH EM_S390
#else
#define JD_ELF_MACH EM_NONE
#endif

static const char zeros[8];

static inline uint32_t pad8(size_t n)
{
	return (uint32_t)((8 - (n & 7)) & 7);
}

/* ---- the session ---------------------------------------------------------------- */

#define DUMP_POOL	4		/* free batch buffers a session keeps */

/* DEBUG_INFO / UNWINDING_INFO records waiting for the CODE_LOAD of their address, then
 * kept with that code so a fork child can replay them into its own dump. */
struct pending {
	struct pending *next;
	uint64_t addr;
	size_t len;
	unsigned char rec[];
};

/* A loaded piece of code, by address: needed for move (the code index names perf's
 * jitted-PID-INDEX.so), unload, the perf-map line of a move, and a fork child's replay. */
struct code {
	uint64_t addr, size, index;
	char *name;
	struct pending *info;		/* the records written with its load */
	int name_in_info;		/* where name is: enum name_at */
	uint64_t ts;			/* its record's timestamp: of two loads at an
					   address, the later in the dump stays (code_settle) */
};

enum name_at {
	NAME_OWN,			/* a malloc of its own */
	NAME_IN_INFO,			/* in the last of info's blocks, one malloc for both */
	NAME_IN_SLAB,			/* in a slab block (slab_alloc): with the last of
					   info's blocks, if that is there */
};

/*
 * What a code_load_func keeps (its DEBUG_INFO record and the name) comes from the
 * session's slabs: 64 KiB blocks, aligned to their size, taken from in order and given
 * back when every piece from one is freed. A JIT compiles between two loads, and the
 * compile evicts malloc's lists and headers: a bump here touches the one line it
 * writes, and freeing a load (LuaJIT frees all at a flush) touches none of the piece,
 * only its slab's count, found from the name's address.
 */
#define SLAB_SIZE	((size_t)64 * 1024)
#define SLAB_SPARE	8		/* empty slabs a session keeps: pages faulted in */

struct slab {
	struct uevent_jit *j;		/* whose spares it joins when empty */
	struct slab *next;		/* in j's spares */
	long live;			/* pieces not freed; for the one allocated from,
					   minus those freed (its slab_cur counts what it
					   gives out and adds that when it retires the
					   slab: a load touches only the cursor and its
					   piece). Atomic: pieces are freed under the
					   session's lock, a stage's slab retired by its
					   thread without it; the change to 0 empties it. */
};

/* Where slab_alloc takes from: the session's (lock held), or a stage's (its thread). */
struct slab_cur {
	char *next, *end;		/* the room left */
	long n;				/* pieces given from it */
	struct slab *slab;		/* ... which is in this one */
};

#define SLAB_HEAD	((sizeof(struct slab) + 15) & ~(size_t)15)

/*
 * A thread's loads into one session, not in the table yet: each thread that loads has
 * its own (found through a small per-thread cache, made under the session's lock the
 * first time), so the table's insert, growth and the list's doubling are not made under
 * the session's lock, and threads touch no shared line for them. Appended to by its
 * thread alone (under its lock, always free but when a lookup settles), moved into the
 * table by code_settle with the session's lock held; a thread that exits leaves its
 * stage to the next thread of its tid. Freed at close.
 */
struct stage {
	/* Its thread's, written at every load. */
	pthread_mutex_t lock;
	size_t n, cap;
	struct code *code;		/* loaded in time order: a later load replaces */
	/*
	 * UEVENT_JIT_BUFFER_JITDUMP (with the perf map batched or off): the thread's
	 * record groups (a load's info records and CODE_LOAD), each after a rec_head,
	 * in time order, not in the session's batch yet. Appended to under lock, the
	 * clock read under it too; stage_merge (session lock held) takes the groups up to
	 * a time from every stage into the batch in time order. The buffer is moved or
	 * grown only with the session's lock held (by a merge's end, or by its thread
	 * between merges), so a merge reads what it took without the stage's lock.
	 */
	unsigned char *rec;
	size_t reclen, reccap;
	size_t rechead;			/* the groups before it are merged: a merge moves
					   it on, its thread's stage_flush moves the rest
					   down (a merge moving them held the thread up) */
	struct rec_ix *ix;		/* the groups' entries, one a group, in order: room
					   for reccap / STAGE_IX_SPAN (a group is longer) */
	size_t ixlen, ixhead;		/* as reclen and rechead */
	int wants_room;			/* atomic: its thread waits for room (stage_wait_room):
					   a merge moves the rest down as it ends */
	uint64_t rec_t0;		/* the oldest group's time */
	uint64_t index_next, index_end;	/* code indexes, a block at a time */
	struct slab_cur slab;		/* the pieces of its code_load_func calls */
	pid_t tid;
	/* The session's (its lock held), a merge's view, written at its start and end: a
	 * line of its own, which the loading thread does not write. */
	struct stage *next __attribute__((aligned(64)));	/* in the session's list */
	const unsigned char *m_rec;	/* a merge's view: rec, */
	size_t m_pos, m_ixpos;		/* ... and where its groups taken end, in rec and ix */
	/* Its thread's merge handed a batch off (to out) or lines (to mout): 1 until they
	 * are written, by whichever thread, which leaves the batch's write's result here
	 * for this thread's call (stage_flush_locked waits for it), and for no other. A
	 * failed write of lines fails no call: it waits for the next flush (werr). */
	int hand_dump, hand_map;	/* atomic */
	int hand_derr;			/* ... and the batch's write's error */
};

/* A copy a merge queued: len bytes from src to cp_base[buf] + dst. */
struct cp_item {
	const unsigned char *src;
	size_t dst, len;
	int buf;			/* 0: the dump's batch, 1: the perf map's */
};

struct rec_head {
	uint64_t ts, index;		/* the load's: merged by (ts, index) */
	uint64_t len;			/* the records' bytes that follow */
	uint64_t mlen;			/* then its perf-map line's, 0 if none (made by its
					   thread when several load; the next head 8 bytes
					   aligned after it) */
};

/*
 * A group's entry in its stage's index (stage.ix): what a merge reads of every group but
 * the bytes it copies, four to a cache line at a fixed stride. The heads themselves are
 * a chain (each one's place is in the one before), so a merge reading them from other
 * CPUs' stages waited for each in turn; these it reads ahead.
 */
struct rec_ix {
	uint64_t ts;
	uint32_t len, mlen;		/* its rec_head's (a group is under 4 GiB) */
};

#define STAGE_IX_SPAN	64		/* no more than a group's least bytes (its head and
					   CODE_LOAD: 88) */

/* The group after h in a stage, x its entry. */
static inline const struct rec_head *_uevent_jit_rec_next(const struct rec_head *h,
							  const struct rec_ix *x)
{
	return (const struct rec_head *)(const void *)((const unsigned char *)(h + 1) + x->len +
						       x->mlen + pad8(x->mlen));
}

/* Stage s's records not merged yet moved to its buffer's start; s's lock held, and no
 * merge reading the buffer (the session's lock held, or the merge's own end). */
static inline void _uevent_jit_stage_compact(struct stage *s)
{
	if (!s->rechead)
		return;
	memmove(s->rec, s->rec + s->rechead, s->reclen - s->rechead);
	memmove(s->ix, s->ix + s->ixhead, (s->ixlen - s->ixhead) * sizeof(*s->ix));
	__atomic_store_n(&s->reclen, s->reclen - s->rechead, __ATOMIC_RELAXED);
	s->ixlen -= s->ixhead;
	s->rechead = s->ixhead = 0;
}

/* A stage's place in a merge (_uevent_jit_stage_merge): its next group, and where its
 * groups up to the merge's time end. */
struct merge_cur {
	uint64_t ts;			/* x's, kept here: the heap compares it */
	const struct rec_ix *x, *xend;	/* its next group's entry; where those taken end */
	const struct rec_head *h;	/* its next group (read for its index at a tie) */
	struct stage *s;
};

/*
 * A piece of a load's merge made in pieces (merge_parallel in jit-merge.c): the groups
 * of one span of the merge's time from every stage, merged into their own place in the
 * batch, and their lines into theirs in the perf map's buffer, by whichever thread
 * takes it (the merging one, or one waiting for room). Its stages' cursors are j->pcur
 * from its number times the merge's stages on.
 */
struct merge_piece {
	size_t dst, mdst;		/* its place in the batch, and in the lines' buffer */
	size_t n;			/* its stages (cursors) */
	uint64_t bnd_at, bnd_whole, bnd_next;	/* a 256 KiB boundary it passes (0: none)
						   and the record about it */
};

#define MERGE_PIECES	8		/* a parallel merge's pieces, at most */
#define PIECE_GROUPS	32		/* ... and the groups a piece takes, at least */

#define STAGE_REC_CAP	((size_t)128 * 1024)
#define STAGE_REC_FLUSH	((size_t)64 * 1024)	/* merged from here on */

struct uevent_jit {
	/* What a load touches, first and together: the JIT's compile path between two
	 * loads has evicted it, and each line it spans is another miss. */
	pthread_mutex_t lock;
	unsigned int flags;
	int forked;			/* set in a fork child: reopen on next call */
	pid_t pid;
	int dump_fd, map_fd;
	uint64_t dump_off;		/* end of the last whole record */
	unsigned char *dumpbuf;		/* UEVENT_JIT_BUFFER_JITDUMP: records not yet written */
	size_t dumplen, dumpcap;
	uint64_t dump_file;		/* ... and the bytes before them, in the file */
	uint64_t dump_whole;		/* ... the last record's start or end at or before
					   dump_file: a failed write cuts the file there */
	uint64_t dump_next;		/* ... and the first at or after it */
	uint64_t bnd_at;		/* the last 256 KiB boundary an append passed, */
	uint64_t bnd_whole, bnd_next;	/* ... and the record about it (dump_bounds) */
	uint64_t dump_alloc;		/* ... and the file's blocks allocated up to here
					   (FALLOC_FL_KEEP_SIZE); UINT64_MAX: cannot */
	uint64_t dump_t0;		/* when the oldest of them was added */
	char *mapbuf;			/* UEVENT_JIT_BUFFER_PERF_MAP: lines not yet written */
	size_t maplen;
	uint64_t map_t0;		/* when the oldest of them was added */
	uint64_t map_scan;		/* both batched: the dump's records from here on
					   have no perf-map line yet (_uevent_jit_map_scan()) */
	/* Loads not in codes yet, in order: appended to (one hot cache line), moved into
	 * the table by the first lookup (code_settle), freed with it by unload_all. A
	 * JIT that compiles many pieces and unloads them all at once (LuaJIT's flush)
	 * never pays for the table's cold, random probes. It doubles as it fills; the
	 * table keeps room for all of it, so settling never allocates. */
	struct code *fresh;
	size_t nfresh, freshcap;
	struct stage *stages;		/* per thread: loads not in codes yet */
	struct merge_cur *pcur;		/* a parallel merge's, MERGE_PIECES a stage: as mcur */
	struct merge_cur *mcur;		/* a merge's, one a stage: made with the stage,
					   so that a merge (at fork too) allocates nothing */
	size_t nstages;
	uint64_t serial;		/* names the session in the threads' stage caches */
	struct code *codes;		/* open addressing, linear probing, addr 0 = empty */
	size_t ncodes, cap;
	struct pending *pending;
	uint64_t index_next, index_end;	/* take_index's block */
	struct slab_cur slab;		/* the session's slab_alloc (lock held) */
	pthread_mutex_t slab_lock;	/* spare and nspare (stages' slabs come and go
					   without the session's lock) */
	struct slab *spare;		/* empty ones, up to SLAB_SPARE */
	int nspare;
	int staged;			/* batched loads go through the stages' records
					   (BUFFER_JITDUMP, the perf map batched or off) */
	uint64_t flush_due;		/* atomic: when something held (the batch, a
					   stage's records) is DUMP_BUF_AGE_NS old */
	int merging;			/* atomic: a load's merge holds the lock; a load
					   past its stage's mark does not try it then (a
					   failed trylock still writes the lock's line,
					   which every load reads) */
	/* Perf-map lines of unbatched loads, waiting for one writev (map_commit): pushed
	 * with the lock held, so in the dump's order, newest first. */
	struct _uevent_group_append mapq;
	/*
	 * Staged: a load's merge (stage_flush) hands the batch's full part off (its
	 * perf-map lines made and written under the lock, as before), and its thread
	 * writes the bytes after dropping the session's lock, while the next merge fills
	 * another buffer: with pwrite (out: _uevent_jit_out_write), one at a time, or,
	 * while that one is under way, as a copy into the shared mapping of the file (win:
	 * a window job), any number at once, so the page cache is filled from many CPUs.
	 * A holder of the lock calls _uevent_jit_out_wait before it writes the dump, or
	 * lets go of the session (fork, close, exit). out and wfail are set under wlock,
	 * or out under the lock with no write under way.
	 */
	pthread_mutex_t wlock;		/* out's write */
	unsigned char *out;		/* atomic: handed off, not written yet */
	size_t out_len, out_cap;	/* bytes to write; its buffer's size */
	uint64_t out_off;		/* their place in the file */
	uint64_t out_cut;		/* dump_whole at out_off */
	uint64_t wfail;			/* atomic: out's write failed: the file is to be
					   cut at wfail - 1, and what follows is lost */
	int werr;			/* atomic: a batch's write failed (dump or perf
					   map): its first -errno, kept for the next
					   uevent_jit__flush and close (others' records
					   were lost with it, their calls returned 0) */
	struct stage *merger;		/* the stage of the thread whose merge runs */
	uint64_t merge_start;		/* ... dump_off when it began */
	struct stage *out_owner;	/* ... and of the one whose merge handed out off */
	int defer;			/* a load's merge: batches are handed off */
	int wcopies;			/* atomic: window jobs under way */
	/*
	 * A merge's copies of the groups (and their perf-map lines) it takes, queued while
	 * threads wait for room in their stages (cp_waiters), and made by them and the
	 * merge at once (_uevent_jit_cp_run) before anything reads the batch: at 16
	 * threads one thread copying every group was a third of the merge, which every
	 * other thread waits for. Written under the lock; a phase is live from its
	 * cp_claim to its last copy, and nothing in it changes meanwhile.
	 */
	struct cp_item *cp;		/* the copies: a phase's, or the next's */
	size_t cp_n, cp_cap;		/* (the merge's own: written at each copy queued) */
	unsigned char *cp_base[2];	/* the phase's dumpbuf and mapbuf */
	uint32_t cp_phase;		/* the last phase's number, never 0 */
	int cp_pieces;			/* the phase's items are pieces, not copies */
	struct merge_piece piece[MERGE_PIECES];	/* a parallel merge's */
	size_t pstride;			/* ... its stages: the cursors of a piece */
	uint64_t pfile;			/* ... dump_file as it began */
	int pmap;			/* ... its lines go to the perf map's buffer */
	int cp_merge;			/* a merge queues copies (helpers wait) */
	/* Each on a cache line of its own (the session is allocated aligned): what the
	 * waiting threads poll at every turn, written at a phase's start and each claim;
	 * what they add to as they finish; what they count themselves in, which a merge
	 * reads at each copy. */
	uint64_t cp_claim __attribute__((aligned(64)));	/* atomic: phase << 32 | the
							   next item not taken */
	size_t cp_live;			/* ... the phase's items (set before it starts) */
	size_t cp_done __attribute__((aligned(64)));	/* atomic: the phase's made */
	int cp_waiters __attribute__((aligned(64)));	/* atomic: threads waiting in
							   stage_wait_room */
	char cp_pad[60];		/* ... alone on its line */
	unsigned char *wjob;		/* a merge's window job, taken by its thread
					   before it drops the lock */
	size_t wjob_len, wjob_cap;
	uint64_t wjob_off;
	/* ... and the perf-map lines made from a handed-off batch (under the lock, in the
	 * dump's order), written by its thread after the lock too, one write at a time
	 * (_uevent_jit_mout_write); a write under the lock waits for it (map_write). */
	pthread_mutex_t mlock;		/* mout's write */
	char *mout;			/* atomic: lines handed off, not written yet */
	size_t mout_len;
	char *mapspare;			/* the other line buffer (NULL: none yet, or mout) */
	struct stage *mout_owner;	/* the stage whose merge handed mout off */
	pthread_mutex_t pool_lock;	/* free batch buffers, given back without the lock */
	unsigned char *pool[DUMP_POOL];
	size_t poolcap[DUMP_POOL];
	unsigned char *win;		/* MAP_SHARED window over the whole reserved file */
	uint64_t dump_cap;		/* bytes reserved (fallocated) and mapped */
	/* The rest is for open, close and fork. */
	struct uevent_jit *next;	/* in the process's list, for fork */
	int dir_fd;			/* the jitdump directory, checked once at open */
	int map_path_given;
	void *dump_map;			/* the PROT_EXEC marker mapping perf inject looks for */
	size_t dump_map_len;
	char dir[PATH_MAX];
	char dump_path[PATH_MAX];
	char map_path[PATH_MAX];
};

/*
 * The window over the dump never moves: address space for DUMP_VA bytes is reserved
 * at the first growth and the file mapped into it piece by piece (MAP_FIXED), so a
 * load that reserved its place under the lock copies its record there after dropping
 * it, while another grows the file (uevent_jit__code_load: loads from many threads).
 */
#define DUMP_VA		(sizeof(void *) >= 8 ? (uint64_t)64 << 30 : (uint64_t)256 << 20)

#define DUMP_BUF_MAX	((size_t)256 * 1024)
#define DUMP_BUF_CAP	(2 * DUMP_BUF_MAX)	/* room to wait for a boundary */
#define DUMP_DEFER_MAX	((size_t)4 * 1024 * 1024)	/* a load's merge grows the batch up
						   to this while one is being written */
#ifndef DUMP_WIN_MIN
#define DUMP_WIN_MIN	((size_t)512 * 1024)	/* ... and past this hands it to the
						   file's mapping (a window job) */
#endif
#ifndef DUMP_WIN_ALWAYS
#define DUMP_WIN_ALWAYS	0	/* t/jit-tsan.test: every batch a load's merge hands off
				   is a window job */
#endif
#ifndef JIT_CP_ALWAYS
#define JIT_CP_ALWAYS	0	/* t/jit-tsan.test, t/jit-full-win.test: a merge queues its
				   copies (_uevent_jit_cp_push) whether a thread waits
				   to make them with it or not, and one of two groups
				   or more is made in pieces */
#endif
#define DUMP_ALLOC	((uint64_t)1024 * 1024)
#define DUMP_BUF_AGE_NS	((uint64_t)100 * 1000 * 1000)
/* A full buffer is written up to a multiple of this in the file, the rest kept: whole,
 * aligned blocks are what the page cache takes cheapest (large folios, no partial page
 * to look up and fill). On ext4, 6.18, a 448 KiB file written from offset 40 in blocks
 * of 65,248 bytes costs 0.23 us a KiB; in aligned 64 KiB blocks 0.11, 256 KiB 0.09. */
#define DUMP_ALIGN	((uint64_t)256 * 1024)
/* A test build's hook (t/jit-full-win.test): a batch just handed off to out, the
 * session's lock held. */
#ifdef JIT_TEST_HOOKS
void _uevent_jit_test_handed_off(struct uevent_jit *j);
#else
#define _uevent_jit_test_handed_off(j)	((void)0)
#endif

/* The perf-map lines' buffer: a parallel merge at 16 threads puts 50-60 KiB of lines
 * at once, and one that does not fit falls back to the serial merge. */
#define MAP_BUF_MAX	((size_t)256 * 1024)
/* A name this long (less the line's 64 bytes) gets no line from a batch, and a line this
 * long (half of it) bypasses the buffer */
#define MAP_LINE_MAX	((size_t)64 * 1024)

/*
 * The perf-map line of an unbatched load, written by group commit (group-append.h):
 * a load formats its line, pushes it with the session's lock held (so in the dump's
 * order) and commits it without the lock; under contention one writev carries many
 * threads' lines.
 */
struct map_req {
	struct _uevent_ga_req ga;
	char *line;			/* "ADDR SIZE NAME\n": small, or a malloc */
	char small[192];
};

/*
 * Appends a record group at the end of the dump through the shared mapping: the bytes
 * are in the file (the page cache) when this returns, without a syscall. The group's
 * first 8 bytes (id, total_size) are stored last, so a reader of the file, or the file
 * left by a crash, holds whole records followed by zeros, never a torn record; perf
 * stops reading at a total_size of 0. close() trims the reserved tail. (Buffered:
 * dump_buffer.) now: the records' timestamp, for the buffer's age.
 */
static inline void dump_fill(unsigned char *at, const struct iovec *iov, int cnt)
{
	unsigned char *w = at;
	uint64_t head;
	int i;

	memcpy(&head, iov[0].iov_base, 8);
	memcpy(w + 8, (const char *)iov[0].iov_base + 8, iov[0].iov_len - 8);
	w += iov[0].iov_len;
	for (i = 1; i < cnt; i++) {
		memcpy(w, iov[i].iov_base, iov[i].iov_len);
		w += iov[i].iov_len;
	}
	__atomic_store_n((uint64_t *)(void *)at, head, __ATOMIC_RELEASE);
}

/* Name building without printf (this runs for every trace a JIT compiles: jit.c,
 * jit-stage.c): each returns the end of what it wrote. */
static inline UEVENT_HOT char *put_str(char *w, const char *s, size_t n)
{
	memcpy(w, s, n);
	return w + n;
}

static inline UEVENT_HOT char *put_line(char *w, uint32_t line)
{
	char t[10];
	int k = 0;

	do {
		t[k++] = (char)('0' + line % 10);
		line /= 10;
	} while (line);
	*w++ = ':';
	while (k)
		*w++ = t[--k];
	return w;
}

/* "NAME[ FUNC][ FILE:LINE]" and its NUL at w (code_load_func's name, both paths) */
static inline UEVENT_HOT void put_name(char *w, const char *name, size_t nlen,
				       const char *func, size_t fnlen, const char *file,
				       size_t flen, uint32_t line)
{
	w = put_str(w, name, nlen);
	if (fnlen) {
		*w++ = ' ';
		w = put_str(w, func, fnlen);
	}
	if (file) {
		*w++ = ' ';
		w = put_line(put_str(w, file, flen), line);
	}
	*w = 0;
}

/* jit.c: the session (open, fork, close) and the API. */
int _uevent_jit_check_fork(struct uevent_jit *j);
extern __thread pid_t _uevent_jit_tid __attribute__((visibility("hidden")));

/* The record's tid, without a syscall per record; only the forking thread survives a
 * fork, and fork_child() resets its cache. */
static inline pid_t _uevent_jit_gettid(void)
{
	if (unlikely(!_uevent_jit_tid))
		_uevent_jit_tid = (pid_t)syscall(SYS_gettid);
	return _uevent_jit_tid;
}

/* jit-stage.c: a load's records and its table entry in its thread's stage, under the
 * session's lock or staged without it; a fork child's replay. */
UEVENT_HOT int _uevent_jit_load_locked(struct uevent_jit *j, struct stage *s,
				       const struct code *c, const void *code, uint64_t now);
UEVENT_HOT int _uevent_jit_load_unlocked(struct uevent_jit *j, struct stage *s,
					 const struct code *c, const void *code, uint64_t now,
					 struct map_req *req);
UEVENT_HOT int _uevent_jit_load_staged(struct uevent_jit *j, char *copy, uint64_t addr,
				       uint64_t size, const void *code, uint64_t *index);
UEVENT_HOT int _uevent_jit_func_staged(struct uevent_jit *j, const char *name,
				       const char *func, uint64_t addr, uint64_t size,
				       const void *code, const char *file, uint32_t line);
int _uevent_jit_replay(struct uevent_jit *j);

/* jit-code.c: the loaded code (slabs, the address table, code indexes, info waiting
 * for its load). Lock held. */
void _uevent_jit_code_free(const struct code *c);
UEVENT_HOT uint64_t _uevent_jit_take_index(struct uevent_jit *j);
UEVENT_HOT void *_uevent_jit_slab_alloc(struct uevent_jit *j, struct slab_cur *cur, size_t n);
void _uevent_jit_slab_retire(struct uevent_jit *j, struct slab_cur *cur);
void _uevent_jit_slab_free_all(struct uevent_jit *j);
struct code *_uevent_jit_code_find(struct uevent_jit *j, uint64_t addr);
void _uevent_jit_code_settle(struct uevent_jit *j);
struct stage *_uevent_jit_stage_cached(const struct uevent_jit *j);
void _uevent_jit_mutex_init(pthread_mutex_t *m);
struct stage *_uevent_jit_stage_find(struct uevent_jit *j, pid_t tid);
int _uevent_jit_stage_room(struct stage *s);
void _uevent_jit_stage_put(struct stage *s, const struct code *c);
int _uevent_jit_stage_undo(struct stage *s, uint64_t addr, uint64_t index);
void _uevent_jit_stage_lock_all(struct uevent_jit *j);
void _uevent_jit_stage_unlock_all(struct uevent_jit *j);
void _uevent_jit_stage_free_all(struct uevent_jit *j, int destroy);
UEVENT_HOT uint64_t _uevent_jit_stage_index(struct stage *s);
UEVENT_HOT int _uevent_jit_code_put(struct uevent_jit *j, const struct code *c);
void _uevent_jit_code_del(struct uevent_jit *j, struct code *c);
void _uevent_jit_free_pending(struct pending *p);
UEVENT_HOT struct pending *_uevent_jit_take_pending(struct uevent_jit *j, uint64_t addr);
void _uevent_jit_add_pending(struct uevent_jit *j, struct pending *p);

/* jit-dump.c: the jitdump file (its directory, the records, the shared mapping or the
 * batch) and the DEBUG_INFO records kept with a code. */
int _uevent_jit_dump_reserve(struct uevent_jit *j, uint64_t need);
int _uevent_jit_dump_flush(struct uevent_jit *j);
int _uevent_jit_dump_defer_end(struct uevent_jit *j, uint64_t now);
void _uevent_jit_out_wait(struct uevent_jit *j);

/* A copy of a load's name for its marker, made while the name is still the call's (once
 * the load is in, an unload from another thread may free it): as much of it as a
 * marker carries (_uevent_jit_marker_load shortens a longer one alike). */
static inline const char *_uevent_jit_marker_name(char *buf, const char *name)
{
	size_t n = strnlen(name, UEVENT_MAX_PAYLOAD - 1);

	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

/* A batch's write failed with err: kept, if it is the first since the last flush. */
static inline void _uevent_jit_werr(struct uevent_jit *j, int err)
{
	int none = 0;

	__atomic_compare_exchange_n(&j->werr, &none, err, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
int _uevent_jit_out_write(struct uevent_jit *j, struct stage *s);
void _uevent_jit_win_copy(struct uevent_jit *j, unsigned char *buf, size_t len, size_t cap,
			  uint64_t off);
void _uevent_jit_pool_free(struct uevent_jit *j);
UEVENT_HOT int _uevent_jit_dump_append(struct uevent_jit *j, const struct iovec *iov, int cnt,
				       uint64_t now, int *merr);
void _uevent_jit_dump_undo(struct uevent_jit *j, uint64_t off);
int _uevent_jit_dump_room(struct uevent_jit *j, uint64_t len);
int _uevent_jit_bound_find(const unsigned char *g, uint64_t off, uint64_t len, uint64_t at,
			   uint64_t *whole, uint64_t *next);
int _uevent_jit_make_dir(struct uevent_jit *j, const char *dir);
int _uevent_jit_open_dump(struct uevent_jit *j);
UEVENT_HOT size_t _uevent_jit_debug_size(size_t len, size_t extra);
UEVENT_HOT struct pending *_uevent_jit_debug_record(uint64_t code_addr,
						    const struct uevent_jit_debug_entry *e,
						    uint32_t nr, size_t len, uint64_t now,
						    size_t extra, void *mem);

/* jit-merge.c: the staged loads' merge into the batch, when what is held is due, and
 * its copies and pieces made with the threads that wait for room. */
int _uevent_jit_stage_merge(struct uevent_jit *j, uint64_t t0, int locked);
void _uevent_jit_due_update(struct uevent_jit *j);
void _uevent_jit_due_min(struct uevent_jit *j, uint64_t due);
int _uevent_jit_cp_push(struct uevent_jit *j, int buf, size_t dst, const void *src, size_t len);
void _uevent_jit_cp_run(struct uevent_jit *j);
void _uevent_jit_cp_help(struct uevent_jit *j);

/* Lock held: a merge's queued copies made, before the batch or the lines are read. */
static inline void _uevent_jit_cp_sync(struct uevent_jit *j)
{
	if (unlikely(j->cp_n))
		_uevent_jit_cp_run(j);
}

/* code_load_func's piece in mem (both paths): with rec, the DEBUG_INFO record of its
 * one line entry e (flen1 bytes) into *info and the name after it, where *at becomes
 * NAME_IN_INFO if the name was to own its block; else the name alone (*info NULL).
 * Returns the name: "NAME[ FUNC][ FILE:LINE]", FILE and LINE e's. */
static inline UEVENT_HOT char *func_piece(void *mem, int rec,
					  const struct uevent_jit_debug_entry *e, size_t flen1,
					  const char *name, size_t nlen, const char *func,
					  size_t fnlen, size_t flen, struct pending **info,
					  enum name_at *at)
{
	char *full = mem;

	*info = NULL;
	if (rec) {
		*info = _uevent_jit_debug_record(e->addr, e, 1, flen1, 0,
						 nlen + fnlen + flen + 14, mem);
		full = (char *)(*info)->rec + flen1 + 8;
		if (*at == NAME_OWN)
			*at = NAME_IN_INFO;
	}
	put_name(full, name, nlen, func, fnlen, e->file, flen, e->line);
	return full;
}
void _uevent_jit_info_rebase(struct pending *p, uint64_t new_addr);

/* jit-map.c: the perf map (a line a load, batched or group-committed). */
int _uevent_jit_open_map(struct uevent_jit *j, const char *path);
int _uevent_jit_map_flush(struct uevent_jit *j);
void _uevent_jit_mout_write(struct uevent_jit *j, struct stage *s);
int _uevent_jit_map_scan(struct uevent_jit *j);
int _uevent_jit_map_catch_up(struct uevent_jit *j);
UEVENT_HOT char *_uevent_jit_map_put(char *p, uint64_t addr, uint64_t size, const char *name,
				     size_t nlen);
int _uevent_jit_map_add(struct uevent_jit *j, uint64_t off, const char *line, size_t len,
			uint64_t end);
int _uevent_jit_map_room(struct uevent_jit *j, size_t len);
UEVENT_HOT int _uevent_jit_map_line(struct uevent_jit *j, uint64_t addr, uint64_t size,
				    const char *name, uint64_t now);
int _uevent_jit_map_req_init(struct map_req *req, uint64_t addr, uint64_t size, const char *name);
void _uevent_jit_map_req_fini(struct map_req *req);
void _uevent_jit_map_push(struct uevent_jit *j, struct map_req *req);
int _uevent_jit_map_commit(struct uevent_jit *j, struct map_req *req);

/* jit-marker.c: the in-stream uevents that name JIT code. */
void _uevent_jit_marker_load(uint64_t addr, uint64_t size, uint64_t index, const char *name);
void _uevent_jit_marker_debug(uint64_t code_addr, const struct uevent_jit_debug_entry *e,
			      uint32_t nr);
void _uevent_jit_marker_move(uint64_t index, uint64_t old_addr, uint64_t new_addr,
			     uint64_t size);
void _uevent_jit_marker_unload(uint64_t addr, uint64_t size, uint64_t index);

#endif
