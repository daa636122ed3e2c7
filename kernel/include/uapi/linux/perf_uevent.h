/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * perf_uevent.h - the perf ABI added by libuevent's kernel series.
 *
 * The same file is added to the kernel by kernel/patches/ and compiled into libuevent,
 * so the numbers below exist exactly once. None of them collides with Linux 6.12, and
 * each is chosen at the far end of its space so that mainline growth does not reach it.
 * A running kernel reports the values it speaks through PR_PERF_UEVENT_QUERY; user space
 * should use those and treat the macros here as the values of this header's version.
 */
#ifndef _UAPI_LINUX_PERF_UEVENT_H
#define _UAPI_LINUX_PERF_UEVENT_H

#include <linux/types.h>

/*
 * prctl(PR_TASK_PERF_UEVENT, type, size, data, flags)
 *
 * Emits a PERF_RECORD_UEVENT into every perf buffer that observes the calling task
 * (per-task or per-CPU) through an event with attr.uevents set. Returns the number
 * of buffers written when the caller is perfmon_capable(), else 0 (whether anyone
 * watches a task is not the task's to learn), or -1 with errno:
 *   EINVAL  flags has unknown bits, or asks for an unknown format version
 *   E2BIG   size > the kernel's max_payload
 *   EFAULT  data is NULL or not a user address (always checked), or not readable
 *           for size bytes (checked when someone listens: the payload is only
 *           copied then)
 *
 * A magic option number in the style of PR_SET_VMA ("UEVT"): the seed's 43 is
 * PR_MPX_ENABLE_MANAGEMENT in mainline.
 */
#define PR_TASK_PERF_UEVENT		0x55455654

/*
 * prctl(PR_PERF_TLS_AREA, addr, size, 0, 0)
 *
 * Registers the calling thread's context area, the bytes PERF_SAMPLE_TLS_USER dumps
 * into the thread's samples: the first min(size, attr.sample_tls_user) bytes at addr,
 * read when the sample is taken. addr = size = 0 unregisters; a thread without an area
 * gets empty dumps (size 0). Per thread, like rseq: a thread made by clone(CLONE_VM)
 * starts without one, fork()'s child keeps its parent thread's (its copy of the same
 * memory), execve() drops it. Returns 0, or -1 with errno:
 *   EINVAL  arg4 or arg5 not 0; addr or size not a multiple of 8; size 0 with an
 *           addr, or size above PERF_SAMPLE_TLS_USER_MAX
 *   EFAULT  [addr, addr + size) is not a user address range
 * The area is not read at registration: if it is unmapped when a sample is taken,
 * the dump's dyn_size says how much could be read. "UETA", next to "UEVT".
 */
#define PR_PERF_TLS_AREA		0x55455441

/* flags (arg5) */
#define PR_PERF_UEVENT_QUERY		(1UL << 0)	/* fill struct perf_uevent_abi at data */
#define PR_PERF_UEVENT_ENABLE_WORD	(1UL << 1)	/* register the enable word at data */
#define PR_PERF_UEVENT_UNREG_WORD	(1UL << 2)	/* unregister it */
#define PR_PERF_UEVENT_FORMAT_SHIFT	8		/* bits 8..15: format, 0 = current */
#define PR_PERF_UEVENT_FORMAT_MASK	(0xffUL << PR_PERF_UEVENT_FORMAT_SHIFT)
#define PR_PERF_UEVENT_FORMAT(v)	((unsigned long)(v) << PR_PERF_UEVENT_FORMAT_SHIFT)

/* perf_event_header.type of a uevent record; 11 (the seed's) is PERF_RECORD_AUX. */
#define PERF_RECORD_UEVENT		63

/* Record formats; the format word sits at the same offset in every format. */
#define PERF_UEVENT_FORMAT_V1		1
#define PERF_UEVENT_FORMAT_CURRENT	PERF_UEVENT_FORMAT_V1

/* Largest payload the prctl accepts, in bytes (the seed's PAGE_SIZE on x86-64). */
#define PERF_UEVENT_MAX_PAYLOAD		4096

/* attr.uevents is this bit of the u64 flags word at offset 40 of perf_event_attr. */
#define PERF_ATTR_UEVENTS_BIT		63

/* PERF_SAMPLE_TLS_USER is 1 << this; attr.sample_tls_user takes __reserved_2. */
#define PERF_SAMPLE_TLS_USER_BIT	25

/*
 * Largest attr.sample_tls_user perf_event_open() accepts (with PERF_SAMPLE_TLS_USER it
 * must also be a non-zero multiple of 8): half of what a u16-sized sample can hold, so
 * the rest stays for registers, call chains and the stack dump.
 */
#define PERF_SAMPLE_TLS_USER_MAX	32768

/*
 * PERF_SAMPLE_TLS_USER is read on the way back to user space, never in the sample:
 * the sample's part is
 *
 *	{ u64	size;		   0: no dump (no area, no user context, cross-task)
 *	  u64	cookie; }	   only when size == PERF_TLS_USER_DEFERRED
 *
 * and the area, read once per kernel entry (faultable), follows in the buffers that
 * watch the task as
 *
 *	struct {
 *		struct perf_event_header	header;	   type PERF_RECORD_TLS_USER_DEFERRED
 *		__u32				pid, tid;
 *		__u64				cookie;	   that of the samples it completes
 *		__u64				size;	   min(area size, attr.sample_tls_user)
 *		__u8				data[size];
 *		__u64				dyn_size;  bytes read; the rest is zero
 *		struct sample_id		sample_id; if attr.sample_id_all
 *	};
 *
 * A reader joins samples and records by pid, tid and cookie (the record may come on
 * another CPU's buffer when the task migrated). Kernels before this wrote the dump
 * in the sample ({ u64 size; u8 data[size]; u64 dyn_size } with size <= 32768), which
 * the size word tells apart. 62: under PERF_RECORD_UEVENT, far from mainline's types.
 */
#define PERF_TLS_USER_DEFERRED		(~(__u64)0)
#define PERF_RECORD_TLS_USER_DEFERRED	62

/*
 * PERF_RECORD_UEVENT, format 1. The first two words after the header are the same
 * in every format (the review of the seed asked for a version at a known offset):
 *
 *	struct {
 *		struct perf_event_header	header;
 *		__u32				format;	   PERF_UEVENT_FORMAT_V1
 *		__u32				size;	   payload bytes
 *		__u32				type;	   caller's type, opaque to the kernel
 *		__u32				flags;	   0 in format 1
 *		__u8				data[size];
 *		__u8				__pad[-size & 7];
 *		struct sample_id		sample_id; if attr.sample_id_all
 *	};
 *
 * A parser that meets an unknown format skips the record by header.size.
 */
struct perf_uevent_record_v1 {
	__u32	format;
	__u32	size;
	__u32	type;
	__u32	flags;
};

/* What PR_PERF_UEVENT_QUERY fills in: min(size argument, sizeof) bytes are written. */
struct perf_uevent_abi {
	__u32	size;			/* sizeof(struct perf_uevent_abi) of the kernel */
	__u32	format;			/* highest PERF_UEVENT_FORMAT_* understood */
	__u32	record_type;		/* PERF_RECORD_UEVENT */
	__u32	max_payload;		/* bytes */
	__u32	attr_uevents_bit;	/* PERF_ATTR_UEVENTS_BIT */
	__u32	sample_tls_user_bit;	/* PERF_SAMPLE_TLS_USER_BIT, or ~0U without it */
	/*
	 * Events with attr.uevents set, system-wide, now; reported to
	 * perfmon_capable() callers only (0 for others).
	 */
	__u32	listeners;
	__u32	features;		/* PERF_UEVENT_FEAT_* */
};

/* perf_uevent_abi.features (0 in kernels before PR_PERF_TLS_AREA) */
#define PERF_UEVENT_FEAT_TLS_AREA	(1U << 0)	/* PR_PERF_TLS_AREA is there */
#define PERF_UEVENT_FEAT_ENABLE_WORD	(1U << 1)	/* PR_PERF_UEVENT_ENABLE_WORD is there */
#define PERF_UEVENT_FEAT_TLS_DEFERRED	(1U << 2)	/* PERF_RECORD_TLS_USER_DEFERRED */

/*
 * prctl(PR_TASK_PERF_UEVENT, bit, 0, addr, PR_PERF_UEVENT_ENABLE_WORD)
 * prctl(PR_TASK_PERF_UEVENT, bit, 0, addr, PR_PERF_UEVENT_UNREG_WORD)
 *
 * Registers (unregisters) an enable word of the calling process: the kernel sets bit
 * (0..31) of the u32 at addr while an enabled event with attr.uevents would get the
 * process's records (a per-task event on one of its threads, an inherited one in a
 * thread's context, a per-CPU one without a cgroup, or a per-CPU one of a cgroup one
 * of its threads is in) and clears it when the last goes away, as user_events does
 * with enable_addr. The word is written, with an atomic or/and-not of the one bit (the
 * other 31 bits stay user space's), before the perf_event_open(), ioctl() or close()
 * that changes it returns, unless writing it needs a page fault that waits (a page
 * swapped out, on a slow file system, under userfaultfd): then a kernel worker faults
 * it in and writes it a little later, and nothing waits for it. Registration writes the current
 * state at once (faulting the page in); registering the same addr and bit again only
 * does that. Unregistering leaves the word as it is.
 *
 * Per process (thread group), up to 64 (addr, bit) pairs: one per copy of a library
 * the process maps. fork()'s child (a new process with its own memory) keeps them, its
 * bits computed for the child before fork() returns; a CLONE_VM child without
 * CLONE_THREAD (vfork, posix_spawn) gets none. execve() drops them. Returns 0, or -1
 * with errno:
 *   EINVAL  size not 0; addr 0 or not 4-byte aligned; bit above 31; other flags
 *   EFAULT  addr not a user address, or the word could not be written now
 *   ENOSPC  the process holds 64 registrations already
 *   ENOENT  (unregistering) addr and bit are not registered
 * Once registered, a word that becomes unwritable (unmapped, made read-only) is skipped
 * without an error; the next write that succeeds makes it right again.
 */

#endif /* _UAPI_LINUX_PERF_UEVENT_H */
