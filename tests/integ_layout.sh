#!/usr/bin/env bash
# The source's layering holds: user/ holds main.c and directories only (each
# file in a named layer), no two userspace modules include each other's
# headers, directly or around a circle (tests/tools/include_cycles.py), and
# user/lib's folders by concern keep the Makefile's order (LIB_LAYERS,
# bottom first): a folder's files include only include/, their own folder
# and the folders below it (tests/tools/include_layers.py).  Self-checks
# first: each finder finds what is planted in a copy.
# run.sh: background (no timing of its own; runs beside the rest)
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
WORK=$(mktemp -d /tmp/xpi-layout.XXXXXX)
trap 'stop_background; rm -rf "$WORK"' EXIT

loose=$(find user -maxdepth 1 -type f ! -name main.c -printf '%f ')
check "user/ holds main.c and directories only${loose:+ (loose: $loose)}" test -z "$loose"

out=$(python3 tests/tools/include_cycles.py . 2>&1)
check "no include circle among user/ and include/${out:+: $out}" test -z "$out"

# The finder must be able to fail: a copy where lib/x/a.c includes b.h and b.c a.h.
mkdir -p "$WORK/cycle/user/lib/x" "$WORK/cycle/include"
printf '#include "b.h"\n' >"$WORK/cycle/user/lib/x/a.c"; : >"$WORK/cycle/user/lib/x/a.h"
printf '#include "a.h"\n' >"$WORK/cycle/user/lib/x/b.c"; : >"$WORK/cycle/user/lib/x/b.h"
check "the circle finder reports a planted circle" \
	bash -c "! python3 tests/tools/include_cycles.py '$WORK/cycle' >/dev/null"

# The layer order is the Makefile's, the one its include paths follow.
layers=$(sed -n 's/^LIB_LAYERS *:= *//p' Makefile)
dirs=$(find user/lib -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | xargs)
check "the Makefile orders user/lib's folders (LIB_LAYERS: $layers; folders: $dirs)" \
	test "$(tr ' ' '\n' <<<"$layers" | sort | xargs)" = "$dirs"
# shellcheck disable=SC2086 # one argument per layer
out=$(python3 tests/tools/include_layers.py . $layers 2>&1 | sed -z 's/\n\(.\)/; \1/g; s/\n$//')
check "user/lib's folders include only include/, themselves and those below${out:+: $out}" test -z "$out"

# It must be able to fail: a copy of the tree with one include run up the
# order (the bottom folder's first file includes the top folder's first
# header), and one with a file loose in user/lib.
bottom=${layers%% *} top=${layers##* }
low=$(find "user/lib/$bottom" -name '*.c' | sort | head -1)
high=$(find "user/lib/$top" -name '*.h' -printf '%f\n' | sort | head -1)
cp -r user include "$WORK/"
printf '#include "%s"\n' "$high" >>"$WORK/$low"
# shellcheck disable=SC2086
out=$(python3 tests/tools/include_layers.py "$WORK" $layers 2>&1)
check "the layer check reports a planted backward include ($low -> $high)" \
	grep -q "^$low includes \"$high\": of $top, above $bottom\$" <<<"$out" || printf '#   %s\n' "$out"
cp "$low" "$WORK/$low"
: >"$WORK/user/lib/loose.c"
# shellcheck disable=SC2086
out=$(python3 tests/tools/include_layers.py "$WORK" $layers 2>&1)
check "the layer check reports a file loose in user/lib" \
	grep -q '^user/lib/loose.c: loose' <<<"$out" || printf '#   %s\n' "$out"
finish
