/* jit-stage.c - the JIT session's loads: their records, written under the session's
 * lock (write_load) or staged per thread without it (UEVENT_JIT_BUFFER_JITDUMP from many
 * threads), each load's table entry in its thread's stage, and a fork child's replay.
 * The API that calls them is jit.c. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jit-internal.h"

/*
 * The load, lock held: info's records, then CODE_LOAD, in one append; the perf-map line;
 * the table entry (which keeps name and info for a fork child's replay). Takes
 * ownership of name and info. now stamps the record (one clock read per load: the LuaJIT
 * hook makes one for every trace compiled).
 */
static UEVENT_HOT int write_load(struct uevent_jit *j, const char *name, uint64_t addr,
				 uint64_t size, const void *code, uint64_t index,
				 const struct pending *info, uint64_t now)
{
	struct iovec iov[16];
	struct jd_load rec;
	const struct pending *p;
	size_t nlen = strlen(name);
	uint64_t off = j->dump_off;
	int cnt = 0, ret = 0;

	if (j->dump_fd >= 0) {
		/* Debug and unwinding info first, in the same append: perf attaches them
		 * to the CODE_LOAD that follows. */
		for (p = info; p && cnt < 12; p = p->next)
			iov[cnt++] = (struct iovec){ (void *)p->rec, p->len };
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_LOAD;
		rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + size);
		rec.p.total_size += pad8(rec.p.total_size);
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)_uevent_jit_gettid();
		rec.vma = addr;
		rec.code_addr = addr;
		rec.code_size = size;
		rec.code_index = index;
		rec.p.timestamp = now;
		iov[cnt++] = (struct iovec){ &rec, sizeof(rec) };
		iov[cnt++] = (struct iovec){ (void *)name, nlen + 1 };
		iov[cnt++] = (struct iovec){ (void *)code, (size_t)size };
		iov[cnt++] = (struct iovec){ (void *)zeros, pad8(sizeof(rec) + nlen + 1 + size) };
		ret = _uevent_jit_dump_append(j, iov, cnt, now, NULL);
	}
	/* both batched: _uevent_jit_map_scan() makes the line from the record */
	if (ret == 0 && !(j->dumpbuf && j->mapbuf && j->dump_fd >= 0) &&
	    (ret = _uevent_jit_map_line(j, addr, size, name, now)) < 0 && j->dump_fd >= 0)
		_uevent_jit_dump_undo(j, off);	/* a failed call leaves no trace */
	return ret;
}

/* Takes ownership of what c owns (also on failure); s has room (stage_of). */
UEVENT_HOT int _uevent_jit_load_locked(struct uevent_jit *j, struct stage *s,
				       const struct code *c, const void *code, uint64_t now)
{
	int ret = write_load(j, c->name, c->addr, c->size, code, c->index, c->info, now);
	struct code t = *c;

	if (ret < 0) {
		_uevent_jit_code_free(c);
		return ret;
	}
	t.ts = now;		/* of two loads at an address the later stays (settle) */
	_uevent_jit_stage_put(s, &t);
	return 0;
}

/*
 * A load with nothing batched, entered with the lock held, which it drops: its place in
 * the dump, its timestamp now (taken under the lock, so that they rise in file order),
 * its table entry and its perf-map line's place in the queue are taken under the lock;
 * the copy into the mapped dump (the window never moves: dump_grow) and the line's
 * write (map_commit: one writev for the lines of loads made meanwhile) are made after,
 * so that loads from many threads overlap there. Takes ownership of what c owns (also
 * on failure). A perf-map line that cannot be written takes the load back from the
 * table, and its records from the dump if none came after them (else they stay: perf
 * names the code right).
 */
UEVENT_HOT int _uevent_jit_load_unlocked(struct uevent_jit *j, struct stage *s,
					 const struct code *c, const void *code, uint64_t now,
					 struct map_req *req)
{
	struct iovec iov[16];
	struct jd_load rec;
	const struct pending *p;
	struct code *t;
	size_t nlen = strlen(c->name);
	uint64_t off = 0, len = 0, addr = c->addr, size = c->size, index = c->index;
	int ret = 0, cnt = 0, i, mapped = req && j->map_fd >= 0;

	if (j->dump_fd >= 0) {
		/* debug and unwinding info first: perf attaches them to the CODE_LOAD */
		for (p = c->info; p && cnt < 12; p = p->next)
			iov[cnt++] = (struct iovec){ (void *)p->rec, p->len };
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_LOAD;
		rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + size);
		rec.p.total_size += pad8(rec.p.total_size);
		rec.p.timestamp = now;
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)_uevent_jit_gettid();
		rec.vma = rec.code_addr = addr;
		rec.code_size = size;
		rec.code_index = index;
		iov[cnt++] = (struct iovec){ &rec, sizeof(rec) };
		iov[cnt++] = (struct iovec){ c->name, nlen + 1 };
		iov[cnt++] = (struct iovec){ (void *)code, (size_t)size };
		iov[cnt++] = (struct iovec){ (void *)zeros, pad8(sizeof(rec) + nlen + 1 + size) };
		for (i = 0; i < cnt; i++)
			len += iov[i].iov_len;
		if ((ret = _uevent_jit_dump_reserve(j, len)) < 0) {
			_uevent_jit_code_free(c);
			pthread_mutex_unlock(&j->lock);
			return ret;
		}
		off = j->dump_off;
		j->dump_off += len;
	}
	if (mapped)
		_uevent_jit_map_push(j, req);
	pthread_mutex_unlock(&j->lock);
	if (len)
		dump_fill(j->win + off, iov, cnt);
	/* then this thread's stage owns name and info (it has room: stage_of): from there
	 * an unload, unload_all or a settle in another thread may free them, so the copy
	 * above, which reads them, comes first. Stamped: of two loads at an address the
	 * later stays. */
	{
		struct code stamped = *c;

		stamped.ts = now;
		_uevent_jit_stage_put(s, &stamped);
	}
	if (!mapped || (ret = _uevent_jit_map_commit(j, req)) >= 0)
		return 0;
	pthread_mutex_lock(&j->lock);	/* slab pieces are freed under it */
	if (!_uevent_jit_stage_undo(s, addr, index) &&
	    (t = _uevent_jit_code_find(j, addr)) && t->index == index)
		_uevent_jit_code_del(j, t);
	if (len && j->dump_off == off + len)
		_uevent_jit_dump_undo(j, off);	/* a failed call leaves no trace */
	pthread_mutex_unlock(&j->lock);
	return ret;
}

/*
 * In a fork child, once its own files are open: every code still loaded, as announced
 * (name, debug and unwinding info, code index) at its current address, so perf can name
 * code the child inherited. The bytes come from the code itself through
 * process_vm_readv, so code unmapped without an unload is skipped rather than a crash.
 */
int _uevent_jit_replay(struct uevent_jit *j)
{
	struct iovec local, remote;
	struct pending *p;
	struct code *c;
	uint64_t now;
	size_t i;
	ssize_t n;
	void *buf;
	int ret;

	_uevent_jit_code_settle(j);
	for (i = 0; i < j->cap; i++) {
		c = &j->codes[i];
		if (!c->addr)
			continue;
		if (!(buf = malloc((size_t)c->size)))
			return -ENOMEM;
		local = (struct iovec){ buf, (size_t)c->size };
		remote = (struct iovec){ (void *)(uintptr_t)c->addr, (size_t)c->size };
		n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
			/* no way to check (seccomp): trust the contract, code is live */
			memcpy(buf, (const void *)(uintptr_t)c->addr, (size_t)c->size);
			n = (ssize_t)c->size;
		}
		if (n != (ssize_t)c->size) {
			free(buf);
			continue;
		}
		now = _uevent_now_ns();
		for (p = c->info; p; p = p->next)
			memcpy(p->rec + offsetof(struct jd_prefix, timestamp), &now, 8);
		ret = write_load(j, c->name, c->addr, c->size, buf, c->index, c->info, now);
		free(buf);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- staged loads: UEVENT_JIT_BUFFER_JITDUMP from many threads ------------------- */

/*
 * With the dump batched (and the perf map batched or off), a load takes no session
 * lock: it stamps its records under its thread's stage's lock and appends them there,
 * with its table entry and a code index from the stage's block; stage_merge (whoever
 * fills a stage, at 100 ms, move, flush, fork, close and exit) takes every stage's
 * records up to a time into the batch in time order. The session's lock is taken by a
 * thread's first load, a fork child's first call, and merges.
 */

_Static_assert(sizeof(struct rec_head) + sizeof(struct jd_load) >= STAGE_IX_SPAN,
	       "a stage's index has room for every group its buffer has room for");

/* This thread's stage, with room for a table entry. */
static UEVENT_HOT int staged_stage(struct uevent_jit *j, struct stage **sp)
{
	struct stage *s = _uevent_jit_stage_cached(j);
	int ret;

	if (unlikely(!s || __atomic_load_n(&j->forked, __ATOMIC_ACQUIRE))) {
		pthread_mutex_lock(&j->lock);
		if ((ret = _uevent_jit_check_fork(j)) == 0 && !s && !(s = _uevent_jit_stage_find(j, _uevent_jit_gettid())))
			ret = -ENOMEM;
		pthread_mutex_unlock(&j->lock);
		if (ret < 0)
			return ret;
	}
	*sp = s;
	return _uevent_jit_stage_room(s);
}

/* Info (debug_info, unwinding_info) waiting for addr: the lock only if there is some
 * (a call before the load, from this thread, is seen: it came first). */
static UEVENT_HOT struct pending *staged_pending(struct uevent_jit *j, uint64_t addr)
{
	struct pending *p;

	if (likely(!__atomic_load_n(&j->pending, __ATOMIC_ACQUIRE)))
		return NULL;
	pthread_mutex_lock(&j->lock);
	p = _uevent_jit_take_pending(j, addr);
	pthread_mutex_unlock(&j->lock);
	return p;
}

/* The session's lock held: merges every stage's records up to now into the batch, then
 * (need) makes room in s for that many; drops the lock, then writes or copies into the
 * files the batch and lines the merge handed off (the next merge runs meanwhile). */
static int stage_flush_locked(struct uevent_jit *j, struct stage *s, size_t need)
{
	unsigned char *r, *job;
	struct rec_ix *x;
	uint64_t now, off;
	size_t cap, len, jcap;
	int ret, err;

	__atomic_store_n(&j->merging, 1, __ATOMIC_RELAXED);
	/* no write of this thread's is under way: it waited for its last below */
	s->hand_derr = 0;
	if ((ret = _uevent_jit_check_fork(j)) == 0) {
		/* full batches handed off, written below, after the lock (out_write) */
		now = _uevent_now_ns();
		j->defer = 1;
		j->merger = s;
		ret = _uevent_jit_stage_merge(j, now, 0);
		if ((err = _uevent_jit_dump_defer_end(j, now)) < 0 && ret == 0)
			ret = err;
		j->merger = NULL;
	}
	/* no merge reads s while we hold the session's lock: what is left moves down, and
	 * the buffer grows if it must */
	if (need || s->rechead >= s->reccap / 2) {
		pthread_mutex_lock(&s->lock);
		_uevent_jit_stage_compact(s);
		if (need && s->reclen + need > s->reccap) {
			cap = s->reclen + need > STAGE_REC_CAP ? s->reclen + need : STAGE_REC_CAP;
			/* the index first: a larger one is harmless */
			if ((x = realloc(s->ix, (cap / STAGE_IX_SPAN) * sizeof(*x))))
				s->ix = x;
			if (x && (r = realloc(s->rec, cap))) {
				s->rec = r;
				s->reccap = cap;
			} else if (ret == 0) {
				ret = -ENOMEM;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	job = j->wjob;		/* taken now: the next merge may make another */
	len = j->wjob_len;
	jcap = j->wjob_cap;
	off = j->wjob_off;
	j->wjob = NULL;
	__atomic_store_n(&j->merging, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&j->lock);
	/* what this merge handed off (and only that: its records are there, or after) */
	if ((err = _uevent_jit_out_write(j, s)) < 0 && ret == 0)
		ret = err;
	/* a failure of the lines' write waits for the next flush and close (j->werr): the
	 * loads they name are in the dump, this one's too */
	_uevent_jit_mout_write(j, s);
	if (job)
		_uevent_jit_win_copy(j, job, len, jcap, off);
	return ret;
}

/* Merges every stage's records up to now into the batch, if the session's lock is free
 * (else a merge under way, or the next, takes them). */
static int stage_flush(struct uevent_jit *j, struct stage *s)
{
	if (__atomic_load_n(&j->merging, __ATOMIC_RELAXED) || pthread_mutex_trylock(&j->lock))
		return 0;
	return stage_flush_locked(j, s, 0);
}

/*
 * Room in s for need bytes, its thread's buffer full. A merge under way moves the
 * stage's records down as it ends (wants_room), so the thread waits for that, spinning,
 * rather than for its turn at the session's lock behind every other full thread's,
 * each a futex sleep and wake (three quarters of the threads' sleeps at 16 threads on
 * 16 cores). With the lock free it merges itself; after a long wait it sleeps on it.
 */
static int stage_wait_room(struct uevent_jit *j, struct stage *s, size_t need)
{
	unsigned int spins;
	int ret = 0;

	__atomic_store_n(&s->wants_room, 1, __ATOMIC_RELAXED);
	/* the merge queues its copies for us to make with it (_uevent_jit_cp_push) */
	__atomic_add_fetch(&j->cp_waiters, 1, __ATOMIC_RELAXED);
	for (spins = 0;; spins++) {
		/* a hint only: the caller looks again under the stage's lock */
		if (__atomic_load_n(&s->reclen, __ATOMIC_RELAXED) + need <= s->reccap)
			break;
		if (!__atomic_load_n(&j->merging, __ATOMIC_RELAXED) &&
		    pthread_mutex_trylock(&j->lock) == 0) {
			__atomic_sub_fetch(&j->cp_waiters, 1, __ATOMIC_RELAXED);
			ret = stage_flush_locked(j, s, need);
			goto out;
		}
		if (spins >= 4096) {
			__atomic_sub_fetch(&j->cp_waiters, 1, __ATOMIC_RELAXED);
			pthread_mutex_lock(&j->lock);
			ret = stage_flush_locked(j, s, need);
			goto out;
		}
		_uevent_jit_cp_help(j);
		_uevent_spin_turn(spins, 1024);
	}
	__atomic_sub_fetch(&j->cp_waiters, 1, __ATOMIC_RELAXED);
out:
	__atomic_store_n(&s->wants_room, 0, __ATOMIC_RELAXED);
	return ret;
}

/* c's records (its info, then CODE_LOAD) into s, stamped now, and c into s's table
 * entries (stage_room made the room); takes ownership of what c owns; sets c's index.
 * mine: c's own DEBUG_INFO record, stamped with the load. */
static UEVENT_HOT int staged_load(struct uevent_jit *j, struct stage *s, struct code *c,
				  const void *code, struct pending *mine)
{
	const struct pending *p;
	struct jd_load rec;
	size_t nlen = strlen(c->name), len = 0, need, pad, mroom = 0, mlen = 0;
	unsigned char *w;
	uint64_t now;
	int ret, due, full;

	for (p = c->info; p; p = p->next)
		len += p->len;
	pad = pad8(sizeof(rec) + nlen + 1 + c->size);
	len += sizeof(rec) + nlen + 1 + c->size + pad;
	/* the perf map batched and loads from more than one thread: its line made here,
	 * in parallel, copied by the merge (a name of 64 KiB has none, as in the scan).
	 * From one thread no other waits for the lock: the scan at the batch's write makes
	 * it, as it makes a replayed load's, where a JIT's compile has not just evicted
	 * the code and buffers a line needs. */
	if ((j->flags & (UEVENT_JIT_BUFFER_PERF_MAP | UEVENT_JIT_NO_PERF_MAP)) ==
	    UEVENT_JIT_BUFFER_PERF_MAP && nlen + 64 <= MAP_LINE_MAX &&
	    __atomic_load_n(&j->nstages, __ATOMIC_RELAXED) > 1)
		mroom = nlen + 64 + 8;
	need = sizeof(struct rec_head) + len + mroom;
	if (unlikely(len > UINT32_MAX)) {	/* its entry's length (and the batch's) */
		_uevent_jit_code_free(c);
		return -E2BIG;
	}
	pthread_mutex_lock(&s->lock);
	while (unlikely(s->reclen + need > s->reccap)) {
		pthread_mutex_unlock(&s->lock);
		if ((ret = stage_wait_room(j, s, need)) < 0) {
			_uevent_jit_code_free(c);
			return ret;
		}
		pthread_mutex_lock(&s->lock);
	}
	c->index = _uevent_jit_stage_index(s);
	/* under the stage's lock: a merge that took this stage's length read its time
	 * before, so this group is no older than what it took (stage_merge) */
	c->ts = now = _uevent_now_ns();
	if (mine)
		memcpy(mine->rec + offsetof(struct jd_prefix, timestamp), &now, 8);
	w = s->rec + s->reclen;
	if (mroom)	/* after the records; the padding after it is never read */
		mlen = (size_t)(_uevent_jit_map_put((char *)w + sizeof(struct rec_head) + len,
						    c->addr, c->size, c->name, nlen) -
				((char *)w + sizeof(struct rec_head) + len));
	*(struct rec_head *)(void *)w = (struct rec_head){ now, c->index, len, mlen };
	w += sizeof(struct rec_head);
	for (p = c->info; p; p = p->next) {
		memcpy(w, p->rec, p->len);
		w += p->len;
	}
	memset(&rec, 0, sizeof(rec));
	rec.p.id = JIT_CODE_LOAD;
	rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + c->size + pad);
	rec.p.timestamp = now;
	rec.pid = (uint32_t)j->pid;
	rec.tid = (uint32_t)_uevent_jit_gettid();
	rec.vma = rec.code_addr = c->addr;
	rec.code_size = c->size;
	rec.code_index = c->index;
	memcpy(w, &rec, sizeof(rec));
	w += sizeof(rec);
	memcpy(w, c->name, nlen + 1);
	w += nlen + 1;
	memcpy(w, code, (size_t)c->size);
	memset(w + c->size, 0, pad);
	if (s->reclen == s->rechead) {
		s->rec_t0 = now;
		_uevent_jit_due_min(j, now + DUMP_BUF_AGE_NS);
	}
	/* room: a group is longer than STAGE_IX_SPAN, and the index has reccap / that */
	s->ix[s->ixlen++] = (struct rec_ix){ now, (uint32_t)len, (uint32_t)mlen };
	__atomic_store_n(&s->reclen, s->reclen + sizeof(struct rec_head) + len + mlen + pad8(mlen),
			 __ATOMIC_RELAXED);
	s->code[s->n] = *c;
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELAXED);
	full = s->reclen >= STAGE_REC_FLUSH;
	due = full || now >= __atomic_load_n(&j->flush_due, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->lock);
	if (likely(!due) || (ret = stage_flush(j, s)) >= 0)
		return 0;
	/* the batch with this load's records was not written: take it back too */
	_uevent_jit_stage_undo(s, c->addr, c->index);
	return ret;
}

/* staged_load with its uevent markers: the name copied before the load (the stage's
 * once it is in: an unload in another thread may free it). Apart, so that a load
 * without markers keeps a small stack frame. e: the DEBUG_INFO marker's entry. */
static __attribute__((noinline)) int staged_load_marked(struct uevent_jit *j, struct stage *s,
							 struct code *c, const void *code,
							 struct pending *mine,
							 const struct uevent_jit_debug_entry *e)
{
	char name[UEVENT_MAX_PAYLOAD];
	int ret;

	_uevent_jit_marker_name(name, c->name);
	ret = staged_load(j, s, c, code, mine);
	if (e)
		_uevent_jit_marker_debug(c->addr, e, 1);
	if (ret == 0)
		_uevent_jit_marker_load(c->addr, c->size, c->index, name);
	return ret;
}

/* code_load, staged: takes ownership of copy (also on failure); *index: the load's. */
UEVENT_HOT int _uevent_jit_load_staged(struct uevent_jit *j, char *copy, uint64_t addr,
				       uint64_t size, const void *code, uint64_t *index)
{
	struct code c = { addr, size, 0, copy, NULL, NAME_OWN, 0 };
	struct stage *st;
	int ret;

	if ((ret = staged_stage(j, &st)) < 0) {
		free(copy);
		return ret;
	}
	c.info = staged_pending(j, addr);
	ret = staged_load(j, st, &c, code, NULL);
	*index = c.index;
	return ret;
}

/* code_load_func, staged: the piece (its DEBUG_INFO record and the name) from this
 * thread's stage's slab, built with no lock. */
UEVENT_HOT int _uevent_jit_func_staged(struct uevent_jit *j, const char *name,
				       const char *func, uint64_t addr, uint64_t size,
				       const void *code, const char *file, uint32_t line)
{
	struct uevent_jit_debug_entry e = { addr, line, 0, file, 0 };
	size_t nlen = strlen(name), flen = file ? strlen(file) : 0;
	size_t fnlen = func ? strlen(func) : 0, flen1, want;
	struct pending *info = NULL, *earlier, **pp;
	enum name_at at = NAME_OWN;
	struct stage *s;
	char *full;
	struct code c;
	void *mem;
	int ret;

	if (flen > UINT32_MAX / 4 || fnlen > UINT32_MAX / 4)
		return -EINVAL;
	if (!code)
		code = (const void *)(uintptr_t)addr;
	if ((ret = staged_stage(j, &s)) < 0)
		return ret;
	flen1 = sizeof(struct jd_debug) + 16 + flen + 1;
	want = nlen + fnlen + flen + 14;
	if (file)
		want = _uevent_jit_debug_size(flen1, want);
	if ((mem = _uevent_jit_slab_alloc(j, &s->slab, want)))
		at = NAME_IN_SLAB;
	else if (!(mem = malloc(want)))
		return -ENOMEM;
	full = func_piece(mem, file != NULL, &e, flen1, name, nlen, func, fnlen, flen, &info, &at);
	c = (struct code){ addr, size, 0, full, info, at, 0 };
	/* ours goes last: of several DEBUG_INFO records perf keeps the one before the load */
	if ((earlier = staged_pending(j, addr))) {
		for (pp = &earlier; *pp; pp = &(*pp)->next)
			;
		*pp = info;
		c.info = earlier;
	}
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		return staged_load_marked(j, s, &c, code, info, file ? &e : NULL);
	return staged_load(j, s, &c, code, info);
}
