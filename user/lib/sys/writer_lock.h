/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One writer at a time per pacer: every verb that changes a pacer's live
 * state (load, unload, set, deny/exempt add, del, flush) takes an flock on
 *     /run/xdp-pacer/netns-<inode of the namespace>.<ifname>.lock
 * for as long as it writes; readers (status, stats, the exporter) take
 * none.  The datapath needs no lock: each writer orders its writes so that
 * a packet meets the old state or the new one (docs/design.md, Live
 * changes), which holds only while writers do not interleave.  A regular
 * file in /run, not the pin directory, since a pacer may run without pins
 * and bpffs holds no regular files; the lock files are never removed
 * (removing one would let two writers lock two different files).
 */
#ifndef PACER_WRITER_LOCK_H
#define PACER_WRITER_LOCK_H

#include <stddef.h>
#include <stdint.h>

#define PACER_RUN_DIR "/run/xdp-pacer"
#define PACER_LOCK_WAIT_DEFAULT_S 10 /* --wait's default */
#define PACER_LOCK_WAIT_MAX_S 3600

/* The lock file's path for ifname in network namespace netns_ino: 0 or -ENAMETOOLONG / -EINVAL. */
int writer_lock_path(uint64_t netns_ino, const char *ifname, char *buf, size_t len);

/*
 * Take the lock, waiting at most wait_ms (0: only try).  The fd to give
 * writer_lock_release(), or -ETIMEDOUT with who holds it (pid and command
 * line, read from /proc/locks) in err, or another -errno with why.
 */
int writer_lock_take(uint64_t netns_ino, const char *ifname, unsigned wait_ms, char *err, size_t len);
void writer_lock_release(int fd);

/* The pid holding an flock on the file open as fd (not this process's own lock), or 0. */
int writer_lock_holder(int fd);

#endif
