#!/usr/bin/env python3
"""Per-source rate benchmark (--rate N/T beside --interval), on bench.py's veth pair.

Run through scripts/bench-rate.sh (root): bench.sh's clean-up trap applies.

  cost      ns/packet (BPF run-time statistics) of each backend with
            --interval 100ms, and of the table with --rate 10/1s (the same
            sustained rate, bursts of 10; the sketch refuses rates) and
            --rate 50/30s, shared placement, on two workloads from two generator threads: 1000
            sources sending far above their rate (nearly every packet a
            cell update or a drop) and a spoofed flood (every packet a new
            source); reps interleaved program by program, medians; the
            ratio is against the same backend's --interval in the same run
  code      with --baseline-obj OBJ (an xdp_pacer.bpf.o built from the code
            before --rate): that object and this one, each attached with
            `ip link` on its compiled defaults (--interval 1s, per-CPU
            sketch), interleaved the same way: what generalising the cells
            costs the plain pacer
  accuracy  tests/tools/rate_accuracy: the same programs' code and default
            geometry and tick against the exact per-source GCRA in ns on a
            Zipf stream (admissions against the exact, and admissions that
            break it, which must be none), and one source flooding at
            2000 packets/s for 3 s per rate (or load's refusal)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import bench as B

BASE = ["--placement", "shared"]
PROGS = {
    "sketch --interval 100ms": BASE + ["--backend", "sketch", "--interval", "100ms"],
    "table --interval 100ms": BASE + ["--backend", "table", "--interval", "100ms"],
    "table --rate 10/1s": BASE + ["--backend", "table", "--rate", "10/1s"],
    "table --rate 50/30s": BASE + ["--backend", "table", "--rate", "50/30s"],
}
WLS = {"uniform-1k": B.WORKLOADS["uniform-1k"], "spoofed": B.WORKLOADS["spoofed"]}
OBJS = {}  # name -> object path, with --baseline-obj


def stats():
    return json.loads(B.sh(B.CLI, "stats", B.IF_RX, "--json", ns=B.NS_RX))


def attach(name):
    """Attach a program of PROGS through the CLI, or an object of OBJS with `ip link`."""
    if name not in OBJS:
        B.PROGRAMS["_rate"] = ("cli", PROGS[name])
        return B.attach("_rate")[0]
    B.sh("ip", "link", "set", "dev", B.IF_RX, "xdp", "obj", OBJS[name], "sec", "xdp", ns=B.NS_RX)
    return json.loads(B.sh("ip", "-j", "-d", "link", "show", "dev", B.IF_RX,
                           ns=B.NS_RX))[0]["xdp"]["prog"]["id"]


def detach(name):
    if name in OBJS:
        B.sh("ip", "link", "set", "dev", B.IF_RX, "xdp", "off", ns=B.NS_RX)
    else:
        B.sh(B.CLI, "unload", B.IF_RX, ns=B.NS_RX)


def one_run(name, wl, secs, threads):
    # the CLI reads this ABI only: an older object's counters are not read
    own = name not in OBJS or name == "this object (defaults)"
    pid = attach(name)
    try:
        s0 = stats() if own else None
        t0, c0, _ = B.prog_stats(pid)
        g = B.gen(WLS[wl], secs, threads)
        t1, c1, _ = B.prog_stats(pid)
        s1 = stats() if own else None
    finally:
        detach(name)
    return {"ns": (t1 - t0) / max(1, c1 - c0), "rx_pps": (c1 - c0) / g["seconds"],
            "passed_share": (s1["passed"] - s0["passed"]) / max(1, s1["seen"] - s0["seen"])
            if own else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="one generator run (1)")
    ap.add_argument("--reps", type=int, default=5, help="runs per cell, interleaved; medians (5)")
    ap.add_argument("--out", default=f"{B.BUILD}/bench/rate.json")
    ap.add_argument("--baseline-obj", help="xdp_pacer.bpf.o of the code before --rate")
    a = ap.parse_args()
    if a.baseline_obj:
        OBJS["object before --rate (defaults)"] = os.path.abspath(a.baseline_obj)
        OBJS["this object (defaults)"] = os.path.abspath(f"{B.BUILD}/xdp_pacer.bpf.o")
    names = list(OBJS) + list(PROGS)
    ncpus = len(os.sched_getaffinity(0))
    stats_on = B.BpfStats()
    res = {"machine": {"kernel": os.uname().release, "cpus": ncpus,
                       "loadavg_at_start": open("/proc/loadavg").read().split()[:3]},
           "reps": a.reps, "seconds": a.seconds, "runs": {}}
    t0 = time.time()
    try:
        B.setup(ncpus)
        for rep in range(a.reps):
            for wl in WLS:
                for name in names:
                    B.log(f"rep {rep + 1}: {name} on {wl}")
                    res["runs"].setdefault(f"{name}|{wl}", []).append(
                        one_run(name, wl, a.seconds, ncpus))
    finally:
        B.teardown()
        stats_on.close()
    acc = subprocess.run([f"{B.BUILD}/tests/tools/rate_accuracy"], check=True,
                         capture_output=True, text=True).stdout
    lines = [json.loads(line) for line in acc.splitlines() if line.strip()]
    res["accuracy"] = [r for r in lines if "scenario" in r]
    res["floods"] = [r for r in lines if "flood" in r]
    res["wall_s"] = time.time() - t0
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)

    def med(name, wl, key):
        xs = [r[key] for r in res["runs"][f"{name}|{wl}"] if r[key] is not None]
        return statistics.median(xs) if xs else None

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f} %"

    print(f"xdp-pacer rate benchmark: {ncpus} CPUs, kernel {res['machine']['kernel']}; load "
          f"average at start {' '.join(res['machine']['loadavg_at_start'])}; medians of "
          f"{a.reps} interleaved runs of {a.seconds:g} s, {ncpus} generator threads")
    print("\n| program (shared placement; objects: their defaults) | workload | ns/packet "
          "| x baseline (same backend's --interval; the object before --rate) "
          "| received Mpps | passed |")
    print("|---|---|---:|---:|---:|---:|")
    for wl in WLS:
        for name in names:
            base = ("object before --rate (defaults)" if name in OBJS else
                    "sketch --interval 100ms" if name.startswith("sketch") else
                    "table --interval 100ms")
            ns = med(name, wl, "ns")
            print(f"| {name} | {wl} | {ns:.1f} | {ns / med(base, wl, 'ns'):.2f} "
                  f"| {med(name, wl, 'rx_pps') / 1e6:.2f} | {pct(med(name, wl, 'passed_share'))} |")
    for wl in WLS:
        for name in names:
            print(f"{name} on {wl}: ns/packet each run: "
                  + ", ".join(f"{r['ns']:.1f}" for r in res["runs"][f"{name}|{wl}"]))
    a0 = res["accuracy"][0]
    print(f"\naccuracy: {a0['sources']} Zipf({a0['zipf_s']}) sources, {a0['pps']:.0f} pps "
          f"Poisson, {a0['seconds']:.0f} s ({a0['packets']} packets), default geometry and tick")
    print("\n| program | tick | burst at once | admitted / exact GCRA | of which quantisation "
          "(tick GCRA / exact) | structure / tick GCRA | admissions breaking the exact GCRA |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in res["accuracy"]:
        print(f"| {r['scenario']} | {r['tick_ns'] / 1e6:.3f} ms | {r['burst_at_once']} "
              f"| {100 * r['admitted'] / r['exact']:.2f} % | {100 * r['tick_exact'] / r['exact']:.2f} % "
              f"| {100 * r['admitted'] / r['tick_exact']:.3f} % | {r['nonconforming']} |")
    print("\none source at 2000 packets/s for 3 s, load's default tick (or its refusal)")
    print("\n| program | tick | burst at once | spacing | admitted | exact GCRA |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in res["floods"]:
        if "refused" in r:
            print(f"| {r['flood']} | refused: {r['refused']} | | | | |")
        else:
            print(f"| {r['flood']} | {r['tick_ns'] / 1e3:.3f} us | {r['burst_at_once']} "
                  f"| {r['spacing_ns'] / 1e6:.3f} ms | {r['admitted']} | {r['exact']} |")
    print(f"\nwall time {res['wall_s']:.0f} s; results in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
