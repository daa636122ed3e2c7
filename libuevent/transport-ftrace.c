/* transport-ftrace.c - trace_marker_raw: the ftrace buffer, trace-cmd (not perf). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"
#include "transport.h"

int _uevent_tracefs_open(const char *name, int flags, int *fdp, const char *tname)
{
	const char *dir = _uevent_tracefs();
	char path[128];
	int fd;

	if (!dir) {
		_uevent_set_reason("%s: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)",
			   tname);
		return -ENODEV;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		_uevent_set_reason("%s: cannot open %s: %s", tname, path, strerror(err));
		return err == ENOENT ? -ENODEV : -err;
	}
	*fdp = fd;
	return 0;
}

/*
 * UEVENT_FTRACE_INSTANCE=NAME writes into the tracefs instance NAME (instances/NAME, as
 * made by `mkdir` there or `trace-cmd record -B NAME`) instead of the top buffer.
 */
static int ftrace_open(struct _uevent_tstate *ts, const char *path)
{
	const char *inst = getenv("UEVENT_FTRACE_INSTANCE");
	char name[128];
	int fd, err;

	(void)path;
	if (inst && *inst) {
		if (strchr(inst, '/') || !strcmp(inst, ".") || !strcmp(inst, "..") ||
		    (size_t)snprintf(name, sizeof(name), "instances/%s/trace_marker_raw", inst) >=
		    sizeof(name)) {
			_uevent_set_reason("ftrace: UEVENT_FTRACE_INSTANCE=%s is not an instance name",
					   inst);
			return -EINVAL;
		}
	} else {
		strcpy(name, "trace_marker_raw");
	}
	err = _uevent_tracefs_open(name, O_WRONLY, &fd, "ftrace");
	if (err)
		return err;
	ts->fd = fd;
	/* trace_marker_raw takes what fits one ring-buffer event; our id, type, size first. */
	ts->max_payload = 4096 - 3 * sizeof(uint32_t) - 64;
	return 0;
}

/* trace_marker_raw has no write_iter: one write() is one entry, so copy. */
static int ftrace_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
			uint32_t word)
{
	uint32_t buf[3 + UEVENT_MAX_PAYLOAD / 4];
	size_t len = 3 * sizeof(uint32_t) + size;
	ssize_t ret;

	(void)word;
	buf[0] = _UEVENT_FTRACE_ID;
	buf[1] = type;
	buf[2] = (uint32_t)size;
	memcpy(&buf[3], data, size);
	ret = write(ts->fd, buf, len);
	if (ret < 0)
		return -errno;
	return (size_t)ret == len ? 0 : -EIO;
}

const struct _uevent_transport_ops _uevent_ftrace_ops = {
	.open = ftrace_open, .write = ftrace_write, .always = 1,
};
