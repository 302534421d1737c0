# Sourced by the systemd guests' scripts (tests/qemu_systemd.sh,
# tests/qemu_upgrade.sh) and the router test's (tests/qemu_forward.sh;
# scripts/qemu-boot.sh copies it to /pacer/lib.sh):
# their tally, printed as "N passed, N failed" at the end.
n_pass=0
n_fail=0
ok() { n_pass=$((n_pass + 1)); echo "ok   - $*"; }
not_ok() { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
expect_eq() { # what got want
	if [ "$2" = "$3" ]; then ok "$1: $2"; else not_ok "$1: expected $3, got '$2'"; fi
}
done_() { echo "$n_pass passed, $n_fail failed"; exit "$n_fail"; }
