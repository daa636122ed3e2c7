/* session-open.c - a session's set-up: its transports' events found and made, opened per
 * CPU and task into their rings, and how each is configured. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "bpf-context.h"
#include "session-internal.h"

void _uevent_add_reason(struct uevent_session *s, const char *fmt, ...)
{
	size_t n = strlen(s->reason);
	va_list ap;

	if (n && n < sizeof(s->reason) - 2) {
		s->reason[n++] = ';';
		s->reason[n++] = ' ';
		s->reason[n] = 0;
	}
	va_start(ap, fmt);
	vsnprintf(s->reason + n, sizeof(s->reason) - n, fmt, ap);
	va_end(ap);
	_uevent_reason("%s", s->reason);	/* the session's whole story, on the channel */
}

static int setup_usdt(struct uevent_session *s, uint64_t *config, int *want)
{
	struct usdt_obj *o;
	char path[PATH_MAX];
	struct stat st;
	Dl_info info;
	int err, c, created;

	if (s->o.usdt_path) {
		if (!realpath(s->o.usdt_path, path))
			return -errno;
	} else {
		if (!dladdr((const void *)&_uevent_word, &info) || !info.dli_fname ||
		    !realpath(info.dli_fname, path))
			return -ENOENT;
	}
	if (stat(path, &st) < 0)
		return -errno;
	snprintf(s->usdt_path, sizeof(s->usdt_path), "%s", path);
	o = _uevent_usdt_obj_get(s, major(st.st_dev), minor(st.st_dev), st.st_ino, &created);
	if (!o)
		return -ENOMEM;
	o->probes = 1;
	_uevent_usdt_reap();
	err = _uevent_usdt_obj_events(s, o, path);
	snprintf(s->usdt_group, sizeof(s->usdt_group), "%s", o->group);
	for (c = 0; c < USDT_CLASSES; c++) {
		/* the session's own object: its events are the usdt kinds' first */
		s->tp_format[K_USDT + c] = o->format[c];
		o->format[c] = NULL;
		config[K_USDT + c] = o->config[c];
		want[K_USDT + c] = !err && (o->events & (1u << c));
	}
	return err;
}

static int setup_user_events(struct uevent_session *s, uint64_t *config)
{
	const char *dir = _uevent_tracefs();
	char path[256], fmt[8192];
	uint32_t write_index;
	int fd, id, err;

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/user_events_data", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Registering it ourselves makes the tracepoint exist before any emitter runs. */
	err = _uevent_user_events_register(fd, &s->user_word, 0, &write_index);
	if (err < 0) {
		close(fd);
		return err;
	}
	s->user_fd = fd;
	id = _uevent_tracepoint_id("user_events", _UEVENT_USER_EVENT_NAME, fmt, sizeof(fmt));
	if (id >= 0)
		s->tp_format[K_USER] = strdup(fmt);
	if (id < 0 || uevent_raw_layout_from_format(&s->fmt[K_USER].raw, fmt) < 0 ||
	    s->fmt[K_USER].raw.kind != UEVENT_RAW_USER_EVENTS)
		return id < 0 ? id : -EINVAL;
	*config = (uint64_t)id;
	return 0;
}

int _uevent_push_fd(struct uevent_session *s, int fd, int kind)
{
	uint64_t id;

	if (s->nfds == s->fds_cap) {
		size_t n = s->fds_cap ? s->fds_cap * 2 : 16;
		int *p = realloc(s->fds, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->fds = p;
		s->fds_cap = n;
	}
	s->fds[s->nfds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	if (s->nids == s->ids_cap) {
		size_t n = s->ids_cap ? s->ids_cap * 2 : 16;
		struct idmap *p = realloc(s->ids, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->ids = p;
		s->ids_cap = n;
	}
	s->ids[s->nids].id = id;
	s->ids[s->nids].kind = kind;
	s->ids[s->nids].obj = 0;
	s->ids[s->nids].alias = 0;
	s->nids++;
	return 0;
}


/* An event's name, as perf names it: "dummy", "libuevent:emit16", "user_events:...". */
static void kind_name(int k, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s",
		 k == K_DUMMY ? "dummy" : is_usdt(k) ? _UEVENT_USDT_FILE_GROUP :
		 k == K_USER ? "user_events:" _UEVENT_USER_EVENT_NAME : "cpu-clock",
		 is_usdt(k) ? ":" : "", is_usdt(k) ? _uevent_usdt_class_name[k - K_USDT] : "");
}

/* The session's events: the kinds it opens, numbered in order (as record_to lists them). */
static void number_events(struct uevent_session *s)
{
	int k;

	s->nev = 0;
	for (k = 0; k < K_COUNT; k++) {
		s->kind_ev[k] = -1;
		if (!s->want[k])
			continue;
		s->kind_ev[k] = s->nev;
		kind_name(k, s->ev_name[s->nev], sizeof(s->ev_name[0]));
		s->nev++;
	}
}

/* Samples a wake-up of the reader by default (wakeup_events 0). */
#define SAMPLE_WAKEUP	64

void _uevent_session_make_attr(const struct uevent_session *s, int kind, uint64_t config,
		      struct perf_event_attr *a)
{
	uevent_attr_init(a, sizeof(*a), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	a->sample_type = BASE_ST;
	a->sample_id_all = 1;
	a->sample_period = 1;
	a->inherit = !(s->o.flags & UEVENT_SESSION_NO_INHERIT);
	a->disabled = !!(s->o.flags & UEVENT_SESSION_DISABLED);
	a->wakeup_events = s->o.wakeup_events ? s->o.wakeup_events : 1;
	a->write_backward = !!(s->o.flags & UEVENT_SESSION_OVERWRITE);
	uevent_attr_set_clock(a, CLOCK_MONOTONIC);
	switch (kind) {
	case K_DUMMY:
		a->uevents = !!(s->transports & (1u << UEVENT_TRANSPORT_PRCTL));
		if (s->o.flags & UEVENT_SESSION_ALL_RECORDS) {
			a->comm = a->task = a->mmap = a->mmap2 = 1;
			a->context_switch = 0;
		}
		if (s->o.flags & UEVENT_SESSION_BPF_EVENTS)
			uevent_attr_set_bpf_event(a, 1);
		if (s->anchor_tree) {
			/*
			 * FORK records must wake us at once (anchors), but only samples
			 * count towards wakeup_events: this event owns the ring, whose
			 * watermark of one byte wakes the reader on every record.
			 */
			a->task = 1;
			a->mmap = a->mmap2 = 1;	/* executable mappings: probes */
			a->comm = 1;		/* names for a recording's readers (perf script) */
			a->watermark = 1;
			a->wakeup_watermark = 1;
		}
		break;
	case K_USDT ... K_USDT_LAST:
	case K_USER:
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = config;
		a->sample_type |= PERF_SAMPLE_RAW;
		break;
	case K_SAMPLES:
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		a->sample_period = s->o.sample_period_ns;
		a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
		a->exclude_kernel = 1;
		if (s->o.flags & UEVENT_SESSION_CALLCHAIN) {
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
			a->exclude_callchain_kernel = 1;
		}
		if (s->o.tls_user)
			uevent_attr_set_tls_user(a, s->o.tls_user);
		/* a wake-up a sample costs the sampled program more than the sample (a
		 * profiler at 10 us ran it 10x slower): every 64 unless asked */
		if (!s->o.wakeup_events)
			a->wakeup_events = SAMPLE_WAKEUP;
		break;
	}
}

/* Threads of pid (or {-1} for every process). */
int _uevent_list_tasks(int pid, int **out)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int *t = NULL, n = 0, cap = 0;

	if (pid < 0) {
		*out = malloc(sizeof(int));
		if (!*out)
			return -ENOMEM;
		**out = -1;
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;	/* no such process */
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		if (n == cap) {
			int *p = realloc(t, (size_t)(cap = cap ? cap * 2 : 8) * sizeof(int));

			if (!p) {
				free(t);
				closedir(dir);
				return -ENOMEM;
			}
			t = p;
		}
		t[n++] = atoi(d->d_name);
	}
	closedir(dir);
	*out = t;
	return n ? n : -ESRCH;
}

/*
 * Parses a CPU list ("0-3,7", as perf -C takes) into want[0..ncpu): 0, or -EINVAL for
 * a malformed list or a CPU this system does not have.
 */
static int parse_cpus(const char *list, unsigned char *want, long ncpu)
{
	const char *p = list;
	int any = 0;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -EINVAL;
			p = end;
		}
		if (b >= ncpu)
			return -EINVAL;
		for (; a <= b; a++)
			want[a] = 1;
		any = 1;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL;
	}
	return any ? 0 : -EINVAL;
}

/*
 * Linux >= 6.0 counts, per event, the records it could not write for a full ring
 * (PERF_FORMAT_LOST; an inherited event's count is its parent's). The ring's LOST
 * record only comes with its next record, which may never come: the counts read at
 * the end are the exact figure.
 */
static int lost_format_supported(void)
{
	static int known;	/* 1: no, 2: yes */
	struct perf_event_attr a;
	int fd;

	if (!__atomic_load_n(&known, __ATOMIC_RELAXED)) {
		uevent_attr_init(&a, sizeof(a), PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
		a.read_format = PERF_FORMAT_LOST;
		a.disabled = 1;
		a.exclude_kernel = a.exclude_hv = 1;
		fd = uevent_perf_open(&a, 0, -1, -1, 0);
		if (fd >= 0)
			close(fd);
		__atomic_store_n(&known, fd >= 0 ? 2 : 1, __ATOMIC_RELAXED);
	}
	return known == 2;
}

/*
 * ring_pages 0: sized as perf record sizes its rings without -m, from what the kernel
 * lets this user lock without privilege, perf_event_mlock_kb a CPU (its allowance is
 * that times the online CPUs), plus RLIMIT_MEMLOCK, which it charges past that: the
 * whole shared among the rings. Root (CAP_IPC_LOCK, no limit) gets at least 4 MiB a
 * ring: marks from every core at once fill perf's 512 KiB before one reader drains it.
 * A power of 2, from 8 to 4096 pages.
 */
#define RING_ROOT_BYTES		((uint64_t)4 << 20)

static unsigned int default_ring_pages(long nrings, long psz)
{
	uint64_t budget, per;
	long online = sysconf(_SC_NPROCESSORS_ONLN), kb = 516;
	unsigned int pages = 8;
	struct rlimit rl;
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");

	if (f) {
		if (fscanf(f, "%ld", &kb) != 1 || kb < 0)
			kb = 516;
		fclose(f);
	}
	budget = (uint64_t)kb * 1024 * (uint64_t)(online > 0 ? online : 1);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		budget += (uint64_t)rl.rlim_cur;
	per = budget / (uint64_t)(nrings > 0 ? nrings : 1);
	per = per > (uint64_t)psz ? per - (uint64_t)psz : 0;	/* the header page */
	if (geteuid() == 0 && per < RING_ROOT_BYTES)
		per = RING_ROOT_BYTES;
	while (pages < 4096 && (uint64_t)pages * 2 * (uint64_t)psz <= per)
		pages *= 2;
	return pages;
}

static int open_events(struct uevent_session *s, const uint64_t *config, const int *want)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), psz = sysconf(_SC_PAGESIZE), non = 0;
	unsigned int pages = s->o.ring_pages;
	int *tasks = NULL, nt, c, t, k, err = 0;
	unsigned char *cpu_on;
	struct perf_event_attr a;

	if (pages & (pages - 1))
		return -EINVAL;
	if (ncpu <= 0)
		return -EINVAL;
	cpu_on = malloc((size_t)ncpu);
	if (!cpu_on)
		return -ENOMEM;
	memset(cpu_on, !s->o.cpus, (size_t)ncpu);
	if (s->o.cpus && parse_cpus(s->o.cpus, cpu_on, ncpu) < 0) {
		_uevent_add_reason(s, "cpus: '%s' is not a list of this system's CPUs (0-%ld)", s->o.cpus,
			   ncpu - 1);
		free(cpu_on);
		return -EINVAL;
	}
	for (c = 0; c < ncpu; c++)
		non += cpu_on[c];
	if (!pages)	/* two rings a CPU where the side-band wakes on every record */
		pages = default_ring_pages(non * (s->anchor_tree ? 2 : 1), psz);
	nt = _uevent_list_tasks(s->o.pid, &tasks);
	if (nt < 0) {
		free(cpu_on);
		return nt;
	}
	/*
	 * A CPU's side-band, and its marks and samples apart when the side-band's ring
	 * wakes the reader on every record (FORKs must be seen at once following a
	 * process tree): it would wake it for every mark and sample too, whatever
	 * wakeup_events says. Elsewhere one ring a CPU (memory a user may lock is short).
	 */
	s->rings = calloc((size_t)ncpu * 2, sizeof(*s->rings));
	if (!s->rings) {
		free(tasks);
		free(cpu_on);
		return -ENOMEM;
	}
	for (c = 0; c < ncpu; c++) {
		struct ring *rr[2] = { NULL, NULL };	/* this CPU's: side-band, data */

		if (!cpu_on[c])
			continue;
		for (t = 0; t < nt; t++) {
			for (k = 0; k < K_COUNT; k++) {
				/* apart only where the side-band wakes on every record */
				int fd, w = s->anchor_tree && k != K_DUMMY;
				struct ring *r;

				if (!want[k])
					continue;
				/*
				 * The usdt events too are the task's, inherited: the kernel's
				 * uprobe filter then installs the probes only in the watched
				 * processes (whatever they exec), so no other process gets its
				 * semaphore raised or takes a trap per mark.
				 */
				_uevent_session_make_attr(s, k, config[k], &a);
				if (s->lost_fmt)
					a.read_format |= PERF_FORMAT_LOST;
				fd = uevent_perf_open(&a, tasks[t], c, -1, 0);
				if (fd < 0) {
					/* An offline CPU, or a thread that just exited. */
					if (fd == -ENODEV || fd == -ESRCH || fd == -ENOENT)
						continue;
					err = fd;
					_uevent_add_reason(s, "%s", uevent_reason());
					goto out;
				}
				if (!rr[w]) {
					r = rr[w] = &s->rings[s->nr_rings];
					r->map_size = ((size_t)pages + 1) * (size_t)psz;
					r->base = mmap(NULL, r->map_size,
						       PROT_READ | ((s->o.flags & UEVENT_SESSION_OVERWRITE)
								    ? 0 : PROT_WRITE),
						       MAP_SHARED, fd, 0);
					if (r->base == MAP_FAILED) {
						err = -errno;
						close(fd);
						_uevent_add_reason(s, "mmap of the perf ring: %s", strerror(-err));
						goto out;
					}
					r->fd = fd;
					r->live = 1;
					r->cpu = c;
					s->nr_rings++;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rr[w]->fd) < 0) {
					err = -errno;
					close(fd);
					goto out;
				}
				rr[w]->data |= k != K_DUMMY;
				err = _uevent_push_fd(s, fd, k);
				if (err < 0) {
					if (s->nfds && s->fds[s->nfds - 1] != fd)
						close(fd);
					goto out;
				}
				if (k == K_SAMPLES && s->bpf_ctx &&
				    (err = _uevent_bpf_ctx_attach(s->bpf_ctx, fd)) < 0) {
					_uevent_add_reason(s, "context: BPF on a sampling event: %s",
							   strerror(-err));
					goto out;
				}
			}
		}
	}
	qsort(s->ids, s->nids, sizeof(*s->ids), idcmp);
	if (!s->nr_rings)
		err = -ESRCH;
out:
	free(tasks);
	free(cpu_on);
	return err;
}

/* The epoll set a reader waits on: every ring, and the eventfd shutdown() writes. */
static int poll_setup(struct uevent_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = WAKE_EV };
	int i;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	for (i = 0; i < s->nr_rings; i++) {
		struct epoll_event rev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->rings[i].fd, &rev) < 0)
			return -errno;
	}
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wake_fd, &ev) < 0)
		return -errno;
	return 0;
}

UEVENT_EXPORT struct uevent_session *uevent_session__open(const struct uevent_session_opts *opts)
{
	struct uevent_session *s;
	struct uevent_feature_info fi;
	unsigned int want_t;
	uint64_t config[K_COUNT] = { 0 };
	int want[K_COUNT] = { 0 };
	int err, k, denied = 0;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->epfd = -1;
	s->wake_fd = -1;
	s->user_fd = -1;
	s->rec.fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->left, NULL);
	err = _uevent_opts_copy(&s->o, sizeof(s->o), opts,
				offsetof(struct uevent_session_opts, flags));
	if (err < 0) {
		_uevent_reason(err == -E2BIG ? "session options: a field this library does not "
			       "know is set (a newer caller)" : "session options: sz too small");
		_uevent_session_free(s);
		errno = -err;
		return NULL;
	}
	if (s->o.pid < -1)
		_uevent_add_reason(s, "session options: pid %d is not 0, -1 or a process id", s->o.pid);
	else if (s->o.ring_pages & (s->o.ring_pages - 1))
		_uevent_add_reason(s, "session options: ring_pages %u is not a power of 2", s->o.ring_pages);
	else if (s->o.tls_user > UINT16_MAX)	/* attr.sample_tls_user is a u16 */
		_uevent_add_reason(s, "session options: tls_user %u is more than %u bytes", s->o.tls_user,
			   UINT16_MAX);
	if (s->reason[0]) {		/* refused before anything opens, for every binding */
		_uevent_reason("%s", s->reason);
		_uevent_session_free(s);
		errno = EINVAL;
		return NULL;
	}
	if (s->o.pid == 0)
		s->o.pid = (int)getpid();
	want_t = s->o.transports ? s->o.transports
				 : (1u << UEVENT_TRANSPORT_PRCTL) | (1u << UEVENT_TRANSPORT_USDT) |
				   (1u << UEVENT_TRANSPORT_USER_EVENTS);

	if ((want_t & (1u << UEVENT_TRANSPORT_PRCTL))) {
		if (uevent_feature_probe(UEVENT_FEAT_ATTR_UEVENTS, &fi) == 0 &&
		    fi.state == UEVENT_FEAT_PRESENT)
			s->transports |= 1u << UEVENT_TRANSPORT_PRCTL;
		else
			_uevent_add_reason(s, "prctl: %s", fi.detail[0] ? fi.detail : "attr.uevents not supported");
	}
	if (want_t & (1u << UEVENT_TRANSPORT_USER_EVENTS)) {
		err = setup_user_events(s, &config[K_USER]);
		if (!err)
			s->transports |= 1u << UEVENT_TRANSPORT_USER_EVENTS;
		else
			_uevent_add_reason(s, "user_events: %s", strerror(-err));
		if (err == -EACCES || err == -EPERM)
			denied = err;
	}
	if (want_t & (1u << UEVENT_TRANSPORT_USDT)) {
		err = setup_usdt(s, config, want);
		/* not allowed (or no more groups of events), rather than absent */
		if (err == -EACCES || err == -EPERM || err == -EMFILE)
			denied = err;
		if (!err)
			s->transports |= 1u << UEVENT_TRANSPORT_USDT;
		else if (!strstr(s->reason, "usdt"))
			_uevent_add_reason(s, "usdt: %s", strerror(-err));
		for (k = K_USDT; err && k <= K_USDT_LAST; k++)
			want[k] = 0;
	}
	s->anchor_tree = s->o.pid > 0 && !(s->o.flags & UEVENT_SESSION_NO_INHERIT) &&
			 (s->transports & (1u << UEVENT_TRANSPORT_USDT));
	if (s->anchor_tree && (err = _uevent_follow_start(s, (uint32_t)s->o.pid)) < 0)
		goto fail;
	want[K_DUMMY] = s->anchor_tree || (s->transports & (1u << UEVENT_TRANSPORT_PRCTL)) ||
			(s->o.flags & (UEVENT_SESSION_ALL_RECORDS | UEVENT_SESSION_BPF_EVENTS));
	want[K_USER] = !!(s->transports & (1u << UEVENT_TRANSPORT_USER_EVENTS));
	want[K_SAMPLES] = s->o.sample_period_ns > 0;
	if (!want[K_DUMMY] && !(s->transports & (1u << UEVENT_TRANSPORT_USDT)) && !want[K_USER] &&
	    !want[K_SAMPLES]) {
		_uevent_add_reason(s, "no transport can be read here");
		err = denied ? denied : -ENODEV;	/* not allowed, rather than absent */
		goto fail;
	}
	if (s->o.flags & UEVENT_SESSION_CONTEXT) {
		char why[256];

		if (_uevent_session_context(s, why, sizeof(why)) < 0)
			_uevent_add_reason(s, "context: %s", why);
	}
	for (k = 0; k < K_COUNT; k++) {
		struct perf_event_attr a;

		struct uevent_raw_layout raw = s->fmt[k].raw;	/* set up above */

		_uevent_session_make_attr(s, k, config[k], &a);
		uevent_perf_format_from_attr(&s->fmt[k], &a, sizeof(a));
		s->fmt[k].raw = raw;
	}
	s->lost_fmt = lost_format_supported();
	s->disabled = !!(s->o.flags & UEVENT_SESSION_DISABLED);
	s->o.usdt_path = NULL;		/* the caller's string: only setup_usdt() read it */
	memcpy(s->config, config, sizeof(config));
	memcpy(s->want, want, sizeof(want));
	number_events(s);
	err = open_events(s, config, want);
	s->o.cpus = NULL;			/* the caller's string: read only above */
	if (err < 0)
		goto fail;
	if (s->anchor_tree)
		_uevent_usdt_maps(s, (uint32_t)s->o.pid);
	if ((err = poll_setup(s)) < 0)
		goto fail;
	_uevent_reason("%s", s->reason);	/* what it opened or could not, "" if all */
	return s;
fail:
	{
		char why[sizeof(s->reason)];

		memcpy(why, s->reason, sizeof(why));
		uevent_session__close(s);
		_uevent_reason("%s", why);
	}
	errno = -err;
	return NULL;
}
