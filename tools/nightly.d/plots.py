"""The nightly page's plots, drawn by gnuplot as inline SVG."""
import subprocess
from datetime import datetime, timezone

STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


def gnuplot_svg(script):
    """SVG text from gnuplot, without the XML prolog, for inlining."""
    svg = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True,
                         check=True).stdout
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def padded_range(values):
    """A y range around the values with room above and below: a flat series
    (one point, or every epoch the same) gets a span of 2% of its value, so
    the axis has a few distinct tick labels rather than one repeated."""
    lo, hi = min(values), max(values)
    span = hi - lo
    if span <= 0.02 * max(abs(lo), abs(hi)):
        mid = (lo + hi) / 2
        span = max(0.02 * abs(mid), 1e-3)
        lo, hi = mid - span / 2, mid + span / 2
    return lo - 0.1 * span, hi + 0.1 * span


def quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def curve_plot(title, ylabel, series):
    """series: [(label, [(epoch, y), ...])], one line (or point) per label;
    the x axis shows every evaluated epoch as a whole number."""
    epochs = sorted({x for _, points in series for x, _ in points})
    values = [y for _, points in series for _, y in points]
    lo, hi = padded_range(values)
    blocks, plots = [], []
    for i, (label, points) in enumerate(series):
        rows = "\n".join(f"{x} {y!r}" for x, y in points)
        blocks.append(f"$d{i} << EOD\n{rows}\nEOD")
        style = "linespoints" if len(points) > 1 else "points"
        plots.append(f"$d{i} using 1:2 with {style} pt 7 ps 0.8 title {quote(label)}")
    return gnuplot_svg("\n".join([
        "set terminal svg size 460,280 fixed noenhanced font 'sans,10'",
        *blocks,
        f"set title {quote(title)}", "set xlabel 'epoch'", f"set ylabel {quote(ylabel)}",
        f"set xrange [{epochs[0] - 0.5}:{epochs[-1] + 0.5}]", "set xtics 1", "set mxtics 1",
        f"set yrange [{lo!r}:{hi!r}]", "set format y '%.4g'",
        "set key outside right", "set grid",
        "plot " + ", ".join(plots), ""]))


def trend_plot(title, ylabel, nights, key, count=False):
    """One quantity per night, the nights' UTC dates on the x axis; a count
    has an axis from 0 with whole-number ticks."""
    rows = "\n".join(f"{n['stamp']} {n[key]!r}" for n in nights)
    times = [datetime.strptime(n["stamp"], STAMP_FORMAT).replace(tzinfo=timezone.utc)
             for n in nights]
    # whole UTC days, a tick at each midnight (or every few, for a long history),
    # so one night, or several on one day, is a point inside the axis
    day = 86400
    first = int(min(times).timestamp()) // day * day
    days = int(max(times).timestamp()) // day * day // day - first // day + 1
    start, end = (datetime.fromtimestamp(t, timezone.utc).strftime(STAMP_FORMAT)
                  for t in (first, first + days * day))
    step = day * max(1, -(-days // 6))
    values = [n[key] for n in nights]
    if count:
        top = max(max(values), 1)
        yaxis = [f"set yrange [0:{top * 1.15!r}]", "set format y '%.0f'",
                 f"set ytics {max(1, round(top / 5))}"]
    else:
        lo, hi = padded_range(values)
        yaxis = [f"set yrange [{max(lo, 0.0)!r}:{hi!r}]", "set format y '%.4g'"]
    style = "linespoints" if len(nights) > 1 else "points"
    return gnuplot_svg("\n".join([
        "set terminal svg size 460,260 fixed noenhanced font 'sans,10'",
        f"$d << EOD\n{rows}\nEOD",
        "set xdata time", f"set timefmt '{STAMP_FORMAT}'", "set format x '%Y-%m-%d'",
        f"set xrange ['{start}':'{end}']", f"set xtics '{start}', {step}", "set xtics rotate by -30",
        *yaxis,
        f"set title {quote(title)}", "set xlabel 'night (UTC)'", f"set ylabel {quote(ylabel)}",
        "set grid", "unset key", "set rmargin 8",
        f"plot $d using 1:2 with {style} pt 7 ps 0.8", ""]))
