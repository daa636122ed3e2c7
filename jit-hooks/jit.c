/* jit.c - JIT hooks: jitdump for perf inject --jit, /tmp/perf-PID.map, JIT uevents. */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

/* ---- jitdump format (tools/perf/Documentation/jitdump-specification.txt) -------- */

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD" in host order */
#define JITDUMP_VERSION		1

enum {
	JIT_CODE_LOAD		= 0,
	JIT_CODE_MOVE		= 1,
	JIT_CODE_DEBUG_INFO	= 2,
	JIT_CODE_CLOSE		= 3,
	JIT_CODE_UNWINDING_INFO	= 4
};

struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jd_prefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct jd_load {
	struct jd_prefix p;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	/* name, NUL, code bytes */
};

struct jd_move {
	struct jd_prefix p;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

struct jd_debug {
	struct jd_prefix p;
	uint64_t code_addr, nr_entry;
	/* per entry: u64 addr, u32 line, u32 discrim, name, NUL */
};

struct jd_unwind {
	struct jd_prefix p;
	uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
	/* unwinding data */
};

#if defined(__x86_64__)
#define JD_ELF_MACH EM_X86_64
#elif defined(__i386__)
#define JD_ELF_MACH EM_386
#elif defined(__aarch64__)
#define JD_ELF_MACH EM_AARCH64
#elif defined(__arm__)
#define JD_ELF_MACH EM_ARM
#elif defined(__powerpc64__) || defined(__powerpc__)
#define JD_ELF_MACH EM_PPC64
#elif defined(__riscv)
#define JD_ELF_MACH EM_RISCV
#elif defined(__s390x__)
#define JD_ELF_MACH EM_S390
#else
#define JD_ELF_MACH EM_NONE
#endif

static const char zeros[8];

static inline uint32_t pad8(size_t n)
{
	return (uint32_t)((8 - (n & 7)) & 7);
}

/* ---- the session ---------------------------------------------------------------- */

/* A loaded piece of code, by address: needed for move (the code index names perf's
 * jitted-PID-INDEX.so), unload and the perf-map line of a move. */
struct code {
	uint64_t addr, size, index;
	char *name;
};

/* DEBUG_INFO / UNWINDING_INFO records waiting for the CODE_LOAD of their address. */
struct pending {
	struct pending *next;
	uint64_t addr;
	size_t len;
	unsigned char rec[];
};

struct uevent_jit {
	pthread_mutex_t lock;
	struct uevent_jit *next;	/* in the process's list, for fork */
	unsigned int flags;
	int forked;			/* set in a fork child: reopen on next call */
	pid_t pid;
	char dir[PATH_MAX];
	char dump_path[PATH_MAX];
	char map_path[PATH_MAX];
	int map_path_given;
	int dump_fd, map_fd;
	void *dump_map;
	size_t dump_map_len;
	uint64_t dump_off;
	struct code *codes;		/* open addressing, linear probing, addr 0 = empty */
	size_t ncodes, cap;
	struct pending *pending;
};

static uint64_t next_index = 1;		/* process-wide: perf names files by it */

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uevent_jit *sessions;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Hold every session across fork() so the child never inherits a lock held by a
 * thread that does not exist there; the child then marks each session for reopening. */
static void fork_prepare(void)
{
	struct uevent_jit *j;

	pthread_mutex_lock(&list_lock);
	for (j = sessions; j; j = j->next)
		pthread_mutex_lock(&j->lock);
}

static void fork_parent(void)
{
	struct uevent_jit *j;

	for (j = sessions; j; j = j->next)
		pthread_mutex_unlock(&j->lock);
	pthread_mutex_unlock(&list_lock);
}

static __thread pid_t tid_cache;

static void fork_child(void)
{
	struct uevent_jit *j;

	tid_cache = 0;
	for (j = sessions; j; j = j->next) {
		j->forked = 1;
		pthread_mutex_unlock(&j->lock);
	}
	pthread_mutex_unlock(&list_lock);
}

static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The record's tid, without a syscall per record; only the forking thread survives a
 * fork, and fork_child() resets its cache. */

static pid_t gettid_(void)
{
	if (unlikely(!tid_cache))
		tid_cache = (pid_t)syscall(SYS_gettid);
	return tid_cache;
}

/* ---- address table ------------------------------------------------------------- */

static size_t slot_of(const struct uevent_jit *j, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (j->cap - 1);
}

static struct code *code_find(struct uevent_jit *j, uint64_t addr)
{
	size_t i;

	if (!j->cap)
		return NULL;
	for (i = slot_of(j, addr); j->codes[i].addr; i = (i + 1) & (j->cap - 1))
		if (j->codes[i].addr == addr)
			return &j->codes[i];
	return NULL;
}

static int code_grow(struct uevent_jit *j)
{
	size_t cap = j->cap ? j->cap * 2 : 64, i, k;
	struct code *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < j->cap; i++) {
		if (!j->codes[i].addr)
			continue;
		k = (size_t)((j->codes[i].addr * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
		while (n[k].addr)
			k = (k + 1) & (cap - 1);
		n[k] = j->codes[i];
	}
	free(j->codes);
	j->codes = n;
	j->cap = cap;
	return 0;
}

/* Inserts or replaces; takes ownership of name. */
static int code_put(struct uevent_jit *j, uint64_t addr, uint64_t size, uint64_t index,
		    char *name)
{
	struct code *c = code_find(j, addr);
	size_t i;

	if (c) {
		free(c->name);
		c->size = size;
		c->index = index;
		c->name = name;
		return 0;
	}
	if ((j->ncodes + 1) * 4 > j->cap * 3 && code_grow(j) < 0) {
		free(name);
		return -ENOMEM;
	}
	for (i = slot_of(j, addr); j->codes[i].addr; i = (i + 1) & (j->cap - 1))
		;
	j->codes[i] = (struct code){ addr, size, index, name };
	j->ncodes++;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void code_del(struct uevent_jit *j, struct code *c)
{
	size_t i = (size_t)(c - j->codes), k, home;

	free(c->name);
	j->codes[i].addr = 0;
	j->codes[i].name = NULL;
	j->ncodes--;
	for (k = (i + 1) & (j->cap - 1); j->codes[k].addr; k = (k + 1) & (j->cap - 1)) {
		home = slot_of(j, j->codes[k].addr);
		/* move k into the hole at i unless its home lies cyclically in (i, k] */
		if ((k > i && (home <= i || home > k)) || (k < i && (home <= i && home > k))) {
			j->codes[i] = j->codes[k];
			j->codes[k].addr = 0;
			j->codes[k].name = NULL;
			i = k;
		}
	}
}

/* ---- files ---------------------------------------------------------------------- */

/* Writes all of iov at the end of the dump; on failure truncates back, so the file
 * only ever holds whole records. */
static int dump_write(struct uevent_jit *j, struct iovec *iov, int cnt)
{
	uint64_t off = j->dump_off;
	ssize_t n;
	int err;

	while (cnt > 0) {
		n = pwritev(j->dump_fd, iov, cnt, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0) {
			errno = EIO;
			goto fail;
		}
		off += (uint64_t)n;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	j->dump_off = off;
	return 0;
fail:
	err = errno;
	if (off != j->dump_off && ftruncate(j->dump_fd, (off_t)j->dump_off) < 0)
		j->dump_off = off;	/* cannot undo: keep appending after the debris */
	return -err;
}

static int mkdir_0700(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* The session's directory: the caller's, else a fresh mkdtemp one as perf's jvmti
 * agent makes, so nobody else's files are ever in it. */
static int make_dir(struct uevent_jit *j, const char *dir)
{
	const char *base;
	int ret;

	if (dir) {
		if (snprintf(j->dir, sizeof(j->dir), "%s", dir) >= (int)sizeof(j->dir))
			return -ENAMETOOLONG;
		return mkdir_0700(j->dir);
	}
	base = getenv("JITDUMPDIR");
	if (!base || !*base)
		base = getenv("HOME");
	if (!base || !*base)
		base = ".";
	if (snprintf(j->dir, sizeof(j->dir), "%s/.debug", base) >= (int)sizeof(j->dir))
		return -ENAMETOOLONG;
	if ((ret = mkdir_0700(j->dir)) < 0)
		return ret;
	if (strlen(j->dir) + sizeof("/jit") > sizeof(j->dir))
		return -ENAMETOOLONG;
	strcat(j->dir, "/jit");
	if ((ret = mkdir_0700(j->dir)) < 0)
		return ret;
	if (strlen(j->dir) + sizeof("/libuevent-jit-XXXXXX") > sizeof(j->dir))
		return -ENAMETOOLONG;
	strcat(j->dir, "/libuevent-jit-XXXXXX");
	if (!mkdtemp(j->dir))
		return -errno;
	return 0;
}

static int open_dump(struct uevent_jit *j)
{
	struct jd_header h;
	struct iovec iov;
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if ((unsigned)snprintf(j->dump_path, sizeof(j->dump_path), "%s/jit-%d.dump", j->dir,
			       (int)j->pid) >= sizeof(j->dump_path))
		return -ENAMETOOLONG;
	/* O_EXCL: a file of that name belongs to someone else (another pid namespace, a
	 * previous process); never clobber it, never follow a link planted there. */
	j->dump_fd = open(j->dump_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
	if (j->dump_fd < 0)
		return -errno;
	j->dump_off = 0;
	memset(&h, 0, sizeof(h));
	h.magic = JITDUMP_MAGIC;
	h.version = JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = JD_ELF_MACH;
	h.pid = (uint32_t)j->pid;
	h.timestamp = _uevent_now_ns();
	iov = (struct iovec){ &h, sizeof(h) };
	if ((ret = dump_write(j, &iov, 1)) < 0)
		return ret;
	/* perf record logs executable mappings only; this one is how perf inject --jit
	 * finds the file (by its name jit-PID.dump) and the process it belongs to. */
	j->dump_map_len = (size_t)(page > 0 ? page : 4096);
	j->dump_map = mmap(NULL, j->dump_map_len, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			   j->dump_fd, 0);
	if (j->dump_map == MAP_FAILED) {
		j->dump_map = NULL;
		return -errno;
	}
	return 0;
}

static int open_map(struct uevent_jit *j, const char *path)
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
	 * may write the same file. */
	j->map_fd = open(j->map_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			 0600);
	if (j->map_fd < 0)
		return -errno;
	if (j->map_path_given)
		return 0;
	/* In /tmp anyone may have made the file first: use it only if it is ours. */
	if (fstat(j->map_fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
		return -EPERM;
	return 0;
}

static void close_files(struct uevent_jit *j)
{
	if (j->dump_map)
		munmap(j->dump_map, j->dump_map_len);
	j->dump_map = NULL;
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
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP) && (ret = open_dump(j)) < 0)
		return ret;
	if (!(j->flags & UEVENT_JIT_NO_PERF_MAP) && (ret = open_map(j, map_path)) < 0)
		return ret;
	return 0;
}

/* In a fork child: the parent's files stay the parent's; start ours. */
static int check_fork(struct uevent_jit *j)
{
	int ret;

	if (likely(!j->forked))
		return 0;
	j->forked = 0;
	close_files(j);
	ret = open_files(j, NULL);
	if (ret < 0)
		close_files(j);
	return ret;
}

static int map_line(struct uevent_jit *j, uint64_t addr, uint64_t size, const char *name)
{
	char small[512], *buf = small, *p;
	size_t cap = sizeof(small), len = strlen(name) + 64;
	ssize_t n;
	int ret = 0;

	if (j->map_fd < 0)
		return 0;
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
	else if ((size_t)n != strlen(buf))
		ret = -ENOSPC;
	if (buf != small)
		free(buf);
	return ret;
}

/* ---- uevent markers ----------------------------------------------------------- */

static size_t marker_cap(void)
{
	size_t m = uevent_max_payload();

	return m && m < UEVENT_MAX_PAYLOAD ? m : UEVENT_MAX_PAYLOAD;
}

static void marker_load(uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	char tname[UEVENT_MAX_PAYLOAD];
	struct uevent_jit_code_load in = { addr, size, index, name, 0 };
	size_t cap = marker_cap();
	ssize_t n;

	n = uevent_jit_code_load_encode(buf, cap, &in);
	if (n == -E2BIG && cap > 40) {
		/* The name is the only variable part: shorten it to fit. */
		snprintf(tname, cap - 40, "%s", name);
		in.name = tname;
		n = uevent_jit_code_load_encode(buf, cap, &in);
	}
	if (n > 0)
		uevent_emit(UEVENT_TYPE_JIT_CODE_LOAD, buf, (size_t)n);
}

static void marker_debug(uint64_t code_addr, const struct uevent_jit_debug_entry *e,
			 uint32_t nr)
{
	unsigned char buf[UEVENT_MAX_PAYLOAD];
	size_t cap = marker_cap();
	uint32_t i = 0, k;
	ssize_t n;

	/* As many entries per payload as fit; every payload names its code_addr. */
	while (i < nr) {
		for (k = nr - i; k > 0; k = k / 2) {
			n = uevent_jit_debug_info_encode(buf, cap, code_addr, e + i, k);
			if (n > 0)
				break;
		}
		if (k == 0)
			return;		/* one entry alone is too big: give up quietly */
		uevent_emit(UEVENT_TYPE_JIT_DEBUG_INFO, buf, (size_t)n);
		i += k;
	}
}

/* ---- the API ------------------------------------------------------------------ */

UEVENT_EXPORT struct uevent_jit *uevent_jit__open(const struct uevent_jit_opts *opts)
{
	const char *dir = NULL, *map_path = NULL;
	unsigned int flags = 0;
	struct uevent_jit *j;
	int ret;

	if (opts) {
		if (opts->sz < sizeof(size_t)) {
			errno = EINVAL;
			return NULL;
		}
		if (opts->sz >= offsetof(struct uevent_jit_opts, dir) + sizeof(opts->dir))
			dir = opts->dir;
		if (opts->sz >= offsetof(struct uevent_jit_opts, perf_map_path) +
				sizeof(opts->perf_map_path))
			map_path = opts->perf_map_path;
		if (opts->sz >= offsetof(struct uevent_jit_opts, flags) + sizeof(opts->flags))
			flags = opts->flags;
		if (flags & ~(unsigned)(UEVENT_JIT_NO_JITDUMP | UEVENT_JIT_NO_PERF_MAP |
					UEVENT_JIT_NO_UEVENT)) {
			errno = EINVAL;
			return NULL;
		}
	}
	pthread_once(&atfork_once, register_atfork);
	j = calloc(1, sizeof(*j));
	if (!j) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&j->lock, NULL);
	j->flags = flags;
	j->dump_fd = j->map_fd = -1;
	if (!(flags & UEVENT_JIT_NO_JITDUMP) && (ret = make_dir(j, dir)) < 0)
		goto fail;
	if ((ret = open_files(j, map_path)) < 0)
		goto fail;
	pthread_mutex_lock(&list_lock);
	j->next = sessions;
	sessions = j;
	pthread_mutex_unlock(&list_lock);
	return j;
fail:
	close_files(j);
	pthread_mutex_destroy(&j->lock);
	free(j);
	errno = -ret;
	return NULL;
}

static struct pending *take_pending(struct uevent_jit *j, uint64_t addr)
{
	struct pending **pp, *p, *out = NULL, **tail = &out;

	for (pp = &j->pending; (p = *pp);) {
		if (p->addr == addr) {
			*pp = p->next;
			p->next = NULL;
			*tail = p;
			tail = &p->next;
		} else {
			pp = &p->next;
		}
	}
	return out;
}

static void free_pending(struct pending *p)
{
	struct pending *n;

	for (; p; p = n) {
		n = p->next;
		free(p);
	}
}

UEVENT_EXPORT int uevent_jit__code_load(struct uevent_jit *j, const char *name,
					uint64_t addr, uint64_t size, const void *code)
{
	struct pending *pend = NULL, *p;
	struct iovec iov[16];
	struct jd_load rec;
	uint64_t index;
	size_t nlen;
	char *copy;
	int cnt = 0, ret = 0;

	if (!j || !name)
		return _uevent_err(EFAULT);
	if (!addr || !size || size > UINT32_MAX / 2)
		return _uevent_err(EINVAL);
	if (!code)
		code = (const void *)(uintptr_t)addr;
	nlen = strlen(name);
	if (nlen > UINT32_MAX / 4 || !(copy = strdup(name)))
		return _uevent_err(nlen > UINT32_MAX / 4 ? EINVAL : ENOMEM);

	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0) {
		free(copy);
		goto out;
	}
	index = __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
	if (j->dump_fd >= 0) {
		/* Debug and unwinding info first, in the same write: perf attaches them to
		 * the CODE_LOAD that follows. */
		pend = take_pending(j, addr);
		for (p = pend; p && cnt < 12; p = p->next)
			iov[cnt++] = (struct iovec){ p->rec, p->len };
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_LOAD;
		rec.p.total_size = (uint32_t)(sizeof(rec) + nlen + 1 + size);
		rec.p.total_size += pad8(rec.p.total_size);
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)gettid_();
		rec.vma = addr;
		rec.code_addr = addr;
		rec.code_size = size;
		rec.code_index = index;
		rec.p.timestamp = _uevent_now_ns();
		iov[cnt++] = (struct iovec){ &rec, sizeof(rec) };
		iov[cnt++] = (struct iovec){ (void *)name, nlen + 1 };
		iov[cnt++] = (struct iovec){ (void *)code, (size_t)size };
		iov[cnt++] = (struct iovec){ (void *)zeros,
					     pad8(sizeof(rec) + nlen + 1 + size) };
		ret = dump_write(j, iov, cnt);
		free_pending(pend);
	}
	if (ret == 0)
		ret = map_line(j, addr, size, name);
	if (ret == 0)
		ret = code_put(j, addr, size, index, copy);
	else
		free(copy);
	if (ret == 0 && !(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_load(addr, size, index, name);
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

UEVENT_EXPORT int uevent_jit__code_move(struct uevent_jit *j, uint64_t old_addr,
					uint64_t new_addr, uint64_t size)
{
	struct jd_move rec;
	struct iovec iov;
	struct code *c;
	char *name;
	uint64_t index;
	int ret = 0;

	if (!j)
		return _uevent_err(EFAULT);
	if (!new_addr)
		return _uevent_err(EINVAL);
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0)
		goto out;
	if (!(c = code_find(j, old_addr))) {
		ret = -ENOENT;
		goto out;
	}
	if (!size)
		size = c->size;
	index = c->index;
	if (j->dump_fd >= 0) {
		memset(&rec, 0, sizeof(rec));
		rec.p.id = JIT_CODE_MOVE;
		rec.p.total_size = sizeof(rec);
		rec.p.timestamp = _uevent_now_ns();
		rec.pid = (uint32_t)j->pid;
		rec.tid = (uint32_t)gettid_();
		rec.vma = new_addr;
		rec.old_code_addr = old_addr;
		rec.new_code_addr = new_addr;
		rec.code_size = size;
		rec.code_index = index;
		iov = (struct iovec){ &rec, sizeof(rec) };
		if ((ret = dump_write(j, &iov, 1)) < 0)
			goto out;
	}
	if ((ret = map_line(j, new_addr, size, c->name)) < 0)
		goto out;
	name = c->name;
	c->name = NULL;
	code_del(j, c);
	if ((ret = code_put(j, new_addr, size, index, name)) < 0)
		goto out;
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED()) {
		unsigned char buf[64];
		struct uevent_jit_code_move in = { index, old_addr, new_addr, size };
		ssize_t n = uevent_jit_code_move_encode(buf, sizeof(buf), &in);

		if (n > 0)
			uevent_emit(UEVENT_TYPE_JIT_CODE_MOVE, buf, (size_t)n);
	}
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
	if ((ret = check_fork(j)) < 0)
		goto out;
	if (!(c = code_find(j, addr))) {
		ret = -ENOENT;
		goto out;
	}
	if (!size)
		size = c->size;
	index = c->index;
	code_del(j, c);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED()) {
		unsigned char buf[64];
		struct uevent_jit_code_unload in = { addr, size, index };
		ssize_t n = uevent_jit_code_unload_encode(buf, sizeof(buf), &in);

		if (n > 0)
			uevent_emit(UEVENT_TYPE_JIT_CODE_UNLOAD, buf, (size_t)n);
	}
out:
	pthread_mutex_unlock(&j->lock);
	return ret < 0 ? _uevent_err(-ret) : 0;
}

static void add_pending(struct uevent_jit *j, struct pending *p)
{
	struct pending **pp = &j->pending;

	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
}

UEVENT_EXPORT int uevent_jit__debug_info(struct uevent_jit *j, uint64_t code_addr,
					 const struct uevent_jit_debug_entry *e, uint32_t nr)
{
	struct pending *p = NULL;
	struct jd_debug *rec;
	unsigned char *w;
	size_t len = sizeof(*rec), flen;
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
	if (!(j->flags & UEVENT_JIT_NO_JITDUMP)) {
		p = malloc(sizeof(*p) + len + 8);
		if (!p)
			return _uevent_err(ENOMEM);
		p->next = NULL;
		p->addr = code_addr;
		memset(p->rec, 0, len + 8);
		rec = (struct jd_debug *)(void *)p->rec;
		rec->p.id = JIT_CODE_DEBUG_INFO;
		rec->p.total_size = (uint32_t)(len + pad8(len));
		rec->p.timestamp = _uevent_now_ns();
		rec->code_addr = code_addr;
		rec->nr_entry = nr;
		w = p->rec + sizeof(*rec);
		for (i = 0; i < nr; i++) {
			memcpy(w, &e[i].addr, 8);
			memcpy(w + 8, &e[i].line, 4);
			memcpy(w + 12, &e[i].discrim, 4);
			flen = strlen(e[i].file) + 1;
			memcpy(w + 16, e[i].file, flen);
			w += 16 + flen;
		}
		p->len = rec->p.total_size;
	}
	pthread_mutex_lock(&j->lock);
	if ((ret = check_fork(j)) < 0) {
		free(p);
		goto out;
	}
	if (p)
		add_pending(j, p);
	if (!(j->flags & UEVENT_JIT_NO_UEVENT) && UEVENT_ENABLED())
		marker_debug(code_addr, e, nr);
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
	if ((ret = check_fork(j)) < 0)
		free(p);
	else
		add_pending(j, p);
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

UEVENT_EXPORT int uevent_jit__close(struct uevent_jit *j)
{
	struct uevent_jit **pp;
	struct jd_prefix rec;
	struct iovec iov;
	size_t i;
	int ret = 0;

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
	/* A child that never called us has no files of its own: nothing to close out. */
	if (!j->forked && j->dump_fd >= 0) {
		rec = (struct jd_prefix){ JIT_CODE_CLOSE, sizeof(rec), _uevent_now_ns() };
		iov = (struct iovec){ &rec, sizeof(rec) };
		ret = dump_write(j, &iov, 1);
	}
	if (j->forked) {
		/* the inherited fds are the parent's files: only drop our references */
		j->forked = 0;
	}
	close_files(j);
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_destroy(&j->lock);
	for (i = 0; i < j->cap; i++)
		free(j->codes[i].name);
	free(j->codes);
	free_pending(j->pending);
	free(j);
	return ret < 0 ? _uevent_err(-ret) : 0;
}
