"""What the whole-run comparisons with PyTorch share (torch_seed_cnn.py,
torch_char_gpt.py; README.md here): samebits' shared library for its own
random draws, its det run and dumps, and the check of every tensor the
PyTorch side is given against samebits' trace."""
import ctypes
import os
import subprocess
import sys
import tempfile
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

import numpy as np  # noqa: E402
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
    """Every tensor PyTorch is given is checked against samebits' record of
    it: noted while PyTorch trains (samebits' run goes on beside it), then
    verified against the trace."""

    def __init__(self):
        self.noted = []  # (step, name, hash)

    def same(self, step, name, array):
        """samebits' integer tensors (labels, tokens) are int32"""
        a = np.asarray(array)
        if a.dtype.kind in "iu":
            a = a.astype(np.int32)
            if not np.array_equal(a, array):
                raise BadInput(f"step {step} {name}: integers beyond int32")
        self.noted.append((step, name, tensor_hash(a).hex()))

    def verify(self, records):
        """the count of tensors checked; BadInput at the first difference"""
        for step, name, got in self.noted:
            want = records.get((step, name))
            if want is None:
                raise BadInput(f"samebits' trace has no record {name} at step {step}")
            if got != want:
                raise BadInput(f"step {step} {name}: the tool's tensor is not samebits' "
                               f"(hash {got}, trace {want})")
        return len(self.noted)


class SamebitsRun:
    """samebits' det run of a case, started in the background (PyTorch
    trains meanwhile), and the dumps of step 0 made beside it: the probes
    `dumps` (a list, or "all" for --dump-all), into work/dumps. A context
    manager: leaving it stops a run still going."""

    def __init__(self, build, case, threads, work, data_dir, steps, dumps):
        self.exe = os.path.join(build, "samebits")
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_DYNAMIC="false")
        self.trace = os.path.join(work, "det.trace")
        limit = ["--max-steps", str(steps)] if steps else []
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([self.exe, "run", case, "--threads", str(threads),
                                      "--trace", self.trace, "--data-dir", data_dir] + limit,
                                     env=self.env)
        self.dump_dir = os.path.join(work, "dumps")
        for probe in (["all"] if dumps == "all" else dumps):
            what = ["--dump-all"] if dumps == "all" else ["--dump", probe]
            subprocess.run([self.exe, "run", case, "--threads", str(threads), "--trace",
                            os.path.join(work, "dump.trace"), "--data-dir", data_dir] + what +
                           ["--dump-step", "0", "--dump-dir", self.dump_dir],
                           check=True, env=self.env, stdout=subprocess.DEVNULL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """a run not waited for (PyTorch's side failed) is stopped"""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def finish(self):
        """waits for the run: its trace's records and metric lines"""
        if self.proc.wait() != 0:
            raise BadInput(f"samebits run exited with {self.proc.returncode}")
        self.seconds = time.monotonic() - self.t0
        return read_trace(self.trace)


def run_both(a, dumps, train):
    """samebits' det run of the case of the tool's arguments a (build, case,
    threads, data_dir, steps, work_dir) and PyTorch's training,
    train(dump_dir, checker) -> its result, at once. Returns samebits'
    metric lines and seconds, train's result and seconds, and how many
    tensors were checked; BadInput when one was not samebits'."""
    with tempfile.TemporaryDirectory(prefix="samebits-torch.") as tmp:
        work = a.work_dir or tmp
        os.makedirs(work, exist_ok=True)
        with SamebitsRun(a.build, a.case, a.threads, work, a.data_dir, a.steps, dumps) as run:
            checker = Checker()
            t0 = time.monotonic()
            result = train(run.dump_dir, checker)
            seconds = time.monotonic() - t0
            records, metrics = run.finish()
            return metrics, run.seconds, result, seconds, checker.verify(records)
