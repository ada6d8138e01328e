"""What the whole-run comparisons with PyTorch share (torch_seed_cnn.py,
torch_char_gpt.py; README.md here): samebits' shared library for its own
random draws, its det run and dumps, and the check of every tensor the
PyTorch side is given against samebits' trace."""
import ctypes
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import xxhash  # noqa: F401
except ImportError as missing:
    print(f"skipped: {missing.name} is missing (apt-get install python3-torch python3-xxhash)")
    sys.exit(77)

from samebits_torch.hashing import tensor_hash  # noqa: E402


class BadInput(Exception):
    """A case, trace or dump that is not what the tool can compare."""


def library(build):
    """build/harness/libsamebits.so, loaded"""
    path = os.path.join(build, "harness", "libsamebits.so")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise BadInput(f"{path}: cannot load libsamebits ({e})") from e


def read_trace(path):
    """{(step, name): hash} of the records and the metric lines (dicts)."""
    records, metrics = {}, []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == "epoch":
                metrics.append({fields[i]: float(fields[i + 1])
                                for i in range(2, len(fields), 2)})
            elif len(fields) == 7 and fields[0].isdigit():
                records[(int(fields[0]), fields[1])] = fields[5]
    return records, metrics


class Checker:
    """Every tensor PyTorch is given is checked against samebits' record."""

    def __init__(self, records):
        self.records = records
        self.checked = 0

    def same(self, step, name, array):
        want = self.records.get((step, name))
        if want is None:
            raise BadInput(f"samebits' trace has no record {name} at step {step}")
        got = tensor_hash(array).hex()
        if got != want:
            raise BadInput(f"step {step} {name}: the tool's tensor is not samebits' "
                           f"(hash {got}, trace {want})")
        self.checked += 1


def samebits_run(build, case, threads, work, data_dir, steps, dumps):
    """samebits' det run of the case (its trace and seconds) and, at step 0,
    the dumps of the probes `dumps` (a list, or "all" for --dump-all), into
    work/dumps."""
    exe = os.path.join(build, "samebits")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_DYNAMIC="false")
    trace = os.path.join(work, "det.trace")
    limit = ["--max-steps", str(steps)] if steps else []
    t0 = time.monotonic()
    subprocess.run([exe, "run", case, "--threads", str(threads), "--trace", trace,
                    "--data-dir", data_dir] + limit, check=True, env=env)
    seconds = time.monotonic() - t0
    dump_dir = os.path.join(work, "dumps")
    for probe in (["all"] if dumps == "all" else dumps):
        what = ["--dump-all"] if dumps == "all" else ["--dump", probe]
        subprocess.run([exe, "run", case, "--threads", str(threads), "--trace",
                        os.path.join(work, "dump.trace"), "--data-dir", data_dir] + what +
                       ["--dump-step", "0", "--dump-dir", dump_dir],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    return trace, seconds, dump_dir
