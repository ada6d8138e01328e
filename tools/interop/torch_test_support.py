"""What the PyTorch interop tests share: the modules they need, a trace's
records, and `samebits diff` with its output shown."""
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


def read_records(path):
    """[(step, name, op, hash, [inputs], dtype)] of a trace."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 7 and fields[0].isdigit():
                inputs = [] if fields[6] == "-" else fields[6].split(",")
                out.append((int(fields[0]), fields[1], fields[2], fields[5], inputs, fields[3]))
    return out


def diff(samebits, *args):
    """Runs `samebits diff ARGS`, prints its output, returns (exit status, output)."""
    r = subprocess.run([samebits, "diff", *args], stdout=subprocess.PIPE, text=True)
    sys.stdout.write(r.stdout)
    return r.returncode, r.stdout
