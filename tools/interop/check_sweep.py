#!/usr/bin/python3
"""Sweep a user-kernel program (built on sb_user_main) over thread counts and
report what it found.

    check_sweep.py PROG WORK_DIR [--threads LIST] [--repeat R] [--label TEXT]
                   [--require-cpu-flag FLAG] [--impls]

Writes the program's goldens (the 1-thread run of each of its kernels) into
WORK_DIR/goldens/, sweeps LIST
(default 1-8) R times each (default 1) with a JSON report and a census
(WORK_DIR/census.json), and prints one line per configuration (the verdict
and, where it diverged, the first divergent probe and its distance to the
reordering bound), then the census: one row per output probe, one mark per
thread count. With --impls it first prints `PROG impls` (the implementations
the library chose). Exit status 0 when every verdict is identical or
reordering, 1 when one is unbounded, beyond-bound, nondeterministic, a crash
or a timeout, 2 when the program could not be run, 77 (skipped) when the CPU
lacks --require-cpu-flag. Which counts diverge is reported, never assumed:
it depends on the library's build, the CPU and the kernels it picks.
"""
import argparse
import json
import os
import subprocess
import sys

from cpuinfo import cpu_has

ACCEPTED = ("identical", "reordering")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prog")
    ap.add_argument("work_dir")
    ap.add_argument("--threads", default="1-8")
    ap.add_argument("--label", default="")
    ap.add_argument("--repeat", default="1")
    ap.add_argument("--require-cpu-flag")
    ap.add_argument("--impls", action="store_true")
    a = ap.parse_args()
    if a.require_cpu_flag and not cpu_has(a.require_cpu_flag):
        print(f"skipped: this CPU has no {a.require_cpu_flag}")
        return 77

    os.makedirs(a.work_dir, exist_ok=True)
    golden = os.path.join(a.work_dir, "goldens")    # one NAME.golden per kernel
    os.makedirs(golden, exist_ok=True)
    report = os.path.join(a.work_dir, "sweep.json")
    # the golden of this build, remade on purpose every time (--update)
    if subprocess.run([a.prog, "golden", "--update", "--golden-dir", golden],
                      stdout=subprocess.DEVNULL).returncode != 0:
        print(f"{a.prog} golden failed", file=sys.stderr)
        return 2
    if a.impls and subprocess.run([a.prog, "impls"]).returncode != 0:
        print(f"{a.prog} impls failed", file=sys.stderr)
        return 2
    sweep = subprocess.run([a.prog, "sweep", "--threads", a.threads, "--repeat", a.repeat,
                            "--golden-dir", golden, "--work-dir", os.path.join(a.work_dir, "sweep"),
                            "--json", report, "--census",
                            "--census-json", os.path.join(a.work_dir, "census.json")],
                           stdout=subprocess.PIPE, text=True)
    if sweep.returncode == 2 or not os.path.exists(report):
        sys.stdout.write(sweep.stdout)
        print(f"{a.prog} sweep failed (exit {sweep.returncode})", file=sys.stderr)
        return 2
    with open(report) as f:
        runs = [r for c in json.load(f)["cases"] for r in c["runs"]]

    label = f" [{a.label}]" if a.label else ""
    divergent, bad = [], []
    for r in runs:
        line = f"threads {r['threads']:2d}: {r['verdict']}"
        d = r.get("first_divergence")
        if d:
            ratio = d["bound_ratio"]
            bound = "no bound known" if ratio is None else f"bound ratio {ratio:.3g}"
            line += (f" at {d['probe']} ({d['differing']} of {d['total']} elements, "
                     f"max ULP {d['max_ulp']:g}, {bound})")
        if r["message"]:
            line += f" ({r['message']})"
        print(line + label)
        if r["verdict"] != "identical":
            divergent.append(f"{r['threads']}.{r['repeat']} ({r['verdict']})")
        if r["verdict"] not in ACCEPTED:
            bad.append(r["threads"])
    print(f"differ from 1 thread{label}: " + (", ".join(divergent) if divergent else "none"))
    # the census tables come after the sweep's tables and summary lines
    at = sweep.stdout.find("\ncensus ")
    sys.stdout.write(sweep.stdout[at + 1:] if at >= 0 else "")
    if bad:
        print(f"NOT explained by reordering at threads {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
