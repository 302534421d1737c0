#!/usr/bin/env python3
"""Returning sources through a full-speed spoofed flood, on bench.py's veth pair and helpers.

The scenario (--interval 1s --budget 2000/1s --reserve 70, shared placement,
--width 65536: state for 65536 sources, which a flood of >= 50 x K per T fills
within the interval as 1.6 Mpps fills the default 2^20, so the scenario holds on
a slow or loaded machine too):
200 well-behaved sources send one packet every 2 s from CPU 0, alone for
ALONE_S seconds (two packets each, counted: a starved generator takes longer),
then a spoofed flood from CPU 1 as fast as the generator goes, for FLOOD_S
seconds, beside them.  A tc
referee behind the limiter (bpf/bench_count.bpf.c) counts the well-behaved
packets that passed: the pass rate is those passed during the flood over
those sent during it.

  returning.py --check   the integration test's use (tests/integ_returning.sh):
                         one run per backend with the reserve; each must pass
                         >= 95 % and the table must never be full; prints the
                         test's "N passed, N failed" line
scripts/bench_budget.py runs the same cell (run_cell) as its "returning" rows.
Needs root, two CPUs and a build (BUILD, default build); the namespaces are
named after XPB_RUN, and teardown() removes them.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

K, RESERVE_PCT = 2000, 70
GOOD_N, GOOD_PERIOD_S = 200, 2
GOOD_BASE = "10.211.16.0"
ALONE_S = 4   # two packets of every source before the flood (at least 4 s)
FLOOD_S = 6
TARGET = 0.95
WIDTH = 65536  # sketch: cells per row (4 rows); table: entries


def gen_on(cpu, args, seconds, cli, rate=None, count=None):
    """A generator process pinned to one CPU (one thread: the first CPU it may run on), for
    `seconds` or `count` frames."""
    cmd = ["nsenter", f"--net=/run/netns/{B.NS_TX}", "taskset", "-c", str(cpu), cli, "gen",
           B.IF_TX, "--dst", B.DST, "--threads", "1", "--json"] + args
    cmd += ["--count", str(count)] if count else ["--duration", f"{seconds}s"]
    if rate:
        cmd += ["--pps", str(rate)]
    return subprocess.Popen(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def gen_result(p):
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"gen failed ({p.returncode}): {err.strip()}")
    return json.loads(out.strip().splitlines()[-1])


def stats(cli):
    return json.loads(B.sh(cli, "stats", B.IF_RX, "--json", ns=B.NS_RX))


def run_cell(backend, reserve, cli=None, alone_s=ALONE_S, flood_s=FLOOD_S):
    """One run of the scenario; returns what was sent, passed and counted."""
    cli = cli or B.CLI
    good = ["--dist", "uniform", "--sources", str(GOOD_N), "--src-base", GOOD_BASE]
    good_pps = GOOD_N // GOOD_PERIOD_S
    load = ["--placement", "shared", "--backend", backend, "--interval", "1s",
            "--width", str(WIDTH), "--budget", f"{K}/1s",
            "--reserve", str(RESERVE_PCT if reserve else 0)]
    ids = B.referee_attach(GOOD_BASE, GOOD_N, 1_000_000_000 - B.CLOCK_TOL_NS)
    B.sh(cli, "load", B.IF_RX, *load, ns=B.NS_RX)
    try:
        pid = json.loads(B.sh("ip", "-j", "-d", "link", "show", "dev", B.IF_RX,
                              ns=B.NS_RX))[0]["xdp"]["prog"]["id"]
        # by count: every good source has sent (twice) before the flood, however slow the VM
        g0 = gen_result(gen_on(0, good, alone_s, cli, good_pps, count=alone_s * good_pps))
        r0 = B.referee_read(ids, reset=True)
        s0 = stats(cli)
        t0, c0, _ = B.prog_stats(pid)
        flood = gen_on(1, ["--dist", "spoofed"], flood_s, cli)
        good_p = gen_on(0, good, flood_s, cli, good_pps)
        g1, f1 = gen_result(good_p), gen_result(flood)
        t1, c1, _ = B.prog_stats(pid)
        r1 = B.referee_read(ids)
        s1 = stats(cli)
    finally:
        B.sh(cli, "unload", B.IF_RX, ns=B.NS_RX, check=False)
    d = {k: s1[k] - s0[k] for k in s1 if isinstance(s1[k], int)}
    return {"backend": backend, "reserve": reserve,
            "alone_sent": g0["sent"], "alone_passed": r0["tracked_passed"],
            "good_sent": g1["sent"], "good_passed": r1["tracked_passed"],
            "pass_rate": r1["tracked_passed"] / max(1, g1["sent"]),
            "false_passes": r0["false_passes"] + r1["false_passes"],
            "flood_sent": f1["sent"], "flood_pps": f1["sent"] / max(1e-9, f1["seconds"]),
            # the pacer's ns per packet in the flood phase (0 unless BPF statistics are on)
            "ns": (t1 - t0) / max(1, c1 - c0),
            "seen": d.get("seen", 0), "passed": d.get("passed", 0),
            "dropped_recent": d.get("dropped_recent", 0),
            "dropped_budget": d.get("dropped_budget", 0),
            "budget_returning": d.get("budget_returning", 0),
            "table_full": d.get("table_full", 0)}


def describe(c):
    return (f"{c['backend']}, reserve {RESERVE_PCT if c['reserve'] else 0} %: "
            f"{c['good_passed']} of {c['good_sent']} good packets passed in the flood "
            f"({100 * c['pass_rate']:.1f} %; alone {c['alone_passed']} of {c['alone_sent']}); "
            f"flood {c['flood_sent']} sent ({c['flood_pps'] / 1e6:.2f} Mpps), "
            f"{c['seen']} seen by XDP; dropped_recent {c['dropped_recent']}, "
            f"dropped_budget {c['dropped_budget']}, budget_returning {c['budget_returning']}, "
            f"table_full {c['table_full']}")


def check():
    n_pass = n_fail = 0

    def ok(cond, what):
        nonlocal n_pass, n_fail
        print(f"{'ok  ' if cond else 'FAIL'} - {what}", flush=True)
        n_pass, n_fail = n_pass + bool(cond), n_fail + (not cond)

    B.setup(2)
    try:
        for backend in ("sketch", "table"):
            c = run_cell(backend, True)
            print("    " + describe(c), flush=True)
            ok(c["alone_passed"] >= 0.95 * c["alone_sent"],
               f"{backend}: the good sources pass alone ({c['alone_passed']} of {c['alone_sent']})")
            ok(c["flood_pps"] >= 50 * K,
               f"{backend}: the flood ran at full speed, >= 50 x K per T, more new sources "
               f"per interval than the state holds ({c['flood_pps']:.0f} pps, width {WIDTH})")
            ok(c["pass_rate"] >= TARGET,
               f"{backend}: >= 95 % of the good packets pass during the flood "
               f"({100 * c['pass_rate']:.1f} %)")
            ok(c["false_passes"] == 0, f"{backend}: no good source passed twice in its interval")
            if backend == "table":
                ok(c["table_full"] == 0, f"table: never full under the flood ({c['table_full']})")
    finally:
        B.teardown()
    print(f"{n_pass} passed, {n_fail} failed")
    return 0 if n_fail == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", required=True,
                    help="run the integration test's checks")
    ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("SKIP: needs two CPUs (good sources on one, the flood on the other)")
        return 77
    return check()


if __name__ == "__main__":
    sys.exit(main())
