#!/usr/bin/env python3
"""The nightly report of tools/nightly: one JSON file and one HTML page.

Reads the build manifest (builds.tsv) and each build's sweep report
(sweeps/<build>.json, harness/REPORTS.md schema) with the kept traces of its
training runs (sweeps/<build>/<case>.t<T>.r<R>.trace, for the per-epoch
metrics), plus the previous nights' JSON files, and writes nightly.json and a
self-contained nightly.html (plots drawn by gnuplot as inline SVG).
Exit status 0 when every cell is as expected (or not reached within its
build's step limit) and every build built, else 1.
"""
import argparse
import glob
import html
import json
import os
import re
import subprocess
import sys

import census

FORMAT_VERSION = 1
EPOCH_LINE = re.compile(r"^epoch (\d+) steps (\d+) train_loss (\S+) test_loss (\S+) test_accuracy (\S+)$")


def read_manifest(path):
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    for r in rows:
        r["build_seconds"] = float(r["build_seconds"])
        r["sweep_seconds"] = float(r["sweep_seconds"])
    return rows


def read_epochs(trace_path, max_steps):
    """Per-epoch metrics from a trace's `epoch` lines (harness/FORMATS.md). A
    run truncated at max_steps keeps the epochs that ended before it: the last
    one is its own partly done epoch, which the sweep did not compare."""
    epochs = []
    try:
        with open(trace_path) as f:
            for line in f:
                m = EPOCH_LINE.match(line.rstrip("\n"))
                if m:
                    epochs.append({"epoch": int(m[1]), "steps": int(m[2]),
                                   "train_loss": float(m[3]), "test_loss": float(m[4]),
                                   "test_accuracy": float(m[5])})
    except OSError:
        return None
    return [e for e in epochs if not max_steps or e["steps"] < max_steps]


def load_builds(manifest, sweeps):
    builds = []
    for row in manifest:
        b = {"name": row["name"], "compiler": row["compiler"], "optimization": row["optimization"],
             "target": row["target"], "max_steps": int(row["max_steps"]) or None,
             "status": row["status"],
             "build_seconds": row["build_seconds"], "sweep_seconds": row["sweep_seconds"],
             "sweep_exit": None if row["sweep_exit"] == "-" else int(row["sweep_exit"]),
             "cases": []}
        path = os.path.join(sweeps, row["name"] + ".json")
        if b["status"] != "build-failed":
            if os.path.exists(path):
                with open(path) as f:
                    b["cases"] = json.load(f)["cases"]
            else:
                b["status"] = "sweep-failed"
        for case in b["cases"]:
            for run in case["runs"]:
                if case["kind"] == "train":
                    truncated = run.get("truncated")
                    run["epochs"] = read_epochs(os.path.join(
                        sweeps, row["name"], f"{case['name']}.t{run['threads']}.r{run['repeat']}.trace"),
                        truncated and truncated["max_steps"])
        builds.append(b)
    return builds


def summary(builds):
    cells = [run for b in builds for c in b["cases"] for run in c["runs"]]
    return {"builds": len(builds),
            "builds_failed": sum(b["status"] != "ok" and b["status"] != "prebuilt" for b in builds),
            "runs": len(cells),
            "runs_not_as_expected": sum(failed(r) for r in cells),
            "runs_not_reached": sum(r.get("not_reached", False) for r in cells)}


def failed(run):
    """Not as expected; a run not reached (harness/REPORTS.md) is no failure."""
    return not run["as_expected"] and not run.get("not_reached", False)


def load_history(directory):
    nights = []
    for path in sorted(glob.glob(os.path.join(directory, "nightly-*.json"))):
        try:
            with open(path) as f:
                night = json.load(f)
            nights.append({"stamp": night["stamp"], "commit": night["commit"],
                           "wall_seconds": night["wall_seconds"], **night["summary"]})
        except (OSError, ValueError, KeyError):
            print(f"{path}: not a nightly report, left out of the trend", file=sys.stderr)
    return nights


# ---- plots --------------------------------------------------------------------

def gnuplot_svg(script):
    """SVG text from gnuplot, without the XML prolog, for inlining."""
    svg = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True,
                         check=True).stdout
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def plot_curves(title, ylabel, series):
    """series: [(label, [(x, y), ...])], one line each."""
    blocks, plots = [], []
    for i, (label, points) in enumerate(series):
        rows = "\n".join(f"{x} {y!r}" for x, y in points)
        blocks.append(f"$d{i} << EOD\n{rows}\nEOD")
        plots.append(f"$d{i} using 1:2 with linespoints title '{label}'")
    return gnuplot_svg("\n".join([
        "set terminal svg size 460,280 fixed noenhanced font 'sans,10'",
        *blocks,
        f"set title '{title}'", "set xlabel 'epoch'", f"set ylabel '{ylabel}'",
        "set key outside right", "set grid",
        "plot " + ", ".join(plots), ""]))


# ---- the page -------------------------------------------------------------------

COLOURS = {"identical": "#2e9d4f", "reordering": "#7fb3d5", "beyond-bound": "#d62728",
           "nondeterministic": "#e377c2", "crash": "#5b2c6f", "timeout": "#8e6c1f",
           "not reached": "#999999",
           "missing": "#bbbbbb"}


def esc(x):
    return html.escape(str(x), quote=True)


def cell_id(build, case, run):
    return f"d-{build}-{case}-t{run['threads']}-r{run['repeat']}".replace(".", "_")


def matrix_html(builds):
    # rows: (case, threads) in the order of the first build that has them
    rows, seen = [], set()
    for b in builds:
        for c in b["cases"]:
            for run in c["runs"]:
                key = (c["name"], run["threads"])
                if key not in seen:
                    seen.add(key)
                    rows.append(key)
    out = ['<table id="matrix"><thead><tr><th>case</th><th>threads</th>']
    out += [f'<th class="build">{esc(b["name"])}<br><small>{esc(b["status"])}'
            f'{limit_note(b)}</small></th>' for b in builds]
    out.append("</tr></thead><tbody>")
    for case, threads in rows:
        out.append(f"<tr><td>{esc(case)}</td><td>{threads}</td>")
        for b in builds:
            runs = [(c, r) for c in b["cases"] if c["name"] == case
                    for r in c["runs"] if r["threads"] == threads]
            if not runs:
                out.append('<td class="cell" style="background:#bbbbbb" data-ok="1">-</td>')
                continue
            bad = [(c, r) for c, r in runs if failed(r)]
            unreached = [(c, r) for c, r in runs if r.get("not_reached")]
            c, r = bad[0] if bad else unreached[0] if unreached else runs[0]
            shown = "not reached" if not bad and unreached else r["verdict"]
            label = shown if len(runs) == 1 else f"{shown} ({len(bad)}/{len(runs)} off)" if bad else f"{shown} x{len(runs)}"
            text = f'<a href="#{cell_id(b["name"], case, r)}">{esc(label)}</a>' if bad else esc(label)
            mark = " off" if bad else " unreached" if unreached else ""
            title = f"expected {r['expected']}"
            if r.get("truncated"):
                title += f"; first {r['truncated']['max_steps']} steps compared"
            out.append(f'<td class="cell{mark}" data-ok="{0 if bad else 1}" '
                       f'style="background:{COLOURS.get(shown, "#bbbbbb")}" '
                       f'title="{esc(title)}">{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def limit_note(build):
    return f"<br>first {build['max_steps']} steps" if build.get("max_steps") else ""


def divergence_html(run):
    d = run["first_divergence"]
    items = [("verdict", run["verdict"]), ("expected", run["expected"])]
    if d:
        items += [("first divergence", f"step {d['step']} {d['probe']} ({d['op']})"),
                  ("record index", d["index"]), ("inputs identical", d["inputs_identical"]),
                  ("structural", d["structural"]), ("not reproduced", d["nondeterministic"])]
        if d.get("differing") is not None:
            items += [("differing / total", f"{d['differing']} / {d['total']}"),
                      ("max abs", d["max_abs"]), ("max rel", d["max_rel"]),
                      ("max ULP", d["max_ulp"]), ("bound ratio", d["bound_ratio"]),
                      ("first index", d["first_index"]), ("ranges", d["ranges"]),
                      ("NaN/Inf (reference, run)", d["nonfinite"])]
    if run.get("origins_count"):
        items += [("origins (located)", f"{run['origins_count']} ({run['origins_located']}"
                   f"{', cap hit' if run['origins_capped'] else ''})")]
    w = run.get("worst")
    if w:
        items += [("worst origin", f"step {w['step']} {w['probe']} ({w['op']}) {w['verdict']}"
                   + (f", bound ratio {w['bound_ratio']}" if w.get("bound_ratio") is not None
                      else ""))]
    p = run.get("repeats_part")
    if p:
        items += [("repeats part", f"from repeat {run['repeats_with']} at step {p['step']} "
                   f"{p['probe']} ({p['op']})")]
    if run["message"]:
        items.append(("message", run["message"]))
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items) + "</dl>"


def details_html(builds):
    out = []
    for b in builds:
        if b["status"] not in ("ok", "prebuilt"):
            out.append(f'<h3>{esc(b["name"])}: {esc(b["status"])}</h3>'
                       f'<p>see logs/{esc(b["name"])}.build.log</p>')
        for c in b["cases"]:
            for r in c["runs"]:
                if failed(r):
                    out.append(f'<h3 id="{cell_id(b["name"], c["name"], r)}">{esc(b["name"])}: '
                               f'{esc(c["name"])}, {r["threads"]} threads, repeat {r["repeat"]}</h3>'
                               + divergence_html(r))
    return "".join(out) or "<p>Every cell as expected.</p>"


def curves_html(builds):
    out = []
    for b in builds:
        for c in b["cases"]:
            if c["kind"] != "train":
                continue
            runs = [r for r in c["runs"] if r.get("epochs") and r["repeat"] == 1]
            if not runs:
                continue
            plots = []
            for key, ylabel in (("test_loss", "test loss"), ("test_accuracy", "test accuracy"),
                                ("train_loss", "train loss")):
                series = [(f"{r['threads']} threads",
                           [(e["epoch"], e[key]) for e in r["epochs"]]) for r in runs]
                plots.append(plot_curves(f"{c['name']} ({b['name']})", ylabel, series))
            out.append(f'<details{" open" if not out else ""}><summary>{esc(c["name"])} — '
                       f'{esc(b["name"])}</summary><div class="plots">{"".join(plots)}</div></details>')
    return "".join(out) or "<p>No training case in this night's sweep.</p>"


def trend_html(nights):
    if not nights:
        return "<p>No previous nights.</p>"
    rows = "".join(f"<tr><td>{esc(n['stamp'])}</td><td>{esc(n['commit'][:12])}</td>"
                   f"<td>{n['builds']}</td><td>{n['builds_failed']}</td><td>{n['runs']}</td>"
                   f"<td>{n['runs_not_as_expected']}</td><td>{n['wall_seconds']:.0f}</td></tr>"
                   for n in nights)
    table = ('<table id="trend"><thead><tr><th>night (UTC)</th><th>commit</th><th>builds</th>'
             '<th>builds failed</th><th>runs</th><th>runs not as expected</th>'
             f'<th>wall s</th></tr></thead><tbody>{rows}</tbody></table>')
    if len(nights) < 2:
        return table
    points = list(enumerate(nights, 1))
    svg = gnuplot_svg("\n".join([
        "set terminal svg size 620,280 fixed noenhanced font 'sans,10'",
        "$d << EOD", *[f"{i} {n['runs_not_as_expected']} {n['wall_seconds']}" for i, n in points], "EOD",
        "set title 'trend'", "set xlabel 'night'", "set ylabel 'runs not as expected'",
        "set y2label 'wall seconds'", "set ytics nomirror", "set y2tics", "set grid",
        "set key outside right",
        "plot $d using 1:2 with linespoints title 'not as expected', "
        "$d using 1:3 axes x1y2 with linespoints title 'wall s'", ""]))
    return table + svg


def builds_html(builds):
    rows = "".join(f"<tr><td>{esc(b['name'])}</td><td>{esc(b['status'])}</td>"
                   f"<td>{esc(b['max_steps'] or 'whole runs')}</td>"
                   f"<td>{b['build_seconds']:.1f}</td><td>{b['sweep_seconds']:.1f}</td>"
                   f"<td>{esc(b['sweep_exit'])}</td></tr>" for b in builds)
    return ('<table id="builds"><thead><tr><th>build</th><th>status</th><th>step limit</th>'
            '<th>build s</th><th>sweep s</th><th>sweep exit</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')


def unreached_html(builds):
    items = [f"<li>{esc(b['name'])}: {esc(c['name'])}, {r['threads']} threads, repeat "
             f"{r['repeat']}: expected {esc(r['expected'])}, identical in the first "
             f"{r['truncated']['max_steps']} steps</li>"
             for b in builds for c in b["cases"] for r in c["runs"] if r.get("not_reached")]
    if not items:
        return ""
    return ('<h2>Not reached</h2><p>Truncated runs that did not diverge in the steps they ran '
            'where their case expects a divergence: it may come later, so they are neither '
            f'passes nor failures (harness/CLI.md, --max-steps).</p><ul>{"".join(items)}</ul>')


STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #999; padding: 0.2em 0.5em; font-size: 90%; }
td.cell { color: white; text-align: center; }
td.cell a { color: white; }
td.off { outline: 3px solid black; outline-offset: -3px; font-weight: bold; }
td.unreached { font-style: italic; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0 1em; }
dt { font-weight: bold; }
.plots svg { display: inline-block; }
"""

SCRIPT = """
(function () {
  var box = document.getElementById('only-off');
  box.addEventListener('change', function () {
    var rows = document.querySelectorAll('#matrix tbody tr');
    for (var i = 0; i < rows.length; i++) {
      var off = rows[i].querySelectorAll('td.off').length > 0;
      rows[i].style.display = box.checked && !off ? 'none' : '';
    }
  });
  document.body.setAttribute('data-ready', 'yes');
})();
"""


def page(night, builds, nights):
    s = night["summary"]
    legend = " ".join(f'<span style="background:{c};color:white;padding:0 0.4em">{esc(v)}</span>'
                      for v, c in COLOURS.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>samebits nightly {esc(night['stamp'])}</title>
<style>{STYLE}</style></head><body>
<h1>samebits nightly {esc(night['stamp'])}</h1>
<p>commit {esc(night['commit'])}; {s['builds']} builds ({s['builds_failed']} failed),
{s['runs']} runs, <strong>{s['runs_not_as_expected']} not as expected</strong>,
{s['runs_not_reached']} not reached;
wall {night['wall_seconds']:.0f} s (build {night['build_seconds']:.0f} s, sweep {night['sweep_seconds']:.0f} s)
on {night['cpus']} CPUs, load average at the end {esc(night['load'])}.</p>
<h2>Matrix</h2>
<p>{legend}; a bold framed cell is not as its case expects (click it for details);
a build with a step limit (under its name) compares the first steps of longer training
cases only, and a cell it did not reach (no divergence in those steps where one is
expected) is grey and italic.
<label><input type="checkbox" id="only-off"> only rows with a failing cell</label></p>
{matrix_html(builds)}
<h2>Builds</h2>{builds_html(builds)}
<h2>First divergence of every failing cell</h2>{details_html(builds)}
{unreached_html(builds)}
<h2>Training curves (repeat 1, per thread count)</h2>{curves_html(builds)}
{census.html(builds)}
<h2>Trend</h2>{trend_html(nights)}
<script>{SCRIPT}</script>
</body></html>
"""


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ("manifest", "sweeps", "history", "stamp", "commit", "load", "json", "html"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--wall", type=float, required=True)
    ap.add_argument("--cpus", type=int, required=True)
    a = ap.parse_args()

    builds = load_builds(read_manifest(a.manifest), a.sweeps)
    night = {"format_version": FORMAT_VERSION, "stamp": a.stamp, "commit": a.commit,
             "wall_seconds": a.wall, "build_seconds": sum(b["build_seconds"] for b in builds),
             "sweep_seconds": sum(b["sweep_seconds"] for b in builds),
             "cpus": a.cpus, "load": a.load, "summary": summary(builds),
             "builds": census.attach(builds, a.sweeps)}
    nights = load_history(a.history) + [{"stamp": a.stamp, "commit": a.commit,
                                         "wall_seconds": a.wall, **night["summary"]}]
    write_atomic(a.json, json.dumps(night, indent=1) + "\n")
    write_atomic(a.html, page(night, builds, nights))
    s = night["summary"]
    return 0 if s["runs_not_as_expected"] == 0 and s["builds_failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
