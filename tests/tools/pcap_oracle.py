#!/usr/bin/env python3
"""An independent exact limiter over a classic pcap file, to check `analyze --pcap`.

Reads Ethernet frames (untagged IPv4/IPv6 only), keys sources by masked
address, and applies the pace policy with the datapath's tick arithmetic:
drop when the key's last admitted tick is fewer than THRESH ticks ago.
Prints "admitted dropped sources".
"""
import ipaddress
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        scale = {0xA1B2C3D4: 1000, 0xA1B23C4D: 1}[magic]
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, caplen, _ = struct.unpack("<IIII", rh)
            data = f.read(caplen)
            if len(data) < caplen:
                return
            yield sec * 1_000_000_000 + frac * scale, data


def main():
    path, tick_ns, thresh, p4, p6 = sys.argv[1], *map(int, sys.argv[2:6])
    shift = tick_ns.bit_length() - 1
    last, admitted, dropped = {}, 0, 0
    for ts, d in frames(path):
        proto = struct.unpack("!H", d[12:14])[0]
        if proto == 0x0800:
            key = (4, int(ipaddress.ip_network(f"{ipaddress.ip_address(d[26:30])}/{p4}", strict=False).network_address))
        elif proto == 0x86DD:
            key = (6, int(ipaddress.ip_network(f"{ipaddress.ip_address(d[22:38])}/{p6}", strict=False).network_address))
        else:
            continue
        tick = ts >> shift
        if key in last and tick - last[key] < thresh:
            dropped += 1
        else:
            admitted += 1
            last[key] = tick
    print(admitted, dropped, len(last))


if __name__ == "__main__":
    main()
