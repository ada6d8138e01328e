#!/usr/bin/python3
"""The char GPT trained by samebits (det) and by PyTorch 1.13 side by side,
from the same initial weights and the same training windows
(tools/interop/README.md).

usage: torch_char_gpt.py --build BUILD [--case CASE] [--steps N] [--threads T]
                         [--data-dir DIR] [--work-dir DIR] [--margin M]

samebits runs the case (`samebits run CASE --trace`, det family) and dumps
step 0 (`--dump-all --dump-step 0`: the initial parameters init.*). PyTorch
trains samebits_torch.gpt meanwhile, the same model, from those parameters on
the same windows: each step's window starts are drawn as samebits draws
them (sb_rng_u32 from libsamebits, stream SB_STREAM_WINDOWS, words 2b and
2b+1 of step s, modulo the start positions), the text is tokenised by
samebits' own sb_text_open, and every step's batch.tokens and batch.targets
are hashed and, when samebits' run is done, checked against its trace; a
difference fails the tool (exit 1). Evaluation as samebits': every eval_every steps, the mean loss
and accuracy over eval_windows consecutive windows of the validation text.

Prints one line per evaluation (both mean training losses since the last
one, both validation losses and accuracies), the unigram entropy of the
validation text, and with --margin M checks that the last training loss of
the two runs differs by at most M nats (exit 1 if not; 2 for bad input).
"""
import argparse
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

from torch_compare import BadInput, library, run_both  # noqa: E402
import numpy as np  # noqa: E402 (torch_compare exits 77 without them)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from samebits_torch import gpt  # noqa: E402

STREAM_WINDOWS = 0x500  # SB_STREAM_WINDOWS (kernels/sb_rng.h); checked by hash


class Text(ctypes.Structure):
    """sb_text (kernels/sb_text.h)"""
    _fields_ = [("n", ctypes.c_int64), ("tokens", ctypes.POINTER(ctypes.c_uint8)),
                ("owns", ctypes.c_int)]


class Library:
    """samebits' text reader and random draws, from its shared library."""

    def __init__(self, build):
        self.lib = library(build)
        self.lib.sb_rng_u32.restype = ctypes.c_uint32
        self.lib.sb_rng_u32.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32,
                                        ctypes.c_uint64]
        self.lib.sb_text_open.argtypes = [ctypes.POINTER(Text), ctypes.c_char_p,
                                          ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        self.lib.sb_text_unigram_entropy.restype = ctypes.c_double
        self.lib.sb_text_unigram_entropy.argtypes = [ctypes.POINTER(Text)]

    def tokens(self, data_dir):
        """The fortunes text as samebits' tokens (numpy uint8), read and
        checked by sb_text_open."""
        t, err = Text(), ctypes.create_string_buffer(512)
        if self.lib.sb_text_open(ctypes.byref(t), b"fortunes", data_dir.encode(), err, 512):
            raise BadInput(err.value.decode())
        out = np.ctypeslib.as_array(t.tokens, shape=(t.n,)).copy()
        self.lib.sb_text_free(ctypes.byref(t))
        return out

    def unigram_entropy(self, tokens):
        buf = np.ascontiguousarray(tokens, dtype=np.uint8)
        t = Text(len(buf), buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), 0)
        return self.lib.sb_text_unigram_entropy(ctypes.byref(t))

    def window_start(self, seed, step, b, starts):
        hi = self.lib.sb_rng_u32(seed, STREAM_WINDOWS, step, 2 * b)
        lo = self.lib.sb_rng_u32(seed, STREAM_WINDOWS, step, 2 * b + 1)
        return ((hi << 32) | lo) % starts


def windows(text, starts_at, t):
    """tokens and targets [len(starts_at)][t] (int64) of windows of text"""
    idx = np.asarray(starts_at, dtype=np.int64)[:, None] + np.arange(t)[None, :]
    return (torch.from_numpy(text[idx].astype(np.int64)),
            torch.from_numpy(text[idx + 1].astype(np.int64)))


def evaluate(p, val, cfg):
    t = cfg["context"]
    logits, targets = [], []
    with torch.no_grad():
        for start in range(0, cfg["eval_windows"], cfg["batch"]):
            w = range(start, min(start + cfg["batch"], cfg["eval_windows"]))
            x, y = windows(val, [i * t for i in w], t)
            logits.append(gpt.forward(p, x, y, cfg)[1])
            targets.append(y.reshape(-1))
    z, y = torch.cat(logits), torch.cat(targets)
    return float(F.cross_entropy(z, y)), float((z.argmax(dim=1) == y).double().mean())


def train_torch(cfg, lib, text, dumps, checker, steps):
    names = gpt.param_names(cfg)
    p = {}
    for k in names:
        w = np.load(os.path.join(dumps, f"init.{k}.npy"))
        checker.same(0, "init." + k, w)
        p[k] = torch.nn.Parameter(torch.from_numpy(w))
    opt = gpt.optimizer(p, cfg)
    train = text[cfg["train"][0]:cfg["train"][1]]
    val = text[cfg["test"][0]:cfg["test"][1]]
    t = cfg["context"]
    starts = len(train) - t
    total = min(steps, cfg["steps"]) if steps else cfg["steps"]
    metrics, losses = [], []
    for step in range(total):
        x, y = windows(train, [lib.window_start(cfg["seed"], step, b, starts)
                               for b in range(cfg["batch"])], t)
        checker.same(step, "batch.tokens", x.reshape(-1).numpy())
        checker.same(step, "batch.targets", y.reshape(-1).numpy())
        loss, _ = gpt.train_step(p, opt, x, y, cfg)
        losses.append(loss)
        if (step + 1) % cfg["eval_every"] == 0 or step + 1 == cfg["steps"]:
            val_loss, val_acc = evaluate(p, val, cfg)
            metrics.append({"steps": step + 1, "train_loss": sum(losses) / len(losses),
                            "test_loss": val_loss, "test_accuracy": val_acc})
            losses = []
            print(f"  PyTorch: {step + 1} steps, train loss {metrics[-1]['train_loss']:.4f}, "
                  f"validation loss {val_loss:.4f}", file=sys.stderr, flush=True)
    return metrics, val


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the build directory (samebits, libsamebits)")
    ap.add_argument("--case", default=os.path.join(HERE, "..", "..", "cases", "char_gpt.case"))
    ap.add_argument("--steps", type=int, default=0, help="stop both runs after N steps")
    ap.add_argument("--threads", type=int, default=2, help="threads of both runs (default 2)")
    ap.add_argument("--data-dir", default=os.environ.get("SAMEBITS_DATA_DIR", "data"))
    ap.add_argument("--work-dir", help="keep the trace and dumps here (default: a temporary one)")
    ap.add_argument("--margin", type=float,
                    help="fail unless the last training losses differ by at most this (nats)")
    a = ap.parse_args(argv[1:])
    try:
        cfg = gpt.read_case(a.case)
        if cfg["family"] != "det":
            raise BadInput(f"{a.case}: [case] family: the comparison is with the det family")
        lib = Library(a.build)
        text = lib.tokens(a.data_dir)
    except (BadInput, gpt.CaseError) as e:
        print(e, file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    try:
        sb_metrics, sb_seconds, (torch_metrics, val), torch_seconds, checked = run_both(
            a, "all", lambda dumps, checker: train_torch(cfg, lib, text, dumps, checker,
                                                         a.steps))
    except BadInput as e:
        print(e, file=sys.stderr)
        return 1

    print(f"case {a.case}: {cfg['layers']} layers, {cfg['heads']} heads, width {cfg['width']}, "
          f"context {cfg['context']}, batch {cfg['batch']}, {a.threads} threads each, at once; "
          f"samebits det {sb_seconds:.1f} s, PyTorch {torch.__version__} {torch_seconds:.1f} s")
    print(f"same bits as samebits' trace: {checked} tensors (initial parameters, every "
          f"step's windows)")
    print(f"unigram entropy of the validation text: {lib.unigram_entropy(val):.4f} nats/char")
    print("steps  train loss (samebits  PyTorch)  val loss (samebits  PyTorch)  "
          "val accuracy (samebits  PyTorch)")
    for s, t in zip(sb_metrics, torch_metrics):
        print(f"{t['steps']:5d}  {s['train_loss']:20.4f} {t['train_loss']:8.4f}"
              f"  {s['test_loss']:18.4f} {t['test_loss']:8.4f}"
              f"  {s['test_accuracy']:22.4f} {t['test_accuracy']:8.4f}")
    if a.margin is None:
        return 0
    if len(sb_metrics) != len(torch_metrics) or not sb_metrics:
        print(f"samebits has {len(sb_metrics)} evaluations, PyTorch {len(torch_metrics)}",
              file=sys.stderr)
        return 1
    diff = abs(sb_metrics[-1]["train_loss"] - torch_metrics[-1]["train_loss"])
    ok = diff <= a.margin
    print(f"last training loss: difference {diff:.4f} nats, margin {a.margin}: "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
