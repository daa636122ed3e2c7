/* transport-file.c - records appended to a file, read back by uevent dump and the readers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "transport.h"
#include "group-append.h"

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

/* Every mark is one O_APPEND writev of a whole record, so it lands whole between other
 * processes' writes and is in the file when its emit returns; group-append.h carries
 * many threads' records in one writev. */
static struct _uevent_group_append file_queue;
/* This thread is the writer: a signal handler's mark on it writes directly (waiting
 * would wait for itself). initial-exec: no allocation at first use (signal-safe). */
static __thread int file_writer __attribute__((tls_model("initial-exec")));

static int file_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		      uint32_t word)
{
	struct {
		struct perf_event_header h;
		struct perf_uevent_record_v1 r;
	} head;
	struct { uint8_t zero[8]; uint32_t pid, tid; uint64_t time; } tail;
	size_t pad = -size & 7;
	struct _uevent_ga_req req;
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
	req.niov = 3;
	req.len = head.h.size;
	if (__atomic_load_n(&file_writer, __ATOMIC_RELAXED)) {	/* a handler's, on the writer */
		req.next = NULL;
		_uevent_ga_write(ts->fd, &req, 1);
		return req.result;
	}
	_uevent_ga_push(&file_queue, &req);
	return _uevent_ga_commit(&file_queue, ts->fd, &req, &file_writer);
}

/* In a fork child (emit.c closes every transport there): the parent's other threads,
 * a writer among them, did not come along; nobody is writing. */
static void file_close(struct _uevent_tstate *ts)
{
	if (ts->pid != getpid())
		_uevent_ga_reset(&file_queue);
}

const struct _uevent_transport_ops _uevent_file_ops = {
	.open = file_open, .write = file_write, .close = file_close, .always = 1,
};
