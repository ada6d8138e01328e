#!/usr/bin/python3
"""A samebits producer that stops and resumes (harness/PRODUCERS.md, "The
resume hook"), in Python and NumPy alone: a linear model y = x w trained
for 6 steps by SGD with momentum on minibatches of 16 of 64 samples, drawn
by a NumPy generator of their own. Its sums do not depend on --threads
(NumPy's own reductions, no BLAS), so every thread count gives the same
bits. Its checkpoint holds everything the next step reads: the weights,
the velocity and the data generator's state.

    sgd.py --threads N --trace FILE [--seed S] [--stream FILE]
           [--dump PROBE --dump-step S --dump-dir DIR]
           [--stop-at K --checkpoint FILE | --restore FILE [--resume-at K]]
           [--forget-momentum-on-resume]

--stop-at K --checkpoint FILE runs steps 0..K-1, writes FILE and exits 0,
its trace holding those steps; --restore FILE restores it and runs steps K
on, its trace holding those. --forget-momentum-on-resume is a planted
fault: the restore drops the velocity, so a resumed run parts from the
one that never stopped at step K, in the momentum update.
"""
import json
import os
import sys

import numpy as np

from producer import Producer, arguments, parse

N, D, B, STEPS = 64, 8, 16, 6
LR, MU = np.float32(0.05), np.float32(0.9)
U = 2.0 ** -24          # float32 unit roundoff


def sum_bound(terms):
    """Two orders of each row's n-term sum differ by at most
    2 gamma(n) sum |t_i| (NUMERICS.md)."""
    n = terms.shape[1]
    gamma = n * U / (1 - n * U)
    return (2 * gamma * np.abs(terms.astype(np.float64)).sum(axis=1)).astype(np.float32)


def fail(message):
    print(f"sgd.py: {message}", file=sys.stderr)
    sys.exit(2)


def checkpoint_write(path, step, w, v, order):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"step": step, "w": w.tolist(), "v": v.tolist(),
                   "order": order.bit_generator.state}, f)
    os.replace(tmp, path)


def checkpoint_read(path, order):
    try:
        with open(path) as f:
            ck = json.load(f)
        order.bit_generator.state = ck["order"]
        w = np.array(ck["w"], dtype=np.float32)
        v = np.array(ck["v"], dtype=np.float32)
        step = ck["step"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a checkpoint of sgd.py ({e})")
    if not (isinstance(step, int) and 1 <= step < STEPS and w.shape == (D,) and v.shape == (D,)):
        fail(f"{path}: not a checkpoint of sgd.py (step {step!r}, {w.size} and {v.size} weights)")
    return step, w, v


def resume_arguments():
    p = arguments(__doc__)
    p.add_argument("--stop-at", type=int)
    p.add_argument("--checkpoint")
    p.add_argument("--restore")
    p.add_argument("--resume-at", type=int)
    p.add_argument("--forget-momentum-on-resume", action="store_true")
    args = parse(p)
    if (args.stop_at is None) != (args.checkpoint is None) or (args.restore and args.stop_at):
        fail("--stop-at K goes with --checkpoint FILE, --restore FILE with neither")
    if args.stop_at is not None and not 1 <= args.stop_at < STEPS:
        fail(f"--stop-at {args.stop_at}: a step in 1..{STEPS - 1}")
    return args


def main():
    args = resume_arguments()
    data = np.random.default_rng(args.seed)        # the same samples in every process
    x = data.standard_normal((N, D)).astype(np.float32)
    y = data.standard_normal(N).astype(np.float32)
    order = np.random.default_rng(args.seed + 1)   # the minibatches: state to checkpoint
    out = Producer(args, "sgd_numpy", "sgd.py-1", "det")
    first, end = 0, STEPS if args.stop_at is None else args.stop_at
    if args.restore:
        first, w, v = checkpoint_read(args.restore, order)
        if args.resume_at is not None and args.resume_at != first:
            fail(f"{args.restore}: a checkpoint of step {first}, not {args.resume_at}")
        if args.forget_momentum_on_resume:
            v = np.zeros(D, dtype=np.float32)
        w_name, v_name = "w", "sgd.v"  # their latest probes, in the process that stopped
    else:
        w = (0.1 * data.standard_normal(D)).astype(np.float32)
        v = np.zeros(D, dtype=np.float32)
        out.probe(0, "init.w", "source", w)
        out.probe(0, "init.v", "source", v)
        w_name, v_name = "init.w", "init.v"
    for s in range(first, end):
        idx = order.choice(N, B, replace=False)
        bx, by = x[idx], y[idx]
        out.probe(s, "batch.x", "source", bx)
        out.probe(s, "batch.y", "source", by)
        out.start(s, "pred", "matvec")
        terms = bx * w
        pred = np.sum(terms, axis=1, dtype=np.float32)
        out.probe(s, "pred", "matvec", pred, ("batch.x", w_name), (bx, w), sum_bound(terms))
        out.start(s, "dy", "mse_grad")
        dy = (pred - by) / np.float32(B)
        out.probe(s, "dy", "mse_grad", dy, ("pred", "batch.y"), (pred, by), np.zeros_like(dy))
        out.start(s, "grad", "matvec_t")
        terms = bx.T * dy
        grad = np.sum(terms, axis=1, dtype=np.float32)
        out.probe(s, "grad", "matvec_t", grad, ("batch.x", "dy"), (bx, dy), sum_bound(terms))
        out.start(s, "sgd.v", "momentum")
        v_old, v = v, MU * v + grad
        out.probe(s, "sgd.v", "momentum", v, (v_name, "grad"), (v_old, grad), np.zeros_like(v))
        out.start(s, "w", "sgd_step")
        w_old, w = w, w - LR * v
        out.probe(s, "w", "sgd_step", w, (w_name, "sgd.v"), (w_old, v), np.zeros_like(w))
        w_name, v_name = "w", "sgd.v"
    out.write(args.threads)
    if args.stop_at is not None:
        checkpoint_write(args.checkpoint, args.stop_at, w, v, order)


if __name__ == "__main__":
    main()
