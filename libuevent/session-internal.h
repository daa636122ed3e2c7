/* session-internal.h - the session object, shared by the files of its read path
 * (session-fill, -order, -decode, -filter) and of its set-up (-open, -follow, -uprobes). */
#ifndef UEVENT_SESSION_INTERNAL_H
#define UEVENT_SESSION_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <linux/perf_event.h>

#include "internal.h"
#include "rec-writer.h"

/* The size-class probes of emit.c, each a kind of event of its own (its raw layout). */
#define USDT_CLASSES _UEVENT_USDT_NCLASSES
/*
 * The usdt events' group in a recorded file: the tracefs group (libuevent_PID_N, one
 * per session) would name them differently in each run.
 */
#define _UEVENT_USDT_FILE_GROUP "libuevent"
extern const uint32_t _uevent_usdt_class_size[USDT_CLASSES];
extern const char *const _uevent_usdt_class_name[USDT_CLASSES];

enum kind { K_DUMMY, K_USDT, K_USDT_LAST = K_USDT + USDT_CLASSES - 1, K_USER, K_SAMPLES,
	    K_COUNT };

static inline int is_usdt(int k)
{
	return k >= K_USDT && k <= K_USDT_LAST;
}

struct ring {
	int fd;
	void *base;
	size_t map_size;
	int live;
	int cpu;
	int data;			/* a ring with marks or samples in it */
};

struct idmap {
	uint64_t id;
	int kind;
	int obj;			/* usdt kinds: the object whose events (0: ours) */
	uint64_t alias;			/* obj > 0: an id of ours of the same kind */
};

/*
 * An object (executable or library) a watched process mapped, with or without
 * libuevent's probes; object 0 is the session's own (its libuevent or usdt_path).
 */
struct usdt_obj {
	uint32_t maj, min;
	uint64_t ino;
	int probes;			/* it has the size-class probes */
	int mapped;			/* a watched process mapped it */
	char group[64];			/* its uprobe events' group */
	unsigned int events;		/* 1 << class: uprobe events added to the group */
	uint64_t config[USDT_CLASSES];
	char *format[USDT_CLASSES];	/* objects > 0: their events' formats */
	struct ev_group *grp;		/* the process's group whose events these are */
};

static inline int idcmp(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct uevent_session {
	struct uevent_session_opts o;
	unsigned int transports;
	int epfd;
	/*
	 * Closing from another thread (see uevent.h): __shutdown() sets shut and makes
	 * wake_fd (in the epoll set) readable, which ends a reader's wait; __close() then
	 * waits for readers (the threads inside __next(), __read_batch(), __snapshot())
	 * to be none before it frees anything.
	 */
	int wake_fd;
	int shut;
	int readers;
	pthread_mutex_t lock;
	pthread_cond_t left;
	int *fds;
	size_t nfds, fds_cap;
	struct ring *rings;
	int nr_rings;
	struct idmap *ids;
	size_t nids, ids_cap;
	struct uevent_perf_format fmt[K_COUNT];	/* usdt and user_events: fmt.raw set */
	char usdt_group[64];
	char usdt_path[PATH_MAX];	/* our object's */
	struct usdt_obj *objs;
	int nobjs, objs_cap;
	/* files looked at and found without our probes: no object slot of their own (a
	 * process maps far more of those than the 32 objects a mask can cover) */
	struct usdt_file { uint32_t maj, min; uint64_t ino; } *plain;
	size_t nplain, plain_cap;
	int user_fd;
	uint32_t user_word;
	uint8_t *buf;
	size_t buf_len, buf_cap;
	struct _uevent_timed *q;	/* .what: a record's offset in buf */
	size_t qn, qi, q_cap;
	size_t qready;			/* q[qi..qready) may go out; the rest waits a round */
	uint8_t *hold;			/* records held back, while the rings are read again */
	size_t hold_cap;
	struct uevent_session_stats st;
	int lost_fmt;			/* the events count their lost records (read(2)) */
	int disabled;			/* events opened later start so (see __enable) */
	char reason[512];
	/*
	 * The usdt events are the watched tasks', inherited by their children, so the
	 * kernel installs the probes only in those processes. But on Linux 6.18 a child's
	 * inherited uprobe events stop matching it when other processes of the tree exec
	 * or exit: the kernel then removes the probes from the live child, whose marks go
	 * unheard (`perf record -e sdt_...` loses them alike). An event of our own on the
	 * child, disabled (it samples nothing), keeps the probes in: one per class for
	 * each process the dummy event's FORK records announce, closed at its EXIT.
	 */
	int anchor_tree;
	/*
	 * Set-up a read may call for, and the read path's one way into it: FORK, EXIT and
	 * MMAP2 records just read go here when the session follows a process tree.
	 */
	void (*follow)(struct uevent_session *s, const uint8_t *rec);
	struct proc {
		uint32_t pid;
		uint32_t cov;		/* 1 << object whose usdt events it has */
		int *fd;		/* anchors */
		int nfd;
	} *procs;
	size_t nprocs, procs_cap;
	/* what the events are, for recording: config and tracepoint format per kind */
	uint64_t config[K_COUNT];
	int want[K_COUNT];
	char *tp_format[K_COUNT];
	/* the events as samples number them (event_index): the wanted kinds, in order */
	char ev_name[K_COUNT][96];
	int kind_ev[K_COUNT];		/* kind -> event number, -1 unwanted */
	int nev;
	/* uevent_session__record_to(): the pipe-mode perf.data being written */
	struct _uevent_rec rec;
	struct _uevent_bpf_ctx *bpf_ctx;	/* UEVENT_SESSION_CONTEXT by BPF (bpf-context.c) */
};

/* The session's entry for event id, or NULL. */
static inline const struct idmap *idmap_find(const struct uevent_session *s, uint64_t id)
{
	struct idmap key = { id, 0, 0, 0 };

	return bsearch(&key, s->ids, s->nids, sizeof(*s->ids), idcmp);
}

/* The kind of event id (-1: not the session's). */
static inline int kind_of(const struct uevent_session *s, uint64_t id)
{
	const struct idmap *f = idmap_find(s, id);

	return f ? f->kind : -1;
}

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1u << 4)
#endif

/* The epoll data of the session's wake_fd (the rings' are their index). */
#define WAKE_EV	UINT32_MAX

/*
 * Records go out in time order across read rounds: a record stamped before the round
 * began (less a margin for the gap between the kernel's timestamp and its commit to
 * the ring) cannot still be on its way, so those go out now; later ones wait for the
 * next round, which sorts them with whatever came meanwhile.
 */
#define HOLD_MARGIN_NS	2000000ull

/* The read path's buffer, with room for more bytes after what it holds. */
static inline int buf_reserve(struct uevent_session *s, size_t more)
{
	return _uevent_grow(&s->buf, &s->buf_cap, s->buf_len + more);
}

#define BASE_ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/*
 * The read path, in the order __next() takes it: fill (every ring into s->buf), order
 * (indexed by time, some held back), decode, filter. Set-up a read calls for goes
 * through s->follow only.
 */
int _uevent_session_fill(struct uevent_session *s, int all);	/* session-fill.c */
int _uevent_session_snapshot(struct uevent_session *s);
size_t _uevent_rec_len(const uint8_t *r, const struct perf_event_header *h); /* -order.c */
int _uevent_session_index(struct uevent_session *s, uint64_t watermark);
uint64_t _uevent_session_rec_time(const struct uevent_session *s, const uint8_t *r); /* 0: none */
/* The same of record r (size: its own bytes, of type) of event kind (-1: not ours). */
uint64_t _uevent_session_time_of(const struct uevent_session *s, const uint8_t *r, size_t size,
				 uint32_t type, int kind);
int _uevent_session_keep_held(struct uevent_session *s);
int _uevent_session_decode(struct uevent_session *s, uint32_t off,	/* session-decode.c */
			   struct uevent_perf_record *rec, int *kind);
int _uevent_session_keep(struct uevent_session *s,			/* session-filter.c */
			 const struct uevent_perf_record *rec, int kind);

/* session-drain.c: the rings to the recording as they are (uevent_session__drain) */
int _uevent_session_drain(struct uevent_session *s, int timeout_ms);

/* session.c: the object */
uint64_t _uevent_session_lost_counted(const struct uevent_session *s);
struct epoll_event;
/* an epoll_wait()'s events counted, gone tasks' rings unpolled: how many */
int _uevent_session_woken(struct uevent_session *s, const struct epoll_event *evs, int n);
void _uevent_session_free(struct uevent_session *s);

/* session-open.c: set-up; the reason a step gives, after those before it */
void _uevent_add_reason(struct uevent_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void _uevent_session_make_attr(const struct uevent_session *s, int kind, uint64_t config,
			       struct perf_event_attr *a);
int _uevent_list_tasks(int pid, int **out);
int _uevent_push_fd(struct uevent_session *s, int fd, int kind);

/* bpf-context.c, for the session: picks how samples get their context (0), or -errno
 * and why not */
int _uevent_session_context(struct uevent_session *s, char *why, size_t n);

/* session-follow.c: the process tree and what it maps (sets s->follow) */
int _uevent_follow_start(struct uevent_session *s, uint32_t pid);
void _uevent_usdt_maps(struct uevent_session *s, uint32_t pid);
void _uevent_proc_close(struct proc *pr);

/* session-uprobes.c: an object's uprobe events */
struct usdt_obj *_uevent_usdt_obj_get(struct uevent_session *s, uint32_t maj, uint32_t min,
				      uint64_t ino, int *created);
int _uevent_usdt_obj_events(struct uevent_session *s, struct usdt_obj *o, const char *path);
void _uevent_usdt_obj_put(struct usdt_obj *o);
void _uevent_usdt_reap(void);

#endif
