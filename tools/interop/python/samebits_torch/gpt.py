"""The char GPT of samebits (kernels/model/README.md, model char_gpt) in
PyTorch, in samebits' layouts and names, for the oracle and the
comparisons: every parameter by samebits' name (`h0.qkv.W`), dense weights
[in][out] (x @ W + b), qkv columns q [0,C), k [C,2C), v [2C,3C) with head j
in columns j*d.. of each, pre-LN blocks, GELU in its tanh form, untied head,
cross-entropy as the mean over every token; AdamW (torch.optim.AdamW) with
weight decay on the matrices only and clipping by the global norm
(torch.nn.utils.clip_grad_norm_).

The block keys of the case (norm, position, mlp, kv_heads, bias) choose the
LLaMA-style block as samebits builds it: RMSNorm and the interleaved-pair
rotary embedding written from primitives (PyTorch 1.13 has neither), a
SwiGLU MLP (F.silu), qkv [h q heads | kv k heads | kv v heads], and no
biases."""
import math

import torch
import torch.nn.functional as F

from .casefile import CaseError, read, sample_range

# The case keys and defaults of char_gpt (harness/FORMATS.md; the optimiser's
# are PyTorch's AdamW defaults, as samebits' sb_optim_defaults for adamw).
DEFAULTS = {"layers": 2, "heads": 4, "width": 128, "context": 64, "batch": 16,
            "steps": 300, "eval_every": 100, "eval_windows": 64, "clip": 1.0,
            "lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "weight_decay": 0.01,
            "seed": 1}
# The block keys and their defaults: GPT-2's block (sb_gpt_block_config).
BLOCK = {"norm": ("layernorm", "rmsnorm"), "position": ("learned", "rope"),
         "mlp": ("gelu", "swiglu"), "bias": ("true", "false")}
LN_EPS = 1e-5
ROPE_BASE = 10000.0
VOCAB = 98  # SB_TEXT_VOCAB (kernels/sb_text.h)
BLOCK_PARAMS = ("ln1.w", "ln1.b", "qkv.W", "qkv.b", "proj.W", "proj.b",
                "ln2.w", "ln2.b", "fc.W", "fc.b", "fcproj.W", "fcproj.b")


def read_case(path):
    """The settings of a char_gpt case, defaults filled in."""
    cp = read(path)
    if not cp.has_section("train") or cp["train"].get("model") != "char_gpt":
        raise CaseError(f"{path}: [train] model: expected char_gpt")
    t = cp["train"]
    cfg = dict(DEFAULTS)
    for key, value in DEFAULTS.items():
        if key in t:
            try:
                cfg[key] = type(value)(t[key])
            except ValueError as e:
                raise CaseError(f"{path}: [train] {key}: {t[key]!r} is not a "
                                f"{type(value).__name__}") from e
    for key, names in BLOCK.items():
        cfg[key] = t.get(key, names[0])
        if cfg[key] not in names:
            raise CaseError(f"{path}: [train] {key}: expected {' or '.join(names)}, "
                            f"found {cfg[key]!r}")
    cfg["bias"] = cfg["bias"] == "true"
    try:
        cfg["kv_heads"] = int(t.get("kv_heads", cfg["heads"]))
    except ValueError as e:
        raise CaseError(f"{path}: [train] kv_heads: {t['kv_heads']!r} is not an int") from e
    cfg["seed"] = int(cp.get("case", "seed", fallback=str(DEFAULTS["seed"])))
    cfg["family"] = cp.get("case", "family", fallback="det")
    cfg["train"] = sample_range(path, t.get("train", ""), "train")
    cfg["test"] = sample_range(path, t.get("test", ""), "test")
    return cfg


def param_names(cfg):
    """Every parameter in samebits' order (the order of its one buffer)."""
    beta, bias = cfg.get("norm", "layernorm") == "layernorm", cfg.get("bias", True)
    swiglu = cfg.get("mlp", "gelu") == "swiglu"
    block = [("ln1.w", True), ("ln1.b", beta), ("qkv.W", True), ("qkv.b", bias),
             ("proj.W", True), ("proj.b", bias), ("ln2.w", True), ("ln2.b", beta),
             ("fc.W", True), ("fc.b", bias), ("up.W", swiglu), ("up.b", swiglu and bias),
             ("fcproj.W", True), ("fcproj.b", bias)]
    names = ["wte"] + (["wpe"] if cfg.get("position", "learned") == "learned" else [])
    for layer in range(cfg["layers"]):
        names += [f"h{layer}.{p}" for p, present in block if present]
    return names + ["lnf.w"] + (["lnf.b"] if beta else []) + ["head.W"] + \
        (["head.b"] if bias else [])


def decays(name):
    """Weight decay on the matrices only: the embeddings and dense weights."""
    return name in ("wte", "wpe") or name.endswith(".W")


def split_qkv(qkv, heads, kv_heads=None):
    """q [b][h][t][d], and k, v [b][h][t][d] with each key/value head
    repeated for the h / kv query heads of its group, from qkv
    [b][t][(h + 2 kv) d]."""
    b, t, width = qkv.shape
    kv = kv_heads or heads
    d = width // (heads + 2 * kv)
    q = qkv[:, :, :heads * d].reshape(b, t, heads, d).transpose(1, 2)
    k, v = (qkv[:, :, (heads + i * kv) * d:(heads + (i + 1) * kv) * d]
            .reshape(b, t, kv, d).transpose(1, 2).repeat_interleave(heads // kv, dim=1)
            for i in range(2))
    return q, k, v, d


def attention(qkv, heads, kv_heads=None, causal=True):
    """Self-attention over the fused qkv [b][t][(h + 2 kv) d]: y [b][t][h d]."""
    b, t, _ = qkv.shape
    q, k, v, d = split_qkv(qkv, heads, kv_heads)
    # the scale as samebits rounds it: 1/sqrt(d) in double, once to float
    s = (q @ k.transpose(-1, -2)) * torch.tensor(1.0 / math.sqrt(d), dtype=qkv.dtype)
    if causal:
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ v).transpose(1, 2).reshape(b, t, heads * d)


def rms_norm(x, w, eps=LN_EPS):
    """RMSNorm from primitives: x / sqrt(mean(x^2) + eps) * w over the last
    dimension."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * w


def rope_table(t, d, base=ROPE_BASE):
    """cos and sin [t][d/2] of the angles p base^(-2k/d), evaluated in double
    and rounded once to float, as samebits' table (kernels/rope/rope.h)."""
    p = torch.arange(t, dtype=torch.float64)[:, None]
    k = torch.arange(d // 2, dtype=torch.float64)[None, :]
    angle = p * torch.pow(torch.tensor(base, dtype=torch.float64), -2.0 * k / d)
    return torch.cos(angle).float(), torch.sin(angle).float()


def rope(x, t, d, inverse=False):
    """The rotary embedding of rows x [n][heads d], row i at position i % t,
    the interleaved pairs (x[2k], x[2k+1]) of every head turned by their
    angle (backward: turned back)."""
    n = x.shape[0]
    cos, sin = rope_table(t, d)
    pos = torch.arange(n) % t
    c, s = cos[pos][:, None, :], sin[pos][:, None, :]
    if inverse:
        s = -s
    pairs = x.reshape(n, -1, d // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).reshape(x.shape)


def forward(p, tokens, targets, cfg):
    """The loss (mean over every token) and the logits [b*t][V] of windows
    tokens [b][t] (int64) against targets [b][t]."""
    b, t = tokens.shape
    c, heads = cfg["width"], cfg["heads"]
    kv = cfg.get("kv_heads", heads)
    d = c // heads

    def norm(x, name):
        if cfg.get("norm", "layernorm") == "rmsnorm":
            return rms_norm(x, p[name + ".w"])
        return F.layer_norm(x, (c,), p[name + ".w"], p[name + ".b"], LN_EPS)

    def dense(x, name):
        y = x @ p[name + ".W"]
        return y + p[name + ".b"] if name + ".b" in p else y

    x = p["wte"][tokens]
    if "wpe" in p:
        x = x + p["wpe"][:t]
    for layer in range(cfg["layers"]):
        h = f"h{layer}."
        qkv = dense(norm(x, h + "ln1"), h + "qkv")
        if cfg.get("position", "learned") == "rope":
            qk = (heads + kv) * d
            rows = qkv.reshape(b * t, -1)
            qkv = torch.cat((rope(rows[:, :qk], t, d), rows[:, qk:]), dim=1).reshape(b, t, -1)
        x = x + dense(attention(qkv, heads, kv), h + "proj")
        m = norm(x, h + "ln2")
        if cfg.get("mlp", "gelu") == "swiglu":
            m = F.silu(dense(m, h + "fc")) * dense(m, h + "up")
        else:
            m = F.gelu(dense(m, h + "fc"), approximate="tanh")
        x = x + dense(m, h + "fcproj")
    logits = dense(norm(x, "lnf"), "head").reshape(b * t, -1)
    return F.cross_entropy(logits, targets.reshape(-1)), logits


def optimizer(p, cfg):
    """AdamW with the case's settings, weight decay on the matrices only."""
    groups = [{"params": [v for k, v in p.items() if decays(k)],
               "weight_decay": cfg["weight_decay"]},
              {"params": [v for k, v in p.items() if not decays(k)], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]),
                             eps=cfg["epsilon"])


def train_step(p, opt, tokens, targets, cfg):
    """One step: loss, backward, clipping by the global norm, AdamW. Returns
    the loss and the gradient norm before clipping."""
    opt.zero_grad(set_to_none=True)
    loss, _ = forward(p, tokens, targets, cfg)
    loss.backward()
    if cfg["clip"] > 0:
        norm = torch.nn.utils.clip_grad_norm_(list(p.values()), cfg["clip"])
    else:
        norm = torch.linalg.vector_norm(torch.cat([v.grad.reshape(-1) for v in p.values()]))
    opt.step()
    return float(loss), float(norm)
