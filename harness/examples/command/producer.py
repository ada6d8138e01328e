"""The protocol side of a samebits producer in Python and NumPy
(harness/PRODUCERS.md): the tree hash of a float32 tensor, the trace, the
stream and the dumps of one run. matvec.py and sgd.py are written on it;
what they compute is their own."""
import argparse
import os
import struct
import sys

import numpy as np
import xxhash

LEAF_BYTES = 256 * 1024


def tensor_hash(a):
    """Tree XXH3-128 of a float32 tensor (PRODUCERS.md, "Hashing")."""
    header = struct.pack(f"<{2 + a.ndim}Q", 0, a.ndim, *a.shape)
    data = np.ascontiguousarray(a, dtype="<f4").tobytes()
    leaves = b"".join(xxhash.xxh3_128(data[i:i + LEAF_BYTES]).digest()
                      for i in range(0, len(data), LEAF_BYTES))
    return xxhash.xxh3_128(header + leaves).hexdigest()


def arguments(doc):
    """The protocol's options (PRODUCERS.md), for the producer to add its
    own to: --threads, --trace, --seed, --stream and the dump's."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--stream")
    p.add_argument("--dump")
    p.add_argument("--dump-step", type=int)
    p.add_argument("--dump-dir")
    return p


def parse(p):
    """The arguments, a usage error an input error (exit 2, one line)."""
    try:
        args = p.parse_args()
    except SystemExit:
        sys.exit(2)
    if args.threads < 1 or (args.dump and (args.dump_step is None or not args.dump_dir)):
        print(f"{os.path.basename(sys.argv[0])}: --threads N >= 1; --dump needs --dump-step "
              "and --dump-dir", file=sys.stderr)
        sys.exit(2)
    return args


class Producer:
    """One run's records: args holds --trace, --stream, --dump, --dump-step,
    --dump-dir (and, optionally, --crash-in and --threads); name, version and
    family fill the trace's header."""

    def __init__(self, args, name, version, family):
        self.args, self.records, self.dumped = args, [], False
        self.header = (name, version, family)
        self.stream = None
        if args.stream:
            self.stream = os.open(args.stream, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            self.emit("samebits-stream 1")

    def emit(self, line):
        if self.stream is not None:
            os.write(self.stream, (line + "\n").encode())

    def start(self, step, name, op):
        self.emit(f"start {step} {name} {op}")
        if getattr(self.args, "crash_in", None) == op and self.args.threads > 1:
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
        """The trace, written to a temporary and renamed; a dump asked for
        and never made is an input error (exit 2)."""
        prog = os.path.basename(sys.argv[0])
        if self.args.dump and not self.dumped:
            print(f"{prog}: no probe {self.args.dump} at step {self.args.dump_step}",
                  file=sys.stderr)
            sys.exit(2)
        name, version, family = self.header
        lines = ["samebits-trace 1", f"case {name}", "digest " + "0" * 32,
                 f"samebits {version}", f"reference {family} {threads}", "build python3 numpy",
                 *self.records, f"end {len(self.records)} 0"]
        tmp = self.args.trace + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, self.args.trace)
