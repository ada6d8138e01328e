#!/usr/bin/env bash
# tools/nightly's page in headless Chromium, on a small planted night.
# Without building a matrix: two "builds" given with --samebits (this build's
# samebits twice) sweep a det kernel case; a loose kernel case whose golden
# is made at 1 thread while its case expects `identical` at 2 (the planted
# run not as expected); the same loose case expecting `reordering` at 2 (an
# expected divergence to show); and a tiny training case on Fashion-MNIST
# (2 epochs of 2 steps of 64), and a det kernel case with a batch axis (the
# batch-invariance column). A previous night in the history gives the
# trend. From the DOM that Chromium builds (--dump-dom) it checks that the
# summary's counts are the JSON's, that the planted run is marked not as
# expected (class, symbol, words) and links to a details panel in plain
# words whose command reproduces it, that the expected divergence is listed, and that the curves and the
# trend are plots. Screenshots at a desktop and a narrow width are left in
# ARTEFACTS (nightly-desktop.png, nightly-narrow.png) beside the page.
# tools/nightly must refuse an unknown build name and fail a night that ran
# no configuration. Skips (77) without chromium or gnuplot.
# Usage: test_nightly_page.sh SAMEBITS SOURCE_ROOT ARTEFACTS
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
art=$3
command -v chromium >/dev/null || { echo "chromium not installed: skip"; exit 77; }
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skip"; exit 77; }
[ -d /usr/share/datasets/fashion-mnist ] || { echo "dataset-fashion-mnist not installed: skip"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_nightly_page.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/cases" "$tmp/golden" "$art"

# an unknown build name is refused, naming the known ones
rc=0
"$src/tools/nightly" --only gcc-O3 --out "$tmp/none" --history "$tmp/none-history" \
    2>"$tmp/only.err" || rc=$?
[ "$rc" = 2 ] || fail "--only gcc-O3 exited $rc, expected 2"
grep -q "no build named 'gcc-O3'.*gcc-O3-native" "$tmp/only.err" || fail "--only: $(cat "$tmp/only.err")"

planted=$src/tools/tests/planted
cp "$src/cases/kernel_dropout_mask_det.case" "$planted/tiny_train.case" "$tmp/cases/"
cp "$planted/xent_sum.case" "$tmp/cases/loose_sum.case"
cp "$planted/batch_dense.case" "$tmp/cases/"
sed -e 's/^expect = identical/expect = reordering\nexpect.1 = identical/' "$planted/xent_sum.case" \
    >"$tmp/cases/loose_expected.case"
# goldens made by this build, so the cells depend on this build alone
"$sb" golden "$tmp"/cases/*.case >/dev/null

# a previous night in the history, for the trend (the fields the trend reads)
mkdir -p "$tmp/history"
cat > "$tmp/history/nightly-20000101T000000Z.json" <<'JSON'
{"format_version": 1, "stamp": "20000101T000000Z", "commit": "0123456789abcdef",
 "wall_seconds": 50.0, "summary": {"builds": 2, "builds_failed": 0, "runs": 24,
 "runs_not_as_expected": 4}, "builds": []}
JSON
rc=0
"$src/tools/nightly" --samebits gccish="$sb" --samebits clangish="$sb" --no-census \
    --out "$tmp/out" --history "$tmp/history" "$tmp"/cases/*.case 2>"$tmp/nightly.err" || rc=$?
if [ "$rc" != 1 ]; then   # the loose case at 2 threads is not as expected
    cat "$tmp/nightly.err"
    fail "tools/nightly exited $rc, expected 1"
fi
grep -q "nightly: build 2/2 clangish: 16 runs, 1 not as expected" "$tmp/nightly.err" ||
    fail "no line for the finished build: $(cat "$tmp/nightly.err")"

chrome() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --no-first-run --disable-sync --hide-scrollbars \
        --user-data-dir="$tmp/profile" "$@" "file://$tmp/out/nightly.html"
}
rc=0
chrome --enable-logging=stderr --v=0 --dump-dom >"$tmp/dom.html" 2>"$tmp/chromium.err" || rc=$?
[ "$rc" = 0 ] || { tail -20 "$tmp/chromium.err"; fail "chromium exited $rc"; }
if grep -E "Uncaught|CONSOLE.*(Error|error)" "$tmp/chromium.err"; then
    fail "script errors while loading the page"
fi
for shot in desktop:1280,2000 narrow:420,2600; do
    rm -f "$art/nightly-${shot%%:*}.png"
    chrome --window-size="${shot#*:}" --screenshot="$art/nightly-${shot%%:*}.png" 2>/dev/null ||
        fail "no ${shot%%:*} screenshot"
    [ -s "$art/nightly-${shot%%:*}.png" ] || fail "empty ${shot%%:*} screenshot"
done
cp "$tmp/out/nightly.html" "$art/nightly.html"

/usr/bin/python3 - "$tmp/dom.html" "$tmp/out/nightly.json" "$tmp/history" "$src" "$sb" <<'PY'
import glob, json, os, shlex, subprocess, sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    """Every element with its attributes and the text inside it."""
    def __init__(self):
        super().__init__()
        self.elements, self.open = [], []
    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(e)
        if tag not in ("br", "input", "meta", "img"):
            self.open.append(e)
    def handle_endtag(self, tag):
        while self.open and self.open.pop()["tag"] != tag:
            pass
    def handle_data(self, data):
        for e in self.open:
            e["text"] += data

dom = Dom()
dom.feed(open(sys.argv[1]).read())
night = json.load(open(sys.argv[2]))
by_id = {e["attrs"]["id"]: e for e in dom.elements if "id" in e["attrs"]}
def fail(msg):
    sys.exit("FAIL: " + msg)

body = [e for e in dom.elements if e["tag"] == "body"][0]
if body["attrs"].get("data-ready") != "yes":
    fail("the page's script did not run")
s = night["summary"]
if s != {"builds": 2, "builds_failed": 0, "runs": 32, "runs_as_expected": 30,
         "runs_not_as_expected": 2, "runs_not_reached": 0, "new_not_as_expected": 2}:
    fail(f"summary {s}")
for sid, key in (("sum-runs", "runs"), ("sum-as-expected", "runs_as_expected"),
                 ("sum-not-as-expected", "runs_not_as_expected"), ("sum-new", "new_not_as_expected")):
    shown = by_id[sid]["attrs"]["data-count"]
    if shown != str(s[key]) or str(s[key]) not in by_id[sid]["text"]:
        fail(f"the summary shows {sid} {shown!r} / {by_id[sid]['text']!r}, the JSON {s[key]}")
if "Not green" not in by_id["summary-section"]["text"]:
    fail("the summary does not say the night is not green")

cells = [e for e in dom.elements if e["tag"] == "td" and "data-outcome" in e["attrs"]]
if len(cells) != 10:
    fail(f"{len(cells)} matrix cells, expected 5 cases x 2 builds")
# the batch-invariance column: the planted batch case's batch axis over both builds
batch = {e["attrs"].get("data-case", "-"): e for e in dom.elements
         if e["tag"] == "td" and "data-batch-outcome" in e["attrs"]}
b = batch.get("batch_dense")
if not b or b["attrs"]["data-batch-outcome"] != "ok" or \
        "identical at batch 5 on 2 builds" not in " ".join(b["text"].split()):
    fail(f"the batch column of batch_dense: {b}")
if [e["attrs"]["data-batch-outcome"] for e in dom.elements if e["tag"] == "td" and
        e["attrs"].get("data-batch-outcome") == "none"] != ["none"] * 4:
    fail("the cases without a batch axis do not say so")
for c in cells:
    want = "off" if c["attrs"]["data-case"] == "loose_sum" else "ok"
    if c["attrs"]["data-outcome"] != want or want not in c["attrs"]["class"].split():
        fail(f"cell {c['attrs']} is not {want}")
    words = ("\u2718 not as expected (1 of 2 runs)" if want == "off" else "\u2714 as expected")
    if words not in " ".join(c["text"].split()):
        fail(f"cell {c['attrs']['data-case']} says {c['text']!r}, not {words!r}")
links = [e for e in dom.elements if e["tag"] == "a" and e["attrs"].get("href", "").startswith("#d-")]
if sorted(l["attrs"]["href"] for l in links) != ["#d-clangish-loose_sum-t2-r1", "#d-gccish-loose_sum-t2-r1"]:
    fail(f"links to details: {[l['attrs'] for l in links]}")
panel = by_id.get("d-gccish-loose_sum-t2-r1")
if not panel or panel["attrs"].get("data-outcome") != "off":
    fail("no details panel for the planted run")
text = " ".join(panel["text"].split())
for said in ("The case expects identical; this run gave reordering.",
             "The first divergent probe is xent_loss.out0 at step 0, made by the op xent_loss.",
             "Its inputs were identical to the golden's",
             "1 of 1 elements differ",
             "locate ", "loose_sum.case --threads 1,2"):
    if said not in text:
        fail(f"the details panel lacks {said!r}: {text!r}")
# the command it gives reproduces the divergence
cmd = [e for e in dom.elements if e["tag"] == "code" and "cmd" in e["attrs"].get("class", "")][0]["text"]
# from the repository, naming the build relative to it (the page travels)
src, sb = sys.argv[4], sys.argv[5]
if sb.startswith(src + "/") and shlex.split(cmd)[0] != os.path.relpath(sb, src):
    fail(f"the command names the build {shlex.split(cmd)[0]!r}, not relative to the repository")
run = subprocess.run(shlex.split(cmd), capture_output=True, text=True, cwd=src)
if run.returncode != 1 or "xent_loss.out0" not in run.stdout or "reordering" not in run.stdout:
    fail(f"{cmd} exited {run.returncode}: {run.stdout}{run.stderr}")
if "True" in text or "False" in text or "[[" in text:
    fail(f"the details panel shows raw values: {text!r}")
expected = "".join(by_id["expected"]["text"].split())
if "loose_expected2threadsreorderingstep0xent_loss.out0(xent_loss)" not in expected:
    fail(f"the expected divergence is not listed: {expected!r}")
svgs = [e for e in dom.elements if e["tag"] == "svg"]
if len(svgs) < 8:
    fail(f"{len(svgs)} plots, expected 6 curves and 2 trend plots")
trend = by_id["trend-section"]["text"]
if "20000101T000000Z" not in trend or "2000-01-01" not in trend:
    fail("the trend lacks the previous night, or dates on its axis")
if len(glob.glob(sys.argv[3] + "/nightly-*.json")) != 2:
    fail("expected two nights in the history")
train = [c for c in night["builds"][0]["cases"] if c["name"] == "tiny_train"][0]
if [len(r["epochs"]) for r in train["runs"]] != [2, 2]:
    fail("the training runs do not have their 2 epochs")
PY

# a night that ran no configuration is not green: a fake build whose sweep
# succeeds with an empty report
cat >"$tmp/empty-sweep" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do
    [ "$1" = --json ] && printf '{"format_version": 1, "cases": []}\n' >"$2"
    shift
done
SH
chmod +x "$tmp/empty-sweep"
rc=0
"$src/tools/nightly" --samebits none="$tmp/empty-sweep" --out "$tmp/empty" \
    --history "$tmp/empty-history" "$tmp/cases/loose_sum.case" 2>"$tmp/empty.err" || rc=$?
[ "$rc" = 1 ] || fail "a night that ran no configuration exited $rc, expected 1"
grep -q "no configuration ran" "$tmp/empty.err" || fail "no word of the empty night: $(cat "$tmp/empty.err")"
grep -q 'data-exit="1"' "$tmp/empty/nightly.html" || fail "the empty night's page is not red"
echo "ok: the page shows the summary of the JSON, the planted run not as expected with its details," \
    "the expected divergence, curves and trend; screenshots in $art"
