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
#define PLAN	(3 + 5)

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
	uint64_t end;
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
	end = now_ns() + 2000000000ull;
	while (now_ns() < end) {
		fd = open_listener(0, -1, 0);
		if (fd >= 0) {
			opened++;
			close(fd);	/* EBADF when the other thread was first */
		}
	}
	race_stop = 1;
	pthread_join(t, NULL);
	diag("race: %lu opens, %lu closed by the other thread first", opened, race_closed);
	ok(opened > 100, "race: %lu opens of a uevents listener in 2 s while another thread "
	   "closes their fd numbers", opened);
	ok(bit_becomes(&word, 0, 1000) && unreg_word(&word, BIT) == 0,
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
	page[0] = 0;
	reg.range.start = (unsigned long)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (page == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		skip(5, "UFFDIO_REGISTER failed");
		return;
	}
	sp = spawner(go, res);
	/* Registered while the page is there; then the page goes: the next write faults. */
	ok(enable_word(page, BIT) == 0 && madvise((void *)page, 4096, MADV_DONTNEED) == 0,
	   "slow word: registered in a userfaultfd page, then the page dropped");

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
		forked = poll(&pfd, 1, 5000) == 1 && read(res[0], &ch, 1) == 1 && ch == 'y';
	}
	ok(forked, "slow word: meanwhile another process forks and execs (within 5 s)");

	/* The kernel asked for the page; resolve it, and the bit lands. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	got = poll(&pfd, 1, 3000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	      msg.event == UFFD_EVENT_PAGEFAULT;
	zp.range.start = (unsigned long)page;
	zp.range.len = 4096;
	zp.mode = 0;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
		diag("UFFDIO_ZEROPAGE: %s", strerror(errno));
	ok(got, "slow word: the write faulted into the handler, not failed (the fault is "
	   "retried)");
	ok(bit_becomes(page, 1, 3000), "slow word: resolved, the bit is set (%#x)", *page);
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
	return exit_status();
}
