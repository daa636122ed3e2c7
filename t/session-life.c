/* session-life.c - a session's life: closed from another thread while a reader waits,
 * its uprobe events shared between the sessions of a process (at most 16 groups of them),
 * reaped when it is killed or its PID reused. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uevent.h"
#include "tap.h"
#include "files.h"

#define ROUNDS		25	/* closes from another thread, each way */
#define KILLED		15	/* killed processes, 5 events each: more than 64 lines */
#define GROUPS_MAX	16	/* groups of uprobe events a process may hold */

static const char *tracefs = "/sys/kernel/tracing";

static struct uevent_session_opts so = {
	.sz = sizeof(so), .pid = 0, .transports = 1u << UEVENT_TRANSPORT_USDT,
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Lines of uprobe_events whose group starts with prefix (-1: unreadable). */
static int events_left(const char *prefix)
{
	char path[256], pat[96];
	unsigned char *text;
	size_t len;
	int n;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	if (!(text = slurp_settled(path, &len)))
		return -1;
	snprintf(pat, sizeof(pat), "p:%s", prefix);
	n = lines_with(text, pat, 0);
	free(text);
	return n;
}

static int tracefs_write(const char *line)
{
	char path[256];
	int fd, n;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = (int)write(fd, line, strlen(line));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* ---- closing from another thread ------------------------------------------------- */

struct reader {
	struct uevent_session *s;
	int batch;			/* __read_batch() rather than __next() */
	int ret;
	volatile int inside;
};

static void *reader(void *arg)
{
	struct reader *rd = arg;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_record_batch ub = { .sz = sizeof(ub) };
	static __thread uint64_t time[4], off[4];
	static __thread uint32_t u32[7][4];
	static __thread int32_t ev[4];
	static __thread uint8_t data[1 << 17];

	ub.cap = 4;
	ub.time = time;
	ub.pid = u32[0], ub.tid = u32[1], ub.cpu = u32[2], ub.type = u32[3];
	ub.flags = u32[4], ub.transport = u32[5], ub.data_len = u32[6];
	ub.event_index = ev;
	ub.data_off = off;
	ub.data = data;
	ub.data_cap = sizeof(data);
	__atomic_store_n(&rd->inside, 1, __ATOMIC_RELEASE);
	/* nothing marks: without a wake-up this waits the whole 20 s */
	rd->ret = rd->batch ? uevent_session__read_batch(rd->s, NULL, &ub, 20000)
			    : uevent_session__next(rd->s, &r, 20000);
	return NULL;
}

/*
 * close() (or shutdown()) in this thread while another waits in __next() or
 * __read_batch(): the reader returns -ECANCELED at once, close waits for it, and the
 * session's uprobe events are gone when close returns.
 */
static void close_while_reading(const char *prefix, int batch, int shut_first)
{
	int i, cancelled = 0, opened = 0, slow = 0, left = 0;
	uint64_t worst = 0;

	for (i = 0; i < ROUNDS; i++) {
		struct reader rd = { 0 };
		pthread_t th;
		uint64_t t0;

		rd.batch = batch;
		rd.s = uevent_session__open(&so);
		if (!rd.s)
			break;
		opened++;
		pthread_create(&th, NULL, reader, &rd);
		while (!__atomic_load_n(&rd.inside, __ATOMIC_ACQUIRE))
			sched_yield();
		sleep_ms(i % 5 * 3);		/* before it waits, and while it does */
		t0 = mono_ms();
		if (shut_first)
			uevent_session__shutdown(rd.s);
		uevent_session__close(rd.s);
		pthread_join(th, NULL);
		if (mono_ms() - t0 > worst)
			worst = mono_ms() - t0;
		slow += mono_ms() - t0 > 10000;	/* not the 20 s the reader would wait */
		cancelled += rd.ret == -ECANCELED;
		left += events_left(prefix);
	}
	ok(opened == ROUNDS && cancelled == ROUNDS && !slow && !left,
	   "%s%s from another thread while %s waits, %d times: it returns -ECANCELED (%d), "
	   "at once (slowest %" PRIu64 " ms), uprobe events left %d", shut_first ?
	   "shutdown() then " : "", "close()", batch ? "__read_batch()" : "__next()", ROUNDS,
	   cancelled, worst, left);
}

static void shutdown_sticks(void)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s = uevent_session__open(&so);
	struct pollfd p;

	if (!s) {
		skip(1, "no session");
		return;
	}
	p.fd = uevent_session__fd(s);
	p.events = POLLIN;
	ok(uevent_session__shutdown(s) == 0 && uevent_session__next(s, &r, -1) == -ECANCELED &&
	   errno == ECANCELED && uevent_session__snapshot(s) == -EINVAL &&
	   poll(&p, 1, 0) == 1 && uevent_session__shutdown(s) == 0,
	   "after shutdown(), __next(-1) returns -ECANCELED at once and the fd polls readable");
	uevent_session__close(s);
}

/* ---- the uprobe events of a process's sessions ----------------------------------- */

static void shared_events(const char *prefix)
{
	struct uevent_session *s[3];
	int n[3], i, opened = 0;

	for (i = 0; i < 3; i++) {
		s[i] = uevent_session__open(&so);
		opened += !!s[i];
		n[i] = events_left(prefix);
	}
	uevent_session__close(s[0]);
	uevent_session__close(s[2]);
	n[0] = events_left(prefix);
	uevent_session__close(s[1]);
	ok(opened == 3 && n[1] == 5 && n[2] == 5 && n[0] == 5 && events_left(prefix) == 0,
	   "3 sessions of one process share its 5 uprobe events (%d, %d, %d open; %d with one "
	   "left; %d after the last)", n[1], n[2], n[2], n[0], events_left(prefix));
}

/*
 * A child forked while a session is open holds copies of its perf files until it execs
 * or exits: the kernel refuses to remove the events meanwhile (EBUSY). The close tries
 * again, so the events still go once the child lets go.
 */
static void close_while_child_holds(const char *prefix)
{
	struct uevent_session *s = uevent_session__open(&so);
	int before = events_left(prefix), left;
	uint64_t t0;
	pid_t pid;

	if (!s) {
		skip(1, "no session");
		return;
	}
	pid = fork();
	if (pid == 0) {
		sleep_ms(100);
		_exit(0);
	}
	t0 = mono_ms();
	uevent_session__close(s);
	left = events_left(prefix);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	ok(pid > 0 && before == 5 && left == 0,
	   "a child forked with the session's files held them 100 ms: close removed its %d "
	   "events anyway (%d left, close took %llu ms)", before, left,
	   (unsigned long long)(mono_ms() - t0));
}

/* Processes killed with a session open leave their events; the next session reaps all. */
static void reap_killed(void)
{
	char pre[64], line[4096], path[256], foreign[4096], group[128];
	pid_t pid[KILLED];
	int i, left = 0, before = 0, fd[2];
	struct stat ns;
	FILE *f;

	if (stat("/proc/self/ns/pid", &ns) < 0) {
		skip(2, "no /proc/self/ns/pid");
		return;
	}
	/* all open before any dies: a session's open reaps what the dead left */
	for (i = 0; i < KILLED; i++) {
		char c;

		if (pipe(fd) < 0)
			break;
		pid[i] = fork();
		if (pid[i] == 0) {
			close(fd[0]);
			if (uevent_session__open(&so))
				(void)!write(fd[1], "o", 1);
			pause();
			_exit(0);
		}
		close(fd[1]);
		if (read(fd[0], &c, 1) != 1)
			diag("child %d opened no session", (int)pid[i]);
		close(fd[0]);
	}
	/*
	 * Counted while they live: once one is killed, any session opened meanwhile (another
	 * test's, under make -j) may already reap its events. A group of another PID
	 * namespace whose number is a dead pid here: not ours to reap (its process lives,
	 * numbered otherwise). Made from the first child's line.
	 */
	for (i = 0; i < KILLED; i++) {
		snprintf(pre, sizeof(pre), "libuevent_%d_", (int)pid[i]);
		before += events_left(pre);
	}
	foreign[0] = 0;
	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	snprintf(pre, sizeof(pre), "p:libuevent_%d_", (int)pid[0]);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *slash = strchr(line, '/');

		if (strncmp(line, pre, strlen(pre)) || !slash || foreign[0])
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(group, sizeof(group), "libuevent_%d_0_%llu", (int)pid[0],
			 (unsigned long long)ns.st_ino + 1);
		snprintf(foreign, sizeof(foreign), "p:%s%s", group, slash);
	}
	if (f)
		fclose(f);
	for (i = 0; i < KILLED; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	if (foreign[0] && tracefs_write(foreign) < 0) {
		diag("cannot add %s: %s", foreign, strerror(errno));
		foreign[0] = 0;
	}
	uevent_session__close(uevent_session__open(&so));
	for (i = 0; i < KILLED; i++) {
		snprintf(pre, sizeof(pre), "libuevent_%d_", (int)pid[i]);
		left += events_left(pre);
	}
	if (foreign[0])
		left -= events_left(group);
	ok(before == KILLED * 5 && left == 0,
	   "%d processes killed with a session open (%d uprobe events while they lived): the "
	   "next session removes them all (%d left)", KILLED, before, left);
	if (!foreign[0]) {
		skip(1, "could not add a group as another namespace's");
		return;
	}
	ok(events_left(group) == 1, "a dead pid's group of another PID namespace stays (%s)",
	   group);
	snprintf(line, sizeof(line), "-:%s/%s", group, strchr(foreign, '/') + 1);
	*strchr(line + 3 + strlen(group), ' ') = 0;
	if (tracefs_write(line) < 0)
		diag("could not remove %s", line);
}

/* Field 22 of /proc/PID/stat: the start time (0: unreadable). */
static unsigned long long start_time(int pid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The first uprobe_events line of a group starting with prefix, without its newline. */
static int first_line(const char *prefix, char *out, size_t n)
{
	char path[256], line[4096], pat[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	snprintf(pat, sizeof(pat), "p:%s", prefix);
	f = fopen(path, "r");
	out[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, pat, strlen(pat))) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, n, "%s", line);
			break;
		}
	if (f)
		fclose(f);
	return out[0] ? 0 : -1;
}

/*
 * A group's name carries its process's start time; a group whose PID now names a process
 * started at another time (the PID was reused) is reaped, one whose PID is that process
 * is not. Planted from this process's own event line, for a child of ours that lives.
 */
static void reap_reused_pid(const char *prefix)
{
	struct uevent_session *s = uevent_session__open(&so);
	char line[4096], stale[4096], live[4096], gs[128], gl[128], ev[32];
	unsigned long long pid, start, seq, ns, cst;
	int fd[2], at = 0, named = 0, planted = 0;
	const char *rest;
	pid_t child = -1;
	char c;

	if (!s || first_line(prefix, line, sizeof(line)) < 0) {
		uevent_session__close(s);
		skip(2, "no session, or no event line of ours");
		return;
	}
	named = sscanf(line, "p:libuevent_%llu_%llu_%llu_%llu/%31[a-z0-9] %n", &pid, &start, &seq,
		       &ns, ev, &at) == 5 && at && pid == (unsigned long long)getpid() &&
		start == start_time((int)getpid()) && start;
	ok(named, "a session's group names its process's start time (%s)", line);
	uevent_session__close(s);
	if (!named || pipe(fd) < 0) {
		skip(1, "no group name to plant from");
		return;
	}
	child = fork();
	if (child == 0) {
		close(fd[0]);
		(void)!write(fd[1], "o", 1);
		pause();
		_exit(0);
	}
	close(fd[1]);
	if (child < 0 || read(fd[0], &c, 1) != 1 || !(cst = start_time((int)child))) {
		close(fd[0]);
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		skip(1, "no child to plant a group for");
		return;
	}
	close(fd[0]);
	rest = line + at - 1;		/* " PATH:0xOFF ..." */
	snprintf(gs, sizeof(gs), "libuevent_%d_%llu_0_%llu", (int)child, cst + 1, ns);
	snprintf(gl, sizeof(gl), "libuevent_%d_%llu_0_%llu", (int)child, cst, ns);
	snprintf(stale, sizeof(stale), "p:%s/%s%s", gs, ev, rest);
	snprintf(live, sizeof(live), "p:%s/%s%s", gl, ev, rest);
	planted = tracefs_write(stale) == 0 && tracefs_write(live) == 0;
	if (!planted)
		diag("cannot add %s: %s", stale, strerror(errno));
	uevent_session__close(uevent_session__open(&so));	/* its open reaps */
	/* another test's session may reap the stale one first: gone either way */
	ok(planted && events_left(gs) == 0 && events_left(gl) == 1,
	   "the next session reaps a group whose PID now names a process started later (%d "
	   "left) and keeps the one of the process it names (%d left)", events_left(gs),
	   events_left(gl));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(line, sizeof(line), "-:%s/%s", gl, ev);
	tracefs_write(line);		/* a session opened meanwhile may have reaped it */
	snprintf(line, sizeof(line), "-:%s/%s", gs, ev);
	tracefs_write(line);
}

/*
 * A process holds at most GROUPS_MAX groups (one per object and payload cap): sessions
 * with that many payload caps open, one with another is refused with EMFILE and says
 * why, one with a cap already held still opens; closing them all removes them all.
 */
static void group_cap(const char *prefix)
{
	struct uevent_session_opts o = so;
	struct uevent_session *s[GROUPS_MAX + 2] = { NULL };
	int i, opened = 0, refused, err, again, left;
	char why[512];

	for (i = 0; i < GROUPS_MAX; i++) {
		o.usdt_max_payload = 8u * (unsigned int)(i + 1);
		s[i] = uevent_session__open(&o);
		opened += !!s[i];
	}
	o.usdt_max_payload = 8u * (GROUPS_MAX + 1);
	errno = 0;
	s[GROUPS_MAX] = uevent_session__open(&o);
	err = errno;
	snprintf(why, sizeof(why), "%s", uevent_reason());
	refused = !s[GROUPS_MAX] && err == EMFILE && strstr(why, "groups of uprobe events");
	o.usdt_max_payload = 8;
	s[GROUPS_MAX + 1] = uevent_session__open(&o);
	again = !!s[GROUPS_MAX + 1];
	for (i = 0; i < GROUPS_MAX + 2; i++)
		uevent_session__close(s[i]);
	left = events_left(prefix);
	ok(opened == GROUPS_MAX && refused && again && left == 0,
	   "%d sessions of %d payload caps open (%d); one more cap is refused with EMFILE "
	   "(%s: %s); a cap held still opens (%s); %d events left after", GROUPS_MAX,
	   GROUPS_MAX, opened, strerror(err), why, again ? "yes" : "no", left);
}

int main(void)
{
	char prefix[64];

	if (getuid() != 0)
		plan_skip_all("needs root to add uprobe events");
	if (access("/sys/bus/event_source/devices/uprobe", F_OK) < 0)
		plan_skip_all("kernel without uprobes");
	if (access("/sys/kernel/tracing/uprobe_events", W_OK) < 0)
		tracefs = "/sys/kernel/debug/tracing";
	{
		struct uevent_session *s = uevent_session__open(&so);

		if (!s)
			plan_skip_all("no usdt session here");
		uevent_session__close(s);
	}
	plan(12);
	snprintf(prefix, sizeof(prefix), "libuevent_%d_", (int)getpid());
	close_while_reading(prefix, 0, 0);
	close_while_reading(prefix, 1, 0);
	close_while_reading(prefix, 0, 1);
	shutdown_sticks();
	shared_events(prefix);
	close_while_child_holds(prefix);
	reap_killed();
	reap_reused_pid(prefix);
	group_cap(prefix);
	ok(events_left(prefix) == 0, "nothing of this process's is left");
	return exit_status();
}
