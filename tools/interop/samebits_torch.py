#!/usr/bin/python3
"""samebits traces of PyTorch training runs.

A trace (harness/FORMATS.md) lists every tensor of a run in program order with
its tree XXH3-128 hash, so `samebits diff` can name the first probe where two
runs part ways. This module writes that format from PyTorch:

    tensor_hash(array)        the hash libsamebits computes (harness/trace/hash.c)
    Trace                     records in program order, written as a trace
    SequentialTracer          forward hooks, backward hooks, parameter-gradient
                              hooks and an optimiser-step hook on an
                              nn.Sequential model and its loss

Probe names follow the C model (kernels/model/README.md): `<layer>.fwd.out`,
`<layer>.bwd.dx`, `<layer>.bwd.dW`, `<layer>.bwd.db`, `<opt>.<layer>.W`,
sources `init.<layer>.W`, `batch.x`, `batch.labels`; ops take the kernel
list's names where they mean the same (`conv2d_bwd_filter`, `relu_fwd`), so
the verdict knows which ops have no reduction.

With a dump request (probe, step, directory) it writes what `samebits run
--dump` writes: `<dir>/<probe>.npy`, `<dir>/<probe>.bound.npy` (the op's
per-element reordering bound; only for the ops below that have one) and
`<dir>/<probe>.in<i>.npy` (the op's live inputs); `samebits diff A B --dumps
DIR_A,DIR_B` then classifies the divergence.

Command line (each run in its own process, thread count fixed at start):

    samebits_torch.py train --threads N --trace FILE [--steps S] [--batch B]
        [--seed S] [--data-dir DIR] [--dump PROBE --dump-step S --dump-dir DIR]
    samebits_torch.py hash-vectors       the shared test vectors' hashes

`train` trains the seed model (the Keras MNIST CNN, Adadelta) on the first
samples of MNIST (data/, tools/fetch-data) in order, `--steps` batches.
Needs /usr/bin/python3 with python3-torch, python3-xxhash and NumPy.
"""
import argparse
import math
import os
import platform
import struct
import sys

import numpy as np
import xxhash

LEAF_BYTES = 1 << 18                            # SB_HASH_LEAF_BYTES
DTYPE_CODES = {np.dtype("<f4"): 0, np.dtype("<i4"): 1}
DTYPE_NAMES = {0: "f32", 1: "i32"}
MAX_DIMS = 4
UNIT_ROUNDOFF = 2.0 ** -24
EXPORTER_VERSION = "1"


# ---- hashing ------------------------------------------------------------------

def canonical(array):
    """The array as libsamebits sees it: f32 or i32, C order, little-endian.
    Integer arrays (labels) must fit in int32; other dtypes are refused."""
    a = np.asarray(array)
    if a.dtype.kind == "f":
        if a.dtype != np.float32:
            raise TypeError(f"only float32 tensors can be hashed, not {a.dtype}")
        out = a.astype("<f4", copy=False)
    elif a.dtype.kind in "iu":
        out = a.astype("<i4")
        if not np.array_equal(out, a):
            raise ValueError("integer tensor does not fit in int32")
    else:
        raise TypeError(f"cannot hash a {a.dtype} tensor")
    if out.ndim > MAX_DIMS:
        raise ValueError(f"at most {MAX_DIMS} dimensions, not {out.ndim}")
    # not np.ascontiguousarray, which turns a 0-d array (a loss) into 1-d
    return out if out.flags.c_contiguous else out.copy(order="C")


def tensor_hash(array):
    """Tree XXH3-128 (16 canonical bytes): the header (dtype code, ndim, sizes
    as little-endian uint64), then the XXH3-128 of each 256 KiB leaf of the
    raw bytes, hashed together in order."""
    a = canonical(array)
    header = struct.pack(f"<{2 + a.ndim}Q", DTYPE_CODES[a.dtype], a.ndim, *a.shape)
    data = a.tobytes()
    leaves = b"".join(xxhash.xxh3_128(data[off:off + LEAF_BYTES]).digest()
                      for off in range(0, len(data), LEAF_BYTES))
    return xxhash.xxh3_128(header + leaves).digest()


def test_vectors():
    """Tensors defined by formulas that tools/interop/hash_vectors.c repeats
    in C: scalar, empty, small, more than one leaf, exactly one leaf, one
    leaf and 4 bytes, and special values (signed zero, infinities, NaN,
    subnormal, largest float) given by their bits."""
    n3 = 3 * 300 * 300
    spread = (np.arange(n3, dtype=np.uint64) * 7919) % 1000003
    def words(n):
        return ((np.arange(n, dtype=np.uint64) * 2654435761) % 2 ** 32).astype(np.uint32)
    special = np.array([0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                        0x00000001, 0x7f7fffff], dtype=np.uint32)
    return [
        ("f32_scalar", np.array(1.5, dtype=np.float32)),
        ("f32_empty", np.zeros(0, dtype=np.float32)),
        ("f32_3", np.array([1.0, -2.0, 0.5], dtype=np.float32)),
        ("i32_2x3", (np.arange(6, dtype=np.int32) - 3).reshape(2, 3)),
        ("f32_3x300x300", (spread.astype(np.float32) - np.float32(500000)).reshape(3, 300, 300)),
        ("i32_65536", words(65536).view(np.int32)),
        ("i32_65537", words(65537).view(np.int32)),
        ("f32_special_1x1x1x7", special.view(np.float32).reshape(1, 1, 1, 7)),
    ]


# ---- traces -------------------------------------------------------------------

def _token(s, what):
    if not s or any(c in s for c in " ,\n") or not s.isprintable():
        raise ValueError(f"{what} must be printable with no space or comma: {s!r}")
    return s


class Trace:
    """The records of one run, in program order, and their text form."""

    def __init__(self):
        self.records = []

    def add(self, step, name, op, array, inputs=()):
        a = canonical(array)
        shape = "x".join(str(d) for d in a.shape) if a.ndim else "scalar"
        self.records.append(" ".join([
            str(int(step)), _token(name, "probe name"), _token(op, "op name"),
            DTYPE_NAMES[DTYPE_CODES[a.dtype]], shape, tensor_hash(a).hex(),
            ",".join(_token(i, "input name") for i in inputs) if inputs else "-"]))

    def write(self, path, case, digest_text, family, threads, build):
        """family: ref, det or loose (loose: bits may follow the thread count);
        the digest is the XXH3-128 of digest_text, which should list whatever
        decides the records (not the thread count)."""
        digest = xxhash.xxh3_128(digest_text.encode()).hexdigest()
        lines = ["samebits-trace 1", f"case {_token(case, 'case name')}", f"digest {digest}",
                 f"samebits samebits_torch-{EXPORTER_VERSION}", f"reference {family} {threads}",
                 f"build {build}"] + self.records + [f"end {len(self.records)} 0"]
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)


# ---- reordering bounds ----------------------------------------------------------
# Two summation orders of n terms differ by at most 2*gamma(n)*sum|terms|
# (each is within gamma(n-1)*sum|terms| of the exact sum, fused or not).
# The sums of magnitudes are the same op on |inputs|, in double; the bound is
# rounded up to the next float.

def gamma(n):
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


def _bound(terms, magnitude_sum):
    b = (2.0 * gamma(terms) * magnitude_sum).numpy().astype(np.float32)
    return np.nextafter(b, np.float32(np.inf))


def _bounds():
    import torch.nn.functional as F
    from torch.nn.grad import conv2d_input, conv2d_weight

    def d(t):
        return t.detach().double().abs()

    def conv_fwd(x, w, b):
        return _bound(w[0].numel() + 1, F.conv2d(d(x), d(w), d(b)))

    def conv_data(dy, w, x_shape):
        return _bound(w.shape[0] * w.shape[2] * w.shape[3],
                      conv2d_input(x_shape, d(w), d(dy)))

    def conv_filter(dy, x, w_shape):
        return _bound(dy.shape[0] * dy.shape[2] * dy.shape[3],
                      conv2d_weight(d(x), w_shape, d(dy)))

    def conv_bias(dy):
        return _bound(dy.shape[0] * dy.shape[2] * dy.shape[3], d(dy).sum(dim=(0, 2, 3)))

    def dense_fwd(x, w, b):
        return _bound(w.shape[1] + 1, d(x) @ d(w).t() + d(b))

    def dense_data(dy, w):
        return _bound(w.shape[0], d(dy) @ d(w))

    def dense_weights(dy, x):
        return _bound(dy.shape[0], d(dy).t() @ d(x))

    def dense_bias(dy):
        return _bound(dy.shape[0], d(dy).sum(dim=0))

    return dict(conv_fwd=conv_fwd, conv_data=conv_data, conv_filter=conv_filter,
                conv_bias=conv_bias, dense_fwd=dense_fwd, dense_data=dense_data,
                dense_weights=dense_weights, dense_bias=dense_bias)


# ---- the tracer -------------------------------------------------------------------

class SequentialTracer:
    """Hooks on an nn.Sequential model, its loss module and its optimiser
    that add every module output, every gradient and every updated parameter
    to `trace`, step by step. Layers are the Sequential's child names; a
    parameter is named by its latest probe (`init.<layer>.W` before the first
    update, `<opt_name>.<layer>.W` after)."""

    FWD_OPS = {"Conv2d": "conv2d_fwd", "Linear": "dense_fwd", "ReLU": "relu_fwd",
               "MaxPool2d": "maxpool_fwd", "Dropout": "dropout_fwd", "Flatten": "flatten",
               "CrossEntropyLoss": "cross_entropy"}
    BWD_OPS = {"Conv2d": "conv2d_bwd_data", "Linear": "dense_bwd_data", "ReLU": "relu_bwd",
               "MaxPool2d": "maxpool_bwd", "Dropout": "dropout_bwd", "Flatten": "flatten_bwd",
               "CrossEntropyLoss": "cross_entropy_bwd"}
    PARAM_OPS = {("Conv2d", "W"): "conv2d_bwd_filter", ("Conv2d", "b"): "conv2d_bwd_bias",
                 ("Linear", "W"): "dense_bwd_weights", ("Linear", "b"): "dense_bwd_bias"}

    def __init__(self, model, loss_module, optimizer, opt_name, trace,
                 dump_probe=None, dump_step=0, dump_dir=None):
        self.trace = trace
        self.step = 0
        self.opt_name = opt_name
        self.dump = (dump_probe, dump_step, dump_dir) if dump_probe else None
        self.dumped = False
        self.layers = list(model.named_children())
        self.kinds = [type(m).__name__ for _, m in self.layers] + ["CrossEntropyLoss"]
        self.names = [n for n, _ in self.layers] + ["loss"]
        for i, kind in enumerate(self.kinds):
            if kind not in self.FWD_OPS:
                raise TypeError(f"layer {self.names[i]}: no probe names for {kind}")
        self.param_name = {}            # id(parameter) -> latest probe name
        self.param_of = []              # per layer: [(suffix, parameter)]
        for name, m in self.layers:
            ps = [(s, p) for s, p in (("W", getattr(m, "weight", None)),
                                      ("b", getattr(m, "bias", None))) if p is not None]
            self.param_of.append(ps)
        self.fwd_in = {}                # layer index -> its forward input (this step)
        self.dx = {}                    # layer index -> gradient of its input (this step)
        self.grad_name = {}             # id(parameter) -> name of its gradient probe
        for i, (_, m) in enumerate(self.layers + [("loss", loss_module)]):
            m.register_forward_hook(self._forward_hook(i))
            m.register_full_backward_hook(self._backward_hook(i))
        for i, ps in enumerate(self.param_of):
            for suffix, p in ps:
                p.register_hook(self._param_hook(i, suffix))
        if hasattr(optimizer, "register_step_post_hook"):
            optimizer.register_step_post_hook(lambda opt, args, kwargs: self._after_step(opt))
        else:   # torch < 2.0: the same hook by wrapping the bound method
            step = optimizer.step

            def step_and_probe(*args, **kwargs):
                result = step(*args, **kwargs)
                self._after_step(optimizer)
                return result
            optimizer.step = step_and_probe
        self.bounds = _bounds() if self.dump else None

    # names of the probes an op read
    def _in_name(self, i):
        return "batch.x" if i == 0 else f"{self.names[i - 1]}.fwd.out"

    def _dx_name(self, i):
        return "loss.bwd.dlogits" if i == len(self.layers) else f"{self.names[i]}.bwd.dx"

    def _dy_name(self, i):
        return self._dx_name(i + 1)

    def _params(self, i):
        return [self.param_name[id(p)] for _, p in self.param_of[i]] if i < len(self.layers) else []

    def _add(self, name, op, tensor, inputs, live=(), bound=None):
        array = tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else np.asarray(tensor)
        self.trace.add(self.step, name, op, array, inputs)
        if self.dump and not self.dumped and name == self.dump[0] and self.step == self.dump[1]:
            self._write_dump(name, array, live, bound)

    def _write_dump(self, name, array, live, bound):
        directory = self.dump[2]
        os.makedirs(directory, exist_ok=True)
        np.save(os.path.join(directory, f"{name}.npy"), canonical(array))
        if bound is not None:
            np.save(os.path.join(directory, f"{name}.bound.npy"), bound())
        for k, t in enumerate(live):
            np.save(os.path.join(directory, f"{name}.in{k}.npy"),
                    canonical(t.detach().cpu().numpy()))
        self.dumped = True

    def source(self, name, tensor):
        self._add(name, "source", tensor, ())

    def init_params(self):
        for i, ps in enumerate(self.param_of):
            for suffix, p in ps:
                name = f"init.{self.names[i]}.{suffix}"
                self._add(name, "source", p, ())
                self.param_name[id(p)] = name

    def _forward_hook(self, i):
        def hook(module, inputs, output):
            kind, b = self.kinds[i], self.bounds
            x = inputs[0]
            self.fwd_in[i] = x
            if kind == "CrossEntropyLoss":
                names, live = [self._in_name(i), "batch.labels"], list(inputs)
            else:
                names = [self._in_name(i)] + self._params(i)
                live = [x] + [p for _, p in self.param_of[i]]
            bound = None
            if b and kind == "Conv2d":
                bound = lambda: b["conv_fwd"](x, module.weight, module.bias)
            elif b and kind == "Linear":
                bound = lambda: b["dense_fwd"](x, module.weight, module.bias)
            self._add(f"{self.names[i]}.fwd.out" if i < len(self.layers) else "loss.fwd.loss",
                      self.FWD_OPS[kind], output, names, live, bound)
        return hook

    def _backward_hook(self, i):
        def hook(module, grad_input, grad_output):
            kind, b = self.kinds[i], self.bounds
            dy, dx = grad_output[0], grad_input[0]
            if dx is None:              # the first layer: its input needs no gradient
                return
            self.dx[i] = dx
            if kind == "CrossEntropyLoss":
                names, live = [self._in_name(i), "batch.labels"], []
            else:
                names = [self._dy_name(i)]
                live = [dy]
                if kind in ("Conv2d", "Linear"):
                    names.append(self._params(i)[0])
                    live.append(module.weight)
                elif kind in ("ReLU", "MaxPool2d"):
                    names.append(self._in_name(i))
                    live.append(self.fwd_in[i])
            bound = None
            if b and kind == "Conv2d":
                x_shape = self.fwd_in[i].shape
                bound = lambda: b["conv_data"](dy, module.weight, x_shape)
            elif b and kind == "Linear":
                bound = lambda: b["dense_data"](dy, module.weight)
            self._add(self._dx_name(i), self.BWD_OPS[kind], dx, names, live, bound)
        return hook

    def _param_hook(self, i, suffix):
        def hook(grad):
            kind, b = self.kinds[i], self.bounds
            # the layer above (the loss, for the last layer) has already
            # passed back the gradient of this layer's output
            dy, x = self.dx[i + 1], self.fwd_in[i]
            name = f"{self.names[i]}.bwd.d{suffix}"
            if suffix == "W":
                names, live = [self._dy_name(i), self._in_name(i)], [dy, x]
            else:
                names, live = [self._dy_name(i)], [dy]
            bound = None
            if b:
                key = {("Conv2d", "W"): "conv_filter", ("Conv2d", "b"): "conv_bias",
                       ("Linear", "W"): "dense_weights", ("Linear", "b"): "dense_bias"}[(kind, suffix)]
                if suffix == "W":
                    bound = lambda: b[key](dy, x, grad.shape)
                else:
                    bound = lambda: b[key](dy)
            self._add(name, self.PARAM_OPS[(kind, suffix)], grad, names, live, bound)
            for s, p in self.param_of[i]:
                if s == suffix:
                    self.grad_name[id(p)] = name
        return hook

    def _after_step(self, optimizer):
        for i, ps in enumerate(self.param_of):
            for suffix, p in ps:
                name = f"{self.opt_name}.{self.names[i]}.{suffix}"
                self._add(name, f"{self.opt_name}_update", p,
                          [self.grad_name[id(p)], self.param_name[id(p)]], [p.grad])
                self.param_name[id(p)] = name


# ---- the seed model in PyTorch ----------------------------------------------------

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
    """The Keras MNIST CNN with samebits' probe names as layer names."""
    from collections import OrderedDict
    import torch.nn as nn
    features = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return nn.Sequential(OrderedDict([
        ("conv1", nn.Conv2d(1, 32, 3)), ("relu1", nn.ReLU()),
        ("conv2", nn.Conv2d(32, 64, 3)), ("relu2", nn.ReLU()),
        ("pool", nn.MaxPool2d(2)), ("dropout1", nn.Dropout(dropout1)),
        ("flatten", nn.Flatten()),
        ("dense1", nn.Linear(features, 128)), ("relu3", nn.ReLU()),
        ("dropout2", nn.Dropout(dropout2)), ("dense2", nn.Linear(128, 10))]))


def train(args):
    import torch
    torch.set_num_threads(args.threads)
    data_dir = args.data_dir or os.environ.get("SAMEBITS_DATA_DIR") or "data"
    images = read_idx(os.path.join(data_dir, "mnist-images-idx3-ubyte"), 3)
    labels = read_idx(os.path.join(data_dir, "mnist-labels-idx1-ubyte"), 1)
    n = min(args.train, len(images))

    # Weights as Keras draws them (Glorot uniform, zero biases), from the
    # seed; PyTorch draws them serially, so every thread count gets the same.
    torch.manual_seed(args.seed)
    model = seed_model(images.shape[1], images.shape[2])
    for m in model:
        if hasattr(m, "weight"):
            torch.nn.init.xavier_uniform_(m.weight)
            torch.nn.init.zeros_(m.bias)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-7)

    trace = Trace()
    tracer = SequentialTracer(model, loss_fn, opt, "adadelta", trace,
                              args.dump, args.dump_step, args.dump_dir)
    tracer.init_params()
    model.train()
    for step in range(args.steps):
        tracer.step = step
        # consecutive batches of the first n samples, wrapping around
        idx = (np.arange(args.batch) + step * args.batch) % n
        x = torch.from_numpy(images[idx].astype(np.float32) / np.float32(255)).unsqueeze(1)
        y = torch.from_numpy(labels[idx].astype(np.int64))
        tracer.source("batch.x", x)
        tracer.source("batch.labels", y)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    if args.dump and not tracer.dumped:
        print(f"probe {args.dump} at step {args.dump_step} never happened", file=sys.stderr)
        return 2
    digest_text = (f"samebits-torch {EXPORTER_VERSION}\nmodel=keras_mnist_cnn\noptimizer=adadelta\n"
                   f"dataset=mnist\ntrain=0..{n}\nbatch={args.batch}\nsteps={args.steps}\n"
                   f"seed={args.seed}\ntorch={torch.__version__}\n")
    build = (f"python {platform.python_version()} torch {torch.__version__} "
             f"numpy {np.__version__} threads {torch.get_num_threads()}")
    trace.write(args.trace, "torch_keras_mnist_cnn", digest_text, "loose", args.threads, build)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="samebits_torch.py",
                                 description="samebits traces of PyTorch training runs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("hash-vectors", help="print the shared test vectors' hashes")
    t = sub.add_parser("train", help="train the seed model and write its trace")
    t.add_argument("--threads", type=int, required=True)
    t.add_argument("--trace", required=True)
    t.add_argument("--steps", type=int, default=5)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--train", type=int, default=600, help="first N training samples")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--data-dir")
    t.add_argument("--dump")
    t.add_argument("--dump-step", type=int, default=0)
    t.add_argument("--dump-dir")
    a = ap.parse_args(argv)
    if a.cmd == "hash-vectors":
        for name, array in test_vectors():
            print(name, tensor_hash(array).hex())
        return 0
    if a.threads < 1 or a.steps < 1 or a.batch < 1 or a.train < 1:
        ap.error("--threads, --steps, --batch and --train must be at least 1")
    if a.dump and not a.dump_dir:
        ap.error("--dump needs --dump-dir")
    try:
        return train(a)
    except (OSError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
