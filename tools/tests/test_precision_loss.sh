#!/usr/bin/env bash
# The precision test through the real path (harness/NUMERICS.md, "Precision
# loss or reordering"):
# - mutant_dense_weights_tf32_partials (partials rounded to a 10-bit
#   mantissa) at 2, 3 and 4 threads: within the worst-case bound at its
#   origin (bound_ratio < 1), yet beyond-bound by the precision test
#   (precision.ratio > 1) at dense_bwd_weights; the text report says why;
# - kernel_layernorm_bwd_gamma_loose at 2 threads, an honest reordering:
#   the test applies (precision is not null) and its ratio is below 1.
# Usage: test_precision_loss.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_precision_loss.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$sb" sweep "$src/cases/mutant_dense_weights_tf32_partials.case" --threads 1..4 \
    --json "$tmp/mutant.json" >"$tmp/mutant.txt" 2>&1 ||
    fail "mutant sweep: exit $?: $(cat "$tmp/mutant.txt")"
python3 - "$tmp/mutant.json" <<'PY' || fail "mutant: $(cat "$tmp/mutant.txt")"
import json, sys
runs = json.load(open(sys.argv[1]))["cases"][0]["runs"]
assert [r["threads"] for r in runs] == [1, 2, 3, 4], runs
assert runs[0]["verdict"] == "identical", runs[0]["verdict"]
for r in runs[1:]:
    assert r["verdict"] == "beyond-bound", (r["threads"], r["verdict"])
    w = r["worst"]
    assert w["op"] == "dense_bwd_weights", w["op"]
    assert w["bound_ratio"] < 1.0, (r["threads"], w["bound_ratio"])
    p = w["precision"]
    assert p is not None and p["ratio"] > 1.0, (r["threads"], p)
    assert p["run_error"] > p["threshold"] > 0.0, p
PY
grep -q "threads 2 repeat 1: beyond-bound at step 0 dense_bwd_weights.out0 (dense_bwd_weights): bound ratio .*, precision loss: element" "$tmp/mutant.txt" ||
    fail "no precision-loss note: $(cat "$tmp/mutant.txt")"

"$sb" sweep "$src/cases/kernel_layernorm_bwd_gamma_loose.case" --threads 2 \
    --json "$tmp/loose.json" >"$tmp/loose.txt" 2>&1 ||
    fail "loose sweep: exit $?: $(cat "$tmp/loose.txt")"
python3 - "$tmp/loose.json" <<'PY' || fail "loose: $(cat "$tmp/loose.txt")"
import json, sys
r = json.load(open(sys.argv[1]))["cases"][0]["runs"][0]
assert r["verdict"] == "reordering", r["verdict"]
p = r["worst"]["precision"]
assert p is not None and p["ratio"] < 1.0, p
PY
echo "ok"
