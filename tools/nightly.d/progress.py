#!/usr/bin/env python3
"""The line tools/nightly prints when a build's sweep is done:

  nightly: build 2/8 gcc-O3-native: 96 runs, 1 not as expected; build 41.2 s, sweep 13 min 05 s; 15 min 10 s in, about 45 min left

The estimate is the night's time so far over the builds done, times those
left. Usage: progress.py INDEX COUNT NAME REPORT BUILD_S SWEEP_S ELAPSED_S
(REPORT: the build's sweep report, harness/REPORTS.md, absent when it failed)."""
import json
import sys

from page import duration, failed


def main():
    index, count, name, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    build_s, sweep_s, elapsed = (float(x) for x in sys.argv[5:8])
    try:
        with open(report) as f:
            runs = [r for c in json.load(f)["cases"] for r in c["runs"]]
        outcome = f"{len(runs)} runs, {sum(failed(r) for r in runs)} not as expected"
    except (OSError, ValueError, KeyError):
        outcome = "no sweep report"
    left = elapsed / index * (count - index)
    print(f"nightly: build {index}/{count} {name}: {outcome}; build {duration(build_s)}, "
          f"sweep {duration(sweep_s)}; {duration(elapsed)} in, "
          + (f"about {duration(left)} left" if index < count else "all builds done"),
          file=sys.stderr)


if __name__ == "__main__":
    main()
