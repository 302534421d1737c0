#!/usr/bin/env bash
# Integration: the release number, one in the Makefile, everywhere it is
# shown: --version and -V, --help, status (also with nothing attached), and
# CHANGELOG.md's newest entry.
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^VERSION := //p' Makefile)
check "the Makefile names a version ($want)" bash -c "grep -qE '^[0-9]+\.[0-9]+\.[0-9]+$' <<<'$want'"
check "--version prints 'xdp-pacer $want (datapath ABI N)' and exits 0" \
	bash -c "'$CLI' --version | grep -qx 'xdp-pacer $want (datapath ABI [0-9]*)'"
check "-V is the same" bash -c "test \"\$('$CLI' -V)\" = \"\$('$CLI' --version)\""
check "--help lists --version" bash -c "'$CLI' --help | grep -q -- '--version'"
check "status starts with the version, also with nothing attached here" \
	bash -c "unshare --net '$CLI' status | head -1 | grep -qx 'xdp-pacer $want (datapath ABI [0-9]*)'"
newest=$(sed -n 's/^## \([^ ]*\).*/\1/p' CHANGELOG.md | head -1)
check "CHANGELOG.md's newest entry is $want (it says ${newest:-nothing})" test "$newest" = "$want"
finish
