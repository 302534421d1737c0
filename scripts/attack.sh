#!/usr/bin/env bash
# Targeted-collision report: the victims' false-drop rate when an attacker
# crafts sources that collide with them in every row, with the hash key
# known and kept secret, against a blind attack and random sources at the
# same packet budget (tests/unit_attack.c, on the datapath's sketch code).
# No privileges, no network; about 30 s.  Prints a Markdown table.
#   scripts/attack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/tests/unit_attack" >&2
exec "$BUILD/tests/unit_attack" --report
