"""The samebits trace format (harness/FORMATS.md "Traces and golden files"),
written from Python."""
import os

import xxhash

from .hashing import DTYPE_CODES, DTYPE_NAMES, canonical, tensor_hash

EXPORTER_VERSION = "3"
UNTRACED = "?"          # an input no traced op made (SB_TRACE_UNTRACED)
MAX_INPUTS = 64         # the most inputs a record may list
MAX_THREADS = 64        # SB_MAX_THREADS: the thread counts a trace may hold


def token(s, what):
    if not s or any(c in s for c in " ,\n") or not s.isprintable():
        raise ValueError(f"{what} must be printable with no space or comma: {s!r}")
    return s


class Trace:
    """The records of one run, in program order, and their text form."""

    def __init__(self):
        self.records = []

    def add(self, step, name, op, array, inputs=()):
        """inputs: probe names, UNTRACED for an input no traced op made.
        Returns the tensor's hash."""
        if name == UNTRACED:
            raise ValueError(f"{UNTRACED!r} marks untraced inputs: no probe may be named so")
        if len(inputs) > MAX_INPUTS:
            raise ValueError(f"probe {name}: {len(inputs)} inputs, at most {MAX_INPUTS}")
        a = canonical(array)
        shape = "x".join(str(d) for d in a.shape) if a.ndim else "scalar"
        digest = tensor_hash(a)
        self.records.append(" ".join([
            str(int(step)), token(name, "probe name"), token(op, "op name"),
            DTYPE_NAMES[DTYPE_CODES[a.dtype]], shape, digest.hex(),
            ",".join(token(i, "input name") for i in inputs) if inputs else "-"]))
        return digest

    def write(self, path, case, digest_text, family, threads, build):
        """family: ref, det or loose (loose: bits may follow the thread count);
        the digest is the XXH3-128 of digest_text, which should list whatever
        decides the records (not the thread count)."""
        if not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"{threads} threads: a trace holds 1 to {MAX_THREADS}")
        digest = xxhash.xxh3_128(digest_text.encode()).hexdigest()
        lines = ["samebits-trace 1", f"case {token(case, 'case name')}", f"digest {digest}",
                 f"samebits samebits_torch-{EXPORTER_VERSION}", f"reference {family} {threads}",
                 f"build {build}"] + self.records + [f"end {len(self.records)} 0"]
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
