/*
 * fuzz.h - what the libFuzzer targets share: every pointer a decoder hands back is read
 * over the length it gives (so AddressSanitizer sees one that leaves the input), and
 * inputs reach the path-taking readers through a memfd or a pipe on standard input.
 */
#ifndef UEVENT_FUZZ_H
#define UEVENT_FUZZ_H

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/*
 * LeakSanitizer's suppressions, read at start: libtraceevent 1.7's tep_parse_event()
 * leaks a token of a format it cannot parse (fixed upstream since, by more than one
 * commit). Ours are still caught: the tep handle and what our code allocates are not
 * allocated under it.
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:tep_parse_event\n";
}

static volatile uint8_t fuzz_sink;

/* Reads the n bytes at p. */
static inline void touch(const void *p, uint64_t n)
{
	const uint8_t *b = p;
	uint8_t x = 0;
	uint64_t i;

	if (!b)
		return;
	for (i = 0; i < n; i++)
		x ^= b[i];
	fuzz_sink ^= x;
}

/* A string the decoder says holds len bytes and a NUL. */
static inline void touch_str(const char *s, uint64_t len)
{
	if (s && s[len] != 0)
		__builtin_trap();	/* promised NUL-terminated */
	touch(s, len);
}

/* One place to set up a record before a decoder fills it (sz, when it has one). */
static inline void perf_record_init(struct uevent_perf_record *r)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
}

/* A decoded payload of any well-known type. */
union fuzz_payload {
	struct uevent_text t;
	struct uevent_range_begin rb;
	struct uevent_range_end re;
	struct uevent_counter c;
	struct uevent_jit_code_load jl;
	struct uevent_jit_code_move jm;
	struct uevent_jit_code_unload ju;
	struct uevent_jit_debug_info jd;
	struct uevent_trace_context tc;
};

/* A payload of a well-known type through its decoder, and what it points at. */
static inline void touch_payload(uint32_t type, const void *buf, size_t len, int bo)
{
	union fuzz_payload u;
	struct uevent_jit_debug_entry e;
	uint32_t off = 0, n = 0;
	const char *name = uevent_type_name(type);

	if (name)
		touch(name, strlen(name));
	switch (type) {
	case UEVENT_TYPE_TEXT:
		if (!uevent_text_decode(buf, len, bo, &u.t))
			touch_str(u.t.text, u.t.len);
		break;
	case UEVENT_TYPE_RANGE_BEGIN:
		if (!uevent_range_begin_decode(buf, len, bo, &u.rb))
			touch_str(u.rb.name, u.rb.name_len);
		break;
	case UEVENT_TYPE_RANGE_END:
		uevent_range_end_decode(buf, len, bo, &u.re);
		break;
	case UEVENT_TYPE_COUNTER:
		if (!uevent_counter_decode(buf, len, bo, &u.c))
			touch_str(u.c.name, u.c.name_len);
		break;
	case UEVENT_TYPE_JIT_CODE_LOAD:
		if (!uevent_jit_code_load_decode(buf, len, bo, &u.jl))
			touch_str(u.jl.name, u.jl.name_len);
		break;
	case UEVENT_TYPE_JIT_CODE_MOVE:
		uevent_jit_code_move_decode(buf, len, bo, &u.jm);
		break;
	case UEVENT_TYPE_JIT_CODE_UNLOAD:
		uevent_jit_code_unload_decode(buf, len, bo, &u.ju);
		break;
	case UEVENT_TYPE_JIT_DEBUG_INFO:
		if (uevent_jit_debug_info_decode(buf, len, bo, &u.jd))
			break;
		touch(u.jd.entries, u.jd.entries_len);
		/* decode validated every entry: walking them must give exactly nr_entry */
		while (uevent_jit_debug_entry_next(&u.jd, bo, &off, &e) == 1) {
			touch_str(e.file, e.file_len);
			if (++n > u.jd.nr_entry)
				__builtin_trap();
		}
		if (n != u.jd.nr_entry)
			__builtin_trap();
		break;
	case UEVENT_TYPE_TRACE_CONTEXT:
		uevent_trace_context_decode(buf, len, bo, &u.tc);
		break;
	default:
		touch(buf, len);
	}
}

static inline void touch_uevent(const struct uevent_record *u, int bo)
{
	touch(u->data, u->size);
	if (u->data)
		touch_payload(u->type, u->data, u->size, bo);
}

/* Every pointer member of a decoded perf record, over the length it comes with. */
static inline void touch_perf_record(const struct uevent_perf_record *r, int bo)
{
	const struct uevent_perf_sample *s = &r->u.sample;
	const char *name = uevent_perf_record_name(r->type);

	if (name)
		touch(name, strlen(name));
	switch (r->body) {
	case UEVENT_BODY_SAMPLE:
		if (s->read.values)
			touch(s->read.values, s->read.nr * s->read.entry_size);
		touch(s->callchain, s->callchain_nr * 8);
		if (s->callchain_nr)
			fuzz_sink ^= (uint8_t)uevent_perf_u64(s->callchain, s->callchain_nr - 1, bo);
		touch(s->raw, s->raw_size);
		touch(s->branch_entries, s->branch_nr * 24);
		touch(s->branch_counters, s->branch_nr * 8);
		touch(s->regs_user, (uint64_t)s->regs_user_nr * 8);
		touch(s->stack_user, s->stack_user_size);
		touch(s->regs_intr, (uint64_t)s->regs_intr_nr * 8);
		touch(s->tls_user, s->tls_user_size);
		touch(s->aux, s->aux_size);
		break;
	case UEVENT_BODY_MMAP:
		if (r->u.mmap.filename)
			touch(r->u.mmap.filename, strlen(r->u.mmap.filename));
		break;
	case UEVENT_BODY_COMM:
		if (r->u.comm.comm)
			touch(r->u.comm.comm, strlen(r->u.comm.comm));
		break;
	case UEVENT_BODY_KSYMBOL:
		if (r->u.ksymbol.name)
			touch(r->u.ksymbol.name, strlen(r->u.ksymbol.name));
		break;
	case UEVENT_BODY_UEVENT:
		touch_uevent(&r->u.uevent, bo);
		break;
	case UEVENT_BODY_OTHER:
		touch(r->u.other.data, r->u.other.size);
		break;
	default:	/* no pointer members */
		break;
	}
}

/*
 * The input as a path for the readers: "-" with standard input a pipe holding it (when
 * the pipe can take it all), else a memfd's /proc path. fuzz_input_done() undoes it.
 */
struct fuzz_input {
	char path[64];
	int fd, saved_stdin;
};

static inline int fuzz_input(struct fuzz_input *in, const uint8_t *data, size_t size, int pipe_it)
{
	int p[2];
	size_t done = 0;
	ssize_t w;

	in->fd = in->saved_stdin = -1;
	if (pipe_it && pipe2(p, O_CLOEXEC) == 0) {
		if (fcntl(p[1], F_SETPIPE_SZ, size < 4096 ? 4096 : (int)size) >= (int)size) {
			while (done < size && (w = write(p[1], data + done, size - done)) > 0)
				done += (size_t)w;
			close(p[1]);
			in->saved_stdin = dup(0);
			dup2(p[0], 0);
			close(p[0]);
			strcpy(in->path, "-");
			return 0;
		}
		close(p[0]);
		close(p[1]);
	}
	in->fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (in->fd < 0)
		return -1;
	while (done < size && (w = write(in->fd, data + done, size - done)) > 0)
		done += (size_t)w;
	snprintf(in->path, sizeof(in->path), "/proc/self/fd/%d", in->fd);
	return done == size ? 0 : -1;
}

static inline void fuzz_input_done(struct fuzz_input *in)
{
	if (in->saved_stdin >= 0) {
		dup2(in->saved_stdin, 0);
		close(in->saved_stdin);
	}
	if (in->fd >= 0)
		close(in->fd);
}

#endif
