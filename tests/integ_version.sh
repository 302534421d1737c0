#!/usr/bin/env bash
# Integration: the release number, one in the Makefile, everywhere it is
# shown: --version and -V, --help, status (also with nothing attached),
# a recording's header as analyze reports it, and CHANGELOG.md's newest entry.
# run.sh: background (no timing of its own; runs beside the rest)
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^VERSION := //p' Makefile)
check "the Makefile names a version ($want)" bash -c "grep -qE '^[0-9]+\.[0-9]+\.[0-9]+$' <<<'$want'"
check "--version prints 'xdp-pacer $want (datapath ABI N)' and exits 0" \
	bash -c "'$CLI' --version | grep -qx 'xdp-pacer $want (datapath ABI [0-9]*)'"
check "-V is the same" bash -c "test \"\$('$CLI' -V)\" = \"\$('$CLI' --version)\""
check "--help lists --version" bash -c "'$CLI' --help | grep -q -- '--version'"
check "status starts with the version, also with nothing attached here" \
	bash -c "unshare --net '$CLI' status | head -1 | grep -qx 'xdp-pacer $want (datapath ABI [0-9]*)'"
WORK=$(mktemp -d /tmp/xpv-version.XXXXXX)
trap 'stop_background; rm -rf "$WORK"' EXIT
"$BUILD/tests/tools/synth_record" "$WORK/r.xpr" spoofed 2000 1000 >/dev/null
check "analyze names the release that wrote a recording" \
	bash -c "'$CLI' analyze '$WORK/r.xpr' | head -1 | grep -q '(format 1.3, written by xdp-pacer $want)'"
check "... and so does its JSON" \
	bash -c "'$CLI' analyze '$WORK/r.xpr' --json | grep -q '\"writer\":\"xdp-pacer $want\"'"
newest=$(sed -n 's/^## \([^ ]*\).*/\1/p' CHANGELOG.md | head -1)
check "CHANGELOG.md's newest entry is $want (it says ${newest:-nothing})" test "$newest" = "$want"
finish
