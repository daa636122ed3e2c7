/* emit.c - the emit API through the file transport: content, threads, fork, signals, errors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "uevent.h"

static char path[64];

static int open_file_transport(void)
{
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = path);

	return uevent_open(&o);
}

/* Reads the capture; fills counts per type and tid checks through the callback. */
struct tally {
	int records, text, counter, begin, end, ctx, user, bad;
	int per_tid_ok;
	uint64_t last_time;
	int time_ordered_per_file;
};

static int read_all(struct tally *t, void (*each)(const struct uevent_record *, void *), void *arg)
{
	struct uevent_file_reader *rd = uevent_file_reader__open(path);
	struct uevent_record r = { .sz = sizeof(r) };
	int ret;

	memset(t, 0, sizeof(*t));
	if (!rd)
		return -errno;
	while ((ret = uevent_file_reader__next(rd, &r)) == 1) {
		t->records++;
		switch (r.type) {
		case UEVENT_TYPE_TEXT: t->text++; break;
		case UEVENT_TYPE_COUNTER: t->counter++; break;
		case UEVENT_TYPE_RANGE_BEGIN: t->begin++; break;
		case UEVENT_TYPE_RANGE_END: t->end++; break;
		case UEVENT_TYPE_TRACE_CONTEXT: t->ctx++; break;
		default: t->user++; break;
		}
		if (each)
			each(&r, arg);
	}
	uevent_file_reader__close(rd);
	return ret;
}

/* ---- threads ---- */
#define NTHREADS 16
#define PER_THREAD 10000

static void *thread_main(void *arg)
{
	uint64_t i, idx = (uintptr_t)arg;
	uint64_t payload[2];

	for (i = 0; i < PER_THREAD; i++) {
		payload[0] = idx;
		payload[1] = i;
		if (uevent_emit(UEVENT_TYPE_USER + 1, payload, sizeof(payload)) < 0)
			return (void *)1;
	}
	return NULL;
}

struct seq_check {
	uint64_t next[NTHREADS];
	int out_of_order, bad;
};

static void check_seq(const struct uevent_record *r, void *arg)
{
	struct seq_check *c = arg;
	uint64_t p[2];

	if (r->type != UEVENT_TYPE_USER + 1)
		return;
	if (r->size != sizeof(p)) {
		c->bad++;
		return;
	}
	memcpy(p, r->data, sizeof(p));
	if (p[0] >= NTHREADS) {
		c->bad++;
		return;
	}
	if (p[1] != c->next[p[0]])
		c->out_of_order++;
	c->next[p[0]] = p[1] + 1;
}

/*
 * Many threads at once, of many sizes, with a signal handler's marks in the middle
 * (also on a thread that is writing for others): the file transport writes a batch
 * of records from several threads in one writev; each must come out whole, once.
 */
#define MIX_THREADS 8
#define MIX_PER_THREAD 4000
#define MIX_TYPE (UEVENT_TYPE_USER + 4)
#define MIX_SIG_TYPE (UEVENT_TYPE_USER + 5)

static int mix_handled;

static void mix_on_signal(int sig)
{
	static const char m[] = "in handler";

	(void)sig;
	if (uevent_emit(MIX_SIG_TYPE, m, sizeof(m)) == 0)
		__atomic_add_fetch(&mix_handled, 1, __ATOMIC_RELAXED);
}

/* Record k of thread t: its size and its bytes (t, k, then a pattern). */
static size_t mix_record(uint32_t t, uint32_t k, uint8_t *buf)
{
	size_t n = 8 + (k * 37 + t * 11) % 300, i;

	memcpy(buf, &t, 4);
	memcpy(buf + 4, &k, 4);
	for (i = 8; i < n; i++)
		buf[i] = (uint8_t)(k + i);
	return n;
}

static void *mix_thread(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg, k;
	uint8_t buf[320];

	for (k = 0; k < MIX_PER_THREAD; k++)
		if (uevent_emit(MIX_TYPE, buf, mix_record(t, k, buf)) < 0)
			return (void *)1;
	return NULL;
}

struct mix_check {
	uint32_t next[MIX_THREADS];
	int bad, sig;
};

static void check_mix(const struct uevent_record *r, void *arg)
{
	struct mix_check *c = arg;
	uint8_t want[320];
	uint32_t t, k;

	if (r->type == MIX_SIG_TYPE) {
		c->sig += r->size == 11 && !memcmp(r->data, "in handler", 11);
		return;
	}
	if (r->type != MIX_TYPE || r->size < 8) {
		c->bad++;
		return;
	}
	memcpy(&t, r->data, 4);
	memcpy(&k, (const uint8_t *)r->data + 4, 4);
	if (t >= MIX_THREADS || k != c->next[t] || mix_record(t, k, want) != r->size ||
	    memcmp(want, r->data, r->size)) {
		c->bad++;
		return;
	}
	c->next[t] = k + 1;
}

static void test_threads_mixed(void)
{
	pthread_t th[MIX_THREADS];
	struct mix_check c = { { 0 }, 0, 0 };
	struct sigaction sa;
	struct uevent_stats st;
	struct tally t;
	int i, failed = 0, sent = 0, done, ret;
	void *r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mix_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	unlink(path);
	mix_handled = 0;
	ok(open_file_transport() == UEVENT_TRANSPORT_FILE, "mixed: a fresh file");
	uevent_stats_reset();
	for (i = 0; i < MIX_THREADS; i++)
		pthread_create(&th[i], NULL, mix_thread, (void *)(uintptr_t)i);
	/* signals to the emitting threads while they run */
	for (done = 0; !done; sent++) {
		done = 1;
		for (i = 0; i < MIX_THREADS; i++)
			if (pthread_kill(th[i], 0) == 0 && pthread_kill(th[i], SIGUSR2) == 0)
				done = 0;
		if (sent > 2000)
			break;
		sched_yield();
	}
	for (i = 0; i < MIX_THREADS; i++) {
		pthread_join(th[i], &r);
		failed += r != NULL;
	}
	uevent_stats_get(&st, sizeof(st));
	ret = read_all(&t, check_mix, &c);
	for (i = 0; i < MIX_THREADS; i++)
		failed += c.next[i] != MIX_PER_THREAD;
	ok(ret == 0 && !failed && !c.bad && t.records == MIX_THREADS * MIX_PER_THREAD + c.sig,
	   "%d threads x %d marks of 8..307 bytes: each whole, once, in its thread's order "
	   "(%d records, %d bad)", MIX_THREADS, MIX_PER_THREAD, t.records, c.bad);
	ok(c.sig == mix_handled && st.emitted == (uint64_t)(MIX_THREADS * MIX_PER_THREAD) +
	   (uint64_t)mix_handled && st.dropped == 0,
	   "and %d marks from signal handlers among them, whole (%d in the file)", mix_handled,
	   c.sig);
	signal(SIGUSR2, SIG_DFL);
}

/* ---- ranges ---- */
struct range_check {
	uint64_t outer, inner, async_id;
	int inner_parent_ok, async_parent_zero, ends;
};

static void check_ranges(const struct uevent_record *r, void *arg)
{
	struct range_check *c = arg;
	struct uevent_range_begin b;
	struct uevent_range_end e;

	if (r->type == UEVENT_TYPE_RANGE_BEGIN &&
	    uevent_range_begin_decode(r->data, r->size, 0, &b) == 0) {
		if (!strcmp(b.name, "inner"))
			c->inner_parent_ok = b.parent == c->outer && b.id == c->inner;
		if (!strcmp(b.name, "async"))
			c->async_parent_zero = b.parent == 0 && (b.flags & UEVENT_RANGE_ASYNC);
	} else if (r->type == UEVENT_TYPE_RANGE_END &&
		   uevent_range_end_decode(r->data, r->size, 0, &e) == 0) {
		if (e.id == c->outer || e.id == c->inner || e.id == c->async_id)
			c->ends++;
	}
}

static void *async_ender(void *arg)
{
	return (void *)(intptr_t)uevent_async_end(*(uint64_t *)arg);
}

/* ---- signals ---- */
static volatile sig_atomic_t in_handler_ret = 1;

static void on_signal(int sig)
{
	int saved = errno;

	in_handler_ret = uevent_mark("from a signal handler");
	errno = saved;
}

struct pid_check {
	pid_t parent, child;
	int from_parent, from_child, child_text_ok;
};

static void check_pids(const struct uevent_record *r, void *arg)
{
	struct pid_check *c = arg;

	if (r->id.pid == (uint32_t)c->parent)
		c->from_parent++;
	if (r->id.pid == (uint32_t)c->child) {
		c->from_child++;
		if (r->type == UEVENT_TYPE_TEXT && !strcmp(r->data, "child"))
			c->child_text_ok = 1;
	}
}


/* ---- foreign files at the $UEVENT_FILE path ---- */

static int open_at(const char *p)
{
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = p,
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	return uevent_open(&o);
}

/*
 * Opened in a child: if open() blocks (a FIFO without a reader), the child's alarm ends
 * it and the test fails instead of hanging. The child reports ret and whether the
 * reason has `word` in it.
 */
static int open_in_child(const char *p, const char *word, int *reason_ok)
{
	int pipefd[2], st, res[2] = { 1, 0 };
	pid_t pid;

	*reason_ok = 0;
	if (pipe(pipefd) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		alarm(60);	/* a watchdog, not a measurement */
		res[0] = open_at(p);
		res[1] = strstr(uevent_reason(), word) != NULL;
		if (write(pipefd[1], res, sizeof(res)) < 0)
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], res, sizeof(res)) != sizeof(res))
		res[0] = 1;	/* killed by its alarm: open() blocked */
	close(pipefd[0]);
	waitpid(pid, &st, 0);
	*reason_ok = res[1];
	return res[0];
}

static void test_foreign_files(void)
{
	char fifo[96], link[96], victim[96], other[96], buf[16];
	int rfd, ret, rok, fd;
	ssize_t n;

	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	snprintf(link, sizeof(link), "%s.link", path);
	snprintf(victim, sizeof(victim), "%s.victim", path);
	snprintf(other, sizeof(other), "%s.other", path);

	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0) {
		skip(2, "mkfifo failed");
	} else {
		ret = open_in_child(fifo, "not a regular file", &rok);
		ok(ret == -EINVAL && rok, "FIFO without a reader: -EINVAL at once, no hang (%d)",
		   ret);
		rfd = open(fifo, O_RDONLY | O_NONBLOCK);
		ret = open_in_child(fifo, "not a regular file", &rok);
		ok(ret == -EINVAL && rok, "FIFO with a reader: -EINVAL, reason says why (%d)",
		   ret);
		if (rfd >= 0)
			close(rfd);
		unlink(fifo);
	}
	ret = open_in_child("/dev/null", "not a regular file", &rok);
	ok(ret == -EINVAL && rok, "character device: -EINVAL (%d)", ret);

	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	n = write(fd, "precious", 8);
	close(fd);
	unlink(link);
	if (n != 8 || symlink(victim, link) < 0) {
		skip(1, "cannot plant a symlink");
	} else {
		ret = open_at(link);
		fd = open(victim, O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
		close(fd);
		ok(ret == -ELOOP && strstr(uevent_reason(), "symbolic link") && n == 8 &&
		   !memcmp(buf, "precious", 8),
		   "symlink: -ELOOP, reason says so, its target untouched (%s)",
		   uevent_reason());
	}
	unlink(link);
	unlink(victim);

	unlink(other);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	close(fd);
	if (geteuid() != 0 || chown(other, 65534, 65534) < 0) {
		skip(1, "needs root to plant another user's file");
	} else {
		struct stat st;

		ret = open_at(other);
		ok(ret == -EPERM && errno == EPERM && strstr(uevent_reason(), "owned by") &&
		   stat(other, &st) == 0 && st.st_size == 0,
		   "file of another user: -EPERM, reason says whose, nothing written (%s)",
		   uevent_reason());
	}
	unlink(other);
}

/* ---- a full disk: no torn record ---- */

#define SEQ_MAX 4096
#define SEQ_PAYLOAD 200		/* 240-byte records: some cross a page boundary */

struct seq_read {
	uint32_t want[SEQ_MAX];
	int nwant, got, bad;
};

static void check_fill_seq(const struct uevent_record *r, void *arg)
{
	struct seq_read *c = arg;
	uint32_t v;

	memcpy(&v, r->data, 4);
	if (r->type != UEVENT_TYPE_USER + 2 || r->size != SEQ_PAYLOAD || c->got >= c->nwant ||
	    v != c->want[c->got])
		c->bad++;
	c->got++;
}

static int emit_seq(uint32_t seq)
{
	uint8_t payload[SEQ_PAYLOAD];

	memset(payload, (int)(seq & 0xff), sizeof(payload));
	memcpy(payload, &seq, 4);
	return uevent_emit(UEVENT_TYPE_USER + 2, payload, sizeof(payload));
}

/* What a fill-up run saw; compared with what the file holds. */
struct fill_result {
	int ok_before, drops, drops_right_errno, ok_after;
	uint64_t stat_io, stat_dropped, stat_emitted;
	uint32_t want[SEQ_MAX];
	int nwant;
};

/* Emits until 10 drops in a row (each must be -err), then calls refill() and emits 20 more. */
static void fill_up(struct fill_result *fr, int err, void (*refill)(void *), void *arg)
{
	struct uevent_stats st;
	uint32_t seq = 0;
	int r, row = 0;

	memset(fr, 0, sizeof(*fr));
	uevent_stats_reset();
	while (row < 10 && fr->nwant < SEQ_MAX - 20) {
		r = emit_seq(seq);
		if (r == 0) {
			fr->want[fr->nwant++] = seq;
			fr->ok_before++;
			row = 0;
		} else {
			fr->drops++;
			fr->drops_right_errno += r == -err;
			row++;
		}
		seq++;
	}
	refill(arg);
	for (r = 0; r < 20; r++, seq++)
		if (emit_seq(seq) == 0) {
			fr->want[fr->nwant++] = seq;
			fr->ok_after++;
		}
	uevent_stats_get(&st, sizeof(st));
	fr->stat_io = st.dropped_by[UEVENT_DROP_IO];
	fr->stat_dropped = st.dropped;
	fr->stat_emitted = st.emitted;
}

static void raise_fsize(void *arg)
{
	struct rlimit rl;

	(void)arg;
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
}

static void remove_file(void *arg)
{
	unlink(arg);
}

/* The file read back: every record whole, and just the successful ones, in order. */
static void check_fill(const struct fill_result *fr, const char *what)
{
	static struct seq_read c;
	struct tally t;
	int ret;

	memset(&c, 0, sizeof(c));
	memcpy(c.want, fr->want, sizeof(c.want));
	c.nwant = fr->nwant;
	ok(fr->ok_before > 0 && fr->drops >= 10 && fr->drops_right_errno == fr->drops,
	   "%s: %d marks, then each of %d drops says %s", what, fr->ok_before, fr->drops,
	   fr->drops_right_errno == fr->drops ? "so" : "something else");
	ok(fr->stat_io == (uint64_t)fr->drops && fr->stat_dropped == (uint64_t)fr->drops &&
	   fr->stat_emitted == (uint64_t)fr->nwant,
	   "%s: stats count the %d drops as io (io=%" PRIu64 ", emitted=%" PRIu64 ")", what,
	   fr->drops, fr->stat_io, fr->stat_emitted);
	ok(fr->ok_after == 20, "%s: space back, the next 20 marks succeed (%d)", what,
	   fr->ok_after);
	ret = read_all(&t, check_fill_seq, &c);
	ok(ret == 0 && c.got == fr->nwant && !c.bad,
	   "%s: the reader reads all %d records whole and in order, to the end (ret %d, "
	   "got %d, bad %d)", what, fr->nwant, ret, c.got, c.bad);
}

/* 0 if the file opens and reads to its end (empty or not), else -errno. */
static int read_all_of(const char *p)
{
	struct uevent_file_reader *rd = uevent_file_reader__open(p);
	struct uevent_record r = { .sz = sizeof(r) };
	int ret;

	if (!rd)
		return -errno;
	while ((ret = uevent_file_reader__next(rd, &r)) == 1)
		;
	uevent_file_reader__close(rd);
	return ret;
}

/* No root needed: RLIMIT_FSIZE stops a write short just as a full disk does. */
static void test_fsize_limit(void)
{
	static struct fill_result fr;
	int pipefd[2], st, hres[3] = { 0, 0, -1 };
	char hpath[96];
	struct stat sb;
	pid_t pid;

	unlink(path);
	if (open_file_transport() != UEVENT_TRANSPORT_FILE || stat(path, &sb) < 0 ||
	    pipe(pipefd) < 0) {
		skip(4, "no file transport");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;

		signal(SIGXFSZ, SIG_IGN);
		getrlimit(RLIMIT_FSIZE, &rl);
		/* A new file with room for part of its header: none of it stays. */
		snprintf(hpath, sizeof(hpath), "%s.hdr", path);
		unlink(hpath);
		rl.rlim_cur = 10;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		hres[0] = open_at(hpath);
		raise_fsize(NULL);
		hres[1] = open_at(hpath);
		hres[2] = read_all_of(hpath);
		unlink(hpath);
		if (write(pipefd[1], hres, sizeof(hres)) != sizeof(hres))
			_exit(3);
		/* The child reopens the file itself (atfork); limit it 3000 bytes on. */
		if (open_file_transport() != UEVENT_TRANSPORT_FILE)
			_exit(2);
		rl.rlim_cur = (rlim_t)sb.st_size + 3000;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		fill_up(&fr, EFBIG, raise_fsize, NULL);
		if (write(pipefd[1], &fr, sizeof(fr)) != sizeof(fr))
			_exit(3);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], hres, sizeof(hres)) != sizeof(hres) ||
	    read(pipefd[0], &fr, sizeof(fr)) != sizeof(fr))
		memset(&fr, 0, sizeof(fr));
	close(pipefd[0]);
	waitpid(pid, &st, 0);
	ok(hres[0] == -EFBIG && hres[1] == UEVENT_TRANSPORT_FILE && hres[2] == 0,
	   "header cut short by RLIMIT_FSIZE: -EFBIG, and no part of it left for the next "
	   "open (%d, %d, %d)", hres[0], hres[1], hres[2]);
	check_fill(&fr, "RLIMIT_FSIZE");
}

/* The real thing, as root: a 64 KiB tmpfs filled up by the file transport. */
static void test_enospc(void)
{
	static struct fill_result fr;
	char dir[64], filler[96], saved[64];
	int fd, i;

	if (geteuid() != 0) {
		skip(5, "needs root to mount a small tmpfs");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/uevent-enospc-XXXXXX");
	if (!mkdtemp(dir)) {
		skip(5, "no temporary directory");
		return;
	}
	/* In a mount namespace of our own: the mount goes away with us, whatever happens. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", dir, "tmpfs", 0, "size=64k,mode=0700") < 0) {
		diag("mount -t tmpfs -o size=64k: %s", strerror(errno));
		skip(5, "cannot mount a small tmpfs");
		rmdir(dir);
		return;
	}
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	snprintf(saved, sizeof(saved), "%s", path);
	snprintf(path, sizeof(path), "%.40s/t.perf.data", dir);

	/* Nothing left at all: the open fails cleanly and a later one writes the header. */
	fd = open(filler, O_WRONLY | O_CREAT, 0600);
	for (i = 0; i < 64; i++) {
		char block[4096] = { 1 };

		if (write(fd, block, sizeof(block)) != sizeof(block))
			break;
	}
	close(fd);
	i = open_file_transport();
	ok(i == -ENOSPC && truncate(filler, 4 * 4096) == 0 &&
	   open_file_transport() == UEVENT_TRANSPORT_FILE,
	   "full tmpfs: the file transport's open is -ENOSPC (%d), works with space back", i);

	if (uevent_transport() != UEVENT_TRANSPORT_FILE) {
		skip(4, "file transport on the tmpfs did not open");
	} else {
		fill_up(&fr, ENOSPC, remove_file, filler);
		check_fill(&fr, "full tmpfs");
	}
	uevent_close();
	snprintf(path, sizeof(path), "%s", saved);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/* vfork: a child of a thread whose tid cache is empty, then one of the main thread's */
struct vfork_check {
	pid_t thread_tid, child1, child2, main_tid;
	int child1_ok, child2_ok, thread_ok, main_ok, records;
};

static void *vfork_thread(void *arg)
{
	struct vfork_check *vc = arg;
	pid_t child;

	vc->thread_tid = (pid_t)syscall(SYS_gettid);
	child = vfork();
	if (child == 0) {
		uevent_mark("vfork child 1");
		_exit(0);
	}
	vc->child1 = child;
	if (child > 0)
		waitpid(child, NULL, 0);
	uevent_mark("vfork parent thread");
	return NULL;
}

static void check_vfork(const struct uevent_record *r, void *arg)
{
	struct vfork_check *vc = arg;
	uint32_t pid = (uint32_t)getpid();

	vc->records++;
	if (r->type != UEVENT_TYPE_TEXT)
		return;
	if (!strcmp(r->data, "vfork child 1"))
		vc->child1_ok = r->id.pid == (uint32_t)vc->child1 && r->id.tid == (uint32_t)vc->child1;
	else if (!strcmp(r->data, "vfork child 2"))
		vc->child2_ok = r->id.pid == (uint32_t)vc->child2 && r->id.tid == (uint32_t)vc->child2;
	else if (!strcmp(r->data, "vfork parent thread"))
		vc->thread_ok = r->id.pid == pid && r->id.tid == (uint32_t)vc->thread_tid;
	else if (!strcmp(r->data, "vfork parent main"))
		vc->main_ok += r->id.pid == pid && r->id.tid == (uint32_t)vc->main_tid;
}

static void *reason_of_new_thread(void *arg)
{
	*(const char **)arg = uevent_reason();
	return NULL;
}

int main(void)
{
	struct uevent_stats st;
	struct tally t;
	int ret, i;

	snprintf(path, sizeof(path), "/tmp/uevent-emit-test-%d.perf.data", (int)getpid());
	unlink(path);
	tap_cleanup(path);
	plan(58);

	/* selection */
	ret = open_file_transport();
	ok(ret == UEVENT_TRANSPORT_FILE && uevent_transport() == UEVENT_TRANSPORT_FILE,
	   "file transport opens (%s)", uevent_reason());
	ok(uevent_enabled() && UEVENT_ENABLED(), "file transport is always enabled");
	uevent_stats_reset();

	/* every API call lands as a decodable record */
	{
		static const uint8_t tid16[16] = { 1 }, sid8[8] = { 2 };
		uint64_t outer, inner, async_id;
		struct range_check rc = { 0 };
		pthread_t th;
		void *tret;

		ok(uevent_mark("hello") == 0, "mark");
		ok(uevent_markf("n=%d s=%s", 42, "x") == 0, "markf");
		ok(uevent_counter_set("depth", 7) == 0, "counter");
		ok(uevent_trace_context(tid16, sid8, 1) == 0, "trace context");
		ok(uevent_emit(UEVENT_TYPE_USER + 7, "\x01\x02\x03", 3) == 0, "raw emit of a user type");
		outer = uevent_range_begin("outer");
		inner = uevent_range_begin("inner");
		async_id = uevent_async_begin("async");
		ok(outer && inner && async_id && outer != inner, "range ids are distinct and non-zero");
		ok(uevent_range_end(inner) == 0 && uevent_range_end(outer) == 0, "ranges end");
		pthread_create(&th, NULL, async_ender, &async_id);
		pthread_join(th, &tret);
		ok(tret == NULL, "async range ends on another thread");
		rc.outer = outer;
		rc.inner = inner;
		rc.async_id = async_id;
		ret = read_all(&t, check_ranges, &rc);
		ok(ret == 0 && t.records == 11 && t.text == 2 && t.counter == 1 && t.ctx == 1 &&
		   t.user == 1 && t.begin == 3 && t.end == 3,
		   "capture holds the 11 records, by type (got %d)", t.records);
		ok(rc.inner_parent_ok && rc.async_parent_zero && rc.ends == 3,
		   "nesting: inner's parent is outer, async has none, all 3 ended");
		uevent_stats_get(&st, sizeof(st));
		ok(st.emitted == 11 && st.dropped == 0, "stats: 11 emitted, 0 dropped");
	}

	/* bad input: counted, and nothing else lost */
	{
		static char big[UEVENT_MAX_PAYLOAD + 1];
		char fmtbig[16];

		uevent_stats_reset();
		ok(uevent_emit(1000, big, sizeof(big)) == -E2BIG && errno == E2BIG,
		   "payload over the limit is -E2BIG with errno");
		ok(uevent_emit(1000, NULL, 8) == -EFAULT, "NULL data with a size is -EFAULT");
		ok(uevent_mark(NULL) == -EFAULT, "NULL text is -EFAULT");
		memset(big, 'x', sizeof(big) - 1);
		snprintf(fmtbig, sizeof(fmtbig), "%%s");
		ok(uevent_markf(fmtbig, big) == -E2BIG, "markf longer than the limit is -E2BIG");
		ok(uevent_emit(1000, big, UEVENT_MAX_PAYLOAD) == 0, "payload at the limit passes");
		uevent_stats_get(&st, sizeof(st));
		ok(st.dropped_by[UEVENT_DROP_TOO_BIG] == 2 && st.dropped_by[UEVENT_DROP_FAULT] == 2 &&
		   st.dropped == 4 && st.emitted == 1 && st.bytes == UEVENT_MAX_PAYLOAD,
		   "stats count each drop by reason and the good one");
		ok(uevent_stats_get(&st, 3) == -EINVAL, "stats with a too-small size is -EINVAL");
	}

	/* threads: 16 x 10000, exact and in order per thread */
	{
		pthread_t th[NTHREADS];
		struct seq_check sc = { { 0 }, 0, 0 };
		int failed = 0;
		void *r;

		unlink(path);
		ok(open_file_transport() == UEVENT_TRANSPORT_FILE, "reopen a fresh file");
		uevent_stats_reset();
		for (i = 0; i < NTHREADS; i++)
			pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)i);
		for (i = 0; i < NTHREADS; i++) {
			pthread_join(th[i], &r);
			failed += r != NULL;
		}
		uevent_stats_get(&st, sizeof(st));
		ok(!failed && st.emitted == NTHREADS * PER_THREAD && st.dropped == 0,
		   "16 threads x 10000 emits: stats exact (%" PRIu64 ")", st.emitted);
		ret = read_all(&t, check_seq, &sc);
		for (i = 0; i < NTHREADS; i++)
			if (sc.next[i] != PER_THREAD)
				failed++;
		ok(ret == 0 && t.records == NTHREADS * PER_THREAD && !failed && !sc.bad,
		   "all %d records in the file, whole", t.records);
		ok(sc.out_of_order == 0, "each thread's records in its order");
	}

	test_threads_mixed();

	/* fork: the child re-probes, emits with its own pid, has its own counters */
	{
		struct pid_check pc = { 0 };
		int status, pipefd[2];
		uint64_t child_emitted = 0;

		unlink(path);
		open_file_transport();
		uevent_mark("parent");
		if (pipe(pipefd) < 0)
			diag("pipe failed");
		pc.parent = getpid();
		pc.child = fork();
		if (pc.child == 0) {
			struct uevent_stats cst;

			uevent_mark("child");
			uevent_stats_get(&cst, sizeof(cst));
			if (write(pipefd[1], &cst.emitted, sizeof(cst.emitted)) < 0)
				_exit(2);
			_exit(uevent_transport() == UEVENT_TRANSPORT_FILE ? 0 : 1);
		}
		waitpid(pc.child, &status, 0);
		if (read(pipefd[0], &child_emitted, sizeof(child_emitted)) < 0)
			diag("pipe read failed");
		uevent_mark("parent again");
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child keeps the file transport");
		ok(child_emitted == 1, "child's counters start at zero (emitted=%" PRIu64 ")",
		   child_emitted);
		read_all(&t, check_pids, &pc);
		ok(pc.from_parent == 2 && pc.from_child == 1 && pc.child_text_ok,
		   "records carry the emitting pid (parent 2, child 1)");
	}

	/*
	 * vfork: the child runs on the parent's memory, TLS and its tid cache included.
	 * Its marks carry its own pid and tid, and the parent's cache keeps the parent's.
	 */
	{
		struct vfork_check vc = { 0 };
		pthread_t th;
		pid_t child;

		unlink(path);
		open_file_transport();
		vc.main_tid = (pid_t)syscall(SYS_gettid);
		uevent_mark("vfork parent main");	/* the main thread's cache is set */
		pthread_create(&th, NULL, vfork_thread, &vc);
		pthread_join(th, NULL);
		child = vfork();
		if (child == 0) {
			uevent_mark("vfork child 2");
			_exit(0);
		}
		vc.child2 = child;
		if (child > 0)
			waitpid(child, NULL, 0);
		uevent_mark("vfork parent main");
		read_all(&t, check_vfork, &vc);
		ok(vc.records == 5 && vc.thread_ok && vc.main_ok == 2,
		   "after a vfork child's mark the parent's marks keep their tid "
		   "(thread %d, main %d of %d records)", vc.thread_ok, vc.main_ok, vc.records);
		ok(vc.child1_ok && vc.child2_ok,
		   "a vfork child's mark carries its own pid and tid (%d, %d)",
		   vc.child1_ok, vc.child2_ok);
	}

	/* a signal handler emits mid-way through other emits */
	{
		struct sigaction sa;
		int n = 0;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		unlink(path);
		open_file_transport();
		for (i = 0; i < 1000; i++) {
			uevent_mark("main");
			if (i % 100 == 50) {
				raise(SIGUSR1);
				n++;
			}
		}
		read_all(&t, NULL, NULL);
		ok(in_handler_ret == 0 && t.records == 1000 + n && t.text == 1000 + n,
		   "emits from a signal handler land whole (%d records)", t.records);
	}

	/* transport selection errors */
	{
		UEVENT_OPTS(bad, .transport = 99);
		UEVENT_OPTS(nodir, .transport = UEVENT_TRANSPORT_FILE,
			    .path = "/nonexistent-dir/x.perf.data");

		ok(uevent_open(&bad) == -EINVAL, "transport number out of range is -EINVAL");
		ok(uevent_transport_from_name("carrier-pigeon") == -EINVAL,
		   "unknown transport name is -EINVAL");
		setenv("UEVENT_TRANSPORT", "carrier-pigeon", 1);
		ok(uevent_open(NULL) == -EINVAL && strstr(uevent_reason(), "carrier-pigeon"),
		   "unknown name in $UEVENT_TRANSPORT: -EINVAL, reason names it");
		{
			pthread_t th;
			const char *other = NULL;

			ok(strstr(uevent_reason(), "carrier-pigeon") &&
			   pthread_create(&th, NULL, reason_of_new_thread, &other) == 0 &&
			   pthread_join(th, NULL) == 0 && other && !*other,
			   "the reason channel says why, on this thread only (\"%s\")",
			   uevent_reason());
		}
		setenv("UEVENT_TRANSPORT", "file", 1);
		setenv("UEVENT_FILE", path, 1);
		ok(uevent_open(NULL) == UEVENT_TRANSPORT_FILE, "$UEVENT_TRANSPORT=file selects file");
		setenv("UEVENT_TRANSPORT", "prctl,none", 1);
		ok(uevent_open(NULL) == UEVENT_TRANSPORT_NONE || uevent_transport() == UEVENT_TRANSPORT_PRCTL,
		   "a list falls through to the first usable (%s)", uevent_reason());
		unsetenv("UEVENT_TRANSPORT");
		ok(uevent_open(&nodir) == -ENOENT && strstr(uevent_reason(), "file"),
		   "unwritable file path: -ENOENT, reason names the transport");
	}

	/* none: nothing delivered, the enabled word clear, a mark is a no-op */
	{
		UEVENT_OPTS(none, .transport = UEVENT_TRANSPORT_NONE);

		ok(uevent_open(&none) == UEVENT_TRANSPORT_NONE, "none transport");
		uevent_stats_reset();
		ok(!uevent_enabled() || (*uevent_enabled_ptr & 0xffff),
		   "none: disabled unless a uprobe holds the USDT semaphore");
		uevent_mark("dropped on the floor");
		uevent_stats_get(&st, sizeof(st));
		ok(st.dropped == 0, "none: a mark is not a drop");
	}
	test_foreign_files();
	test_fsize_limit();
	test_enospc();
	uevent_close();
	unlink(path);
	return exit_status();
}
