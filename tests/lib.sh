# Shared helpers for the integration tests (sourced).  Each test owns its
# namespaces and veth pair (names carry the test's prefix and PID) and
# removes them on exit.
set -u
BUILD=${BUILD:-build}
CLI=${CLI:-$BUILD/xdp-pacer}
OBJ=${OBJ:-$BUILD/xdp_pacer.bpf.o}
# One sending CPU: veth receives on the sender's CPU, and per-CPU placement
# (which --placement auto picks for veth's single queue) admits a source
# once per CPU its frames land on, so a sender the scheduler moves mid-send
# (likelier on a loaded machine) would pass a source twice.
SEND="taskset -c 0 $BUILD/tests/tools/send_frames"
n_pass=0
n_fail=0

# Every process this script starts carries XDP_PACER_TEST_ID in its
# environment: tests/run.sh's token for the test, if run by it, extended by
# this script's own ("PID.TIME": unique even after the PID is reused), and
# keeps it through setsid and double forks.  stop_background stops those
# still running: background jobs and their children, readers, exporters,
# daemons, captures, guests.  Every test's EXIT trap calls it, first, so
# they stop on every exit path, failures included (teardown_pair and
# exporter_cleanup call it; a trap without them calls it itself).  What a
# script left anyway (killed with SIGKILL, a trap that did not run)
# tests/run.sh finds by the same token and fails the test for.
export XDP_PACER_TEST_ID="${XDP_PACER_TEST_ID:+$XDP_PACER_TEST_ID/}$$.${EPOCHREALTIME//[!0-9]/}"
own_procs() { # the PIDs of the processes this script started that still run
	local f pid stat self=" " p=$BASHPID
	# Not the shells asking: this one, its parents up to the script's.
	while [ "${p:-1}" -gt 1 ]; do
		self+="$p "
		[ "$p" = $$ ] && break
		read -r stat <"/proc/$p/stat" || break
		stat=${stat##*) }; stat=${stat#* }; p=${stat%% *} # the parent's PID
	done
	# grep without the token: its own /proc/PID/environ is among those it reads.
	for f in $(XDP_PACER_TEST_ID= grep -lszE "^XDP_PACER_TEST_ID=${XDP_PACER_TEST_ID//./\\.}(/.*)?\$" /proc/[0-9]*/environ); do
		pid=${f#/proc/}; pid=${pid%/environ}
		[[ $self == *" $pid "* ]] || echo "$pid"
	done
}
stop_background() { # TERM (and CONT) to each, 2 s to exit, then KILL
	local pids i
	pids=$(own_procs)
	[ -n "$pids" ] || return 0
	kill -TERM $pids 2>/dev/null; kill -CONT $pids 2>/dev/null
	for i in $(seq 40); do
		sleep 0.05
		pids=$(own_procs)
		[ -n "$pids" ] || return 0
	done
	kill -KILL $pids 2>/dev/null
	for i in $(seq 20); do [ -n "$(own_procs)" ] || return 0; sleep 0.05; done
}

ok() { n_pass=$((n_pass + 1)); echo "ok   - $*"; }
not_ok() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
finish() {
	echo "$n_pass passed, $n_fail failed"
	[ "$n_fail" -eq 0 ]
}

# Two namespaces joined by a veth pair: $NS_RX holds $IF_RX (limiter), $NS_TX holds $IF_TX.
# With QUEUES, each end gets that many queues (veth delivers on queue = sending CPU).
setup_pair() { # prefix [queues]
	local p=$1 q=() qp=()
	[ -n "${2:-}" ] && q=(numtxqueues "$2" numrxqueues "$2") && qp=("${q[@]}")
	NS_RX="$p-rx-$$"; NS_TX="$p-tx-$$"; IF_RX="${p}r$$"; IF_TX="${p}t$$"
	IF_RX=${IF_RX:0:15}; IF_TX=${IF_TX:0:15}
	ip netns add "$NS_RX" && ip netns add "$NS_TX" || return 1
	ip link add "$IF_RX" netns "$NS_RX" "${q[@]}" type veth peer name "$IF_TX" netns "$NS_TX" \
		"${qp[@]}" || return 1
	for ns in "$NS_RX" "$NS_TX"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_RX" link set "$IF_RX" up && ip -n "$NS_TX" link set "$IF_TX" up || return 1
	RX_MAC=$(ip -n "$NS_RX" -o link show "$IF_RX" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
}

# pins_of NS IFNAME: where load pins IFNAME's maps inside namespace NS.
pins_of() {
	echo "/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$1" 2>/dev/null)/$2"
}

# A reader of the sampled packets (top, events) on IF_RX, in the background:
# reader_start OUT VERB OPTIONS... starts it (READER_PID) and waits until it
# has switched the packet sampling on (1 if it never does); reader_stop SIG
# signals it and returns its exit status.  teardown_pair stops one left.
READER_PID=
reader_start() {
	local out=$1 verb=$2 i
	shift 2
	nsenter --net="/run/netns/$NS_RX" "$CLI" "$verb" "$IF_RX" "$@" >"$out" 2>"$out.err" &
	READER_PID=$!
	for i in $(seq 50); do
		[ "$(sampling)" != off ] && return 0
		sleep 0.1
	done
	return 1
}
reader_stop() {
	local rc
	kill -"$1" "$READER_PID"
	wait "$READER_PID"
	rc=$?
	READER_PID=
	return $rc
}

teardown_pair() { # the script's background processes, then its pair
	local ns ino
	stop_background
	[ -n "$READER_PID" ] && kill "$READER_PID" 2>/dev/null && wait "$READER_PID" 2>/dev/null
	if [ -n "${NS_RX:-}" ] && [ -e "/run/netns/$NS_RX" ]; then
		local pins; pins=$(pins_of "$NS_RX" "${IF_RX:-none}")
		rm -rf "$pins" 2>/dev/null
		rmdir "$(dirname "$pins")" 2>/dev/null
	fi
	for ns in "${NS_RX:-}" "${NS_TX:-}"; do
		[ -n "$ns" ] && [ -e "/run/netns/$ns" ] || continue
		# The writer locks the CLI made in this namespace (writer_lock.h: named
		# after its inode, which no other namespace has while this one lives).
		ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) &&
			rm -f "/run/xdp-pacer/netns-$ino."*.lock
		ip netns del "$ns" 2>/dev/null
	done
	true
}

# nsenter, not "ip netns exec": the latter also gives the command a private
# /sys, so pins it makes under /sys/fs/bpf would vanish with it.
rx() { nsenter --net="/run/netns/$NS_RX" "$@"; }
tx() { nsenter --net="/run/netns/$NS_TX" "$@"; }

# send SRC_BASE COUNT [extra send_frames args]: frames from COUNT sources toward the limiter
send() {
	local base=$1 n=$2; shift 2
	tx $SEND --iface "$IF_TX" --dst-mac "$RX_MAC" --src-base "$base" \
		--dst "${DST:-10.213.0.1}" --sources "$n" "$@"
}

# stat_of NAME: one counter from the CLI's JSON object of integers: the
# first (the global counters come before the classes' arrays, whose names
# can repeat them, "seen" among them).  No Python here: its start-up (a
# pyenv shim, 0.3 s) would age the sketch entries the queries after it
# look at.
stat_of() {
	rx "$CLI" stats "$IF_RX" --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2
}

# sampling: the limiter's sampling setting, from status's "sampling:" line.
sampling() { rx "$CLI" status "$IF_RX" | sed -n 's/^ *sampling: //p'; }

# settle N: until the limiter has run on N frames since it was loaded (its
# seen counter), at most 5 s.  Frames are handled in softirq after send
# returns, later on a loaded machine than any fixed sleep assumes.
settle() {
	local _
	for _ in $(seq 100); do
		[ "$(stat_of seen)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# Skip (exit 77) when the kernel cannot run XDP on veth at all.
require_xdp_veth() {
	if ! rx ip link set dev "$IF_RX" xdpgeneric obj "$OBJ" sec xdp 2>/tmp/xdp-probe.$$; then
		echo "SKIP: kernel cannot attach XDP to veth: $(head -1 /tmp/xdp-probe.$$)"
		rm -f /tmp/xdp-probe.$$
		teardown_pair
		exit 77
	fi
	rm -f /tmp/xdp-probe.$$
	rx ip link set dev "$IF_RX" xdpgeneric off
}

# An exporter a test runs in the background ($EXP_PID; integ_exporter.sh,
# integ_metrics.sh).  exporter_cleanup is their EXIT trap: the exporter and
# every other background process (stop_background, in teardown_pair: TERM,
# then KILL if it has not exited within 2 s; no wait without end for one
# that hangs), the pair and $WORK go.
EXP_PID=
exporter_cleanup() {
	teardown_pair
	rm -rf "$WORK"
}
stop_exporter() { # signal: the exporter's exit status
	kill -"$1" "$EXP_PID"
	wait "$EXP_PID"
	local rc=$?
	EXP_PID=
	return $rc
}

# table_rounds BACKEND WIDTH SHOWN NET: the two tables' common run through
# the CLI (integ_table.sh, integ_dense.sh), per placement and --on-full
# mode: load at WIDTH entries, which load and status print as SHOWN
# ("65536 entries", "100008 entries in 4167 lines"); 100 sources three
# times from 10.NET.x.y, query, IPv6 keys and their /64 and /48 masks
# (fd00:NET::), set, unload.  One sending CPU: veth receives on the
# sender's, and per-CPU placement admits a key once per CPU it lands on (a
# sender moved mid-run would pass one key twice).
table_rounds() {
	local backend=$1 width=$2 shown=$3 net=$4 base=0 placement mode out sent passed
	local SEND="taskset -c 0 $SEND"

	for placement in percpu shared; do
		for mode in drop evict-oldest; do
			base=$((base + 1))
			out=$(rx "$CLI" load "$IF_RX" --backend "$backend" --on-full "$mode" --placement "$placement" --width "$width" 2>&1)
			check "load --backend $backend --on-full $mode --placement $placement" test $? -eq 0
			check "load reports the $backend table" grep -q "$backend: $shown, on full: $mode" <<<"$out"
			check "status shows the $backend table ($placement, $mode)" \
				grep -q "$backend (fixed at load): $shown, on full: $mode, $placement" \
				<<<"$(rx "$CLI" status "$IF_RX")"
			sent=$(send "10.$net.$base.1" 100 --per-source 3)
			check "sender sent 300 frames" test "$sent" = 300
			settle 300
			check "passed == 100 (one per source)" test "$(stat_of passed)" = 100
			check "dropped_recent == 200" test "$(stat_of dropped_recent)" = 200
			check "table_full == 0 in a roomy table" test "$(stat_of table_full)" = 0
			check "query: a just-seen source would be dropped" \
				grep -q DROPPED <<<"$(rx "$CLI" query "$IF_RX" "10.$net.$base.7")"
			check "query: an unseen source would pass" \
				grep -q "would pass" <<<"$(rx "$CLI" query "$IF_RX" "10.$net.99.99")"
			# IPv6: 30 sources in one /64 are one key; 10 other /64s are 10 more.
			DST=fd00:$net::1 send "fd00:$net:$base:1::1" 30 >/dev/null
			DST=fd00:$net::1 send "fd00:$net:$base:100::" 10 --stride 18446744073709551616 >/dev/null
			settle 340
			check "query masks IPv6 to the /64 ($placement, $mode)" \
				grep -q "fd00:$net:$base:1::/64.*DROPPED" <<<"$(rx "$CLI" query "$IF_RX" "fd00:$net:$base:1::abcd")"
			passed=$(stat_of passed)
			check "ipv6: 11 keys pass ($placement, $mode): $passed passed in all, 111 expected" test "$passed" = 111
			rx "$CLI" set "$IF_RX" --prefix6 48 --prefix4 24 --interval 400ms --policy quiet >/dev/null
			check "set --prefix6 --prefix4 --interval --policy on the $backend table" test $? -eq 0
			check "status after set ($placement, $mode)" grep -q "live: interval 400.000 ms .* policy quiet" <<<"$(rx "$CLI" status "$IF_RX")"
			sleep 0.5
			DST=fd00:$net::1 send "fd00:$net:$base:100::" 10 --stride 18446744073709551616 >/dev/null
			settle 350
			check "prefix6 48: ten /64s of one /48 are one key ($placement, $mode)" \
				test "$(stat_of passed)" = 112
			rx "$CLI" unload "$IF_RX" >/dev/null
			check "unload" test $? -eq 0
		done
	done
}

# --- qemu guests (scripts/qemu-boot.sh): integ_qemu.sh and integ_systemd.sh ---
# A guest's console as plain text (its terminal escapes and CRs out).
console_plain() { sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | tr -d '\r'; }
# guest_rerun LABEL LOG RC CMD...: a guest that did not finish (no closing
# "N passed, N failed" line in LOG: a crash or hang of the emulated machine,
# not a failed check) is booted once more by CMD, alone, into LOG; what its
# console last said is printed either way, so a second failure, or a first
# one the second boot hid, can be read.  Returns the exit status that
# stands (RC, or the second boot's).
guest_rerun() {
	local label=$1 log=$2 rc=$3
	shift 3
	if [ "$rc" -eq 77 ] || grep -qE '^[0-9]+ passed, [0-9]+ failed' "$log"; then
		return "$rc"
	fi
	echo "$label: the guest did not finish (exit $rc); its console's last lines:"
	tail -15 "$log" | console_plain | sed 's/^/  | /'
	echo "$label: booting it once more"
	"$@" >"$log" 2>&1
}
# systemd_guest LABEL SCRIPT [ARGS...]: Debian 12's SYSTEMD_KERNEL (6.1)
# under qemu with Debian 12's systemd as its init, running SCRIPT as a
# service (QEMU_DPKG and QEMU_FILES, exported, reach scripts/qemu-boot.sh),
# booted once more if it did not finish; its checks are printed with LABEL
# and tallied.  Exits 77 (skip), saying why, when no guest can be booted here.
systemd_guest() {
	local label=$1 log rc series=${SYSTEMD_KERNEL:-6.1}
	shift
	log=$(mktemp)
	QEMU_INIT=systemd scripts/qemu-boot.sh "$series" "$@" >"$log" 2>&1
	rc=$?
	guest_rerun "Linux $series, $label" "$log" "$rc" env QEMU_INIT=systemd scripts/qemu-boot.sh "$series" "$@"
	rc=$?
	if [ "$rc" -eq 77 ]; then
		grep -m1 '^SKIP' "$log"
		rm -f "$log"
		exit 77
	fi
	tr -d '\r' <"$log" | grep -E '^(ok|FAIL) ' | sed "s/^/Linux $series, $label: /"
	guest_tally "Linux $series, $label" "$log" "$rc"
	rm -f "$log"
}
# guest_tally LABEL LOG RC: the guest's closing counts added to this
# script's; a guest that exited non-zero without a failed check is one.
guest_tally() {
	local p f
	read -r p f < <(awk '/^[0-9]+ passed, [0-9]+ failed/ { p = $1; f = $3 } END { print p + 0, f + 0 }' "$2")
	n_pass=$((n_pass + p)); n_fail=$((n_fail + f))
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then
		not_ok "$1: the guest did not finish (exit $3): $(tail -8 "$2" | console_plain | tr '\n' ' ')"
	fi
}
