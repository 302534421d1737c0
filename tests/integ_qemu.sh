#!/usr/bin/env bash
# Every configuration in tests/qemu_configs loads, attaches and paces on
# Debian's own kernels, booted under qemu from their packages (6.1, what
# Debian 12 runs; 6.12, its backports kernel), and on this machine's kernel;
# the object alone attaches through `ip link ... xdp obj`; beside xdp-filter
# (xdp-tools) in libxdp's dispatcher, before and after it, each acts in chain
# order and unloads alone (where libxdp has no dispatcher, as on this
# machine's kernel, load refuses beside it, saying why); a program in the
# dispatcher is replaced by another in place, atomically, beside xdp-filter
# (tests/tools/xdp_replace_check; a program alone: tests/integ_replace.sh).
# On Debian 11's 5.10, older than the minimum, load refuses in one line.  The guest side
# is tests/qemu_guest.sh, which also sends with each of the generator's
# engines (live frames must work on Debian's kernels; on this machine's,
# live may be refused and auto then takes AF_XDP).  Prints each kernel's processed instruction
# counts (scripts/verifier-report.sh tabulates them).
#   QEMU_KERNELS="6.1 6.12 5.10" (default) picks the kernels.
# A kernel is skipped, with the reason, only when it cannot be booted here
# (no qemu, no busybox, its package not to be had); with none booted and
# none run on the host, the test is skipped.
# run.sh: background (no timing of its own; runs beside the rest)
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

ns="qemu-host-$$" # this machine's kernel runs the guest script in it
# The guests (qemu-boot.sh and its qemu) and the namespace go on every exit path.
cleanup() {
	local ino
	stop_background
	[ -e "/run/netns/$ns" ] || return 0
	ino=$(stat -L -c %i "/run/netns/$ns")
	ip netns del "$ns"
	# Its pins and the writer locks the CLI made in it.
	rm -rf "/sys/fs/bpf/xdp-pacer/netns-$ino" "/run/xdp-pacer/netns-$ino."*.lock
}
trap cleanup EXIT

ran=0
tally_kernel() { # label log rc
	guest_tally "$@"
	grep -E '^(FAIL|insns|chain-time|grace|replace) ' "$2" | sed "s/^/$1: /"
	grep -m1 'loaded and attached' "$2" | sed "s/^/$1: /"
	grep -E '^ok   - [a-z]+: all 32 variants loaded' "$2" | sed "s/^/$1: /"
	awk '/^[0-9]+ passed, [0-9]+ failed/ { l = $0 } END { print (l == "" ? "0 passed, 0 failed" : l) }' "$2" | sed "s/^/$1: /"
	ran=1
}

# The guests boot side by side (each is mostly one TCG thread), then are
# tallied in order.
declare -A logs pids
kernels=${QEMU_KERNELS:-6.1 6.12 5.10}
for series in $kernels; do # one at a time: the packages share one private apt state
	scripts/kernels.sh fetch "$series" >/dev/null 2>&1 || true # a failure: the boot says why
done
for series in $kernels; do
	logs[$series]=$(mktemp)
	mode="test"
	[ "$series" = 5.10 ] && mode=too-old # older than the minimum: load must refuse it
	# Debian's own kernels run libxdp's dispatcher: the chain with xdp-filter must work there;
	# and allow the generator's live frames.
	scripts/qemu-boot.sh "$series" tests/qemu_guest.sh "$mode" dispatcher live >"${logs[$series]}" 2>&1 &
	pids[$series]=$!
done
for series in $kernels; do
	log=${logs[$series]}
	wait "${pids[$series]}"
	rc=$?
	mode="test"
	[ "$series" = 5.10 ] && mode=too-old
	guest_rerun "Linux $series" "$log" "$rc" scripts/qemu-boot.sh "$series" tests/qemu_guest.sh "$mode" dispatcher live
	rc=$?
	if [ "$rc" -eq 77 ]; then
		echo "skipped Linux $series: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP: //')"
	else
		tally_kernel "Linux $series ($(sed -n 's/.*guest: Linux \([^,]*\),.*/\1/p' "$log" | head -1))" "$log" "$rc"
		grep -m1 'booting under TCG' "$log"
	fi
	rm -f "$log"
done

# This machine's kernel: the same script in a namespace of its own.
if ip netns add "$ns"; then
	log=$(mktemp)
	dir=$(mktemp -d)
	cp tests/qemu_configs "$dir/configs" && cp "$OBJ" "$dir/" && cp dist/xdp-pacer@.service.in "$dir/unit" &&
		cp "$BUILD"/replace_count.bpf.o "$BUILD"/replace_refused.bpf.o "$BUILD"/bench_pass.bpf.o "$dir/"
	nsenter --net="/run/netns/$ns" env PACER_DIR="$dir" IP="$(command -v ip)" \
		PATH="$PWD/$BUILD:$PWD/$BUILD/tests/tools:$PATH" sh tests/qemu_guest.sh >"$log" 2>&1
	rc=$?
	tally_kernel "Linux $(uname -r) (this machine)" "$log" "$rc"
	cleanup
	rm -rf "$dir" "$log"
else
	not_ok "cannot create a network namespace"
fi
if [ "$ran" -eq 0 ]; then
	echo "SKIP: no kernel could be booted here"
	exit 77
fi
finish
