# Sourced by the scripts that make network namespaces with a pacer in them
# (bench.sh, soak.sh, bench-nft.sh, bench-dense10m.sh, policy-demo.sh):
# their clean-up.  Neither function ever fails.
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

# xpb_remove_pair RUN CLI: the namespaces xpb-rx-RUN / xpb-tx-RUN that
# scripts/bench.py's setup() makes, the pacer on xpbrRUN.
xpb_remove_pair() {
	pacer_ns_remove "xpb-rx-$1" "xpbr$1" "$2"
	ip netns del "xpb-tx-$1" 2>/dev/null || true
}
