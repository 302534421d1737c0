# The qemu boot test's guest side (busybox sh, run as init's child by
# scripts/qemu-boot.sh; tests/integ_qemu.sh also runs it on this machine's
# kernel in a namespace of its own): on a veth pair, for every
# configuration in tests/qemu_configs, load the limiter, send crafted
# frames, check what was paced, unload; then attach the object with
# `ip link set dev X xdp obj`.  Prints "insns CONFIG N" (the verifier's
# processed instructions) per configuration and the closing
# "N passed, N failed" line.
#   guest.sh [report|too-old]   report: only load and print the instruction
#   counts; too-old: a kernel older than the minimum, where load must refuse
#   in one line naming it and leave nothing attached
# PACER_DIR holds configs and xdp_pacer.bpf.o (default /pacer); xdp-pacer
# and send_frames come from PATH.
IP=${IP:-/sbin/ip} # busybox's sh would run its own ip applet for a bare "ip"
PACER_DIR=${PACER_DIR:-/pacer}
mode=${1:-test}
n_pass=0
n_fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { n_pass=$((n_pass + 1)); echo "ok   - $*"; }
not_ok() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }

# No IPv6 on the pair: the kernel's own router solicitations would be counted.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
$IP link add v0 type veth peer name v1 || { echo "FAIL - cannot create veth"; echo "0 passed, 1 failed"; exit 1; }
$IP link set v0 up && $IP link set v1 up
mac=$($IP -o link show v1 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

stat_of() { # counter name
	xdp-pacer stats v1 --json | grep -o "\"$1\":[0-9]*" | cut -d: -f2
}

# One source sends 8 frames at once: pacing admits its burst (1, or up to N
# with --rate N/T) and drops the rest as recent; a second source passes too.
pace_check() { # name min-max passes of the first source
	local name=$1 lo=$((${2%-*} + 1)) hi=$((${2#*-} + 1)) passed dropped
	send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.1 --dst 10.9.9.9 --per-source 8 >/dev/null &&
		send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.2 --dst 10.9.9.9 >/dev/null ||
		{ not_ok "$name: send_frames failed"; return; }
	sleep 0.2
	passed=$(stat_of passed); dropped=$(stat_of dropped_recent); observed=$(stat_of would_drop_recent)
	# An observe configuration passes what it would drop, counted would_drop_recent instead.
	case $name in
	*observe*) unmoved=${dropped:-0} moved=${observed:-0} how="observed (would drop)" ;;
	*) unmoved=${observed:-0} moved=${dropped:-0} how="dropped as recent" ;;
	esac
	if [ "${passed:-0}" -ge "$lo" ] && [ "${passed:-0}" -le "$hi" ] &&
		[ "$((passed + moved))" = 9 ] && [ "$unmoved" = 0 ]; then
		ok "$name: paced ($passed passed, $moved $how)"
	else
		not_ok "$name: expected $lo-$hi of 9 passed, the rest $how; got passed '$passed', dropped_recent '$dropped', would_drop_recent '$observed'"
	fi
}

if [ "$mode" = too-old ]; then
	xdp-pacer load v1 >"$tmp/load.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$(grep -c . "$tmp/load.out")" = 1 ] &&
		grep -q 'is too old: xdp-pacer needs Linux 5.15 or later; it lacks' "$tmp/load.out"; then
		ok "load refuses this kernel in one line (exit $rc): $(cat "$tmp/load.out")"
	else
		not_ok "load on a too old kernel: exit $rc, said: $(cat "$tmp/load.out")"
	fi
	left=
	$IP link show v1 | grep -q xdp && left="a program on v1"
	[ -n "$(ls -A /sys/fs/bpf/xdp-pacer 2>/dev/null)" ] && left="$left pins"
	if [ -n "$left" ]; then
		not_ok "load on a too old kernel left $left behind"
	else
		ok "load on a too old kernel left nothing attached or pinned"
	fi
	echo "$n_pass passed, $n_fail failed"
	[ "$n_fail" -eq 0 ]
	exit
fi

while read -r name burst opts; do
	case "$name" in '' | \#*) continue ;; esac
	set_opts=
	case "$opts" in *";"*) set_opts=${opts#*; set }; opts=${opts%%;*} ;; esac
	# shellcheck disable=SC2086 # opts are words
	if ! xdp-pacer -v load v1 $opts >"$tmp/load.out" 2>&1; then
		not_ok "$name: load failed: $(grep -m1 '^xdp-pacer:' "$tmp/load.out")"
		grep -m3 -E 'processed [0-9]+ insns|too large|^xdp-pacer' "$tmp/load.out"
		continue
	fi
	insns=$(sed -n 's/.*verifier processed \([0-9]*\) instructions.*/\1/p' "$tmp/load.out" | tail -1)
	echo "insns $name ${insns:-?}"
	if [ "$mode" = test ]; then
		ok "$name: loaded and attached ($opts) as $(sed -n 's/.* mode as \(.*\), program id.*/\1/p' "$tmp/load.out")"
		# shellcheck disable=SC2086 # set_opts are words
		if [ -n "$set_opts" ] && ! xdp-pacer set v1 $set_opts >"$tmp/set.out" 2>&1; then
			not_ok "$name: set $set_opts failed: $(head -1 "$tmp/set.out")"
		fi
		pace_check "$name" "$burst"
		case "$set_opts" in *"--sample-packets 1/1"*)
			recorded=$(stat_of recorded)
			if [ "$recorded" = 9 ]; then
				ok "$name: every packet recorded ($recorded)"
			else
				not_ok "$name: expected 9 packets recorded, got '$recorded'"
			fi ;;
		esac
	fi
	xdp-pacer unload v1 >"$tmp/unload.out" 2>&1 || not_ok "$name: unload failed: $(head -1 "$tmp/unload.out")"
done <"$PACER_DIR/configs"

if [ "$mode" = test ]; then
	# Without the CLI: the object's defaults, attached by iproute2 (its maps unpinned).
	if $IP link set dev v1 xdp obj "$PACER_DIR/xdp_pacer.bpf.o" sec xdp 2>"$tmp/ip.out"; then
		ok "ip link set dev v1 xdp obj ... sec xdp: attached"
		$IP link set dev v1 xdp off || not_ok "ip link: cannot detach"
	else
		not_ok "ip link set dev v1 xdp obj ... sec xdp: $(grep -v '^$' "$tmp/ip.out" | tail -1)"
	fi
fi
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
