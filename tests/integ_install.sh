#!/usr/bin/env bash
# Integration: `make install` (DESTDIR and PREFIX), the man page, bash
# completion, the systemd unit (systemd-analyze verify, and its ExecStart /
# ExecReload / ExecStop commands run by hand on a veth in namespaces this
# test creates), the configuration file through the CLI, the installed
# BPF object attached with `ip link`, and the CrowdSec bouncer's bin_path
# the docs give against where `make install` and the package put it.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpi-install.XXXXXX)
cleanup() {
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

# --- make install DESTDIR=... lists exactly the expected files ---
make -s install DESTDIR="$WORK/stage" >/dev/null
check "make install DESTDIR=... exits 0" test $? -eq 0
(cd "$WORK/stage" && find . -type f | sort) >"$WORK/files"
cat >"$WORK/want" <<'LIST'
./etc/fail2ban/action.d/xdp-pacer.conf
./usr/local/bin/xdp-pacer
./usr/local/lib/bpf/xdp-pacer/xdp_pacer.bpf.o
./usr/local/lib/systemd/system/xdp-pacer-events@.service
./usr/local/lib/systemd/system/xdp-pacer-exporter.service
./usr/local/lib/systemd/system/xdp-pacer@.service
./usr/local/libexec/xdp-pacer/crowdsec-decision
./usr/local/share/bash-completion/completions/xdp-pacer
./usr/local/share/doc/xdp-pacer/example.conf
./usr/local/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local
./usr/local/share/man/man8/xdp-pacer.8
LIST
check "installed files are exactly the expected ones under PREFIX=/usr/local" diff -u "$WORK/want" "$WORK/files"
check "the binary is executable" test -x "$WORK/stage/usr/local/bin/xdp-pacer"
check "so is crowdsec-decision" test -x "$WORK/stage/usr/local/libexec/xdp-pacer/crowdsec-decision"
check "crowdsec-decision, the bouncer's example and the fail2ban action name the installed paths" \
	bash -c "grep -qx 'XDP_PACER=/usr/local/bin/xdp-pacer' '$WORK/stage/usr/local/libexec/xdp-pacer/crowdsec-decision' &&
		 grep -qx 'bin_path: /usr/local/libexec/xdp-pacer/crowdsec-decision' '$WORK/stage/usr/local/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local' &&
		 grep -qx 'xdp_pacer = /usr/local/bin/xdp-pacer' '$WORK/stage/etc/fail2ban/action.d/xdp-pacer.conf' &&
		 ! grep -rI '@[A-Z]*@' '$WORK/stage'"
# The bouncer's bin_path the docs give: where make install (PREFIX=/usr/local) puts the
# script, and for the Debian package where PREFIX=/usr does; no other literal path.
OPS=$(dirname "$0")/../docs/operating.md
bin=$(sed -n 's/^    BIN=\([^ ]*\) *# make install; the Debian package: .*/\1/p' "$OPS")
pkg=$(sed -n 's/^    BIN=[^ ]* *# make install; the Debian package: \([^ ]*\)$/\1/p' "$OPS")
check "docs/operating.md's bin_path after make install is where it puts the script (${bin:-none})" \
	test -n "$bin" -a -x "$WORK/stage$bin"
check "... the example make install writes names the same" \
	grep -qx "bin_path: $bin" "$WORK/stage/usr/local/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local"
make -s install DESTDIR="$WORK/stage-usr" PREFIX=/usr >/dev/null
check "... and the Debian package's, where PREFIX=/usr puts it (${pkg:-none})" test -n "$pkg" -a -x "$WORK/stage-usr$pkg"
bad=$(cd "$(dirname "$0")/.." && grep -nE 'bin_path: */' README.md docs/*.md dist/xdp-pacer.8)
check "no other literal bin_path in the docs and the man page (${bad:-none})" test -z "$bad"
check "the unit names the installed binary, not the staging directory" \
	grep -qx "ExecStart=/usr/local/bin/xdp-pacer load %i --config /etc/xdp-pacer/%i.conf --replace" \
	"$WORK/stage/usr/local/lib/systemd/system/xdp-pacer@.service"
check "plain make does not install" bash -c "! make -n 2>/dev/null | grep -q 'install -D'"
check "make only builds: no deps.sh, no apt-get, even into an empty build directory" \
	bash -c "! make -n BUILD='$WORK/fresh' all 2>/dev/null | grep -qE 'deps\.sh|apt-get'"

# --- the man page: no groff warnings, every verb documented ---
MAN=$WORK/stage/usr/local/share/man/man8/xdp-pacer.8
groff -man -Tutf8 -ww -z "$MAN" 2>"$WORK/groff.err"
check "groff -man -ww: no warnings" test ! -s "$WORK/groff.err"
cat "$WORK/groff.err"
MANWIDTH=80 man -l "$MAN" >"$WORK/man.txt" 2>"$WORK/man.err"
check "man -l renders it without complaint" test $? -eq 0 -a ! -s "$WORK/man.err" -a -s "$WORK/man.txt"
verbs=$("$CLI" --help | sed -n 's/^  \([a-z]*\) .*/\1/p' | grep -v '^$')
missing=
for v in $verbs; do grep -qE "^       $v( |$)" "$WORK/man.txt" || missing="$missing $v"; done
check "every verb of --help has an entry in the man page (missing:${missing:- none})" test -z "$missing"

# --- bash completion: every verb, and only options the verb accepts ---
complete_words() { # words...: what completing the last word offers
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _xdp_pacer; echo "${COMPREPLY[*]}"' \
		_ "$WORK/stage/usr/local/share/bash-completion/completions/xdp-pacer" "$@"
}
offered=" $(complete_words xdp-pacer '') "
missing=
for v in $verbs; do [[ $offered == *" $v "* ]] || missing="$missing $v"; done
check "completion offers every verb (missing:${missing:- none})" test -z "$missing"
bad=
for v in $verbs; do
	help=$("$CLI" "$v" --help 2>&1)
	for o in $(complete_words xdp-pacer "$v" --); do
		[ "$o" = --help ] && continue # every verb takes it, not every help text lists it
		grep -q -- "$o\b" <<<"$help" || bad="$bad $v:$o"
	done
done
check "every option completion offers is in the verb's --help (unknown:${bad:- none})" test -z "$bad"
check "completion of --format values" test "$(complete_words xdp-pacer stats lo --format p)" = prometheus

# --- systemd: verify the unit against a real install (PREFIX without DESTDIR) ---
make -s install PREFIX="$WORK/usr" SYSCONFDIR="$WORK/etc" >/dev/null
UNITS=$WORK/usr/lib/systemd/system
MANPATH=$WORK/usr/share/man systemd-analyze verify "$UNITS/xdp-pacer@lo.service" >"$WORK/verify.out" 2>&1
check "systemd-analyze verify accepts xdp-pacer@lo.service" test $? -eq 0
cat "$WORK/verify.out"
MANPATH=$WORK/usr/share/man systemd-analyze verify "$UNITS/xdp-pacer-exporter.service" >"$WORK/verify.out" 2>&1
check "systemd-analyze verify accepts xdp-pacer-exporter.service" test $? -eq 0
cat "$WORK/verify.out"
MANPATH=$WORK/usr/share/man systemd-analyze verify "$UNITS/xdp-pacer-events@lo.service" >"$WORK/verify.out" 2>&1
check "systemd-analyze verify accepts xdp-pacer-events@lo.service" test $? -eq 0
cat "$WORK/verify.out"
check "the events unit runs the installed CLI's events verb in JSON" \
	grep -qx "ExecStart=$WORK/usr/bin/xdp-pacer events %i --json \$XDP_PACER_EVENTS_ARGS" "$UNITS/xdp-pacer-events@.service"
mkdir "$WORK/broken"
sed 's|/bin/xdp-pacer load|/bin/xdp-pacer-missing load|' "$UNITS/xdp-pacer@.service" >"$WORK/broken/xdp-pacer@.service"
MANPATH=$WORK/usr/share/man systemd-analyze verify "$WORK/broken/xdp-pacer@lo.service" >/dev/null 2>&1
check "systemd-analyze verify rejects the unit with a missing ExecStart binary (the check is real)" test $? -ne 0

# --- configuration files through the CLI: errors name the file and line ---
mkdir -p "$WORK/etc/xdp-pacer"
printf 'interval = 250ms\n\n# fixed\nrows = 9\n' >"$WORK/bad-value.conf"
"$CLI" load nosuchif0 --config "$WORK/bad-value.conf" 2>"$WORK/err"
check "bad value: exit 2" test $? -eq 2
check "bad value: message names file:line and the CLI's reason" \
	grep -qF "$WORK/bad-value.conf:4: invalid value '9' for rows: expected an integer from 1 to 8" "$WORK/err"
printf 'interval = 1s\nburst = 4\n' >"$WORK/unknown.conf"
"$CLI" load nosuchif0 --config "$WORK/unknown.conf" 2>"$WORK/err"
check "unknown key: exit 2 naming file:line" \
	bash -c "test $? -eq 2 && grep -qF \"$WORK/unknown.conf:2: unknown key 'burst'\" '$WORK/err'"
printf 'policy = pace\npolicy = quiet\n' >"$WORK/dup.conf"
"$CLI" set nosuchif0 --config "$WORK/dup.conf" 2>"$WORK/err"
check "duplicate key (set): exit 2 naming both lines" \
	bash -c "test $? -eq 2 && grep -qF \"$WORK/dup.conf:2: 'policy' is already set on line 1\" '$WORK/err'"
printf 'rows = \xc2\x9b2J\n' >"$WORK/bytes.conf"
"$CLI" load nosuchif0 --config "$WORK/bytes.conf" 2>"$WORK/err"
check "a value with non-ASCII bytes: exit 2" test $? -eq 2
check "... the bytes shown escaped, naming file and line" \
	grep -qF "bytes.conf:1: invalid value '\\xc2\\x9b2J' for rows" "$WORK/err"
check "... never sent raw to the terminal" \
	python3 -c "import sys; sys.exit(b'\xc2' in open(sys.argv[1], 'rb').read())" "$WORK/err"
# Every option of load is a key (reserve-cells included): none is refused as
# unknown; --class, --exempt and --deny are the file's sections instead.
unknown=
for o in $(complete_words xdp-pacer load --); do
	case $o in --config | --help | --class | --exempt | --deny) continue ;; esac
	printf '%s = 1\n' "${o#--}" >"$WORK/key.conf"
	"$CLI" load nosuchif0 --config "$WORK/key.conf" 2>"$WORK/err"
	grep -q "unknown key" "$WORK/err" && unknown="$unknown ${o#--}"
done
check "every load option is a configuration key (unknown:${unknown:- none})" test -z "$unknown"
printf 'budget = 10/1s\nreserve-cells = 4096\n' >"$WORK/reserve.conf"
"$CLI" load nosuchif0 --config "$WORK/reserve.conf" 2>"$WORK/err"
check "reserve-cells in a file: accepted (fails only on the missing interface)" \
	bash -c "test $? -eq 1 && grep -q \"no such interface 'nosuchif0'\" '$WORK/err'"
# Conflicting keys name the file and the line of each.
conflict() { # description file-text expected-message [extra load args...]
	local d=$1 text=$2 want=$3 rc; shift 3
	printf "$text" >"$WORK/conflict.conf"
	"$CLI" load nosuchif0 --config "$WORK/conflict.conf" "$@" 2>"$WORK/err"
	rc=$?
	check "conflict, $d: exit 2 naming file and line" \
		bash -c "test $rc -eq 2 && grep -qF \"$WORK/conflict.conf:$want\" '$WORK/err'"
}
conflict "interval and rate" 'interval = 1s\nrate = 5/1s\n' "2: 'rate' conflicts with 'interval' on line 1"
conflict "rows with backend = table" 'backend = table\n\nrows = 2\n' "3: 'rows' conflicts with 'backend' on line 1"
conflict "layout with --backend table" 'layout = blocked\n' "1: 'layout' conflicts with --backend on the command line" --backend table
conflict "on-full with the sketch" '# sketch\non-full = evict-oldest\n' "2: 'on-full'"
"$CLI" load nosuchif0 --config "$WORK/none.conf" 2>"$WORK/err"
check "missing file: exit 1 naming it" bash -c "test $? -eq 1 && grep -q 'cannot read .*none.conf' '$WORK/err'"
"$CLI" load nosuchif0 --config "$WORK/usr/share/doc/xdp-pacer/example.conf" 2>"$WORK/err"
check "the installed example.conf is valid (fails only on the missing interface)" \
	bash -c "test $? -eq 1 && grep -q \"no such interface 'nosuchif0'\" '$WORK/err'"

# --- the unit's commands, run by hand on a veth (systemd itself is not running here) ---
setup_pair xpi || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
unit_cmd() { # ExecStart|ExecReload|ExecStop: that line with %i and %n expanded
	sed -n "s/^$1=//p" "$UNITS/xdp-pacer@.service" | sed "s/%i/$IF_RX/g; s/%n/xdp-pacer@$IF_RX.service/g"
}
# ExecStop is a shell line (it leaves the limiter attached while a restart is pending): run as systemd would.
unit_stop() { rx bash -c "$(unit_cmd ExecStop)"; }
CONF=$WORK/etc/xdp-pacer/$IF_RX.conf
cat >"$CONF" <<CONF
# written by the test
interval = 400ms
policy = pace
prefix6 = 56
placement = shared
rows = 2
width = 4096
CONF
rx $(unit_cmd ExecStart) >/dev/null
check "ExecStart loads with the file's options" test $? -eq 0
status() { rx "$CLI" status "$IF_RX"; }
check "status shows the file's geometry and live options" \
	bash -c "grep -q '2 rows x 4096 cells, rows layout, shared' <<<\"\$(nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX)\" &&
		 grep -q 'interval 400.000 ms' <<<\"\$(nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX)\" &&
		 grep -q 'prefix6 /56' <<<\"\$(nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX)\""
send 10.214.7.1 1 >/dev/null
age_line() { rx "$CLI" query "$IF_RX" 10.214.7.1 --json; }
before=$(age_line)
check "the source is in the sketch after traffic" grep -q '"age_ticks":[0-9]' <<<"$before"
sed -i 's/^interval = 400ms/interval = 600ms/; s/^policy = pace/policy = quiet/; s/^prefix6 = 56/# prefix6 back to its default/' "$CONF"
rx $(unit_cmd ExecReload) >"$WORK/reload.out" 2>&1
check "ExecReload (set --config) exits 0" test $? -eq 0
s=$(status)
check "reload applied interval 600 ms and policy quiet" \
	bash -c "grep -q 'interval 600.000 ms' <<<'$s' && grep -q 'policy quiet' <<<'$s'"
check "reload put the removed prefix6 back to its default /64" grep -q 'prefix6 /64' <<<"$s"
after=$(age_line)
check "reload kept the sketch's state (the source is still seen)" grep -q '"age_ticks":[0-9]' <<<"$after"
sed -i 's/^rows = 2/rows = 4/' "$CONF"
rx $(unit_cmd ExecReload) >"$WORK/reload.out" 2>&1
check "reload with a changed fixed setting warns that it needs a restart" \
	grep -q "fixed at load, not applied by set: rows" "$WORK/reload.out"
sed -i 's/^rows = 4/rows = 2/; s/^policy = quiet/policy = sometimes/' "$CONF"
rx $(unit_cmd ExecReload) 2>"$WORK/err"
check "reload with a bad value fails (exit 2) naming the line, and changes nothing" \
	bash -c "test $? -eq 2 && grep -qF \"$CONF:3: invalid value 'sometimes' for policy\" '$WORK/err' &&
		 nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX | grep -q 'policy quiet'"
unit_stop >/dev/null
check "ExecStop detaches (no restart pending: no systemd here)" bash -c "test $? -eq 0 && ! nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX >/dev/null 2>&1"
check "ExecStop keeps the pins for the next start" test -e "$(pins_of "$NS_RX" "$IF_RX")/meta"
sed -i 's/^policy = sometimes/policy = quiet/' "$CONF"
rx $(unit_cmd ExecStart) >/dev/null
check "ExecStart resumes them: the source is still seen" grep -q '"age_ticks":[0-9]' <<<"$(age_line)"

# --- the table backend and the global budget from the file ---
cat >"$CONF" <<CONF
backend = table
on-full = evict-oldest
width = 4096
budget = 100/60s
reserve = 20
reserve-cells = 4096
CONF
rx $(unit_cmd ExecStart) >"$WORK/start.out" 2>&1
check "ExecStart over a running sketch with a table in the file: refused (exit 2), naming backend and --reset-state" \
	bash -c "test $? -eq 2 && grep -q 'backend table (was sketch)' '$WORK/start.out' && grep -q -- '--reset-state' '$WORK/start.out'"
rx "$CLI" unload "$IF_RX" >/dev/null
rx $(unit_cmd ExecStart) >/dev/null
s=$(status)
check "ExecStart loads a table in evict-oldest mode from the file" grep -q 'table.*evict-oldest' <<<"$s"
check "... with the file's budget and reserve" grep -q 'budget: 100 per 60 s.*reserve 20%' <<<"$s"
check "... and its reserve-cells" grep -q 'returning-source filter 4096 cells' <<<"$s"
sed -i 's/^reserve = 20/# reserve back to its default/' "$CONF"
rx $(unit_cmd ExecReload) >"$WORK/reload.out" 2>&1
check "reload put the removed reserve back to 0 %" grep -q 'budget: 100 per 60 s.*reserve 0%' <<<"$(status)"
check "... and, nothing fixed changed, warns of nothing" test ! -s "$WORK/reload.out" -o -z "$(grep 'fixed at load' "$WORK/reload.out")"
sed -i 's/^reserve-cells = 4096/reserve-cells = 8192/' "$CONF"
rx $(unit_cmd ExecReload) >"$WORK/reload.out" 2>&1
check "reload with other reserve-cells warns that it needs a restart" \
	grep -q "fixed at load, not applied by set: reserve-cells" "$WORK/reload.out"
sed -i 's/^budget = 100\/60s/# no budget/; s/^backend = table/backend = sketch/; /^on-full/d' "$CONF"
rx $(unit_cmd ExecReload) >"$WORK/reload.out" 2>&1
check "reload without a budget key turns the budget off" grep -q 'budget: off' <<<"$(status)"
check "reload with another backend warns that it needs a restart" \
	grep -q "fixed at load, not applied by set: .*backend" "$WORK/reload.out"
unit_stop >/dev/null

# --- the installed BPF object, as `ip link` users attach it ---
rx ip link set dev "$IF_RX" xdpgeneric obj "$WORK/usr/lib/bpf/xdp-pacer/xdp_pacer.bpf.o" sec xdp
check "ip link attaches the installed object" test $? -eq 0
check "the installed CLI finds it" bash -c "nsenter --net=/run/netns/$NS_RX $WORK/usr/bin/xdp-pacer status $IF_RX | grep -q 'attached by another loader'"
rx ip link set dev "$IF_RX" xdpgeneric off
finish
