#!/usr/bin/python3
"""The README's census command on this build, shortened to 1 and 2 threads
and one run each: it must run every library it documents (OpenBLAS, oneDNN,
PyTorch, samebits det) and give each rows, and it must exit 0 (no cell
beyond bound, nondeterministic or crashed).

    test_census_table.py BUILD_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("OpenBLAS", "oneDNN", "PyTorch", "samebits det")


def main():
    build, work = sys.argv[1], sys.argv[2]
    out = os.path.join(work, "census.json")
    r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "census_table.py"), build,
                        "--threads", "1,2", "--repeat", "1", "--work-dir", work, "--json", out],
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
    print("census: " + ", ".join(f"{lib} {rows} rows" for lib, rows in libraries.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
