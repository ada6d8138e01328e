#!/usr/bin/env python3
"""The line tools/nightly prints when a build's sweep is done:

  nightly: build 2/8 gcc-O3-native: 96 runs, 1 not as expected; build 41.2 s, sweep 13 min 05 s; 15 min 10 s in, about 45 min left

The estimate counts what each build left has to do: the mean time (build and
sweep) of the builds done of its optimisation level (an -O0 build's sweep
takes many times an -O3 one's), or, where none of its level is done yet, of
every build done, which the line then calls a guess. Usage: progress.py
INDEX COUNT NAME REPORT BUILD_S SWEEP_S ELAPSED_S MANIFEST [LEFT...]
(REPORT: the build's sweep report, harness/REPORTS.md, absent when it
failed; MANIFEST: builds.tsv, the builds done; LEFT: the names of the
builds still to come, like gcc-O0-native)."""
import json
import sys

from page import duration, failed


def level(name):
    """The optimisation level of a matrix build's name (gcc-O0-native: O0)."""
    parts = name.split("-")
    return parts[1] if len(parts) >= 3 else "-"


def estimate(done, left):
    """Seconds for the builds left from the times of those done ({name: s});
    and the levels of the builds left that no build done has timed."""
    by_level = {}
    for name, seconds in done.items():
        by_level.setdefault(level(name), []).append(seconds)
    every = list(done.values())
    total, untimed = 0.0, set()
    for name in left:
        times = by_level.get(level(name))
        if not times:
            untimed.add(level(name))
            times = every
        total += sum(times) / len(times) if times else 0.0
    return total, untimed


def read_done(manifest):
    with open(manifest) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    return {r["name"]: float(r["build_seconds"]) + float(r["sweep_seconds"]) for r in rows}


def main():
    index, count, name, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    build_s, sweep_s, elapsed = (float(x) for x in sys.argv[5:8])
    done, left = read_done(sys.argv[8]), sys.argv[9:]
    try:
        with open(report) as f:
            runs = [r for c in json.load(f)["cases"] for r in c["runs"]]
        outcome = f"{len(runs)} runs, {sum(failed(r) for r in runs)} not as expected"
    except (OSError, ValueError, KeyError):
        outcome = "no sweep report"
    seconds, untimed = estimate(done, left)
    guess = f" (a guess: no {', '.join(sorted(untimed))} build done yet)" if untimed else ""
    print(f"nightly: build {index}/{count} {name}: {outcome}; build {duration(build_s)}, "
          f"sweep {duration(sweep_s)}; {duration(elapsed)} in, "
          + (f"about {duration(seconds)} left{guess}" if left else "all builds done"),
          file=sys.stderr)


if __name__ == "__main__":
    main()
