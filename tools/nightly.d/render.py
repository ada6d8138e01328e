#!/usr/bin/env python3
"""The nightly report of tools/nightly: one JSON file and one HTML page.

Reads the build manifest (builds.tsv) and each build's sweep report
(sweeps/<build>.json, harness/REPORTS.md schema) with the kept traces of its
training runs (sweeps/<build>/<case>.t<T>.r<R>.trace, for the per-epoch
metrics), plus the previous nights' JSON files, and writes nightly.json and a
self-contained nightly.html (page.py; plots drawn by gnuplot as inline SVG,
plots.py). Exit status 0 when some configuration ran, every run is as
expected (or not reached within its build's step limit) and every build
built, else 1.
"""
import argparse
import glob
import json
import os
import re
import sys

import census
import page

FORMAT_VERSION = 1
EPOCH_LINE = re.compile(r"^epoch (\d+) steps (\d+) train_loss (\S+) test_loss (\S+) test_accuracy (\S+)$")


def read_manifest(path):
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    for r in rows:
        r["build_seconds"] = float(r["build_seconds"])
        r["sweep_seconds"] = float(r["sweep_seconds"])
    return rows


def read_epochs(trace_path, max_steps):
    """Per-epoch metrics from a trace's `epoch` lines (harness/FORMATS.md). A
    run truncated at max_steps keeps the epochs that ended before it: the last
    one is its own partly done epoch, which the sweep did not compare."""
    epochs = []
    try:
        with open(trace_path) as f:
            for line in f:
                m = EPOCH_LINE.match(line.rstrip("\n"))
                if m:
                    epochs.append({"epoch": int(m[1]), "steps": int(m[2]),
                                   "train_loss": float(m[3]), "test_loss": float(m[4]),
                                   "test_accuracy": float(m[5])})
    except OSError:
        return None
    return [e for e in epochs if not max_steps or e["steps"] < max_steps]


def portable(path, root, out):
    """A path the page can name on another machine: relative to the
    repository (its commands run from there), else to the night's folder
    (a build root outside the repository), else as given."""
    if not path or path == "-" or not os.path.isabs(path):
        return path
    for base in (root, out):
        if base and os.path.commonpath([os.path.abspath(base), path]) == os.path.abspath(base):
            return os.path.relpath(path, base)
    return path


def load_builds(manifest, sweeps, root=None, out=None):
    builds = []
    for row in manifest:
        b = {"name": row["name"], "compiler": row["compiler"], "optimization": row["optimization"],
             "target": row["target"], "max_steps": int(row["max_steps"]) or None,
             "status": row["status"], "samebits": portable(row["exe"], root, out),
             "build_seconds": row["build_seconds"], "sweep_seconds": row["sweep_seconds"],
             "sweep_exit": None if row["sweep_exit"] == "-" else int(row["sweep_exit"]),
             "cases": []}
        path = os.path.join(sweeps, row["name"] + ".json")
        if b["status"] in ("ok", "prebuilt"):  # not build-failed, nor a lost task's (tools/slurm)
            if os.path.exists(path):
                with open(path) as f:
                    b["cases"] = json.load(f)["cases"]
            else:
                b["status"] = "sweep-failed"
        for case in b["cases"]:
            case["path"] = portable(case["path"], root, out)
            for run in case["runs"]:
                if case["kind"] == "train":
                    truncated = run.get("truncated")
                    # the run's trace: <case>[.n<ranks>][.k<step>].t<threads>.r<repeat>.trace
                    ranks = f".n{run['ranks']}" if page.ranked(run) else ""
                    resume = f".k{page.resume_of(run)}" if page.resume_of(run) else ""
                    run["epochs"] = read_epochs(os.path.join(
                        sweeps, row["name"],
                        f"{case['name']}{ranks}{resume}.t{run['threads']}.r{run['repeat']}.trace"),
                        truncated and truncated["max_steps"])
        builds.append(b)
    return builds


def summary(builds, previous_failing):
    """The night's counts; new_not_as_expected counts the runs not as
    expected that were not so in the previous night (None without one)."""
    cells = [(b["name"], c["name"], r) for b in builds for c in b["cases"] for r in c["runs"]]
    off = {page.run_key(b, c, r) for b, c, r in cells if page.failed(r)}
    return {"builds": len(builds),
            "builds_failed": sum(b["status"] not in ("ok", "prebuilt") for b in builds),
            "runs": len(cells),
            "runs_as_expected": sum(r["as_expected"] for _, _, r in cells),
            "runs_not_as_expected": len(off),
            "runs_not_reached": sum(r.get("not_reached", False) for _, _, r in cells),
            "new_not_as_expected": None if previous_failing is None else len(off - previous_failing)}


def load_history(directory):
    """The previous nights' summaries, oldest first, and the runs not as
    expected of the last one (None when there is none)."""
    nights, failing = [], None
    for path in sorted(glob.glob(os.path.join(directory, "nightly-*.json"))):
        try:
            with open(path) as f:
                night = json.load(f)
            nights.append({"stamp": night["stamp"], "commit": night["commit"],
                           "wall_seconds": night["wall_seconds"], **night["summary"]})
            failing = {page.run_key(b["name"], c["name"], r) for b in night["builds"]
                       for c in b["cases"] for r in c["runs"] if page.failed(r)}
        except (OSError, ValueError, KeyError, TypeError):
            print(f"{path}: not a nightly report, left out of the trend", file=sys.stderr)
    return nights, failing


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ("manifest", "sweeps", "history", "stamp", "commit", "load", "json", "html"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--wall", type=float, required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--root", help="the repository: the page's paths are relative to it")
    a = ap.parse_args()

    builds = load_builds(read_manifest(a.manifest), a.sweeps, a.root,
                         os.path.dirname(os.path.abspath(a.html)))
    nights, previous_failing = load_history(a.history)
    s = summary(builds, previous_failing)
    green = s["runs"] > 0 and s["runs_not_as_expected"] == 0 and s["builds_failed"] == 0
    night = {"format_version": FORMAT_VERSION, "stamp": a.stamp, "commit": a.commit,
             "wall_seconds": a.wall, "build_seconds": sum(b["build_seconds"] for b in builds),
             "sweep_seconds": sum(b["sweep_seconds"] for b in builds),
             "cpus": a.cpus, "load": a.load, "exit": 0 if green else 1, "summary": s,
             "builds": census.attach(builds, a.sweeps)}
    nights.append({"stamp": a.stamp, "commit": a.commit, "wall_seconds": a.wall, **s})
    # the page's sections in order; a further section is one more (id, title, html)
    parts = page.sections(night, builds, nights)
    parts.insert(-1, ("census-section", None, census.html(builds)))
    write_atomic(a.json, json.dumps(night, indent=1) + "\n")
    write_atomic(a.html, page.page(night, parts))
    if s["runs"] == 0:
        print("nightly: no configuration ran", file=sys.stderr)
    return night["exit"]


if __name__ == "__main__":
    sys.exit(main())
