/* session.c - live perf sessions: events per CPU and task, time order over the rings'
 * records, usdt and user_events as uevents, probes found in what the watched tree maps.
 * The ring reader is ring.c, tracefs and SDT notes sdt.c, the perf.data writer
 * session-record.c. */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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
#include <linux/user_events.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/* ---- the session ---------------------------------------------------------------------- */

/* The size-class probes of emit.c, each a kind of event of its own (its raw layout). */
#define CLASS_SIZE(n) n,
#define CLASS_NAME(n) "emit" #n,
const uint32_t _uevent_usdt_class_size[USDT_CLASSES] = { _UEVENT_USDT_CLASSES(CLASS_SIZE) };
const char *const _uevent_usdt_class_name[USDT_CLASSES] = { _UEVENT_USDT_CLASSES(CLASS_NAME) };

static struct proc *proc_add(struct uevent_session *s, uint32_t pid, uint32_t cov);
static void session_free(struct uevent_session *s);
static void usdt_maps(struct uevent_session *s, uint32_t pid);

/* The epoll data of the session's wake_fd (the rings' are their index). */
#define WAKE_EV	UINT32_MAX

/*
 * A reader (__next(), __read_batch(), __snapshot()) counts itself in, so that a
 * __close() in another thread frees nothing until it has left: -ECANCELED once the
 * session is shut down.
 */
static int reader_enter(struct uevent_session *s)
{
	int shut;

	pthread_mutex_lock(&s->lock);
	shut = s->shut;
	if (!shut)
		s->readers++;
	pthread_mutex_unlock(&s->lock);
	return shut ? -ECANCELED : 0;
}

static void reader_leave(struct uevent_session *s)
{
	pthread_mutex_lock(&s->lock);
	if (!--s->readers && s->shut)
		pthread_cond_broadcast(&s->left);
	pthread_mutex_unlock(&s->lock);
}

static int is_shut(struct uevent_session *s)
{
	return __atomic_load_n(&s->shut, __ATOMIC_ACQUIRE);
}

static void add_reason(struct uevent_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_reason(struct uevent_session *s, const char *fmt, ...)
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
}


static int usdt_fetch_args(struct uevent_session *s, const struct _uevent_sdt_probe *p,
			   char f[3][64])
{
	char tok[3][64];
	int i;

	if (sscanf(p->args, "%63s %63s %63s", tok[0], tok[1], tok[2]) != 3) {
		add_reason(s, "usdt: probe %s has arguments '%s', not type, data, size", p->name,
			   p->args);
		return -EINVAL;
	}
	for (i = 0; i < 3; i++)
		if (_uevent_sdt_arg_fetch(tok[i], f[i], 64) < 0) {
			add_reason(s, "usdt: cannot translate SDT argument '%s'", tok[i]);
			return -EINVAL;
		}
	return 0;
}

/*
 * One uprobe event for the size class probe p (libuevent:emitN, of N bytes), named
 * like it, fetching type, size and min(N, cap) payload bytes as u64 arrays of at most
 * 64 elements. Probe events have a size limit (3072 bytes in 6.x: MAX_PROBE_EVENT_SIZE,
 * and the uprobe buffer is one page): when the kernel refuses, fewer bytes are
 * fetched, and marks larger than that arrive truncated.
 */
static int usdt_add_event(struct uevent_session *s, struct usdt_obj *o, const char *path,
			  const struct _uevent_sdt_probe *p, uint32_t n, uint32_t cap, int k)
{
	char def[1024], fmt[8192], f[3][64];
	struct uevent_raw_layout raw;
	uint32_t off, chunk, want = n < cap ? n : cap;
	size_t len;
	int err, id, i;

	err = usdt_fetch_args(s, p, f);
	if (err < 0)
		return err;
	for (;;) {
		len = (size_t)snprintf(def, sizeof(def), "p:%s/%s %s:0x%llx", o->group,
				       p->name, path, (unsigned long long)p->offset);
		if (p->sem_offset)
			len += (size_t)snprintf(def + len, sizeof(def) - len, "(0x%llx)",
						(unsigned long long)p->sem_offset);
		len += (size_t)snprintf(def + len, sizeof(def) - len, " type=%s:u32 size=%s:u64",
					f[0], f[2]);
		for (off = 0, i = 0; off < want; off += chunk, i++) {
			chunk = want - off > 512 ? 512 : want - off;
			len += (size_t)snprintf(def + len, sizeof(def) - len,
						" d%d=+%u(%s):u64[%u]", i, off, f[1], chunk / 8);
		}
		if (len >= sizeof(def) - 1)
			return -E2BIG;
		err = _uevent_tracefs_append("uprobe_events", def);
		if (err != -E2BIG || want <= 512)
			break;
		want = want > 3056 ? 3056 : want - 512;
	}
	if (err < 0) {
		add_reason(s, "usdt: cannot add uprobe event %s (%s)", p->name, strerror(-err));
		return err;
	}
	o->events |= 1u << (k - K_USDT);
	id = _uevent_tracepoint_id(o->group, p->name, fmt, sizeof(fmt));
	if (id >= 0)
		o->format[k - K_USDT] = strdup(fmt);
	/* one layout per class, whichever object: the kind decodes them all */
	if (id < 0 || uevent_raw_layout_from_format(&raw, fmt) < 0 ||
	    raw.kind != UEVENT_RAW_USDT ||
	    (s->fmt[k].raw.kind && memcmp(&raw, &s->fmt[k].raw, sizeof(raw)))) {
		add_reason(s, "usdt: uprobe event %s/%s has no usable format", o->group,
			   p->name);
		return id < 0 ? id : -EINVAL;
	}
	s->fmt[k].raw = raw;
	o->config[k - K_USDT] = (uint64_t)id;
	return 0;
}

/* ---- uprobe events, shared by the sessions of a process ------------------------------ */

/*
 * One group of uprobe events (an event per size class an object's probes have) serves
 * every session of the process that reads that object with the same payload cap: the
 * process holds 5 events an object however many sessions it opens (a process killed
 * with a thousand sessions open left 5,000 events, and spent minutes in the kernel
 * exiting), and a session opened or closed while another has the group neither makes
 * nor removes them.
 *
 * The group is named libuevent_PID_SEQ_NS, NS the inode of the process's PID
 * namespace, so a later session reaps it when the process dies without closing
 * (reap_dead_groups): only when that namespace is its own, where PID means the process.
 */
struct ev_group {
	struct ev_group *next;
	uint32_t maj, min, cap;
	uint64_t ino;
	char group[64];
	unsigned int events;
	uint64_t config[USDT_CLASSES];
	char *format[USDT_CLASSES];
	struct uevent_raw_layout raw[USDT_CLASSES];
	int refs;
};

static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev_group *groups;
static pid_t groups_pid;

/* The inode of this process's PID namespace (0: unknown). */
static uint64_t pidns_id(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) < 0 ? 0 : (uint64_t)st.st_ino;
}

/*
 * Removes a group's events. The kernel refuses (EBUSY) while a perf event is still open
 * on one: a child forked by another thread just before this session closed its files
 * holds copies until it execs or exits. Such a removal is tried again for up to about a
 * second; what is still busy then is left for reap_dead_groups once this process is gone.
 */
static void group_remove_events(const char *group, unsigned int events)
{
	struct timespec nap = { 0, 1000000 };
	char line[128];
	int c, err, tries;

	for (c = 0; c < USDT_CLASSES; c++) {
		if (!(events & (1u << c)))
			continue;
		snprintf(line, sizeof(line), "-:%s/%s", group, _uevent_usdt_class_name[c]);
		for (tries = 0; (err = _uevent_tracefs_append("uprobe_events", line)) == -EBUSY &&
		     tries < 40; tries++) {
			nanosleep(&nap, NULL);
			if (nap.tv_nsec < 32000000)
				nap.tv_nsec *= 2;
		}
	}
}

static void group_free(struct ev_group *g)
{
	int c;

	for (c = 0; c < USDT_CLASSES; c++)
		free(g->format[c]);
	free(g);
}

/*
 * The groups this process made (under groups_lock). A forked child forgets its
 * parent's: they are the parent's to remove.
 */
static struct ev_group **groups_of_process(void)
{
	if (groups_pid != getpid()) {
		while (groups) {
			struct ev_group *g = groups;

			groups = g->next;
			group_free(g);
		}
		groups_pid = getpid();
	}
	return &groups;
}

/* Object o takes group g's events (under groups_lock): 0, or -EINVAL (another layout). */
static int group_use(struct uevent_session *s, struct usdt_obj *o, struct ev_group *g)
{
	int c;

	for (c = 0; c < USDT_CLASSES; c++) {
		struct uevent_raw_layout *raw = &s->fmt[K_USDT + c].raw;

		if (!(g->events & (1u << c)))
			continue;
		/* one layout per class, whichever object: the kind decodes them all */
		if (raw->kind && memcmp(raw, &g->raw[c], sizeof(*raw))) {
			add_reason(s, "usdt: uprobe event %s/%s has another layout", g->group,
				   _uevent_usdt_class_name[c]);
			return -EINVAL;
		}
	}
	for (c = 0; c < USDT_CLASSES; c++) {
		if (!(g->events & (1u << c)))
			continue;
		s->fmt[K_USDT + c].raw = g->raw[c];
		o->config[c] = g->config[c];
		o->format[c] = g->format[c] ? strdup(g->format[c]) : NULL;
	}
	o->events = g->events;
	snprintf(o->group, sizeof(o->group), "%s", g->group);
	o->grp = g;
	g->refs++;
	return 0;
}

/* Object o lets its group go: the last session of the process to use it removes it. */
static void group_put(struct usdt_obj *o)
{
	struct ev_group **pp;

	if (!o->grp) {			/* events made, no group: a failed open's */
		group_remove_events(o->group, o->events);
		return;
	}
	pthread_mutex_lock(&groups_lock);
	if (!--o->grp->refs) {
		for (pp = &groups; *pp && *pp != o->grp; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = o->grp->next;
		group_remove_events(o->grp->group, o->grp->events);
		group_free(o->grp);
	}
	pthread_mutex_unlock(&groups_lock);
	o->grp = NULL;
}

/* Makes the uprobe events of object o (at path): one per size class its probes have. */
static int usdt_obj_make(struct uevent_session *s, struct usdt_obj *o, const char *path,
			 uint32_t cap)
{
	static int seq;
	struct _uevent_sdt_probe p[16];
	int err, n, i, c, found = 0;

	n = _uevent_sdt_find_all(path, "libuevent", p, ARRAY_SIZE(p));
	for (i = 0; i < n; i++)
		for (c = 0; c < USDT_CLASSES; c++)
			found += !strcmp(p[i].name, _uevent_usdt_class_name[c]);
	if (n < 0 || !found) {
		add_reason(s, "usdt: no libuevent:emit16..emit4096 probes in %s (%s)", path,
			   n < 0 ? strerror(-n) : n ? "a libuevent older than the size-class "
			   "probes: fetching its marks would copy the process's memory" :
			   "no probes");
		return n < 0 ? n : -ENOENT;
	}
	snprintf(o->group, sizeof(o->group), "libuevent_%d_%d_%llu", (int)getpid(), seq++,
		 (unsigned long long)pidns_id());
	for (c = 0; c < USDT_CLASSES; c++)
		for (i = 0; i < n; i++) {
			if (strcmp(p[i].name, _uevent_usdt_class_name[c]))
				continue;
			err = usdt_add_event(s, o, path, &p[i], _uevent_usdt_class_size[c], cap,
					     K_USDT + c);
			if (err < 0)
				return err;
			break;
		}
	return 0;
}

/*
 * A process killed with sessions open could not remove their events: every session's
 * open removes those of the dead, all of them. A group is reaped when its name says it
 * is ours (libuevent_PID_SEQ_NS), NS is our PID namespace and PID names no process in
 * it; one of another namespace is left to its own. A group of the names before the
 * namespace (libuevent_PID_SEQ) is reaped when PID names no process here and its
 * object's path is there to see (a process of another mount namespace sees other
 * files). An event still in use refuses (EBUSY), so a live session never loses one.
 */
static void reap_dead_groups(void)
{
	const char *dir = _uevent_tracefs();
	unsigned long long ns = pidns_id(), gns;
	char path[PATH_MAX], line[PATH_MAX + 1024], **gone = NULL;
	size_t n = 0, cap = 0, i;
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int pid, seq, at = 0, legacy;
		char ev[16], obj[PATH_MAX], **p;

		if (sscanf(line, "p:libuevent_%d_%d/%15[a-z0-9] %n", &pid, &seq, ev, &at) == 3 &&
		    at) {
			legacy = 1;
		} else if (sscanf(line, "p:libuevent_%d_%d_%llu/%15[a-z0-9] %n", &pid, &seq, &gns,
				  ev, &at) == 4 && at) {
			legacy = 0;
			if (!ns || gns != ns)
				continue;
		} else {
			continue;
		}
		if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (legacy && (sscanf(line + at, "%4095[^:]", obj) != 1 || access(obj, F_OK) < 0))
			continue;
		if (n == cap) {
			p = realloc(gone, (cap = cap ? cap * 2 : 64) * sizeof(*p));
			if (!p)
				break;
			gone = p;
		}
		*strchr(line, ' ') = 0;
		line[0] = '-';
		if (!(gone[n] = strdup(line)))
			break;
		n++;
	}
	fclose(f);
	for (i = 0; i < n; i++) {
		_uevent_tracefs_append("uprobe_events", gone[i]);
		free(gone[i]);
	}
	free(gone);
}

/* Object o (at path) gets its uprobe events: the process's group for it, else a new one. */
static int usdt_obj_events(struct uevent_session *s, struct usdt_obj *o, const char *path)
{
	uint32_t cap = s->o.usdt_max_payload ? s->o.usdt_max_payload : UEVENT_MAX_PAYLOAD;
	struct ev_group *g, **list;
	int err, c;

	cap = (cap + 7) & ~7u;
	pthread_mutex_lock(&groups_lock);
	list = groups_of_process();
	for (g = *list; g; g = g->next)
		if (g->maj == o->maj && g->min == o->min && g->ino == o->ino && g->cap == cap)
			break;
	if (g) {
		err = group_use(s, o, g);
		pthread_mutex_unlock(&groups_lock);
		return err;
	}
	err = usdt_obj_make(s, o, path, cap);
	g = err < 0 ? NULL : calloc(1, sizeof(*g));
	if (g) {
		g->maj = o->maj;
		g->min = o->min;
		g->ino = o->ino;
		g->cap = cap;
		snprintf(g->group, sizeof(g->group), "%s", o->group);
		g->events = o->events;
		for (c = 0; c < USDT_CLASSES; c++) {
			g->config[c] = o->config[c];
			g->raw[c] = s->fmt[K_USDT + c].raw;
			g->format[c] = o->format[c] ? strdup(o->format[c]) : NULL;
		}
		g->refs = 1;
		g->next = *list;
		*list = g;
		o->grp = g;
	} else if (!err) {
		err = -ENOMEM;
	}
	if (err < 0) {
		group_remove_events(o->group, o->events);
		o->events = 0;
	}
	pthread_mutex_unlock(&groups_lock);
	return err;
}

/* The object of (maj, min, ino), or a new one (NULL: no memory). */
static struct usdt_obj *usdt_obj_get(struct uevent_session *s, uint32_t maj, uint32_t min,
				     uint64_t ino, int *created)
{
	struct usdt_obj *o;
	int i;

	*created = 0;
	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i].maj == maj && s->objs[i].min == min && s->objs[i].ino == ino)
			return &s->objs[i];
	if (s->nobjs == s->objs_cap || s->nobjs == 32) {
		int n = s->objs_cap ? s->objs_cap * 2 : 4;

		if (s->nobjs == 32 || !(o = realloc(s->objs, (size_t)n * sizeof(*o))))
			return NULL;
		s->objs = o;
		s->objs_cap = n;
	}
	o = &s->objs[s->nobjs++];
	memset(o, 0, sizeof(*o));
	o->maj = maj;
	o->min = min;
	o->ino = ino;
	*created = 1;
	return o;
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
	o = usdt_obj_get(s, major(st.st_dev), minor(st.st_dev), st.st_ino, &created);
	if (!o)
		return -ENOMEM;
	o->probes = 1;
	reap_dead_groups();
	err = usdt_obj_events(s, o, path);
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
	struct user_reg reg;
	int fd, id;

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/user_events_data", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Registering it ourselves makes the tracepoint exist before any emitter runs. */
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = 0;
	reg.enable_size = sizeof(s->user_word);
	reg.enable_addr = (uintptr_t)&s->user_word;
	reg.name_args = (uintptr_t)(_UEVENT_USER_EVENT_NAME " " _UEVENT_USER_EVENT_ARGS);
	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0) {
		int err = errno;

		close(fd);
		return -err;
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

static int push_fd(struct uevent_session *s, int fd, int kind)
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

static int idcmp(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int kind_of(const struct uevent_session *s, uint64_t id)
{
	struct idmap key = { id, 0 }, *f;

	f = bsearch(&key, s->ids, s->nids, sizeof(*s->ids), idcmp);
	return f ? f->kind : -1;
}

/* An event's name, as perf names it: "dummy", "libuevent:emit16", "user_events:...". */
void _uevent_session_kind_name(int k, char *buf, size_t n)
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
		_uevent_session_kind_name(k, s->ev_name[s->nev], sizeof(s->ev_name[0]));
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
static int list_tasks(int pid, int **out)
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

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1u << 4)
#endif

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

/* The lost records of every event, as the kernel counts them now. */
uint64_t _uevent_session_lost_counted(const struct uevent_session *s)
{
	uint64_t v[2], sum = 0;
	size_t i;

	if (!s->lost_fmt)
		return 0;
	for (i = 0; i < s->nfds; i++)
		if (read(s->fds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v[1];
	return sum;
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
		add_reason(s, "cpus: '%s' is not a list of this system's CPUs (0-%ld)", s->o.cpus,
			   ncpu - 1);
		free(cpu_on);
		return -EINVAL;
	}
	for (c = 0; c < ncpu; c++)
		non += cpu_on[c];
	if (!pages)	/* two rings a CPU where the side-band wakes on every record */
		pages = default_ring_pages(non * (s->anchor_tree ? 2 : 1), psz);
	nt = list_tasks(s->o.pid, &tasks);
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
					add_reason(s, "%s", uevent_perf_open_reason());
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
						add_reason(s, "mmap of the perf ring: %s", strerror(-err));
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
				err = push_fd(s, fd, k);
				if (err < 0) {
					if (s->nfds && s->fds[s->nfds - 1] != fd)
						close(fd);
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

UEVENT_EXPORT struct uevent_session *uevent_session__open(const struct uevent_session_opts *opts)
{
	struct uevent_session *s;
	struct uevent_feature_info fi;
	unsigned int want_t;
	uint64_t config[K_COUNT] = { 0 };
	int want[K_COUNT] = { 0 };
	int err, k, i, denied = 0;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->epfd = -1;
	s->wake_fd = -1;
	s->user_fd = -1;
	s->rec_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->left, NULL);
	err = _uevent_opts_copy(&s->o, sizeof(s->o), opts,
				offsetof(struct uevent_session_opts, flags));
	if (err < 0) {
		_uevent_reason(err == -E2BIG ? "session options: a field this library does not "
			       "know is set (a newer caller)" : "session options: sz too small");
		session_free(s);
		errno = -err;
		return NULL;
	}
	if (s->o.pid < -1)
		add_reason(s, "session options: pid %d is not 0, -1 or a process id", s->o.pid);
	else if (s->o.ring_pages & (s->o.ring_pages - 1))
		add_reason(s, "session options: ring_pages %u is not a power of 2", s->o.ring_pages);
	else if (s->o.tls_user > UINT16_MAX)	/* attr.sample_tls_user is a u16 */
		add_reason(s, "session options: tls_user %u is more than %u bytes", s->o.tls_user,
			   UINT16_MAX);
	if (s->reason[0]) {		/* refused before anything opens, for every binding */
		_uevent_reason("%s", s->reason);
		session_free(s);
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
			add_reason(s, "prctl: %s", fi.detail[0] ? fi.detail : "attr.uevents not supported");
	}
	if (want_t & (1u << UEVENT_TRANSPORT_USER_EVENTS)) {
		err = setup_user_events(s, &config[K_USER]);
		if (!err)
			s->transports |= 1u << UEVENT_TRANSPORT_USER_EVENTS;
		else
			add_reason(s, "user_events: %s", strerror(-err));
		if (err == -EACCES || err == -EPERM)
			denied = err;
	}
	if (want_t & (1u << UEVENT_TRANSPORT_USDT)) {
		err = setup_usdt(s, config, want);
		if (err == -EACCES || err == -EPERM)
			denied = err;
		if (!err)
			s->transports |= 1u << UEVENT_TRANSPORT_USDT;
		else if (!strstr(s->reason, "usdt"))
			add_reason(s, "usdt: %s", strerror(-err));
		for (k = K_USDT; err && k <= K_USDT_LAST; k++)
			want[k] = 0;
	}
	s->anchor_tree = s->o.pid > 0 && !(s->o.flags & UEVENT_SESSION_NO_INHERIT) &&
			 (s->transports & (1u << UEVENT_TRANSPORT_USDT));
	if (s->anchor_tree && !proc_add(s, (uint32_t)s->o.pid, 1)) {
		err = -ENOMEM;
		goto fail;
	}
	want[K_DUMMY] = s->anchor_tree || (s->transports & (1u << UEVENT_TRANSPORT_PRCTL)) ||
			(s->o.flags & (UEVENT_SESSION_ALL_RECORDS | UEVENT_SESSION_BPF_EVENTS));
	want[K_USER] = !!(s->transports & (1u << UEVENT_TRANSPORT_USER_EVENTS));
	want[K_SAMPLES] = s->o.sample_period_ns > 0;
	if (!want[K_DUMMY] && !(s->transports & (1u << UEVENT_TRANSPORT_USDT)) && !want[K_USER] &&
	    !want[K_SAMPLES]) {
		add_reason(s, "no transport can be read here");
		err = denied ? denied : -ENODEV;	/* not allowed, rather than absent */
		goto fail;
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
		usdt_maps(s, (uint32_t)s->o.pid);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		err = -errno;
		goto fail;
	}
	for (i = 0; i < s->nr_rings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->rings[i].fd, &ev) < 0) {
			err = -errno;
			goto fail;
		}
	}
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		err = -errno;
		goto fail;
	} else {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = WAKE_EV };

		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wake_fd, &ev) < 0) {
			err = -errno;
			goto fail;
		}
	}
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

UEVENT_EXPORT unsigned int uevent_session__transports(const struct uevent_session *s)
{
	return s ? s->transports : 0;
}

UEVENT_EXPORT const char *uevent_session__reason(const struct uevent_session *s)
{
	return s ? s->reason : "";
}

UEVENT_EXPORT int uevent_session__nr_events(const struct uevent_session *s)
{
	return s ? s->nev : _uevent_err(EINVAL);
}

UEVENT_EXPORT const char *uevent_session__event_name(const struct uevent_session *s, int i)
{
	if (!s || i < 0 || i >= s->nev) {
		errno = EINVAL;
		return NULL;
	}
	return s->ev_name[i];
}

UEVENT_EXPORT int uevent_session__pid(const struct uevent_session *s)
{
	if (!s)
		return _uevent_err(EINVAL);
	return s->o.pid > 0 ? s->o.pid : -1;
}

static int ioctl_all(struct uevent_session *s, unsigned long req)
{
	size_t i;

	if (!s)
		return _uevent_err(EINVAL);
	for (i = 0; i < s->nfds; i++)
		if (ioctl(s->fds[i], req, 0) < 0)
			return _uevent_err(errno);
	return 0;
}

UEVENT_EXPORT int uevent_session__enable(struct uevent_session *s)
{
	int err = ioctl_all(s, PERF_EVENT_IOC_ENABLE);

	if (!err)
		s->disabled = 0;
	return err;
}

UEVENT_EXPORT int uevent_session__disable(struct uevent_session *s)
{
	int err = ioctl_all(s, PERF_EVENT_IOC_DISABLE);

	if (!err)
		s->disabled = 1;
	return err;
}

UEVENT_EXPORT int uevent_session__fd(const struct uevent_session *s)
{
	return s ? s->epfd : _uevent_err(EINVAL);
}

/* Makes *buf (of *cap bytes) hold at least need bytes, doubling from 64 KiB. */
int _uevent_grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 65536;
	uint8_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static int buf_reserve(struct uevent_session *s, size_t more)
{
	return _uevent_grow(&s->buf, &s->buf_cap, s->buf_len + more);
}

static int kind_of(const struct uevent_session *s, uint64_t id);

/*
 * Time of a record: a sample's TIME (after IDENTIFIER, IP and TID as its event's
 * sample_type has them), else the sample_id trailer's (..., time, cpu, identifier).
 */
/*
 * The bytes of record r that are its own: less than its size for a KSYMBOL or BPF_EVENT
 * the kernel wrote too long (see _uevent_sideband_used).
 */
static size_t rec_len(const uint8_t *r, const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_KSYMBOL && h->type != PERF_RECORD_BPF_EVENT)
		return h->size;
	return _uevent_sideband_used(r, h->size, h->type, _uevent_sample_id_size(BASE_ST));
}

static uint64_t rec_time(const struct uevent_session *s, const uint8_t *r)
{
	struct perf_event_header h;
	uint64_t t = 0, ident, st;
	size_t at;
	int kind;

	memcpy(&h, r, sizeof(h));
	if (h.type == PERF_RECORD_SAMPLE) {
		if (h.size < 16)
			return 0;
		memcpy(&ident, r + 8, 8);
		kind = kind_of(s, ident);
		st = s->fmt[kind < 0 ? K_DUMMY : kind].sample_type;
		at = 16 + ((st & PERF_SAMPLE_IP) ? 8 : 0) + ((st & PERF_SAMPLE_TID) ? 8 : 0);
		if ((st & PERF_SAMPLE_TIME) && at + 8 <= h.size)
			memcpy(&t, r + at, 8);
	} else if (h.type < PERF_RECORD_HEADER_ATTR_TYPE && h.size >= 8 + 32) {
		/* the BASE_ST sample_id: tid, time, cpu, identifier */
		memcpy(&t, r + rec_len(r, &h) - 24, 8);
	}
	return t;
}

static int qcmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Records go out in time order across read rounds: a record stamped before the round
 * began (less a margin for the gap between the kernel's timestamp and its commit to
 * the ring) cannot still be on its way, so those go out now; later ones wait for the
 * next round, which sorts them with whatever came meanwhile.
 */
#define HOLD_MARGIN_NS	2000000ull
/* The longest a reader blocked in __next() leaves records in the rings. */
#define POLL_MS		100

static int index_records(struct uevent_session *s, uint64_t watermark)
{
	size_t off = 0, n = 0;

	for (off = 0; off + 8 <= s->buf_len;) {
		uint16_t sz;

		memcpy(&sz, s->buf + off + 6, 2);
		if (sz < 8)
			break;
		n++;
		off += sz;
	}
	if (n > s->q_cap) {
		struct qent *q = realloc(s->q, n * sizeof(*q));

		if (!q)
			return -ENOMEM;
		s->q = q;
		s->q_cap = n;
	}
	s->qn = s->qi = 0;
	for (off = 0; off + 8 <= s->buf_len && s->qn < n;) {
		uint16_t sz;

		memcpy(&sz, s->buf + off + 6, 2);
		s->q[s->qn].time = rec_time(s, s->buf + off);
		s->q[s->qn].off = (uint32_t)off;
		s->q[s->qn].seq = (uint32_t)s->qn;
		s->qn++;
		off += sz;
	}
	qsort(s->q, s->qn, sizeof(*s->q), qcmp);
	for (s->qready = 0; s->qready < s->qn && s->q[s->qready].time < watermark; s->qready++)
		;
	return 0;
}

/* Moves the records not yet delivered to the start of s->buf, in their order. */
static int keep_held(struct uevent_session *s)
{
	size_t i, len = 0;

	for (i = s->qi; i < s->qn; i++) {
		uint16_t sz;

		memcpy(&sz, s->buf + s->q[i].off + 6, 2);
		if (_uevent_grow(&s->hold, &s->hold_cap, len + sz) < 0)
			return -ENOMEM;
		memcpy(s->hold + len, s->buf + s->q[i].off, sz);
		len += sz;
	}
	s->qi = s->qn = s->qready = 0;
	s->buf_len = 0;
	if (len) {
		int err = buf_reserve(s, len);

		if (err < 0)
			return err;
		memcpy(s->buf, s->hold, len);
		s->buf_len = len;
	}
	return 0;
}

uint64_t _uevent_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void proc_close(struct proc *pr)
{
	int i;

	for (i = 0; i < pr->nfd; i++)
		close(pr->fd[i]);
	free(pr->fd);
	pr->fd = NULL;
	pr->nfd = 0;
}

static struct proc *proc_find(struct uevent_session *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

static struct proc *proc_add(struct uevent_session *s, uint32_t pid, uint32_t cov)
{
	struct proc *pr = proc_find(s, pid);

	if (pr)
		return pr;
	if (s->nprocs == s->procs_cap) {
		size_t n = s->procs_cap ? s->procs_cap * 2 : 16;

		pr = realloc(s->procs, n * sizeof(*pr));
		if (!pr)
			return NULL;
		s->procs = pr;
		s->procs_cap = n;
	}
	pr = &s->procs[s->nprocs++];
	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	pr->cov = cov;
	return pr;
}

/*
 * A new process of the tree, with the usdt events of the objects its parent had
 * (inherited): its own disabled ones beside them, see anchor_tree.
 */
static void anchor_add(struct uevent_session *s, uint32_t pid, uint32_t cov)
{
	struct perf_event_attr a;
	struct proc *pr = proc_add(s, pid, cov);
	int i, c, fd, *p;

	if (!pr || pr->nfd)
		return;
	for (i = 0; i < s->nobjs; i++)
		for (c = 0; c < USDT_CLASSES; c++) {
			if (!(cov & (1u << i)) || !(s->objs[i].events & (1u << c)) ||
			    !s->want[K_USDT + c])
				continue;
			_uevent_session_make_attr(s, K_USDT + c, s->objs[i].config[c], &a);
			a.disabled = 1;
			a.inherit = 0;
			fd = uevent_perf_open(&a, (int)pid, -1, -1, 0);
			if (fd < 0)
				return;		/* gone already */
			p = realloc(pr->fd, (size_t)(pr->nfd + 1) * sizeof(*p));
			if (!p) {
				close(fd);
				return;
			}
			pr->fd = p;
			pr->fd[pr->nfd++] = fd;
		}
}

static void proc_del(struct uevent_session *s, uint32_t pid)
{
	struct proc *pr = proc_find(s, pid);

	if (pr) {
		proc_close(pr);
		*pr = s->procs[--s->nprocs];
	}
}

/*
 * Events of another object are recorded as ours of the same class: the tracing data
 * (which perf takes once per stream) has our events' formats, which are theirs field
 * for field, so the samples keep the id of one of ours and every reader decodes them.
 */
static void usdt_alias(struct uevent_session *s, struct idmap *m, int obj)
{
	size_t i;

	m->obj = obj;
	for (i = 0; i < s->nids; i++)
		if (s->ids[i].kind == m->kind && !s->ids[i].obj) {
			m->alias = s->ids[i].id;
			return;
		}
}

/* The id a record of event ident is recorded under. */
static uint64_t rec_id(const struct uevent_session *s, uint64_t ident)
{
	struct idmap key = { ident, 0, 0, 0 }, *f;

	f = bsearch(&key, s->ids, s->nids, sizeof(*s->ids), idcmp);
	return f && f->alias ? f->alias : ident;
}

/*
 * Process pid (and its threads, and what they fork from now on) gets the usdt events
 * of object obj: per task and CPU, into the CPU's ring, as open_events() does.
 *
 * The process may be waiting for them (UEVENT_WAIT_TRACER: until its semaphore counts
 * the five classes), so the probes must go in after all its events are ready, not as
 * the first one of each class opens (an open takes a while: installing a uprobe waits
 * for an RCU grace period). An event with enable_on_exec installs nothing when opened
 * (the kernel leaves that to the exec); once all are open, set to their ring and
 * enabled, an event of ours on this process, opened and closed, installs the probes
 * wherever the uprobe filter finds an event: in the watched process.
 */
static int usdt_obj_open(struct uevent_session *s, int obj, uint32_t pid)
{
	const struct usdt_obj *o = &s->objs[obj];
	struct perf_event_attr a;
	int *tasks = NULL, nt, t, i, c, fd, err = 0;

	nt = list_tasks((int)pid, &tasks);
	if (nt < 0)
		return nt;
	for (i = 0; i < s->nr_rings && !err; i++)
		for (t = 0; t < nt && !err; t++)
			for (c = 0; c < USDT_CLASSES && !err; c++) {
				if (!(o->events & (1u << c)) || !s->want[K_USDT + c] ||
				    !s->rings[i].data)
					continue;
				_uevent_session_make_attr(s, K_USDT + c, o->config[c], &a);
				if (s->lost_fmt)
					a.read_format |= PERF_FORMAT_LOST;
				a.disabled = a.enable_on_exec = 1;
				fd = uevent_perf_open(&a, tasks[t], s->rings[i].cpu, -1, 0);
				if (fd < 0)
					continue;	/* the thread is gone */
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[i].fd) < 0 ||
				    (!s->disabled && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
					err = -errno;
					close(fd);
					break;
				}
				err = push_fd(s, fd, K_USDT + c);
				if (!err)
					usdt_alias(s, &s->ids[s->nids - 1], obj);
			}
	free(tasks);
	qsort(s->ids, s->nids, sizeof(*s->ids), idcmp);
	for (c = 0; c < USDT_CLASSES && !err; c++) {
		if (!(o->events & (1u << c)) || !s->want[K_USDT + c])
			continue;
		_uevent_session_make_attr(s, K_USDT + c, o->config[c], &a);
		a.disabled = 1;
		a.inherit = 0;
		fd = uevent_perf_open(&a, 0, -1, -1, 0);
		if (fd >= 0)
			close(fd);
	}
	return err;
}

/*
 * A watched process mapped a file executable: if it carries libuevent's probes (an
 * installed copy, another build, a program linked with libuevent.a), the process gets
 * their events, made the first time.
 */
static void usdt_mapped(struct uevent_session *s, uint32_t pid, uint32_t maj, uint32_t min,
			uint64_t ino, const char *path, int count)
{
	struct usdt_obj *o;
	struct proc *pr;
	int created, obj;
	size_t k;

	for (k = 0; k < s->nplain; k++)
		if (s->plain[k].maj == maj && s->plain[k].min == min && s->plain[k].ino == ino)
			return;
	o = usdt_obj_get(s, maj, min, ino, &created);
	if (!o)
		return;
	obj = (int)(o - s->objs);
	if (created && !strcmp(path, s->usdt_path)) {
		/* ours, under another device number (overlayfs gives the real file's) */
		o->probes = 0;
		if (count && !s->objs[0].mapped++)
			s->st.usdt_objects++;
		return;
	}
	if (created) {
		struct _uevent_sdt_probe p[16];
		int n = _uevent_sdt_find_all(path, "libuevent", p, ARRAY_SIZE(p)), i, c;

		for (i = 0; i < n; i++)
			for (c = 0; c < USDT_CLASSES; c++)
				o->probes |= !strcmp(p[i].name, _uevent_usdt_class_name[c]);
		if (!o->probes) {
			/* remembered apart: its slot goes back (it is the last one made) */
			if (s->nplain == s->plain_cap) {
				size_t cap = s->plain_cap ? s->plain_cap * 2 : 16;
				struct usdt_file *pl = realloc(s->plain, cap * sizeof(*pl));

				if (!pl)
					return;
				s->plain = pl;
				s->plain_cap = cap;
			}
			s->plain[s->nplain++] = (struct usdt_file){ maj, min, ino };
			s->nobjs--;
			return;
		}
		if (usdt_obj_events(s, o, path) < 0)
			o->probes = 0;
	}
	if (!o->probes)
		return;
	if (count && !o->mapped) {
		o->mapped = 1;
		s->st.usdt_objects++;
	}
	pr = proc_find(s, pid);
	if (!pr)
		pr = proc_add(s, pid, 1);
	if (!pr || (pr->cov & (1u << obj)))
		return;
	pr->cov |= 1u << obj;
	usdt_obj_open(s, obj, pid);
}

/*
 * What the process mapped before the session: its probes too (not counted as mapped
 * by the tree: `uevent record` opens the session on its own child, before the exec).
 */
static void usdt_maps(struct uevent_session *s, uint32_t pid)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long long ino;
		char perms[8];
		int at = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %n", perms, &maj, &min, &ino, &at) < 4 ||
		    !at || !strchr(perms, 'x') || line[at] != '/')
			continue;
		usdt_mapped(s, pid, maj, min, ino, line + at, 0);
	}
	fclose(f);
}

/* FORK, EXIT and MMAP2 records just read (from off on): the tree and what it maps. */
static void follow_tree(struct uevent_session *s, size_t off)
{
	struct perf_event_header h;
	uint32_t t[4];

	for (; off + sizeof(h) <= s->buf_len; off += h.size) {
		memcpy(&h, s->buf + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > s->buf_len)
			break;
		if (h.type == PERF_RECORD_MMAP2 && h.size > sizeof(h) + 64) {
			const uint8_t *r = s->buf + off + sizeof(h);
			uint32_t maj, min, prot;
			uint64_t ino;
			char path[PATH_MAX];
			size_t n = h.size - sizeof(h) - 64;

			/* pid, tid, addr, len, pgoff, maj, min, ino, ino_gen, prot, flags, name */
			memcpy(t, r, 8);
			memcpy(&maj, r + 32, 4);
			memcpy(&min, r + 36, 4);
			memcpy(&ino, r + 40, 8);
			memcpy(&prot, r + 56, 4);
			if (n >= sizeof(path))
				n = sizeof(path) - 1;
			memcpy(path, r + 64, n);
			path[n] = 0;
			if ((h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) || !(prot & PROT_EXEC) ||
			    path[0] != '/')
				continue;
			usdt_mapped(s, t[0], maj, min, ino, path, 1);
			continue;
		}
		if ((h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT) ||
		    h.size < sizeof(h) + sizeof(t))
			continue;
		memcpy(t, s->buf + off + sizeof(h), sizeof(t));	/* pid, ppid, tid, ptid */
		if (h.type == PERF_RECORD_FORK && t[0] != t[1]) {
			struct proc *parent = proc_find(s, t[1]);

			anchor_add(s, t[0], parent ? parent->cov : 1);
		} else if (h.type == PERF_RECORD_EXIT && t[0] == t[2]) {
			proc_del(s, t[0]);
		}
	}
}

static int fill(struct uevent_session *s, int all)
{
	uint64_t watermark = all ? UINT64_MAX : _uevent_mono_ns() - HOLD_MARGIN_NS;
	int i, err;

	if (s->rec_fd >= 0 && _uevent_rec_flush(s) < 0)
		return s->rec_err;
	err = keep_held(s);
	if (err < 0)
		return err;
	for (i = 0; i < s->nr_rings; i++) {
		struct ring *r = &s->rings[i];
		size_t from = s->buf_len;
		ssize_t n;

		do {
			err = buf_reserve(s, r->map_size);
			if (err < 0)
				return err;
			n = uevent_ring_read(r->base, r->map_size, s->buf + s->buf_len,
					     s->buf_cap - s->buf_len);
			if (n == -EINVAL)
				s->st.corrupt++;
			if (n > 0) {
				s->buf_len += (size_t)n;
				s->st.bytes += (uint64_t)n;
			}
		} while (n > 0);
		if (s->anchor_tree)
			follow_tree(s, from);
	}
	return index_records(s, watermark);
}

/* Overwrite mode: rings written backward from data_head; walk from head while whole. */
static int snapshot(struct uevent_session *s)
{
	int i, err;

	if (s->rec_fd >= 0 && _uevent_rec_flush(s) < 0)
		return s->rec_err;
	s->buf_len = 0;
	for (i = 0; i < s->nr_rings; i++) {
		struct ring *r = &s->rings[i];
		struct perf_event_mmap_page *pg = r->base;
		const uint8_t *data = (const uint8_t *)r->base + pg->data_offset;
		uint64_t size = pg->data_size, head, pos;

		ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		err = buf_reserve(s, (size_t)size);
		if (err < 0) {
			ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
			return err;
		}
		for (pos = 0; pos + 8 <= size;) {
			struct perf_event_header h;

			_uevent_ring_copy(data, size, head + pos, &h, sizeof(h));
			if (h.size < 8 || (h.size & 7) || pos + h.size > size || h.type == 0)
				break;
			/* the oldest bytes may be a record the kernel overwrote half of */
			if ((uint64_t)-head < pos + h.size && (uint64_t)-head < size)
				break;
			_uevent_ring_copy(data, size, head + pos, s->buf + s->buf_len, h.size);
			s->buf_len += h.size;
			pos += h.size;
		}
		ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	}
	err = index_records(s, UINT64_MAX);
	return err < 0 ? err : (int)s->qn;
}

UEVENT_EXPORT int uevent_session__snapshot(struct uevent_session *s)
{
	int ret;

	if (!s || !(s->o.flags & UEVENT_SESSION_OVERWRITE))
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = snapshot(s);
	reader_leave(s);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

/* Decode s->buf at off into rec; 1 = return it, 0 = skip it. */
static int deliver(struct uevent_session *s, uint32_t off, struct uevent_perf_record *rec)
{
	const uint8_t *r = s->buf + off;
	struct perf_event_header h;
	uint64_t ident = 0;
	int kind, err;

	memcpy(&h, r, sizeof(h));
	if (rec_len(r, &h) < h.size) {
		/* trimmed to its own bytes, so the recorded perf.data holds what perf expects */
		h.size = (uint16_t)rec_len(r, &h);
		memcpy(s->buf + off + offsetof(struct perf_event_header, size), &h.size,
		       sizeof(h.size));
		s->st.trimmed++;
	}
	if (h.size >= 16) {
		if (h.type == PERF_RECORD_SAMPLE)
			memcpy(&ident, r + 8, 8);
		else
			memcpy(&ident, r + h.size - 8, 8);
	}
	kind = kind_of(s, ident);
	err = uevent_perf_record_decode(r, h.size, UEVENT_BO_HOST,
					&s->fmt[kind < 0 ? K_DUMMY : kind], rec);
	if (err < 0) {
		s->st.corrupt++;
		return 0;
	}
	_uevent_session_tls_join(s, rec);	/* a deferred TLS dump (tls-deferred.c) */
	if (s->rec_fd >= 0) {
		uint64_t alias = is_usdt(kind) ? rec_id(s, ident) : ident;

		/*
		 * The identifier: first in a sample, last in the others (and LOST's id);
		 * a sample's raw data starts with its event's tracepoint id (common_type).
		 */
		if (alias != ident && h.type == PERF_RECORD_SAMPLE) {
			/* BASE_ST's fields (IDENTIFIER, TID, TIME, CPU), the raw size, raw */
			size_t raw_at = sizeof(h) + _uevent_sample_id_size(BASE_ST) + 4;
			uint16_t type = (uint16_t)s->config[kind];

			memcpy(s->buf + off + 8, &alias, 8);
			if (rec->body == UEVENT_BODY_UEVENT && h.size >= raw_at + 2)
				memcpy(s->buf + off + raw_at, &type, 2);
		} else if (alias != ident) {
			memcpy(s->buf + off + h.size - 8, &alias, 8);
			if (h.type == PERF_RECORD_LOST)
				memcpy(s->buf + off + 8, &alias, 8);
		}
		if (rec->id.fields & UEVENT_ID_TIME) {
			if (!s->rec_t0 || rec->id.time < s->rec_t0)
				s->rec_t0 = rec->id.time;
			if (rec->id.time > s->rec_t1)
				s->rec_t1 = rec->id.time;
		}
		_uevent_rec_append(s, r, h.size);
	}
	if (rec->body == UEVENT_BODY_SAMPLE)
		rec->u.sample.event_index = kind < 0 ? -1 : s->kind_ev[kind];
	else if (rec->body == UEVENT_BODY_UEVENT)
		rec->u.uevent.event_index = kind < 0 ? -1 : s->kind_ev[kind];
	switch (rec->type) {
	case PERF_RECORD_LOST:
		s->st.lost += rec->u.lost.lost;
		return 1;
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost_samples += rec->u.lost.lost;
		return 1;
	case PERF_RECORD_UEVENT:
		if (rec->u.uevent.flags & UEVENT_RECORD_TRUNCATED)
			s->st.truncated++;
		s->st.uevents++;
		return 1;
	case PERF_RECORD_SAMPLE:
		return kind == K_SAMPLES || (s->o.flags & UEVENT_SESSION_ALL_RECORDS);
	default:
		return !!(s->o.flags & (UEVENT_SESSION_ALL_RECORDS |
					(rec->type == PERF_RECORD_BPF_EVENT ||
					 rec->type == PERF_RECORD_KSYMBOL ? UEVENT_SESSION_BPF_EVENTS : 0)));
	}
}

static int64_t now_ms(void)
{
	return (int64_t)(_uevent_mono_ns() / 1000000);
}

static int session_next(struct uevent_session *s, struct uevent_perf_record *rec, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	int err, filled = 0, settled = 0;

	for (;;) {
		struct epoll_event evs[16];
		int n, i, wait;

		int live = 0, held, polled;

		if (is_shut(s))
			return -ECANCELED;
		while (s->qi < s->qready) {
			if (deliver(s, s->q[s->qi++].off, rec)) {
				s->st.records++;
				return 1;
			}
		}
		for (i = 0; i < s->nr_rings; i++)
			live += s->rings[i].live;
		if (s->o.flags & UEVENT_SESSION_OVERWRITE) {
			/* flight recorder: only __snapshot() reads the rings */
		} else if (!live) {
			/* every task is gone: nothing more can come, so nothing need wait */
			if (!filled) {
				err = fill(s, 1);
				if (err < 0)
					return err;
				filled = 1;
				if (s->qready > s->qi)
					continue;
			}
		} else if (!filled || timeout_ms) {
			err = fill(s, 0);
			if (err < 0)
				return err;
			filled = 1;
			if (s->qready > s->qi)
				continue;
		}
		if (s->rec_fd >= 0 && _uevent_rec_flush(s) < 0)
			return s->rec_err;
		held = s->qn > s->qready;
		if (held && timeout_ms == 0 && !settled) {
			/*
			 * Do not wait for new records, but let the ones already here settle:
			 * after the margin the next round gives them out in order.
			 */
			uint64_t ready_at = s->q[s->qready].time + HOLD_MARGIN_NS, now = _uevent_mono_ns();

			if (ready_at > now) {
				uint64_t ns = ready_at - now < HOLD_MARGIN_NS ? ready_at - now
									  : HOLD_MARGIN_NS;
				struct timespec ts = { 0, (long)ns };

				nanosleep(&ts, NULL);
			}
			settled = 1;
			filled = 0;
			continue;
		}
		if (timeout_ms == 0 || !live)
			return 0;
		wait = timeout_ms < 0 ? -1 : (int)(deadline - now_ms());
		if (timeout_ms > 0 && wait <= 0)
			return 0;
		/* records held back go out once the margin has passed */
		if (held && (wait < 0 || wait > (int)(HOLD_MARGIN_NS / 2000000)))
			wait = (int)(HOLD_MARGIN_NS / 2000000);
		/* with wakeup_events > 1 marks wait in the rings: look every so often */
		polled = wait < 0 || wait > POLL_MS;
		if (polled)
			wait = POLL_MS;
		n = epoll_wait(s->epfd, evs, 16, wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n > 0)
			s->st.wakeups++;
		if (n == 0 && !held && !polled)
			return 0;
		for (i = 0; i < n; i++) {
			struct ring *r;

			if (evs[i].data.u32 == WAKE_EV)
				continue;	/* shut down: the loop's top returns */
			r = &s->rings[evs[i].data.u32];

			/* the task is gone: drain its ring once more, then stop polling it */
			if ((evs[i].events & EPOLLHUP) && r->live) {
				r->live = 0;
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, r->fd, NULL);
				filled = 0;
			}
		}
	}
}

UEVENT_EXPORT int uevent_session__next(struct uevent_session *s, struct uevent_perf_record *rec,
				       int timeout_ms)
{
	int ret;

	if (!s || !rec)
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = session_next(s, rec, timeout_ms);
	reader_leave(s);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

UEVENT_EXPORT int uevent_session__read_batch(struct uevent_session *s,
					     struct uevent_sample_batch *samples,
					     struct uevent_record_batch *uevents, int timeout_ms)
{
	int ret;

	if (!s)
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = _uevent_session_batch(s, samples, uevents, timeout_ms);
	reader_leave(s);
	return ret;
}

UEVENT_EXPORT int uevent_session__stats(const struct uevent_session *s,
					struct uevent_session_stats *st, size_t sz)
{
	struct uevent_session_stats now;

	if (!s || !st)
		return _uevent_err(EINVAL);
	now = s->st;
	now.lost_counted = _uevent_session_lost_counted(s);
	memset(st, 0, sz);
	memcpy(st, &now, sz < sizeof(now) ? sz : sizeof(now));
	return 0;
}

UEVENT_EXPORT int uevent_session__shutdown(struct uevent_session *s)
{
	uint64_t one = 1;

	if (!s)
		return _uevent_err(EINVAL);
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->shut, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	/* the counter stays readable: every later wait ends at once too */
	if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return _uevent_err(errno);
	return 0;
}

/* What the session holds that is not a kernel object. */
static void session_free(struct uevent_session *s)
{
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->left);
	free(s);
}

UEVENT_EXPORT void uevent_session__close(struct uevent_session *s)
{
	size_t i;
	int j, cancel;

	if (!s)
		return;
	/* a thread cancelled in here would leave the session half freed, its events in */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* a reader in another thread returns (-ECANCELED) before anything goes */
	uevent_session__shutdown(s);
	pthread_mutex_lock(&s->lock);
	while (s->readers)
		pthread_cond_wait(&s->left, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->rec_fd >= 0)
		_uevent_rec_end(s);
	for (j = 0; j < s->nr_rings; j++)
		if (s->rings[j].base && s->rings[j].base != MAP_FAILED)
			munmap(s->rings[j].base, s->rings[j].map_size);
	for (i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	for (i = 0; i < s->nprocs; i++)
		proc_close(&s->procs[i]);
	free(s->procs);
	for (i = 0; i < (size_t)s->nobjs; i++) {
		for (j = 0; j < USDT_CLASSES; j++)
			free(s->objs[i].format[j]);
		group_put(&s->objs[i]);
	}
	free(s->objs);
	free(s->plain);
	if (s->user_fd >= 0)
		close(s->user_fd);
	free(s->rings);
	free(s->fds);
	free(s->ids);
	free(s->buf);
	free(s->hold);
	free(s->q);
	free(s->wbuf);
	for (j = 0; j < K_COUNT; j++)
		free(s->tp_format[j]);
	session_free(s);
	pthread_setcancelstate(cancel, NULL);
}
