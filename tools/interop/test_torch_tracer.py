#!/usr/bin/python3
"""A user's own training script traced with no change to it
(python/examples/residual_mlp.py under `python3 -m samebits_torch run`),
each run in its own process:

1. the script with a sum whose order follows the thread count, at 1 and 2
   threads: in both traces every op appears once per call (functional relu,
   residual adds, the block called twice with its shared weights, the
   in-place mul_, the @ operator, the log_softmax method), each listing the
   probes it read by tensor identity; the probe sequence is the same at 1
   and 2 threads; `samebits diff` names `thread_sum` with its inputs
   identical, and the dumps of a re-run of each side say `reordering`;
2. the script scaling its batch by a tensor no traced op made, whose value
   follows the thread count: `samebits diff` says the op's inputs are not
   all traced, never "identical".

    test_torch_tracer.py SAMEBITS WORK_DIR

Exit 0 pass, 1 fail, 77 (skipped) without python3-torch or python3-xxhash.
"""
import os
import re
import subprocess
import sys

from torch_test_support import diff, read_records, require_modules

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "python", "examples", "residual_mlp.py")
STEPS = 2
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def trace_run(work, label, threads, plant, *dump):
    trace = os.path.join(work, f"{label}{threads}.trace")
    cmd = [sys.executable, "-m", "samebits_torch", "run", SCRIPT, "--threads", str(threads),
           "--trace", trace]
    if dump:
        cmd += ["--dump", dump[0], "--dump-step", "0", "--dump-dir",
                os.path.join(work, f"{label}.dump{threads}")]
        cmd[cmd.index("--trace") + 1] = trace + ".dump"
    subprocess.run(cmd + ["--", "--steps", str(STEPS), "--plant", plant], check=True,
                   stdout=subprocess.DEVNULL)
    return trace


# step 1's forward ops (step 0 also has the model's construction): name ->
# (op, inputs). A name is made once per call; a second call of a module is #2.
FORWARD = {
    "net.thread_sum": ("thread_sum", ["randn"]),
    "net.inp.linear": ("dense_fwd", ["net.sub", "sgd.net.inp.weight", "sgd.net.inp.bias"]),
    "net.block.fc.linear": ("dense_fwd", ["net.inp.fwd.out", "sgd.net.block.fc.weight",
                                          "sgd.net.block.fc.bias"]),
    "net.block.relu": ("relu_fwd", ["net.block.fc.fwd.out"]),
    "net.block.add": ("add", ["net.inp.fwd.out", "net.block.relu"]),
    # the shared block: the same weights, its own call's input
    "net.block#2.fc.linear": ("dense_fwd", ["net.block.fwd.out", "sgd.net.block.fc.weight",
                                            "sgd.net.block.fc.bias"]),
    "net.block#2.relu": ("relu_fwd", ["net.block#2.fc.fwd.out"]),
    "net.block#2.add": ("add", ["net.block.fwd.out", "net.block#2.relu"]),
    "net.mul_": ("mul_", ["net.block#2.fwd.out"]),
    "net.matmul": ("matmul", ["net.mul_", "sgd.net.w_out"]),
    "net.log_softmax": ("log_softmax", ["net.matmul"]),
    "nll_loss": ("nll_loss", ["net.fwd.out", "randint"]),
}
PARAMETERS = ("net.inp.weight", "net.inp.bias", "net.block.fc.weight", "net.block.fc.bias",
              "net.w_out")


def check_structure(path, threads):
    records = read_records(path)
    where = f"{threads} thread(s)"
    seen = set()
    for i, (step, name, op, _, inputs, _) in enumerate(records):
        check((step, name) not in seen, f"{where}: step {step} {name} recorded twice")
        seen.add((step, name))
        # every input is an earlier record or marked untraced
        for n in inputs:
            check(n == "?" or any(r[1] == n for r in records[:i]),
                  f"{where}: {name} reads {n}, which no earlier record holds")
    step1 = {r[1]: r for r in records if r[0] == 1}
    for name, (op, inputs) in FORWARD.items():
        r = step1.get(name)
        check(r is not None, f"{where}: no {name} at step 1")
        if r:
            check(r[2] == op and r[4] == inputs,
                  f"{where}: {name} is {r[2]} reading {r[4]}, not {op} reading {inputs}")
    # the in-place op changed its input
    if "net.mul_" in step1 and "net.block#2.fwd.out" in step1:
        check(step1["net.mul_"][3] != step1["net.block#2.fwd.out"][3],
              f"{where}: mul_ holds the same bits as its input")
    for p in PARAMETERS:
        for step in range(STEPS):
            grads = [r for r in records if r[0] == step and r[1] == f"{p}.grad"]
            updates = [r for r in records if r[0] == step and r[1] == f"sgd.{p}"]
            check(len(grads) == 1 and len(updates) == 1,
                  f"{where}: step {step}: {len(grads)} gradients, {len(updates)} updates of {p}")
            if updates:
                check(updates[0][4][0] == f"{p}.grad", f"{where}: sgd.{p} reads {updates[0][4]}")
    # the shared weights' gradient comes from both calls
    g = [r for r in records if r[0] == 1 and r[1] == "net.block.fc.weight.grad"]
    if g:
        check({"net.block.fc.linear.grad", "net.block#2.fc.linear.grad"} <= set(g[0][4]),
              f"{where}: the shared weight's gradient reads {g[0][4]}")
    return [(r[0], r[1], r[2], tuple(r[4])) for r in records]


def main():
    samebits, work = sys.argv[1], sys.argv[2]
    require_modules()
    os.makedirs(work, exist_ok=True)

    t1, t2 = (trace_run(work, "thread_sum", t, "thread-sum") for t in (1, 2))
    seq1, seq2 = check_structure(t1, 1), check_structure(t2, 2)
    check(seq1 == seq2, "the probe sequence (names, ops, inputs) differs at 1 and 2 threads")
    rc, out = diff(samebits, t1, t2)
    check(rc == 1 and "probe net.thread_sum (op thread_sum)" in out and
          "inputs are identical in both" in out,
          "samebits diff does not name thread_sum with identical inputs")
    for t in (1, 2):
        trace_run(work, "thread_sum", t, "thread-sum", "net.thread_sum")
    rc, out = diff(samebits, t1, t2, "--dumps", os.path.join(work, "thread_sum.dump1") + "," +
                   os.path.join(work, "thread_sum.dump2"))
    check(rc == 1 and re.search(r"^verdict: reordering$", out, re.M),
          "the dumps of thread_sum are not judged a reordering")

    u1, u2 = (trace_run(work, "untraced", t, "untraced") for t in (1, 2))
    rc, out = diff(samebits, u1, u2)
    check(rc == 1 and "probe net.mul (op mul)" in out and "not all traced" in out
          and "identical in both" not in out,
          "a difference through an untraced input is not reported as such")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
