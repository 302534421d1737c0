#!/usr/bin/env bash
# The limiter before xdp-forward on a router (issue 39): Debian 12's 6.12
# kernel (bookworm-backports) under qemu, its two virtio-net NICs in native
# XDP mode, with Debian 13's xdp-forward (xdp-tools 1.5.x, unpacked by
# `scripts/kernels.sh fetch-xdp-forward` and run with trixie's own loader
# and libraries, never installed here).  The guest side,
# tests/qemu_forward.sh, routes from a client netns through eth1 (the
# limiter at priority 20 and xdp-forward at its default 50 in one libxdp
# dispatcher) and a veth to a server netns: what the limiter admits is
# forwarded in XDP (TTL decremented, the kernel's ForwDatagrams still),
# what it drops never reaches the server, xdp-forward's TTL rule holds for
# what it admits (the client gets the time exceeded), either unloads alone,
# in both orders of loading.  Skipped, with the reason, only when the guest
# (qemu, busybox, the kernel package) or Debian 13's packages cannot be had.
#   FORWARD_KERNEL=6.1 boots Debian 12's own kernel instead.
# run.sh: background (no timing of its own; runs beside the rest)
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

log=$(mktemp)
trap 'stop_background; rm -f "$log"' EXIT
series=${FORWARD_KERNEL:-6.12}
[ -x "$BUILD/tests/tools/udp_sink" ] || { echo "integ_forward: $BUILD/tests/tools/udp_sink is missing; run make first" >&2; exit 1; }
QEMU_XDP_FORWARD=1 scripts/qemu-boot.sh "$series" tests/qemu_forward.sh >"$log" 2>&1
rc=$?
guest_rerun "Linux $series" "$log" "$rc" env QEMU_XDP_FORWARD=1 scripts/qemu-boot.sh "$series" tests/qemu_forward.sh
rc=$?
if [ "$rc" -eq 77 ]; then
	grep -m1 '^SKIP' "$log"
	exit 77
fi
label="Linux $series ($(sed -n 's/.*guest: Linux \([^,]*\),.*/\1/p' "$log" | head -1))"
tr -d '\r' <"$log" | grep -E '^(ok|FAIL|fwd) ' | sed "s/^/$label: /"
grep -m1 'booting under TCG' "$log"
guest_tally "$label" "$log" "$rc"
finish
