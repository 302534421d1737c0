#!/usr/bin/env bash
# Integration: returning sources through a full-speed spoofed flood
# (scripts/returning.py --check): 200 well-behaved sources on CPU 0, then a
# spoofed flood from CPU 1 as fast as the generator goes, --budget 2000/1s
# --reserve 70, shared placement, each backend; >= 95 % of the good packets
# sent during the flood must pass, and the table must never be full.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
# The namespaces and interface scripts/bench.py names after XPB_RUN, for teardown_pair.
export BUILD XPB_RUN="ret$$"
NS_RX="xpb-rx-$XPB_RUN"; NS_TX="xpb-tx-$XPB_RUN"; IF_RX="xpbr$XPB_RUN"; IF_RX=${IF_RX:0:15}
trap teardown_pair EXIT
python3 scripts/returning.py --check
