#!/usr/bin/env bash
# Per-packet cost of the XDP program by BPF_PROG_TEST_RUN (`bpftool prog
# run ... repeat`): the kernel runs it on one frame many times on one CPU
# and reports the mean, free of the veth and generator noise of
# scripts/bench.sh, so small differences between two builds show.  The
# frame is one IPv4 source, so after the first run every run is a source
# seen within the interval: the drop path, the one a flood mostly takes.
#   scripts/bench-testrun.sh [--compare-cli PATH | --sampling 1/M] [--rounds N] [--repeat N]
#                            [--classes] [--observe] [--sources N]
#   TESTRUN_CONFIGS='--placement shared;--placement percpu' picks the configurations.
# With --compare-cli, each configuration is loaded by PATH (a build of
# another tree, "base") and by this tree's CLI alternately, round by round;
# the table gives each median and their ratio.  --classes measures instead
# the shared sketch with no classes, with 1, 8, 32 and 256 classes of which
# the frame (UDP to port 2000) fits only the last (and 256 of which it fits
# only the first: the compiled classifier's cost must not depend on it),
# and with 10 000 exempt prefixes the source is not on (tests/tools/classes_fill writes them
# after load): the classification's cost with the pacing held the same.
# With --compare-cli too, PATH must be a build that has the class maps.
# --observe measures instead the shared sketch and table, each enforcing
# and in observe mode (--mode observe: the same judgement and state, the
# drop counted as would-drop and passed), round by round, and adds their
# ratio (observe / enforce, the rounds' median of ratios); with --sources
# for both paths (only the drop path has a verdict to observe).
# --sources N measures instead both paths of a flood, one run per frame
# over N sources of their own (tests/tools/testrun_sources: N new sources
# each admitted, then the same N each dropped, 5 times per measurement),
# with the state at --width 65536 so it stays in the caches: the
# admission's cost, which the one-source frame never reaches, beside the
# drop's.  Each run's time includes the kernel's clock reads around it.
# XDP_PACER_VARIANT=all measures every configuration with every stage
# (the program before variants; design.md, Program variants).
# --sampling 1/M compares instead, round by round, each configuration with
# packet sampling off ("base") and on at 1/M as `top` and `events` switch
# it on (`set --sample-packets 1/M`; "this"): what sampling costs a packet.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
new=$PWD/$BUILD/xdp-pacer base='' rounds=5 repeat=3000000 classes='' sources='' sampling='' observe=''
while [ $# -gt 0 ]; do
	case "$1" in
	--compare-cli) base=$(realpath "${2:?--compare-cli needs a path}"); shift 2 ;;
	--sampling) sampling=${2:?--sampling needs 1/M}; shift 2
		case $sampling in 1/[1-9]*) ;; *) echo "bench-testrun: --sampling: '$sampling' is not 1/M" >&2; exit 2 ;; esac ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--repeat) repeat=${2:?}; shift 2 ;;
	--classes) classes=1; shift ;;
	--observe) observe=1; shift ;;
	--sources) sources=${2:?--sources needs a count}; shift 2
		case $sources in '' | *[!0-9]* | 0* | ????????*) echo "bench-testrun: --sources: '$sources' is not a count from 1 to 1000000" >&2; exit 2 ;; esac
		[ "$sources" -le 1000000 ] || { echo "bench-testrun: --sources: '$sources' is not a count from 1 to 1000000" >&2; exit 2; } ;;
	*) echo "bench-testrun: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-testrun: needs root (XDP, BPF_PROG_TEST_RUN)" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base" ] || { echo "bench-testrun: --compare-cli: '$base' is not executable" >&2; exit 2; }
[ -z "$classes" ] || [ -z "$sources" ] || { echo "bench-testrun: --classes and --sources measure different things: pick one" >&2; exit 2; }
[ -z "$sampling" ] || [ -z "$base" ] || { echo "bench-testrun: --sampling compares this build with itself: no --compare-cli" >&2; exit 2; }
[ -z "$sampling" ] || base=$new
[ -z "$classes" ] || [ -z "$observe" ] || { echo "bench-testrun: --classes and --observe measure different things: pick one" >&2; exit 2; }
make -s -j"$(nproc)" BUILD="$BUILD" cli "$BUILD/tests/tools/classes_fill" "$BUILD/tests/tools/testrun_sources"
configs=("--placement shared" "--placement percpu" "--backend table --placement shared"
	 "--backend table --placement percpu" "--backend dense --placement shared"
	 "--backend dense --placement percpu")
# A configuration's options, then after " + " what classes_fill writes once it is loaded.
[ -z "$classes" ] || configs=("--placement shared" "--placement shared + --classes 1"
	"--placement shared + --classes 8" "--placement shared + --classes 32"
	"--placement shared + --classes 256" "--placement shared + --classes 256 --first"
	"--placement shared + --exempt 10000")
# Observe mode beside each enforcing configuration (pairs: enforce, then observe).
[ -z "$observe" ] || configs=("--placement shared" "--placement shared --mode observe"
	"--backend table --placement shared" "--backend table --placement shared --mode observe")
# TESTRUN_CONFIGS='A;B': these configurations instead (load options, ';' between them).
[ -z "${TESTRUN_CONFIGS:-}" ] || IFS=';' read -ra configs <<<"$TESTRUN_CONFIGS"
ns="bench-testrun-$$"
work=$(mktemp -d)
cleanup() {
	if [ -e "/run/netns/$ns" ]; then
		rm -rf "/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$ns")"
		ip netns del "$ns"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
in_ns() { nsenter --net="/run/netns/$ns" "$@"; }
ip netns add "$ns"
in_ns ip link add tr0 type veth peer name tr1
in_ns ip link set tr0 up && in_ns ip link set tr1 up
# Ethernet, IPv4 10.1.2.3 -> 10.9.9.9, UDP with 6 bytes.
printf '\x02\x02\x02\x02\x02\x02\x04\x04\x04\x04\x04\x04\x08\x00\x45\x00\x00\x22\x00\x00\x00\x00\x40\x11\x00\x00\x0a\x01\x02\x03\x0a\x09\x09\x09\x03\xe8\x07\xd0\x00\x0e\x00\x00xxxxxx' >"$work/frame"

builds=(new)
[ -n "$base" ] && builds=(base new)
for round in $(seq "$rounds"); do
	for i in "${!configs[@]}"; do
		for b in "${builds[@]}"; do
			cli=$new; [ "$b" = base ] && cli=$base
			opts=${configs[$i]%% + *} fill=
			[ "$opts" = "${configs[$i]}" ] || fill=${configs[$i]#* + }
			[ -z "$sources" ] || opts="$opts --width 65536"
			# classes_fill writes the maps as set would, but cannot swap the program
			# variant as set does: load the variant set would swap in.
			# An XDP_PACER_VARIANT given to this script is carried as well (all: every
			# stage, the program before variants).
			stages=${XDP_PACER_VARIANT:-}
			case "$fill" in *--classes*) stages=${stages:+$stages,}classes ;; *--exempt*) stages=${stages:+$stages,}lists ;; esac
			case "$stages" in *all*) stages=all ;; esac
			# shellcheck disable=SC2086 # the options are words
			in_ns env XDP_PACER_VARIANT="$stages" "$cli" load tr1 $opts >/dev/null
			# shellcheck disable=SC2086
			[ -z "$fill" ] || "$PWD/$BUILD/tests/tools/classes_fill" \
				"/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$ns")/tr1" $fill
			[ -z "$sampling" ] || [ "$b" = base ] || in_ns "$cli" set tr1 --sample-packets "$sampling" >/dev/null
			id=$(in_ns ip link show tr1 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
			if [ -n "$sources" ]; then
				read -r admit_ns drop_ns admitted dropped < <("$PWD/$BUILD/tests/tools/testrun_sources" "$id" "$sources" 5)
				in_ns "$cli" unload tr1 >/dev/null
				echo "$admit_ns" >>"$work/$b.$i.admit"
				echo "$drop_ns" >>"$work/$b.$i.drop"
				echo "round $round: ${configs[$i]} ($b): admission $admit_ns ns, drop $drop_ns ns ($admitted admitted, $dropped dropped)" >&2
				continue
			fi
			ns_per=$(bpftool prog run id "$id" data_in "$work/frame" repeat "$repeat" |
				sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p')
			in_ns "$cli" unload tr1 >/dev/null
			echo "$ns_per" >>"$work/$b.$i"
			echo "round $round: ${configs[$i]} ($b): $ns_per ns" >&2
		done
	done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# observe_ratios SUFFIX LABEL: with --observe, each pair's observe / enforce (this build's
# runs), the median of the rounds' ratios and their range.
observe_ratios() {
	[ -n "$observe" ] || return 0
	local i r
	echo
	echo "| configuration | path | observe / enforce (median of the rounds' ratios) | rounds' range |"
	echo "|---|---|---:|---|"
	for i in 0 2; do
		r=$(paste "$work/new.$((i + 1))$1" "$work/new.$i$1" | awk '{ print $1 / $2 }' | sort -n |
			awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			      printf "%.3f | %.3f-%.3f", m, v[1], v[NR] }')
		echo "| \`${configs[$i]}\` | $2 | $r |"
	done
}
if [ -n "$sources" ]; then
	echo "BPF_PROG_TEST_RUN, $sources sources of their own per pass (each admitted, then each dropped), --width 65536, median of $rounds rounds, kernel $(uname -r)"
	if [ -n "$base" ]; then
		echo "| load options | path | base ns/packet | this ns/packet | this / base | rounds' this / base |"
		echo "|---|---|---:|---:|---:|---|"
	else
		echo "| load options | path | ns/packet |"
		echo "|---|---|---:|"
	fi
	for i in "${!configs[@]}"; do
		for path in admit drop; do
			label=admission; [ "$path" = drop ] && label=drop
			n=$(median "$work/new.$i.$path")
			if [ -n "$base" ]; then
				b=$(median "$work/base.$i.$path")
				range=$(paste "$work/new.$i.$path" "$work/base.$i.$path" |
					awk '{ r = $1 / $2; lo = (NR == 1 || r < lo) ? r : lo; hi = (NR == 1 || r > hi) ? r : hi }
					     END { printf "%.2f-%.2f", lo, hi }')
				echo "| \`${configs[$i]}\` | $label | $b | $n | $(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.3f", n / b }') | $range |"
			else
				echo "| \`${configs[$i]}\` | $label | $n |"
			fi
		done
	done
	observe_ratios .admit admission
	observe_ratios .drop drop
	exit 0
fi
echo "BPF_PROG_TEST_RUN, one seen IPv4 source (drop path), $repeat runs per measurement, median of $rounds rounds, kernel $(uname -r)"
if [ -n "$sampling" ]; then
	echo "| load options | sampling off ns/packet | sampling $sampling ns/packet | on / off | rounds' on / off |"
	echo "|---|---:|---:|---:|---|"
elif [ -n "$base" ]; then
	echo "| load options | base ns/packet | this ns/packet | this / base |"
	echo "|---|---:|---:|---:|"
else
	echo "| load options | ns/packet |"
	echo "|---|---:|"
fi
for i in "${!configs[@]}"; do
	n=$(median "$work/new.$i")
	if [ -n "$sampling" ]; then
		b=$(median "$work/base.$i")
		rs=$(paste "$work/new.$i" "$work/base.$i" | awk '{ printf "%s%.3f", (NR > 1 ? ", " : ""), $1 / $2 }')
		echo "| \`${configs[$i]}\` | $b | $n | $(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.3f", n / b }') | $rs |"
	elif [ -n "$base" ]; then
		b=$(median "$work/base.$i")
		echo "| \`${configs[$i]}\` | $b | $n | $(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.3f", n / b }') |"
	else
		echo "| \`${configs[$i]}\` | $n |"
	fi
done
observe_ratios "" "drop (one source)"
