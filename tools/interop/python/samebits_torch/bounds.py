"""Reordering bounds of the ops the tracer knows, for dumps.

Two evaluations of one op on the same inputs that differ only in order (of
their sums, of the threads' partial sums) are each within e of the exact
result, so they differ by at most 2e; the bound dumped as
<probe>.bound.npy is 2e per element, computed in double and rounded up to
the next float. `samebits diff --dumps` reads it; an op with no bound here
gets no file, and a difference in it is `unbounded` (no bound known: neither
a reordering nor a bug). u = 2^-24, gamma(m) = m u / (1 - m u) (harness/NUMERICS.md).

e is derived by a running error analysis (as harness/NUMERICS.md does for
samebits' own layer norm): each step of the op's evaluation, in PyTorch
1.13's formula for it, is carried as its exact value v (from the op's
float inputs, in double) and a bound e on the error of its computed value:

    input               e = 0
    a + b               e_a + e_b + u (|v| + e_a + e_b)
    a * b               |a| e_b + |b| e_a + e_a e_b + u (|v| + that)
    a / b               (e_a + |v| e_b) / (|b| - e_b) + u (|v| + that)
    sqrt(a)             e_a / (sqrt(a) + sqrt(max(a - e_a, 0))) + u (|v| + that)
    exp(a)              exp(a) (expm1(e_a) + c exp(e_a)), c = 4u (within 2 ulps)
    log(a)              -log1p(-e_a / a) + c (|log a| + that), c = 4u
    sum of m terms      sum e_i + gamma(m - 1) sum (|v_i| + e_i), any order
    max, negation       exact: the largest e, the same e

Each rule bounds the computed value's distance to the exact one whatever
the computed operands are within their bounds, so the result holds for any
order of every sum and any split of the work among threads. A fused
multiply-add only removes a rounding. Products that underflow are not
counted (as for dense and conv): a bound for values in float's normal
range. Where PyTorch's formula for an op is not known to be the one
modelled (the moments of a layer norm), the model is the least accurate
of the usual ones (see _moments).

The dense, conv and matrix product bounds are the sum rule in closed form:
a sum of m products is within gamma(m) sum |terms| of the exact one (the
products' roundings included)."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.grad import conv2d_input, conv2d_weight

UNIT_ROUNDOFF = 2.0 ** -24
FUNCTION_ERROR = 4 * UNIT_ROUNDOFF      # exp and log within 2 ulps
U = UNIT_ROUNDOFF


def gamma(n):
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


def bound(terms, magnitude_sum):
    """2*gamma(terms)*magnitude_sum as float32, rounded up: two orders of
    a sum of `terms` terms whose magnitudes sum to magnitude_sum."""
    return twice(gamma(terms) * magnitude_sum)


def twice(err):
    """2*err (a tensor or array in double) as float32, rounded up."""
    if isinstance(err, torch.Tensor):
        err = err.detach().cpu().numpy()
    b = (2.0 * np.asarray(err, dtype=np.float64)).astype(np.float32)
    return np.asarray(np.nextafter(b, np.float32(np.inf)))


class R:
    """A computed value in a running error analysis: v its exact value (a
    double tensor), e a bound on the computed value's error."""

    def __init__(self, v, e=None):
        self.v = v
        self.e = torch.zeros_like(v) if e is None else e

    @staticmethod
    def of(t):
        """A float input: exact."""
        return R(t.detach().double())

    def _rounded(self, v, e):
        return R(v, e + U * (v.abs() + e))

    def __add__(self, o):
        o = _r(o)
        return self._rounded(self.v + o.v, self.e + o.e)

    def __sub__(self, o):
        return self + (-_r(o))

    def __neg__(self):
        return R(-self.v, self.e)

    def __mul__(self, o):
        o = _r(o)
        return self._rounded(self.v * o.v, self.v.abs() * o.e + o.v.abs() * self.e + self.e * o.e)

    def __truediv__(self, o):
        o = _r(o)
        v = self.v / o.v
        return self._rounded(v, (self.e + v.abs() * o.e) / (o.v.abs() - o.e).clamp(min=0))

    def sqrt(self):
        v = self.v.clamp(min=0).sqrt()
        denom = v + (self.v - self.e).clamp(min=0).sqrt()
        return self._rounded(v, torch.where(denom > 0, self.e / denom, self.e.sqrt()))

    def exp(self):
        v = self.v.exp()
        finite = torch.isfinite(self.v)     # exp(-inf) = 0, exactly
        e = v * (torch.expm1(self.e) + FUNCTION_ERROR * self.e.exp())
        return R(v, torch.where(finite, e, torch.zeros_like(e)))

    def log(self):
        v = self.v.log()
        e = -torch.log1p(-self.e / self.v)
        return R(v, e + FUNCTION_ERROR * (v.abs() + e))

    def sum(self, dim=None, keepdim=False):
        """Any order: e = sum e_i + gamma(m - 1) sum(|v_i| + e_i)."""
        dims = tuple(range(self.v.dim())) if dim is None else dim
        m = _count(self.v, dims)
        return R(_sum(self.v, dims, keepdim),
                 _sum(self.e, dims, keepdim) +
                 gamma(max(m - 1, 0)) * _sum(self.v.abs() + self.e, dims, keepdim))

    def amax(self, dim, keepdim=True):
        return R(self.v.amax(dim, keepdim=keepdim), self.e.amax(dim, keepdim=keepdim))

    def at(self, fn):
        """An exact rearrangement (a view, a gather) of value and error."""
        return R(fn(self.v), fn(self.e))

    def magnitude(self):
        """A bound on the computed value's magnitude."""
        return self.v.abs() + self.e


def _r(x):
    if isinstance(x, R):
        return x
    if isinstance(x, torch.Tensor):
        return R.of(x)
    return R(torch.tensor(float(x), dtype=torch.float64))


def _count(t, dims):
    dims = (dims,) if isinstance(dims, int) else dims
    return math.prod(t.shape[d] for d in dims) if t.dim() else 1


def _sum(t, dims, keepdim):
    return t.sum(dim=dims, keepdim=keepdim) if t.dim() else t


def _abs(t):
    return None if t is None else t.detach().double().abs()


def _arg(args, kwargs, i, name, default=None):
    return kwargs.get(name, args[i] if len(args) > i else default)


def _sum_of_products(terms, magnitude):
    """(e, |value| bound) of a sum of `terms` products whose magnitudes
    sum to `magnitude`."""
    return gamma(terms) * magnitude, magnitude


# ---- the ops, forward --------------------------------------------------------


def _moments(x, dims):
    """Mean and biased variance over dims. PyTorch's CPU layer norm updates
    Welford's moments (vectorised, the lanes merged pairwise), whose
    variance is within n u (1 + |mean| / std) var of the exact one to first
    order (Chan, Golub and LeVeque 1983: the running mean's error, about
    n u |mean|, enters each update times a deviation): modelled as the
    two-pass variance (the sum of (x - mean)^2 over n) with
    gamma(n) |mean| std added to its error."""
    n = _count(x.v, dims)
    mean = x.sum(dims, keepdim=True) / n
    d = x - mean
    var = (d * d).sum(dims, keepdim=True) / n
    return mean, R(var.v, var.e + gamma(n) * mean.v.abs() * var.v.sqrt())


def _layer_norm_parts(x, shape, eps):
    dims = tuple(range(x.v.dim() - len(shape), x.v.dim()))
    mean, var = _moments(x, dims)
    rstd = _r(1.0) / (var + eps).sqrt()
    return mean, rstd, dims


def layer_norm(x, shape, w=None, b=None, eps=1e-5):
    """y = (x * rstd + (-rstd * mean)) * w + b, rstd = 1/sqrt(var + eps)
    (PyTorch's CPU kernel)."""
    x = R.of(x)
    mean, rstd, _ = _layer_norm_parts(x, shape, eps)
    y = x * rstd + -(rstd * mean)
    if w is not None:
        y = y * R.of(w)
    if b is not None:
        y = y + R.of(b)
    return y


def softmax(z, dim):
    """exp(z - max) times the reciprocal of its sum."""
    z = R.of(z)
    e = (z - z.amax(dim)).exp()
    return e * (_r(1.0) / e.sum(dim, keepdim=True))


def log_softmax(z, dim):
    """z - max - log(sum exp(z - max)), or z - (max + log(...)): both
    orders of the subtractions are bounded, and the larger bound kept."""
    z = R.of(z)
    m = z.amax(dim)
    log_sum = (z - m).exp().sum(dim, keepdim=True).log()
    one, other = z - m - log_sum, z - (m + log_sum)
    return R(one.v, torch.maximum(one.e, other.e))


def _class_last(t):
    """Logits (N, C, d...) or (C,) as rows (rows, C)."""
    if t.dim() == 1:
        return t.reshape(1, -1)
    return t.movedim(1, -1).reshape(-1, t.shape[1])


def _targets(target, ignore):
    y = target.reshape(-1).long()
    return y, y != ignore


def _nll(logp, target, reduction, ignore):
    """-logp[i, y_i], its mean over the targets not ignored, or its sum."""
    y, keep = _targets(target, ignore)
    rows = torch.arange(len(y))
    picked = (-logp).at(lambda t: torch.where(keep, t[rows, y.clamp(min=0)],
                                              torch.zeros_like(t[:, 0])))
    if reduction == "none":
        return picked.at(lambda t: t.reshape(target.shape))
    total = picked.sum()
    return total / int(keep.sum()) if reduction == "mean" else total


def _loss_options(args, kwargs):
    """reduction and ignore_index of a cross_entropy or nll_loss call (the
    same positions in both), None when the call weighs classes, smooths
    labels or uses the old size_average and reduce (no bound)."""
    if _arg(args, kwargs, 2, "weight") is not None or \
            _arg(args, kwargs, 7, "label_smoothing", 0.0) != 0.0 or \
            _arg(args, kwargs, 3, "size_average") is not None or \
            _arg(args, kwargs, 5, "reduce") is not None:
        return None
    return _arg(args, kwargs, 6, "reduction", "mean"), _arg(args, kwargs, 4, "ignore_index", -100)


def cross_entropy(z, target, reduction="mean", ignore=-100):
    return _nll(log_softmax(_class_last(z), -1), target, reduction, ignore)


def nll_loss(logp, target, reduction="mean", ignore=-100):
    return _nll(R.of(_class_last(logp)), target, reduction, ignore)


def reduction(op, args, kwargs):
    """sum, mean, var (one pass, as _moments) and the 2-norm over dims:
    sum(x, dim, keepdim), mean(...), var(x, dim, unbiased, keepdim) or
    var(x, dim, correction=, keepdim=), norm(x, p, dim, keepdim),
    linalg_vector_norm(x, ord, dim, keepdim)."""
    x = args[0]
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float32 or \
            kwargs.get("dtype") is not None:
        return None
    norm = op in ("norm", "linalg_vector_norm")
    dim = _arg(args, kwargs, 2 if norm else 1, "dim")
    dims = tuple(range(x.dim())) if dim is None else (dim,) if isinstance(dim, int) else \
        tuple(dim)
    keep = _arg(args, kwargs, 3 if op in ("var", "norm", "linalg_vector_norm") else 2,
                "keepdim", False)
    n = _count(x, dims)

    def out(r):
        return r if keep else r.at(lambda t: t.sum(dim=dims) if t.dim() else t)
    if op == "sum":
        return lambda: out(R.of(x).sum(dims, True))
    if op == "mean":
        return lambda: out(R.of(x).sum(dims, True) / n)
    if op == "var":
        unbiased = _arg(args, kwargs, 2, "unbiased", True)
        correction = kwargs.get("correction", 1 if unbiased else 0)
        if not isinstance(correction, (int, float)) or n - correction <= 0:
            return None

        def var():
            r = R.of(x)
            mean = r.sum(dims, True) / n
            return out(((r * r).sum(dims, True) - mean * mean * n) / (n - correction))
        return var
    if norm and _arg(args, kwargs, 1, "p" if op == "norm" else "ord", 2) in (2, 2.0, "fro"):
        return lambda: out((R.of(x) * R.of(x)).sum(dims, True).sqrt())
    return None


def forward(op, args, kwargs):
    """The bound of a forward op's output, as a function of nothing, or None."""
    err = forward_error(op, args, kwargs)
    return None if err is None else (lambda: twice(err()[0]))


def forward_error(op, args, kwargs):
    """(e, |value| bound) of a forward op's output, as a function of
    nothing, or None when the op has no bound here."""
    x = _arg(args, kwargs, 0, "input")
    if op == "dense_fwd":
        w, b = _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
        return lambda: _sum_of_products(w.shape[1] + (b is not None),
                                        F.linear(_abs(x), _abs(w), _abs(b)))
    if op == "conv2d_fwd":
        w, b = _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
        opts = _conv_options(args, kwargs)
        if opts is None:
            return None
        terms = w[0].numel() + (b is not None)
        return lambda: _sum_of_products(terms, F.conv2d(_abs(x), _abs(w), _abs(b), *opts))
    if op in ("matmul", "mm", "bmm") and len(args) == 2 and all(
            isinstance(a, torch.Tensor) and a.dim() >= 2 for a in args):
        a, b = args
        return lambda: _sum_of_products(a.shape[-1], torch.matmul(_abs(a), _abs(b)))
    if op in ("addmm", "baddbmm"):
        m1, m2 = _arg(args, kwargs, 1, "mat1" if op == "addmm" else "batch1"), \
            _arg(args, kwargs, 2, "mat2" if op == "addmm" else "batch2")
        beta, alpha = abs(kwargs.get("beta", 1)), abs(kwargs.get("alpha", 1))
        return lambda: _sum_of_products(m1.shape[-1] + 3, beta * _abs(x) + alpha * torch.matmul(
            _abs(m1), _abs(m2)))
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float32:
        return None
    if op == "layer_norm":
        shape = _arg(args, kwargs, 1, "normalized_shape")
        w, b = _arg(args, kwargs, 2, "weight"), _arg(args, kwargs, 3, "bias")
        eps = _arg(args, kwargs, 4, "eps", 1e-5)
        return _pair(lambda: layer_norm(x, shape, w, b, eps))
    if op in ("softmax", "log_softmax"):
        dim = _arg(args, kwargs, 1, "dim")
        if not isinstance(dim, int) or _casts(args, kwargs):
            return None
        return _pair(lambda: (softmax if op == "softmax" else log_softmax)(x, dim))
    if op in ("cross_entropy", "nll_loss"):
        opts = _loss_options(args, kwargs)
        target = _arg(args, kwargs, 1, "target")
        if opts is None:
            return None
        fn = cross_entropy if op == "cross_entropy" else nll_loss
        return _pair(lambda: fn(x, target, *opts))
    r = reduction(op, args, kwargs)
    return None if r is None else _pair(r)


def _casts(args, kwargs):
    """A softmax told to compute in another dtype."""
    return kwargs.get("dtype") is not None or any(isinstance(a, torch.dtype) for a in args)


def _pair(fn):
    def run():
        r = fn()
        return r.e, r.magnitude()
    return run


def _conv_options(args, kwargs):
    """stride, padding, dilation, groups of a conv2d call, or None when the
    padding is a string ("same")."""
    names = ("stride", "padding", "dilation", "groups")
    defaults = (1, 0, 1, 1)
    opts = [kwargs.get(n, args[3 + i] if len(args) > 3 + i else defaults[i])
            for i, n in enumerate(names)]
    return None if isinstance(opts[1], str) else opts


# ---- the ops, backward -------------------------------------------------------


def _layer_norm_backward(role, dy, x, w, shape, eps):
    """PyTorch's CPU formulas, per row of n elements, rstd and mean as the
    forward computes them:
      data:   ds = sum dy w x, db = sum dy w, b = (db mean - ds) rstd^3 / n,
              c = -b mean - db rstd / n, dx = rstd dy w + b x + c
      weight: sum over rows of dy (rstd x + (-rstd mean))
      bias:   sum over rows of dy"""
    dy, xr = R.of(dy), R.of(x)
    lead = tuple(range(x.dim() - len(shape)))
    if role == 2:
        return dy.sum(lead)
    mean, rstd, dims = _layer_norm_parts(xr, shape, eps)
    if role == 1:
        return (dy * (xr * rstd + -(rstd * mean))).sum(lead)
    n = _count(x, dims)
    dyw = dy if w is None else dy * R.of(w)
    ds, db = (dyw * xr).sum(dims, keepdim=True), dyw.sum(dims, keepdim=True)
    b = (db * mean - ds) * rstd * rstd * rstd / n
    c = -(b * mean) - db * rstd / n
    return rstd * dyw + b * xr + c


def _softmax_backward(op, dy, z, dim):
    """softmax: y (dy - sum dy y); log_softmax: dy - exp(y) sum dy; y the
    forward's output as computed (within its own bound)."""
    y = (softmax if op == "softmax_bwd" else log_softmax)(z, dim)
    dy = R.of(dy)
    if op == "softmax_bwd":
        return y * (dy - (dy * y).sum(dim, keepdim=True))
    return dy - y.exp() * dy.sum(dim, keepdim=True)


def _loss_backward(op, g, z, target, reduction, ignore):
    """nll_loss: the target's element is -g / count (mean), -g (sum or
    none), every other 0; cross_entropy: that, through log_softmax's
    backward."""
    rows = _class_last(z)
    y, keep = _targets(target, ignore)
    g = R.of(g.expand(target.shape) if reduction == "none" else g).at(
        lambda t: t.reshape(-1) if reduction == "none" else t.expand(len(y)))
    scale = -g if reduction != "mean" else -g / int(keep.sum())
    hot = torch.zeros_like(rows, dtype=torch.float64)
    idx = torch.arange(len(y))

    def scatter(t):
        out = hot.clone()
        out[idx[keep], y[keep]] = t[keep]
        return out
    dl = scale.at(scatter)
    if op == "cross_entropy_bwd":
        logp = log_softmax(rows, -1)
        dl = dl - logp.exp() * dl.sum(-1, keepdim=True)
    if z.dim() == 1:
        return dl.at(lambda t: t.reshape(z.shape))
    moved = z.movedim(1, -1).shape
    return dl.at(lambda t: t.reshape(moved).movedim(-1, 1))


def _embedding_backward(dy, idx, weight_shape):
    """Row t of the weight's gradient sums the m_t rows of dy whose index
    is t, in any order: gamma(m_t - 1) sum |dy rows|."""
    flat = dy.detach().double().reshape(-1, weight_shape[1]).abs()
    i = idx.reshape(-1).long()
    mag = torch.zeros(weight_shape, dtype=torch.float64).index_add_(0, i, flat)
    m = torch.bincount(i, minlength=weight_shape[0]).double()
    return gamma((m - 1).clamp(min=0))[:, None] * mag, mag


def backward_error(op, role, dy, inputs, args, kwargs):
    """(e, |value| bound) of the gradient a backward op `op` makes for the
    role-th tensor input of the forward call (inputs: its tensors, args and
    kwargs: the call), from the gradient dy of the call's output, as a
    function of nothing; None when the op has no bound here."""
    x = inputs[0]
    w = inputs[1] if len(inputs) > 1 else None
    if op == "dense_bwd_data":
        return lambda: _sum_of_products(w.shape[0], _abs(dy) @ _abs(w))
    rows = dy.reshape(-1, dy.shape[-1]) if dy.dim() > 1 else dy
    if op == "dense_bwd_weights":
        xs = x.reshape(-1, x.shape[-1])
        return lambda: _sum_of_products(rows.shape[0], _abs(rows).t() @ _abs(xs))
    if op == "dense_bwd_bias":
        return lambda: _sum_of_products(rows.shape[0], _abs(rows).sum(dim=0))
    if op in ("conv2d_bwd_data", "conv2d_bwd_filter", "conv2d_bwd_bias") and dy.dim() == 4:
        opts = _conv_options(args, kwargs)
        per_channel = dy.shape[0] * dy.shape[2] * dy.shape[3]
        if opts is None:
            return None
        if op == "conv2d_bwd_bias":
            return lambda: _sum_of_products(per_channel, _abs(dy).sum(dim=(0, 2, 3)))
        if op == "conv2d_bwd_filter":
            return lambda: _sum_of_products(
                per_channel, conv2d_weight(_abs(x), w.shape, _abs(dy), *opts))
        return lambda: _sum_of_products(w.shape[0] * w.shape[2] * w.shape[3] // opts[3],
                                        conv2d_input(x.shape, _abs(w), _abs(dy), *opts))
    if op in ("matmul_bwd", "mm_bwd", "bmm_bwd") and w is not None and x.dim() >= 2 \
            and w.dim() >= 2 and role in (0, 1):
        return _matmul_backward(role, dy, x, w)
    if op.startswith("layer_norm_bwd_"):
        shape = _arg(args, kwargs, 1, "normalized_shape")
        eps = _arg(args, kwargs, 4, "eps", 1e-5)
        weight = _arg(args, kwargs, 2, "weight")
        return _pair(lambda: _layer_norm_backward(role, dy, x, weight, shape, eps))
    if op in ("softmax_bwd", "log_softmax_bwd") and role == 0:
        dim = _arg(args, kwargs, 1, "dim")
        if not isinstance(dim, int) or _casts(args, kwargs):
            return None
        return _pair(lambda: _softmax_backward(op, dy, x, dim))
    if op in ("cross_entropy_bwd", "nll_loss_bwd") and role == 0:
        opts = _loss_options(args, kwargs)
        if opts is None:
            return None
        target = _arg(args, kwargs, 1, "target")
        return _pair(lambda: _loss_backward(op, dy, x, target, *opts))
    if op == "embedding_bwd_weight" and role == 1 and not kwargs.get("scale_grad_by_freq"):
        return lambda: _embedding_backward(dy, x, w.shape)
    if op in ("add_bwd", "sub_bwd") and role < len(inputs) and \
            _arg(args, kwargs, 2, "alpha", 1) == 1:
        return _pair(lambda: _sum_to(R.of(dy), inputs[role].shape))
    if op in REARRANGING_BWD and role == 0 and dy.numel() == x.numel():
        return _pair(lambda: R.of(dy).at(lambda t: t.reshape(x.shape)))
    return None


# Backward ops that hand on the gradient unchanged, reshaped to the input.
REARRANGING_BWD = ("view_bwd", "reshape_bwd", "flatten_bwd", "contiguous_bwd", "clone_bwd")


def _sum_to(r, shape):
    """The gradient of an input broadcast to r's shape: r summed over the
    broadcast dimensions."""
    lead = r.v.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and r.v.shape[lead + i] != 1)
    summed = r.sum(dims, keepdim=True) if dims else r
    return summed.at(lambda t: t.reshape(shape))


def _matmul_backward(role, dy, a, b):
    """dA = dY B^T (B's columns summed), dB = A^T dY (A's rows summed, and
    the batch too where B was broadcast over it)."""
    if role == 0:
        return lambda: _sum_of_products(b.shape[-1], _abs(dy) @ _abs(b).transpose(-1, -2))
    if b.dim() == 2 and a.dim() > 2:
        rows = a.reshape(-1, a.shape[-1])
        return lambda: _sum_of_products(rows.shape[0], _abs(rows).t() @ _abs(
            dy.reshape(-1, dy.shape[-1])))
    if a.dim() != b.dim():
        return None
    return lambda: _sum_of_products(a.shape[-2], _abs(a).transpose(-1, -2) @ _abs(dy))


def accumulated(parts):
    """(e, |value| bound) of a gradient that sums k contributions (a tensor
    read by k ops, a parameter used k times), from each contribution's
    (e, |value| bound) function: the sum rule, e = sum e_i + gamma(k - 1)
    sum(|v_i| + e_i), as a function of nothing."""
    def run():
        errs = [p() for p in parts]
        mag = sum(m + err for err, m in errs)
        return sum(err for err, _ in errs) + gamma(len(errs) - 1) * mag, mag
    return run
