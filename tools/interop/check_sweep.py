#!/usr/bin/python3
"""Sweep a user-kernel program (built on sb_user_main) over thread counts and
report what it found.

    check_sweep.py PROG WORK_DIR [--threads LIST] [--label TEXT]
                   [--require-cpu-flag FLAG]

Writes the program's golden (its 1-thread run) into WORK_DIR, sweeps LIST
(default 1-8) with a JSON report, and prints one line per configuration: the
verdict and, where it diverged, the first divergent probe and its distance to
the reordering bound. Thread counts whose bits differ from 1 thread are listed
by name. Exit status 0 when every verdict is identical or reordering, 1 when
one is beyond-bound, a crash or a timeout, 2 when the program could not be
run, 77 (skipped) when the CPU lacks --require-cpu-flag. Which counts diverge is reported, never assumed: it depends on the
library's build, the CPU and the kernels it picks.
"""
import argparse
import json
import os
import subprocess
import sys

ACCEPTED = ("identical", "reordering")


def cpu_has(flag):
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and flag in line.split()[2:] for line in f)


def trace_hashes(path):
    """probe name -> hash of the records of a trace (the last of each name)."""
    hashes = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 7 and fields[0].isdigit():
                hashes[fields[1]] = fields[5]
    return hashes


def differing_probes(golden, work_dir, run):
    """Every probe whose hash differs from the golden's, beyond the first:
    read from the locator's re-run of the configuration, which the sweep
    keeps in its work directory (<kernel>.t<T>.r<R>.locate/o1/<T>/run.trace
    for its first origin, harness/sweep/sweep.c and harness/judge/locate.c).
    Empty when there is no such trace."""
    if run["verdict"] == "identical":
        return []
    t, rep = run["threads"], run["repeat"]
    for name in sorted(os.listdir(os.path.join(work_dir, "sweep"))):
        if name.endswith(f".t{t}.r{rep}.locate"):
            path = os.path.join(work_dir, "sweep", name, "o1", str(t), "run.trace")
            if os.path.exists(path):
                hashes = trace_hashes(path)
                return [p for p in golden if hashes.get(p) != golden[p]]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prog")
    ap.add_argument("work_dir")
    ap.add_argument("--threads", default="1-8")
    ap.add_argument("--label", default="")
    ap.add_argument("--require-cpu-flag")
    a = ap.parse_args()
    if a.require_cpu_flag and not cpu_has(a.require_cpu_flag):
        print(f"skipped: this CPU has no {a.require_cpu_flag}")
        return 77

    os.makedirs(a.work_dir, exist_ok=True)
    golden = os.path.join(a.work_dir, "golden")
    report = os.path.join(a.work_dir, "sweep.json")
    if subprocess.run([a.prog, "golden", "--golden", golden],
                      stdout=subprocess.DEVNULL).returncode != 0:
        print(f"{a.prog} golden failed", file=sys.stderr)
        return 2
    # The sweep's own exit status says "not as expected" for every count
    # that stayed identical; the verdicts are judged here instead.
    sweep = subprocess.run([a.prog, "sweep", "--threads", a.threads, "--golden", golden,
                            "--work-dir", os.path.join(a.work_dir, "sweep"),
                            "--json", report], stdout=subprocess.PIPE, text=True)
    if sweep.returncode == 2 or not os.path.exists(report):
        sys.stdout.write(sweep.stdout)
        print(f"{a.prog} sweep failed (exit {sweep.returncode})", file=sys.stderr)
        return 2
    with open(report) as f:
        runs = [r for c in json.load(f)["cases"] for r in c["runs"]]
    golden_hashes = trace_hashes(golden)

    label = f" [{a.label}]" if a.label else ""
    divergent, bad = [], []
    for r in runs:
        line = f"threads {r['threads']:2d}: {r['verdict']}"
        d = r.get("first_divergence")
        if d:
            line += (f" at {d['probe']} ({d['differing']} of {d['total']} elements, "
                     f"max ULP {d['max_ulp']:g}, bound ratio {d['bound_ratio']:.3g})")
        if r["message"]:
            line += f" ({r['message']})"
        print(line + label)
        moved = differing_probes(golden_hashes, a.work_dir, r)
        if moved:
            print(f"            differing probes: {' '.join(moved)}")
        if r["verdict"] != "identical":
            divergent.append(f"{r['threads']} ({r['verdict']})")
        if r["verdict"] not in ACCEPTED:
            bad.append(r["threads"])
    print(f"differ from 1 thread{label}: " + (", ".join(divergent) if divergent else "none"))
    if bad:
        print(f"NOT explained by reordering at threads {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
