# Sourced by the scripts that make network namespaces with a pacer in them
# (bench.sh, soak.sh, bench-nft.sh, bench-gen.sh, bench-dense10m.sh,
# bench-router.sh, policy-demo.sh): the pair (pair_make) and their clean-up,
# which never fails.
#
# pacer_ns_remove NS IFNAME CLI: unload the pacer on IFNAME in namespace NS,
# remove any pins left (/sys/fs/bpf/xdp-pacer/netns-<inode>/<ifname>) and
# the writer locks the CLI made there (/run/xdp-pacer/netns-<inode>.*.lock:
# named after the inode, which no other namespace has while this one
# lives), then the namespace.
pacer_ns_remove() {
	local ns=$1 ifname=$2 cli=$3 ino
	if [ -e "/run/netns/$ns" ]; then
		nsenter --net="/run/netns/$ns" "$cli" unload "$ifname" >/dev/null 2>&1 || true
		ino=$(stat -L -c %i "/run/netns/$ns")
		rm -rf "/sys/fs/bpf/xdp-pacer/netns-$ino/$ifname"
		rmdir "/sys/fs/bpf/xdp-pacer/netns-$ino" 2>/dev/null || true
		rm -f "/run/xdp-pacer/netns-$ino."*.lock
	fi
	ip netns del "$ns" 2>/dev/null || true
}

# pair_make NS_RX IF_RX NS_TX IF_TX: two namespaces joined by a veth pair,
# IPv6 off in both (the kernel's own solicitations would be counted), both
# ends up.  Fails (non-zero) at the first step that fails.
pair_make() {
	local ns
	ip netns add "$1" && ip netns add "$3" &&
		ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" || return 1
	for ns in "$1" "$3"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1; done
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up
}

# xpb_remove_pair RUN CLI: the namespaces xpb-rx-RUN / xpb-tx-RUN that
# scripts/bench.py's setup() makes, the pacer on xpbrRUN.
xpb_remove_pair() {
	pacer_ns_remove "xpb-rx-$1" "xpbr$1" "$2"
	ip netns del "xpb-tx-$1" 2>/dev/null || true
}
