/* symbolize.c - name (pid, address, time) from a recording's side-band: ELF/DWARF,
 * kallsyms, perf maps, jitdump files and the in-stream JIT uevents. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "fs-trust.h"
#include "symbolize-internal.h"

int _uevent_sym_grow(void **v, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*v, c * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

const char *_uevent_sym_intern(struct uevent_symbolizer *s, const char *str)
{
	size_t i;
	char *d;

	for (i = 0; i < s->nstrs; i++)
		if (!strcmp(s->strs[i], str))
			return s->strs[i];
	if (_uevent_sym_grow((void **)&s->strs, &s->strs_cap, s->nstrs, sizeof(*s->strs)) < 0)
		return NULL;
	d = strdup(str);
	if (!d)
		return NULL;
	s->strs[s->nstrs++] = d;
	return d;
}

static struct proc *proc_get(struct uevent_symbolizer *s, uint32_t pid, int create)
{
	size_t i;
	struct proc *p;

	for (i = s->nprocs; i-- > 0;)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	if (!create)
		return NULL;
	if (_uevent_sym_grow((void **)&s->procs, &s->procs_cap, s->nprocs, sizeof(*s->procs)) < 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->ppid = pid;
	s->procs[s->nprocs++] = p;
	return p;
}

static struct thread *thread_get(struct uevent_symbolizer *s, uint32_t tid, int create)
{
	size_t i;
	struct thread *t;

	for (i = s->nthreads; i-- > 0;)
		if (s->threads[i]->tid == tid)
			return s->threads[i];
	if (!create)
		return NULL;
	if (_uevent_sym_grow((void **)&s->threads, &s->threads_cap, s->nthreads,
			     sizeof(*s->threads)) < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->ptid = tid;
	s->threads[s->nthreads++] = t;
	return t;
}

/* The path to open for a path the stream names (opts->root prefixed). */
void _uevent_sym_real_path(const struct uevent_symbolizer *s, const char *path, char *buf,
			   size_t cap)
{
	snprintf(buf, cap, "%s%s", s->o.root ? s->o.root : "", path);
}

/*
 * Opens a file the recording points at, to read: others can plant one where it is looked
 * for (/tmp/perf-PID.map), so a symlink there is not followed, a FIFO or a device (a link
 * to /dev/zero) is skipped rather than read forever, and *size, the bytes to read at
 * most, is the size it had when opened. What is skipped is said on the reason channel
 * (uevent_reason()), "symbolizer: skipped PATH: why". Returns a stream or NULL.
 */
int _uevent_sym_open_input_fd(const char *path, int nofollow, off_t *size)
{
	char why[600] = "";
	int fd = _uevent_open_regular(AT_FDCWD, path, nofollow, size, why, sizeof(why));

	if (fd < 0 && *why)
		_uevent_reason("symbolizer: %s", why);
	return fd;
}

FILE *_uevent_sym_open_input(const char *path, off_t *size)
{
	int fd = _uevent_sym_open_input_fd(path, 1, size);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* ---- the API ------------------------------------------------------------------ */

static int add_map(struct uevent_symbolizer *s, struct proc *p, uint64_t addr, uint64_t len,
		   uint64_t pgoff, const char *path, uint64_t t);

UEVENT_EXPORT struct uevent_symbolizer *
uevent_symbolizer__new(const struct uevent_symbolizer_opts *opts)
{
	struct uevent_symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	err = _uevent_opts_copy(&s->o, sizeof(s->o), opts,
				offsetof(struct uevent_symbolizer_opts, flags));
	if (err < 0) {
		free(s);
		errno = -err;
		return NULL;
	}
	/* the paths are ours (a failed strdup leaves NULL): the caller's strings need
	 * not outlive this call */
	{
		const char **v[] = { &s->o.debug_dir, &s->o.kallsyms, &s->o.perf_map_dir,
				     &s->o.root };
		size_t i;

		for (i = 0; i < 4; i++)
			if (*v[i] && !(*v[i] = strdup(*v[i])))
				err = -ENOMEM;
	}
	if (err < 0) {
		uevent_symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static int feed_uevent(struct uevent_symbolizer *s, const struct uevent_perf_record *rec)
{
	const struct uevent_record *u = &rec->u.uevent;
	int bo = s->o.byte_order;
	uint64_t t = rec->id.time;
	struct proc *p;

	if (u->type < UEVENT_TYPE_JIT_CODE_LOAD || u->type > UEVENT_TYPE_JIT_CODE_UNLOAD)
		return 0;
	p = proc_get(s, rec->id.pid, 1);
	if (!p)
		return -ENOMEM;
	if (u->type == UEVENT_TYPE_JIT_CODE_LOAD) {
		struct uevent_jit_code_load l;

		if (uevent_jit_code_load_decode(u->data, u->size, bo, &l) < 0)
			return -EINVAL;
		return _uevent_sym_jit_load(s, &p->jit, l.code_addr, l.code_size, l.code_index,
					    l.name, l.name_len, t, UEVENT_SYM_JIT_UEVENT, "[jit]", 0);
	}
	if (u->type == UEVENT_TYPE_JIT_CODE_MOVE) {
		struct uevent_jit_code_move m;
		int ret;

		if (uevent_jit_code_move_decode(u->data, u->size, bo, &m) < 0)
			return -EINVAL;
		ret = _uevent_sym_jit_move(&p->jit, m.code_index, m.old_addr, m.new_addr,
					   m.code_size, t);
		return ret < 0 ? ret : 1;
	}
	{
		struct uevent_jit_code_unload un;
		struct code *c;

		if (uevent_jit_code_unload_decode(u->data, u->size, bo, &un) < 0)
			return -EINVAL;
		c = _uevent_sym_code_live(&p->jit, un.code_index, un.code_addr);
		if (c)
			_uevent_sym_code_end(&p->jit, c, t);
		return 1;
	}
}

UEVENT_EXPORT int uevent_symbolizer__feed(struct uevent_symbolizer *s,
					  const struct uevent_perf_record *rec)
{
	uint64_t t;
	int ret = 1;

	if (!s || !rec)
		return _uevent_err(EINVAL);
	t = rec->id.fields & UEVENT_ID_TIME ? rec->id.time : 0;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const struct uevent_perf_mmap *m = &rec->u.mmap;
		struct proc *p = proc_get(s, m->pid, 1);

		if (!p)
			return _uevent_err(ENOMEM);
		if (m->filename && _uevent_sym_is_jitdump_name(m->filename)) {
			if (!(s->o.flags & UEVENT_SYMBOLIZER_NO_JITDUMP) &&
			    _uevent_sym_read_jitdump(s, p, m->filename) < 0)
				return _uevent_err(ENOMEM);
			return 1;	/* the marker mapping, not code */
		}
		if (!(m->prot & 4) && rec->type == PERF_RECORD_MMAP2 &&
		    (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
			return 1;	/* data: never sampled code */
		if (add_map(s, p, m->addr, m->len, m->pgoff, m->filename ? m->filename : "//anon",
			    t) < 0)
			return _uevent_err(ENOMEM);
		break;
	}
	case PERF_RECORD_COMM: {
		struct thread *th = thread_get(s, rec->u.comm.tid, 1);
		struct comm *c;

		if (!th)
			return _uevent_err(ENOMEM);
		c = realloc(th->comms, (th->ncomms + 1) * sizeof(*c));
		if (!c)
			return _uevent_err(ENOMEM);
		th->comms = c;
		c[th->ncomms].time = t;
		c[th->ncomms].name = strdup(rec->u.comm.comm ? rec->u.comm.comm : "");
		if (!c[th->ncomms].name)
			return _uevent_err(ENOMEM);
		th->ncomms++;
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
			/* a new program: the old mappings and JIT code are gone */
			struct proc *p = proc_get(s, rec->u.comm.pid, 0);
			size_t i;

			for (i = 0; p && i < p->jit.n; i++)
				if (p->jit.v[i].end > t)
					p->jit.v[i].end = t;
			for (i = 0; p && i < p->jd.n; i++)
				if (p->jd.v[i].end > t)
					p->jd.v[i].end = t;
			if (p)
				p->jit.live = p->jd.live = 0;	/* none live now */
		}
		break;
	}
	case PERF_RECORD_FORK: {
		const struct uevent_perf_task *k = &rec->u.task;
		struct thread *th = thread_get(s, k->tid, 1);

		if (!th)
			return _uevent_err(ENOMEM);
		th->ptid = k->ptid;
		th->fork_time = k->time ? k->time : t;
		if (k->pid != k->ppid) {	/* a new process: its parent's space, copied */
			struct proc *p = proc_get(s, k->pid, 1);

			if (!p)
				return _uevent_err(ENOMEM);
			p->ppid = k->ppid;
			p->fork_time = th->fork_time;
		}
		break;
	}
	case PERF_RECORD_EXIT:
		break;
	case PERF_RECORD_KSYMBOL: {
		const struct uevent_perf_ksymbol *k = &rec->u.ksymbol;
		const char *dso = _uevent_sym_intern(s, "[kernel.kallsyms]");
		struct code *c;

		if (!dso)
			return _uevent_err(ENOMEM);
		if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
			_uevent_sym_code_end_overlap(&s->ksym, k->addr, k->len, t);
			break;
		}
		c = _uevent_sym_code_replace(&s->ksym, k->addr, k->len, t, k->name ? k->name : "",
					     k->name ? strlen(k->name) : 0);
		if (!c)
			return _uevent_err(ENOMEM);
		c->source = UEVENT_SYM_KERNEL;
		c->dso = dso;
		break;
	}
	case PERF_RECORD_UEVENT:
		if (rec->body != UEVENT_BODY_UEVENT)
			return 0;
		ret = feed_uevent(s, rec);
		return ret < 0 ? _uevent_err(-ret) : ret;
	default:
		return 0;
	}
	return ret;
}

UEVENT_EXPORT int64_t uevent_symbolizer__feed_file(struct uevent_symbolizer *s,
						 const char *path)
{
	struct uevent_perf_record rec = { .sz = sizeof(rec) };
	struct uevent_perf_file *f;
	int64_t n = 0;
	int ret;

	if (!s || !path)
		return _uevent_err(EINVAL);
	f = uevent_perf_file__open(path);
	if (!f) {
		ret = errno;
		_uevent_reason("%s", path);
		return _uevent_err(ret);
	}
	while ((ret = uevent_perf_file__next(f, &rec)) != 0) {
		if (ret == -EPROTO)		/* a uevent of a format unknown here */
			continue;
		/* -EINVAL from the feed (not the reader): a JIT uevent that does not decode */
		if (ret > 0 && (ret = uevent_symbolizer__feed(s, &rec)) == -EINVAL)
			continue;
		if (ret < 0) {
			_uevent_reason("%s at offset %" PRIu64, path, uevent_perf_file__offset(f));
			break;
		}
		n += ret;
	}
	uevent_perf_file__close(f);
	return ret < 0 ? _uevent_err(-ret) : n;
}

static void set_code(struct uevent_symbol *out, const struct code *c, uint64_t addr)
{
	out->name = c->name;
	out->dso = c->dso;
	out->offset = addr - c->addr;
	out->sym_addr = c->addr;
	out->sym_size = c->size;
	out->file = c->file;
	out->line = c->line;
	out->source = c->source;
}

/* Mappings are sorted by start: the last one covering addr that began by time t. */
static const struct map *map_find(const struct proc *p, uint64_t addr, uint64_t t)
{
	size_t i;

	for (i = p->nmaps; i-- > 0;) {
		const struct map *m = &p->maps[i];

		if (m->start <= t && addr >= m->addr && addr - m->addr < m->len)
			return m;
	}
	return NULL;
}

static int add_map(struct uevent_symbolizer *s, struct proc *p, uint64_t addr, uint64_t len,
		   uint64_t pgoff, const char *path, uint64_t t)
{
	struct map *mp;
	size_t i;

	if (_uevent_sym_grow((void **)&p->maps, &p->maps_cap, p->nmaps, sizeof(*p->maps)) < 0)
		return -ENOMEM;
	for (i = 0; i < p->nmaps; i++)	/* kept in time order for lookup */
		if (p->maps[i].start > t)
			break;
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*p->maps));
	mp = &p->maps[i];
	mp->addr = addr;
	mp->len = len;
	mp->pgoff = pgoff;
	mp->start = t;
	mp->file = _uevent_sym_file_get(s, path);
	if (!mp->file) {
		memmove(&p->maps[i], &p->maps[i + 1], (p->nmaps - i) * sizeof(*p->maps));
		return -ENOMEM;
	}
	p->nmaps++;
	return 0;
}

/* A live process's executable mappings, as made before the recording (time 0). */
static void read_proc_maps(struct uevent_symbolizer *s, struct proc *p)
{
	char path[64], line[4096];
	FILE *f;

	p->proc_maps_read = 1;
	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &n) < 4 ||
		    perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (add_map(s, p, a, b - a, off, n && line[n] ? line + n : "//anon", 0) < 0)
			break;
	}
	fclose(f);
}

static int is_anon(const char *path)
{
	return !strncmp(path, "//anon", 6) || !strncmp(path, "[anon", 5) ||
	       !strncmp(path, "/memfd:", 7) || !strncmp(path, "[heap]", 6) ||
	       !strncmp(path, "[stack]", 7) || path[0] != '/';
}

static int lookup(struct uevent_symbolizer *s, uint32_t pid, uint64_t addr, uint64_t time,
		  struct uevent_symbol *out)
{
	const struct code *c;
	const struct map *m = NULL;
	struct proc *p, *self;
	uint64_t t = time == TIME_MAX ? TIME_MAX - 1 : time;	/* live code ends at TIME_MAX */
	int depth;

	if (!s || !out || out->sz < sizeof(*out))
		return _uevent_err(EINVAL);
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	if (addr >= 0xffff800000000000ull) {		/* x86-64 / arm64 kernel half */
		c = _uevent_sym_kern_find(s, addr, t);
		if (!c)
			return _uevent_err(ENOENT);
		set_code(out, c, addr);
		return 0;
	}
	self = proc_get(s, pid, !!(s->o.flags & UEVENT_SYMBOLIZER_PROC_MAPS));
	/* this process, then the ones it was forked from, as they were at the fork */
	for (p = self, depth = 0; p && depth < 64; depth++) {
		c = _uevent_sym_code_find(&p->jit, addr, t);
		if (!c)
			c = _uevent_sym_code_find(&p->jd, addr, t);
		if (c) {
			set_code(out, c, addr);
			return 0;
		}
		m = map_find(p, addr, t);
		if (!m && (s->o.flags & UEVENT_SYMBOLIZER_PROC_MAPS) && !p->proc_maps_read) {
			read_proc_maps(s, p);
			m = map_find(p, addr, t);
		}
		if (m || p->ppid == p->pid)
			break;
		if (p->fork_time && p->fork_time < t)
			t = p->fork_time;
		p = proc_get(s, p->ppid, 0);
	}
	if (m && !is_anon(m->file->path)) {
		out->dso = m->file->path;
		out->offset = addr - m->addr + m->pgoff;
		return _uevent_sym_file_lookup(s, m->file, out->offset, addr, out) < 0 ?
			_uevent_err(ENOENT) : 0;
	}
	/* anonymous code: a JIT that wrote only a perf map */
	p = self ? self : proc_get(s, pid, 1);
	if (p && !p->pmap_read)
		_uevent_sym_read_perf_map(s, p);
	c = p ? _uevent_sym_code_find(&p->pmap, addr, 0) : NULL;
	if (c) {
		set_code(out, c, addr);
		return 0;
	}
	if (m) {
		out->dso = m->file->path;
		out->offset = addr - m->addr + m->pgoff;
	}
	return _uevent_err(ENOENT);
}

UEVENT_EXPORT int uevent_symbolizer__lookup(struct uevent_symbolizer *s, uint32_t pid,
					    uint64_t addr, uint64_t time,
					    struct uevent_symbol *out)
{
	int ret = lookup(s, pid, addr, time, out);

	if (ret == 0 && !(s->o.flags & UEVENT_SYMBOLIZER_NO_DEMANGLE))
		out->name = _uevent_demangled(&s->dem, out->name);
	return ret;
}

UEVENT_EXPORT const char *uevent_symbolizer__comm(struct uevent_symbolizer *s, uint32_t tid,
						  uint64_t time)
{
	struct thread *th;
	int depth;

	if (!s)
		return NULL;
	for (th = thread_get(s, tid, 0), depth = 0; th && depth < 64; depth++) {
		const char *best = NULL;
		size_t i;

		for (i = 0; i < th->ncomms; i++)
			if (th->comms[i].time <= time)
				best = th->comms[i].name;
		if (!best && th->ncomms && !th->fork_time)
			best = th->comms[0].name;	/* named before the recording began */
		if (best)
			return best;
		if (th->ptid == th->tid)
			break;
		if (th->fork_time && th->fork_time < time)
			time = th->fork_time;
		th = thread_get(s, th->ptid, 0);
	}
	return NULL;
}

UEVENT_EXPORT void uevent_symbolizer__free(struct uevent_symbolizer *s)
{
	size_t i, k;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++) {
		free(s->procs[i]->maps);
		_uevent_sym_code_free(&s->procs[i]->jit);
		_uevent_sym_code_free(&s->procs[i]->jd);
		_uevent_sym_code_free(&s->procs[i]->pmap);
		free(s->procs[i]);
	}
	for (i = 0; i < s->nthreads; i++) {
		for (k = 0; k < s->threads[i]->ncomms; k++)
			free(s->threads[i]->comms[k].name);
		free(s->threads[i]->comms);
		free(s->threads[i]);
	}
	for (i = 0; i < s->nfiles; i++) {
		_uevent_sym_file_close(s->files[i]);
		free(s->files[i]->path);
		free(s->files[i]);
	}
	for (i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	for (i = 0; i < s->njitdumps; i++)
		free(s->jitdumps[i]);
	_uevent_demangler_free(s->dem);
	_uevent_sym_code_free(&s->kern);
	_uevent_sym_code_free(&s->ksym);
	free(s->procs);
	free(s->threads);
	free(s->files);
	free(s->strs);
	free(s->jitdumps);
	free((char *)s->o.debug_dir);
	free((char *)s->o.kallsyms);
	free((char *)s->o.perf_map_dir);
	free((char *)s->o.root);
	free(s);
}
