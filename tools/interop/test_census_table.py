#!/usr/bin/python3
"""The census command of docs/census.md on this build, shortened to 1 and 2
threads and one run each, its threads axis alone (test_census_isa.py has
the instruction-set axis): it must run every library it documents (OpenBLAS,
oneDNN, PyTorch, samebits det) and give each rows, it must exit 0 (no cell
beyond bound, nondeterministic or crashed), and it must write its table
between the marker lines of a copy of docs/census.md, keeping the rest.

    test_census_table.py BUILD_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "census.md")
BEGIN, END = "<!-- census begin -->", "<!-- census end -->"
LIBRARIES = ("OpenBLAS", "oneDNN", "PyTorch", "samebits det")


def page_check(page):
    """The copy's text outside the markers is docs/census.md's, and between
    them stands a table of 1 and 2 threads."""
    with open(PAGE) as f:
        before = f.read()
    with open(page) as f:
        after = f.read()
    head, rest = after.split(BEGIN, 1)
    table, tail = rest.split(END, 1)
    if head != before.split(BEGIN, 1)[0] or tail != before.split(END, 1)[1]:
        print(f"{page}: the text around the census markers changed")
        return False
    if "| library | output or op | 1 | 2 | worst bound ratio | max ULP |" not in table:
        print(f"{page}: no table of 1 and 2 threads between the markers:\n{table}")
        return False
    return True


def main():
    build, work = sys.argv[1], sys.argv[2]
    out = os.path.join(work, "census.json")
    os.makedirs(work, exist_ok=True)
    page = os.path.join(work, "census.md")
    shutil.copyfile(PAGE, page)
    r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "census_table.py"), build,
                        "--threads", "1,2", "--repeat", "1", "--axes", "threads", "--work-dir", work, "--json", out,
                        "--page", page],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    if r.returncode != 0:
        print(f"census_table.py: exit {r.returncode}")
        return 1
    with open(out) as f:
        libraries = {lib["library"]: len(lib["rows"]) for lib in json.load(f)["libraries"]}
    missing = [name for name in LIBRARIES
               if not any(lib.startswith(name) and rows > 0 for lib, rows in libraries.items())]
    if missing:
        print(f"no rows for {', '.join(missing)} (got {libraries})")
        return 1
    if not page_check(page):
        return 1
    print("census: " + ", ".join(f"{lib} {rows} rows" for lib, rows in libraries.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
