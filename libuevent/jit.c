/* jit.c - JIT hooks: jitdump for perf inject --jit, /tmp/perf-PID.map, JIT uevents. */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs-trust.h"
#include "internal.h"

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
					   minus those freed (j counts what it gives out
					   and adds that when it retires the slab: a load
					   touches only j and its piece) */
	int retired;			/* not the one allocated from any more */
};

#define SLAB_HEAD	((sizeof(struct slab) + 15) & ~(size_t)15)

static struct slab *slab_of(const void *p)
{
	return (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

static void slab_empty(struct slab *s);

static void slab_put(struct slab *s)
{
	if (--s->live == 0 && s->retired)
		slab_empty(s);
}

static void free_pending(struct pending *p);

/* What a code owns. */
static void code_free(const struct code *c)
{
	struct pending *p, *n;
	struct slab *s;

	switch (c->name_in_info) {
	case NAME_IN_SLAB:
		/* blocks of debug_info calls before the load (malloc'd), then ours */
		s = slab_of(c->name);
		for (p = c->info; p && slab_of(p) != s; p = n) {
			n = p->next;
			free(p);
		}
		slab_put(s);
		return;
	case NAME_OWN:
		free(c->name);
		break;
	}
	free_pending(c->info);
}

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
	uint64_t dump_alloc;		/* ... and the file's blocks allocated up to here
					   (FALLOC_FL_KEEP_SIZE); UINT64_MAX: cannot */
	uint64_t dump_t0;		/* when the oldest of them was added */
	char *mapbuf;			/* UEVENT_JIT_BUFFER_PERF_MAP: lines not yet written */
	size_t maplen;
	uint64_t map_t0;		/* when the oldest of them was added */
	uint64_t map_scan;		/* both batched: the dump's records from here on
					   have no perf-map line yet (map_scan()) */
	/* Loads not in codes yet, in order: appended to (one hot cache line), moved into
	 * the table by the first lookup (code_settle), freed with it by unload_all. A
	 * JIT that compiles many pieces and unloads them all at once (LuaJIT's flush)
	 * never pays for the table's cold, random probes. It doubles as it fills; the
	 * table keeps room for all of it, so settling never allocates. */
	struct code *fresh;
	size_t nfresh, freshcap;
	struct code *codes;		/* open addressing, linear probing, addr 0 = empty */
	size_t ncodes, cap;
	struct pending *pending;
	uint64_t index_next, index_end;	/* take_index's block */
	char *slab_next, *slab_end;	/* slab_alloc's room */
	long slab_n;			/* ... and the pieces it gave from it */
	struct slab *slab;		/* ... which is in this one */
	struct slab *spare;		/* empty ones, up to SLAB_SPARE */
	int nspare;
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

static uint64_t next_index = 1;		/* process-wide: perf names files by it */

/*
 * A code index, unique in the process (perf names jitted-PID-INDEX.so by it). A session
 * takes them 256 at a time: one atomic add on the shared counter per 256 loads, not one
 * per load, whose cache line a JIT's compile path (LuaJIT's, for every trace) has
 * always evicted. Lock held.
 */
#define INDEX_BLOCK	256

static UEVENT_HOT uint64_t take_index(struct uevent_jit *j)
{
	if (j->index_next == j->index_end) {
		j->index_next = __atomic_fetch_add(&next_index, INDEX_BLOCK, __ATOMIC_RELAXED);
		j->index_end = j->index_next + INDEX_BLOCK;
	}
	return j->index_next++;
}

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uevent_jit *sessions;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* An empty slab: kept for the next slab_alloc (its pages are in), up to SLAB_SPARE. */
static void slab_empty(struct slab *s)
{
	struct uevent_jit *j = s->j;

	if (j->nspare >= SLAB_SPARE) {
		free(s);
		return;
	}
	s->next = j->spare;
	j->spare = s;
	j->nspare++;
}

static void slab_retire(struct uevent_jit *j)
{
	struct slab *s = j->slab;

	if (!s)
		return;
	j->slab = NULL;
	j->slab_next = j->slab_end = NULL;
	s->retired = 1;
	s->live += j->slab_n;
	if (!s->live)
		slab_empty(s);
}

static __attribute__((cold)) int slab_new(struct uevent_jit *j)
{
	struct slab *s;

	if ((s = j->spare)) {
		j->spare = s->next;
		j->nspare--;
	} else if (!(s = aligned_alloc(SLAB_SIZE, SLAB_SIZE))) {
		return -ENOMEM;
	}
	*s = (struct slab){ .j = j };
	slab_retire(j);
	j->slab = s;
	j->slab_next = (char *)s + SLAB_HEAD;
	j->slab_end = (char *)s + SLAB_SIZE;
	j->slab_n = 0;
	return 0;
}

/* n bytes (16-aligned) for a code's piece, lock held; NULL: take it from malloc (too
 * big for a slab, or out of memory). */
static UEVENT_HOT void *slab_alloc(struct uevent_jit *j, size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > SLAB_SIZE / 8)
		return NULL;
	if (unlikely((size_t)(j->slab_end - j->slab_next) < n) && slab_new(j) < 0)
		return NULL;
	p = j->slab_next;
	j->slab_next += n;
	j->slab_n++;
	return p;
}

/* At close, every code freed: the slabs back to malloc. */
static void slab_free_all(struct uevent_jit *j)
{
	struct slab *s;

	slab_retire(j);
	while ((s = j->spare)) {
		j->spare = s->next;
		free(s);
	}
	j->nspare = 0;
}

static int map_flush(struct uevent_jit *j);
static int map_scan(struct uevent_jit *j);
static int dump_flush(struct uevent_jit *j);

/* Hold every session across fork() so the child never inherits a lock held by a
 * thread that does not exist there; the child then marks each session for reopening. */
static void fork_prepare(void)
{
	struct uevent_jit *j;

	pthread_mutex_lock(&list_lock);
	for (j = sessions; j; j = j->next) {
		pthread_mutex_lock(&j->lock);
		if (!j->forked) {	/* the parent's records, written once, by the parent */
			dump_flush(j);
			map_flush(j);
		}
	}
}

static void fork_parent(void)
{
	struct uevent_jit *j;

	for (j = sessions; j; j = j->next)
		pthread_mutex_unlock(&j->lock);
	pthread_mutex_unlock(&list_lock);
}

static __thread pid_t tid_cache;

static void fork_child(void)
{
	struct uevent_jit *j;

	tid_cache = 0;
	for (j = sessions; j; j = j->next) {
		j->forked = 1;
		j->maplen = 0;
		j->dumplen = 0;
		pthread_mutex_unlock(&j->lock);
	}
	pthread_mutex_unlock(&list_lock);
}

static void map_flush_all(void);

static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(map_flush_all);
}

/* The record's tid, without a syscall per record; only the forking thread survives a
 * fork, and fork_child() resets its cache. */

static pid_t gettid_(void)
{
	if (unlikely(!tid_cache))
		tid_cache = (pid_t)syscall(SYS_gettid);
	return tid_cache;
}

/* ---- address table ------------------------------------------------------------- */

static size_t slot_of(const struct uevent_jit *j, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (j->cap - 1);
}

static void code_settle(struct uevent_jit *j);

static struct code *code_find(struct uevent_jit *j, uint64_t addr)
{
	size_t i;

	code_settle(j);
	if (!j->cap)
		return NULL;
	for (i = slot_of(j, addr); j->codes[i].addr; i = (i + 1) & (j->cap - 1))
		if (j->codes[i].addr == addr)
			return &j->codes[i];
	return NULL;
}

static int code_grow(struct uevent_jit *j)
{
	size_t cap = j->cap ? j->cap * 2 : 64, i, k;
	struct code *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < j->cap; i++) {
		if (!j->codes[i].addr)
			continue;
		k = (size_t)((j->codes[i].addr * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
		while (n[k].addr)
			k = (k + 1) & (cap - 1);
		n[k] = j->codes[i];
	}
	free(j->codes);
	j->codes = n;
	j->cap = cap;
	return 0;
}

static void free_pending(struct pending *p)
{
	struct pending *n;

	for (; p; p = n) {
		n = p->next;
		free(p);
	}
}

/* Inserts or replaces, in the table; there is room (code_put made it). */
static void code_insert(struct uevent_jit *j, const struct code *n)
{
	struct code *c;
	size_t i;

	for (i = slot_of(j, n->addr); (c = &j->codes[i])->addr; i = (i + 1) & (j->cap - 1))
		if (c->addr == n->addr) {
			code_free(c);
			*c = *n;
			return;
		}
	*c = *n;
	j->ncodes++;
}

/* The fresh loads into the table, in order (a later load at an address replaces). */
static void code_settle(struct uevent_jit *j)
{
	size_t i;

	for (i = 0; i < j->nfresh; i++)
		code_insert(j, &j->fresh[i]);
	j->nfresh = 0;
}

/* Inserts or replaces; takes ownership of name and info (also on failure). The table
 * grows here, so that settling never has to allocate. */
static UEVENT_HOT int code_put(struct uevent_jit *j, const struct code *c)
{
	struct code n = *c;

	if ((j->ncodes + j->nfresh + 1) * 4 > j->cap * 3 && code_grow(j) < 0) {
		code_free(c);
		return -ENOMEM;
	}
	if (j->nfresh == j->freshcap) {
		size_t cap = j->freshcap ? j->freshcap * 2 : 256;
		struct code *f = realloc(j->fresh, cap * sizeof(*f));

		if (!f) {		/* the table has room: no list, then */
			code_settle(j);
			code_insert(j, &n);
			return 0;
		}
		j->fresh = f;
		j->freshcap = cap;
	}
	j->fresh[j->nfresh++] = n;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void code_del(struct uevent_jit *j, struct code *c)
{
	size_t i = (size_t)(c - j->codes), k, home;

	code_free(c);
	j->codes[i] = (struct code){ 0, 0, 0, NULL, NULL, 0 };
	j->ncodes--;
	for (k = (i + 1) & (j->cap - 1); j->codes[k].addr; k = (k + 1) & (j->cap - 1)) {
		home = slot_of(j, j->codes[k].addr);
		/* move k into the hole at i unless its home lies cyclically in (i, k] */
		if ((k > i && (home <= i || home > k)) || (k < i && (home <= i && home > k))) {
			j->codes[i] = j->codes[k];
			j->codes[k] = (struct code){ 0, 0, 0, NULL, NULL };
			i = k;
		}
	}
}

/* ---- files ---------------------------------------------------------------------- */

#define DUMP_CHUNK	((uint64_t)64 * 1024)
#define DUMP_STEP_MAX	((uint64_t)16 * 1024 * 1024)

static uint64_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uint64_t)page : 4096;
}

/*
 * The window over the dump never moves: address space for DUMP_VA bytes is reserved
 * at the first growth and the file mapped into it piece by piece (MAP_FIXED), so a
 * load that reserved its place under the lock copies its record there after dropping
 * it, while another grows the file (uevent_jit__code_load: loads from many threads).
 */
#define DUMP_VA		(sizeof(void *) >= 8 ? (uint64_t)64 << 30 : (uint64_t)256 << 20)

static int dump_grow(struct uevent_jit *j, uint64_t cap)
{
	void *w;
	int err;

	if (cap > DUMP_VA)
		return -EFBIG;
	/* fallocate, not ftruncate: a full disk or a file size limit is an error here,
	 * never a SIGBUS later at a store into a hole. */
	err = posix_fallocate(j->dump_fd, (off_t)j->dump_cap, (off_t)(cap - j->dump_cap));
	if (err) {
		if (ftruncate(j->dump_fd, (off_t)j->dump_cap) < 0) {
			/* nothing more to undo: the tail past dump_cap is never mapped */
		}
		return -err;
	}
	if (!j->win) {
		w = mmap(NULL, (size_t)DUMP_VA, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (w == MAP_FAILED)
			goto fail;
		j->win = w;
	}
	w = mmap(j->win + j->dump_cap, (size_t)(cap - j->dump_cap), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, j->dump_fd, (off_t)j->dump_cap);
	if (w == MAP_FAILED)
		goto fail;
#ifdef MADV_POPULATE_WRITE
	/* Take the page faults now, in one call, rather than one per page inside the
	 * caller's compile path; older kernels say EINVAL and fault lazily. */
	(void)madvise((char *)w, (size_t)(cap - j->dump_cap), MADV_POPULATE_WRITE);
#endif
	j->dump_cap = cap;
	return 0;
fail:
	err = errno;
	if (ftruncate(j->dump_fd, (off_t)j->dump_cap) < 0) {
		/* as above */
	}
	return -err;
}

/* Room for need more bytes: the reservation doubles (at most DUMP_STEP_MAX at a time);
 * near a size limit it takes just what this record group needs. */
static int dump_reserve(struct uevent_jit *j, uint64_t need)
{
	uint64_t want = j->dump_off + need, cap, page = page_size();
	int ret;

	if (want <= j->dump_cap)
		return 0;
	cap = j->dump_cap ? j->dump_cap + (j->dump_cap < DUMP_STEP_MAX ? j->dump_cap
								  : DUMP_STEP_MAX)
			  : DUMP_CHUNK;
	if (cap < want)
		cap = want;
	cap = (cap + DUMP_CHUNK - 1) & ~(DUMP_CHUNK - 1);
	ret = dump_grow(j, cap);
	if (ret < 0 && cap > want)
		ret = dump_grow(j, (want + page - 1) & ~(page - 1));
	return ret;
}

#define DUMP_BUF_MAX	((size_t)256 * 1024)
#define DUMP_BUF_CAP	(2 * DUMP_BUF_MAX)	/* room to wait for a boundary */
#define DUMP_ALLOC	((uint64_t)1024 * 1024)
#define DUMP_BUF_AGE_NS	((uint64_t)100 * 1000 * 1000)
/* A full buffer is written up to a multiple of this in the file, the rest kept: whole,
 * aligned blocks are what the page cache takes cheapest (large folios, no partial page
 * to look up and fill). On ext4, 6.18, a 448 KiB file written from offset 40 in blocks
 * of 65,248 bytes costs 0.23 us a KiB; in aligned 64 KiB blocks 0.11, 256 KiB 0.09. */
#define DUMP_ALIGN	((uint64_t)256 * 1024)

/*
 * UEVENT_JIT_BUFFER_JITDUMP: writes the first len bytes held in memory with pwrite at
 * the end of the file and keeps the rest for later. A batch the file does not take whole
 * is cut off again (no torn record is left for perf) and lost with what was kept, and
 * the call that wrote it fails.
 */
static int dump_write(struct uevent_jit *j, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int err, ret;

	if (!len || j->dump_fd < 0)
		return 0;
	ret = map_scan(j);
	/* Blocks allocated ahead, 1 MiB at a time, without growing the file: a write
	 * into them costs a third less (ext4: no block reservation per page). A file
	 * system that cannot is left to allocate as it writes. */
	if (j->dump_alloc != UINT64_MAX && j->dump_file + len > j->dump_alloc) {
		uint64_t step = (j->dump_file + len - j->dump_alloc + DUMP_ALLOC - 1) &
				~(DUMP_ALLOC - 1);

		if (fallocate(j->dump_fd, FALLOC_FL_KEEP_SIZE, (off_t)j->dump_alloc,
			      (off_t)step) == 0)
			j->dump_alloc += step;
		else if (errno == EOPNOTSUPP || errno == ENOSYS)
			j->dump_alloc = UINT64_MAX;
	}
	while (done < len) {
		n = pwrite(j->dump_fd, j->dumpbuf + done, len - done, (off_t)(j->dump_file + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			if (ftruncate(j->dump_fd, (off_t)j->dump_file) < 0) {
				/* nothing more to do: perf stops at the torn record */
			}
			j->dumplen = 0;
			j->dump_off = j->dump_file;
			if (j->map_scan > j->dump_off)	/* records go there next */
				j->map_scan = j->dump_off;
			return -err;
		}
		done += (size_t)n;
	}
	j->dump_file += len;
	j->dumplen -= len;
	if (j->dumplen)
		memmove(j->dumpbuf, j->dumpbuf + len, j->dumplen);
	return ret;
}

/* Everything held: at an age, fork, close and exit. */
static int dump_flush(struct uevent_jit *j)
{
	return dump_write(j, j->dumplen);
}

/*
 * UEVENT_JIT_BUFFER_JITDUMP's append: into memory, written when a 256 KiB boundary in
 * the file is passed (up to it: the part of a record past it waits) or the oldest
 * record is 100 ms old, and at fork, close and exit. On ext4 this costs a
 * quarter of a store into the shared mapping (page faults, page_mkwrite per page).
 */
static UEVENT_HOT int dump_buffer(struct uevent_jit *j, const struct iovec *iov, int cnt,
				  uint64_t len, uint64_t now)
{
	unsigned char *w;
	uint64_t end;
	int i, ret;

	if (j->dumplen + len > j->dumpcap) {
		if ((ret = dump_flush(j)) < 0)
			return ret;
		if (len > j->dumpcap) {	/* a group bigger than the buffer: room for it */
			if (len > UINT32_MAX || !(w = realloc(j->dumpbuf, (size_t)len)))
				return -ENOMEM;
			j->dumpbuf = w;
			j->dumpcap = (size_t)len;
		}
	}
	if (!j->dumplen)
		j->dump_t0 = now;
	w = j->dumpbuf + j->dumplen;
	for (i = 0; i < cnt; i++) {
		memcpy(w, iov[i].iov_base, iov[i].iov_len);
		w += iov[i].iov_len;
	}
	j->dumplen += (size_t)len;
	j->dump_off += len;
	if (now - j->dump_t0 > DUMP_BUF_AGE_NS)
		return dump_flush(j);
	/* Past a 256 KiB boundary in the file: up to the last one, if that is at least
	 * half a buffer (after a flush at an age the file ends anywhere) */
	end = j->dump_off & ~(DUMP_ALIGN - 1);
	if (end > j->dump_file && end - j->dump_file >= DUMP_BUF_MAX / 2)
		return dump_write(j, (size_t)(end - j->dump_file));
	return 0;
}

/*
 * Appends a record group at the end of the dump through the shared mapping: the bytes
 * are in the file (the page cache) when this returns, without a syscall. The group's
 * first 8 bytes (id, total_size) are stored last, so a reader of the file, or the file
 * left by a crash, holds whole records followed by zeros, never a torn record; perf
 * stops reading at a total_size of 0. close() trims the reserved tail. (Buffered:
 * dump_buffer.) now: the records' timestamp, for the buffer's age.
 */
static UEVENT_HOT void dump_fill(unsigned char *at, const struct iovec *iov, int cnt)
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

static UEVENT_HOT int dump_append(struct uevent_jit *j, const struct iovec *iov, int cnt,
				  uint64_t now)
{
	uint64_t len = 0;
	int i, ret;

	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	if (j->dumpbuf)
		return dump_buffer(j, iov, cnt, len, now);
	if ((ret = dump_reserve(j, len)) < 0)
		return ret;
	dump_fill(j->win + j->dump_off, iov, cnt);
	j->dump_off += len;
	return 0;
}

/*
 * Takes back what was appended since off, when the call fails after all (its perf-map
 * line could not be written): the head first, so that a reader stops there, then the
 * rest, so the file still ends in zeros past the last record whatever comes next.
 */
static void dump_undo(struct uevent_jit *j, uint64_t off)
{
	if (off >= j->dump_off)
		return;
	if (j->dumpbuf) {
		if (off < j->dump_file) {	/* written already (the batch was due) */
			if (ftruncate(j->dump_fd, (off_t)off) < 0) {
				/* perf reads it as a load not taken back: the name is right */
			}
			j->dump_file = off;
		}
		j->dumplen = (size_t)(off - j->dump_file);
		j->dump_off = off;
		if (j->map_scan > off)
			j->map_scan = off;
		return;
	}
	__atomic_store_n((uint64_t *)(void *)(j->win + off), 0, __ATOMIC_RELEASE);
	memset(j->win + off + 8, 0, (size_t)(j->dump_off - off - 8));
	j->dump_off = off;
}

/*
 * The directory name under at, made 0700 if missing, opened (into *fdp) only if it is
 * what we would have made: a directory of ours. Where others can write (JITDUMPDIR=/tmp)
 * they can plant the name first: a symlink is -ELOOP (never followed), another user's
 * directory -EPERM, anything else (a file, a FIFO) -ENOTDIR. Never blocks.
 */
static int dir_open_at(int at, const char *name, int *fdp)
{
	struct stat st;
	int fd, err;

	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		/* O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR: tell it apart */
		if (err == ENOTDIR && fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			err = ELOOP;
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
	} else if (st.st_uid != geteuid()) {
		err = EPERM;
	} else {
		*fdp = fd;
		return 0;
	}
	close(fd);
	return -err;
}

/* mkdtemp() under a directory fd: no path to resolve again, so nothing to swap. */
static int mkdtemp_at(int at, char *name)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = name + strlen(name) - 6;
	uint64_t r;
	int tries, i;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = _uevent_now_ns() * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^
			    (uint64_t)tries << 40;
		for (i = 0; i < 6; i++, r /= sizeof(chars) - 1)
			x[i] = chars[r % (sizeof(chars) - 1)];
		if (mkdirat(at, name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/*
 * The session's directory, opened into j->dir_fd (the dump is made under that fd, in
 * this process and in a fork child): the caller's, else a fresh one as perf's jvmti
 * agent makes, $JITDUMPDIR/.debug/jit/libuevent-jit-XXXXXX, so nobody else's files are
 * ever in it. The base ($JITDUMPDIR, $HOME) is the user's and may be a symlink (ours or
 * root's); what we make or reuse under it must be a directory of ours.
 */
static int make_dir(struct uevent_jit *j, const char *dir)
{
	const char *base;
	int base_fd, debug_fd, jit_fd, ret;
	size_t len;
	char *name;

	if (dir) {
		if (snprintf(j->dir, sizeof(j->dir), "%s", dir) >= (int)sizeof(j->dir))
			return -ENAMETOOLONG;
		/* "link/" would follow the link despite O_NOFOLLOW */
		for (len = strlen(j->dir); len > 1 && j->dir[len - 1] == '/'; len--)
			j->dir[len - 1] = 0;
		return dir_open_at(AT_FDCWD, j->dir, &j->dir_fd);
	}
	base = getenv("JITDUMPDIR");
	if (!base || !*base)
		base = getenv("HOME");
	if (!base || !*base)
		base = ".";
	if (snprintf(j->dir, sizeof(j->dir), "%s/.debug/jit/libuevent-jit-XXXXXX", base) >=
	    (int)sizeof(j->dir))
		return -ENAMETOOLONG;
	/* the base may be a link, but only one of ours or root's: not one planted in /tmp */
	base_fd = _uevent_open_dir_trusted(base, NULL, 0);
	if (base_fd < 0)
		return base_fd;
	ret = dir_open_at(base_fd, ".debug", &debug_fd);
	close(base_fd);
	if (ret < 0)
		return ret;
	ret = dir_open_at(debug_fd, "jit", &jit_fd);
	close(debug_fd);
	if (ret < 0)
		return ret;
	name = strrchr(j->dir, '/') + 1;
	if ((ret = mkdtemp_at(jit_fd, name)) == 0 &&
	    (ret = dir_open_at(jit_fd, name, &j->dir_fd)) < 0)
		unlinkat(jit_fd, name, AT_REMOVEDIR);
	close(jit_fd);
	return ret;
}

static int open_dump(struct uevent_jit *j)
{
	struct jd_header h;
	struct iovec iov;
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if ((unsigned)snprintf(j->dump_path, sizeof(j->dump_path), "%s/jit-%d.dump", j->dir,
			       (int)j->pid) >= sizeof(j->dump_path))
		return -ENAMETOOLONG;
	/* O_EXCL: a file of that name belongs to someone else (another pid namespace, a
	 * previous process); never clobber it, never follow a link planted there. */
	j->dump_fd = openat(j->dir_fd, strrchr(j->dump_path, '/') + 1,
			    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (j->dump_fd < 0)
		return -errno;
	j->dump_off = j->dump_cap = j->dump_file = j->dump_alloc = 0;
	j->map_scan = sizeof(struct jd_header);	/* records start after the header */
	j->dumplen = 0;
	j->win = NULL;
	memset(&h, 0, sizeof(h));
	h.magic = JITDUMP_MAGIC;
	h.version = JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = JD_ELF_MACH;
	h.pid = (uint32_t)j->pid;
	h.timestamp = _uevent_now_ns();
	iov = (struct iovec){ &h, sizeof(h) };
	if ((ret = dump_append(j, &iov, 1, h.timestamp)) < 0 || (ret = dump_flush(j)) < 0)
		return ret;
	/* perf record logs executable mappings only; this one is how perf inject --jit
	 * finds the file (by its name jit-PID.dump) and the process it belongs to. */
	j->dump_map_len = (size_t)(page > 0 ? page : 4096);
	j->dump_map = mmap(NULL, j->dump_map_len, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			   j->dump_fd, 0);
	if (j->dump_map == MAP_FAILED) {
		j->dump_map = NULL;
		return -errno;
	}
	return 0;
}

static int open_map(struct uevent_jit *j, const char *path)
{
	struct stat st;

	if (path) {
		j->map_path_given = 1;
		if (snprintf(j->map_path, sizeof(j->map_path), "%s", path) >=
		    (int)sizeof(j->map_path))
			return -ENAMETOOLONG;
	} else if (!j->map_path_given) {
		snprintf(j->map_path, sizeof(j->map_path), "/tmp/perf-%d.map", (int)j->pid);
	}
	/* Append, never truncate: another JIT in this process (CPython's perf trampoline)
	 * may write the same file. Never block in open(): a FIFO planted there without a
	 * reader would hang us (O_NONBLOCK makes that ENXIO); only a regular file will do. */
	j->map_fd = open(j->map_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			 O_CLOEXEC, 0600);
	if (j->map_fd < 0)
		return errno == ENXIO ? -EINVAL : -errno;
	if (fstat(j->map_fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (j->map_path_given)
		return 0;
	/* In /tmp anyone may have made the file first: use it only if it is ours. */
	if (st.st_uid != geteuid() || st.st_nlink != 1)
		return -EPERM;
	return 0;
}

static void close_files(struct uevent_jit *j)
{
	if (j->dump_map)
		munmap(j->dump_map, j->dump_map_len);
	j->dump_map = NULL;
	if (j->win)
		munmap(j->win, (size_t)DUMP_VA);
	j->win = NULL;
	j->dump_off = j->dump_cap = j->dump_file = j->dump_alloc = j->map_scan = 0;
	j->dumplen = 0;
	if (j->dump_fd >= 0)
		close(j->dump_fd);
	if (j->map_fd >= 0)
		close(j->map_fd);
	j->dump_fd = j->map_fd = -1;
}

static int open_files(struct uevent_jit *j, const char *map_path)
{
	int ret;

	j->pid = getpid();
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP) && (ret = open_dump(j)) < 0)
		return ret;
	if (!(j->flags & UEVENT_JIT_NO_PERF_MAP) && (ret = open_map(j, map_path)) < 0)
		return ret;
	return 0;
}

static int replay(struct uevent_jit *j);

/* In a fork child: the parent's files stay the parent's; start ours, holding what the
 * child inherited. */
static int check_fork(struct uevent_jit *j)
{
	int ret;

	if (likely(!j->forked))
		return 0;
	j->forked = 0;
	close_files(j);
	ret = open_files(j, NULL);
	if (ret == 0)
		ret = replay(j);
	if (ret < 0)
		close_files(j);
	return ret;
}

#define MAP_BUF_MAX	((size_t)64 * 1024)

static UEVENT_HOT char *fmt_hex(char *p, uint64_t v)
{
	char t[16];
	int n = 0;

	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}
#define MAP_BUF_AGE_NS	((uint64_t)100 * 1000 * 1000)

/* Writes the buffered perf-map lines in one write (O_APPEND keeps them whole). */
static int map_flush(struct uevent_jit *j)
{
	size_t len = j->maplen;
	ssize_t n;

	if (!len || j->map_fd < 0)
		return 0;
	j->maplen = 0;
	do
		n = write(j->map_fd, j->mapbuf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* cut a part of the batch off again: no line is left without its end */
	return (size_t)n == len ? 0 : -_uevent_undo_short_append(j->map_fd, (size_t)n);
}

static char *map_put(char *p, uint64_t addr, uint64_t size, const char *name, size_t nlen);

/*
 * With both batched (UEVENT_JIT_BUFFER_JITDUMP and _PERF_MAP), a load writes no perf-map
 * line: the lines are made here from the CODE_LOAD records in the dump's batch when
 * that is written (every 256 KiB, at 100 ms, fork, close and exit), in one pass with
 * the caches warm for it, and written at once. A load's own line, made while the JIT's
 * compile has evicted the map's buffer and this code, cost it 0.1 us (a C loop that
 * reads 4 MiB between loads).
 */
static int map_scan(struct uevent_jit *j)
{
	const unsigned char *p, *end;
	uint32_t id, size;
	uint64_t addr, csize;
	size_t nlen;
	int ret = 0;

	if (!j->mapbuf || !j->dumpbuf || j->map_fd < 0 || j->map_scan < j->dump_file)
		return 0;
	p = j->dumpbuf + (j->map_scan - j->dump_file);
	end = j->dumpbuf + j->dumplen;
	for (; p + 16 <= end; p += size) {
		memcpy(&id, p, 4);
		memcpy(&size, p + 4, 4);
		if (size < 16 || size > (size_t)(end - p))
			break;
		if (id != JIT_CODE_LOAD || size < sizeof(struct jd_load) + 1)
			continue;
		memcpy(&addr, p + offsetof(struct jd_load, code_addr), 8);
		memcpy(&csize, p + offsetof(struct jd_load, code_size), 8);
		nlen = strnlen((const char *)p + sizeof(struct jd_load), size - sizeof(struct jd_load));
		if (j->maplen + nlen + 64 > MAP_BUF_MAX && (ret = map_flush(j)) < 0)
			break;
		if (nlen + 64 > MAP_BUF_MAX)
			continue;	/* a name of 64 KiB: no line */
		j->maplen = (size_t)(map_put(j->mapbuf + j->maplen, addr, csize,
					     (const char *)p + sizeof(struct jd_load), nlen) -
				     j->mapbuf);
	}
	j->map_scan = j->dump_off;
	if (ret == 0)
		ret = map_flush(j);
	return ret;
}

/* At exit: the records and lines still buffered (a session never closed, or the process
 * ends first). */
static void map_flush_all(void)
{
	struct uevent_jit *j;

	if (pthread_mutex_trylock(&list_lock))
		return;
	for (j = sessions; j; j = j->next)
		if (!pthread_mutex_trylock(&j->lock)) {
			if (!j->forked) {
				dump_flush(j);
				map_flush(j);
			}
			pthread_mutex_unlock(&j->lock);
		}
	pthread_mutex_unlock(&list_lock);
}

/* "ADDR SIZE NAME\n" at p, formatted by hand (a line for every trace a JIT compiles);
 * returns its end. Room: nlen + 64. */
static UEVENT_HOT char *map_put(char *p, uint64_t addr, uint64_t size, const char *name,
				size_t nlen)
{
	char *q;

	p = fmt_hex(p, addr);
	*p++ = ' ';
	p = fmt_hex(p, size);
	*p++ = ' ';
	/* one line per symbol: a newline inside the name would start a bogus one */
	memcpy(p, name, nlen);
	if (unlikely(memchr(p, '\n', nlen) || memchr(p, '\r', nlen)))
		for (q = p; q < p + nlen; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
	p += nlen;
	*p++ = '\n';
	return p;
}

static UEVENT_HOT int map_line(struct uevent_jit *j, uint64_t addr, uint64_t size,
			       const char *name, uint64_t now)
{
	char small[512], *buf = small, *p;
	size_t cap = sizeof(small), len = strlen(name) + 64;
	ssize_t n;
	int ret = 0;

	if (j->map_fd < 0)
		return 0;
	if (j->mapbuf && len < MAP_BUF_MAX / 2) {
		/* UEVENT_JIT_BUFFER_PERF_MAP: append to the buffer, write when it is full
		 * or its oldest line is 100 ms old (and at fork, close and exit) */
		if (j->maplen + len > MAP_BUF_MAX && (ret = map_flush(j)) < 0)
			return ret;
		p = map_put(j->mapbuf + j->maplen, addr, size, name, len - 64);
		n = p - (j->mapbuf + j->maplen);
		if (!j->maplen)
			j->map_t0 = now;
		j->maplen += (size_t)n;
		if (now - j->map_t0 > MAP_BUF_AGE_NS)
			ret = map_flush(j);
		return ret;
	}
	if ((ret = map_flush(j)) < 0)
		return ret;
	if (len > cap) {
		if (!(buf = malloc(len)))
			return -ENOMEM;
		cap = len;
	}
	n = snprintf(buf, cap, "%" PRIx64 " %" PRIx64 " %s\n", addr, size, name);
	/* one line per symbol: a newline inside the name would start a bogus entry */
	for (p = buf; p < buf + n - 1; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* One write per line: O_APPEND keeps lines whole between writers. */
	do
		n = write(j->map_fd, buf, (size_t)n);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(buf))	/* a torn line would merge with the next */
		ret = -_uevent_undo_short_append(j->map_fd, (size_t)n);
	if (buf != small)
		free(buf);
	return ret;
}

/* ---- uevent markers ----------------------------------------------------------- */

static size_t marker_cap(void)
{
	size_t m = uevent_max_payload();

	return m && m < UEVENT_MAX_PAYLOAD ? m : UEVENT_MAX_PAYLOAD;
}

static void marker_load(uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	char tname[UEVENT_MAX_PAYLOAD];
	struct uevent_jit_code_load in = { addr, size, index, name, 0 };
	size_t cap = marker_cap();
	ssize_t n;

	n = uevent_jit_code_load_encode(buf, cap, &in);
	if (n == -E2BIG && cap > 40) {
		/* The name is the only variable part: shorten it to fit. */
		snprintf(tname, cap - 40, "%s", name);
		in.name = tname;
		n = uevent_jit_code_load_encode(buf, cap, &in);
	}
	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_LOAD, buf, (size_t)n);
}

static void marker_debug(uint64_t code_addr, const struct uevent_jit_debug_entry *e,
			 uint32_t nr)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	size_t cap = marker_cap();
	uint32_t i = 0, k;
	ssize_t n;

	/* As many entries per payload as fit; every payload names its code_addr. */
	while (i < nr) {
		for (k = nr - i; k > 0; k = k / 2) {
			n = uevent_jit_debug_info_encode(buf, cap, code_addr, e + i, k);
			if (n > 0)
				break;
		}
		if (k == 0)
			return;		/* one entry alone is too big: give up quietly */
		uevent_emit(UEVENT_TYPE_JIT_DEBUG_INFO, buf, (size_t)n);
		i += k;
	}
}

/* ---- the API ------------------------------------------------------------------ */

UEVENT_EXPORT struct uevent_jit *uevent_jit__open(const struct uevent_jit_opts *opts)
{
	const char *dir, *map_path;
	struct uevent_jit_opts o;
	unsigned int flags;
	struct uevent_jit *j;
	int ret;

	ret = _uevent_opts_copy(&o, sizeof(o), opts, offsetof(struct uevent_jit_opts, dir));
	if (ret < 0) {
		_uevent_reason(ret == -E2BIG ? "jit options: a field this library does not know "
			       "is set (a newer caller)" : "jit options: sz too small");
		errno = -ret;
		return NULL;
	}
	dir = o.dir;
	map_path = o.perf_map_path;
	flags = o.flags;
	if (flags & ~(unsigned)(UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_PERF_MAP |
				UEVENT_JIT_NO_UEVENT | UEVENT_JIT_BUFFER_PERF_MAP |
				UEVENT_JIT_BUFFER_JITDUMP)) {
		_uevent_reason("jit: unknown flags 0x%x", flags);
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&atfork_once, register_atfork);
	j = calloc(1, sizeof(*j));
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	{
		/* Loads from many threads hold it briefly: spin a little before sleeping. */
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
		pthread_mutex_init(&j->lock, &a);
		pthread_mutexattr_destroy(&a);
	}
	j->flags = flags;
	j->dump_fd = j->map_fd = j->dir_fd = -1;
	if ((flags & UEVENT_JIT_BUFFER_PERF_MAP) && !(flags & UEVENT_JIT_NO_PERF_MAP) &&
	    !(j->mapbuf = malloc(MAP_BUF_MAX))) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((flags & UEVENT_JIT_BUFFER_JITDUMP) && !(flags & UEVENT_JIT_NO_JITDUMP)) {
		if (!(j->dumpbuf = malloc(DUMP_BUF_CAP))) {
			ret = -ENOMEM;
			goto fail;
		}
		j->dumpcap = DUMP_BUF_CAP;
	}
	if (!(flags & UEVENT_JIT_NO_JITDUMP) && (ret = make_dir(j, dir)) < 0) {
		/* j->dir: the path tried, dir or $JITDUMPDIR (else $HOME)/.debug/jit/... */
		_uevent_reason("jit: the jitdump directory %s: %s (a symlink, another user's or "
			       "not a directory is refused): set JITDUMPDIR (the hooks' dir "
			       "option) to a directory of yours, or leave the jitdump out",
			       j->dir[0] ? j->dir : dir ? dir : "under $JITDUMPDIR/.debug/jit",
			       strerror(-ret));
		goto fail;
	}
	if ((ret = open_files(j, map_path)) < 0) {
		_uevent_reason("jit: the jitdump (in %s) or perf map file (%s): %s: give the "
			       "perf map another path (the hooks' map option) or leave it out",
			       j->dir[0] ? j->dir : "none", map_path ? map_path : "/tmp/perf-PID.map",
			       strerror(-ret));
		goto fail;
	}
	pthread_mutex_lock(&list_lock);
	j->next = sessions;
	sessions = j;
	pthread_mutex_unlock(&list_lock);
	return j;
fail:
	/* Leave nothing behind: the dump we made, the directory we made for it. */
	if (j->dump_fd >= 0)
		unlinkat(j->dir_fd, strrchr(j->dump_path, '/') + 1, 0);
	close_files(j);
	if (j->dir_fd >= 0) {
		close(j->dir_fd);
		if (!dir)
			rmdir(j->dir);
	}
	pthread_mutex_destroy(&j->lock);
	free(j->mapbuf);
	free(j->dumpbuf);
	free(j);
	errno = -ret;
	return NULL;
}

static UEVENT_HOT struct pending *take_pending(struct uevent_jit *j, uint64_t addr)
{
	struct pending **pp, *p, *out = NULL, **tail = &out;

	for (pp = &j->pending; (p = *pp);) {
		if (p->addr == addr) {
			*pp = p->next;
			p->next = NULL;
			*tail = p;
			tail = &p->next;
		} else {
			pp = &p->next;
		}
	}
	return out;
}

/*
 * The load, lock held: info's records, then CODE_LOAD, in one append; the perf-map line;
 * the table entry (which keeps name and info for a fork child's replay). Takes
 * ownership of name and info. now stamps the record (one clock read per load: the LuaJIT
 * hook makes one for every trace compiled).
 */
static UEVENT_HOT int write_load(struct uevent_jit *j, const char *name, uint64_t addr,
				 uint64_t size, const void *code, uint64_t index,
				 const struct pending *info, uint64_t now)
{
	struct iovec iov[16];
	struct jd_load rec;
	const struct pending *p;
	size_t nlen = strlen(name);
	uint64_t off = j->dump_off;
	int cnt = 0, ret = 0;

	if (j->dump_fd >= 0) {
		/* Debug and unwinding info first, in the same append: perf attaches them
		 * to the CODE_LOAD that follows. */
		for (p = info; p && cnt < 12; p = p->next)
			iov[cnt++] = (struct iovec){ (void *)p->rec, p->len };
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_LOAD;
		rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + size);
		rec.p.total_size += pad8(rec.p.total_size);
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)gettid_();
		rec.vma = addr;
		rec.code_addr = addr;
		rec.code_size = size;
		rec.code_index = index;
		rec.p.timestamp = now;
		iov[cnt++] = (struct iovec){ &rec, sizeof(rec) };
		iov[cnt++] = (struct iovec){ (void *)name, nlen + 1 };
		iov[cnt++] = (struct iovec){ (void *)code, (size_t)size };
		iov[cnt++] = (struct iovec){ (void *)zeros, pad8(sizeof(rec) + nlen + 1 + size) };
		ret = dump_append(j, iov, cnt, now);
	}
	/* both batched: map_scan() makes the line from the record */
	if (ret == 0 && !(j->dumpbuf && j->mapbuf && j->dump_fd >= 0) &&
	    (ret = map_line(j, addr, size, name, now)) < 0 && j->dump_fd >= 0)
		dump_undo(j, off);	/* a failed call leaves no trace */
	return ret;
}

/* Takes ownership of what c owns (also on failure). */
static UEVENT_HOT int load_locked(struct uevent_jit *j, const struct code *c,
				  const void *code, uint64_t now)
{
	int ret = write_load(j, c->name, c->addr, c->size, code, c->index, c->info, now);

	if (ret < 0) {
		code_free(c);
		return ret;
	}
	return code_put(j, c);
}

/*
 * In a fork child, once its own files are open: every code still loaded, as announced
 * (name, debug and unwinding info, code index) at its current address, so perf can name
 * code the child inherited. The bytes come from the code itself through
 * process_vm_readv, so code unmapped without an unload is skipped rather than a crash.
 */
static int replay(struct uevent_jit *j)
{
	struct iovec local, remote;
	struct pending *p;
	struct code *c;
	uint64_t now;
	size_t i;
	ssize_t n;
	void *buf;
	int ret;

	code_settle(j);
	for (i = 0; i < j->cap; i++) {
		c = &j->codes[i];
		if (!c->addr)
			continue;
		if (!(buf = malloc((size_t)c->size)))
			return -ENOMEM;
		local = (struct iovec){ buf, (size_t)c->size };
		remote = (struct iovec){ (void *)(uintptr_t)c->addr, (size_t)c->size };
		n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
			/* no way to check (seccomp): trust the contract, code is live */
			memcpy(buf, (const void *)(uintptr_t)c->addr, (size_t)c->size);
			n = (ssize_t)c->size;
		}
		if (n != (ssize_t)c->size) {
			free(buf);
			continue;
		}
		now = _uevent_now_ns();
		for (p = c->info; p; p = p->next)
			memcpy(p->rec + offsetof(struct jd_prefix, timestamp), &now, 8);
		ret = write_load(j, c->name, c->addr, c->size, buf, c->index, c->info, now);
		free(buf);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int check_load_args(struct uevent_jit *j, const char *name, uint64_t addr,
			   uint64_t size)
{
	if (!j || !name)
		return -EFAULT;
	if (!addr || !size || size > UINT32_MAX / 2 || strlen(name) > UINT32_MAX / 4)
		return -EINVAL;
	return 0;
}

/*
 * A load with nothing batched and no debug info waiting for it, entered with the lock
 * held, which it drops: its place in the dump, its timestamp (so that they rise in file
 * order), its code index and its table entry are taken under the lock; the copy into
 * the mapped dump (the window never moves: dump_grow) and the perf-map line (one
 * O_APPEND write) are made after, so that loads from many threads overlap there. A
 * perf-map line that cannot be written takes the load back from the table, and its
 * record from the dump if none came after it (else it stays: perf names it right).
 */
static UEVENT_HOT int load_unlocked(struct uevent_jit *j, char *name, uint64_t addr,
				    uint64_t size, const void *code, uint64_t index)
{
	struct iovec iov[4];
	struct jd_load rec;
	struct code *c;
	size_t nlen = strlen(name);
	uint64_t now = _uevent_now_ns(), off = 0, len = 0;
	int ret = 0, cnt = 0, i;

	if (j->dump_fd >= 0) {
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_LOAD;
		rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + size);
		rec.p.total_size += pad8(rec.p.total_size);
		rec.p.timestamp = now;
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)gettid_();
		rec.vma = rec.code_addr = addr;
		rec.code_size = size;
		rec.code_index = index;
		iov[cnt++] = (struct iovec){ &rec, sizeof(rec) };
		iov[cnt++] = (struct iovec){ name, nlen + 1 };
		iov[cnt++] = (struct iovec){ (void *)code, (size_t)size };
		iov[cnt++] = (struct iovec){ (void *)zeros, pad8(sizeof(rec) + nlen + 1 + size) };
		for (i = 0; i < cnt; i++)
			len += iov[i].iov_len;
		if ((ret = dump_reserve(j, len)) < 0) {
			free(name);
			pthread_mutex_unlock(&j->lock);
			return ret;
		}
		off = j->dump_off;
		j->dump_off += len;
	}
	/* the table owns name now; it stays valid here: only this load's unload (which
	 * the caller makes after this returns) or close frees it */
	if ((ret = code_put(j, &(struct code){ addr, size, index, name, NULL, 0 })) < 0) {
		j->dump_off = off;	/* still ours alone: the lock is held */
		pthread_mutex_unlock(&j->lock);
		return ret;
	}
	pthread_mutex_unlock(&j->lock);
	if (len)
		dump_fill(j->win + off, iov, cnt);
	if ((ret = map_line(j, addr, size, name, now)) >= 0)
		return 0;
	pthread_mutex_lock(&j->lock);
	if ((c = code_find(j, addr)) && c->index == index)
		code_del(j, c);
	if (len && j->dump_off == off + len)
		dump_undo(j, off);	/* a failed call leaves no trace */
	pthread_mutex_unlock(&j->lock);
	return ret;
}

UEVENT_EXPORT int uevent_jit__code_load(struct uevent_jit *j, const char *name,
					uint64_t addr, uint64_t size, const void *code)
{
	struct pending *info;
	uint64_t index;
	char *copy;
	int ret;

	if ((ret = check_load_args(j, name, addr, size)) < 0)
		return _uevent_err(-ret);
	if (!code)
		code = (const void *)(uintptr_t)addr;
	if (!(copy = strdup(name)))
		return _uevent_err(ENOMEM);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0) {
		free(copy);
		goto out;
	}
	index = take_index(j);
	info = take_pending(j, addr);
	if (!info && !j->dumpbuf && !j->mapbuf) {
		ret = load_unlocked(j, copy, addr, size, code, index);
		goto marker;
	}
	ret = load_locked(j, &(struct code){ addr, size, index, copy, info, 0 }, code,
			  _uevent_now_ns());
out:
	pthread_mutex_unlock(&j->lock);
marker:
	/* after the lock: name is the caller's */
	if (ret == 0 && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_load(addr, size, index, name);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

/* The size of debug_record's block. */
static UEVENT_HOT size_t debug_size(size_t len, size_t extra)
{
	return sizeof(struct pending) + len + 8 + extra;
}

/* A DEBUG_INFO record for nr entries at code_addr, unlinked, with extra bytes after its
 * padding for the caller, in mem (debug_size() bytes) or else a malloc; NULL on ENOMEM. */
static UEVENT_HOT struct pending *debug_record(uint64_t code_addr,
					       const struct uevent_jit_debug_entry *e,
					       uint32_t nr, size_t len, uint64_t now,
					       size_t extra, void *mem)
{
	struct pending *p = mem ? mem : malloc(debug_size(len, extra));
	struct jd_debug *rec;
	unsigned char *w;
	size_t flen;
	uint32_t i;

	if (!p)
		return NULL;
	p->next = NULL;
	p->addr = code_addr;
	memset(p->rec, 0, len + 8);
	rec = (struct jd_debug *)(void *)p->rec;
	rec->p.id = JIT_CODE_DEBUG_INFO;
	rec->p.total_size = (uint32_t)(len + pad8(len));
	rec->p.timestamp = now;
	rec->code_addr = code_addr;
	rec->nr_entry = nr;
	w = p->rec + sizeof(*rec);
	for (i = 0; i < nr; i++) {
		memcpy(w, &e[i].addr, 8);
		memcpy(w + 8, &e[i].line, 4);
		memcpy(w + 12, &e[i].discrim, 4);
		flen = strlen(e[i].file) + 1;
		memcpy(w + 16, e[i].file, flen);
		w += 16 + flen;
	}
	p->len = rec->p.total_size;
	return p;
}

/* Name building without printf (this runs for every trace a JIT compiles): each
 * returns the end of what it wrote. */
static UEVENT_HOT char *put_str(char *w, const char *s, size_t n)
{
	memcpy(w, s, n);
	return w + n;
}

static UEVENT_HOT char *put_line(char *w, uint32_t line)
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

/*
 * The lines a load writes (its records in the dump's batch, its piece of slab, its entry
 * in the fresh list), asked for now, to write: the JIT's compile since the last load has
 * evicted them, and the misses then overlap with formatting the name instead of each
 * stalling a store. Read without the lock: prefetching a stale or wild address is
 * harmless (it never faults).
 */
static UEVENT_HOT void prefetch_load(struct uevent_jit *j)
{
	const char *b = (const char *)__atomic_load_n(&j->dumpbuf, __ATOMIC_RELAXED);
	const char *s = __atomic_load_n(&j->slab_next, __ATOMIC_RELAXED);
	const struct code *f = __atomic_load_n(&j->fresh, __ATOMIC_RELAXED);
	int k;

	if (b) {
		b += __atomic_load_n(&j->dumplen, __ATOMIC_RELAXED);
		for (k = 0; k < 512; k += 64)
			__builtin_prefetch(b + k, 1, 3);
	}
	if (s)
		for (k = 0; k < 192; k += 64)
			__builtin_prefetch(s + k, 1, 3);
	if (f)
		__builtin_prefetch(f + __atomic_load_n(&j->nfresh, __ATOMIC_RELAXED), 1, 3);
}

UEVENT_EXPORT UEVENT_HOT int uevent_jit__code_load_func(struct uevent_jit *j, const char *name,
					     const char *func, uint64_t addr, uint64_t size,
					     const void *code, const char *file, uint32_t line)
{
	struct uevent_jit_debug_entry e = { addr, line, 0, file, 0 };
	struct pending *info = NULL, **pp;
	enum name_at at = NAME_OWN;
	uint64_t index, now;
	size_t nlen, flen, fnlen, flen1, want;
	struct pending *mine;
	char *full, *w;
	void *mem;
	int ret;

	if (!file && !(func && *func))
		return uevent_jit__code_load(j, name, addr, size, code);
	if ((ret = check_load_args(j, name, addr, size)) < 0)
		return _uevent_err(-ret);
	prefetch_load(j);
	if (!code)
		code = (const void *)(uintptr_t)addr;
	nlen = strlen(name);
	flen = file ? strlen(file) : 0;
	fnlen = func ? strlen(func) : 0;
	if (flen > UINT32_MAX / 4 || fnlen > UINT32_MAX / 4)
		return _uevent_err(EINVAL);
	/* "NAME FUNC FILE:LINE", built here so the caller (an interpreted hook) need not
	 * build a string for every trace; with a line record, in the same block as the
	 * record: one slab piece a load (a JIT's compile path makes it for every trace) */
	flen1 = sizeof(struct jd_debug) + 16 + flen + 1;
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		goto out;
	want = nlen + fnlen + flen + 14;
	if (file && !(j->flags & UEVENT_JIT_NO_JITDUMP))
		want = debug_size(flen1, want);
	if ((mem = slab_alloc(j, want)))
		at = NAME_IN_SLAB;
	else if (!(mem = malloc(want))) {
		ret = -ENOMEM;
		goto out;
	}
	if (file && !(j->flags & UEVENT_JIT_NO_JITDUMP)) {
		info = debug_record(addr, &e, 1, flen1, 0, nlen + fnlen + flen + 14, mem);
		full = (char *)info->rec + flen1 + 8;
		if (at == NAME_OWN)
			at = NAME_IN_INFO;
	} else {
		full = mem;
	}
	w = put_str(full, name, nlen);
	if (fnlen) {
		*w++ = ' ';
		w = put_str(w, func, fnlen);
	}
	if (file) {
		*w++ = ' ';
		w = put_line(put_str(w, file, flen), line);
	}
	*w = 0;
	index = take_index(j);
	/* One clock read for both records, under the lock: timestamps rise in file order. */
	now = _uevent_now_ns();
	if ((mine = info))
		memcpy(info->rec + offsetof(struct jd_prefix, timestamp), &now, 8);
	/* Ours goes last: of several DEBUG_INFO records perf keeps the one before the load. */
	{
		struct pending *earlier = take_pending(j, addr);

		if (earlier) {
			for (pp = &earlier; *pp; pp = &(*pp)->next)
				;
			*pp = info;
			info = earlier;
		}
	}
	if (file && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_debug(addr, &e, 1);
	ret = load_locked(j, &(struct code){ addr, size, index, full, info, at }, code, now);
	if (ret == 0 && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_load(addr, size, index, full);	/* the table's now */
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_load_line(struct uevent_jit *j, const char *name,
					     uint64_t addr, uint64_t size, const void *code,
					     const char *file, uint32_t line)
{
	return uevent_jit__code_load_func(j, name, NULL, addr, size, code, file, line);
}

/* A kept record follows its code to new_addr: DEBUG_INFO addresses shift with it. */
static void info_rebase(struct pending *p, uint64_t new_addr)
{
	struct jd_debug *rec = (struct jd_debug *)(void *)p->rec;
	uint64_t delta = new_addr - p->addr, a, n;
	size_t off = sizeof(*rec);

	p->addr = new_addr;
	if (rec->p.id != JIT_CODE_DEBUG_INFO)
		return;
	rec->code_addr += delta;
	for (n = 0; n < rec->nr_entry && off + 16 < p->len; n++) {
		memcpy(&a, p->rec + off, 8);
		a += delta;
		memcpy(p->rec + off, &a, 8);
		off += 16 + strlen((const char *)p->rec + off + 16) + 1;
	}
}

UEVENT_EXPORT int uevent_jit__code_move(struct uevent_jit *j, uint64_t old_addr,
					uint64_t new_addr, uint64_t size)
{
	struct code *c, moved;
	struct pending *p;
	struct jd_move rec;
	struct iovec iov;
	uint64_t index, now;
	int ret = 0;

	if (!j)
		return _uevent_err(EFAULT);
	if (!new_addr)
		return _uevent_err(EINVAL);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		goto out;
	if (!(c = code_find(j, old_addr))) {
		ret = -ENOENT;
		goto out;
	}
	if (!size)
		size = c->size;
	index = c->index;
	now = _uevent_now_ns();
	if (j->dump_fd >= 0) {
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_MOVE;
		rec.p.total_size = sizeof(rec);
		rec.p.timestamp = now;
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)gettid_();
		rec.vma = new_addr;
		rec.old_code_addr = old_addr;
		rec.new_code_addr = new_addr;
		rec.code_size = size;
		rec.code_index = index;
		iov = (struct iovec){ &rec, sizeof(rec) };
		if ((ret = dump_append(j, &iov, 1, now)) < 0)
			goto out;
	}
	if ((ret = map_line(j, new_addr, size, c->name, now)) < 0) {
		if (j->dump_fd >= 0)
			dump_undo(j, j->dump_off - sizeof(rec));
		goto out;
	}
	moved = (struct code){ new_addr, size, index, c->name, c->info, c->name_in_info };
	c->name = NULL;
	c->info = NULL;
	c->name_in_info = 0;
	code_del(j, c);
	for (p = moved.info; p; p = p->next)	/* a replay describes the new place */
		info_rebase(p, new_addr);
	if ((ret = code_put(j, &moved)) < 0)
		goto out;
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED()) {
		unsigned char buf[64];
		struct uevent_jit_code_move in = { index, old_addr, new_addr, size };
		ssize_t n = uevent_jit_code_move_encode(buf, sizeof(buf), &in);

		if (n > 0)
			uevent_emit(UEVENT_TYPE_JIT_CODE_MOVE, buf, (size_t)n);
	}
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_unload(struct uevent_jit *j, uint64_t addr, uint64_t size)
{
	struct code *c;
	uint64_t index;
	int ret = 0;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		goto out;
	if (!(c = code_find(j, addr))) {
		ret = -ENOENT;
		goto out;
	}
	if (!size)
		size = c->size;
	index = c->index;
	code_del(j, c);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED()) {
		unsigned char buf[64];
		struct uevent_jit_code_unload in = { addr, size, index };
		ssize_t n = uevent_jit_code_unload_encode(buf, sizeof(buf), &in);

		if (n > 0)
			uevent_emit(UEVENT_TYPE_JIT_CODE_UNLOAD, buf, (size_t)n);
	}
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

static void marker_unload(uint64_t addr, uint64_t size, uint64_t index)
{
	unsigned char buf[64];
	struct uevent_jit_code_unload in = { addr, size, index };
	ssize_t n = uevent_jit_code_unload_encode(buf, sizeof(buf), &in);

	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_UNLOAD, buf, (size_t)n);
}

UEVENT_EXPORT int uevent_jit__code_unload_all(struct uevent_jit *j)
{
	int ret, markers;
	size_t i;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		goto out;
	markers = !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED();
	/* one marker per address: through the table; else the fresh loads need not go
	 * there first */
	if (markers)
		code_settle(j);
	for (i = 0; i < j->nfresh; i++)
		code_free(&j->fresh[i]);
	j->nfresh = 0;
	for (i = 0; i < j->cap; i++) {
		struct code *c = &j->codes[i];

		if (!c->addr)
			continue;
		if (markers)
			marker_unload(c->addr, c->size, c->index);
		code_free(c);
		*c = (struct code){ 0, 0, 0, NULL, NULL, 0 };
	}
	j->ncodes = 0;
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

static void add_pending(struct uevent_jit *j, struct pending *p)
{
	struct pending **pp = &j->pending;

	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
}

UEVENT_EXPORT int uevent_jit__debug_info(struct uevent_jit *j, uint64_t code_addr,
					 const struct uevent_jit_debug_entry *e, uint32_t nr)
{
	struct pending *p = NULL;
	size_t len = sizeof(struct jd_debug);
	uint32_t i;
	int ret = 0;

	if (!j || (nr && !e))
		return _uevent_err(EFAULT);
	for (i = 0; i < nr; i++) {
		if (!e[i].file)
			return _uevent_err(EFAULT);
		len += 16 + strlen(e[i].file) + 1;
		if (len > UINT32_MAX / 2)
			return _uevent_err(E2BIG);
	}
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP) && !(p = debug_record(code_addr, e, nr, len,
								       _uevent_now_ns(), 0, NULL)))
		return _uevent_err(ENOMEM);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0) {
		free(p);
		goto out;
	}
	if (p)
		add_pending(j, p);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_debug(code_addr, e, nr);
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__unwinding_info(struct uevent_jit *j, uint64_t code_addr,
					     const void *data, uint64_t size,
					     uint64_t eh_frame_hdr_size, uint64_t mapped_size)
{
	struct pending *p;
	struct jd_unwind *rec;
	size_t len;
	int ret;

	if (!j || (size && !data))
		return _uevent_err(EFAULT);
	if (size > UINT32_MAX / 2 || eh_frame_hdr_size > size || mapped_size < size)
		return _uevent_err(EINVAL);
	if (j->flags & UEVENT_JIT_NO_JITDUMP)
		return 0;
	len = sizeof(*rec) + (size_t)size;
	p = malloc(sizeof(*p) + len + 8);
	if (!p)
		return _uevent_err(ENOMEM);
	p->next = NULL;
	p->addr = code_addr;
	memset(p->rec, 0, len + 8);
	rec = (struct jd_unwind *)(void *)p->rec;
	rec->p.id = JIT_CODE_UNWINDING_INFO;
	rec->p.total_size = (uint32_t)(len + pad8(len));
	rec->p.timestamp = _uevent_now_ns();
	rec->unwinding_size = size;
	rec->eh_frame_hdr_size = eh_frame_hdr_size;
	rec->mapped_size = mapped_size;
	if (size)
		memcpy(p->rec + sizeof(*rec), data, (size_t)size);
	p->len = rec->p.total_size;
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		free(p);
	else
		add_pending(j, p);
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT const char *uevent_jit__dump_path(const struct uevent_jit *j)
{
	if (!j || j->dump_fd < 0) {
		errno = j ? ENOENT : EFAULT;
		return NULL;
	}
	return j->dump_path;
}

UEVENT_EXPORT const char *uevent_jit__perf_map_path(const struct uevent_jit *j)
{
	if (!j || j->map_fd < 0) {
		errno = j ? ENOENT : EFAULT;
		return NULL;
	}
	return j->map_path;
}

UEVENT_EXPORT int uevent_jit__flush(struct uevent_jit *j)
{
	int ret, err;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) == 0) {
		ret = dump_flush(j);	/* and the perf-map lines of its records */
		if ((err = map_flush(j)) < 0 && ret == 0)
			ret = err;
	}
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__close(struct uevent_jit *j)
{
	struct uevent_jit **pp;
	struct jd_prefix rec;
	struct iovec iov;
	size_t i;
	int ret = 0, err;

	if (!j)
		return 0;
	pthread_mutex_lock(&list_lock);
	for (pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	pthread_mutex_unlock(&list_lock);
	pthread_mutex_lock(&j->lock);
	if (!j->forked)
		ret = map_flush(j);
	/* A child that never called us has no files of its own: nothing to close out. */
	if (!j->forked && j->dump_fd >= 0) {
		rec = (struct jd_prefix){ JIT_CODE_CLOSE, sizeof(rec), _uevent_now_ns() };
		iov = (struct iovec){ &rec, sizeof(rec) };
		if ((err = dump_append(j, &iov, 1, rec.timestamp)) < 0 && ret == 0)
			ret = err;
		if ((err = dump_flush(j)) < 0 && ret == 0)
			ret = err;
		/* drop the reserved tail: the file ends with its last record (on ext4 this
		 * frees the blocks allocated past it too, size changed or not: t/jit-api) */
		if (ftruncate(j->dump_fd, (off_t)j->dump_off) < 0 && ret == 0)
			ret = -errno;
	}
	if (j->forked) {
		/* the inherited fds are the parent's files: only drop our references */
		j->forked = 0;
	}
	close_files(j);
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_destroy(&j->lock);
	for (i = 0; i < j->cap; i++)
		code_free(&j->codes[i]);
	for (i = 0; i < j->nfresh; i++)
		code_free(&j->fresh[i]);
	slab_free_all(j);
	free(j->codes);
	free(j->fresh);
	free_pending(j->pending);
	free(j->mapbuf);
	free(j->dumpbuf);
	free(j);
	return ret < 0 ? _uevent_err(-ret) : 0;
}
