/* decode.c - perf.data decode rate of libuevent against `perf script`; live session rate.
 * decode FILE --no-script: the reader's rate on FILE alone (its CPU time), one line. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/perf_uevent.h>

#include "uevent.h"
#include "bench.h"

static int cpu_time;	/* --no-script: the reader's CPU time, not the wall's (a loaded host) */

/* Seconds, on the shared ns clock (or the process's CPU clock). */
static double now_s(void)
{
	struct timespec ts;

	if (!cpu_time)
		return now() / 1e9;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int decode_once(const char *path, uint64_t *nrec, double *secs)
{
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_perf_file *f;
	uint64_t n = 0, sum = 0;
	double t0 = now_s();
	int ret;

	f = uevent_perf_file__open(path);
	if (!f)
		return -errno;
	while ((ret = uevent_perf_file__next(f, &r)) > 0) {
		n++;
		sum += r.id.time;	/* use the result */
	}
	uevent_perf_file__close(f);
	*secs = now_s() - t0;
	*nrec = n + (sum == 1);
	return ret;
}

/*
 * What any reader that maps the file pays before it decodes a thing: map it, load one
 * word of every 64-byte cache line (records are read whole, and perf's are 8-byte
 * aligned and smaller than a page, so a reader brings in every line), unmap it; same
 * clock as decode_once. perf script's time over this is the most any such reader can
 * reach against perf script on this file and host.
 */
static int floor_once(const char *path, double *secs)
{
	volatile uint64_t sink;
	const uint64_t *w;
	uint64_t sum = 0;
	struct stat st;
	size_t i, n;
	double t0 = now_s();
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < 8) {
		close(fd);
		return -EINVAL;
	}
	n = (size_t)st.st_size / 8;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	for (w = m, i = 0; i < n; i += 8)
		sum += w[i];
	munmap(m, (size_t)st.st_size);
	sink = sum;
	(void)sink;
	*secs = now_s() - t0;
	return 0;
}

static void live(const char *perf_ring_note)
{
	struct uevent_session_opts so = { .sz = sizeof(so), .transports = 1u << UEVENT_TRANSPORT_USDT,
					  .ring_pages = 1024, .usdt_max_payload = 64,
					  .wakeup_events = 64 };
	struct uevent_session_stats st;
	struct uevent_perf_record r = { .sz = sizeof(r) };
	struct uevent_session *s;
	const long N = 200000;
	int go[2], idle = 0, status;
	uint64_t got = 0;
	double t0, t1 = 0;
	pid_t child;
	char b;

	(void)perf_ring_note;
	if (getuid() != 0) {
		printf("live session: skipped (needs root for the usdt uprobe)\n");
		return;
	}
	if (pipe(go) < 0)
		return;
	child = fork();
	if (child == 0) {
		UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_USDT, .flags = UEVENT_OPEN_IGNORE_ENV);
		long i;

		close(go[1]);
		if (read(go[0], &b, 1) != 1 || uevent_open(&o) < 0)
			_exit(1);
		for (i = 0; i < N; i++)
			uevent_mark("bench mark");
		_exit(0);
	}
	close(go[0]);
	so.pid = child;
	s = uevent_session__open(&so);
	if (!s) {
		printf("live session: cannot open: %s\n", uevent_reason());
		kill(child, 9);
		waitpid(child, NULL, 0);
		return;
	}
	t0 = now_s();
	if (write(go[1], "g", 1) != 1)
		return;
	while (idle < 5) {
		int ret = uevent_session__next(s, &r, 100);

		if (ret > 0 && r.type == PERF_RECORD_UEVENT) {
			got++;
			t1 = now_s();
			idle = 0;
		} else if (ret == 0) {
			idle++;
		}
	}
	waitpid(child, &status, 0);
	uevent_session__stats(s, &st, sizeof(st));
	uevent_session__close(s);
	printf("live session (usdt, one emitting process, %u-page rings, 64-byte fetch):\n"
	       "  %" PRIu64 " of %ld marks in %.3f s = %.0f marks/s, lost %" PRIu64 "\n",
	       so.ring_pages, got, N, t1 - t0, (double)got / (t1 - t0), st.lost + st.lost_samples);
}

int main(int argc, char **argv)
{
	const char *perf = getenv("PERF") && *getenv("PERF") ? getenv("PERF") : "perf";
	char dir[] = "/tmp/uevent-bench.XXXXXX", path[256], cmd[1024];
	const char *file = argc > 1 ? argv[1] : NULL;
	uint64_t nrec = 0, best_n = 0, script_lines = 0;
	double secs = 0, best = 1e9, script_secs, floor_best = 1e9;
	struct stat st;
	FILE *p;
	int i, made = 0;

	if (!file) {
		if (!mkdtemp(dir))
			return 1;
		snprintf(path, sizeof(path), "%s/perf.data", dir);
		snprintf(cmd, sizeof(cmd), "%s record -q -e task-clock -c 5000 -o %s -- sh -c "
			 "'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done' >/dev/null 2>&1",
			 perf, path);
		if (system(cmd) != 0) {
			printf("decode bench: skipped (cannot run %s record)\n", perf);
			rmdir(dir);
			live(NULL);
			return 0;
		}
		file = path;
		made = 1;
	}
	if (stat(file, &st) < 0)
		return 1;
	cpu_time = argc > 2 && !strcmp(argv[2], "--no-script");
	for (i = 0; i < 5; i++) {
		if (decode_once(file, &nrec, &secs) < 0) {
			fprintf(stderr, "decode failed: %s\n", strerror(errno));
			return 1;
		}
		if (secs < best) {
			best = secs;
			best_n = nrec;
		}
		if (floor_once(file, &secs) == 0 && secs < floor_best)
			floor_best = secs;
	}
	if (argc > 2 && !strcmp(argv[2], "--no-script")) {
		/* the reader alone (bench/cpus-read.sh): records, seconds, records/s, MB/s */
		printf("libuevent %" PRIu64 " %.6f %.0f %.1f\n", best_n, best, (double)best_n / best,
		       (double)st.st_size / 1e6 / best);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "%s script -i %s 2>/dev/null", perf, file);
	script_secs = now_s();
	p = popen(cmd, "r");
	if (p) {
		char line[4096];

		while (fgets(line, sizeof(line), p))
			script_lines++;
		pclose(p);
	}
	script_secs = now_s() - script_secs;
	printf("perf.data: %s, %.1f MB, %" PRIu64 " records (%" PRIu64 " samples per perf script)\n",
	       file, (double)st.st_size / 1e6, best_n, script_lines);
	printf("%-22s %12s %10s %14s %10s\n", "decoder", "records", "seconds", "records/s", "MB/s");
	printf("%-22s %12" PRIu64 " %10.4f %14.0f %10.1f\n", "libuevent (best of 5)", best_n, best,
	       (double)best_n / best, (double)st.st_size / 1e6 / best);
	/* perf script prints a line for a sample and none for most other records: its
	 * "records" are lines, so only the times of the two over the same file compare */
	printf("%-22s %12" PRIu64 " %10.4f %14s %10.1f\n", "perf script (lines)", script_lines,
	       script_secs, "-", (double)st.st_size / 1e6 / script_secs);
	printf("%-22s %12s %10.4f %14s %10.1f\n", "floor (map+read+unmap)", "-", floor_best,
	       "-", (double)st.st_size / 1e6 / floor_best);
	printf("speedup (time of perf script / time of libuevent, same file): %.1fx\n",
	       script_secs / best);
	printf("ceiling (time of perf script / floor: any reader that maps the file): %.1fx\n",
	       script_secs / floor_best);
	if (made) {
		unlink(path);
		rmdir(dir);
	}
	live(NULL);
	return 0;
}
