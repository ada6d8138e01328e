#!/usr/bin/python3
"""A small training script of one's own, as a PyTorch user writes it: a
residual block called twice (shared weights), functional calls, an in-place
op, an operator matmul, SGD on random data. Nothing in it is about tracing:

    python3 residual_mlp.py                          # trains
    python3 -m samebits_torch run residual_mlp.py --threads 2 --trace t2.trace

Three plants for the tests (tools/interop/test_torch_tracer.py and
cases/torch_residual_mlp_thread_*.case), chosen with `-- --plant NAME`:
    thread-sum   centres the batch with a sum whose order follows the
                 thread count (a user op, traced as one op `thread_sum`)
    thread-bug   centres it with a sum over one chunk of rows per thread
                 whose chunks overlap by a row, counted twice at 2 threads
                 and more (a bug, traced as one op `chunk_sum`)
    untraced     scales the batch by a tensor made from NumPy (no traced op
                 made it) whose value follows the thread count
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import samebits_torch


def _sum_bound(x):
    return x.shape[0], x.abs().sum(0)


@samebits_torch.op("thread_sum", bound=_sum_bound)
def thread_sum(x):
    """The sum over rows, in as many parts as PyTorch has threads."""
    parts = [c.sum(0) for c in x.chunk(torch.get_num_threads())]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


@samebits_torch.op("chunk_sum", bound=_sum_bound)
def chunk_sum(x):
    """The sum over rows, one chunk of rows per thread, each chunk's end
    taken one row too far: the row after a chunk is counted twice."""
    n, threads = x.shape[0], torch.get_num_threads()
    rows = n // threads
    total = x[:rows + 1].sum(0)
    for i in range(1, threads):
        total = total + x[i * rows:(i + 1) * rows + 1].sum(0)
    return total


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x + F.relu(self.fc(x))


class Net(nn.Module):
    def __init__(self, features, width, classes, plant):
        super().__init__()
        self.plant = plant
        self.inp = nn.Linear(features, width)
        self.block = Block(width)
        self.w_out = nn.Parameter(torch.randn(width, classes) / width ** 0.5)

    def forward(self, x):
        if self.plant == "thread-sum":
            x = x - thread_sum(x) / x.shape[0]
        elif self.plant == "thread-bug":
            x = x - chunk_sum(x) / x.shape[0]
        elif self.plant == "untraced":
            scale = np.full(x.shape[1], 1 + 1e-3 * (torch.get_num_threads() - 1), np.float32)
            x = x * torch.from_numpy(scale)
        h = self.block(self.block(self.inp(x)))
        h.mul_(0.5)
        return (h @ self.w_out).log_softmax(dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--plant", choices=("none", "thread-sum", "thread-bug", "untraced"), default="none")
    a = ap.parse_args()
    torch.manual_seed(0)
    model = Net(features=12, width=16, classes=4, plant=a.plant)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(a.steps):
        x = torch.randn(64, 12)
        y = torch.randint(0, 4, (64,))
        loss = F.nll_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
