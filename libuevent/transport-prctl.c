/* transport-prctl.c - PR_TASK_PERF_UEVENT: every perf buffer watching the task, on our kernel. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "transport.h"

/*
 * CAP_PERFMON or CAP_SYS_ADMIN in the effective set: the kernel tells only such callers
 * how many buffers took a mark (perfmon_capable()); to others it answers 0 whether or
 * not anyone listens. (In a user namespace the kernel tells nothing though capget()
 * shows the capability: marks are then counted observed, never wrongly unobserved.)
 */
static int perfmon_capable(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned int caps[] = { CAP_PERFMON, CAP_SYS_ADMIN };
	unsigned int i;

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	for (i = 0; i < ARRAY_SIZE(caps); i++)
		if (d[caps[i] / 32].effective & (1u << (caps[i] % 32)))
			return 1;
	return 0;
}

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
	ts->told = perfmon_capable();
	/*
	 * A kernel that keeps an enable word (patch 0007) sets our bit while a listener
	 * can see one of our threads: a disabled mark is then one load, no system call.
	 * Without it (older series, or the registration refused) ALWAYS stands in.
	 */
	ts->registered = 0;
	if ((abi.features & PERF_UEVENT_FEAT_ENABLE_WORD) &&
	    prctl(PR_TASK_PERF_UEVENT, (unsigned long)_UEVENT_EN_PRCTL_BIT, 0UL,
		  (unsigned long)&_uevent_word, PR_PERF_UEVENT_ENABLE_WORD) == 0)
		ts->registered = 1;
	return 0;
}

/* Drop the kernel's enabler (it stops writing bit 30) and clear the bit it left. */
static void prctl_close(struct _uevent_tstate *ts)
{
	if (!ts->registered)
		return;
	prctl(PR_TASK_PERF_UEVENT, (unsigned long)_UEVENT_EN_PRCTL_BIT, 0UL,
	      (unsigned long)&_uevent_word, PR_PERF_UEVENT_UNREG_WORD);
	__atomic_fetch_and(&_uevent_word, ~(1u << _UEVENT_EN_PRCTL_BIT), __ATOMIC_RELEASE);
	ts->registered = 0;
}

/* The kernel answers how many buffers took the mark: 0 is nobody listening, when it
 * tells us (see perfmon_capable()); when it does not, the mark counts as delivered. */
static int prctl_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		       uint32_t word)
{
	int ret;

	/* With the kernel's bit clear nobody listens to us: no system call. */
	if (ts->registered && !(word & (1u << _UEVENT_EN_PRCTL_BIT)))
		return 1;
	ret = prctl(PR_TASK_PERF_UEVENT, (unsigned long)type, (unsigned long)size,
		    (unsigned long)data, 0UL);
	if (ret < 0)
		return -errno;
	return ret == 0 && ts->told;
}

const struct _uevent_transport_ops _uevent_prctl_ops = {
	.open = prctl_open, .write = prctl_write, .close = prctl_close, .always = 1,
};
