#!/usr/bin/python3
"""The dump bounds of samebits_torch (python/samebits_torch/bounds.py)
against PyTorch 1.13 on this CPU, op by op (layer norm, softmax and
log_softmax, the losses, the reductions, clip_grad_norm_'s norms,
embedding, addmm and baddbmm, matmul's gradients, a parameter used
twice): each op computed in float32 in two orders (1 and 2 threads, or
its reduced dimension permuted, or its rows) and in float64 (the exact
value, to 2^-53 relative: far below the bounds).

For each: the two float32 results differ by at most the bound (2e), each
lies within e of the float64 one, the bound is positive wherever the value
is not 0, and it is not absurdly large: the largest bound is at most
LIMIT times the largest error seen against float64 (a worst-case bound of
a sum of n terms of random signs is about sqrt(n) / u times larger than
the typical error of a few roundings). Each op's ratios are printed
(largest error / e, largest bound / largest error, median bound / |value|).

    test_torch_bounds.py

Exit 0 pass, 1 fail, 77 (skipped) without python3-torch or python3-xxhash.
"""
import sys

from torch_test_support import require_modules

require_modules()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from samebits_torch import bounds  # noqa: E402

LIMIT = 2.0 ** 17       # largest bound / largest error seen
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def judge(name, a, b, exact, err):
    """a, b: float32 results in two orders; exact: float64; err: (e, |v|)."""
    e = err[0].reshape(exact.shape)
    bound = torch.from_numpy(bounds.twice(e)).double().reshape(exact.shape)
    a, b = a.detach().double(), b.detach().double()
    exact = exact.detach()
    seen = torch.maximum((a - exact).abs(), (b - exact).abs())
    check(bool(((a - b).abs() <= bound).all()), f"{name}: the two orders differ beyond the bound")
    check(bool((seen <= e).all()), f"{name}: a float32 result is beyond e of the float64 one")
    nonzero = exact != 0
    check(bool((bound[nonzero] > 0).all()), f"{name}: a zero bound on a nonzero value")
    worst = float(seen.max())
    ratio = float(bound.max()) / worst if worst > 0 else float("inf")
    rel = float((bound[nonzero] / exact[nonzero].abs()).median()) if nonzero.any() else 0.0
    print(f"{name}: {int((a != b).sum())} of {a.numel()} elements differ between the orders, "
          f"largest error / e {float((seen / e.clamp(min=1e-300)).max()):.3g}, "
          f"largest bound / largest error {ratio:.3g}, median bound / |value| {rel:.3g}")
    check(worst == 0 or ratio <= LIMIT,
          f"{name}: the bound is {ratio:.3g} times the largest error")


def at_threads(n, fn):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        return fn()
    finally:
        torch.set_num_threads(old)


def permuted(fn, x, dim, *rest):
    """fn on x with its dim-th dimension reversed (and every tensor of rest
    of the same size there), the result put back in order."""
    idx = torch.arange(x.shape[dim] - 1, -1, -1)
    flip = [t.index_select(dim if t.dim() == x.dim() else -1, idx)
            if isinstance(t, torch.Tensor) and t.dim() and t.shape[-1] == x.shape[dim] else t
            for t in rest]
    return fn(x.index_select(dim, idx), *flip).index_select(dim, idx)


def grads(fn, inputs, dy):
    """The gradients of fn(*inputs) against dy, for the inputs that need one."""
    ins = [t.detach().requires_grad_(t.is_floating_point()) for t in inputs]
    out = fn(*ins)
    out.backward(dy)
    return [t.grad for t in ins if t.is_floating_point()]


def layer_norm(g):
    rows, n = 256, 96
    x = torch.randn(rows, n, generator=g) * 3 + 40       # an offset: the variance cancels
    w, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    dy = torch.randn(rows, n, generator=g)
    args = (x, (n,), w, b, 1e-5)
    fwd = bounds.forward_error("layer_norm", args, {})()
    y1 = F.layer_norm(*args)
    y2 = permuted(lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), x, 1, w, b)
    judge("layer_norm", y1, y2, F.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5), fwd)

    def ln(x, w, b):
        return F.layer_norm(x, (n,), w, b, 1e-5)
    exact = grads(ln, [x.double(), w.double(), b.double()], dy.double())
    one = at_threads(1, lambda: grads(ln, [x, w, b], dy))
    rows_reversed = grads(ln, [x.flip(0), w, b], dy.flip(0))
    within_row = [permuted(lambda x, w, b, dy: grads(ln, [x, w, b], dy)[0], x, 1, w, b, dy)]
    for role, what in enumerate(("data", "weight", "bias")):
        other = within_row[0] if role == 0 else rows_reversed[role]
        err = bounds.backward_error(f"layer_norm_bwd_{what}", role, dy, [x, w, b], args, {})()
        judge(f"layer_norm_bwd_{what}", one[role], other, exact[role], err)


def softmaxes(g):
    z = torch.randn(64, 200, generator=g) * 8
    z[:, 150:] = float("-inf")              # a mask, as attention's
    z[:, :150] += torch.randn(64, 1, generator=g) * 30
    dy = torch.randn(64, 200, generator=g)
    for op, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        err = bounds.forward_error(op, (z, -1), {})()
        keep = torch.isfinite(z) if op == "log_softmax" else torch.ones_like(z, dtype=torch.bool)
        y1, y2 = fn(z, -1), permuted(lambda t: fn(t, -1), z, 1)
        judge(op, y1[keep], y2[keep], fn(z.double(), -1)[keep], (err[0][keep], err[1][keep]))
        zf = z.clone()
        zf[~torch.isfinite(zf)] = -1e4      # gradients need finite outputs
        err = bounds.backward_error(f"{op}_bwd", 0, dy, [zf], (zf, -1), {})()
        exact = grads(lambda t: fn(t, -1), [zf.double()], dy.double())[0]
        g1 = grads(lambda t: fn(t, -1), [zf], dy)[0]
        g2 = permuted(lambda t, d: grads(lambda s: fn(s, -1), [t], d)[0], zf, 1, dy)
        judge(f"{op}_bwd", g1, g2, exact, err)


def losses(g):
    n, c = 512, 50
    z = torch.randn(n, c, generator=g) * 4
    y = torch.randint(0, c, (n,), generator=g)
    y[::7] = -100                           # ignored targets
    for op, fn, arg in (("cross_entropy", F.cross_entropy, z),
                        ("nll_loss", F.nll_loss, torch.log_softmax(z, -1))):
        for reduction in ("mean", "sum"):
            kwargs = {"reduction": reduction}
            err = bounds.forward_error(op, (arg, y), kwargs)()
            l1 = at_threads(1, lambda: fn(arg, y, **kwargs))
            l2 = fn(arg.flip(0), y.flip(0), **kwargs)
            judge(f"{op} ({reduction})", l1, l2, fn(arg.double(), y, **kwargs), err)
        dl = torch.tensor(1.7)
        err = bounds.backward_error(f"{op}_bwd", 0, dl, [arg, y], (arg, y), {})()
        exact = grads(lambda t: fn(t, y), [arg.double()], dl.double())[0]
        g1 = grads(lambda t: fn(t, y), [arg], dl)[0]
        g2 = grads(lambda t: fn(t, y.flip(0)), [arg.flip(0)], dl)[0].flip(0)
        judge(f"{op}_bwd", g1, g2, exact, err)


def reductions(g):
    """Rows of 500 and whole tensors of 12,800 terms: gamma(n) grows with n
    where the errors of PyTorch's cascaded sums grow like log n, so the
    whole-tensor bound of 150,000 terms is 3e6 times the error seen."""
    x = torch.randn(300, 500, generator=g) + 2
    whole = x[:64, :200]
    for op, fn, args, kwargs in (("sum", torch.sum, (x, 1), {}),
                                 ("mean", torch.mean, (x, 1), {"keepdim": True}),
                                 ("var", torch.var, (x, 1), {}),
                                 ("var", torch.var, (x, 1), {"unbiased": False}),
                                 ("norm", torch.norm, (x, 2), {}),
                                 ("sum", torch.sum, (whole,), {}),
                                 ("mean", torch.mean, (whole,), {})):
        x = args[0]
        err = bounds.forward_error(op, args, kwargs)()
        r1 = at_threads(1, lambda: fn(*args, **kwargs))
        r2 = fn(x.flip(1), *args[1:], **kwargs)
        judge(f"{op}{args[1:]}{kwargs or ''}", r1, r2,
              fn(x.double(), *args[1:], **kwargs), err)


def clip_norm(g):
    """clip_grad_norm_'s total norm: the 2-norm of the stack of the
    gradients' 2-norms, each bounded as norm is."""
    grads_ = [torch.randn(*s, generator=g) for s in ((300, 200), (200,), (64, 300), (7,))]
    norms = [torch.norm(t, 2.0) for t in grads_]
    for t, nm in zip(grads_, norms):
        err = bounds.forward_error("norm", (t, 2.0), {})()
        judge(f"norm of a gradient {tuple(t.shape)}", nm, torch.norm(t.flip(0), 2.0),
              torch.norm(t.double(), 2.0), err)
    stack = torch.stack(norms)
    err = bounds.forward_error("norm", (stack, 2.0), {})()
    params = [torch.nn.Parameter(torch.zeros_like(t)) for t in grads_]
    totals = []
    for order in (params, params[::-1]):
        for p, t in zip(params, grads_):
            p.grad = t.clone()
        totals.append(torch.nn.utils.clip_grad_norm_(order, 1e9))
    judge("clip_grad_norm_'s total norm", totals[0], totals[1], torch.norm(stack.double(), 2.0),
          err)


def embedding(g):
    vocab, dim, n = 40, 64, 4096
    idx = torch.randint(0, vocab, (n,), generator=g)
    w = torch.randn(vocab, dim, generator=g)
    dy = torch.randn(n, dim, generator=g)
    err = bounds.backward_error("embedding_bwd_weight", 1, dy, [idx, w], (idx, w), {})()

    def emb(w):
        return F.embedding(idx, w)
    exact = grads(emb, [w.double()], dy.double())[0]
    g1 = at_threads(1, lambda: grads(emb, [w], dy)[0])
    order = torch.randperm(n, generator=g)
    g2 = grads(lambda w: F.embedding(idx[order], w), [w], dy[order])[0]
    judge("embedding_bwd_weight", g1, g2, exact, err)


def products(g):
    """addmm and baddbmm (with beta and alpha), and matmul's gradients of
    a batch of rows times a weight shared by the batch."""
    a, b, c = (torch.randn(*s, generator=g) for s in ((200, 300), (300, 50), (200, 50)))
    scale = {"beta": 0.5, "alpha": 2.0}
    for op, fn, args in (("addmm", torch.addmm, (c, a, b)),
                         ("baddbmm", torch.baddbmm, (c.reshape(4, 50, 50), a.reshape(4, 50, 300),
                                                     b.reshape(1, 300, 50).expand(4, 300, 50)))):
        err = bounds.forward_error(op, args, scale)()
        r1 = at_threads(1, lambda: fn(*args, **scale))
        x, m1, m2 = args
        r2 = fn(x, m1.flip(-1), m2.flip(-2), **scale)     # the inner sums reversed
        judge(op, r1, r2, fn(*(t.double() for t in args), **scale), err)
    x = torch.randn(8, 40, 300, generator=g)
    dy = torch.randn(8, 40, 50, generator=g)

    def mm(x, w):
        return torch.matmul(x, w)
    exact = grads(mm, [x.double(), b.double()], dy.double())
    one = at_threads(1, lambda: grads(mm, [x, b], dy))
    flipped = grads(mm, [x.flip(0), b.flip(1)], dy.flip(0).flip(2))   # batch and columns
    for role, other in ((0, flipped[0].flip(0)), (1, flipped[1].flip(1))):
        err = bounds.backward_error("matmul_bwd", role, dy, [x, b], (x, b), {})()
        judge(f"matmul_bwd ({('data', 'weight')[role]})", one[role], other, exact[role], err)


def used_twice(g):
    """A Linear's weight used by two calls: its gradient sums the two
    calls' dense_bwd_weights; the other order sums all rows at once."""
    x1, x2 = (torch.randn(300, 48, generator=g) for _ in range(2))
    dy1, dy2 = (torch.randn(300, 32, generator=g) for _ in range(2))
    w, b = torch.randn(32, 48, generator=g), torch.randn(32, generator=g)
    parts = [bounds.backward_error("dense_bwd_weights", 1, dy, [x, w, b], (x, w, b), {})
             for x, dy in ((x1, dy1), (x2, dy2))]
    err = bounds.accumulated(parts)()
    wp = w.clone().requires_grad_()
    (F.linear(x1, wp, b) * dy1).sum().backward(retain_graph=True)
    (F.linear(x2, wp, b) * dy2).sum().backward()
    whole = torch.cat([dy1, dy2]).t() @ torch.cat([x1, x2])
    exact = dy1.double().t() @ x1.double() + dy2.double().t() @ x2.double()
    judge("a parameter used twice", wp.grad, whole, exact, err)


def main():
    g = torch.Generator().manual_seed(7)
    torch.set_num_threads(2)
    for part in (layer_norm, softmaxes, losses, reductions, clip_norm, embedding, products,
                 used_twice):
        part(g)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
