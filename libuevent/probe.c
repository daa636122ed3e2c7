/* probe.c - what the running kernel and machine support, each from a real probe. */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "bpf-context.h"
#include "internal.h"

/* The tracefs mount, found by file-system magic so that a directory we may not
 * enter (tracefs is root-only by default) still counts as there, just denied. */
const char *_uevent_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	unsigned int i;
	struct statfs sfs;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (statfs(dirs[i], &sfs) == 0 && (unsigned long)sfs.f_type == TRACEFS_MAGIC)
			return dirs[i];
	return NULL;
}

/*
 * The numbers the running kernel speaks must be the ones this library was built with
 * (kernel/include/uapi/linux/perf_uevent.h): a kernel whose series moved a number
 * would have its records misparsed and its attr bits misread. No ~0U TLS bit is a
 * kernel without PERF_SAMPLE_TLS_USER, which is fine.
 */
static int abi_mismatch(const struct uevent_kernel_abi *k)
{
	if (k->record_type != PERF_RECORD_UEVENT)
		return _uevent_reason("kernel ABI: record type %u, this library's is %u",
				      k->record_type, PERF_RECORD_UEVENT), 1;
	if (k->attr_uevents_bit != PERF_ATTR_UEVENTS_BIT)
		return _uevent_reason("kernel ABI: attr.uevents bit %u, this library's is %u",
				      k->attr_uevents_bit, PERF_ATTR_UEVENTS_BIT), 1;
	if (k->sample_tls_user_bit != PERF_SAMPLE_TLS_USER_BIT && k->sample_tls_user_bit != ~0U)
		return _uevent_reason("kernel ABI: PERF_SAMPLE_TLS_USER bit %u, this library's is %u",
				      k->sample_tls_user_bit, PERF_SAMPLE_TLS_USER_BIT), 1;
	if (k->format < PERF_UEVENT_FORMAT_V1 || !k->max_payload)
		return _uevent_reason("kernel ABI: format %u, max payload %u: none this library reads",
				      k->format, k->max_payload), 1;
	return 0;
}

int _uevent_prctl_query(struct uevent_kernel_abi *out)
{
	struct perf_uevent_abi abi;

	memset(&abi, 0, sizeof(abi));
	if (prctl(PR_TASK_PERF_UEVENT, 0UL, (unsigned long)sizeof(abi), (unsigned long)&abi,
		  PR_PERF_UEVENT_QUERY) < 0)
		return -errno;
	/* An old kernel that wrote less leaves the rest 0. */
	out->format = abi.format;
	out->record_type = abi.record_type;
	out->max_payload = abi.max_payload;
	out->attr_uevents_bit = abi.attr_uevents_bit;
	out->sample_tls_user_bit = abi.sample_tls_user_bit;
	out->listeners = abi.listeners;
	out->features = abi.features;
	if (abi_mismatch(out))
		return -EPROTO;
	return 0;
}

UEVENT_EXPORT int uevent_kernel_abi(struct uevent_kernel_abi *abi)
{
	int err;

	if (!abi)
		return _uevent_err(EINVAL);
	err = _uevent_prctl_query(abi);
	return err < 0 ? _uevent_err(-err) : 0;
}

UEVENT_EXPORT int uevent_perf_paranoid(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return _uevent_err(errno);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return _uevent_err(EIO);
	buf[n] = 0;
	return atoi(buf);
}

static int perf_open(struct perf_event_attr *attr)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static void base_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = 1;
}

static void fill(struct uevent_feature_info *info, int state, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fill(struct uevent_feature_info *info, int state, int err, const char *fmt, ...)
{
	va_list ap;

	info->state = state;
	info->err = err;
	va_start(ap, fmt);
	vsnprintf(info->detail, sizeof(info->detail), fmt, ap);
	va_end(ap);
}

/* Turn a perf_event_open result for feature `what` into a verdict. */
static void perf_verdict(struct uevent_feature_info *info, int ret, const char *what)
{
	if (ret == 0)
		fill(info, UEVENT_FEAT_PRESENT, 0, "perf_event_open accepts %s", what);
	else if (ret == -EINVAL || ret == -E2BIG || ret == -EOPNOTSUPP || ret == -ENOSYS)
		fill(info, UEVENT_FEAT_ABSENT, -ret, "kernel refuses %s (%s)", what, strerror(-ret));
	else if (ret == -EACCES || ret == -EPERM)
		fill(info, UEVENT_FEAT_DENIED, -ret, "not allowed (%s; perf_event_paranoid=%d)",
		     strerror(-ret), uevent_perf_paranoid());
	else
		fill(info, UEVENT_FEAT_UNKNOWN, -ret, "perf_event_open: %s", strerror(-ret));
}

static void probe_tracefs_file(struct uevent_feature_info *info, const char *name, int mode)
{
	const char *dir = _uevent_tracefs();
	char path[128];
	int fd;

	if (!dir) {
		fill(info, UEVENT_FEAT_UNKNOWN, ENOENT, "tracefs not mounted, cannot tell");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, mode | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		fill(info, UEVENT_FEAT_PRESENT, 0, "%s", path);
	} else if (errno == ENOENT) {
		fill(info, UEVENT_FEAT_ABSENT, ENOENT, "no %s", path);
	} else if (errno == EACCES || errno == EPERM) {
		fill(info, UEVENT_FEAT_DENIED, errno, "%s: %s", path, strerror(errno));
	} else {
		fill(info, UEVENT_FEAT_UNKNOWN, errno, "%s: %s", path, strerror(errno));
	}
}

UEVENT_EXPORT int uevent_feature_probe(int feature, struct uevent_feature_info *info)
{
	struct perf_event_attr a;
	struct uevent_kernel_abi abi;
	char why[200];
	int ret, err;

	if (!info)
		return _uevent_err(EINVAL);
	memset(info, 0, sizeof(*info));
	switch (feature) {
	case UEVENT_FEAT_PRCTL:
		ret = _uevent_prctl_query(&abi);
		if (ret == 0)
			fill(info, UEVENT_FEAT_PRESENT, 0,
			     "format %u, record type %u, max payload %u, listeners %u, %s",
			     abi.format, abi.record_type, abi.max_payload, abi.listeners,
			     abi.features & PERF_UEVENT_FEAT_ENABLE_WORD
			     ? "enable word (a mark nobody hears is one load)"
			     : "no enable word (a mark nobody hears costs a prctl)");
		else if (ret == -EPROTO)
			fill(info, UEVENT_FEAT_ABSENT, EPROTO, "%s", uevent_reason());
		else if (ret == -EINVAL)
			fill(info, UEVENT_FEAT_ABSENT, EINVAL, "prctl(PR_TASK_PERF_UEVENT): EINVAL");
		else
			fill(info, UEVENT_FEAT_UNKNOWN, -ret, "prctl query: %s", strerror(-ret));
		break;
	case UEVENT_FEAT_PERF_EVENTS:
		base_attr(&a);
		perf_verdict(info, perf_open(&a), "a user-only software event");
		break;
	case UEVENT_FEAT_ATTR_UEVENTS:
		/* A kernel that reports other numbers than ours: its bit 63 is not ours. */
		if (_uevent_prctl_query(&abi) == -EPROTO) {
			fill(info, UEVENT_FEAT_ABSENT, EPROTO, "%s", uevent_reason());
			break;
		}
		base_attr(&a);
		a.uevents = 1;
		a.sample_id_all = 1;
		perf_verdict(info, perf_open(&a), "attr.uevents");
		break;
	case UEVENT_FEAT_SAMPLE_TLS_USER:
		ret = _uevent_prctl_query(&abi);
		if (ret == -EPROTO) {
			fill(info, UEVENT_FEAT_ABSENT, EPROTO, "%s", uevent_reason());
			break;
		}
		if (ret == 0 && abi.sample_tls_user_bit == ~0U) {
			fill(info, UEVENT_FEAT_ABSENT, ENOSYS,
			     "the kernel's ABI query reports no PERF_SAMPLE_TLS_USER");
			break;
		}
		base_attr(&a);
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 1000000;
		a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TLS_USER;
		a.sample_tls_user = 64;
		perf_verdict(info, perf_open(&a), "PERF_SAMPLE_TLS_USER");
		break;
	case UEVENT_FEAT_THREAD_CONTEXT:
		/* The registration is per thread; the probe must not undo the caller's. */
		ret = _uevent_prctl_query(&abi);
		if (ret == 0 && (abi.features & PERF_UEVENT_FEAT_TLS_AREA))
			fill(info, UEVENT_FEAT_PRESENT, 0,
			     "samples with TLS_USER >= %d bytes carry the thread's OTEP 4947 "
			     "record", UEVENT_THREAD_CONTEXT_HEADER_SIZE);
		else if (ret == -EPROTO)
			fill(info, UEVENT_FEAT_ABSENT, EPROTO, "%s", uevent_reason());
		else
			fill(info, UEVENT_FEAT_ABSENT, ret ? -ret : ENOSYS,
			     "no PR_PERF_TLS_AREA: samples carry no context "
			     "(uevent_thread_context_set() still works)");
		break;
	case UEVENT_FEAT_BPF_CONTEXT:
		/* loads and unloads the programs: what a session asked for context does */
		err = _uevent_bpf_ctx_probe(why, sizeof(why));
		fill(info, err ? (err == -EPERM || err == -EACCES ? UEVENT_FEAT_DENIED :
				  UEVENT_FEAT_ABSENT) : UEVENT_FEAT_PRESENT, -err, "%s", why);
		break;
	case UEVENT_FEAT_BPF_EVENT:
		base_attr(&a);
		a.bpf_event = 1;
		a.ksymbol = 1;
		perf_verdict(info, perf_open(&a), "attr.bpf_event");
		break;
	case UEVENT_FEAT_AUX_SAMPLE: {
		/* Needs an AUX PMU as group leader; without one it cannot be used here. */
		static const char *const pmus[] = { "intel_pt", "cs_etm", "arm_spe_0" };
		char path[96];
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(pmus); i++) {
			snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
				 pmus[i]);
			if (access(path, R_OK) == 0)
				break;
		}
		if (i == ARRAY_SIZE(pmus)) {
			fill(info, UEVENT_FEAT_ABSENT, ENODEV,
			     "no AUX-capable PMU (intel_pt, cs_etm, arm_spe)");
			break;
		}
		fill(info, UEVENT_FEAT_PRESENT, 0, "AUX PMU %s (group-leader form)", pmus[i]);
		break;
	}
	case UEVENT_FEAT_USER_EVENTS:
		probe_tracefs_file(info, "user_events_data", O_RDWR);
		break;
	case UEVENT_FEAT_UPROBES:
		if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0)
			fill(info, UEVENT_FEAT_PRESENT, 0, "uprobe PMU present");
		else
			fill(info, UEVENT_FEAT_ABSENT, ENOENT, "no uprobe PMU in sysfs");
		break;
	case UEVENT_FEAT_TRACEFS: {
		const char *dir = _uevent_tracefs();

		if (!dir)
			fill(info, UEVENT_FEAT_ABSENT, ENOENT,
			     "not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		else if (access(dir, R_OK | X_OK) < 0)
			fill(info, UEVENT_FEAT_DENIED, errno, "%s: %s", dir, strerror(errno));
		else
			fill(info, UEVENT_FEAT_PRESENT, 0, "%s", dir);
		break;
	}
	default:
		return _uevent_err(EINVAL);
	}
	return 0;
}

UEVENT_EXPORT const char *uevent_feature_name(int feature)
{
	static const char *const names[UEVENT_FEAT_COUNT] = {
		"prctl", "attr_uevents", "user_events", "uprobes", "tracefs",
		"sample_tls_user", "aux_sample", "bpf_event", "perf_events", "thread_context",
		"bpf_context",
	};

	if (feature < 0 || feature >= UEVENT_FEAT_COUNT)
		return NULL;
	return names[feature];
}

UEVENT_EXPORT const char *uevent_version(void)
{
	return PACKAGE_VERSION;
}

UEVENT_EXPORT const char *uevent_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case E2BIG:	return "payload larger than the transport accepts";
	case EFAULT:	return "bad pointer";
	case ENODEV:	return "transport not available on this system";
	case EPROTO:	return "unknown record format";
	/* what a write to trace_marker_raw says when its buffer is off */
	case EBADF:	return "the transport's file takes no writes (closed, or ftrace "
			       "with tracing_on 0 in its buffer)";
	default:	return strerror(err);
	}
}
