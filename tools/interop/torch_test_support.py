"""What the PyTorch interop tests share: the modules they need, and
`samebits diff` with its output shown."""
import subprocess
import sys


def require_modules():
    """Exits 77 (skipped) when python3-torch, python3-xxhash or NumPy is missing."""
    for module in ("torch", "xxhash", "numpy"):
        try:
            __import__(module)
        except ImportError:
            print(f"skipped: {module} is missing (apt-get install python3-torch python3-xxhash)")
            sys.exit(77)


def diff(samebits, *args):
    """Runs `samebits diff ARGS`, prints its output, returns (exit status, output)."""
    r = subprocess.run([samebits, "diff", *args], stdout=subprocess.PIPE, text=True)
    sys.stdout.write(r.stdout)
    return r.returncode, r.stdout
