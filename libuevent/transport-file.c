/* transport-file.c - records appended to a file, read back by uevent dump and the readers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <limits.h>
#include <sched.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "transport.h"

/*
 * A short append (a full disk, a file size limit) left the first `written` bytes of a
 * record at the end of the file: cut them off, so that the next record starts where
 * this one did and no reader meets a torn record. O_APPEND left our offset at the end
 * of our bytes; if the file has grown past it, someone appended after them (space came
 * back meanwhile) and the cut would take their record too: then the bytes stay.
 * Async-signal-safe (the emit path). Returns the errno that explains the short write.
 */
int _uevent_undo_short_append(int fd, size_t written)
{
	struct rlimit rl;
	struct stat st;
	off_t end = lseek(fd, 0, SEEK_CUR);

	if (end >= 0 && (uint64_t)end >= written && fstat(fd, &st) == 0 && st.st_size == end &&
	    ftruncate(fd, end - (off_t)written) < 0) {
		/* nothing else to try: the reader stops at the torn record */
	}
	/* A write stops short at RLIMIT_FSIZE (EFBIG) or when the space runs out. */
	if (end >= 0 && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)end >= rl.rlim_cur)
		return EFBIG;
	return ENOSPC;
}

static int file_open(struct _uevent_tstate *ts, const char *path)
{
	struct uevent_file_header h;
	struct stat st;
	int fd, err;

	/*
	 * The path may be in a shared directory where anyone can plant a name first:
	 * never follow a symlink, never block in open() (a FIFO without a reader would
	 * hang us; with O_NONBLOCK it says ENXIO), and write only a regular file of ours.
	 */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		  0600);
	if (fd < 0) {
		err = errno;
		if (err == ELOOP) {
			_uevent_set_reason("file: %s is a symbolic link, refused", path);
		} else if (err == ENXIO) {
			/* a FIFO with no reader, a socket, a device without a driver */
			_uevent_set_reason("file: %s is not a regular file (a FIFO or socket?), refused",
				   path);
			err = EINVAL;
		} else {
			_uevent_set_reason("file: cannot open %s: %s", path, strerror(err));
		}
		return -err;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		_uevent_set_reason("file: %s is not a regular file (a FIFO, device or socket), refused",
			   path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		_uevent_set_reason("file: %s is owned by uid %u, not by us (uid %u), refused", path,
			   (unsigned int)st.st_uid, (unsigned int)geteuid());
		close(fd);
		return -EPERM;
	}
	if (st.st_size == 0) {
		ssize_t n;

		uevent_file_header_init(&h);
		/* Two processes may race to create it: only an empty file gets a header.
		 * write(), not pwrite(): O_APPEND puts it at the end either way, and only
		 * write() leaves our offset after it for the undo of a short one. */
		n = write(fd, &h, sizeof(h));
		if (n != (ssize_t)sizeof(h)) {
			err = n < 0 ? errno : _uevent_undo_short_append(fd, (size_t)n);
			_uevent_set_reason("file: cannot write header to %s: %s", path, strerror(err));
			close(fd);
			return -err;
		}
	}
	ts->fd = fd;
	ts->max_payload = UEVENT_MAX_PAYLOAD;
	return 0;
}

/*
 * Group commit. Every mark is one O_APPEND writev of whole records, so it lands whole
 * between other processes' writes and is in the file when its emit returns; but the
 * kernel takes the file's inode lock for each, and threads that queue on that lock
 * make fewer marks in all than one thread alone (a 16-core host: 1.53 M/s from one
 * thread, 0.91 M/s from 16). So a thread pushes its record onto a lock-free stack and
 * either becomes the writer, which takes everything pushed and writes it in one writev
 * (up to FILE_BATCH records), or waits while the writer does it for it. One thread
 * alone writes its own record, as before; under contention a syscall carries many
 * records, and the file's lock is taken once for them.
 */
struct file_req {
	struct file_req *next;
	struct iovec iov[3];		/* head, data, padding + sample id */
	size_t len;
	int result;			/* 0 or -errno; set before done */
	int done;			/* release-stored by the writer: req may be gone next */
};

#define FILE_BATCH	256		/* records a writev: 3 iovecs each, IOV_MAX 1024 */

static struct file_req *file_pending;	/* pushed, not taken: newest first */
static int file_writing;		/* a thread is the writer */
/* This thread is the writer: a signal handler's mark on it writes directly (waiting
 * would wait for itself). initial-exec: no allocation at first use (signal-safe). */
static __thread int file_writer __attribute__((tls_model("initial-exec")));

/* Bumped after each batch and when the writer leaves; waiters past their spin sleep on
 * it (FUTEX_WAIT), and the writer wakes them all at once, only if one sleeps. */
static unsigned int file_gen;
static unsigned int file_sleepers;

static void wake_waiters(void)
{
	__atomic_add_fetch(&file_gen, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&file_sleepers, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &file_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* A waiter whose record is not written yet, with a writer at work: spin a little (the
 * batch takes about a syscall), then sleep until the writer says something changed. */
static void wait_writer(const struct file_req *req, unsigned int spins)
{
	unsigned int gen;

	if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	if (spins < 80) {	/* more threads than CPUs: the writer may want this one */
		sched_yield();
		return;
	}
	__atomic_add_fetch(&file_sleepers, 1, __ATOMIC_SEQ_CST);
	gen = __atomic_load_n(&file_gen, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&req->done, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&file_writing, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &file_gen, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
	__atomic_sub_fetch(&file_sleepers, 1, __ATOMIC_SEQ_CST);
}

/* Writes n records (oldest first) in one writev; sets each one's result and done. */
static void write_batch(int fd, struct file_req **req, int n)
{
	struct iovec iov[3 * FILE_BATCH];
	size_t left;
	ssize_t ret;
	int i, err = 0;

	for (i = 0; i < n; i++)
		memcpy(&iov[3 * i], req[i]->iov, sizeof(req[i]->iov));
	ret = writev(fd, iov, 3 * n);
	if (ret < 0)
		err = errno;
	left = ret < 0 ? 0 : (size_t)ret;
	for (i = 0; i < n; i++) {
		struct file_req *r = req[i];

		if (err) {
			r->result = -err;
		} else if (left >= r->len) {
			left -= r->len;
			r->result = 0;
		} else {
			/* Cut off the torn one; it and the rest of the batch fail with why. */
			err = _uevent_undo_short_append(fd, left);
			left = 0;
			r->result = -err;
		}
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	}
}

/*
 * The writer: takes what was pushed, once, and writes it. It does not stay for what
 * is pushed meanwhile: that waits for the next writer (one of those who pushed it),
 * which then takes all of it at once; a writer that stayed would write for the others
 * a record at a time, its own caller kept waiting.
 */
static void write_pending(int fd)
{
	struct file_req *list, *next, *fifo = NULL, *batch[FILE_BATCH];
	int n;

	list = __atomic_exchange_n(&file_pending, NULL, __ATOMIC_ACQUIRE);
	for (; list; list = next) {	/* newest first: turn it round */
		next = list->next;
		list->next = fifo;
		fifo = list;
	}
	while (fifo) {
		for (n = 0; fifo && n < FILE_BATCH; fifo = next) {
			next = fifo->next;	/* read before done: it may be gone */
			batch[n++] = fifo;
		}
		write_batch(fd, batch, n);
		wake_waiters();
	}
}

static int file_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		      uint32_t word)
{
	struct {
		struct perf_event_header h;
		struct perf_uevent_record_v1 r;
	} head;
	struct { uint8_t zero[8]; uint32_t pid, tid; uint64_t time; } tail;
	size_t pad = -size & 7;
	struct file_req req, *top;
	unsigned int spins;
	pid_t pid;

	(void)word;
	head.h.type = PERF_RECORD_UEVENT;
	head.h.misc = PERF_RECORD_MISC_USER;
	head.h.size = sizeof(head) + size + pad + 16;
	head.r.format = PERF_UEVENT_FORMAT_V1;
	head.r.size = size;
	head.r.type = type;
	head.r.flags = 0;
	/* a vfork child's pid is not ts->pid; getpid() is a fraction of the writev */
	pid = getpid();
	memset(tail.zero, 0, sizeof(tail.zero));
	tail.pid = (uint32_t)pid;
	tail.tid = (uint32_t)_uevent_tid(pid, ts->pid);
	tail.time = _uevent_now_ns();
	req.iov[0] = (struct iovec){ &head, sizeof(head) };
	req.iov[1] = (struct iovec){ (void *)data, size };
	req.iov[2] = (struct iovec){ tail.zero + 8 - pad, pad + 16 };
	req.len = head.h.size;
	req.done = 0;
	if (__atomic_load_n(&file_writer, __ATOMIC_RELAXED)) {	/* a handler's, on the writer */
		write_batch(ts->fd, &(struct file_req *){ &req }, 1);
		return req.result;
	}
	top = __atomic_load_n(&file_pending, __ATOMIC_RELAXED);
	do
		req.next = top;
	while (!__atomic_compare_exchange_n(&file_pending, &top, &req, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	for (spins = 0; !__atomic_load_n(&req.done, __ATOMIC_ACQUIRE); spins++) {
		/* Say so before taking the writer's place and until after leaving it: a
		 * handler that runs in between must not wait for us. */
		__atomic_store_n(&file_writer, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&file_writing, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&file_writing, 1, __ATOMIC_ACQUIRE)) {
			write_pending(ts->fd);
			__atomic_store_n(&file_writing, 0, __ATOMIC_SEQ_CST);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			__atomic_store_n(&file_writer, 0, __ATOMIC_RELAXED);
			wake_waiters();		/* one may have pushed after our last take */
			spins = 0;
			continue;
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&file_writer, 0, __ATOMIC_RELAXED);
		wait_writer(&req, spins);
	}
	return req.result;
}

/* In a fork child (emit.c closes every transport there): the parent's other threads,
 * a writer among them, did not come along; nobody is writing. */
static void file_close(struct _uevent_tstate *ts)
{
	if (ts->pid != getpid()) {
		file_pending = NULL;
		file_writing = 0;
		file_sleepers = 0;
	}
}

const struct _uevent_transport_ops _uevent_file_ops = {
	.open = file_open, .write = file_write, .close = file_close, .always = 1,
};
