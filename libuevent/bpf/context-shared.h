/* context-shared.h - what context.bpf.c and its loader (bpf-context.c) both read. */
#ifndef UEVENT_BPF_CONTEXT_SHARED_H
#define UEVENT_BPF_CONTEXT_SHARED_H

#define UEVENT_BPF_PR_PERF_TLS_AREA	0x55455441	/* linux/perf_uevent.h's */
#define UEVENT_BPF_CTX_HDR		28		/* OTEP 4947's record header */
#define UEVENT_BPF_CTX_PROCS		4096		/* processes with a record known */
#define UEVENT_BPF_CTX_RING		(1u << 20)	/* ids waiting for the reader, bytes */

/* A process's records: at fsbase + offset in each thread, while its mm is mm. */
struct uevent_bpf_ctx_proc {
	__s64 offset;
	__u64 mm;		/* 0: not known yet (the first sample sets it) */
};

#define UEVENT_BPF_CTX_ATTRS	(640 - UEVENT_BPF_CTX_HDR)	/* OTEP 4947: <= 640 in all */

/* A sample's ids, as the ring hands them over: only samples of a valid record. */
struct uevent_bpf_ctx_id {
	__u64 time;		/* the sample's PERF_SAMPLE_TIME */
	__u32 pid, tid;
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 flags;
	__u8 pad;
	__u16 attrs_size;	/* attrs' bytes (then the entry is uevent_bpf_ctx_id_attrs) */
	__u8 pad2[4];
};

/* ... and with the record's attributes (attrs_data), when it has any. */
struct uevent_bpf_ctx_id_attrs {
	struct uevent_bpf_ctx_id id;
	__u8 attrs[UEVENT_BPF_CTX_ATTRS];
};

#endif
