#!/usr/bin/env bash
# Boot one of Debian's kernel packages under qemu with a small initramfs
# (busybox, the CLI and its libraries, ip, send_frames, the BPF object,
# xdp_replace_check with the replace test's objects,
# xdp-filter with libxdp's objects, the systemd unit's source, veth, and
# two virtio-net NICs on a qemu hub) and run a script in it as the guest's init; the guest's console is
# this script's output, and its exit status is the guest script's.
#
#   scripts/qemu-boot.sh SERIES GUEST_SCRIPT [ARGS...]
#     SERIES: 6.1 or 6.12 (scripts/kernels.sh fetches the package)
#
# QEMU_INIT=systemd: Debian 12's systemd (with journald and udevd) is the
# guest's init and runs the guest script as a service (tests/integ_systemd.sh).
# QEMU_FILES="FILE...": copied to the guest's /pacer/files.  QEMU_DPKG=1:
# dpkg in the guest, with an empty database (tests/integ_upgrade.sh).
# QEMU_XDP_FORWARD=1: Debian 13's xdp-forward (scripts/kernels.sh
# fetch-xdp-forward) in /xdpfwd with trixie's loader and the libraries it
# loads, run by the wrapper /pacer/xdp-forward, and tests/tools/udp_sink
# (tests/integ_forward.sh).
# Uses KVM when /dev/kvm is usable, else qemu's TCG (slower; it says so).
# Exits 77 with a line "SKIP: why" when qemu, busybox or the kernel package
# cannot be had here.  QEMU_TIMEOUT (seconds, default 300) bounds the boot.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
series=${1:?usage: scripts/qemu-boot.sh SERIES GUEST_SCRIPT [ARGS...]}
guest=${2:?usage: scripts/qemu-boot.sh SERIES GUEST_SCRIPT [ARGS...]}
shift 2

skip() { echo "SKIP: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (scripts/deps.sh installs qemu-system-x86)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 ||
	skip "no static busybox (scripts/deps.sh installs busybox-static)"
[ -f /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o ] || [ -n "${LIBXDP_OBJECT_PATH:-}" ] ||
	echo "qemu-boot: libxdp's dispatcher object not found; the guest attaches without it" >&2
for f in "$BUILD/xdp-pacer" "$BUILD/xdp_pacer.bpf.o" "$BUILD/tests/tools/send_frames" \
	"$BUILD/tests/tools/xdp_replace_check"; do
	[ -e "$f" ] || { echo "qemu-boot: $f is missing; run make first" >&2; exit 1; }
done
kdir=$(scripts/kernels.sh fetch "$series") || skip "cannot fetch Debian's linux-image-$series package"
kver=$(basename "$kdir/lib/modules/"*)
vmlinuz=$kdir/boot/vmlinuz-$kver

work=$(mktemp -d "${TMPDIR:-/tmp}/xdp-pacer-qemu.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,lib/modules,pacer}
cp "$busybox" "$root/bin/busybox"

# The shared libraries a binary loads, at their own paths; a library
# under $unpacked (a package unpacked here, found through LD_LIBRARY_PATH)
# at its path in the package.
add_libs() { # path
	local lib dst
	for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
		dst=$lib
		[ -n "${unpacked:-}" ] && dst=${lib#"$unpacked"}
		[ -e "$root$dst" ] && continue
		mkdir -p "$root$(dirname "$dst")"
		cp -L "$lib" "$root$dst"
	done
}
# A binary and the shared libraries it loads.
add_bin() { # path [dest dir]
	local src=$1 dst=${2:-$(dirname "$1")}
	mkdir -p "$root$dst"
	cp -L "$src" "$root$dst/"
	add_libs "$src"
}
add_bin "$BUILD/xdp-pacer" /pacer
add_bin "$BUILD/tests/tools/send_frames" /pacer
add_bin "$BUILD/tests/tools/grace_probe" /pacer
# The in-place replacement's check (tests/qemu_guest.sh, replace_tests) and its programs.
add_bin "$BUILD/tests/tools/xdp_replace_check" /pacer
cp "$BUILD/replace_count.bpf.o" "$BUILD/replace_refused.bpf.o" "$BUILD/bench_pass.bpf.o" "$root/pacer/"
# The real ip, not tests/run.sh's wrapper in PATH that notes the namespaces a test makes.
add_bin "${XDP_PACER_REAL_IP:-$(command -v ip)}" /sbin
cp "$BUILD/xdp_pacer.bpf.o" "$root/pacer/"
# libxdp's dispatcher, and xdp-filter (xdp-tools) with its programs: the
# neighbour the chain test loads beside the limiter.  Where libxdp looks for
# them (BPF_OBJECT_PATH; Debian's is /usr/lib/x86_64-linux-gnu/bpf, upstream's
# /usr/lib/bpf).
bpfdir=/usr/lib/x86_64-linux-gnu/bpf
[ -d "$bpfdir" ] || bpfdir=/usr/lib/bpf
if [ -d "$bpfdir" ]; then
	mkdir -p "$root$bpfdir"
	cp "$bpfdir"/xdp-dispatcher.o "$bpfdir"/xdpfilt_*.o "$root$bpfdir/" 2>/dev/null || true
fi
xdp_filter=$(command -v xdp-filter || true)
if [ -n "$xdp_filter" ]; then
	add_bin "$xdp_filter" /sbin
else
	echo "qemu-boot: xdp-filter not found (scripts/deps.sh installs xdp-tools); the guest has none" >&2
fi
cp dist/xdp-pacer@.service.in "$root/pacer/unit"
# bpftool, where there is one: the chain-cost benchmark runs programs with it.
bpftool=$(command -v bpftool || true)
[ -n "$bpftool" ] && add_bin "$bpftool" /sbin
# veth, unpacked (busybox's insmod reads plain .ko files).
veth=$(find "$kdir/lib/modules/$kver" -name 'veth.ko*' | head -1)
[ -n "$veth" ] || skip "$kver has no veth module"
case "$veth" in
*.xz) xz -dc "$veth" >"$root/lib/modules/veth.ko" ;;
*.zst) zstd -qdc "$veth" >"$root/lib/modules/veth.ko" ;;
*) cp "$veth" "$root/lib/modules/veth.ko" ;;
esac
# virtio-net, for the chain test on a driver with native XDP: its modules
# where the kernel has them as modules (6.12 builds the virtio core in), in
# the order they depend on each other.
mkdir -p "$root/lib/modules/virtio"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
	f=$(find "$kdir/lib/modules/$kver" -name "$m.ko*" | head -1)
	[ -n "$f" ] || continue
	case "$f" in
	*.xz) xz -dc "$f" ;;
	*.zst) zstd -qdc "$f" ;;
	*) cat "$f" ;;
	esac >"$root/lib/modules/virtio/$m.ko"
	echo "$m" >>"$root/lib/modules/virtio/order"
done
cp dist/xdp-pacer-events@.service.in "$root/pacer/events-unit"
cp tests/qemu_guest_lib.sh "$root/pacer/lib.sh"
# QEMU_FILES: files for the guest script, in /pacer/files (the packages
# tests/integ_upgrade.sh upgrades between).
for f in ${QEMU_FILES:-}; do
	mkdir -p "$root/pacer/files"
	cp "$f" "$root/pacer/files/"
done
# QEMU_XDP_FORWARD=1: xdp-forward runs with Debian 13's own loader and
# libraries (its libxdp is linked in), never the guest's Debian 12 ones.
if [ -n "${QEMU_XDP_FORWARD:-}" ]; then
	fwd=$(scripts/kernels.sh fetch-xdp-forward 2>"$work/fwd.err") ||
		skip "cannot fetch Debian 13's xdp-tools (xdp-forward): $(tail -1 "$work/fwd.err")"
	fwdlib=$fwd/usr/lib/x86_64-linux-gnu
	mkdir -p "$root/xdpfwd/lib"
	cp "$fwd/usr/sbin/xdp-forward" "$root/xdpfwd/"
	cp -L "$fwdlib/ld-linux-x86-64.so.2" "$root/xdpfwd/"
	for lib in $("$fwdlib/ld-linux-x86-64.so.2" --library-path "$fwdlib" --list "$fwd/usr/sbin/xdp-forward" |
		sed -n 's/.* => \(\/[^ ]*\) .*/\1/p'); do
		# At its file's own name, with the soname's link: xdp-forward --version reads
		# libbpf's version from the name it is mapped under.
		real=$(readlink -f "$lib")
		cp "$real" "$root/xdpfwd/lib/"
		[ "$(basename "$real")" = "$(basename "$lib")" ] ||
			ln -sf "$(basename "$real")" "$root/xdpfwd/lib/$(basename "$lib")"
	done
	cat >"$root/pacer/xdp-forward" <<-'WRAP'
	#!/bin/sh
	# Debian 13's xdp-forward with trixie's loader and libraries (scripts/qemu-boot.sh).
	exec /xdpfwd/ld-linux-x86-64.so.2 --library-path /xdpfwd/lib /xdpfwd/xdp-forward "$@"
	WRAP
	chmod 0755 "$root/pacer/xdp-forward"
	add_bin "$BUILD/tests/tools/udp_sink" /pacer
fi
# QEMU_DPKG=1: dpkg, dpkg-deb, dpkg-split and GNU tar with an empty database, for installing
# and upgrading the project's package in the guest (its dependencies'
# libraries are there, their packages not: dpkg --force-depends); the
# programs dpkg wants in PATH that busybox lacks, as no-ops (ldconfig:
# the package has no libraries); deb-systemd-invoke, a perl script of
# Debian's init-system-helpers, as a shell stand-in doing what it does for
# the maintainer scripts' restart and stop: ask policy-rc.d, then systemctl.
if [ -n "${QEMU_DPKG:-}" ]; then
	add_bin "$(command -v dpkg)" /usr/bin
	add_bin "$(command -v dpkg-deb)" /usr/bin
	add_bin "$(command -v dpkg-split)" /usr/bin
	add_bin "$(command -v tar)" /usr/bin # GNU tar: dpkg-deb passes it options busybox's lacks
	mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers,alternatives} "$root/etc/dpkg/dpkg.cfg.d" \
		"$root/var/log" "$root/usr/sbin" "$root/usr/share/doc"
	: >"$root/var/lib/dpkg/status"
	: >"$root/var/lib/dpkg/available"
	printf '#!/bin/sh\nexit 0\n' >"$root/sbin/ldconfig"
	cat >"$root/usr/bin/deb-systemd-invoke" <<-'SHIM'
	#!/bin/sh
	# The test guest's stand-in for init-system-helpers' deb-systemd-invoke (perl).
	action=$1
	shift
	for unit in "$@"; do
		if [ -x /usr/sbin/policy-rc.d ]; then
			/usr/sbin/policy-rc.d "$unit" "$action"
			[ $? = 101 ] && exit 0
		fi
	done
	exec systemctl "$action" "$@"
	SHIM
	chmod 0755 "$root/sbin/ldconfig" "$root/usr/bin/deb-systemd-invoke"
fi
# QEMU_INIT=systemd: Debian 12's systemd is the guest's init (PID 1), with
# journald and udevd (the units' BindsTo= on the interface's device needs
# udev's "systemd" tag), and runs the guest script as a service; units
# and rules of the guest's own, the packages' binaries (scripts/kernels.sh
# fetch-systemd: this machine needs no systemd of its own).
if [ "${QEMU_INIT:-}" = systemd ]; then
	sd=$(scripts/kernels.sh fetch-systemd) || skip "cannot fetch Debian's systemd packages"
	sdlib=/usr/lib/x86_64-linux-gnu/systemd
	for f in /lib/systemd/systemd /lib/systemd/systemd-journald /lib/systemd/systemd-udevd \
		/bin/systemctl /bin/journalctl /bin/udevadm; do
		src=$sd$f
		[ -L "$src" ] && case $(readlink "$src") in /*) src=$sd$(readlink "$src") ;; esac # systemd-udevd -> /bin/udevadm
		mkdir -p "$root$(dirname "$f")"
		cp -L "$src" "$root$f" # at its own name: udevadm runs as what its name says
		unpacked=$sd LD_LIBRARY_PATH=$sd$sdlib add_libs "$src"
	done
	mkdir -p "$root/lib/systemd/system" "$root/etc/systemd/system" "$root/lib/udev/rules.d"
	for u in systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket \
		systemd-journald-audit.socket systemd-udevd.service systemd-udevd-control.socket \
		systemd-udevd-kernel.socket; do
		cp "$sd/lib/systemd/system/$u" "$root/lib/systemd/system/"
	done
	# The targets services order against by default, empty: nothing else to start.
	for t in sysinit basic sockets shutdown multi-user local-fs network network-online; do
		printf '[Unit]\nDescription=%s (empty, the test guest)\n' "$t" >"$root/lib/systemd/system/$t.target"
	done
	# 99-systemd.rules' line for network interfaces, alone.
	echo 'SUBSYSTEM=="net", KERNEL!="lo", TAG+="systemd", ENV{SYSTEMD_ALIAS}+="/sys/subsystem/net/devices/$name"' \
		>"$root/lib/udev/rules.d/99-systemd.rules"
	cp /etc/os-release "$root/etc/os-release" 2>/dev/null || true
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nsystemd-journal:x:101:\n' >"$root/etc/group"
	cat >"$root/etc/systemd/system/pacer-guest.service" <<-'EOF'
	[Unit]
	Description=the guest's test script
	Wants=systemd-journald.service systemd-udevd.service
	After=systemd-journald.service systemd-udevd.service
	[Service]
	Type=oneshot
	StandardOutput=tty
	StandardError=inherit
	TTYPath=/dev/console
	ExecStart=/bin/sh /pacer/run-guest
	EOF
	touch "$root/pacer/systemd"
fi
cat >"$root/pacer/run-guest" <<'EOF'
export PATH=/pacer:/sbin:/bin:/usr/sbin:/usr/bin
eval "set -- $(cat /pacer/args)"
sh /pacer/guest.sh "$@"
echo "guest-exit: $?"
sync
poweroff -f
EOF
cp "$guest" "$root/pacer/guest.sh"
cp "${QEMU_CONFIGS:-tests/qemu_configs}" "$root/pacer/configs"
printf '%q ' "$@" >"$root/pacer/args"

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/pacer:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
insmod /lib/modules/veth.ko
for m in $(cat /lib/modules/virtio/order 2>/dev/null); do insmod "/lib/modules/virtio/$m.ko"; done
echo "guest: Linux $(uname -r), $(nproc) CPUs"
[ -e /pacer/systemd ] && exec /lib/systemd/systemd --unit=pacer-guest.service --show-status=no --log-level=warning
sh /pacer/run-guest
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

# KVM when usable.  On some hosts (nested virtualisation) /dev/kvm opens but
# the guest never gets going: a boot that prints nothing from its init within
# KVM_PROBE_S seconds is retried under TCG, and the verdict is remembered in
# the kernel cache so later boots go straight to TCG.
kvm_stamp=${KERNEL_CACHE:-$BUILD/kernels}/kvm-unusable
use_kvm=0
if [ "${QEMU_ACCEL:-}" = tcg ]; then
	echo "qemu-boot: QEMU_ACCEL=tcg: booting under TCG" >&2
elif ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "qemu-boot: /dev/kvm is not usable here: booting under TCG (emulated, slower)" >&2
elif [ -e "$kvm_stamp" ] && [ "${QEMU_ACCEL:-}" != kvm ]; then
	echo "qemu-boot: KVM did not boot a guest on this host before ($kvm_stamp): booting under TCG" >&2
else
	use_kvm=1
fi

# Two virtio-net NICs on one qemu hub: what the guest's eth0 sends, eth1 receives.
# no_timer_check: under TCG on a loaded host the kernel's check of the
# IO-APIC timer can time out and panic the boot ("IO-APIC + timer doesn't
# work"); qemu's timer works.
qemu_args=(-m 1024 -smp 2 -nographic -no-reboot -nic none
	-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0,romfile=
	-netdev hubport,id=n1,hubid=0 -device virtio-net-pci,netdev=n1,romfile=
	-kernel "$vmlinuz"
	-initrd "$work/initrd.gz"
	-append "console=ttyS0 panic=-1 no_timer_check ${QEMU_KERNEL_ARGS:-quiet loglevel=3} rdinit=/init")

if [ "$use_kvm" = 1 ]; then
	# timeout passes our TERM on to qemu
	timeout "${QEMU_TIMEOUT:-300}" qemu-system-x86_64 -enable-kvm ${QEMU_CPU:+-cpu "$QEMU_CPU"} \
		"${qemu_args[@]}" </dev/null >"$work/console" 2>&1 &
	qpid=$!
	for _ in $(seq "${KVM_PROBE_S:-30}"); do
		grep -q 'guest: Linux' "$work/console" 2>/dev/null && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 1
	done
	if ! grep -q 'guest: Linux' "$work/console" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		wait "$qpid" 2>/dev/null || true
		echo "qemu-boot: under KVM the guest did not reach its init in ${KVM_PROBE_S:-30} s: KVM is not usable here; booting under TCG (emulated, slower)" >&2
		mkdir -p "$(dirname "$kvm_stamp")" && date >"$kvm_stamp"
		use_kvm=0
	else
		wait "$qpid" || true
	fi
fi
[ "$use_kvm" = 1 ] || timeout "${QEMU_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg "${qemu_args[@]}" \
	</dev/null >"$work/console" 2>&1 || true
tr -d '\r' <"$work/console"
rc=$(tr -d '\r' <"$work/console" | sed -n 's/.*guest-exit: \([0-9]*\).*/\1/p' | tail -1)
if [ -z "$rc" ]; then
	echo "qemu-boot: the guest on $kver did not finish (crash or timeout)" >&2
	exit 1
fi
exit "$rc"
