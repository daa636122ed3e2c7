/* record.c - uevent record: a command run under a session, what it marks and samples
 * written to a perf.data. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "cli.h"
#include "inject-env.h"

/* SIGINT, SIGTERM, SIGHUP: the first goes to the command, a second one kills it */
static volatile sig_atomic_t got_signal, nr_signals;

static void on_signal(int sig)
{
	got_signal = sig;
	nr_signals++;
}

/* How long a command may take to exit after a signal (or a failed record) before SIGKILL. */
#define STOP_GRACE_MS 2000

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stops the command's process group with SIG, then SIGKILL after the grace period or
 * another signal. */
static void stop_child(pid_t child, int sig, int *status)
{
	int64_t kill_at = mono_ms() + STOP_GRACE_MS;
	sig_atomic_t n = nr_signals;
	struct timespec tick = { 0, 10000000 };

	kill(-child, sig);
	while (waitpid(child, status, WNOHANG) == 0) {
		if (mono_ms() >= kill_at || nr_signals != n) {
			kill(-child, SIGKILL);
			waitpid(child, status, 0);
			return;
		}
		nanosleep(&tick, NULL);
	}
	kill(-child, SIGKILL);	/* what it left running in its group */
}

/*
 * The command runs in a process group of its own (pgid = its pid), so a signal reaches
 * what it started too. PR_SET_PDEATHSIG kills only the command itself when the recorder
 * dies; for its descendants after a SIGKILL of the recorder, a reaper process waits on a
 * pipe whose only write end is the recorder's: the kernel closes it however the recorder
 * dies, and the reaper then kills the group. Returns the reaper (or -1); *wfd: that end.
 */
static pid_t start_reaper(pid_t pgid, int *wfd)
{
	int p[2], fd;
	pid_t w;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	w = fork();
	if (w == 0) {
		signal(SIGINT, SIG_IGN);	/* the terminal's ^C is the recorder's to pass on */
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		for (fd = 3; fd < 1024; fd++)	/* the output, the command's pipe: not ours */
			if (fd != p[0])
				close(fd);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		kill(-pgid, SIGKILL);
		_exit(0);
	}
	close(p[0]);
	if (w < 0) {
		close(p[1]);
		return -1;
	}
	*wfd = p[1];
	return w;
}

/*
 * The rings could not be mapped: their pages are locked memory, which without
 * CAP_IPC_LOCK is bounded by kernel.perf_event_mlock_kb a user (per CPU's ring) and then
 * by RLIMIT_MEMLOCK. Root without the capability (a container) meets the same limit:
 * "run as root" would not help, the limit or smaller rings would.
 */
static void say_memlock(unsigned int pages)
{
	char kb[32] = "?", lim[32] = "?";
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
	struct rlimit rl;

	if (f && !fgets(kb, sizeof(kb), f))
		snprintf(kb, sizeof(kb), "?");
	if (f)
		fclose(f);
	kb[strcspn(kb, "\n")] = 0;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		snprintf(lim, sizeof(lim), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "%llu KiB",
			 (unsigned long long)rl.rlim_cur / 1024);
	fprintf(stderr, "%s record: cannot lock the ring buffers in memory (%s): %u pages a CPU "
		"is more than this process may lock without CAP_IPC_LOCK (ulimit -l: %s; "
		"kernel.perf_event_mlock_kb: %s KiB)%s. Raise ulimit -l or perf_event_mlock_kb, "
		"or record with smaller rings: -m 16\n", cli_prog, uevent_reason(),
		pages ? pages : 256, lim, kb, geteuid() == 0 ? "; root without CAP_IPC_LOCK "
		"meets these limits too" : "");
}

/* The terminal's foreground to group pgid, if the recorder had it (fg): the command in
 * its own group reads the terminal as it would without us; then back. */
static void terminal_to(pid_t pgid, int fg)
{
	sigset_t set, old;

	if (!fg)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);	/* sent to a background group that sets it */
	sigprocmask(SIG_BLOCK, &set, &old);
	tcsetpgrp(0, pgid);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The recorder ends in order: the reaper goes without killing anything. */
static void stop_reaper(pid_t reaper, int wfd)
{
	if (reaper <= 0)
		return;
	kill(reaper, SIGKILL);
	waitpid(reaper, NULL, 0);
	close(wfd);
}

#define MIN_PERIOD_NS 10000u	/* record refuses samples more often without --force */

#define TRACEFS_DIR "/sys/kernel/tracing"

static int tracefs_mounted(void)
{
	struct statfs sfs;

	return (statfs(TRACEFS_DIR, &sfs) == 0 && (unsigned long)sfs.f_type == 0x74726163) ||
	       (statfs("/sys/kernel/debug/tracing", &sfs) == 0 &&
		(unsigned long)sfs.f_type == 0x74726163);
}

/* As perf does: the uprobe events need tracefs; as root, mount it where it goes. */
static void record_mount_tracefs(void)
{
	if (tracefs_mounted() || geteuid() != 0)
		return;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) == 0)
		fprintf(stderr, "%s record: mounted tracefs on " TRACEFS_DIR " (as perf does)\n",
			cli_prog);
	else
		fprintf(stderr, "%s record: tracefs is not mounted and mounting it failed (%s): "
			"mount -t tracefs nodev " TRACEFS_DIR "\n", cli_prog, strerror(errno));
}

/* "250us", "1ms", "2.5ms", "1s", "100000" (ns) as nanoseconds, at least 1; -1 after
 * saying why not. */
static int parse_duration(const char *cmd, const char *opt, const char *arg, uint64_t *v)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 },
	};
	char *end;
	double d;
	size_t i;

	errno = 0;
	d = strtod(arg, &end);
	for (i = 0; end != arg && !errno && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && d * (double)units[i].ns >= 1 &&
		    d * (double)units[i].ns < 9e18) {
			*v = (uint64_t)(d * (double)units[i].ns + 0.5);
			return 0;
		}
	fprintf(stderr, "%s %s: %s wants a time such as 1ms, 250us or 100000 (ns), not '%s'\n",
		cli_prog, cmd, opt, arg);
	return -1;
}

/* Whether execvp() would find name (errno set when not), as the shell looks it up. */
static int command_runnable(const char *name)
{
	const char *path = getenv("PATH"), *p;
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p += strcspn(p, ":") + 1) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, n ? p : ".", "/", name);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!p[n])
			break;
	}
	errno = ENOENT;
	return 0;
}

/* What uevent record was asked, and what it has going. */
struct record_run {
	struct uevent_session_opts so;
	const char *out;
	char **cmd;			/* the command and its arguments */
	int system_wide;
	int fd, created, go[2];		/* the output; the pipe that starts the command */
	pid_t child, parent, reaper;
	int reaper_fd, parent_fg;
	struct uevent_session *s;
	int started, usdt_only, status, done, sent, failed;
	int nice_adj, nice_asked;	/* the recorder's priority against the command's */
	unsigned long nrec, nuev, nsamples, nbpf;
};

/*
 * The recorder's priority by default, against the command's: a drain that waits for a
 * CPU behind the command's threads (16 marking threads on 16 CPUs share one with it)
 * lets its rings fill, and what comes after is lost.
 */
#define RECORD_NICE	(-10)

/* The options, checked: -1 to go on, else the exit status. */
static int record_options(struct record_run *x, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "transport", required_argument, NULL, 't' },
		{ "usdt-bytes", required_argument, NULL, 'n' },
		{ "bpf", no_argument, NULL, 'b' },
		{ "all", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, 0x200 },
		{ "sample-ns", required_argument, NULL, 0x201 },
		{ "force", no_argument, NULL, 0x202 },
		{ "tls", required_argument, NULL, 'T' },
		{ "context", no_argument, NULL, 0x203 },
		{ "ring-pages", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "system-wide", no_argument, NULL, 'W' },
		{ "nvtx", no_argument, NULL, 'N' },
		{ "itt", no_argument, NULL, 'I' },
		{ "nice", required_argument, NULL, 0x204 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tlist = NULL;
	unsigned int inject = 0;
	int c, force = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:t:n:baF:m:C:h", opts, NULL)) != -1) {
		uint64_t v = 0;
		int64_t sv = 0;

		/* the kernel's limits: a probe fetches at most a payload, sample_period < 2^63 */
		if ((c == 'n' && cli_parse_u64("record", "-n/--usdt-bytes", optarg, 1,
					   UEVENT_MAX_PAYLOAD, &v) < 0) ||
		    (c == 'F' && cli_parse_u64("record", "-F/--freq", optarg, 1, 1000000000u, &v) < 0) ||
		    (c == 0x200 && parse_duration("record", "--period", optarg, &v) < 0) ||
		    (c == 0x201 && cli_parse_u64("record", "--sample-ns", optarg, 1, INT64_MAX, &v) < 0) ||
		    (c == 'T' && cli_parse_u64("record", "--tls", optarg, 8, PERF_SAMPLE_TLS_USER_MAX,
					   &v) < 0) ||
		    (c == 'm' && cli_parse_u64("record", "-m/--ring-pages", optarg, 1, 1u << 31, &v) < 0) ||
		    (c == 0x204 && cli_parse_i64("record", "--nice", optarg, &sv) < 0))
			return 2;
		switch (c) {
		case 'o': x->out = optarg; break;
		case 't': tlist = optarg; break;
		case 'n': x->so.usdt_max_payload = (unsigned int)v; break;
		case 'b': x->so.flags |= UEVENT_SESSION_BPF_EVENTS; break;
		case 'C': x->so.cpus = optarg; break;
		case 'a': x->so.flags |= UEVENT_SESSION_ALL_RECORDS; break;
		case 'W': x->system_wide = 1; break;
		case 'N': inject |= CLI_INJECT_NVTX; break;
		case 'I': inject |= CLI_INJECT_ITT; break;
		case 'F':		/* as perf's -F: samples per second */
		case 0x200:
		case 0x201:
			/* what naming the samples needs: the mappings, names and stacks */
			x->so.sample_period_ns = c == 'F' ? 1000000000u / v : v;
			x->so.flags |= UEVENT_SESSION_ALL_RECORDS | UEVENT_SESSION_CALLCHAIN;
			break;
		case 0x202: force = 1; break;
		case 0x203: x->so.flags |= UEVENT_SESSION_CONTEXT; break;
		case 0x204:
			if (sv < -39 || sv > 39) {
				fprintf(stderr, "%s record: --nice must be from -39 to 39 (the "
					"recorder's priority against the command's)\n", cli_prog);
				return 2;
			}
			x->nice_adj = (int)sv;
			x->nice_asked = 1;
			break;
		case 'T':
			if (v % 8) {
				fprintf(stderr, "%s record: --tls must be a multiple of 8\n", cli_prog);
				return 2;
			}
			x->so.tls_user = (unsigned int)v;
			break;
		case 'm':
			if (v & (v - 1)) {
				fprintf(stderr, "%s record: -m/--ring-pages must be a power of 2\n", cli_prog);
				return 2;
			}
			x->so.ring_pages = (unsigned int)v;
			break;
		case 'h': return cli_usage(stdout, cli_record_usage);
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s record: which command? (uevent record -- CMD ARGS...)\n", cli_prog);
		return 2;
	}
	if (x->so.tls_user && !x->so.sample_period_ns) {
		fprintf(stderr, "%s record: --tls needs samples (-F HZ or --period TIME)\n", cli_prog);
		return 2;
	}
	if ((x->so.flags & UEVENT_SESSION_CONTEXT) && !x->so.sample_period_ns) {
		fprintf(stderr, "%s record: --context needs samples (-F HZ or --period TIME)\n",
			cli_prog);
		return 2;
	}
	if (inject && cli_inject_env(inject) < 0)
		return 1;
	/* a sample every few microseconds is the program's time spent in the kernel */
	if (x->so.sample_period_ns && x->so.sample_period_ns < MIN_PERIOD_NS && !force) {
		fprintf(stderr, "%s record: a sample every %" PRIu64 " ns (%" PRIu64 " Hz) is too "
			"often: the samples would cost more than the program; at most -F %u "
			"(--period 10us), or --force\n", cli_prog, (uint64_t)x->so.sample_period_ns,
			(uint64_t)(1000000000u / x->so.sample_period_ns), 1000000000u / MIN_PERIOD_NS);
		return 2;
	}
	/* a command that cannot run: said now, before an output is made for it */
	if (!command_runnable(argv[optind])) {
		fprintf(stderr, "%s record: cannot run %s: %s\n", cli_prog, argv[optind],
			strerror(errno));
		return 127;
	}
	/*
	 * A file, not a live view: marks and samples wake us every 4096 (or when a ring
	 * is half full, or at the next look, 100 ms on), as perf record's rings do. A
	 * wake-up each cost more than the record: -F 10000 -- true ran 5 s (0.5 s now),
	 * 200,000 usdt marks took 3.5 s to record (0.7 s now; perf record 1.3 s).
	 */
	x->so.wakeup_events = 4096;
	if (tlist) {
		char tmp[128], *tok, *save = NULL;

		snprintf(tmp, sizeof(tmp), "%s", tlist);
		for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = uevent_transport_from_name(tok);

			if (t != UEVENT_TRANSPORT_PRCTL && t != UEVENT_TRANSPORT_USDT &&
			    t != UEVENT_TRANSPORT_USER_EVENTS) {
				fprintf(stderr, "%s record: cannot read transport '%s' (readable: "
					"prctl, user_events, usdt)\n", cli_prog, tok);
				return 2;
			}
			x->so.transports |= 1u << t;
		}
	}
	x->cmd = argv + optind;
	return -1;
}

/* The command, in its own process group, once the session listens. */
static void __attribute__((noreturn)) record_child(struct record_run *x)
{
	char name[32];
	ssize_t n;

	/* the command dies with the recorder, even a recorder killed with SIGKILL; its
	 * descendants, in its process group, by the reaper */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != x->parent ||
	    setpgid(0, 0) < 0)
		_exit(127);
	terminal_to(getpid(), x->parent_fg);	/* it may read the terminal */
	/* wait until the session listens; the parent sends the transport to use */
	close(x->go[1]);
	n = read(x->go[0], name, sizeof(name) - 1);
	if (n <= 0)
		_exit(127);
	name[n] = 0;
	setenv("UEVENT_TRANSPORT", name, 1);
	/*
	 * The session attaches to each copy of libuevent's probes the command's
	 * processes map, when it sees the mapping: their libuevent waits for that
	 * (up to 5 s: a uprobe takes an RCU grace period to install) before the
	 * program runs.
	 */
	if (!strcmp(name, "usdt"))
		setenv("UEVENT_WAIT_TRACER", "5000", 1);
	execvp(x->cmd[0], x->cmd);
	fprintf(stderr, "%s record: cannot run %s: %s\n", cli_prog, x->cmd[0], strerror(errno));
	_exit(127);
}

/*
 * The recorder's priority moved by --nice from the one it started with, which the
 * command (forked before) keeps. By default only where that is allowed (root,
 * CAP_SYS_NICE, RLIMIT_NICE); asked for, a refusal is an error. 0 or -errno.
 */
static int record_priority(const struct record_run *x)
{
	int cur, to;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);
	if (!x->nice_adj || (cur == -1 && errno))
		return 0;
	to = cur + x->nice_adj < -20 ? -20 : cur + x->nice_adj > 19 ? 19 : cur + x->nice_adj;
	if (to == cur || setpriority(PRIO_PROCESS, 0, to) == 0 || !x->nice_asked)
		return 0;
	fprintf(stderr, "%s record: cannot move the recorder's priority from nice %d to %d "
		"(--nice %d): %s; run as root (CAP_SYS_NICE), raise RLIMIT_NICE, or --nice 0\n",
		cli_prog, cur, to, x->nice_adj, strerror(errno));
	return -EPERM;
}

/* The output opened and the command started, waiting: -1 to go on, else the exit status. */
static int record_start(struct record_run *x)
{
	if (!strcmp(x->out, "-")) {
		x->fd = dup(1);
		if (x->fd < 0) {
			fprintf(stderr, "%s record: stdout: %s\n", cli_prog, strerror(errno));
			return 1;
		}
	} else if ((x->fd = cli_open_output("record", x->out, &x->created)) < 0) {
		return 1;
	}
	x->parent = getpid();
	x->parent_fg = isatty(0) && tcgetpgrp(0) == getpgrp();
	x->child = pipe2(x->go, O_CLOEXEC) < 0 ? -1 : fork();
	if (x->child < 0) {
		fprintf(stderr, "%s record: cannot start %s: %s\n", cli_prog, x->cmd[0],
			strerror(errno));
		cli_remove_output(x->out, x->fd, x->created);
		close(x->fd);
		return 1;
	}
	if (x->child == 0) {
		record_child(x);
	}
	close(x->go[0]);
	setpgid(x->child, x->child);		/* as the child does: whichever runs first */
	if (record_priority(x) < 0) {
		kill(x->child, SIGKILL);
		waitpid(x->child, NULL, 0);
		close(x->go[1]);
		cli_remove_output(x->out, x->fd, x->created);
		close(x->fd);
		return 1;
	}
	x->reaper = start_reaper(x->child, &x->reaper_fd);
	/*
	 * From now on a signal stops the record in order, however long the session takes to
	 * open: the command is stopped, the rest drained, the session's uprobe event removed.
	 * Not with SA_RESTART: a write blocked on a full pipe gives way to it.
	 */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	return -1;
}

/* The session, recording, and the command told to go: -1 to go on, else the exit status. */
static int record_open(struct record_run *x)
{
	x->so.pid = x->system_wide ? -1 : x->child;
	record_mount_tracefs();
	x->s = uevent_session__open(&x->so);
	/* an existing output is emptied only now: a session that cannot start leaves it be */
	if (!x->s || (!x->created && strcmp(x->out, "-") && ftruncate(x->fd, 0) < 0) ||
	    uevent_session__record_to(x->s, x->fd) < 0) {
		int err = errno;

		kill(-x->child, SIGKILL);
		waitpid(x->child, NULL, 0);
		stop_reaper(x->reaper, x->reaper_fd);
		uevent_session__close(x->s);
		if (strcmp(x->out, "-"))
			cli_remove_output(x->out, x->fd, x->created);
		close(x->fd);
		if (!x->s && (err == EACCES || err == EPERM) &&
		    (geteuid() == 0 || strstr(uevent_reason(), "mmap")))
			say_memlock(x->so.ring_pages);
		else if (!x->s && (err == EACCES || err == EPERM))
			fprintf(stderr, "%s record: not allowed to open perf events or tracefs (%s; "
				"perf_event_paranoid is %d): run as root\n", cli_prog,
				uevent_reason(), uevent_perf_paranoid());
		else if (!x->s)
			fprintf(stderr, "%s record: cannot start a session: %s (%s)%s\n", cli_prog,
				strerror(err), uevent_reason(), tracefs_mounted() ? "" :
				"; tracefs is not mounted: as root, mount -t tracefs nodev "
				TRACEFS_DIR);
		else
			fprintf(stderr, "%s record: %s: %s\n", cli_prog, x->out, strerror(err));
		return 1;
	}
	if ((x->so.flags & UEVENT_SESSION_CONTEXT) &&
	    strstr(uevent_reason(), "context: "))
		fprintf(stderr, "%s record: samples go without their trace context: %s\n", cli_prog,
			strstr(uevent_reason(), "context: ") + 9);
	{
		/* the child emits through what we read best; usdt marks fire under any transport */
		unsigned int t = uevent_session__transports(x->s);
		const char *name = t & (1u << UEVENT_TRANSPORT_PRCTL) ? "prctl" :
				   t & (1u << UEVENT_TRANSPORT_USER_EVENTS) ? "user_events" : "usdt";

		x->usdt_only = !strcmp(name, "usdt");
		/* signalled already: the command is not started (the child exits 127) */
		x->started = !got_signal;
		if (x->started && write(x->go[1], name, strlen(name)) != (ssize_t)strlen(name))
			kill(x->child, SIGKILL);
	}
	close(x->go[1]);
	return -1;
}

/* Records read until the command is gone and they are drained; the command stopped. */
static void record_loop(struct record_run *x)
{
	int64_t next_look = 0, kill_at = 0;
	int ret, idle = 0, killed = 0;

	for (;;) {
		int64_t now;

		/*
		 * The rings' bytes go to the file as they are, a round at a time, as perf
		 * record writes them: nothing decoded or sorted here (the readers sort).
		 */
		ret = uevent_session__drain(x->s, x->done ? 0 : 100);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "%s record: %s: %s\n", cli_prog, x->out, strerror(-ret));
			x->failed = 1;
			break;
		}
		/*
		 * Records may never pause (a command marking in a loop): look at the child
		 * and at signals every 100 ms all the same, and pass a signal on at once.
		 */
		now = mono_ms();
		if (ret > 0 && now < next_look && !(got_signal && !x->sent))
			continue;
		next_look = now + 100;
		if (!x->done && waitpid(x->child, &x->status, WNOHANG) == x->child) {
			x->done = 1;
			/* what the command left running may mark on: take no more, drain the rest */
			uevent_session__disable(x->s);
		}
		if (got_signal && !x->done) {
			if (!x->sent) {
				x->sent = got_signal;
				kill(-x->child, x->sent);	/* the command's group */
				kill_at = now + STOP_GRACE_MS;
			} else if (!killed && (nr_signals > 1 || now >= kill_at)) {
				killed = 1;
				kill(-x->child, SIGKILL);
			}
		}
		if (x->done && ret == 0 && ++idle > 1)
			break;
	}
	if (!x->done)
		stop_child(x->child, SIGTERM, &x->status);
	else if (x->sent)
		kill(-x->child, SIGKILL);	/* signalled: what the command left goes too */
	stop_reaper(x->reaper, x->reaper_fd);
	terminal_to(getpgrp(), x->parent_fg);
}

/* The session closed, what was recorded said: the exit status. */
static int record_end(struct record_run *x)
{
	struct uevent_session_stats st;

	uevent_session__stats(x->s, &st, sizeof(st));
	/* as dump counts them: the side-band that names samples aside */
	x->nuev = st.uevents;
	x->nsamples = st.samples;
	x->nbpf = st.bpf_events;
	x->nrec = st.uevents + st.samples + st.lost_records;
	uevent_session__close(x->s);
	if (close(x->fd) < 0 && !x->failed) {
		fprintf(stderr, "%s record: %s: %s\n", cli_prog, x->out, strerror(errno));
		x->failed = 1;
	}
	fprintf(stderr, "%s record: %lu uevents", cli_prog, x->nuev);
	if (x->so.sample_period_ns)
		fprintf(stderr, ", %lu samples", x->nsamples);
	if (x->so.flags & UEVENT_SESSION_BPF_EVENTS)
		fprintf(stderr, ", %lu BPF events", x->nbpf);
	/* the kernel's counts, read after the last records: also losses no LOST record told */
	/* after a write error (a full disk) the file holds only the records before it */
	fprintf(stderr, " %s %s (%lu records; lost %" PRIu64 ", truncated %" PRIu64,
		x->failed ? "read, not all of them written to" : "written to", x->out, x->nrec,
		(st.lost_counted > st.lost ? st.lost_counted : st.lost) + st.lost_samples,
		st.truncated);
	if (st.trimmed)
		fprintf(stderr, ", %" PRIu64 " BPF side-band records the kernel wrote too long, "
			"trimmed", st.trimmed);
	/* as perf record's "Woken up N times": what a record cost the recorder */
	fprintf(stderr, "; woken up %" PRIu64 " times)\n", st.wakeups);
	if (!x->nuev && !st.usdt_objects && x->usdt_only)
		fprintf(stderr, "%s record: %s never mapped libuevent's probes (no executable or "
			"library with the libuevent:emit16..emit4096 SDT notes): it cannot have "
			"made marks\n", cli_prog, x->cmd[0]);
	if (x->failed)
		return 1;
	if (!x->started) {
		fprintf(stderr, "%s record: %s not run: interrupted by %s\n", cli_prog, x->cmd[0],
			strsignal(got_signal));
		return 128 + got_signal;
	}
	if (WIFEXITED(x->status))
		return WEXITSTATUS(x->status);
	return 128 + (WIFSIGNALED(x->status) ? WTERMSIG(x->status) : 0);
}

int cli_cmd_record(int argc, char **argv)
{
	struct record_run x = { .so = { .sz = sizeof(x.so) }, .out = "uevent.data", .reaper = -1,
				.nice_adj = RECORD_NICE,
				.reaper_fd = -1 };
	int ret;

	if ((ret = record_options(&x, argc, argv)) >= 0 || (ret = record_start(&x)) >= 0 ||
	    (ret = record_open(&x)) >= 0)
		return ret;
	record_loop(&x);
	return record_end(&x);
}

/* `uevent record --help` */
const char cli_record_usage[] =
	"  record [OPTIONS] -- CMD [ARGS...]\n"
	"                                 run CMD and record its uevents into a perf.data\n"
	"                                 (pipe mode; perf script reads it too). SIGINT,\n"
	"                                 SIGTERM, SIGHUP go to CMD (SIGKILL after 2 s or a\n"
	"                                 second one); the file is completed all the same\n"
	"      -o, --output FILE          where (default uevent.data; - for stdout)\n"
	"      -t, --transport LIST       transports to read (prctl,user_events,usdt)\n"
	"      -n, --usdt-bytes N         payload bytes fetched per usdt mark (default 4096)\n"
	"      -b, --bpf                  also BPF_EVENT and KSYMBOL records (BPF programs)\n"
	"      -a, --all                  also COMM, MMAP, FORK, EXIT records\n"
	"      --nvtx, --itt              CMD's NVTX / ITT calls as uevents (libuevent-nvtx.so\n"
	"                                 in NVTX_INJECTION64_PATH, libuevent-itt.so in\n"
	"                                 INTEL_LIBITTNOTIFY64; a library named there before\n"
	"                                 still gets every call)\n"
	"      -F, --freq HZ              also cpu-clock samples, HZ a second (as perf's\n"
	"                                 -F), with their callchains and what names them\n"
	"                                 (COMM, MMAP2, FORK, EXIT): uevent report, perf\n"
	"                                 report. At most 100000 without --force\n"
	"          --period TIME          instead: one sample every TIME (1ms, 250us;\n"
	"                                 --sample-ns NS the same in nanoseconds)\n"
	"          --force                allow samples more often than every 10us\n"
	"          --tls BYTES            with samples: BYTES of the thread's TLS in each\n"
	"                                 (PERF_SAMPLE_TLS_USER, patched kernel; a\n"
	"                                 multiple of 8 up to 32768)\n"
	"          --context              with samples: each carries its thread's trace\n"
	"                                 context (uevent_thread_context_set(), OTEP 4947):\n"
	"                                 the kernel's record dump where it has one, else a\n"
	"                                 BPF program (root or CAP_BPF+CAP_PERFMON, kernel\n"
	"                                 BTF); without either, says why and records the rest\n"
	"      -m, --ring-pages N         data pages per ring buffer (default: from the CPUs and\n"
	"                                 the locked-memory limit, as perf record)\n"
	"      -C, --cpus LIST            only these CPUs, as perf -C: 0-3,7\n"
	"          --nice ADJ             the recorder's priority against CMD's (default -10\n"
	"                                 where allowed, as root: a drain waiting for a CPU\n"
	"                                 behind CMD's threads loses records; 0 leaves it)\n"
	"          --system-wide          every process's marks while CMD runs, not only\n"
	"                                 CMD's (turns libuevent's probes on everywhere)\n";
