#!/usr/bin/python3
"""The determinism census of the libraries users train with, on this machine.

    census_table.py BUILD_DIR [--threads LIST] [--repeat R] [--axes threads,isa]
                    [--work-dir DIR] [--json FILE] [--markdown FILE]
                    [--page docs/census.md] [--no-torch]

Two axes (--axes, both by default). threads: every thread count of LIST
(default 1-8), R runs each (default 2). isa: at 1 thread, R runs per value,
each library under its instruction-set variable (OPENBLAS_CORETYPE,
ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY; samebits det under `--isa all`),
every value whose instructions this CPU has (cpuinfo.py ISA_VALUES; the
others are named as not run, never forced), swept with `--env` against the
golden of the default environment. The libraries:

  OpenBLAS   cblas_sgemm at the seed model's GEMM shapes and odd ones
             (BUILD_DIR/tools/interop/samebits-openblas): one row per output
  oneDNN     convolution forward, backward data, backward weights and bias, in
             plain and oneDNN-chosen formats (samebits-onednn): one row per output
  PyTorch    the seed model's first training step (python3 -m samebits_torch
             train, the package in tools/interop/python) as a kind = command
             case written in the work directory: one row per op, the worst
             of its outputs
  samebits   the same step in the det family (cases/keras_mnist_cnn_seed.case,
             `samebits sweep --max-steps 1`): one row per op

Each C program, the PyTorch case and the det case is swept with `--census`
(harness/REPORTS.md, "Census"), which locates every output that moved while
its inputs did not (an origin) and classifies it from dumps. A cell is
`=` (the golden's bits, the default environment's at 1 thread, in every
run), `R` (a reordering: within the op's bound), `U` (unbounded: it moved
and no bound is known for the op), `B` (beyond it), `N` (the runs of that
count differ), `d` (moved downstream of another output), `?` (an origin
not located), `X` (crashed).

Writes the tables as Markdown (the threads table, then one table per
library of its instruction-set values, a column naming what the library
reported it ran where that differs from the value: OpenBLAS's core,
PyTorch's capability; a oneDNN cell names the implementation it chose)
to stdout or --markdown FILE, the data as JSON (--json, a library's
instruction-set axis under its "isa"), and with --page replaces the part of
that file (docs/census.md) between the lines `<!-- census begin -->` and
`<!-- census end -->` with the Markdown (a page without those lines is refused before anything runs). The
header of the table names the CPU (model, the widest vector ISA it has) and
every library's version. A library whose program was not built (OpenBLAS or
oneDNN not found by meson) is left out, and so is PyTorch with --no-torch or
without python3-torch. Exit status 0 when no cell is U, B, N or X, 1 otherwise,
2 when something could not be run.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from cpuinfo import isa_values, machine

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
MARKS = "=dRU?BNX"              # best to worst (harness/report/report_census.c)
FAILING = set("UBNX")
BEGIN, END = "<!-- census begin -->", "<!-- census end -->"


class RunError(Exception):
    pass


def run(argv, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    return r


def env_with(variable, value):
    return dict(os.environ, **{variable: value})


def must(argv, **kw):
    r = run(argv, **kw)
    if r.returncode != 0:
        raise RunError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return r.stdout


def worst(a, b):
    return a if MARKS.index(a) >= MARKS.index(b) else b


def threads_of(spec):
    """1-8 or 1,2,4: the counts (the programs parse the full grammar; this
    script needs the list itself only for the table's columns)."""
    out = []
    for part in spec.split(","):
        lo, _, hi = part.replace("..", "-").partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


# ---- the C programs and the det case: their own census ----------------------------

def census_rows(path, group_by_op):
    """Rows of the census JSON a sweep wrote: per output, or per op (the
    worst cell of its outputs and the largest ratio and ULP)."""
    with open(path) as f:
        censuses = json.load(f)["censuses"]
    rows = {}
    for r in (r for c in censuses for r in c["rows"]):
        key = r["op"] if group_by_op else r["probe"]
        row = rows.setdefault(key, {"row": key, "op": r["op"], "cells": {},
                                    "worst_bound_ratio": None, "max_ulp": None})
        for t, m in r["cells"].items():
            row["cells"][t] = worst(row["cells"].get(t, "="), m)
        for k in ("worst_bound_ratio", "max_ulp"):
            if r[k] is not None:
                row[k] = max(row[k] or 0, r[k])
    return list(rows.values())


def census_sweep(argv, census):
    """Runs a sweep (argv) that writes its census JSON to `census`: exit 1
    (a cell that fails) is the census's to show, 2 or no census an error."""
    r = run(argv + ["--census-json", census])
    if r.returncode == 2 or not os.path.exists(census):
        raise RunError(f"{' '.join(argv[:3])}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return census


def isa_census(variable, sweep, census, group_by_op, values=None):
    """The isa axis of one library: its sweep (argv without the axis's
    options) at 1 thread under every value of `variable` this CPU can run
    (`values`: the runnable ones, from cpuinfo.py; None: the sweep's own
    --isa all), its census rows with one cell per value."""
    runnable, skipped = isa_values(variable) if values is None else (values, [])
    axis = {"variable": variable, "values": runnable, "skipped": skipped, "rows": []}
    if not runnable:
        return axis
    option = ["--isa", "all"] if variable == "SAMEBITS_ISA" else \
        ["--env", f"{variable}={','.join(runnable)}"]
    rows = census_rows(census_sweep(sweep + ["--threads", "1"] + option, census), group_by_op)
    prefix = f"1 {variable}="   # the census column of a value (harness/REPORTS.md, "Census")
    for r in rows:
        r["cells"] = {k[len(prefix):]: m for k, m in r["cells"].items() if k.startswith(prefix)}
    if rows:        # --isa all: the values the harness found this CPU to run
        axis["values"] = [v for v in runnable if v in rows[0]["cells"]]
        axis["skipped"] += [(v, ["not run by --isa all"]) for v in runnable
                            if v not in rows[0]["cells"]]
    axis["rows"] = rows
    return axis


def program_rows(build, name, work, threads, repeat, axes, variable):
    """(`PROG impls` lines, census rows of the threads axis, the isa axis
    under `variable` or None) of BUILD/tools/interop/NAME, or None when it
    was not built."""
    prog = os.path.join(build, "tools", "interop", name)
    if not os.path.exists(prog):
        return None
    work = os.path.join(work, name)
    impls = must([prog, "impls"]).splitlines()
    golden = os.path.join(work, "golden")           # one NAME.golden per kernel
    os.makedirs(golden, exist_ok=True)
    # the golden of this build, remade on purpose every time (--update)
    must([prog, "golden", "--update", "--golden-dir", golden])
    sweep = [prog, "sweep", "--repeat", str(repeat), "--golden-dir", golden]
    rows = census_rows(census_sweep(sweep + ["--threads", threads, "--work-dir",
                                             os.path.join(work, "sweep")],
                                    os.path.join(work, "census.json")), False) \
        if "threads" in axes else []
    isa = None
    if "isa" in axes:
        isa = isa_census(variable, sweep + ["--work-dir", os.path.join(work, "isa")],
                         os.path.join(work, "isa.census.json"), False)
        isa["impls"] = {v: must([prog, "impls"], env=env_with(variable, v)).splitlines()
                        for v in isa["values"]}
    return impls, rows, isa


def openblas_core(impls_line):
    """"OpenBLAS 0.3.21 ... MAX_THREADS=64, core Haswell": the core it loaded."""
    return impls_line.rpartition("core ")[2].strip()


def openblas(build, work, threads, repeat, axes):
    got = program_rows(build, "samebits-openblas", work, threads, repeat, axes,
                       "OPENBLAS_CORETYPE")
    if not got:
        return None
    impls, rows, isa = got
    lib = {"library": "OpenBLAS cblas_sgemm", "version": impls[0].strip(), "rows": rows}
    if isa:
        isa["default"] = f"core {openblas_core(impls[0])}"
        isa["ran"] = {v: openblas_core(lines[0]) for v, lines in isa.pop("impls").items()}
        lib["isa"] = isa
    return lib


def onednn_chosen(impls):
    """"conv2.plain.fwd  x64:gemm:jit" lines: primitive to implementation."""
    return {k: v.strip() for k, v in (line.split(None, 1) for line in impls[1:] if line.strip())}


def onednn_impl(chosen, row):
    """conv2.plain.bwd_weights.dW comes from conv2.plain.bwd_weights."""
    return chosen.get(".".join(row.split(".")[:3]), "")


def onednn(build, work, threads, repeat, axes):
    got = program_rows(build, "samebits-onednn", work, threads, repeat, axes,
                       "ONEDNN_MAX_CPU_ISA")
    if not got:
        return None
    impls, rows, isa = got
    chosen = onednn_chosen(impls)
    for r in rows:      # each output row names its primitive's implementation
        r["impl"] = onednn_impl(chosen, r["row"])
    env = os.environ.get("ONEDNN_MAX_CPU_ISA")
    lib = {"library": "oneDNN convolution", "version": impls[0].strip() +
           (f", ONEDNN_MAX_CPU_ISA={env}" if env else ""), "rows": rows}
    if isa:
        by_value = {v: onednn_chosen(lines) for v, lines in isa.pop("impls").items()}
        for r in isa["rows"]:
            r["impls"] = {v: onednn_impl(c, r["row"]) for v, c in by_value.items()}
        isa["default"] = env or "no cap"
        lib["isa"] = isa
    return lib


def samebits_det(build, work, threads, repeat, axes):
    exe = os.path.join(build, "samebits")
    sweep = [exe, "sweep", os.path.join(SRC, "cases", "keras_mnist_cnn_seed.case"),
             "--max-steps", "1", "--repeat", str(repeat)]
    rows = census_rows(census_sweep(sweep + ["--threads", threads, "--work-dir",
                                             os.path.join(work, "det")],
                                    os.path.join(work, "det.census.json")), True) \
        if "threads" in axes else []
    version = must([exe, "--version"]).strip()
    lib = {"library": "samebits det (seed model, step 0)", "version": version, "rows": rows}
    if "isa" in axes:
        # `--isa all`: every path of samebits' own this CPU has (harness/CLI.md)
        lib["isa"] = isa_census("SAMEBITS_ISA", sweep + ["--work-dir",
                                                         os.path.join(work, "det.isa")],
                                os.path.join(work, "det.isa.census.json"), True,
                                values=["avx512", "avx2", "baseline"])
        lib["isa"]["default"] = "the widest"
    return lib


# ---- PyTorch: its seed model as a kind = command case, swept with --census ------

TORCH_CASE = """[case]
name = census_torch_seed
kind = command
family = loose
seed = 0

[command]
dir = {dir}
run = /usr/bin/python3 -m samebits_torch train --threads {{threads}} --steps 1 --trace {{trace}} --data-dir {data}
dump = --dump {{dump_probe}} --dump-step {{dump_step}} --dump-dir {{dump_dir}}
version = 1

[sweep]
threads = 1
expect = identical|reordering
golden = {golden}
"""


def torch_capability(env=None):
    """What ATen dispatches to ("AVX2", "NO AVX"), as torch.__config__ says it."""
    out = must(["/usr/bin/python3", "-c", "import torch; print(torch.__config__.show())"],
               env=env)
    return next((line.split(":", 1)[1].strip() for line in out.splitlines()
                 if "CPU capability usage" in line), "unknown")


def torch_census(samebits, work, threads, repeat, axes):
    """The seed model's first training step (python3 -m samebits_torch train,
    the package in tools/interop/python) as a kind = command case
    (harness/PRODUCERS.md) written in WORK: its golden made by `samebits
    golden` at 1 thread, then swept with --census-json like the det case."""
    have = run(["/usr/bin/python3", "-c", "import torch, xxhash; print(torch.__version__)"])
    if have.returncode != 0:
        return None
    os.makedirs(work, exist_ok=True)
    case = os.path.join(work, "census_torch_seed.case")
    data = os.environ.get("SAMEBITS_DATA_DIR", os.path.join(SRC, "data"))
    with open(case, "w") as f:
        f.write(TORCH_CASE.format(dir=os.path.join(HERE, "python"), data=shlex.quote(data),
                                  golden=os.path.join(work, "census_torch_seed.golden")))
    # the golden of this machine's PyTorch, remade on purpose every time (--update)
    must([samebits, "golden", "--update", case])
    sweep = [samebits, "sweep", case, "--repeat", str(repeat)]
    rows = census_rows(census_sweep(sweep + ["--threads", threads, "--work-dir",
                                             os.path.join(work, "sweep")],
                                    os.path.join(work, "census.json")), True) \
        if "threads" in axes else []
    lib = {"library": "PyTorch (seed model, step 0)",
           "version": f"PyTorch {have.stdout.strip()}", "rows": rows}
    if "isa" in axes:
        isa = isa_census("ATEN_CPU_CAPABILITY", sweep + ["--work-dir", os.path.join(work, "isa")],
                         os.path.join(work, "isa.census.json"), True)
        isa["default"] = torch_capability()
        isa["ran"] = {v: torch_capability(env_with("ATEN_CPU_CAPABILITY", v))
                      for v in isa["values"]}
        lib["isa"] = isa
    return lib


# ---- output --------------------------------------------------------------------

def numbers(r):
    ratio = "-" if r["worst_bound_ratio"] is None else f"{r['worst_bound_ratio']:.3g}"
    ulp = "-" if r["max_ulp"] is None else f"{r['max_ulp']:.0f}"
    return f" | {ratio} | {ulp} |"


def threads_markdown(census):
    threads = census["threads"]
    lines = ["| library | output or op | " + " | ".join(str(n) for n in threads) +
             " | worst bound ratio | max ULP |",
             "|---|---|" + "---|" * len(threads) + "---|---|"]
    for lib in census["libraries"]:
        for r in lib["rows"]:
            label = f"`{r['row']}`" + (f" ({r['impl']})" if r.get("impl") else "")
            lines.append(f"| {lib['library']} | {label} | " +
                         " | ".join(r["cells"].get(str(n), "-") for n in threads) +
                         numbers(r))
    return lines + ["", "`=` the 1-thread bits in every run, `R` reordering (within the op's "
                    "bound), `U` unbounded (no bound known for the op), `B` beyond bound, `N` "
                    "the runs of that count differ, `d` moved downstream of another output, "
                    "`X` crashed."]


def isa_markdown(census):
    """One table per library: a column per value of its variable, each cell
    the mark at 1 thread against the golden of the default environment."""
    lines = [f"At 1 thread, {census['repeat']} runs per value: each library under its "
             "instruction-set variable, every value this CPU has the instructions for, "
             "compared with the golden of the default environment (`=` its bits; marks as "
             "above). A column says what the library reported it ran where that is not the "
             "value's name; a oneDNN cell names the implementation it chose."]
    for lib in census["libraries"]:
        isa = lib.get("isa")
        if not isa:
            continue
        var, values, ran = isa["variable"], isa["values"], isa.get("ran", {})
        skipped = "; not run: " + ", ".join(f"{v} (the CPU lacks {' '.join(lacks)})"
                                             for v, lacks in isa["skipped"]) \
            if isa["skipped"] else ""
        lines += ["", f"{lib['library']} under `{var}` (default: {isa['default']}){skipped}.",
                  ""]
        if not values:
            continue

        def head(v):
            said = ran.get(v)
            return f"{v}" + (f" (ran {said})" if said and said.lower() != v.lower() else "")
        lines += ["| output or op | " + " | ".join(head(v) for v in values) +
                  " | worst bound ratio | max ULP |",
                  "|---|" + "---|" * len(values) + "---|---|"]
        for r in isa["rows"]:
            impls = r.get("impls", {})
            lines.append(f"| `{r['row']}` | " + " | ".join(
                r["cells"].get(v, "-") + (f" {impls[v]}" if impls.get(v) else "")
                for v in values) + numbers(r))
    return lines


def markdown(census, axes):
    m = census["machine"]
    lines = [f"Generated by `tools/interop/census_table.py` on {m['cpu']} ({m['isa']}, "
             f"{m['cores']} cores), {census['repeat']} runs per configuration; "
             + "; ".join(lib["version"] for lib in census["libraries"]) + ".", ""]
    if "threads" in axes:
        lines += threads_markdown(census)
    if "isa" in axes:
        lines += ([""] if "threads" in axes else []) + isa_markdown(census)
    return "\n".join(lines) + "\n"


def page_split(path):
    """The text of the page before and after the table's marker lines."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}")
    if BEGIN not in old or END not in old:
        raise RunError(f"{path}: no {BEGIN} ... {END} lines to replace")
    head, rest = old.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head, tail


def page_write(path, head, text, tail):
    with open(path + ".tmp", "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--threads", default="1-8")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work-dir")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--page")
    ap.add_argument("--axes", default="threads,isa")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    axes = a.axes.split(",")
    if not axes or any(x not in ("threads", "isa") for x in axes):
        ap.error(f"--axes {a.axes}: a list of threads and isa")
    build = os.path.abspath(a.build)
    # the det case and PyTorch read MNIST from here (tools/fetch-data)
    os.environ.setdefault("SAMEBITS_DATA_DIR", os.path.join(SRC, "data"))
    work = a.work_dir or tempfile.mkdtemp(prefix="samebits.census.")
    threads = threads_of(a.threads)
    try:
        page = page_split(a.page) if a.page else None
        libraries = [openblas(build, work, a.threads, a.repeat, axes),
                     onednn(build, work, a.threads, a.repeat, axes),
                     None if a.no_torch else torch_census(os.path.join(build, "samebits"),
                                                          os.path.join(work, "torch"),
                                                          a.threads, a.repeat, axes),
                     samebits_det(build, work, a.threads, a.repeat, axes)]
    except RunError as e:
        print(f"census_table: {e}", file=sys.stderr)
        return 2
    census = {"machine": machine(), "threads": threads if "threads" in axes else [],
              "repeat": a.repeat, "libraries": [lib for lib in libraries if lib]}
    text = markdown(census, axes)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(census, f, indent=1)
            f.write("\n")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if page:
        page_write(a.page, page[0], text, page[1])
    if not (a.markdown or a.page):
        sys.stdout.write(text)
    if not a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    bad = any(m in FAILING for lib in census["libraries"]
              for r in lib["rows"] + lib.get("isa", {}).get("rows", [])
              for m in r["cells"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
