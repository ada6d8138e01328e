#!/usr/bin/python3
"""The seed CNN trained by samebits (det) and by PyTorch 1.13 side by side,
from the same initial weights, the same data order and the same dropout
masks (tools/interop/README.md).

usage: torch_seed_cnn.py --build BUILD [--case CASE] [--steps N] [--threads T]
                         [--data-dir DIR] [--work-dir DIR] [--check-first-loss]

samebits runs the case (`samebits run CASE --trace`, det family) and dumps
its initial parameters (`--dump init.<param> --dump-step 0`) and the loss of
step 0. PyTorch trains the same model from those weights meanwhile:

  - data order: each epoch's permutation is samebits' own
    sb_rng_permutation, called from libsamebits (ctypes), and every batch's
    pixels and labels are hashed and checked against samebits' batch.x and
    batch.labels records of that step;
  - dropout: samebits' masks (sb_dropout_mask_ref from libsamebits, checked
    against the dropout<k>.fwd.mask records of every step), so the two runs
    compute the same function and part by rounding alone;
  - Adadelta: torch.optim.Adadelta with the case's lr, rho and epsilon,
    which is Keras 2.1's formula with epsilon at the same places (inside both
    square roots).

Prints one line per epoch (both training losses, test losses and
accuracies), and with --check-first-loss checks that the two losses of step
0 agree within the probable bound derived at first_loss_bound (the
worst-case bound, printed too, is ten times looser); exit 1 when they do
not, or when a batch, mask or weight is not samebits' (exit 2 for bad input).
"""
import argparse
import ctypes
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

from torch_compare import BadInput, library, run_both  # noqa: E402
import numpy as np  # noqa: E402 (torch_compare exits 77 without them)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from samebits_torch.bounds import UNIT_ROUNDOFF as U, gamma  # noqa: E402
from samebits_torch.casefile import CaseError, read, sample_range  # noqa: E402
from samebits_torch.seed import read_idx  # noqa: E402

PARAMS = ["conv1.W", "conv1.b", "conv2.W", "conv2.b",
          "dense1.W", "dense1.b", "dense2.W", "dense2.b"]
CLASSES = 10
# kernels/sb_rng.h and kernels/model/README.md ("Random numbers"): the
# stream of the epoch order, and the dropout layers' streams (position in
# the Keras model). Every draw is checked against samebits' trace.
STREAM_SHUFFLE = 0x300
STREAM_DROPOUT = 0x200
LAYER_DROPOUT1, LAYER_DROPOUT2 = 3, 6


class DropoutParams(ctypes.Structure):
    """sb_dropout_params (kernels/sb_kernels.h)."""
    _fields_ = [("rate", ctypes.c_float), ("seed", ctypes.c_uint64),
                ("stream", ctypes.c_uint32), ("step", ctypes.c_uint32)]


class Library:
    """The random draws of samebits, from its own shared library."""

    def __init__(self, build):
        self.lib = library(build)
        self.lib.sb_rng_permutation.argtypes = [
            ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_uint64,
            ctypes.c_uint32, ctypes.c_uint32]
        self.lib.sb_dropout_mask_ref.argtypes = [
            ctypes.POINTER(ctypes.c_float), ctypes.POINTER(DropoutParams), ctypes.c_size_t]

    def permutation(self, n, seed, epoch):
        perm = np.empty(n, dtype=np.int64)
        self.lib.sb_rng_permutation(perm.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                                    n, seed, STREAM_SHUFFLE, epoch)
        return perm

    def dropout_mask(self, rate, seed, layer, step, n):
        mask = np.empty(n, dtype=np.float32)
        params = DropoutParams(rate, seed, STREAM_DROPOUT + layer, step)
        self.lib.sb_dropout_mask_ref(mask.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                     ctypes.byref(params), n)
        return mask


def read_case(path):
    """The [train] settings the comparison needs; only the seed model with
    Adadelta on MNIST is comparable here."""
    cp = read(path)
    t = cp["train"] if cp.has_section("train") else {}
    want = {"model": "keras_mnist_cnn", "dataset": "mnist", "optimizer": "adadelta"}
    for key, value in want.items():
        if t.get(key) != value:
            raise BadInput(f"{path}: [train] {key}: this tool compares {value}, "
                           f"found {t.get(key)!r}")
    if cp.get("case", "family", fallback="det") != "det":
        raise BadInput(f"{path}: [case] family: the comparison is with the det family")
    return {
        "seed": int(cp.get("case", "seed", fallback="1")),
        "train": sample_range(path, t["train"], "train"),
        "test": sample_range(path, t["test"], "test"),
        "batch": int(t.get("batch", "128")),
        "epochs": int(t.get("epochs", "12")),
        "lr": float(t.get("lr", "1.0")),
        "rho": float(t.get("rho", "0.95")),
        "eps": float(t.get("epsilon", "1e-7")),
        "dropout1": float(t.get("dropout1", "0.25")),
        "dropout2": float(t.get("dropout2", "0.5")),
    }


def forward(p, x, masks):
    """The seed model in samebits' layouts (conv W [out][in][3][3], dense W
    [in][out]); masks None in evaluation. Returns the logits and the
    activations the first-step bound needs."""
    h1 = F.relu(F.conv2d(x, p["conv1.W"], p["conv1.b"]))
    h2 = F.relu(F.conv2d(h1, p["conv2.W"], p["conv2.b"]))
    h = F.max_pool2d(h2, 2).reshape(x.shape[0], -1)
    if masks:
        h = h * masks[0].reshape(h.shape)
    h3 = F.relu(torch.addmm(p["dense1.b"], h, p["dense1.W"]))
    if masks:
        h3 = h3 * masks[1].reshape(h3.shape)
    return torch.addmm(p["dense2.b"], h3, p["dense2.W"]), (x, h1, h2, h, h3)


# The probabilistic constant of Higham and Mary ("A new approach to
# probabilistic rounding error analysis", SIAM J. Sci. Comput. 41, 2019,
# theorem 3.1): a sum of n products computed in any order, with rounding
# errors independent and of mean zero, is within gamma_lambda(n) * sum|terms|
# of the exact sum with probability at least 1 - 2n exp(-lambda^2 (1-U)^2 / 2).
# lambda = 10 makes that 2n * 2e-22: below 1e-10 over the ~8e6 sums of a
# step's forward pass.
LAMBDA = 10.0


def gamma_probable(n):
    return math.expm1(LAMBDA * math.sqrt(n) * U + n * U * U / (1.0 - U))


def first_loss_bound(p, acts, logits, masks, g):
    """A bound on |loss_samebits - loss_PyTorch| at step 0, with g the
    constant of a k-term sum (gamma for the worst case, gamma_probable for
    the probable bound): both sides start from the same bits (weights,
    batch, masks: checked), so each differs from the exact loss by its own
    roundings only, and the two by at most twice one side's bound (the
    magnitudes below are PyTorch's values, which differ from samebits' in
    second order only).

    Forward error, componentwise, in double: a layer y = W h + b with input
    error e gives error |W| e + g(k+1) (|W| |h| + |b|) (k products and the
    bias, in any order, fused or not); relu and max pooling do not grow an
    error; a dropout multiply carries |m| e and rounds once (U |y|). The
    loss l_i = logsumexp(z_i) - z_iy moves by at most 2 max_j |dz_ij| (its
    gradient p - onehot has L1 norm <= 2); its own evaluation rounds the
    exps (1 ulp each, 2U relative) and their sum (gamma(K)), so log S by
    2U + gamma(K), the log (U |log S|), the max subtraction and the final
    differences (U per operand magnitude, 2 of them), and the batch mean
    adds gamma(n) mean |l_i|."""
    x, h1, h2, h, h3 = (a.detach().double() for a in acts)
    a = {k: v.detach().double().abs() for k, v in p.items()}
    e = torch.zeros_like(x)
    e = F.conv2d(e, a["conv1.W"]) + g(10) * F.conv2d(x.abs(), a["conv1.W"], a["conv1.b"])
    e = F.conv2d(e, a["conv2.W"]) + g(289) * F.conv2d(h1.abs(), a["conv2.W"], a["conv2.b"])
    e = F.max_pool2d(e, 2).reshape(h.shape)
    m1, m2 = (m.double().reshape(-1) for m in masks)
    e = e * m1.reshape(e.shape) + U * h.abs()
    k = h.shape[1]
    e = e @ a["dense1.W"] + g(k + 1) * (h.abs() @ a["dense1.W"] + a["dense1.b"])
    e = e * m2.reshape(e.shape) + U * h3.abs()
    e = e @ a["dense2.W"] + g(129) * (h3.abs() @ a["dense2.W"] + a["dense2.b"])
    z = logits.detach().double()
    m = z.max(dim=1).values
    log_s = torch.log(torch.exp(z - m[:, None]).sum(dim=1))
    rows = (2.0 * e.max(dim=1).values + 2.0 * U + gamma(CLASSES) + U * log_s.abs()
            + 2.0 * U * (z.abs().max(dim=1).values + log_s.abs()))
    loss_rows = log_s + m
    return 2.0 * float(rows.mean() + gamma(z.shape[0]) * loss_rows.abs().mean())


def batch_tensors(images, labels, idx):
    x = torch.from_numpy(images[idx].astype(np.float32) / np.float32(255)).unsqueeze(1)
    return x, torch.from_numpy(labels[idx].astype(np.int64))


def evaluate(p, images, labels, lo, hi, batch):
    logits = []
    with torch.no_grad():
        for start in range(lo, hi, batch):
            x, _ = batch_tensors(images, labels, np.arange(start, min(start + batch, hi)))
            logits.append(forward(p, x, None)[0])
    z = torch.cat(logits)
    y = torch.from_numpy(labels[lo:hi].astype(np.int64))
    return float(F.cross_entropy(z, y)), float((z.argmax(dim=1) == y).double().mean())


def train_torch(cfg, lib, dumps, checker, images, labels, steps, check_first):
    """PyTorch's run: the epoch metrics, and the first step's (loss, bound)."""
    p = {}
    for k in PARAMS:
        w = np.load(os.path.join(dumps, f"init.{k}.npy"))
        checker.same(0, "init." + k, w)
        p[k] = torch.nn.Parameter(torch.from_numpy(w))
    opt = torch.optim.Adadelta(list(p.values()), lr=cfg["lr"], rho=cfg["rho"], eps=cfg["eps"])
    lo, hi = cfg["train"]
    n_train, step, metrics, first = hi - lo, 0, [], None
    for epoch in range(cfg["epochs"]):
        if steps and step >= steps:
            break
        order = lib.permutation(n_train, cfg["seed"], epoch)
        losses = []
        for start in range(0, n_train, cfg["batch"]):
            if steps and step >= steps:
                break
            x, y = batch_tensors(images, labels, lo + order[start:start + cfg["batch"]])
            checker.same(step, "batch.x", x.numpy())
            checker.same(step, "batch.labels", y.numpy())
            n = x.shape[0]
            features = 64 * ((x.shape[2] - 4) // 2) * ((x.shape[3] - 4) // 2)
            masks = []
            for name, rate, layer, count in (
                    ("dropout1.fwd.mask", cfg["dropout1"], LAYER_DROPOUT1, n * features),
                    ("dropout2.fwd.mask", cfg["dropout2"], LAYER_DROPOUT2, n * 128)):
                m = lib.dropout_mask(rate, cfg["seed"], layer, step, count)
                checker.same(step, name, m)
                masks.append(torch.from_numpy(m))
            logits, acts = forward(p, x, masks)
            loss = F.cross_entropy(logits, y)
            if step == 0 and check_first:
                first = (float(loss), first_loss_bound(p, acts, logits, masks, gamma_probable),
                         first_loss_bound(p, acts, logits, masks, gamma))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss))
            step += 1
        if steps and step >= steps and len(losses) < math.ceil(n_train / cfg["batch"]):
            break  # a cut epoch is not evaluated, as in samebits
        test_loss, test_acc = evaluate(p, images, labels, *cfg["test"], cfg["batch"])
        metrics.append({"steps": step, "train_loss": sum(losses) / len(losses),
                        "test_loss": test_loss, "test_accuracy": test_acc})
        print(f"  PyTorch epoch {epoch + 1} done", file=sys.stderr, flush=True)
    return metrics, first


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the build directory (samebits, libsamebits)")
    ap.add_argument("--case", default=os.path.join(HERE, "..", "..", "cases",
                                                   "keras_mnist_cnn.case"))
    ap.add_argument("--steps", type=int, default=0, help="stop both runs after N steps")
    ap.add_argument("--threads", type=int, default=2, help="threads of both runs (default 2)")
    ap.add_argument("--data-dir", default=os.environ.get("SAMEBITS_DATA_DIR", "data"))
    ap.add_argument("--work-dir", help="keep the trace and dumps here (default: a temporary one)")
    ap.add_argument("--check-first-loss", action="store_true",
                    help="fail unless the losses of step 0 agree within their bound")
    a = ap.parse_args(argv[1:])
    try:
        cfg = read_case(a.case)
        lib = Library(a.build)
        images = read_idx(os.path.join(a.data_dir, "mnist-images-idx3-ubyte"), 3)
        labels = read_idx(os.path.join(a.data_dir, "mnist-labels-idx1-ubyte"), 1)
        if max(cfg["train"][1], cfg["test"][1]) > len(images):
            raise BadInput(f"{a.case}: sample ranges beyond the {len(images)} digits of "
                           f"{a.data_dir}")
    except (BadInput, CaseError, OSError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)

    def train(dumps, checker):
        epochs, first = train_torch(cfg, lib, dumps, checker, images, labels, a.steps,
                                    a.check_first_loss)
        sb_first = np.load(os.path.join(dumps, "loss.fwd.loss.npy")).reshape(-1)[0]
        return epochs, first, float(sb_first)

    try:
        sb_epochs, sb_seconds, (torch_epochs, first, sb_first), torch_seconds, checked = \
            run_both(a, ["init." + p for p in PARAMS] + ["loss.fwd.loss"], train)
    except BadInput as e:
        print(e, file=sys.stderr)
        return 1

    print(f"case {a.case}: {cfg['train'][1] - cfg['train'][0]} training, "
          f"{cfg['test'][1] - cfg['test'][0]} test digits, batch {cfg['batch']}, "
          f"{a.threads} threads each, at once; samebits det {sb_seconds:.1f} s, PyTorch "
          f"{torch.__version__} {torch_seconds:.1f} s")
    print(f"same bits as samebits' trace: {checked} tensors (initial weights, "
          f"every batch and dropout mask)")
    print("epoch  steps  train loss (samebits  PyTorch)  test loss (samebits  PyTorch)  "
          "test accuracy (samebits  PyTorch)")
    for i, (s, t) in enumerate(zip(sb_epochs, torch_epochs)):
        print(f"{i + 1:5d}  {t['steps']:5d}  {s['train_loss']:20.4f} {t['train_loss']:8.4f}"
              f"  {s['test_loss']:19.4f} {t['test_loss']:8.4f}"
              f"  {s['test_accuracy']:23.4f} {t['test_accuracy']:8.4f}")
    if not a.check_first_loss:
        return 0
    loss, bound, worst_case = first
    diff = abs(sb_first - loss)
    ok = diff <= bound
    print(f"step 0 loss: samebits {sb_first:.9g}, PyTorch {loss:.9g}, difference {diff:.3g}, "
          f"probable bound {bound:.3g} (ratio {diff / bound:.3g}; worst-case bound "
          f"{worst_case:.3g}): {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
