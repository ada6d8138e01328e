#!/usr/bin/python3
"""The shared hash test vectors: libsamebits (hash_vectors.c) and the
samebits_torch package (python/samebits_torch/hashing.py) must print the
same name and hash for every vector.

    test_hash_vectors.py HASH_VECTORS_PROGRAM

Exit 0 equal, 1 different, 77 (skipped) without python3-xxhash or NumPy.
"""
import os
import subprocess
import sys

try:
    import numpy  # noqa: F401
    import xxhash  # noqa: F401
except ImportError as e:
    print(f"skipped: {e.name} is missing (apt-get install python3-xxhash python3-numpy)")
    sys.exit(77)

# the package from the tree (test_torch_install.py checks the installed one);
# its hashing needs no torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import samebits_torch  # noqa: E402


def main():
    c_lines = subprocess.run([sys.argv[1]], stdout=subprocess.PIPE, text=True,
                             check=True).stdout.splitlines()
    py_lines = [f"{name} {samebits_torch.tensor_hash(a).hex()}"
                for name, a in samebits_torch.test_vectors()]
    for line in c_lines:
        print("C     ", line)
    for line in py_lines:
        print("Python", line)
    if len(c_lines) != len(py_lines) or len(c_lines) < 8:
        print(f"FAIL: {len(c_lines)} C vectors, {len(py_lines)} Python vectors")
        return 1
    bad = [(c, p) for c, p in zip(c_lines, py_lines) if c != p]
    for c, p in bad:
        print(f"FAIL: C {c} / Python {p}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
