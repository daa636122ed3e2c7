/* file-reopen.c - the file transport opened again and closed while threads emit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "uevent.h"

/*
 * Emitters mark without pause while the main thread opens the transport again, at a
 * new path, at the path it has open, at a symlink (refused) or closes it, and between
 * times opens other files of its own, which take any descriptor number freed. A
 * record written through a number the transport gave up lands in one of those (or in
 * a file being made, before its head); a record written to neither file is lost.
 */
#define NEMIT		4
#define ROUNDS		400
#define NDECOY		4
#define MARK_TYPE	(UEVENT_TYPE_USER + 7)
#define SIG_TYPE	(UEVENT_TYPE_USER + 8)
#define MAX_MARKS	(1u << 24)	/* per thread, far more than a run makes */

static char dir[64];
static int stop;
static uint32_t made[NEMIT + 1];	/* marks made by each thread; [NEMIT]: the handler's */
static pthread_t main_thread;

/* Mark k of thread t: t, k, then a pattern; 8..207 bytes. */
static size_t mark_bytes(uint32_t t, uint32_t k, uint8_t *buf)
{
	size_t n = 8 + (k * 29 + t * 13) % 200, i;

	memcpy(buf, &t, 4);
	memcpy(buf + 4, &k, 4);
	for (i = 8; i < n; i++)
		buf[i] = (uint8_t)(k ^ (t << 5) ^ i);
	return n;
}

/* Marks from a handler on the main thread: it may be holding the writer's place. */
static void on_signal(int sig)
{
	uint8_t buf[208];
	uint32_t k = __atomic_fetch_add(&made[NEMIT], 1, __ATOMIC_RELAXED);
	int saved = errno;

	(void)sig;
	uevent_emit(SIG_TYPE, buf, mark_bytes(NEMIT, k, buf));
	errno = saved;
}

static void *emitter(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg, k;
	uint8_t buf[208];

	for (k = 0; k < MAX_MARKS && !__atomic_load_n(&stop, __ATOMIC_RELAXED); k++) {
		uevent_emit(MARK_TYPE, buf, mark_bytes(t, k, buf));
		if (t == 0 && k % 64 == 0)
			pthread_kill(main_thread, SIGUSR2);
	}
	made[t] = k;
	return NULL;
}

static int open_at(const char *p)
{
	UEVENT_OPTS(o, .transport = UEVENT_TRANSPORT_FILE, .path = p,
		    .flags = UEVENT_OPEN_IGNORE_ENV);

	return uevent_open(&o);
}

/* Opens the decoys, waits for late writers, counts the bytes they got, closes them. */
static long decoys(int round)
{
	struct timespec ts = { 0, 200000 };
	char p[PATH_MAX];
	int fd[NDECOY], i;
	struct stat st;
	long got = 0;

	for (i = 0; i < NDECOY; i++) {
		snprintf(p, sizeof(p), "%s/decoy-%d-%d", dir, round, i);
		fd[i] = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	}
	nanosleep(&ts, NULL);
	for (i = 0; i < NDECOY; i++) {
		if (fd[i] < 0)
			continue;
		if (fstat(fd[i], &st) == 0)
			got += (long)st.st_size;
		close(fd[i]);
		snprintf(p, sizeof(p), "%s/decoy-%d-%d", dir, round, i);
		unlink(p);
	}
	return got;
}

struct check {
	uint8_t *seen[NEMIT + 1];	/* how often each mark was read */
	uint32_t last[NEMIT + 1];	/* in this file: the last k + 1 of each thread */
	long records, bad, twice, out_of_order, unreadable;
};

/* Every record of one transport file: whole, each mark known, in its thread's order. */
static void check_file(struct check *c, const char *p)
{
	struct uevent_file_reader *rd = uevent_file_reader__open(p);
	struct uevent_record r = { .sz = sizeof(r) };
	uint8_t want[208];
	uint32_t t, k;
	int ret;

	if (!rd) {
		diag("%s: %s", p, strerror(errno));
		c->unreadable++;
		return;
	}
	memset(c->last, 0, sizeof(c->last));
	while ((ret = uevent_file_reader__next(rd, &r)) == 1) {
		c->records++;
		if ((r.type != MARK_TYPE && r.type != SIG_TYPE) || r.size < 8) {
			c->bad++;
			continue;
		}
		memcpy(&t, r.data, 4);
		memcpy(&k, (const uint8_t *)r.data + 4, 4);
		if (t > NEMIT || (t == NEMIT) != (r.type == SIG_TYPE) || k >= made[t] ||
		    mark_bytes(t, k, want) != r.size || memcmp(want, r.data, r.size)) {
			c->bad++;
			continue;
		}
		if (c->seen[t][k]++)
			c->twice++;
		if (t < NEMIT && k < c->last[t])
			c->out_of_order++;
		c->last[t] = k + 1;
	}
	if (ret < 0) {
		diag("%s: the reader stops at %llu: %s", p,
		     (unsigned long long)uevent_file_reader__offset(rd), strerror(-ret));
		c->unreadable++;
	}
	uevent_file_reader__close(rd);
}

int main(void)
{
	char p[PATH_MAX], link_path[PATH_MAX];
	int i, files = 0, opens_ok = 0, refused_ok = 0, refused = 0, closes = 0;
	struct check c = { { NULL } };
	long leaked = 0, leaky_rounds = 0, got, wanted = 0;
	pthread_t th[NEMIT];
	struct sigaction sa;
	struct uevent_stats st;

	snprintf(dir, sizeof(dir), "/tmp/uevent-file-reopen-XXXXXX");
	if (!mkdtemp(dir))
		plan_skip_all("no temporary directory");
	tap_cleanup(dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	snprintf(p, sizeof(p), "%s/target", dir);
	if (symlink(p, link_path) < 0)
		plan_skip_all("no symlink");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	main_thread = pthread_self();
	snprintf(p, sizeof(p), "%s/f-%d", dir, files++);
	if (open_at(p) != UEVENT_TRANSPORT_FILE)
		plan_skip_all("the file transport does not open");
	plan(5);
	uevent_stats_reset();
	for (i = 0; i < NEMIT; i++)
		pthread_create(&th[i], NULL, emitter, (void *)(uintptr_t)i);

	/*
	 * Rounds: a new file, the same file again, ...; every 8th a refused symlink, every
	 * 10th a close. After each, files of our own take whatever number was freed.
	 */
	for (i = 0; i < ROUNDS; i++) {
		if (i % 10 == 9) {
			uevent_close();
			closes++;
		} else if (i % 8 == 7) {
			refused++;
			refused_ok += open_at(link_path) == -ELOOP;
		} else {
			if (i % 2 == 0)
				snprintf(p, sizeof(p), "%s/f-%d", dir, files++);
			opens_ok += open_at(p) == UEVENT_TRANSPORT_FILE;
		}
		got = decoys(i);
		leaked += got;
		leaky_rounds += got > 0;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NEMIT; i++)
		pthread_join(th[i], NULL);
	signal(SIGUSR2, SIG_IGN);	/* one may still be pending */
	uevent_stats_get(&st, sizeof(st));
	uevent_close();

	ok(opens_ok == ROUNDS - refused - closes && refused_ok == refused,
	   "%d opens while %d threads emit, %d of a symlink refused, %d closes", opens_ok,
	   NEMIT, refused_ok, closes);
	ok(leaked == 0, "no record in a file the transport gave up the number of "
	   "(%ld bytes in the decoys of %ld rounds)", leaked, leaky_rounds);

	for (i = 0; i <= NEMIT; i++) {
		c.seen[i] = calloc(made[i] ? made[i] : 1, 1);
		wanted += made[i];
	}
	for (i = 0; i < files; i++) {
		snprintf(p, sizeof(p), "%s/f-%d", dir, i);
		check_file(&c, p);
		unlink(p);
	}
	ok(!c.unreadable && !c.bad,
	   "%d files read to their end, every record whole (%ld records, %ld bad, %ld files "
	   "unreadable)", files, c.records, c.bad, c.unreadable);
	ok(!c.twice && !c.out_of_order, "no mark twice, each thread's in order in each file "
	   "(%ld twice, %ld out of order)", c.twice, c.out_of_order);
	/* a mark the transport took (emitted, not unobserved) is in a file */
	ok((uint64_t)c.records == st.emitted - st.unobserved,
	   "none lost: %ld in the files, %llu delivered (%ld made, %llu unobserved, "
	   "%llu dropped)", c.records, (unsigned long long)(st.emitted - st.unobserved),
	   wanted, (unsigned long long)st.unobserved, (unsigned long long)st.dropped);

	for (i = 0; i <= NEMIT; i++)
		free(c.seen[i]);
	unlink(link_path);
	rmdir(dir);
	return exit_status();
}
