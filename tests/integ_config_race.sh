#!/usr/bin/env bash
# Integration: a config file replaced while `load --config` and `set --config`
# read it, by a writer renaming complete files over it in a loop (mv, an
# editor's save): every run reads the old file or the new one, whole.  The
# two versions are each valid, but any mix of them puts 10.0.0.0/8 or
# 192.0.2.0/24 on both lists, which is refused (exit 2): so every run must
# succeed, and what set applied is one version's lists.
# (Not in run.sh's background lane: its writer keeps a CPU busy for the
# run, which timing-sensitive scripts beside it would feel.)
. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/xpv-confrace.XXXXXX)
writer=
cleanup() {
	stop_background
	[ -n "$writer" ] && kill "$writer" 2>/dev/null && wait "$writer" 2>/dev/null
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

version() { # which (a|b): 3000 filler prefixes between the two that swap lists
	local first=10.0.0.0/8 last=192.0.2.0/24 i
	[ "$1" = b ] && first=192.0.2.0/24 last=10.0.0.0/8
	printf 'interval = 1s\n[exempt]\nsrc = %s\n' "$first"
	for ((i = 0; i < 3000; i++)); do
		printf 'src = 172.%d.%d.0/24\n' $((16 + i / 256)) $((i % 256))
	done
	printf '[deny]\nsrc = %s\n' "$last"
}
version a >"$WORK/a"
version b >"$WORK/b"
cp "$WORK/a" "$WORK/pacer.conf"
check "a version is $(wc -c <"$WORK/a") bytes: many reads of a stdio buffer" \
	test "$(wc -c <"$WORK/a")" -gt 50000
(
	while :; do
		cp "$WORK/a" "$WORK/new" && mv -f "$WORK/new" "$WORK/pacer.conf"
		cp "$WORK/b" "$WORK/new" && mv -f "$WORK/new" "$WORK/pacer.conf"
	done
) &
writer=$!

# load parses the whole file (lists merged and checked) before it looks for the interface.
bad=0
for ((i = 0; i < 60; i++)); do
	out=$("$CLI" load nosuchif0 --config "$WORK/pacer.conf" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "no such interface 'nosuchif0'" <<<"$out"; then
		bad=$((bad + 1))
		echo "load run $i: exit $rc: $out"
	fi
done
check "load --config, 60 runs under the renaming writer: the file whole every time ($bad not)" \
	test "$bad" -eq 0

if ! setup_pair xcr; then
	not_ok "veth pair"
	finish
	exit
fi
cp "$WORK/a" "$WORK/start.conf"
rx "$CLI" load "$IF_RX" --config "$WORK/start.conf" >/dev/null
check "load a version on a veth" test $? -eq 0
bad=0
for ((i = 0; i < 30; i++)); do
	out=$(rx "$CLI" set "$IF_RX" --config "$WORK/pacer.conf" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		bad=$((bad + 1))
		echo "set run $i: exit $rc: $out"
	fi
done
check "set --config, 30 runs under the renaming writer: the file whole every time ($bad not)" \
	test "$bad" -eq 0
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
writer=
st=$(rx "$CLI" status "$IF_RX")
check "status: one version's lists ($(grep -o 'exempt: .*' <<<"$st"))" \
	grep -q "exempt: 3001 prefixes, deny: 1 prefix$" <<<"$st"
rx "$CLI" unload "$IF_RX" >/dev/null
finish
