#!/usr/bin/env python3
"""Send crafted Ethernet/IP/UDP frames from many source addresses on one interface.

Used by the integration tests inside a network namespace they own; the
frames go to the veth peer, where the limiter under test runs.
"""
import argparse
import ipaddress
import socket
import struct
import sys
import time


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(text: str) -> bytes:
    return bytes(int(x, 16) for x in text.split(":"))


def frame(src, dst, dmac, smac, vlan, payload=6):
    data = (b"pacer!" * (payload // 6 + 1))[:payload]
    udp = struct.pack("!HHHH", 40000, 9, 8 + len(data), 0) + data
    if src.version == 4:
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                          src.packed, dst.packed)
        hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
        l3, proto = hdr + udp, 0x0800
    else:
        hdr = struct.pack("!IHBB16s16s", 6 << 28, len(udp), 17, 64, src.packed, dst.packed)
        l3, proto = hdr + udp, 0x86DD
    eth = dmac + smac
    if vlan:
        eth += struct.pack("!HH", 0x8100, vlan)
    return eth + struct.pack("!H", proto) + l3


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src-base", required=True, help="first source address")
    ap.add_argument("--dst", required=True)
    ap.add_argument("--sources", type=int, default=1)
    ap.add_argument("--stride", type=int, default=1, help="address step between sources")
    ap.add_argument("--per-source", type=int, default=1, help="packets per source per round")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--round-gap", type=float, default=0.0, help="seconds between rounds")
    ap.add_argument("--vlan", type=int, default=0)
    ap.add_argument("--payload", type=int, default=6, help="UDP payload bytes")
    a = ap.parse_args()

    base = ipaddress.ip_address(a.src_base)
    dst = ipaddress.ip_address(a.dst)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    smac = s.getsockname()[4][:6]
    frames = [frame(base + i * a.stride, dst, mac(a.dst_mac), smac, a.vlan, a.payload)
              for i in range(a.sources)]
    sent = 0
    for r in range(a.rounds):
        if r and a.round_gap:
            time.sleep(a.round_gap)
        for f in frames:
            for _ in range(a.per_source):
                s.send(f)
                sent += 1
    print(sent)


if __name__ == "__main__":
    sys.exit(main())
