/* transport-file.c - records appended to a pipe-mode perf.data file, without privileges:
 * every perf.data reader (uevent dump, report, export, the bindings, perf) reads it. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "transport.h"
#include "group-append.h"
#include "perf-internal.h"
#include "rec-writer.h"

/*
 * The head of every file: pipe-mode perf.data as session-record.c writes it (what
 * `perf record -o -` writes too), one event whose PERF_RECORD_UEVENT records carry a
 * TID|TIME sample_id, on CLOCK_MONOTONIC; no end is promised (appenders come and go).
 * Made once a process; a fork child inherits it (no allocation there).
 */
static struct _uevent_rec file_head;

static int make_head(void)
{
	struct _uevent_rec w = { .fd = -1, .open_ended = 1 };
	static const uint64_t id = 1;	/* names the event; its records carry none */
	struct _uevent_rec_event ev;
	int err;

	if (__atomic_load_n(&file_head.buf, __ATOMIC_ACQUIRE))
		return 0;
	memset(&ev, 0, sizeof(ev));
	uevent_attr_init(&ev.attr, sizeof(ev.attr), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	ev.attr.sample_period = 1;
	uevent_attr_set_sample_id_all(&ev.attr, PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	ev.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	uevent_attr_set_clock(&ev.attr, CLOCK_MONOTONIC);
	ev.name = _UEVENT_FILE_EVENT;
	ev.ids = &id;
	ev.nids = 1;
	err = _uevent_rec_head(&w, &ev, 1);
	if (err < 0) {
		free(w.buf);
		return err;
	}
	file_head.len = w.len;
	if (!__atomic_compare_exchange_n(&file_head.buf, &(uint8_t *){ NULL }, w.buf, 0,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		free(w.buf);		/* another thread's open made it first: the same bytes */
	return 0;
}

/* All of buf to fd; 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	for (; len; buf += n, len -= (size_t)n) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/*
 * A new file appears with its head whole: written to a temporary file beside it, then
 * linked to its name, which fails with EEXIST if another process made it first. No
 * reader or appender ever sees a file without its head or with two. Where the file
 * system has no hard links, it is made with O_EXCL and the head written at once.
 */
static int file_create(const char *path)
{
	char tmp[PATH_MAX];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write_all(fd, file_head.buf, file_head.len);
	if (!err && link(tmp, path) < 0)
		err = -errno;
	unlink(tmp);
	close(fd);
	if (err != -EPERM && err != -EOPNOTSUPP && err != -ENOSYS)
		return err;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, file_head.buf, file_head.len);
	close(fd);
	return err;
}

/* 0 if the file at fd begins with our head, -EINVAL if it does not (another format,
 * another event layout). An empty file (made by someone else) gets it. */
static int check_head(int fd, const struct stat *st)
{
	uint8_t buf[256];
	size_t at, n;
	ssize_t got;

	if (st->st_size == 0)
		return write_all(fd, file_head.buf, file_head.len);
	for (at = 0; at < file_head.len; at += n) {
		n = file_head.len - at < sizeof(buf) ? file_head.len - at : sizeof(buf);
		got = pread(fd, buf, n, (off_t)at);
		if (got < 0)
			return -errno;
		if ((size_t)got != n || memcmp(buf, file_head.buf + at, n))
			return -EINVAL;
	}
	return 0;
}

/* path opened to append to, checked; the fd, or -errno with the reason set. */
static int open_path(const char *path)
{
	struct stat st;
	int fd, err, made = 0;

	err = make_head();
	if (err < 0) {
		_uevent_set_reason("file: cannot make the file's head: %s", strerror(-err));
		return err;
	}
	/*
	 * The path may be in a shared directory where anyone can plant a name first:
	 * never follow a symlink, never block in open() (a FIFO without a reader would
	 * hang us; with O_NONBLOCK it says ENXIO), and write only a regular file of ours.
	 */
	for (;;) {
		fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0 || errno != ENOENT || made++)
			break;
		err = file_create(path);
		if (err < 0 && err != -EEXIST) {
			_uevent_set_reason("file: cannot open %s: %s", path, strerror(-err));
			return err;
		}
	}
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
	err = check_head(fd, &st);
	if (err < 0) {
		_uevent_set_reason(err == -EINVAL ? "file: %s is not a file-transport capture of "
				   "this libuevent (another format or event layout), refused" :
				   "file: cannot check the head of %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static int file_open(struct _uevent_tstate *ts, const char *path)
{
	int fd = open_path(path);

	if (fd < 0)
		return fd;
	/* a mark still at work from before uevent_close() may read them */
	__atomic_store_n(&ts->fd, fd, __ATOMIC_RELEASE);
	__atomic_store_n(&ts->max_payload, UEVENT_MAX_PAYLOAD, __ATOMIC_RELAXED);
	return 0;
}

/* Every mark is one O_APPEND writev of a whole record, so it lands whole between other
 * processes' writes and is in the file when its emit returns; group-append.h carries
 * many threads' records in one writev. */
static struct _uevent_group_append file_queue;
/* Its address names this thread in the writer's place: a signal handler's mark on the
 * writer writes directly (waiting would wait for itself). initial-exec: no allocation
 * at first use (signal-safe). */
static __thread char file_writer __attribute__((tls_model("initial-exec")));

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
	if (_uevent_ga_held(&file_queue, &file_writer)) {	/* a handler's, on the writer */
		req.next = NULL;
		_uevent_ga_write(&file_queue, __atomic_load_n(&ts->fd, __ATOMIC_ACQUIRE), &req, 1);
		return req.result;
	}
	_uevent_ga_push(&file_queue, &req);
	return _uevent_ga_commit(&file_queue, &ts->fd, &req, &file_writer);
}

/*
 * uevent_open() again, while threads emit: the new file is opened and checked first,
 * then put in place of the old one under the same descriptor number (dup3), while this
 * thread holds the writer's place. So the number never names anything but a file of
 * ours (it is never closed, so never reused for another file or a socket), and no
 * batch or undo of a short write is in flight across the swap: each record goes whole
 * into the old file or the new one, once; those pushed meanwhile wait for the new one.
 * The new description is O_APPEND as the old one was. If the new file is refused, the
 * old one stays open (and in use by any mark already past the transport's check).
 */
static int file_reopen(struct _uevent_tstate *ts, const char *path)
{
	int fd = open_path(path), ret, err;

	if (fd < 0)
		return fd;
	_uevent_ga_lock(&file_queue, &file_writer);
	do
		ret = dup3(fd, ts->fd, O_CLOEXEC);
	while (ret < 0 && errno == EINTR);
	err = ret < 0 ? -errno : 0;
	_uevent_ga_unlock(&file_queue);
	close(fd);
	if (err < 0)
		_uevent_set_reason("file: cannot put %s in place of the file in use: %s", path,
				   strerror(-err));
	return err;
}

/*
 * uevent_close(): threads that saw the transport active before it was switched off may
 * still be in file_write. The number is closed while this thread holds the writer's
 * place, -1 put in its stead, so a later writer's records fail with EBADF (counted
 * dropped) rather than go to whatever reuses the number. In a fork child (emit.c closes
 * every transport there) the parent's other threads, a writer among them, did not come
 * along; nobody is writing, and emit.c closes the fd.
 */
static void file_close(struct _uevent_tstate *ts)
{
	int fd = ts->fd;

	if (ts->pid != getpid()) {
		_uevent_ga_reset(&file_queue);
		return;
	}
	if (fd < 0)
		return;
	_uevent_ga_lock(&file_queue, &file_writer);
	__atomic_store_n(&ts->fd, -1, __ATOMIC_RELAXED);
	close(fd);
	_uevent_ga_unlock(&file_queue);
}

const struct _uevent_transport_ops _uevent_file_ops = {
	.open = file_open, .reopen = file_reopen, .write = file_write, .close = file_close,
	.always = 1,
};
