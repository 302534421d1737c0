#!/usr/bin/env bash
# Integration: the Debian package.  `make deb` builds it, lintian finds no
# errors, `apt-get install ./xdp-pacer_*.deb` installs it on this machine
# (pulling in nothing else), the installed CLI loads, shows and unloads the
# limiter on a veth pair in namespaces this test creates, and purging it
# removes every file it installed.  A machine that already has the package
# installed is left alone (skip), and the package is purged on any exit.
# run.sh: background (no timing of its own; runs beside the rest)
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpd-deb.XXXXXX)
INSTALLED=
cleanup() {
	stop_background
	[ -n "$INSTALLED" ] && apt-get purge -y -qq -o DPkg::Lock::Timeout=300 xdp-pacer >/dev/null 2>&1
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

for tool in dpkg-deb apt-get lintian; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
# Two runs at once (helpers, CI) would install and purge under each other.
exec 9>/run/lock/xdp-pacer-deb-test.lock
flock -w 600 9 || { echo "cannot take /run/lock/xdp-pacer-deb-test.lock"; exit 1; }
if dpkg-query -W -f='${Status}' xdp-pacer 2>/dev/null | grep -q 'ok installed'; then
	echo "SKIP: xdp-pacer is installed as a package on this machine; not touching it"
	exit 77
fi

VERSION=$("$CLI" --version | awk '{print $2}')
make -s deb BUILD="$BUILD" >/dev/null
check "make deb exits 0" test $? -eq 0
DEB=$(realpath "$BUILD/xdp-pacer_${VERSION}_$(dpkg --print-architecture).deb")
check "it wrote $(basename "$DEB")" test -s "$DEB"
check "the package is version $VERSION" test "$(dpkg-deb -f "$DEB" Version)" = "$VERSION"
lintian "$DEB" >"$WORK/lintian" 2>&1
rc=$?
check "lintian finds no errors or warnings" bash -c "test $rc -eq 0 && ! grep -q '^[EW]:' '$WORK/lintian'"
grep '^[EW]:' "$WORK/lintian"
dpkg-deb -c "$DEB" | awk '{print $6}' >"$WORK/contents"
missing=
for f in ./usr/sbin/xdp-pacer ./usr/lib/bpf/xdp-pacer/xdp_pacer.bpf.o \
	./usr/share/man/man8/xdp-pacer.8.gz ./usr/share/bash-completion/completions/xdp-pacer \
	./lib/systemd/system/xdp-pacer@.service ./lib/systemd/system/xdp-pacer-exporter.service \
	./lib/systemd/system/xdp-pacer-events@.service \
	./usr/share/doc/xdp-pacer/example.conf ./usr/share/doc/xdp-pacer/copyright \
	./usr/share/doc/xdp-pacer/changelog.gz ./usr/share/doc/xdp-pacer/CHANGELOG.md.gz \
	./usr/libexec/xdp-pacer/crowdsec-decision ./etc/fail2ban/action.d/xdp-pacer.conf \
	./usr/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local; do
	grep -qx "$f" "$WORK/contents" || missing="$missing $f"
done
check "it holds the binary, BPF object, man page, completion, units, example config, feeds' files (missing:${missing:- none})" \
	test -z "$missing"
check "the fail2ban action is a conffile, the only one" \
	test "$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles)" = /etc/fail2ban/action.d/xdp-pacer.conf

apt-get install -s "$DEB" >"$WORK/sim" 2>&1
others=$(grep '^Inst ' "$WORK/sim" | grep -v '^Inst xdp-pacer ' | cut -d' ' -f2 | tr '\n' ' ')
check "installing it pulls in no other package (${others:-none})" test -z "$others"
INSTALLED=1
apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$DEB" >"$WORK/install" 2>&1
rc=$?
check "apt-get install ./xdp-pacer_${VERSION}_*.deb exits 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$WORK/install"
check "dpkg says it is installed, version $VERSION" \
	test "$(dpkg-query -W -f='${Status} ${Version}' xdp-pacer)" = "install ok installed $VERSION"
dpkg -L xdp-pacer >"$WORK/files"
check "the installed CLI says its version" \
	bash -c "/usr/sbin/xdp-pacer --version | grep -qx 'xdp-pacer $VERSION (datapath ABI [0-9]*)'"
check "the unit runs the installed CLI" \
	grep -q "^ExecStart=/usr/sbin/xdp-pacer load %i --config /etc/xdp-pacer/%i.conf" /lib/systemd/system/xdp-pacer@.service
check "man finds the page" bash -c "man -w xdp-pacer | grep -q '/usr/share/man/man8/xdp-pacer.8.gz'"
check "crowdsec-decision runs the installed CLI" grep -qx 'XDP_PACER=/usr/sbin/xdp-pacer' /usr/libexec/xdp-pacer/crowdsec-decision
check "... and the bouncer's example names it" \
	grep -qx 'bin_path: /usr/libexec/xdp-pacer/crowdsec-decision' /usr/share/doc/xdp-pacer/examples/crowdsec-custom-bouncer.yaml.local
check "the fail2ban action runs the installed CLI" grep -qx 'xdp_pacer = /usr/sbin/xdp-pacer' /etc/fail2ban/action.d/xdp-pacer.conf

# --- the demo's load, status, unload with the installed CLI ---
setup_pair xpd || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
PKG=/usr/sbin/xdp-pacer
rx "$PKG" load "$IF_RX" --interval 250ms >/dev/null
check "installed CLI: load on a veth" test $? -eq 0
send 10.215.0.1 50 >/dev/null
st=$(rx "$PKG" status "$IF_RX")
check "installed CLI: status shows its version and the pacer" \
	bash -c "grep -q '^xdp-pacer $VERSION' <<<'$st' && grep -q 'policy pace' <<<'$st'"
check "installed CLI: the pacer saw the traffic" \
	bash -c "nsenter --net=/run/netns/$NS_RX $PKG stats $IF_RX --json | grep -q '\"passed\":50'"
rx "$PKG" unload "$IF_RX" >/dev/null
check "installed CLI: unload" test $? -eq 0
check "installed CLI: nothing attached after unload" bash -c "! nsenter --net=/run/netns/$NS_RX $PKG status $IF_RX >/dev/null 2>&1"
rx ip link set dev "$IF_RX" xdpgeneric obj /usr/lib/bpf/xdp-pacer/xdp_pacer.bpf.o sec xdp
check "the installed BPF object attaches with ip link" test $? -eq 0
rx ip link set dev "$IF_RX" xdpgeneric off

# --- purge: every file gone, the package unknown to dpkg ---
apt-get purge -y -qq -o DPkg::Lock::Timeout=300 xdp-pacer >"$WORK/purge" 2>&1
rc=$?
check "apt-get purge xdp-pacer exits 0" test $rc -eq 0
[ $rc -eq 0 ] && INSTALLED=
left=
while read -r f; do [ -f "$f" ] && left="$left $f"; done <"$WORK/files"
check "purge removed every file it installed (left:${left:- none})" test -z "$left"
check "dpkg no longer knows it" bash -c "! dpkg-query -W -f='\${Status}' xdp-pacer 2>/dev/null | grep -q installed"
finish
