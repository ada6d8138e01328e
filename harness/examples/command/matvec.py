#!/usr/bin/python3
"""A samebits producer in Python and NumPy alone (harness/PRODUCERS.md),
written from that page: y = relu(A v) for a 16x4096 matrix, whose sums are
dealt to one part per thread, each part summed on its own and the parts
added in order, as an OpenMP reduction would. The bits of `mv.out` then
follow the thread count: a reordering, within the bound this program
dumps beside it; relu is exact and only carries the difference on.

    matvec.py --threads N --trace FILE [--seed S] [--stream FILE]
              [--dump PROBE --dump-step S --dump-dir DIR] [--crash-in OP]

--crash-in OP aborts the process above one thread when op OP starts (its
`start` line streamed, its record never made): a crash for the sweep to
place, with a golden made at one thread.
"""
import argparse
import os
import struct
import sys

import numpy as np
import xxhash

LEAF_BYTES = 256 * 1024
U = 2.0 ** -24          # float32 unit roundoff


def tensor_hash(a):
    """Tree XXH3-128 of a float32 tensor (PRODUCERS.md, "Hashing")."""
    header = struct.pack(f"<{2 + a.ndim}Q", 0, a.ndim, *a.shape)
    data = np.ascontiguousarray(a, dtype="<f4").tobytes()
    leaves = b"".join(xxhash.xxh3_128(data[i:i + LEAF_BYTES]).digest()
                      for i in range(0, len(data), LEAF_BYTES))
    return xxhash.xxh3_128(header + leaves).hexdigest()


class Producer:
    def __init__(self, args):
        self.args, self.records, self.dumped = args, [], False
        self.stream = None
        if args.stream:
            self.stream = os.open(args.stream, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            self.emit("samebits-stream 1")

    def emit(self, line):
        if self.stream is not None:
            os.write(self.stream, (line + "\n").encode())

    def start(self, step, name, op):
        self.emit(f"start {step} {name} {op}")
        if self.args.crash_in == op and self.args.threads > 1:
            os.abort()

    def probe(self, step, name, op, a, inputs=(), live=(), bound=None):
        shape = "x".join(str(d) for d in a.shape) if a.ndim else "scalar"
        line = f"{step} {name} {op} f32 {shape} {tensor_hash(a)} {','.join(inputs) or '-'}"
        self.records.append(line)
        self.emit(line)
        if self.args.dump == name and self.args.dump_step == step:
            d = self.args.dump_dir
            np.save(os.path.join(d, f"{name}.npy"), a.astype("<f4"))
            if bound is not None:
                np.save(os.path.join(d, f"{name}.bound.npy"), bound.astype("<f4"))
            for i, x in enumerate(live):
                np.save(os.path.join(d, f"{name}.in{i}.npy"), x.astype("<f4"))
            self.dumped = True

    def write(self, threads):
        lines = ["samebits-trace 1", "case matvec_numpy", "digest " + "0" * 32,
                 "samebits matvec.py-1", f"reference loose {threads}", "build python3 numpy",
                 *self.records, f"end {len(self.records)} 0"]
        tmp = self.args.trace + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, self.args.trace)


def matvec(a, v, parts):
    """Each row's terms dealt round-robin to `parts` parts (term k to part
    k % parts, as a schedule(static, 1) loop deals them to threads), each
    part summed on its own, the parts added in order."""
    prod = a * v
    y = np.zeros(a.shape[0], dtype=np.float32)
    for k in range(parts):
        y = y + np.sum(prod[:, k::parts], axis=1, dtype=np.float32)
    return y


def matvec_bound(a, v):
    """Any order of the n-term sums is within 2 gamma(n) sum |a_i v_i| of the
    exact value, so two orders differ by at most twice that."""
    n = a.shape[1]
    gamma = n * U / (1 - n * U)
    return (2 * gamma * np.abs(a.astype(np.float64) * v).sum(axis=1)).astype(np.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--stream")
    p.add_argument("--dump")
    p.add_argument("--dump-step", type=int)
    p.add_argument("--dump-dir")
    p.add_argument("--crash-in")
    try:
        args = p.parse_args()
    except SystemExit:
        sys.exit(2)             # a usage error is an input error
    if args.threads < 1 or (args.dump and (args.dump_step is None or not args.dump_dir)):
        print("matvec.py: --threads N >= 1; --dump needs --dump-step and --dump-dir",
              file=sys.stderr)
        sys.exit(2)

    rng = np.random.default_rng(args.seed)     # the same inputs at every thread count
    a = rng.standard_normal((16, 4096)).astype(np.float32)
    v = rng.standard_normal(4096).astype(np.float32)
    out = Producer(args)
    out.probe(0, "input.a", "source", a)
    out.probe(0, "input.v", "source", v)
    out.start(0, "mv.out", "matvec")
    y = matvec(a, v, args.threads)
    out.probe(0, "mv.out", "matvec", y, ("input.a", "input.v"), (a, v), matvec_bound(a, v))
    out.start(0, "relu.out", "relu")
    r = np.maximum(y, np.float32(0))
    out.probe(0, "relu.out", "relu", r, ("mv.out",), (y,), np.zeros_like(r))
    if args.dump and not out.dumped:
        print(f"matvec.py: no probe {args.dump} at step {args.dump_step}", file=sys.stderr)
        sys.exit(2)
    out.write(args.threads)


if __name__ == "__main__":
    main()
