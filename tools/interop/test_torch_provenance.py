#!/usr/bin/python3
"""The provenance of a small language model's trace
(python/examples/small_lm.py under `python3 -m samebits_torch run`, 2
steps at 1 thread): every record reads what it read.

1. Batches sliced from one int64 token tensor (`data[a:b].view(...)`, the
   targets too) read that tensor through getitem and view, recorded as i64.
2. The Linear before an in-place residual (`m.add_(h)`) has its gradient,
   made from the in-place op's, and the shared block's weight gradients
   read both calls' gradients.
3. clip_grad_norm_: each per-parameter norm reads that parameter's
   gradient, the total norm the stack of them, each rescale the gradient
   and the clamped coefficient (from the total norm), and AdamW reads the
   rescaled gradient.
4. No record at step 1 reads an untraced input but the loss's seed
   gradient; every input names an earlier record.
5. `samebits diff` reads the trace (i64 included): identical to itself.
6. Gradient accumulation (two backward passes per step, a script written
   here): the optimiser reads `<param>.grad.sum`, which reads both
   gradients.
7. Max-pools (a script written here): 2x2 windows of stride 2 are the
   kernel list's maxpool_fwd and maxpool_bwd (exact: no reduction); 3x3
   windows of stride 2 overlap, so their gradient sums shares and keeps
   PyTorch's name (no bound known, never judged exact).

    test_torch_provenance.py SAMEBITS WORK_DIR

Exit 0 pass, 1 fail, 77 (skipped) without python3-torch or python3-xxhash.
"""
import os
import subprocess
import sys

from torch_test_support import read_records, require_modules

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "python", "examples", "small_lm.py")
PARAMS = ("smalllm.tok.weight", "smalllm.pos.weight") + tuple(
    f"smalllm.block.{m}.{p}" for m in ("norm1", "qkv", "proj", "norm2", "fc", "out")
    for p in ("weight", "bias")) + ("smalllm.norm.weight", "smalllm.norm.bias",
                                    "smalllm.head.weight", "smalllm.head.bias")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def reads(step, name, inputs, op=None):
    r = step.get(name)
    check(r is not None, f"no record {name}")
    if r is None:
        return
    check(r[4] == inputs, f"{name} reads {r[4]}, not {inputs}")
    if op:
        check(r[2] == op, f"{name} is op {r[2]}, not {op}")


def main():
    samebits, work = sys.argv[1], sys.argv[2]
    require_modules()
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "small_lm.trace")
    subprocess.run([sys.executable, "-m", "samebits_torch", "run", SCRIPT, "--threads", "1",
                    "--trace", trace, "--", "--steps", "2"], check=True,
                   stdout=subprocess.DEVNULL)
    records = read_records(trace)
    for i, (s, name, _, _, inputs, _) in enumerate(records):
        for n in inputs:
            check(n == "?" or any(r[1] == n for r in records[:i]),
                  f"step {s} {name} reads {n}, which no earlier record holds")
    step1 = {r[1]: r for r in records if r[0] == 1}

    # 1. slices of the token tensor, int64
    check(step1.get("randint") is None and records[0][1] == "randint" and
          records[0][5] == "i64", "the token tensor is not the first record, as i64")
    for suffix in ("", "#2"):
        reads(step1, f"getitem{suffix}", ["randint"], "getitem")
        reads(step1, f"view{suffix}", [f"getitem{suffix}"], "view")
        check(step1.get(f"getitem{suffix}", [None] * 6)[5] == "i64",
              f"getitem{suffix} is not i64")
    reads(step1, "smalllm.tok.embedding", ["view", "adamw.smalllm.tok.weight"], "embedding")
    reads(step1, "reshape#2", ["view#2"])
    reads(step1, "cross_entropy", ["reshape", "reshape#2"])

    # 2. the in-place residual and the shared block
    for block in ("smalllm.block", "smalllm.block#2"):
        reads(step1, f"{block}.add_", [f"{block}.out.fwd.out", f"{block}.add"], "add_")
        reads(step1, f"{block}.out.linear.grad",
              [f"{block}.add_.grad", f"{block}.out.fwd.out", f"{block}.add"], "add_bwd")
    for p in ("out.weight", "fc.weight", "qkv.weight"):
        r = step1.get(f"smalllm.block.{p}.grad")
        layer = p.split(".")[0]
        check(r is not None and {f"smalllm.block.{layer}.linear.grad",
                                 f"smalllm.block#2.{layer}.linear.grad"} <= set(r[4]),
              f"smalllm.block.{p}.grad does not read both calls' gradients")

    # 3. clip_grad_norm_ and AdamW
    norms = [f"norm#{k}" if k > 1 else "norm" for k in range(1, len(PARAMS) + 1)]
    for k, (norm, p) in enumerate(zip(norms, PARAMS)):
        reads(step1, norm, [f"{p}.grad"], "norm")
        rescale = f"mul_#{k + 1}" if k else "mul_"
        reads(step1, rescale, [f"{p}.grad", "clamp"], "mul_")
        reads(step1, f"adamw.{p}", [rescale, f"adamw.{p}"], "adamw_update")
    reads(step1, "stack", norms, "stack")
    total = f"norm#{len(PARAMS) + 1}"
    reads(step1, total, ["stack"], "norm")
    reads(step1, "add", [total])
    reads(step1, "rdiv", ["add"])
    reads(step1, "clamp", ["rdiv"])

    # 4. nothing untraced but the seed gradient
    untraced = [r[1] for r in records if r[0] == 1 and "?" in r[4]]
    check(untraced == ["cross_entropy.grad"], f"step 1 records with untraced inputs: {untraced}")

    # 5. the C reader takes it
    r = subprocess.run([samebits, "diff", trace, trace], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and r.stdout.startswith("identical:"),
          f"samebits diff of the trace with itself: {r.returncode} {r.stdout.strip()}")

    # 6. two micro-batches per step
    script = os.path.join(work, "accumulate.py")
    with open(script, "w") as f:
        f.write(ACCUMULATE)
    trace = os.path.join(work, "accumulate.trace")
    subprocess.run([sys.executable, "-m", "samebits_torch", "run", script, "--threads", "1",
                    "--trace", trace], check=True)
    step1 = {r[1]: r for r in read_records(trace) if r[0] == 1}
    reads(step1, "linear.weight.grad.sum", ["linear.weight.grad", "linear.weight.grad#2"],
          "accumulate_grad")
    reads(step1, "sgd.linear.weight", ["linear.weight.grad.sum", "sgd.linear.weight"])

    # 7. max-pools with and without overlapping windows
    script = os.path.join(work, "pools.py")
    with open(script, "w") as f:
        f.write(POOLS)
    trace = os.path.join(work, "pools.trace")
    subprocess.run([sys.executable, "-m", "samebits_torch", "run", script, "--threads", "1",
                    "--trace", trace], check=True)
    ops = {r[2] for r in read_records(trace)}
    check({"maxpool_fwd", "maxpool_bwd"} <= ops, f"2x2 stride 2 is not maxpool: {sorted(ops)}")
    check("max_pool2d" in ops and "max_pool2d_bwd" in ops,
          f"3x3 stride 2 is not named max_pool2d: {sorted(ops)}")
    return 1 if failures else 0


ACCUMULATE = """import torch
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
for step in range(2):
    for micro in range(2):
        lin(torch.randn(4, 3)).square().sum().backward()
    opt.step()
    opt.zero_grad()
"""


POOLS = """import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 2, 8, 8, requires_grad=True)
(F.max_pool2d(x * 1.5, 2).sum() + F.max_pool2d(x * 2.5, 3, stride=2).sum()).backward()
"""

if __name__ == "__main__":
    sys.exit(main())
