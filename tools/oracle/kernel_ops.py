"""The oracle's checks of single-kernel cases (`kind = kernel`,
cases/kernel_*.case): the ops no training step of the models runs (GELU's
erf form, log-softmax, the NLL losses, ReduceMean, pooling with any window
and stride and max pooling's indices, layer norm's mean and inverse
standard deviation, SiLU), each from samebits' own dumped inputs against
PyTorch 1.13's op; the case's [kernel] keys give the shapes and options.
The ops the models share (RMSNorm, the rotation, SwiGLU, attention with
grouped key/value heads, causal or not) go to transformer_ops.check with a
configuration made from the same keys (gpt_config).

Tolerances as in the rest of the oracle: the dumped bound for an op with a
reduction (PyTorch's order being another order of the same sums), plus the
roundings of a formula difference, derived at each op; NaN/Inf checked
first (Report.compare)."""
import math

import numpy as np
import torch
import torch.nn.functional as F

import transformer_ops
from transformer_ops import U, d64
from samebits_torch import gpt
from samebits_torch.casefile import CaseError, read

# [kernel] keys and their defaults (kernels/params.def) that the checks read
KERNEL_DEFAULTS = {"ignore_index": -100, "weighted": False, "sh": 1, "sw": 1,
                   "noncausal": False, "eps": gpt.LN_EPS, "base": gpt.ROPE_BASE}


def read_kernel(path):
    """The op and [kernel] keys of a kernel case (numbers as numbers,
    booleans as bools, defaults filled in), or CaseError."""
    cp = read(path)
    if cp.get("case", "kind", fallback="") != "kernel" or not cp.has_section("kernel"):
        raise CaseError(f"{path}: [case] kind: expected kernel with a [kernel] section")
    cfg = dict(KERNEL_DEFAULTS)
    for key, text in cp["kernel"].items():
        if key == "op":
            cfg[key] = text
        elif text in ("true", "false"):
            cfg[key] = text == "true"
        else:
            try:
                cfg[key] = int(text)
            except ValueError:
                try:
                    cfg[key] = float(text)
                except ValueError as e:
                    raise CaseError(f"{path}: [kernel] {key}: {text!r} is not a number") from e
    if "op" not in cfg:
        raise CaseError(f"{path}: [kernel] op: missing")
    return cfg


def gpt_config(k):
    """transformer_ops.check's settings for a kernel case's attention, rope
    and norm ops: heads, key/value heads and the mask from h, kv_heads and
    noncausal; the rotation's context and width from t and h d."""
    heads = k.get("h", 1)
    return {"heads": heads, "kv_heads": k.get("kv_heads", heads),
            "causal": not k["noncausal"], "context": k.get("t", 1),
            "width": heads * k.get("d", 1)}


# ---- GELU, erf form ---------------------------------------------------------------

ERF_SLOPE = 2.0 / math.sqrt(math.pi)  # erf'(0)


def gelu_erf_ours(x):
    """samebits' (elementwise.h) error against the exact GELU: z = x alpha
    (the float constant's rounding and the product: 2U|z|, moving erf by
    erf'(z) 2U|z|), erff within 2 ulps (4U|erf z|: glibc documents 1, the
    numerics mode's evaluation allows 2, harness/NUMERICS.md), 1 + e
    (U|1 + e|), x 0.5 exact, the product (U|y|, added by the caller).
    Returns x, erf(z), cdf, and the error of 1 + erf(z)."""
    x = d64(x)
    z = x * math.sqrt(0.5)
    e = torch.erf(torch.from_numpy(z)).numpy()
    de = ERF_SLOPE * np.exp(-z * z) * 2.0 * U * np.abs(z) + 4.0 * U * np.abs(e)
    return x, e, 0.5 * (1.0 + e), de + U * np.abs(1.0 + e)


def gelu_erf_fwd_tol(x, y):
    """y = (x 0.5)(1 + erf): 0.5|x| times the error of 1 + erf, the final
    product U|y|, and the double reference's own error (a few double
    roundings of 1 + erf and y: below 2^-50 (|x| + |y|))."""
    x, _, _, d1e = gelu_erf_ours(x)
    return 0.5 * np.abs(x) * d1e + U * np.abs(d64(y)) + 2.0 ** -50 * (np.abs(x) + np.abs(d64(y)))


def gelu_erf_bwd_tol(dy, x, dx):
    """dx = dy (cdf + x pdf): cdf = 0.5 (1 + erf) errs by half of 1 + erf's
    error and its own U cdf; pdf = beta expf((x x) -0.5): the square's
    rounding moves the exponent by U x^2/2, expf 2 ulps (4U, as erff),
    beta's rounding and the product U each: (U x^2/2 + 6U) pdf; x pdf one
    more U;
    the sum U|cdf + x pdf|; all times |dy|, and the last product U|dx|;
    the reference's own error below 2^-50 (|dy| + |dx|)."""
    x, _, cdf, d1e = gelu_erf_ours(x)
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    dpdf = np.abs(x) * pdf * (0.5 * U * x * x + 7.0 * U)
    dcdf = 0.5 * d1e + U * cdf
    return (np.abs(d64(dy)) * (dcdf + dpdf + U * np.abs(cdf + x * pdf) + 2.0 ** -50) +
            (U + 2.0 ** -50) * np.abs(d64(dx)))


def gelu_erf_check(d, rep, name, op, out):
    """PyTorch's F.gelu(approximate="none") evaluated in double on samebits'
    float inputs. (PyTorch 1.13's float32 erf, its vectorised kernel,
    documents no error bound to derive a tolerance from, and its GELU is
    no more accurate than samebits': measured over [-6, 6], 6.3U absolute,
    a relative error of 1.0 at x = -5.54 where 1 + erf cancels. The double
    op is the same formula, within 2^-50 here, so the tolerance is
    samebits' own error.)"""
    if op == "gelu_erf_fwd":
        x = d.inp(name, 0)
        want = F.gelu(x.double(), approximate="none").numpy()
        rep.compare(name, op, out, want, gelu_erf_fwd_tol(x, want), "PyTorch in double")
        return
    dy, x = d.inp(name, 0), d.inp(name, 1).double().requires_grad_(True)
    F.gelu(x, approximate="none").backward(dy.double())
    want = x.grad.numpy()
    rep.compare(name, op, out, want, gelu_erf_bwd_tol(dy, x.detach(), want), "PyTorch in double")


# ---- log-softmax and the NLL losses ----------------------------------------------


def log_softmax_tol(bound, logits):
    """PyTorch's CPU log-softmax is samebits' formula, (z - m) - log S:
    z - m the same rounding on both sides. Beyond the dumped bound (the
    sum's orders and each side's roundings): the exps (Sleef's and glibc's,
    each within 1 ulp) put the two S within 4U relative, so log S within 4U
    absolute; the two logs, each within 1 ulp of its own, 4U|log S|."""
    z = d64(logits)
    m = z.max(axis=1, keepdims=True)
    log_s = np.log(np.exp(z - m).sum(axis=1, keepdims=True))
    return d64(bound) + 4.0 * U + 4.0 * U * np.abs(log_s)


def nll_check(d, rep, name, op, out, bound, k):
    """F.nll_loss on the (N, C, d) layout with samebits' class weights
    (when `weighted`) and ignore_index. A position's term is -(w[y] lp) on
    both sides, one product, the same rounding: `none` is compared with
    tolerance 0; `sum` and `mean` are other orders of the same sums (mean:
    then one division, as samebits'), within the dumped bound."""
    lp, labels = d.inp(name, 0), d.inp(name, 1).long()
    weight = d.inp(name, 2) if k["weighted"] else None
    reduction = op[len("nll_loss_"):]
    want = F.nll_loss(lp, labels, weight=weight, ignore_index=k["ignore_index"],
                      reduction=reduction).numpy()
    ignored = int((labels == k["ignore_index"]).sum())
    note = f"{ignored} of {labels.numel()} positions ignored"
    rep.compare(name, op, out, want, 0.0 if reduction == "none" else bound, note)


# ---- pooling ---------------------------------------------------------------------


def window_args(k):
    return (k["kh"], k["kw"]), (k["sh"], k["sw"])


def maxpool_indices_check(d, rep, name, op, out, k):
    """F.max_pool2d(return_indices=True): PyTorch's index is into the
    input's plane (h w, row-major); samebits' (ONNX's MaxPool Indices,
    storage_order 0, kernels/pool/pool.h) into the whole input [n][c][h][w],
    so plane p's indices are PyTorch's plus p h w. Both take a window's
    first maximum in row-major order (a NaN aside: PyTorch's last NaN,
    samebits' first); indices are compared exactly and the line counts the
    windows with a tie."""
    x = d.inp(name, 0)
    size, stride = window_args(k)
    y, idx = F.max_pool2d(x, size, stride, return_indices=True)
    n, c, h, w = x.shape
    plane = torch.arange(n * c, dtype=torch.int64).reshape(n, c, 1, 1) * (h * w)
    note = f"{y.numel()} windows, {windows_tied(x, y, size, stride)} with a tie"
    rep.compare(name, op, out, (idx + plane).numpy(), 0.0, note)


def windows_tied(x, y, size, stride):
    """how many windows hold their maximum more than once"""
    cols = F.unfold(x.reshape(-1, 1, x.shape[2], x.shape[3]), size, stride=stride)
    hits = (cols == y.reshape(cols.shape[0], 1, -1)).sum(dim=1)
    return int((hits > 1).sum())


# ---- dispatch --------------------------------------------------------------------


def check(d, rep, name, op, inputs, k):
    """One probe of a kernel case, or False when no check knows its op."""
    out = d.load(name)
    bound = d.load(name, ".bound")
    if op in ("gelu_erf_fwd", "gelu_erf_bwd"):
        gelu_erf_check(d, rep, name, op, out)
    elif op == "log_softmax_fwd":
        z = d.inp(name, 0)
        rep.compare(name, op, out, F.log_softmax(z, dim=1).numpy(), log_softmax_tol(bound, z))
    elif op.startswith("nll_loss_"):
        nll_check(d, rep, name, op, out, bound, k)
    elif op == "reduce_mean":
        # torch.mean: its sum in its order, then one division by r (a count,
        # exact): another order of samebits' sum, within the dumped bound
        x = d.inp(name, 0).reshape(k["outer"], k["r"], k["inner"])
        rep.compare(name, op, out, x.mean(dim=1).numpy(), bound)
    elif op == "avgpool_fwd":
        # PyTorch's window sum in its order, then one division by kh kw, as
        # samebits': the dumped bound
        rep.compare(name, op, out, F.avg_pool2d(d.inp(name, 0), *window_args(k)).numpy(), bound)
    elif op == "maxpool_window_fwd":
        # a maximum is exact: tolerance 0
        rep.compare(name, op, out, F.max_pool2d(d.inp(name, 0), *window_args(k)).numpy(), 0.0)
    elif op == "maxpool_window_indices":
        maxpool_indices_check(d, rep, name, op, out, k)
    elif op in ("layernorm_mean", "layernorm_rstd"):
        # torch.native_layer_norm's mean and rstd = 1/sqrt(var + eps), the
        # variance by Welford's updates (as for layernorm_fwd,
        # transformer_ops.layernorm_fwd_extra: taken to err no more than one
        # order of samebits' two-pass sums, which the dumped bound covers);
        # the division, + eps, sqrt and the reciprocal round alike
        x = d.inp(name, 0)
        _, mean, rstd = torch.native_layer_norm(x, (x.shape[1],), None, None, k["eps"])
        want = mean if op == "layernorm_mean" else rstd
        rep.compare(name, op, out, want.reshape(-1).numpy(), bound)
    elif op == "silu_fwd":
        x = d.inp(name, 0)
        _, _, _, tol = transformer_ops.silu_tols(x)
        rep.compare(name, op, out, F.silu(x).numpy(), tol)
    elif op == "silu_bwd":
        # swiglu_bwd_a with b = 1: dy b is dy, exact
        dy, x = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        F.silu(x).backward(dy)
        rep.compare(name, op, out, x.grad.numpy(),
                    transformer_ops.swiglu_grad_a_tol(dy, x.detach(), torch.ones_like(dy)))
    elif op.startswith("rmsnorm_") and k["eps"] != gpt.LN_EPS:
        rep.line(name, op, math.inf, math.inf, False,
                 f"eps {k['eps']:g}: the oracle's RMSNorm checks eps {gpt.LN_EPS:g} only")
    else:
        return transformer_ops.check(d, rep, name, op, inputs, gpt_config(k))
    return True
