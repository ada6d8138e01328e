#!/usr/bin/python3
"""Checks one complete training step of samebits against PyTorch, op by op.

usage: oracle.py DUMP_DIR [CASE]
       oracle.py --each DUMP_DIR CASE [DUMP_DIR CASE ...]

DUMP_DIR holds the dumps of `samebits run CASE ... --dump-all --dump-step 0
--dump-dir DUMP_DIR` of a keras_mnist_cnn or char_gpt training case (CASE
is needed for char_gpt: its sizes and AdamW settings) or of a kernel case
(CASE needed: its [kernel] keys; kernel_ops.py): for every probe of
step 0, <probe>.npy, <probe>.bound.npy, <probe>.in<i>.npy, and manifest.tsv
(name, op, inputs). For each op of the step, PyTorch computes the same op from
samebits' own dumped inputs, so every comparison is a single-op check:

  - ops with a reduction (conv, dense, their gradients, softmax, the loss):
    the dumped per-element reordering bound, the largest difference two
    summation orders can produce (PyTorch's order is just another order);
    softmax and the loss add the terms of their exp/log and formula
    differences (derived at softmax_tol and xent_tol);
  - elementwise ops: a tolerance from the roundings of the formula, 0 where
    both sides do the same single rounding (derived at each op).

The char GPT's own ops (embedding, layer norm, attention, GELU, residual
add, gradient norm, AdamW) are checked in transformer_ops.py.

NaN/Inf are checked first. One line per probe: name, op, max abs diff, ratio
of the largest difference to its tolerance, ok/FAIL; then the worst ratio
per op, and `N passed, N failed`; exit 1 on any failure (2 for bad input).
Then, for information only, the whole step end to end in PyTorch autograd
from the same initial weights, batch (and dropout masks): the differences of
the loss and of the updated parameters.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import transformer_ops  # noqa: E402 (puts samebits_torch on the path)
import kernel_ops  # noqa: E402
from samebits_torch import gpt  # noqa: E402
from samebits_torch.casefile import CaseError, read  # noqa: E402

U = 2.0 ** -24  # unit roundoff of float32: |fl(x) - x| <= U*|x|

# Keras's Adadelta, the seed case's optimiser (torch.optim.Adadelta's names)
ADADELTA = {"lr": 1.0, "rho": 0.95, "eps": 1e-7}
# Adadelta's state (samebits' names, kernels.def): torch.optim.Adadelta's keys
ADADELTA_STATE = {"acc": "square_avg", "delta_acc": "acc_delta"}

PARAMS = ["conv1.W", "conv1.b", "conv2.W", "conv2.b",
          "dense1.W", "dense1.b", "dense2.W", "dense2.b"]


class Dumps:
    """The dumped probes of one step, and the manifest's program order."""

    def __init__(self, directory):
        self.dir = directory
        self.order = []  # (name, op, [inputs])
        self.ops = {}  # name: op
        path = os.path.join(directory, "manifest.tsv")
        with open(path) as f:
            for number, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3:
                    sys.exit(f"{path}:{number}: expected name, op, inputs (tab-separated)")
                inputs = [] if fields[2] == "-" else fields[2].split(",")
                self.order.append((fields[0], fields[1], inputs))
                self.ops[fields[0]] = fields[1]

    def load(self, name, suffix=""):
        return np.load(os.path.join(self.dir, name + suffix + ".npy"))

    def t(self, name, suffix=""):
        return torch.from_numpy(self.load(name, suffix))

    def inp(self, name, i):
        return self.t(name, f".in{i}")

    def update_output(self, name, op, states):
        """An update's probe as (its parameter's probe, the torch.optim state
        key of the state it holds, or None for the parameter): samebits names
        a state the update writes in place <parameter's probe>.<state>
        (sb_optimizer_state_name); `states` maps those suffixes to the keys."""
        base, _, suffix = name.rpartition(".")
        if suffix in states and self.ops.get(base) == op:
            return base, states[suffix]
        return name, None


def nonfinite(a):
    return int(np.count_nonzero(~np.isfinite(a)))


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.worst = {}  # op: (ratio, probe)

    def line(self, name, op, max_abs, ratio, ok, note=""):
        if op not in self.worst or ratio > self.worst[op][0]:
            self.worst[op] = (ratio, name)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{name:22s} {op:18s} max_abs {max_abs:11.4e}  ratio {ratio:9.3g}  "
              f"{'ok' if ok else 'FAIL'}{'  ' + note if note else ''}")

    def compare(self, name, op, got, want, tol, note=""):
        """got: samebits' output, want: PyTorch's, tol: per element (or scalar)."""
        got = np.asarray(got, dtype=np.float64).reshape(-1)
        want = np.asarray(want, dtype=np.float64).reshape(-1)
        tol = np.broadcast_to(np.asarray(tol, dtype=np.float64).reshape(-1), got.shape)
        if got.shape != want.shape:
            self.line(name, op, math.inf, math.inf, False,
                      f"shape {got.shape} vs PyTorch {want.shape}")
            return
        bad_got, bad_want = nonfinite(got), nonfinite(want)
        if bad_got or bad_want or nonfinite(tol):
            self.line(name, op, math.inf, math.inf, False,
                      f"not finite: samebits {bad_got}, PyTorch {bad_want}, "
                      f"tolerance {nonfinite(tol)} elements")
            return
        diff = np.abs(got - want)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(diff == 0, 0.0, diff / tol)  # diff > 0 with tol 0: inf
        worst = float(ratio.max()) if ratio.size else 0.0
        self.line(name, op, float(diff.max()) if diff.size else 0.0, worst, worst <= 1.0,
                  note)


# ---- tolerances beyond the reordering bound ----------------------------------


def softmax_tol(bound, prob):
    """PyTorch's softmax: e_j = exp(z_j - m) (Sleef, <= 1 ulp) and p_j = e_j *
    fl(1/S); samebits: expf (glibc, <= 1 ulp) and p_j = e_j / S. z_j - m is
    the same rounding on both sides. Two exps within 1 ulp (<= 2U relative)
    of the true value differ by <= 4U relative, in e_j and in S: 8U in p_j;
    PyTorch's reciprocal is one more rounding: U. The dumped bound covers the
    sum's order and one quotient rounding per side. So bound + 9U*p."""
    return bound.astype(np.float64) + 9.0 * U * np.abs(prob.astype(np.float64))


def xent_tol(bound, logits, labels):
    """PyTorch: l_i = -(z_iy - fl(log S_i + m_i)); samebits: l_i = fl(log S_i)
    + fl(m_i - z_iy). The dumped bound covers the orders of both sums, logf's
    error on each side (<= 1 ulp) and the final addition's rounding. Beyond
    it, per row: the exps (S_i differs by <= 4U relative, so log S_i by <= 4U
    absolute), samebits' rounding of m_i - z_iy (U*|m_i - z_iy|) and
    PyTorch's of log S_i + m_i (U*(log S_i + |m_i|)); the batch mean of
    those is added to the bound."""
    z = logits.astype(np.float64)
    m = z.max(axis=1)
    log_s = np.log(np.exp(z - m[:, None]).sum(axis=1))
    zy = z[np.arange(z.shape[0]), labels]
    extra = 4.0 * U + U * np.abs(m - zy) + U * (log_s + np.abs(m))
    return float(bound.reshape(-1)[0]) + float(extra.mean())


# ---- one op, from samebits' own inputs -------------------------------------------


def check_op(d, rep, name, op, inputs, masks, cfg, kernel=None):
    out = d.load(name)
    bound = d.load(name, ".bound")

    if op == "conv2d_fwd":
        x, w, b = d.inp(name, 0), d.inp(name, 1), d.inp(name, 2)
        rep.compare(name, op, out, F.conv2d(x, w, b).numpy(), bound)
    elif op == "conv2d_bwd_data":
        dy, w = d.inp(name, 0), d.inp(name, 1)
        n, _, p, q = dy.shape
        k, c, r, s = w.shape
        want = torch.nn.grad.conv2d_input((n, c, p + r - 1, q + s - 1), w, dy)
        rep.compare(name, op, out, want.numpy(), bound)
    elif op == "conv2d_bwd_filter":
        dy, x = d.inp(name, 0), d.inp(name, 1)
        want = torch.nn.grad.conv2d_weight(x, tuple(out.shape), dy)
        rep.compare(name, op, out, want.numpy(), bound)
    elif op == "conv2d_bwd_bias":
        dy = d.inp(name, 0)
        rep.compare(name, op, out, dy.sum(dim=(0, 2, 3)).numpy(), bound)
    elif op == "dense_fwd":
        # Keras layout: W [in][out], y = x @ W + b
        x, w, b = d.inp(name, 0), d.inp(name, 1), d.inp(name, 2)
        rep.compare(name, op, out, torch.addmm(b, x, w).numpy(), bound)
    elif op == "dense_bwd_data":
        dy, w = d.inp(name, 0), d.inp(name, 1)
        rep.compare(name, op, out, (dy @ w.t()).numpy(), bound)
    elif op == "dense_bwd_weights":
        dy, x = d.inp(name, 0), d.inp(name, 1)
        rep.compare(name, op, out, (x.t() @ dy).numpy(), bound)
    elif op == "dense_bwd_bias":
        rep.compare(name, op, out, d.inp(name, 0).sum(dim=0).numpy(), bound)
    elif op == "relu_fwd":
        # max(x, 0) is exact: tolerance 0
        rep.compare(name, op, out, torch.relu(d.inp(name, 0)).numpy(), 0.0)
    elif op == "relu_bwd":
        # PyTorch's relu backward passes dy where the output is > 0, that is
        # where x > 0, as samebits does: no arithmetic, tolerance 0
        dy, x = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        torch.relu(x).backward(dy)
        rep.compare(name, op, out, x.grad.numpy(), 0.0)
    elif op == "maxpool_fwd":
        # a max is exact: tolerance 0
        rep.compare(name, op, out, F.max_pool2d(d.inp(name, 0), 2).numpy(), 0.0)
    elif op == "maxpool_bwd":
        maxpool_bwd_check(d, rep, name, op, out)
    elif op == "dropout_mask":
        dropout_mask_check(rep, name, op, out)
        masks[name] = out
    elif op in ("dropout_fwd", "dropout_bwd"):
        # x * mask: one rounding on both sides, the same one: tolerance 0
        rep.compare(name, op, out, (d.inp(name, 0) * d.inp(name, 1)).numpy(), 0.0)
    elif op == "softmax_fwd":
        want = torch.softmax(d.inp(name, 0), dim=1).numpy()
        rep.compare(name, op, out, want, softmax_tol(bound, want))
    elif op == "xent_loss":
        z, y = d.inp(name, 0), d.inp(name, 1).long()
        want = F.cross_entropy(z, y, reduction="mean").numpy()
        rep.compare(name, op, out, want, xent_tol(bound, z.numpy(), y.numpy()))
    elif op == "softmax_xent_bwd":
        # (prob - onehot) / n in float32, as samebits computes it: the same two
        # roundings in the same order, tolerance 0
        prob, y = d.inp(name, 0), d.inp(name, 1).long()
        onehot = F.one_hot(y, prob.shape[1]).to(prob.dtype)
        n = torch.tensor(float(prob.shape[0]), dtype=prob.dtype)
        rep.compare(name, op, out, ((prob - onehot) / n).numpy(), 0.0)
    elif op == "adadelta_update":
        adadelta_check(d, rep, name, op, out, inputs)
    elif kernel is not None:
        if not kernel_ops.check(d, rep, name, op, inputs, kernel):
            rep.line(name, op, math.inf, math.inf, False, "no PyTorch counterpart in the oracle")
    elif cfg is None or not transformer_ops.check(d, rep, name, op, inputs, cfg):
        rep.line(name, op, math.inf, math.inf, False, "no PyTorch counterpart in the oracle")


def maxpool_bwd_check(d, rep, name, op, out):
    """Autograd through F.max_pool2d. PyTorch's CPU kernel takes the first
    maximum of a window in row-major scan order (a later element wins only if
    greater, or NaN), the rule samebits documents; after relu, ties (zeros)
    are common, so the comparison is over every element, ties included, and
    the line says how many windows with a gradient had a tie."""
    dy = d.inp(name, 0)
    x = d.inp(name, 1).clone().requires_grad_(True)
    F.max_pool2d(x, 2).backward(dy.reshape(x.shape[0], x.shape[1], x.shape[2] // 2,
                                           x.shape[3] // 2))
    xv = x.detach()
    h2, w2 = xv.shape[2] // 2 * 2, xv.shape[3] // 2 * 2
    win = xv[:, :, :h2, :w2].reshape(xv.shape[0], xv.shape[1], h2 // 2, 2, w2 // 2, 2)
    win = win.permute(0, 1, 2, 4, 3, 5).reshape(xv.shape[0], xv.shape[1], h2 // 2, w2 // 2, 4)
    tied = (win == win.max(dim=-1, keepdim=True).values).sum(dim=-1) > 1
    tied_with_grad = int((tied & (dy.reshape(tied.shape) != 0)).sum())
    rep.compare(name, op, out, x.grad.numpy(), 0.0, f"{tied_with_grad} tied windows with a gradient")


def dropout_mask_check(rep, name, op, mask):
    """The mask comes from samebits' counter-based RNG, which PyTorch does not
    have; what can be checked: every element is 0 or the one kept value k =
    1/(1 - rate) > 1, and the fraction of zeros is within 5 standard
    deviations of the rate that k implies."""
    m = mask.reshape(-1).astype(np.float64)
    kept = np.unique(m[m != 0])
    if nonfinite(m) or len(kept) != 1 or kept[0] <= 1.0:
        rep.line(name, op, math.inf, math.inf, False, f"values other than 0 and one k > 1: {kept[:4]}")
        return
    rate = 1.0 - 1.0 / kept[0]
    zeros = float(np.mean(m == 0))
    sigma = math.sqrt(rate * (1.0 - rate) / m.size)
    ratio = abs(zeros - rate) / (5.0 * sigma)
    rep.line(name, op, 0.0, ratio, ratio <= 1.0, f"rate {rate:.4f}, zeros {zeros:.4f} (vs 5 sigma)")


def adadelta_check(d, rep, name, op, out, inputs):
    """torch.optim.Adadelta(lr=1, rho=.95, eps=1e-7), one step from the
    parameter's previous value (the probe named by the update's second input:
    init.* at step 0) and zero accumulators, with samebits' gradient; the
    parameter, or the accumulator the probe holds (ADADELTA_STATE).

    Tolerance. Both compute delta = g*sqrt(ad+eps)/sqrt(sa+eps) with sa =
    (1-rho)*g^2 (ad = 0), in different orders: per side sa takes 2 roundings
    (g*g, times 1-rho; PyTorch's addcmul as many), +eps 1, the sqrt halves that
    and adds 1 (2.5U), the numerator's sqrt 1, the quotient 1, the product
    with g 1: 5.5U relative on each side, 11U between them. The constant 1-rho
    differs: samebits fl(1 - 0.95f), PyTorch fl(0.05) (its double value cast
    to float), 3.8U apart, halved by the sqrt: 1.9U. Second-order terms are
    below U^2; 16U*|delta| covers 12.9U. The final p - delta rounds once per
    side: U*|p_new| each.

    The accumulators from zero: acc = (1-rho)*g^2, two roundings per side
    (PyTorch's addcmul as many), 4U apart, and the constants' difference c
    (transformer_ops.one_minus): (5U + c)|acc|;
    delta_acc = (1-rho)*delta^2, delta within 16U of each other (above), so
    its square within 32U, two roundings per side and c: (36U + c)|delta_acc|.
    """
    _, state = d.update_output(name, op, ADADELTA_STATE)
    prev = inputs[1]
    if not prev.startswith("init."):
        rep.line(name, op, math.inf, math.inf, False,
                 f"previous value {prev} is not an init.* probe: the oracle checks step 0 only")
        return
    p = d.t(prev).clone().requires_grad_(False)
    g = d.inp(name, 0)
    param = torch.nn.Parameter(p.clone())
    opt = torch.optim.Adadelta([param], **ADADELTA)
    param.grad = g.reshape(param.shape).clone()
    opt.step()
    if state is not None:
        want = opt.state[param][state].numpy().astype(np.float64)
        c = transformer_ops.one_minus(ADADELTA["rho"])
        tol = ((5.0 * U if state == "square_avg" else 36.0 * U) + c) * np.abs(want)
        rep.compare(name, op, out, want, tol, f"torch state {state}")
        return
    new = param.detach().numpy().astype(np.float64)
    delta = np.abs(p.numpy().astype(np.float64) - new)
    tol = 16.0 * U * delta + U * (np.abs(new) + np.abs(out.astype(np.float64)).reshape(new.shape))
    rep.compare(name, op, out, new, tol)


# ---- the step end to end, for information ------------------------------------------


def end_to_end(d, masks):
    """The whole step in PyTorch autograd from init.*, batch.x, batch.labels
    and samebits' dropout masks; prints the max relative difference of each
    updated parameter from samebits'. No verdict: this mixes every op's
    rounding, so only its size is of interest."""
    prm = {k: torch.nn.Parameter(d.t("init." + k).clone()) for k in PARAMS}
    x, y = d.t("batch.x"), d.t("batch.labels").long()
    n = x.shape[0]
    h = F.relu(F.conv2d(x, prm["conv1.W"], prm["conv1.b"]))
    h = F.relu(F.conv2d(h, prm["conv2.W"], prm["conv2.b"]))
    h = F.max_pool2d(h, 2).reshape(n, -1)
    h = h * torch.from_numpy(masks["dropout1.fwd.mask"]).reshape(h.shape)
    h = F.relu(torch.addmm(prm["dense1.b"], h, prm["dense1.W"]))
    h = h * torch.from_numpy(masks["dropout2.fwd.mask"]).reshape(h.shape)
    logits = torch.addmm(prm["dense2.b"], h, prm["dense2.W"])
    loss = F.cross_entropy(logits, y)
    opt = torch.optim.Adadelta(list(prm.values()), **ADADELTA)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"end to end in PyTorch autograd (information only): loss {loss.item():.9g}, "
          f"samebits {float(d.load('loss.fwd.loss').reshape(-1)[0]):.9g}")
    for k in PARAMS:
        ours = d.load("adadelta." + k).astype(np.float64).reshape(-1)
        theirs = prm[k].detach().numpy().astype(np.float64).reshape(-1)
        rel = np.abs(ours - theirs) / np.maximum(np.abs(theirs), np.finfo(np.float32).tiny)
        print(f"  adadelta.{k:10s} max relative difference {rel.max():.3e}")


def check_dump(directory, case=None):
    """the check of one dump (and its case file): its exit status"""
    d = Dumps(directory)
    names = {name for name, _, _ in d.order}
    cfg = kernel = None
    try:
        if case is not None and read(case).get("case", "kind", fallback="") == "kernel":
            kernel = kernel_ops.read_kernel(case)
    except CaseError as e:
        print(e, file=sys.stderr)
        return 2
    if kernel is not None:
        if not any(op == kernel["op"] for _, op, _ in d.order):
            print(f"{directory}: no probe of op {kernel['op']}: not a --dump-all of {case}",
                  file=sys.stderr)
            return 2
    elif "init.wte" in names:
        if case is None:
            print(f"{directory}: a char_gpt step: give its case file too (oracle.py DIR CASE)",
                  file=sys.stderr)
            return 2
        try:
            cfg = gpt.read_case(case)
        except gpt.CaseError as e:
            print(e, file=sys.stderr)
            return 2
        params = gpt.param_names(cfg)
        batch = ["batch.tokens", "batch.targets"]
    else:
        params, batch = PARAMS, ["batch.x", "batch.labels"]
    missing = [] if kernel else [p for p in batch + ["init." + k for k in params]
                                 if p not in names]
    if missing and case is None and "input.0" in names:
        print(f"{directory}: a kernel case's dump: give its case file too (oracle.py DIR CASE)",
              file=sys.stderr)
        return 2
    if missing:
        print(f"{directory}: not a --dump-all of step 0 of a training case "
              f"(missing {', '.join(missing)})", file=sys.stderr)
        return 2
    rep = Report()
    masks = {}
    sources = 0
    for name, op, inputs in d.order:
        if op == "source":
            sources += 1
            continue
        check_op(d, rep, name, op, inputs, masks, cfg, kernel)
    print(f"({sources} sources read as inputs, not compared)")
    print("worst ratio to its tolerance, per op:")
    for op, (ratio, name) in sorted(rep.worst.items()):
        print(f"  {op:22s} {ratio:9.3g}  ({name})")
    if cfg is not None:
        transformer_ops.end_to_end(d, cfg)
    elif "dropout1.fwd.mask" in masks and "dropout2.fwd.mask" in masks:
        end_to_end(d, masks)
    print(f"{rep.passed} passed, {rep.failed} failed")
    return 1 if rep.failed else 0


def main(argv):
    each = len(argv) > 1 and argv[1] == "--each"
    if (each and (len(argv) < 4 or len(argv) % 2)) or (not each and len(argv) not in (2, 3)) \
            or argv[1] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    torch.set_num_threads(1)  # a shared machine; the result does not depend on it
    if not each:
        return check_dump(*argv[1:])
    # one process for many dumps: PyTorch is imported once, the worst status kept
    # (2, bad input, over 1, a failed check)
    worst = 0
    for i in range(2, len(argv), 2):
        print(f"== {argv[i + 1]}")
        worst = max(worst, check_dump(argv[i], argv[i + 1]))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv))
