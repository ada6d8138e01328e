"""The determinism census of each build on the nightly page.

tools/nightly runs tools/interop/census_table.py with every build (OpenBLAS
sgemm, oneDNN convolutions, PyTorch's seed-model step and samebits det, rows
per output or op, columns per thread count) into sweeps/<build>.census.json;
attach() puts each into its build's entry of nightly.json as "census" (null
when the build has none), html() renders them as tables, one per build.
"""
import html as _html
import json
import os

# one colour per mark of harness/REPORTS.md, "Census"
MARK_COLOURS = {"=": "#2e7d32", "d": "#9e9e9e", "R": "#1565c0", "?": "#757575",
                "B": "#c62828", "N": "#6a1b9a", "X": "#000000"}


def attach(builds, sweeps):
    """Each build's census (census_table.py's JSON), or None; returns builds."""
    for b in builds:
        path = os.path.join(sweeps, b["name"] + ".census.json")
        try:
            with open(path) as f:
                b["census"] = json.load(f)
        except (OSError, ValueError):
            b["census"] = None
    return builds


def _cell(mark):
    colour = MARK_COLOURS.get(mark, "#ffffff")
    return (f'<td style="background:{colour};color:white;text-align:center">'
            f'{_html.escape(mark)}</td>')


def _table(census):
    m, threads = census["machine"], census["threads"]
    head = "".join(f"<th>{n}</th>" for n in threads)
    rows = []
    for lib in census["libraries"]:
        for r in lib["rows"]:
            ratio = "-" if r["worst_bound_ratio"] is None else f"{r['worst_bound_ratio']:.3g}"
            ulp = "-" if r["max_ulp"] is None else f"{r['max_ulp']:.0f}"
            impl = f" ({_html.escape(r['impl'])})" if r.get("impl") else ""
            rows.append(f"<tr><td>{_html.escape(lib['library'])}</td>"
                        f"<td><code>{_html.escape(r['row'])}</code>{impl}</td>"
                        + "".join(_cell(r["cells"].get(str(n), "-")) for n in threads)
                        + f"<td>{ratio}</td><td>{ulp}</td></tr>")
    versions = "; ".join(_html.escape(lib["version"]) for lib in census["libraries"])
    return (f"<p>{_html.escape(m['cpu'])} ({_html.escape(m['isa'])}, {m['cores']} cores), "
            f"{census['repeat']} runs per thread count; {versions}.</p>"
            f"<table><tr><th>library</th><th>output or op</th>{head}"
            f"<th>worst bound ratio</th><th>max ULP</th></tr>{''.join(rows)}</table>")


def html(builds):
    """The page's census section: a table per build that has a census."""
    parts = [f"<h3>{_html.escape(b['name'])}</h3>{_table(b['census'])}"
             for b in builds if b.get("census")]
    if not parts:
        return "<h2>Census</h2><p>No build has a census (tools/nightly --no-census).</p>"
    return ("<h2>Census</h2><p><code>=</code> the 1-thread bits in every run, "
            "<code>R</code> reordering (within the op's bound), <code>U</code> unbounded (no "
            "bound known for the op), <code>B</code> beyond bound, "
            "<code>N</code> the runs of that count differ, <code>d</code> moved downstream "
            "of another output, <code>X</code> crashed (tools/interop/census_table.py).</p>"
            + "".join(parts))
