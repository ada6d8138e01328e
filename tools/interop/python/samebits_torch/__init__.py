"""samebits traces of PyTorch training runs.

A trace (harness/FORMATS.md) lists every tensor of a run in program order
with its tree XXH3-128 hash, so `samebits diff` can name the first probe
where two runs part ways, and whether that op's inputs were the same in both.

    Tracer(path, case, ...)     a context manager that traces every op, module
                                output, gradient and optimiser update of the
                                training loop inside it and writes the trace
    source(name, tensor)        names data entering the run
    op(name, bound=None)        a function of tensors traced as one op
    tensor_hash(array)          the hash libsamebits computes
    Trace                       records in program order, written as a trace

Command line: `python3 -m samebits_torch run SCRIPT.py --threads N --trace
FILE` traces a training script as it is (`python3 -m samebits_torch --help`).
"""
from .hashing import canonical, tensor_hash, test_vectors
from .trace import EXPORTER_VERSION, UNTRACED, Trace

_TRACER_NAMES = ("Tracer", "active", "op", "source")


def __getattr__(name):
    # the tracer needs torch, which takes seconds to import: only on use
    if name in _TRACER_NAMES:
        from . import tracer
        return getattr(tracer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Tracer", "Trace", "UNTRACED", "EXPORTER_VERSION", "active", "canonical", "op",
           "source", "tensor_hash", "test_vectors"]
__version__ = EXPORTER_VERSION
