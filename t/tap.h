/* tap.h - a small TAP producer for the C tests (plan, ok, skip, diag, exit_status). */
#ifndef UEVENT_TAP_H
#define UEVENT_TAP_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int tap_n, tap_failed, tap_planned;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void plan_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

__attribute__((format(printf, 2, 3)))
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline int exit_status(void)
{
	if (tap_planned && tap_n != tap_planned)
		diag("planned %d tests, ran %d", tap_planned, tap_n);
	return (tap_failed || (tap_planned && tap_n != tap_planned)) ? 1 : 0;
}

/* A test's pseudo-random numbers (xorshift64), the same sequence every run, so that a
 * failure found with them is found again. */
static uint64_t tap_rand_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t tap_rand(void)
{
	tap_rand_state ^= tap_rand_state << 13;
	tap_rand_state ^= tap_rand_state >> 7;
	tap_rand_state ^= tap_rand_state << 17;
	return tap_rand_state;
}

/*
 * tap_cleanup(path): a file or directory the test made (its temporary directory, its
 * /tmp/perf-PID.map) is removed (rm -rf) however the test ends: at exit (its end, a
 * skip, a bail-out), or on a signal that would have ended it (a crash, abort(), an
 * alarm, the harness's or a user's kill, a reader gone: `t/x | head`), which then ends
 * it as before. Only signals whose action is still the default are taken (a
 * sanitizer's handlers stay), and only in the process that asked: a child it forks
 * leaves the paths be. A kill -9 still leaves them. Up to 4 paths.
 */
static char tap_cleanup_paths[4][4096];
static int tap_cleanup_n;
static pid_t tap_cleanup_pid;

static inline void tap_cleanup_run(void)
{
	char *argv[4 + 4] = { "rm", "-rf", "--" };
	pid_t pid;
	int i;

	if (!tap_cleanup_n || getpid() != tap_cleanup_pid)
		return;
	for (i = 0; i < tap_cleanup_n; i++)
		argv[3 + i] = tap_cleanup_paths[i];
	argv[3 + i] = NULL;
	/* vfork, not fork: no atfork handler runs (the library's take its locks, which
	 * the signal may have interrupted a thread holding), and the child only execs */
	pid = vfork();
	if (pid == 0) {
		execv("/bin/rm", argv);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	tap_cleanup_n = 0;
}

static inline void tap_cleanup_signal(int sig)
{
	tap_cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void tap_cleanup(const char *path)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGABRT,
				    SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	struct sigaction sa, old;
	size_t i;

	if (tap_cleanup_n == 4 ||
	    snprintf(tap_cleanup_paths[tap_cleanup_n], sizeof(tap_cleanup_paths[0]), "%s",
		     path) >= (int)sizeof(tap_cleanup_paths[0])) {
		diag("tap_cleanup: %s not taken", path);
		return;
	}
	if (tap_cleanup_n++ && tap_cleanup_pid == getpid())
		return;
	tap_cleanup_pid = getpid();
	atexit(tap_cleanup_run);
	sa.sa_handler = tap_cleanup_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

#endif
