#!/usr/bin/env bash
# The .deb of a past release, built from its commit (dist/releases) into
# BUILD/releases/VERSION/ and kept there: prints its path.
#   scripts/release-deb.sh VERSION      a release dist/releases names
#   scripts/release-deb.sh previous     the newest release before this tree's VERSION
# The source comes from git (the tag vVERSION or the recorded commit), so
# the clone must have the history; says so and exits 1 when it has not.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
want=${1:?usage: scripts/release-deb.sh VERSION|previous}
current=$(sed -n 's/^VERSION := //p' Makefile)
releases=$(grep -v '^#' dist/releases | grep .)
if [ "$want" = previous ]; then
	want=$(awk -v cur="$current" '$1 != cur { print $1; exit }' <<<"$releases")
	[ -n "$want" ] || { echo "release-deb: no release before $current in dist/releases" >&2; exit 1; }
fi
commit=$(awk -v v="$want" '$1 == v { print $2 }' <<<"$releases")
[ -n "$commit" ] || { echo "release-deb: dist/releases has no release $want" >&2; exit 1; }
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
	echo "release-deb: this clone lacks release $want's commit $commit (a shallow clone? git fetch --unshallow --tags)" >&2
	exit 1
fi
if git rev-parse -q --verify "refs/tags/v$want" >/dev/null &&
	[ "$(git rev-parse "v$want^{commit}")" != "$commit" ]; then
	echo "release-deb: the tag v$want is not the commit dist/releases records ($commit)" >&2
	exit 1
fi
out=$(realpath -m "$BUILD/releases/$want")
deb=$out/build/xdp-pacer_${want}_$(dpkg --print-architecture).deb
if [ ! -s "$deb" ]; then
	rm -rf "$out"
	mkdir -p "$out/src"
	git archive "$commit" | tar -x -C "$out/src"
	make -s -C "$out/src" BUILD="$out/build" deb >&2
fi
[ -s "$deb" ] || { echo "release-deb: building $want wrote no $deb" >&2; exit 1; }
echo "$deb"
