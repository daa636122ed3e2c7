/* transport.h - the transports, each behind the same {open, write, close}, a file each. */
#ifndef UEVENT_TRANSPORT_H
#define UEVENT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A transport's state. emit.c publishes the active transport with one atomic store;
 * its state is written before and not changed while active, so the emit path reads it
 * without a lock. File descriptors are closed only by uevent_close() and at fork; the
 * file transport's reopen and close change its fd under its writers' queue instead.
 */
struct _uevent_tstate {
	int fd;			/* user_events_data, trace_marker_raw, or the file */
	uint32_t write_index;	/* user_events */
	int registered;		/* user_events, prctl: the kernel holds an enabler on our word */
	uint32_t max_payload;
	pid_t pid;		/* process the state belongs to (fork detection) */
	int told;		/* prctl: the kernel says how many buffers took a mark */
};

struct _uevent_transport_ops {
	/* Opens ts (path: for the file transport); 0, or -errno with the reason set. */
	int (*open)(struct _uevent_tstate *ts, const char *path);
	/*
	 * Opens path in place of what ts has open in this process, while threads may be
	 * emitting through it (NULL: a transport open stays as it is); 0, or -errno with
	 * the reason set and ts unchanged.
	 */
	int (*reopen)(struct _uevent_tstate *ts, const char *path);
	/*
	 * Hands one mark over (size within max_payload, data valid; word: the enabled word
	 * as emit.c read it): 0 delivered, 1 nobody listened, or -errno (counted dropped).
	 */
	int (*write)(struct _uevent_tstate *ts, uint32_t type, const void *data, size_t size,
		     uint32_t word);
	/* Gives up what open took; the fd is closed by the caller unless close set it to
	 * -1 itself. NULL: nothing more. */
	void (*close)(struct _uevent_tstate *ts);
	int always;		/* delivers with no listener check (the word's ALWAYS bit) */
};

extern const struct _uevent_transport_ops _uevent_prctl_ops, _uevent_user_events_ops,
	_uevent_usdt_ops, _uevent_ftrace_ops, _uevent_file_ops;

/* What an open chose or refused: said on the calling thread's reason channel. */
void _uevent_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define _uevent_set_reason _uevent_reason

/* Opens tracefs file name for transport tname; 0 with *fdp, or -errno (reason set). */
int _uevent_tracefs_open(const char *name, int flags, int *fdp, const char *tname);

/* The usdt probe sites: a tap for any tracer, whatever the transport (transport-usdt.c). */
void _uevent_usdt_fire(uint32_t type, const void *data, size_t size);

/* A record's tid: cached per thread, the kernel's answer in a vfork child (emit.c). */
pid_t _uevent_tid(pid_t pid, pid_t owner);

#endif
