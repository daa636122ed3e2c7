/* group-append.c - group commit of O_APPEND writes (group-append.h), and the undo of a
 * short append that it and every other appender of whole records needs, and the blocks
 * allocated ahead of the writes of the JIT dump and of a recording. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include "internal.h"
#include "group-append.h"

/* The iovecs of a writev at the most (IOV_MAX is 1024): 6 KiB of stack, which a
 * signal handler's mark on a small alternate stack can spare. */
#define GA_IOV_MAX	384

/* Why a write that left the offset at end stopped short: RLIMIT_FSIZE (EFBIG) or the
 * space ran out (ENOSPC). */
static int short_errno(off_t end)
{
	struct rlimit rl;

	if (end >= 0 && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)end >= rl.rlim_cur)
		return EFBIG;
	return ENOSPC;
}

/*
 * The queue's epoch: the high half of sleepers, which _uevent_ga_reset() bumps. A fork
 * child whose handler forked on the writer's thread goes on, once the handler returns,
 * with the parent's batch and the rest of its list: records the parent writes, or cuts
 * off again, under a descriptor number the child closed and may have opened again for
 * its own file. A write or an undo begun under another epoch leaves them be. One
 * relaxed load a batch: the reset was on this very thread.
 */
static uint32_t epoch(const struct _uevent_group_append *g)
{
	return (uint32_t)(__atomic_load_n(&g->sleepers, __ATOMIC_RELAXED) >> 32);
}

/*
 * A short append (a full disk, a file size limit) left the first `written` bytes of a
 * record at the end of the file: cut them off, so that the next record starts where
 * this one did and no reader meets a torn record. O_APPEND left our offset at the end
 * of our bytes; if the file has grown past it, someone appended after them (space came
 * back meanwhile) and the cut would take their record too: then the bytes stay. So they
 * do when the offset is where a signal handler's write on this thread left it
 * (nested_end, -1: none): it went after them, through the same offset. With g, the
 * bytes stay when g's epoch is no longer ep, the one the write began under: they are a
 * fork parent's, and so is the cut. Async-signal-safe (the emit path). Returns the
 * errno that explains the short write.
 */
static int undo_short(int fd, size_t written, off_t nested_end,
		      const struct _uevent_group_append *g, uint32_t ep)
{
	struct stat st;
	off_t end = lseek(fd, 0, SEEK_CUR);

	if (end >= 0 && end != nested_end && (uint64_t)end >= written && fstat(fd, &st) == 0 &&
	    st.st_size == end && (!g || epoch(g) == ep) &&
	    ftruncate(fd, end - (off_t)written) < 0) {
		/* nothing else to try: the reader stops at the torn record */
	}
	return short_errno(end);
}

int _uevent_undo_short_append(int fd, size_t written)
{
	return undo_short(fd, written, -1, NULL, 0);
}

void _uevent_alloc_ahead(int fd, uint64_t *alloc, uint64_t end, uint64_t step)
{
	uint64_t n;

	if (*alloc == UINT64_MAX || end <= *alloc)
		return;
	n = (end - *alloc + step - 1) / step * step;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)*alloc, (off_t)n) == 0)
		*alloc += n;
	else if (errno == EOPNOTSUPP || errno == ENOSYS)
		*alloc = UINT64_MAX;
}

void _uevent_ga_push(struct _uevent_group_append *g, struct _uevent_ga_req *req)
{
	struct _uevent_ga_req *top = __atomic_load_n(&g->pending, __ATOMIC_RELAXED);

	req->done = 0;
	req->result = 0;
	do
		req->next = top;
	while (!__atomic_compare_exchange_n(&g->pending, &top, req, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

/*
 * The _uevent_ga_write() at work on this thread: a signal handler's mark on the writer
 * writes directly (transport-file.c), in the middle of it. Between a short writev and
 * its undo, such a record would go after the torn bytes, and the undo, which finds our
 * bytes by the offset the two writes share, would cut it instead: the handler says
 * where its write left the offset (nested_end), and the undo leaves the bytes then (as
 * for another process's record after them). Once the undo has begun, a handler's
 * record would be cut for sure: it fails as the short write does. initial-exec: no
 * allocation at first use (signal-safe).
 */
struct ga_frame {
	int fd;
	int undoing;
	off_t nested_end;
};
static __thread struct ga_frame *ga_frame __attribute__((tls_model("initial-exec")));

/* _uevent_ga_write() of a batch begun under epoch ep (write_pending()'s, or now). One
 * that finds the epoch changed before its writev is a fork parent's, whose handler
 * forked on this thread: the parent writes it, and its records say 0 here, as
 * _uevent_ga_commit() says in such a child. */
static void write_batch(struct _uevent_group_append *g, uint32_t ep, int fd,
			struct _uevent_ga_req *req, int n)
{
	struct ga_frame f = { .fd = fd, .nested_end = -1 }, *outer = ga_frame, *up = NULL;
	struct iovec iov[GA_IOV_MAX];
	struct _uevent_ga_req *r, *next;
	size_t left;
	ssize_t ret;
	int i, niov = 0, err = 0, ours = 1;

	if (outer && outer->fd == fd) {
		up = outer;
		if (__atomic_load_n(&up->undoing, __ATOMIC_RELAXED))
			err = short_errno(lseek(fd, 0, SEEK_CUR));
	}
	ret = 0;
	if (!err) {
		for (r = req, i = 0; i < n; r = r->next, i++) {
			memcpy(&iov[niov], r->iov, (size_t)r->niov * sizeof(*iov));
			niov += r->niov;
		}
		ga_frame = &f;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* set before the writev */
		while ((ours = epoch(g) == ep) && (ret = writev(fd, iov, niov)) < 0 &&
		       errno == EINTR)
			;
		if (ours && ret < 0)	/* not an EINTR before the epoch changed */
			err = errno;
		if (up && ret > 0)
			__atomic_store_n(&up->nested_end, lseek(fd, 0, SEEK_CUR), __ATOMIC_RELAXED);
	}
	left = !ours ? SIZE_MAX : ret < 0 ? 0 : (size_t)ret;
	for (r = req, i = 0; i < n; r = next, i++) {
		next = r->next;		/* read before done: r may be gone */
		if (err) {
			r->result = -err;
		} else if (left >= r->len) {
			left -= r->len;
			r->result = 0;
		} else {
			/* Cut off the torn one; it and the rest of the batch fail with why. */
			__atomic_store_n(&f.undoing, 1, __ATOMIC_RELAXED);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			err = undo_short(fd, left, __atomic_load_n(&f.nested_end, __ATOMIC_RELAXED),
					 g, ep);
			left = 0;
			r->result = -err;
		}
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ga_frame = outer;
}

void _uevent_ga_write(struct _uevent_group_append *g, int fd, struct _uevent_ga_req *req, int n)
{
	write_batch(g, epoch(g), fd, req, n);
}

/* Bumped after each batch and when the writer leaves; waiters past their spin sleep on
 * it (FUTEX_WAIT), and the writer wakes them all at once, only if one sleeps. */
static void wake_waiters(struct _uevent_group_append *g)
{
	__atomic_add_fetch(&g->gen, 1, __ATOMIC_SEQ_CST);
	if ((uint32_t)__atomic_load_n(&g->sleepers, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &g->gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* A sleeper counted itself in when sleepers was `was`; it takes itself off again unless
 * a reset has come between (a fork child's, from a signal handler on this thread). */
static void unsleep(struct _uevent_group_append *g, uint64_t was)
{
	uint64_t now = __atomic_load_n(&g->sleepers, __ATOMIC_RELAXED);

	while (now >> 32 == was >> 32 &&
	       !__atomic_compare_exchange_n(&g->sleepers, &now, now - 1, 1, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED))
		;
}

/*
 * A waiter whose record is not written yet, with a writer at work, spins while the
 * writer is at work, up to GA_SPIN_NS: under contention the writer's next batch (a
 * writev or a few) carries its record, and a waiter that slept would need a futex wake
 * and a context switch, longer than the writev, and then would not be there to take
 * the writer's place when it leaves. The first GA_SPIN_PAUSES are pauses alone (one
 * batch, about); past them the spin yields every GA_SPIN_PAUSES and reads the clock
 * (more threads than CPUs: the writer may want this one). Past GA_SPIN_NS (the writer
 * was preempted, or the file is slow) it sleeps until the writer says something changed.
 * *since is 0 at the first call; it keeps when the yielding began. done is the record's
 * (NULL: the waiter wants the writer's place itself, _uevent_ga_lock()).
 */
#define GA_SPIN_PAUSES	64
#define GA_SPIN_NS	30000

static void wait_writer(struct _uevent_group_append *g, const int *done, unsigned int spins,
			uint64_t *since)
{
	unsigned int gen;
	uint64_t now, was;

	if (spins < GA_SPIN_PAUSES || spins % GA_SPIN_PAUSES) {
		_uevent_cpu_pause();
		return;
	}
	now = _uevent_now_ns();
	if (!*since)
		*since = now;
	if (now - *since < GA_SPIN_NS) {
		sched_yield();
		return;
	}
	was = __atomic_fetch_add(&g->sleepers, 1, __ATOMIC_SEQ_CST);
	gen = __atomic_load_n(&g->gen, __ATOMIC_SEQ_CST);
	if ((!done || !__atomic_load_n(done, __ATOMIC_SEQ_CST)) &&
	    __atomic_load_n(&g->writer, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &g->gen, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
	unsleep(g, was);
}

/*
 * The writer: takes what was pushed, once, and writes it, oldest first. It does not
 * stay for what is pushed meanwhile: that waits for the next writer (one of those who
 * pushed it), which then takes all of it at once; a writer that stayed would write for
 * the others a record at a time, its own caller kept waiting. In a fork child whose
 * handler forked on the writer, the list is the parent's, and so is the rest of it.
 */
static void write_pending(struct _uevent_group_append *g, int fd)
{
	struct _uevent_ga_req *list, *next, *fifo = NULL, *batch;
	uint32_t ep = epoch(g);	/* before the list is taken */
	int n, niov;

	list = __atomic_exchange_n(&g->pending, NULL, __ATOMIC_ACQUIRE);
	for (; list; list = next) {	/* newest first: turn it round */
		next = list->next;
		list->next = fifo;
		fifo = list;
	}
	while (fifo && epoch(g) == ep) {
		batch = fifo;
		for (n = niov = 0; fifo && niov + fifo->niov <= GA_IOV_MAX; n++) {
			niov += fifo->niov;
			fifo = fifo->next;	/* read before done: it may be gone */
		}
		write_batch(g, ep, fd, batch, n);
		wake_waiters(g);
	}
}

/* The writer's place for self, if nobody holds it; acquire: what the last holder
 * changed (the descriptor) is seen. */
static int take(struct _uevent_group_append *g, const void *self)
{
	const void *none = NULL;

	return !__atomic_load_n(&g->writer, __ATOMIC_RELAXED) &&
	       __atomic_compare_exchange_n(&g->writer, &none, self, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void _uevent_ga_unlock(struct _uevent_group_append *g)
{
	__atomic_store_n(&g->writer, NULL, __ATOMIC_SEQ_CST);
	wake_waiters(g);	/* one may have pushed after the last take */
}

void _uevent_ga_lock(struct _uevent_group_append *g, const void *self)
{
	unsigned int spins;
	uint64_t since = 0;

	for (spins = 0; !take(g, self); spins++)
		wait_writer(g, NULL, spins, &since);
}

/*
 * The writer's place names the thread that holds it (self), so a signal handler on
 * that thread, and only there, writes its record directly (_uevent_ga_held()); a
 * handler on a thread that is not the writer, even one about to take its place,
 * queues as any thread does: the writer it waits for is another thread. No write
 * goes to the file outside the writer's place, so a thread that holds it may change
 * the file under the descriptor.
 *
 * A waiter that took the writer's place and wrote what was pending has its record
 * written: by itself, or by a writer that left before it took the place. Not so in a
 * fork child whose handler forked on a waiting thread: the writer, or the queue that
 * held the record (_uevent_ga_reset()), stayed in the parent, which writes the record
 * (its pid's, its thread's); the child neither waits for it nor writes a second copy.
 * Nor if the handler forked on the writer: the list it took is the parent's, which
 * the child leaves at the reset's epoch (write_pending()).
 */
int _uevent_ga_commit(struct _uevent_group_append *g, const int *fdp,
		      struct _uevent_ga_req *req, const void *self)
{
	unsigned int spins;
	uint64_t since = 0;

	if (!self)
		self = g;	/* nobody asks _uevent_ga_held() */
	for (spins = 0; !__atomic_load_n(&req->done, __ATOMIC_ACQUIRE); spins++) {
		if (take(g, self)) {
			write_pending(g, __atomic_load_n(fdp, __ATOMIC_ACQUIRE));
			_uevent_ga_unlock(g);
			if (!__atomic_load_n(&req->done, __ATOMIC_ACQUIRE))
				return 0;	/* a fork child: the parent's record */
			break;
		}
		wait_writer(g, &req->done, spins, &since);
	}
	return req->result;
}

/* A sleeper of the parent's, this thread if a handler on it forked, has its count
 * dropped here; the bump of gen ends a FUTEX_WAIT the handler's return restarts. The
 * bump of the high half is a new epoch: a writer of the parent's, this thread if a
 * handler on it forked, writes and cuts nothing more (epoch()). */
void _uevent_ga_reset(struct _uevent_group_append *g)
{
	ga_frame = NULL;	/* the write a handler here forked in is the parent's */
	g->pending = NULL;
	g->writer = NULL;
	g->sleepers = ((g->sleepers >> 32) + 1) << 32;
	g->gen++;
}
