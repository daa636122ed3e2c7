/*
 * uevent-adversary.c - guest tests of the series' defects found in review (issue 21),
 * each written to fail on the series before its fix. Run under the patched and the
 * debug kernel (KASAN, lockdep; the harness fails the run on any WARN/KASAN line).
 *
 * usage: uevent-adversary [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 *
 *  1. open/close race: one thread opens attr.uevents events while another closes the
 *     fd numbers they get, with an enable word registered (the open must not touch the
 *     event once its fd is installed; KASAN reports it if it does).
 *  2. a slow word: the enable word sits in a userfaultfd page whose fault nobody
 *     resolves; a listener's open returns, another process forks and execs meanwhile,
 *     and the bit lands once the fault is resolved (the write is retried by the
 *     kernel's fault worker, not dropped).
 *  3. no oracle: an unprivileged process gets EFAULT for an unreadable payload whether
 *     or not it is watched, and 0 for a readable one either way; a per-CPU listener of
 *     a cgroup sets the word of a process in that cgroup only.
 *  4. a sample larger than header.size can say (a long user callchain), which mainline
 *     reaches, writes no WARN into the kernel log.
 * On the stock kernel the program has nothing to test (SKIP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>
#include <linux/userfaultfd.h>

#include "tap.h"
#include "kperf.h"

#define BIT	5
#define PLAN	(3 + 5 + 4 + 2 + 2)

static volatile uint32_t word;

static long enable_word(volatile uint32_t *addr, unsigned long bit)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, bit, 0UL, (void *)addr,
		       PR_PERF_UEVENT_ENABLE_WORD);
}

static long unreg_word(volatile uint32_t *addr, unsigned long bit)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, bit, 0UL, (void *)addr,
		       PR_PERF_UEVENT_UNREG_WORD);
}

static int open_listener(pid_t pid, int cpu, unsigned long flags)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.uevents = 1;
	a.exclude_kernel = 1;
	return perf_open(&a, pid, cpu, -1, flags | PERF_FLAG_FD_CLOEXEC);
}

static int bit_set(volatile uint32_t *w)
{
	return (*w >> BIT) & 1;
}

/* Wait up to ms for the bit to read want. */
static int bit_becomes(volatile uint32_t *w, int want, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (bit_set(w) == want)
			return 1;
		usleep(1000);
	}
	return bit_set(w) == want;
}

/* --- 1. open/close race --------------------------------------------------------- */

static volatile int race_stop;
static volatile int race_fd = -1;
static unsigned long race_closed;

static void *race_closer(void *arg)
{
	(void)arg;
	while (!race_stop) {
		int fd = race_fd;

		/* the number the next open will get, closed as soon as it exists */
		if (fd > 2 && close(fd) == 0)
			race_closed++;
	}
	return NULL;
}

static void open_close_race(void)
{
	unsigned long opened = 0;
	uint64_t start, end;
	pthread_t t;
	int fd;

	word = 0;
	ok(enable_word(&word, BIT) == 0, "race: an enable word registered");
	/* the lowest free number: what each open below gets */
	fd = open("/dev/null", O_RDONLY);
	close(fd);
	race_fd = fd;
	race_stop = 0;
	if (pthread_create(&t, NULL, race_closer, NULL)) {
		skip(2, "pthread_create failed");
		return;
	}
	/*
	 * 2 s, longer (up to 45 s) until 150 opens: the debug kernel under TCG manages
	 * about 130 in 2 s on an idle 2-core host and 8 a second on a loaded one
	 */
	start = now_ns();
	end = start + 2000000000ull;
	while (now_ns() < end || (opened < 150 && now_ns() - start < 45000000000ull)) {
		fd = open_listener(0, -1, 0);
		if (fd >= 0) {
			opened++;
			close(fd);	/* EBADF when the other thread was first */
		}
	}
	race_stop = 1;
	pthread_join(t, NULL);
	diag("race: %lu opens, %lu closed by the other thread first", opened, race_closed);
	ok(opened > 100, "race: %lu opens of a uevents listener in %.1f s while another "
	   "thread closes their fd numbers", opened, (now_ns() - start) / 1e9);
	ok(bit_becomes(&word, 0, 10000) && unreg_word(&word, BIT) == 0,
	   "race: every listener closed, the bit is clear (%#x)", word);
}

/* --- 2. a word in a page that faults slowly ------------------------------------------ */

/* A process with no registration that forks and execs a program when told. */
static pid_t spawner(int go[2], int res[2])
{
	pid_t pid;

	if (pipe(go) || pipe(res))
		return -1;
	pid = fork();
	if (pid == 0) {
		int status = -1;
		pid_t c;
		char ch;

		if (unreg_word(&word, BIT) && errno != ENOENT)
			_exit(5);
		if (read(go[0], &ch, 1) != 1)
			_exit(3);
		c = fork();
		if (c == 0) {
			execl("/bin/busybox", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(c, &status, 0);
		ch = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 'y' : 'n';
		_exit(write(res[1], &ch, 1) == 1 ? 0 : 4);
	}
	return pid;
}

static void slow_word(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	struct pollfd pfd;
	int go[2], res[2], uffd, fd, got, forked, status;
	volatile uint32_t *page;
	uint64_t t0, t_open;
	pid_t sp;
	char ch = 0;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		skip(5, "no userfaultfd in this kernel");
		return;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		skip(5, "no page to register");
		return;
	}
	page[0] = 0;
	sp = spawner(go, res);
	/*
	 * Registered while the page is there; then the page goes (a fresh mapping in its
	 * place: tinyconfig has no madvise) under userfaultfd: the next write faults.
	 */
	got = enable_word(page, BIT) == 0 && munmap((void *)page, 4096) == 0 &&
	      mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == (void *)page;
	reg.range.start = (unsigned long)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (got && ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		diag("UFFDIO_REGISTER: %s", strerror(errno));
		got = 0;
	}
	ok(got, "slow word: registered in a userfaultfd page, then the page dropped");

	t0 = now_ns();
	fd = open_listener(0, -1, 0);
	t_open = now_ns() - t0;
	ok(fd >= 0, "slow word: a listener's open returns while the word's fault waits "
	   "(%.1f ms)", t_open / 1e6);

	/* Another process forks and execs while the fault is outstanding. */
	forked = 0;
	if (sp > 0 && write(go[1], "g", 1) == 1) {
		pfd.fd = res[0];
		pfd.events = POLLIN;
		forked = poll(&pfd, 1, 20000) == 1 && read(res[0], &ch, 1) == 1 && ch == 'y';
	}
	ok(forked, "slow word: meanwhile another process forks and execs (within 20 s; the "
	   "fault is held till after)");

	/* The kernel asked for the page; resolve it, and the bit lands. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	got = poll(&pfd, 1, 20000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	      msg.event == UFFD_EVENT_PAGEFAULT;
	zp.range.start = (unsigned long)page;
	zp.range.len = 4096;
	zp.mode = 0;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
		diag("UFFDIO_ZEROPAGE: %s", strerror(errno));
	ok(got, "slow word: the write faulted into the handler, not failed (the fault is "
	   "retried)");
	got = bit_becomes(page, 1, 10000);	/* before the word is read for the message */
	ok(got, "slow word: resolved, the bit is set (%#x)", *page);
	if (fd >= 0)
		close(fd);
	if (!bit_set(page))
		diag("cleared at the close");
	unreg_word(page, BIT);
	if (sp > 0)
		waitpid(sp, &status, 0);
	close(go[0]), close(go[1]), close(res[0]), close(res[1]);
	close(uffd);
	munmap((void *)page, 4096);
}

/* --- 3. what an unprivileged process learns ---------------------------------------- */

static long uevent(unsigned long type, unsigned long size, const void *data)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, type, size, data, 0UL);
}

static void no_oracle(void)
{
	int go[2], res[2], fd = -1, status = -1;
	long r[4] = { 99, 99, 99, 99 };
	int e[4] = { 0, 0, 0, 0 };
	pid_t pid;

	if (pipe(go) || pipe(res)) {
		skip(4, "pipe failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		char *hole = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long out[4];
		int err[4];
		char c;

		if (hole == MAP_FAILED || munmap(hole + 4096, 4096))
			_exit(6);
		memset(hole, 'x', 4096);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		for (int round = 0; round < 2; round++) {
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			errno = 0;
			out[2 * round] = uevent(1, 64, hole + 4096 - 32);	/* runs off the page */
			err[2 * round] = errno;
			errno = 0;
			out[2 * round + 1] = uevent(1, 16, hole);
			err[2 * round + 1] = errno;
			if (write(res[1], "r", 1) != 1)
				_exit(4);
		}
		if (write(res[1], out, sizeof(out)) != sizeof(out) ||
		    write(res[1], err, sizeof(err)) != sizeof(err))
			_exit(4);
		_exit(0);
	}
	{
		char c;

		/* unwatched */
		if (write(go[1], "g", 1) != 1 || read(res[0], &c, 1) != 1)
			diag("the unprivileged child did not answer");
		/* watched by root */
		fd = open_listener(pid, -1, 0);
		if (write(go[1], "g", 1) != 1 || read(res[0], &c, 1) != 1)
			diag("the unprivileged child did not answer");
		if (read(res[0], r, sizeof(r)) != sizeof(r) || read(res[0], e, sizeof(e)) != sizeof(e))
			diag("no results");
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && fd >= 0,
	   "oracle: an unprivileged process emitted unwatched, then watched (status %#x)", status);
	ok(r[0] == -1 && e[0] == EFAULT,
	   "oracle: unwatched, a payload running into an unmapped page is EFAULT (%ld, %s)",
	   r[0], strerror(e[0]));
	ok(r[2] == -1 && e[2] == EFAULT,
	   "oracle: watched, the same EFAULT (%ld, %s)", r[2], strerror(e[2]));
	ok(r[1] == 0 && r[3] == 0, "oracle: a readable payload returns 0 unwatched and watched "
	   "(%ld %ld)", r[1], r[3]);
	if (fd >= 0)
		close(fd);
	close(go[0]), close(go[1]), close(res[0]), close(res[1]);
}

/* A child in cgroup dir (or left where it is when dir is NULL) that reports its word. */
static pid_t cgroup_child(const char *dir, int go[2], int res[2])
{
	pid_t pid;

	if (pipe(go) || pipe(res))
		return -1;
	pid = fork();
	if (pid == 0) {
		char path[256], c;
		uint32_t w;
		FILE *f;

		word = 0;
		if (dir) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
			f = fopen(path, "w");
			if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
				_exit(2);
		}
		if (enable_word(&word, BIT))
			_exit(3);
		if (write(res[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		/* a word whose mm was busy is written by the worker: wait up to 3 s for it
		   (the child outside the cgroup waits all of it) */
		for (int ms = 0; ms < 3000 && !((word >> BIT) & 1); ms += 10)
			usleep(10000);
		w = word;
		_exit(write(res[1], &w, sizeof(w)) == sizeof(w) ? 0 : 5);
	}
	return pid;
}

static void cgroup_listener(void)
{
	const char *root = "/sys/fs/cgroup", *dir = "/sys/fs/cgroup/uevent-a";
	int go_in[2], res_in[2], go_out[2], res_out[2], cg, fd[8], n = 0, ncpu, st_in = -1,
	    st_out = -1;
	uint32_t w_in = ~0u, w_out = ~0u;
	int skipped = 0;
	pid_t in, out;
	char c;

	/* A cgroup v1 hierarchy of the perf_event controller: on cgroup2, perf_event is an
	 * implicit controller, and a child gets its css only once some other controller was
	 * written to the root's cgroup.subtree_control (cgroup_calc_subtree_ss_mask());
	 * the tiny config has no other controller, and the v1 hierarchy gives every cgroup
	 * a perf_event css. The kernel's cgroup match is the same css either way. */
	mkdir(root, 0755);
	if (mount("cgroup", root, "cgroup", 0, "perf_event") && errno != EBUSY) {
		skip(2, "no perf_event cgroup hierarchy in this kernel");
		return;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		skip(2, "cannot make a cgroup");
		return;
	}
	cg = open(dir, O_RDONLY | O_DIRECTORY);
	in = cgroup_child(dir, go_in, res_in);
	out = cgroup_child(NULL, go_out, res_out);
	if (read(res_in[0], &c, 1) != 1 || read(res_out[0], &c, 1) != 1)
		diag("a cgroup child did not register");
	/* A per-CPU listener on every CPU, of the cgroup: it sees only that cgroup. */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (int cpu = 0; cpu < ncpu && cpu < 8; cpu++) {
		int f = open_listener(cg, cpu, PERF_FLAG_PID_CGROUP);

		if (f >= 0)
			fd[n++] = f;
		else
			diag("cgroup listener on CPU %d: %s", cpu, strerror(errno));
	}
	if (n == 0 && errno == ENOENT) {
		/* css_tryget_online_from_dir(): the new cgroup has no perf_event css */
		skip(2, "a cgroup listener cannot open here (ENOENT: no perf_event css)");
		skipped = 1;
		goto out;
	}
	if (write(go_in[1], "g", 1) != 1 || read(res_in[0], &w_in, sizeof(w_in)) != sizeof(w_in))
		diag("no word from the child in the cgroup");
	if (write(go_out[1], "g", 1) != 1 || read(res_out[0], &w_out, sizeof(w_out)) != sizeof(w_out))
		diag("no word from the child outside");
	waitpid(in, &st_in, 0);
	waitpid(out, &st_out, 0);
	ok(n == ncpu && WIFEXITED(st_in) && WEXITSTATUS(st_in) == 0 && ((w_in >> BIT) & 1),
	   "cgroup: a per-CPU listener of the cgroup sets the word of a process in it (%d of "
	   "%d opened, %#x)", n, ncpu, w_in);
	ok(WIFEXITED(st_out) && WEXITSTATUS(st_out) == 0 && !((w_out >> BIT) & 1),
	   "cgroup: and not the word of a process outside it, in 3 s (%#x)", w_out);
out:
	if (skipped) {	/* let the children go */
		if (write(go_in[1], "g", 1) != 1 || write(go_out[1], "g", 1) != 1)
			diag("cannot release the cgroup children");
		waitpid(in, &st_in, 0);
		waitpid(out, &st_out, 0);
	}
	while (n > 0)
		close(fd[--n]);
	close(cg);
	rmdir(dir);
	close(go_in[0]), close(go_in[1]), close(res_in[0]), close(res_in[1]);
	close(go_out[0]), close(go_out[1]), close(res_out[0]), close(res_out[1]);
}

/* --- 4. a sample larger than header.size ---------------------------------------------- */

#define DEEP 9000

static volatile char *deep_page;

__attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")))
static int deep(int n)
{
	int r;

	if (n == 0) {
		deep_page[0] = 1;	/* a page fault: the sample, DEEP frames down */
		return 1;
	}
	r = deep(n - 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static int klog_has(const char *what)
{
	int len = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf;
	int n, found;

	if (len <= 0)
		return -1;
	buf = malloc(len + 1);
	if (!buf)
		return -1;
	n = klogctl(3, buf, len);	/* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = 0;
	found = strstr(buf, what) != NULL;
	free(buf);
	return found;
}

static void long_callchain(void)
{
	const char *sysctl = "/proc/sys/kernel/perf_event_max_stack";
	struct perf_event_attr a;
	char old[32] = "127";
	uint64_t count = 0;
	int fd, before, after;
	FILE *f;

	f = fopen(sysctl, "r");
	if (!f) {
		skip(2, "no /proc/sys/kernel/perf_event_max_stack");
		return;
	}
	if (!fgets(old, sizeof(old), f))
		strcpy(old, "127");
	fclose(f);
	f = fopen(sysctl, "w");
	if (!f || fprintf(f, "%d\n", DEEP + 64) < 0 || fclose(f)) {
		skip(2, "cannot raise perf_event_max_stack");
		return;
	}
	before = klog_has("WARNING:");
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TLS_USER;
	a.sample_tls_user = 4096;
	a.exclude_kernel = 1;
	a.exclude_callchain_kernel = 1;
	a.disabled = 1;
	/* No ring: the sample is prepared (and sized) but written nowhere. */
	fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		a.sample_type &= ~PERF_SAMPLE_TLS_USER;
		a.sample_tls_user = 0;
		fd = perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	deep_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd >= 0 && deep_page != MAP_FAILED) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		deep(DEEP);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			count = 0;
		close(fd);
	}
	after = klog_has("WARNING:");
	f = fopen(sysctl, "w");
	if (f) {
		fputs(old, f);
		fclose(f);
	}
	ok(fd >= 0 && count >= 1, "long callchain: a page-fault sample %d frames down (%llu "
	   "faults counted)", DEEP, (unsigned long long)count);
	ok(before == 0 && after == 0, "long callchain: a sample beyond header.size's 64 KiB "
	   "(as mainline can make) writes no WARNING (before %d, after %d)", before, after);
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "stock"))
		plan_skip_all("stock kernel: no uevents to attack");
	if (geteuid() != 0)
		plan_skip_all("needs root (the guest runs as root)");
	plan(PLAN);
	open_close_race();
	slow_word();
	no_oracle();
	cgroup_listener();
	long_callchain();
	return exit_status();
}
