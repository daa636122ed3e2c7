/* cli.c - what the uevent CLI's command files share: strict numbers, JSON strings,
 * inputs ("-" made rewindable, perf.data told apart) and output files opened safely. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char *const cli_prog = "uevent";

/*
 * Numbers of options, strictly: digits only (0x for hex), nothing before or after, in
 * [min, max]. strtoul alone reads "-1" as its maximum, skips " 5", stops at "5x" and
 * saturates 99999999999999999999; each would run with a number nobody asked for.
 * Says which option and why; the caller exits 2.
 */
int cli_parse_u64(const char *cmd, const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *v)
{
	char *end = NULL;

	errno = 0;
	if (*arg >= '0' && *arg <= '9') {
		*v = strtoull(arg, &end, 0);
		if (!errno && !*end && *v >= min && *v <= max)
			return 0;
	}
	fprintf(stderr, "%s %s: %s wants a number from %" PRIu64 " to %" PRIu64 ", not '%s'\n",
		cli_prog, cmd, opt, min, max, arg);
	return -1;
}

int cli_parse_i64(const char *cmd, const char *opt, const char *arg, int64_t *v)
{
	const char *d = arg + (*arg == '-');
	char *end = NULL;

	errno = 0;
	if (*d >= '0' && *d <= '9') {
		*v = strtoll(arg, &end, 0);
		if (!errno && !*end)
			return 0;
	}
	fprintf(stderr, "%s %s: %s wants a number from %" PRId64 " to %" PRId64 ", not '%s'\n",
		cli_prog, cmd, opt, INT64_MIN, INT64_MAX, arg);
	return -1;
}

/* The length of the whole UTF-8 sequence at s (1-4; no overlong form, surrogate or code
 * point past U+10FFFF), or 0: not UTF-8 (a name is whatever bytes its program chose). */
size_t cli_utf8_seq(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3, lo = u[0] == 0xe0 ? 0xa0 : 0x80, hi = u[0] == 0xed ? 0x9f : 0xbf;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4, lo = u[0] == 0xf0 ? 0x90 : 0x80, hi = u[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (i = 2; i < n; i++)	/* (a NUL is no continuation: the walk stops there) */
		if (u[i] < 0x80 || u[i] > 0xbf)
			return 0;
	return n;
}

/* A copy of s with each byte that is not UTF-8 made U+FFFD, or NULL if s is UTF-8 as
 * it is (or no memory: then s is used as it is). */
char *cli_utf8_clean(const char *s)
{
	size_t i, n, o = 0, bad = 0;
	char *c;

	for (i = 0; s[i]; i += n ? n : 1)
		bad += !(n = cli_utf8_seq(s + i));
	if (!bad || !(c = malloc(i + 2 * bad + 1)))
		return NULL;
	for (i = 0; s[i]; i += n ? n : 1) {
		if ((n = cli_utf8_seq(s + i))) {
			memcpy(c + o, s + i, n);
			o += n;
		} else {
			memcpy(c + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	c[o] = 0;
	return c;
}

/* s (at most max bytes) as a JSON string: what is not UTF-8 becomes U+FFFD, as JSON
 * readers want UTF-8 and stop at anything else. */
void cli_json_str(FILE *f, const char *s, size_t max)
{
	size_t i, n;

	fputc('"', f);
	for (i = 0; s[i] && i < max; i += n) {
		unsigned char c = (unsigned char)s[i];

		n = 1;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if ((n = cli_utf8_seq(s + i)) && i + n <= max)
			fwrite(s + i, 1, n, f);
		else if (n)	/* cut by max: the end of the string */
			break;
		else
			fputs("\\ufffd", f), n = 1;
	}
	fputc('"', f);
}

void cli_json_out(const char *s)
{
	cli_json_str(stdout, s, SIZE_MAX);
}

int cli_usage(FILE *f, const char *usage)
{
	fprintf(f, "Usage:\n%s", usage);
	return 0;
}

/*
 * "-" is standard input. Telling a perf.data from a file-transport capture reads its
 * first bytes, which a pipe gives only once: a pipe is first copied into a memfd put
 * in its place (the readers read a pipe whole anyway), so both readers start at 0.
 */
int cli_stdin_rewindable(void)
{
	char buf[65536];
	ssize_t n;
	int fd;

	if (lseek(0, 0, SEEK_SET) == 0)
		return 0;
	fd = memfd_create("uevent-stdin", MFD_CLOEXEC);
	if (fd < 0) {
		FILE *t = tmpfile();

		fd = t ? dup(fileno(t)) : -1;
		if (t)
			fclose(t);
		if (fd < 0)
			return -errno;
	}
	errno = 0;
	while ((n = read(0, buf, sizeof(buf))) != 0) {
		ssize_t w, done = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		for (; done < n; done += w) {
			w = write(fd, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				goto fail;
		}
	}
	if (dup2(fd, 0) < 0 || lseek(0, 0, SEEK_SET) != 0)
		goto fail;
	close(fd);
	return 0;
fail:
	n = errno ? errno : EIO;
	close(fd);
	return (int)-n;
}

int cli_is_perf_data(const char *path)
{
	char magic[8];
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	int yes;

	if (fd < 0)
		return 0;
	yes = pread(fd, magic, 8, 0) == 8 &&
	      (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
	if (fd)
		close(fd);
	return yes;
}

const char *cli_open_error(const char *path, int err, int perf)
{
	static char buf[512];

	if (err == EINVAL)
		snprintf(buf, sizeof(buf), "%s: %s", path, perf ? "corrupt perf.data (bad header)"
							   : "not a perf.data capture (bad header)");
	else
		snprintf(buf, sizeof(buf), "%s: %s", path, strerror(err));
	return buf;
}

/* ---- output files ---------------------------------------------------------------- */

/* Why an output path that lstat() gave st is not written (cli_open_output), or NULL. */
static const char *output_refused(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link; not following it";
	if (!S_ISREG(st->st_mode))
		return "not a regular file; not writing into it";
	if (st->st_uid != geteuid())
		return "owned by another user; not overwriting it";
	if (st->st_nlink > 1)
		return "has other hard links; not overwriting it";
	return NULL;
}

/*
 * Opens PATH to write a capture into, often in a shared directory such as /tmp where
 * another user may have planted it first: a symlink to a victim, a hard link to one, a
 * device node or a FIFO. None of those is followed, opened or removed: a new path is
 * created with O_EXCL (which never follows a symlink); an existing one is used only if
 * it is a regular file of ours with a single link, checked again on the opened fd in
 * case it was swapped meanwhile. The file is not truncated here: the caller does it
 * once it is about to write, so a failure before leaves it as it was. Returns the fd,
 * with *created set when the path is ours to remove on failure; or -1 after saying why.
 */
int cli_open_output(const char *cmd, const char *path, int *created)
{
	const char *why;
	struct stat st, fst;
	int fd;

	*created = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		*created = 1;
		return fd;
	}
	if (errno != EEXIST)
		goto fail;
	if (lstat(path, &st) < 0)
		goto fail;
	if ((why = output_refused(&st))) {
		fprintf(stderr, "%s %s: %s: %s (remove it or choose another path)\n", cli_prog, cmd,
			path, why);
		return -1;
	}
	/* O_NONBLOCK: a FIFO swapped in after the lstat() must not hang the open */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    !S_ISREG(fst.st_mode) || fst.st_nlink > 1 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		close(fd);
		fprintf(stderr, "%s %s: %s: changed while being opened; not writing into it\n",
			cli_prog, cmd, path);
		return -1;
	}
	return fd;
fail:
	fprintf(stderr, "%s %s: %s: %s\n", cli_prog, cmd, path, strerror(errno));
	return -1;
}

/* Removes a failed output, only if it is still the file cli_open_output() created. */
void cli_remove_output(const char *path, int fd, int created)
{
	struct stat st, fst;

	if (created && fstat(fd, &fst) == 0 && lstat(path, &st) == 0 &&
	    st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
		unlink(path);
}

/*
 * The signals whose default ends the process while an export writes its new file: ^C,
 * kill, a closed terminal, a closed pipe on stderr (`2>&1 | head`), a write past the
 * file size limit. The new file would stay beside the path, hidden and as big as it had
 * got, with nothing to remove it; while it is there these signals remove it first, then
 * end the process as they would have. One left ignored, or handled by someone else, is
 * left so.
 */
static const int output_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ };
#define NR_OUTPUT_SIGS	(sizeof(output_sigs) / sizeof(output_sigs[0]))
static struct sigaction output_old[NR_OUTPUT_SIGS];
static int output_caught[NR_OUTPUT_SIGS];
static char *volatile output_tmp;	/* the new file; NULL: none */

static void output_on_signal(int sig)
{
	char *tmp = output_tmp;

	if (tmp)
		unlink(tmp);
	signal(sig, SIG_DFL);
	raise(sig);	/* blocked until we return: then it ends the process */
}

static void output_catch(sigset_t *blocked)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = output_on_signal;
	sigfillset(&sa.sa_mask);
	sigemptyset(blocked);
	for (i = 0; i < NR_OUTPUT_SIGS; i++) {
		sigaddset(blocked, output_sigs[i]);
		output_caught[i] = sigaction(output_sigs[i], NULL, &output_old[i]) == 0 &&
				   output_old[i].sa_handler == SIG_DFL &&
				   !(output_old[i].sa_flags & SA_SIGINFO) &&
				   sigaction(output_sigs[i], &sa, NULL) == 0;
	}
}

/* The new file renamed or removed (or never made): the signals as they were. */
static void output_release(void)
{
	size_t i;

	output_tmp = NULL;
	for (i = 0; i < NR_OUTPUT_SIGS; i++)
		if (output_caught[i]) {
			sigaction(output_sigs[i], &output_old[i], NULL);
			output_caught[i] = 0;
		}
}

/*
 * An export's output, which must not cost the user what the path held when the export
 * fails: a corrupt input found halfway, a full disk, a write error. It is written to a
 * new file beside the path (mkostemp: O_EXCL, so nothing planted there is followed or
 * opened) and renamed over the path only once all of it got there; on failure the new
 * file is removed and the path left as it was. A path that exists is refused for the
 * same reasons cli_open_output() refuses it, or if we may not write it; its mode is
 * kept, as writing into it kept it (less its group's bits where its group cannot be
 * kept: they were for that group); a new path gets 0644 less the umask, as open()
 * would give it. rename()
 * replaces the name and never writes through it, so a link planted at the path after
 * the check is replaced, not followed. Returns the stream, or NULL after saying why.
 */
FILE *cli_open_output_file(const char *cmd, const char *path, struct cli_output *o)
{
	const char *slash = strrchr(path, '/'), *why;
	sigset_t blocked, was;
	struct stat st, fst;
	mode_t mode;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->path = path;
	if (!strcmp(path, "-"))
		return o->f = stdout;
	if (lstat(path, &st) == 0) {
		if ((why = output_refused(&st))) {
			fprintf(stderr, "%s %s: %s: %s (remove it or choose another path)\n",
				cli_prog, cmd, path, why);
			return NULL;
		}
		/* a file we may not write stays so, though its directory would let the
		 * rename replace it */
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0) {
			fprintf(stderr, "%s %s: %s: %s\n", cli_prog, cmd, path, strerror(errno));
			return NULL;
		}
		o->exists = 1;
		mode = st.st_mode & 0777;
	} else if (errno == ENOENT) {
		mode = umask(0);
		umask(mode);
		mode = 0644 & ~mode;
	} else {
		fprintf(stderr, "%s %s: %s: %s\n", cli_prog, cmd, path, strerror(errno));
		return NULL;
	}
	if (asprintf(&o->tmp, "%.*s.uevent-XXXXXX", slash ? (int)(slash - path + 1) : 0,
		     path) < 0) {
		o->tmp = NULL;
		fprintf(stderr, "%s %s: %s: %s\n", cli_prog, cmd, path, strerror(errno));
		return NULL;
	}
	/* made and named for the signal handler with no signal between: none leaves it */
	output_catch(&blocked);
	sigprocmask(SIG_BLOCK, &blocked, &was);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		output_tmp = o->tmp;
	sigprocmask(SIG_SETMASK, &was, NULL);
	if (fd < 0) {
		output_release();
		fprintf(stderr, "%s %s: %s: %s%s\n", cli_prog, cmd, path, err == ENOENT ||
			err == ENOTDIR ? "" : "cannot create a file beside it (the export is "
			"written there, then renamed): ", strerror(err));
		free(o->tmp);
		return NULL;
	}
	if (o->exists && fstat(fd, &fst) == 0 && fst.st_gid != st.st_gid &&
	    fchown(fd, (uid_t)-1, st.st_gid) < 0)
		mode &= ~(mode_t)S_IRWXG;
	if (fchmod(fd, mode) < 0 || !(o->f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s %s: %s: %s\n", cli_prog, cmd, o->tmp, strerror(errno));
		unlink(o->tmp);
		output_release();
		close(fd);
		free(o->tmp);
		return NULL;
	}
	return o->f;
}

/*
 * Done with what cli_open_output_file() gave. ok (the export is whole): the new file
 * synced (fsync) and renamed over the path, standard output flushed. Not ok, or
 * anything written that did not get there (a full disk, a closed pipe, /dev/full): the
 * new file removed, the path as it was. 0, or -1 after saying why (an export's own
 * failure it has said itself).
 */
int cli_close_output_file(struct cli_output *o, int ok)
{
	int bad;

	errno = 0;
	bad = ferror(o->f);
	if (o->f == stdout) {
		bad |= fflush(o->f) != 0;
	} else {
		/* on the disk before its name is: after a crash the path holds the old file
		 * or the whole new one (EINVAL: a file system with nothing to sync) */
		if (ok && !bad && (fflush(o->f) != 0 ||
				   (fsync(fileno(o->f)) < 0 && errno != EINVAL)))
			bad = 1;
		if (fclose(o->f) != 0)
			bad = 1;
	}
	if (bad && !errno)	/* a write failed earlier, its errno since overwritten */
		errno = EIO;
	if (!bad && ok && o->tmp && rename(o->tmp, o->path) < 0)
		bad = 1;
	if (ok && !bad) {
		if (o->tmp)
			output_release();
		free(o->tmp);
		return 0;
	}
	if (ok)
		fprintf(stderr, "%s %s: %s: %s%s\n", cli_prog, o->cmd, o->path, strerror(errno),
			o->exists ? " (left as it was)" : "");
	else if (o->exists)
		fprintf(stderr, "%s %s: %s: left as it was\n", cli_prog, o->cmd, o->path);
	if (o->tmp) {
		unlink(o->tmp);
		output_release();
	}
	free(o->tmp);
	return -1;
}
