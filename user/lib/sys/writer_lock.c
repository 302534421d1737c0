// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The per-pacer writer lock (writer_lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include "pins.h"
#include "writer_lock.h"

int writer_lock_path(uint64_t netns_ino, const char *ifname, char *buf, size_t len)
{
	/* The pins' directory name, flattened into one file: RUN_DIR/netns-INO.IFNAME.lock. */
	int e = pin_if_dir(PACER_RUN_DIR, netns_ino, ifname, buf, len);
	size_t n;

	if (e)
		return e;
	*strrchr(buf, '/') = '.';
	n = strlen(buf);
	if (n + sizeof(".lock") > len)
		return -ENAMETOOLONG;
	memcpy(buf + n, ".lock", sizeof(".lock"));
	return 0;
}

int writer_lock_holder(int fd)
{
	char want[64], line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (fstat(fd, &st))
		return 0;
	/* fs/locks.c: "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE ..."; waiters have "->". */
	snprintf(want, sizeof(want), " %02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "r");
	while (f && !pid && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, want), *p;
		int cand;

		if (!at || strstr(line, "->") || !strstr(line, "FLOCK"))
			continue;
		/* The pid is the word before the device. */
		for (p = at; p > line && p[-1] == ' '; p--)
			;
		while (p > line && p[-1] != ' ')
			p--;
		if (sscanf(p, "%d", &cand) == 1 && cand > 0 && cand != getpid())
			pid = cand;
	}
	if (f)
		fclose(f);
	return pid;
}

/* "pid 123 (xdp-pacer deny add eth0 -)", or "another process" when unknown. */
static void holder_describe(int fd, char *buf, size_t len)
{
	char path[64], cmd[160];
	int pid = writer_lock_holder(fd), cfd;
	ssize_t n = 0, i;

	if (!pid) {
		snprintf(buf, len, "another process");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, cmd, sizeof(cmd) - 1);
		close(cfd);
	}
	if (n <= 0) {
		snprintf(buf, len, "pid %d", pid);
		return;
	}
	while (n > 0 && !cmd[n - 1])
		n--;
	for (i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	cmd[n] = 0;
	snprintf(buf, len, "pid %d (%s)", pid, cmd);
}

static void on_alarm(int sig)
{
	(void)sig; /* only to interrupt flock() */
}

/* flock(LOCK_EX) interrupted after wait_ms by a one-shot timer: 0 or -errno (-EINTR: timed out). */
static int lock_timed(int fd, unsigned wait_ms)
{
	struct sigaction sa, old_sa;
	struct itimerval it, old_it;
	int ret;

	if (!wait_ms)
		return flock(fd, LOCK_EX | LOCK_NB) ? -errno : 0;
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: flock returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = wait_ms / 1000;
	it.it_value.tv_usec = (wait_ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, &old_it);
	ret = flock(fd, LOCK_EX) ? -errno : 0;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	return ret;
}

int writer_lock_take(uint64_t netns_ino, const char *ifname, unsigned wait_ms, char *err, size_t len)
{
	char path[160], who[200];
	int fd, ret;

	ret = writer_lock_path(netns_ino, ifname, path, sizeof(path));
	if (ret) {
		snprintf(err, len, "no lock file name for interface '%s'", ifname);
		return ret;
	}
	/* A minimal root (an initramfs, a container) may lack /run itself. */
	if (mkdir(PACER_RUN_DIR, 0700) && errno == ENOENT && mkdir("/run", 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, len, "cannot make /run: %s", strerror(-ret));
		return ret;
	}
	if (mkdir(PACER_RUN_DIR, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, len, "cannot make %s: %s", PACER_RUN_DIR, strerror(-ret));
		return ret;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "cannot open the writer lock %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = lock_timed(fd, wait_ms);
	if (!ret)
		return fd;
	if (ret == -EINTR || ret == -EWOULDBLOCK) {
		holder_describe(fd, who, sizeof(who));
		snprintf(err, len,
			 "%s: %s is changing this pacer (writer lock %s); gave up after %u.%03u s (--wait SECS waits longer)",
			 ifname, who, path, wait_ms / 1000, wait_ms % 1000);
		ret = -ETIMEDOUT;
	} else {
		snprintf(err, len, "cannot lock %s: %s", path, strerror(-ret));
	}
	close(fd);
	return ret;
}

void writer_lock_release(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the flock */
}
