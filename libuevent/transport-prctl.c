/* transport-prctl.c - PR_TASK_PERF_UEVENT: every perf buffer watching the task, on our kernel. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include <linux/perf_uevent.h>

#include "internal.h"
#include "transport.h"

static int prctl_open(struct _uevent_tstate *ts, const char *path)
{
	struct uevent_kernel_abi abi;
	int err = _uevent_prctl_query(&abi);

	(void)path;
	if (err == -EPROTO) {
		char why[200];

		/* the kernel speaks other numbers than ours: use it not at all */
		snprintf(why, sizeof(why), "%s", uevent_reason());
		_uevent_set_reason("prctl: %s", why);
		return -EPROTO;
	}
	if (err < 0) {
		_uevent_set_reason("prctl: kernel lacks PR_TASK_PERF_UEVENT (%s)", strerror(-err));
		return err == -EINVAL ? -ENODEV : err;
	}
	ts->max_payload = abi.max_payload < UEVENT_MAX_PAYLOAD ? abi.max_payload
								 : UEVENT_MAX_PAYLOAD;
	return 0;
}

/* The kernel answers how many buffers took the mark: 0 is nobody listening. */
static int prctl_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		       uint32_t word)
{
	int ret = prctl(PR_TASK_PERF_UEVENT, (unsigned long)type, (unsigned long)size,
			(unsigned long)data, 0UL);

	(void)ts;
	(void)word;
	if (ret < 0)
		return -errno;
	return ret == 0;
}

const struct _uevent_transport_ops _uevent_prctl_ops = {
	.open = prctl_open, .write = prctl_write, .always = 1,
};
