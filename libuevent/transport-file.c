/* transport-file.c - records appended to a file, read back by uevent dump and the readers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

/* One writev of one whole record; O_APPEND places it after other writers' records. */
static int file_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		      uint32_t word)
{
	struct {
		struct perf_event_header h;
		struct perf_uevent_record_v1 r;
	} head;
	struct { uint32_t pid, tid; uint64_t time; } id;
	static const uint8_t zero[8];
	size_t pad = -size & 7;
	pid_t pid;
	ssize_t ret;
	struct iovec iov[4] = {
		{ &head, sizeof(head) }, { (void *)data, size },
		{ (void *)zero, pad }, { &id, sizeof(id) },
	};

	(void)word;
	head.h.type = PERF_RECORD_UEVENT;
	head.h.misc = PERF_RECORD_MISC_USER;
	head.h.size = sizeof(head) + size + pad + sizeof(id);
	head.r.format = PERF_UEVENT_FORMAT_V1;
	head.r.size = size;
	head.r.type = type;
	head.r.flags = 0;
	/* a vfork child's pid is not ts->pid; getpid() is a fraction of the writev */
	pid = getpid();
	id.pid = (uint32_t)pid;
	id.tid = (uint32_t)_uevent_tid(pid, ts->pid);
	id.time = _uevent_now_ns();
	/* O_APPEND makes the one writev land whole, between other processes' too. */
	ret = writev(ts->fd, iov, 4);
	if (ret < 0)
		return -errno;
	if ((size_t)ret != head.h.size)
		return -_uevent_undo_short_append(ts->fd, (size_t)ret);
	return 0;
}

const struct _uevent_transport_ops _uevent_file_ops = {
	.open = file_open, .write = file_write, .always = 1,
};
