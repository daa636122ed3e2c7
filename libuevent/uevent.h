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
	UEVENT_TYPE_TEXT		= 0,	/* UTF-8 text, NUL included (type 0 of the V0 layout) */
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
	const char	*path;		/* FILE: the output file ($UEVENT_FILE, else perf-uevent-PID.data) */
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
 * FILE writes only a regular file of ours, opened without blocking or following a
 * symlink: a symlink is -ELOOP, a FIFO, device or socket -EINVAL, another user's file
 * -EPERM (uevent_reason() says which).
 * While other threads emit, FILE may be opened again (the same path or another): the
 * new file takes the old one's place under the same descriptor, so each mark goes
 * whole into the old file or the new one, once, and none is lost; if the new file is
 * refused, the transport is NONE and the old file stays open until uevent_close() or
 * the next FILE. A mark in flight across a switch to another transport goes to the
 * one left, or is dropped (counted).
 * Not safe while other threads emit: selecting user_events again after leaving it (its
 * descriptor is closed and opened again), and uevent_open() or uevent_close() racing
 * another call of either.
 */
int uevent_open(const struct uevent_open_opts *opts);

/*
 * Stop delivering (transport NONE) and release the transport's resources. FILE's
 * descriptor is closed while no batch is being written: a mark in flight on another
 * thread is written before it or dropped (counted), never sent elsewhere. The other
 * transports' descriptors are closed at once: call it with no thread emitting there.
 */
int uevent_close(void);

/* The transport in use, and the names of transports ("prctl", "usdt", ...). */
int uevent_transport(void);
const char *uevent_transport_name(int transport);
int uevent_transport_from_name(const char *name);

/* Largest payload the current transport accepts, in bytes. */
size_t uevent_max_payload(void);

/* ---------------------------------------------------------------------------------- */
/* The enabled check: a relaxed 32-bit load, non-zero when a listener may exist.        */
/* The kernel itself writes this word for user_events, the USDT semaphore and, on the     */
/* patched kernel with PERF_UEVENT_FEAT_ENABLE_WORD, the prctl transport's bit.          */

extern volatile uint32_t uevent_enabled_word;

/*
 * Where to read it from: the word inside libuevent. Read through this pointer, not the
 * symbol: an executable that names uevent_enabled_word directly is given its own copy
 * of it (an ELF copy relocation), which the kernel's writes never reach.
 */
extern volatile uint32_t *const uevent_enabled_ptr;

/* Function twin of UEVENT_ENABLED() for FFI callers: 1 if enabled, else 0. */
int uevent_enabled(void);

/* ---------------------------------------------------------------------------------- */
/* Emitting. Each returns 0 when handed to the transport (or nobody listens), or -errno;
 * a failure is counted in the statistics by reason. None of them allocates, takes a
 * lock, or is unsafe in a signal handler.                                              */

int uevent_emit(uint32_t type, const void *data, size_t size);
int uevent_mark(const char *text);
int uevent_markf(const char *fmt, ...);
/* A UEVENT_TYPE_COUNTER: the counter name is value now (decoded: struct uevent_counter). */
int uevent_counter_set(const char *name, int64_t value);
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
	UEVENT_DROP_REASONS	= 6	/* how many: the length of uevent_stats.dropped_by */
};

struct uevent_stats {
	uint64_t	emitted;		/* records handed to a transport */
	uint64_t	bytes;			/* payload bytes in them */
	uint64_t	unobserved;		/* of emitted: the kernel said nobody listened */
	uint64_t	dropped;		/* sum of dropped_by[] */
	uint64_t	dropped_by[UEVENT_DROP_REASONS];	/* [by uevent_drop_reason_name]
							   indexed by enum uevent_drop_reason */
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
/*
 * The bindings' payload types are generated from the structs below (records_model.py), by
 * the bracket notes that start a member's comment, as for the record structs further
 * down: [str x N] (N bytes of text), [bytes x N], [each S] (encoded entries, walked
 * with S_next()), [length] (only another member's length: no field of
 * its own). [order a, b] after a struct's brace: the bindings' field order, where it
 * is not the struct's.
 */

enum uevent_byte_order {
	UEVENT_BO_HOST		= 0,
	UEVENT_BO_LITTLE	= 1,
	UEVENT_BO_BIG		= 2
};

struct uevent_text {
	const char	*text;		/* [str x len] NUL-terminated, inside the payload */
	uint32_t	len;		/* strlen(text) */
};

struct uevent_range_begin {
	uint64_t	id;
	uint64_t	parent;		/* enclosing range on the same thread, 0 if none */
	uint32_t	flags;		/* UEVENT_RANGE_ASYNC */
	const char	*name;		/* [str x name_len] */
	uint32_t	name_len;
};

struct uevent_range_end {
	uint64_t	id;
	uint32_t	flags;
};

enum { UEVENT_RANGE_ASYNC = 1 };

struct uevent_counter {		/* [order name, value] in the bindings */
	int64_t		value;
	const char	*name;		/* [str x name_len] */
	uint32_t	name_len;
};

/* The longest name a range's and a counter's payload hold: UEVENT_MAX_PAYLOAD less
 * the fields around the name and its NUL (longer: -E2BIG). */
enum {
	UEVENT_RANGE_NAME_MAX	= UEVENT_MAX_PAYLOAD - 25,	/* id, parent, flags, name_len */
	UEVENT_COUNTER_NAME_MAX	= UEVENT_MAX_PAYLOAD - 17	/* value, name_len, padding */
};

/* Mirrors jitdump's JR_CODE_LOAD without the code bytes. */
struct uevent_jit_code_load {
	uint64_t	code_addr;
	uint64_t	code_size;
	uint64_t	code_index;
	const char	*name;		/* [str x name_len] */
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
	const char	*file;		/* [str x file_len] */
	uint32_t	file_len;
};

struct uevent_jit_debug_info {
	uint64_t	code_addr;
	uint32_t	nr_entry;	/* [length] of entries */
	const void	*entries;	/* [each uevent_jit_debug_entry] encoded entries, walk
					   with uevent_jit_debug_entry_next */
	uint32_t	entries_len;	/* [length] of entries, in bytes */
};

struct uevent_trace_context {
	uint8_t		trace_id[16];	/* [bytes x 16] W3C trace-id */
	uint8_t		span_id[8];	/* [bytes x 8] W3C parent-id */
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
/* Thread context: OpenTelemetry's thread-local context record (OTEP 4947).             */

/*
 * uevent_thread_context_set() keeps the calling thread's W3C trace context in the
 * thread's Thread-Local Context Record of OpenTelemetry OTEP 4947 ("thread context"),
 * which out-of-process profilers (the OpenTelemetry eBPF profiler, Datadog's agent)
 * find through the TLS symbol otel_thread_ctx_v1 that libuevent exports in .dynsym
 * (TLSDESC in the shared library; a program that links libuevent.a puts it in its
 * own .dynsym with `pkg-config --static --libs libuevent`, which adds
 * -Wl,--export-dynamic-symbol=otel_thread_ctx_v1). The symbol is not declared here:
 * it is for readers outside the process; in-process code uses the calls below.
 *
 * The thread's first set points otel_thread_ctx_v1 at the thread's one record (a fixed
 * record: after that only `valid` changes, the OTEP's second protocol) and, on a kernel
 * with PR_PERF_TLS_AREA, registers the record as the area that PERF_SAMPLE_TLS_USER
 * dumps (`uevent record --tls 32`, or 256 for attributes too), so each sample of the
 * thread carries it (struct uevent_perf_sample's context_*). That kernel refusing is
 * remembered per thread; the calls still store and return 0. After the first call: plain
 * stores, no system call, no lock, compiler fences only, signal-safe (a set in a handler
 * that interrupts one on the same thread leaves the record invalid until the outer one
 * ends: it may then hold a mix of the two, never a half-written record marked valid).
 *
 * The record, byte-packed, host byte order, 8-aligned here, 256 bytes (the OTEP asks
 * for at most 640; libuevent's TLS must fit the static TLS that glibc keeps for
 * dlopen()ed libraries, and 640 did not beside LuaJIT):
 *   0  u8  trace_id[16]      W3C trace-id
 *  16  u8  span_id[8]        W3C parent-id (the current span)
 *  24  u8  valid             1: the record is whole; anything else: ignore it
 *  25  u8  trace_flags       W3C trace-flags
 *  26  u16 attrs_data_size   bytes of attrs_data in use
 *  28  u8  attrs_data[228]   {u8 key index, u8 length, length bytes of UTF-8} entries;
 *                            a key seen twice: the last one counts
 * Key indexes name keys through the process context's threadlocal.attribute_key_map
 * (uevent_process_context_publish()).
 */
enum {
	UEVENT_THREAD_CONTEXT_HEADER_SIZE	= 28,	/* up to attrs_data */
	UEVENT_THREAD_CONTEXT_SIZE		= 256,	/* the whole record */
};

struct uevent_thread_context_record {
	uint8_t		trace_id[16];
	uint8_t		span_id[8];
	uint8_t		valid;
	uint8_t		trace_flags;
	uint16_t	attrs_data_size;
	uint8_t		attrs_data[228];
};

/*
 * Set the calling thread's context, with no attributes (0, or -EFAULT for a NULL id);
 * clear it (0: the record stays, invalid).
 */
int uevent_thread_context_set(const uint8_t *trace_id16, const uint8_t *span_id8,
			      uint8_t flags);
int uevent_thread_context_clear(void);
/*
 * Add attribute key (an index into threadlocal.attribute_key_map) = value (len bytes of
 * UTF-8) to the calling thread's context, replacing an earlier value of that key: 0, or
 * -ENODATA (no context set), -EINVAL (len > 255), -EFAULT (NULL value with len),
 * -ENOSPC (the record's 228 bytes of attributes are full).
 */
int uevent_thread_context_set_attr(uint8_t key, const char *value, size_t len);
/*
 * Make the calling thread's context the one a copy of a record holds (len bytes, as
 * uevent_thread_context_get() saved it before a set): ids, flags and attributes, or
 * none (clear) when the copy holds none, in one write: a reader sees the ids with their
 * attributes or not at all. What a scoped context does at its end: 0, or -EINVAL (rec
 * NULL or shorter than the header), -ENOSPC (the copy's attributes are more than the
 * record's 228 bytes; nothing changed).
 */
int uevent_thread_context_restore(const void *rec, size_t len);
/* 1 when the kernel dumps the calling thread's record into its samples, else 0. */
int uevent_thread_context_registered(void);
/* The calling thread's record (whether set, registered, or not). */
const struct uevent_thread_context_record *uevent_thread_context_get(void);
/*
 * A sample's TLS dump (tls_user, tls_user_dyn_size bytes), or any copy of a record, as
 * a trace context: 0 and *out filled, or -ENODATA (no record, or valid != 1: none set,
 * cleared, or sampled while being written), -EINVAL (shorter than the 28-byte header);
 * *out is zeroed on every error. byte_order: that of the sampled machine (enum
 * uevent_byte_order).
 */
int uevent_thread_context_decode(const void *buf, size_t len, int byte_order,
				 struct uevent_trace_context *out);
/*
 * The attribute entries of a record copy: walk with *offset starting at 0; 0 and *key,
 * *value (not NUL-terminated), *value_len filled, or -ENOENT after the last whole entry
 * (a truncated one is not returned), -EINVAL on bad arguments or a record shorter than
 * its header. The dump may be shorter than attrs_data_size says (a short --tls): only
 * entries that are wholly inside len count.
 */
int uevent_thread_context_attr_next(const void *buf, size_t len, int byte_order,
				    uint32_t *offset, uint8_t *key, const char **value,
				    uint8_t *value_len);

/* ---------------------------------------------------------------------------------- */
/* Process context: OpenTelemetry's process context (OTEP 4719).                        */

/*
 * uevent_process_context_publish() puts the OTEL_CTX header and a protobuf
 * ProcessContext payload (opentelemetry.proto.processcontext.v1development) in a memfd
 * named "OTEL_CTX" mapped privately (or an anonymous mapping when memfd is refused),
 * with MADV_DONTFORK and the VMA name OTEL_CTX, as OTEP 4719 says; readers find it in
 * /proc/PID/maps ([anon_shmem:OTEL_CTX], [anon:OTEL_CTX] or /memfd:OTEL_CTX). The
 * payload carries resource attributes service.name and service.instance.id, and the
 * attributes threadlocal.schema_version ("tlsdesc_v1_dev") and
 * threadlocal.attribute_key_map (attr_keys: index i names key i of
 * uevent_thread_context_set_attr()). A second publish updates the one context in place
 * with the OTEP's protocol (timestamp 0, fence, payload, fence, new timestamp).
 * Calls are serialized by a lock (not signal-safe). Returns 0 or -errno.
 */
struct uevent_process_context_opts {
	size_t		sz;
	const char	*service_name;		/* NULL: not published */
	const char	*service_instance_id;	/* NULL: a random UUID, kept across updates */
	const char	*const *attr_keys;	/* [each of nr_attr_keys] attribute names */
	uint32_t	nr_attr_keys;		/* at most 256 */
};

int uevent_process_context_publish(const struct uevent_process_context_opts *opts);
/* Append keys to threadlocal.attribute_key_map (append-only: indexes stay): the index of
 * the first, or -errno (-ENODATA: nothing published yet; -ENOSPC: over 256 keys). */
int uevent_process_context_add_keys(const char *const *keys, uint32_t nr);
/* Unmap the process context (0, or 0 when there is none). */
int uevent_process_context_drop(void);

/* ---------------------------------------------------------------------------------- */
/* Records: PERF_RECORD_UEVENT as the kernel writes it (and the file transport too).    */

/* The sample_id trailer of non-sample records, or the same fields of a sample. */
struct uevent_sample_id {
	uint32_t	fields;			/* UEVENT_ID_* present */
	uint32_t	pid, tid;		/* [id TID]; each other member: UEVENT_ID_<ITS NAME> */
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

/*
 * A uevent record, decoded: the record (PERF_RECORD_UEVENT, or the usdt or user_events
 * sample that carries one) a delivered mark became; docs/format.md's glossary.
 * An output struct: set sz = sizeof(struct uevent_record) before a call fills it. The
 * library writes at most sz bytes and sets sz to what it wrote, so a caller built
 * against an older, shorter struct is never overrun.
 */
struct uevent_record {
	size_t		sz;
	uint32_t	record_type;	/* perf_event_header.type it came in */
	uint16_t	misc;
	uint16_t	record_size;	/* perf_event_header.size */
	uint32_t	format;		/* PERF_UEVENT_FORMAT_*; 0 for the V0 layout */
	uint32_t	type;		/* payload type */
	uint32_t	flags;		/* UEVENT_RECORD_* below */
	uint32_t	size;		/* payload bytes */
	const void	*data;		/* [bytes x size] payload, inside the record buffer */
	struct uevent_sample_id	id;	/* the trailer's fields, as id.fields says */
	int32_t		event_index;	/* the event it came in, numbered as a sample's
					   event_index is; -1: unknown (file transport) */
};

enum uevent_record_flags {
	UEVENT_RECORD_V0_LAYOUT		= 1,	/* decode flag: the V0 layout (type, size, data),
						   no format word */
	UEVENT_RECORD_TRUNCATED		= 0x40000000	/* set in flags by the library: the
							   payload was cut to what its carrier
							   (a usdt fetch) held */
};

/*
 * Decodes one PERF_RECORD_UEVENT starting at buf (header included) into out (out->sz
 * set by the caller). sample_type is the event's attr.sample_type (for the sample_id
 * trailer; 0 if sample_id_all is off). flags: UEVENT_RECORD_V0_LAYOUT or 0.
 * Returns 0, -EINVAL for a bad or truncated record (or out->sz too small), -EPROTO for
 * an unknown format (out->format and record_size are still set so the caller can skip
 * it).
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
 * The file transport's files are pipe-mode perf.data, as `perf record -o -` writes:
 * the pipe header, the HEADER_ATTR of one event ("uevent:file", sample_id TID|TIME on
 * CLOCK_MONOTONIC) and its name, written once by the process that makes the file, then
 * PERF_RECORD_UEVENT records appended whole by every process and thread that marks
 * (O_APPEND). A record a full disk or RLIMIT_FSIZE cuts short is cut off the file again
 * (the emit returns -ENOSPC/-EFBIG, a UEVENT_DROP_IO drop), so later records follow
 * whole ones. uevent_perf_file__open() reads them, as it reads any perf.data.
 *
 * The uevents of a perf.data capture, the file transport's or any other ("-": standard
 * input, a pipe too): a view of uevent_perf_file that skips every other record. Opaque
 * reader: open, then next until it returns 0. next returns 1 with *rec set (valid until
 * the next call), 0 at the end, -EPROTO for a uevent of an unknown format (rec->format
 * set; call next again), or -errno: -EINVAL for a corrupt record, -ENODATA when the
 * file ends inside a record (its writer was killed, the disk filled up): every whole
 * record before it was returned, __offset() is where the cut one starts, and next
 * keeps returning -ENODATA. open fails with EINVAL for a file that is not perf.data.
 */
struct uevent_file_reader;
struct uevent_file_reader *uevent_file_reader__open(const char *path);
int uevent_file_reader__next(struct uevent_file_reader *r, struct uevent_record *rec);
uint64_t uevent_file_reader__offset(const struct uevent_file_reader *r);
/* The byte order the file was written in (enum uevent_byte_order), for payload decoders. */
int uevent_file_reader__byte_order(const struct uevent_file_reader *r);
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
	UEVENT_FEAT_THREAD_CONTEXT	= 9,	/* samples carry uevent_thread_context_set()'s
						   context (PR_PERF_TLS_AREA) */
	UEVENT_FEAT_BPF_CONTEXT		= 10,	/* ... or a BPF program reads it for them
						   (stock kernels: libbpf, BTF, privileges) */
	UEVENT_FEAT_COUNT		= 11
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
	uint32_t	features;	/* PERF_UEVENT_FEAT_* (TLS_AREA = 1, ENABLE_WORD = 2); 0 on older kernels */
};
int uevent_kernel_abi(struct uevent_kernel_abi *abi);

/* /proc/sys/kernel/perf_event_paranoid, or -errno. */
int uevent_perf_paranoid(void);

/*
 * The reason channel: why the calling thread's last call that had more to say than its
 * errno did what it did, for people (a thread-local string, valid until the thread's
 * next such call; "" when there is nothing to add). The one reason getter: uevent_open
 * (what it chose or refused: the library's own open on load says it on the loading
 * thread), uevent_perf_open (the feature a kernel lacks), uevent_session__open (what the
 * session opened or could not, "" when all; a step a session takes later, such as
 * following a new mapping, says the session's whole reason again) and uevent_jit__open
 * say why here.
 */
const char *uevent_reason(void);

/* Library version string, and the error text for a -errno this library returned. */
const char *uevent_version(void);
const char *uevent_strerror(int err);

/* ---------------------------------------------------------------------------------- */
/* Reading: perf_event_open helpers, sessions, perf.data.                               */

/*
 * perf_event_attr helpers. The header does not need the attr's layout: pass a
 * struct perf_event_attr from <linux/perf_event.h> (or this package's patched copy) and
 * its size. Each setter returns 0 or -errno (-EINVAL for a NULL attr, -E2BIG for a size
 * the field cannot hold). uevent_perf_open() names the feature a kernel refuses.
 */
struct perf_event_attr;

/* Zero attr_size bytes, set attr->size = attr_size, type and config. */
int uevent_attr_init(struct perf_event_attr *attr, size_t attr_size, uint32_t type,
		     uint64_t config);
/* attr.uevents (bit 63 of the flags word): receive PERF_RECORD_UEVENT. */
int uevent_attr_set_uevents(struct perf_event_attr *attr, int on);
/* attr.bpf_event and attr.ksymbol: PERF_RECORD_BPF_EVENT and PERF_RECORD_KSYMBOL. */
int uevent_attr_set_bpf_event(struct perf_event_attr *attr, int on);
/* PERF_SAMPLE_TLS_USER with attr.sample_tls_user = bytes (0 clears it; max 65535). */
int uevent_attr_set_tls_user(struct perf_event_attr *attr, uint32_t bytes);
/* PERF_SAMPLE_AUX with attr.aux_sample_size = bytes (the AUX event leads the group). */
int uevent_attr_set_aux_sample(struct perf_event_attr *attr, uint32_t bytes);
/* attr.sample_id_all, and these sample_type bits for the trailer (TID, TIME, ...). */
int uevent_attr_set_sample_id_all(struct perf_event_attr *attr, uint64_t sample_type);
/* attr.use_clockid with clockid (CLOCK_MONOTONIC, ...); -1 returns to perf's clock. */
int uevent_attr_set_clock(struct perf_event_attr *attr, int clockid);

/* Library flag for uevent_perf_open(): do not add PERF_FLAG_FD_CLOEXEC. */
enum { UEVENT_PERF_FLAG_NO_CLOEXEC = 0x40000000 };

/*
 * perf_event_open(2) with PERF_FLAG_FD_CLOEXEC added. Returns the fd or -errno. When the
 * kernel answers EINVAL or E2BIG and the same attr without one of the features above is
 * accepted, returns -EOPNOTSUPP; uevent_reason() then names the feature
 * ("attr.uevents is not supported by this kernel").
 */
int uevent_perf_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
		     unsigned long flags);

/*
 * Tracepoint samples that carry uevents. A layout says where the payload type, size and
 * bytes sit in a PERF_SAMPLE_RAW blob (offsets from the start of the raw data):
 * usdt (uprobe fetch args) or user_events (a __rel_loc field). Kind 0: not a carrier.
 */
struct uevent_raw_layout {
	uint32_t	kind;			/* UEVENT_RAW_* */
	uint32_t	type_offset;		/* u32 */
	uint32_t	size_offset;		/* USDT, USDT_TEXT: u64 size */
	uint32_t	data_offset;		/* USDT: bytes; USER_EVENTS: the __rel_loc u32;
						   USDT_TEXT: the __data_loc u32 */
	uint32_t	data_capacity;		/* USDT: bytes fetched */
};

enum uevent_raw_kind {
	UEVENT_RAW_NONE		= 0,
	UEVENT_RAW_USDT		= 1,
	UEVENT_RAW_USER_EVENTS	= 2,
	UEVENT_RAW_USDT_TEXT	= 3	/* uevent_perf_event_add()'s: the payload as a
					   string, up to its first NUL */
};

/*
 * Fills l from a tracefs event format text (events/SYS/NAME/format, or the tracing data
 * of a perf.data): our usdt probe's fetch arguments (type, size, d0, d1...) or the
 * user_events tracepoint's (type, __rel_loc data). Returns 0, or -ENOENT (l->kind 0)
 * when the format carries no uevents.
 */
int uevent_raw_layout_from_format(struct uevent_raw_layout *l, const char *format_text);

/*
 * For plain perf: the uprobe event libuevent:emit at the libuevent:text probe of the
 * object at path (NULL: this libuevent), fetching each mark's type, size and payload as
 * a string (text=..., up to its first NUL). Then `perf record -e libuevent:emit -- CMD`
 * records CMD's marks, `perf script` prints their text and `uevent dump` reads them as
 * uevents. An earlier libuevent:emit of ours is replaced (the same one is kept); one not
 * made this way is not (-EEXIST). Needs write access to tracefs. Returns 0 or -errno
 * (-EBUSY: a tracer has the event open, -ENOENT: no probe in path, -EINVAL: a path with
 * a space or a control character, which uprobe_events would split; uevent_reason() says).
 */
int uevent_perf_event_add(const char *path);
/* Removes libuevent:emit if ours: 0, or -errno (-ENOENT: none, -EBUSY: a tracer has it
 * open, -EEXIST: one not made by uevent_perf_event_add, left). */
int uevent_perf_event_remove(void);

/*
 * Decoding perf records. A record's layout depends on its event's attr: the fields of
 * struct uevent_perf_format. Decoders never read past len; pointers point into the
 * record. Arrays (callchain, registers, branch entries) are left encoded: read element
 * i with uevent_perf_u64().
 *
 * The record structs below are the one record model: the bindings' record types and
 * `uevent dump --json` are generated from them. A pointer or array member says what
 * it holds in brackets at the start of its comment: [bytes x N], [u64 x N] (encoded
 * in the record's byte order), [u64 x N of K] (N groups of K), [str] (NUL-terminated);
 * N and K name members of the same struct or are numbers.
 */
struct uevent_perf_format {
	size_t		sz;			/* sizeof(struct uevent_perf_format) */
	uint64_t	sample_type;
	uint64_t	read_format;
	uint64_t	branch_sample_type;
	uint64_t	sample_regs_user;
	uint64_t	sample_regs_intr;
	uint32_t	sample_id_all;
	uint32_t	flags;			/* UEVENT_PERF_* */
	struct uevent_raw_layout raw;		/* samples of a tracepoint that carries
						   uevents: decoded as uevents */
};

enum uevent_perf_format_flags {
	UEVENT_PERF_UEVENT_V0		= 1,	/* PERF_RECORD_UEVENT in the V0 layout */
	UEVENT_PERF_BPF_EVENT_V0	= 2	/* type 17 is the V0 BPF_EVENT, not KSYMBOL */
};

/* Fills fmt from an attr of attr_size bytes (as read from perf.data or built here). */
int uevent_perf_format_from_attr(struct uevent_perf_format *fmt,
				 const struct perf_event_attr *attr, size_t attr_size);

struct uevent_perf_read {
	uint64_t	nr;			/* values: 1, or the group's nr */
	uint64_t	time_enabled, time_running;
	uint64_t	value, id, lost;	/* the first (or only) value */
	const void	*values;		/* [u64 x nr of entry_size / 8] PERF_FORMAT_GROUP:
						   nr entries of entry_size bytes */
	uint32_t	entry_size;		/* bytes: value[, id][, lost] */
};

struct uevent_perf_sample {
	uint64_t	identifier, ip;
	uint32_t	pid, tid;
	uint64_t	time, addr, id, stream_id;
	uint32_t	cpu;
	uint64_t	period;
	struct uevent_perf_read read;
	uint64_t	callchain_nr;		/* u64 ips */
	const void	*callchain;		/* [u64 x callchain_nr] */
	uint32_t	raw_size;
	const void	*raw;			/* [bytes x raw_size] */
	uint64_t	branch_nr, branch_hw_idx;
	const void	*branch_entries;	/* [u64 x branch_nr of 3] from, to, flags */
	const void	*branch_counters;	/* [u64 x branch_nr] with
						   PERF_SAMPLE_BRANCH_COUNTERS */
	uint64_t	regs_user_abi;
	uint32_t	regs_user_nr;
	const void	*regs_user;		/* [u64 x regs_user_nr] */
	uint64_t	stack_user_size;
	const void	*stack_user;		/* [bytes x stack_user_size] */
	uint64_t	stack_user_dyn_size;
	uint64_t	weight;			/* PERF_SAMPLE_WEIGHT, or var1 of WEIGHT_STRUCT */
	uint32_t	weight_var1;
	uint16_t	weight_var2, weight_var3;
	uint64_t	data_src, transaction;
	uint64_t	regs_intr_abi;
	uint32_t	regs_intr_nr;
	const void	*regs_intr;		/* [u64 x regs_intr_nr] */
	uint64_t	phys_addr, cgroup, data_page_size, code_page_size;
	uint64_t	tls_user_size;		/* PERF_SAMPLE_TLS_USER: requested bytes */
	const void	*tls_user;		/* [bytes x tls_user_size] */
	uint64_t	tls_user_dyn_size;	/* bytes the kernel could read */
	int32_t		context_err;		/* tls_user as a thread context
						   (uevent_thread_context_decode): 0, or
						   -ENODATA, -EINVAL; ids zero then;
						   -EINPROGRESS: read on return to user
						   space, its record not joined (yet):
						   tls_user_dyn_size holds its cookie */
	uint8_t		context_trace_id[16];	/* [bytes x 16] W3C trace-id */
	uint8_t		context_span_id[8];	/* [bytes x 8] W3C parent-id */
	uint8_t		context_flags;		/* W3C trace-flags */
	uint64_t	aux_size;
	const void	*aux;			/* [bytes x aux_size] */
	int32_t		event_index;		/* the event it is a sample of, by its id:
						   perf.data's attr number, a session's
						   event number (names: __event_name());
						   -1 when the id maps to no event */
};

struct uevent_perf_mmap {		/* MMAP and MMAP2 */
	uint32_t	pid, tid;
	uint64_t	addr, len, pgoff;
	uint32_t	maj, min;		/* MMAP2 without PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint64_t	ino, ino_generation;
	uint32_t	prot, flags;
	uint32_t	build_id_size;		/* with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t		build_id[20];		/* [bytes x build_id_size] */
	const char	*filename;		/* [str] */
};

struct uevent_perf_comm {
	uint32_t	pid, tid;
	const char	*comm;			/* [str] */
};

struct uevent_perf_task {		/* FORK and EXIT */
	uint32_t	pid, ppid, tid, ptid;
	uint64_t	time;
};

struct uevent_perf_lost {		/* LOST (id, lost) and LOST_SAMPLES (lost) */
	uint64_t	id, lost;
};

struct uevent_perf_throttle {		/* THROTTLE and UNTHROTTLE */
	uint64_t	time, id, stream_id;
};

struct uevent_perf_switch {		/* SWITCH (0s) and SWITCH_CPU_WIDE */
	uint32_t	next_prev_pid, next_prev_tid;
};

struct uevent_perf_ksymbol {
	uint64_t	addr;
	uint32_t	len;
	uint16_t	ksym_type, flags;
	const char	*name;			/* [str] */
};

struct uevent_perf_bpf_event {
	uint16_t	type, flags;		/* PERF_BPF_EVENT_PROG_LOAD, ... */
	uint32_t	id;
	uint8_t		tag[8];			/* [bytes x 8] zero in the V0 layout */
};

struct uevent_perf_bytes {		/* any other record: its body */
	const void	*data;			/* [bytes x size] */
	uint32_t	size;
};

union uevent_perf_body {
	struct uevent_perf_sample	sample;
	struct uevent_perf_mmap		mmap;
	struct uevent_perf_comm		comm;
	struct uevent_perf_task		task;
	struct uevent_perf_lost		lost;
	struct uevent_perf_throttle	throttle;
	struct uevent_perf_switch	sw;
	struct uevent_perf_ksymbol	ksymbol;
	struct uevent_perf_bpf_event	bpf_event;
	struct uevent_record		uevent;
	struct uevent_perf_bytes	other;
};

/* Which member of union uevent_perf_body a record sets: UEVENT_BODY_X sets member x. */
enum uevent_perf_body_kind {
	UEVENT_BODY_OTHER	= 0,	/* any other record type: its body bytes */
	UEVENT_BODY_SAMPLE	= 1,	/* SAMPLE */
	UEVENT_BODY_MMAP	= 2,	/* MMAP, MMAP2 */
	UEVENT_BODY_COMM	= 3,	/* COMM */
	UEVENT_BODY_TASK	= 4,	/* FORK, EXIT */
	UEVENT_BODY_LOST	= 5,	/* LOST, LOST_SAMPLES */
	UEVENT_BODY_THROTTLE	= 6,	/* THROTTLE, UNTHROTTLE */
	UEVENT_BODY_SW		= 7,	/* SWITCH, SWITCH_CPU_WIDE */
	UEVENT_BODY_KSYMBOL	= 8,	/* KSYMBOL */
	UEVENT_BODY_BPF_EVENT	= 9,	/* BPF_EVENT */
	UEVENT_BODY_UEVENT	= 10,	/* UEVENT, and uevents carried by usdt/user_events
					   samples (type is then PERF_RECORD_UEVENT too) */
	UEVENT_BODY_COUNT	= 11
};

/*
 * One decoded record, an output struct: set sz = sizeof(struct uevent_perf_record)
 * before the first call that fills it (the library writes at most sz bytes and sets sz
 * to what it wrote). body says which member of u is set.
 */
struct uevent_perf_record {
	size_t		sz;
	uint32_t	type;			/* perf_event_header.type */
	uint16_t	misc;
	uint16_t	size;
	uint32_t	body;			/* enum uevent_perf_body_kind */
	uint32_t	transport;		/* for uevents: enum uevent_transport that carried it */
	struct uevent_sample_id	id;
	union uevent_perf_body	u;
};

/*
 * Decodes one record at buf (header included, len bytes available) into rec (rec->sz
 * set by the caller). A sample of an event whose fmt->raw names a uevent carrier comes
 * back as the uevent it carries (type PERF_RECORD_UEVENT, body UEVENT_BODY_UEVENT, the
 * transport set, UEVENT_RECORD_TRUNCATED in u.uevent.flags when the fetch cut it).
 * Returns 0, -EINVAL for a truncated or corrupt record (or rec->sz too small), -EPROTO
 * for a uevent of an unknown format (rec->size is still set so the caller can skip it). A KSYMBOL or BPF_EVENT written
 * longer than its contents (some kernels add the sample_id sizes of the listeners
 * served before this one; the extra bytes are stale) is decoded from its contents, its
 * sample_id the bytes after them; rec->size stays the size in the buffer.
 */
int uevent_perf_record_decode(const void *buf, size_t len, int byte_order,
			      const struct uevent_perf_format *fmt,
			      struct uevent_perf_record *rec);

/* Element i of an encoded u64 array (callchain, registers, branch entries). */
uint64_t uevent_perf_u64(const void *array, uint64_t i, int byte_order);

/* Name of a PERF_RECORD_* type ("SAMPLE", "MMAP2", "UEVENT"...), or NULL. */
const char *uevent_perf_record_name(uint32_t type);

/*
 * Copies the records between data_tail and data_head of a perf ring buffer you mapped
 * yourself (base: the mapping, metadata page first) into buf, records that wrap made
 * whole, then advances data_tail. data_head is read with acquire, data_tail written
 * with release. Returns the bytes copied (whole records only; 0 when empty), -ENOSPC
 * if the first record does not fit cap, -EINVAL for a corrupt ring (data_tail is then
 * moved to data_head so the ring keeps going).
 */
ssize_t uevent_ring_read(void *base, size_t map_size, void *buf, size_t cap);

/*
 * A live session: one perf event per CPU (for a process, per thread and CPU, following
 * its children), ring buffers mapped, records returned in time order. On a patched
 * kernel it reads PERF_RECORD_UEVENT; on stock kernels it creates the usdt uprobe
 * events (removed on close) and the user_events tracepoint and turns their samples into
 * the same uevent records. The usdt probes are enabled in the watched processes only
 * (pid -1: in every process, system-wide).
 */
struct uevent_session_opts {
	size_t		sz;			/* sizeof(struct uevent_session_opts) */
	int		pid;			/* 0: this process; > 0: that one; -1: all */
	unsigned int	flags;			/* UEVENT_SESSION_* */
	unsigned int	transports;		/* 1 << enum uevent_transport; 0: all usable */
	unsigned int	ring_pages;		/* data pages per ring, a power of 2; 0: from
						   the CPUs and the locked-memory limit */
	const char	*usdt_path;		/* object with the libuevent:emitN notes; NULL: ours */
	unsigned int	usdt_max_payload;	/* most bytes fetched per usdt mark (a mark's
						   size class, 16..4096, caps it too); 0: 4096,
						   cut to what the kernel takes (3056 on 6.x) */
	unsigned int	wakeup_events;		/* wake the reader (and __fd()) every
						   N marks or samples, or when a ring is
						   half full; 0: every mark, every 64
						   samples. A reader blocked in __next()
						   looks every 100 ms */
	uint64_t	sample_period_ns;	/* > 0: also cpu-clock samples at this period */
	unsigned int	tls_user;		/* with samples: PERF_SAMPLE_TLS_USER bytes */
	const char	*cpus;			/* CPUs to watch, as perf -C: "0-3,7"; NULL:
						   all (-EINVAL for a bad list) */
};

enum uevent_session_flags {
	UEVENT_SESSION_ALL_RECORDS	= 1,	/* also return COMM, FORK, EXIT, samples... */
	UEVENT_SESSION_OVERWRITE	= 2,	/* flight recorder: read the rings on demand */
	UEVENT_SESSION_NO_INHERIT	= 4,	/* do not follow new children and threads */
	UEVENT_SESSION_BPF_EVENTS	= 8,	/* ask for BPF_EVENT and KSYMBOL records */
	UEVENT_SESSION_DISABLED		= 16,	/* start disabled: call __enable() */
	UEVENT_SESSION_CALLCHAIN	= 32,	/* samples carry the user stack's callchain
						   (PERF_SAMPLE_CALLCHAIN; frame pointers) */
	UEVENT_SESSION_CONTEXT		= 64	/* samples carry the sampled thread's OTEP
						   4947 context (context_*): the kernel's
						   PR_PERF_TLS_AREA where it has it, else a
						   BPF program (root or CAP_BPF+CAP_PERFMON,
						   kernel BTF); without either, reason()
						   says why and the rest is recorded */
};

struct uevent_session_stats {
	uint64_t	records;		/* records returned */
	uint64_t	uevents;		/* of them uevents */
	uint64_t	lost;			/* sum of PERF_RECORD_LOST counts */
	uint64_t	lost_samples;		/* sum of PERF_RECORD_LOST_SAMPLES counts */
	uint64_t	truncated;		/* usdt marks larger than usdt_max_payload */
	uint64_t	corrupt;		/* records that failed to decode (skipped) */
	uint64_t	bytes;			/* ring bytes consumed */
	uint64_t	trimmed;		/* KSYMBOL and BPF_EVENT records the kernel
						   wrote longer than their contents (some
						   kernels, with more than one listener):
						   decoded from their contents, recorded
						   trimmed */
	uint64_t	lost_counted;		/* records lost for a full ring, as the kernel
						   counts them per event when the stats are
						   taken (Linux >= 6.0, else 0). A LOST record
						   only comes with the ring's next record: after
						   a flood at the end, lost stays short of this;
						   read after the last records it is exact */
	uint64_t	usdt_objects;		/* following a process tree through usdt:
						   files with libuevent's probes it mapped (its
						   libuevent, copies, programs linked with
						   libuevent.a), each attached to when mapped */
	uint64_t	wakeups;		/* times the kernel woke the reader in
						   __next() (perf record's "woken up N
						   times"): every record, or every
						   wakeup_events of them */
	uint64_t	samples;		/* cpu-clock samples read */
	uint64_t	bpf_events;		/* BPF_EVENT records read */
	uint64_t	lost_records;		/* LOST and LOST_SAMPLES records read */
};

struct uevent_session;
/*
 * NULL with errno set (ESRCH: opts->pid names no process; EINVAL: an option no kernel
 * takes, such as pid < -1, ring_pages not a power of 2, tls_user > 65535, a bad cpus
 * list); uevent_reason() says why. On success uevent_reason() says what the session
 * opened or could not, for people ("" when all): a binding keeps it with the session.
 */
struct uevent_session *uevent_session__open(const struct uevent_session_opts *opts);
/* Transports the session listens on, 1 << enum uevent_transport each. */
unsigned int uevent_session__transports(const struct uevent_session *s);
int uevent_session__enable(struct uevent_session *s);
int uevent_session__disable(struct uevent_session *s);
/* An fd that polls readable when records may be waiting (an epoll fd). */
int uevent_session__fd(const struct uevent_session *s);
/*
 * The next record in time order: 1 with *rec set (valid until the next call), 0 when
 * none came within timeout_ms (0: do not wait, -1: wait forever), or -errno.
 * PERF_RECORD_LOST/LOST_SAMPLES are returned as records and counted in the stats.
 * Records come out in one time order across all rings and calls: a record younger
 * than the read round's start less 2 ms (for records stamped but not yet in their
 * ring) waits for the next round, so a call may take up to 2 ms longer than
 * timeout_ms to give out records that were already there. A writer stalled longer
 * than that between its timestamp and its commit (a descheduled virtual CPU) can
 * still come out of order.
 */
int uevent_session__next(struct uevent_session *s, struct uevent_perf_record *rec,
			 int timeout_ms);
/*
 * Recording (__record_to()) without reading, as perf record does: every ring's records
 * are copied to the recording as the kernel wrote them, a FINISHED_ROUND after each
 * round over the rings, without being decoded or put in time order (readers of the
 * file sort it: uevent_perf_file__open(), perf script). Waits up to timeout_ms (0: do
 * not wait, -1: forever) for records when there are none. Returns the records written
 * (0: none), or -errno (-EINVAL: not recording, or overwrite mode; a write error).
 * The stats count them as __next() counts what it reads (records: those written);
 * records __next() read and did not give out go to the recording first.
 */
int uevent_session__drain(struct uevent_session *s, int timeout_ms);
/* Overwrite mode: pause the rings and queue their contents for __next(). */
int uevent_session__snapshot(struct uevent_session *s);
int uevent_session__stats(const struct uevent_session *s, struct uevent_session_stats *st,
			  size_t sz);
/*
 * Recording: from this call on, every record the session reads (returned or not) is
 * also written to fd, as the kernel wrote it, in a pipe-mode perf.data stream like
 * `perf record -o -` writes: the header, one HEADER_ATTR per event with its ids, the
 * tracing data giving the usdt and user_events tracepoints' formats, then the records
 * in the order __next() takes them and a FINISHED_ROUND after each read round. Its
 * HEADER_VERSION feature says "libuevent VERSION"; close ends it with HEADER_SAMPLE_TIME
 * (first and last time), the mark that tells readers a whole recording from a cut one.
 * uevent_perf_file__open() gives back the same records; perf script reads it too.
 * Writes are buffered and flushed each round, when __next() waits, and at close. On a
 * regular file, blocks are allocated 4 MiB ahead of the writes without changing its size
 * (FALLOC_FL_KEEP_SIZE), and close gives back those past its end.
 * Returns 0 or -errno (-EBUSY: already recording); a later write error makes __next()
 * fail with it. The fd stays the caller's.
 */
int uevent_session__record_to(struct uevent_session *s, int fd);
/*
 * The session's events, as a sample's event_index numbers them (and as the file
 * __record_to() writes lists them): "dummy" (side-band, prctl uevents), the usdt
 * probes ("GROUP:emit16"...), "user_events:libuevent_v1", "cpu-clock". A string owned
 * by the session, or NULL (errno EINVAL) for an i out of range.
 */
int uevent_session__nr_events(const struct uevent_session *s);
const char *uevent_session__event_name(const struct uevent_session *s, int i);
/*
 * Starts argv[0] (searched in PATH, as execvp) with argv under a new session that
 * watches it (opts->pid must be 0; NULL opts: defaults): the child is forked, waits
 * until the session's events are on it, then execs with UEVENT_TRANSPORT set to the
 * transport the session reads best (and UEVENT_WAIT_TRACER for usdt), as `uevent
 * record -- CMD` starts CMD; so a program that marks right away loses nothing. The
 * child's pid is uevent_session__pid(); reap it with waitpid(). Returns NULL with
 * errno set when the session cannot open (the child is then killed and reaped before
 * it ran anything) or argv[0] cannot be run (ENOENT, EACCES...: the child's exec
 * error, the session closed).
 */
struct uevent_session *uevent_session__spawn(const struct uevent_session_opts *opts,
					     char *const argv[]);
/* The process the session watches (opts.pid resolved; __spawn(): the child), or -1 for
 * a system-wide session. */
int uevent_session__pid(const struct uevent_session *s);
/*
 * Threads: a session is used by one thread at a time, with two exceptions. While one
 * thread is inside __next(), __read_batch() or __snapshot() (waiting or not), another
 * may call __shutdown() or __close(). __shutdown() makes that call and every later one
 * return -ECANCELED at once (the session's fd polls readable), and frees nothing: it
 * may race with any call but __close(). __close() shuts down, waits for the reader to
 * return, then frees; no call may begin once __close() has begun, so a binding that
 * lets any thread close makes its readers' entry and its close exclusive (or calls
 * __shutdown() first and __close() once no reader can enter). Returns 0 or -EINVAL.
 */
int uevent_session__shutdown(struct uevent_session *s);
/* Closes every fd and mapping and removes the session's uprobe events (see above for
 * a reader in another thread). */
void uevent_session__close(struct uevent_session *s);

/*
 * perf.data files written by `perf record` (file and pipe mode): the same decoded
 * records as a session, in time order as perf report and perf script take them (perf
 * writes each CPU's ring in turn, so a file can hold a task's samples before the COMM
 * and MMAP that name them; a record without a time stays after the one before it).
 * next returns 1 with *rec (valid until the next call), 0 at the end, -errno
 * (-EINVAL: corrupt at __offset()). Samples of the usdt and
 * user_events tracepoints come back as uevent records when the file's tracing data
 * gives their layout. Files written on a machine of the other byte order are read too
 * (numbers swapped as perf swaps them). "-" reads standard input (pipe mode:
 * `perf record -o -`).
 * A recording cut short (its writer killed, the disk full: a pipe-mode stream that
 * ends inside a record or, written by a session, without its end mark; a file shorter
 * than its header says) gives every whole record, then -ENODATA with __offset() where
 * the cut record starts; next keeps returning -ENODATA. (perf's own pipe mode has no
 * end mark: cut between two records, it reads as whole.) A cut file has lost what follows its data (event names,
 * tracepoint formats), so its usdt samples stay samples. `uevent dump` prints the
 * records, warns "truncated at offset N, M records read" and exits 0, as perf script.
 */
struct uevent_perf_file;
struct uevent_perf_file *uevent_perf_file__open(const char *path);
int uevent_perf_file__next(struct uevent_perf_file *f, struct uevent_perf_record *rec);
uint64_t uevent_perf_file__offset(const struct uevent_perf_file *f);
/*
 * The file's bytes as the reader holds them (mapped, or a pipe read whole), *len set to
 * their number; valid until __close(). Every pointer member of a record this reader
 * gives (callchain, raw, payload...) points inside them, so a binding can read those
 * arrays from one view with a bound. NULL with errno EINVAL for a NULL f or len.
 */
const void *uevent_perf_file__bytes(const struct uevent_perf_file *f, size_t *len);
/* Number of events (attrs) in the file, and the name of event i (HEADER_EVENT_DESC;
 * "" when the file names none). A sample's event_index is such an i. */
int uevent_perf_file__nr_events(const struct uevent_perf_file *f);
const char *uevent_perf_file__event_name(const struct uevent_perf_file *f, int i);
/*
 * The raw fields of a sample of a tracepoint event (PERF_SAMPLE_RAW), decoded by name
 * from the format files of the file's tracing data with libtraceevent, as perf script
 * shows them: "prev_comm=sh prev_pid=42 ...", or with UEVENT_FIELDS_JSON a JSON object
 * ({"prev_comm": "sh", "prev_pid": 42, ...}: numbers as numbers). An event whose print
 * format is not given to libtraceevent (a division, a statement, a token the kernel's
 * formats do not use: a file could crash it) has each field printed by its type, where
 * perf script would use the format. Writes at most cap bytes, NUL-terminated, to buf
 * and returns the length the whole text needs (as snprintf: retry with a larger buf
 * when it is >= cap). -ENOENT: rec is not such a sample or the file has no format for
 * its event; -EOPNOTSUPP: libuevent was built without libtraceevent (configure says);
 * -EINVAL: bad arguments.
 */
int uevent_perf_file__raw_fields(struct uevent_perf_file *f, const struct uevent_perf_record *rec,
				 unsigned int flags, char *buf, size_t cap);

enum uevent_fields_flags {
	UEVENT_FIELDS_JSON	= 1
};

/* The events' clock (attr.clockid, or HEADER_CLOCK_DATA), else -1 (perf's clock). */
int uevent_perf_file__clockid(const struct uevent_perf_file *f);
/* HEADER_CLOCKID (the clock's resolution in ns) when present, else -1. */
int64_t uevent_perf_file__clock_res_ns(const struct uevent_perf_file *f);
/*
 * UEVENT_BO_LITTLE or UEVENT_BO_BIG: the order of the numbers the records' pointer
 * members point at (read arrays with uevent_perf_u64(..., this)).
 */
int uevent_perf_file__byte_order(const struct uevent_perf_file *f);
void uevent_perf_file__close(struct uevent_perf_file *f);

/*
 * Batches, for profilers that want columns, not records: samples and uevents read
 * straight into arrays the caller allocated (NumPy's, Arrow's...), one call per many
 * records. Row i of a column is at (char *)column + i * stride (stride 0: packed, each
 * column by its own element size; an array of structs: its size and each column the
 * address of its member in row 0). A NULL column is not filled. Callchains and payloads
 * go back to back into one buffer each, a row giving its offset and length there.
 * Numbers are in host order. Set sz, cap and the columns; the call sets n and
 * chain_n / data_n, counting from 0 each call. The bindings' columns are generated from
 * the notes: [column] (one element a row), [offset in T] (a row's first element in the
 * tail array T), [tail CAP N] (the rows' elements back to back: room for CAP, N filled).
 */
struct uevent_sample_batch {
	size_t		sz;			/* sizeof(struct uevent_sample_batch) */
	size_t		cap;			/* rows each column has room for */
	size_t		stride;			/* bytes from row to row; 0: packed */
	size_t		n;			/* rows filled */
	uint64_t	*time;			/* [column] 0 when the event has no
						   PERF_SAMPLE_TIME */
	uint32_t	*pid, *tid, *cpu;	/* [column] */
	int32_t		*event_index;		/* [column] as uevent_perf_sample's */
	uint64_t	*ip, *period;		/* [column] */
	uint64_t	*chain_off;		/* [offset in chain] the row's first ip */
	uint32_t	*chain_len;		/* [column] its callchain_nr */
	uint64_t	*chain;			/* [tail chain_cap chain_n] every row's
						   callchain, back to back */
	size_t		chain_cap;		/* u64s chain has room for */
	size_t		chain_n;		/* u64s filled */
	uint64_t	*context_trace_hi;	/* [column] the thread's OpenTelemetry
						   trace id (context_trace_id) bytes 0-7
						   as a big-endian number (the W3C hex is
						   %016x of hi then lo); hi, lo and span
						   are 0 when context_err is not 0 */
	uint64_t	*context_trace_lo;	/* [column] bytes 8-15 */
	uint64_t	*context_span;		/* [column] context_span_id as a
						   big-endian number */
};

/* The uevent records' columns, as struct uevent_sample_batch's are the samples'. */
struct uevent_record_batch {
	size_t		sz;			/* sizeof(struct uevent_record_batch) */
	size_t		cap;			/* rows each column has room for */
	size_t		stride;			/* bytes from row to row; 0: packed */
	size_t		n;			/* rows filled */
	uint64_t	*time;			/* [column] sample_id fields the record
						   lacks are 0 */
	uint32_t	*pid, *tid, *cpu;	/* [column] */
	int32_t		*event_index;		/* [column] as uevent_record's */
	uint32_t	*type;			/* [column] payload type */
	uint32_t	*flags;			/* [column] UEVENT_RECORD_* */
	uint32_t	*transport;		/* [column] enum uevent_transport that
						   carried it */
	uint64_t	*data_off;		/* [offset in data] the row's payload */
	uint32_t	*data_len;		/* [column] its size */
	uint8_t		*data;			/* [tail data_cap data_n] every row's
						   payload, back to back */
	size_t		data_cap;		/* bytes data has room for */
	size_t		data_n;			/* bytes filled */
};

/*
 * Reads f's next records, from where __next() would, into the batches: samples into
 * samples, uevents into uevents (either NULL: those are skipped too), other records
 * skipped. Stops when a batch is full (cap rows, or the next record's callchain or
 * payload would overflow chain_cap / data_cap: it is left for the next call) or the
 * file ends. Returns the rows filled in both (> 0), 0 at the end, or -errno as __next():
 * -ENODATA for a cut file, once the rows before the cut were returned; -EINVAL for a
 * corrupt record or batch; -ENOSPC when one record does not fit an empty batch;
 * -E2BIG for a newer caller's batch with non-zero members this library lacks.
 */
int uevent_perf_file__read_batch(struct uevent_perf_file *f, struct uevent_sample_batch *samples,
				 struct uevent_record_batch *uevents);
/*
 * The same from a live session, in the order __next() gives: waits up to timeout_ms (as
 * __next()) for the first record, then takes only records already waiting. A session
 * cannot put a record back, so it stops while the room left could be too small for the
 * largest record (a record is at most 65535 bytes: 8191 callchain entries, 65535 payload
 * bytes); a batch with less room than that altogether is -ENOSPC. Returns the rows
 * filled, 0 when none came in time (or every watched task has exited, with -1), or
 * -errno as __next().
 */
int uevent_session__read_batch(struct uevent_session *s, struct uevent_sample_batch *samples,
			       struct uevent_record_batch *uevents, int timeout_ms);

/* ---------------------------------------------------------------------------------- */
/* Symbolization: name (pid, address, time) from a recording's side-band.              */
/*
 * A symbolizer is fed a recording's records in time order (MMAP, MMAP2, COMM, FORK,
 * EXIT, KSYMBOL and the UEVENT_TYPE_JIT_* uevents; other records are ignored) and then
 * names addresses as they were at a given time: the code that was live there then. JIT
 * code announced in the stream (uevent_jit__code_load/move/unload) is named for the
 * time it was live, so an address reused by a later load gets the later name without
 * `perf inject`. Also read, when the stream points at them: ELF symbols and DWARF lines
 * of mapped files (through elfutils' libdwfl, separate debug files found by build-id or
 * .gnu_debuglink, also in opts->debug_dir), jitdump files a process mapped
 * (jit-PID.dump, named by their CLOCK_MONOTONIC timestamps: the clock sessions use),
 * /tmp/perf-PID.map (no times: its last line for an address wins) and the kernel's
 * symbols (/proc/kallsyms, and KSYMBOL records). The option paths are copied. Not
 * thread-safe.
 */
struct uevent_symbolizer_opts {
	size_t		sz;		/* sizeof(struct uevent_symbolizer_opts) */
	unsigned int	flags;		/* UEVENT_SYMBOLIZER_* */
	int		byte_order;	/* enum uevent_byte_order of the uevent payloads fed
					   (uevent_perf_file__byte_order()); 0: host */
	const char	*debug_dir;	/* also look here for separate debug files:
					   DIR/.build-id/xx/rest.debug, DIR/the
					   .gnu_debuglink name; NULL: only beside the
					   file, its .debug/ and /usr/lib/debug */
	const char	*kallsyms;	/* kernel symbols; NULL: /proc/kallsyms */
	const char	*perf_map_dir;	/* where perf-PID.map files are; NULL: /tmp */
	const char	*root;		/* prefix for the paths the stream names (a
					   recording of a container or another machine's
					   copy); NULL: / */
};

enum uevent_symbolizer_flags {
	UEVENT_SYMBOLIZER_NO_LINES	= 1,	/* do not read DWARF line tables */
	UEVENT_SYMBOLIZER_NO_KERNEL	= 2,	/* do not read kallsyms */
	UEVENT_SYMBOLIZER_NO_PERF_MAP	= 4,	/* do not read perf-PID.map files */
	UEVENT_SYMBOLIZER_NO_JITDUMP	= 8,	/* do not read jitdump files */
	UEVENT_SYMBOLIZER_PROC_MAPS	= 16,	/* the processes are alive here (a live
						   session): what they mapped before the
						   recording began comes from /proc/PID/maps */
	UEVENT_SYMBOLIZER_NO_DEMANGLE	= 32	/* names as the binary has them (default:
						   C++ and Rust names demangled as perf
						   prints them) */
};

/* Where a symbol's name came from. */
enum uevent_symbol_source {
	UEVENT_SYM_NONE		= 0,	/* not named (dso may still be known) */
	UEVENT_SYM_ELF		= 1,	/* an ELF symbol table (the file's or its debug file's) */
	UEVENT_SYM_KERNEL	= 2,	/* kallsyms or a KSYMBOL record */
	UEVENT_SYM_JIT_UEVENT	= 3,	/* a UEVENT_TYPE_JIT_CODE_LOAD in the stream */
	UEVENT_SYM_JITDUMP	= 4,	/* a jitdump file */
	UEVENT_SYM_PERF_MAP	= 5	/* a perf-PID.map file */
};

/*
 * An output struct (set sz = sizeof(struct uevent_symbol)). The strings belong to the
 * symbolizer and stay valid until uevent_symbolizer__free().
 */
struct uevent_symbol {
	size_t		sz;
	const char	*name;		/* [str] the symbol, NULL if not named; C++ and
					   Rust names demangled unless
					   UEVENT_SYMBOLIZER_NO_DEMANGLE */
	const char	*dso;		/* [str] the object: a path, "[kernel.kallsyms]",
					   "[jit]", or NULL when no mapping covers it */
	uint64_t	offset;		/* addr - the symbol's start (name set), else the
					   offset in the dso's file */
	uint64_t	sym_addr;	/* the symbol's start, in the process */
	uint64_t	sym_size;	/* its size, 0 if unknown */
	const char	*file;		/* [str] source file (DWARF, jitdump), else NULL */
	uint32_t	line;		/* its line, 0 if unknown */
	uint32_t	source;		/* enum uevent_symbol_source */
};

struct uevent_symbolizer;
/* NULL opts: defaults. Returns NULL with errno set (EINVAL: a newer caller's opts). */
struct uevent_symbolizer *uevent_symbolizer__new(const struct uevent_symbolizer_opts *opts);
/*
 * Takes what rec says about the address space (in time order). Returns 1 if the
 * record was used, 0 if it is not side-band, or -errno (-ENOMEM; -EINVAL for a JIT
 * uevent whose payload does not decode: the rest is kept).
 */
int uevent_symbolizer__feed(struct uevent_symbolizer *sym, const struct uevent_perf_record *rec);
/*
 * Feeds every record of the perf.data at path (uevent_perf_file__open()'s), in its
 * order, skipping what __feed() and __next() refuse alone (-EINVAL, -EPROTO). Returns
 * the records used, or -errno: the open's, a read error's (-ENODATA: cut short, after
 * every whole record) or -ENOMEM; the reason names the file and where.
 */
int64_t uevent_symbolizer__feed_file(struct uevent_symbolizer *sym, const char *path);
/*
 * Names addr in process pid at time (the recording's clock; UINT64_MAX: the latest).
 * Returns 0 with out->name set, or -ENOENT when nothing names it (out->dso and
 * out->offset are still set if a mapping covers it), -EINVAL for bad arguments.
 */
int uevent_symbolizer__lookup(struct uevent_symbolizer *sym, uint32_t pid, uint64_t addr,
			      uint64_t time, struct uevent_symbol *out);
/* The thread's command name at time (COMM records, a FORK's parent), or NULL. */
const char *uevent_symbolizer__comm(struct uevent_symbolizer *sym, uint32_t tid,
				    uint64_t time);
void uevent_symbolizer__free(struct uevent_symbolizer *sym);

#ifndef UEVENT_CDEF
#define UEVENT_SYMBOLIZER_OPTS(name, ...) \
	struct uevent_symbolizer_opts name = { .sz = sizeof(struct uevent_symbolizer_opts), \
					       __VA_ARGS__ }
#endif

/*
 * A name as perf prints it: C++ (_Z) and Rust (_ZN...17h<hash>E, _R) demangled as the
 * symbolizer does; with UEVENT_DEMANGLE_NUMBA, the names Numba gives the code it
 * compiles (numba/core/itanium_mangler.py) as "mod.qualname(int64, float64)", its
 * wrappers with " [cpython wrapper]" / " [cfunc wrapper]". A name that does not
 * demangle is copied as it is. Writes at most len bytes, NUL included, as snprintf;
 * returns the whole name's length (>= len: buf holds it cut), or -EINVAL (NULL sym,
 * NULL buf with len > 0, an unknown flag).
 */
enum uevent_demangle_flags {
	UEVENT_DEMANGLE_NUMBA	= 1	/* Numba's scheme instead of C++ and Rust */
};
int uevent_demangle(const char *sym, unsigned int flags, char *buf, size_t len);

/*
 * The function symbols of an ELF64 little-endian object held in memory, such as the
 * objects a JIT hands to debuggers through the GDB JIT interface (LLVM's MCJIT under
 * Numba, Julia, ...): their section headers say where the JIT loaded each section, so
 * a function's address is its section's sh_addr + st_value, and only functions wholly
 * inside an executable section are given. With UEVENT_ELF_FILE, an ELF file read
 * whole: the functions and data objects of .symtab and .dynsym, st_value as it is.
 * Set *pos = 0 and out->sz before the first call. Returns 1 with *out set (name points
 * into obj), 0 after the last, -ENOEXEC for what is not ELF64 little-endian, or
 * -EINVAL. Entries or names that lie past len are skipped.
 */
enum uevent_elf_flags {
	UEVENT_ELF_FILE		= 1	/* a file's tables, objects too, addresses unmoved */
};

struct uevent_elf_symbol {
	size_t		sz;		/* sizeof(struct uevent_elf_symbol) */
	const char	*name;		/* in obj */
	uint64_t	addr;		/* where it was loaded (UEVENT_ELF_FILE: st_value) */
	uint64_t	size;		/* st_size */
	uint32_t	type;		/* STT_FUNC or STT_OBJECT */
	uint32_t	bind;		/* STB_LOCAL, STB_GLOBAL, STB_WEAK... */
};
int uevent_elf_symbol_next(const void *obj, size_t len, unsigned int flags, uint64_t *pos,
			   struct uevent_elf_symbol *out);

/* ---------------------------------------------------------------------------------- */
/* JIT hooks: announce generated code before it first runs.                              */
/*
 * A JIT session makes perf name generated code. Each call, before it returns, appends
 * a record to the jitdump file jit-PID.dump that `perf inject --jit` reads (the format
 * of the kernel's tools/perf/Documentation/jitdump-specification.txt, CLOCK_MONOTONIC
 * timestamps: record with `perf record -k mono`), a line to /tmp/perf-PID.map, and
 * emits the matching UEVENT_TYPE_JIT_* uevent through the current transport.
 * The jitdump file is mapped PROT_READ|PROT_EXEC while the session is open: that
 * mapping is the MMAP record perf inject looks for. Records are stored through a
 * shared mapping of space reserved with fallocate, so no call makes a syscall for
 * them; until close trims it the file ends in zeros, where readers (perf) stop.
 *
 * Unlike the emit functions these take a mutex and allocate: they are thread-safe
 * (each record is written whole) but not async-signal-safe. A forked child writes
 * its own jit-CHILDPID.dump and perf-CHILDPID.map from its first call on, starting
 * with the code it inherited (every load not unloaded, with its debug info).
 * A failed uevent marker is counted in uevent_stats_get() and does not fail the call;
 * a failed file write (ENOSPC, EFBIG, EBADF...) does, and leaves no partial record.
 */
struct uevent_jit;

enum uevent_jit_flags {
	UEVENT_JIT_NO_JITDUMP	= 1,	/* do not write the jitdump file */
	UEVENT_JIT_NO_PERF_MAP	= 2,	/* do not write /tmp/perf-PID.map */
	UEVENT_JIT_NO_UEVENT	= 4,	/* do not emit uevent markers */
	UEVENT_JIT_BUFFER_PERF_MAP = 8,	/* batch perf-map lines: written when 64 KiB pile
					   up or the oldest is 100 ms old, and at fork,
					   flush, close and exit; with _JITDUMP too, made
					   from the dump's records when that is written */
	UEVENT_JIT_BUFFER_JITDUMP = 16	/* batch jitdump records: written with pwrite
					   in aligned 256 KiB blocks, not stored through
					   the shared mapping (a quarter of the cost on
					   ext4), when the oldest is 100 ms old, and at
					   fork, flush, close and exit; a process killed
					   before loses them. A batch the file does not
					   take fails the call that wrote it, and loses
					   records of calls that returned 0: the next
					   flush (or close) returns its error too */
};

/* Options for uevent_jit__open(); zero-fill with UEVENT_JIT_OPTS(). */
struct uevent_jit_opts {
	size_t		sz;		/* sizeof(struct uevent_jit_opts) */
	const char	*dir;		/* jitdump directory, used as is (created 0700 if
					   missing); NULL: a new $JITDUMPDIR/.debug/jit/
					   libuevent-jit-XXXXXX ($HOME if unset), as perf's
					   jvmti agent does. Each directory we make or
					   reuse must be ours: a symlink is ELOOP, another
					   user's EPERM, a non-directory ENOTDIR */
	const char	*perf_map_path;	/* NULL: /tmp/perf-PID.map (which must then be ours
					   with one link, else EPERM); a regular file
					   only: a FIFO or device is EINVAL, a symlink
					   ELOOP */
	unsigned int	flags;		/* UEVENT_JIT_* */
};

/* Opens a session (NULL opts: defaults). Returns NULL with errno set on failure. */
struct uevent_jit *uevent_jit__open(const struct uevent_jit_opts *opts);

/*
 * Announces size bytes of code at addr under name, before the code first runs.
 * code is a copy of the bytes (NULL: read them from addr). Loading at an address that
 * holds other code replaces it. Returns 0 or -errno.
 */
int uevent_jit__code_load(struct uevent_jit *j, const char *name, uint64_t addr,
			  uint64_t size, const void *code);

/*
 * code_load with a one-entry line table: announces the code as "NAME FILE:LINE" with a
 * DEBUG_INFO record mapping addr to file:line, in one call (for hooks in interpreted
 * languages, where each foreign call costs: the LuaJIT hook). file NULL: code_load.
 */
int uevent_jit__code_load_line(struct uevent_jit *j, const char *name, uint64_t addr,
			       uint64_t size, const void *code, const char *file,
			       uint32_t line);

/*
 * code_load_line with the function the code belongs to: announces it as
 * "NAME FUNC FILE:LINE" (the LuaJIT hook: "TRACE_46 mix app.lua:4"). func NULL or "":
 * code_load_line; file NULL: "NAME FUNC" with no line record.
 */
int uevent_jit__code_load_func(struct uevent_jit *j, const char *name, const char *func,
			       uint64_t addr, uint64_t size, const void *code,
			       const char *file, uint32_t line);

/* Code loaded at old_addr now lives at new_addr. -ENOENT if old_addr is not loaded. */
int uevent_jit__code_move(struct uevent_jit *j, uint64_t old_addr, uint64_t new_addr,
			  uint64_t size);

/*
 * Code at addr is gone (size 0: as loaded). jitdump has no unload record; perf lets a
 * later load at the same address replace the name. -ENOENT if addr is not loaded.
 */
int uevent_jit__code_unload(struct uevent_jit *j, uint64_t addr, uint64_t size);

/* Every code this session loaded is gone (a JIT's whole code cache flushed): one call
 * instead of one code_unload each; the unload markers still go out one per code. */
int uevent_jit__code_unload_all(struct uevent_jit *j);

/*
 * Line table for code about to be loaded at code_addr: call before its code_load (perf
 * attaches a DEBUG_INFO record to the next CODE_LOAD). The jitdump record is written
 * together with that load so threads cannot interleave; the uevent goes out now.
 */
int uevent_jit__debug_info(struct uevent_jit *j, uint64_t code_addr,
			   const struct uevent_jit_debug_entry *entries, uint32_t nr);

/*
 * .eh_frame_hdr + .eh_frame for code about to be loaded at code_addr (jitdump's
 * JIT_CODE_UNWINDING_INFO); like debug_info, call before the code_load.
 */
int uevent_jit__unwinding_info(struct uevent_jit *j, uint64_t code_addr, const void *data,
			       uint64_t size, uint64_t eh_frame_hdr_size, uint64_t mapped_size);

/*
 * Writes what UEVENT_JIT_BUFFER_JITDUMP and _PERF_MAP hold now (they are otherwise
 * written at 256 KiB, 100 ms, fork, close and exit), so perf can read both files whole
 * while the process runs. 0 or -errno; a no-op without batching. As fsync does, it also
 * returns the first error of a batch's write that failed since the last flush (records
 * or lines of calls that returned 0 were lost), even if a call got it too, then clears it.
 */
int uevent_jit__flush(struct uevent_jit *j);

/* Paths of this process's files, or NULL when that output is off. */
const char *uevent_jit__dump_path(const struct uevent_jit *j);
const char *uevent_jit__perf_map_path(const struct uevent_jit *j);

/* Writes JIT_CODE_CLOSE, unmaps and closes the files (which stay for perf inject),
 * frees j. Returns 0 or the first -errno, a batch's failed write since the last flush
 * included (as uevent_jit__flush). NULL is a no-op. */
int uevent_jit__close(struct uevent_jit *j);

#ifndef UEVENT_CDEF
#define UEVENT_JIT_OPTS(name, ...) \
	struct uevent_jit_opts name = { .sz = sizeof(struct uevent_jit_opts), __VA_ARGS__ }
#endif

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------------------- */
/* C conveniences (not seen by the bindings, which call the twins above).               */

#ifndef UEVENT_CDEF
#define UEVENT_OPTS(name, ...) \
	struct uevent_open_opts name = { .sz = sizeof(struct uevent_open_opts), __VA_ARGS__ }

/* The word (via its constant pointer); marker macro arguments are evaluated only when
 * this is true. */
#define UEVENT_ENABLED() \
	(__builtin_expect(__atomic_load_n(uevent_enabled_ptr, __ATOMIC_RELAXED) != 0, 0))

#define UEVENT_MARK(text) \
	(UEVENT_ENABLED() ? uevent_mark(text) : 0)
#define UEVENT_MARKF(...) \
	(UEVENT_ENABLED() ? uevent_markf(__VA_ARGS__) : 0)
#define UEVENT_EMIT(type, data, size) \
	(UEVENT_ENABLED() ? uevent_emit((type), (data), (size)) : 0)
#define UEVENT_COUNTER(name, value) \
	(UEVENT_ENABLED() ? uevent_counter_set((name), (value)) : 0)
#endif

#endif /* UEVENT_H */
