/* jit-dump.c - the JIT session's jitdump file: its directory, the records through a
 * shared mapping or a batch, and the DEBUG_INFO records a code keeps. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-trust.h"
#include "jit-internal.h"

/* ---- files ---------------------------------------------------------------------- */

#define DUMP_CHUNK	((uint64_t)64 * 1024)
#define DUMP_STEP_MAX	((uint64_t)16 * 1024 * 1024)

static uint64_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uint64_t)page : 4096;
}

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
int _uevent_jit_dump_reserve(struct uevent_jit *j, uint64_t need)
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

/*
 * len bytes at buf written at the file's byte off, whole, else an error: the caller
 * cuts the file (dump_cut). Blocks allocated ahead, 1 MiB at a time, without growing
 * the file: a write into them costs a third less (ext4: no block reservation per
 * page). A file system that cannot is left to allocate as it writes. The lock held
 * after _uevent_jit_out_wait, or a handed-off batch's writer.
 */
static int dump_pwrite(struct uevent_jit *j, const unsigned char *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;
	int err;

	_uevent_alloc_ahead(j->dump_fd, &j->dump_alloc, off + len, DUMP_ALLOC);
	while (done < len) {
		n = pwrite(j->dump_fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			_uevent_jit_werr(j, -err);	/* what followed it is lost too */
			return -err;
		}
		done += (size_t)n;
	}
	return 0;
}

/*
 * The batch's first len bytes about to go to the file: the record boundaries about
 * its end then (for dump_whole, dump_next), from the first past dump_file on (the
 * records held from there on are whole).
 */
static void dump_bounds(const struct uevent_jit *j, size_t len, uint64_t *whole,
			uint64_t *next)
{
	uint64_t end = j->dump_file + len, rec = j->dump_next;
	uint32_t size;

	/* all of it (appends are whole records), or up to the boundary the last append
	 * passed (a merge's handoff): known without walking the batch, which under the
	 * session's lock at 16 threads cost a fifth of a merge */
	if (end == j->dump_off || end == j->bnd_at) {
		*whole = end == j->dump_off ? end : j->bnd_whole;
		*next = end == j->dump_off ? end : j->bnd_next;
		return;
	}
	for (; rec < end; rec += size) {
		memcpy(&size, j->dumpbuf + (rec - j->dump_file) + 4, 4);
		if (size < 16)	/* never: records are whole, but never loop on one */
			break;
		if (size > end - rec) {
			*whole = rec;
			*next = rec + size;
			return;
		}
	}
	*whole = *next = end;
}

/*
 * Lock held, no batch being written or copied (_uevent_jit_out_wait): nothing past off
 * (the last record's end before a batch the file did not take whole: a batch ends at a
 * 256 KiB boundary, inside a record whose rest comes with the next) in the file, nor
 * held (what followed the batch); records go there next. No torn record is left for
 * perf. The file's mapping (window jobs) and blocks allocated ahead end there too: a
 * store into a page past the end is a SIGBUS.
 */
static void dump_cut(struct uevent_jit *j, uint64_t off)
{
	if (ftruncate(j->dump_fd, (off_t)off) < 0) {
		/* nothing more to do: perf stops at the torn record */
	}
	if (j->dump_cap > off)	/* win_cover allocates and maps it again */
		j->dump_cap = off & ~(DUMP_CHUNK - 1);
	if (j->dump_alloc != UINT64_MAX && j->dump_alloc > off)
		j->dump_alloc = off;
	j->dumplen = 0;
	j->dump_off = j->dump_file = j->dump_whole = j->dump_next = off;
	j->bnd_at = 0;
	if (j->map_scan > off)
		j->map_scan = off;
}

/* A perf-map write's failure (already kept for the next flush: map_write_buf) into
 * *merr, the first, when the caller tells it from the dump's; else returned. */
static int map_err(int *merr, int ret)
{
	if (!merr)
		return ret;
	if (ret < 0 && !*merr)
		*merr = ret;
	return 0;
}

/*
 * UEVENT_JIT_BUFFER_JITDUMP: writes the first len bytes held in memory with pwrite at
 * the end of the file and keeps the rest for later. A batch the file does not take whole
 * is lost with what was kept, and the call that wrote it fails. The perf-map lines made
 * from the batch first: their write's failure goes to merr (map_err).
 */
static int dump_write(struct uevent_jit *j, size_t len, int *merr)
{
	uint64_t whole, next;
	int ret, err;

	_uevent_jit_cp_sync(j);
	_uevent_jit_out_wait(j);
	if (len > j->dumplen)	/* a handed-off batch's failure dropped what was held */
		len = j->dumplen;
	if (!len || j->dump_fd < 0)
		return 0;
	ret = _uevent_jit_map_scan(j);
	dump_bounds(j, len, &whole, &next);
	if ((err = dump_pwrite(j, j->dumpbuf, len, j->dump_file)) < 0) {
		dump_cut(j, j->dump_whole);
		return err;
	}
	j->dump_whole = whole;
	j->dump_next = next;
	j->dump_file += len;
	j->dumplen -= len;
	if (j->dumplen)
		memmove(j->dumpbuf, j->dumpbuf + len, j->dumplen);
	return map_err(merr, ret);
}

/* Everything held: at an age, fork, close and exit. */
int _uevent_jit_dump_flush(struct uevent_jit *j)
{
	return dump_write(j, j->dumplen, NULL);
}

/* ---- a batch handed off: written after the session's lock is dropped ----------- */

/* A buffer for the batch of at least need bytes (*cap: its size), from the free ones. */
static unsigned char *pool_get(struct uevent_jit *j, size_t need, size_t *cap)
{
	unsigned char *b = NULL;
	int i;

	pthread_mutex_lock(&j->pool_lock);
	for (i = 0; i < DUMP_POOL && !b; i++)
		if (j->pool[i] && j->poolcap[i] >= need) {
			b = j->pool[i];
			*cap = j->poolcap[i];
			j->pool[i] = NULL;
		}
	pthread_mutex_unlock(&j->pool_lock);
	if (!b && (b = malloc(*cap = need > DUMP_BUF_CAP ? need : DUMP_BUF_CAP)) == NULL)
		*cap = 0;
	return b;
}

/* A batch's buffer back, once its bytes are in the file: kept, or freed. */
static void pool_put(struct uevent_jit *j, unsigned char *b, size_t cap)
{
	int i;

	pthread_mutex_lock(&j->pool_lock);
	for (i = 0; i < DUMP_POOL && b; i++)
		if (!j->pool[i]) {
			j->pool[i] = b;
			j->poolcap[i] = cap;
			b = NULL;
		}
	pthread_mutex_unlock(&j->pool_lock);
	free(b);
}

/* At close: the free buffers. */
void _uevent_jit_pool_free(struct uevent_jit *j)
{
	int i;

	for (i = 0; i < DUMP_POOL; i++) {
		free(j->pool[i]);
		j->pool[i] = NULL;
	}
}

/* The handed-off batch into the file, its buffer back; wlock held. Its write's result
 * goes to the thread whose merge handed it off (out_owner), whoever writes it. A failed
 * write is cut off by the lock's next holder (wfail: _uevent_jit_out_wait), with what
 * followed it: not here, where window jobs past it may be copying into the mapping. */
static void out_write_locked(struct uevent_jit *j)
{
	unsigned char *b = __atomic_load_n(&j->out, __ATOMIC_RELAXED);
	struct stage *owner = j->out_owner;
	int ret;

	if ((ret = dump_pwrite(j, b, j->out_len, j->out_off)) < 0)
		__atomic_store_n(&j->wfail, j->out_cut + 1, __ATOMIC_RELAXED);
	if (owner) {
		if (ret < 0 && !owner->hand_derr)	/* its merge's first */
			__atomic_store_n(&owner->hand_derr, ret, __ATOMIC_RELAXED);
		__atomic_store_n(&owner->hand_dump, 0, __ATOMIC_RELEASE);
	}
	j->out_owner = NULL;
	pool_put(j, b, j->out_cap);
	__atomic_store_n(&j->out, NULL, __ATOMIC_RELEASE);
}

/*
 * Without the session's lock, after a load's merge from s's thread: the batch that
 * merge handed off, written here if no other thread has yet; its write's error is the
 * call's (its records are in it, or after it: lost with it). Else the batch handed
 * off by another merge, written here only if no write is under way (its thread may
 * have been preempted before it began): its error is that thread's, not this one's.
 */
int _uevent_jit_out_write(struct uevent_jit *j, struct stage *s)
{
	if (__atomic_load_n(&s->hand_dump, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&j->wlock);
		if (s->hand_dump)	/* out is still this merge's batch */
			out_write_locked(j);
		pthread_mutex_unlock(&j->wlock);
		return s->hand_derr;
	}
	if (__atomic_load_n(&j->out, __ATOMIC_ACQUIRE) && !pthread_mutex_trylock(&j->wlock)) {
		if (__atomic_load_n(&j->out, __ATOMIC_ACQUIRE))	/* set while NULL */
			out_write_locked(j);
		pthread_mutex_unlock(&j->wlock);
	}
	return s->hand_derr;
}

/* Without the session's lock, after the load's merge that made the window job: its
 * bytes copied into the file's shared mapping (mapped and allocated when it was made:
 * nothing fails here), its buffer back. */
void _uevent_jit_win_copy(struct uevent_jit *j, unsigned char *buf, size_t len, size_t cap,
			  uint64_t off)
{
	memcpy(j->win + off, buf, len);
	pool_put(j, buf, cap);
	__atomic_sub_fetch(&j->wcopies, 1, __ATOMIC_RELEASE);
}

/*
 * Session lock held: no batch handed off is left unwritten (out written here if its
 * thread has not yet: it finds it written, and its result), nor being written or
 * copied, until the next handoff; a failed one's loss is taken into the session (the
 * batch and what was held after it: the file ends before them, and records go there
 * next). A write's failure is its batch's thread's, not the caller's.
 */
void _uevent_jit_out_wait(struct uevent_jit *j)
{
	uint64_t fail;

	if (likely(!__atomic_load_n(&j->out, __ATOMIC_ACQUIRE) &&
		   !__atomic_load_n(&j->wfail, __ATOMIC_RELAXED) &&
		   !__atomic_load_n(&j->wcopies, __ATOMIC_ACQUIRE)))
		return;
	/* a window job is a memcpy, no lock taken, no fault but the page cache's */
	while (__atomic_load_n(&j->wcopies, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_lock(&j->wlock);
	if (__atomic_load_n(&j->out, __ATOMIC_ACQUIRE))	/* a merge sets it while NULL */
		out_write_locked(j);
	if ((fail = j->wfail)) {
		dump_cut(j, fail - 1);
		__atomic_store_n(&j->wfail, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&j->wlock);
}

/*
 * Session lock held: the batch's first len bytes handed off (their perf-map lines made
 * and written now, those of the rest too: the map is written in the dump's order, under
 * the lock), to out (win 0: this thread writes it once it drops the lock) or as a
 * window job (win 1: this thread copies it into the mapping); the rest goes on in a
 * buffer from the pool. 0: not handed off (no buffer: left to the next).
 */
static int dump_handoff(struct uevent_jit *j, size_t len, int win)
{
	size_t rest = j->dumplen - len, cap;
	uint64_t whole, next;
	unsigned char *b;
	int ret;

	_uevent_jit_cp_sync(j);
	if (!(b = pool_get(j, rest, &cap)))
		return 0;
	ret = _uevent_jit_map_scan(j);
	dump_bounds(j, len, &whole, &next);
	memcpy(b, j->dumpbuf + len, rest);
	if (win) {
		j->wjob = j->dumpbuf;
		j->wjob_len = len;
		j->wjob_cap = j->dumpcap;
		j->wjob_off = j->dump_file;
		__atomic_add_fetch(&j->wcopies, 1, __ATOMIC_RELAXED);
	} else {
		j->out_off = j->dump_file;
		j->out_cut = j->dump_whole;
		j->out_len = len;
		j->out_cap = j->dumpcap;
		/* this merge's thread writes it, and its call takes the write's result,
		 * if the merge's records are all in it or after it: not if a batch with
		 * some of them was written meanwhile (one the merge handed off before, a
		 * thread with none of its own wrote): its load may be in that one */
		j->out_owner = j->merger && j->dump_whole <= j->merge_start ? j->merger : NULL;
		if (j->out_owner)
			__atomic_store_n(&j->merger->hand_dump, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&j->out, j->dumpbuf, __ATOMIC_RELEASE);
		_uevent_jit_test_handed_off(j);
	}
	j->dumpbuf = b;
	j->dumpcap = cap;
	j->dump_whole = whole;
	j->dump_next = next;
	j->dump_file += len;
	j->dumplen = rest;
	return ret;
}

/*
 * Session lock held: the file mapped (win) and allocated up to end, for a window job;
 * grown as _uevent_jit_dump_reserve grows it, without the page faults (the copies
 * take them, on their CPUs). A failure leaves the file as it is (written up to
 * dump_file, and by writes under way): the batch waits for out.
 */
static int win_cover(struct uevent_jit *j, uint64_t end)
{
	uint64_t cap = j->dump_cap;
	void *w;
	int err;

	if (end <= cap)
		return 0;
	cap = cap ? cap + (cap < DUMP_STEP_MAX ? cap : DUMP_STEP_MAX) : DUMP_CHUNK;
	if (cap < end)
		cap = end;
	cap = (cap + DUMP_CHUNK - 1) & ~(DUMP_CHUNK - 1);
	if (cap > DUMP_VA)
		return -EFBIG;
	if ((err = posix_fallocate(j->dump_fd, (off_t)j->dump_cap, (off_t)(cap - j->dump_cap))))
		return -err;
	if (!j->win) {
		w = mmap(NULL, (size_t)DUMP_VA, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (w == MAP_FAILED)
			return -errno;
		j->win = w;
	}
	w = mmap(j->win + j->dump_cap, (size_t)(cap - j->dump_cap), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, j->dump_fd, (off_t)j->dump_cap);
	if (w == MAP_FAILED)
		return -errno;
	j->dump_cap = cap;
	return 0;
}

/*
 * Session lock held, at the end of a load's merge: hands the batch off, up to the last
 * 256 KiB boundary in the file (all of it at its age): to out, if the last write is
 * done; else, past DUMP_WIN_MIN, all of it as a window job (a write under way, and
 * merges made meanwhile: many threads), else the next merge does. A buffer grown past
 * DUMP_DEFER_MAX meanwhile is written here, after the write under way. A batch
 * handed off to out is its thread's to write (_uevent_jit_out_write: merger's
 * hand_dump) once it drops the lock; j->wjob: a window job, for it to copy.
 */
int _uevent_jit_dump_defer_end(struct uevent_jit *j, uint64_t now)
{
	uint64_t end = j->dump_off & ~(DUMP_ALIGN - 1);
	const unsigned char *busy;
	size_t len = 0;
	int ret = 0, merr = 0;	/* the perf map's: for the next flush (j->werr) */

	if (j->dumplen && j->dump_fd >= 0) {
		/* before wfail: a failed write sets wfail, then lets go of out. Read the
		 * other way, a write that failed between the two reads looked done: the
		 * next batch went to out, and if its write failed too, its wfail took
		 * the place of the first's, and the cut left the first batch's part */
		busy = __atomic_load_n(&j->out, __ATOMIC_ACQUIRE);
		if (now - j->dump_t0 > DUMP_BUF_AGE_NS)
			len = j->dumplen;
		else if (end > j->dump_file && end - j->dump_file >= DUMP_BUF_MAX / 2)
			len = (size_t)(end - j->dump_file);
		if (j->dumplen > DUMP_DEFER_MAX)
			ret = dump_write(j, len ? len : j->dumplen, &merr);
		else if (!len || __atomic_load_n(&j->wfail, __ATOMIC_RELAXED))
			;
		else if (!busy && !DUMP_WIN_ALWAYS)
			map_err(&merr, dump_handoff(j, len, 0));
		else if (len >= DUMP_WIN_MIN && !j->wjob && win_cover(j, j->dump_off) == 0)
			/* all of it: a copy into the page cache needs no boundary, and
			 * the rest past one is not copied into the next buffer here */
			map_err(&merr, dump_handoff(j, j->dumplen, 1));
		_uevent_jit_due_update(j);
	}
	j->defer = 0;
	return ret;
}

/* In a load's merge, the batch full and a write under way: a bigger buffer (the other
 * threads' loads wait for the merge; the write, for the file's lock), up to
 * DUMP_DEFER_MAX. */
static int dump_buf_grow(struct uevent_jit *j, uint64_t len)
{
	size_t cap = 2 * j->dumpcap;
	unsigned char *w;

	if (j->dumplen + len > DUMP_DEFER_MAX)
		return -ENOSPC;
	if (cap < j->dumplen + len)
		cap = (size_t)(j->dumplen + len);
	if (!(w = realloc(j->dumpbuf, cap)))
		return -ENOMEM;
	j->dumpbuf = w;
	j->dumpcap = cap;
	return 0;
}

/* In a load's merge: room in the batch for len more bytes, without a write (a parallel
 * merge's, which places its groups at once). */
int _uevent_jit_dump_room(struct uevent_jit *j, uint64_t len)
{
	if (j->dumplen + len <= j->dumpcap)
		return 0;
	return j->defer ? dump_buf_grow(j, len) : -ENOSPC;
}

/* Whole records g, len bytes at the file's off, pass the 256 KiB boundary at: the
 * record about it, from *whole to *next (both at, where one starts there). -1: they
 * are not records (never). */
int _uevent_jit_bound_find(const unsigned char *g, uint64_t off, uint64_t len, uint64_t at,
			   uint64_t *whole, uint64_t *next)
{
	uint64_t rec = off, end = off + len;
	uint32_t size;

	*whole = *next = at;
	for (; rec < at; rec += size) {
		memcpy(&size, g + (rec - off) + 4, 4);
		if (size < 16 || size > end - rec)
			return -1;
		if (size > at - rec) {
			*whole = rec;
			*next = rec + size;
			return 0;
		}
	}
	return 0;
}

/* The append of len bytes at dump_off, just copied into the batch, passes the 256 KiB
 * boundary at: the record about it (it starts a record: appends are whole records). */
static void dump_bound_at(struct uevent_jit *j, uint64_t at, const unsigned char *g,
			  uint64_t len)
{
	j->bnd_at = _uevent_jit_bound_find(g, j->dump_off, len, at, &j->bnd_whole,
					   &j->bnd_next) < 0 ? 0 : at;
}

/*
 * UEVENT_JIT_BUFFER_JITDUMP's append: into memory, written when a 256 KiB boundary in
 * the file is passed (up to it: the part of a record past it waits) or the oldest
 * record is 100 ms old, and at fork, close and exit. On ext4 this costs a
 * quarter of a store into the shared mapping (page faults, page_mkwrite per page).
 * Returns the dump's failure (the records are lost); the perf map's goes to *merr: the
 * records are in, and a merge goes on with the rest.
 */
static UEVENT_HOT int dump_buffer(struct uevent_jit *j, const struct iovec *iov, int cnt,
				  uint64_t len, uint64_t now, int *merr)
{
	const unsigned char *g;
	unsigned char *w;
	uint64_t end;
	int i, ret;

	if (j->dumplen + len > j->dumpcap && !(j->defer && dump_buf_grow(j, len) == 0)) {
		if ((ret = dump_write(j, j->dumplen, merr)) < 0)
			return ret;
		/* A batch this merge handed off failed, and its wait cut the dump back to
		 * before it: the rest of the merge is lost too (its call fails, and its
		 * records may be among the groups not yet put: put now, after the cut, a
		 * failed call's load would be in the file) */
		if (j->merger && (ret = __atomic_load_n(&j->merger->hand_derr,
							__ATOMIC_RELAXED)) < 0)
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
	g = w;
	if (cnt == 1 && _uevent_jit_cp_push(j, 0, j->dumplen, iov[0].iov_base, len) == 0) {
		g = iov[0].iov_base;	/* a merge's group, copied with the waiting threads */
	} else {
		for (i = 0; i < cnt; i++) {
			memcpy(w, iov[i].iov_base, iov[i].iov_len);
			w += iov[i].iov_len;
		}
	}
	end = (j->dump_off + len) & ~(DUMP_ALIGN - 1);
	if (unlikely(end > j->dump_off))
		dump_bound_at(j, end, g, len);
	j->dumplen += (size_t)len;
	j->dump_off += len;
	if (now - j->dump_t0 > DUMP_BUF_AGE_NS)	/* deferred: at the merge's end */
		return j->defer ? 0 : dump_write(j, j->dumplen, merr);
	/* Past a 256 KiB boundary in the file: up to the last one, if that is at least
	 * half a buffer (after a flush at an age the file ends anywhere); a load's merge
	 * hands it off, if the last one handed off is written */
	end = j->dump_off & ~(DUMP_ALIGN - 1);
	if (end <= j->dump_file || end - j->dump_file < DUMP_BUF_MAX / 2)
		return 0;
	if (!j->defer)
		return dump_write(j, (size_t)(end - j->dump_file), merr);
	if (!__atomic_load_n(&j->out, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&j->wfail, __ATOMIC_RELAXED) && !DUMP_WIN_ALWAYS)
		return map_err(merr, dump_handoff(j, (size_t)(end - j->dump_file), 0));
	return 0;
}

/* The records in iov appended to the dump. merr NULL: the dump's failure, else the
 * perf map's (lines made from a batch written meanwhile); else the dump's, the map's
 * into *merr (the first). */
UEVENT_HOT int _uevent_jit_dump_append(struct uevent_jit *j, const struct iovec *iov, int cnt,
				       uint64_t now, int *merr)
{
	uint64_t len = 0;
	int i, ret, m = 0;

	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	if (j->dumpbuf) {
		ret = dump_buffer(j, iov, cnt, len, now, &m);
		return ret < 0 ? ret : map_err(merr, m);
	}
	if ((ret = _uevent_jit_dump_reserve(j, len)) < 0)
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
void _uevent_jit_dump_undo(struct uevent_jit *j, uint64_t off)
{
	if (off >= j->dump_off)
		return;
	if (j->dumpbuf) {
		if (off < j->dump_file) {	/* written already (the batch was due) */
			/* as a failed write is cut: after the copies into the mapping
			 * (one past the new end would be a SIGBUS), and the mapping and
			 * blocks allocated ahead made to end there too. A failed write
			 * handed off may have cut it back further meanwhile. */
			_uevent_jit_out_wait(j);
			if (off < j->dump_off)
				dump_cut(j, off);
			return;
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
int _uevent_jit_make_dir(struct uevent_jit *j, const char *dir)
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

int _uevent_jit_open_dump(struct uevent_jit *j)
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
	j->dump_off = j->dump_cap = j->dump_file = j->dump_alloc = j->dump_whole = 0;
	/* records start after the header */
	j->map_scan = j->dump_next = sizeof(struct jd_header);
	j->bnd_at = 0;
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
	if ((ret = _uevent_jit_dump_append(j, &iov, 1, h.timestamp, NULL)) < 0 ||
	    (ret = _uevent_jit_dump_flush(j)) < 0)
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

/* The size of debug_record's block. */
UEVENT_HOT size_t _uevent_jit_debug_size(size_t len, size_t extra)
{
	return sizeof(struct pending) + len + 8 + extra;
}

/* A DEBUG_INFO record for nr entries at code_addr, unlinked, with extra bytes after its
 * padding for the caller, in mem (debug_size() bytes) or else a malloc; NULL on ENOMEM. */
UEVENT_HOT struct pending *_uevent_jit_debug_record(uint64_t code_addr,
						    const struct uevent_jit_debug_entry *e,
						    uint32_t nr, size_t len, uint64_t now,
						    size_t extra, void *mem)
{
	struct pending *p = mem ? mem : malloc(_uevent_jit_debug_size(len, extra));
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

/* A kept record follows its code to new_addr: DEBUG_INFO addresses shift with it. */
void _uevent_jit_info_rebase(struct pending *p, uint64_t new_addr)
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
