#!/usr/bin/env bash
# The units as shipped, under the real systemd: Debian 12's systemd,
# journald and udevd as the init of a qemu guest on Debian 12's kernel
# (6.1), booted by `QEMU_INIT=systemd scripts/qemu-boot.sh` (the packages
# unpacked, never installed here: this machine's own init is not systemd,
# and systemd must not touch its files).  tests/qemu_systemd.sh, the guest
# side: xdp-pacer@ starts beside xdp-filter, reloads and stops touching
# the limiter alone; xdp-pacer-events@ puts drop events into the journal,
# rate-limited as documented.  Skipped, with the reason, only when the
# guest cannot be booted here (no qemu, no busybox, no package).
# run.sh: background (no timing of its own; runs beside the rest)
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

trap 'stop_background' EXIT
systemd_guest systemd tests/qemu_systemd.sh
finish
