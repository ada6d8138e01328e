#!/usr/bin/python3
"""A small language model as a PyTorch user writes one: token and position
embeddings, a pre-LayerNorm attention block written with matmul, softmax
and a causal mask, a GELU MLP, the block applied twice (shared weights), an
in-place residual, cross-entropy, AdamW with clip_grad_norm_. Batches are
windows sliced from one token tensor (int64) as most scripts cut them.
Nothing in it is about tracing:

    python3 small_lm.py                      # trains
    python3 -m samebits_torch run small_lm.py --threads 2 --trace t2.trace

tools/interop/test_torch_provenance.py reads the trace of a run.

One plant for cases/torch_small_lm_split_softmax.case, chosen with
`-- --plant split-softmax`: the attention's softmax over the keys in one
split per thread, each split's exponentials taken from its own max and
never rescaled to a common one (a split-KV softmax without its correction;
a bug, traced as one op `split_softmax`). One thread is one split: the
right softmax.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, WIDTH = 17, 8, 16


def split_softmax(s):
    """Softmax over the last dimension in torch.get_num_threads() splits,
    each split's exponentials relative to its own max (a fully masked
    split's max is clamped, so its exponentials are 0, not NaN), the
    splits' sums added with no rescale to the row's max."""
    parts = s.chunk(torch.get_num_threads(), dim=-1)
    ex = [(p - p.amax(-1, keepdim=True).clamp(min=-1e30)).exp() for p in parts]
    total = ex[0].sum(-1, keepdim=True)
    for e in ex[1:]:
        total = total + e.sum(-1, keepdim=True)
    return torch.cat(ex, -1) / total


def _softmax_bound(s):
    """A softmax's outputs are at most 1 and its sum has a term per key:
    (keys, 1) per output, the first-order reordering bound of the sum."""
    return s.shape[-1], torch.ones_like(s)


class Block(nn.Module):
    def __init__(self, width, softmax=None):
        super().__init__()
        self.softmax = softmax or (lambda s: s.softmax(dim=-1))
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 2 * width)
        self.out = nn.Linear(2 * width, width)

    def forward(self, x):
        t = x.shape[1]
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        a = self.softmax(s.masked_fill(mask, float("-inf"))) @ v
        h = x + self.proj(a)
        m = self.out(F.gelu(self.fc(self.norm2(h))))
        m.add_(h)           # the residual, in place
        return m


class SmallLM(nn.Module):
    def __init__(self, softmax=None):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Embedding(CONTEXT, WIDTH)
        self.block = Block(WIDTH, softmax)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        x = self.block(self.block(x))
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--plant", choices=("none", "split-softmax"), default="none")
    a = ap.parse_args()
    softmax = None
    if a.plant == "split-softmax":
        import samebits_torch   # only the plant is about tracing
        softmax = samebits_torch.op("split_softmax", bound=_softmax_bound)(split_softmax)
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (a.batch * CONTEXT * (a.steps + 1) + 1,))
    model = SmallLM(softmax)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    span = a.batch * CONTEXT
    for step in range(a.steps):
        lo = step * span
        x = data[lo:lo + span].view(a.batch, CONTEXT)
        y = data[lo + 1:lo + 1 + span].view(a.batch, CONTEXT)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
