#!/usr/bin/python3
"""The nightly page as an artifact that travels: render.py names builds and
cases relative to the repository (else to the night's folder), the summary
of a first night says so, a build lost by tools/slurm is red with its
state, and progress.py's estimate counts what each build left has to do
(an -O0 build by the -O0 builds done, not by the -O3 ones).

    test_nightly_travel.py SRC_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "tools", "nightly.d"))
import page  # noqa: E402
import progress  # noqa: E402
import render  # noqa: E402


def fail(msg):
    sys.exit("FAIL: " + msg)


# paths: the repository's relative to it, the night's folder's relative to it
root, out = "/srv/repo", "/scratch/night"
for path, want in (("/srv/repo/reports/nightly/builds/gcc-O3-native/samebits",
                    "reports/nightly/builds/gcc-O3-native/samebits"),
                   ("/srv/repo/cases/kernel_dense_fwd_det.case", "cases/kernel_dense_fwd_det.case"),
                   ("/scratch/night/builds/clang-O0-native/samebits",
                    "builds/clang-O0-native/samebits"),
                   ("/srv/repository-copy/x.case", "/srv/repository-copy/x.case"),
                   ("cases/a.case", "cases/a.case"), ("-", "-")):
    got = render.portable(path, root, out)
    if got != want:
        fail(f"portable({path!r}) is {got!r}, expected {want!r}")

build = {"name": "gcc-O3-native", "samebits": "reports/nightly/builds/gcc-O3-native/samebits"}
case = {"name": "k", "path": "cases/k.case", "reference_threads": 1}
cmd = page.reproduce_command(build, case, {"threads": 4, "repeat": 1})
if cmd != "reports/nightly/builds/gcc-O3-native/samebits locate cases/k.case --threads 1,4":
    fail(f"reproduce command {cmd!r}")


def night(new, builds_failed=0, off=0):
    return {"exit": 1 if builds_failed or off else 0, "commit": "0123456789abcdef",
            "wall_seconds": 1.0, "build_seconds": 0.0, "sweep_seconds": 1.0, "cpus": 2,
            "load": "0 0 0",
            "summary": {"runs": 4, "runs_as_expected": 4 - off, "runs_not_as_expected": off,
                        "runs_not_reached": 0, "builds_failed": builds_failed, "builds": 2,
                        "new_not_as_expected": new}}


first = page.summary_html(night(None))
if "first night" not in first or "new since last night" in first or "no previous night" in first:
    fail(f"a first night's summary: {first}")
second = page.summary_html(night(0))
if "0</span> new since last night" not in second:
    fail(f"a second night's summary: {second}")
lost = page.summary_html(night(0, builds_failed=1))
if 'class="summary red"' not in lost or "a build failed or was lost" not in lost:
    fail(f"a night with a lost build: {lost}")
gone = {"name": "clang-O0-native", "status": "lost: task 3 CANCELLED, never started", "cases": []}
cell = page.cell_html(gone, "k", [])
if 'data-outcome="lost"' not in cell or "CANCELLED" not in cell:
    fail(f"a lost build's cell: {cell}")
details = page.details_html([gone])
if "clang-O0-native: lost" not in details or "never started" not in details:
    fail(f"a lost build's details: {details}")

# the estimate: two -O0 builds done at 300 s, one -O3 at 40 s
done = {"gcc-O0-x86-64": 300.0, "gcc-O0-native": 300.0, "gcc-O3-x86-64": 40.0}
seconds, untimed = progress.estimate(done, ["gcc-O3-native", "clang-O0-x86-64"])
if seconds != 340.0 or untimed:
    fail(f"estimate {seconds} s, untimed {untimed}: expected 340 s, none")
seconds, untimed = progress.estimate({"gcc-O3-native": 40.0}, ["gcc-O0-native"])
if seconds != 40.0 or untimed != {"O0"}:
    fail(f"estimate with no -O0 build done: {seconds} s, {untimed}")
seconds, untimed = progress.estimate({"a": 10.0, "b": 30.0}, ["c"])
if seconds != 20.0 or untimed:
    fail(f"estimate of prebuilt builds: {seconds}, {untimed}")
print("ok: relative paths, first night, lost build, per-level estimate")
