/* attr.c - perf_event_attr helpers, and perf_event_open naming the feature a kernel lacks. */
#include "config.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"

/* ---- attr helpers ------------------------------------------------------------------ */

/* Does an attr of attr->size bytes reach the end of the field at off+len? */
static int attr_has(const struct perf_event_attr *attr, size_t end)
{
	return attr->size >= end;
}

#define ATTR_END(f) (offsetof(struct perf_event_attr, f) + sizeof(((struct perf_event_attr *)0)->f))

UEVENT_EXPORT int uevent_attr_init(struct perf_event_attr *attr, size_t attr_size, uint32_t type,
				   uint64_t config)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > 4096)
		return _uevent_err(E2BIG);
	memset(attr, 0, attr_size);
	attr->size = (uint32_t)attr_size;
	attr->type = type;
	attr->config = config;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_uevents(struct perf_event_attr *attr, int on)
{
	if (!attr)
		return _uevent_err(EINVAL);
	attr->uevents = on ? 1 : 0;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_bpf_event(struct perf_event_attr *attr, int on)
{
	if (!attr)
		return _uevent_err(EINVAL);
	attr->bpf_event = on ? 1 : 0;
	attr->ksymbol = on ? 1 : 0;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_tls_user(struct perf_event_attr *attr, uint32_t bytes)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (bytes > UINT16_MAX || !attr_has(attr, ATTR_END(sample_tls_user)))
		return _uevent_err(E2BIG);
	attr->sample_tls_user = (uint16_t)bytes;
	if (bytes)
		attr->sample_type |= PERF_SAMPLE_TLS_USER;
	else
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_TLS_USER;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_aux_sample(struct perf_event_attr *attr, uint32_t bytes)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (!attr_has(attr, ATTR_END(aux_sample_size)))
		return _uevent_err(E2BIG);
	attr->aux_sample_size = bytes;
	if (bytes)
		attr->sample_type |= PERF_SAMPLE_AUX;
	else
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_AUX;
	return 0;
}


UEVENT_EXPORT int uevent_attr_set_sample_id_all(struct perf_event_attr *attr, uint64_t st)
{
	if (!attr || (st & ~(uint64_t)_UEVENT_ID_BITS))
		return _uevent_err(EINVAL);
	attr->sample_id_all = 1;
	attr->sample_type |= st;
	return 0;
}

UEVENT_EXPORT int uevent_attr_set_clock(struct perf_event_attr *attr, int clockid)
{
	if (!attr)
		return _uevent_err(EINVAL);
	if (clockid < 0) {
		attr->use_clockid = 0;
		attr->clockid = 0;
	} else {
		attr->use_clockid = 1;
		attr->clockid = clockid;
	}
	return 0;
}

/* ---- perf_event_open --------------------------------------------------------------- */

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			       unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* The features a kernel may lack; feat_has/feat_clear take them out of an attr. */
static const struct {
	const char *name;
} features[] = {
	{ "attr.uevents" },
	{ "PERF_SAMPLE_TLS_USER (attr.sample_tls_user)" },
	{ "PERF_SAMPLE_AUX (attr.aux_sample_size)" },
	{ "attr.bpf_event/attr.ksymbol" },
	{ "attr.use_clockid" },
};

static int feat_has(int i, const struct perf_event_attr *a)
{
	switch (i) {
	case 0: return a->uevents;
	case 1: return (a->sample_type & PERF_SAMPLE_TLS_USER) || a->sample_tls_user;
	case 2: return (a->sample_type & PERF_SAMPLE_AUX) || a->aux_sample_size;
	case 3: return a->bpf_event || a->ksymbol;
	case 4: return a->use_clockid;
	}
	return 0;
}

static void feat_clear(int i, struct perf_event_attr *a)
{
	switch (i) {
	case 0: a->uevents = 0; break;
	case 1: a->sample_type &= ~(uint64_t)PERF_SAMPLE_TLS_USER; a->sample_tls_user = 0; break;
	case 2: a->sample_type &= ~(uint64_t)PERF_SAMPLE_AUX; a->aux_sample_size = 0; break;
	case 3: a->bpf_event = 0; a->ksymbol = 0; break;
	case 4: a->use_clockid = 0; a->clockid = 0; break;
	}
}

UEVENT_EXPORT int uevent_perf_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
				   unsigned long flags)
{
	struct perf_event_attr copy;
	unsigned long kflags;
	int fd, err;
	size_t i;

	if (!attr)
		return _uevent_err(EFAULT);
	kflags = flags & ~(unsigned long)UEVENT_PERF_FLAG_NO_CLOEXEC;
	if (!(flags & UEVENT_PERF_FLAG_NO_CLOEXEC))
		kflags |= PERF_FLAG_FD_CLOEXEC;
	_uevent_reason("%s", "");
	fd = sys_perf_event_open(attr, pid, cpu, group_fd, kflags);
	if (fd >= 0)
		return fd;
	err = errno;
	_uevent_reason("perf_event_open: %s", strerror(err));
	if ((err != EINVAL && err != E2BIG) || attr->size > sizeof(copy))
		return _uevent_err(err);
	/* Which of our features does this kernel refuse? Take each out and ask again. */
	for (i = 0; i < ARRAY_SIZE(features); i++) {
		if (!feat_has((int)i, attr))
			continue;
		memset(&copy, 0, sizeof(copy));
		memcpy(&copy, attr, attr->size);
		feat_clear((int)i, &copy);
		fd = sys_perf_event_open(&copy, pid, cpu, group_fd, kflags);
		if (fd >= 0) {
			close(fd);
			_uevent_reason("%s is not supported by this kernel (perf_event_open: %s)",
				       features[i].name, strerror(err));
			return _uevent_err(EOPNOTSUPP);
		}
	}
	return _uevent_err(err);
}


