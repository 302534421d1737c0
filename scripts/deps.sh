#!/usr/bin/env bash
# Install what xdp-pacer needs to build and test, when it is missing.
# As root it installs Debian packages; otherwise it names what is missing.
set -euo pipefail

need_pkgs=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pc() { pkg-config --exists "$1" 2>/dev/null; }

have_cmd clang || need_pkgs+=(clang)
# libFuzzer (tests/fuzz.sh): clang's runtime, only recommended by clang's packages.
[ -e "$(clang -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$(uname -m).a" ] ||
	need_pkgs+=(libclang-rt-14-dev)
have_cmd llvm-objdump || need_pkgs+=(llvm)
have_cmd bpftool || need_pkgs+=(bpftool)
have_cmd make || need_pkgs+=(make)
have_cmd gcc || need_pkgs+=(gcc)
have_cmd pkg-config || need_pkgs+=(pkg-config)
have_cmd ip || need_pkgs+=(iproute2)
have_cmd python3 || need_pkgs+=(python3)
have_pc libbpf || need_pkgs+=(libbpf-dev)
have_pc libxdp || need_pkgs+=(libxdp-dev xdp-tools)
# xdp-filter: the neighbour the chain tests load beside the limiter (also into the qemu guests).
have_cmd xdp-filter || [ -x /usr/sbin/xdp-filter ] || need_pkgs+=(xdp-tools)
have_pc check || need_pkgs+=(check)
have_pc libelf || need_pkgs+=(libelf-dev)
have_pc zlib || need_pkgs+=(zlib1g-dev)
have_pc libpcap || need_pkgs+=(libpcap-dev)
have_pc libmicrohttpd || need_pkgs+=(libmicrohttpd-dev)
[ -e /usr/include/linux/bpf.h ] || need_pkgs+=(linux-libc-dev)
# Used by the tests: real clients and tools on what xdp-pacer produces.
have_cmd curl || need_pkgs+=(curl)
have_cmd tcpdump || need_pkgs+=(tcpdump)
have_cmd dumpcap || need_pkgs+=(wireshark-common)  # dumpcap writes pcapng captures
have_cmd promtool || need_pkgs+=(prometheus)       # Debian ships promtool in it
have_cmd systemd-analyze || need_pkgs+=(systemd)
have_cmd groff || need_pkgs+=(groff-base)          # man page check
have_cmd man || need_pkgs+=(man-db)
# The policy demonstration's real programs (scripts/policy-demo.sh).  The
# DNS server from dnsmasq-base: the binary alone, with no system service and
# no hook on the host's resolver (the dnsmasq package has both).
have_cmd dnsmasq || [ -x /usr/sbin/dnsmasq ] || need_pkgs+=(dnsmasq-base)
have_cmd dnsperf || need_pkgs+=(dnsperf)
have_cmd iperf3 || need_pkgs+=(iperf3) # the policy demo; tests/integ_router.sh's transfer
have_cmd nft || [ -x /usr/sbin/nft ] || need_pkgs+=(nftables)  # scripts/bench-nft.sh: the same policy in nftables; integ_router.sh's counts
have_cmd trafgen || [ -x /usr/sbin/trafgen ] || need_pkgs+=(netsniff-ng) # scripts/bench-gen.sh: gen's engines beside trafgen
# make deb and its test: dependencies of the binary, the package's checker.
have_cmd dpkg-shlibdeps || need_pkgs+=(dpkg-dev)
have_cmd lintian || need_pkgs+=(lintian)
# The qemu boot test of Debian's kernel packages (tests/integ_qemu.sh).
have_cmd qemu-system-x86_64 || need_pkgs+=(qemu-system-x86)
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need_pkgs+=(busybox-static)
have_cmd cpio || need_pkgs+=(cpio)
have_cmd xz || need_pkgs+=(xz-utils)
# The feeds test (tests/integ_feeds.sh): CrowdSec's local API and its custom
# bouncer, and fail2ban, driving the deny list through dist/'s files.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
installed crowdsec || need_pkgs+=(crowdsec)
installed crowdsec-custom-bouncer || need_pkgs+=(crowdsec-custom-bouncer)
installed fail2ban || need_pkgs+=(fail2ban)

if [ ${#need_pkgs[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "xdp-pacer: missing packages: ${need_pkgs[*]}" >&2
	echo "xdp-pacer: run as root (or: sudo apt-get install ${need_pkgs[*]})" >&2
	exit 1
fi
echo "xdp-pacer: installing ${need_pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# iperf3's package asks whether to run a server at boot: no.
if [[ " ${need_pkgs[*]} " == *" iperf3 "* ]]; then
	echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
fi
# crowdsec's post-install registers with CrowdSec's central API over the
# internet and fails without it, unless this file is there and not empty
# (its README.Debian: the registration is then skipped, and the file kept
# on purge).  Written only when missing or empty.
CAPI=/etc/crowdsec/online_api_credentials.yaml
if [[ " ${need_pkgs[*]} " == *" crowdsec "* ]] && [ ! -s "$CAPI" ]; then
	mkdir -p "$(dirname "$CAPI")"
	echo "# no thanks: written by xdp-pacer's scripts/deps.sh (no central API registration)" >"$CAPI"
fi
# Packages are installed, never started: without systemd running, the
# maintainer scripts fall back to their init.d scripts (fail2ban's fails its
# install when its jail cannot start), so a policy-rc.d denies every start
# for the install's duration, unless the machine already has one (left alone).
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
	printf '#!/bin/sh\n# xdp-pacer scripts/deps.sh: no service starts while it installs\nexit 101\n' >"$POLICY"
	chmod 0755 "$POLICY"
	trap 'rm -f "$POLICY"' EXIT
fi
apt-get update -qq >&2
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${need_pkgs[@]}" >&2
