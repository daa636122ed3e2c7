/* transport-user-events.c - user_events: the libuevent_v1 tracepoint, Linux >= 6.4. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/user_events.h>

#include "internal.h"
#include "transport.h"

int _uevent_user_events_register(int fd, volatile uint32_t *word, int bit,
				 uint32_t *write_index)
{
	struct user_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = (uint8_t)bit;
	reg.enable_size = sizeof(*word);
	reg.enable_addr = (uintptr_t)word;
	reg.name_args = (uintptr_t)(_UEVENT_USER_EVENT_NAME " " _UEVENT_USER_EVENT_ARGS);
	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;
	*write_index = reg.write_index;
	return 0;
}

static int user_events_open(struct _uevent_tstate *ts, const char *path)
{
	int fd, err;

	(void)path;
	err = _uevent_tracefs_open("user_events_data", O_RDWR, &fd, "user_events");
	if (err)
		return err;
	err = _uevent_user_events_register(fd, &_uevent_word, _UEVENT_EN_USER_EVENTS_BIT,
					   &ts->write_index);
	if (err < 0) {
		_uevent_set_reason("user_events: register %s: %s", _UEVENT_USER_EVENT_NAME,
				   strerror(-err));
		close(fd);
		return err;
	}
	ts->fd = fd;
	ts->registered = 1;
	/* perf's tracepoint path drops entries over 8 KiB while write() succeeds. */
	ts->max_payload = UEVENT_MAX_PAYLOAD;
	return 0;
}

/*
 * Drop our user_events enabler so the kernel stops writing bit 31 (and clears it).
 * A forked child inherits the parent's enabler in its copy of the address space and
 * must drop it before it can register the same address and bit again (EADDRINUSE).
 */
static void user_events_close(struct _uevent_tstate *ts)
{
	struct user_unreg unreg;

	if (!ts->registered || ts->fd < 0)
		return;
	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_bit = _UEVENT_EN_USER_EVENTS_BIT;
	unreg.disable_addr = (uintptr_t)&_uevent_word;
	ioctl(ts->fd, DIAG_IOCSUNREG, &unreg);
	ts->registered = 0;
}

/* The kernel's enable bit says whether a tracer has the tracepoint enabled. */
static int user_events_write(struct _uevent_tstate *ts, uint32_t type, const void *data,
			     size_t size, uint32_t word)
{
	uint32_t rel_loc = (uint32_t)size << 16;	/* data right after the field */
	struct iovec iov[4] = {
		{ &ts->write_index, sizeof(ts->write_index) },
		{ &type, sizeof(type) },
		{ &rel_loc, sizeof(rel_loc) },
		{ (void *)data, size },
	};

	if (!(word & (1u << _UEVENT_EN_USER_EVENTS_BIT)))
		return 1;
	return writev(ts->fd, iov, 4) < 0 ? -errno : 0;
}

const struct _uevent_transport_ops _uevent_user_events_ops = {
	.open = user_events_open, .write = user_events_write, .close = user_events_close,
};
