#!/usr/bin/env bash
# Build the Debian package from `make install` into a staging tree:
#   scripts/deb.sh BUILD VERSION   (what `make deb` runs)
# Writes BUILD/xdp-pacer_VERSION_ARCH.deb: the CLI in /usr/sbin, the BPF
# object, the man page, bash completion, the systemd units, the example
# configuration, the CrowdSec bouncer's script and example settings, the
# fail2ban action (a conffile), CHANGELOG.md, and the copyright file;
# dependencies from dpkg-shlibdeps; maintainer scripts from dist/debian/
# (an upgrade restarts the running limiters in place).  Native package (no
# Debian revision).
set -euo pipefail
BUILD=${1:?usage: scripts/deb.sh BUILD VERSION}
VERSION=${2:?usage: scripts/deb.sh BUILD VERSION}
cd "$(dirname "$0")/.."
ARCH=$(dpkg --print-architecture)
STAGE=$BUILD/deb/root
OUT=$BUILD/xdp-pacer_${VERSION}_${ARCH}.deb
DOC=$STAGE/usr/share/doc/xdp-pacer

rm -rf "$BUILD/deb"
mkdir -p "$STAGE/DEBIAN"
# /sbin for an administrator's tool (man section 8); units where Debian 12's systemd looks.
make -s install DESTDIR="$STAGE" PREFIX=/usr BINDIR=/usr/sbin SYSCONFDIR=/etc \
	UNITDIR=/lib/systemd/system >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$STAGE/usr/sbin/xdp-pacer"
gzip -9n "$STAGE/usr/share/man/man8/xdp-pacer.8"
install -m 0644 CHANGELOG.md "$DOC/CHANGELOG.md"
gzip -9n "$DOC/CHANGELOG.md"

# A native package's changelog, in Debian's format; dated by the last commit when there is one.
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
{
	echo "xdp-pacer ($VERSION) unstable; urgency=medium"
	echo
	echo "  * Release $VERSION; the changes are in /usr/share/doc/xdp-pacer/CHANGELOG.md.gz."
	echo
	echo " -- xdp-pacer developers <xdp-pacer@example.org>  $date"
} | gzip -9n >"$DOC/changelog.gz"

cat >"$DOC/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: xdp-pacer

Files: *
Copyright: 2026 xdp-pacer developers
License: GPL-2 or BSD-2-clause

License: GPL-2
 This program is free software; you can redistribute it and/or modify it
 under the terms of the GNU General Public License version 2 as published by
 the Free Software Foundation.
 .
 On Debian systems, the full text of the GNU General Public License version 2
 can be found in /usr/share/common-licenses/GPL-2.

License: BSD-2-clause
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are met:
 .
 1. Redistributions of source code must retain the above copyright notice,
    this list of conditions and the following disclaimer.
 2. Redistributions in binary form must reproduce the above copyright notice,
    this list of conditions and the following disclaimer in the documentation
    and/or other materials provided with the distribution.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
 AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
 ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
 LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
 SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
 INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
 CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
 ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 POSSIBILITY OF SUCH DAMAGE.
EOF

# The BPF object is bytecode for the kernel's BPF machine, whatever the
# host's architecture: tell lintian so.
mkdir -p "$STAGE/usr/share/lintian/overrides"
echo "xdp-pacer: binary-from-other-architecture [usr/lib/bpf/xdp-pacer/xdp_pacer.bpf.o]" \
	>"$STAGE/usr/share/lintian/overrides/xdp-pacer"

# dpkg-shlibdeps wants a source package's debian/control around it.
SHLIB=$BUILD/deb/shlibs
mkdir -p "$SHLIB/debian"
printf 'Source: xdp-pacer\n\nPackage: xdp-pacer\nArchitecture: any\n' >"$SHLIB/debian/control"
deps=$(cd "$SHLIB" && dpkg-shlibdeps -O "$(realpath "../root/usr/sbin/xdp-pacer")" |
	sed -n 's/^shlibs:Depends=//p')

size=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat >"$STAGE/DEBIAN/control" <<EOF
Package: xdp-pacer
Version: $VERSION
Architecture: $ARCH
Maintainer: xdp-pacer developers <xdp-pacer@example.org>
Installed-Size: $size
Depends: $deps
Suggests: crowdsec-custom-bouncer, fail2ban
Section: net
Priority: optional
Description: per-source XDP packet limiter with a recency sketch
 xdp-pacer is an XDP program and its command line tool: it admits at most
 one packet per interval (or N per T with bursts) from each source prefix,
 remembering sources in a recency sketch or a compact table, with an
 optional global budget.  The tool loads, configures and unloads it,
 reports counters (also for Prometheus), records sampled decisions and
 analyses recordings and captures.  CrowdSec's custom bouncer and fail2ban
 can feed its deny list (a bouncer script and a fail2ban action).
EOF
# The maintainer scripts: an upgrade restarts the running limiters in place,
# a removal stops them keeping their maps.
install -m 0755 dist/debian/postinst dist/debian/prerm dist/debian/postrm "$STAGE/DEBIAN/"
(cd "$STAGE" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) \
	>"$STAGE/DEBIAN/md5sums"
# Every file under /etc is the administrator's once installed.
(cd "$STAGE" && find etc -type f -printf '/%p\n' | sort) >"$STAGE/DEBIAN/conffiles"
find "$STAGE" -type d -exec chmod 0755 {} +
find "$STAGE" -type f ! -path "$STAGE/usr/sbin/*" ! -path "$STAGE/usr/libexec/*" ! -path "$STAGE/DEBIAN/p*" -exec chmod 0644 {} +
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$OUT" >/dev/null
echo "$OUT"
