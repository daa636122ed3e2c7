/*
 * enable-word.c - guest test of the enable word (PR_PERF_UEVENT_ENABLE_WORD, patch 4 of the series)
 * through the raw syscalls.
 *
 * usage: enable-word [patched|stock]   (default: $UEVENT_KERNEL, else patched)
 * On the patched kernel: the registration's errors; the bit follows the open, disable,
 * enable and close of a per-task listener, of one opened disabled, of a per-CPU one, and
 * of PR_TASK_PERF_EVENTS_DISABLE/ENABLE, at once (no wait: the kernel writes it before
 * the call returns); a non-uevents event and another process's listener leave it clear;
 * the other 31 bits are left alone; fork's child keeps the registration with its own
 * state (an inherited listener sets it, the parent's per-task one does not; closing the
 * parent's inherited listener clears the child's); execve drops it; an unmapped word
 * costs nothing but the bit; an unprivileged process registers its own word and sees
 * root's listener on it, not root's listener on root. On the stock kernel the
 * registration is refused (EINVAL).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "tap.h"
#include "kperf.h"

#define BIT		3
#define OTHER_BITS	0xf0000001u	/* user space's bits, which the kernel must keep */
#define PLAN		(1 + 9 + 7 + 2 + 2 + 3 + 2 + 3 + 3 + 3)

static volatile uint32_t word, word2;

static long enable_word(volatile uint32_t *addr, unsigned long bit, unsigned long size)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, bit, size, (void *)addr,
		       PR_PERF_UEVENT_ENABLE_WORD);
}

static long unreg_word(volatile uint32_t *addr, unsigned long bit)
{
	return syscall(SYS_prctl, PR_TASK_PERF_UEVENT, bit, 0UL, (void *)addr,
		       PR_PERF_UEVENT_UNREG_WORD);
}

static int bit_of(volatile uint32_t *w)
{
	return (*w >> BIT) & 1;
}

static int open_listener(pid_t pid, int cpu, int uevents, int inherit, int disabled)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.uevents = uevents;
	a.inherit = inherit;
	a.disabled = disabled;
	a.exclude_kernel = 1;
	return perf_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void errors(void)
{
	struct { const char *what; volatile uint32_t *addr; unsigned long bit, size; int err; }
	cases[] = {
		{ "an unaligned word", (volatile uint32_t *)((char *)&word + 1), BIT, 0, EINVAL },
		{ "bit 32", &word, 32, 0, EINVAL },
		{ "a size", &word, BIT, 4, EINVAL },
		{ "no word", NULL, BIT, 0, EINVAL },
		{ "a kernel address", (volatile uint32_t *)0xffffffff81000000ul, BIT, 0, EFAULT },
	};
	void *page;
	long r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		errno = 0;
		r = enable_word(cases[i].addr, cases[i].bit, cases[i].size);
		ok(r == -1 && errno == cases[i].err, "registration of %s: %s (%s)", cases[i].what,
		   strerror(cases[i].err), r ? strerror(errno) : "accepted");
	}
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	r = page != MAP_FAILED ? enable_word(page, BIT, 0) : 0;
	ok(r == -1 && errno == EFAULT,
	   "a read-only word: EFAULT, nothing registered (%s)", strerror(errno));
	munmap(page, 4096);
	errno = 0;
	r = enable_word((volatile uint32_t *)page, BIT, 0);
	ok(r == -1 && errno == EFAULT,
	   "an unmapped word: EFAULT (%s)", strerror(errno));
	errno = 0;
	r = unreg_word(&word, BIT);
	ok(r == -1 && errno == ENOENT, "unregistering what is not registered: ENOENT (%s)",
	   strerror(errno));
	errno = 0;
	r = syscall(SYS_prctl, PR_TASK_PERF_UEVENT, BIT, 0UL, &word,
		    PR_PERF_UEVENT_ENABLE_WORD | PR_PERF_UEVENT_UNREG_WORD);
	ok(r == -1 && errno == EINVAL, "register and unregister at once: EINVAL (%s)",
	   strerror(errno));
}

/* Two copies of a library in one process: each word is kept; one unregisters. */
static void two_words(void)
{
	int fd, both, after;

	word2 = 0;
	fd = open_listener(0, -1, 1, 0, 0);
	both = fd >= 0 && enable_word(&word2, 0, 0) == 0 && bit_of(&word) == 1 && word2 == 1;
	ok(both, "a second word registered while listened to: both set (%#x %#x)", word, word2);
	close(fd);
	ok(bit_of(&word) == 0 && word2 == 0, "the close clears both (%#x %#x)", word, word2);
	after = unreg_word(&word2, 0) == 0;
	fd = open_listener(0, -1, 1, 0, 0);
	ok(after && bit_of(&word) == 1 && word2 == 0,
	   "the second unregistered: the first still follows, the second is left alone "
	   "(%#x %#x)", word, word2);
	close(fd);
}

/* The bit after each step of a listener's life; 1 when each matched. */
static void per_task(void)
{
	int fd, seen[4];

	word = OTHER_BITS | (1u << BIT);
	ok(enable_word(&word, BIT, 0) == 0 && bit_of(&word) == 0 && word == OTHER_BITS,
	   "registered with nobody listening: the kernel clears the bit at once, keeps the "
	   "others (%#x)", word);
	fd = open_listener(0, -1, 0, 0, 0);
	ok(fd >= 0 && bit_of(&word) == 0, "an event without attr.uevents leaves it clear");
	if (fd >= 0)
		close(fd);

	fd = open_listener(0, -1, 1, 0, 0);
	seen[0] = bit_of(&word);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	seen[1] = bit_of(&word);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	seen[2] = bit_of(&word);
	close(fd);
	seen[3] = bit_of(&word);
	ok(fd >= 0 && seen[0] == 1, "per-task listener opened: set before the open returns");
	ok(seen[1] == 0 && seen[2] == 1, "ioctl DISABLE clears it, ENABLE sets it (%d %d)",
	   seen[1], seen[2]);
	ok(seen[3] == 0 && word == OTHER_BITS, "closed: clear, the other bits kept (%#x)", word);

	fd = open_listener(0, -1, 1, 0, 1);
	seen[0] = bit_of(&word);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	seen[1] = bit_of(&word);
	ok(fd >= 0 && seen[0] == 0 && seen[1] == 1,
	   "opened disabled: clear until ioctl ENABLE (%d %d)", seen[0], seen[1]);
	prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
	seen[0] = bit_of(&word);
	prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
	seen[1] = bit_of(&word);
	ok(seen[0] == 0 && seen[1] == 1,
	   "PR_TASK_PERF_EVENTS_DISABLE clears it, _ENABLE sets it (%d %d)", seen[0], seen[1]);
	close(fd);
}

static void per_cpu(void)
{
	int fd, on, off;

	fd = open_listener(-1, 1, 1, 0, 0);
	if (fd < 0)
		fd = open_listener(-1, 0, 1, 0, 0);
	on = bit_of(&word);
	if (fd >= 0)
		close(fd);
	off = bit_of(&word);
	ok(fd >= 0 && on == 1, "a per-CPU listener sets it (it sees every task)");
	ok(off == 0, "its close clears it");
}

/* A child that sleeps until told, then reports its word; the parent runs fn between. */
static int child_close = -1;	/* the child's copy of a listener's fd, closed in it */

static pid_t child_reporting(int go[2], int res[2])
{
	pid_t pid;

	if (pipe(go) || pipe(res))
		return -1;
	pid = fork();
	if (pid == 0) {
		uint32_t w[2];
		char c;

		w[0] = word;
		if (child_close >= 0)
			close(child_close);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		w[1] = word;
		_exit(write(res[1], w, sizeof(w)) == sizeof(w) ? 0 : 4);
	}
	return pid;
}

static int child_report(pid_t pid, int go[2], int res[2], uint32_t w[2])
{
	int status = -1;

	w[0] = w[1] = ~0u;
	if (pid < 0)
		return 0;
	if (write(go[1], "g", 1) != 1 || read(res[0], w, 2 * sizeof(*w)) != 2 * sizeof(*w))
		diag("the child did not report");
	waitpid(pid, &status, 0);
	close(go[0]), close(go[1]), close(res[0]), close(res[1]);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void other_process(void)
{
	int go[2], res[2], fd, rep;
	uint32_t w[2];
	pid_t pid;

	/* A listener on another process leaves this one's word clear. */
	pid = child_reporting(go, res);
	fd = open_listener(pid, -1, 1, 0, 0);
	ok(fd >= 0 && bit_of(&word) == 0, "a listener on another process: this one's bit clear");
	rep = child_report(pid, go, res, w);
	ok(rep && ((w[1] >> BIT) & 1) == 1,
	   "and that process's kept registration has it set (%#x)", w[1]);
	if (fd >= 0)
		close(fd);
}

static void forks(void)
{
	int go[2], res[2], fd, rep;
	uint32_t w[2];
	pid_t pid;

	/* The parent's per-task listener is not inherited: the child's copy is cleared. */
	fd = open_listener(0, -1, 1, 0, 0);
	pid = child_reporting(go, res);
	rep = bit_of(&word) == 1 && child_report(pid, go, res, w);
	ok(fd >= 0 && rep &&
	   ((w[0] >> BIT) & 1) == 0 && (w[0] & OTHER_BITS) == OTHER_BITS,
	   "fork under a per-task listener: the parent's bit set, the child's cleared before it "
	   "ran (%#x)", w[0]);
	close(fd);

	/* An inherited listener: the child has it too, until the parent closes it. */
	fd = open_listener(0, -1, 1, 1, 0);
	child_close = fd;
	pid = child_reporting(go, res);
	child_close = -1;
	close(fd);
	rep = child_report(pid, go, res, w);
	ok(rep && ((w[0] >> BIT) & 1) == 1,
	   "fork under an inherited listener: the child's bit set (%#x)", w[0]);
	ok(((w[1] >> BIT) & 1) == 0 && bit_of(&word) == 0,
	   "the parent closes it: the child's bit and the parent's clear (%#x)", w[1]);
}

/* The execve()d image: its word is where the old image's was (a static binary). */
static int exec_child(void)
{
	int fd, st = 0;

	if (word != 0)
		st |= 1;
	fd = open_listener(0, -1, 1, 0, 0);	/* a change: a kept registration would write */
	if (fd < 0 || word != 0)
		st |= 2;
	if (enable_word(&word, BIT, 0) || bit_of(&word) != 1)
		st |= 4;
	close(fd);
	if (bit_of(&word) != 0)
		st |= 8;
	return st;
}

static void exec(void)
{
	int fd, status = -1;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		fd = open_listener(0, -1, 1, 0, 0);
		if (fd < 0 || bit_of(&word) != 1)
			_exit(16);
		execl("/proc/self/exe", "enable-word", "exec-child", (char *)NULL);
		_exit(32);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & (1 | 2 | 16 | 32)), "execve drops the registration: "
	   "the new image's word stays 0 (status %#x)", status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the new image registers it: set at once, cleared at its listener's close");
}

static void unmapped(void)
{
	volatile uint32_t *page;
	int fd, ok_emit;
	struct ring r;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok(page != MAP_FAILED && enable_word(page, BIT, 0) == 0,
	   "a word in a fresh page registers");
	munmap((void *)page, 4096);
	fd = open_listener(0, -1, 1, 0, 0);
	ok_emit = fd >= 0 && ring_map(&r, fd, 1) == 0 &&
		  syscall(SYS_prctl, PR_TASK_PERF_UEVENT, 1, 4, "abc", 0) == 1 &&
		  ring_drain(&r, NULL, NULL) == 1;
	if (fd >= 0) {
		ring_unmap(&r);
		close(fd);
	}
	ok(fd >= 0 && ok_emit && bit_of(&word) == 0,
	   "its page unmapped: a listener comes and goes, the prctl still delivers, the "
	   "other word follows");
	ok(unreg_word(page, BIT) == 0 && enable_word(&word, BIT, 0) == 0 && bit_of(&word) == 0,
	   "the unmapped one unregisters; registering a mapped word again works");
}

static void unprivileged(void)
{
	int go[2], res[2], fd, mine;
	uint32_t w[3] = { ~0u, ~0u, ~0u };
	int status = -1;
	pid_t pid;

	if (pipe(go) || pipe(res)) {
		skip(3, "pipe failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		char c;

		word = 0;
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		w[0] = enable_word(&word, BIT, 0) == 0 ? word : ~0u;
		if (write(res[1], w, sizeof(*w)) != sizeof(*w) || read(go[0], &c, 1) != 1)
			_exit(3);
		w[1] = word;
		if (write(res[1], w + 1, sizeof(*w)) != sizeof(*w) || read(go[0], &c, 1) != 1)
			_exit(3);
		w[2] = word;
		_exit(write(res[1], w + 2, sizeof(*w)) == sizeof(*w) ? 0 : 4);
	}
	/* Each step waits for the child's answer to the one before. */
	if (read(res[0], w, sizeof(*w)) != sizeof(*w))
		diag("the unprivileged child did not register");
	/* root listens to itself: the unprivileged process must not learn it */
	mine = open_listener(0, -1, 1, 0, 0);
	if (write(go[1], "g", 1) != 1 || read(res[0], w + 1, sizeof(*w)) != sizeof(*w))
		diag("no answer");
	fd = open_listener(pid, -1, 1, 0, 0);
	if (write(go[1], "g", 1) != 1 || read(res[0], w + 2, sizeof(*w)) != sizeof(*w))
		diag("the unprivileged child did not report");
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && w[0] == 0,
	   "unprivileged (uid 65534): registering its own word works (status %#x, %#x)",
	   status, w[0]);
	ok(w[1] == 0, "root's listener on root: the unprivileged word stays clear (%#x)", w[1]);
	ok(w[2] == 1u << BIT, "root's listener on it: set (%#x)", w[2]);
	if (fd >= 0)
		close(fd);
	if (mine >= 0)
		close(mine);
	close(go[0]), close(go[1]), close(res[0]), close(res[1]);
}

static int run_stock(void)
{
	long r;

	plan(1);
	errno = 0;
	r = enable_word(&word, BIT, 0);
	ok(r == -1 && errno == EINVAL, "stock: the registration is refused: EINVAL (%s)",
	   r ? strerror(errno) : "accepted");
	return exit_status();
}

int main(int argc, char **argv)
{
	const char *flavour = argc > 1 ? argv[1] : getenv("UEVENT_KERNEL");
	struct perf_uevent_abi abi;
	long r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (flavour && !strcmp(flavour, "exec-child"))
		return exec_child();
	if (flavour && !strcmp(flavour, "stock"))
		return run_stock();

	plan(PLAN);
	memset(&abi, 0, sizeof(abi));
	r = syscall(SYS_prctl, PR_TASK_PERF_UEVENT, 0, sizeof(abi), &abi, PR_PERF_UEVENT_QUERY);
	ok(r == 0 && (abi.features & PERF_UEVENT_FEAT_ENABLE_WORD),
	   "the query reports PERF_UEVENT_FEAT_ENABLE_WORD (features %#x)", abi.features);
	errors();
	per_task();
	per_cpu();
	two_words();
	other_process();
	forks();
	exec();
	unmapped();
	unprivileged();
	return exit_status();
}
