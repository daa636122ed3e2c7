/* file-edges.c - the file transport when a fork lands in the middle of its work: an
 * open. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "uevent.h"

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

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/uevent-file-edges-XXXXXX");
	if (!mkdtemp(dir))
		plan_skip_all("no temporary directory");
	tap_cleanup(dir);
	plan(1);
	test_fork_in_open();
	rmdir(dir);
	return exit_status();
}
