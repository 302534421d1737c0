# The upgrade guest's side of tests/integ_upgrade.sh (busybox sh, run as a
# service by Debian 12's systemd in a guest that `QEMU_INIT=systemd
# QEMU_DPKG=1 scripts/qemu-boot.sh` boots): the previous release's package
# installed with dpkg, its unit started on a veth with entries added and
# sources seen, then this tree's package installed over it.  Its postinst
# restarts the unit in place: the new release's program replaces the old
# one, which never leaves the interface without a limiter, and the deny
# entries (with their deadlines), the sources' state and the counters are
# all kept; the pins get this release's stamp.
#   guest.sh OLD_VERSION NEW_VERSION   (the packages in /pacer/files)
IP=/sbin/ip
CLI=/usr/sbin/xdp-pacer # the package's, not the test's /pacer/xdp-pacer
# The real dpkg, by its path: busybox's sh runs its own applets of a bare
# name first, dpkg among them; dpkg then finds the real dpkg-deb first.
DPKG=/usr/bin/dpkg
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/pacer
old=$1 new=$2
. "${PACER_DIR:-/pacer}/lib.sh"
tmp=$(mktemp -d)
stat_of() { $CLI stats v1 --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
prog_id() { $CLI status v1 --json 2>/dev/null | grep -o '"prog_id":[0-9]*' | head -1 | cut -d: -f2; }
deny_left() { $CLI deny list v1 --json | grep -o "\"prefix\":\"$1\"[^}]*\"expires_s\":[0-9]*" | grep -o '[0-9]*$'; }

echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
$IP link add v0 type veth peer name v1 || { not_ok "cannot create veth"; done_; }
$IP link set v0 up && $IP link set v1 up
mac=$($IP -o link show v1 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
deb_of() { ls /pacer/files/xdp-pacer_"$1"_*.deb 2>/dev/null | head -1; }

# --- the previous release, installed and running ---
if $DPKG --force-depends -i "$(deb_of "$old")" >"$tmp/dpkg1" 2>&1; then
	ok "dpkg -i xdp-pacer $old"
else
	not_ok "dpkg -i xdp-pacer $old: $(tail -3 "$tmp/dpkg1" | tr '\n' ' ')"
fi
expect_eq "the installed CLI is $old" "$($CLI --version | awk '{ print $2 }')" "$old"
mkdir -p /etc/xdp-pacer
printf 'interval = 10s\n' >/etc/xdp-pacer/v1.conf
for _ in $(seq 50); do # udev saw v1: the unit's BindsTo= on its device can be met
	[ "$(systemctl show -p ActiveState --value sys-subsystem-net-devices-v1.device)" = active ] && break
	sleep 0.2
done
if systemctl start xdp-pacer@v1 >"$tmp/start" 2>&1 && [ -n "$(prog_id)" ]; then
	ok "systemctl start xdp-pacer@v1 ($old)"
else
	not_ok "systemctl start xdp-pacer@v1: $(cat "$tmp/start"; journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -3)"
fi
old_id=$(prog_id)
$CLI deny add v1 10.211.0.0/24 --timeout 10m >/dev/null
$CLI deny add v1 10.211.1.1 >/dev/null
left0=$(deny_left 10.211.0.0/24)
send_frames --iface v0 --dst-mac "$mac" --src-base 10.212.0.0 --dst 10.9.9.9 --sources 20 >/dev/null
sleep 0.3
expect_eq "$old: 20 sources seen, each passed once" "$(stat_of passed)" 20
seen0=$(stat_of seen)

# --- this tree's package over it, traffic flowing: its postinst restarts in place ---
taskset -c 0 /pacer/xdp-pacer gen v0 --dist uniform --sources 20 --src-base 10.212.0.0 --dst 10.9.9.9 \
	--dst-mac "$mac" --pps 200 --duration 6s >"$tmp/gen" 2>&1 &
gen_pid=$!
sleep 1
if $DPKG --force-depends -i "$(deb_of "$new")" >"$tmp/dpkg2" 2>&1; then
	ok "dpkg -i xdp-pacer $new over $old"
else
	not_ok "dpkg -i xdp-pacer $new: $(tail -3 "$tmp/dpkg2" | tr '\n' ' ')"
fi
wait "$gen_pid"
expect_eq "the installed CLI is $new" "$($CLI --version | awk '{ print $2 }')" "$new"
new_id=$(prog_id)
if [ -n "$new_id" ] && [ "$new_id" != "$old_id" ] &&
	journalctl -u xdp-pacer@v1 -o cat --no-pager | grep -q "replaced the limiter on v1"; then
	ok "the postinst's restart replaced the $old limiter (id $old_id) in place (id $new_id)"
else
	not_ok "after the upgrade: program id $old_id, now '$new_id'; dpkg said: $(tr '\n' ' ' <"$tmp/dpkg2"); the unit: $(journalctl -u xdp-pacer@v1 -o cat --no-pager | tail -3 | tr '\n' ' ')"
fi
expect_eq "the unit is active" "$(systemctl show -p ActiveState --value xdp-pacer@v1)" active
journalctl -u xdp-pacer@v1 -o cat --no-pager | grep -q "detached program id $old_id" &&
	not_ok "the upgrade detached the old limiter before the new one ran"
expect_eq "the sources seen before the upgrade, sending through it, passed no more (state kept)" \
	"$(stat_of passed)" 20
left1=$(deny_left 10.211.0.0/24)
if [ -n "$left1" ] && [ "$((left0 - left1))" -ge 0 ] && [ "$((left0 - left1))" -le 30 ]; then
	ok "the timed deny entry kept its deadline ($left0 s left, now $left1 s)"
else
	not_ok "the timed deny entry: $left0 s left before, '$left1' after"
fi
if $CLI deny list v1 | grep -q '10.211.1.1/32 *added'; then
	ok "the permanent deny entry is kept"
else
	not_ok "deny list: $($CLI deny list v1 | tr '\n' ' ')"
fi
if [ "$(stat_of seen)" -gt "$seen0" ]; then
	ok "the counters went on ($seen0, now $(stat_of seen))"
else
	not_ok "the counters: $seen0 before, $(stat_of seen) after"
fi
if ls /sys/fs/bpf/xdp-pacer/netns-*/v1/meta >/dev/null 2>&1; then
	ok "the pins have this release's stamp"
else
	not_ok "no stamp in $(ls -d /sys/fs/bpf/xdp-pacer/netns-*/v1)"
fi
if systemctl stop xdp-pacer@v1 >/dev/null 2>&1 && [ -z "$(prog_id)" ]; then
	ok "systemctl stop xdp-pacer@v1 ($new)"
else
	not_ok "systemctl stop xdp-pacer@v1"
fi
done_
