/* perf-internal.h - private helpers shared by the perf readers (attr.c, decode.c, session.c, perfdata.c). */
#ifndef UEVENT_PERF_INTERNAL_H
#define UEVENT_PERF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* perf tool's own record types start here; they carry no sample_id trailer. */
#define PERF_RECORD_HEADER_ATTR_TYPE	64

/* The ones perf.data's reader (perfdata.c) and writer (session-record.c) share, and
 * the header feature bits they both name (perf's tools/perf/util/header.h). */
#define REC_TRACING_DATA	66
#define REC_HEADER_FEATURE	80
#define FEAT_VERSION		5
#define FEAT_SAMPLE_TIME	21

/*
 * Bytes a KSYMBOL or BPF_EVENT record really uses (header, body, idsz of sample_id): less
 * than its size when the kernel wrote it too long (decode.c says when); size otherwise.
 */
size_t _uevent_sideband_used(const void *buf, size_t size, uint32_t type, size_t idsz);

/* Offset and size of a field in a tracefs event format text; 0 or -ENOENT. */
int _uevent_format_field(const char *fmt, const char *name, uint32_t *off, uint32_t *size);

/* The uevent a tracepoint sample carries, as fmt->raw lays it out: 0, or -EINVAL. */
int _uevent_raw_to_uevent(struct uevent_perf_record *rec, const struct uevent_perf_format *fmt,
			  int byte_order);

/*
 * Tracepoint formats parsed by libtraceevent (tp-fields.c); without it at configure
 * time new fails (EOPNOTSUPP) and fields is -EOPNOTSUPP.
 */
struct _uevent_tep;
struct _uevent_tep *_uevent_tep_new(int big_endian, int long_size, int page_size);
int _uevent_tep_add(struct _uevent_tep *t, const char *sys, const char *format, size_t len);
/* The fields of a raw sample of tracepoint id, as uevent_perf_file__raw_fields() says. */
int _uevent_tep_fields(struct _uevent_tep *t, uint64_t id, const void *raw, uint32_t size,
		       unsigned int flags, char *buf, size_t cap);
void _uevent_tep_free(struct _uevent_tep *t);

/* One SDT note argument ("8@%rsi", "4@12(%rsp)") as a uprobe fetch expression. */
int _uevent_sdt_arg_fetch(const char *arg, char *out, size_t cap);

/* Copies n bytes at ring position pos (wrapping at size, a power of 2) to dst (ring.c). */
void _uevent_ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t n);

/* An SDT probe in an ELF file (sdt.c). */
struct _uevent_sdt_probe {
	char name[32];
	uint64_t offset;		/* file offset of the probe site */
	uint64_t sem_offset;		/* file offset of the semaphore, 0 if none */
	char args[256];
};

/* The probes of provider in the ELF file at path: how many (at most max go to out). */
int _uevent_sdt_find_all(const char *path, const char *provider, struct _uevent_sdt_probe *out,
			 int max);

/* A small file's text (NUL-terminated): its length or -errno. */
int _uevent_read_small(const char *path, char *buf, size_t cap);

/* Appends line to tracefs file (uprobe_events...): 0 or -errno. */
int _uevent_tracefs_append(const char *file, const char *line);

/* 0 if path can go into a uprobe_events line as it is; -EINVAL if it holds a space or a
 * control character, which would end its field there or start a command of its own. */
int _uevent_uprobe_path_check(const char *path);

/* A tracepoint's id, and its format text into fmt: the id or -errno. */
int _uevent_tracepoint_id(const char *sys, const char *ev, char *fmt, size_t fmt_cap);

/*
 * The HEADER_VERSION string of the pipe-mode perf.data a session records: such a
 * stream ends with a HEADER_SAMPLE_TIME record, and one without it was cut.
 */
#define _UEVENT_REC_VERSION_PREFIX "libuevent "
/* An entry to put in time order: its time and what it stands for (time-sort.c). */
struct _uevent_timed {
	uint64_t time, what;
};
/* v stably sorted by time, merging the runs already in order: 0 or -ENOMEM. */
int _uevent_time_sort(struct _uevent_timed *v, size_t n);

/* The event of the file transport's captures (transport-file.c): its uevents say so. */
#define _UEVENT_FILE_EVENT "uevent:file"

/* Moves a perf.data reader back to a record __offset() gave (batch.c puts one back). */
struct uevent_perf_file;
void _uevent_perf_file_unread(struct uevent_perf_file *f);
int _uevent_perf_file_next_data(struct uevent_perf_file *f, struct uevent_perf_record *rec);
/* uevent_session__read_batch()'s body (batch.c), which session.c runs as a reader. */
int _uevent_session_batch(struct uevent_session *s, struct uevent_sample_batch *samples,
			  struct uevent_record_batch *uevents, int timeout_ms);



/*
 * uevent_perf_record_decode()'s long way, every record in either byte order (decode.c):
 * the public function reads a plain host-order sample without it first, and gives it
 * what does not add up. fuzz/perf-record checks that both give the same for every input.
 */
int _uevent_perf_record_decode_long(const uint8_t *b, size_t len, int bo,
				    const struct uevent_perf_format *f,
				    struct uevent_perf_record *rec);
/* A sample's TLS dump as its OTEP 4947 context (context_* fields; decode.c). */
void _uevent_decode_context(struct uevent_perf_sample *s, int bo);
/*
 * PERF_RECORD_TLS_USER_DEFERRED joined to the sample that waits for it (tls-deferred.c):
 * the first matching record in [p, end) of records back to back, or in the session's
 * queue from what it has not given out yet. Fill the sample's tls_user and context_*;
 * a sample whose record is not there keeps context_err -EINPROGRESS.
 */
int _uevent_tls_join_scan(struct uevent_perf_record *rec, const uint8_t *p, const uint8_t *end,
			  int bo);
int _uevent_session_tls_join(struct uevent_session *s, struct uevent_perf_record *rec);

#endif
