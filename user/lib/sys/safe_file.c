// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "safe_file.h"

__attribute__((format(printf, 4, 5)))
static int say(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static void safe_out_free(struct safe_out *o)
{
	free(o->path);
	free(o->tmp_path);
	o->path = o->tmp_path = NULL;
	o->f = NULL;
}

/* O_EXCL: an existing name, even a dangling link, is an error, never reused. */
static int create_exclusive(const char *tmp, mode_t mode)
{
	return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

static int create_random(char *tmp, size_t base_len, mode_t mode)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[6];
	int tries, i, fd = -1;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -1;
		for (i = 0; i < 6; i++)
			tmp[base_len + 1 + i] = set[rnd[i] % (sizeof(set) - 1)];
		fd = create_exclusive(tmp, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return fd;
}

int safe_out_open(struct safe_out *o, const char *path, const char *tmp_suffix, mode_t mode,
		  char *why, size_t why_len)
{
	size_t n = strlen(path), extra = tmp_suffix ? strlen(tmp_suffix) : 7;
	struct stat st;
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return say(why, why_len, -EINVAL, "%s exists and is not a regular file", path);
	o->path = strdup(path);
	o->tmp_path = malloc(n + extra + 1);
	if (!o->path || !o->tmp_path) {
		safe_out_free(o);
		return say(why, why_len, -ENOMEM, "out of memory");
	}
	snprintf(o->tmp_path, n + extra + 1, "%s%s", path, tmp_suffix ? tmp_suffix : ".XXXXXX");
	fd = tmp_suffix ? create_exclusive(o->tmp_path, mode) : create_random(o->tmp_path, n, mode);
	if (fd < 0) {
		err = -errno;
		say(why, why_len, err, "cannot create %s: %s%s", o->tmp_path, strerror(-err),
		    err == -EEXIST ? " (left by an earlier run? remove it, or choose another name)" : "");
		safe_out_free(o);
		return err;
	}
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		err = -errno;
		close(fd);
		unlink(o->tmp_path);
		say(why, why_len, err, "cannot open %s: %s", o->tmp_path, strerror(-err));
		safe_out_free(o);
		return err;
	}
	return 0;
}

static void fsync_parent(const char *path)
{
	char *dir = strdup(path), *slash;
	int dfd;

	if (!dir)
		return;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
}

int safe_out_commit(struct safe_out *o, char *why, size_t why_len)
{
	int err = 0;

	if (fflush(o->f) || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (!err && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!err && rename(o->tmp_path, o->path))
		err = -errno;
	if (err) {
		say(why, why_len, err, "cannot write %s: %s", o->path, strerror(-err));
		unlink(o->tmp_path);
	} else {
		fsync_parent(o->path); /* make the rename itself durable */
	}
	safe_out_free(o);
	return err;
}

void safe_out_discard(struct safe_out *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp_path)
		unlink(o->tmp_path);
	safe_out_free(o);
}

void safe_out_abandon(struct safe_out *o)
{
	if (o->f)
		fclose(o->f);
	safe_out_free(o);
}

int lock_file_acquire(const char *path, int nonblock)
{
	struct stat held, named;
	int fd, err;

	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0))) {
			err = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return err;
		}
		if (fstat(fd, &held) || !S_ISREG(held.st_mode)) {
			close(fd);
			return -EINVAL;
		}
		/* The previous holder may have removed the file between our open and flock. */
		if (!stat(path, &named) && held.st_ino == named.st_ino && held.st_dev == named.st_dev)
			return fd;
		close(fd);
	}
}

void lock_file_release(int fd, const char *path)
{
	if (fd < 0)
		return;
	unlink(path);
	close(fd);
}

int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode)
{
	struct safe_out o;
	char why[256];
	int err = safe_out_open(&o, path, NULL, mode, why, sizeof(why));

	if (err)
		return err;
	if (len && fwrite(buf, 1, len, o.f) != len) {
		safe_out_discard(&o);
		return -EIO;
	}
	return safe_out_commit(&o, why, sizeof(why));
}

const char *file_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

int open_regular_file(const char *path, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), ret;
	struct stat st;

	if (fd < 0)
		return say(why, why_len, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && fcntl(fd, F_SETFL, 0)))
		ret = say(why, why_len, -errno, "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		ret = say(why, why_len, -EINVAL, "not a regular file (%s)", file_type_name(st.st_mode));
	else
		return fd;
	close(fd);
	return ret;
}
