/* usdt-fork.c - how often a forked child of a traced process loses its usdt probes.
 *
 * A session (usdt transport, inherited per-task events) watches this process; it forks
 * children that make 20 marks each and counts, per child, the marks that arrive. Two
 * rounds: the process quiet while it forks, then with a thread that keeps starting
 * short-lived threads. On the 6.18 host, a thread exiting during the fork leaves some
 * children with their breakpoints removed and their semaphore back at 0: those children
 * see no listener and their marks go nowhere (their emitted count stops there). This
 * is the kernel's uprobe filter, not the library; docs/format.md says what to do. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"

#define MARKS 20

static volatile int stop;

static void *nothing(void *arg)
{
	return arg;
}

static void *churn(void *arg)
{
	while (!stop) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) == 0)
			pthread_join(t, NULL);
	}
	return arg;
}

/* Forks n children; returns how many did not deliver all their marks, and how many of
 * those saw the enabled word at 0 at their start. */
static int round_of(struct uevent_session *s, int n, int *word_off)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	int bad = 0;

	*word_off = 0;
	for (int k = 0; k < n; k++) {
		int pfd[2], got = 0, idle = 0;
		unsigned w = 1;
		pid_t c;

		if (pipe(pfd) < 0)
			return -1;
		c = fork();
		if (c == 0) {
			w = uevent_enabled_word;
			for (int i = 0; i < MARKS; i++)
				uevent_mark("child");
			if (write(pfd[1], &w, sizeof(w)) < 0)
				_exit(1);
			_exit(0);
		}
		close(pfd[1]);
		if (c < 0 || read(pfd[0], &w, sizeof(w)) != sizeof(w))
			return -1;
		close(pfd[0]);
		waitpid(c, NULL, 0);
		while (idle < 2) {
			int ret = uevent_session__next(s, &r, 50);

			if (ret <= 0) {
				idle++;
				continue;
			}
			idle = 0;
			got += r.type == PERF_RECORD_UEVENT && r.id.pid == (uint32_t)c;
		}
		if (got != MARKS) {
			bad++;
			*word_off += !(w & 0xffff);
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, bad, off;
	struct uevent_session_opts so = { .sz = sizeof(so),
					  .transports = 1u << UEVENT_TRANSPORT_USDT,
					  .usdt_max_payload = 256 };
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USDT, .flags = UEVENT_OPEN_IGNORE_ENV);
	struct uevent_session *s;
	pthread_t t;

	if (uevent_open(&o) < 0 || !(s = uevent_session__open(&so))) {
		printf("usdt-fork: skipped, no usdt session here: %s (%s)\n", strerror(errno),
		       uevent_reason());
		return 0;
	}
	bad = round_of(s, n, &off);
	if (bad < 0)
		goto fail;
	printf("usdt-fork: quiet process: %d of %d children lost their marks (%d with the "
	       "word at 0)\n", bad, n, off);
	pthread_create(&t, NULL, churn, NULL);
	bad = round_of(s, n, &off);
	stop = 1;
	pthread_join(t, NULL);
	if (bad < 0)
		goto fail;
	printf("usdt-fork: threads exiting during fork: %d of %d children lost their marks "
	       "(%d with the word at 0)\n", bad, n, off);
	uevent_session__close(s);
	return 0;
fail:
	perror("usdt-fork");
	return 1;
}
