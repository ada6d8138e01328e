#!/usr/bin/python3
"""tools/nightly.d/page.py's matrix on crafted builds: the batch-invariance
column always, the rank-count column only where a build ran the ranks axis,
each with its case's runs on that axis over every build; a run resumed at a
step kept apart from the plain run of its thread count (its own key and id).

    test_matrix_page.py SRC_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "tools", "nightly.d"))
import page  # noqa: E402


def run(threads, verdict, as_expected=True, **axis):
    return {"threads": threads, "repeat": 1, "verdict": verdict, "as_expected": as_expected,
            **axis}


def build(name, ranks_ok=True):
    return {"name": name, "status": "ok", "cases": [
        {"name": "plain", "runs": [run(1, "identical"), run(2, "identical")]},
        {"name": "batched", "runs": [run(1, "identical"),
                                     run(2, "identical", axis="batch", batch=16)]},
        {"name": "ranked", "runs": [
            run(1, "identical", axis="ranks", ranks=1),
            run(2, "identical", axis="ranks", ranks=3),
            run(1, "reordering" if not ranks_ok else "identical", as_expected=ranks_ok,
                axis="ranks", ranks=2)]},
    ]}


def cells(html, axis):
    """data-case -> the cell's outcome and text, for the axis's column."""
    out = {}
    for part in html.split("<td ")[1:]:
        if f"data-{axis}-outcome=" not in part:
            continue
        outcome = part.split(f'data-{axis}-outcome="')[1].split('"')[0]
        case = part.split('data-case="')[1].split('"')[0] if 'data-case="' in part else "-"
        out.setdefault(case, []).append((outcome, part.split("</td>")[0]))
    return out


html = page.matrix_html([build("gccish"), build("clangish", ranks_ok=False)])
assert "<th scope=\"col\">rank-count invariance</th>" in html, html
ranks = cells(html, "ranks")
outcome, text = ranks["ranked"][0]
assert outcome == "off", ranks
assert "not as expected (1 of 6 runs)" in text, text
assert "identical at ranks x threads 1x1, 2x1, 3x2" in text, text
assert "reordering at ranks x threads 2x1" in text and "on 2 builds" in text, text
assert [o for o, _ in ranks["-"]] == ["none", "none"], ranks   # plain and batched
batch = cells(html, "batch")
assert batch["batched"][0][0] == "ok" and "identical at batch 16 on 2 builds" in batch["batched"][0][1]
assert [o for o, _ in batch["-"]] == ["none", "none"], batch  # plain and ranked

# no build ran the ranks axis (no MPI): no rank-count column
builds = [build("gccish")]
builds[0]["cases"] = builds[0]["cases"][:2]
html = page.matrix_html(builds)
assert "rank-count invariance" not in html and "data-ranks-outcome" not in html, html
assert "batch invariance" in html

# a run resumed at step 3 and the plain run of its thread count and repeat are two runs:
# their keys, their details' ids and their words differ, and the cell names both
plain, resumed = run(2, "identical"), run(2, "beyond-bound", False, axis="resume", resume_at=3)
assert page.config_name(plain) == "threads=2" and page.config_name(resumed) == "resume=3 threads=2"
assert page.run_key("b", "c", plain) != page.run_key("b", "c", resumed)
assert page.run_id("b", "c", plain) != page.run_id("b", "c", resumed)
assert page.run_config(resumed) == "resumed at step 3, 2 threads", page.run_config(resumed)
cell = page.cell_html({"name": "b", "status": "ok"}, "c", [plain, resumed])
assert "identical at 2; beyond-bound at resumed at step x threads 3x2" in cell, cell
assert f'href="#{page.run_id("b", "c", resumed)}"' in cell, cell
print("ok")
