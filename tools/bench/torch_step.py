#!/usr/bin/python3
"""Seconds per training step of a model in PyTorch, for bench-all.

--model keras_mnist_cnn (the default): the Keras MNIST CNN (conv 32 3x3
relu, conv 64 3x3 relu, max-pool 2x2, dropout .25, dense 128 relu, dropout
.5, dense 10, softmax cross-entropy, Adadelta lr 1.0 rho .95 eps 1e-7) at
batch 128 on MNIST-shaped inputs. --model char_gpt: samebits' char GPT at
its default size (samebits_torch.gpt: 2 layers, 4 heads, width 128, 16
windows of 64 tokens, AdamW with clipping at 1) on random tokens. With
torch.set_num_threads(--threads). Prints one JSON object: the median of the
steps after the first two.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop",
                                "python"))
from samebits_torch import gpt  # noqa: E402


def cnn_step():
    """a function running one training step of the seed model"""
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

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def gpt_step():
    """a function running one training step of the char GPT"""
    cfg = dict(gpt.DEFAULTS)
    c, t = cfg["width"], cfg["context"]
    shapes = {"wte": (gpt.VOCAB, c), "wpe": (t, c), "lnf.w": (c,), "lnf.b": (c,),
              "head.W": (c, gpt.VOCAB), "head.b": (gpt.VOCAB,)}
    sizes = {"ln1": (c,), "qkv": (c, 3 * c), "proj": (c, c), "ln2": (c,), "fc": (c, 4 * c),
             "fcproj": (4 * c, c)}
    for layer in range(cfg["layers"]):
        for name in gpt.BLOCK_PARAMS:
            layer_name, kind = name.split(".")
            shape = sizes[layer_name]
            shapes[f"h{layer}.{name}"] = shape if kind in ("W", "w") else shape[-1:]
    p = {k: nn.Parameter(0.02 * torch.randn(shapes[k])) for k in gpt.param_names(cfg)}
    opt = gpt.optimizer(p, cfg)
    x = torch.randint(0, gpt.VOCAB, (cfg["batch"], t))
    y = torch.randint(0, gpt.VOCAB, (cfg["batch"], t))
    return lambda: gpt.train_step(p, opt, x, y, cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--model", choices=("keras_mnist_cnn", "char_gpt"),
                    default="keras_mnist_cnn")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    step = gpt_step() if args.model == "char_gpt" else cnn_step()
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"model": args.model, "threads": args.threads,
                      "steps_timed": len(times) - 2,
                      "step_s": statistics.median(times[2:]),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
