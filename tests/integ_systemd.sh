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
trap 'rm -f "$log"' EXIT
series=${SYSTEMD_KERNEL:-6.1}
QEMU_INIT=systemd scripts/qemu-boot.sh "$series" tests/qemu_systemd.sh >"$log" 2>&1
rc=$?
if [ "$rc" -ne 77 ] && ! grep -qE '^[0-9]+ passed, [0-9]+ failed' "$log"; then
	# A guest that did not finish (a crash or hang of the emulated machine),
	# as integ_qemu.sh does: once more, its console's last lines shown.
	echo "the guest did not finish (exit $rc); its console's last lines:"
	tail -15 "$log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | tr -d '\r' | sed 's/^/  | /'
	QEMU_INIT=systemd scripts/qemu-boot.sh "$series" tests/qemu_systemd.sh >"$log" 2>&1
	rc=$?
fi
if [ "$rc" -eq 77 ]; then
	grep -m1 '^SKIP' "$log"
	exit 77
fi
tr -d '\r' <"$log" | grep -E '^(ok|FAIL) ' | sed "s/^/Linux $series, systemd: /"
read -r p f < <(awk '/^[0-9]+ passed, [0-9]+ failed/ { p = $1; f = $3 } END { print p + 0, f + 0 }' "$log")
n_pass=$p n_fail=$f
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
	not_ok "the systemd guest did not finish (exit $rc): $(tail -8 "$log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tr -d '\r' | tr '\n' ' ')"
fi
finish
