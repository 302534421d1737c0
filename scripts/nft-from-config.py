#!/usr/bin/env python3
"""The nftables ruleset that enforces what an xdp-pacer configuration file
says, for comparing the two on the same policy (scripts/bench-nft.sh).

    scripts/nft-from-config.py CONFIG --iface IFNAME [--table NAME] [--set-size N] [--counters]

Writes an `nft -f` script to standard output: one netdev table with an
ingress chain on IFNAME.  What maps, and how:

  * the exempt and deny lists: interval sets per family, `ip saddr @exempt4
    accept`, `ip saddr @deny4 drop`, before any class (as the limiter's
    lists come first); overlapping exempt and deny prefixes, which the
    limiter resolves by the longest prefix, are refused;
  * classes, in order: `MATCH jump cN` (the first whose match fits decides,
    as nftables takes the first rule that jumps); in chain cN a pacing class
    keeps one dynamic set per family keyed as the class's key (`src`:
    the source masked to prefix4/prefix6, `src+dport`, `src+dst`), each
    element a `limit rate over R burst B packets` (`interval = D`: 1 per D,
    burst 1; `rate = N/T`: N per T, burst N), refreshed on every packet
    (`update`, with a timeout of twice the limit's period, at least 1 s);
    the packet over the limit is dropped, the rest accepted; `action = pass`
    accepts, `action = drop` drops; unclassified packets are accepted;
  * no classes: the global limit on every IPv4 and IPv6 packet.

--counters puts a counter on each class's verdicts (for tests; it costs
per packet, so the benchmark leaves it out).
What nftables has no equivalent for is refused, naming the line: policy
quiet, observe mode, the global budget, keys other than the above, a rate
whose period is no whole number of nftables' units.
Match words: tcp, udp, icmp, icmpv6, dport/sport N[-M], flags syn (SYN set,
ACK clear), src/dst PREFIX, vlan N, any.
"""
import argparse
import ipaddress
import re
import sys


class ConfError(Exception):
    pass


def duration_s(text, where):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ns|us|ms|s)?", text.strip())
    if not m:
        raise ConfError(f"{where}: '{text}' is not a duration (ns, us, ms, s)")
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0}[m.group(2)]
    v = float(m.group(1)) * scale
    if v <= 0:
        raise ConfError(f"{where}: '{text}' must be more than 0")
    return v


def nft_rate(per_s_num, per_s_den_s, where):
    """N packets per T seconds as nftables' 'N/unit' (whole numbers only)."""
    for unit, secs in (("second", 1), ("minute", 60), ("hour", 3600), ("day", 86400), ("week", 604800)):
        n = per_s_num * secs / per_s_den_s
        if abs(n - round(n)) < 1e-9 and round(n) >= 1:
            return f"{round(n)}/{unit}"
    raise ConfError(f"{where}: {per_s_num} per {per_s_den_s} s is no whole number per second, "
                    "minute, hour, day or week (nftables' limit units)")


class Limit:
    def __init__(self):
        self.rate = None      # "N/unit"
        self.burst = None
        self.period_s = None  # the limit's period (for the sets' timeout)


def parse_limit(key, value, where, lim):
    if key == "interval":
        d = duration_s(value, where)
        lim.rate, lim.burst, lim.period_s = nft_rate(1, d, where), 1, d
    else:  # rate = N/T
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\S+)\s*", value)
        if not m:
            raise ConfError(f"{where}: rate '{value}' is not N/T")
        n, t = int(m.group(1)), duration_s(m.group(2), where)
        lim.rate, lim.burst, lim.period_s = nft_rate(n, t, where), n, t


def unsayable(key, value, where):
    """Refuses the policy and mode nftables has no equivalent for (False: the key is another)."""
    if key == "policy" and value == "quiet":
        raise ConfError(f"{where}: policy quiet has no nftables equivalent")
    if key == "mode" and value == "observe":
        raise ConfError(f"{where}: observe mode has no nftables equivalent")
    return False


def parse(path):
    """(globals, classes, exempt, deny) from a configuration file."""
    glob = {"limit": Limit(), "prefix4": 32, "prefix6": 64, "line": {}}
    parse_limit("interval", "1s", "default", glob["limit"])
    classes, lists = [], {"exempt": [], "deny": []}
    section = None
    with open(path, encoding="utf-8-sig") as f:
        for no, raw in enumerate(f, 1):
            where = f"{path}:{no}"
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"\[(class\s+([A-Za-z0-9_-]{1,15})|exempt|deny)\]", line)
            if m:
                if m.group(2):
                    section = {"name": m.group(2), "where": where, "match": None, "limit": None,
                               "action": None, "key": "src", "prefix4": None, "prefix6": None}
                    classes.append(section)
                else:
                    section = m.group(1)
                continue
            if line.startswith("["):
                raise ConfError(f"{where}: unknown section '{line}'")
            if "=" not in line:
                raise ConfError(f"{where}: '{line}' is not key = value")
            key, value = (s.strip() for s in line.split("=", 1))
            if section in ("exempt", "deny"):
                if key != "src":
                    raise ConfError(f"{where}: [{section}] takes src = PREFIX, ..., not '{key}'")
                for p in filter(None, (s.strip() for s in value.split(","))):
                    try:
                        lists[section].append((ipaddress.ip_network(p, strict=True), where))
                    except ValueError as e:
                        raise ConfError(f"{where}: '{p}': {e}") from None
            elif section is None:
                if key in ("interval", "rate"):
                    parse_limit(key, value, where, glob["limit"])
                elif key in ("prefix4", "prefix6"):
                    glob[key] = int(value)
                elif unsayable(key, value, where):
                    pass
                elif key.startswith("budget"):
                    raise ConfError(f"{where}: the global budget has no nftables equivalent")
                # Everything else (backend, sizes, placement, malformed...) is how the
                # limiter keeps its state, not what it enforces.
            else:
                c = section
                if key == "match":
                    c["match"] = value.split()
                elif key in ("interval", "rate"):
                    c["limit"] = Limit()
                    parse_limit(key, value, where, c["limit"])
                elif key == "action":
                    if value not in ("pace", "pass", "drop"):
                        raise ConfError(f"{where}: action '{value}' is not pace, pass or drop")
                    c["action"] = value
                elif key == "key":
                    if value not in ("src", "src+dport", "src+dst"):
                        raise ConfError(f"{where}: key '{value}' is not src, src+dport or src+dst")
                    c["key"] = value
                elif key in ("prefix4", "prefix6"):
                    c[key] = int(value)
                elif unsayable(key, value, where):
                    pass
                elif key not in ("policy", "mode"):
                    raise ConfError(f"{where}: unknown class key '{key}'")
    for c in classes:
        if c["match"] is None:
            raise ConfError(f"{c['where']}: class {c['name']} has no match")
        if c["action"] is None:
            c["action"] = "pace"
        if c["action"] == "pace" and c["limit"] is None:
            raise ConfError(f"{c['where']}: class {c['name']} paces without a limit")
        for p in ("prefix4", "prefix6"):
            if c[p] is None:
                c[p] = glob[p]
    for e, ew in lists["exempt"]:
        for d, dw in lists["deny"]:
            if e.version == d.version and (e.overlaps(d)):
                raise ConfError(f"{ew} and {dw}: exempt {e} and deny {d} overlap (the limiter "
                                "takes the longest prefix; nftables' sets do not): not converted")
    return glob, classes, lists["exempt"], lists["deny"]


def match_expr(words, where):
    """(nft match expression, families it can fit: {4, 6})."""
    out, fams, proto, i = [], {4, 6}, None, 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w in ("tcp", "udp"):
            proto = w
            out.append(f"meta l4proto {w}")
            i += 1
        elif w == "icmp":
            proto, fams = w, fams & {4}
            out.append("meta l4proto icmp")
            i += 1
        elif w == "icmpv6":
            proto, fams = w, fams & {6}
            out.append("meta l4proto ipv6-icmp")
            i += 1
        elif w in ("dport", "sport"):
            if proto not in ("tcp", "udp") or nxt is None or not re.fullmatch(r"\d+(-\d+)?", nxt):
                raise ConfError(f"{where}: '{w}' needs tcp or udp and N or N-M")
            out.append(f"th {w} {nxt}")
            i += 2
        elif w == "flags":
            if proto != "tcp" or nxt != "syn":
                raise ConfError(f"{where}: 'flags' takes syn, with tcp")
            out.append("tcp flags & (syn | ack) == syn")
            i += 2
        elif w in ("src", "dst"):
            try:
                net = ipaddress.ip_network(nxt or "", strict=True)
            except ValueError as e:
                raise ConfError(f"{where}: {w} '{nxt}': {e}") from None
            fams = fams & {net.version}
            out.append(f"{'ip' if net.version == 4 else 'ip6'} {'saddr' if w == 'src' else 'daddr'} {net}")
            i += 2
        elif w == "vlan":
            if nxt is None or not nxt.isdigit():
                raise ConfError(f"{where}: vlan takes an id")
            out.append(f"vlan id {nxt}")
            i += 2
        elif w == "any" and len(words) == 1:
            i += 1
        else:
            raise ConfError(f"{where}: unknown match word '{w}'")
    if not fams:
        raise ConfError(f"{where}: the match fits no address family")
    return " ".join(out), fams


def masked(fam, prefix):
    if fam == 4:
        return f"ip saddr & {ipaddress.IPv4Network(f'0.0.0.0/{prefix}').netmask}" if prefix < 32 else "ip saddr"
    return f"ip6 saddr & {ipaddress.IPv6Network(f'::/{prefix}').netmask}" if prefix < 128 else "ip6 saddr"


def key_expr(fam, key, prefix):
    base = masked(fam, prefix)
    if key == "src+dport":
        return base + " . th dport", ("ip saddr . th dport" if fam == 4 else "ip6 saddr . th dport")
    if key == "src+dst":
        d = "ip daddr" if fam == 4 else "ip6 daddr"
        return base + f" . {d}", ("ip saddr" if fam == 4 else "ip6 saddr") + f" . {d}"
    return base, ("ip saddr" if fam == 4 else "ip6 saddr")


def ruleset(path, iface, table, set_size, counters=False):
    glob, classes, exempt, deny = parse(path)
    cnt = "counter " if counters else ""
    sets, chains, rules = [], [], []

    def limiter(name, lim, key, p4, p6, fams, lines):
        """Drops what is over lim, keyed per family (the caller accepts the rest)."""
        timeout = max(1, int(2 * lim.period_s + 0.999))
        for fam in sorted(fams):
            expr, typeof = key_expr(fam, key, p4 if fam == 4 else p6)
            s = f"{name}_{fam}"
            sets.append(f"\tset {s} {{\n\t\ttypeof {typeof}\n\t\tsize {set_size}\n"
                        f"\t\tflags dynamic,timeout\n\t\ttimeout {timeout}s\n\t}}")
            proto = "ip" if fam == 4 else "ip6"
            lines.append(f"\t\tmeta protocol {proto} update @{s} {{ {expr} limit rate over "
                         f"{lim.rate} burst {lim.burst} packets }} {cnt}drop")

    for kind, nets in (("exempt", exempt), ("deny", deny)):
        for fam in (4, 6):
            els = [str(n) for n, _ in nets if n.version == fam]
            if not els:
                continue
            sets.append(f"\tset {kind}{fam} {{\n\t\ttype {'ipv4_addr' if fam == 4 else 'ipv6_addr'}\n"
                        f"\t\tflags interval\n\t\tauto-merge\n\t\telements = {{ {', '.join(els)} }}\n\t}}")
            rules.append(f"\t\t{'ip' if fam == 4 else 'ip6'} saddr @{kind}{fam} "
                         f"{'accept' if kind == 'exempt' else 'drop'}")
    if not classes:
        limiter("global", glob["limit"], "src", glob["prefix4"], glob["prefix6"], {4, 6}, rules)
    for n, c in enumerate(classes):
        expr, fams = match_expr(c["match"], c["where"])
        fam_guard = "" if fams == {4, 6} else f"meta protocol {'ip' if fams == {4} else 'ip6'}"
        chain = f"c{n}_{c['name'].replace('-', '_')}"
        body = []
        if c["action"] == "pass":
            body.append(f"\t\t{cnt}accept")
        elif c["action"] == "drop":
            body.append(f"\t\t{cnt}drop")
        else:
            limiter(chain, c["limit"], c["key"], c["prefix4"], c["prefix6"], fams, body)
            body.append(f"\t\t{cnt}accept")
        chains.append(f"\tchain {chain} {{ # class {c['name']}: {' '.join(c['match'])}\n"
                      + "\n".join(body) + "\n\t}")
        rules.append("\t\t" + " ".join(w for w in (fam_guard, expr, f"jump {chain}") if w))
    out = [f"# From {path} by scripts/nft-from-config.py: the same policy in nftables.",
           f"table netdev {table}", f"delete table netdev {table}", f"table netdev {table} {{"]
    out += sets + chains
    out.append(f"\tchain ingress {{\n\t\ttype filter hook ingress device \"{iface}\" priority -500; "
               "policy accept;")
    out += rules
    out.append("\t}\n}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--iface", required=True)
    ap.add_argument("--table", default="xdp_pacer_cmp")
    ap.add_argument("--set-size", type=int, default=1 << 20,
                    help="elements per dynamic set (default 1048576)")
    ap.add_argument("--counters", action="store_true", help="a counter on each class's verdicts")
    a = ap.parse_args()
    try:
        sys.stdout.write(ruleset(a.config, a.iface, a.table, a.set_size, a.counters))
    except (ConfError, OSError, ValueError) as e:
        print(f"nft-from-config: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
