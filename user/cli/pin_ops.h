/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Pins on this machine (see pins.h for the layout): this namespace's directory, the lock, liveness. */
#ifndef PACER_PIN_OPS_H
#define PACER_PIN_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pins.h"

#define PACER_PIN_ROOT "/sys/fs/bpf/xdp-pacer"

int netns_self(uint64_t *ino);                      /* this process's network namespace */
/* This network namespace's cookie (unique while the machine runs), 0 where the kernel has none. */
uint64_t netns_cookie_self(void);
int pin_dir(const char *ifname, char *buf, size_t len); /* ifname's pins in this namespace */
/* Serialise everything that makes or removes pins: an flock on the pin root. fd or -errno. */
int pins_lock(void);
void pins_unlock(int fd);
/*
 * Take ifname's writer lock in this network namespace (writer_lock.h),
 * waiting at most wait_s seconds: its fd for pins_writer_unlock(), or -1
 * after saying why (who holds it).
 */
int pins_writer_lock(const char *ifname, unsigned wait_s);
/* The same without waiting or saying anything: its fd, or -1 while another holds it. */
int pins_writer_lock_try(const char *ifname);
void pins_writer_unlock(int fd);
/* Id of the program pinned in dir, 0 if none. */
uint32_t pinned_prog_id(const char *dir);
/* Whether a process or a mount (ip netns, containers) still holds network namespace ino. */
bool netns_alive(uint64_t ino);
/* Mount bpffs on /sys/fs/bpf unless it is there: 0 or -errno after saying why. */
int ensure_bpffs(void);

#endif
