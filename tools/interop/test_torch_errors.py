#!/usr/bin/python3
"""The errors of `python3 -m samebits_torch run`, each in its own process:

1. a script that raises (RuntimeError from torch, ValueError, OSError), has
   a syntax error or exits with a status other than 0: exit 3, one line on
   stderr naming the exception (or the status) and the script's line, the
   traceback in TRACE.traceback, no trace; `--traceback` also prints it;
2. usage and input errors of the command: --threads 0 and 65 (a trace
   holds 1 to 64), a trace in a missing directory, an unknown command, a
   missing script: exit 2 and one line.

    test_torch_errors.py WORK_DIR

Exit 0 pass, 1 fail, 77 (skipped) without python3-torch or python3-xxhash.
"""
import os
import subprocess
import sys

from torch_test_support import require_modules

SCRIPT = '''import sys
import torch
def step(kind):
    if kind == "runtime":
        torch.ones(2) @ torch.ones(3)
    if kind == "value":
        raise ValueError("no such setting\\nsecond line")
    if kind == "os":
        open("/nonexistent/data.bin")
    if kind == "exit":
        sys.exit(5)
step(sys.argv[1])
'''
# kind -> (what the line names, the script's line it names)
FAILURES = {"runtime": ("raised RuntimeError: ", 5),
            "value": ("raised ValueError: no such setting;", 7),
            "os": ("raised FileNotFoundError: ", 9),
            "exit": ("exited with status 5;", 11)}
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def run(*args):
    r = subprocess.run([sys.executable, "-m", "samebits_torch", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print(f"$ samebits_torch {' '.join(args)}\n{r.stderr}", end="")
    return r.returncode, r.stderr


def main():
    work = sys.argv[1]
    require_modules()
    os.makedirs(work, exist_ok=True)
    script = os.path.join(work, "failing.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    broken = os.path.join(work, "broken.py")
    with open(broken, "w") as f:
        f.write("x = (\n")
    trace = os.path.join(work, "t.trace")
    log = trace + ".traceback"
    cases = [(script, kind, what, f"failing.py:{line}: ")
             for kind, (what, line) in FAILURES.items()]
    cases.append((broken, None, "raised SyntaxError: ", "broken.py:1: "))
    for path, kind, what, where in cases:
        for f in (trace, log):
            if os.path.exists(f):
                os.remove(f)
        rc, err = run("run", path, "--threads", "1", "--trace", trace,
                      *(["--", kind] if kind else []))
        lines = err.splitlines()
        check(rc == 3, f"{kind or 'syntax'}: exit {rc}, not 3")
        check(len(lines) == 1 and what in err and where in err and log in err,
              f"{kind or 'syntax'}: not one line naming {what!r} at {where} and the log")
        check(not os.path.exists(trace), f"{kind or 'syntax'}: a trace was written")
        with open(log) as f:
            check("Traceback" in f.read(), f"{kind or 'syntax'}: no traceback in {log}")
    rc, err = run("run", script, "--threads", "1", "--trace", trace, "--traceback", "--",
                  "value")
    check(rc == 3 and "Traceback (most recent call last)" in err and "second line" in err,
          "--traceback does not print the traceback")
    for args in (("run", script, "--threads", "65", "--trace", trace),
                 ("run", script, "--threads", "0", "--trace", trace),
                 ("train", "--threads", "65", "--trace", trace),
                 ("run", script, "--threads", "1", "--trace", os.path.join(work, "no", "t")),
                 ("run", os.path.join(work, "none.py"), "--threads", "1", "--trace", trace),
                 ("frob",)):
        rc, err = run(*args)
        check(rc == 2 and len(err.splitlines()) == 1, f"{' '.join(args)}: exit {rc}, "
              f"{len(err.splitlines())} lines, not 2 and one line")
    rc, err = run("run", script, "--threads", "65", "--trace", trace)
    check("1 to 64" in err, "--threads 65 is not refused by the trace's range")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
