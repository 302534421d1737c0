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

log=$(mktemp)
trap 'stop_background; rm -f "$log"' EXIT
series=${SYSTEMD_KERNEL:-6.1}
QEMU_INIT=systemd scripts/qemu-boot.sh "$series" tests/qemu_systemd.sh >"$log" 2>&1
rc=$?
guest_rerun "Linux $series, systemd" "$log" "$rc" env QEMU_INIT=systemd scripts/qemu-boot.sh "$series" tests/qemu_systemd.sh
rc=$?
if [ "$rc" -eq 77 ]; then
	grep -m1 '^SKIP' "$log"
	exit 77
fi
tr -d '\r' <"$log" | grep -E '^(ok|FAIL) ' | sed "s/^/Linux $series, systemd: /"
guest_tally "Linux $series, systemd" "$log" "$rc"
finish
