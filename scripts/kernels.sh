#!/usr/bin/env bash
# Debian's own kernel packages, fetched for the qemu boot test
# (tests/integ_qemu.sh) and the verifier report (scripts/verifier-report.sh).
#
#   scripts/kernels.sh fetch SERIES   SERIES: 6.1 (bookworm), 6.12 (bookworm-backports)
#                                     or 5.10 (bullseye: older than xdp-pacer supports)
#   scripts/kernels.sh fetch-systemd  Debian 12's systemd, libsystemd-shared and udev
#   scripts/kernels.sh fetch-xdp-forward
#                                     Debian 13's xdp-forward (xdp-tools) with the
#                                     libraries and loader it runs with (trixie's)
#
# Prints the directory holding the unpacked package (boot/vmlinuz-*, lib/modules/*).
# The newest linux-image-<SERIES>.* for amd64 (6.1.0-N-amd64, 6.12.N+deb12-amd64) in the archive is resolved at run
# time through apt with a private list (under $KERNEL_CACHE/apt) naming
# bookworm, its updates and security, bookworm-backports, and bullseye with
# its security updates on the system's
# own mirrors (Debian 13's packages: trixie, its updates and security, in a
# private state of their own, $KERNEL_CACHE/apt-trixie): the system's apt
# configuration is read, never changed.
# Packages are cached in $KERNEL_CACHE (default build/kernels), so later runs
# download nothing; with no archive reachable, the newest cached one is used.
set -euo pipefail
cd "$(dirname "$0")/.."
KERNEL_CACHE=${KERNEL_CACHE:-${BUILD:-build}/kernels}
mkdir -p "$KERNEL_CACHE"
KERNEL_CACHE=$(cd "$KERNEL_CACHE" && pwd) # apt takes relative paths from /etc/apt

die() { echo "kernels.sh: $*" >&2; exit 1; }

# The system's Debian mirror URIs (deb822 .sources or one-line .list), else Debian's defaults.
mirror_of() { # debian|debian-security
	local want=$1 uri
	uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
		2>/dev/null | grep -Eo '(https?|file)://[^ ]*/'"$want"'/?( |$)' | head -1 | tr -d ' ' || true)
	echo "${uri:-http://deb.debian.org/$want}"
}

apt_private() { # apt-get/apt-cache with the private list and state
	local tool=$1; shift
	"$tool" -o Dir::Etc::SourceList="$aptdir/sources.list" -o Dir::Etc::SourceParts="$aptdir/parts" \
		-o Dir::State::Lists="$aptdir/lists" -o Dir::Cache="$aptdir/cache" \
		-o Dir::State::status=/var/lib/dpkg/status -o Debug::NoLocking=1 \
		-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root "$@"
}

# The private apt list (bookworm, its updates, security and backports;
# bullseye; or, given trixie, Debian 13 alone in a state of its own),
# updated at most once an hour.
apt_setup() { # [trixie]
	local deb_uri sec_uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	deb_uri=$(mirror_of debian); sec_uri=$(mirror_of debian-security)
	aptdir=$KERNEL_CACHE/apt
	[ "${1:-}" = trixie ] && aptdir=$KERNEL_CACHE/apt-trixie
	mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/parts"
	if [ "${1:-}" = trixie ]; then
		cat >"$aptdir/sources.list" <<-EOF
		deb [signed-by=$keyring] ${deb_uri%/} trixie main
		deb [signed-by=$keyring] ${deb_uri%/} trixie-updates main
		deb [signed-by=$keyring] ${sec_uri%/} trixie-security main
		EOF
	else
		cat >"$aptdir/sources.list" <<-EOF
		deb [signed-by=$keyring] ${deb_uri%/} bookworm main
		deb [signed-by=$keyring] ${deb_uri%/} bookworm-updates main
		deb [signed-by=$keyring] ${deb_uri%/} bookworm-backports main
		deb [signed-by=$keyring] ${sec_uri%/} bookworm-security main
		deb [signed-by=$keyring] ${deb_uri%/} bullseye main
		deb [signed-by=$keyring] ${sec_uri%/} bullseye-security main
		EOF
	fi
	# One update per hour at most: the lists name the newest ABI.
	if [ -z "$(find "$aptdir/lists" -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null)" ]; then
		apt_private apt-get update -qq >&2 || echo "kernels.sh: apt-get update failed; using the cache" >&2
	fi
}

# Packages downloaded and unpacked (never installed) into one directory,
# $KERNEL_CACHE/NAME (kept: later runs download nothing).
unpack_into() { # dir package...
	local dir=$1 deb
	shift
	[ -e "$dir/.complete" ] && return 0
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp/root"
	( cd "$dir.tmp" && apt_private apt-get download -qq "$@" >&2 ) || die "cannot download $*"
	for deb in "$dir.tmp"/*.deb; do
		dpkg-deb -x "$deb" "$dir.tmp/root" || die "cannot unpack $deb"
	done
	mv "$dir.tmp/root" "$dir"
	rm -rf "$dir.tmp"
	touch "$dir/.complete"
}

# Debian 12's systemd, its shared library and udev, unpacked: the init of
# the qemu guests that test the units (tests/integ_systemd.sh), whatever
# this machine has installed.
fetch_systemd() {
	local ver dir
	apt_setup
	ver=$(apt_private apt-cache policy systemd 2>/dev/null | awk '/Candidate:/ { print $2 }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		dir=$(ls -d "$KERNEL_CACHE"/systemd-252.* 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$dir" ] || die "no systemd package found in the archive nor in $KERNEL_CACHE"
		echo "$dir"
		return
	fi
	dir=$KERNEL_CACHE/systemd-$ver
	unpack_into "$dir" "systemd=$ver" "libsystemd-shared=$ver" "udev=$ver"
	echo "$dir"
}

# Debian 13's xdp-forward (xdp-tools 1.5.x), for the router test
# (tests/integ_forward.sh): the package and the libraries it loads, with
# trixie's own loader, unpacked into $KERNEL_CACHE/xdp-forward-VERSION.  The
# binary carries libxdp (1.5.x, linked statically, with its dispatcher object
# embedded), so libxdp1 is not among them.  It runs as
#   DIR/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path DIR/usr/lib/x86_64-linux-gnu DIR/usr/sbin/xdp-forward
# and this checks that the loader finds every library it needs there.
xdp_forward_pkgs="xdp-tools libbpf1 libelf1t64 zlib1g libzstd1 libc6"
fetch_xdp_forward() {
	local ver dir lib pkg pinned=()
	apt_setup trixie
	ver=$(apt_private apt-cache policy xdp-tools 2>/dev/null | awk '/Candidate:/ { print $2 }')
	case "$ver" in
	'' | '(none)' | 1.[0-4].*)
		# Offline (or the lists name no Debian 13 package): the newest one already unpacked.
		dir=$(ls -d "$KERNEL_CACHE"/xdp-forward-* 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$dir" ] || die "no xdp-tools 1.5 package found in Debian 13's archive (trixie) nor in $KERNEL_CACHE"
		echo "$dir"
		return ;;
	esac
	dir=$KERNEL_CACHE/xdp-forward-$ver
	for pkg in $xdp_forward_pkgs; do # each at trixie's candidate, whatever this machine has
		pinned+=("$pkg=$(apt_private apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')")
	done
	unpack_into "$dir" "${pinned[@]}"
	lib=$dir/usr/lib/x86_64-linux-gnu
	[ -x "$dir/usr/sbin/xdp-forward" ] || die "xdp-tools $ver has no usr/sbin/xdp-forward"
	if "$lib/ld-linux-x86-64.so.2" --library-path "$lib" --list "$dir/usr/sbin/xdp-forward" 2>&1 |
		grep -E 'not found|=> /(usr/)?lib' >&2; then
		die "xdp-forward $ver needs libraries not among $xdp_forward_pkgs (above)"
	fi
	echo "$dir"
}

fetch() { # series
	local series=$1 suite pkg deb dir
	case "$series" in
	6.1) suite=bookworm ;;
	6.12) suite=bookworm-backports ;;
	5.10) suite=bullseye ;;
	*) die "unknown kernel series '$series' (expected 6.1, 6.12 or 5.10)" ;;
	esac
	apt_setup
	pkg=$(apt_private apt-cache search --names-only "^linux-image-${series//./\\.}\\.[0-9]+(-[0-9]+|\\+deb12)-amd64\$" 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -1 || true)
	if [ -z "$pkg" ]; then
		# Offline: the newest one already unpacked.
		dir=$(ls -d "$KERNEL_CACHE"/linux-image-"$series".*-amd64 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$dir" ] || die "no linux-image-$series package found in the archive ($suite) nor in $KERNEL_CACHE"
		echo "$dir"
		return
	fi
	dir=$KERNEL_CACHE/$pkg
	unpack_into "$dir" "$pkg"
	echo "$dir"
}

usage="usage: scripts/kernels.sh fetch 6.1|6.12|5.10 | fetch-systemd | fetch-xdp-forward"
case "${1:-}" in
fetch) [ $# -eq 2 ] || die "$usage"; fetch "$2" ;;
fetch-systemd) [ $# -eq 1 ] || die "$usage"; fetch_systemd ;;
fetch-xdp-forward) [ $# -eq 1 ] || die "$usage"; fetch_xdp_forward ;;
*) die "$usage" ;;
esac
