#!/usr/bin/env python3
"""xdp-pacer soak: hours of the ordinary life of a limiter, compressed.

Run through scripts/soak.sh (root): it owns the clean-up trap.  On the
benchmark's veth pair (scripts/bench.py's set-up, referee and helpers), with
the pacer loaded in shared placement:

  traffic   `xdp-pacer gen`, two threads at full rate, the distribution
            changing every segment (uniform, Zipf, spoofed IPv4/IPv6, a mix
            of well-behaved sources in a flood), under `nice -n 10`
  set       every few seconds a live change: interval, policy, malformed
  record    record/analyze cycles (1/16 of sources, a few seconds each)
  stats     polled every second; a `stats --watch 1` process runs throughout

Afterwards, and the exit status says whether all held:
  - the tc referee saw 0 false passes: no tracked source passed twice closer
    than the shortest interval used (less the clock tolerance)
  - map memory is the same at the end as at the start
  - the long-running CLI process's RSS stayed flat (growth <= 512 KiB after
    its first minute)
  - counters reconcile: seen = passed + dropped_recent + nonip_passed +
    malformed_passed + malformed_dropped + map_error
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the benchmark's set-up, referee and helpers)
from bench import CLI, IF_RX, IF_TX, NS_RX, NS_TX, DST, STRUCT_BASE, sh, log  # noqa: E402

INTERVALS = ["1s", "500ms", "250ms", "750ms", "2s"]
DST6 = "fd00:211::1"
MIN_INTERVAL_NS = 250_000_000
SEGMENTS = [  # generator arguments, in turn
    ["--dist", "uniform", "--sources", "1000", "--src-base", STRUCT_BASE],
    ["--dist", "zipf", "--sources", "1000000", "--zipf", "1.0", "--src-base", STRUCT_BASE],
    ["--dist", "spoofed"],
    ["--dist", "uniform", "--sources", "200000", "--src-base", STRUCT_BASE],
    ["--dist", "mix", "--good", "10000", "--good-period", "2s", "--src-base", STRUCT_BASE],
    ["--dist", "zipf", "--sources", "100000", "--zipf", "1.3", "--src-base", STRUCT_BASE],
    ["--dist", "spoofed", "--family", "6"],
]
RECONCILE = ["passed", "dropped_recent", "nonip_passed", "malformed_passed", "malformed_dropped",
             "map_error"]
RSS_GROWTH_MAX_KB = 512


def rx(*args):
    return sh(*args, ns=NS_RX)


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pacer_maps():
    link = json.loads(sh("ip", "-j", "-d", "link", "show", "dev", IF_RX, ns=NS_RX))[0]
    return bench.prog_stats(link["xdp"]["prog"]["id"])[2]


def stats():
    return json.loads(rx(CLI, "stats", IF_RX, "--json"))


def start_gen(seg):
    dst = DST6 if "6" in seg["args"] else DST
    args = ["nice", "-n", "10", "nsenter", f"--net=/run/netns/{NS_TX}", CLI, "gen", IF_TX,
            "--dst", dst, "--threads", "2", "--duration", f"{seg['secs']}s", "--json"] + seg["args"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class Soak:
    def __init__(self, a):
        self.a, self.failures = a, []
        self.sets = self.records = self.analyses = self.polls = self.segments = 0
        self.sent = 0
        self.record_lost = self.analysed_records = 0

    def fail(self, what):
        log(f"soak: FAIL {what}")
        self.failures.append(what)

    def setup(self):
        bench.setup(2)
        out = rx(CLI, "load", IF_RX, "--placement", "shared", "--interval", "1s")
        log(out.strip())
        self.ref = bench.referee_attach(STRUCT_BASE, 1 << 21, MIN_INTERVAL_NS - bench.CLOCK_TOL_NS)
        self.mem_start = bench.map_memory(pacer_maps())[0]
        self.watch = subprocess.Popen(["nsenter", f"--net=/run/netns/{NS_RX}", CLI, "stats", IF_RX,
                                       "--watch", "1", "--json"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)

    def do_set(self, i):
        args = ["--interval", INTERVALS[i % len(INTERVALS)]]
        if i % 3 == 0:
            args += ["--policy", "quiet" if (i // 3) % 2 else "pace"]
        if i % 5 == 0:
            args += ["--malformed", "drop" if (i // 5) % 2 else "pass"]
        r = subprocess.run(["nsenter", f"--net=/run/netns/{NS_RX}", CLI, "set", IF_RX] + args,
                           capture_output=True, text=True)
        if r.returncode:
            self.fail(f"set {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
        self.sets += 1

    def start_record(self, path):
        self.rec_path = path
        return subprocess.Popen(["nsenter", f"--net=/run/netns/{NS_RX}", CLI, "record", IF_RX,
                                 "-o", path, "--sample-sources", "1/16", "--duration", "4s"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def finish_record(self, proc):
        err = proc.stderr.read()
        if proc.returncode:
            self.fail(f"record: exit {proc.returncode}: {err.strip()}")
            return
        self.records += 1
        r = subprocess.run([CLI, "analyze", self.rec_path, "--json"], capture_output=True, text=True)
        os.unlink(self.rec_path)
        if r.returncode:
            self.fail(f"analyze: exit {r.returncode}: {r.stderr.strip()[:300]}")
            return
        self.analyses += 1
        rep = json.loads(r.stdout)
        got = rep.get("recording", {})
        self.analysed_records += got.get("records", 0)
        self.record_lost = max(self.record_lost, got.get("records_lost", 0))

    def run(self):
        a = self.a
        start = time.monotonic()
        end = start + a.duration
        gen = rec = None
        next_set, next_rec, next_poll = start + a.set_every, start + 5, start
        seg_i = set_i = 0
        last_seen = -1
        self.rss = []
        while time.monotonic() < end or gen is not None:
            now = time.monotonic()
            if gen is not None and gen.poll() is not None:
                out, err = gen.communicate()
                if gen.returncode:
                    self.fail(f"gen segment {seg_i}: exit {gen.returncode}: {err.strip()[:300]}")
                else:
                    self.sent += json.loads(out.strip().splitlines()[-1]).get("sent", 0)
                gen = None
                self.segments += 1
                seg_i += 1
            if gen is None and now < end:
                secs = max(1, min(a.segment, int(end - now)))
                gen = start_gen({"args": SEGMENTS[seg_i % len(SEGMENTS)], "secs": secs})
            if now >= next_set and now < end:
                self.do_set(set_i)
                set_i += 1
                next_set += a.set_every
            if rec is not None and rec.poll() is not None:
                self.finish_record(rec)
                rec = None
                next_rec = now + 3
            if rec is None and now >= next_rec and now < end - 10:
                rec = self.start_record(os.path.join(a.workdir, f"soak-{self.records}.xpr"))
            if now >= next_poll:
                s = stats()
                self.polls += 1
                if s["seen"] < last_seen:
                    self.fail(f"seen went backwards: {last_seen} -> {s['seen']}")
                last_seen = s["seen"]
                kb = rss_kb(self.watch.pid)
                if kb is None:
                    self.fail("the stats --watch process is gone")
                else:
                    self.rss.append((now - start, kb))
                next_poll += 1
                if self.polls % 60 == 0:
                    log(f"soak: {now - start:.0f} s: seen {s['seen']} passed {s['passed']}, "
                        f"{self.segments} segments, {self.sets} sets, {self.records} records, "
                        f"watch RSS {kb} KiB")
            time.sleep(0.2)
        if rec is not None:
            rec.wait()
            self.finish_record(rec)

    def check(self):
        time.sleep(1.5)  # frames in flight reach the counters
        s = stats()
        verdicts = sum(s[k] for k in RECONCILE)
        ref = bench.referee_read(self.ref)
        mem_end = bench.map_memory(pacer_maps())[0]
        self.watch.terminate()
        self.watch.wait()
        settled = [kb for t, kb in self.rss if t >= min(60, self.a.duration / 2)]
        growth = (settled[-1] - settled[0]) if settled else 0
        res = {
            "duration_s": self.a.duration, "segments": self.segments, "sets": self.sets,
            "records": self.records, "analyses": self.analyses, "stats_polls": self.polls,
            "gen_sent": self.sent, "counters": s, "sum_of_verdicts": verdicts,
            "referee": ref, "referee_min_gap_ns": MIN_INTERVAL_NS - bench.CLOCK_TOL_NS,
            "map_memory_start": self.mem_start, "map_memory_end": mem_end,
            "watch_rss_kb_first": self.rss[0][1] if self.rss else None,
            "watch_rss_kb_settled": settled[0] if settled else None,
            "watch_rss_kb_last": settled[-1] if settled else None,
            "records_analysed": self.analysed_records,
            "max_records_lost_in_a_recording": self.record_lost,
        }
        if s["seen"] != verdicts:
            self.fail(f"counters: seen {s['seen']} != sum of verdicts {verdicts}")
        if ref["false_passes"]:
            self.fail(f"referee: {ref['false_passes']} false passes (closest {ref['worst_gap_ns']} ns)")
        if ref["tracked_passed"] == 0:
            self.fail("referee: tracked no pass at all (is it attached?)")
        if mem_end != self.mem_start:
            self.fail(f"map memory {self.mem_start} -> {mem_end} bytes")
        if growth > RSS_GROWTH_MAX_KB:
            self.fail(f"stats --watch RSS grew {growth} KiB after its first minute")
        if self.records == 0 or self.analyses != self.records:
            self.fail(f"{self.records} recordings, {self.analyses} analysed")
        res["failures"] = self.failures
        return res


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=1800, help="seconds (1800)")
    p.add_argument("--segment", type=int, default=15, help="seconds per distribution (15)")
    p.add_argument("--set-every", type=float, default=3, help="seconds between set changes (3)")
    p.add_argument("--workdir", required=True)
    p.add_argument("--out", default=None, help="write the result JSON here too")
    a = p.parse_args()
    soak = Soak(a)
    soak.setup()
    soak.run()
    res = soak.check()
    text = json.dumps(res, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print("soak: " + ("PASSED" if not res["failures"] else f"FAILED: {'; '.join(res['failures'])}"))
    return 1 if res["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
