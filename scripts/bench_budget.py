#!/usr/bin/env python3
"""Global budget benchmark (--budget, --reserve), on bench.py's veth pair and helpers.

Run through scripts/bench-budget.sh (root): bench.sh's clean-up trap applies.

  cost     spoofed flood from two generator threads (both CPUs receive and
           both hammer the budget's lock): ns/packet of the pacer alone and
           with a budget that never refuses, one that refuses most packets,
           and one with the reserve (filter probes and stamps), in the same
           run; per-source interval 1 ms so pacing admits nearly every new
           source and the budget stage sees them
  budget   admissions per second against K (the exact check, every window,
           is tests/prog_budget.c)
  mix      good sources (400, one packet every 2 s: 200/s) first alone,
           then inside a spoofed flood asked at 30 x K per T (the flood
           actually sent is reported, it must be >= 10 x K); a tc referee
           (bpf/bench_count.bpf.c) counts which good packets passed; with and
           without the reserve
  returning  scripts/returning.py's scenario: 200 good sources on CPU 0,
           then a spoofed flood from CPU 1 at full speed (--budget 2000/1s,
           --interval 1s, shared), each backend, with and without the
           reserve: the good packets' pass rate during the flood

--compare-cli PATH runs the cost and returning rows also with another build
of the CLI (e.g. the base branch's), interleaved, as "NAME@base".
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import bench as B
import returning as R

K = 1000                    # mix budget: 1000 per second
GOOD_N, GOOD_PERIOD_S = 400, 2
FLOOD_PPS = 30 * K          # asked for; what the loaded VM delivers is reported
RESERVE_PCT = 70
RESERVE_CELLS = 1 << 21     # filter sized for 10 s of flood admissions (docs/design.md: reserve for returning sources)
COST_LOAD = ["--placement", "shared", "--width", "131072", "--interval", "1ms"]
COST_PROGRAMS = {
    "pacer (no budget)": COST_LOAD,
    "budget 2^32/s (never refuses)": COST_LOAD + ["--budget", "4294967296/1s"],
    "budget 100k/s": COST_LOAD + ["--budget", "100000/1s"],
    "budget 100k/s, reserve 50 %": COST_LOAD + ["--budget", "100000/1s", "--reserve", "50"],
}
GOOD_ONLY = ["--dist", "uniform", "--sources", str(GOOD_N), "--src-base", B.GOOD_BASE]
MIX = ["--dist", "mix", "--good", str(GOOD_N), "--good-period", f"{GOOD_PERIOD_S}s",
       "--src-base", B.GOOD_BASE]


def stats(cli=None):
    return json.loads(B.sh(cli or B.CLI, "stats", B.IF_RX, "--json", ns=B.NS_RX))


def attach(load, cli=None):
    name = "_budget" + (B.BASE_SUFFIX if cli else "")
    B.PROGRAMS[name] = ("cli", load)
    if cli:
        B.CLI_OF[name] = cli
    return B.attach(name)[0]


def cost_cell(name, secs, threads, reps, cli=None):
    pid = attach(COST_PROGRAMS[name], cli)
    runs = []
    try:
        for _ in range(reps):
            s0 = stats(cli)
            t0, c0, maps = B.prog_stats(pid)
            g = B.gen(["--dist", "spoofed"], secs, threads)
            t1, c1, _ = B.prog_stats(pid)
            s1 = stats(cli)
            d = {k: s1[k] - s0[k] for k in s1 if isinstance(s1[k], int)}
            runs.append({"ns": (t1 - t0) / max(1, c1 - c0), "rx_pps": (c1 - c0) / g["seconds"],
                         "seconds": g["seconds"], "passed": d["passed"], "seen": d["seen"],
                         "budget_drops": d["dropped_budget"],
                         "paced_drops": d["dropped_recent"],
                         "no_bucket": d["budget_no_bucket"]})
        per_cpu = B.seen_per_cpu(maps)
    finally:
        B.sh(cli or B.CLI, "unload", B.IF_RX, ns=B.NS_RX)
    runs.sort(key=lambda r: r["ns"])
    row = dict(runs[len(runs) // 2])
    row["program"] = name + (B.BASE_SUFFIX if cli else "")
    row["ns_runs"] = [r["ns"] for r in runs]
    row["passed_per_s"] = row["passed"] / row["seconds"]
    row["busiest_cpu_share"] = max(per_cpu) / sum(per_cpu) if per_cpu and sum(per_cpu) else None
    return row


def utilisation_cell(secs, threads):
    """A saturating flood against budget 100k/s for secs (not a whole number of T) from an
    empty ring: an exact sliding window admits K at once and K again every T after,
    floor(secs / T) + 1 waves; the ring re-admits a bucket T after its last admission."""
    attach(COST_PROGRAMS["budget 100k/s"])
    try:
        s0 = stats()
        g = B.gen(["--dist", "spoofed"], secs, threads)
        s1 = stats()
    finally:
        B.sh(B.CLI, "unload", B.IF_RX, ns=B.NS_RX)
    return {"seconds_asked": secs, "seconds": g["seconds"],
            "admitted": s1["passed"] - s0["passed"], "exact_waves": math.floor(secs) + 1,
            "offered": s1["seen"] - s0["seen"], "no_bucket": s1["budget_no_bucket"]}


def mix_cell(reserve, secs, threads):
    # interval 500 ms, a quarter of the good sources' period: a generator stalled by
    # other work on the VM then sends a good packet late without pacing dropping the next
    load = ["--interval", "500ms", "--budget", f"{K}/1s",
            "--reserve", str(RESERVE_PCT if reserve else 0), "--reserve-cells", str(RESERVE_CELLS)]
    ids = B.referee_attach(B.GOOD_BASE, GOOD_N, 500_000_000 - B.CLOCK_TOL_NS)
    attach(load)
    good_rate = GOOD_N / GOOD_PERIOD_S
    try:
        B.gen(GOOD_ONLY, GOOD_PERIOD_S, threads, rate=good_rate)  # warm-up: users come first
        B.referee_read(ids, reset=True)
        g0 = B.gen(GOOD_ONLY, secs, threads, rate=good_rate)
        r0 = B.referee_read(ids, reset=True)
        s0 = stats()
        g1 = B.gen(MIX, secs, threads, rate=FLOOD_PPS + good_rate)
        r1 = B.referee_read(ids)
        s1 = stats()
    finally:
        B.sh(B.CLI, "unload", B.IF_RX, ns=B.NS_RX)
    flood_passed = r1["passed"] - r1["tracked_passed"]
    return {"reserve": reserve,
            "alone_sent": g0["sent"], "alone_passed": r0["tracked_passed"],
            "alone_rate": r0["tracked_passed"] / max(1, g0["sent"]),
            "flood_sent": g1["sent"] - g1["good_sent"], "good_sent": g1["good_sent"],
            "good_passed": r1["tracked_passed"],
            "flood_rate": r1["tracked_passed"] / max(1, g1["good_sent"]),
            "flood_passed": flood_passed,
            "flood_share_of_admitted": flood_passed / max(1, r1["passed"]),
            "flood_pps": (g1["sent"] - g1["good_sent"]) / g1["seconds"],
            "budget_drops": s1["dropped_budget"] - s0["dropped_budget"],
            # flood sources are new: paced drops in the flood phase are good packets
            "paced_drops": s1["dropped_recent"] - s0["dropped_recent"],
            "no_bucket": s1["budget_no_bucket"] - s0["budget_no_bucket"],
            # frames the veth delivered to XDP (the rest were lost on the way, under load)
            "received_share": (s1["seen"] - s0["seen"]) / max(1, g1["sent"]),
            "returning": s1["budget_returning"] - s0["budget_returning"],
            "seconds": g1["seconds"]}


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="cost: one generator run (1)")
    ap.add_argument("--mix-seconds", type=float, default=4.0, help="mix: each phase (4)")
    ap.add_argument("--reps", type=int, default=3, help="cost: runs per cell; medians (3)")
    ap.add_argument("--mix-reps", type=int, default=7, help="mix: runs each way; medians (7)")
    ap.add_argument("--returning-reps", type=int, default=3,
                    help="returning: runs per cell; medians (3)")
    ap.add_argument("--compare-cli", metavar="PATH",
                    help="also run the cost and returning rows with this xdp-pacer binary")
    ap.add_argument("--only", choices=("cost", "returning"),
                    help="run only these rows")
    ap.add_argument("--out", default=f"{B.BUILD}/bench/budget.json")
    a = ap.parse_args()
    if a.compare_cli and not (os.path.isfile(a.compare_cli) and os.access(a.compare_cli, os.X_OK)):
        ap.error(f"--compare-cli: '{a.compare_cli}' is not an executable file")
    clis = [None] + ([os.path.abspath(a.compare_cli)] if a.compare_cli else [])
    ncpus = len(os.sched_getaffinity(0))
    stats_on = B.BpfStats()
    res = {"machine": {"kernel": os.uname().release, "cpus": ncpus,
                       "loadavg_at_start": open("/proc/loadavg").read().split()[:3]},
           "reps": a.reps, "mix_reps": a.mix_reps, "cost": [], "mix": [], "returning": [],
           "utilisation": []}
    t0 = time.time()
    try:
        B.setup(ncpus)
        for name in COST_PROGRAMS if a.only in (None, "cost") else []:
            for cli in clis:
                B.log(f"cost: {name}{' (compared build)' if cli else ''}")
                res["cost"].append(cost_cell(name, a.seconds, ncpus, a.reps, cli))
        if a.only is None:
            B.log("utilisation: budget 100k/s")
            res["utilisation"] = [utilisation_cell(6.5, ncpus) for _ in range(a.reps)]
        for rep in range(a.mix_reps if a.only is None else 0):
            for reserve in (False, True):
                B.log(f"mix: reserve {'on' if reserve else 'off'}, run {rep + 1}")
                res["mix"].append(mix_cell(reserve, a.mix_seconds, ncpus))
        for rep in range(a.returning_reps if a.only in (None, "returning") and ncpus >= 2 else 0):
            for backend in ("sketch", "table"):
                for reserve in (True, False):
                    for cli in clis:
                        B.log(f"returning: {backend}, reserve {'on' if reserve else 'off'}"
                              f"{' (compared build)' if cli else ''}, run {rep + 1}")
                        c = R.run_cell(backend, reserve, cli)
                        c["build"] = "base" if cli else "this"
                        res["returning"].append(c)
    finally:
        B.teardown()
        stats_on.close()
    res["wall_s"] = time.time() - t0
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)

    print(f"xdp-pacer budget benchmark: {ncpus} CPUs, kernel {res['machine']['kernel']}; "
          f"load average at start {' '.join(res['machine']['loadavg_at_start'])}")
    if res["cost"]:
        print_cost(res, a)
    if res["utilisation"]:
        print_utilisation(res, a)
    if res["mix"]:
        print_mix(res, a)
    if res["returning"]:
        print_returning(res, a)
    print(f"wall time {res['wall_s']:.0f} s; results in {a.out}")
    return 0


def print_returning(res, a):
    print(f"\n| returning: {R.GOOD_N} good sources (1 packet / {R.GOOD_PERIOD_S} s, CPU 0), "
          f"spoofed flood at full speed (CPU 1), --budget {R.K}/1s, medians of "
          f"{a.returning_reps} | build | good pass rate in the flood (runs) | flood Mpps "
          f"| ns/packet in the flood | dropped_recent | table_full |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for backend in ("sketch", "table"):
        for reserve in (True, False):
            for build in ("this", "base"):
                rows = [c for c in res["returning"] if c["backend"] == backend
                        and c["reserve"] == reserve and c["build"] == build]
                if not rows:
                    continue
                runs = ", ".join(f"{100 * c['pass_rate']:.1f}" for c in
                                 sorted(rows, key=lambda c: c["pass_rate"]))
                print(f"| {backend}, reserve {R.RESERVE_PCT if reserve else 0} % | {build} "
                      f"| {100 * med(rows, 'pass_rate'):.1f} % ({runs}) "
                      f"| {med(rows, 'flood_pps') / 1e6:.2f} | {med(rows, 'ns'):.1f} "
                      f"| {med(rows, 'dropped_recent'):.0f} "
                      f"| {med(rows, 'table_full'):.0f} |")


def print_cost(res, a):
    base = res["cost"][0]["ns"]
    print(f"\ncost: median of {a.reps} x {a.seconds} s per row")
    twin = {r["program"]: r["ns"] for r in res["cost"]}
    print("\n| spoofed flood, 2 generator threads | ns/packet | x pacer alone | x @base "
          "| received Mpps | admitted/s | budget drops | busiest CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in res["cost"]:
        share = f"{100 * r['busiest_cpu_share']:.0f} %" if r["busiest_cpu_share"] else ""
        vs = twin.get(r["program"] + B.BASE_SUFFIX)
        ratio = f"{r['ns'] / vs:.2f}" if vs else ""
        print(f"| {r['program']} | {r['ns']:.1f} | {r['ns'] / base:.2f} | {ratio} "
              f"| {r['rx_pps'] / 1e6:.2f} "
              f"| {r['passed_per_s']:.0f} | {100 * r['budget_drops'] / max(1, r['seen']):.1f} % "
              f"| {share} |")


def print_utilisation(res, a):
    u = sorted(res["utilisation"], key=lambda x: x["admitted"])
    u = u[len(u) // 2]
    print(f"\nbudget 100k/s, saturating flood of {u['seconds_asked']} s from an empty ring "
          f"(median of {a.reps}): {u['admitted']} admitted of {u['offered']} received = "
          f"{u['admitted'] / 1e5:.3f} x K; an exact sliding window admits {u['exact_waves']} x K; "
          f"ring ran out of buckets {u['no_bucket']} times")


def print_mix(res, a):
    print(f"\n| mix: {GOOD_N} good sources, 1 packet / {GOOD_PERIOD_S} s, budget {K}/1s, "
          f"flood asked {FLOOD_PPS} pps (medians of {a.mix_reps}) | reserve off | reserve {RESERVE_PCT} % |")
    print("|---|---:|---:|")
    off = [m for m in res["mix"] if not m["reserve"]]
    on = [m for m in res["mix"] if m["reserve"]]
    for rows in (off, on):
        low = min(m["flood_pps"] for m in rows) / K
        for m in rows:
            m["flood_pps_min"] = low
    for label, key, fmt in (("good pass rate, no flood", "alone_rate", "{:.1%}"),
                            ("good pass rate, in the flood", "flood_rate", "{:.1%}"),
                            ("flood sent pps", "flood_pps", "{:.0f}"),
                            ("lowest flood of the runs, x K per T", "flood_pps_min", "{:.1f}"),
                            ("share of frames XDP received, flood phase", "received_share",
                             "{:.1%}"),
                            ("flood's share of admitted packets", "flood_share_of_admitted",
                             "{:.1%}"),
                            ("budget admissions of returning sources", "returning", "{:.0f}"),
                            ("good packets sent in the flood phase", "good_sent", "{:.0f}"),
                            ("paced drops (good packets sent late and early)", "paced_drops",
                             "{:.0f}")):
        print(f"| {label} | {fmt.format(med(off, key))} | {fmt.format(med(on, key))} |")
    for label, rows in (("reserve off", off), ("reserve on", on)):
        rates = sorted(m["flood_rate"] for m in rows)
        print(f"{label}: good pass rate in the flood, each run: "
              + ", ".join(f"{x:.1%}" for x in rates))
    ratio_on = med(on, "flood_rate") / max(1e-9, med(on, "alone_rate"))
    ratio_off = med(off, "flood_rate") / max(1e-9, med(off, "alone_rate"))
    print(f"\nin the flood / no flood: reserve on {ratio_on:.1%}, reserve off {ratio_off:.1%} "
          f"(target: >= 95 % with the reserve): {'met' if ratio_on >= 0.95 else 'missed'}")


if __name__ == "__main__":
    sys.exit(main())
