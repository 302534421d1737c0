#!/usr/bin/env bash
# Integration, hostile: writers that race.  For XDP_PACER_RACE_SECONDS
# (default 20: the suite's budget; the issue's run is 60) six processes
# change one pacer at once through the CLI, each command under `timeout`:
# two reload it with `set --config` (files A and B, alternately at
# random), one toggles sampling with `set`, three add and delete their own
# prefixes with `deny add/del` (one of them 500 at a time from stdin) and
# `exempt add/del`; meanwhile a flood runs, the exporter is scraped, and
# stats, status and `deny list` read.  Afterwards: no command failed or
# hung, the exporter holds as many descriptors as before, and the state is
# what the last writers wrote: the configuration-driven part is wholly A's
# or wholly B's, sampling is the last toggle's, each prefix writer's
# entries are exactly the set it last left.  Per packet: A denies
# 172.16.5.0/24 inside an exempt 172.16.0.0/16, B denies 172.16.0.0/16;
# the flood's 172.16.5.x sources are denied under both, so a single one
# passing as exempt would be a packet that met half a reload
# (tests/prog_writers_race.c probes the class banks the same way).
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-race.XXXXXX)
SECS=${XDP_PACER_RACE_SECONDS:-20}
PIDS=()
cleanup() {
	local p
	stop_background
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xrw || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

cat >"$WORK/A.conf" <<'EOF'
interval = 1s
policy = pace
backend = table
[class dns]
match = udp dport 53
interval = 100ms
[class web]
match = tcp dport 80
interval = 50ms
[exempt]
src = 172.16.0.0/16
[deny]
src = 172.16.5.0/24, 192.0.2.0/24
EOF
cat >"$WORK/B.conf" <<'EOF'
interval = 2s
policy = quiet
backend = table
[class ntp]
match = udp dport 123
interval = 200ms
[deny]
src = 172.16.0.0/16
EOF
check "load with A" rx "$CLI" load "$IF_RX" --mode skb --config "$WORK/A.conf"

# What of the state a configuration decides: status's live and class lines, the configured entries.
conf_state() {
	{
		rx "$CLI" status "$IF_RX" | grep -E '^  live: |^    [a-z]+ +' | grep -v 'hash key'
		rx "$CLI" deny list "$IF_RX" --json | grep -o '{"prefix":"[^"]*","origin":"configured"}'
		rx "$CLI" exempt list "$IF_RX" --json | grep -o '{"prefix":"[^"]*","origin":"configured"}'
	} 2>&1
}
# The entries `add` made on a list, sorted.
added_of() { # deny|exempt
	rx "$CLI" "$1" list "$IF_RX" --json | grep -o '{"prefix":"[^"]*","origin":"added"' |
		sed 's/{"prefix":"\([^"]*\)".*/\1/' | sort
}
conf_state >"$WORK/state.A"
check "set --config B" rx "$CLI" set "$IF_RX" --config "$WORK/B.conf"
conf_state >"$WORK/state.B"
check "A's and B's states differ (the check can tell them apart)" bash -c "! cmp -s $WORK/state.A $WORK/state.B"
check "set --config A" rx "$CLI" set "$IF_RX" --config "$WORK/A.conf"

PORT=$((20000 + $$ % 20000))
# nsenter, not rx: rx in the background is a subshell, and $! would be that
# subshell's PID, not the exporter's (killing it left the exporter running).
nsenter --net="/run/netns/$NS_RX" "$CLI" exporter --listen "127.0.0.1:$PORT" >"$WORK/exp.out" 2>"$WORK/exp.err" &
EXP=$!
PIDS+=("$EXP")
for _ in $(seq 50); do grep -q serving "$WORK/exp.out" && break; sleep 0.1; done
rx curl -s -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics"
fds0=$(ls /proc/$EXP/fd | wc -l)

END=$(( $(date +%s) + SECS ))
# run_logged NAME CMD...: one command under a timeout; its status appended to NAME's log.
run_logged() {
	local name=$1 rc; shift
	timeout 60 "$@" >>"$WORK/$name.out" 2>&1
	rc=$?
	echo "$rc $*" >>"$WORK/$name.rc"
	return $rc
}
CX="nsenter --net=/run/netns/$NS_RX $CLI"

reloader() { # name
	while [ "$(date +%s)" -lt $END ]; do
		if [ $((RANDOM % 2)) = 0 ]; then c=A; else c=B; fi
		run_logged "$1" $CX set "$IF_RX" --config "$WORK/$c.conf" --wait 60
	done
}
sampler() {
	local v
	while [ "$(date +%s)" -lt $END ]; do
		if [ $((RANDOM % 2)) = 0 ]; then v=off; else v=1/1000; fi
		run_logged sampler $CX set "$IF_RX" --sample-sources $v --wait 60 && echo "$v" >"$WORK/sampler.last"
	done
}
# prefixer NAME LIST NET: adds and deletes prefixes of NET.0.0/16 one at a time; its set in NAME.set
prefixer() {
	local name=$1 list=$2 net=$3 p
	: >"$WORK/$name.set"
	while [ "$(date +%s)" -lt $END ]; do
		p="$net.$((RANDOM % 4)).$((RANDOM % 8))/32"
		if grep -qxF "$p" "$WORK/$name.set"; then
			run_logged "$name" $CX "$list" del "$IF_RX" "$p" --wait 60 &&
				grep -vxF "$p" "$WORK/$name.set" >"$WORK/$name.tmp"; mv "$WORK/$name.tmp" "$WORK/$name.set"
		else
			run_logged "$name" $CX "$list" add "$IF_RX" "$p" --timeout 1h --wait 60 &&
				echo "$p" >>"$WORK/$name.set"
		fi
	done
}
# batcher: 500 prefixes of 10.203.0.0/16 from stdin, in and out
batcher() {
	local i=0
	: >"$WORK/batch.set"
	while [ "$(date +%s)" -lt $END ]; do
		seq 0 499 | awk -v k=$((i % 8)) '{ printf "10.203.%d.%d/32\n", k, $1 % 256 + 0 }' | sort -u >"$WORK/batch.in"
		if [ -s "$WORK/batch.set" ]; then
			run_logged batcher bash -c "$CX deny del $IF_RX - --wait 60 <$WORK/batch.set" && : >"$WORK/batch.set"
		else
			run_logged batcher bash -c "$CX deny add $IF_RX - --wait 60 <$WORK/batch.in" && cp "$WORK/batch.in" "$WORK/batch.set"
		fi
		i=$((i + 1))
	done
}
readers() {
	while [ "$(date +%s)" -lt $END ]; do
		run_logged readers $CX stats "$IF_RX" --json
		run_logged readers $CX status "$IF_RX"
		run_logged readers $CX deny list "$IF_RX"
		run_logged readers nsenter --net=/run/netns/$NS_RX curl -s -f -m 20 -o /dev/null "http://127.0.0.1:$PORT/metrics"
	done
}
flood() {
	while [ "$(date +%s)" -lt $END ]; do
		send 172.16.5.1 200 --per-source 2 >/dev/null
		send 10.50.0.1 500 --dport 53 >/dev/null
	done
}

flood & PIDS+=($!)
readers & PIDS+=($!)
reloader reloadA & PIDS+=($!)
reloader reloadB & PIDS+=($!)
sampler & PIDS+=($!)
prefixer denier deny 10.201 & PIDS+=($!)
prefixer exempter exempt 10.202 & PIDS+=($!)
batcher & PIDS+=($!)
echo "     racing for $SECS s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for p in "${PIDS[@]:1}"; do wait "$p"; done
sleep 0.3

total=$(cat "$WORK"/*.rc | wc -l)
bad=$(cat "$WORK"/*.rc | awk '$1 != 0' | head -3)
hung=$(cat "$WORK"/*.rc | awk '$1 == 124 || $1 == 137' | wc -l)
for w in reloadA reloadB sampler denier exempter batcher readers; do
	echo "     $w: $(wc -l <"$WORK/$w.rc") commands, $(awk '$1 != 0' "$WORK/$w.rc" | wc -l) failed"
done
check "every one of $total commands succeeded (${bad:-none failed})" test -z "$bad"
check "none hung ($hung)" test "$hung" -eq 0
check "each writer got through at least 3 changes" \
	bash -c "for w in reloadA reloadB sampler denier exempter batcher; do [ \$(wc -l <$WORK/\$w.rc) -ge 3 ] || exit 1; done"
check "the exporter is still serving" rx curl -s -f -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics"
fds1=$(ls /proc/$EXP/fd | wc -l)
check "the exporter holds as many descriptors as before ($fds0 -> $fds1)" test "$fds0" -eq "$fds1"
conf_state >"$WORK/state.end"
check "the configuration-driven state is wholly A's or wholly B's" \
	bash -c "cmp -s $WORK/state.end $WORK/state.A || cmp -s $WORK/state.end $WORK/state.B || { diff $WORK/state.A $WORK/state.end; false; }"
want_s=$(cat "$WORK/sampler.last" 2>/dev/null)
got_s=$(sampling)
check "sampling is the last toggle's ($want_s: $got_s)" \
	bash -c "[ '$want_s' = off ] && [ '$got_s' = off ] || { [ '$want_s' = 1/1000 ] && grep -q 'sources 1/1000' <<<'$got_s'; }"
sort "$WORK/denier.set" "$WORK/batch.set" >"$WORK/deny.want"
added_of deny >"$WORK/deny.got"
check "the deny list's added entries are what the writers last left ($(wc -l <"$WORK/deny.want") entries)" \
	cmp -s "$WORK/deny.want" "$WORK/deny.got"
sort "$WORK/exempter.set" >"$WORK/exempt.want"
added_of exempt >"$WORK/exempt.got"
check "the exempt list's added entries are what its writer last left ($(wc -l <"$WORK/exempt.want"))" \
	cmp -s "$WORK/exempt.want" "$WORK/exempt.got"
# The datapath agrees: every entry the writers left decides its source (filter bits included).
d0=$(stat_of deny_dropped); e0=$(stat_of exempt_passed)
while read -r p; do send "${p%/32}" 1 >/dev/null; done <"$WORK/deny.want"
while read -r p; do send "${p%/32}" 1 >/dev/null; done <"$WORK/exempt.want"
sleep 0.3
nd=$(wc -l <"$WORK/deny.want"); ne=$(wc -l <"$WORK/exempt.want")
check "a packet from each of the $nd denied and $ne exempt prefixes left is dropped or passed as listed" \
	bash -c "[ $(stat_of deny_dropped) -eq $((d0 + nd)) ] && [ $(stat_of exempt_passed) -eq $((e0 + ne)) ]"
dd=$(stat_of deny_dropped)
check "no packet of the flood's denied sources passed as exempt (exempt_passed $(stat_of exempt_passed) = the probes' $ne, deny_dropped $dd)" \
	bash -c "[ '$(stat_of exempt_passed)' = $((e0 + ne)) ] && [ '$e0' = 0 ] && [ '${dd:-0}' -gt 0 ]"
seen=$(stat_of seen)
check "no map error under the race ($(stat_of map_error))" test "$(stat_of map_error)" = 0
kill "$EXP" 2>/dev/null
wait "$EXP" 2>/dev/null
check "unload" rx "$CLI" unload "$IF_RX"
finish
