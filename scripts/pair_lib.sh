# Sourced by bench.sh and soak.sh: the clean-up of a run's veth pair (the
# namespaces xpb-rx-RUN / xpb-tx-RUN that scripts/bench.py's setup() makes).
# xpb_remove_pair RUN CLI: unload the pacer there, remove any pins left
# (per namespace: /sys/fs/bpf/xdp-pacer/netns-<inode>/<ifname>), then the
# namespaces.  Never fails.
xpb_remove_pair() {
	local run=$1 cli=$2 pins
	nsenter --net="/run/netns/xpb-rx-$run" "$cli" unload "xpbr$run" >/dev/null 2>&1 || true
	pins=/sys/fs/bpf/xdp-pacer/netns-$(stat -L -c %i "/run/netns/xpb-rx-$run" 2>/dev/null || echo none)
	rm -rf "$pins/xpbr$run"
	rmdir "$pins" 2>/dev/null || true
	ip netns del "xpb-rx-$run" 2>/dev/null || true
	ip netns del "xpb-tx-$run" 2>/dev/null || true
}
