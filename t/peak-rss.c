/* peak-rss.c - runs a command and writes its peak resident size in KiB to a file: what
 * the tests of memory use measure (a shell cannot, and an interpreter that forks the
 * command counts its own size, which the child's peak keeps across exec). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: peak-rss OUT CMD [ARG...]: CMD's peak RSS (KiB) into OUT, "
			"its exit status as ours\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "peak-rss: fork: %s\n", strerror(errno));
		return 2;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "peak-rss: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "peak-rss: wait4: %s\n", strerror(errno));
			return 2;
		}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f)) {
		fprintf(stderr, "peak-rss: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
