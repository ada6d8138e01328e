#!/usr/bin/python3
"""Seconds per training step of the seed model in PyTorch, for bench-all.

The Keras MNIST CNN (conv 32 3x3 relu, conv 64 3x3 relu, max-pool 2x2,
dropout .25, dense 128 relu, dropout .5, dense 10, softmax cross-entropy,
Adadelta lr 1.0 rho .95 eps 1e-7) at batch 128 on MNIST-shaped inputs, with
torch.set_num_threads(--threads). Prints one JSON object: the median of the
steps after the first two.
"""
import argparse
import json
import statistics
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, 10))
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(128, 1, 28, 28)
    y = torch.randint(0, 10, (128,))
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"threads": args.threads, "steps_timed": len(times) - 2,
                      "step_s": statistics.median(times[2:]),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
