/* session-follow.c - a session's set-up while it reads: the process tree it follows
 * (anchors for its children) and the probes of the objects that tree maps. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "session-internal.h"

void _uevent_proc_close(struct proc *pr)
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
		_uevent_proc_close(pr);
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

	nt = _uevent_list_tasks((int)pid, &tasks);
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
				err = _uevent_push_fd(s, fd, K_USDT + c);
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
	o = _uevent_usdt_obj_get(s, maj, min, ino, &created);
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
		if (_uevent_usdt_obj_events(s, o, path) < 0)
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
void _uevent_usdt_maps(struct uevent_session *s, uint32_t pid)
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

/*
 * The set-up hook of the read path (s->follow): a FORK, EXIT or MMAP2 record just read,
 * whole (its header's size in the buffer). A new process of the tree gets its anchors,
 * a mapped object with probes its events.
 */
static void follow_record(struct uevent_session *s, const uint8_t *rec)
{
	struct perf_event_header h;
	uint32_t t[4];

	memcpy(&h, rec, sizeof(h));
	if (h.type == PERF_RECORD_MMAP2 && h.size > sizeof(h) + 64) {
		const uint8_t *r = rec + sizeof(h);
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
			return;
		usdt_mapped(s, t[0], maj, min, ino, path, 1);
		return;
	}
	if ((h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT) ||
	    h.size < sizeof(h) + sizeof(t))
		return;
	memcpy(t, rec + sizeof(h), sizeof(t));	/* pid, ppid, tid, ptid */
	if (h.type == PERF_RECORD_FORK && t[0] != t[1]) {
		struct proc *parent = proc_find(s, t[1]);

		anchor_add(s, t[0], parent ? parent->cov : 1);
	} else if (h.type == PERF_RECORD_EXIT && t[0] == t[2]) {
		proc_del(s, t[0]);
	}
}

/* The session follows the process tree it watches: its root, and the hook for the rest. */
int _uevent_follow_start(struct uevent_session *s, uint32_t pid)
{
	if (!proc_add(s, pid, 1))
		return -ENOMEM;
	s->follow = follow_record;
	return 0;
}
