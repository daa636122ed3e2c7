/* fs-trust.h - opening what other users can plant: a directory path whose symlinks must
 * be ours or root's, and a bounded, non-blocking read of a file that must be regular.
 * Header-only: the CLI (tools/jit-clean.c) links the shared library, whose private
 * symbols are hidden, and uses the same checks as libuevent/jit.c and symbolize.c. */
#ifndef UEVENT_FS_TRUST_H
#define UEVENT_FS_TRUST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Opens the directory path (O_DIRECTORY, O_CLOEXEC, O_NONBLOCK) resolving it one
 * component at a time from at (AT_FDCWD: the working directory, the user's own): a
 * symlink on the way is followed only if it belongs to us or root, so a link another
 * user planted (JITDUMPDIR=/tmp/jd made a link to elsewhere first) is -EPERM, never
 * followed. Returns the fd or -errno; why, in why (cap bytes), when it refuses.
 */
static inline int _uevent_open_dir_trusted_at(int at, const char *path, int depth, char *why,
					      size_t cap)
{
	char comp[NAME_MAX + 1], target[PATH_MAX];
	const char *p = path, *e;
	int fd, nfd, err;

	if (depth > 40)
		return -ELOOP;
	fd = openat(path[0] == '/' ? AT_FDCWD : at, path[0] == '/' ? "/" : ".",
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	for (; *p; p = e) {
		struct stat st, st2;
		size_t n;
		ssize_t l;

		while (*p == '/')
			p++;
		e = p + strcspn(p, "/");
		n = (size_t)(e - p);
		if (!n || (n == 1 && *p == '.'))
			continue;
		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto fail;
		if (!S_ISLNK(st.st_mode)) {
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |
				     O_NONBLOCK);
			if (nfd < 0)
				goto fail;
			close(fd);
			fd = nfd;
			continue;
		}
		if (st.st_uid != geteuid() && st.st_uid != 0) {
			if (why)
				snprintf(why, cap, "%.*s is a symlink of user %u, not ours: not "
					 "followed", (int)(e - path), path, (unsigned)st.st_uid);
			close(fd);
			return -EPERM;
		}
		l = readlinkat(fd, comp, target, sizeof(target) - 1);
		/* the link read is the link checked (not one swapped in since) */
		if (l < 0 || fstatat(fd, comp, &st2, AT_SYMLINK_NOFOLLOW) < 0)
			goto fail;
		if (st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
			close(fd);
			return -EAGAIN;
		}
		target[l] = 0;
		nfd = _uevent_open_dir_trusted_at(fd, target, depth + 1, why, cap);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return fd;
fail:
	err = errno;
	close(fd);
	return -err;
}

static inline int _uevent_open_dir_trusted(const char *path, char *why, size_t cap)
{
	if (why && cap)
		*why = 0;
	return _uevent_open_dir_trusted_at(AT_FDCWD, path, 0, why, cap);
}

/* What a non-regular file is, for a message. */
static inline const char *_uevent_file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" :
	       S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symlink" : "not a regular file";
}

/*
 * Opens path (under at) to read where others may have planted it: O_NOFOLLOW (a symlink
 * there is refused, -ELOOP), O_NONBLOCK (a FIFO does not hang the open), then a regular
 * file only (-EINVAL for a FIFO, a device: a link to /dev/zero never ends). The file's
 * size at open goes to *size, the bytes a reader takes at most. Says why in why.
 */
static inline int _uevent_open_regular(int at, const char *path, int nofollow, off_t *size,
				       char *why, size_t cap)
{
	struct stat st;
	int fd = openat(at, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	int err;

	if (fd < 0) {
		err = errno;
		if (why && err == ELOOP)
			snprintf(why, cap, "skipped %s: a symlink (not followed)", path);
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		if (why)
			snprintf(why, cap, "skipped %s: %s, not a regular file", path,
				 _uevent_file_kind(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	/* back to blocking reads: a regular file never waits, and stdio wants them */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (size)
		*size = st.st_size;
	return fd;
}

#endif
