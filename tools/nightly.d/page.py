"""The nightly page: one self-contained HTML file, outcome first.

Each section is an (id, title, html) triple; render.py puts them in order,
so another section (a table of its own) is one more triple."""
import html
import shlex

from plots import curve_plot, trend_plot

# Outcome first: colour and symbol say as expected or not; the verdict is text.
OUTCOMES = {"ok": ("\u2714", "as expected"), "off": ("\u2718", "not as expected"),
            "unreached": ("?", "not reached"), "missing": ("\u2013", "not run"),
            "build": ("!", "build failed"), "lost": ("!", "task lost")}


def esc(x):
    return html.escape(str(x), quote=True)


def failed(run):
    """Not as expected; a run not reached (harness/REPORTS.md) is no failure."""
    return not run["as_expected"] and not run.get("not_reached", False)


def batch_of(run):
    """The batch size of a run on the batch axis (harness/REPORTS.md, Axes), else 0;
    a report from before the axes has none."""
    return run.get("batch", 0) if run.get("axis", "threads") == "batch" else 0


def ranked(run):
    """A run of a data-parallel job (the ranks axis, harness/REPORTS.md)."""
    return run.get("axis") == "ranks"


def env_of(run):
    """The environment axes' values of a run (the instruction set's and any
    variable's, harness/REPORTS.md), as (name, value) pairs; () without."""
    return tuple(run.get("env", {}).items())


def resume_of(run):
    """The step a run on the resume axis stopped and resumed at (harness/REPORTS.md,
    Axes), else 0."""
    return run.get("resume_at", 0) if run.get("axis") == "resume" else 0


def config_name(run):
    """The run's configuration as the reports name it (harness/REPORTS.md, Axes), its
    axes in the sweep's order: 'threads=2', 'batch=16 threads=1', 'resume=3 threads=2',
    'threads=2 isa=avx2 OMP_SCHEDULE=dynamic'."""
    parts = ([f"batch={batch_of(run)}"] if batch_of(run) else []) + \
        ([f"ranks={run['ranks']}"] if ranked(run) else []) + \
        ([f"resume={resume_of(run)}"] if resume_of(run) else []) + [f"threads={run['threads']}"]
    return " ".join(parts + [f"isa={v}" if n == "SAMEBITS_ISA" else f"{n}={v}"
                             for n, v in env_of(run)])


def run_key(build, case, run):
    """One run of one night: its configuration by name, and its repeat."""
    return (build, case, config_name(run), run["repeat"])


def run_id(build, case, run):
    batch = f"-b{batch_of(run)}" if batch_of(run) else ""
    ranks = f"-n{run['ranks']}" if ranked(run) else ""
    resume = f"-k{resume_of(run)}" if resume_of(run) else ""
    env = "".join(f"-{v}" if n == "SAMEBITS_ISA" else f"-{n}-{v}" for n, v in env_of(run))
    rid = f"d-{build}-{case}{batch}{ranks}{resume}-t{run['threads']}{env}-r{run['repeat']}"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in rid)


def env_words(run):
    """', ISA avx2, OMP_SCHEDULE=dynamic': the environment axes of a run."""
    return "".join(f", ISA {v}" if n == "SAMEBITS_ISA" else f", {n}={v}"
                   for n, v in env_of(run))


def run_config(run):
    """'2 threads'; on the batch axis 'batch 16 at 2 threads'; on the ranks axis
    '3 ranks, 2 threads'; on the resume axis 'resumed at step 3, 2 threads'; then the
    environment's axes: '2 threads, ISA avx2'."""
    threads = f"{run['threads']} thread{'s' if run['threads'] != 1 else ''}"
    if batch_of(run):
        return f"batch {batch_of(run)} at {threads}{env_words(run)}"
    if ranked(run):
        return f"{run['ranks']} rank{'s' if run['ranks'] > 1 else ''}, {threads}{env_words(run)}"
    if resume_of(run):
        return f"resumed at step {resume_of(run)}, {threads}{env_words(run)}"
    return threads + env_words(run)


def duration(seconds):
    """A duration to a sensible precision: ms below a second, three digits
    below a minute, then minutes and seconds, hours and minutes."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def number(x):
    """A report number (harness/REPORTS.md: a number or "inf", "-inf", "nan")
    to 3 significant digits."""
    return x if isinstance(x, str) else f"{x:.3g}"


def threads_list(counts):
    return ", ".join(str(t) for t in sorted(set(counts)))


# ---- summary ---------------------------------------------------------------------

def summary_html(night):
    s = night["summary"]
    new = s.get("new_not_as_expected")
    parts = [f'<span class="count" id="sum-runs" data-count="{s["runs"]}">{s["runs"]}</span> runs',
             f'<span class="count ok" id="sum-as-expected" data-count="{s["runs_as_expected"]}">'
             f'{OUTCOMES["ok"][0]} {s["runs_as_expected"]}</span> as expected',
             f'<span class="count off" id="sum-not-as-expected" data-count="{s["runs_not_as_expected"]}">'
             f'{OUTCOMES["off"][0]} {s["runs_not_as_expected"]}</span> not as expected',
             f'<span class="count" id="sum-new" data-count="">first night</span>' if new is None else
             f'<span class="count" id="sum-new" data-count="{new}">{new}</span> new since last night']
    if s["runs_not_reached"]:
        parts.append(f'<span class="count unreached" id="sum-not-reached" '
                     f'data-count="{s["runs_not_reached"]}">? {s["runs_not_reached"]}</span> not reached')
    if s["builds_failed"]:
        parts.append(f'<span class="count off" id="sum-builds-failed">{s["builds_failed"]}</span> '
                     f'of {s["builds"]} builds failed')
    verdict = "green" if night["exit"] == 0 else "red"
    lost = s["builds_failed"] and not s["runs_not_as_expected"]
    banner = {"green": "Every run as expected.",
              "red": "Not green: " + ("no configuration ran." if s["runs"] == 0 else
                                      "a build failed or was lost: see Runs not as expected."
                                      if lost else "see the cells marked \u2718 below.")}[verdict]
    return (f'<p id="summary" class="summary {verdict}" data-exit="{night["exit"]}">'
            f'{" · ".join(parts)}</p><p class="banner {verdict}">{esc(banner)}</p>'
            f'<p class="meta">commit {esc(night["commit"][:12])} · {s["builds"]} builds · '
            f'wall {duration(night["wall_seconds"])} (build {duration(night["build_seconds"])}, '
            f'sweep {duration(night["sweep_seconds"])}) on {night["cpus"]} CPUs, '
            f'load at the end {esc(night["load"])}</p>')


# ---- the matrix: case x build -------------------------------------------------------

def configs_list(runs):
    """Thread counts, or on the ranks axis (ranks x threads) pairs: '1x1, 2x1, 3x2'; the
    resume axis's after the thread counts, (step x threads) pairs: '1, 2, resumed at step
    x threads 3x1, 3x2'."""
    if any(ranked(r) for r in runs):
        pairs = sorted({(r.get("ranks", 1), r["threads"]) for r in runs})
        return "ranks x threads " + ", ".join(f"{n}x{t}" for n, t in pairs)
    plain = threads_list(r["threads"] for r in runs if not resume_of(r))
    resumed = sorted({(resume_of(r), r["threads"]) for r in runs if resume_of(r)})
    return ", ".join(([plain] if plain else []) +
                     (["resumed at step x threads " + ", ".join(f"{k}x{t}" for k, t in resumed)]
                      if resumed else []))


def verdicts_text(runs):
    """The verdicts of a cell's runs with their configurations: 'identical at 1; reordering
    at 2, 4' ('identical at ranks x threads 1x1, 2x1' on the ranks axis); the batch axis's
    after them by batch size: 'identical at batch 3, 16'."""
    by, batch = {}, {}
    for r in runs:
        if batch_of(r):
            batch.setdefault(r["verdict"], []).append(batch_of(r))
        else:
            by.setdefault(r["verdict"], []).append(r)
    return "; ".join([f"{v} at {configs_list(rs)}" for v, rs in by.items()] +
                     [f"{v} at batch {threads_list(b)}" for v, b in batch.items()])


def cell_html(build, case, runs):
    if build["status"] == "build-failed":
        outcome, note = "build", "see logs/" + build["name"] + ".build.log"
    elif build["status"].startswith("lost"):
        outcome, note = "lost", build["status"]
    elif not runs:
        outcome, note = "missing", ""
    else:
        off = [r for r in runs if failed(r)]
        unreached = [r for r in runs if r.get("not_reached")]
        outcome = "off" if off else "unreached" if unreached else "ok"
        note = verdicts_text(runs)
    symbol, word = OUTCOMES[outcome]
    off = [r for r in runs if failed(r)]
    label = f"{word} ({len(off)} of {len(runs)} runs)" if off else word
    links = "".join(f' <a href="#{run_id(build["name"], case, r)}">{esc(run_config(r))}'
                    f'{" r" + str(r["repeat"]) if r["repeat"] > 1 else ""}</a>' for r in off)
    return (f'<td class="cell {outcome}" data-outcome="{outcome}" data-build="{esc(build["name"])}" '
            f'data-case="{esc(case)}"><span class="symbol" aria-hidden="true">{symbol}</span> '
            f'<span class="outcome">{esc(label)}</span><br><span class="verdict">{esc(note)}</span>'
            f'{"<br>details:" + links if links else ""}</td>')


# The axes with a column of their own: (key, picks the axis's runs, the column's
# heading, the words of a case without that axis).
AXIS_COLUMNS = {"batch": (batch_of, "batch invariance", "no batch axis"),
                "ranks": (ranked, "rank-count invariance", "no ranks axis")}


def axis_cell_html(builds, name, axis):
    """An axis's column: a case's runs on that axis over every build, their
    outcome and verdicts by configuration (batch size; ranks x threads); the
    axis's words for a case without one."""
    picks, _, none = AXIS_COLUMNS[axis]
    runs = [r for b in builds for c in b["cases"] if c["name"] == name for r in c["runs"]
            if picks(r)]
    if not runs:
        return f'<td class="{axis} none" data-{axis}-outcome="none">{none}</td>'
    off = [r for r in runs if failed(r)]
    outcome = "off" if off else "ok"
    symbol, word = OUTCOMES[outcome]
    label = f"{word} ({len(off)} of {len(runs)} runs)" if off else word
    built = len({b["name"] for b in builds for c in b["cases"] if c["name"] == name
                 for r in c["runs"] if picks(r)})
    return (f'<td class="{axis} {outcome}" data-{axis}-outcome="{outcome}" data-case="{esc(name)}">'
            f'<span class="symbol" aria-hidden="true">{symbol}</span> '
            f'<span class="outcome">{esc(label)}</span><br><span class="verdict">'
            f'{esc(verdicts_text(runs))} on {built} build{"s" if built != 1 else ""}</span></td>')


def matrix_html(builds):
    cases = []
    for b in builds:
        for c in b["cases"]:
            if c["name"] not in cases:
                cases.append(c["name"])
    # the batch column always; the ranks column where a build ran the ranks axis (MPI)
    axes = ["batch"] + (["ranks"] if any(ranked(r) for b in builds for c in b["cases"]
                                         for r in c["runs"]) else [])
    head = "".join(f'<th scope="col">{esc(b["name"])}{limit_note(b)}</th>' for b in builds)
    head += "".join(f'<th scope="col">{AXIS_COLUMNS[a][1]}</th>' for a in axes)
    rows = []
    for name in cases:
        cells = "".join(cell_html(b, name, [r for c in b["cases"] if c["name"] == name
                                            for r in c["runs"]]) for b in builds)
        cells += "".join(axis_cell_html(builds, name, a) for a in axes)
        rows.append(f'<tr><th scope="row">{esc(name)}</th>{cells}</tr>')
    legend = " ".join(f'<span class="cell {k}">{s} {w}</span>' for k, (s, w) in OUTCOMES.items())
    ranks_words = (' The rank-count column, where the builds have MPI, is the ranks axis of a '
                   'case with a [parallel] section over every build: each (ranks, threads) '
                   'data-parallel job against the golden of one rank at one thread.'
                   if "ranks" in axes else '')
    return (f'<p class="legend">{legend}. A cell is one case on one build: its outcome first, '
            'then the verdicts by thread count (by batch size on the batch axis, by ranks x '
            'threads on the ranks axis). The batch-invariance column '
            'is the batch axis of a case with an [invariance] section over every build: '
            'its samples computed in batches of each size against the reference size '
            f'(harness/CLI.md).{ranks_words} Builds with a step limit compare the first steps '
            'of longer training cases only; a run that did not reach an expected divergence in '
            f'them is "not reached", neither a pass nor a failure.</p>'
            f'<div class="scroll"><table id="matrix"><thead><tr><th>case</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows) or "<tr><td>no runs</td></tr>"}</tbody></table></div>')


def limit_note(build):
    n = build.get("max_steps")
    return f"<br><small>first {n} step{'s' if n > 1 else ''}</small>" if n else ""


# ---- details of the runs not as expected --------------------------------------------

def reproduce_command(build, case, run):
    """The build's samebits locating the run's divergence against the reference (on the
    batch axis: sweeping that batch size against the case's reference size; on the ranks
    and resume axes, which locate does not take: sweeping that configuration again)."""
    if batch_of(run):
        return shlex.join([build["samebits"], "sweep", case["path"], "--axis", "batch"])
    if ranked(run):
        cmd = [build["samebits"], "sweep", case["path"], "--ranks", str(run["ranks"]),
               "--threads", str(run["threads"])]
    elif resume_of(run):
        cmd = [build["samebits"], "sweep", case["path"], "--resume", str(resume_of(run)),
               "--threads", str(run["threads"])]
    else:
        cmd = [build["samebits"], "locate", case["path"], "--threads",
               f"{case['reference_threads']},{run['threads']}"]
    if run.get("truncated"):
        cmd += ["--max-steps", str(run["truncated"]["max_steps"])]
    return shlex.join(cmd)


def divergence_sentences(d):
    out = [f"The first divergent probe is <code>{esc(d['probe'])}</code> at step {d['step']}, "
           f"made by the op <code>{esc(d['op'])}</code>."]
    out.append("Its inputs were identical to the golden's: the difference arose in this op."
               if d["inputs_identical"] else
               "Its inputs already differed: the difference came from upstream.")
    if d["structural"]:
        out.append("The probe sequence itself differs (a structural divergence).")
    if d["nondeterministic"]:
        out.append("No re-run reproduced the run's hash there: the configuration does not repeat itself.")
    if d.get("reference_unreproduced"):
        out.append("The reference re-run did not reproduce the golden's hash.")
    if d.get("differing") is not None and d["bound_ratio"] is None:
        out.append(f"{d['differing']} of {d['total']} elements differ; the largest difference is "
                   f"{number(d['max_abs'])} ({number(d['max_ulp'])} ULP), and no bound is known "
                   f"for <code>{esc(d['op'])}</code>: a reordering cannot be told from a bug "
                   "until the op has one (unbounded).")
    elif d.get("differing") is not None:
        within = ("within" if not isinstance(d["bound_ratio"], str) and d["bound_ratio"] <= 1
                  else "beyond")
        out.append(f"{d['differing']} of {d['total']} elements differ; the largest difference is "
                   f"{number(d['max_abs'])} ({number(d['max_ulp'])} ULP), and the bound ratio is "
                   f"{number(d['bound_ratio'])}: {within} what a reordering of its sums can explain.")
        if any(d["nonfinite"]):
            out.append(f"NaN or Inf: {d['nonfinite'][0]} in the reference, {d['nonfinite'][1]} in the run.")
    return out


def run_details_html(build, case, run):
    title = (f"{esc(case['name'])} on {esc(build['name'])}: {esc(run_config(run))}"
             f"{', repeat ' + str(run['repeat']) if run['repeat'] > 1 else ''}")
    said = [f"The case expects <strong>{esc(run['expected'])}</strong>; this run gave "
            f"<strong>{esc(run['verdict'])}</strong>."]
    if run["first_divergence"]:
        said += divergence_sentences(run["first_divergence"])
    else:
        said.append("No probe diverged before it stopped.")
    if run.get("origins_count", 0) > 1:
        w = run.get("worst")
        said.append(f"The difference arose in {run['origins_count']} ops ({run['origins_located']} "
                    f"located{', the cap was hit' if run['origins_capped'] else ''})"
                    + (f"; the worst is <code>{esc(w['probe'])}</code> at step {w['step']}, "
                       f"{esc(w['verdict'])}." if w else "."))
    p = run.get("repeats_part")
    if p:
        said.append(f"Its repeats part from repeat {run['repeats_with']} at step {p['step']} "
                    f"<code>{esc(p['probe'])}</code> ({esc(p['op'])}).")
    if run["message"]:
        said.append(f"Message: <code>{esc(run['message'])}</code>")
    said.append(f"It took {duration(run['seconds'])}. To reproduce it, from the repository: "
                f"<code class=\"cmd\">{esc(reproduce_command(build, case, run))}</code>")
    return (f'<section class="details" id="{run_id(build["name"], case["name"], run)}" '
            f'data-outcome="off"><h3>\u2718 {title}</h3>'
            + "".join(f"<p>{s}</p>" for s in said) + "</section>")


def details_html(builds):
    out = []
    for b in builds:
        if b["status"].startswith("lost"):  # a task of tools/slurm that left no report
            out.append(f'<section class="details"><h3>! {esc(b["name"])}: lost</h3>'
                       f'<p>{esc(b["status"])}: no report from it; the night is not green.</p>'
                       '</section>')
        if b["status"] in ("build-failed", "sweep-failed"):
            log = "build" if b["status"] == "build-failed" else "sweep"
            out.append(f'<section class="details"><h3>! {esc(b["name"])}: {esc(b["status"])}</h3>'
                       f'<p>See <code>logs/{esc(b["name"])}.{log}.log</code>.</p></section>')
        for c in b["cases"]:
            out += [run_details_html(b, c, r) for r in c["runs"] if failed(r)]
    return "".join(out) or "<p>Every run as expected.</p>"


def expected_divergences_html(builds):
    """Where runs parted from their golden as their case expects (the loose family's
    reorderings, a mutant's fault): the first divergent probe of each thread count."""
    rows = []
    for b in builds:
        for c in b["cases"]:
            for r in c["runs"]:
                d = r["first_divergence"]
                if failed(r) or not d or r["repeat"] > 1:
                    continue
                ratio = ("no bound" if d["bound_ratio"] is None else number(d["bound_ratio"])
                         if d.get("differing") is not None else "-")
                rows.append(f"<tr><td>{esc(b['name'])}</td><td>{esc(c['name'])}</td>"
                            f"<td class=\"num\">{esc(run_config(r))}</td><td>{esc(r['verdict'])}</td>"
                            f"<td>step {d['step']} <code>{esc(d['probe'])}</code> ({esc(d['op'])})</td>"
                            f"<td class=\"num\">{ratio}</td></tr>")
    if not rows:
        return "<p>No run diverged where its case expects it.</p>"
    return ('<p>Runs that parted from the golden as their case expects: where each first did.</p>'
            '<div class="scroll"><table id="expected"><thead><tr><th>build</th><th>case</th>'
            '<th>configuration</th><th>verdict</th><th>first divergence</th><th>bound ratio</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def unreached_html(builds):
    items = [f"<li>{esc(b['name'])}: {esc(c['name'])}, {esc(run_config(r))}: expected "
             f"{esc(r['expected'])}, identical in the first {r['truncated']['max_steps']} steps</li>"
             for b in builds for c in b["cases"] for r in c["runs"] if r.get("not_reached")]
    if not items:
        return "<p>None.</p>"
    return ('<p>Truncated runs that did not diverge in the steps they ran where their case '
            'expects a divergence: it may come later (harness/CLI.md, --max-steps).</p>'
            f'<ul>{"".join(items)}</ul>')


# ---- curves, builds, trend -------------------------------------------------------------

def curves_html(builds):
    out = []
    for b in builds:
        for c in b["cases"]:
            runs = [r for r in c["runs"] if c["kind"] == "train" and r.get("epochs")
                    and r["repeat"] == 1]
            if not runs:
                continue
            plots = [curve_plot(f"{c['name']} ({b['name']})", ylabel,
                                [(run_config(r),
                                  [(e["epoch"], e[key]) for e in r["epochs"]]) for r in runs])
                     for key, ylabel in (("test_loss", "test loss"),
                                         ("test_accuracy", "test accuracy"),
                                         ("train_loss", "train loss"))]
            out.append(f'<details{" open" if not out else ""}><summary>{esc(c["name"])} on '
                       f'{esc(b["name"])}</summary><div class="plots">{"".join(plots)}</div></details>')
    return "".join(out) or "<p>No training case in this night's sweep.</p>"


def builds_html(builds):
    rows = "".join(f"<tr><td>{esc(b['name'])}</td><td>{esc(b['status'])}</td>"
                   f"<td>{esc(b['max_steps'] or 'whole runs')}</td>"
                   f"<td class=\"num\">{duration(b['build_seconds'])}</td>"
                   f"<td class=\"num\">{duration(b['sweep_seconds'])}</td>"
                   f"<td class=\"num\">{esc(b['sweep_exit'])}</td></tr>" for b in builds)
    return ('<div class="scroll"><table id="builds"><thead><tr><th>build</th><th>status</th>'
            '<th>step limit</th><th>build</th><th>sweep</th><th>sweep exit</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></div>')


def trend_html(nights):
    rows = "".join(f"<tr><td>{esc(n['stamp'])}</td><td>{esc(n['commit'][:12])}</td>"
                   f"<td class=\"num\">{n['runs']}</td><td class=\"num\">{n['runs_not_as_expected']}</td>"
                   f"<td class=\"num\">{n['builds_failed']}</td>"
                   f"<td class=\"num\">{duration(n['wall_seconds'])}</td></tr>" for n in nights)
    table = ('<div class="scroll"><table id="trend"><thead><tr><th>night (UTC)</th><th>commit</th>'
             '<th>runs</th><th>not as expected</th><th>builds failed</th><th>wall</th></tr></thead>'
             f'<tbody>{rows}</tbody></table></div>')
    minutes = [{**n, "wall_minutes": n["wall_seconds"] / 60} for n in nights]
    plots = (trend_plot("runs not as expected", "runs", nights, "runs_not_as_expected", count=True)
             + trend_plot("wall time", "minutes", minutes, "wall_minutes"))
    return table + f'<div class="plots">{plots}</div>'


def sections(night, builds, nights):
    return [("summary-section", None, summary_html(night)),
            ("matrix-section", "Outcome by case and build", matrix_html(builds)),
            ("details-section", "Runs not as expected", details_html(builds)),
            ("expected-section", "Expected divergences", expected_divergences_html(builds)),
            ("unreached-section", "Not reached", unreached_html(builds)),
            ("curves-section", "Learning curves (repeat 1, per thread count)", curves_html(builds)),
            ("builds-section", "Builds", builds_html(builds)),
            ("trend-section", "Trend by night", trend_html(nights))]


STYLE = """
body { font-family: sans-serif; margin: 1em; line-height: 1.35; color: #222; }
h1 { font-size: 1.4em; }
.summary { font-size: 1.15em; padding: 0.5em 0.7em; border-left: 0.4em solid; }
.summary.green { border-color: #1b7f3b; background: #eaf6ee; }
.summary.red { border-color: #b3261e; background: #fbeaea; }
.banner { font-weight: bold; }
.banner.red { color: #b3261e; }
.count { font-weight: bold; }
.meta { color: #555; font-size: 90%; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #999; padding: 0.25em 0.5em; font-size: 90%; vertical-align: top; }
th[scope=row] { text-align: left; font-weight: normal; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.cell { min-width: 9em; }
.cell.ok { background: #d9f0df; }
.cell.off { background: #f8d0cd; font-weight: bold; }
.cell.unreached { background: #e8e8e8; font-style: italic; }
.cell.missing { background: #f4f4f4; color: #666; }
.cell.build, .cell.lost { background: #444; color: white; }
.batch, .ranks { min-width: 9em; }
.batch.ok, .ranks.ok { background: #d9f0df; }
.batch.off, .ranks.off { background: #f8d0cd; font-weight: bold; }
.batch.none, .ranks.none { background: #f4f4f4; color: #666; }
.symbol { font-size: 1.1em; }
.verdict { font-weight: normal; font-size: 90%; color: #333; }
.legend .cell { display: inline-block; padding: 0 0.4em; min-width: 0; border: 1px solid #999; }
.details { border: 1px solid #b3261e; border-left-width: 0.4em; padding: 0 0.8em; margin: 0.6em 0; }
.details:target { background: #fff4f3; }
code.cmd { display: inline-block; background: #f4f4f4; padding: 0.1em 0.3em; word-break: break-all; }
.plots svg { width: 460px; max-width: 100%; height: auto; display: inline-block; vertical-align: top; }
label { font-size: 90%; }
"""

SCRIPT = """
(function () {
  var box = document.getElementById('only-off');
  box.addEventListener('change', function () {
    var rows = document.querySelectorAll('#matrix tbody tr');
    for (var i = 0; i < rows.length; i++) {
      var off = rows[i].querySelectorAll('td.off, td.build, td.lost').length > 0;
      rows[i].style.display = box.checked && !off ? 'none' : '';
    }
  });
  document.body.setAttribute('data-ready', 'yes');
})();
"""


def page(night, parts):
    body = []
    for sid, title, content in parts:
        heading = f"<h2>{esc(title)}</h2>" if title else ""
        if sid == "matrix-section":
            heading += ('<label><input type="checkbox" id="only-off"> only cases with a run '
                        'not as expected</label>')
        body.append(f'<section id="{sid}">{heading}{content}</section>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>samebits nightly {esc(night['stamp'])}</title>
<style>{STYLE}</style></head><body>
<h1>samebits nightly {esc(night['stamp'])}</h1>
{"".join(body)}
<script>{SCRIPT}</script>
</body></html>
"""
