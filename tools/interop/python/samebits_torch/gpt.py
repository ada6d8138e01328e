"""The char GPT of samebits (kernels/model/README.md, model char_gpt) in
PyTorch, in samebits' layouts and names, for the oracle and the
comparisons: every parameter by samebits' name (`h0.qkv.W`), dense weights
[in][out] (x @ W + b), qkv columns q [0,C), k [C,2C), v [2C,3C) with head j
in columns j*d.. of each, pre-LN blocks, GELU in its tanh form, untied head,
cross-entropy as the mean over every token; AdamW (torch.optim.AdamW) with
weight decay on the matrices only and clipping by the global norm
(torch.nn.utils.clip_grad_norm_)."""
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
LN_EPS = 1e-5
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
    cfg["seed"] = int(cp.get("case", "seed", fallback=str(DEFAULTS["seed"])))
    cfg["family"] = cp.get("case", "family", fallback="det")
    cfg["train"] = sample_range(path, t.get("train", ""), "train")
    cfg["test"] = sample_range(path, t.get("test", ""), "test")
    return cfg


def param_names(layers):
    """Every parameter in samebits' order (the order of its one buffer)."""
    names = ["wte", "wpe"]
    for layer in range(layers):
        names += [f"h{layer}.{p}" for p in BLOCK_PARAMS]
    return names + ["lnf.w", "lnf.b", "head.W", "head.b"]


def decays(name):
    """Weight decay on the matrices only: the embeddings and dense weights."""
    return name in ("wte", "wpe") or name.endswith(".W")


def attention(qkv, heads):
    """Causal self-attention over the fused qkv [b][t][3C]: y [b][t][C]."""
    b, t, c3 = qkv.shape
    c = c3 // 3
    d = c // heads
    q, k, v = (qkv[:, :, i * c:(i + 1) * c].reshape(b, t, heads, d).transpose(1, 2)
               for i in range(3))
    # the scale as samebits rounds it: 1/sqrt(d) in double, once to float
    s = (q @ k.transpose(-1, -2)) * torch.tensor(1.0 / math.sqrt(d), dtype=qkv.dtype)
    mask = torch.ones(t, t, dtype=torch.bool).triu(1)
    p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    return (p @ v).transpose(1, 2).reshape(b, t, c)


def forward(p, tokens, targets, cfg):
    """The loss (mean over every token) and the logits [b*t][V] of windows
    tokens [b][t] (int64) against targets [b][t]."""
    b, t = tokens.shape
    c = cfg["width"]
    x = p["wte"][tokens] + p["wpe"][:t]
    for layer in range(cfg["layers"]):
        h = f"h{layer}."
        a = F.layer_norm(x, (c,), p[h + "ln1.w"], p[h + "ln1.b"], LN_EPS)
        a = attention(a @ p[h + "qkv.W"] + p[h + "qkv.b"], cfg["heads"])
        x = x + (a @ p[h + "proj.W"] + p[h + "proj.b"])
        m = F.layer_norm(x, (c,), p[h + "ln2.w"], p[h + "ln2.b"], LN_EPS)
        m = F.gelu(m @ p[h + "fc.W"] + p[h + "fc.b"], approximate="tanh")
        x = x + (m @ p[h + "fcproj.W"] + p[h + "fcproj.b"])
    x = F.layer_norm(x, (c,), p["lnf.w"], p["lnf.b"], LN_EPS)
    logits = (x @ p["head.W"] + p["head.b"]).reshape(b * t, -1)
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
