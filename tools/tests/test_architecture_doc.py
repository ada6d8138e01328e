#!/usr/bin/python3
"""docs/ARCHITECTURE.md names every folder of harness/ and kernels/, and
every path it names exists. A folder is named when its path from the source
root (`harness/run`, `kernels/mutants/tests`) appears in the page, alone or
at the start of a longer path. Folders with no file in them (a checkout's
leftovers) and the folders beneath harness/tests/catalogue/inputs (the
malformed inputs: some are folders given where a file is expected) are not
asked for. A path is a `quoted` one under a top folder of the tree
(`harness/run/run.c`, `kernels/model/`), placeholders such as <area> aside.
Prints one line for each folder the page does not name and each path that
does not exist, and exits 1 if there is one.

    test_architecture_doc.py SOURCE_ROOT
"""
import os
import re
import sys

PAGE = os.path.join("docs", "ARCHITECTURE.md")
TOPS = ("harness", "kernels")
DATA = ("harness/tests/catalogue/inputs",)


def folders(root):
    """Every folder under TOPS that holds a file somewhere beneath it."""
    found = []
    for top in TOPS:
        for here, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            rel = os.path.relpath(here, root).replace(os.sep, "/")
            if rel in TOPS:
                continue
            if any(rel.startswith(d + "/") for d in DATA):
                dirs[:] = []
                continue
            if any(files for _, _, files in os.walk(here)):
                found.append(rel)
    return found


def named(text, folder):
    return re.search(r"(?<![\w./-])" + re.escape(folder) + r"(?![\w.-])", text) is not None


def paths(text):
    """The `quoted` paths under a top folder of the tree that the page names."""
    tops = "|".join(re.escape(d) for d in ("harness", "kernels", "tools", "include", "cases",
                                           "golden", "docs"))
    return sorted({m.group(1) for m in re.finditer(rf"`((?:{tops})/[\w./-]*)`", text)})


def main():
    root = sys.argv[1]
    with open(os.path.join(root, PAGE)) as f:
        text = f.read()
    all_folders = folders(root)
    missing = [d for d in all_folders if not named(text, d)]
    for d in missing:
        print(f"{PAGE}: names no {d}/ (add it to the table 'Every folder')")
    named_paths = paths(text)
    gone = [p for p in named_paths if not os.path.exists(os.path.join(root, p))]
    for p in gone:
        print(f"{PAGE}: names {p}, which does not exist")
    if missing or gone:
        return 1
    print(f"{PAGE}: names all {len(all_folders)} folders of {' and '.join(TOPS)}, "
          f"and the {len(named_paths)} paths it names exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
