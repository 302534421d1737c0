# The qemu boot test's guest side (busybox sh, run as init's child by
# scripts/qemu-boot.sh; tests/integ_qemu.sh also runs it on this machine's
# kernel in a namespace of its own): on a veth pair, for every
# configuration in tests/qemu_configs, load the limiter, send crafted
# frames, check what was paced, unload; then attach the object with
# `ip link set dev X xdp obj`; one program replaced by another in place in
# libxdp's dispatcher (replace_tests).  Prints "insns CONFIG N" (the verifier's
# processed instructions) per configuration and the closing
# "N passed, N failed" line.
#   guest.sh [report|too-old] [dispatcher] [live]   report: only load and
#   print the instruction counts; too-old: a kernel older than the minimum,
#   where load must refuse in one line naming it and leave nothing attached;
#   dispatcher: libxdp's dispatcher must work here (the chain with
#   xdp-filter is tested; without it, only load's refusal beside it);
#   live: the generator's live-frames engine must work here (without it,
#   live may be refused, saying so)
# PACER_DIR holds configs, xdp_pacer.bpf.o, unit (the systemd unit's
# source, dist/xdp-pacer@.service.in) and the replace test's objects
# (replace_count, replace_refused, bench_pass) (default /pacer); xdp-pacer,
# send_frames, xdp_replace_check and xdp-filter come from PATH.
IP=${IP:-/sbin/ip} # busybox's sh would run its own ip applet for a bare "ip"
PACER_DIR=${PACER_DIR:-/pacer}
mode=${1:-test}
chain_need=${2:-}
gen_need=${3:-}
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
# From one CPU: veth receives on the sender's CPU, and per-CPU placement
# admits a source once per CPU, so a sender moved between the guest's two
# CPUs mid-send passed the first source twice ("3 of 9").
pace_check() { # name min-max passes of the first source
	local name=$1 lo=$((${2%-*} + 1)) hi=$((${2#*-} + 1)) passed dropped
	taskset -c 0 send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.1 --dst 10.9.9.9 --per-source 8 >/dev/null &&
		taskset -c 0 send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.2 --dst 10.9.9.9 >/dev/null ||
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

# Beside xdp-filter (xdp-tools) in libxdp's dispatcher: xdp-filter first on
# the veth pair, the limiter first on virtio-net in native mode (where the
# guest has it: scripts/qemu-boot.sh gives it two NICs on one qemu hub,
# eth0 sending to eth1; elsewhere the veth pair again).  Each acts in chain
# order, either unloads alone, the verbs find the limiter, and the unit's
# reload leaves the neighbour be.  Where libxdp attaches xdp-filter on its
# own (no dispatcher on this kernel), load must refuse, saying why.
#   $chain_need: "dispatcher" when this kernel must run libxdp's dispatcher.
# Counters are read once per check (snap_*): every CLI start is slow under TCG.
snap_filter() { xdp-filter status >"$tmp/filt.st" 2>/dev/null; }
filt_agg() { # XDP_PASS|XDP_DROP: xdp-filter's aggregate count of that verdict (snap_filter)
	awk -v a="$1" '$1 == a { print $2; exit }' "$tmp/filt.st"
}
filt_hits() { # address: the hit counter of xdp-filter's rule for it (snap_filter)
	awk -v a="$1" '$1 == a { print $3; exit }' "$tmp/filt.st"
}
snap_stats() { xdp-pacer stats "$1" --json >"$tmp/stats.json" 2>&1; }
sfield() { grep -o "\"$1\":[0-9]*" "$tmp/stats.json" | cut -d: -f2; }
attached_name() { $IP link show "${1:-v1}" | sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p'; }
send8() { # iface mac source...: 8 frames from each source at once
	local ifc=$1 m=$2 src
	shift 2
	for src in "$@"; do
		send_frames --iface "$ifc" --dst-mac "$m" --src-base "$src" --dst 10.9.9.9 --per-source 8 >/dev/null ||
			not_ok "send_frames from $src on $ifc failed"
	done
	sleep 0.3
}
expect_eq() { # what got want
	if [ "$2" = "$3" ]; then ok "$1: $2"; else not_ok "$1: expected $3, got '$2'"; fi
}
# The unit's ExecReload line, exactly as dist/xdp-pacer@.service.in states it,
# with what `make install` and systemd substitute (@BINDIR@, @SYSCONFDIR@, %i).
unit_reload() {
	local cmd
	cmd=$(sed -n 's/^ExecReload=//p' "$PACER_DIR/unit" |
		sed "s|@BINDIR@|$(dirname "$(command -v xdp-pacer)")|g; s|@SYSCONFDIR@|$tmp/etc|g; s|%i|v1|g")
	echo "running the unit's ExecReload (no systemd here): $cmd"
	# shellcheck disable=SC2086 # the unit's words, as systemd splits them
	$cmd >"$tmp/reload.out" 2>&1
}

# No dispatcher here: load beside xdp-filter must refuse, leaving it be.
chain_refused() {
	local name id_f rc
	name=$(attached_name)
	[ "$chain_need" = dispatcher ] &&
		not_ok "chain: libxdp attached xdp-filter without its dispatcher ($name) on a kernel that must run it"
	id_f=$($IP link show v1 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	xdp-pacer load v1 >"$tmp/load.out" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q "has XDP program id $id_f '$name' attached on its own, not through libxdp's dispatcher" "$tmp/load.out" &&
		grep -q "ip link set dev v1 xdp off" "$tmp/load.out"; then
		ok "chain: no dispatcher here: load beside a lone xdp-filter refuses (exit 1), saying why and what to do"
	else
		not_ok "chain: load beside a lone xdp-filter: exit $rc: $(cat "$tmp/load.out")"
	fi
	expect_eq "chain: the refusal leaves xdp-filter attached alone" "$($IP link show v1 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')" "$id_f"
	xdp-filter unload v1 >/dev/null 2>&1 || $IP link set dev v1 xdp off
}

# xdp-filter first (its priority 10), the limiter after it (20), on v1.
chain_filter_first() {
	local id_f id_f2 seen0 drop0 pass0 hits0 rc rec exp
	xdp-filter ip 10.9.0.1 --mode src >/dev/null || not_ok "chain: xdp-filter ip 10.9.0.1 failed"
	xdp-pacer load v1 --mode skb >"$tmp/load.out" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q "libxdp's dispatcher on v1 runs in native mode; the limiter can join it only in the same mode (--mode native)" "$tmp/load.out"; then
		ok "chain: load --mode skb beside a native dispatcher is refused (exit 1), naming the mode"
	else
		not_ok "chain: load --mode skb beside a native dispatcher: exit $rc: $(cat "$tmp/load.out")"
	fi
	if xdp-pacer load v1 >"$tmp/load.out" 2>&1; then
		ok "chain: load joins xdp-filter's dispatcher: $(grep -m1 'chain:' "$tmp/load.out" | sed 's/^ *//')"
	else
		not_ok "chain: load beside xdp-filter failed: $(grep -m1 '^xdp-pacer' "$tmp/load.out")"
		return 1
	fi
	xdp-pacer status v1 --json >"$tmp/st.json" 2>&1
	if grep -q '"attach":"dispatcher","dispatcher_id":[0-9]*,"priority":20,"chain_actions":\["XDP_PASS"\],"chain":\[{"name":"xdpfilt_alw_all","id":[0-9]*,"priority":10,"chain_actions":\["XDP_PASS"\],"self":false},{"name":"xdp_pacer","id":[0-9]*,"priority":20,"chain_actions":\["XDP_PASS"\],"self":true}\]' "$tmp/st.json"; then
		ok "chain: status --json lists xdp-filter (priority 10) then the limiter (20)"
	else
		not_ok "chain: status --json: $(cat "$tmp/st.json")"
	fi
	id_f=$(sed -n 's/.*"name":"xdpfilt_alw_all","id":\([0-9]*\).*/\1/p' "$tmp/st.json")
	xdp-pacer status v1 >"$tmp/st.txt" 2>&1
	if grep -q '1\. xdpfilt_alw_all (id [0-9]*, priority 10, on to the next on XDP_PASS)' "$tmp/st.txt" &&
		grep -q '2\. xdp_pacer (id [0-9]*, priority 20, on to the next on XDP_PASS)  <- this limiter' "$tmp/st.txt"; then
		ok "chain: status lists the neighbours in run order"
	else
		not_ok "chain: status: $(grep -A3 'chain:' "$tmp/st.txt")"
	fi
	xdp-pacer load v1 >"$tmp/load2.out" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q "already has xdp-pacer attached (program id [0-9]*, in libxdp's dispatcher); one limiter per interface" "$tmp/load2.out"; then
		ok "chain: a second limiter is refused (exit 1)"
	else
		not_ok "chain: a second load: exit $rc: $(cat "$tmp/load2.out")"
	fi
	snap_filter
	drop0=$(filt_agg XDP_DROP); pass0=$(filt_agg XDP_PASS)
	send8 v0 "$mac" 10.9.0.1 10.9.0.2 # .1 denied by xdp-filter; .2 passed by it, paced by the limiter
	snap_stats v1; snap_filter
	expect_eq "chain: filter first: the limiter sees only what xdp-filter passed" "$(sfield seen)" 8
	expect_eq "chain: filter first: the limiter passed one of them" "$(sfield passed)" 1
	expect_eq "chain: filter first: xdp-filter dropped the denied source's 8" "$(($(filt_agg XDP_DROP) - drop0))" 8
	expect_eq "chain: filter first: xdp-filter passed the other source's 8" "$(($(filt_agg XDP_PASS) - pass0))" 8
	# The verbs that find the limiter behind the dispatcher.
	if xdp-pacer query v1 10.9.0.2 >"$tmp/q.out" 2>&1 && xdp-pacer status --json | grep -q '"ifname":"v1"'; then
		ok "chain: query and status (all interfaces) find the limiter in the dispatcher"
	else
		not_ok "chain: query/status: $(cat "$tmp/q.out")"
	fi
	xdp-pacer record v1 -o "$tmp/rec" --sample-sources 1/1 --count 8 --duration 5s >"$tmp/rec.out" 2>&1 &
	rec=$!
	$IP link set lo up
	xdp-pacer exporter --listen 127.0.0.1:9477 >"$tmp/exp.out" 2>&1 &
	exp=$!
	sleep 0.5
	send8 v0 "$mac" 10.9.0.4
	if wait "$rec" && [ -s "$tmp/rec" ]; then
		ok "chain: record records the chained limiter's decisions"
	else
		not_ok "chain: record: $(cat "$tmp/rec.out")"
	fi
	if wget -qO- http://127.0.0.1:9477/metrics 2>/dev/null | grep -q 'xdp_pacer_.*{ifname="v1"'; then
		ok "chain: the exporter serves the chained limiter's metrics"
	else
		not_ok "chain: exporter: $(cat "$tmp/exp.out")"
	fi
	kill "$exp" 2>/dev/null; wait "$exp" 2>/dev/null
	# A program variant swapped in the dispatcher (design.md, Program variants):
	# deny add brings the lists' stage, in the limiter's slot beside the same
	# neighbour; flush takes it away again.
	if xdp-pacer deny add v1 10.9.0.5 >"$tmp/deny.out" 2>&1 && grep -q "swapped for id" "$tmp/deny.out"; then
		ok "chain: deny add swaps in the variant with the lists' stage"
	else
		not_ok "chain: deny add: $(cat "$tmp/deny.out")"
	fi
	xdp-pacer status v1 --json >"$tmp/st.json" 2>&1
	if grep -q '"chain":\[{"name":"xdpfilt_alw_all","id":'"$id_f"',"priority":10,"chain_actions":\["XDP_PASS"\],"self":false},{"name":"xdp_pacer","id":[0-9]*,"priority":20,"chain_actions":\["XDP_PASS"\],"self":true}\],"stages":\["lists"\]' "$tmp/st.json"; then
		ok "chain: after the swap, xdp-filter (the same program) then the limiter with the lists' stage"
	else
		not_ok "chain: after the swap: $(cat "$tmp/st.json")"
	fi
	snap_stats v1
	seen0=$(sfield seen) deny0=$(sfield deny_dropped)
	send8 v0 "$mac" 10.9.0.5
	snap_stats v1
	expect_eq "chain: the swapped limiter drops the denied source's 8, each seen once" \
		"$(($(sfield deny_dropped) - deny0)) $(($(sfield seen) - seen0))" "8 8"
	xdp-pacer deny flush v1 >/dev/null 2>&1
	xdp-pacer status v1 --json >"$tmp/st.json" 2>&1
	if grep -q '"self":true}\],"stages":\[\]' "$tmp/st.json"; then
		ok "chain: deny flush swaps the lists' stage out again"
	else
		not_ok "chain: after deny flush: $(cat "$tmp/st.json")"
	fi
	# The unit's reload: the limiter's live options change, xdp-filter stays.
	mkdir -p "$tmp/etc/xdp-pacer"
	printf 'policy = quiet\npriority = 20\n' >"$tmp/etc/xdp-pacer/v1.conf"
	if unit_reload && xdp-pacer status v1 >"$tmp/st.txt" 2>&1 && grep -q 'policy quiet' "$tmp/st.txt" &&
		! grep -q warning "$tmp/reload.out"; then
		ok "chain: the unit's ExecReload applied policy quiet"
	else
		not_ok "chain: the unit's ExecReload: $(cat "$tmp/reload.out")"
	fi
	printf 'policy = quiet\npriority = 30\n' >"$tmp/etc/xdp-pacer/v1.conf"
	if unit_reload && grep -q 'fixed at load, not applied by set: priority (unload' "$tmp/reload.out"; then
		ok "chain: a reload with another priority says it is fixed at load"
	else
		not_ok "chain: a reload with priority 30: $(cat "$tmp/reload.out")"
	fi
	id_f2=$(xdp-pacer status v1 --json | sed -n 's/.*"name":"xdpfilt_alw_all","id":\([0-9]*\).*/\1/p')
	expect_eq "chain: after the reloads xdp-filter is the same program" "$id_f2" "$id_f"
	snap_filter; snap_stats v1
	hits0=$(filt_hits 10.9.0.1); seen0=$(sfield seen)
	send8 v0 "$mac" 10.9.0.1
	snap_filter; snap_stats v1
	expect_eq "chain: after the reloads xdp-filter still denies" "$(($(filt_hits 10.9.0.1) - hits0))" 8
	expect_eq "chain: after the reloads the limiter still sees none of it" "$(sfield seen)" "$seen0"
	# Unload the limiter alone: xdp-filter stays attached and working.
	xdp-pacer unload v1 >"$tmp/unload.out" 2>&1 || not_ok "chain: unload beside xdp-filter: $(cat "$tmp/unload.out")"
	if grep -q "still attached to v1 in libxdp's dispatcher: xdpfilt_alw_all" "$tmp/unload.out" &&
		[ "$(attached_name)" = xdp_dispatcher ]; then
		ok "chain: unload leaves xdp-filter attached"
	else
		not_ok "chain: after unload: $(cat "$tmp/unload.out"); attached: $(attached_name)"
	fi
	hits0=$(filt_hits 10.9.0.1)
	send8 v0 "$mac" 10.9.0.1
	snap_filter
	expect_eq "chain: xdp-filter still denies after the limiter left" "$(($(filt_hits 10.9.0.1) - hits0))" 8
}

# The limiter first (--priority 5), xdp-filter after it, on IFACE (frames
# sent from SENDER to MAC); then xdp-filter unloads alone.
chain_limiter_first() { # label iface sender mac
	local label=$1 ifc=$2 snd=$3 m=$4 drop0 pass0 seen0 rc
	if ! xdp-pacer load "$ifc" --priority 5 >"$tmp/load.out" 2>&1; then
		not_ok "chain ($label): load --priority 5: $(grep -m1 '^xdp-pacer' "$tmp/load.out")"
		return
	fi
	if ! xdp-filter load "$ifc" >"$tmp/filt.out" 2>&1; then
		not_ok "chain ($label): xdp-filter load beside the limiter failed: $(tail -1 "$tmp/filt.out")"
		xdp-pacer unload "$ifc" >/dev/null 2>&1
		return
	fi
	xdp-filter ip 10.9.0.1 --mode src >/dev/null || not_ok "chain ($label): xdp-filter ip 10.9.0.1 failed"
	if xdp-pacer status "$ifc" --json | grep -q '"mode":"native".*"chain":\[{"name":"xdp_pacer","id":[0-9]*,"priority":5,[^]]*\],"self":true},{"name":"xdpfilt_alw_all"'; then
		ok "chain ($label): --priority 5 runs the limiter before xdp-filter, native mode"
	else
		not_ok "chain ($label): order with --priority 5: $(xdp-pacer status "$ifc" --json)"
	fi
	snap_filter
	drop0=$(filt_agg XDP_DROP); pass0=$(filt_agg XDP_PASS)
	# Each source: the limiter passes 1 and drops 7; xdp-filter drops .1's one, passes .2's.
	send8 "$snd" "$m" 10.9.0.1 10.9.0.2
	snap_stats "$ifc"; snap_filter
	expect_eq "chain ($label): limiter first: it sees every frame" "$(sfield seen)" 16
	expect_eq "chain ($label): limiter first: it drops 7 of each source" "$(sfield dropped_recent)" 14
	expect_eq "chain ($label): limiter first: xdp-filter never sees its drops (passed)" "$(($(filt_agg XDP_PASS) - pass0))" 1
	expect_eq "chain ($label): limiter first: xdp-filter never sees its drops (dropped)" "$(($(filt_agg XDP_DROP) - drop0))" 1
	# Unload xdp-filter alone: the limiter stays attached and pacing.
	xdp-filter unload "$ifc" >/dev/null 2>&1 || not_ok "chain ($label): xdp-filter unload beside the limiter failed"
	seen0=$(sfield seen)
	send8 "$snd" "$m" 10.9.0.3
	snap_stats "$ifc"
	if [ "$(($(sfield seen) - seen0))" = 8 ] && [ "$(attached_name "$ifc")" = xdp_dispatcher ]; then
		ok "chain ($label): the limiter stays attached and working once xdp-filter unloads"
	else
		not_ok "chain ($label): after xdp-filter unload: $(cat "$tmp/stats.json"); attached: $(attached_name "$ifc")"
	fi
	xdp-pacer unload "$ifc" >/dev/null 2>&1 || not_ok "chain ($label): last unload failed"
	expect_eq "chain ($label): nothing left attached" "$(attached_name "$ifc")" ""
}

chain_tests() {
	local vmac
	grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	if ! command -v xdp-filter >/dev/null; then
		not_ok "chain: no xdp-filter here (xdp-tools)"
		return
	fi
	if ! xdp-filter load v1 >"$tmp/filt.out" 2>&1; then
		not_ok "chain: xdp-filter load v1 failed: $(tail -1 "$tmp/filt.out")"
		return
	fi
	if [ "$(attached_name)" != xdp_dispatcher ]; then
		chain_refused
		return
	fi
	chain_filter_first
	xdp-pacer unload v1 >/dev/null 2>&1
	xdp-filter unload v1 >/dev/null 2>&1 || not_ok "chain: xdp-filter unload failed"
	if [ -e /sys/class/net/eth1 ]; then
		$IP link set eth0 up && $IP link set eth1 up
		vmac=$($IP -o link show eth1 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
		chain_limiter_first virtio-net eth1 eth0 "$vmac"
	else
		[ "$chain_need" = dispatcher ] && not_ok "chain: the guest has no virtio-net eth1"
		chain_limiter_first veth v1 v0 "$mac"
	fi
}

# One program swapped for another in libxdp's dispatcher, atomically
# (user/cli/xdp_replace.c, the mechanism of a replacing load):
# xdp_replace_check replaces A by B between xdp-filter (before) and a
# neighbour (after) in native mode with frames sent meanwhile, then A alone
# in a dispatcher in skb mode; its own checks print ok/FAIL lines, counted
# here.  Then libxdp's tools on what it built: xdp-filter's status and
# unload, libxdp's detach of B and of the neighbour.  Where libxdp has no
# dispatcher (this machine's kernel) there is nothing to test here: the
# program alone is tested on the host (tests/integ_replace.sh).
replace_check() { # label args...: xdp_replace_check's lines, counted
	local label=$1 rc
	shift
	xdp_replace_check "$@" >"$tmp/replace.out" 2>&1
	rc=$?
	sed -e "s/^ok   - /ok   - replace ($label): /" -e "s/^FAIL - /FAIL - replace ($label): /" "$tmp/replace.out"
	# The swap's numbers, for integ_qemu.sh's summary.
	grep -E '^ok   - (traffic|after: a new dispatcher)' "$tmp/replace.out" | sed "s/^ok   - /replace ($label) /"
	n_pass=$((n_pass + $(grep -c '^ok ' "$tmp/replace.out")))
	n_fail=$((n_fail + $(grep -c '^FAIL ' "$tmp/replace.out")))
	[ "$rc" = 0 ] || grep -q '^FAIL ' "$tmp/replace.out" ||
		not_ok "replace ($label): xdp_replace_check exited $rc: $(tail -1 "$tmp/replace.out")"
}
replace_tests() {
	local frames pass0 pass1
	frames="taskset -c 0 send_frames --iface v0 --dst-mac $mac --src-base 10.9.3.1 --dst 10.9.9.9 --sources 10 --rounds 100 --round-gap 0.005"
	set -- --old "$PACER_DIR/replace_count.bpf.o" --new "$PACER_DIR/replace_count.bpf.o" \
		--refused "$PACER_DIR/replace_refused.bpf.o" --expect dispatcher
	grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	if ! xdp-filter load v1 >"$tmp/filt.out" 2>&1; then
		not_ok "replace: xdp-filter load v1 failed: $(tail -1 "$tmp/filt.out")"
		return
	fi
	if [ "$(attached_name)" != xdp_dispatcher ]; then
		[ "$chain_need" = dispatcher ] &&
			not_ok "replace: libxdp attached xdp-filter without its dispatcher on a kernel that must run it"
		xdp-filter unload v1 >/dev/null 2>&1 || $IP link set dev v1 xdp off
		return
	fi
	snap_filter
	pass0=$(filt_agg XDP_PASS)
	replace_check "native, between xdp-filter and a neighbour" --iface v1 "$@" \
		--neighbour "$PACER_DIR/bench_pass.bpf.o" --keep --traffic "$frames"
	snap_filter
	pass1=$(filt_agg XDP_PASS)
	# xdp-filter runs before A in both dispatchers: it too judged each frame once.
	expect_eq "replace: xdp-filter, the neighbour before, passed each frame sent during the swap once" \
		"$((pass1 - pass0))" 1000
	if grep -q 'v1 (native mode)' "$tmp/filt.st"; then
		ok "replace: xdp-filter status reads the new dispatcher"
	else
		not_ok "replace: xdp-filter status after the replacement: $(cat "$tmp/filt.st")"
	fi
	if xdp-filter unload v1 >"$tmp/filt.out" 2>&1; then
		ok "replace: xdp-filter unloads from the new dispatcher"
	else
		not_ok "replace: xdp-filter unload after the replacement: $(tail -1 "$tmp/filt.out")"
	fi
	replace_check "libxdp detaches B" --iface v1 --detach replace_count
	replace_check "libxdp detaches the neighbour" --iface v1 --detach bench_pass
	expect_eq "replace: nothing left attached" "$(attached_name)" ""
	replace_check "skb, alone in the dispatcher" --iface v1 --skb "$@" --traffic "$frames"
	expect_eq "replace: nothing left attached (skb)" "$(attached_name)" ""
	expect_eq "replace: no libxdp pins left" "$(ls /sys/fs/bpf/xdp 2>/dev/null | grep -c dispatch-)" 0
}

# The generator's engines (xdp-pacer gen), IPv4 and IPv6: each sends as many
# frames as the limiter on v1 sees, and says so.  Where $gen_need is "live"
# (Debian's kernels allow BPF_PROG_TEST_RUN live frames) the live engine
# must work and auto must pick it; elsewhere live may be refused (exit 1,
# naming live frames) and auto then takes AF_XDP.
gen_tests() {
	local e fam j rc sent seen0 seen1 want_auto
	if ! xdp-pacer load v1 --placement shared --interval 60s >"$tmp/load.out" 2>&1; then
		not_ok "gen: load failed: $(grep -m1 '^xdp-pacer' "$tmp/load.out")"
		return
	fi
	want_auto=live
	for e in live xsk packet; do
		for fam in 4 6; do
			seen0=$(stat_of seen)
			j=$(taskset -c 0 xdp-pacer gen v0 --engine "$e" --family "$fam" --dist spoofed --count 3000 \
				--dst-mac "$mac" --json 2>"$tmp/gen.err")
			rc=$?
			if [ "$rc" != 0 ] && [ "$e" = live ] && [ "$gen_need" != live ] &&
				grep -q 'live frames' "$tmp/gen.err"; then
				ok "gen --engine live: this kernel refuses live frames, and gen says so (exit $rc): $(head -1 "$tmp/gen.err")"
				want_auto=xsk
				break
			fi
			if [ "$rc" != 0 ]; then
				not_ok "gen --engine $e --family $fam: exit $rc: $(head -1 "$tmp/gen.err")"
				continue
			fi
			sent=$(echo "$j" | sed -n 's/.*"sent":\([0-9]*\).*/\1/p')
			sleep 0.3
			seen1=$(stat_of seen)
			if [ "$sent" = 3000 ] && [ "$((seen1 - seen0))" = 3000 ] && echo "$j" | grep -q "\"engine\":\"$e\""; then
				ok "gen --engine $e --family $fam: sent 3000, the limiter saw 3000"
			else
				not_ok "gen --engine $e --family $fam: sent '$sent', the limiter saw $((seen1 - seen0)): $j"
			fi
		done
	done
	taskset -c 0 xdp-pacer gen v0 --count 10 --dst-mac "$mac" >/dev/null 2>"$tmp/gen.err"
	if grep -q "^xdp-pacer gen: engine $want_auto " "$tmp/gen.err"; then
		ok "gen --engine auto takes $want_auto here, and says so: $(head -1 "$tmp/gen.err")"
	else
		not_ok "gen --engine auto: expected engine $want_auto: $(cat "$tmp/gen.err")"
	fi
	xdp-pacer unload v1 >/dev/null 2>&1
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

# Every program variant (docs/design.md, Program variants) of every backend:
# XDP_PACER_VARIANT makes load carry the stages named.  Prints "vinsns
# BACKEND STAGES N" for scripts/verifier-report.sh; one check per backend.
stage_names="classes lists budget sampling observe"
for backend in sketch table dense; do
	v=0 loaded=0 most=0 refused=
	while [ "$v" -lt 32 ]; do
		names= b=1
		for s in $stage_names; do
			[ $((v & b)) -ne 0 ] && names="${names:+$names,}$s"
			b=$((b * 2))
		done
		if XDP_PACER_VARIANT="$names" xdp-pacer -v load v1 --backend "$backend" >"$tmp/load.out" 2>&1; then
			insns=$(sed -n 's/.*verifier processed \([0-9]*\) instructions.*/\1/p' "$tmp/load.out" | tail -1)
			echo "vinsns $backend ${names:-none} ${insns:-?}"
			loaded=$((loaded + 1))
			[ "${insns:-0}" -gt "$most" ] && most=$insns
			xdp-pacer unload v1 >/dev/null 2>&1
		else
			refused="$refused ${names:-none}"
			echo "vinsns $backend ${names:-none} refused"
			grep -m2 -E 'processed [0-9]+ insns|too large|^xdp-pacer' "$tmp/load.out"
		fi
		v=$((v + 1))
	done
	if [ "$loaded" -eq 32 ]; then
		ok "$backend: all 32 variants loaded (at most $most instructions processed)"
	else
		not_ok "$backend: $loaded of 32 variants loaded; refused:$refused"
	fi
done

if [ "$mode" = test ]; then
	# The grace period a class install waits for before it rewrites a bank.
	if grace_probe >"$tmp/grace.out" 2>&1; then
		echo "grace $(cat "$tmp/grace.out")"
		ok "live: a map-in-map update waits for a grace period"
	else
		not_ok "live: no grace period on a map-in-map update: $(cat "$tmp/grace.out")"
	fi
	# Live changes on this kernel: the writer lock in /run, a class install's grace
	# period (a map-in-map update), a timed deny entry the datapath lets expire.
	if xdp-pacer load v1 --mode skb --exempt 10.9.0.0/16 >"$tmp/load.out" 2>&1 &&
		xdp-pacer set v1 --class 'ntp: udp dport 123 drop' >"$tmp/set.out" 2>&1 &&
		xdp-pacer set v1 --class 'ntp: udp dport 123 pass' >>"$tmp/set.out" 2>&1; then
		ok "live: two class installs (each after a grace period)"
	else
		not_ok "live: load or set --class failed: $(grep -m1 '^xdp-pacer' "$tmp/load.out" "$tmp/set.out")"
	fi
	if xdp-pacer deny add v1 10.9.0.1 --timeout 2s >"$tmp/deny.out" 2>&1; then
		d0=$(stat_of deny_dropped)
		send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.1 --dst 10.9.9.9 --per-source 2 >/dev/null
		sleep 0.3
		d1=$(stat_of deny_dropped)
		sleep 2
		e0=$(stat_of exempt_passed)
		send_frames --iface v0 --dst-mac "$mac" --src-base 10.9.0.1 --dst 10.9.9.9 --per-source 2 >/dev/null
		sleep 0.3
		e1=$(stat_of exempt_passed)
		if [ "$((d1 - d0))" = 2 ] && [ "$((e1 - e0))" = 2 ]; then
			ok "live: deny add --timeout 2s drops, then expires to the exempt /16 below it"
		else
			not_ok "live: timed deny: dropped $d0 -> $d1 (want +2), then exempt $e0 -> $e1 (want +2)"
		fi
	else
		not_ok "live: deny add failed: $(head -1 "$tmp/deny.out")"
	fi
	xdp-pacer unload v1 >/dev/null 2>&1
	# Without the CLI: the object's defaults, attached by iproute2 (its maps unpinned).
	if $IP link set dev v1 xdp obj "$PACER_DIR/xdp_pacer.bpf.o" sec xdp 2>"$tmp/ip.out"; then
		ok "ip link set dev v1 xdp obj ... sec xdp: attached"
		$IP link set dev v1 xdp off || not_ok "ip link: cannot detach"
	else
		not_ok "ip link set dev v1 xdp obj ... sec xdp: $(grep -v '^$' "$tmp/ip.out" | tail -1)"
	fi
	gen_tests
	t0=$(cut -d. -f1 /proc/uptime)
	chain_tests
	echo "chain-time $(($(cut -d. -f1 /proc/uptime) - t0)) s (the tests beside xdp-filter)"
	replace_tests
fi
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
