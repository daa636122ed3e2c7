/* session-open.c - what a live session costs to open and close (usdt, this process), alone
 * and beside another session of the process, and what a process killed with sessions
 * open costs the kernel to exit. Ratios against the lone session, measured in this run. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uevent.h"
#include "bench.h"

static struct uevent_session_opts so = {
	.sz = sizeof(so), .pid = 0, .transports = 1u << UEVENT_TRANSPORT_USDT,
};

/* Best of n: open and close in ms. */
static int open_close(int n, double *open_ms, double *close_ms)
{
	*open_ms = *close_ms = 1e30;
	for (int i = 0; i < n; i++) {
		double t0 = now(), t1, t2;
		struct uevent_session *s = uevent_session__open(&so);

		t1 = now();
		if (!s)
			return -errno;
		uevent_session__close(s);
		t2 = now();
		if ((t1 - t0) / 1e6 < *open_ms)
			*open_ms = (t1 - t0) / 1e6;
		if ((t2 - t1) / 1e6 < *close_ms)
			*close_ms = (t2 - t1) / 1e6;
	}
	return 0;
}

/* ms from SIGKILL to the reaped exit of a child holding k sessions. */
static double killed_exit(int k)
{
	int fd[2];
	char c;
	pid_t pid;
	double t0;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < k; i++)
			if (!uevent_session__open(&so))
				_exit(1);
		(void)!write(fd[1], "o", 1);
		pause();
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &c, 1) != 1)
		return -1;
	close(fd[0]);
	t0 = now();
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return (now() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5, k = argc > 2 ? atoi(argv[2]) : 20;
	double lo, lc, so_, sc, ex1, exk;
	struct uevent_session *other;
	int err;

	if (getuid() != 0) {
		printf("session-open: SKIP (needs root to add uprobe events)\n");
		return 0;
	}
	err = open_close(n, &lo, &lc);
	if (err < 0) {
		printf("session-open: SKIP (no usdt session: %s)\n", strerror(-err));
		return 0;
	}
	other = uevent_session__open(&so);
	open_close(n, &so_, &sc);
	uevent_session__close(other);
	ex1 = killed_exit(1);
	exk = killed_exit(k);
	printf("session open/close, usdt, this process (best of %d, ms):\n", n);
	printf("  alone:                 open %7.1f  close %7.1f  (baseline)\n", lo, lc);
	printf("  beside another:        open %7.1f  close %7.1f  (%.2fx, %.2fx of alone)\n",
	       so_, sc, so_ / lo, sc / lc);
	printf("  exit, killed with 1:   %7.1f ms\n", ex1);
	printf("  exit, killed with %-3d: %7.1f ms  (%.2fx of 1 session's)\n", k, exk, exk / ex1);
	return 0;
}
