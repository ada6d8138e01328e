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
import numpy as np

from producer import Producer, arguments, parse

U = 2.0 ** -24          # float32 unit roundoff


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
    p = arguments(__doc__)
    p.add_argument("--crash-in")
    args = parse(p)

    rng = np.random.default_rng(args.seed)     # the same inputs at every thread count
    a = rng.standard_normal((16, 4096)).astype(np.float32)
    v = rng.standard_normal(4096).astype(np.float32)
    out = Producer(args, "matvec_numpy", "matvec.py-1", "loose")
    out.probe(0, "input.a", "source", a)
    out.probe(0, "input.v", "source", v)
    out.start(0, "mv.out", "matvec")
    y = matvec(a, v, args.threads)
    out.probe(0, "mv.out", "matvec", y, ("input.a", "input.v"), (a, v), matvec_bound(a, v))
    out.start(0, "relu.out", "relu")
    r = np.maximum(y, np.float32(0))
    out.probe(0, "relu.out", "relu", r, ("mv.out",), (y,), np.zeros_like(r))
    out.write(args.threads)


if __name__ == "__main__":
    main()
