#!/usr/bin/env bash
# tools/nightly's page in headless Chromium. Without building a matrix: two
# "builds" given with --samebits (this build's samebits twice) sweep a det
# kernel case, a loose kernel case whose golden is made at 1 thread while its
# case expects `identical` at 2 (so a failing cell with a divergence to show),
# and a tiny training case on Fashion-MNIST (2 epochs of 2 steps of 64). The page
# must load with no script error, run its script (body data-ready="yes"),
# and show the matrix with a failing cell linked to its details, the curves
# (SVG by gnuplot) and the trend (over a previous night). Skips (77) without
# chromium or gnuplot.
# Usage: test_nightly_page.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
command -v chromium >/dev/null || { echo "chromium not installed: skip"; exit 77; }
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skip"; exit 77; }
[ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] ||
    [ -d /usr/share/datasets/fashion-mnist ] || { echo "dataset-fashion-mnist not installed: skip"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_nightly_page.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cases" "$tmp/golden"
cp "$src/cases/kernel_dropout_mask_det.case" "$tmp/cases/"
cat > "$tmp/cases/loose_sum.case" <<'CASE'
[case]
kind = kernel
family = loose
seed = 3
[kernel]
op = xent_loss
n = 4096
k = 10
[sweep]
threads = 1,2
expect = identical
CASE
cat > "$tmp/cases/tiny_train.case" <<'CASE'
[case]
kind = train
family = det
seed = 1
[train]
model = keras_mnist_cnn
dataset = fashion-mnist
train = 0..128
test = 0..64
batch = 64
epochs = 2
[sweep]
threads = 1,2
CASE
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
    echo "FAIL: tools/nightly exited $rc, expected 1"
    exit 1
fi

profile=$tmp/profile
rc=0
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --disable-sync --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 --dump-dom "file://$tmp/out/nightly.html" \
    >"$tmp/dom.html" 2>"$tmp/chromium.err" || rc=$?
if [ "$rc" != 0 ]; then
    tail -20 "$tmp/chromium.err"
    echo "FAIL: chromium exited $rc"
    exit 1
fi
fail() { echo "FAIL: $*"; exit 1; }
if grep -E "Uncaught|CONSOLE.*(Error|error)" "$tmp/chromium.err"; then
    fail "script errors while loading the page"
fi
grep -q '<body data-ready="yes">' "$tmp/dom.html" || fail "the page's script did not run"
grep -q '<table id="matrix">' "$tmp/dom.html" || fail "no matrix"
# 8 + 2 + 2 (case, threads) rows, one column per build
[ "$(grep -o '<td class="cell' "$tmp/dom.html" | wc -l)" = 24 ] || fail "expected 24 matrix cells"
grep -q '<td class="cell off" data-ok="0" style="background:#7fb3d5" title="expected identical"><a href="#d-gccish-loose_sum-t2-r1">reordering</a>' \
    "$tmp/dom.html" || fail "the loose cell at 2 threads is not shown failing with a link"
grep -q 'id="d-gccish-loose_sum-t2-r1"' "$tmp/dom.html" || fail "no details for the failing cell"
grep -q 'xent_loss.out0' "$tmp/dom.html" || fail "the details do not name the divergent probe"
[ "$(grep -o '<svg' "$tmp/dom.html" | wc -l)" -ge 7 ] || fail "expected 6 curve plots and a trend plot"
grep -q '<table id="trend">' "$tmp/dom.html" || fail "no trend"
grep -q '<td>20000101T000000Z</td>' "$tmp/dom.html" || fail "the trend lacks the previous night"
[ "$(find "$tmp/history" -name "nightly-*.json" | wc -l)" = 2 ] || fail "expected two nights in the history"
python3 - "$tmp/out/nightly.json" <<'PY'
import json, sys
night = json.load(open(sys.argv[1]))
assert night["summary"] == {"builds": 2, "builds_failed": 0, "runs": 24, "runs_not_as_expected": 2,
                            "runs_not_reached": 0}, night["summary"]
assert [b["max_steps"] for b in night["builds"]] == [None, None]
train = [c for c in night["builds"][0]["cases"] if c["name"] == "tiny_train"][0]
assert [len(r["epochs"]) for r in train["runs"]] == [2, 2]
PY
echo "ok: the page loads, runs its script and shows the matrix, details, curves and trend"
