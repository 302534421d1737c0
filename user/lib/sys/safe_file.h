/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files the CLI writes and lock files it takes, made safe to create as root
 * in directories other users can write (/tmp): nothing here follows a
 * symbolic link or reuses a file someone else planted.
 */
#ifndef PACER_SAFE_FILE_H
#define PACER_SAFE_FILE_H

#include <stdio.h>
#include <sys/types.h>

#define SAFE_FILE_MODE 0600 /* recordings and reports hold source addresses */

/*
 * An output file in the making: written to a temporary in the target's
 * directory (created exclusively, never through a link, mode 0600 unless
 * asked otherwise) and renamed over the target only when complete, so the
 * target's name never holds a partial file and a symlink planted at either
 * name is never followed (rename replaces a link at the target itself).
 */
struct safe_out {
	FILE *f;
	char *path, *tmp_path;
};

/*
 * Create the temporary: "<path><tmp_suffix>" when tmp_suffix is given
 * (fails with -EEXIST if that name exists, whatever it is), otherwise a
 * fresh random name "<path>.XXXXXX".  A target that exists and is neither
 * a regular file nor a symbolic link (a directory, a device, a FIFO) is
 * refused with -EINVAL.  0 or negative errno; why[] says what failed.
 */
int safe_out_open(struct safe_out *o, const char *path, const char *tmp_suffix, mode_t mode,
		  char *why, size_t why_len);

/* fflush, fsync, close, rename over the target, fsync the directory.  0 or negative errno. */
int safe_out_commit(struct safe_out *o, char *why, size_t why_len);

/* A whole buffer written as above (a fresh temporary renamed into place).  0 or negative errno. */
int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode);

/* Close and remove the temporary (nothing is left behind). */
void safe_out_discard(struct safe_out *o);

/* Close and leave the temporary for the user (a recording cut short). */
void safe_out_abandon(struct safe_out *o);

/*
 * An exclusive lock held through an flock()ed file at path, created 0600
 * without following links.  Released by lock_file_release(), which removes
 * the file while still holding the lock; a taker that raced with the
 * removal (its lock is on an unlinked inode) notices and retries, so two
 * holders never coexist.  Returns the fd, -EBUSY if another holder has it
 * (with nonblock), or negative errno.
 */
int lock_file_acquire(const char *path, int nonblock);
void lock_file_release(int fd, const char *path);

/* What kind of file st_mode says: "a FIFO", "a directory", "a character device"... */
const char *file_type_name(mode_t mode);

/*
 * Open an input file that must be a regular file: opened without blocking
 * (opening a FIFO waits for a writer), its type checked before any read (a
 * FIFO or terminal can block forever, a device such as /dev/zero never
 * ends), then made blocking again.  The fd, or negative errno with why[]
 * saying what is wrong without naming path: -EINVAL and "not a regular
 * file (a FIFO)", or the error of open(2).
 */
int open_regular_file(const char *path, char *why, size_t why_len);

#endif
