#!/usr/bin/env bash
# Integration: CrowdSec and fail2ban feeding the deny list, for real, with
# Debian's packages (scripts/deps.sh installs them) and the files `make
# install` ships (dist/).  In the receiver's namespace of a veth pair this
# test creates, with its own configuration, database, logs and sockets
# under $WORK (the system's crowdsec and fail2ban are not touched):
#   - crowdsec-decision by hand: bad arguments, a captcha decision, two
#     interfaces of which one has no limiter, a deletion of nothing; on an
#     interface without a limiter it retries for XDP_PACER_RETRY seconds,
#     then fails saying so, applies the decision once a limiter is loaded
#     within that time, and never retries a bad prefix;
#   - crowdsec (local API and log processing, with the file acquisition
#     docs/operating.md gives for hosts without journald) and
#     crowdsec-custom-bouncer with the shipped settings: `cscli decisions
#     add` drops the address's packets within seconds, `cscli decisions
#     delete` passes them again; a range and an IPv6 address too; a captcha
#     decision is not a ban; ssh brute force in a log crowdsec reads bans
#     its source;
#   - fail2ban-server with a jail using the shipped action.d/xdp-pacer.conf:
#     `fail2ban-client set JAIL banip` drops (IPv4 and IPv6) with the ban
#     time as timeout, `unbanip` passes, failures in its log ban, bantime -1
#     gives an entry without timeout; the action without an interface fails
#     a ban naming the parameter;
#   - the limiter restarted (unloaded, loaded again): a decision and a ban
#     made meanwhile wait for it and are applied once it is back; a jail
#     whose action's retry (1 s) runs out fails its ban, saying so;
#   - a 5 s decision and a 5 s ban end by themselves with the bouncer
#     stopped and fail2ban frozen; stopping fail2ban lifts its bans.
# Every daemon, file and the veth pairs go on any exit.  20 to 40 s on the
# 2-core VM, by its load (load averages of 13 to 23 while it was written).
# run.sh: background (daemons that mostly wait; its time limits are seconds)
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpf-feeds.XXXXXX)
DAEMONS=() # PIDs this test started
cleanup() {
	local p
	for p in "${DAEMONS[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	for p in "${DAEMONS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	# The writers' lock files of this namespace (xdp-pacer leaves them).
	[ -n "${NS_RX:-}" ] && [ -e "/run/netns/$NS_RX" ] &&
		rm -f "/run/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$NS_RX").$IF_RX.lock" \
			"/run/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$NS_RX").nosuch0.lock" \
			"/run/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$NS_RX").xpfz0.lock"
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT
started=$SECONDS

for tool in crowdsec cscli crowdsec-custom-bouncer fail2ban-server fail2ban-client; do
	command -v "$tool" >/dev/null || { echo "FAIL - $tool is not installed: run sudo scripts/deps.sh"; exit 1; }
done

# The files as `make install` ships them, naming this build's CLI.
make -s install PREFIX="$WORK/usr" SYSCONFDIR="$WORK/etc" >/dev/null || { echo "FAIL - make install"; exit 1; }
DECISION=$WORK/usr/libexec/xdp-pacer/crowdsec-decision
ACTION=$WORK/etc/fail2ban/action.d/xdp-pacer.conf
XP=$WORK/usr/bin/xdp-pacer

setup_pair xpf || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --interval 10ms >/dev/null
check "limiter loaded on $IF_RX" test $? -eq 0

# One frame from ADDR: is it dropped by the deny list, or does it pass?
# (The probes are 100 ms apart or more, the interval 10 ms: pacing never
# drops them.)  PROBE is "passed deny_dropped", the counters' increase.
counters() {
	local js
	js=$(rx "$CLI" stats "$IF_RX" --json)
	echo "$(grep -o '"passed":[0-9]*' <<<"$js" | cut -d: -f2) $(grep -o '"deny_dropped":[0-9]*' <<<"$js" | cut -d: -f2)"
}
probe() {
	local before after dst=10.213.0.1
	[[ $1 == *:* ]] && dst=2001:db8:213::1
	before=$(counters)
	DST=$dst send "$1" 1 >/dev/null
	after=$(counters)
	PROBE=$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x); split(a, y); print y[1] - x[1], y[2] - x[2] }')
}
denied_now() { probe "$1"; [ "$PROBE" = "0 1" ]; }
passes_now() { probe "$1"; [ "$PROBE" = "1 0" ]; }
# wait_for SECONDS COMMAND...: poll every 100 ms; WAITED says how long it took.
wait_for() {
	local limit=$1 t0=$EPOCHREALTIME; shift
	while :; do
		if "$@"; then
			WAITED=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
			return 0
		fi
		awk -v a="$t0" -v b="$EPOCHREALTIME" -v l="$limit" 'BEGIN { exit !(b - a > l) }' && break
		sleep 0.1
	done
	WAITED=">$limit"
	return 1
}
# start_daemon NAME COMMAND...: in the receiver's namespace, in the
# background; $! is the daemon itself (nsenter execs it), which the EXIT
# trap stops.  Its output goes to $WORK/NAME.out.
start_daemon() {
	local name=$1; shift
	nsenter --net="/run/netns/$NS_RX" "$@" >"$WORK/$name.out" 2>&1 &
	DAEMONS+=($!)
}
# entry ADDR: ADDR's entry in `deny list --json` ({"prefix":...}), or nothing.
entry() {
	local len=32
	[[ $1 == *:* ]] && len=128
	rx "$XP" deny list "$IF_RX" --json | grep -o "{\"prefix\":\"$1/$len\"[^}]*}"
}
# timeout_of ADDR: the timeout its entry was given, in seconds.
timeout_of() { entry "$1" | sed -n 's/.*"timeout_s":\([0-9]*\).*/\1/p'; }
no_entry() { [ -z "$(entry "$1")" ]; }

# ============ crowdsec-decision by hand (the bouncer's calls) ============
decide() { # expected-exit description args...: run with the interfaces in $IFS_ENV
	local want=$1 d=$2 rc; shift 2
	XDP_PACER_INTERFACES=$IFS_ENV rx "$DECISION" "$@" >"$WORK/out" 2>&1
	rc=$?
	check "crowdsec-decision $d: exit $want" test $rc -eq "$want" || cat "$WORK/out"
}
IFS_ENV=
decide 2 "without XDP_PACER_INTERFACES" add 192.0.2.1 30 r '{}'
check "... says what is missing" grep -q "XDP_PACER_INTERFACES is not set" "$WORK/out"
IFS_ENV=$IF_RX
decide 2 "with a bad duration" add 192.0.2.1 30s r '{}'
check "... names it" grep -q "invalid duration '30s'" "$WORK/out"
decide 2 "with a value like an option" add --help 30 r '{}'
check "... names it" grep -q "invalid value '--help'" "$WORK/out"
decide 2 "with an unknown action" ban 192.0.2.1 30 r '{}'
decide 0 "--help" --help
decide 0 "add of a captcha decision (not a ban)" add 192.0.2.2 30 r '{"duration":"30s","type":"captcha","value":"192.0.2.2"}'
check "... says it is not applied, and adds nothing" bash -c "grep -q \"type 'captcha' is not a ban\" '$WORK/out' && ! grep -q '192.0.2.2/' <<<\"\$(nsenter --net=/run/netns/$NS_RX $XP deny list $IF_RX)\""
IFS_ENV="$IF_RX,nosuch0"
decide 1 "add on two interfaces, one without a limiter" add 192.0.2.3 40 r '{"type":"ban"}'
t=$(timeout_of 192.0.2.3)
check "... still adds it where the limiter is, for the 40 s rounded up (${t:-none} s)" test "$t" = 41
IFS_ENV=$IF_RX
decide 0 "del of it" del 192.0.2.3 0 r '{"type":"ban"}'
check "... gone from the list" no_entry 192.0.2.3
decide 0 "del of an entry not there (it ended already)" del 192.0.2.3 0 r '{"type":"ban"}'

# --- an interface without a limiter (as while xdp-pacer restarts): retried, for a bound ---
# A second veth in the receiver's namespace; the limiter is loaded on it only for a moment.
ALT=xpfz0
rx ip link add $ALT type veth peer name xpfz1 && rx ip link set $ALT up && rx ip link set xpfz1 up
check "a second interface, $ALT, without a limiter" test $? -eq 0
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
IFS_ENV=$ALT
t0=$EPOCHREALTIME
XDP_PACER_RETRY=1 decide 1 "add on it with XDP_PACER_RETRY=1" add 192.0.2.4 30 r '{"type":"ban"}'
took=$(since "$t0")
check "... gave up after its second of retries ($took s)" awk -v t="$took" 'BEGIN { exit !(t >= 1 && t < 8) }'
check "... saying so, after xdp-pacer's own message" \
	bash -c "grep -q 'no XDP program is attached to $ALT' '$WORK/out' && grep -qx 'crowdsec-decision: add 192.0.2.4: no limiter came back on $ALT within 1 s (XDP_PACER_RETRY): not applied there' '$WORK/out'" ||
	cat "$WORK/out"
t0=$EPOCHREALTIME
decide 1 "a bad prefix on it (XDP_PACER_RETRY unset: 30 s)" add 192.0.2.300 30 r '{"type":"ban"}'
took=$(since "$t0")
check "... is not retried: xdp-pacer's refusal at once ($took s)" \
	bash -c "grep -q \"invalid value '192.0.2.300'\" '$WORK/out' && awk -v t=$took 'BEGIN { exit !(t < 5) }'"
XDP_PACER_RETRY=soon decide 2 "with XDP_PACER_RETRY=soon" add 192.0.2.4 30 r '{"type":"ban"}'
check "... names it" grep -q "invalid XDP_PACER_RETRY 'soon'" "$WORK/out"
XDP_PACER_INTERFACES=$ALT nsenter --net="/run/netns/$NS_RX" "$DECISION" add 192.0.2.5 60 r '{"type":"ban"}' \
	>"$WORK/late.out" 2>&1 &
late=$!
sleep 1.5
check "a decision on $ALT waits for a limiter there (XDP_PACER_RETRY unset: 30 s)" kill -0 $late
rx "$CLI" load $ALT --interval 10ms >/dev/null
check "... the limiter loaded on $ALT" test $? -eq 0
wait $late
rc=$?
check "... then the decision is applied: exit 0" test $rc -eq 0 || cat "$WORK/late.out"
e=$(rx "$XP" deny list $ALT --json | grep -o '{"prefix":"192.0.2.5/32"[^}]*}')
t=$(sed -n 's/.*"timeout_s":\([0-9]*\).*/\1/p' <<<"$e")
check "... its timeout what is left of the 60 s rounded up, the wait taken off (${t:-none} s)" \
	test -n "$t" -a "${t:-99}" -le 61 -a "${t:-0}" -ge 50
rx "$CLI" unload $ALT >/dev/null
check "the limiter unloaded from $ALT again" test $? -eq 0
IFS_ENV=$IF_RX

# ====================== CrowdSec ======================
CS=$WORK/crowdsec
mkdir -p "$CS/log" "$CS/data"
: >"$CS/auth.log"
# The package's hub, patterns, parsers and scenarios (read only); the rest here.
cat >"$CS/config.yaml" <<EOF
common:
  daemonize: false
  log_media: file
  log_level: info
  log_dir: $CS/log/
config_paths:
  config_dir: /etc/crowdsec/
  data_dir: /var/lib/crowdsec/data/
  simulation_path: /etc/crowdsec/simulation.yaml
  hub_dir: /var/lib/crowdsec/hub/
  index_path: /var/lib/crowdsec/hub/.index.json
  notification_dir: /etc/crowdsec/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
crowdsec_service:
  acquisition_path: $CS/acquis.yaml
  parser_routines: 1
cscli:
  output: human
db_config:
  log_level: info
  type: sqlite
  db_path: $CS/data/crowdsec.db
  use_wal: false
api:
  client:
    credentials_path: $CS/local_api_credentials.yaml
  server:
    log_level: info
    listen_uri: 127.0.0.1:8080
    profiles_path: /etc/crowdsec/profiles.yaml
    trusted_ips:
      - 127.0.0.1
prometheus:
  enabled: false
EOF
# The acquisition docs/operating.md gives for hosts without journald (file sources), with
# this test's own auth.log; its nginx logs do not exist here (crowdsec only warns of them).
awk '/^<!-- tests\/integ_feeds.sh runs crowdsec with this acquisition/ { on = 1; next }
     on && /^```yaml$/ { block = 1; next }
     block && /^```$/ { exit }
     block' "$(dirname "$0")/../docs/operating.md" |
	sed "s|/var/log/auth.log|$CS/auth.log|; s|/var/log/nginx/|$CS/nginx/|" >"$CS/acquis.yaml"
check "docs/operating.md's acquisition without journald, reading this test's auth.log" \
	bash -c "grep -qx '  - $CS/auth.log' '$CS/acquis.yaml' && ! grep -q journalctl '$CS/acquis.yaml'"
cscli() { rx cscli -c "$CS/config.yaml" "$@"; } # rx runs the program, not this function

cscli machines add xdp-pacer-test --auto -f "$CS/local_api_credentials.yaml" >/dev/null 2>"$CS/err"
check "cscli machines add (this test's database)" test $? -eq 0 || cat "$CS/err"
KEY=$(cscli -o raw bouncers add xdp-pacer-test 2>"$CS/err")
check "cscli bouncers add gives an API key" test -n "$KEY" || cat "$CS/err"

start_daemon crowdsec crowdsec -c "$CS/config.yaml"
lapi_up() { rx curl -s -m 1 -o /dev/null -w '%{http_code}' -H "X-Api-Key: $KEY" http://127.0.0.1:8080/v1/decisions | grep -q 200; }
wait_for 20 lapi_up
check "crowdsec's local API answers (after $WAITED s)" test "${WAITED:0:1}" != ">" || cat "$WORK/crowdsec.out" "$CS/log/crowdsec.log"

# The bouncer: this test's settings, then the shipped override (.local) naming crowdsec-decision.
cat >"$CS/bouncer.yaml" <<EOF
bin_path: /bin/false
piddir: $CS/
update_frequency: 250ms
daemonize: false
log_mode: file
log_dir: $CS/log/
log_level: info
api_url: http://127.0.0.1:8080/
api_key: $KEY
prometheus:
  enabled: false
EOF
cp "$WORK/usr/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local" "$CS/bouncer.yaml.local"
check "the shipped override names the installed crowdsec-decision" grep -qx "bin_path: $DECISION" "$CS/bouncer.yaml.local"
XDP_PACER_INTERFACES=$IF_RX start_daemon bouncer crowdsec-custom-bouncer -c "$CS/bouncer.yaml"
BOUNCER=$!

A=192.0.2.77
check "before any decision $A passes" passes_now $A
cscli decisions add --ip $A --duration 30s >/dev/null 2>"$CS/err"
check "cscli decisions add --ip $A --duration 30s" test $? -eq 0 || cat "$CS/err"
wait_for 10 denied_now $A
check "... drops $A's packets (within $WAITED s)" test "${WAITED:0:1}" != ">"
t=$(timeout_of $A)
check "... its entry's timeout is what is left of the 30 s, rounded up (${t:-none} s)" test -n "$t" -a "${t:-99}" -le 31 -a "${t:-0}" -ge 25
cscli decisions delete --ip $A >/dev/null 2>"$CS/err"
check "cscli decisions delete --ip $A" test $? -eq 0 || cat "$CS/err"
wait_for 10 passes_now $A
check "... passes $A again (within $WAITED s)" test "${WAITED:0:1}" != ">"
check "... and its entry is gone" no_entry $A

# A captcha decision is not a ban; a range and an IPv6 address are.
C=192.0.2.88
cscli decisions add --ip $C --type captcha --duration 30s >/dev/null 2>&1
cscli decisions add --range 198.51.100.0/24 --duration 30s >/dev/null 2>&1
cscli decisions add --ip 2001:db8::77 --duration 30s >/dev/null 2>&1
wait_for 10 denied_now 198.51.100.9
check "cscli decisions add --range 198.51.100.0/24: 198.51.100.9 dropped (within $WAITED s)" test "${WAITED:0:1}" != ">"
wait_for 10 denied_now 2001:db8::77
check "cscli decisions add --ip 2001:db8::77: dropped (within $WAITED s)" test "${WAITED:0:1}" != ">"
check "a captcha decision (fetched before those) does not drop $C" passes_now $C
cscli decisions delete --all >/dev/null 2>&1 # one cscli call (about a second under load) for the three
wait_for 10 passes_now 198.51.100.9
check "cscli decisions delete --all: the range passes again (within $WAITED s)" test "${WAITED:0:1}" != ">"
wait_for 10 passes_now 2001:db8::77
check "... and 2001:db8::77 (within $WAITED s)" test "${WAITED:0:1}" != ">"

# CrowdSec's own detection: ssh brute force in a log it reads (crowdsecurity/ssh-bf).
S=203.0.113.45
for i in 1 2 3 4 5 6 7 8; do
	echo "$(date '+%b %e %H:%M:%S') xpf sshd[4$i]: Failed password for invalid user u$i from $S port 5$i ssh2"
done >>"$CS/auth.log"
wait_for 20 denied_now $S
check "ssh brute force from $S in crowdsec's log: banned and dropped (within $WAITED s)" test "${WAITED:0:1}" != ">" ||
	tail -5 "$CS/log/crowdsec.log"
decisions=$(cscli decisions list -o raw 2>&1)
check "... a ban of crowdsecurity/ssh-bf" grep -q "crowdsecurity/ssh-bf.*,ban," <<<"$decisions" || echo "$decisions"
cscli decisions delete --ip $S >/dev/null 2>&1


# ====================== fail2ban ======================
F=$WORK/fail2ban
mkdir -p "$F/action.d" "$F/filter.d"
cp "$ACTION" "$F/action.d/xdp-pacer.conf"
cat >"$F/fail2ban.conf" <<EOF
[Definition]
loglevel = INFO
logtarget = $F/fail2ban.log
socket = $F/fail2ban.sock
pidfile = $F/fail2ban.pid
dbfile = :memory:
syslogsocket = auto
EOF
cat >"$F/filter.d/xpf-test.conf" <<'EOF'
[Definition]
failregex = ^login failure from <HOST>$
datepattern = {NONE}
EOF
: >"$F/auth.log"
cat >"$F/jail.conf" <<EOF
[DEFAULT]
backend = polling
[xpf]
enabled = true
filter = xpf-test
logpath = $F/auth.log
maxretry = 3
findtime = 60
bantime = 30
action = xdp-pacer[interface=$IF_RX]
# The action without its interface: a ban fails, saying so.
[xpfnoif]
enabled = true
filter = xpf-test
logpath = $F/auth-noif.log
action = xdp-pacer
# The action on an interface without a limiter, waiting 1 s for one.
[xpfretry]
enabled = true
filter = xpf-test
logpath = $F/auth-retry.log
action = xdp-pacer[interface=$ALT, retry=1]
EOF
: >"$F/auth-noif.log"
: >"$F/auth-retry.log"
f2b() { rx fail2ban-client -c "$F" -s "$F/fail2ban.sock" "$@"; }
start_daemon fail2ban fail2ban-server -f -x -c "$F" -s "$F/fail2ban.sock" -p "$F/fail2ban.pid"
F2B=$!
f2b_up() { f2b status xpf >/dev/null 2>&1; }
wait_for 20 f2b_up
check "fail2ban-server runs the jail (after $WAITED s)" test "${WAITED:0:1}" != ">" || cat "$WORK/fail2ban.out" "$F/fail2ban.log"

B=192.0.2.55
check "before any ban $B passes" passes_now $B
f2b set xpf banip $B >/dev/null
check "fail2ban-client set xpf banip $B" test $? -eq 0
wait_for 10 denied_now $B
check "... drops $B's packets (within $WAITED s)" test "${WAITED:0:1}" != ">"
t=$(timeout_of $B)
check "... its entry has the ban time, 30 s, as timeout (${t:-none} s)" test "$t" = 30
f2b set xpf unbanip $B >/dev/null
check "fail2ban-client set xpf unbanip $B" test $? -eq 0
wait_for 10 passes_now $B
check "... passes $B again (within $WAITED s)" test "${WAITED:0:1}" != ">"
B6=2001:db8::55
f2b set xpf banip $B6 >/dev/null
wait_for 10 denied_now $B6
check "banip $B6 (IPv6) drops it (within $WAITED s)" test "${WAITED:0:1}" != ">"
f2b set xpf unbanip $B6 >/dev/null
wait_for 10 passes_now $B6
check "... unbanip passes it again (within $WAITED s)" test "${WAITED:0:1}" != ">"

# ====== the limiter restarted: what the feeds decided meanwhile is applied ======
rx "$CLI" unload "$IF_RX" >/dev/null
check "the limiter unloaded, as in a restart" test $? -eq 0
R1=192.0.2.111 R2=192.0.2.112
cscli decisions add --ip $R1 --duration 60s >/dev/null 2>&1
# fail2ban-client's banip returns once the action has run: in the background.
nsenter --net="/run/netns/$NS_RX" fail2ban-client -c "$F" -s "$F/fail2ban.sock" set xpf banip $R2 >/dev/null 2>&1 &
banning=$!
waiting() { pgrep -f "crowdsec-decision add $R1 " >/dev/null && pgrep -f "deny add $IF_RX $R2 " >/dev/null; }
wait_for 20 waiting
check "with no limiter the bouncer's call and fail2ban's ban wait for one (both waiting after $WAITED s)" \
	test "${WAITED:0:1}" != ">"
rx "$CLI" load "$IF_RX" --interval 10ms >/dev/null
check "the limiter loaded again" test $? -eq 0
wait $banning
check "... fail2ban-client's banip returns, exit 0" test $? -eq 0
wait_for 10 denied_now $R1
check "... the decision made meanwhile drops $R1 (within $WAITED s)" test "${WAITED:0:1}" != ">"
wait_for 10 denied_now $R2
check "... fail2ban's ban made meanwhile drops $R2 (within $WAITED s)" test "${WAITED:0:1}" != ">"
cscli decisions delete --ip $R1 >/dev/null 2>&1
f2b set xpf unbanip $R2 >/dev/null
wait_for 10 passes_now $R1
check "... cscli decisions delete passes $R1 again (within $WAITED s)" test "${WAITED:0:1}" != ">"
wait_for 10 passes_now $R2
check "... unbanip passes $R2 again (within $WAITED s)" test "${WAITED:0:1}" != ">"

L=198.51.100.61
printf 'login failure from %s\n' $L $L $L >>"$F/auth.log"
wait_for 10 denied_now $L
check "3 failures from $L in the jail's log: banned and dropped (within $WAITED s)" test "${WAITED:0:1}" != ">"

f2b set xpf bantime -1 >/dev/null
P=192.0.2.66
f2b set xpf banip $P >/dev/null
wait_for 10 denied_now $P
check "bantime -1: banip $P drops it (within $WAITED s)" test "${WAITED:0:1}" != ">"
e=$(entry $P)
check "... its entry has no timeout (${e:-not listed})" bash -c 'test -n "$1" && ! grep -q timeout <<<"$1"' _ "$e"
f2b set xpf unbanip $P >/dev/null
wait_for 10 passes_now $P
check "... unbanip passes it again (within $WAITED s)" test "${WAITED:0:1}" != ">"

# ============ both feeders gone: the entries end by themselves ============
# A 5 s decision and a 5 s ban; then the bouncer stops and fail2ban is
# frozen, so that no command removes them (both waits at once).
E=192.0.2.99
cscli decisions add --ip $E --duration 5s >/dev/null 2>&1
f2b set xpf bantime 5 >/dev/null
E6=192.0.2.98
f2b set xpf banip $E6 >/dev/null
wait_for 10 denied_now $E
check "cscli decisions add --ip $E --duration 5s: dropped (within $WAITED s)" test "${WAITED:0:1}" != ">"
wait_for 10 denied_now $E6
check "fail2ban bantime 5: banip $E6 dropped (within $WAITED s)" test "${WAITED:0:1}" != ">"
kill -TERM $BOUNCER
wait $BOUNCER 2>/dev/null
check "the bouncer stopped" bash -c "! kill -0 $BOUNCER 2>/dev/null"
kill -STOP $F2B # fail2ban cannot lift its ban now
e6=$(entry $E6)
e=$(entry $E)
check "... $E's entry is still there with the bouncer stopped (${e:-gone})" test -n "$e"
wait_for 10 passes_now $E
check "... $E passes again when its 5 s are over (after $WAITED s more)" test "${WAITED:0:1}" != ">"
check "... and its entry is gone without any command" no_entry $E
check "$E6's entry is still there with fail2ban frozen (${e6:-gone})" test -n "$e6"
wait_for 10 passes_now $E6
check "with fail2ban frozen, $E6 passes again when its 5 s are over (after $WAITED s more)" test "${WAITED:0:1}" != ">"
check "... and its entry is gone without any command" no_entry $E6
kill -CONT $F2B
check "fail2ban logged no failed action so far" bash -c "! grep -E 'ERROR|Failed to execute' '$F/fail2ban.log'" ||
	grep -E 'ERROR|Failed to execute' "$F/fail2ban.log"
f2b set xpfnoif banip 192.0.2.44 >/dev/null
no_if() { grep -q "xdp-pacer action: no interface given: xdp-pacer\[interface=IFNAME\]" "$F/fail2ban.log"; }
wait_for 10 no_if
check "a jail whose xdp-pacer action has no interface: its ban fails, the message naming the parameter" test "${WAITED:0:1}" != ">"
check "the bouncer logged no failed call" bash -c "! grep -q \"Error in '\" '$CS/log/crowdsec-custom-bouncer.log'" ||
	grep "Error in '" "$CS/log/crowdsec-custom-bouncer.log"

# A jail whose action waits at most 1 s for a limiter, on the interface without one.
f2b set xpfretry banip 192.0.2.45 >/dev/null
gave_up() { grep -q "xdp-pacer action: no limiter came back on $ALT within 1 s (retry=1): not applied" "$F/fail2ban.log"; }
wait_for 15 gave_up
check "a ban with no limiter for longer than the action's retry=1: fails, saying so (within $WAITED s)" \
	test "${WAITED:0:1}" != ">" || grep -E 'ERROR' "$F/fail2ban.log" | tail -5

f2b stop >/dev/null
check "fail2ban-client stop" test $? -eq 0
wait_for 10 passes_now $L
check "... lifts the jail's bans: $L passes again (within $WAITED s)" test "${WAITED:0:1}" != ">"
exited() { ! kill -0 "$1" 2>/dev/null || ps -o stat= -p "$1" | grep -q Z; }
wait_for 10 exited $F2B
check "... and the server exits" test "${WAITED:0:1}" != ">"
echo "    (whole test: $((SECONDS - started)) s)"
finish
