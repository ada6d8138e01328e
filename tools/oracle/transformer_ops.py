"""The oracle's checks of the char GPT's ops (oracle.py calls check for
every op it does not know itself): embedding, layer norm, attention, GELU,
residual add, the gradient norm and AdamW, and the LLaMA-style block's
RMSNorm, rotary embedding, SwiGLU and grouped-query attention, each from
samebits' own dumped inputs against PyTorch 1.13's op (RMSNorm and the
rotation, which PyTorch 1.13 does not have, from its primitives:
samebits_torch.gpt.rms_norm and rope).

Tolerances. For an op with a reduction the dumped bound is twice samebits'
forward error bound under any order of its sums (kernels/*_bound.c), so it
covers PyTorch running the same formula in another order; where PyTorch's
formula differs, each function adds the roundings of the difference, derived
there. NaN/Inf are checked first (Report.compare)."""
import math
import os
import pathlib
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop",
                                "python"))
from samebits_torch import gpt  # noqa: E402

U = 2.0 ** -24


def d64(a):
    return np.asarray(a, dtype=np.float64)


def layernorm_parts(x, gamma):
    """mean, rstd (in double) and |gamma| rstd, per row and column"""
    x = d64(x)
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=1, keepdims=True) + gpt.LN_EPS)
    return x, mean, rstd, np.abs(d64(gamma))[None, :] * rstd


def layernorm_fwd_extra(x, gamma, y):
    """PyTorch 1.13's CPU layer norm evaluates y = (x*r + (-r*m))*g + b
    (layer_norm_kernel.cpp), samebits y = (x-m)*r*g + b: the same exact
    value, with other roundings. PyTorch's products x*r and r*m round at
    U|x|r and U|m|r (where x is close to m these do not cancel as x-m does),
    their sum at U|x-m|r, times g and plus b once more each: with samebits'
    own 3 roundings, U (|x| + |m| + 4|x-m|) |g| r + 2U|y|. Both compute the
    mean and variance as sums of c terms (PyTorch by Welford's updates,
    samebits in two passes); their errors are taken to be those the dumped
    bound allows for one order of samebits' sums."""
    x, mean, _, gr = layernorm_parts(x, gamma)
    return U * (np.abs(x) + np.abs(mean) + 4.0 * np.abs(x - mean)) * gr + 2.0 * U * np.abs(d64(y))


def layernorm_bwd_extra(dy, x, gamma, dx):
    """dx = r (g dy - mean(g dy) - xhat mean(g dy xhat)): PyTorch folds the
    row terms into dx = r g dy + b x + c with b and c per row; each of its
    three terms and two sums rounds once more than samebits' (which the
    dumped bound covers): 3U per term magnitude, and the row means (sums of
    c terms, any order, the bound's) carried by r."""
    x, mean, rstd, gr = layernorm_parts(x, gamma)
    xhat = (x - mean) * rstd
    gdy = d64(dy) * np.abs(d64(gamma))[None, :]
    t1 = gr * np.abs(d64(dy))
    t2 = rstd * np.abs(gdy).mean(axis=1, keepdims=True)
    t3 = rstd * np.abs(xhat) * np.abs(gdy * xhat).mean(axis=1, keepdims=True)
    t4 = rstd * np.abs(x) * np.abs(gdy * xhat).mean(axis=1, keepdims=True) * rstd
    return 3.0 * U * (t1 + t2 + t3 + t4) + U * np.abs(d64(dx))


def samebits_tanh_ulps():
    """sb_tanhf's bound in ulps of 2U|t|: SB_ERR_TANH_ULPS, read from
    kernels/running_error.h so that the two cannot part"""
    header = pathlib.Path(__file__).resolve().parents[2] / "kernels" / "running_error.h"
    m = re.search(r"^#define SB_ERR_TANH_ULPS ([0-9.]+)$", header.read_text(), re.M)
    if m is None:
        raise SystemExit(f"{header}: no #define SB_ERR_TANH_ULPS")
    return float(m.group(1))


SAMEBITS_TANH_ULPS = samebits_tanh_ulps()


def gelu_tol(x, y=None, dy=None):
    """GELU's tanh form, y = x/2 (1 + tanh(u)), u = k (x + a x^3). Per side:
    u from 5 roundings (x^3 two, times a, plus x, times k: 5U|u|, no
    cancellation, x and a x^3 have one sign), tanh within its ulps (of
    2U|t|: samebits' sb_tanhf within SAMEBITS_TANH_ULPS, PyTorch's
    vectorised tanh within 1), so t errs by (1-t^2) 5U|u| + ulps 2U|t|;
    1 + t, x/2 (exact), the product: 2U. The two sides' bounds are added.
    The gradient dx = dy (A + B), A = (1 + t)/2, B = x/2 (1 - t^2) k (1 +
    3a x^2): A errs by dt/2 + U A, B by 8U B (its products and sums) + |x| k
    (1 + 3a x^2) |t| dt (1 - t^2 through t), then A + B and the product with
    dy: 2U |dx|."""
    x = d64(x)
    k, a = math.sqrt(2.0 / math.pi), 0.044715
    u = k * (x + a * x ** 3)
    t = np.tanh(u)
    dts = [(1.0 - t * t) * 5.0 * U * np.abs(u) + ulps * 2.0 * U * np.abs(t)
           for ulps in (SAMEBITS_TANH_ULPS, 1.0)]
    if dy is None:
        return sum(0.5 * np.abs(x) * (dt + 2.0 * U * np.abs(1.0 + t)) + U * np.abs(d64(y))
                   for dt in dts)
    big_a = 0.5 * (1.0 + t)
    poly = k * (1.0 + 3.0 * a * x * x)
    big_b = 0.5 * np.abs(x) * (1.0 - t * t) * poly
    dx = d64(dy) * (big_a + 0.5 * x * (1.0 - t * t) * poly)
    return sum(np.abs(d64(dy)) * (0.5 * dt + U * big_a + 8.0 * U * big_b +
                                  np.abs(x) * poly * np.abs(t) * dt) + 2.0 * U * np.abs(dx)
               for dt in dts)


def attention_probs(qkv, heads, kv_heads, causal):
    """p [b][h][t][t] in double, and q, k, v [b][h][t][d] (each key/value
    head repeated for its group's query heads), of the attention (causal:
    masked)"""
    q, k, v, d = gpt.split_qkv(torch.from_numpy(d64(qkv)), heads, kv_heads)
    t = q.shape[2]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    if causal:
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1), q, k, v, d


def attention_fwd_extra(qkv, heads, kv_heads, causal):
    """PyTorch's softmax: exp (<= 1 ulp) and a multiply by the reciprocal of
    the sum, samebits' expf and a division (attn.h): as for the seed model's
    softmax (oracle.py, softmax_tol) the probabilities differ by 9U
    relative beyond the dumped bound, so y_i = sum_j p_ij v_j by
    9U sum_j p_ij |v_j|."""
    p, _, _, v, _ = attention_probs(qkv, heads, kv_heads, causal)
    b, h, t, d = v.shape
    extra = 9.0 * U * (p @ v.abs())
    return extra.transpose(1, 2).reshape(b, t, h * d).numpy()


def attention_bwd_extra(dy, qkv, heads, kv_heads, causal):
    """The same 9U relative on p, carried through the backward (attn.h):
    dv_j = sum_i p_ij dy_i moves by 9U sum_i p_ij |dy_i|; ds_ij = p_ij (dp_ij
    - D_i) scale by 9U p_ij (|dp_ij - D_i| + sum_j p_ij |dp_ij|) scale
    (through p and through D_i), and dq_i = sum_j ds_ij k_j, dk_j = sum_i
    ds_ij q_i by that times |k|, |q|. A key/value head's dk and dv add its
    query heads', and so do their extras."""
    p, q, k, v, d = attention_probs(qkv, heads, kv_heads, causal)
    b, h, t, _ = v.shape
    g = torch.from_numpy(d64(dy)).reshape(b, t, h, d).transpose(1, 2)
    dp = g @ v.transpose(-1, -2)
    big_d = (p * dp).sum(dim=-1, keepdim=True)
    dds = 9.0 * U * p * ((dp - big_d).abs() + (p * dp.abs()).sum(dim=-1, keepdim=True))
    dds = dds / math.sqrt(d)
    dq = dds @ k.abs()
    dk = dds.transpose(-1, -2) @ q.abs()
    dv = 9.0 * U * (p.transpose(-1, -2) @ g.abs())
    kv = kv_heads or heads
    dk, dv = (x.reshape(b, kv, h // kv, t, d).sum(dim=2) for x in (dk, dv))
    parts = [x.transpose(1, 2).reshape(b, t, -1) for x in (dq, dk, dv)]
    return torch.cat(parts, dim=2).numpy()


def gamma(n):
    return n * U / (1.0 - n * U)


def rmsnorm_parts(x, w):
    """x, r = 1/sqrt(mean(x^2) + eps) per row, and |w| r, in double"""
    x = d64(x)
    r = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + gpt.LN_EPS)
    return x, r, np.abs(d64(w))[None, :] * r


def rmsnorm_fwd_extra(x, w, y):
    """PyTorch's y = x * rsqrt(mean(x^2) + eps) * w against the exact value:
    c squares and their sum in any order, the division by c and + eps,
    gamma(c + 2) relative on the mean square, half of it on r; rsqrt as
    1/sqrt, 2U; the two products, 2U: (gamma(c + 2)/2 + 4U)|y|, plus U|y|
    for the first-order products dropped. The dumped bound covers
    samebits' own result."""
    c = d64(x).shape[1]
    return (gamma(c + 2) / 2.0 + 5.0 * U) * np.abs(d64(y))


def rmsnorm_bwd_data_extra(dy, x, w, dx):
    """PyTorch's autograd through x * r * w: the direct term dy w r
    (A = |dy w| r: two products and r's error, gamma(c + 2)/2 + 2U, so
    (gamma(c + 2)/2 + 4U) A) and the term through r, x r^3/c sum_j dy_j w_j
    x_j (B = |x| r^3/c sum_j |dy_j w_j x_j|: the sum gamma(c), its products
    2U, r^3 three times r's error, rsqrt's backward (-r^3/2 from r: 3
    products), the mean's 1/c and the square's 2x: (gamma(c) + 1.5 gamma(c +
    2) + 14U) B), then their sum, U|dx|."""
    x, r, gr = rmsnorm_parts(x, w)
    c = x.shape[1]
    gdy = np.abs(d64(dy)) * np.abs(d64(w))[None, :]
    a = gr * np.abs(d64(dy))
    b = np.abs(x) * r ** 3 / c * (gdy * np.abs(x)).sum(axis=1, keepdims=True)
    return ((gamma(c + 2) / 2.0 + 4.0 * U) * a +
            (gamma(c) + 1.5 * gamma(c + 2) + 14.0 * U) * b + U * np.abs(d64(dx)))


def rmsnorm_bwd_gamma_extra(dy, x):
    """PyTorch's dgamma_j = sum_i dy_ij (x_ij r_i): r's error (gamma(c +
    2)/2 + 2U), the two products (2U) and the sum over the n rows in its
    order (gamma(n)), on sum_i |dy x r|."""
    xd, r, _ = rmsnorm_parts(x, np.ones(d64(x).shape[1]))
    n, c = xd.shape
    mag = (np.abs(d64(dy)) * np.abs(xd) * r).sum(axis=0)
    return (gamma(n) + gamma(c + 2) / 2.0 + 4.0 * U) * mag


def rope_tol(x, y, t, d):
    """Each side rounds x0 c, x1 s and their sum (or difference) once, from a
    table of float cosines and sines each evaluated in double and rounded
    once; a double cos or sin that differs by an ulp between the two libms
    can move a float entry by one float ulp (2U relative). Per output, with
    m its two products' magnitudes: 2U m for the tables, 2U m + 2U|y| for
    the two sides' roundings."""
    cos, sin = gpt.rope_table(t, d)
    n = x.shape[0]
    pos = torch.arange(n) % t
    c, s = d64(cos[pos].numpy())[:, None, :], d64(sin[pos].numpy())[:, None, :]
    pairs = np.abs(d64(x)).reshape(n, -1, d // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    m = np.stack((x0 * np.abs(c) + x1 * np.abs(s), x0 * np.abs(s) + x1 * np.abs(c)), axis=-1)
    return 4.0 * U * m.reshape(n, -1) + 2.0 * U * np.abs(d64(y))


def silu_tols(x):
    """silu(x) and the errors of the two sides: samebits' (x/2)(1 + t), t =
    sb_tanhf(x/2) within SAMEBITS_TANH_ULPS ulps (of 2U|t|), then 1 + t and
    the product, U each; PyTorch's x / (1 + exp(-x)): exp within 1 ulp (2U
    relative), the sum and the division, U each: 4U relative. Returns the
    double silu, sigma, t's error and the two errors' sum."""
    x = d64(x)
    t = np.tanh(x / 2.0)
    sig = 0.5 * (1.0 + t)
    silu = x * sig
    dt = SAMEBITS_TANH_ULPS * 2.0 * U * np.abs(t)
    ours = 0.5 * np.abs(x) * (dt + U * np.abs(1.0 + t)) + U * np.abs(silu)
    return silu, sig, dt, ours + 4.0 * U * np.abs(silu)


def swiglu_grad_a_tol(dy, a, b):
    """da = silu'(a) (dy b), silu'(x) = s + x s (1 - s), s = sigma(x).
    samebits (elementwise.h): t's error moves s and 1 - s by dt/2, so
    silu' by (1 + |x|) dt/2, and its five roundings (s, 1 - s, s (1 - s),
    x times it, the sum) at most 5U (s + |x| s (1 - s)). PyTorch's silu
    backward, sigma (1 + x (1 - sigma)): sigma 3U relative (exp, sum,
    division), 1 - sigma (3U sigma + U (1 - sigma)) absolute, x times it,
    1 + that, times sigma: at most 10U sigma (1 + |x|). Both times |dy b|,
    plus the product dy b and the last product, 2U per side on |da|."""
    _, sig, dt, _ = silu_tols(a)
    x = d64(a)
    g = np.abs(d64(dy) * d64(b))
    grad = sig + x * sig * (1.0 - sig)
    ours = (1.0 + np.abs(x)) * dt / 2.0 + 5.0 * U * (sig + np.abs(x) * sig * (1.0 - sig))
    theirs = 10.0 * U * sig * (1.0 + np.abs(x))
    return g * (ours + theirs) + 4.0 * U * g * np.abs(grad)


# AdamW's state (samebits' names, kernels.def): torch.optim.AdamW's keys
ADAMW_STATE = {"m": "exp_avg", "v": "exp_avg_sq"}


def one_minus(x):
    """1 - x as a float32 constant of each side: samebits' (float32(1 - x in
    float32), in double) and PyTorch's (the double 1 - x cast to float32 by
    its kernel), and their relative difference."""
    ours = np.float32(1.0 - float(np.float32(x)))
    theirs = np.float32(1.0 - x)
    return abs(float(ours) - float(theirs)) / float(theirs)


def adamw_check(d, rep, name, op, out, inputs, cfg):
    """torch.optim.AdamW, one step from the parameter's previous value
    (init.* at step 0) and zero moments, on samebits' gradient times the
    clipping factor PyTorch's clip_grad_norm_ computes from samebits' norm:
    clip / (norm + 1e-6) in float, at most 1 (the same float operations as
    samebits').

    Tolerance. delta = lr/(1-b1) * m / (sqrt(v)/sqrt(1-b2) + eps) with m =
    (1-b1) g, v = (1-b2) g^2: per side m rounds once, v twice (g*g, times
    1-b2), the sqrt halves that and adds 1, the division by sqrt(1-b2) 1,
    + eps 1, the quotient 1, the step size lr/(1-b1) 1 (PyTorch computes it
    in double, samebits in float: 1 more) and its product 1: 8U relative on
    each side, 16U between them. The decay p (1 - lr wd) and the final
    subtraction round once per side: U (|p_new| + |p|) each.

    The moments from zero (a probe <parameter's probe>.m or .v): m =
    (1-b1)*g, one rounding per side (PyTorch's add_ with alpha or lerp_ at
    most two), and the constants' difference c1 (one_minus): (3U + c1)|m|;
    v = (1-b2)*g^2, two roundings per side (fmaf of a rounded product;
    addcmul's two products) and c2: (5U + c2)|v|. The scaled gradient is the
    same float product on both sides."""
    param_probe, state = d.update_output(name, op, ADAMW_STATE)
    prev = inputs[1]
    if not prev.startswith("init."):
        rep.line(name, op, math.inf, math.inf, False,
                 f"previous value {prev} is not an init.* probe: the oracle checks step 0 only")
        return
    p = d.t(prev).clone()
    norm = np.float32(d.load("gradnorm.fwd.norm").reshape(-1)[0])
    scale = np.float32(1.0)
    if cfg["clip"] > 0:
        scale = min(np.float32(cfg["clip"]) / (norm + np.float32(1e-6)), np.float32(1.0))
    g = d.inp(name, 0).reshape(p.shape) * torch.tensor(scale)
    param = torch.nn.Parameter(p.clone())
    wd = cfg["weight_decay"] if gpt.decays(prev[len("init."):]) else 0.0
    opt = torch.optim.AdamW([param], lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]),
                            eps=cfg["epsilon"], weight_decay=wd)
    param.grad = g.clone()
    opt.step()
    if state is not None:
        want = d64(opt.state[param][state].numpy())
        if state == "exp_avg":
            tol = (3.0 * U + one_minus(cfg["beta1"])) * np.abs(want)
        else:
            tol = (5.0 * U + one_minus(cfg["beta2"])) * np.abs(want)
        rep.compare(name, op, out, want, tol, f"torch state {state} of {param_probe}")
        return
    new = d64(param.detach().numpy())
    p64 = d64(p.numpy())
    delta = np.abs(p64 * (1.0 - cfg["lr"] * wd) - new)
    tol = 16.0 * U * delta + 2.0 * U * (np.abs(new) + np.abs(p64))
    rep.compare(name, op, out, new, tol, f"grad scale {float(scale):.6g}, weight decay {wd:g}")


def check(d, rep, name, op, inputs, cfg):
    """One op of the GPT, or False when the op is not one of these."""
    out = d.load(name)
    bound = d.load(name, ".bound")
    heads, kv = cfg["heads"], cfg.get("kv_heads", cfg["heads"])
    causal = cfg.get("causal", True)
    if op == "embedding_fwd":
        # one rounding on both sides, the same one: tolerance 0
        tok, wte, wpe = d.inp(name, 0).long(), d.inp(name, 1), d.inp(name, 2)
        pos = torch.arange(tok.shape[0]) % wpe.shape[0]
        rep.compare(name, op, out, (wte[tok] + wpe[pos]).numpy(), 0.0)
    elif op == "embedding_bwd_tokens":
        dy, tok = d.inp(name, 0), d.inp(name, 1).long()
        want = torch.zeros(out.shape).index_add_(0, tok, dy)
        rep.compare(name, op, out, want.numpy(), bound)
    elif op == "embedding_bwd_pos":
        dy = d.inp(name, 0)
        rep.compare(name, op, out, dy.reshape(-1, out.shape[0], out.shape[1]).sum(0).numpy(),
                    bound)
    elif op == "layernorm_fwd":
        x, w, b = d.inp(name, 0), d.inp(name, 1), d.inp(name, 2)
        want = F.layer_norm(x, (x.shape[1],), w, b, gpt.LN_EPS).numpy()
        rep.compare(name, op, out, want, d64(bound) + layernorm_fwd_extra(x, w, want))
    elif op in ("layernorm_bwd_data", "layernorm_bwd_gamma"):
        dy, x = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        w = (d.inp(name, 2) if op == "layernorm_bwd_data"
             else torch.ones(x.shape[1])).clone().requires_grad_(True)
        F.layer_norm(x, (x.shape[1],), w, None, gpt.LN_EPS).backward(dy)
        if op == "layernorm_bwd_data":
            want = x.grad.numpy()
            extra = layernorm_bwd_extra(dy, x.detach(), w.detach(), want)
        else:
            # dgamma = sum_i dy xhat: PyTorch's xhat = x*r + (-r*m) rounds
            # at U (|x| + |m| + |x-m|) r beyond samebits' (x-m)*r, times |dy|
            want = w.grad.numpy()
            xd, mean, rstd, _ = layernorm_parts(x.detach(), np.ones(x.shape[1]))
            extra = U * (np.abs(d64(dy)) * (np.abs(xd) + np.abs(mean) + np.abs(xd - mean))
                         * rstd).sum(axis=0)
        rep.compare(name, op, out, want, d64(bound) + extra)
    elif op == "gelu_fwd":
        x = d.inp(name, 0)
        want = F.gelu(x, approximate="tanh").numpy()
        rep.compare(name, op, out, want, gelu_tol(x, y=want))
    elif op == "gelu_bwd":
        dy, x = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        F.gelu(x, approximate="tanh").backward(dy)
        rep.compare(name, op, out, x.grad.numpy(), gelu_tol(x.detach(), dy=dy))
    elif op == "residual_add":
        # a + b: one rounding on both sides: tolerance 0
        rep.compare(name, op, out, (d.inp(name, 0) + d.inp(name, 1)).numpy(), 0.0)
    elif op == "attention_fwd":
        qkv = d.inp(name, 0)
        want = gpt.attention(qkv, heads, kv, causal).numpy()
        rep.compare(name, op, out, want, d64(bound) + attention_fwd_extra(qkv, heads, kv, causal))
    elif op == "attention_bwd":
        dy, qkv = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        gpt.attention(qkv, heads, kv, causal).backward(dy.reshape(qkv.shape[0], qkv.shape[1], -1))
        rep.compare(name, op, out, qkv.grad.numpy(),
                    d64(bound) + attention_bwd_extra(dy, qkv.detach(), heads, kv, causal))
    elif op == "rmsnorm_fwd":
        x, w = d.inp(name, 0), d.inp(name, 1)
        want = gpt.rms_norm(x, w).numpy()
        rep.compare(name, op, out, want, d64(bound) + rmsnorm_fwd_extra(x, w, want))
    elif op in ("rmsnorm_bwd_data", "rmsnorm_bwd_gamma"):
        dy, x = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True)
        w = (d.inp(name, 2) if op == "rmsnorm_bwd_data"
             else torch.ones(x.shape[1])).clone().requires_grad_(True)
        gpt.rms_norm(x, w).backward(dy)
        if op == "rmsnorm_bwd_data":
            want = x.grad.numpy()
            extra = rmsnorm_bwd_data_extra(dy, x.detach(), w.detach(), want)
        else:
            want = w.grad.numpy()
            extra = rmsnorm_bwd_gamma_extra(dy, x.detach())
        rep.compare(name, op, out, want, d64(bound) + extra)
    elif op in ("rope_fwd", "rope_bwd"):
        # no reduction: every family has ref's bits; t the context, d the head width
        x, t, d = d.inp(name, 0), cfg["context"], cfg["width"] // heads
        want = gpt.rope(x, t, d, inverse=op == "rope_bwd").numpy()
        rep.compare(name, op, out, want, rope_tol(x, want, t, d))
    elif op == "swiglu_fwd":
        a, b = d.inp(name, 0), d.inp(name, 1)
        want = (F.silu(a) * b).numpy()
        _, _, _, tol = silu_tols(a)
        rep.compare(name, op, out, want, np.abs(d64(b)) * tol + 2.0 * U * np.abs(d64(want)))
    elif op == "swiglu_bwd_a":
        dy, a, b = d.inp(name, 0), d.inp(name, 1).clone().requires_grad_(True), d.inp(name, 2)
        (F.silu(a) * b).backward(dy)
        rep.compare(name, op, out, a.grad.numpy(), swiglu_grad_a_tol(dy, a.detach(), b))
    elif op == "swiglu_bwd_b":
        dy, a = d.inp(name, 0), d.inp(name, 1)
        want = (dy * F.silu(a)).numpy()
        _, _, _, tol = silu_tols(a)
        rep.compare(name, op, out, want, np.abs(d64(dy)) * tol + 2.0 * U * np.abs(d64(want)))
    elif op == "grad_norm":
        # torch.linalg.vector_norm: another order of the same sum of squares,
        # and its square root (1 ulp, as samebits' sqrtf: U each)
        g = d.inp(name, 0)
        want = torch.linalg.vector_norm(g).numpy()
        rep.compare(name, op, out, want, float(bound.reshape(-1)[0]) + 2.0 * U * abs(float(want)))
    elif op == "adamw_update":
        adamw_check(d, rep, name, op, out, inputs, cfg)
    else:
        return False
    return True


def end_to_end(d, cfg):
    """The whole step in PyTorch autograd (samebits_torch.gpt) from init.*
    and batch.tokens/targets: the loss, the gradient norm and the largest
    difference of an updated parameter from samebits', in units of lr, for
    information only. (AdamW's first step moves a parameter by about lr
    times the sign of its gradient, so where a gradient is within rounding
    of 0 the two sides may step lr apart: a relative difference says
    nothing there.)"""
    names = gpt.param_names(cfg)
    p = {k: torch.nn.Parameter(d.t("init." + k).clone()) for k in names}
    t = cfg["context"]
    tokens = d.t("batch.tokens").long().reshape(-1, t)
    targets = d.t("batch.targets").long().reshape(-1, t)
    opt = gpt.optimizer(p, cfg)
    loss, norm = gpt.train_step(p, opt, tokens, targets, cfg)
    print(f"end to end in PyTorch autograd (information only): loss {loss:.9g}, samebits "
          f"{float(d.load('loss.fwd.loss').reshape(-1)[0]):.9g}; gradient norm {norm:.9g}, "
          f"samebits {float(d.load('gradnorm.fwd.norm').reshape(-1)[0]):.9g}")
    diff = {k: float(np.abs(d64(d.load("adamw." + k)).reshape(-1)
                            - d64(p[k].detach().numpy()).reshape(-1)).max()) for k in names}
    worst = max(names, key=diff.get)
    print(f"  largest difference of an updated parameter: adamw.{worst} "
          f"{diff[worst] / cfg['lr']:.3g} lr")
