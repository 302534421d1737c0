#!/usr/bin/env bash
# The source's layering holds: user/ holds main.c and directories only (each
# file in a named layer), and no two userspace modules include each other's
# headers, directly or around a circle (tests/tools/include_cycles.py).  A
# self-check first: the circle finder finds a circle planted in a copy.
# run.sh: background (no timing of its own; runs beside the rest)
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
WORK=$(mktemp -d /tmp/xpi-layout.XXXXXX)
trap 'stop_background; rm -rf "$WORK"' EXIT

loose=$(find user -maxdepth 1 -type f ! -name main.c -printf '%f ')
check "user/ holds main.c and directories only${loose:+ (loose: $loose)}" test -z "$loose"

out=$(python3 tests/tools/include_cycles.py . 2>&1)
check "no include circle among user/ and include/${out:+: $out}" test -z "$out"

# The finder must be able to fail: a copy where lib/a.c includes b.h and b.c a.h.
mkdir -p "$WORK/user/lib" "$WORK/include"
printf '#include "b.h"\n' >"$WORK/user/lib/a.c"; : >"$WORK/user/lib/a.h"
printf '#include "a.h"\n' >"$WORK/user/lib/b.c"; : >"$WORK/user/lib/b.h"
check "the circle finder reports a planted circle" \
	bash -c "! python3 tests/tools/include_cycles.py '$WORK' >/dev/null"
finish
