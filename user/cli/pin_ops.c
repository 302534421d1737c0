// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pin directories on bpffs: naming them in this namespace, locking, reading, cleaning up. */
#include <dirent.h>
#include <errno.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "cli_log.h"
#include "pin_ops.h"
#include "writer_lock.h"

int netns_self(uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t netns_cookie_self(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0; /* before Linux 5.14 */
	close(fd);
	return cookie;
}

int pin_dir(const char *ifname, char *buf, size_t len)
{
	uint64_t ns = 0;
	int err = netns_self(&ns);

	return err ? err : pin_if_dir(PACER_PIN_ROOT, ns, ifname, buf, len);
}

int pins_lock(void)
{
	int fd;

	if (mkdir(PACER_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	fd = open(PACER_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

void pins_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the flock */
}

/*
 * An interface that does not exist has no pacer to serialise writers of:
 * a stand-in descriptor instead of a lock file, so a command given a
 * wrong name leaves nothing behind in /run and reports the name as it
 * always has (pacer_handle_open(): "no such interface").
 */
static int no_interface_lock(const char *ifname)
{
	return strlen(ifname) < IF_NAMESIZE && if_nametoindex(ifname) ? -1
								       : open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int pins_writer_lock(const char *ifname, unsigned wait_s)
{
	uint64_t ns = 0;
	char err[512];
	int fd = no_interface_lock(ifname);

	if (fd >= 0)
		return fd;
	fd = netns_self(&ns);
	if (fd) {
		pr_err("cannot name this network namespace: %s", strerror(-fd));
		return -1;
	}
	fd = writer_lock_take(ns, ifname, wait_s * 1000u, err, sizeof(err));
	if (fd < 0) {
		pr_err("%s", err);
		return -1;
	}
	return fd;
}

int pins_writer_lock_try(const char *ifname)
{
	uint64_t ns = 0;
	char err[512];
	int fd = no_interface_lock(ifname);

	if (fd >= 0)
		return fd;
	if (netns_self(&ns))
		return -1;
	return writer_lock_take(ns, ifname, 0, err, sizeof(err));
}

void pins_writer_unlock(int fd)
{
	writer_lock_release(fd);
}

uint32_t pinned_prog_id(const char *dir)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	char path[320];
	int fd;

	snprintf(path, sizeof(path), "%s/prog", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

/* Scans mountinfo (ip netns, container runtimes bind-mount namespaces) and /proc/PID/ns/net. */
bool netns_alive(uint64_t ino)
{
	char want[40], link[64], path[300], line[1024];
	struct dirent *de;
	bool alive = false;
	DIR *d;
	FILE *f;
	ssize_t n;

	snprintf(want, sizeof(want), "net:[%llu]", (unsigned long long)ino);
	f = fopen("/proc/self/mountinfo", "r");
	while (f && !alive && fgets(line, sizeof(line), f))
		alive = strstr(line, want) != NULL;
	if (f)
		fclose(f);
	d = opendir("/proc");
	while (d && !alive && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			alive = !strcmp(link, want);
		}
	}
	if (d)
		closedir(d);
	return alive;
}

int ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_err("/sys/fs/bpf is not a BPF filesystem and mounting one failed: %s",
		       strerror(-err));
		return err;
	}
	pr_debug("mounted bpffs on /sys/fs/bpf");
	return 0;
}
