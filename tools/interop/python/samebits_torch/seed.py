"""The seed model (the Keras MNIST CNN, Adadelta) in PyTorch, trained on the
first samples of MNIST (data/, tools/fetch-data) in order and traced: an
example of a training loop under the Tracer."""
import math
import os
import struct
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

from .trace import EXPORTER_VERSION
from .tracer import Tracer


def read_idx(path, dims):
    """An uncompressed IDX file of unsigned bytes with `dims` dimensions."""
    with open(path, "rb") as f:
        raw = f.read()
    magic = struct.unpack(">I", raw[:4])[0]
    if magic != 0x0800 | dims:
        raise ValueError(f"{path}: byte 0: expected IDX magic {0x0800 | dims:#x} (unsigned "
                         f"bytes, {dims} dimensions), found {magic:#x}")
    shape = struct.unpack(f">{dims}I", raw[4:4 + 4 * dims])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims)
    if data.size != math.prod(shape):
        raise ValueError(f"{path}: {data.size} bytes of data for shape {shape}")
    return data.reshape(shape)


def seed_model(height, width, dropout1=0.25, dropout2=0.5):
    """The Keras MNIST CNN with samebits' layer names."""
    features = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return nn.Sequential(OrderedDict([
        ("conv1", nn.Conv2d(1, 32, 3)), ("relu1", nn.ReLU()),
        ("conv2", nn.Conv2d(32, 64, 3)), ("relu2", nn.ReLU()),
        ("pool", nn.MaxPool2d(2)), ("dropout1", nn.Dropout(dropout1)),
        ("flatten", nn.Flatten()),
        ("dense1", nn.Linear(features, 128)), ("relu3", nn.ReLU()),
        ("dropout2", nn.Dropout(dropout2)), ("dense2", nn.Linear(128, 10))]))


def train(trace, threads, steps=5, batch=128, train_samples=600, seed=1, data_dir=None,
          dump=None):
    """Writes the trace of `steps` batches at `threads` threads; returns
    whether the dump (probe, step, dir) was written (True without one)."""
    torch.set_num_threads(threads)
    data_dir = data_dir or os.environ.get("SAMEBITS_DATA_DIR") or "data"
    images = read_idx(os.path.join(data_dir, "mnist-images-idx3-ubyte"), 3)
    labels = read_idx(os.path.join(data_dir, "mnist-labels-idx1-ubyte"), 1)
    n = min(train_samples, len(images))

    # Weights as Keras draws them (Glorot uniform, zero biases), from the
    # seed; PyTorch draws them serially, so every thread count gets the same.
    torch.manual_seed(seed)
    model = seed_model(images.shape[1], images.shape[2])
    for m in model:
        if hasattr(m, "weight"):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-7)

    digest_text = (f"samebits-torch {EXPORTER_VERSION}\nmodel=keras_mnist_cnn\n"
                   f"optimizer=adadelta\ndataset=mnist\ntrain=0..{n}\nbatch={batch}\n"
                   f"steps={steps}\nseed={seed}\ntorch={torch.__version__}\n")
    with Tracer(trace, "torch_keras_mnist_cnn", digest_text, "loose", threads,
                dump=dump) as tracer:
        tracer.name(model, "model")
        tracer.name(loss_fn, "loss")
        model.train()
        for step in range(steps):
            # consecutive batches of the first n samples, wrapping around
            idx = (np.arange(batch) + step * batch) % n
            x = torch.from_numpy(images[idx].astype(np.float32) / np.float32(255)).unsqueeze(1)
            y = torch.from_numpy(labels[idx].astype(np.int64))
            tracer.source("batch.x", x)
            tracer.source("batch.labels", y)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
    return dump is None or tracer.dumped
