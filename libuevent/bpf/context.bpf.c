/* context.bpf.c - each sample's OpenTelemetry thread context (OTEP 4947), on stock kernels. */
/*
 * Two programs. uevent_ctx_prctl (on the syscalls:sys_enter_prctl tracepoint: stock
 * kernels may lack kprobes) sees a thread's first uevent_thread_context_set(), which
 * calls prctl(PR_PERF_TLS_AREA, &record, size) whether or not the kernel knows that
 * option, and keeps where the record lies from the thread pointer: the record is in
 * static TLS, so that offset is the process's, the same for all its threads.
 * uevent_ctx_sample runs on every sample of the session's sampling events, before the
 * kernel writes it: it reads the sampled thread's record at fsbase + offset with the
 * OTEP's reader rule (valid == 1, else nothing) and hands the ids, and the record's
 * attributes (up to the OTEP's 640-byte record), to the reader, keyed by the sample's
 * own time and thread.
 *
 * No vmlinux.h: the few kernel types are declared here with preserve_access_index, and
 * libbpf relocates every field against the running kernel's BTF (CO-RE) when it loads.
 */
#include <linux/types.h>
#include <linux/bpf.h>		/* the uapi: map types and helpers' argument types */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "context-shared.h"

struct thread_struct {
	unsigned long fsbase;
} __attribute__((preserve_access_index));

struct mm_struct;

struct task_struct {
	struct thread_struct thread;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

struct perf_sample_data {
	__u64 time;
} __attribute__((preserve_access_index));

struct bpf_perf_event_data_kern {
	struct perf_sample_data *data;
} __attribute__((preserve_access_index));

char LICENSE[] SEC("license") = "GPL";

/* tgid -> where its threads' records lie */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UEVENT_BPF_CTX_PROCS);
	__type(key, __u32);
	__type(value, struct uevent_bpf_ctx_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, UEVENT_BPF_CTX_RING);
} ids SEC(".maps");

/* Samples that found a valid record but no room in the ring, for the reader's stats. */
__u64 dropped = 0;

/* syscalls/sys_enter_*: the syscall's arguments from offset 16, one unsigned long each */
struct sys_enter_prctl {
	__u64 common;
	__s32 nr;
	__u32 pad;
	unsigned long option, arg2;
};

SEC("tracepoint/syscalls/sys_enter_prctl")
int uevent_ctx_prctl(struct sys_enter_prctl *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct uevent_bpf_ctx_proc p = { 0 };
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);

	if (ctx->option != UEVENT_BPF_PR_PERF_TLS_AREA)
		return 0;
	p.offset = (__s64)(ctx->arg2 - BPF_CORE_READ(task, thread.fsbase));
	p.mm = (__u64)BPF_CORE_READ(task, mm);
	bpf_map_update_elem(&procs, &tgid, &p, 0 /* BPF_ANY */);
	return 0;
}

SEC("perf_event")
int uevent_ctx_sample(void *ctx)
{
	struct bpf_perf_event_data_kern *kctx = ctx;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid(), mm;
	__u32 tgid = (__u32)(pid_tgid >> 32);
	struct uevent_bpf_ctx_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct perf_sample_data *data;
	struct uevent_bpf_ctx_id *e;
	struct uevent_bpf_ctx_id_attrs *ea = NULL;
	__u8 hdr[UEVENT_BPF_CTX_HDR];
	__u64 rec;
	__u32 asz;

	/* 1 everywhere: the kernel writes the sample whatever this found */
	if (!p)
		return 1;
	mm = (__u64)BPF_CORE_READ(task, mm);
	if (!p->mm)		/* seeded from user space, which cannot name the mm */
		p->mm = mm;
	else if (p->mm != mm)	/* the process exec'd, or its tgid is another's now */
		return 1;
	rec = BPF_CORE_READ(task, thread.fsbase) + p->offset;
	if (bpf_probe_read_user(hdr, sizeof(hdr), (void *)rec))
		return 1;
	/* OTEP 4947: a reader takes the record only while valid is 1 (written whole) */
	if (hdr[24] != 1)
		return 1;
	/* attrs_data_size (little-endian), no more than the OTEP's 640 bytes allow */
	asz = (__u32)hdr[26] | (__u32)hdr[27] << 8;
	if (asz > UEVENT_BPF_CTX_ATTRS)
		asz = UEVENT_BPF_CTX_ATTRS;
	if (asz) {
		ea = bpf_ringbuf_reserve(&ids, sizeof(*ea), 0);
		e = ea ? &ea->id : NULL;
	} else {
		e = bpf_ringbuf_reserve(&ids, sizeof(*e), 0);
	}
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 1;
	}
	e->attrs_size = 0;
	/* the thread is stopped in this sample: its header and attributes are one state */
	if (ea && !bpf_probe_read_user(ea->attrs, asz, (void *)(rec + UEVENT_BPF_CTX_HDR)))
		e->attrs_size = (__u16)asz;
	/* perf_prepare_sample() ran before this program: the time the sample will carry */
	data = BPF_CORE_READ(kctx, data);
	e->time = BPF_CORE_READ(data, time);
	e->tid = (__u32)pid_tgid;
	e->pid = tgid;
	__builtin_memcpy(e->trace_id, hdr, 16);
	__builtin_memcpy(e->span_id, hdr + 16, 8);
	e->flags = hdr[25];
	e->pad = 0;
	__builtin_memset(e->pad2, 0, sizeof(e->pad2));
	bpf_ringbuf_submit(e, 0);
	return 1;
}
