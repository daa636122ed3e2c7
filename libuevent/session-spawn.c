/* session-spawn.c - uevent_session__spawn(): a command started under a session that
 * already watches it, so its first marks are heard (as `uevent record -- CMD`). */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

/* The transports the child may be told to use, in the order the parent names them. */
static const char *const spawn_env[] = {
	"UEVENT_TRANSPORT=prctl",
	"UEVENT_TRANSPORT=user_events",
	"UEVENT_TRANSPORT=usdt",
};

/*
 * environ less our variables, plus UEVENT_TRANSPORT=t (and for usdt the wait for the
 * tracer: the session attaches to each copy of the probes when the child maps it, so
 * its libuevent waits up to 5 s for that before the program runs). Built before the
 * fork: between fork and exec the child only reads and calls async-signal-safe code.
 */
static char **make_env(int t)
{
	size_t n = 0, i, j = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "UEVENT_TRANSPORT=", 17) &&
		    strncmp(environ[i], "UEVENT_WAIT_TRACER=", 19))
			env[j++] = environ[i];
	env[j++] = (char *)spawn_env[t];
	if (t == 2)
		env[j++] = (char *)"UEVENT_WAIT_TRACER=5000";
	return env;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

UEVENT_EXPORT struct uevent_session *uevent_session__spawn(const struct uevent_session_opts *opts,
							   char *const argv[])
{
	struct uevent_session_opts o;
	struct uevent_session *s = NULL;
	char **env[3] = { NULL, NULL, NULL };
	int go[2] = { -1, -1 }, ex[2] = { -1, -1 }, err, t, i, status;
	unsigned int tr;
	uint8_t which;
	pid_t child = -1;
	ssize_t n;

	if (!argv || !argv[0])
		return errno = EINVAL, NULL;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	if (opts) {
		err = _uevent_opts_copy(&o, sizeof(o), opts,
					offsetof(struct uevent_session_opts, flags));
		if (err < 0)
			return errno = -err, NULL;
		if (o.pid != 0) {
			_uevent_reason("session spawn: opts.pid must be 0 (the child is watched)");
			return errno = EINVAL, NULL;
		}
	}
	for (t = 0; t < 3; t++)
		if (!(env[t] = make_env(t))) {
			err = -ENOMEM;
			goto out;
		}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
		err = -errno;
		goto out;
	}
	child = fork();
	if (child < 0) {
		err = -errno;
		goto out;
	}
	if (child == 0) {
		int e;

		/* wait until the session watches us: the parent names the transport */
		close(go[1]);
		close(ex[0]);
		if (read_full(go[0], &which, 1) != 1 || which > 2)
			_exit(127);
		execvpe(argv[0], argv, env[which]);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	go[0] = ex[1] = -1;
	o.pid = child;
	s = uevent_session__open(&o);
	if (!s) {
		err = -errno;
		goto out;
	}
	/* the child marks through what we read best; usdt marks fire under any transport */
	tr = uevent_session__transports(s);
	which = tr & (1u << UEVENT_TRANSPORT_PRCTL) ? 0 :
		tr & (1u << UEVENT_TRANSPORT_USER_EVENTS) ? 1 : 2;
	if (write(go[1], &which, 1) != 1) {
		err = -errno;
		goto out;
	}
	close(go[1]);
	go[1] = -1;
	/* the exec error pipe closes on a successful exec; else it carries errno */
	n = read_full(ex[0], &i, sizeof(i));
	if (n == (ssize_t)sizeof(i)) {
		err = -i;
		_uevent_reason("session spawn: cannot run %s: %s", argv[0], strerror(i));
		goto out;
	}
	err = 0;
out:
	if (err < 0 && child > 0) {
		kill(child, SIGKILL);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (err < 0 && s) {
		uevent_session__close(s);
		s = NULL;
	}
	for (t = 0; t < 2; t++) {
		if (go[t] >= 0)
			close(go[t]);
		if (ex[t] >= 0)
			close(ex[t]);
	}
	for (t = 0; t < 3; t++)
		free(env[t]);
	if (err < 0)
		errno = -err;
	return s;
}
