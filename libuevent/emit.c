/* emit.c - the emit side: transport selection, the enabled word, marks, ranges, stats.
 * The transports themselves are transport-*.c, behind transport.h's interface. */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "transport.h"

/*
 * The enabled word. Four writers share it so that UEVENT_ENABLED() is one load:
 *  - bits 0..15 are the USDT semaphore of libuevent:emit; the kernel increments them
 *    when a uprobe is attached to the probe site (the word lives in .probes for that);
 *  - bit 16 is set by us when the transport delivers without a listener check (prctl
 *    on a kernel without the enable word, ftrace, file);
 *  - bit 30 is the prctl enable bit on a kernel with PR_PERF_UEVENT_ENABLE_WORD
 *    (patch 0007), set while an attr.uevents event can see one of our threads;
 *  - bit 31 is the user_events enable bit, which the kernel sets while a tracer
 *    (perf, ftrace) has our tracepoint enabled.
 * All of them only ever flip their own bits; the word is non-zero iff someone may listen.
 */
volatile uint32_t _uevent_word __attribute__((section(".probes"), aligned(8))) = 0;
UEVENT_EXPORT extern volatile uint32_t uevent_enabled_word __attribute__((alias("_uevent_word")));
UEVENT_EXPORT volatile uint32_t *const uevent_enabled_ptr = &_uevent_word;

#if HAVE_SYS_SDT_H
/*
 * The SDT semaphore is the low half of the enabled word (little-endian x86-64). Every
 * probe of ours shares it: the kernel adds one per uprobe installed in a process, so
 * the word counts the probe sites being traced, and any of them turns the marks on.
 */
#define SDT_SEMAPHORE(name)							\
	extern volatile unsigned short libuevent_##name##_semaphore		\
		__attribute__((alias("_uevent_word")));
#define SDT_CLASS_SEMAPHORE(n) SDT_SEMAPHORE(emit##n)
SDT_SEMAPHORE(emit)
SDT_SEMAPHORE(text)
_UEVENT_USDT_CLASSES(SDT_CLASS_SEMAPHORE)
#endif

/* ---- statistics ------------------------------------------------------------------ */

/*
 * Counters live per thread, in slots of a static table, so an emit pays an unlocked
 * add instead of a contended atomic: `add` on memory is one instruction, so a signal
 * handler on the same thread cannot tear it. uevent_stats_get() sums the slots; a
 * thread that exits folds its slot into `retired` (atomically) and frees it. A thread
 * that finds the table full uses `retired` directly, with atomics.
 */
struct counters {
	uint64_t emitted, bytes, unobserved;
	uint64_t dropped_by[UEVENT_DROP_REASONS];
};

#define STAT_SLOTS 512
static struct slot {
	struct counters c;
	int used;
} __attribute__((aligned(64))) slots[STAT_SLOTS];
static struct counters retired;
static __thread struct counters *my_counters __attribute__((tls_model("initial-exec")));
static pthread_key_t slot_key;

static inline void counter_add(uint64_t *p, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(n));
#else
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
#endif
}

static struct counters *thread_counters(void)
{
	struct counters *c = my_counters;
	int i;

	if (likely(c))
		return c;
	for (i = 0; i < STAT_SLOTS; i++) {
		int unused = 0;

		if (!__atomic_load_n(&slots[i].used, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&slots[i].used, &unused, 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			my_counters = &slots[i].c;
			pthread_setspecific(slot_key, &slots[i]);
			return my_counters;
		}
	}
	return NULL;
}

#define STAT_ADD(field, n)							\
	do {									\
		struct counters *c_ = thread_counters();			\
		if (likely(c_))							\
			counter_add(&c_->field, (n));				\
		else								\
			__atomic_fetch_add(&retired.field, (n), __ATOMIC_RELAXED); \
	} while (0)

static void fold(struct counters *from, struct counters *to)
{
	uint64_t *f = (uint64_t *)from, *t = (uint64_t *)to;
	size_t i;

	for (i = 0; i < sizeof(*from) / sizeof(uint64_t); i++) {
		uint64_t v = __atomic_load_n(&f[i], __ATOMIC_RELAXED);

		__atomic_fetch_add(&t[i], v, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&f[i], v, __ATOMIC_RELAXED);
	}
}

/* Thread exit: keep the counts, free the slot. */
static void slot_release(void *arg)
{
	struct slot *sl = arg;

	fold(&sl->c, &retired);
	__atomic_store_n(&sl->used, 0, __ATOMIC_RELEASE);
}

static int drop_reason(int err)
{
	switch (err) {
	case E2BIG:	return UEVENT_DROP_TOO_BIG;
	case EFAULT:	return UEVENT_DROP_FAULT;
	case EINVAL:	return UEVENT_DROP_INVAL;
	case EAGAIN:	return UEVENT_DROP_AGAIN;
	case EACCES:
	case EPERM:	return UEVENT_DROP_PERM;
	default:	return UEVENT_DROP_IO;
	}
}

static int count_drop(int err)
{
	STAT_ADD(dropped_by[drop_reason(err)], 1);
	return _uevent_err(err);
}

UEVENT_EXPORT int uevent_stats_get(struct uevent_stats *out, size_t sz)
{
	struct counters sum;
	struct uevent_stats s = {0};
	uint64_t *f, *t = (uint64_t *)&sum;
	size_t i, k;

	if (!out || sz < offsetof(struct uevent_stats, dropped_by))
		return _uevent_err(EINVAL);
	memset(&sum, 0, sizeof(sum));
	f = (uint64_t *)&retired;
	for (k = 0; k < sizeof(sum) / sizeof(uint64_t); k++)
		t[k] += __atomic_load_n(&f[k], __ATOMIC_RELAXED);
	for (i = 0; i < STAT_SLOTS; i++) {
		f = (uint64_t *)&slots[i].c;
		for (k = 0; k < sizeof(sum) / sizeof(uint64_t); k++)
			t[k] += __atomic_load_n(&f[k], __ATOMIC_RELAXED);
	}
	s.emitted = sum.emitted;
	s.bytes = sum.bytes;
	s.unobserved = sum.unobserved;
	for (i = 0; i < UEVENT_DROP_REASONS; i++) {
		s.dropped_by[i] = sum.dropped_by[i];
		s.dropped += sum.dropped_by[i];
	}
	memcpy(out, &s, sz < sizeof(s) ? sz : sizeof(s));
	return 0;
}

/* Racy against concurrent emits by design: counts made meanwhile may survive. */
UEVENT_EXPORT void uevent_stats_reset(void)
{
	uint64_t *f;
	size_t i, k;

	f = (uint64_t *)&retired;
	for (k = 0; k < sizeof(retired) / sizeof(uint64_t); k++)
		__atomic_store_n(&f[k], 0, __ATOMIC_RELAXED);
	for (i = 0; i < STAT_SLOTS; i++) {
		f = (uint64_t *)&slots[i].c;
		for (k = 0; k < sizeof(retired) / sizeof(uint64_t); k++)
			__atomic_store_n(&f[k], 0, __ATOMIC_RELAXED);
	}
}

UEVENT_EXPORT const char *uevent_drop_reason_name(int reason)
{
	static const char *const names[UEVENT_DROP_REASONS] = {
		"too_big", "fault", "inval", "io", "again", "perm",
	};

	if (reason < 0 || reason >= UEVENT_DROP_REASONS)
		return NULL;
	return names[reason];
}

/* ---- transport state ------------------------------------------------------------- */

/* A transport that delivers nothing and counts every mark unobserved. */
static int none_write(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		      uint32_t word)
{
	(void)ts;
	(void)type;
	(void)data;
	(void)size;
	(void)word;
	return 1;
}

static const struct _uevent_transport_ops none_ops = { .write = none_write };

static const struct _uevent_transport_ops *const ops[UEVENT_TRANSPORT_COUNT] = {
	[UEVENT_TRANSPORT_AUTO]		= &none_ops,
	[UEVENT_TRANSPORT_PRCTL]	= &_uevent_prctl_ops,
	[UEVENT_TRANSPORT_USER_EVENTS]	= &_uevent_user_events_ops,
	[UEVENT_TRANSPORT_USDT]		= &_uevent_usdt_ops,
	[UEVENT_TRANSPORT_FTRACE]	= &_uevent_ftrace_ops,
	[UEVENT_TRANSPORT_FILE]		= &_uevent_file_ops,
	[UEVENT_TRANSPORT_NONE]		= &none_ops,
};

/*
 * The active transport is published with one atomic store of `active`; the state it
 * points at is written before and not changed while active, so the emit path reads it
 * without a lock. File descriptors are closed only by uevent_close() and at fork; the
 * file transport swaps a new file in under its descriptor (transport-file.c).
 */
static struct _uevent_tstate tstates[UEVENT_TRANSPORT_COUNT];
static int active = UEVENT_TRANSPORT_NONE;

/*
 * Options of the last uevent_open(), replayed by a forked child. A call fills the slot
 * not in use and then publishes it with one store: a fork on another thread, or from a
 * signal handler on this one, at any point of the call gives a child the options before
 * it or after it, whole, never a path half copied over another.
 */
static struct open_args {
	int transport;
	unsigned int flags;
	int have_path;
	char path[PATH_MAX];
} last_opts[2];
static int last_cur;		/* the published slot */

static const char *const tnames[UEVENT_TRANSPORT_COUNT] = {
	"auto", "prctl", "user_events", "usdt", "ftrace", "file", "none",
};

UEVENT_EXPORT const char *uevent_transport_name(int t)
{
	if (t < 0 || t >= UEVENT_TRANSPORT_COUNT)
		return NULL;
	return tnames[t];
}

UEVENT_EXPORT int uevent_transport_from_name(const char *name)
{
	int t;

	if (!name)
		return _uevent_err(EINVAL);
	for (t = 0; t < UEVENT_TRANSPORT_COUNT; t++)
		if (!strcmp(name, tnames[t]))
			return t;
	return _uevent_err(EINVAL);
}

UEVENT_EXPORT int uevent_transport(void)
{
	return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

UEVENT_EXPORT size_t uevent_max_payload(void)
{
	int t = uevent_transport();

	return t == UEVENT_TRANSPORT_NONE ? 0 : tstates[t].max_payload;
}

/* The check inside the library: no call through the PLT, no interposable symbol. */
static inline int is_enabled(void)
{
	return __builtin_expect(__atomic_load_n(&_uevent_word, __ATOMIC_RELAXED) != 0, 0);
}

UEVENT_EXPORT int uevent_enabled(void)
{
	return is_enabled();
}

uint64_t _uevent_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The descriptor is marked closed before it is closed: a fork on another thread in
 * between would give the child the number as still ours, and the child's re-open would
 * close it again, though another thread's open may hold it by then.
 */
static void close_state(int t)
{
	struct _uevent_tstate *ts = &tstates[t];
	int fd;

	if (ops[t]->close)
		ops[t]->close(ts);
	fd = __atomic_exchange_n(&ts->fd, -1, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
}

static int try_open(int t, const char *path)
{
	struct _uevent_tstate *ts = &tstates[t];
	int err;

	if (t == UEVENT_TRANSPORT_AUTO)
		return -EINVAL;
	if (ts->fd >= 0 && ts->pid == getpid()) {
		/* Already open in this process: emitters may be using it, keep it. */
		if (ops[t]->reopen)
			return ops[t]->reopen(ts, path);
		if (t != UEVENT_TRANSPORT_USER_EVENTS || ts->registered)
			return 0;
	}
	close_state(t);
	/* A mark from before a uevent_close() may still be in deliver() or the file's
	 * write: what it reads is stored atomically, or not at all (pid, the same). */
	__atomic_store_n(&ts->max_payload, t == UEVENT_TRANSPORT_NONE ? UEVENT_MAX_PAYLOAD : 0,
			 __ATOMIC_RELAXED);
	err = ops[t]->open ? ops[t]->open(ts, path) : 0;
	if (!err && ts->pid != getpid())
		ts->pid = getpid();
	return err;
}

static void activate(int t)
{
	/* Leaving user_events or prctl: stop the kernel from enabling us for a transport
	 * not in use. */
	if (t != UEVENT_TRANSPORT_USER_EVENTS && ops[UEVENT_TRANSPORT_USER_EVENTS]->close)
		ops[UEVENT_TRANSPORT_USER_EVENTS]->close(&tstates[UEVENT_TRANSPORT_USER_EVENTS]);
	if (t != UEVENT_TRANSPORT_PRCTL && ops[UEVENT_TRANSPORT_PRCTL]->close)
		ops[UEVENT_TRANSPORT_PRCTL]->close(&tstates[UEVENT_TRANSPORT_PRCTL]);
	__atomic_store_n(&active, t, __ATOMIC_RELEASE);
	/* A transport whose kernel keeps an enable bit for us needs no ALWAYS bit. */
	if (ops[t]->always && !tstates[t].registered)
		__atomic_fetch_or(&_uevent_word, _UEVENT_EN_ALWAYS, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&_uevent_word, ~_UEVENT_EN_ALWAYS, __ATOMIC_RELEASE);
}

static int probe_order[] = {
	UEVENT_TRANSPORT_PRCTL, UEVENT_TRANSPORT_USER_EVENTS,
	UEVENT_TRANSPORT_USDT, UEVENT_TRANSPORT_FTRACE,
};

/* Parse "usdt" or "user_events,usdt" into a list; returns count or -EINVAL. */
static int parse_list(const char *s, int *list, int max)
{
	char name[32];
	int n = 0;

	while (*s) {
		size_t len = strcspn(s, ", ");
		int t;

		if (len == 0) {
			s++;
			continue;
		}
		if (len >= sizeof(name) || n == max)
			return -EINVAL;
		memcpy(name, s, len);
		name[len] = 0;
		t = uevent_transport_from_name(name);
		if (t < 0) {
			_uevent_set_reason("unknown transport '%s' (known: prctl, user_events, usdt, "
				   "ftrace, file, none, auto)", name);
			return -EINVAL;
		}
		list[n++] = t;
		s += len;
	}
	return n;
}

static int do_open(int transport, const char *path, unsigned int flags)
{
	int list[16], n, i, err = -ENODEV, first_err = 0;
	const char *env = NULL;
	char defpath[64];

	if (transport < 0 || transport >= UEVENT_TRANSPORT_COUNT) {
		_uevent_set_reason("transport number %d out of range", transport);
		return -EINVAL;
	}
	if (!(flags & UEVENT_OPEN_IGNORE_ENV)) {
		if (!path)
			path = getenv("UEVENT_FILE");
		if (transport == UEVENT_TRANSPORT_AUTO)
			env = getenv("UEVENT_TRANSPORT");
	}
	if (!path || !*path) {
		/* perf.data content, so perf's naming (perf*.data: hotspot's filter, perf's
		 * .gitignore); one file per process, never perf record's perf.data */
		snprintf(defpath, sizeof(defpath), "perf-uevent-%d.data", (int)getpid());
		path = defpath;
	}
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;

	if (env && *env) {
		n = parse_list(env, list, ARRAY_SIZE(list));
		if (n < 0)
			return n;
		if (n == 1 && list[0] == UEVENT_TRANSPORT_AUTO)
			env = NULL;
	}
	if (!env || !*env) {
		if (transport == UEVENT_TRANSPORT_AUTO) {
			n = ARRAY_SIZE(probe_order);
			memcpy(list, probe_order, sizeof(probe_order));
		} else {
			list[0] = transport;
			n = 1;
		}
	}

	for (i = 0; i < n; i++) {
		if (list[i] == UEVENT_TRANSPORT_AUTO) {
			err = do_open(UEVENT_TRANSPORT_AUTO, path, flags | UEVENT_OPEN_IGNORE_ENV);
			if (err > 0)
				return err;
			continue;
		}
		err = try_open(list[i], path);
		if (!err) {
			activate(list[i]);
			if (n > 1)
				_uevent_set_reason("%s: first usable of %d candidates", tnames[list[i]], n);
			else
				_uevent_set_reason("%s: selected", tnames[list[i]]);
			return list[i];
		}
		if (!first_err)
			first_err = err;
	}
	if (n > 1)
		_uevent_set_reason("no transport usable; first error: %s", strerror(-first_err));
	activate(UEVENT_TRANSPORT_NONE);
	return n == 1 ? err : -ENODEV;
}

UEVENT_EXPORT int uevent_open(const struct uevent_open_opts *opts)
{
	struct uevent_open_opts o;
	struct open_args *a;
	int transport, ret;
	const char *path;
	unsigned int flags;

	ret = _uevent_opts_copy(&o, sizeof(o), opts, offsetof(struct uevent_open_opts, path));
	if (ret < 0) {
		_uevent_set_reason(ret == -E2BIG ? "open options: a field this library does not know "
			   "is set (a newer caller)" : "open options: sz too small");
		return _uevent_err(-ret);
	}
	transport = o.transport;
	path = o.path;
	flags = o.flags;
	/* A path too long stays out: do_open() refuses it, and the last options stay. */
	if (!path || strlen(path) < sizeof(last_opts[0].path)) {
		a = &last_opts[!__atomic_load_n(&last_cur, __ATOMIC_RELAXED)];
		a->transport = transport;
		a->flags = flags;
		a->have_path = path != NULL;
		if (path)
			path = strcpy(a->path, path);
		__atomic_store_n(&last_cur, (int)(a - last_opts), __ATOMIC_RELEASE);
	}
	ret = do_open(transport, path, flags);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

UEVENT_EXPORT int uevent_close(void)
{
	int t;

	activate(UEVENT_TRANSPORT_NONE);
	for (t = 0; t < UEVENT_TRANSPORT_COUNT; t++)
		close_state(t);
	_uevent_set_reason("closed");
	return 0;
}

/* A forked child gets fresh counters and probes again with the parent's options. */
static __thread pid_t tid_cache __attribute__((tls_model("initial-exec")));

static void atfork_child(void)
{
	const struct open_args *a;
	int t;

	tid_cache = 0;
	/* Only this thread survived the fork: every other slot is free again. */
	for (t = 0; t < STAT_SLOTS; t++)
		if (&slots[t].c != my_counters)
			slots[t].used = 0;
	uevent_stats_reset();
	for (t = 0; t < UEVENT_TRANSPORT_COUNT; t++)
		close_state(t);
	__atomic_store_n(&active, UEVENT_TRANSPORT_NONE, __ATOMIC_RELEASE);
	/* The kernel bits were set for the parent's registrations; the child re-registers. */
	__atomic_fetch_and(&_uevent_word,
			   ~((1u << _UEVENT_EN_USER_EVENTS_BIT) | (1u << _UEVENT_EN_PRCTL_BIT) |
			     _UEVENT_EN_ALWAYS),
			   __ATOMIC_RELEASE);
	a = &last_opts[__atomic_load_n(&last_cur, __ATOMIC_ACQUIRE)];
	do_open(a->transport, a->have_path ? a->path : NULL, a->flags);
}

/*
 * UEVENT_WAIT_TRACER=MS (set by `uevent record` for the command it runs): a recorder
 * attaches to the usdt probes of each copy of libuevent a watched process maps, once
 * it sees the mapping; wait for it here (up to MS ms), before the program's first mark.
 * The kernel counts one per probe site installed: wait for all the size classes.
 */
static void wait_tracer(void)
{
#if HAVE_SYS_SDT_H
	const char *env = getenv("UEVENT_WAIT_TRACER");
	struct timespec ts = { 0, 100000 };
	long ms = env ? strtol(env, NULL, 10) : 0, i;

	if (ms <= 0 || __atomic_load_n(&active, __ATOMIC_RELAXED) != UEVENT_TRANSPORT_USDT)
		return;
	for (i = 0; i < ms * 10; i++) {
		if ((__atomic_load_n(&_uevent_word, __ATOMIC_RELAXED) & _UEVENT_EN_USDT_MASK) >=
		    _UEVENT_USDT_NCLASSES)
			return;
		nanosleep(&ts, NULL);
	}
#endif
}

__attribute__((constructor)) static void uevent_init(void)
{
	int t;

	for (t = 0; t < UEVENT_TRANSPORT_COUNT; t++)
		tstates[t].fd = -1;
	tstates[UEVENT_TRANSPORT_NONE].max_payload = UEVENT_MAX_PAYLOAD;
	pthread_key_create(&slot_key, slot_release);
	pthread_atfork(NULL, NULL, atfork_child);
	do_open(UEVENT_TRANSPORT_AUTO, NULL, 0);
	wait_tracer();
}

/* ---- delivery -------------------------------------------------------------------- */

/*
 * gettid() is a syscall; a record's tid is cached per thread (reset in a fork child).
 * A vfork child (or any clone sharing our memory) runs on its parent's TLS, cache
 * included, and no atfork handler tells: asked by a pid other than the one the
 * transport was opened in, answer from the kernel and leave the cache to its thread.
 */
pid_t _uevent_tid(pid_t pid, pid_t owner)
{
	if (unlikely(pid != owner))
		return (pid_t)syscall(SYS_gettid);
	if (unlikely(!tid_cache))
		tid_cache = (pid_t)syscall(SYS_gettid);
	return tid_cache;
}

static int deliver(uint32_t type, const void *data, size_t size)
{
	int t = __atomic_load_n(&active, __ATOMIC_ACQUIRE), ret;
	uint32_t word = __atomic_load_n(&_uevent_word, __ATOMIC_RELAXED);

	if (unlikely(size > __atomic_load_n(&tstates[t].max_payload, __ATOMIC_RELAXED)))
		return count_drop(E2BIG);
	if (unlikely(!data && size))
		return count_drop(EFAULT);
	/* The probe site is a tap for any tracer, whatever the transport; a drop is not. */
	if (word & _UEVENT_EN_USDT_MASK)
		_uevent_usdt_fire(type, data, size);
	ret = ops[t]->write(&tstates[t], type, data, size, word);
	if (ret < 0)
		return count_drop(-ret);
	if (ret > 0)
		STAT_ADD(unobserved, 1);
	STAT_ADD(emitted, 1);
	STAT_ADD(bytes, size);
	return 0;
}

UEVENT_EXPORT int uevent_emit(uint32_t type, const void *data, size_t size)
{
	if (!is_enabled())
		return 0;
	return deliver(type, data, size);
}

UEVENT_EXPORT int uevent_mark(const char *text)
{
	if (!is_enabled())
		return 0;
	if (!text)
		return count_drop(EFAULT);
	return deliver(UEVENT_TYPE_TEXT, text, strnlen(text, UEVENT_MAX_PAYLOAD) + 1);
}

UEVENT_EXPORT int uevent_markf(const char *fmt, ...)
{
	char buf[UEVENT_MAX_PAYLOAD];
	va_list ap;
	int n;

	if (!is_enabled())
		return 0;
	if (!fmt)
		return count_drop(EFAULT);
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return count_drop(EINVAL);
	if ((size_t)n >= sizeof(buf))
		return count_drop(E2BIG);
	return uevent_emit(UEVENT_TYPE_TEXT, buf, (size_t)n + 1);
}

/* Encode with enc into a stack buffer and emit; enc's -errno is counted as a drop. */
#define EMIT_ENCODED(type, enc, ...)						\
	do {									\
		uint8_t buf_[UEVENT_MAX_PAYLOAD];				\
		ssize_t n_ = enc(buf_, sizeof(buf_), __VA_ARGS__);		\
		if (n_ < 0)							\
			return count_drop((int)-n_);				\
		return uevent_emit((type), buf_, (size_t)n_);			\
	} while (0)

UEVENT_EXPORT int uevent_counter_set(const char *name, int64_t value)
{
	struct uevent_counter c = { .value = value, .name = name };

	if (!is_enabled())
		return 0;
	if (!name)
		return count_drop(EFAULT);
	EMIT_ENCODED(UEVENT_TYPE_COUNTER, uevent_counter_encode, &c);
}

UEVENT_EXPORT int uevent_trace_context(const uint8_t *trace_id16, const uint8_t *span_id8,
				       uint8_t flags)
{
	struct uevent_trace_context tc;

	if (!is_enabled())
		return 0;
	if (!trace_id16 || !span_id8)
		return count_drop(EFAULT);
	memcpy(tc.trace_id, trace_id16, 16);
	memcpy(tc.span_id, span_id8, 8);
	tc.flags = flags;
	EMIT_ENCODED(UEVENT_TYPE_TRACE_CONTEXT, uevent_trace_context_encode, &tc);
}

/* ---- ranges ---------------------------------------------------------------------- */

/* Ids: process-unique, never 0; the pid in the top bits keeps parent/child apart. */
static uint64_t next_id;

static uint64_t new_id(void)
{
	uint64_t n = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);

	return ((uint64_t)(uint32_t)getpid() << 32) | (n & 0xffffffffu);
}

#define RANGE_STACK 64
static __thread struct {
	uint32_t depth;
	uint64_t ids[RANGE_STACK];
} rstack __attribute__((tls_model("initial-exec")));

static uint64_t begin(const char *name, uint32_t flags)
{
	struct uevent_range_begin rb = { .flags = flags, .name = name };
	uint8_t buf[UEVENT_MAX_PAYLOAD];
	ssize_t n;

	if (!is_enabled())
		return 0;
	if (!name) {
		count_drop(EFAULT);
		return 0;
	}
	rb.id = new_id();
	if (!(flags & UEVENT_RANGE_ASYNC) && rstack.depth > 0 && rstack.depth <= RANGE_STACK)
		rb.parent = rstack.ids[rstack.depth - 1];
	n = uevent_range_begin_encode(buf, sizeof(buf), &rb);
	if (n < 0) {
		count_drop((int)-n);
		return 0;
	}
	if (uevent_emit(UEVENT_TYPE_RANGE_BEGIN, buf, (size_t)n) < 0)
		return 0;
	if (!(flags & UEVENT_RANGE_ASYNC)) {
		/* Deeper than the stack: still emitted, parents beyond it are not tracked. */
		if (rstack.depth < RANGE_STACK)
			rstack.ids[rstack.depth] = rb.id;
		rstack.depth++;
	}
	return rb.id;
}

static int end(uint64_t id, uint32_t flags)
{
	struct uevent_range_end re = { .id = id, .flags = flags };

	if (!id)
		return 0;	/* the begin was not emitted */
	if (!(flags & UEVENT_RANGE_ASYNC) && rstack.depth > 0) {
		uint32_t d = rstack.depth;

		/* Pop to the range being ended; a missing end pops its children too. */
		while (d > 0 && (d > RANGE_STACK || rstack.ids[d - 1] != id))
			d--;
		if (d > 0)
			rstack.depth = d - 1;
	}
	if (!is_enabled())
		return 0;
	EMIT_ENCODED(UEVENT_TYPE_RANGE_END, uevent_range_end_encode, &re);
}

UEVENT_EXPORT uint64_t uevent_range_begin(const char *name)
{
	return begin(name, 0);
}

UEVENT_EXPORT int uevent_range_end(uint64_t id)
{
	return end(id, 0);
}

UEVENT_EXPORT uint64_t uevent_async_begin(const char *name)
{
	return begin(name, UEVENT_RANGE_ASYNC);
}

UEVENT_EXPORT int uevent_async_end(uint64_t id)
{
	return end(id, UEVENT_RANGE_ASYNC);
}
