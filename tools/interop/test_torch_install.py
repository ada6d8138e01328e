#!/usr/bin/python3
"""samebits_torch installs as a user installs it, offline: a fresh venv on
Debian's python3 with its site packages (torch, NumPy, xxhash), then
`pip install --no-index --no-build-isolation` of the package directory
(a copy of it, so the build leaves nothing in the source tree). The
installed package must import from the venv, not from the tree, and its
command line must print the shared test vectors' hashes exactly as
libsamebits does (HASH_VECTORS_PROGRAM, tools/interop/hash_vectors.c).

    test_torch_install.py HASH_VECTORS_PROGRAM WORK_DIR

Exit 0 pass, 1 fail, 77 (skipped) without python3-venv, python3-setuptools,
python3-torch or python3-xxhash.
"""
import importlib.util
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "python")


def main():
    c_program, work = sys.argv[1], sys.argv[2]
    for module, package in (("venv", "python3-venv"), ("ensurepip", "python3-venv"),
                            ("setuptools", "python3-setuptools"), ("torch", "python3-torch"),
                            ("xxhash", "python3-xxhash")):
        if importlib.util.find_spec(module) is None:
            print(f"skipped: no {module} (apt-get install {package})")
            return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src = os.path.join(work, "src")
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info",
                                                                 "build"))
    venv = os.path.join(work, "venv")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                   check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--no-cache-dir", "--no-index",
                    "--no-build-isolation", src], check=True, cwd=work)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [python, "-c", "import samebits_torch, torch; from samebits_torch import Tracer, op, "
         "source; print(samebits_torch.__file__)"],
        stdout=subprocess.PIPE, text=True, check=True, cwd=work, env=env).stdout.strip()
    print("imported from", where)
    if not where.startswith(os.path.realpath(venv)) and not where.startswith(venv):
        print(f"FAIL: samebits_torch imported from {where}, not from the venv")
        return 1
    py = subprocess.run([os.path.join(venv, "bin", "samebits-torch"), "hash-vectors"],
                        stdout=subprocess.PIPE, text=True, check=True, cwd=work,
                        env=env).stdout.splitlines()
    c = subprocess.run([c_program], stdout=subprocess.PIPE, text=True,
                       check=True).stdout.splitlines()
    for line in c:
        print("C     ", line)
    for line in py:
        print("Python", line)
    if len(c) < 8 or c != py:
        print(f"FAIL: the installed package's hashes differ from libsamebits' "
              f"({len(c)} C vectors, {len(py)} Python vectors)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
