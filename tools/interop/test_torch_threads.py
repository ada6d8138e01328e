#!/usr/bin/python3
"""PyTorch at 1 and 2 threads under samebits: the seed model trains a few
steps in each thread count, each in its own process, writing a trace;
`samebits diff` names the first divergent probe; both sides are re-run
dumping that probe, and `samebits diff --dumps` classifies it.

    test_torch_threads.py SAMEBITS WORK_DIR

Passes when the two traces are identical, or when the first divergence is
an op whose inputs were identical and whose every element lies within its
reordering bound (verdict `reordering`); which of the two it saw is printed
with the CPU's name, since it depends on the CPU (docs/interop.md, "samebits
on your framework"). Exit 77 (skipped) without
python3-torch, python3-xxhash or MNIST (tools/fetch-data).
"""
import os
import re
import subprocess
import sys

from cpuinfo import cpu_model
from torch_test_support import diff, require_modules

STEPS, BATCH = "2", "32"


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


def train(work, threads, *dump):
    trace = os.path.join(work, f"{threads}{'.dump' if dump else ''}.trace")
    cmd = [sys.executable, "-m", "samebits_torch", "train", "--threads",
           str(threads), "--trace", trace, "--steps", STEPS, "--batch", BATCH]
    if dump:
        cmd += ["--dump", dump[0], "--dump-step", dump[1], "--dump-dir",
                os.path.join(work, f"dump{threads}")]
    subprocess.run(cmd, check=True)
    return trace


def main():
    samebits, work = sys.argv[1], sys.argv[2]
    require_modules()
    data = os.environ.get("SAMEBITS_DATA_DIR", "data")
    if not os.path.exists(os.path.join(data, "mnist-images-idx3-ubyte")):
        skip(f"no MNIST in {data} (tools/fetch-data)")
    os.makedirs(work, exist_ok=True)

    t1, t2 = train(work, 1), train(work, 2)
    rc, _ = diff(samebits, t1, t1)
    if rc != 0:
        print("FAIL: a trace differs from itself (or does not read)")
        return 1
    rc, out = diff(samebits, t1, t2)
    if rc == 0:
        print(f"1 and 2 threads: identical traces on {cpu_model()}")
        return 0
    m = re.search(r"step (\d+), probe (\S+) \(op", out)
    if rc != 1 or not m:
        print(f"FAIL: samebits diff exited {rc} without naming a probe")
        return 1
    step, probe = m.group(1), m.group(2)
    train(work, 1, probe, step)
    train(work, 2, probe, step)
    rc, out = diff(samebits, t1, t2, "--dumps",
                   os.path.join(work, "dump1") + "," + os.path.join(work, "dump2"))
    verdict = re.search(r"^verdict: (\S+)", out, re.M)
    if rc != 1 or not verdict:
        print(f"FAIL: samebits diff --dumps exited {rc} without a verdict")
        return 1
    if verdict.group(1) != "reordering":
        print(f"FAIL: 1 and 2 threads part at step {step} {probe}, verdict {verdict.group(1)}")
        return 1
    print(f"1 and 2 threads: part at step {step} {probe}, a reordering, on {cpu_model()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
