/* file-edges.c - the file transport when a fork or a signal handler's mark lands in the
 * middle of its work: an open, a short write and its undo, a wait for the writer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "files.h"
#include "uevent.h"

#define MAIN_TYPE	(UEVENT_TYPE_USER + 21)
#define SIG_TYPE	(UEVENT_TYPE_USER + 22)
#define CHILD_TYPE	(UEVENT_TYPE_USER + 23)
#define WAIT_S		30	/* a child that has not exited by then is stuck */

static char dir[64];

static int open_at(const char *p)
{
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = p,
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	return uevent_open(&o);
}

/* ---- a fork while another thread is inside uevent_open() ---- */

#define FORKS		2000
#define NAME_LEN	400

static char path_a[PATH_MAX], path_b[PATH_MAX], reason_a[512], reason_b[512];
static int forks_done;

/* How a child's reopen went, by its exit status. */
enum { REOPEN_WHOLE, REOPEN_FAILED, REOPEN_TORN, REOPEN_OTHER };

/* Forks; each child has opened again what the last uevent_open() named (atfork), and
 * says from its reason whether that was one of the two paths, whole. */
static void *forker(void *arg)
{
	int i, st, *by = arg;
	const char *r;
	pid_t pid;

	for (i = 0; i < FORKS; i++) {
		pid = fork();
		if (pid == 0) {
			r = uevent_reason();
			if (!strcmp(r, reason_a) || !strcmp(r, reason_b))
				_exit(REOPEN_WHOLE);
			/* "file: cannot open DIR/f/", then a path of neither */
			_exit(strncmp(r, reason_a, 18 + strlen(dir) + 3) ? REOPEN_OTHER : REOPEN_TORN);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) > REOPEN_OTHER)
			by[REOPEN_FAILED]++;
		else
			by[WEXITSTATUS(st)]++;
	}
	__atomic_store_n(&forks_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The main thread opens two paths by turns, as fast as it can, while another thread
 * forks: each child opens again what the last uevent_open() named. The paths differ in
 * every byte after "DIR/f/", and f is a file: each open fails at once (ENOTDIR), so
 * the copying of a path is a good part of each, and the reason names the path. A child
 * that read the name while it was being copied over the other names a third.
 */
static void test_fork_in_open(void)
{
	int by[REOPEN_OTHER + 1] = { 0 }, opens, fd;
	char f[PATH_MAX];
	pthread_t th;
	size_t n;

	snprintf(f, sizeof(f), "%s/f", dir);
	fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	n = (size_t)snprintf(path_a, sizeof(path_a), "%s/", f);
	memcpy(path_b, path_a, n);
	memset(path_a + n, 'a', NAME_LEN);
	memset(path_b + n, 'b', NAME_LEN);
	if (open_at(path_a) >= 0) {
		skip(1, "a path through a file opens");
		return;
	}
	snprintf(reason_a, sizeof(reason_a), "%s", uevent_reason());
	open_at(path_b);
	snprintf(reason_b, sizeof(reason_b), "%s", uevent_reason());
	if (!strstr(reason_a, path_a) || !strstr(reason_b, path_b)) {
		skip(1, "the reason does not name the path");
		return;
	}
	pthread_create(&th, NULL, forker, by);
	for (opens = 0; !__atomic_load_n(&forks_done, __ATOMIC_ACQUIRE); opens++)
		open_at(opens % 2 ? path_a : path_b);
	pthread_join(th, NULL);
	ok(by[REOPEN_WHOLE] == FORKS, "%d forks during %d opens: each child opened one of the "
	   "two paths again, whole (%d a torn one, %d another, %d failed)", FORKS, opens,
	   by[REOPEN_TORN], by[REOPEN_OTHER], by[REOPEN_FAILED]);
	unlink(f);
}

/* ---- libuevent's writev and ftruncate ---- */

/*
 * This program's writev takes the place of libc's for libuevent (the executable comes
 * first in symbol lookup), so a test can act at an exact point of a write: after a
 * short one (a handler's mark then), before one (the writer held there), or after a
 * batch of many records (held there, the rest of its list still to write).
 */
static int writev_calls;
static int short_armed;		/* the next short write raises SIGUSR1 */
static int block_armed;		/* the next write waits for a byte on block_pipe */
static int blocked;		/* a write is waiting there */
static int block_pipe[2];
static int hold_armed;		/* the next write of more than one record, once done, waits
				   there too: in a fork child of it, not */
static pid_t held_tid;		/* the thread that waits there */
static int held_iov;		/* the iovecs of its write */
static int in_child;		/* set in a fork child by the handler that forked */

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	size_t total = 0;
	ssize_t n;
	char c;
	int i;

	__atomic_add_fetch(&writev_calls, 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&block_armed, 0, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&blocked, 1, __ATOMIC_SEQ_CST);
		while (read(block_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		__atomic_store_n(&blocked, 0, __ATOMIC_SEQ_CST);
	}
	n = syscall(SYS_writev, fd, iov, iovcnt);
	if (iovcnt > 3 && __atomic_exchange_n(&hold_armed, 0, __ATOMIC_SEQ_CST)) {
		held_iov = iovcnt;
		__atomic_store_n(&held_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
		/* a handler's fork without SA_RESTART: the child goes on at once */
		while (read(block_pipe[0], &c, 1) < 0 && errno == EINTR &&
		       !__atomic_load_n(&in_child, __ATOMIC_SEQ_CST))
			;
	}
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (n > 0 && (size_t)n < total && __atomic_exchange_n(&short_armed, 0, __ATOMIC_SEQ_CST))
		raise(SIGUSR1);
	return n;
}

/* ... and its ftruncate, which cuts a torn record off: truncate_armed raises SIGUSR1
 * first. */
static int truncate_armed;

int ftruncate(int fd, off_t length)
{
	if (__atomic_exchange_n(&truncate_armed, 0, __ATOMIC_SEQ_CST))
		raise(SIGUSR1);
	return (int)syscall(SYS_ftruncate, fd, length);
}

/* ... and its close: close_armed names a descriptor whose close, once done, hands its
 * number to another file (dup2: as another thread's open would) and forks there. The
 * child says by its status whether that file survived the fork: 0 yes, 1 no. */
static int close_armed = -1, close_child = -1, close_sentinel = -1;

int close(int fd)
{
	int ret = (int)syscall(SYS_close, fd), st;
	pid_t pid;

	if (fd < 0 || !__atomic_compare_exchange_n(&close_armed, &fd, -1, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
		return ret;
	if (dup2(close_sentinel, fd) != fd)
		return ret;
	pid = fork();
	if (pid == 0) {		/* the number may be the child's re-open's by now */
		struct stat a, b;

		_exit(fstat(fd, &a) < 0 || fstat(close_sentinel, &b) < 0 ||
		      a.st_dev != b.st_dev || a.st_ino != b.st_ino);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		close_child = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
	syscall(SYS_close, fd);
	return ret;
}

/* Marks of each type in p, and whether the file reads to its end; with seen, how
 * often each MAIN_TYPE mark whose payload is an int below MANY names it. */
struct count {
	int main, sig, child, other, end_ok;
};

#define MANY		200	/* threads whose marks wait for one writer: over a batch */

static void count_each(const char *p, struct count *c, int *seen)
{
	struct uevent_file_reader *rd = uevent_file_reader__open(p);
	struct uevent_record r = { .sz = sizeof(r) };
	int ret = -1;

	memset(c, 0, sizeof(*c));
	while (rd && (ret = uevent_file_reader__next(rd, &r)) == 1) {
		if (r.type == MAIN_TYPE && seen && r.size == sizeof(int)) {
			int i;

			memcpy(&i, r.data, sizeof(i));
			if (i >= 0 && i < MANY)
				seen[i]++;
		}
		if (r.type == MAIN_TYPE)
			c->main++;
		else if (r.type == SIG_TYPE)
			c->sig++;
		else if (r.type == CHILD_TYPE)
			c->child++;
		else
			c->other++;
	}
	c->end_ok = ret == 0;
	if (rd)
		uevent_file_reader__close(rd);
}

static void count_marks(const char *p, struct count *c)
{
	count_each(p, c, NULL);
}

/* ---- a handler's mark between a short write and its undo ---- */

static struct rlimit fsize_was;
static int sig_ret = 1;

static void mark_after_short(int sig)
{
	uint8_t buf[64];
	int saved = errno;

	(void)sig;
	/* the space comes back: this record goes in whole, after the torn one's bytes */
	setrlimit(RLIMIT_FSIZE, &fsize_was);
	memset(buf, 0x5a, sizeof(buf));
	sig_ret = uevent_emit(SIG_TYPE, buf, sizeof(buf));
	errno = saved;
}

/*
 * Opens p (the file transport) and emits a 100-byte mark that RLIMIT_FSIZE cuts short,
 * 50 bytes past the file's end (its size before in *size), with handler on SIGUSR1 and
 * *arm set for this program's writev or ftruncate to raise it. The emit's result; 1
 * after skipping nskip when that cannot be set up.
 */
static int short_emit(const char *p, void (*handler)(int), int *arm, int nskip, off_t *size)
{
	struct sigaction sa;
	struct rlimit rl;
	struct stat sb;
	uint8_t buf[100];
	int ret;

	if (open_at(p) != UEVENT_TRANSPORT_FILE || stat(p, &sb) < 0 ||
	    getrlimit(RLIMIT_FSIZE, &fsize_was) < 0) {
		skip(nskip, "the file transport does not open");
		return 1;
	}
	*size = sb.st_size;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);
	rl = fsize_was;
	rl.rlim_cur = (rlim_t)sb.st_size + 50;	/* the record is longer */
	writev_calls = 0;
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0) {
		skip(nskip, "cannot set RLIMIT_FSIZE");
		return 1;
	}
	__atomic_store_n(arm, 1, __ATOMIC_SEQ_CST);
	memset(buf, 0x11, sizeof(buf));
	ret = uevent_emit(MAIN_TYPE, buf, sizeof(buf));
	__atomic_store_n(arm, 0, __ATOMIC_SEQ_CST);
	setrlimit(RLIMIT_FSIZE, &fsize_was);
	signal(SIGUSR1, SIG_DFL);
	return ret;
}

/*
 * A write cut short by RLIMIT_FSIZE, and a signal handler on the writer's thread whose
 * mark goes in (the limit raised) before the writer cuts the torn bytes off again (at
 * the writev's return, or inside the undo, before its ftruncate): the cut must not
 * take the handler's record, which its emit said is in the file. After the writev the
 * handler's record stays, and the torn bytes before it; inside the undo it fails.
 */
static void test_mark_before_undo(int in_undo)
{
	const char *what = in_undo ? "inside the undo" : "after the short writev";
	uint8_t sig_payload[64], *file;
	struct count c;
	char p[PATH_MAX];
	size_t len;
	off_t size;
	int ret;

	snprintf(p, sizeof(p), "%s/short-%d", dir, in_undo);
	sig_ret = 1;
	ret = short_emit(p, mark_after_short, in_undo ? &truncate_armed : &short_armed, 2, &size);
	if (ret == 1)
		return;
	if (!writev_calls || sig_ret == 1) {
		skip(2, "libuevent's writev and ftruncate are not this program's (a static link?)");
		return;
	}
	uevent_close();
	memset(sig_payload, 0x5a, sizeof(sig_payload));
	file = slurp(p, &len);
	count_marks(p, &c);
	/* EFBIG, or ENOSPC: the handler took the limit away again */
	if (!in_undo) {
		ok((ret == -EFBIG || ret == -ENOSPC) && sig_ret == 0, "%s: the short write fails "
		   "(%d), the handler's mark after it is written (%d)", what, ret, sig_ret);
		/* the handler's record: its payload, 16 bytes of sample id, the file's end */
		ok(file && len >= (size_t)size + 80 &&
		   !memcmp(file + len - 16 - sizeof(sig_payload), sig_payload,
			   sizeof(sig_payload)),
		   "%s: the undo cut none of the handler's record (%zu bytes after the %lld "
		   "there were)", what, len - (size_t)size, (long long)size);
	} else {
		ok((ret == -EFBIG || ret == -ENOSPC) && (sig_ret == -EFBIG || sig_ret == -ENOSPC),
		   "%s: the short write fails (%d), and the handler's mark, which the undo "
		   "would cut, too (%d)", what, ret, sig_ret);
		ok(len == (size_t)size && c.end_ok && !c.main && !c.sig,
		   "%s: the file is as it was, read to its end (%zu bytes, %lld before)", what,
		   len, (long long)size);
	}
	free(file);
	unlink(p);
}

/* ---- a fork from a handler on a thread that waits for the writer ---- */

/* Whether thread tid sleeps (its state S): in an emit, only the wait for the writer. */
static int sleeping(pid_t tid)
{
	char p[64], buf[512], *s;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/self/task/%d/stat", (int)tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	s = strrchr(buf, ')');
	return s && s[1] == ' ' && s[2] == 'S';
}

/* Waits for child up to WAIT_S; its exit status, or -1 (killed: it was stuck). */
static int reap(pid_t child)
{
	struct timespec ts = { 0, 1000000 };
	int st, i;

	for (i = 0; i < WAIT_S * 1000; i++) {
		if (waitpid(child, &st, WNOHANG) == child)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		nanosleep(&ts, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	return -1;
}

static char wait_path[PATH_MAX];
static pid_t waiter_tid, fork_child;
static __thread int forked_here;	/* in the child: the thread the fork was on */

/* A handler's fork: the child marked (it goes back into the emit it interrupted), the
 * parent told its pid. fork()'s result. */
static pid_t handler_fork(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		in_child = 1;
		forked_here = 1;
	} else {
		__atomic_store_n(&fork_child, pid, __ATOMIC_RELEASE);
	}
	return pid;
}

static void fork_in_handler(int sig)
{
	int saved = errno;

	(void)sig;
	handler_fork();
	errno = saved;
}

static void *writer_thread(void *arg)
{
	uint8_t buf[32];

	(void)arg;
	memset(buf, 0x22, sizeof(buf));
	return (void *)(intptr_t)uevent_emit(in_child ? CHILD_TYPE : MAIN_TYPE, buf, sizeof(buf));
}

static void *waiter_thread(void *arg);

/*
 * Holds a writer in its writev while thread th emits (waiter_thread), until th sleeps
 * waiting for it; then runs between(th's tid) and lets the writer go on. 0, or which
 * step failed (5: the writer never reached the writev).
 */
static int hold_writer_while_waiting(pthread_t *th, void (*between)(pid_t))
{
	struct timespec ts = { 0, 1000000 };
	pthread_t w;
	void *wret, *tret;
	int i;

	if (pipe(block_pipe) < 0)
		return 1;
	__atomic_store_n(&blocked, 0, __ATOMIC_SEQ_CST);	/* a fork child's copy says 1 */
	__atomic_store_n(&block_armed, 1, __ATOMIC_SEQ_CST);
	pthread_create(&w, NULL, writer_thread, NULL);
	for (i = 0; i < WAIT_S * 1000 && !__atomic_load_n(&blocked, __ATOMIC_SEQ_CST); i++)
		nanosleep(&ts, NULL);
	if (!__atomic_load_n(&blocked, __ATOMIC_SEQ_CST)) {
		block_armed = 0;
		if (write(block_pipe[1], "", 1) == 1)
			pthread_join(w, NULL);
		return 5;
	}
	waiter_tid = 0;
	pthread_create(th, NULL, waiter_thread, NULL);
	for (i = 0; i < WAIT_S * 1000; i++) {
		pid_t tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE);

		if (tid && sleeping(tid)) {
			between(tid);
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (write(block_pipe[1], "", 1) != 1)
		return 2;
	pthread_join(w, &wret);
	pthread_join(*th, &tret);
	close(block_pipe[0]);
	close(block_pipe[1]);
	if (i == WAIT_S * 1000)
		return 3;
	return wret || tret ? 4 : 0;
}

static void nothing(pid_t tid)
{
	(void)tid;
}

/* In the child, after the fork: a mark of its own, and a waiter woken again. */
static int child_work(void)
{
	uint8_t buf[16];
	pthread_t th;

	memset(buf, 0x33, sizeof(buf));
	if (uevent_emit(CHILD_TYPE, buf, sizeof(buf)) != 0)
		return 10;
	return hold_writer_while_waiting(&th, nothing) ? 11 : 0;
}

static void *waiter_thread(void *arg)
{
	uint8_t buf[24];
	int ret;

	(void)arg;
	memset(buf, 0x44, sizeof(buf));
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	ret = uevent_emit(in_child ? CHILD_TYPE : MAIN_TYPE, buf, sizeof(buf));
	if (forked_here)		/* the fork's child, back from the handler */
		_exit(ret == 0 ? child_work() : 12);
	return (void *)(intptr_t)ret;
}

/* The signal, and the fork done before the writer goes on. */
static void signal_waiter(pid_t tid)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	syscall(SYS_tgkill, getpid(), tid, SIGUSR2);
	for (i = 0; i < WAIT_S * 1000 && !__atomic_load_n(&fork_child, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
}

/*
 * A thread waits (asleep) for a writer held in its writev; a signal handler on it forks.
 * The child, back in the wait, has no writer to wait for: its emit must return (the
 * record is its parent's to write), and its own marks, from a waiter too, go on.
 */
static void test_fork_in_wait(int restart)
{
	struct sigaction sa;
	struct count c;
	pthread_t th;
	int ret, st;

	snprintf(wait_path, sizeof(wait_path), "%s/wait-%d", dir, restart);
	if (open_at(wait_path) != UEVENT_TRANSPORT_FILE) {
		skip(2, "the file transport does not open");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fork_in_handler;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR2, &sa, NULL);
	fork_child = 0;
	ret = hold_writer_while_waiting(&th, signal_waiter);
	st = fork_child > 0 ? reap(fork_child) : -2;
	signal(SIGUSR2, SIG_DFL);
	ok(ret == 0 && st == 0, "%s: a fork from a handler on a waiting thread: the child's "
	   "emit returns, its own marks go on (%d, child: %d)",
	   restart ? "SA_RESTART" : "no SA_RESTART", ret, st);
	uevent_close();
	count_marks(wait_path, &c);
	ok(c.end_ok && c.main == 2 && c.child == 3 && !c.sig && !c.other,
	   "each mark once: the parent's 2, the child's 3 (%d, %d, %d other, %s)", c.main,
	   c.child, c.other, c.end_ok ? "read to the end" : "unreadable");
	unlink(wait_path);
}

/* ---- a fork from a handler on the writer, more of its list still to write ---- */

static pid_t many_tid[MANY];

static void *many_thread(void *arg)
{
	int i = (int)(intptr_t)arg, ret;

	__atomic_store_n(&many_tid[i], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	ret = uevent_emit(MAIN_TYPE, &i, sizeof(i));
	if (forked_here)		/* the fork's child, back from the handler */
		_exit(ret == 0 ? child_work() : 12);
	return (void *)(intptr_t)ret;
}

/* Waits up to WAIT_S for all MANY threads to sleep waiting for the writer. */
static int many_asleep(void)
{
	struct timespec ts = { 0, 1000000 };
	int i, j;

	for (i = 0, j = 0; i < WAIT_S * 1000; i++) {
		for (; j < MANY; j++) {
			pid_t tid = __atomic_load_n(&many_tid[j], __ATOMIC_ACQUIRE);

			if (!tid || !sleeping(tid))
				break;
		}
		if (j == MANY)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Waits up to WAIT_S for *p to be set; its value. */
static pid_t wait_set(pid_t *p)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < WAIT_S * 1000 && !__atomic_load_n(p, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * A writer holds the writer's place while MANY threads queue their marks; the one that
 * takes its place next takes them all, more than a writev carries, and is held after
 * its first writev. A handler on it forks there. The child, back from the handler, has
 * the parent's list and a descriptor number it closed and opened again for its own
 * capture: the same path (shared), or perf-uevent-PID.data, one a process. It must
 * write none of that list, and its own marks go on; the parent writes each of its
 * marks once. Without SA_RESTART, so the child's writev goes on at once (the parent's
 * waits for its byte).
 */
static void test_fork_on_writer(int shared)
{
	static pthread_t th[MANY];
	char p[PATH_MAX], cp[PATH_MAX];
	int seen[MANY] = { 0 }, i, once = 0, failed = 0, st = -2, step = 0, cwd;
	pthread_attr_t attr;
	struct sigaction sa;
	struct count c, cc;
	pthread_t w;
	void *v;

	if (pipe(block_pipe) < 0) {
		skip(3, "no pipe");
		return;
	}
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/writer-fork", dir);
	if (cwd < 0 || chdir(dir) < 0 ||
	    open_at(shared ? p : NULL) != UEVENT_TRANSPORT_FILE) {
		skip(3, "the file transport does not open in the temporary directory");
		if (cwd >= 0 && fchdir(cwd) == 0)
			close(cwd);
		close(block_pipe[0]);
		close(block_pipe[1]);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fork_in_handler;
	sigaction(SIGUSR2, &sa, NULL);
	fork_child = held_tid = 0;
	memset(many_tid, 0, sizeof(many_tid));
	__atomic_store_n(&blocked, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&block_armed, 1, __ATOMIC_SEQ_CST);
	pthread_create(&w, NULL, writer_thread, NULL);
	for (i = 0; i < WAIT_S * 1000 && !__atomic_load_n(&blocked, __ATOMIC_SEQ_CST); i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < MANY; i++)
		pthread_create(&th[i], &attr, many_thread, (void *)(intptr_t)i);
	pthread_attr_destroy(&attr);
	if (!__atomic_load_n(&blocked, __ATOMIC_SEQ_CST))
		step = 1;	/* the first writer never reached its writev */
	else if (!many_asleep())
		step = 2;	/* the others never all waited */
	__atomic_store_n(&hold_armed, 1, __ATOMIC_SEQ_CST);
	if (write(block_pipe[1], "", 1) != 1 && !step)
		step = 3;
	if (!step && !wait_set(&held_tid))
		step = 4;	/* no writer took the others' marks */
	/* in its read: a child forked before it would take the parent's byte */
	for (i = 0; !step && i < WAIT_S * 1000 && !sleeping(held_tid); i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (!step && i == WAIT_S * 1000)
		step = 5;
	if (!step) {
		syscall(SYS_tgkill, getpid(), held_tid, SIGUSR2);
		if (!wait_set(&fork_child))
			step = 6;
	}
	__atomic_store_n(&hold_armed, 0, __ATOMIC_SEQ_CST);
	if (write(block_pipe[1], "", 1) != 1 && !step)
		step = 3;
	pthread_join(w, &v);
	failed += v != NULL;
	for (i = 0; i < MANY; i++) {
		pthread_join(th[i], &v);
		failed += v != NULL;
	}
	close(block_pipe[0]);
	close(block_pipe[1]);
	if (fork_child > 0)
		st = reap(fork_child);
	signal(SIGUSR2, SIG_DFL);
	uevent_close();
	if (fchdir(cwd) < 0)
		diag("fchdir: %s", strerror(errno));
	close(cwd);
	if (!shared) {
		snprintf(p, sizeof(p), "%s/perf-uevent-%d.data", dir, (int)getpid());
		snprintf(cp, sizeof(cp), "%s/perf-uevent-%d.data", dir, (int)fork_child);
		count_each(cp, &cc, NULL);
	}
	count_each(p, &c, seen);
	if (shared)
		cc = c;
	for (i = 0; i < MANY; i++)
		once += seen[i] == 1;
	ok(!step && held_iov == 3 * 128 && !failed && st == 0, "%s: a fork from a handler on "
	   "the writer after its first writev of %d records (%d iovecs): every emit returns 0 "
	   "(%d failed), the child's too, its own marks go on (step %d, child %d)",
	   shared ? "one file" : "a file each", MANY, held_iov, failed, step, st);
	ok(c.end_ok && c.main == MANY + 1 && once == MANY && !c.other && (shared || !c.child),
	   "the parent's file holds each of its marks once (%d of %d once, %d in all of %d, "
	   "%d of the child's, %s)", once, MANY, c.main, MANY + 1, c.child,
	   c.end_ok ? "read to the end" : "unreadable");
	ok(cc.end_ok && cc.child == 3 && !cc.other && (shared || !cc.main),
	   "the child's file holds its 3 marks%s (%d, %d of the parent's, %s)",
	   shared ? "" : " only", cc.child, cc.main, cc.end_ok ? "read to the end" : "unreadable");
	unlink(p);
	if (!shared)
		unlink(cp);
}

/* ---- a fork from a handler on the writer between a short write and its undo ---- */

static int capture_fd = -1, other_fd = -1;

/* In the child, the capture's number goes to another file of the child's, at its end
 * (as an open there could take it: the child closed it, and opened its capture again
 * at a lower one). */
static void fork_after_short(int sig)
{
	int saved = errno;

	(void)sig;
	if (handler_fork() == 0 &&
	    (fcntl(capture_fd, F_GETFD) >= 0 || dup2(other_fd, capture_fd) != capture_fd))
		_exit(3);	/* the child's own capture has the number */
	errno = saved;
}

/* The descriptor open on a path that ends with tail (a whole path: that one), or -1. */
static int fd_of(const char *tail)
{
	char link[64], to[PATH_MAX];
	size_t k = strlen(tail);
	ssize_t n;
	int fd;

	for (fd = 3; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, to, sizeof(to) - 1);
		if (n >= (ssize_t)k && !memcmp(to + n - k, tail, k))
			return fd;
	}
	return -1;
}

/*
 * A write cut short by RLIMIT_FSIZE, and a handler on the writer's thread that forks
 * before the undo. The torn bytes are the parent's, which cuts them; in the child the
 * number the write went through names another file (OTHER_LEN bytes, its offset at
 * the end), which the child's undo must leave whole. The child's own mark, once the
 * parent has cut its torn bytes, goes into the capture (the same path) whole.
 */
#define OTHER_LEN	200

static void test_fork_before_undo(void)
{
	char p[PATH_MAX], op[PATH_MAX], buf[OTHER_LEN];
	int ret, ret2 = 1, st = -2, low, go[2];
	struct sigaction sa;
	struct rlimit rl;
	struct stat sb;
	struct count c;

	snprintf(p, sizeof(p), "%s/undo-fork", dir);
	snprintf(op, sizeof(op), "%s/other", dir);
	low = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* a number below the capture's */
	if (low < 0 || open_at(p) != UEVENT_TRANSPORT_FILE || stat(p, &sb) < 0 ||
	    (capture_fd = fd_of(p)) < 0 || getrlimit(RLIMIT_FSIZE, &fsize_was) < 0 ||
	    pipe(go) < 0) {
		skip(2, "the file transport does not open, or its descriptor is not found");
		if (low >= 0)
			close(low);
		return;
	}
	other_fd = open(op, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	memset(buf, 0x77, sizeof(buf));
	if (other_fd < 0 || write(other_fd, buf, sizeof(buf)) != sizeof(buf)) {
		skip(2, "cannot write the other file");
		return;
	}
	close(low);		/* the child's capture opens again there */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fork_after_short;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);
	rl = fsize_was;
	rl.rlim_cur = (rlim_t)sb.st_size + 50;	/* the record is longer */
	fork_child = 0;
	writev_calls = 0;
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0) {
		skip(2, "cannot set RLIMIT_FSIZE");
		return;
	}
	__atomic_store_n(&short_armed, 1, __ATOMIC_SEQ_CST);
	memset(buf, 0x11, sizeof(buf));
	ret = uevent_emit(MAIN_TYPE, buf, 100);
	short_armed = 0;
	setrlimit(RLIMIT_FSIZE, &fsize_was);
	if (forked_here) {	/* the child: the other file whole, then a mark of its own */
		struct stat ob;
		char c1;

		st = fstat(other_fd, &ob) < 0 || ob.st_size != OTHER_LEN;
		while (read(go[0], &c1, 1) < 0 && errno == EINTR)
			;
		_exit(st | (uevent_emit(CHILD_TYPE, buf, 40) ? 2 : 0));
	}
	signal(SIGUSR1, SIG_DFL);
	if (fork_child > 0) {
		if (write(go[1], "", 1) != 1)
			kill(fork_child, SIGKILL);
		ret2 = uevent_emit(MAIN_TYPE, buf, 100);
		st = reap(fork_child);
	}
	close(go[0]);
	close(go[1]);
	close(other_fd);
	uevent_close();
	if (!writev_calls || fork_child <= 0) {
		skip(2, "libuevent's writev is not this program's (a static link?)");
		unlink(p);
		unlink(op);
		return;
	}
	count_marks(p, &c);
	ok((ret == -EFBIG || ret == -ENOSPC) && st == 0, "a fork between a short write and "
	   "its undo: the write fails (%d), the child cuts nothing of the file that has the "
	   "number there (child %d: 0 whole, 1 cut, 2 its mark failed, 3 the number was "
	   "its capture's)", ret, st);
	ok(ret2 == 0 && c.end_ok && c.main == 1 && c.child == 1 && !c.other, "the parent cut "
	   "its torn record; its next mark and the child's are whole (%d of its, %d of the "
	   "child's, %s)", c.main, c.child, c.end_ok ? "read to the end" : "unreadable");
	unlink(p);
	unlink(op);
}

/* ---- a fork from a handler inside the undo, and a mark in the child ---- */

/* In the child, the space back: the child's own mark, from the handler that forked. */
static void fork_mark_in_undo(int sig)
{
	uint8_t buf[64];
	int saved = errno;
	pid_t pid;

	(void)sig;
	pid = fork();
	if (pid == 0) {
		setrlimit(RLIMIT_FSIZE, &fsize_was);
		memset(buf, 0x33, sizeof(buf));
		_exit(uevent_emit(CHILD_TYPE, buf, sizeof(buf)) == 0 ? 0 : 1);
	}
	__atomic_store_n(&fork_child, pid, __ATOMIC_RELEASE);
	errno = saved;
}

/*
 * A handler on the writer's thread forks inside the undo of a short write. The child is
 * not writing anything: the parent's undo is the parent's. A mark the handler makes in
 * the child goes to the child's capture; it failed as if it would be cut by that undo.
 */
static void test_fork_mark_in_undo(void)
{
	char p[PATH_MAX];
	int ret, st = -2;
	off_t size;

	snprintf(p, sizeof(p), "%s/undo-mark", dir);
	fork_child = 0;
	ret = short_emit(p, fork_mark_in_undo, &truncate_armed, 1, &size);
	if (ret == 1)
		return;
	if (fork_child > 0)
		st = reap(fork_child);
	uevent_close();
	if (!writev_calls || fork_child <= 0) {
		skip(1, "libuevent's writev and ftruncate are not this program's (a static link?)");
		unlink(p);
		return;
	}
	ok((ret == -EFBIG || ret == -ENOSPC) && st == 0, "a fork from a handler inside the "
	   "undo: the short write fails (%d), the child's mark from that handler goes in "
	   "(child %d: 0 written, 1 failed)", ret, st);
	unlink(p);
}

/* ---- a fork between a transport's close and its being marked closed ---- */

/*
 * uevent_close() closed a transport's descriptor before it marked it closed: a fork on
 * another thread in between gave the child the number as still the transport's, and
 * the child's re-open closed it again, though by then another thread's open could hold
 * it. Here the number goes to a sentinel at once, and the fork comes in the close.
 */
static void test_fork_in_close(void)
{
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FTRACE, .flags = UEVENT_OPEN_IGNORE_ENV);
	int fd;

	if (uevent_open(&o) != UEVENT_TRANSPORT_FTRACE) {
		skip(1, "no ftrace transport here (it needs root and tracefs)");
		return;
	}
	fd = fd_of("/trace_marker_raw");	/* the transport's descriptor */
	close_sentinel = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close_child = -1;
	__atomic_store_n(&close_armed, fd, __ATOMIC_SEQ_CST);
	uevent_close();
	__atomic_store_n(&close_armed, -1, __ATOMIC_SEQ_CST);
	syscall(SYS_close, close_sentinel);
	ok(close_child == 0, "a fork between the ftrace transport's close and its being marked "
	   "closed: the child keeps the file that took the number (child %d: 0 kept, 1 closed, "
	   "-1 no fork)", close_child);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/uevent-file-edges-XXXXXX");
	if (!mkdtemp(dir))
		plan_skip_all("no temporary directory");
	tap_cleanup(dir);
	plan(19);
	test_fork_in_open();
	test_mark_before_undo(0);
	test_mark_before_undo(1);
	test_fork_in_wait(0);
	test_fork_in_wait(1);
	test_fork_on_writer(1);
	test_fork_on_writer(0);
	test_fork_before_undo();
	test_fork_mark_in_undo();
	test_fork_in_close();
	rmdir(dir);
	return exit_status();
}
