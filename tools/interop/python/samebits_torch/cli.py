"""python3 -m samebits_torch: trace a training script, train the seed model,
print the shared test vectors' hashes.

    python3 -m samebits_torch run SCRIPT.py --threads N --trace FILE
        [--case NAME] [--dump PROBE --dump-step S --dump-dir DIR] [--traceback]
        [-- ARGS...]
    python3 -m samebits_torch train --threads N --trace FILE [--steps S]
        [--batch B] [--train N] [--seed S] [--data-dir DIR] [--dump ...]
    python3 -m samebits_torch hash-vectors

Each run in its own process: the thread count (1 to 64, the trace format's
range) is fixed before the script starts (torch.set_num_threads), so a
sweep over thread counts needs no change to the script (a script that sets
its own thread count overrides --threads).

Exit status: 0 traced; 2 usage or input error of this command (one line
naming the option or file; a dump asked for and never made included); 3
the script failed: it raised (a syntax error included) or exited with a
status other than 0. Its failure is one line on stderr,
`FILE:LINE: the script raised TYPE: MESSAGE; traceback in TRACE.traceback;
no trace written`, FILE:LINE the last line of the script's own code that
ran (the last frame outside Python's library, torch and this package), and
the full traceback goes to TRACE.traceback (`--traceback`: to stderr as
well).
"""
import argparse
import os
import re
import runpy
import sys
import sysconfig
import traceback

import xxhash

from .hashing import tensor_hash, test_vectors
from .trace import EXPORTER_VERSION, MAX_THREADS

SCRIPT_FAILED = 3


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line and a pointer to --help."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _dump_options(p):
    p.add_argument("--dump", metavar="PROBE", help="dump this probe (with --dump-dir)")
    p.add_argument("--dump-step", type=int, default=0, metavar="S")
    p.add_argument("--dump-dir", metavar="DIR")


def _parser():
    ap = _Parser(
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
    r.add_argument("--traceback", action="store_true",
                   help="print the traceback of a failing script on stderr too")
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


class _ScriptFailed(Exception):
    """The script raised or exited non-zero (its exception: the cause)."""


def _library_dirs():
    import torch
    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(d) + os.sep for d in (
        paths["stdlib"], paths["purelib"], paths["platlib"],
        os.path.dirname(torch.__file__), os.path.dirname(__file__)))


def _user_line(exc):
    """(file, line) where the script's own code last ran in exc's traceback,
    or where a syntax error is; None when nothing of it ran."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    library = _library_dirs()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.realpath(f.filename).startswith(library)]
    return (frames[-1].filename, frames[-1].lineno) if frames else None


def _script_failed(a, exc):
    """Reports the script's failure: one line, the traceback in a file."""
    log = a.trace + ".traceback"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, SystemExit):
        what = (f"exited with status {exc.code}" if isinstance(exc.code, int)
                else f"exited: {exc.code}")
    else:
        message = str(exc.msg if isinstance(exc, SyntaxError) else exc).strip().splitlines()
        what = f"raised {type(exc).__name__}" + (f": {message[0]}" if message else "")
    where = _user_line(exc)
    at = f"{where[0]}:{where[1]}" if where else a.script
    try:
        with open(log, "w") as f:
            f.write(text)
        kept = f"; traceback in {log}"
    except OSError as e:
        kept = f"; traceback not kept ({log}: {e.strerror})"
    if a.traceback:
        sys.stderr.write(text)
    print(f"{at}: the script {what}{kept}; no trace written", file=sys.stderr)
    return SCRIPT_FAILED


def _run(a, script_args):
    import torch
    from .tracer import Tracer
    if not os.path.isfile(a.script):
        print(f"{a.script}: no such file", file=sys.stderr)
        return 2
    where = os.path.dirname(os.path.abspath(a.trace))
    if not os.path.isdir(where):
        print(f"--trace {a.trace}: no directory {where}", file=sys.stderr)
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
                    raise _ScriptFailed() from e
            except Exception as e:
                raise _ScriptFailed() from e
    except _ScriptFailed as failed:
        return _script_failed(a, failed.__cause__)
    except OSError as e:                # writing the trace
        print(f"{a.trace}: cannot write the trace ({e.strerror})", file=sys.stderr)
        return 2
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
    if not 1 <= a.threads <= MAX_THREADS:
        ap.error(f"--threads {a.threads}: a trace holds 1 to {MAX_THREADS} threads")
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
