#!/usr/bin/env bash
# The policy demonstration with real programs: a DNS server (dnsmasq, a local
# zone, no upstream) and a TCP service (an iperf3 server) in a namespace of
# their own behind a veth whose server end runs XDP in native mode; clients
# in a second namespace: dnsperf from source A and from source B, and an
# iperf3 transfer from A, all at once.  Each run attaches one program:
#   bare    a bare XDP_PASS program (build/bench_pass.bpf.o, attached by
#           `ip link set dev IF xdpdrv obj`): the baseline
#   global  the limiter with one global limit on every IP packet of a
#           source (the limiter without classes): by default
#           --backend table --rate N/T, the class's rate; --global OPTS
#           (repeatable) runs load OPTS instead, one row each
#   class   the limiter with a DNS class at that rate (udp dport 53) and B
#           in the exempt list: everything else passes unpaced
# The bare and class runs alternate ROUNDS times (ABBA; medians), each global
# run comes once.  Then observe, then enforce (unless --no-observe): the
# class's configuration with the DNS class in observe mode (`mode = observe`
# in its section), dnsperf from A and B alone (no transfer); the would-drop
# counters read; then `set --config` with the same file saying `mode =
# enforce` (live: every source's state kept) and the same dnsperf load
# again, started when the first run's burst is back (after T).  Prints a
# table; --json FILE writes the figures (tests/integ_policy_demo.sh asserts
# on them).  Cleans up on any exit.
# Needs root; installs what is missing (scripts/deps.sh) and builds.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
BUILD=${BUILD:-build}
CLI=$BUILD/xdp-pacer
PASS_OBJ=$BUILD/bench_pass.bpf.o

usage() {
	cat <<TXT
Usage: scripts/policy-demo.sh [--seconds N] [--rounds N] [--qps N] [--global OPTS]...
                              [--no-observe] [--json FILE] [--no-build]

  --seconds N   length of each run, 1..60 (default: 5)
  --rounds N    bare/class pairs, alternated, medians over them, 1..20 (default: 3)
  --qps N       queries per second each dnsperf sends, 1..5000 (default: 200)
  --global OPTS the global-limit run loads with these options instead of
                '--backend table --rate 20/1s'; repeatable: one run each
  --no-observe  skip the observe-then-enforce runs (the DNS class observed,
                then switched to enforce live by 'xdp-pacer set --config')
  --json FILE   also write the figures as JSON to FILE
  --no-build    skip scripts/deps.sh and make (the tests' build is used)
TXT
}
die_usage() { echo "policy-demo: $*" >&2; usage >&2; exit 2; }
int_in() { # value lo hi
	[[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

SECONDS_PER_RUN=5 ROUNDS=3 QPS=200 JSON_OUT='' BUILD_FIRST=1 GLOBALS=() OBSERVE=1
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) [ $# -ge 2 ] || die_usage "--seconds needs a value"
		int_in "$2" 1 60 || die_usage "--seconds '$2': expected 1..60"
		SECONDS_PER_RUN=$2; shift 2 ;;
	--rounds) [ $# -ge 2 ] || die_usage "--rounds needs a value"
		int_in "$2" 1 20 || die_usage "--rounds '$2': expected 1..20"
		ROUNDS=$2; shift 2 ;;
	--qps) [ $# -ge 2 ] || die_usage "--qps needs a value"
		int_in "$2" 1 5000 || die_usage "--qps '$2': expected 1..5000"
		QPS=$2; shift 2 ;;
	--global) [ $# -ge 2 ] || die_usage "--global needs load's options"
		GLOBALS+=("$2"); shift 2 ;;
	--json) [ $# -ge 2 ] || die_usage "--json needs a file"
		if ! [ -d "$(dirname -- "$2")" ] || ! [ -w "$(dirname -- "$2")" ]; then
			die_usage "--json '$2': its directory does not exist or is not writable"
		fi
		JSON_OUT=$2; shift 2 ;;
	--no-build) BUILD_FIRST=; shift ;;
	--no-observe) OBSERVE=; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die_usage "unknown argument '$1'" ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "policy-demo: needs root (namespaces, XDP); try: sudo $0" >&2
	exit 1
fi
if [ -n "$BUILD_FIRST" ]; then
	scripts/deps.sh
	echo "== building"
	make -s -j"$(nproc)" all
fi
DNSMASQ=$(command -v dnsmasq || echo /usr/sbin/dnsmasq)
for tool in "$DNSMASQ" dnsperf iperf3 python3; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "policy-demo: $tool is not installed; run: sudo scripts/deps.sh" >&2; exit 1; }
done
for f in "$CLI" "$PASS_OBJ"; do
	[ -e "$f" ] || { echo "policy-demo: $f is missing; run: make" >&2; exit 1; }
done

# The limit under test: the DNS class's, and the global one of run (b).
RATE_N=20 RATE_T=1s
[ ${#GLOBALS[@]} -gt 0 ] || GLOBALS=("--backend table --rate $RATE_N/$RATE_T")
SRV_ADDR=10.216.0.1 SRC_A=10.216.0.2 SRC_B=10.216.0.3
NS_SRV=xpdemo-srv-$$ NS_CLI=xpdemo-cli-$$
IF_SRV=xpds$$ IF_CLI=xpdc$$
IF_SRV=${IF_SRV:0:15} IF_CLI=${IF_CLI:0:15}
WORK=$(mktemp -d /tmp/xdp-pacer-policy-demo.XXXXXX)
DNSMASQ_PID='' IPERF_SRV_PID='' CLIENT_PIDS=()

srv() { nsenter --net="/run/netns/$NS_SRV" "$@"; }
cli() { nsenter --net="/run/netns/$NS_CLI" "$@"; }
# What runs in the background is started by nsenter itself, not through a
# function: nsenter execs the program, so $! is the program's own pid, which
# the clean-up kills (a function would run in a subshell, $! that subshell's).
IN_SRV=(nsenter --net="/run/netns/$NS_SRV")
IN_CLI=(nsenter --net="/run/netns/$NS_CLI")

cleanup() {
	local pid
	set +e
	for pid in "${CLIENT_PIDS[@]}" $IPERF_SRV_PID $DNSMASQ_PID; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	pacer_ns_remove "$NS_SRV" "$IF_SRV" "$CLI"
	ip netns del "$NS_CLI" 2>/dev/null
	rm -rf "$WORK"
	true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== namespaces $NS_SRV ($SRV_ADDR: dnsmasq, iperf3 -s) <-> $NS_CLI (A $SRC_A, B $SRC_B)"
ip netns add "$NS_SRV"
ip netns add "$NS_CLI"
ip link add "$IF_SRV" netns "$NS_SRV" type veth peer name "$IF_CLI" netns "$NS_CLI"
for ns in "$NS_SRV" "$NS_CLI"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
done
ip -n "$NS_SRV" addr add "$SRV_ADDR/24" dev "$IF_SRV"
ip -n "$NS_CLI" addr add "$SRC_A/24" dev "$IF_CLI"
ip -n "$NS_CLI" addr add "$SRC_B/24" dev "$IF_CLI"
ip -n "$NS_SRV" link set "$IF_SRV" up
ip -n "$NS_CLI" link set "$IF_CLI" up

# listening NS PROTO PORT: waits up to 5 s for a socket listening there.
listening() {
	local _
	for _ in $(seq 50); do
		[ -n "$(nsenter --net="/run/netns/$1" ss -Hln"${2:0:1}" "sport = :$3")" ] && return 0
		sleep 0.1
	done
	return 1
}

# dnsmasq answers the zone demo.test from its own flags: no upstream, no
# /etc/resolv.conf or /etc/hosts, no configuration file, no DHCP.
"${IN_SRV[@]}" "$DNSMASQ" --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --no-poll \
	--bind-interfaces --listen-address="$SRV_ADDR" --address=/demo.test/"$SRV_ADDR" \
	--pid-file="$WORK/dnsmasq.pid" --log-facility="$WORK/dnsmasq.log" \
	--user=nobody --group=nogroup &
DNSMASQ_PID=$!
listening "$NS_SRV" udp 53 || { echo "policy-demo: dnsmasq did not start:" >&2; cat "$WORK/dnsmasq.log" >&2; exit 1; }
for name in www mail ns1 api cdn img static login; do echo "$name.demo.test A"; done >"$WORK/queries"

cat >"$WORK/class.conf" <<CONF
# The class run's configuration: DNS queries paced per source, source B exempt.
backend = table

[class dns]
match = udp dport 53
rate = $RATE_N/$RATE_T

[exempt]
src = $SRC_B/32
CONF

# The observe-then-enforce runs: the class's file with the DNS class's own
# mode, observe first, then enforce.
sed "s/^rate = .*/&\nmode = observe/" "$WORK/class.conf" >"$WORK/observe.conf"
sed "s/^mode = observe/mode = enforce/" "$WORK/observe.conf" >"$WORK/enforce.conf"

attach() { # mode
	case $1 in
	observe) srv "$CLI" load "$IF_SRV" --config "$WORK/observe.conf" >"$WORK/load.log" 2>&1 ||
		{ cat "$WORK/load.log" >&2; return 1; } ;;
	enforce) # live, the state kept: what `systemctl reload xdp-pacer@IF` does
		srv "$CLI" set "$IF_SRV" --config "$WORK/enforce.conf" >"$WORK/set.log" 2>&1 ||
		{ cat "$WORK/set.log" >&2; return 1; } ;;
	bare) srv ip link set dev "$IF_SRV" xdpdrv obj "$PASS_OBJ" sec xdp ;;
	global*) # shellcheck disable=SC2086 # load's options are words
		srv "$CLI" load "$IF_SRV" ${GLOBALS[${1#global}]} >"$WORK/load.log" 2>&1 ||
		{ cat "$WORK/load.log" >&2; return 1; } ;;
	class) srv "$CLI" load "$IF_SRV" --config "$WORK/class.conf" >"$WORK/load.log" 2>&1 ||
		{ cat "$WORK/load.log" >&2; return 1; } ;;
	esac
}
detach() { # mode
	case $1 in
	bare) srv ip link set dev "$IF_SRV" xdpdrv off ;;
	observe) srv "$CLI" stats "$IF_SRV" --json >"$WORK/$2.stats.json" ;; # stays for enforce
	*) srv "$CLI" stats "$IF_SRV" --json >"$WORK/$2.stats.json"
	   srv "$CLI" unload "$IF_SRV" >/dev/null ;;
	esac
}

# One run: dnsperf from A and from B and an iperf3 transfer from A, at once,
# for SECONDS_PER_RUN.  Files $WORK/TAG.{dns_a,dns_b,iperf}.
run_once() { # mode tag
	local mode=$1 tag=$2 pa pb dns_only=
	case $mode in observe|enforce) dns_only=1 ;; esac
	attach "$mode"
	if [ -z "$dns_only" ]; then
		"${IN_SRV[@]}" iperf3 -s -1 -B "$SRV_ADDR" >"$WORK/$tag.iperf_srv" 2>&1 &
		IPERF_SRV_PID=$!
		listening "$NS_SRV" tcp 5201 || { echo "policy-demo: the iperf3 server did not start" >&2; return 1; }
	fi
	# -q: outstanding queries are not capped by the drops (each waits out -t).
	"${IN_CLI[@]}" dnsperf -s "$SRV_ADDR" -a "$SRC_A" -d "$WORK/queries" -l "$SECONDS_PER_RUN" \
		-Q "$QPS" -q 65535 -t 1 -O suppress=timeout >"$WORK/$tag.dns_a" 2>&1 &
	pa=$!
	"${IN_CLI[@]}" dnsperf -s "$SRV_ADDR" -a "$SRC_B" -d "$WORK/queries" -l "$SECONDS_PER_RUN" \
		-Q "$QPS" -q 65535 -t 1 -O suppress=timeout >"$WORK/$tag.dns_b" 2>&1 &
	pb=$!
	CLIENT_PIDS=("$pa" "$pb")
	# Under one global limit the transfer's control connection may stall: a
	# bounded wait, and a run without a result counts as no throughput.
	if [ -z "$dns_only" ]; then
		timeout $((SECONDS_PER_RUN + 10)) "${IN_CLI[@]}" \
			iperf3 -c "$SRV_ADDR" -B "$SRC_A" -t "$SECONDS_PER_RUN" --connect-timeout 3000 -J \
			>"$WORK/$tag.iperf" 2>&1 || true
	else
		echo '{"end": {"sum_received": {"bits_per_second": 0}}, "dns_only": true}' >"$WORK/$tag.iperf"
	fi
	wait "$pa" "$pb" || true
	CLIENT_PIDS=()
	for f in "$WORK/$tag.dns_a" "$WORK/$tag.dns_b"; do
		grep -q '^ *Queries completed:' "$f" && grep -q '^ *Run time (s):' "$f" && continue
		echo "policy-demo: dnsperf in run $tag gave no statistics:" >&2
		tail -5 "$f" >&2
		return 1
	done
	if [ -n "$IPERF_SRV_PID" ]; then
		kill "$IPERF_SRV_PID" 2>/dev/null || true
		wait "$IPERF_SRV_PID" 2>/dev/null || true
	fi
	IPERF_SRV_PID=
	detach "$mode" "$tag"
}

MODES=(bare class)
# Each limiter configuration loads before any run does: a bad --global
# stops the demo here, naming it, rather than after minutes of runs.
for mode in class ${OBSERVE:+observe} "${!GLOBALS[@]}"; do
	case $mode in class|observe) ;; *) mode=global$mode ;; esac
	attach "$mode" || { echo "policy-demo: the $mode run's limiter does not load (above)" >&2; exit 1; }
	srv "$CLI" unload "$IF_SRV" >/dev/null
done
echo "== runs of $SECONDS_PER_RUN s: dnsperf -Q $QPS from A and from B, iperf3 from A, at once"
echo "   ${MODES[*]} alternated $ROUNDS times (ABBA), then each global limit once"
echo "   class run's --config:"
sed 's/^/     /' "$WORK/class.conf"
order=()
# Bare and class in the order ABBA ABBA ...: a load that drifts during the
# runs weighs on both alike.
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then
		for m in "${MODES[@]}"; do order+=("$m.$r"); done
	else
		for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[i]}.$r"); done
	fi
done
for g in "${!GLOBALS[@]}"; do order+=("global$g.1"); done
# Observe, then enforce: the second run starts once the first run's burst
# is back (the rate's T, plus margin), as the first started with it.
[ -z "$OBSERVE" ] || order+=("observe.1" "enforce.1")
printf '%s\n' "${GLOBALS[@]}" >"$WORK/globals"
for tag in "${order[@]}"; do
	[ "$tag" != enforce.1 ] || sleep "$(python3 -c "print(float('${RATE_T%s}') + 0.5)")"
	printf '   %-10s' "$tag"
	run_once "${tag%.*}" "$tag"
	python3 - "$WORK" "$tag" <<'PY'
import json, re, sys
work, tag = sys.argv[1:3]
def dns(f):
    t = open(f"{work}/{tag}.{f}").read()
    g = lambda k: float(re.search(rf"{k}:\s+([0-9.]+)", t).group(1))
    return g("Queries sent"), g("Queries completed")
try:
    j = json.load(open(f"{work}/{tag}.iperf"))
    bps = j["end"]["sum_received"]["bits_per_second"]
except (ValueError, KeyError):
    j, bps = {}, 0.0 # no result: the summary names the error
sa, ca = dns("dns_a"); sb, cb = dns("dns_b")
tp = "no transfer    " if j.get("dns_only") else f"iperf3 {bps / 1e9:7.4f} Gbit/s"
print(f"{tp}, DNS A {ca:.0f}/{sa:.0f} answered, B {cb:.0f}/{sb:.0f}")
PY
done

python3 - "$WORK" "$SECONDS_PER_RUN" "$RATE_N" "$RATE_T" "$JSON_OUT" "${order[@]}" <<'PY'
import json, re, statistics, sys
work, secs, rate_n, rate_t, out = sys.argv[1:6]
tags = sys.argv[6:]
rate_n = int(rate_n)
rate_t_s = float(rate_t.rstrip("s"))

def dns(tag, who):
    t = open(f"{work}/{tag}.dns_{who}").read()
    g = lambda k: float(re.search(rf"{k}:\s+([0-9.]+)", t).group(1))
    return {"sent": int(g("Queries sent")), "answered": int(g("Queries completed")),
            "lost": int(g("Queries lost")), "seconds": g("Run time \\(s\\)")}

def iperf(tag):
    """Received throughput; a run without a result (its error) counts as 0."""
    text = open(f"{work}/{tag}.iperf").read()
    try:
        j = json.loads(text)
    except ValueError:
        return {"bps": 0.0, "error": text.strip()[-200:] or "no output (timed out)"}
    try:
        return {"bps": j["end"]["sum_received"]["bits_per_second"], "error": j.get("error")}
    except KeyError:
        return {"bps": 0.0, "error": j.get("error", "no result")}

def limiter_stats(tag):
    """The limiter's counters at the end of a run: its integers, and each
    class's as "class NAME": {counter: n}."""
    try:
        j = json.load(open(f"{work}/{tag}.stats.json"))
    except (OSError, ValueError):
        return None
    settings = {"rate_n", "interval_ns", "thresh_ticks", "burst_ticks", "rate_period_ns",
                "threshold_ticks"}
    st = {k: v for k, v in j.items() if isinstance(v, int) and k not in settings}
    for c in j.get("classes", []):
        st["class " + c["class"]] = {k: v for k, v in c.items() if isinstance(v, int)}
    return st

def sum_stats(ss):
    """Counters summed over runs."""
    if not ss or None in ss:
        return None
    out = {}
    for s in ss:
        for k, v in s.items():
            if isinstance(v, dict):
                d = out.setdefault(k, {})
                for kk, vv in v.items():
                    d[kk] = d.get(kk, 0) + vv
            else:
                out[k] = out.get(k, 0) + v
    return out

def rate_text(bps):
    for div, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bps >= div:
            return f"{bps / div:.2f} {unit}"
    return f"{bps:.0f} bit/s"

runs = {}
for tag in tags:
    mode = tag.split(".")[0]
    runs.setdefault(mode, []).append({"tag": tag, "iperf": iperf(tag), "dns_a": dns(tag, "a"),
                                      "dns_b": dns(tag, "b")})

def summary(mode):
    rs = runs[mode]
    tot = lambda who, k: sum(r[who][k] for r in rs)
    # The limiter starts each run fresh: a rate N/T (GCRA) admits a burst of N,
    # then N per T.
    allowed = lambda who: sum(rate_n + rate_n * r[who]["seconds"] / rate_t_s for r in rs)
    return {"runs": len(rs),
            "iperf_bps": [r["iperf"]["bps"] for r in rs],
            "iperf_bps_median": statistics.median(r["iperf"]["bps"] for r in rs),
            "iperf_errors": [r["iperf"]["error"] for r in rs if r["iperf"]["error"]],
            "dns_a_sent": tot("dns_a", "sent"), "dns_a_answered": tot("dns_a", "answered"),
            "dns_a_lost": tot("dns_a", "lost"), "dns_b_lost": tot("dns_b", "lost"),
            "dns_a_seconds": tot("dns_a", "seconds"),
            "dns_a_allowed_by_rate": allowed("dns_a"),
            "dns_b_sent": tot("dns_b", "sent"), "dns_b_answered": tot("dns_b", "answered"),
            "dns_b_seconds": tot("dns_b", "seconds"),
            "dns_b_allowed_by_rate": allowed("dns_b"),
            "limiter_stats": sum_stats([limiter_stats(r["tag"]) for r in rs]) if mode != "bare" else None}

globals_ = open(f"{work}/globals").read().splitlines()
res = {"seconds_per_run": int(secs), "rate": f"{rate_n}/{rate_t}",
       "modes": {m: summary(m) for m in runs}}
for m, s in res["modes"].items():
    if m.startswith("global"):
        s["load_options"] = globals_[int(m[len("global"):])]
bare = res["modes"]["bare"]["iperf_bps_median"]
for m, s in res["modes"].items():
    s["iperf_vs_bare"] = s["iperf_bps_median"] / bare if bare else None
oe = None
if "observe" in res["modes"] and "enforce" in res["modes"]:
    # The enforce run's counters are the program's totals: the observe run's
    # and its own (dropped counts only enforced verdicts).
    so = res["modes"]["observe"]["limiter_stats"]
    se = res["modes"]["enforce"]["limiter_stats"]
    dropped = lambda st: sum(v for k, v in st.items() if not isinstance(v, dict) and
                             (k.startswith("dropped") or k.endswith("_dropped") or k == "map_error"))
    oe = {"observe_would_drop": so["class dns"]["would_drop"],
          "observe_dropped": dropped(so) + so["class dns"]["dropped"],
          "observe_dns_lost": res["modes"]["observe"]["dns_a_lost"] + res["modes"]["observe"]["dns_b_lost"],
          "observe_dns_a_sent": res["modes"]["observe"]["dns_a_sent"],
          "enforce_dropped": se["class dns"]["dropped"] - so["class dns"]["dropped"],
          "enforce_would_drop": se["class dns"]["would_drop"] - so["class dns"]["would_drop"],
          "enforce_dns_a_sent": res["modes"]["enforce"]["dns_a_sent"],
          "enforce_dns_a_lost": res["modes"]["enforce"]["dns_a_lost"]}
    oe["would_drop_vs_dropped"] = (oe["observe_would_drop"] / oe["enforce_dropped"]
                                   if oe["enforce_dropped"] else None)
    res["observe_then_enforce"] = oe
if "class" in res["modes"]:
    # Each round's class run against its bare run (adjacent in time).
    pairs = list(zip(res["modes"]["bare"]["iperf_bps"], res["modes"]["class"]["iperf_bps"]))
    res["modes"]["class"]["iperf_pair_ratios"] = [c / b if b else None for b, c in pairs]
if out:
    with open(out, "w") as f:
        json.dump(res, f, indent=1)

label = {"bare": "(a) bare XDP_PASS",
         "class": f"(c) limiter, [class dns] {rate_n}/{rate_t}, B exempt"}
for m, s in res["modes"].items():
    if m.startswith("global"):
        label[m] = "(b) limiter, " + s["load_options"].replace("--backend table ", "")
width = max(40, max(len(v) for v in label.values()) + 4)
print()
print(f"{'run':<{width}} {'iperf3 from A':>22} {'DNS answered, A':>18} {'DNS answered, B':>18}")
for m in ["bare"] + sorted(k for k in res["modes"] if k.startswith("global")) + ["class"]:
    if m not in res["modes"] or m in ("observe", "enforce"):
        continue
    s = res["modes"][m]
    tp = f"{rate_text(s['iperf_bps_median'])} ({100 * s['iperf_vs_bare']:.0f} %)"
    a = f"{s['dns_a_answered'] / s['dns_a_seconds']:.1f}/s ({100 * s['dns_a_answered'] / max(1, s['dns_a_sent']):.0f} %)"
    b = f"{s['dns_b_answered'] / s['dns_b_seconds']:.1f}/s ({100 * s['dns_b_answered'] / max(1, s['dns_b_sent']):.0f} %)"
    print(f"{label[m] + (' x' + str(s['runs']) if s['runs'] > 1 else ''):<{width}} {tp:>22} {a:>18} {b:>18}")
print()
print(f"iperf3: median of the runs' received throughput, and its share of the bare runs' median;")
print(f"DNS: answered per second of dnsperf's run time (answered share of the {int(res['modes']['bare']['dns_a_sent'] / res['modes']['bare']['dns_a_seconds'] + 0.5)}/s sent).")
print(f"A rate of {rate_n}/{rate_t} from a fresh start admits a burst of {rate_n}, then {rate_n} per {rate_t}.")
for m, s in res["modes"].items():
    for e in s["iperf_errors"]:
        print(f"note: iperf3 in a {m} run: {e}")
if oe:
    print()
    print(f"Observe, then enforce (dnsperf from A and B alone, {secs} s each; the class's file with")
    print(f"'mode = observe' in [class dns], then 'xdp-pacer set --config' with 'mode = enforce'):")
    print(f"  observing: A sent {oe['observe_dns_a_sent']}, the class judged {oe['observe_would_drop']} to drop (would_drop);"
          f" dropped {oe['observe_dropped']}, dnsperf lost {oe['observe_dns_lost']}")
    print(f"  enforcing: A sent {oe['enforce_dns_a_sent']}, the class dropped {oe['enforce_dropped']};"
          f" dnsperf lost {oe['enforce_dns_a_lost']} of A's")
    if oe["would_drop_vs_dropped"] is not None:
        print(f"  would-drop while observing / drops while enforcing: {oe['would_drop_vs_dropped']:.3f}")
PY
