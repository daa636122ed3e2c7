/* jit-map.c - the JIT session's perf map: /tmp/perf-PID.map, a line a load, batched or
 * written by group commit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit-internal.h"

int _uevent_jit_open_map(struct uevent_jit *j, const char *path)
{
	struct stat st;

	if (path) {
		j->map_path_given = 1;
		if (snprintf(j->map_path, sizeof(j->map_path), "%s", path) >=
		    (int)sizeof(j->map_path))
			return -ENAMETOOLONG;
	} else if (!j->map_path_given) {
		snprintf(j->map_path, sizeof(j->map_path), "/tmp/perf-%d.map", (int)j->pid);
	}
	/* Append, never truncate: another JIT in this process (CPython's perf trampoline)
	 * may write the same file. Never block in open(): a FIFO planted there without a
	 * reader would hang us (O_NONBLOCK makes that ENXIO); only a regular file will do. */
	j->map_fd = open(j->map_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			 O_CLOEXEC, 0600);
	if (j->map_fd < 0)
		return errno == ENXIO ? -EINVAL : -errno;
	if (fstat(j->map_fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (j->map_path_given)
		return 0;
	/* In /tmp anyone may have made the file first: use it only if it is ours. */
	if (st.st_uid != geteuid() || st.st_nlink != 1)
		return -EPERM;
	return 0;
}

static UEVENT_HOT char *fmt_hex(char *p, uint64_t v)
{
	char t[16];
	int n = 0;

	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}
#define MAP_BUF_AGE_NS	((uint64_t)100 * 1000 * 1000)

/* Writes len bytes of lines in one write (O_APPEND keeps them whole). A failure loses
 * the lines of loads whose calls returned: kept for the next flush and close. */
static int map_write_buf(struct uevent_jit *j, const char *buf, size_t len)
{
	ssize_t n;
	int ret;

	do
		n = write(j->map_fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n == len)
		return 0;
	else	/* cut a part of the batch off again: no line is left without its end */
		ret = -_uevent_undo_short_append(j->map_fd, (size_t)n);
	_uevent_jit_werr(j, ret);
	return ret;
}

/* The handed-off lines written, their buffer back as the spare; mlock held. A failed
 * write is kept for the next flush and close (map_write_buf): the loads it names are
 * in the dump, so no call fails for it. */
static void mout_write_locked(struct uevent_jit *j)
{
	char *b = __atomic_load_n(&j->mout, __ATOMIC_RELAXED);
	struct stage *owner = j->mout_owner;

	map_write_buf(j, b, j->mout_len);
	if (owner)
		__atomic_store_n(&owner->hand_map, 0, __ATOMIC_RELEASE);
	j->mout_owner = NULL;
	j->mapspare = b;
	__atomic_store_n(&j->mout, NULL, __ATOMIC_RELEASE);
}

/* Without the session's lock, after a load's merge from s's thread: the lines it
 * handed off, written here if no other thread has yet; else any not written yet if no
 * write is under way. */
void _uevent_jit_mout_write(struct uevent_jit *j, struct stage *s)
{
	if (__atomic_load_n(&s->hand_map, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&j->mlock);
		if (s->hand_map)	/* mout is still this merge's lines */
			mout_write_locked(j);
		pthread_mutex_unlock(&j->mlock);
		return;
	}
	/* atomic: a merge hands lines off while none is (mout NULL) */
	if (__atomic_load_n(&j->mout, __ATOMIC_ACQUIRE) && !pthread_mutex_trylock(&j->mlock)) {
		if (__atomic_load_n(&j->mout, __ATOMIC_ACQUIRE))
			mout_write_locked(j);
		pthread_mutex_unlock(&j->mlock);
	}
}

/* Lock held: the lines handed off written (here, if their thread has not yet: their
 * error is its), then the buffered ones, in one write. */
static int map_write(struct uevent_jit *j)
{
	size_t len = j->maplen;

	_uevent_jit_cp_sync(j);
	if (__atomic_load_n(&j->mout, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&j->mlock);
		if (__atomic_load_n(&j->mout, __ATOMIC_ACQUIRE))
			mout_write_locked(j);
		pthread_mutex_unlock(&j->mlock);
	}
	if (!len || j->map_fd < 0)
		return 0;
	j->maplen = 0;
	return map_write_buf(j, j->mapbuf, len);
}

/* Lock held, in a load's merge: the buffered lines handed off, for its thread to write
 * after the lock (_uevent_jit_mout_write), if none handed off waits (else they wait
 * for the next: the buffer fills up to MAP_BUF_MAX first). */
static int map_handoff(struct uevent_jit *j)
{
	char *b;

	_uevent_jit_cp_sync(j);
	if (!j->maplen || j->map_fd < 0 || __atomic_load_n(&j->mout, __ATOMIC_ACQUIRE))
		return 0;
	b = j->mapspare;	/* its writer's, until mout is NULL */
	if (!b && !(b = malloc(MAP_BUF_MAX)))
		return map_write(j);
	j->mapspare = NULL;
	j->mout_len = j->maplen;
	if ((j->mout_owner = j->merger))	/* its thread writes them */
		__atomic_store_n(&j->merger->hand_map, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&j->mout, j->mapbuf, __ATOMIC_RELEASE);
	j->mapbuf = b;
	j->maplen = 0;
	return 0;
}

/* Lock held: room in the lines' buffer for len more bytes. A load's merge hands the
 * buffered lines off (its thread writes them after the lock) unless lines it handed off
 * before wait; else, or then if there is still no room, they are written here. */
int _uevent_jit_map_room(struct uevent_jit *j, size_t len)
{
	int ret;

	if (j->maplen + len <= MAP_BUF_MAX)
		return 0;
	if (j->defer && (ret = map_handoff(j)) < 0)
		return ret;
	return j->maplen + len > MAP_BUF_MAX ? map_write(j) : 0;
}

/* Lock held: the buffered perf-map lines written, after any handed off. */
int _uevent_jit_map_flush(struct uevent_jit *j)
{
	return map_write(j);
}

/* Lock held: the lines of the CODE_LOAD records in the dump's batch from map_scan up to
 * stop (a record's start, or the batch's end), made into the map's buffer. */
static int map_scan_to(struct uevent_jit *j, uint64_t stop)
{
	const unsigned char *p, *end;
	uint32_t id, size;
	uint64_t addr, csize;
	size_t nlen;
	int ret = 0;

	_uevent_jit_cp_sync(j);
	p = j->dumpbuf + (j->map_scan - j->dump_file);
	end = j->dumpbuf + (stop - j->dump_file);
	for (; p + 16 <= end; p += size) {
		memcpy(&id, p, 4);
		memcpy(&size, p + 4, 4);
		if (size < 16 || size > (size_t)(end - p))
			break;
		if (id != JIT_CODE_LOAD || size < sizeof(struct jd_load) + 1)
			continue;
		memcpy(&addr, p + offsetof(struct jd_load, code_addr), 8);
		memcpy(&csize, p + offsetof(struct jd_load, code_size), 8);
		nlen = strnlen((const char *)p + sizeof(struct jd_load), size - sizeof(struct jd_load));
		if ((ret = _uevent_jit_map_room(j, nlen + 64)) < 0)
			break;
		if (nlen + 64 > MAP_LINE_MAX)
			continue;	/* a name of 64 KiB: no line */
		j->maplen = (size_t)(_uevent_jit_map_put(j->mapbuf + j->maplen, addr, csize,
							 (const char *)p + sizeof(struct jd_load),
							 nlen) - j->mapbuf);
	}
	j->map_scan = stop;
	return ret;
}

/*
 * With both batched (UEVENT_JIT_BUFFER_JITDUMP and _PERF_MAP), a load writes no perf-map
 * line: the lines are made here from the CODE_LOAD records in the dump's batch when
 * that is written (every 256 KiB, at 100 ms, fork, close and exit), in one pass with
 * the caches warm for it, and written at once. A load's own line, made while the JIT's
 * compile has evicted the map's buffer and this code, cost it 0.1 us (a C loop that
 * reads 4 MiB between loads). Once several threads load, a staged load's line comes
 * made by its thread with its records (_uevent_jit_map_add), and the scan, under the
 * session's lock, passes it by.
 */
int _uevent_jit_map_scan(struct uevent_jit *j)
{
	int ret;

	if (!j->mapbuf || !j->dumpbuf || j->map_fd < 0 || j->map_scan < j->dump_file)
		return 0;
	ret = map_scan_to(j, j->dump_off);
	if (ret == 0)	/* a load's merge: written after the lock */
		ret = j->defer ? map_handoff(j) : map_write(j);
	return ret;
}

/* Lock held: the lines of the loads in the dump's batch made now, so that a line made
 * apart (a move's) goes into the map after theirs, as its record goes after theirs. */
int _uevent_jit_map_catch_up(struct uevent_jit *j)
{
	if (!j->mapbuf || !j->dumpbuf || j->map_fd < 0 || j->map_scan < j->dump_file)
		return 0;
	return map_scan_to(j, j->dump_off);
}

/*
 * Lock held, in a merge: a staged load's perf-map line (len bytes, made by its thread),
 * its records just appended to the dump's batch at off, up to end; the lines of the
 * records before them first. Unless a write of the batch has made it already.
 */
int _uevent_jit_map_add(struct uevent_jit *j, uint64_t off, const char *line, size_t len,
			uint64_t end)
{
	int ret;

	if (!j->mapbuf || !j->dumpbuf || j->map_fd < 0 || j->map_scan > off ||
	    j->map_scan < j->dump_file)
		return 0;
	if (j->map_scan < off && (ret = map_scan_to(j, off)) < 0)
		return ret;
	if ((ret = _uevent_jit_map_room(j, len)) < 0)
		return ret;
	if (_uevent_jit_cp_push(j, 1, j->maplen, line, len) < 0)
		memcpy(j->mapbuf + j->maplen, line, len);
	j->maplen += len;
	j->map_scan = end;
	return 0;
}

/* "ADDR SIZE NAME\n" at p, formatted by hand (a line for every trace a JIT compiles);
 * returns its end. Room: nlen + 64. */
UEVENT_HOT char *_uevent_jit_map_put(char *p, uint64_t addr, uint64_t size, const char *name,
				     size_t nlen)
{
	char *q;

	p = fmt_hex(p, addr);
	*p++ = ' ';
	p = fmt_hex(p, size);
	*p++ = ' ';
	/* one line per symbol: a newline inside the name would start a bogus one */
	memcpy(p, name, nlen);
	if (unlikely(memchr(p, '\n', nlen) || memchr(p, '\r', nlen)))
		for (q = p; q < p + nlen; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
	p += nlen;
	*p++ = '\n';
	return p;
}

UEVENT_HOT int _uevent_jit_map_line(struct uevent_jit *j, uint64_t addr, uint64_t size,
				    const char *name, uint64_t now)
{
	char small[512], *buf = small, *p;
	size_t cap = sizeof(small), len = strlen(name) + 64;
	ssize_t n;
	int ret = 0;

	if (j->map_fd < 0)
		return 0;
	if (j->mapbuf && len < MAP_LINE_MAX / 2) {
		/* UEVENT_JIT_BUFFER_PERF_MAP: append to the buffer, write when it is full
		 * or its oldest line is 100 ms old (and at fork, close and exit) */
		if (j->maplen + len > MAP_BUF_MAX && (ret = _uevent_jit_map_flush(j)) < 0)
			return ret;
		p = _uevent_jit_map_put(j->mapbuf + j->maplen, addr, size, name, len - 64);
		n = p - (j->mapbuf + j->maplen);
		if (!j->maplen)
			j->map_t0 = now;
		j->maplen += (size_t)n;
		if (now - j->map_t0 > MAP_BUF_AGE_NS)
			ret = _uevent_jit_map_flush(j);
		return ret;
	}
	if ((ret = _uevent_jit_map_flush(j)) < 0)
		return ret;
	if (len > cap) {
		if (!(buf = malloc(len)))
			return -ENOMEM;
		cap = len;
	}
	n = snprintf(buf, cap, "%" PRIx64 " %" PRIx64 " %s\n", addr, size, name);
	/* one line per symbol: a newline inside the name would start a bogus entry */
	for (p = buf; p < buf + n - 1; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* One write per line: O_APPEND keeps lines whole between writers. */
	do
		n = write(j->map_fd, buf, (size_t)n);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(buf))	/* a torn line would merge with the next */
		ret = -_uevent_undo_short_append(j->map_fd, (size_t)n);
	if (buf != small)
		free(buf);
	return ret;
}

/* The line for a load into req; -ENOMEM. */
int _uevent_jit_map_req_init(struct map_req *req, uint64_t addr, uint64_t size, const char *name)
{
	size_t nlen = strlen(name);

	req->line = nlen + 64 <= sizeof(req->small) ? req->small : malloc(nlen + 64);
	if (!req->line)
		return -ENOMEM;
	req->ga.iov[0].iov_base = req->line;
	req->ga.iov[0].iov_len = (size_t)(_uevent_jit_map_put(req->line, addr, size, name, nlen) -
				    req->line);
	req->ga.niov = 1;
	req->ga.len = req->ga.iov[0].iov_len;
	return 0;
}

void _uevent_jit_map_req_fini(struct map_req *req)
{
	if (req->line != req->small)
		free(req->line);
}

/* Lock held: the line goes after every line pushed before it. */
void _uevent_jit_map_push(struct uevent_jit *j, struct map_req *req)
{
	_uevent_ga_push(&j->mapq, &req->ga);
}

/* Lock not held: returns when req's line is in the file (0) or could not be (-errno). */
int _uevent_jit_map_commit(struct uevent_jit *j, struct map_req *req)
{
	return _uevent_ga_commit(&j->mapq, &j->map_fd, &req->ga, NULL);
}
