"""python3 -m samebits_torch: trace a training script, train the seed model,
print the shared test vectors' hashes.

    python3 -m samebits_torch run SCRIPT.py --threads N --trace FILE
        [--case NAME] [--dump PROBE --dump-step S --dump-dir DIR] [-- ARGS...]
    python3 -m samebits_torch train --threads N --trace FILE [--steps S]
        [--batch B] [--train N] [--seed S] [--data-dir DIR] [--dump ...]
    python3 -m samebits_torch hash-vectors

Each run in its own process: the thread count is fixed before the script
starts (torch.set_num_threads), so a sweep over thread counts needs no
change to the script (a script that sets its own thread count overrides
--threads). Exit status: 0 traced, 1 the script failed, 2 usage
or input error (a dump asked for and never made included).
"""
import argparse
import os
import re
import runpy
import sys

import xxhash

from .hashing import tensor_hash, test_vectors
from .trace import EXPORTER_VERSION


def _dump_options(p):
    p.add_argument("--dump", metavar="PROBE", help="dump this probe (with --dump-dir)")
    p.add_argument("--dump-step", type=int, default=0, metavar="S")
    p.add_argument("--dump-dir", metavar="DIR")


def _parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m samebits_torch",
        description="samebits traces of PyTorch training runs (harness/FORMATS.md)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a training script under the tracer",
                       description="Runs SCRIPT as __main__ with ARGS (after --) under "
                       "the tracer at a fixed thread count and writes its trace.")
    r.add_argument("script")
    r.add_argument("--threads", type=int, required=True)
    r.add_argument("--trace", required=True)
    r.add_argument("--case", help="the trace's case name (default: the script's name)")
    _dump_options(r)
    t = sub.add_parser("train", help="train the seed model and write its trace")
    t.add_argument("--threads", type=int, required=True)
    t.add_argument("--trace", required=True)
    t.add_argument("--steps", type=int, default=5)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--train", type=int, default=600, help="first N training samples")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--data-dir")
    _dump_options(t)
    sub.add_parser("hash-vectors", help="print the shared test vectors' hashes")
    return ap


def _run(a, script_args):
    import torch
    from .tracer import Tracer
    if not os.path.isfile(a.script):
        print(f"{a.script}: no such file", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    with open(a.script, "rb") as f:
        script_hash = xxhash.xxh3_128(f.read()).hexdigest()
    case = a.case or re.sub(r"[^A-Za-z0-9._-]", "_", os.path.splitext(
        os.path.basename(a.script))[0])
    # what decides the records: the script, its arguments, torch (not the threads)
    digest_text = (f"samebits-torch {EXPORTER_VERSION}\nscript={os.path.basename(a.script)}\n"
                   f"script_xxh3={script_hash}\nargs={' '.join(script_args)}\n"
                   f"torch={torch.__version__}\n")
    dump = (a.dump, a.dump_step, a.dump_dir) if a.dump else None
    sys.argv = [a.script] + script_args
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.script)))
    try:
        with Tracer(a.trace, case, digest_text, "loose", a.threads, dump=dump) as tracer:
            try:
                runpy.run_path(a.script, run_name="__main__")
            except SystemExit as e:     # sys.exit(0) ends the script, not the trace
                if e.code not in (None, 0):
                    raise
    except SystemExit as e:
        print(f"{a.script} exited with {e.code}: no trace written", file=sys.stderr)
        return 1
    if a.dump and not tracer.dumped:
        print(f"probe {a.dump} at step {a.dump_step} never happened", file=sys.stderr)
        return 2
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    script_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    ap = _parser()
    a = ap.parse_args(argv)
    if a.cmd == "hash-vectors":
        for name, array in test_vectors():
            print(name, tensor_hash(array).hex())
        return 0
    if a.threads < 1:
        ap.error("--threads must be at least 1")
    if a.dump and not a.dump_dir:
        ap.error("--dump needs --dump-dir")
    dump = (a.dump, a.dump_step, a.dump_dir) if a.dump else None
    try:
        if a.cmd == "run":
            return _run(a, script_args)
        if a.steps < 1 or a.batch < 1 or a.train < 1:
            ap.error("--steps, --batch and --train must be at least 1")
        from . import seed
        if not seed.train(a.trace, a.threads, a.steps, a.batch, a.train, a.seed,
                          a.data_dir, dump):
            print(f"probe {a.dump} at step {a.dump_step} never happened", file=sys.stderr)
            return 2
        return 0
    except (OSError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
