/* session.c - the live perf session as an object: its readers' entry and exit, the
 * wait in __next() around the read path (session-fill, -order, -decode, -filter), the
 * recording's start, stats, shutdown and close. Set-up is session-open.c. */
#include "config.h"

#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "internal.h"
#include "perf-internal.h"
#include "bpf-context.h"
#include "session-internal.h"

/*
 * A reader (__next(), __read_batch(), __snapshot()) counts itself in, so that a
 * __close() in another thread frees nothing until it has left: -ECANCELED once the
 * session is shut down.
 */
static int reader_enter(struct uevent_session *s)
{
	int shut;

	pthread_mutex_lock(&s->lock);
	shut = s->shut;
	if (!shut)
		s->readers++;
	pthread_mutex_unlock(&s->lock);
	return shut ? -ECANCELED : 0;
}

static void reader_leave(struct uevent_session *s)
{
	pthread_mutex_lock(&s->lock);
	if (!--s->readers && s->shut)
		pthread_cond_broadcast(&s->left);
	pthread_mutex_unlock(&s->lock);
}

static int is_shut(struct uevent_session *s)
{
	return __atomic_load_n(&s->shut, __ATOMIC_ACQUIRE);
}

/* The lost records of every event, as the kernel counts them now. */
uint64_t _uevent_session_lost_counted(const struct uevent_session *s)
{
	uint64_t v[2], sum = 0;
	size_t i;

	if (!s->lost_fmt)
		return 0;
	for (i = 0; i < s->nfds; i++)
		if (read(s->fds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v[1];
	return sum;
}

UEVENT_EXPORT unsigned int uevent_session__transports(const struct uevent_session *s)
{
	return s ? s->transports : 0;
}

UEVENT_EXPORT int uevent_session__nr_events(const struct uevent_session *s)
{
	return s ? s->nev : _uevent_err(EINVAL);
}

UEVENT_EXPORT const char *uevent_session__event_name(const struct uevent_session *s, int i)
{
	if (!s || i < 0 || i >= s->nev) {
		errno = EINVAL;
		return NULL;
	}
	return s->ev_name[i];
}

UEVENT_EXPORT int uevent_session__pid(const struct uevent_session *s)
{
	if (!s)
		return _uevent_err(EINVAL);
	return s->o.pid > 0 ? s->o.pid : -1;
}

static int ioctl_all(struct uevent_session *s, unsigned long req)
{
	size_t i;

	if (!s)
		return _uevent_err(EINVAL);
	for (i = 0; i < s->nfds; i++)
		if (ioctl(s->fds[i], req, 0) < 0)
			return _uevent_err(errno);
	return 0;
}

UEVENT_EXPORT int uevent_session__enable(struct uevent_session *s)
{
	int err = ioctl_all(s, PERF_EVENT_IOC_ENABLE);

	if (!err)
		s->disabled = 0;
	return err;
}

UEVENT_EXPORT int uevent_session__disable(struct uevent_session *s)
{
	int err = ioctl_all(s, PERF_EVENT_IOC_DISABLE);

	if (!err)
		s->disabled = 1;
	return err;
}

UEVENT_EXPORT int uevent_session__fd(const struct uevent_session *s)
{
	return s ? s->epfd : _uevent_err(EINVAL);
}

/* Makes *buf (of *cap bytes) hold at least need bytes, doubling from 64 KiB. */
int _uevent_grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 65536;
	uint8_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/* The longest a reader blocked in __next() leaves records in the rings. */
#define POLL_MS		100

UEVENT_EXPORT int uevent_session__snapshot(struct uevent_session *s)
{
	int ret;

	if (!s || !(s->o.flags & UEVENT_SESSION_OVERWRITE))
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = _uevent_session_snapshot(s);
	reader_leave(s);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

/* A record of s->buf at off, decoded into rec: 1 = return it, 0 = skip it. */
static int deliver(struct uevent_session *s, uint32_t off, struct uevent_perf_record *rec)
{
	int kind;

	if (_uevent_session_decode(s, off, rec, &kind) < 0)
		return 0;
	_uevent_session_tls_join(s, rec);	/* a deferred TLS dump (tls-deferred.c) */
	return _uevent_session_keep(s, rec, kind);
}

/*
 * What an epoll_wait() of the session's rings returned: counted, and each ring whose
 * task is gone (EPOLLHUP) no longer polled (its caller drains it once more). How many
 * rings that stopped.
 */
int _uevent_session_woken(struct uevent_session *s, const struct epoll_event *evs, int n)
{
	int i, gone = 0;

	if (n > 0)
		s->st.wakeups++;
	for (i = 0; i < n; i++) {
		struct ring *r;

		if (evs[i].data.u32 == WAKE_EV)
			continue;	/* shut down: the caller's loop returns */
		r = &s->rings[evs[i].data.u32];
		if ((evs[i].events & EPOLLHUP) && r->live) {
			r->live = 0;
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, r->fd, NULL);
			gone++;
		}
	}
	return gone;
}

static int64_t now_ms(void)
{
	return (int64_t)(_uevent_now_ns() / 1000000);
}

static int session_next(struct uevent_session *s, struct uevent_perf_record *rec, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	int err, filled = 0, settled = 0;

	for (;;) {
		struct epoll_event evs[16];
		int n, i, wait;

		int live = 0, held, polled;

		if (is_shut(s))
			return -ECANCELED;
		while (s->qi < s->qready) {
			if (deliver(s, s->q[s->qi++].what, rec)) {
				s->st.records++;
				return 1;
			}
		}
		for (i = 0; i < s->nr_rings; i++)
			live += s->rings[i].live;
		if (s->o.flags & UEVENT_SESSION_OVERWRITE) {
			/* flight recorder: only __snapshot() reads the rings */
		} else if (!live) {
			/* every task is gone: nothing more can come, so nothing need wait */
			if (!filled) {
				err = _uevent_session_fill(s, 1);
				if (err < 0)
					return err;
				filled = 1;
				if (s->qready > s->qi)
					continue;
			}
		} else if (!filled || timeout_ms) {
			err = _uevent_session_fill(s, 0);
			if (err < 0)
				return err;
			filled = 1;
			if (s->qready > s->qi)
				continue;
		}
		if (s->rec.fd >= 0 && _uevent_rec_flush(&s->rec) < 0)
			return s->rec.err;
		held = s->qn > s->qready;
		if (held && timeout_ms == 0 && !settled) {
			/*
			 * Do not wait for new records, but let the ones already here settle:
			 * after the margin the next round gives them out in order.
			 */
			uint64_t ready_at = s->q[s->qready].time + HOLD_MARGIN_NS, now = _uevent_now_ns();

			if (ready_at > now) {
				uint64_t ns = ready_at - now < HOLD_MARGIN_NS ? ready_at - now
									  : HOLD_MARGIN_NS;
				struct timespec ts = { 0, (long)ns };

				nanosleep(&ts, NULL);
			}
			settled = 1;
			filled = 0;
			continue;
		}
		if (timeout_ms == 0 || !live)
			return 0;
		wait = timeout_ms < 0 ? -1 : (int)(deadline - now_ms());
		if (timeout_ms > 0 && wait <= 0)
			return 0;
		/* records held back go out once the margin has passed */
		if (held && (wait < 0 || wait > (int)(HOLD_MARGIN_NS / 2000000)))
			wait = (int)(HOLD_MARGIN_NS / 2000000);
		/* with wakeup_events > 1 marks wait in the rings: look every so often */
		polled = wait < 0 || wait > POLL_MS;
		if (polled)
			wait = POLL_MS;
		n = epoll_wait(s->epfd, evs, 16, wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0 && !held && !polled)
			return 0;
		if (_uevent_session_woken(s, evs, n))
			filled = 0;
	}
}

UEVENT_EXPORT int uevent_session__next(struct uevent_session *s, struct uevent_perf_record *rec,
				       int timeout_ms)
{
	int ret;

	if (!s || !rec)
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = session_next(s, rec, timeout_ms);
	reader_leave(s);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

/*
 * Recording only: the rings copied to the recording as they are (session-drain.c). With
 * BPF-made trace contexts the records are decoded to be written (their context joined):
 * __next()'s path, each record counted as written.
 */
UEVENT_EXPORT int uevent_session__drain(struct uevent_session *s, int timeout_ms)
{
	struct uevent_perf_record rec = { .sz = sizeof(rec) };
	int ret, n = 0;

	if (!s || s->rec.fd < 0 || (s->o.flags & UEVENT_SESSION_OVERWRITE))
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	if (!s->bpf_ctx) {
		ret = _uevent_session_drain(s, timeout_ms);
	} else {
		while ((ret = session_next(s, &rec, n ? 0 : timeout_ms)) > 0 && ++n < 65536)
			;
		if (ret >= 0)
			ret = n;
	}
	reader_leave(s);
	return ret < 0 ? _uevent_err(-ret) : ret;
}

UEVENT_EXPORT int uevent_session__read_batch(struct uevent_session *s,
					     struct uevent_sample_batch *samples,
					     struct uevent_record_batch *uevents, int timeout_ms)
{
	int ret;

	if (!s)
		return _uevent_err(EINVAL);
	ret = reader_enter(s);
	if (ret < 0)
		return _uevent_err(-ret);
	ret = _uevent_session_batch(s, samples, uevents, timeout_ms);
	reader_leave(s);
	return ret;
}

UEVENT_EXPORT int uevent_session__stats(const struct uevent_session *s,
					struct uevent_session_stats *st, size_t sz)
{
	struct uevent_session_stats now;

	if (!s || !st)
		return _uevent_err(EINVAL);
	now = s->st;
	now.lost_counted = _uevent_session_lost_counted(s);
	memset(st, 0, sz);
	memcpy(st, &now, sz < sizeof(now) ? sz : sizeof(now));
	return 0;
}

/*
 * What the session reads, recorded to fd as it is read: its events as the writer
 * (session-record.c) describes them, each with the ids of our own object's events.
 */
UEVENT_EXPORT int uevent_session__record_to(struct uevent_session *s, int fd)
{
	struct _uevent_rec_event ev[K_COUNT];
	uint64_t *ids;
	size_t i, at = 0;
	int k, n = 0, err;

	if (!s || fd < 0)
		return _uevent_err(EINVAL);
	if (s->rec.fd >= 0)
		return _uevent_err(EBUSY);
	ids = malloc((s->nids ? s->nids : 1) * sizeof(*ids));
	if (!ids)
		return _uevent_err(ENOMEM);
	for (k = 0; k < K_COUNT; k++) {
		if (!s->want[k])
			continue;
		memset(&ev[n], 0, sizeof(ev[n]));
		_uevent_session_make_attr(s, k, s->config[k], &ev[n].attr);
		_uevent_bpf_ctx_rec_attr(s, k, &ev[n].attr);
		ev[n].name = s->ev_name[s->kind_ev[k]];
		ev[n].ids = ids + at;
		for (i = 0; i < s->nids; i++)
			if (s->ids[i].kind == k && !s->ids[i].obj)
				ids[at++] = s->ids[i].id;
		ev[n].nids = (size_t)(ids + at - ev[n].ids);
		ev[n].tp_format = s->tp_format[k];
		ev[n].tp_system = is_usdt(k) ? _UEVENT_USDT_FILE_GROUP : "user_events";
		ev[n].usdt = is_usdt(k);
		n++;
	}
	err = _uevent_rec_start(&s->rec, fd, ev, n);
	free(ids);
	return err < 0 ? _uevent_err(-err) : 0;
}

UEVENT_EXPORT int uevent_session__shutdown(struct uevent_session *s)
{
	uint64_t one = 1;

	if (!s)
		return _uevent_err(EINVAL);
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->shut, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	/* the counter stays readable: every later wait ends at once too */
	if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return _uevent_err(errno);
	return 0;
}

/* What the session holds that is not a kernel object. */
void _uevent_session_free(struct uevent_session *s)
{
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->left);
	free(s);
}

UEVENT_EXPORT void uevent_session__close(struct uevent_session *s)
{
	size_t i;
	int j, cancel;

	if (!s)
		return;
	/* a thread cancelled in here would leave the session half freed, its events in */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* a reader in another thread returns (-ECANCELED) before anything goes */
	uevent_session__shutdown(s);
	pthread_mutex_lock(&s->lock);
	while (s->readers)
		pthread_cond_wait(&s->left, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->rec.fd >= 0) {
		/* the lost records whose LOST record never came (see _uevent_rec_end) */
		uint64_t counted = _uevent_session_lost_counted(s);

		_uevent_rec_end(&s->rec, counted > s->st.lost && s->nids ? counted - s->st.lost : 0,
				s->nids ? s->ids[0].id : 0);
	}
	for (j = 0; j < s->nr_rings; j++)
		if (s->rings[j].base && s->rings[j].base != MAP_FAILED)
			munmap(s->rings[j].base, s->rings[j].map_size);
	for (i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	_uevent_bpf_ctx_close(s->bpf_ctx);
	for (i = 0; i < s->nprocs; i++)
		_uevent_proc_close(&s->procs[i]);
	free(s->procs);
	for (i = 0; i < (size_t)s->nobjs; i++) {
		for (j = 0; j < USDT_CLASSES; j++)
			free(s->objs[i].format[j]);
		_uevent_usdt_obj_put(&s->objs[i]);
	}
	free(s->objs);
	free(s->plain);
	if (s->user_fd >= 0)
		close(s->user_fd);
	free(s->rings);
	free(s->fds);
	free(s->ids);
	free(s->buf);
	free(s->hold);
	free(s->q);
	free(s->rec.buf);
	for (j = 0; j < K_COUNT; j++)
		free(s->tp_format[j]);
	_uevent_session_free(s);
	pthread_setcancelstate(cancel, NULL);
}
