/* internal.h - private declarations shared by libuevent's sources. */
#ifndef UEVENT_INTERNAL_H
#define UEVENT_INTERNAL_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "uevent.h"

/* Exported definitions carry this; everything else is hidden by -fvisibility=hidden. */
#define UEVENT_EXPORT __attribute__((visibility("default")))

/* The per-load path of a JIT hook, which runs between long stretches of the JIT's own
 * code: together in .text.hot, so it is fewer cache lines and pages to fetch again. */
#define UEVENT_HOT __attribute__((hot))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The CPU told that this thread spins (x86 pause, aarch64 yield). */
static inline void _uevent_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* A spin-wait's turn: a pause, or after pauses turns the CPU given up. */
static inline void _uevent_spin_turn(unsigned int turn, unsigned int pauses)
{
	if (turn < pauses)
		_uevent_cpu_pause();
	else
		sched_yield();
}

/* Return -err with errno set, the library's one error convention. */
static inline int _uevent_err(int err)
{
	errno = err;
	return -err;
}

/*
 * Option structs (uevent_*_opts): copies what the caller has of *opts into *out (zeroed
 * first, its sz set to ours). The caller's sz must reach min (the first field after sz),
 * and bytes a newer caller has past what this library knows must be zero: -E2BIG
 * otherwise, so an option this library cannot honour is refused, not ignored (libbpf's
 * OPTS_VALID). NULL opts: defaults.
 */
static inline int _uevent_opts_copy(void *out, size_t known, const void *opts, size_t min)
{
	const uint8_t *o = opts;
	size_t sz, i;

	memset(out, 0, known);
	if (opts) {
		memcpy(&sz, opts, sizeof(sz));
		if (sz < min)
			return -EINVAL;
		for (i = known; i < sz; i++)
			if (o[i])
				return -E2BIG;
		memcpy(out, opts, sz < known ? sz : known);
	}
	memcpy(out, &known, sizeof(known));
	return 0;
}

/*
 * Output structs (uevent_record, uevent_perf_record) begin with sz: the bytes the
 * caller allocated. These are filled whole, so sz must be at least this release's size
 * (a later release adding fields decodes into a copy and gives an older caller its
 * prefix); the library sets sz to the bytes it wrote.
 */
static inline int _uevent_out_ok(const void *out, size_t ours)
{
	size_t sz;

	if (!out)
		return 0;
	memcpy(&sz, out, sizeof(sz));
	return sz >= ours;
}

/*
 * A read cursor over untrusted bytes, shared by every decoder: it never reads past
 * `end`, a short read latches `bad` (and yields 0), and integers are byte-swapped when
 * the data's order is not the host's.
 */
struct _uevent_cur {
	const uint8_t *p, *end;
	int swap, bad;
};

/* The bits set in x: __builtin_popcountll() is a call into libgcc without -mpopcnt
 * (6% of reading a perf -g file, when the plain sample's decode used it). */
static inline unsigned int _uevent_bits64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

static inline int _uevent_need_swap(int bo)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return bo == UEVENT_BO_BIG;
#else
	return bo == UEVENT_BO_LITTLE;
#endif
}

static inline void _uevent_cur_init(struct _uevent_cur *c, const void *buf, size_t len, int bo)
{
	c->p = buf;
	c->end = c->p + len;
	c->swap = _uevent_need_swap(bo);
	c->bad = 0;
}

static inline const void *_uevent_take(struct _uevent_cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	return p;
}

static inline uint16_t _uevent_get16(struct _uevent_cur *c)
{
	const void *p = _uevent_take(c, 2);
	uint16_t v = 0;

	if (p)
		memcpy(&v, p, 2);
	return c->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t _uevent_get32(struct _uevent_cur *c)
{
	const void *p = _uevent_take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return c->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t _uevent_get64(struct _uevent_cur *c)
{
	const void *p = _uevent_take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return c->swap ? __builtin_bswap64(v) : v;
}

/*
 * The library's own name for uevent_enabled_word. Hidden, so it always means the word in
 * libuevent, even when an executable's copy relocation has interposed the exported one.
 */
extern volatile uint32_t _uevent_word __attribute__((visibility("hidden")));

/* Bits of uevent_enabled_word (see emit.c for who writes which). */
#define _UEVENT_EN_USDT_MASK	0x0000ffffu	/* uprobe ref counter (kernel) */
#define _UEVENT_EN_ALWAYS	0x00010000u	/* transport needs no listener check */
#define _UEVENT_EN_USER_EVENTS_BIT 31		/* user_events enable bit (kernel) */
#define _UEVENT_EN_PRCTL_BIT	30		/* prctl enable bit (kernel, patch 0007) */

/*
 * The usdt size classes: probe libuevent:emitN fetches N bytes of a zero-padded copy of
 * the mark (transport-usdt.c fires them, emit.c gives each its semaphore, the session
 * attaches to them). libuevent:emit, the caller's own pointer, comes on top.
 */
#define _UEVENT_USDT_CLASSES(X) X(16) X(64) X(256) X(1024) X(4096)
#define _UEVENT_COUNT_ONE(n) + 1
enum { _UEVENT_USDT_NCLASSES = 0 _UEVENT_USDT_CLASSES(_UEVENT_COUNT_ONE) };

/*
 * Magic word that starts every ftrace (trace_marker_raw) record of ours: "uev2", then the
 * u32 type and u32 size. The size is needed: the ring buffer pads an entry to 4 bytes
 * with whatever was there, so a reader cannot tell the payload's end from the entry's.
 * ("uev1" entries, type then payload, had no size word.)
 */
#define _UEVENT_FTRACE_ID	0x32766575u

/* Name and argument format of our user_events tracepoint. */
#define _UEVENT_USER_EVENT_NAME	"libuevent_v1"
#define _UEVENT_USER_EVENT_ARGS	"u32 type;__rel_loc u8[] data"

/* Registers it on fd (user_events_data), the kernel keeping bit of the 32-bit word at
 * word set while it is enabled: 0 with its write index, or -errno
 * (transport-user-events.c; the transport and a session's own registration). */
int _uevent_user_events_register(int fd, volatile uint32_t *word, int bit,
				 uint32_t *write_index);

/* The sample_type bits a sample_id trailer carries (PERF_SAMPLE_*, linux/perf_event.h). */
#define _UEVENT_ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* Bytes of a sample_id trailer for these sample_type bits. */
size_t _uevent_sample_id_size(uint64_t sample_type);

/* Reads a sample_id trailer of these sample_type bits at the cursor. */
void _uevent_read_sample_id(struct _uevent_cur *c, uint64_t sample_type,
			    struct uevent_sample_id *id);

/* Says why on the calling thread's reason channel (uevent_reason(), reason.c). */
void _uevent_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in ns, the clock of our records (perf record -k mono). */
uint64_t _uevent_now_ns(void);

/* Makes *buf (of *cap bytes) hold at least need bytes, doubling from 64 KiB (session.c). */
int _uevent_grow(uint8_t **buf, size_t *cap, size_t need);

/* Tracefs mount point ("/sys/kernel/tracing" or the debugfs one), or NULL. */
const char *_uevent_tracefs(void);

/* Raw prctl query of a patched kernel. */
int _uevent_prctl_query(struct uevent_kernel_abi *abi);

/* After a short O_APPEND write of `written` bytes: cut them off the file's end if they
 * are still last; returns the errno to report (ENOSPC, or EFBIG at RLIMIT_FSIZE). */
int _uevent_undo_short_append(int fd, size_t written);

/* fd's blocks allocated up to end, step at a time past *alloc, the end of those
 * allocated so far, without growing the file (FALLOC_FL_KEEP_SIZE): on ext4 a write
 * into them skips the block reservation of each page, a third to a half of its
 * kernel time. *alloc UINT64_MAX: the file system cannot (set here at the first
 * refusal); a full disk or a size limit is left to the write to say (group-append.c). */
void _uevent_alloc_ahead(int fd, uint64_t *alloc, uint64_t end, uint64_t step);

/* jitdump (tools/perf/Documentation/jitdump-specification.txt): jit.c writes it,
 * symbolize.c reads it. */

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD" in host order */
#define JITDUMP_MAGIC_SWAPPED	0x4454694Au	/* written by the other byte order */
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

/* demangle.c: a C++ or Rust name demangled (free it), or NULL: not mangled, or no
 * demangler for it. _uevent_demangled(): the same once per distinct name, kept in *d
 * (NULL at first; free with _uevent_demangler_free); name itself when not mangled. */
struct _uevent_demangler;
char *_uevent_demangle(const char *name);
const char *_uevent_demangled(struct _uevent_demangler **d, const char *name);
void _uevent_demangler_free(struct _uevent_demangler *d);

#endif
