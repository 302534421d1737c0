# The systemd guest's side of tests/integ_systemd.sh (busybox sh, run as a
# service by Debian 12's systemd, PID 1 of a guest that
# `QEMU_INIT=systemd scripts/qemu-boot.sh` boots): the units as shipped
# (dist/*.service.in, with what `make install` substitutes), under the real
# systemd, journald and udevd.
#   - xdp-pacer@v1 starts beside xdp-filter (libxdp's dispatcher), its
#     reload changes the limiter's live options and leaves xdp-filter the
#     same program; its restart, under traffic, puts a new limiter in the
#     old one's place (xdp-filter keeps its id and its place) and admits no
#     source twice within the interval, keeping a timed deny entry; its stop
#     detaches the limiter alone and keeps its maps, which the next start
#     resumes;
#   - xdp-pacer-events@v1, started before the limiter, is restarted by
#     systemd until the limiter is there, then puts drop events into the journal: a start line
#     and a stop line for a source that floods then stops, at most
#     --max-rate start lines a second with the rest in summary lines, and
#     the unit's stop closes what is open (reason "exit").
# Prints the closing "N passed, N failed" line.
IP=/sbin/ip # busybox's sh would run its own ip applet for a bare "ip"
PACER_DIR=${PACER_DIR:-/pacer}
. "${PACER_DIR:-/pacer}/lib.sh"
tmp=$(mktemp -d)

echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
$IP link add v0 type veth peer name v1 || { not_ok "cannot create veth"; done_; }
$IP link set v0 up && $IP link set v1 up
$IP link set lo up
mac=$($IP -o link show v1 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
bindir=$(dirname "$(command -v xdp-pacer)")

# The units as `make install` writes them.
for u in "xdp-pacer@.service:unit" "xdp-pacer-events@.service:events-unit"; do
	sed "s|@BINDIR@|$bindir|g; s|@SYSCONFDIR@|/etc|g" "$PACER_DIR/${u#*:}" >"/etc/systemd/system/${u%%:*}"
done
mkdir -p /etc/xdp-pacer /etc/systemd/system/xdp-pacer-events@v1.service.d
printf 'interval = 10s\npolicy = pace\n' >/etc/xdp-pacer/v1.conf
# The documented way to pass options: a drop-in's environment.  Every
# packet sampled (a guest under TCG sends few), a second's hold, 5 lines a second.
printf '[Service]\nEnvironment=XDP_PACER_EVENTS_ARGS="--sample-packets 1/1 --hold 1s --max-rate 5"\n' \
	>/etc/systemd/system/xdp-pacer-events@v1.service.d/test.conf
systemctl daemon-reload

# udev saw v1: the units' BindsTo= on its device can be met.
for _ in $(seq 50); do
	[ "$(systemctl show -p ActiveState --value sys-subsystem-net-devices-v1.device)" = active ] && break
	sleep 0.2
done
expect_eq "udev: v1's device unit" "$(systemctl show -p ActiveState --value sys-subsystem-net-devices-v1.device)" active

prog_id() { # name: the id of the program of that name on v1 (xdp-pacer status --json's chain)
	xdp-pacer status v1 --json 2>/dev/null | grep -o "\"name\":\"$1\",\"id\":[0-9]*" | grep -o '[0-9]*$'
}

# --- the events unit before the limiter: its process exits 1, and systemd
# restarts it every 5 s (Restart=on-failure) until the limiter is there ---
systemctl start xdp-pacer-events@v1 >/dev/null 2>&1
for _ in $(seq 50); do
	[ "$(systemctl show -p SubState --value xdp-pacer-events@v1)" = auto-restart ] && break
	sleep 0.2
done
expect_eq "events before the limiter: exits 1, systemd waits to restart it" \
	"$(systemctl show -p SubState --value xdp-pacer-events@v1)" auto-restart

# --- xdp-pacer@v1 beside xdp-filter ---
if xdp-filter load v1 >"$tmp/filt.out" 2>&1; then
	ok "xdp-filter loaded on v1"
else
	not_ok "xdp-filter load v1: $(cat "$tmp/filt.out")"
fi
if systemctl start xdp-pacer@v1 >"$tmp/start.out" 2>&1; then
	ok "systemctl start xdp-pacer@v1 beside xdp-filter"
else
	not_ok "systemctl start xdp-pacer@v1: $(cat "$tmp/start.out"; journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -5)"
fi
filt_id=$(prog_id xdpfilt_alw_all)
pacer_id=$(prog_id xdp_pacer)
if [ -n "$filt_id" ] && [ -n "$pacer_id" ]; then
	ok "status: xdp-filter (id $filt_id) and the limiter (id $pacer_id) in one dispatcher"
else
	not_ok "status: $(xdp-pacer status v1 2>&1 | tr '\n' ' ')"
fi
printf 'interval = 10s\npolicy = quiet\n' >/etc/xdp-pacer/v1.conf
if systemctl reload xdp-pacer@v1 >"$tmp/reload.out" 2>&1 && xdp-pacer status v1 | grep -q 'policy quiet'; then
	ok "systemctl reload xdp-pacer@v1 applied policy quiet"
else
	not_ok "systemctl reload: $(cat "$tmp/reload.out")"
fi
expect_eq "reload: xdp-filter is the same program" "$(prog_id xdpfilt_alw_all)" "$filt_id"
expect_eq "reload: the limiter is the same program" "$(prog_id xdp_pacer)" "$pacer_id"
printf 'interval = 10s\npolicy = pace\n' >/etc/xdp-pacer/v1.conf
systemctl reload xdp-pacer@v1 >/dev/null 2>&1

# --- drop events into the journal ---
for _ in $(seq 100); do # restarted, events switches the packet sampling on
	xdp-pacer status v1 | grep -q 'sampling: sources off, packets 1/1' && break
	sleep 0.2
done
expect_eq "the unit's events runs once the limiter is there (its drop-in's --sample-packets 1/1)" \
	"$(xdp-pacer status v1 | sed -n 's/^ *sampling: //p')" "sources off, packets 1/1"
restarts=$(systemctl show -p NRestarts --value xdp-pacer-events@v1)
if [ "${restarts:-0}" -ge 1 ] && [ "$(systemctl show -p ActiveState --value xdp-pacer-events@v1)" = active ]; then
	ok "... restarted by systemd ($restarts restarts), now active"
else
	not_ok "events unit: $restarts restarts, $(systemctl show -p ActiveState --value xdp-pacer-events@v1)"
fi
jlines() { journalctl -u xdp-pacer-events@v1 -o cat --no-pager 2>/dev/null | grep '^{'; }
# One source floods (200 frames at once: one passed, the rest dropped), then stops.
send_frames --iface v0 --dst-mac "$mac" --src-base 10.201.0.7 --dst 10.9.9.9 --per-source 200 >"$tmp/send.out" 2>&1 ||
	not_ok "send_frames from 10.201.0.7: $(cat "$tmp/send.out")"
for _ in $(seq 100); do # the hold (1 s) and the poll
	jlines | grep -q '"event":"stop".*"source":"10.201.0.7/32"' && break
	sleep 0.2
done
expect_eq "journal: one start line for 10.201.0.7/32" \
	"$(jlines | grep -c '"event":"start".*"source":"10.201.0.7/32"')" 1
expect_eq "journal: one stop line for it, after the hold (reason quiet)" \
	"$(jlines | grep -c '"event":"stop".*"source":"10.201.0.7/32".*"reason":"quiet"')" 1
drops=$(jlines | grep '"event":"stop".*"source":"10.201.0.7/32"' | grep -o '"sampled_drops":[0-9]*' | cut -d: -f2)
expect_eq "journal: the stop line counts its 199 drops" "$drops" 199
# 100 sources limited at once against --max-rate 5: at most 5 start lines a
# second, the rest counted in summary lines.
send_frames --iface v0 --dst-mac "$mac" --src-base 10.202.0.0 --dst 10.9.9.9 --sources 100 --per-source 4 >"$tmp/send.out" 2>&1 ||
	not_ok "send_frames from 100 sources: $(cat "$tmp/send.out")"
sleep 3
systemctl stop xdp-pacer-events@v1
jlines >"$tmp/j.json"
# Lines the cap refused, per kind, summed over the summary lines.
refused() { grep '"event":"suppressed"' "$tmp/j.json" | grep -o "\"$1\":[0-9]*" | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'; }
starts=$(grep '"event":"start"' "$tmp/j.json" | grep -c '"source":"10.202.')
stops=$(grep '"event":"stop"' "$tmp/j.json" | grep -c '"source":"10.202.')
if [ "$((starts + $(refused starts)))" = 100 ] && [ "$starts" -ge 1 ] && [ "$starts" -le 20 ]; then
	ok "journal: --max-rate 5: $starts start lines, $(refused starts) starts counted in summary lines (100 in all)"
else
	not_ok "journal: --max-rate 5: $starts start lines, $(refused starts) counted; $(grep -c . "$tmp/j.json") lines"
fi
# At most 5 lines (starts and stops) in any second, by the journal's own
# times of receipt: any 6 lines in a row span 0.9 s or more (0.1 s for the
# pipe to journald's delays).
journalctl -u xdp-pacer-events@v1 -o short-unix --no-pager 2>/dev/null |
	grep -E '"event":"(start|stop)"' | awk '{ print $1 }' >"$tmp/times"
tightest=$(awk '{ t[NR] = $1 } NR >= 6 { d = t[NR] - t[NR - 5]; if (min == "" || d < min) min = d }
	END { if (min == "") print "none"; else printf "%.3f\n", min }' "$tmp/times")
if [ "$tightest" = none ] || awk -v d="$tightest" 'BEGIN { exit !(d >= 0.9) }'; then
	ok "journal: at most 5 lines in any second (6 lines in a row span at least $tightest s; $(grep -c . "$tmp/times") lines)"
else
	not_ok "journal: 6 lines within $tightest s"
fi
# Each of the 100 stopped (after the hold, or at the unit's stop): said or counted.
expect_eq "journal: 100 stops, said ($stops) or counted in summary lines" "$((stops + $(refused stops)))" 100
expect_eq "the events unit stopped cleanly" "$(systemctl show -p ActiveState --value xdp-pacer-events@v1)" inactive
expect_eq "... and put the sampling back" "$(xdp-pacer status v1 | sed -n 's/^ *sampling: //p')" off

# --- a restart under traffic: in place, nothing lost, the neighbour untouched ---
stat_of() { xdp-pacer stats v1 --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
deny_left() { xdp-pacer deny list v1 --json | grep -o '"prefix":"10.209.0.0/24"[^}]*"expires_s":[0-9]*' | grep -o '[0-9]*$'; }
chain_at() { # name: its place in the chain (1-based), from status --json
	xdp-pacer status v1 --json | grep -o '"chain":\[.*\]' | grep -o '"name":"[^"]*"' | grep -n "\"$1\"" | cut -d: -f1
}
xdp-pacer deny add v1 10.209.0.0/24 --timeout 10m >/dev/null 2>&1
left0=$(deny_left)
filt_at=$(chain_at xdpfilt_alw_all) pacer_id=$(prog_id xdp_pacer)
passed0=$(stat_of passed)
# 50 sources, 500 frames a second for 4 s (each source a frame per 100 ms), the restart after 1 s.
taskset -c 0 xdp-pacer gen v0 --dist uniform --sources 50 --src-base 10.204.0.0 --dst 10.9.9.9 \
	--dst-mac "$mac" --pps 500 --duration 4s --json >"$tmp/gen.json" 2>"$tmp/gen.err" &
gen_pid=$!
sleep 1
if systemctl restart xdp-pacer@v1 >"$tmp/restart.out" 2>&1; then
	ok "systemctl restart xdp-pacer@v1 under traffic"
else
	not_ok "systemctl restart xdp-pacer@v1: $(cat "$tmp/restart.out"; journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -5)"
fi
wait "$gen_pid"
sleep 0.5
sent=$(grep -o '"sent":[0-9]*' "$tmp/gen.json" | cut -d: -f2)
new_id=$(prog_id xdp_pacer)
if [ -n "$new_id" ] && [ "$new_id" != "$pacer_id" ] &&
	journalctl -u xdp-pacer@v1 -o cat --no-pager | grep -q "replaced the limiter on v1"; then
	ok "restart: a new limiter (id $pacer_id, now $new_id) replaced the old one in place"
else
	not_ok "restart: limiter id $pacer_id, now '$new_id'; $(journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -4 | tr '\n' ' ')"
fi
expect_eq "restart: xdp-filter is the same program" "$(prog_id xdpfilt_alw_all)" "$filt_id"
expect_eq "restart: ... in the same place of the chain" "$(chain_at xdpfilt_alw_all)" "$filt_at"
if [ "${sent:-0}" -ge 1000 ] && [ "$(($(stat_of passed) - passed0))" = 50 ]; then
	ok "restart: 50 sources sent $sent frames across it, each passed once in the 10 s interval (50)"
else
	not_ok "restart: $sent frames sent, $(($(stat_of passed) - passed0)) passed (want 50): $(cat "$tmp/gen.err")"
fi
left1=$(deny_left)
if [ -n "$left0" ] && [ -n "$left1" ] && [ "$((left0 - left1))" -ge 0 ] && [ "$((left0 - left1))" -le 10 ]; then
	ok "restart: the timed deny entry kept its deadline ($left0 s left, now $left1 s)"
else
	not_ok "restart: the deny entry: $left0 s left before, '$left1' after"
fi

# --- the limiter's unit stops alone, and keeps its maps for the next start ---
stop_limiter() { # what the check says
	if systemctl stop xdp-pacer@v1 >"$tmp/stop.out" 2>&1 && [ -z "$(prog_id xdp_pacer)" ]; then
		ok "$1"
	else
		not_ok "$1: $(cat "$tmp/stop.out")"
	fi
}
stop_limiter "systemctl stop xdp-pacer@v1 detached the limiter"
if ls /sys/fs/bpf/xdp-pacer/netns-*/v1/meta >/dev/null 2>&1 &&
	journalctl -u xdp-pacer@v1 -o cat --no-pager | grep -q "kept in .*1 added list entries"; then
	ok "... and kept its maps, saying so"
else
	not_ok "stop: pins $(ls /sys/fs/bpf/xdp-pacer/netns-*/v1 2>&1 | tr '\n' ' '); $(journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -3 | tr '\n' ' ')"
fi
if systemctl start xdp-pacer@v1 >"$tmp/start2.out" 2>&1 && [ -n "$(deny_left)" ]; then
	ok "systemctl start resumes them: the deny entry is back ($(deny_left) s left)"
else
	not_ok "start after stop: $(cat "$tmp/start2.out"); deny list $(xdp-pacer deny list v1 2>&1 | tr '\n' ' ')"
fi
stop_limiter "systemctl stop xdp-pacer@v1 again"
xdp-filter status >"$tmp/filt.st" 2>&1
if grep -q 'v1 (native mode)' "$tmp/filt.st" && grep -q xdpfilt_alw_all "$tmp/filt.st"; then
	ok "... and left xdp-filter attached"
else
	not_ok "xdp-filter after the stop: $(tr '\n' ' ' <"$tmp/filt.st")"
fi
done_
