/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * uevent.h - libuevent: put your own events into the Linux perf stream, read them back.
 *
 * This is the one public header. It is plain C on purpose: `$(CPP) -P -DUEVENT_CDEF`
 * of this file is what CFFI and LuaJIT's ffi.cdef read, and bindgen reads it as is.
 * So: no attributes and no conditionals among the declarations; the few macros are
 * convenience for C callers and each has an exported function twin.
 *
 * Conventions: functions returning int return 0 (or a count) on success and -errno on
 * failure, with errno set too. Functions returning a pointer return NULL and set errno.
 */
#ifndef UEVENT_H
#define UEVENT_H

#ifndef UEVENT_CDEF
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define UEVENT_VERSION_MAJOR 0
#define UEVENT_VERSION_MINOR 1
#define UEVENT_VERSION_PATCH 0

/* ---------------------------------------------------------------------------------- */
/* Well-known payload types. Type values below UEVENT_TYPE_USER are ours; a program's   */
/* own types start at UEVENT_TYPE_USER. Unknown types pass through as bytes.            */

enum uevent_type {
	UEVENT_TYPE_TEXT		= 0,	/* UTF-8 text, NUL included (the seed's type 0) */
	UEVENT_TYPE_RANGE_BEGIN		= 1,	/* struct uevent_range_begin */
	UEVENT_TYPE_RANGE_END		= 2,	/* struct uevent_range_end */
	UEVENT_TYPE_COUNTER		= 3,	/* struct uevent_counter */
	UEVENT_TYPE_JIT_CODE_LOAD	= 4,	/* struct uevent_jit_code_load */
	UEVENT_TYPE_JIT_CODE_MOVE	= 5,	/* struct uevent_jit_code_move */
	UEVENT_TYPE_JIT_CODE_UNLOAD	= 6,	/* struct uevent_jit_code_unload */
	UEVENT_TYPE_JIT_DEBUG_INFO	= 7,	/* struct uevent_jit_debug_info */
	UEVENT_TYPE_TRACE_CONTEXT	= 8,	/* struct uevent_trace_context */
	UEVENT_TYPE_USER		= 65536	/* first type free for applications */
};

/* Largest payload any transport carries; a transport may have a smaller limit. */
enum { UEVENT_MAX_PAYLOAD = 4096 };

/* ---------------------------------------------------------------------------------- */
/* Transports                                                                           */

enum uevent_transport {
	UEVENT_TRANSPORT_AUTO		= 0,	/* probe: prctl, user_events, usdt, ftrace */
	UEVENT_TRANSPORT_PRCTL		= 1,	/* PR_TASK_PERF_UEVENT, patched kernel */
	UEVENT_TRANSPORT_USER_EVENTS	= 2,	/* tracefs user_events, Linux >= 6.4 */
	UEVENT_TRANSPORT_USDT		= 3,	/* SDT probe libuevent:emit, any uprobes kernel */
	UEVENT_TRANSPORT_FTRACE		= 4,	/* tracefs trace_marker_raw */
	UEVENT_TRANSPORT_FILE		= 5,	/* append records to a file */
	UEVENT_TRANSPORT_NONE		= 6,	/* deliver nothing, count nothing */
	UEVENT_TRANSPORT_COUNT		= 7
};

/* Options for uevent_open(); zero-fill with UEVENT_OPTS() so new fields default to 0. */
struct uevent_open_opts {
	size_t		sz;		/* sizeof(struct uevent_open_opts) */
	int		transport;	/* enum uevent_transport; AUTO honours $UEVENT_TRANSPORT */
	const char	*path;		/* FILE: the output file ($UEVENT_FILE, else uevent-PID.uev) */
	unsigned int	flags;		/* UEVENT_OPEN_* */
};

enum uevent_open_flags {
	UEVENT_OPEN_IGNORE_ENV		= 1	/* do not read $UEVENT_TRANSPORT / $UEVENT_FILE */
};

/*
 * (Re)select the process-wide transport. With NULL or transport AUTO, $UEVENT_TRANSPORT
 * (a name such as "usdt", or a comma list tried in order) decides, else the probe order.
 * The library opens itself on load this way, so calling this is optional.
 * Returns the transport chosen (> 0) or -errno: -EINVAL for an unknown name, -ENODEV
 * when a forced transport is not available here, -EACCES/-EPERM when it is not allowed.
 * Not safe to call while other threads emit through a transport being replaced.
 */
int uevent_open(const struct uevent_open_opts *opts);

/* Stop delivering (transport NONE) and release the transport's resources. */
int uevent_close(void);

/* The transport in use, and the names of transports ("prctl", "usdt", ...). */
int uevent_transport(void);
const char *uevent_transport_name(int transport);
int uevent_transport_from_name(const char *name);

/* Largest payload the current transport accepts, in bytes. */
size_t uevent_max_payload(void);

/* Why the last uevent_open() chose or refused what it did: a static string. */
const char *uevent_open_reason(void);

/* ---------------------------------------------------------------------------------- */
/* The enabled check. One relaxed 32-bit load: non-zero when a listener may exist.      */
/* The kernel itself writes this word for user_events and the USDT semaphore.           */

extern volatile uint32_t uevent_enabled_word;

/* Function twin of UEVENT_ENABLED() for FFI callers: 1 if enabled, else 0. */
int uevent_enabled(void);

/* ---------------------------------------------------------------------------------- */
/* Emitting. Each returns 0 when handed to the transport (or nobody listens), or -errno;
 * a failure is counted in the statistics by reason. None of them allocates, takes a
 * lock, or is unsafe in a signal handler.                                              */

int uevent_emit(uint32_t type, const void *data, size_t size);
int uevent_mark(const char *text);
int uevent_markf(const char *fmt, ...);
int uevent_counter(const char *name, int64_t value);
int uevent_trace_context(const uint8_t *trace_id16, const uint8_t *span_id8, uint8_t flags);

/*
 * Ranges. uevent_range_begin() opens a range nested in the calling thread's current
 * one and returns its id (> 0), or 0 if nothing was emitted; uevent_range_end() closes
 * it. Async ranges are not nested and may end on any thread.
 */
uint64_t uevent_range_begin(const char *name);
int uevent_range_end(uint64_t id);
uint64_t uevent_async_begin(const char *name);
int uevent_async_end(uint64_t id);

/* ---------------------------------------------------------------------------------- */
/* Statistics, process-wide since load (or since fork, in a child).                     */

enum uevent_drop_reason {
	UEVENT_DROP_TOO_BIG	= 0,	/* payload over the transport's limit (E2BIG) */
	UEVENT_DROP_FAULT	= 1,	/* bad pointer (EFAULT) */
	UEVENT_DROP_INVAL	= 2,	/* bad argument (EINVAL) */
	UEVENT_DROP_IO		= 3,	/* the transport's write failed (EIO, ENOSPC, EBADF...) */
	UEVENT_DROP_AGAIN	= 4,	/* transport busy or not ready (EAGAIN) */
	UEVENT_DROP_PERM	= 5,	/* not allowed (EACCES, EPERM) */
	UEVENT_DROP_REASONS	= 6
};

struct uevent_stats {
	uint64_t	emitted;		/* records handed to a transport */
	uint64_t	bytes;			/* payload bytes in them */
	uint64_t	unobserved;		/* of emitted: the kernel said nobody listened */
	uint64_t	dropped;		/* sum of dropped_by[] */
	uint64_t	dropped_by[6];		/* indexed by enum uevent_drop_reason */
};

/* Copies the counters (sz = sizeof(*stats) for growth); returns 0 or -EINVAL. */
int uevent_stats_get(struct uevent_stats *stats, size_t sz);
void uevent_stats_reset(void);
const char *uevent_drop_reason_name(int reason);

/* ---------------------------------------------------------------------------------- */
/* Payload codecs. Encoders write a payload of the given type into buf and return its  */
/* size, or -E2BIG if cap is too small / a field too long, -EINVAL for bad input.       */
/* Decoders never read past len; string and array fields point into buf.                */
/* byte_order is the order the payload was written in.                                  */

enum uevent_byte_order {
	UEVENT_BO_HOST		= 0,
	UEVENT_BO_LITTLE	= 1,
	UEVENT_BO_BIG		= 2
};

struct uevent_text {
	const char	*text;		/* NUL-terminated, inside the payload */
	uint32_t	len;		/* strlen(text) */
};

struct uevent_range_begin {
	uint64_t	id;
	uint64_t	parent;		/* enclosing range on the same thread, 0 if none */
	uint32_t	flags;		/* UEVENT_RANGE_ASYNC */
	const char	*name;
	uint32_t	name_len;
};

struct uevent_range_end {
	uint64_t	id;
	uint32_t	flags;
};

enum { UEVENT_RANGE_ASYNC = 1 };

struct uevent_counter {
	int64_t		value;
	const char	*name;
	uint32_t	name_len;
};

/* Mirrors jitdump's JR_CODE_LOAD without the code bytes. */
struct uevent_jit_code_load {
	uint64_t	code_addr;
	uint64_t	code_size;
	uint64_t	code_index;
	const char	*name;
	uint32_t	name_len;
};

struct uevent_jit_code_move {
	uint64_t	code_index;
	uint64_t	old_addr;
	uint64_t	new_addr;
	uint64_t	code_size;
};

struct uevent_jit_code_unload {
	uint64_t	code_addr;
	uint64_t	code_size;
	uint64_t	code_index;
};

/* One line-table entry, as jitdump's JR_CODE_DEBUG_INFO has them. */
struct uevent_jit_debug_entry {
	uint64_t	addr;
	uint32_t	line;
	uint32_t	discrim;
	const char	*file;
	uint32_t	file_len;
};

struct uevent_jit_debug_info {
	uint64_t	code_addr;
	uint32_t	nr_entry;
	const void	*entries;	/* encoded entries, walk with uevent_jit_debug_entry_next */
	uint32_t	entries_len;
};

struct uevent_trace_context {
	uint8_t		trace_id[16];	/* W3C trace-id */
	uint8_t		span_id[8];	/* W3C parent-id */
	uint8_t		flags;		/* W3C trace-flags */
};

ssize_t uevent_text_encode(void *buf, size_t cap, const char *text);
int uevent_text_decode(const void *buf, size_t len, int byte_order, struct uevent_text *out);

ssize_t uevent_range_begin_encode(void *buf, size_t cap, const struct uevent_range_begin *in);
int uevent_range_begin_decode(const void *buf, size_t len, int byte_order,
			      struct uevent_range_begin *out);
ssize_t uevent_range_end_encode(void *buf, size_t cap, const struct uevent_range_end *in);
int uevent_range_end_decode(const void *buf, size_t len, int byte_order,
			    struct uevent_range_end *out);

ssize_t uevent_counter_encode(void *buf, size_t cap, const struct uevent_counter *in);
int uevent_counter_decode(const void *buf, size_t len, int byte_order, struct uevent_counter *out);

ssize_t uevent_jit_code_load_encode(void *buf, size_t cap, const struct uevent_jit_code_load *in);
int uevent_jit_code_load_decode(const void *buf, size_t len, int byte_order,
				struct uevent_jit_code_load *out);
ssize_t uevent_jit_code_move_encode(void *buf, size_t cap, const struct uevent_jit_code_move *in);
int uevent_jit_code_move_decode(const void *buf, size_t len, int byte_order,
				struct uevent_jit_code_move *out);
ssize_t uevent_jit_code_unload_encode(void *buf, size_t cap,
				      const struct uevent_jit_code_unload *in);
int uevent_jit_code_unload_decode(const void *buf, size_t len, int byte_order,
				  struct uevent_jit_code_unload *out);

/* Encodes nr entries; entries[i].file_len is ignored (strlen is used). */
ssize_t uevent_jit_debug_info_encode(void *buf, size_t cap, uint64_t code_addr,
				     const struct uevent_jit_debug_entry *entries, uint32_t nr);
int uevent_jit_debug_info_decode(const void *buf, size_t len, int byte_order,
				 struct uevent_jit_debug_info *out);
/* Decodes entry at *offset of info->entries and advances *offset; 1 = got one, 0 = end. */
int uevent_jit_debug_entry_next(const struct uevent_jit_debug_info *info, int byte_order,
				uint32_t *offset, struct uevent_jit_debug_entry *out);

ssize_t uevent_trace_context_encode(void *buf, size_t cap, const struct uevent_trace_context *in);
int uevent_trace_context_decode(const void *buf, size_t len, int byte_order,
				struct uevent_trace_context *out);

/* Name of a well-known type ("text", "range_begin", ...), or NULL. */
const char *uevent_type_name(uint32_t type);

/* ---------------------------------------------------------------------------------- */
/* Records: PERF_RECORD_UEVENT as the kernel writes it (and the file transport too).    */

struct uevent_record {
	uint32_t	record_type;	/* perf_event_header.type it came in */
	uint16_t	misc;
	uint16_t	record_size;	/* perf_event_header.size */
	uint32_t	format;		/* PERF_UEVENT_FORMAT_*; 0 for the seed's layout */
	uint32_t	type;		/* payload type */
	uint32_t	flags;
	uint32_t	size;		/* payload bytes */
	const void	*data;		/* payload, inside the record buffer */
	/* sample_id fields, present as id_fields says (UEVENT_ID_*) */
	uint32_t	id_fields;
	uint32_t	pid, tid;
	uint64_t	time;
	uint64_t	id, stream_id;
	uint32_t	cpu;
	uint64_t	identifier;
};

enum uevent_id_field {
	UEVENT_ID_TID		= 1,
	UEVENT_ID_TIME		= 2,
	UEVENT_ID_ID		= 4,
	UEVENT_ID_STREAM_ID	= 8,
	UEVENT_ID_CPU		= 16,
	UEVENT_ID_IDENTIFIER	= 32
};

enum uevent_record_flags {
	UEVENT_RECORD_SEED_LAYOUT	= 1	/* decode the 2014 seed's layout (type, size, data) */
};

/*
 * Decodes one PERF_RECORD_UEVENT starting at buf (header included). sample_type is the
 * event's attr.sample_type (for the sample_id trailer; 0 if sample_id_all is off).
 * Returns 0, -EINVAL for a bad or truncated record, -EPROTO for an unknown format
 * (out->format and record_size are still set so the caller can skip it).
 */
int uevent_record_decode(const void *buf, size_t len, int byte_order, uint64_t sample_type,
			 unsigned int flags, struct uevent_record *out);

/*
 * Encodes a format-1 record with a sample_id of TID|TIME (the file transport's form).
 * Returns the record size or -E2BIG / -EINVAL.
 */
ssize_t uevent_record_encode(void *buf, size_t cap, uint32_t type, const void *data,
			     uint32_t size, uint32_t pid, uint32_t tid, uint64_t time);

/*
 * The file transport's files: a 32-byte header (UEVENT_FILE_MAGIC, version, byte order,
 * sample_type of the records), then PERF_RECORD_UEVENT records back to back.
 */
struct uevent_file_header {
	uint8_t		magic[8];	/* "UEVTFILE" */
	uint32_t	version;	/* 1 */
	uint32_t	header_size;	/* 32 */
	uint32_t	byte_order;	/* 0x01020304 as written */
	uint32_t	reserved;
	uint64_t	sample_type;	/* PERF_SAMPLE_TID|PERF_SAMPLE_TIME */
};

/*
 * Reads a file-transport file. Opaque reader: open, then next until it returns 0.
 * next returns 1 with *rec set (valid until the next call), 0 at end of file, or
 * -errno (-EINVAL for a corrupt header or record, with the offset in *off if non-NULL).
 */
struct uevent_file_reader;
struct uevent_file_reader *uevent_file_reader__open(const char *path);
int uevent_file_reader__next(struct uevent_file_reader *r, struct uevent_record *rec);
uint64_t uevent_file_reader__offset(const struct uevent_file_reader *r);
void uevent_file_reader__close(struct uevent_file_reader *r);

/* ---------------------------------------------------------------------------------- */
/* Kernel features, each from a real probe (the CLI's `uevent probe`).                  */

enum uevent_feature {
	UEVENT_FEAT_PRCTL		= 0,	/* PR_TASK_PERF_UEVENT answers */
	UEVENT_FEAT_ATTR_UEVENTS	= 1,	/* perf_event_open accepts attr.uevents */
	UEVENT_FEAT_USER_EVENTS		= 2,	/* tracefs user_events_data is usable */
	UEVENT_FEAT_UPROBES		= 3,	/* tracefs uprobe_events is there */
	UEVENT_FEAT_TRACEFS		= 4,	/* tracefs is mounted and readable */
	UEVENT_FEAT_SAMPLE_TLS_USER	= 5,	/* perf_event_open accepts PERF_SAMPLE_TLS_USER */
	UEVENT_FEAT_AUX_SAMPLE		= 6,	/* attr.aux_sample_size is known to the kernel */
	UEVENT_FEAT_BPF_EVENT		= 7,	/* attr.bpf_event is accepted */
	UEVENT_FEAT_PERF_EVENTS		= 8,	/* perf_event_open works at all */
	UEVENT_FEAT_COUNT		= 9
};

enum uevent_feature_state {
	UEVENT_FEAT_ABSENT		= 0,
	UEVENT_FEAT_PRESENT		= 1,
	UEVENT_FEAT_DENIED		= 2,	/* there, but this process may not use it */
	UEVENT_FEAT_UNKNOWN		= 3	/* the probe could not tell */
};

struct uevent_feature_info {
	int		state;		/* enum uevent_feature_state */
	int		err;		/* errno the probe saw, 0 if none */
	char		detail[96];	/* human-readable detail */
};

int uevent_feature_probe(int feature, struct uevent_feature_info *info);
const char *uevent_feature_name(int feature);

/* The ABI a patched kernel reports via PR_PERF_UEVENT_QUERY, or -ENOSYS/-EINVAL. */
struct uevent_kernel_abi {
	uint32_t	format;
	uint32_t	record_type;
	uint32_t	max_payload;
	uint32_t	attr_uevents_bit;
	uint32_t	sample_tls_user_bit;
	uint32_t	listeners;
};
int uevent_kernel_abi(struct uevent_kernel_abi *abi);

/* /proc/sys/kernel/perf_event_paranoid, or -errno. */
int uevent_perf_paranoid(void);

/* Library version string, and the error text for a -errno this library returned. */
const char *uevent_version(void);
const char *uevent_strerror(int err);

/* ---------------------------------------------------------------------------------- */
/* Reading: perf_event_open helpers, sessions, perf.data (issue 4).                     */
/* @@READER-API@@ */

/* ---------------------------------------------------------------------------------- */
/* JIT hooks: announce generated code before it first runs (issue 6).                   */
/* @@JIT-API@@ */

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------------------- */
/* C conveniences (not seen by the bindings, which call the twins above).               */

#ifndef UEVENT_CDEF
#define UEVENT_OPTS(name, ...) \
	struct uevent_open_opts name = { .sz = sizeof(struct uevent_open_opts), __VA_ARGS__ }

/* One load; arguments of the marker macros are evaluated only when this is true. */
#define UEVENT_ENABLED() \
	(__builtin_expect(__atomic_load_n(&uevent_enabled_word, __ATOMIC_RELAXED) != 0, 0))

#define UEVENT_MARK(text) \
	(UEVENT_ENABLED() ? uevent_mark(text) : 0)
#define UEVENT_MARKF(...) \
	(UEVENT_ENABLED() ? uevent_markf(__VA_ARGS__) : 0)
#define UEVENT_EMIT(type, data, size) \
	(UEVENT_ENABLED() ? uevent_emit((type), (data), (size)) : 0)
#define UEVENT_COUNTER(name, value) \
	(UEVENT_ENABLED() ? uevent_counter((name), (value)) : 0)
#endif

#endif /* UEVENT_H */
