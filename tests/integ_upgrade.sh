#!/usr/bin/env bash
# The package's upgrade from the previous release (dist/releases): both
# .debs built here (the previous one from its commit, scripts/release-deb.sh),
# then a qemu guest of Debian 12's 6.1 with Debian 12's systemd and dpkg
# (tests/qemu_upgrade.sh) installs the previous one, starts its unit, adds
# entries and sees sources, and installs this one over it under traffic:
# its postinst restarts the unit in place, and the entries, their
# deadlines, the sources' state and the counters are kept.  Skipped, with
# the reason, only when the guest cannot be booted here (no qemu, no
# busybox, no package); a clone without the previous release's commit
# fails, saying so.
# run.sh: background (no timing of its own; runs beside the rest)
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

log=$(mktemp)
trap 'stop_background; rm -f "$log"' EXIT
new=$(sed -n 's/^VERSION := //p' Makefile)
old_deb=$(scripts/release-deb.sh previous 2>"$log")
check "the previous release's package builds from its commit ($(basename "${old_deb:-none}"))" test -s "${old_deb:-/nonexistent}"
[ -s "${old_deb:-/nonexistent}" ] || { sed 's/^/  /' "$log"; finish; exit; }
old=$(dpkg-deb -f "$old_deb" Version)
make -s deb BUILD="$BUILD" >/dev/null
new_deb=$(realpath "$BUILD/xdp-pacer_${new}_$(dpkg --print-architecture).deb")
check "this tree's package builds ($(basename "$new_deb"))" test -s "$new_deb"
export QEMU_DPKG=1 QEMU_FILES="$old_deb $new_deb"
systemd_guest "upgrade $old -> $new" tests/qemu_upgrade.sh "$old" "$new"
finish
