#!/usr/bin/env bash
# The multi-core rows of the benchmark (docs/benchmark.md, "Many cores").  For
# each K of --cpus: a veth pair of K queues between two namespaces made here,
# `xdp-pacer gen` with K threads pinned to the last K CPUs this process may
# use, and XDP receiving on the same K CPUs (a veth hands a generated frame to
# the queue numbered by the sending CPU and runs that queue's NAPI there).
# One receiving program at a time on a fresh attachment, in interleaved rounds
# (the order rotated per round); ns per packet from the kernel's BPF
# statistics (run_time_ns / run_cnt of the attached program, as bench.py
# measures), Mpps received (run_cnt / seconds generated).  Bash, awk and the
# project's own tools only (no Python): it also runs from a device bundle on
# a machine that has nothing else (scripts/bench-device.sh).
#
#   scripts/bench-multicore.sh [--cpus 1,4,8,15] [--seconds S] [--reps N]
#       [--programs A,B] [--workloads spoofed,zipf-1m] [--out DIR] [--deadline S]
#       [--compare-cli PATH]
#   scripts/bench-multicore.sh --render DIR     # the table again from DIR's runs
#
# Writes, as it goes: DIR/multicore-runs.tsv (one line per generator run),
# DIR/multicore-auto.tsv (what --placement auto picks by cost at each K), and
# at the end (or on --render) DIR/multicore.md and DIR/multicore.json.
# --deadline S: stop starting runs S seconds after the start; what was
# measured is rendered.  --compare-cli PATH: every selected pacer program
# also loaded by PATH (a build of another tree) as NAME@base, next to NAME
# in each round; the table then gives NAME over NAME@base.  Progress on stderr, one time-stamped line per run.
# Needs root.  The environment may name the tools: CLI (xdp-pacer), OBJDIR
# (bench_drop.bpf.o and bench_lru.bpf.o; default the build directory).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CLI=${CLI:-$BUILD/xdp-pacer}
OBJDIR=${OBJDIR:-$BUILD}

CPUS_ARG=1,2
SECONDS_RUN=1
REPS=3
PROGRAMS_ARG=
WORKLOADS_ARG=
OUT=$BUILD/bench/multicore
DEADLINE=0
RENDER_ONLY=
BASE_CLI=

# The configurations the class and list rows load (written below, once root).
CONFDIR=${TMPDIR:-/tmp}/xdp-pacer-multicore.$$

# Program name -> how it is attached: "obj FILE" or "cli LOAD-ARGS".
declare -A HOW=(
	[bare-drop]="obj bench_drop.bpf.o"
	[lru-exact]="obj bench_lru.bpf.o"
	[pacer-shared]="cli --placement shared"
	[pacer-percpu]="cli --placement percpu"
	[table-shared]="cli --backend table --placement shared"
	[table-percpu]="cli --backend table --placement percpu"
	[pacer-shared-budget]="cli --placement shared --budget 100000/1s"
	[pacer-shared-budget-open]="cli --placement shared --budget 4294967296/1s"
	[pacer-shared-classes8]="cli --placement shared --config $CONFDIR/classes8.conf"
	[pacer-shared-exempt10k]="cli --placement shared --config $CONFDIR/exempt10k.conf"
)
ALL_PROGRAMS=(bare-drop lru-exact pacer-shared pacer-percpu table-shared table-percpu
	pacer-shared-budget)
# Selectable with --programs, not in the default set: each is also shown over
# sketch shared, paired by round.
EXTRA_PROGRAMS=(pacer-shared-budget-open pacer-shared-classes8 pacer-shared-exempt10k)
# Workload name -> generator arguments (bench.py's WORKLOADS).
declare -A WL=(
	[spoofed]="--dist spoofed"
	[zipf-1m]="--dist zipf --sources 1000000 --zipf 1.0 --src-base 10.64.0.0"
)
ALL_WORKLOADS=(spoofed zipf-1m)
DST=10.211.0.1

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bench-multicore: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*) set -- "${opt%%=*}" "${opt#*=}" "${@:2}"; continue ;;
	-h | --help) usage; exit 0 ;;
	--cpus | --seconds | --reps | --programs | --workloads | --out | --deadline | --render | \
		--compare-cli)
		[ $# -ge 2 ] || die "$opt needs a value"
		case $opt in
		--cpus) CPUS_ARG=$2 ;;
		--seconds) SECONDS_RUN=$2 ;;
		--reps) REPS=$2 ;;
		--programs) PROGRAMS_ARG=$2 ;;
		--workloads) WORKLOADS_ARG=$2 ;;
		--out) OUT=$2 ;;
		--deadline) DEADLINE=$2 ;;
		--render) RENDER_ONLY=1; OUT=$2 ;;
		--compare-cli) BASE_CLI=$2 ;;
		esac
		shift 2 ;;
	*) die "unknown argument '$opt' (--help lists the options)" ;;
	esac
done

[[ $SECONDS_RUN =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v s="$SECONDS_RUN" 'BEGIN { exit !(s >= 0.1 && s <= 60) }' ||
	die "invalid value '$SECONDS_RUN' for --seconds: a number of seconds from 0.1 to 60"
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 100 ] ||
	die "invalid value '$REPS' for --reps: a whole number from 1 to 100"
[[ $DEADLINE =~ ^[0-9]+$ ]] || die "invalid value '$DEADLINE' for --deadline: whole seconds (0: none)"

# The rendering: medians per (K, workload, program) from the runs, the issue's table shape.
render() {
	local dir=$1 runs=$1/multicore-runs.tsv auto=$1/multicore-auto.tsv machine=$1/machine.txt
	[ -s "$runs" ] || { echo "bench-multicore: no runs in $runs to render" >&2; return 1; }
	[ -f "$auto" ] || : >"$auto"
	awk -F'\t' -v machine_file="$machine" -v mdout="$dir/multicore.md" -v jsout="$dir/multicore.json" '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function cell(k, w, p) { return (k SUBSEP w SUBSEP p) in ns ? \
		sprintf("%.0f (%.1f)", median(ns[k, w, p]), median(mpps[k, w, p])) : "" }
	function jstr(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
	FILENAME ~ /auto.tsv$/ { pick[$1, $2] = $3; why[$1, $2] = $4; next }
	FNR == 1 { next }  # the header
	{
		k = $1; w = $2; p = $3
		ns[k, w, p] = ns[k, w, p] " " $5; mpps[k, w, p] = mpps[k, w, p] " " $6
		by_round[k, w, p, $4] = $5; rounds[k, w] = $4 > rounds[k, w] ? $4 : rounds[k, w]
		runs[k, w, p]++
		if (!(k in seen_k)) { seen_k[k] = 1; ks[++nk] = k }
		if (!(w in seen_w)) { seen_w[w] = 1; ws[++nw] = w }
		nrun++; run[nrun] = $0
	}
	END {
		while ((getline line < machine_file) > 0) mach = mach (mach ? "; " : "") line
		# K ascending
		for (i = 2; i <= nk; i++) for (j = i; j > 1 && ks[j - 1] + 0 > ks[j] + 0; j--) {
			t = ks[j]; ks[j] = ks[j - 1]; ks[j - 1] = t
		}
		print "Multi-core rows: " mach > mdout
		print "" > mdout
		print "ns per packet from the kernel'"'"'s BPF statistics, Mpps received in brackets; the median of the interleaved rounds. auto: the placement `--placement auto` picks by cost at K receiving CPUs where per-CPU placement is exact, that placement'"'"'s cost over the better of the two, and per-CPU over shared (medians of the ratios within a round)." > mdout
		print "" > mdout
		print "| K | workload | bare drop | exact LRU | sketch shared | sketch per-CPU | sketch auto | table shared | table per-CPU | table auto | sketch shared + budget 100k/s |" > mdout
		print "|---|---|---:|---:|---:|---:|---|---:|---:|---|---:|" > mdout
		ncells = 0
		for (a = 1; a <= nk; a++) for (b = 1; b <= nw; b++) {
			k = ks[a]; w = ws[b]
			row = "| " k " | " w
			split("bare-drop lru-exact pacer-shared pacer-percpu sketch table-shared table-percpu table pacer-shared-budget", cols, " ")
			for (c = 1; c <= 9; c++) {
				col = cols[c]
				if (col == "sketch" || col == "table") {
					sh = col == "sketch" ? "pacer-shared" : "table-shared"
					pc = col == "sketch" ? "pacer-percpu" : "table-percpu"
					txt = ""
					if (pick[k, col] ~ /^(percpu|shared)$/ && (k SUBSEP w SUBSEP sh) in ns && (k SUBSEP w SUBSEP pc) in ns) {
						# per-CPU over shared within each round, the median of those
						pairs = ""
						for (r = 1; r <= rounds[k, w]; r++)
							if ((k SUBSEP w SUBSEP sh SUBSEP r) in by_round && (k SUBSEP w SUBSEP pc SUBSEP r) in by_round && by_round[k, w, sh, r] > 0)
								pairs = pairs " " by_round[k, w, pc, r] / by_round[k, w, sh, r]
						if (pairs == "")
							continue
						m = median(pairs)
						# the chosen placement over the better one: 1 if it is the better
						ratio = pick[k, col] == "percpu" ? (m > 1 ? m : 1) : (m < 1 ? 1 / m : 1)
						txt = (pick[k, col] == "percpu" ? "per-CPU" : "shared") sprintf(" (%.2fx; per-CPU/shared %.2f)", ratio, m)
						ncells++; nmet += ratio <= 1.10
						cells[ncells] = sprintf("{\"cpus\": %s, \"workload\": %s, \"structure\": %s, \"auto_picks\": %s, \"percpu_over_shared_paired\": %.4f, \"auto_over_best\": %.4f}", k, jstr(w), jstr(col), jstr(pick[k, col]), m, ratio)
					}
					row = row " | " txt
				} else
					row = row " | " cell(k, w, col)
			}
			print row " |" > mdout
		}
		if (ncells)
			printf "\nauto within 10 %% of the better placement: %d of %d cells.\n", nmet, ncells > mdout
		# Programs over sketch shared, paired by round: the targets of the table, the budget and the classes.
		split("table-shared pacer-shared-budget pacer-shared-budget-open pacer-shared-classes8 pacer-shared-exempt10k", over, " ")
		nover = 0
		for (a = 1; a <= nk; a++) for (b = 1; b <= nw; b++) for (c = 1; c <= 5; c++) {
			k = ks[a]; w = ws[b]; p = over[c]
			if (!((k SUBSEP w SUBSEP p) in ns) || !((k SUBSEP w SUBSEP "pacer-shared") in ns))
				continue
			pairs = ""
			for (r = 1; r <= rounds[k, w]; r++)
				if ((k SUBSEP w SUBSEP p SUBSEP r) in by_round && (k SUBSEP w SUBSEP "pacer-shared" SUBSEP r) in by_round && by_round[k, w, "pacer-shared", r] > 0)
					pairs = pairs " " by_round[k, w, p, r] / by_round[k, w, "pacer-shared", r]
			if (pairs == "")
				continue
			n = split(pairs, pr, " "); lo = hi = pr[1]
			for (i = 2; i <= n; i++) { lo = pr[i] < lo ? pr[i] : lo; hi = pr[i] > hi ? pr[i] : hi }
			over_rows[++nover] = sprintf("| %s | %s | %s | %.0f | %.0f | %.2f [%.2f, %.2f] |", k, w, p, median(ns[k, w, p]), median(ns[k, w, "pacer-shared"]), median(pairs), lo, hi)
			over_json[nover] = sprintf("{\"cpus\": %s, \"workload\": %s, \"program\": %s, \"over_sketch_shared_paired\": %.4f, \"lowest\": %.4f, \"highest\": %.4f}", k, jstr(w), jstr(p), median(pairs), lo, hi)
		}
		if (nover) {
			print "\nOver sketch shared in the same round (the median of the ratios within a round [lowest, highest]): the table, the budget (100k/s: mostly refusals; 2^32/s: never refuses, every admission draws), 8 classes of which the traffic fits the last, 10 000 exempt prefixes the sources miss:\n" > mdout
			print "| K | workload | program | ns/packet | sketch shared ns/packet | over sketch shared |" > mdout
			print "|---|---|---|---:|---:|---:|" > mdout
			for (i = 1; i <= nover; i++) print over_rows[i] > mdout
		}
		# Against the compared build (--compare-cli): NAME over NAME@base, paired by round.
		nbase = 0
		for (key in ns) {
			split(key, kk, SUBSEP)
			if (kk[3] ~ /@base$/ || !((kk[1] SUBSEP kk[2] SUBSEP kk[3] "@base") in ns))
				continue
			pairs = ""
			for (r = 1; r <= rounds[kk[1], kk[2]]; r++)
				if ((kk[1] SUBSEP kk[2] SUBSEP kk[3] SUBSEP r) in by_round && (kk[1] SUBSEP kk[2] SUBSEP kk[3] "@base" SUBSEP r) in by_round && by_round[kk[1], kk[2], kk[3] "@base", r] > 0)
					pairs = pairs " " by_round[kk[1], kk[2], kk[3], r] / by_round[kk[1], kk[2], kk[3] "@base", r]
			if (pairs == "")
				continue
			n = split(pairs, pr, " "); lo = hi = pr[1]
			for (i = 2; i <= n; i++) { lo = pr[i] < lo ? pr[i] : lo; hi = pr[i] > hi ? pr[i] : hi }
			base_rows[++nbase] = sprintf("| %s | %s | %s | %.1f | %.1f | %.3f [%.2f, %.2f] |", kk[1], kk[2], kk[3], median(ns[key]), median(ns[kk[1], kk[2], kk[3] "@base"]), median(pairs), lo, hi)
			base_json[nbase] = sprintf("{\"cpus\": %s, \"workload\": %s, \"program\": %s, \"over_base_paired\": %.4f, \"lowest\": %.4f, \"highest\": %.4f}", kk[1], jstr(kk[2]), jstr(kk[3]), median(pairs), lo, hi)
		}
		if (nbase) {
			print "\nAgainst the compared build (--compare-cli), this build over it, the median of the ratios within a round [lowest, highest]:\n" > mdout
			print "| K | workload | program | ns/packet | ns/packet compared | this / compared |" > mdout
			print "|---|---|---|---:|---:|---:|" > mdout
			for (i = 1; i <= nbase; i++) print base_rows[i] > mdout
		}
		for (key in pick) {
			split(key, kk, SUBSEP)
			autos[++nauto] = sprintf("{\"cpus\": %s, \"structure\": %s, \"picks\": %s, \"why\": %s}", kk[1], jstr(kk[2]), jstr(pick[key]), jstr(why[key]))
		}
		printf "{\"machine\": %s,\n \"runs\": [\n", jstr(mach) > jsout
		for (i = 1; i <= nrun; i++) {
			split(run[i], f, "\t")
			printf "  {\"cpus\": %s, \"workload\": %s, \"program\": %s, \"round\": %s, \"ns_per_packet\": %s, \"received_mpps\": %s, \"received\": %s, \"seconds\": %s, \"sent\": %s}%s\n", f[1], jstr(f[2]), jstr(f[3]), f[4], f[5], f[6], f[7], f[8], f[9], (i < nrun ? "," : "") > jsout
		}
		printf " ],\n \"medians\": [\n" > jsout
		nm = 0
		for (key in ns) nm++
		i = 0
		for (key in ns) {
			split(key, kk, SUBSEP)
			printf "  {\"cpus\": %s, \"workload\": %s, \"program\": %s, \"runs\": %d, \"ns_per_packet\": %.2f, \"received_mpps\": %.3f}%s\n", kk[1], jstr(kk[2]), jstr(kk[3]), runs[key], median(ns[key]), median(mpps[key]), (++i < nm ? "," : "") > jsout
		}
		printf " ],\n \"auto\": [" > jsout
		for (i = 1; i <= nauto; i++) printf "%s\n  %s", (i > 1 ? "," : ""), autos[i] > jsout
		printf "\n ],\n \"auto_against_best\": [" > jsout
		for (i = 1; i <= ncells; i++) printf "%s\n  %s", (i > 1 ? "," : ""), cells[i] > jsout
		printf "\n ],\n \"over_sketch_shared\": [" > jsout
		for (i = 1; i <= nover; i++) printf "%s\n  %s", (i > 1 ? "," : ""), over_json[i] > jsout
		printf "\n ],\n \"against_compared_build\": [" > jsout
		for (i = 1; i <= nbase; i++) printf "%s\n  %s", (i > 1 ? "," : ""), base_json[i] > jsout
		printf "\n ]}\n" > jsout
	}' "$auto" "$runs" || return 1
	cat "$dir/multicore.md"
}

if [ -n "$RENDER_ONLY" ]; then
	render "$OUT"
	exit $?
fi

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, BPF statistics)"
for t in ip bpftool nsenter taskset awk timeout; do
	command -v "$t" >/dev/null 2>&1 || die "needs '$t' on PATH"
done
[ -x "$CLI" ] || CLI=$(command -v "$CLI" 2>/dev/null) || die "no xdp-pacer CLI at '${CLI}'"
for o in bench_drop bench_lru; do
	[ -f "$OBJDIR/$o.bpf.o" ] || die "no $OBJDIR/$o.bpf.o (make bpf, or OBJDIR=)"
done

IFS=, read -r -a PROGS <<<"${PROGRAMS_ARG:-$(IFS=,; echo "${ALL_PROGRAMS[*]}")}"
for p in "${PROGS[@]}"; do
	[ -n "${HOW[$p]:-}" ] || die "--programs: unknown name '$p' (known: ${ALL_PROGRAMS[*]} ${EXTRA_PROGRAMS[*]})"
done
if [ -n "$BASE_CLI" ]; then
	[ -x "$BASE_CLI" ] && [ -f "$BASE_CLI" ] ||
		die "--compare-cli: '$BASE_CLI' is not an executable file"
	twins=()
	for p in "${PROGS[@]}"; do
		twins+=("$p")
		case ${HOW[$p]} in cli\ *) HOW[$p@base]=${HOW[$p]}; twins+=("$p@base") ;; esac
	done
	PROGS=("${twins[@]}")
fi
IFS=, read -r -a WLS <<<"${WORKLOADS_ARG:-$(IFS=,; echo "${ALL_WORKLOADS[*]}")}"
for w in "${WLS[@]}"; do
	[ -n "${WL[$w]:-}" ] || die "--workloads: unknown name '$w' (known: ${ALL_WORKLOADS[*]})"
done

# The CPUs this process may run on, in order.
allowed=()
for r in $(awk '/^Cpus_allowed_list:/ { gsub(",", " ", $2); print $2 }' /proc/self/status); do
	case $r in
	*-*) for ((c = ${r%-*}; c <= ${r#*-}; c++)); do allowed+=("$c"); done ;;
	*) allowed+=("$r") ;;
	esac
done
IFS=, read -r -a KS <<<"$CPUS_ARG"
for k in "${KS[@]}"; do
	[[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] ||
		die "invalid value '$k' in --cpus: a comma-separated list of CPU counts, e.g. 1,4,8,15"
	[ "$k" -le "${#allowed[@]}" ] ||
		die "invalid value '$k' in --cpus: this process may run on ${#allowed[@]} CPUs"
done

RUN=$$
NS_RX=xpm-rx-$RUN NS_TX=xpm-tx-$RUN
IF_RX=xpmr$RUN IF_TX=xpmt$RUN
IF_RX=${IF_RX:0:15} IF_TX=${IF_TX:0:15}
STATS_OLD=
T0=$(date +%s)

log() { echo "$(date -u +%H:%M:%S) bench-multicore: $*" >&2; }
rx() { nsenter --net="/run/netns/$NS_RX" "$@"; }
tx() { nsenter --net="/run/netns/$NS_TX" "$@"; }

remove_pair() {
	rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
	local pins
	pins=/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$NS_RX" 2>/dev/null || echo none)
	rm -rf "$pins/$IF_RX" 2>/dev/null
	rmdir "$pins" 2>/dev/null
	ip netns del "$NS_RX" 2>/dev/null
	ip netns del "$NS_TX" 2>/dev/null
	true
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	remove_pair
	[ -n "$STATS_OLD" ] && echo "$STATS_OLD" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$CONFDIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The class and list rows' configurations.  classes8: seven classes the
# traffic (UDP to port 9) does not fit, then the one it fits, pacing as the
# global default does (1 per 1 s by source): beside sketch shared the
# difference is the classification.  exempt10k: 10 000 /32 prefixes in
# 198.18.0.0/15 (the benchmark's own range for tests), which the sources
# miss but for chance: the lookup's whole cost.
mkdir -p "$CONFDIR" || die "cannot make $CONFDIR"
awk 'BEGIN {
	for (i = 1; i <= 7; i++)
		printf "[class c%d]\nmatch = udp dport %d\ninterval = 1s\n\n", i, 1000 + i
	printf "[class last]\nmatch = udp\ninterval = 1s\n"
}' >"$CONFDIR/classes8.conf"
awk 'BEGIN {
	print "[exempt]"
	for (i = 0; i < 10000; i++) {
		if (i % 20 == 0)
			printf "%ssrc = ", (i ? "\n" : "")
		else
			printf ", "
		printf "198.%d.%d.%d/32", 18 + int(i / 65536), int(i / 256) % 256, i % 256
	}
	print ""
}' >"$CONFDIR/exempt10k.conf"

make_pair() { # queues
	remove_pair
	ip netns add "$NS_RX" && ip netns add "$NS_TX" &&
		ip link add "$IF_RX" netns "$NS_RX" numtxqueues "$1" numrxqueues "$1" type veth \
			peer name "$IF_TX" netns "$NS_TX" numtxqueues "$1" numrxqueues "$1" &&
		rx ip link set "$IF_RX" up && tx ip link set "$IF_TX" up
}

# Until both ends report carrier (a veth drops redirected frames before), at most 5 s.
wait_up() {
	local i
	for ((i = 0; i < 50; i++)); do
		rx ip -o link show dev "$IF_RX" | grep -q 'state UP' &&
			tx ip -o link show dev "$IF_TX" | grep -q 'state UP' && return 0
		sleep 0.1
	done
	return 1
}

prog_id() {
	rx ip -d link show dev "$IF_RX" | awk '{ for (i = 1; i < NF; i++) if ($i ~ /^prog\/xdp/ && $(i + 1) == "id") { print $(i + 2); exit } }'
}

# "run_time_ns run_cnt" of a program (0 0 before its first run).
prog_stats() {
	bpftool prog show id "$1" | awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { print t + 0, c + 0 }'
}

cli_of() { case $1 in *@base) echo "$BASE_CLI" ;; *) echo "$CLI" ;; esac; }

attach() { # program
	local how=${HOW[$1]}
	case $how in
	obj\ *) rx ip link set dev "$IF_RX" xdp obj "$OBJDIR/${how#obj }" sec xdp ;;
	cli\ *) rx "$(cli_of "$1")" load "$IF_RX" ${how#cli } >/dev/null ;;
	esac
}

detach() { # program
	case ${HOW[$1]} in
	obj\ *) rx ip link set dev "$IF_RX" xdp off ;;
	cli\ *) rx "$(cli_of "$1")" unload "$IF_RX" >/dev/null ;;
	esac
}

# One generator run on a fresh attachment; appends a line to the runs file.
one_run() { # K cpulist workload program round
	local k=$1 cpus=$2 w=$3 p=$4 round=$5 id s0 s1 g secs sent
	if ! attach "$p" 2>"$OUT/.err"; then
		log "K=$k $w $p: attach failed: $(head -c 300 "$OUT/.err")"
		detach "$p" 2>/dev/null
		return 1
	fi
	id=$(prog_id)
	if [ -z "$id" ]; then
		log "K=$k $w $p: no XDP program id on $IF_RX"
		detach "$p" 2>/dev/null
		return 1
	fi
	s0=$(prog_stats "$id")
	g=$(timeout -k 5 "$(awk -v s="$SECONDS_RUN" 'BEGIN { print int(s + 30) }')" \
		nsenter --net="/run/netns/$NS_TX" taskset -c "$cpus" "$CLI" gen "$IF_TX" --dst "$DST" \
		--duration "${SECONDS_RUN}s" --threads "$k" --json ${WL[$w]} 2>"$OUT/.err" | tail -1)
	s1=$(prog_stats "$id")
	detach "$p" 2>/dev/null
	secs=$(grep -o '"seconds":[0-9.e+-]*' <<<"$g" | cut -d: -f2)
	sent=$(grep -o '"sent":[0-9]*' <<<"$g" | cut -d: -f2)
	if [ -z "$secs" ]; then
		log "K=$k $w $p: the generator failed: $(head -c 300 "$OUT/.err")"
		return 1
	fi
	awk -v k="$k" -v w="$w" -v p="$p" -v r="$round" -v s0="$s0" -v s1="$s1" -v secs="$secs" \
		-v sent="$sent" 'BEGIN {
		split(s0, a, " "); split(s1, b, " "); n = b[2] - a[2]
		ns = n > 0 ? (b[1] - a[1]) / n : 0
		printf "%s\t%s\t%s\t%s\t%.2f\t%.3f\t%d\t%s\t%s\n", k, w, p, r, ns, n / secs / 1e6, n, secs, sent
	}' >>"$OUT/multicore-runs.tsv"
	log "K=$k round $round $w $p: $(tail -1 "$OUT/multicore-runs.tsv" | cut -f5,6 | awk '{ printf "%s ns/pkt %s Mpps", $1, $2 }')"
}

# What --placement auto picks at K receiving CPUs (the pair has K queues) for each backend.
auto_picks() { # K
	local k=$1 backend out pick why
	for backend in sketch table; do
		out=$(rx "$CLI" load "$IF_RX" --placement auto --backend "$backend" 2>&1)
		rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
		why=$(grep -o 'by cost: [^;]*' <<<"$out" | head -1)
		# Where per-CPU is not exact (veth), load picks shared and gives the cost apart.
		[ -n "$why" ] || why=$(sed -n 's/.*per-CPU would be cheaper here (\(.*\))$/by cost: per-CPU is cheaper: \1/p' <<<"$out" | head -1)
		case $why in
		"by cost: per-CPU"*) pick=percpu ;;
		"by cost: shared"*) pick=shared ;;
		*) pick=unknown; why="load did not say: $(grep -m1 placement <<<"$out")" ;;
		esac
		printf '%s\t%s\t%s\t%s\n' "$k" "$backend" "$pick" "$why" >>"$OUT/multicore-auto.tsv"
		log "K=$k auto ($backend): $pick: $why"
	done
}

mkdir -p "$OUT" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
printf 'cpus\tworkload\tprogram\tround\tns_per_packet\treceived_mpps\treceived\tseconds\tsent\n' \
	>"$OUT/multicore-runs.tsv"
: >"$OUT/multicore-auto.tsv"
{
	echo "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), ${#allowed[@]} CPUs"
	l3=$(for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		[ "$(cat "$d/level" 2>/dev/null)" = 3 ] && cat "$d/size"; done | head -1)
	echo "L3 ${l3:-unknown} (cpu0), kernel $(uname -r)"
	echo "$REPS interleaved rounds of ${SECONDS_RUN} s per cell"
} >"$OUT/machine.txt"

STATS_OLD=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null) || die "no kernel.bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled || die "cannot enable BPF statistics"
log "CPUs ${CPUS_ARG}, programs ${PROGS[*]}, workloads ${WLS[*]}, $REPS x ${SECONDS_RUN} s; out $OUT"

late() { [ "$DEADLINE" -gt 0 ] && [ $(($(date +%s) - T0)) -ge "$DEADLINE" ]; }
failed=0
for k in "${KS[@]}"; do
	if late; then log "deadline reached: K=$k and later not measured"; break; fi
	cpus=$(IFS=,; echo "${allowed[*]: -$k}")
	if ! make_pair "$k"; then
		log "K=$k: cannot make a veth pair of $k queues; skipped"
		failed=1
		continue
	fi
	if ! wait_up; then
		log "K=$k: the veth pair of $k queues did not come up; skipped"
		failed=1
		continue
	fi
	log "K=$k: generator and receive on CPUs $cpus, veth of $k queues"
	# A first run, not counted: warms the path, and shows that frames arrive.
	if attach bare-drop && id=$(prog_id) && [ -n "$id" ]; then
		tx taskset -c "$cpus" "$CLI" gen "$IF_TX" --dst "$DST" --duration 300ms --threads "$k" \
			--dist spoofed >/dev/null 2>&1
		got=$(prog_stats "$id" | cut -d' ' -f2)
		log "K=$k: warm-up run received $got frames"
	fi
	detach bare-drop 2>/dev/null
	auto_picks "$k"
	n=${#PROGS[@]}
	for ((round = 1; round <= REPS; round++)); do
		for w in "${WLS[@]}"; do
			for ((i = 0; i < n; i++)); do
				late && break 3
				p=${PROGS[$(((i + round - 1) % n))]}
				one_run "$k" "$cpus" "$w" "$p" "$round" || failed=1
			done
		done
	done
done
remove_pair
rm -f "$OUT/.err"
render "$OUT" || failed=1
log "done in $(($(date +%s) - T0)) s; runs in $OUT/multicore-runs.tsv"
exit "$failed"
