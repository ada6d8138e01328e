"""The oracle's checks of single-kernel cases (`kind = kernel`,
cases/kernel_*.case): the ops no training step of the models runs (GELU's
erf form, log-softmax and the NLL losses and their gradients, ReduceMean,
pooling with any window and stride, its gradients and max pooling's
indices, layer norm's mean and inverse standard deviation, SiLU), each
from samebits' own dumped inputs against PyTorch 1.13's op; the case's
[kernel] keys give the shapes and options.
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
from transformer_ops import U, d64, gamma
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


def log_softmax_bwd_check(d, rep, name, op, out, bound):
    """dz = dy - exp(lp) S, S = sum dy over the classes (dim 1 of [n][k] or
    of the (N, C, d) layout [n][k][d]), computed by
    torch._log_softmax_backward_data on samebits' dy and lp: the function
    autograd's LogSoftmaxBackward0 calls with the forward's output, here
    samebits' dumped lp (no logits give that lp exactly). That the function
    is autograd's is checked first, on z = lp: the gradient of
    F.log_softmax(z) by autograd and the function on its output must agree
    to the bit, or the line fails. PyTorch's formula is samebits' with no
    more roundings (measured on the (N, C, d) case: 97.5% of its elements
    are fl(dy - e S) with S summed in float in class order, the product and
    the difference fused), which the dumped bound, twice samebits' analysis
    (the sum in any order, the product, the difference), allows for. The
    one difference it leaves out is the exp (the bound takes expf(lp) as the
    same float on both sides): PyTorch's and glibc's exps, each within 1 ulp
    (2U relative, 2^-149 below the normal range), differ by up to
    4U e + 2^-148, times |S| plus its error gamma(k - 1) sum |dy|."""
    dy, lp = d.inp(name, 0), d.inp(name, 1)
    want = torch._log_softmax_backward_data(dy, lp, 1, lp.dtype)
    z = lp.clone().requires_grad_(True)
    y = F.log_softmax(z, dim=1)
    y.backward(dy)
    same = torch.equal(z.grad, torch._log_softmax_backward_data(dy, y.detach(), 1, lp.dtype))
    dyd = d64(dy)
    k = dyd.shape[1]
    s = (np.abs(dyd.sum(axis=1, keepdims=True)) +
         gamma(k - 1) * np.abs(dyd).sum(axis=1, keepdims=True))
    tol = d64(bound) + (4.0 * U * np.exp(d64(lp)) + 2.0 ** -148) * s
    if not same:
        rep.line(name, op, math.inf, math.inf, False,
                 "autograd through F.log_softmax differs from _log_softmax_backward_data")
        return
    rep.compare(name, op, out, want.numpy(), tol)


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


def nll_bwd_check(d, rep, name, op, out, bound, k):
    """Autograd through F.nll_loss (weight, ignore_index, reduction) on the
    (N, C, d) layout, from samebits' output gradient; the log-probabilities'
    values do not enter the gradient (zeros here). At a kept target both
    sides write w[y] (-q), the other elements and an ignored position's 0:
    q = g for sum, g_e for none (one product, the same rounding, or none
    unweighted: tolerance 0, the dumped bound), g / W for mean, PyTorch's W
    the forward's total_weight (its order of the weights' sum), samebits'
    its own block order: the dumped bound (twice the analysis of the sum
    carried through the quotient and the product). The line counts the
    ignored positions."""
    dloss, labels = d.inp(name, 0), d.inp(name, 1).long()
    weight = d.inp(name, 2) if k["weighted"] else None
    reduction = op[len("nll_loss_"):-len("_bwd")]
    lp = torch.zeros(out.shape, dtype=torch.float32, requires_grad=True)
    loss = F.nll_loss(lp, labels, weight=weight, ignore_index=k["ignore_index"],
                      reduction=reduction)
    loss.backward(dloss.reshape(loss.shape))
    ignored = int((labels == k["ignore_index"]).sum())
    note = (f"{ignored} of {labels.numel()} positions ignored, "
            f"{'weighted' if weight is not None else 'unweighted'}")
    rep.compare(name, op, out, lp.grad.numpy(), bound, note)


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


def pool_bwd_check(d, rep, name, op, out, bound, k):
    """Autograd through F.avg_pool2d and F.max_pool2d (no padding, floor: a
    ragged edge's rows and columns get 0 on both sides). PyTorch's CPU
    backward scatters each window's term, in the windows' row-major order,
    into a zeroed gradient: samebits' gather order, so the two sums are the
    same, but the tolerance is the dumped bound (any order). Average: each
    term fl(dy / (kh kw)) on both sides. Max: each term dy at its window's
    argmax, PyTorch's from its forward, samebits' recomputed from x; both
    take a window's first maximum in row-major order, so on a tie they pick
    the same element (the line counts the tied windows). They differ only
    on a NaN: PyTorch keeps a window's last NaN, samebits its first; the
    line counts the windows holding one."""
    size, stride = window_args(k)
    dy = d.inp(name, 0)
    if op == "avgpool_bwd":
        x = torch.zeros(out.shape, dtype=torch.float32, requires_grad=True)
        F.avg_pool2d(x, size, stride).backward(dy)
        note = ""
    else:
        x = d.inp(name, 1).clone().requires_grad_(True)
        y = F.max_pool2d(x, size, stride)
        y.backward(dy)
        xv = x.detach()
        nan = F.max_pool2d(torch.isnan(xv).float(), size, stride)
        note = (f"{y.numel()} windows, {windows_tied(xv, y.detach(), size, stride)} "
                f"with a tie, {int(nan.sum())} with a NaN")
    rep.compare(name, op, out, x.grad.numpy(), bound, note)


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
    elif op == "log_softmax_bwd":
        log_softmax_bwd_check(d, rep, name, op, out, bound)
    elif op.startswith("nll_loss_") and op.endswith("_bwd"):
        nll_bwd_check(d, rep, name, op, out, bound, k)
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
    elif op in ("avgpool_bwd", "maxpool_window_bwd"):
        pool_bwd_check(d, rep, name, op, out, bound, k)
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
