/* group-append.h - group commit of O_APPEND writes: many threads' records in one writev,
 * each whole in the file when its call returns (the file transport, the JIT perf map). */
#ifndef UEVENT_GROUP_APPEND_H
#define UEVENT_GROUP_APPEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * One O_APPEND write a record keeps records whole between writers and has the record
 * in the file when its call returns, but the kernel takes the file's inode lock for
 * each: threads that queue on that lock write fewer records in all than one thread
 * alone (a 16-core host: 1.53 M marks/s from one thread, 0.91 M/s from 16). So a thread
 * pushes its record onto a lock-free stack and either becomes the writer, which takes
 * everything pushed and writes it oldest first in one writev, or waits while the writer
 * does it for it. One thread alone writes its own record; under contention one syscall
 * carries many records, and the file's lock is taken once for them. A waiter spins (up
 * to 30 us) before it sleeps: one that slept missed the next batch (16 threads on 16
 * cores: 0.85-0.92 M/s in all with a short spin, 1.38-1.45 M/s with this one).
 */
#define _UEVENT_GA_IOV	3		/* iovecs a record */

struct _uevent_ga_req {
	struct _uevent_ga_req *next;
	struct iovec iov[_UEVENT_GA_IOV];
	int niov;
	size_t len;			/* the record's bytes: the iovecs' sum */
	int result;			/* 0 or -errno; set before done */
	int done;			/* release-stored by the writer: req may be gone next */
};

/* One file's queue; all zero: empty, nobody writing. */
struct _uevent_group_append {
	struct _uevent_ga_req *pending;	/* pushed, not taken: newest first */
	const void *writer;		/* the writer's place: its holder's self, or NULL */
	unsigned int gen;		/* bumped after each batch: sleepers wait on it */
	uint64_t sleepers;		/* low half: how many; high: bumped by a reset */
};

/* Pushes req (its iov, niov and len set): it goes after every record pushed before. */
void _uevent_ga_push(struct _uevent_group_append *g, struct _uevent_ga_req *req);

/*
 * Returns when req's record is in the file (0) or could not be (-errno), written by
 * this thread or another. The writer reads *fdp once it holds the writer's place, so a
 * thread that holds it (_uevent_ga_lock()) may change what *fdp names. self, when not
 * NULL, is an address of the calling thread's own (a TLS variable) that marks the
 * writer's place while it holds it: a signal handler's record on the thread that holds
 * it (_uevent_ga_held()) must be written with _uevent_ga_write() at once, as waiting
 * would wait for itself. Async-signal-safe, as the file transport's emit path needs.
 * In the child of a fork from a signal handler on a thread waiting here, the call
 * returns 0 without writing: the record is the parent's, and the parent writes it.
 */
int _uevent_ga_commit(struct _uevent_group_append *g, const int *fdp,
		      struct _uevent_ga_req *req, const void *self);

/* Whether self (as given to _uevent_ga_commit()) holds the writer's place now: only
 * its own thread, a signal handler on it included, can see it true. */
static inline int _uevent_ga_held(const struct _uevent_group_append *g, const void *self)
{
	return __atomic_load_n(&g->writer, __ATOMIC_RELAXED) == self;
}

/*
 * Takes the writer's place for self, waiting for a writer at work to leave, and gives
 * it back: in between no batch is written (records queue), so the descriptor may be
 * pointed at another file or closed. Not for a signal handler.
 */
void _uevent_ga_lock(struct _uevent_group_append *g, const void *self);
void _uevent_ga_unlock(struct _uevent_group_append *g);

/* Writes n records of the list from req (oldest first) in one writev, now; sets each
 * one's result and done. A short write is cut off again: no torn record is left, unless
 * a record went in after it (another process's, a signal handler's on this thread),
 * which the cut would take too. g is the queue whose writer's place this thread holds:
 * in a fork child (_uevent_ga_reset() since the call began) it neither writes nor cuts. */
void _uevent_ga_write(struct _uevent_group_append *g, int fd, struct _uevent_ga_req *req,
		      int n);

/* In a fork child: the parent's other threads, a writer among them, did not come along
 * (this one, if a handler on it forked, may be waiting in _uevent_ga_commit(), or be
 * the writer: what it has left to write and cut is the parent's, and stays so). */
void _uevent_ga_reset(struct _uevent_group_append *g);

#endif
