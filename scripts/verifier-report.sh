#!/usr/bin/env bash
# The kernel verifier's processed instructions for each configuration in
# tests/qemu_configs, on Debian's 6.1 and 6.12 kernels (booted under qemu,
# scripts/qemu-boot.sh) and on this machine's kernel, as a Markdown table;
# then every program variant (the stages it carries) of every backend.
# A kernel refuses a program past 1 000 000; a change that nears it shows
# here before it lands.
#   scripts/verifier-report.sh [--write FILE]
# --write replaces the generated section of FILE (between its
# "verifier-report" markers) instead of printing the table.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out=
if [ "${1:-}" = --write ]; then
	out=${2:?usage: scripts/verifier-report.sh [--write FILE]}
	grep -q '<!-- verifier-report start -->' "$out" ||
		{ echo "verifier-report: $out has no '<!-- verifier-report start -->' marker" >&2; exit 1; }
fi
[ "$(id -u)" -eq 0 ] || { echo "verifier-report: needs root (namespaces, XDP)" >&2; exit 1; }
make -s -j"$(nproc)" BUILD="$BUILD" bpf cli tests >&2
work=$(mktemp -d)
ns="vreport-$$"
cleanup() {
	if [ -e "/run/netns/$ns" ]; then
		rm -rf "/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$ns")"
		ip netns del "$ns"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

kernels=()
for series in 6.1 6.12; do
	scripts/qemu-boot.sh "$series" tests/qemu_guest.sh report >"$work/$series" 2>&1 || true
	rel=$(sed -n 's/.*guest: Linux \([^,]*\),.*/\1/p' "$work/$series" | head -1)
	[ -n "$rel" ] || { echo "verifier-report: Linux $series did not boot:" >&2; tail -5 "$work/$series" >&2; exit 1; }
	kernels+=("$series:$rel")
done
ip netns add "$ns"
mkdir "$work/host-dir"
cp tests/qemu_configs "$work/host-dir/configs"
nsenter --net="/run/netns/$ns" env PACER_DIR="$work/host-dir" IP="$(command -v ip)" \
	PATH="$PWD/$BUILD:$PWD/$BUILD/tests/tools:$PATH" sh tests/qemu_guest.sh report >"$work/host" 2>&1 || true
kernels+=("host:$(uname -r)")

{
	printf '| configuration | load options |'
	for k in "${kernels[@]}"; do printf ' %s |' "${k#*:}"; done
	printf '\n|---|---|'
	for k in "${kernels[@]}"; do printf '%s' '---:|'; done
	printf '\n'
	while read -r name _ opts; do
		case "$name" in '' | \#*) continue ;; esac
		printf '| %s | `%s` |' "$name" "${opts:-(defaults)}"
		for k in "${kernels[@]}"; do
			n=$(awk -v c="$name" '$1 == "insns" && $2 == c { print $3 }' "$work/${k%%:*}")
			grep -q "^FAIL - $name: load failed" "$work/${k%%:*}" && n="refused"
			printf ' %s |' "${n:-?}"
		done
		printf '\n'
	done <tests/qemu_configs
	# Every program variant of every backend (tests/qemu_guest.sh's "vinsns" lines).
	printf '\n| stages | backend |'
	for k in "${kernels[@]}"; do printf ' %s |' "${k#*:}"; done
	printf '\n|---|---|'
	for k in "${kernels[@]}"; do printf '%s' '---:|'; done
	printf '\n'
	awk '$1 == "vinsns" { print $3, $2 }' "$work/${kernels[0]%%:*}" | while read -r stages backend; do
		printf '| %s | %s |' "$stages" "$backend"
		for k in "${kernels[@]}"; do
			n=$(awk -v b="$backend" -v s="$stages" '$1 == "vinsns" && $2 == b && $3 == s { print $4 }' "$work/${k%%:*}")
			printf ' %s |' "${n:-?}"
		done
		printf '\n'
	done
} >"$work/table"

if [ -z "$out" ]; then
	cat "$work/table"
	exit 0
fi
awk -v table="$work/table" '
	/<!-- verifier-report start -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
	/<!-- verifier-report end -->/ { skip = 0 }
	!skip' "$out" >"$work/new"
cat "$work/new" >"$out"
echo "verifier-report: wrote $out" >&2
