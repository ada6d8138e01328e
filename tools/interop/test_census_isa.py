#!/usr/bin/python3
"""The census's instruction-set axis (census_table.py --axes isa) on
OpenBLAS and oneDNN, 1 run per value: every value of OPENBLAS_CORETYPE and
ONEDNN_MAX_CPU_ISA this CPU has the instructions for gets a cell in every
row, none beyond bound, nondeterministic or crashed; OpenBLAS loads the
core each column names; oneDNN chooses no implementation above the cap of
its column; a value the CPU lacks is not run (a line says so). Exit 77
(skipped) when neither program was built.

    test_census_isa.py BUILD_DIR WORK_DIR
"""
import os
import re
import shutil
import sys

import census_table
from cpuinfo import isa_values

ONEDNN_LEVELS = ("sse41", "avx", "avx2", "avx512_core")


def onednn_level(impl):
    """The rank in ONEDNN_LEVELS of "jit:avx512_core" or "jit_1x1:avx2",
    None for an implementation that names none (x64:gemm:jit)."""
    m = re.match(r"jit[a-z0-9_]*:([a-z0-9_]+)", impl)
    ranks = [i for i, name in enumerate(ONEDNN_LEVELS) if m and m.group(1).startswith(name)]
    return max(ranks) if ranks else None


def check(lib):
    """Problems of one library's isa axis (empty: none)."""
    isa, bad = lib["isa"], []
    runnable, skipped = isa_values(isa["variable"])
    for value, lacks in skipped:
        print(f"{isa['variable']}={value}: not run, the CPU lacks {' '.join(lacks)}")
    if isa["values"] != runnable:
        bad.append(f"columns {isa['values']}, the CPU runs {runnable}")
    if not isa["rows"]:
        bad.append("no rows")
    for r in isa["rows"]:
        for v in runnable:
            mark = r["cells"].get(v)
            if mark is None or mark in census_table.FAILING:
                bad.append(f"{r['row']} under {v}: {mark}")
            impl = r.get("impls", {}).get(v, "")
            level = onednn_level(impl)
            if level is not None and level > ONEDNN_LEVELS.index(v.lower()):
                bad.append(f"{r['row']} under ONEDNN_MAX_CPU_ISA={v} ran {impl}")
    for v, core in isa.get("ran", {}).items():
        if core != v:
            bad.append(f"OPENBLAS_CORETYPE={v} loaded core {core}")
    return bad


def main():
    build, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    libs = [lib for lib in (census_table.openblas(build, work, "1", 1, ["isa"]),
                            census_table.onednn(build, work, "1", 1, ["isa"])) if lib]
    if not libs:
        print("neither samebits-openblas nor samebits-onednn was built")
        return 77
    census = {"machine": census_table.machine(), "threads": [], "repeat": 1, "libraries": libs}
    text = census_table.markdown(census, ["isa"])
    print(text)
    failed = False
    for lib in libs:
        bad = check(lib)
        values = lib["isa"]["values"]
        if values and not any(line.startswith("| output or op | " + values[0])
                              for line in text.splitlines()):
            bad.append("no table of its values in the Markdown")
        for b in bad:
            print(f"{lib['library']}: {b}")
        failed = failed or bool(bad)
        if not bad:
            print(f"{lib['library']}: {len(lib['isa']['rows'])} rows under "
                  f"{lib['isa']['variable']} = {', '.join(values)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
