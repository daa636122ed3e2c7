/* jit.c - JIT hooks, the API: a session that writes a jitdump for perf inject --jit,
 * /tmp/perf-PID.map and JIT uevents (jit-dump.c, jit-map.c, jit-marker.c), its loads,
 * moves and unloads (jit-code.c keeps the code), fork and close. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jit-internal.h"

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uevent_jit *sessions;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Hold every session across fork() so the child never inherits a lock held by a
 * thread that does not exist there; the child then marks each session for reopening. */
static void fork_prepare(void)
{
	struct uevent_jit *j;

	pthread_mutex_lock(&list_lock);
	for (j = sessions; j; j = j->next) {
		pthread_mutex_lock(&j->lock);
		_uevent_jit_stage_lock_all(j);
		pthread_mutex_lock(&j->slab_lock);
		if (!j->forked) {	/* the parent's records, written once, by the parent */
			if (j->staged)
				_uevent_jit_stage_merge(j, _uevent_now_ns(), 1);
			_uevent_jit_dump_flush(j);
			_uevent_jit_map_flush(j);
		}
		pthread_mutex_lock(&j->wlock);	/* a writer may not have let go of them yet */
		pthread_mutex_lock(&j->mlock);
	}
}

/* What fork_prepare took of j, let go in the parent and the child alike. */
static void fork_release(struct uevent_jit *j)
{
	pthread_mutex_unlock(&j->mlock);
	pthread_mutex_unlock(&j->wlock);
	pthread_mutex_unlock(&j->slab_lock);
	_uevent_jit_stage_unlock_all(j);
	pthread_mutex_unlock(&j->lock);
}

static void fork_parent(void)
{
	struct uevent_jit *j;

	for (j = sessions; j; j = j->next)
		fork_release(j);
	pthread_mutex_unlock(&list_lock);
}

__thread pid_t _uevent_jit_tid;		/* _uevent_jit_gettid() */
static uint64_t serial_next;		/* sessions' serials: a stage cache never confuses
					   a closed session with a new one at its address */

static void fork_child(void)
{
	pid_t was = _uevent_jit_tid, tid = (pid_t)syscall(SYS_gettid);
	struct uevent_jit *j;

	_uevent_jit_tid = 0;
	for (j = sessions; j; j = j->next) {
		struct stage *s;

		__atomic_store_n(&j->forked, 1, __ATOMIC_RELAXED);
		j->maplen = 0;
		_uevent_ga_reset(&j->mapq);	/* the parent's threads' lines, not ours */
		j->dumplen = 0;
		j->cp_waiters = 0;	/* the parent's threads waiting for room */
		for (s = j->stages; s; s = s->next) {
			/* the parent's records, written */
			s->reclen = s->rechead = s->ixlen = s->ixhead = 0;
			/* this thread's stage (its cache keeps it) under its tid here: a
			 * thread of ours given the parent's tid would share it */
			if (was && s->tid == was)
				s->tid = tid;
		}
		j->flush_due = UINT64_MAX;
		j->werr = 0;			/* the parent's files' */
		fork_release(j);
	}
	pthread_mutex_unlock(&list_lock);
}

static void map_flush_all(void);

static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(map_flush_all);
}

static void close_files(struct uevent_jit *j)
{
	if (j->dump_map)
		munmap(j->dump_map, j->dump_map_len);
	j->dump_map = NULL;
	if (j->win)
		munmap(j->win, (size_t)DUMP_VA);
	j->win = NULL;
	j->dump_off = j->dump_cap = j->dump_file = j->dump_alloc = j->map_scan = 0;
	j->dumplen = 0;
	if (j->dump_fd >= 0)
		close(j->dump_fd);
	if (j->map_fd >= 0)
		close(j->map_fd);
	j->dump_fd = j->map_fd = -1;
}

static int open_files(struct uevent_jit *j, const char *map_path)
{
	int ret;

	j->pid = getpid();
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP) && (ret = _uevent_jit_open_dump(j)) < 0)
		return ret;
	if (!(j->flags & UEVENT_JIT_NO_PERF_MAP) && (ret = _uevent_jit_open_map(j, map_path)) < 0)
		return ret;
	return 0;
}

/* In a fork child: the parent's files stay the parent's; start ours, holding what the
 * child inherited (_uevent_jit_replay). */
int _uevent_jit_check_fork(struct uevent_jit *j)
{
	int ret;

	if (likely(!j->forked))
		return 0;
	close_files(j);
	ret = open_files(j, NULL);
	if (ret == 0)
		ret = _uevent_jit_replay(j);
	if (ret < 0)
		close_files(j);
	if (j->staged && j->dumplen)
		_uevent_jit_due_min(j, j->dump_t0 + DUMP_BUF_AGE_NS);
	/* only now: a staged load (which reads it without the lock) stamps its records
	 * after the replay's, and goes after them in the file */
	__atomic_store_n(&j->forked, 0, __ATOMIC_RELEASE);
	return ret;
}

/* At exit: the records and lines still buffered (a session never closed, or the process
 * ends first). */
static void map_flush_all(void)
{
	struct uevent_jit *j;

	if (pthread_mutex_trylock(&list_lock))
		return;
	for (j = sessions; j; j = j->next)
		if (!pthread_mutex_trylock(&j->lock)) {
			if (!j->forked) {
				if (j->staged)
					_uevent_jit_stage_merge(j, _uevent_now_ns(), 0);
				_uevent_jit_dump_flush(j);
				_uevent_jit_map_flush(j);
			}
			pthread_mutex_unlock(&j->lock);
		}
	pthread_mutex_unlock(&list_lock);
}

/* ---- the API ------------------------------------------------------------------ */

UEVENT_EXPORT struct uevent_jit *uevent_jit__open(const struct uevent_jit_opts *opts)
{
	const char *dir, *map_path;
	struct uevent_jit_opts o;
	unsigned int flags;
	struct uevent_jit *j;
	int ret;

	ret = _uevent_opts_copy(&o, sizeof(o), opts, offsetof(struct uevent_jit_opts, dir));
	if (ret < 0) {
		_uevent_reason(ret == -E2BIG ? "jit options: a field this library does not know "
			       "is set (a newer caller)" : "jit options: sz too small");
		errno = -ret;
		return NULL;
	}
	dir = o.dir;
	map_path = o.perf_map_path;
	flags = o.flags;
	if (flags & ~(unsigned)(UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_PERF_MAP |
				UEVENT_JIT_NO_UEVENT | UEVENT_JIT_BUFFER_PERF_MAP |
				UEVENT_JIT_BUFFER_JITDUMP)) {
		_uevent_reason("jit: unknown flags 0x%x", flags);
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&atfork_once, register_atfork);
	/* aligned: the fields threads poll each have a cache line of their own */
	j = aligned_alloc(64, (sizeof(*j) + 63) & ~(size_t)63);
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	memset(j, 0, sizeof(*j));
	_uevent_jit_mutex_init(&j->lock);
	pthread_mutex_init(&j->slab_lock, NULL);
	pthread_mutex_init(&j->wlock, NULL);
	pthread_mutex_init(&j->mlock, NULL);
	pthread_mutex_init(&j->pool_lock, NULL);
	j->flags = flags;
	/* batched loads from many threads: staged (the perf map's lines are made from the
	 * dump's records, or there are none; an unbatched map's line is written at the
	 * load, under the lock, in the dump's order) */
	j->staged = (flags & UEVENT_JIT_BUFFER_JITDUMP) && !(flags & UEVENT_JIT_NO_JITDUMP) &&
		    (flags & (UEVENT_JIT_BUFFER_PERF_MAP | UEVENT_JIT_NO_PERF_MAP));
	j->flush_due = UINT64_MAX;
	j->serial = __atomic_add_fetch(&serial_next, 1, __ATOMIC_RELAXED);
	j->dump_fd = j->map_fd = j->dir_fd = -1;
	if ((flags & UEVENT_JIT_BUFFER_PERF_MAP) && !(flags & UEVENT_JIT_NO_PERF_MAP) &&
	    !(j->mapbuf = malloc(MAP_BUF_MAX))) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((flags & UEVENT_JIT_BUFFER_JITDUMP) && !(flags & UEVENT_JIT_NO_JITDUMP)) {
		if (!(j->dumpbuf = malloc(DUMP_BUF_CAP))) {
			ret = -ENOMEM;
			goto fail;
		}
		j->dumpcap = DUMP_BUF_CAP;
	}
	if (!(flags & UEVENT_JIT_NO_JITDUMP) && (ret = _uevent_jit_make_dir(j, dir)) < 0) {
		/* j->dir: the path tried, dir or $JITDUMPDIR (else $HOME)/.debug/jit/... */
		_uevent_reason("jit: the jitdump directory %s: %s (a symlink, another user's or "
			       "not a directory is refused): set JITDUMPDIR (the hooks' dir "
			       "option) to a directory of yours, or leave the jitdump out",
			       j->dir[0] ? j->dir : dir ? dir : "under $JITDUMPDIR/.debug/jit",
			       strerror(-ret));
		goto fail;
	}
	if ((ret = open_files(j, map_path)) < 0) {
		_uevent_reason("jit: the jitdump (in %s) or perf map file (%s): %s: give the "
			       "perf map another path (the hooks' map option) or leave it out",
			       j->dir[0] ? j->dir : "none", map_path ? map_path : "/tmp/perf-PID.map",
			       strerror(-ret));
		goto fail;
	}
	pthread_mutex_lock(&list_lock);
	j->next = sessions;
	sessions = j;
	pthread_mutex_unlock(&list_lock);
	return j;
fail:
	/* Leave nothing behind: the dump we made, the directory we made for it. */
	if (j->dump_fd >= 0)
		unlinkat(j->dir_fd, strrchr(j->dump_path, '/') + 1, 0);
	close_files(j);
	if (j->dir_fd >= 0) {
		close(j->dir_fd);
		if (!dir)
			rmdir(j->dir);
	}
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->slab_lock);
	pthread_mutex_destroy(&j->wlock);
	pthread_mutex_destroy(&j->mlock);
	pthread_mutex_destroy(&j->pool_lock);
	free(j->mapbuf);
	free(j->dumpbuf);
	free(j);
	errno = -ret;
	return NULL;
}

/* This thread's stage, with room for a load: s if the caller found it (before the
 * lock), else looked up (lock held). NULL: out of memory. */
static UEVENT_HOT struct stage *stage_of(struct uevent_jit *j, struct stage *s)
{
	if (likely(s))
		return s;
	if (!(s = _uevent_jit_stage_find(j, _uevent_jit_gettid())) || _uevent_jit_stage_room(s) < 0)
		return NULL;
	return s;
}

static int check_load_args(struct uevent_jit *j, const char *name, uint64_t addr,
			   uint64_t size)
{
	if (!j || !name)
		return -EFAULT;
	if (!addr || !size || size > UINT32_MAX / 2 || strlen(name) > UINT32_MAX / 4)
		return -EINVAL;
	return 0;
}

UEVENT_EXPORT int uevent_jit__code_load(struct uevent_jit *j, const char *name,
					uint64_t addr, uint64_t size, const void *code)
{
	struct map_req req, *rq = NULL;
	struct pending *info;
	struct stage *st;
	uint64_t index = 0;
	char *copy;
	int ret;

	if ((ret = check_load_args(j, name, addr, size)) < 0)
		return _uevent_err(-ret);
	if (!code)
		code = (const void *)(uintptr_t)addr;
	if (!(copy = strdup(name)))
		return _uevent_err(ENOMEM);
	if (j->staged) {
		ret = _uevent_jit_load_staged(j, copy, addr, size, code, &index);
		goto marker;
	}
	/* unbatched: the perf-map line, made before the lock */
	if (!j->dumpbuf && !j->mapbuf && !(j->flags & UEVENT_JIT_NO_PERF_MAP)) {
		if (_uevent_jit_map_req_init(&req, addr, size, name) < 0) {
			free(copy);
			return _uevent_err(ENOMEM);
		}
		rq = &req;
	}
	/* this thread's stage, with room for the load: before the lock, but the first
	 * time (made under it) */
	if ((st = _uevent_jit_stage_cached(j)) && _uevent_jit_stage_room(st) < 0) {
		free(copy);
		ret = -ENOMEM;
		goto marker;
	}
	pthread_mutex_lock(&j->lock);
	if ((ret = _uevent_jit_check_fork(j)) < 0) {
		free(copy);
		goto out;
	}
	if (!(st = stage_of(j, st))) {
		free(copy);
		ret = -ENOMEM;
		goto out;
	}
	index = _uevent_jit_take_index(j);
	info = _uevent_jit_take_pending(j, addr);
	if (!j->dumpbuf && !j->mapbuf) {
		ret = _uevent_jit_load_unlocked(j, st,
						&(struct code){ addr, size, index, copy, info, 0 },
						code, _uevent_now_ns(), rq);
		goto marker;
	}
	ret = _uevent_jit_load_locked(j, st, &(struct code){ addr, size, index, copy, info, 0 },
				      code, _uevent_now_ns());
out:
	pthread_mutex_unlock(&j->lock);
marker:
	if (rq)
		_uevent_jit_map_req_fini(rq);
	/* after the lock: name is the caller's */
	if (ret == 0 && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_load(addr, size, index, name);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

/*
 * The lines a load writes (its records in the dump's batch, its piece of slab, its entry
 * in the fresh list), asked for now, to write: the JIT's compile since the last load has
 * evicted them, and the misses then overlap with formatting the name instead of each
 * stalling a store. Read without the lock: prefetching a stale or wild address is
 * harmless (it never faults), so ThreadSanitizer is told not to look (t/jit-tsan).
 */
static UEVENT_HOT __attribute__((no_sanitize_thread)) void prefetch_load(struct uevent_jit *j)
{
	const char *b = (const char *)__atomic_load_n(&j->dumpbuf, __ATOMIC_RELAXED);
	const char *s = __atomic_load_n(&j->slab.next, __ATOMIC_RELAXED);
	const struct code *f = __atomic_load_n(&j->fresh, __ATOMIC_RELAXED);
	int k;

	if (b) {
		b += __atomic_load_n(&j->dumplen, __ATOMIC_RELAXED);
		for (k = 0; k < 512; k += 64)
			__builtin_prefetch(b + k, 1, 3);
	}
	if (s)
		for (k = 0; k < 192; k += 64)
			__builtin_prefetch(s + k, 1, 3);
	if (f)
		__builtin_prefetch(f + __atomic_load_n(&j->nfresh, __ATOMIC_RELAXED), 1, 3);
}

/* An unbatched load with its uevent markers: the name copied before the load (once it
 * is in, an unload in another thread may free it). Apart, so that a load without
 * markers keeps a small stack frame. e: the DEBUG_INFO marker's entry. */
static __attribute__((noinline)) int load_unlocked_marked(struct uevent_jit *j, struct stage *st,
							   const struct code *c, const void *code,
							   uint64_t now, struct map_req *rq,
							   const struct uevent_jit_debug_entry *e)
{
	char name[UEVENT_MAX_PAYLOAD];
	int ret;

	_uevent_jit_marker_name(name, c->name);
	ret = _uevent_jit_load_unlocked(j, st, c, code, now, rq);
	if (e)
		_uevent_jit_marker_debug(c->addr, e, 1);
	if (ret == 0)
		_uevent_jit_marker_load(c->addr, c->size, c->index, name);
	return ret;
}

UEVENT_EXPORT UEVENT_HOT int uevent_jit__code_load_func(struct uevent_jit *j, const char *name,
					     const char *func, uint64_t addr, uint64_t size,
					     const void *code, const char *file, uint32_t line)
{
	struct uevent_jit_debug_entry e = { addr, line, 0, file, 0 };
	struct pending *info = NULL, **pp;
	enum name_at at = NAME_OWN;
	uint64_t index, now;
	size_t nlen, flen, fnlen, flen1, want;
	struct map_req req, *rq = NULL;
	struct pending *mine;
	struct stage *st;
	char *full;
	void *mem;
	int ret, unbatched;

	if (!file && !(func && *func))
		return uevent_jit__code_load(j, name, addr, size, code);
	if ((ret = check_load_args(j, name, addr, size)) < 0)
		return _uevent_err(-ret);
	if (j->staged)
		return (ret = _uevent_jit_func_staged(j, name, func, addr, size, code, file,
						      line)) < 0 ? _uevent_err(-ret) : 0;
	prefetch_load(j);
	if (!code)
		code = (const void *)(uintptr_t)addr;
	nlen = strlen(name);
	flen = file ? strlen(file) : 0;
	fnlen = func ? strlen(func) : 0;
	if (flen > UINT32_MAX / 4 || fnlen > UINT32_MAX / 4)
		return _uevent_err(EINVAL);
	/* "NAME FUNC FILE:LINE", built here so the caller (an interpreted hook) need not
	 * build a string for every trace; with a line record, in the same block as the
	 * record: one slab piece a load (a JIT's compile path makes it for every trace) */
	flen1 = sizeof(struct jd_debug) + 16 + flen + 1;
	if ((st = _uevent_jit_stage_cached(j)) && _uevent_jit_stage_room(st) < 0)
		return _uevent_err(ENOMEM);
	want = nlen + fnlen + flen + 14;
	if (file && !(j->flags & UEVENT_JIT_NO_JITDUMP))
		want = _uevent_jit_debug_size(flen1, want);
	/* unbatched (the buffers are fixed at open): the piece, the record, the name and
	 * the perf-map line are made before the lock, so that threads make them at once;
	 * batched (one thread, a hook), from the session's slab under the lock */
	unbatched = !j->dumpbuf && !j->mapbuf;
	if (unbatched) {
		if (!(mem = malloc(want)))
			return _uevent_err(ENOMEM);
	} else {
		pthread_mutex_lock(&j->lock);
		if ((ret = _uevent_jit_check_fork(j)) < 0)
			goto out;
		if (!(st = stage_of(j, st))) {
			ret = -ENOMEM;
			goto out;
		}
		if ((mem = _uevent_jit_slab_alloc(j, &j->slab, want)))
			at = NAME_IN_SLAB;
		else if (!(mem = malloc(want))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	full = func_piece(mem, file && !(j->flags & UEVENT_JIT_NO_JITDUMP), &e, flen1, name, nlen,
			  func, fnlen, flen, &info, &at);
	if (unbatched) {
		if (!(j->flags & UEVENT_JIT_NO_PERF_MAP)) {
			if (_uevent_jit_map_req_init(&req, addr, size, full) < 0) {
				_uevent_jit_code_free(&(struct code){ addr, size, 0, full, info, at });
				return _uevent_err(ENOMEM);
			}
			rq = &req;
		}
		pthread_mutex_lock(&j->lock);
		if ((ret = _uevent_jit_check_fork(j)) < 0 || !(st = stage_of(j, st))) {
			pthread_mutex_unlock(&j->lock);
			_uevent_jit_code_free(&(struct code){ addr, size, 0, full, info, at });
			if (rq)
				_uevent_jit_map_req_fini(rq);
			return _uevent_err(ret < 0 ? -ret : ENOMEM);
		}
	}
	index = _uevent_jit_take_index(j);
	/* One clock read for both records, under the lock: timestamps rise in file order. */
	now = _uevent_now_ns();
	if ((mine = info))
		memcpy(info->rec + offsetof(struct jd_prefix, timestamp), &now, 8);
	/* Ours goes last: of several DEBUG_INFO records perf keeps the one before the load. */
	{
		struct pending *earlier = _uevent_jit_take_pending(j, addr);

		if (earlier) {
			for (pp = &earlier; *pp; pp = &(*pp)->next)
				;
			*pp = info;
			info = earlier;
		}
	}
	if (unbatched) {
		const struct code c = { addr, size, index, full, info, at, 0 };

		/* the copy, the perf-map line's write and the markers after the lock */
		if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
			ret = load_unlocked_marked(j, st, &c, code, now, rq, file ? &e : NULL);
		else
			ret = _uevent_jit_load_unlocked(j, st, &c, code, now, rq);
		if (rq)
			_uevent_jit_map_req_fini(rq);
		return ret < 0 ? _uevent_err(-ret) : 0;
	}
	if (file && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_debug(addr, &e, 1);
	ret = _uevent_jit_load_locked(j, st, &(struct code){ addr, size, index, full, info, at },
				      code, now);
	if (ret == 0 && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_load(addr, size, index, full);	/* the table's now */
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_load_line(struct uevent_jit *j, const char *name,
					     uint64_t addr, uint64_t size, const void *code,
					     const char *file, uint32_t line)
{
	return uevent_jit__code_load_func(j, name, NULL, addr, size, code, file, line);
}

/* Lock held: the load at addr (*cp), and a size of 0 made its size (*size). -ENOENT:
 * none; or the fork check's error. */
static int code_at(struct uevent_jit *j, uint64_t addr, uint64_t *size, struct code **cp)
{
	int ret;

	if ((ret = _uevent_jit_check_fork(j)) < 0)
		return ret;
	if (!(*cp = _uevent_jit_code_find(j, addr)))
		return -ENOENT;
	if (!*size)
		*size = (*cp)->size;
	return 0;
}

UEVENT_EXPORT int uevent_jit__code_move(struct uevent_jit *j, uint64_t old_addr,
					uint64_t new_addr, uint64_t size)
{
	struct code *c, moved;
	struct pending *p;
	struct jd_move rec;
	struct iovec iov;
	uint64_t index, now;
	int ret = 0;

	if (!j)
		return _uevent_err(EFAULT);
	if (!new_addr)
		return _uevent_err(EINVAL);
	pthread_mutex_lock(&j->lock);
	if ((ret = code_at(j, old_addr, &size, &c)) < 0)
		goto out;
	index = c->index;
	now = _uevent_now_ns();
	/* staged: the loads stamped until now go first (the moved one among them), and
	 * the move stamped now, before any later */
	if (j->staged && (ret = _uevent_jit_stage_merge(j, now, 0)) < 0)
		goto out;
	/* both batched: the lines of the loads before it made first (from their records),
	 * so that its line follows theirs in the map as its record does in the dump */
	if ((ret = _uevent_jit_map_catch_up(j)) < 0)
		goto out;
	if (j->dump_fd >= 0) {
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_MOVE;
		rec.p.total_size = sizeof(rec);
		rec.p.timestamp = now;
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)_uevent_jit_gettid();
		rec.vma = new_addr;
		rec.old_code_addr = old_addr;
		rec.new_code_addr = new_addr;
		rec.code_size = size;
		rec.code_index = index;
		iov = (struct iovec){ &rec, sizeof(rec) };
		if ((ret = _uevent_jit_dump_append(j, &iov, 1, now, NULL)) < 0)
			goto out;
	}
	if ((ret = _uevent_jit_map_line(j, new_addr, size, c->name, now)) < 0) {
		if (j->dump_fd >= 0)
			_uevent_jit_dump_undo(j, j->dump_off - sizeof(rec));
		goto out;
	}
	moved = (struct code){ new_addr, size, index, c->name, c->info, c->name_in_info, now };
	c->name = NULL;
	c->info = NULL;
	c->name_in_info = 0;
	_uevent_jit_code_del(j, c);
	for (p = moved.info; p; p = p->next)	/* a replay describes the new place */
		_uevent_jit_info_rebase(p, new_addr);
	if ((ret = _uevent_jit_code_put(j, &moved)) < 0)
		goto out;
	if (j->staged && j->dumplen)
		_uevent_jit_due_min(j, j->dump_t0 + DUMP_BUF_AGE_NS);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_move(index, old_addr, new_addr, size);
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_unload(struct uevent_jit *j, uint64_t addr, uint64_t size)
{
	struct code *c;
	uint64_t index;
	int ret = 0;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = code_at(j, addr, &size, &c)) < 0)
		goto out;
	index = c->index;
	_uevent_jit_code_del(j, c);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_unload(addr, size, index);
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_unload_all(struct uevent_jit *j)
{
	int ret, markers;
	size_t i;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = _uevent_jit_check_fork(j)) < 0)
		goto out;
	markers = !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED();
	/* one marker per address: through the table; else the fresh loads need not go
	 * there first */
	if (markers)
		_uevent_jit_code_settle(j);
	for (i = 0; i < j->nfresh; i++)
		_uevent_jit_code_free(&j->fresh[i]);
	j->nfresh = 0;
	_uevent_jit_stage_free_all(j, 0);
	for (i = 0; i < j->cap; i++) {
		struct code *c = &j->codes[i];

		if (!c->addr)
			continue;
		if (markers)
			_uevent_jit_marker_unload(c->addr, c->size, c->index);
		_uevent_jit_code_free(c);
		*c = (struct code){ 0, 0, 0, NULL, NULL, 0 };
	}
	j->ncodes = 0;
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__debug_info(struct uevent_jit *j, uint64_t code_addr,
					 const struct uevent_jit_debug_entry *e, uint32_t nr)
{
	struct pending *p = NULL;
	size_t len = sizeof(struct jd_debug);
	uint32_t i;
	int ret = 0;

	if (!j || (nr && !e))
		return _uevent_err(EFAULT);
	for (i = 0; i < nr; i++) {
		if (!e[i].file)
			return _uevent_err(EFAULT);
		len += 16 + strlen(e[i].file) + 1;
		if (len > UINT32_MAX / 2)
			return _uevent_err(E2BIG);
	}
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP) &&
	    !(p = _uevent_jit_debug_record(code_addr, e, nr, len, _uevent_now_ns(), 0, NULL)))
		return _uevent_err(ENOMEM);
	pthread_mutex_lock(&j->lock);
	if ((ret = _uevent_jit_check_fork(j)) < 0) {
		free(p);
		goto out;
	}
	if (p)
		_uevent_jit_add_pending(j, p);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		_uevent_jit_marker_debug(code_addr, e, nr);
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__unwinding_info(struct uevent_jit *j, uint64_t code_addr,
					     const void *data, uint64_t size,
					     uint64_t eh_frame_hdr_size, uint64_t mapped_size)
{
	struct pending *p;
	struct jd_unwind *rec;
	size_t len;
	int ret;

	if (!j || (size && !data))
		return _uevent_err(EFAULT);
	if (size > UINT32_MAX / 2 || eh_frame_hdr_size > size || mapped_size < size)
		return _uevent_err(EINVAL);
	if (j->flags & UEVENT_JIT_NO_JITDUMP)
		return 0;
	len = sizeof(*rec) + (size_t)size;
	p = malloc(sizeof(*p) + len + 8);
	if (!p)
		return _uevent_err(ENOMEM);
	p->next = NULL;
	p->addr = code_addr;
	memset(p->rec, 0, len + 8);
	rec = (struct jd_unwind *)(void *)p->rec;
	rec->p.id = JIT_CODE_UNWINDING_INFO;
	rec->p.total_size = (uint32_t)(len + pad8(len));
	rec->p.timestamp = _uevent_now_ns();
	rec->unwinding_size = size;
	rec->eh_frame_hdr_size = eh_frame_hdr_size;
	rec->mapped_size = mapped_size;
	if (size)
		memcpy(p->rec + sizeof(*rec), data, (size_t)size);
	p->len = rec->p.total_size;
	pthread_mutex_lock(&j->lock);
	if ((ret = _uevent_jit_check_fork(j)) < 0)
		free(p);
	else
		_uevent_jit_add_pending(j, p);
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT const char *uevent_jit__dump_path(const struct uevent_jit *j)
{
	if (!j || j->dump_fd < 0) {
		errno = j ? ENOENT : EFAULT;
		return NULL;
	}
	return j->dump_path;
}

UEVENT_EXPORT const char *uevent_jit__perf_map_path(const struct uevent_jit *j)
{
	if (!j || j->map_fd < 0) {
		errno = j ? ENOENT : EFAULT;
		return NULL;
	}
	return j->map_path;
}

UEVENT_EXPORT int uevent_jit__flush(struct uevent_jit *j)
{
	int ret, err;

	if (!j)
		return _uevent_err(EFAULT);
	pthread_mutex_lock(&j->lock);
	if ((ret = _uevent_jit_check_fork(j)) == 0) {
		if (j->staged)
			ret = _uevent_jit_stage_merge(j, _uevent_now_ns(), 0);
		if ((err = _uevent_jit_dump_flush(j)) < 0 && ret == 0)	/* and the perf-map */
			ret = err;					/* lines of its records */
		if ((err = _uevent_jit_map_flush(j)) < 0 && ret == 0)
			ret = err;
	}
	/* a batch's write failed since the last flush (made or handed off before this
	 * one took the lock: written above): loads that returned 0 were lost with it */
	if ((err = __atomic_exchange_n(&j->werr, 0, __ATOMIC_RELAXED)) < 0 && ret == 0)
		ret = err;
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__close(struct uevent_jit *j)
{
	struct uevent_jit **pp;
	struct jd_prefix rec;
	struct iovec iov;
	size_t i;
	int ret = 0, err;

	if (!j)
		return 0;
	pthread_mutex_lock(&list_lock);
	for (pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	pthread_mutex_unlock(&list_lock);
	pthread_mutex_lock(&j->lock);
	if (!j->forked && j->staged)
		ret = _uevent_jit_stage_merge(j, _uevent_now_ns(), 0);
	if (!j->forked && (err = _uevent_jit_map_flush(j)) < 0 && ret == 0)
		ret = err;
	/* A child that never called us has no files of its own: nothing to close out. */
	if (!j->forked && j->dump_fd >= 0) {
		rec = (struct jd_prefix){ JIT_CODE_CLOSE, sizeof(rec), _uevent_now_ns() };
		iov = (struct iovec){ &rec, sizeof(rec) };
		if ((err = _uevent_jit_dump_append(j, &iov, 1, rec.timestamp, NULL)) < 0 && ret == 0)
			ret = err;
		if ((err = _uevent_jit_dump_flush(j)) < 0 && ret == 0)
			ret = err;
		/* drop the reserved tail: the file ends with its last record (on ext4 this
		 * frees the blocks allocated past it too, size changed or not: t/jit-api) */
		if (ftruncate(j->dump_fd, (off_t)j->dump_off) < 0 && ret == 0)
			ret = -errno;
	}
	/* as flush: a batch's write failed since */
	if ((err = __atomic_load_n(&j->werr, __ATOMIC_RELAXED)) < 0 && ret == 0)
		ret = err;
	if (j->forked) {
		/* the inherited fds are the parent's files: only drop our references */
		j->forked = 0;
	}
	close_files(j);
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_destroy(&j->lock);
	for (i = 0; i < j->cap; i++)
		_uevent_jit_code_free(&j->codes[i]);
	for (i = 0; i < j->nfresh; i++)
		_uevent_jit_code_free(&j->fresh[i]);
	_uevent_jit_stage_free_all(j, 1);
	_uevent_jit_slab_free_all(j);
	pthread_mutex_destroy(&j->slab_lock);
	pthread_mutex_destroy(&j->wlock);
	free(j->codes);
	free(j->fresh);
	_uevent_jit_free_pending(j->pending);
	free(j->mapbuf);
	free(j->dumpbuf);
	free(j->cp);
	_uevent_jit_pool_free(j);	/* out is written: the flush above (or fork's) */
	pthread_mutex_destroy(&j->pool_lock);
	free(j->mapspare);		/* and mout */
	pthread_mutex_destroy(&j->mlock);
	free(j);
	return ret < 0 ? _uevent_err(-ret) : 0;
}
