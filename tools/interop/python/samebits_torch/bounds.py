"""Reordering bounds of the ops the tracer knows, for dumps.

Two summation orders of n terms differ by at most 2*gamma(n)*sum|terms|
(each is within gamma(n-1)*sum|terms| of the exact sum, fused or not). The
sums of magnitudes are the same op on |inputs|, in double; the bound is
rounded up to the next float. `samebits diff --dumps` reads it as
<probe>.bound.npy; an op with no bound here gets none, and a difference
in it is `unbounded` (no bound known: neither a reordering nor a bug)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.grad import conv2d_input, conv2d_weight

UNIT_ROUNDOFF = 2.0 ** -24


def gamma(n):
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


def bound(terms, magnitude_sum):
    """2*gamma(terms)*magnitude_sum as float32, rounded up."""
    b = (2.0 * gamma(terms) * magnitude_sum).detach().cpu().numpy().astype(np.float32)
    return np.nextafter(b, np.float32(np.inf))


def _abs(t):
    return None if t is None else t.detach().double().abs()


def _conv_options(args, kwargs):
    """stride, padding, dilation, groups of a conv2d call, or None when the
    padding is a string ("same")."""
    names = ("stride", "padding", "dilation", "groups")
    defaults = (1, 0, 1, 1)
    opts = [kwargs.get(n, args[3 + i] if len(args) > 3 + i else defaults[i])
            for i, n in enumerate(names)]
    return None if isinstance(opts[1], str) else opts


def _arg(args, kwargs, i, name):
    return kwargs.get(name, args[i] if len(args) > i else None)


def forward(op, args, kwargs):
    """The bound of a forward op's output, as a function of nothing, or None."""
    if op == "dense_fwd":
        x, w, b = (_arg(args, kwargs, i, n) for i, n in enumerate(("input", "weight", "bias")))
        return lambda: bound(w.shape[1] + (b is not None), F.linear(_abs(x), _abs(w), _abs(b)))
    if op == "conv2d_fwd":
        x, w, b = (_arg(args, kwargs, i, n) for i, n in enumerate(("input", "weight", "bias")))
        opts = _conv_options(args, kwargs)
        if opts is None:
            return None
        terms = w[0].numel() + (b is not None)
        return lambda: bound(terms, F.conv2d(_abs(x), _abs(w), _abs(b), *opts))
    if op in ("matmul", "mm", "bmm") and len(args) == 2 and all(
            isinstance(a, torch.Tensor) and a.dim() >= 2 for a in args):
        a, b = args
        return lambda: bound(a.shape[-1], torch.matmul(_abs(a), _abs(b)))
    return None


def backward(op, dy, inputs, args, kwargs):
    """The bound of a gradient the tracer records as `op` (the kernel list's
    name of a dense or conv backward), from the gradient of the forward op's
    output `dy` and that op's inputs and arguments; None for other ops."""
    x, w = inputs[0], inputs[1] if len(inputs) > 1 else None
    if op == "dense_bwd_data":
        return lambda: bound(w.shape[0], _abs(dy) @ _abs(w))
    rows = dy.reshape(-1, dy.shape[-1]) if dy.dim() > 1 else dy
    if op == "dense_bwd_weights":
        xs = x.reshape(-1, x.shape[-1])
        return lambda: bound(rows.shape[0], _abs(rows).t() @ _abs(xs))
    if op == "dense_bwd_bias":
        return lambda: bound(rows.shape[0], _abs(rows).sum(dim=0))
    if op in ("conv2d_bwd_data", "conv2d_bwd_filter", "conv2d_bwd_bias") and dy.dim() == 4:
        opts = _conv_options(args, kwargs)
        per_channel = dy.shape[0] * dy.shape[2] * dy.shape[3]
        if opts is None:
            return None
        if op == "conv2d_bwd_bias":
            return lambda: bound(per_channel, _abs(dy).sum(dim=(0, 2, 3)))
        if op == "conv2d_bwd_filter":
            return lambda: bound(per_channel, conv2d_weight(_abs(x), w.shape, _abs(dy), *opts))
        return lambda: bound(w.shape[0] * w.shape[2] * w.shape[3] // opts[3],
                             conv2d_input(x.shape, _abs(w), _abs(dy), *opts))
    return None
