/* session-uprobes.c - the uprobe events a session reads an object's probes with: one
 * group of them per object, shared by the sessions of a process, reaped when it died. */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

/* The size-class probes of emit.c, each a kind of event of its own (its raw layout). */
#define CLASS_SIZE(n) n,
#define CLASS_NAME(n) "emit" #n,
const uint32_t _uevent_usdt_class_size[USDT_CLASSES] = { _UEVENT_USDT_CLASSES(CLASS_SIZE) };
const char *const _uevent_usdt_class_name[USDT_CLASSES] = { _UEVENT_USDT_CLASSES(CLASS_NAME) };

static int usdt_fetch_args(struct uevent_session *s, const struct _uevent_sdt_probe *p,
			   char f[3][64])
{
	char tok[3][64];
	int i;

	if (sscanf(p->args, "%63s %63s %63s", tok[0], tok[1], tok[2]) != 3) {
		_uevent_add_reason(s, "usdt: probe %s has arguments '%s', not type, data, size", p->name,
			   p->args);
		return -EINVAL;
	}
	for (i = 0; i < 3; i++)
		if (_uevent_sdt_arg_fetch(tok[i], f[i], 64) < 0) {
			_uevent_add_reason(s, "usdt: cannot translate SDT argument '%s'", tok[i]);
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
		_uevent_add_reason(s, "usdt: cannot add uprobe event %s (%s)", p->name, strerror(-err));
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
		_uevent_add_reason(s, "usdt: uprobe event %s/%s has no usable format", o->group,
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
 * The group is named libuevent_PID_START_SEQ_NS: START the process's start time (field
 * 22 of /proc/PID/stat, clock ticks after boot), NS the inode of its PID namespace. A
 * later session reaps it when the process dies without closing (_uevent_usdt_reap):
 * only when that namespace is its own, where PID means the process, and also when PID
 * was reused, which START tells.
 *
 * A process holds at most GROUPS_MAX groups (one per object and payload cap): the one
 * after is refused with EMFILE. Each costs the kernel at exit what its events do.
 */
#define GROUPS_MAX	16

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
static int ngroups;
static pid_t groups_pid;
static unsigned long long groups_start;	/* this process's start time (0: unknown) */

/* Process pid's start time in clock ticks after boot: field 22 of /proc/PID/stat
 * (0: unknown). The name in field 2 may hold spaces and parentheses: after the last ')'. */
static unsigned long long proc_start_time(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* fields 3..21 to skip, then 22 */
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

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
 * second; what is still busy then is left for _uevent_usdt_reap once this process is gone.
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
		ngroups = 0;
		groups_pid = getpid();
		groups_start = proc_start_time((int)groups_pid);
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
			_uevent_add_reason(s, "usdt: uprobe event %s/%s has another layout", g->group,
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
void _uevent_usdt_obj_put(struct usdt_obj *o)
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
		if (*pp) {
			*pp = o->grp->next;
			ngroups--;
		}
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

	if (_uevent_uprobe_path_check(path) < 0) {	/* a file anyone can name and map */
		_uevent_add_reason(s, "usdt: a mapped object whose path holds a space or a "
				   "control character cannot be given uprobes (uprobe_events "
				   "would read more commands in it): its marks are not read");
		return -EINVAL;
	}
	n = _uevent_sdt_find_all(path, "libuevent", p, ARRAY_SIZE(p));
	for (i = 0; i < n; i++)
		for (c = 0; c < USDT_CLASSES; c++)
			found += !strcmp(p[i].name, _uevent_usdt_class_name[c]);
	if (n < 0 || !found) {
		_uevent_add_reason(s, "usdt: no libuevent:emit16..emit4096 probes in %s (%s)", path,
			   n < 0 ? strerror(-n) : n ? "a libuevent older than the size-class "
			   "probes: fetching its marks would copy the process's memory" :
			   "no probes");
		return n < 0 ? n : -ENOENT;
	}
	snprintf(o->group, sizeof(o->group), "libuevent_%d_%llu_%d_%llu", (int)getpid(),
		 groups_start, seq++, (unsigned long long)pidns_id());
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
 * The numbers of a group name of ours, "libuevent_N_N..._N/" at line + 2 (after "p:"):
 * how many (0: not ours), at most 4 into v; *at: where the line's event name ends.
 */
static int group_numbers(const char *line, unsigned long long v[4], const char **at)
{
	const char *p;
	char *end = NULL;
	int n = 0;

	if (strncmp(line, "p:libuevent_", 12))
		return 0;
	for (p = line + 12; n < 4; p = end + 1) {
		if (*p < '0' || *p > '9')
			return 0;
		v[n++] = strtoull(p, &end, 10);
		if (*end == '/')
			break;
		if (*end != '_')
			return 0;
	}
	if (*end != '/' || n < 2)
		return 0;
	for (p = end + 1; (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'); p++)
		;
	if (*p != ' ')
		return 0;
	*at = p + 1;
	return n;
}

/*
 * A process killed with sessions open could not remove their events: every session's
 * open removes those of the dead, all of them. A group is reaped when its name says it
 * is ours (libuevent_PID_START_SEQ_NS), NS is our PID namespace and PID names no process
 * in it, or one started at another time than START (the PID was reused); one of another
 * namespace is left to its own. The names before the start time: libuevent_PID_SEQ_NS
 * is reaped when PID names no process of our namespace; libuevent_PID_SEQ when PID
 * names no process here and its object's path is there to see (a process of another
 * mount namespace sees other files). An event still in use refuses (EBUSY), so a live
 * session never loses one.
 */
void _uevent_usdt_reap(void)
{
	const char *dir = _uevent_tracefs();
	unsigned long long ns = pidns_id(), v[4], start;
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
		const char *at;
		char obj[PATH_MAX], **p;
		int nv = group_numbers(line, v, &at), pid, alive;

		if (!nv || v[0] == 0 || v[0] > INT_MAX)
			continue;
		if (nv >= 3 && (!ns || v[nv - 1] != ns))
			continue;
		pid = (int)v[0];
		alive = kill(pid, 0) == 0 || errno != ESRCH;
		if (alive && nv == 4) {
			/* a PID reused: its process now started at another time */
			start = proc_start_time(pid);
			alive = !start || start == v[1];
		}
		if (alive)
			continue;
		if (nv == 2 && (sscanf(at, "%4095[^:]", obj) != 1 || access(obj, F_OK) < 0))
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
int _uevent_usdt_obj_events(struct uevent_session *s, struct usdt_obj *o, const char *path)
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
	if (ngroups >= GROUPS_MAX) {
		pthread_mutex_unlock(&groups_lock);
		_uevent_add_reason(s, "usdt: this process holds %d groups of uprobe events already, "
				   "the most it may (one per object and payload cap): close sessions "
				   "that read other objects or with other usdt_max_payload", ngroups);
		return -EMFILE;
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
		ngroups++;
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
struct usdt_obj *_uevent_usdt_obj_get(struct uevent_session *s, uint32_t maj, uint32_t min,
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
