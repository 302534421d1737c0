#!/usr/bin/env bash
# The multi-core benchmark on a lent many-CPU machine that has none of this
# project's libraries or tools, in one call of a few minutes
# (docs/benchmark.md, "Many cores").  Here, build and pack:
#
#   make bpf cli && scripts/bench-device.sh --bundle [--compare-cli PATH]  # -> build/device
#
# carry build/device with the tree, and there, from the repository root:
#
#   . build/device/env.sh; scripts/bench-device.sh OUT
#
# Sections, each under its own time limit, each independent of the others'
# failure, each writing into OUT as it goes: machine (what the machine is),
# smoke (the CLI loads and unloads a pacer on a veth there), rows (the
# multi-core rows: scripts/bench-multicore.sh over CPU counts 1, 4, 8 and
# all but one, or $CPUS; the programs of $PROGRAMS, comma-separated, else the
# default set), and compare where the bundle holds a second CLI
# (--bundle --compare-cli PATH, e.g. a build of the base branch): the
# pacer programs of this build against it at K = 2, interleaved, in
# OUT/compare/.  OUT gets progress.log (time-stamped lines),
# device-machine.txt, sections.tsv (name, exit status, seconds), and from the rows
# multicore-runs.tsv, multicore-auto.tsv, multicore.md and multicore.json.
# The whole run stays under 7 minutes: $ROWS_SECONDS (280) for the rows,
# $COMPARE_SECONDS (60) for compare,
# $SECONDS_RUN (1) per generator run, $REPS (3) interleaved rounds.
set -u
cd "$(dirname "$0")/.."
HERE=$(pwd)

if [ "${1:-}" = --bundle ]; then
	# Every ELF the run needs, with its libraries; awk and taskset too, which a
	# minimal machine may lack.
	build=${BUILD:-build}
	for f in "$build/xdp-pacer" "$build/bench_drop.bpf.o" "$build/bench_lru.bpf.o"; do
		[ -f "$f" ] || { echo "bench-device: no $f: run make bpf cli first" >&2; exit 2; }
	done
	extra=()
	rm -f "$build/xdp-pacer-base"
	if [ "${2:-}" = --compare-cli ]; then
		[ -f "${3:-}" ] && [ -x "$3" ] ||
			{ echo "bench-device: --compare-cli: '${3:-}' is not an executable file" >&2; exit 2; }
		# its own name: the bundle names a program's wrapper by its file's name
		cp "$3" "$build/xdp-pacer-base" && extra=("$build/xdp-pacer-base")
	elif [ $# -gt 1 ]; then
		echo "bench-device: --bundle takes only --compare-cli PATH" >&2
		exit 2
	fi
	exec "${DEVICE_BUNDLE:-../shared/tools/device-bundle.sh}" "$build/device" "$build/xdp-pacer" \
		"$build/bench_drop.bpf.o" "$build/bench_lru.bpf.o" "${extra[@]}" \
		"$(readlink -f "$(command -v taskset)")" "$(readlink -f "$(command -v awk)")"
fi

[ $# -eq 1 ] || { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
OUT=$1
mkdir -p "$OUT" || { echo "bench-device: cannot make $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/progress.log
T0=$(date +%s)

log() { echo "$(date -u +%H:%M:%S) +$(($(date +%s) - T0))s bench-device: $*" | tee -a "$LOG" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		log "not root: again under sudo"
		exec sudo -n env PATH="$PATH" LIBXDP_OBJECT_PATH="${LIBXDP_OBJECT_PATH:-}" \
			BUNDLE="${BUNDLE:-}" CPUS="${CPUS:-}" REPS="${REPS:-}" SECONDS_RUN="${SECONDS_RUN:-}" \
			ROWS_SECONDS="${ROWS_SECONDS:-}" COMPARE_SECONDS="${COMPARE_SECONDS:-}" PROGRAMS="${PROGRAMS:-}" "$0" "$OUT"
	fi
	log "needs root (namespaces, XDP, BPF statistics), and sudo -n is not available"
	exit 1
fi

# The bundle: where `. build/device/env.sh` put its bin/ (first on PATH), else build/device.
cli=$(command -v xdp-pacer 2>/dev/null)
BUNDLE=${BUNDLE:-}
[ -z "$BUNDLE" ] && [ -n "$cli" ] && BUNDLE=$(cd "$(dirname "$cli")/.." && pwd)
BUNDLE=${BUNDLE:-$HERE/build/device}
if [ ! -x "$BUNDLE/bin/xdp-pacer" ]; then
	log "no bundle at $BUNDLE (bin/xdp-pacer): pack it with scripts/bench-device.sh --bundle and run . build/device/env.sh"
	exit 1
fi
export PATH="$BUNDLE/bin:$PATH" LIBXDP_OBJECT_PATH=${LIBXDP_OBJECT_PATH:-$BUNDLE/xdpobj}
# Bundled programs are named by their file (mawk); the scripts call awk.
mkdir -p "$OUT/.bin"
for pair in awk:mawk awk:gawk; do
	name=${pair%%:*} file=${pair#*:}
	if ! command -v "$name" >/dev/null 2>&1 && [ -x "$BUNDLE/bin/$file" ]; then
		printf '#!/bin/sh\nexec "%s" "$@"\n' "$BUNDLE/bin/$file" >"$OUT/.bin/$name"
		chmod +x "$OUT/.bin/$name"
	fi
done
export PATH="$OUT/.bin:$PATH"
export CLI=$BUNDLE/bin/xdp-pacer OBJDIR=$BUNDLE/files/build
mountpoint -q /sys/fs/bpf 2>/dev/null || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true

printf 'section\texit\tseconds\n' >"$OUT/sections.tsv"
# section NAME LIMIT COMMAND...: runs COMMAND under a hard limit (TERM, then KILL 10 s later).
section() {
	local name=$1 limit=$2 t rc
	shift 2
	t=$(date +%s)
	log "section $name: start (limit ${limit} s)"
	# bash -c: COMMAND may be one of the functions below (exported)
	timeout -k 10 "$limit" bash -c '"$@"' section "$@" 2>&1 | while IFS= read -r line; do
		echo "$(date -u +%H:%M:%S) [$name] $line"
	done | tee -a "$LOG" >&2
	rc=${PIPESTATUS[0]}
	printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - t))" >>"$OUT/sections.tsv"
	log "section $name: exit $rc$([ "$rc" -eq 124 ] && echo ' (time limit)') after $(($(date +%s) - t)) s"
	return 0
}

machine() {
	{
		echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
		echo "cpus online: $(cat /sys/devices/system/cpu/online), this process: $(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)"
		echo "kernel: $(uname -r)"
		for d in /sys/devices/system/cpu/cpu0/cache/index*; do
			echo "cache L$(cat "$d/level") $(cat "$d/type"): $(cat "$d/size"), shared by CPUs $(cat "$d/shared_cpu_list")"
		done
		echo "numa nodes: $(cat /sys/devices/system/node/online 2>/dev/null || echo unknown)"
		echo "memory: $(awk '/^MemTotal/ { print $2 " kB" }' /proc/meminfo)"
		echo "bpf_stats_enabled: $(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo absent)"
		echo "tools: $(for t in ip bpftool nsenter taskset awk timeout xdp-pacer; do printf '%s=%s ' "$t" "$(command -v "$t" || echo MISSING)"; done)"
		echo "xdp-pacer: $(xdp-pacer --version 2>&1 | head -1)"
	} | tee "$OUT/device-machine.txt"
}

# One load, status and unload of a pacer on a veth of two queues: the CLI works here.
smoke() {
	local ns=xpd-rx-$$ nt=xpd-tx-$$ ir=xpdr$$ it=xpdt$$ rc=0
	ip netns add "$ns" && ip netns add "$nt" &&
		ip link add "$ir" netns "$ns" numtxqueues 2 numrxqueues 2 type veth peer name "$it" \
			netns "$nt" numtxqueues 2 numrxqueues 2 &&
		nsenter --net="/run/netns/$ns" ip link set "$ir" up &&
		nsenter --net="/run/netns/$nt" ip link set "$it" up &&
		nsenter --net="/run/netns/$ns" xdp-pacer load "$ir" &&
		nsenter --net="/run/netns/$nt" xdp-pacer gen "$it" --count 100000 --dist spoofed --json &&
		nsenter --net="/run/netns/$ns" xdp-pacer stats "$ir" --json || rc=1
	nsenter --net="/run/netns/$ns" xdp-pacer unload "$ir" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	ip netns del "$nt" 2>/dev/null
	return $rc
}

export -f machine smoke
export OUT

ncpus=$(awk '/^Cpus_allowed_list:/ { n = 0; m = split($2, r, ","); for (i = 1; i <= m; i++) { if (split(r[i], ab, "-") == 2) n += ab[2] - ab[1] + 1; else n++ } print n }' /proc/self/status)
if [ -z "${CPUS:-}" ]; then
	# All but one CPU first (the orchestration keeps one), then 1, 8, 4: the rows that
	# matter most come first should the time run out.
	CPUS=
	for k in $((ncpus - 1)) 1 8 4; do
		[ "$k" -ge 1 ] && [ "$k" -lt "$ncpus" ] || continue
		case ",$CPUS," in *",$k,"*) continue ;; esac
		CPUS=${CPUS:+$CPUS,}$k
	done
	CPUS=${CPUS:-1}
fi
log "out $OUT; bundle $BUNDLE; $ncpus CPUs; rows at K = $CPUS"

section machine 30 machine
section smoke 60 smoke
section rows "$((${ROWS_SECONDS:-280} + 40))" scripts/bench-multicore.sh --cpus "$CPUS" \
	--seconds "${SECONDS_RUN:-1}" --reps "${REPS:-3}" --out "$OUT" --deadline "${ROWS_SECONDS:-280}" \
	${PROGRAMS:+--programs "$PROGRAMS"}
# A section cut off by its limit rendered nothing: render what it measured.
if [ ! -s "$OUT/multicore.md" ] && [ -s "$OUT/multicore-runs.tsv" ]; then
	section render 30 scripts/bench-multicore.sh --render "$OUT"
fi
if [ -x "$BUNDLE/bin/xdp-pacer-base" ] && [ "$ncpus" -ge 2 ]; then
	section compare "$((${COMPARE_SECONDS:-60} + 30))" scripts/bench-multicore.sh --cpus 2 \
		--programs pacer-percpu,pacer-shared,table-percpu,table-shared --workloads spoofed,zipf-1m \
		--seconds 0.5 --reps "${REPS:-3}" --compare-cli "$BUNDLE/bin/xdp-pacer-base" \
		--out "$OUT/compare" --deadline "${COMPARE_SECONDS:-60}"
	if [ ! -s "$OUT/compare/multicore.md" ] && [ -s "$OUT/compare/multicore-runs.tsv" ]; then
		section render-compare 30 scripts/bench-multicore.sh --render "$OUT/compare"
	fi
fi
log "done in $(($(date +%s) - T0)) s: $(awk -F'\t' 'NR > 1 { printf "%s %s  ", $1, ($2 == 0 ? "ok" : "exit " $2) }' "$OUT/sections.tsv")"
rm -rf "$OUT/.bin"
[ -s "$OUT/multicore.md" ] && cat "$OUT/multicore.md"
[ -s "$OUT/compare/multicore.md" ] && sed -n '/^Against/,$p' "$OUT/compare/multicore.md"
exit 0
