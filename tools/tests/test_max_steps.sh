#!/usr/bin/env bash
# `--max-steps` end to end on tiny training runs (6 MNIST digits in batches
# of 3: 2 steps, then an evaluation of 2 digits at step 2), each against the
# golden of its whole run:
# - mutant relu_chunk_off_by_one at 3 threads: 3 divides every training
#   batch's relu1 (3 x 21632 elements) but not the evaluation's (2 x 21632),
#   so the whole run diverges only at step 2. With --max-steps 1 that lies
#   beyond the steps compared: the run is not reached (TAP skip, JUnit
#   skipped, JSON not_reached), the sweep still exits 0; with --max-steps 2
#   (the case's own length) it runs whole and is beyond-bound as expected.
# - the loose family at 3 threads diverges at step 0: with --max-steps 1 the
#   truncated run finds the whole run's first divergence, a reordering.
# - `run --max-steps`, `locate --max-steps`, shards of a truncated sweep
#   merged, and tools/nightly's report of a step limit. Skips (77) without
#   gnuplot, which tools/nightly draws with.
# Usage: test_max_steps.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
export SAMEBITS_DATA_DIR=${SAMEBITS_DATA_DIR:-$src/data}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_max_steps.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export TMPDIR=$tmp      # work directories of failing runs stay in here
fail() { echo "FAIL: $*"; exit 1; }
command -v gnuplot >/dev/null || { echo "gnuplot not installed (apt-get install gnuplot-nox): skip"; exit 77; }

mkdir -p "$tmp/cases" "$tmp/golden"
tiny() {    # tiny NAME FAMILY [EXTRA [CASE] LINES] [-- EXTRA [SWEEP] LINES]
    local name=$1 family=$2 case_lines=() sweep_lines=() into=case_lines
    shift 2
    for line in "$@"; do
        if [ "$line" = -- ]; then into=sweep_lines; continue; fi
        eval "$into+=(\"\$line\")"
    done
    {
        printf '[case]\nkind = train\nfamily = %s\nseed = 1\n' "$family"
        printf '%s\n' "${case_lines[@]}"
        printf '[train]\nmodel = keras_mnist_cnn\ndataset = mnist\ntrain = 0..6\ntest = 6..8\n'
        printf 'batch = 3\nepochs = 1\n[sweep]\nthreads = 1,3\n'
        printf '%s\n' "${sweep_lines[@]}"
    } >"$tmp/cases/$name.case"
}
tiny clean det
tiny loose loose -- 'expect = reordering' 'expect.1 = identical'
tiny relu det 'mutant = relu_chunk_off_by_one' -- 'expect.3 = beyond-bound' \
    'golden = golden/clean.golden'
"$sb" golden "$tmp/cases/clean.case" "$tmp/cases/loose.case" >/dev/null
[ "$("$sb" list "$tmp/cases/relu.case" | grep -c '2 training steps in all')" = 1 ] ||
    fail "samebits list does not say the case trains 2 steps"

# sweep CASE ARGS...: the exit status, reports in $tmp/out.{json,xml,tap}
sweep() {
    local rc=0
    "$sb" sweep "$@" --json "$tmp/out.json" --junit "$tmp/out.xml" --tap \
        >"$tmp/out.tap" 2>"$tmp/out.txt" || rc=$?
    echo "$rc"
}
check() {  # check PYTHON-ASSERTIONS: on d (the JSON report) and x (the JUnit root)
    python3 - "$tmp/out.json" "$tmp/out.xml" "$1" <<'PY' || { cat "$tmp/out.txt"; fail "$2"; }
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
x = ET.parse(sys.argv[2]).getroot()
runs = {(c["name"], r["threads"]): r for c in d["cases"] for r in c["runs"]}
exec(sys.argv[3])
PY
}

rc=$(sweep "$tmp/cases/relu.case")
[ "$rc" = 0 ] || fail "whole mutant sweep exited $rc"
check 'r = runs["relu", 3]
assert r["verdict"] == "beyond-bound" and r["truncated"] is None, r
assert (r["first_divergence"]["step"], r["first_divergence"]["probe"]) == (2, "eval.b0.relu1.out")' \
    "the whole mutant run does not diverge at the evaluation"

rc=$(sweep "$tmp/cases/relu.case" --max-steps 1)
[ "$rc" = 0 ] || fail "a run not reached changed the exit status to $rc"
grep -qx 'ok 2 - relu threads=3 repeat=1: identical # SKIP expected beyond-bound, not reached in the first 1 step' \
    "$tmp/out.tap" || { cat "$tmp/out.tap"; fail "no TAP skip for the run not reached"; }
grep -q '^relu: as expected in the first 1 step; 1 of 2 runs not reached$' "$tmp/out.txt" ||
    fail "the text summary does not say so"
check 'r1, r3 = runs["relu", 1], runs["relu", 3]
assert r1["truncated"] == r3["truncated"] == {"max_steps": 1}
assert (r1["not_reached"], r3["not_reached"]) == (False, True)
assert r3["verdict"] == "identical" and r3["as_expected"] is False and r3["metrics"] is None
assert d["cases"][0]["as_expected"] is True
assert x.find("testsuite").get("skipped") == "1" and x.get("failures") == "0"' "the reports do not mark the run not reached"

rc=$(sweep "$tmp/cases/relu.case" --max-steps 2)
[ "$rc" = 0 ] || fail "--max-steps of the case's own length exited $rc"
check 'assert runs["relu", 3]["verdict"] == "beyond-bound" and runs["relu", 3]["truncated"] is None' \
    "--max-steps of the case's own length did not run it whole"

rc=$(sweep "$tmp/cases/loose.case")
[ "$rc" = 0 ] || fail "whole loose sweep exited $rc"
cp "$tmp/out.json" "$tmp/loose_whole.json"
rc=$(sweep "$tmp/cases/loose.case" --max-steps 1)
[ "$rc" = 0 ] || fail "truncated loose sweep exited $rc"
python3 - "$tmp/loose_whole.json" "$tmp/out.json" <<'PY' || fail "the truncated loose run is not judged as the whole one"
import json, sys
whole, cut = (json.load(open(p))["cases"][0]["runs"][1] for p in sys.argv[1:])
assert cut["truncated"] == {"max_steps": 1} and cut["verdict"] == "reordering", cut
keys = ("index", "step", "probe", "op", "inputs_identical", "differing", "max_abs", "bound_ratio")
assert cut["first_divergence"]["step"] == 0
assert [cut["first_divergence"][k] for k in keys] == [whole["first_divergence"][k] for k in keys]
PY

# run --max-steps: step 0 and nothing after it, not even the evaluation of
# the epoch it cut (nor its metrics line)
OMP_NUM_THREADS=1 "$sb" run "$tmp/cases/clean.case" --threads 1 --max-steps 1 --trace "$tmp/t1.trace"
if grep -q '^epoch ' "$tmp/t1.trace"; then fail "run --max-steps 1 evaluated the epoch it cut"; fi
python3 - "$tmp/t1.trace" "$tmp/golden/clean.golden" <<'PY' || fail "run --max-steps 1 is not the golden's step 0"
import sys
def records(path):
    return [l.split() for l in open(path) if l[:1].isdigit()]
cut, golden = records(sys.argv[1]), records(sys.argv[2])
step0 = [r for r in golden if r[0] == "0"]
assert cut == step0, "the trace is not exactly the golden's step 0"
PY

rc=0
"$sb" locate "$tmp/cases/relu.case" --threads 1,3 --max-steps 1 >"$tmp/locate.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/locate.txt"; fail "locate --max-steps 1 exited $rc, expected 0 (identical)"; }
rc=0
"$sb" locate "$tmp/cases/relu.case" --threads 1,3 >"$tmp/locate.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/locate.txt"; fail "whole locate exited $rc, expected 1"; }

# shards of a truncated sweep merge into the unsharded report
both=("$tmp/cases/relu.case" "$tmp/cases/loose.case" --max-steps 1)
"$sb" sweep "${both[@]}" --json "$tmp/full.json" >/dev/null 2>&1
for i in 1 2; do
    "$sb" sweep "${both[@]}" --shard "$i/2" --json "$tmp/s$i.json" >/dev/null 2>&1
done
"$sb" report --merge "$tmp/s2.json" "$tmp/s1.json" --json "$tmp/merged.json" >/dev/null 2>&1
python3 - "$tmp/full.json" "$tmp/merged.json" <<'PY' || fail "the merged truncated report differs from the unsharded one"
import json, sys
def strip(x):    # without the times and the sweep id, which each process has its own
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("seconds", "sweep_id")}
    return [strip(v) for v in x] if isinstance(x, list) else x
full, merged = (strip(json.load(open(p))) for p in sys.argv[1:])
assert full == merged
assert sum(r["not_reached"] for c in merged["cases"] for r in c["runs"]) == 1
PY

rc=0
"$src/tools/nightly" --samebits one="$sb" --max-steps 1 --no-census --out "$tmp/night" \
    --history "$tmp/history" "$tmp/cases/relu.case" "$tmp/cases/loose.case" 2>"$tmp/night.err" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/night.err"; fail "tools/nightly exited $rc with a run not reached"; }
python3 - "$tmp/night/nightly.json" <<'PY' || fail "nightly.json does not show the step limit"
import json, sys
night = json.load(open(sys.argv[1]))
assert night["builds"][0]["max_steps"] == 1
assert night["summary"]["runs_not_reached"] == 1 and night["summary"]["runs_not_as_expected"] == 0
PY
grep -q '<td class="cell unreached"' "$tmp/night/nightly.html" || fail "the page shows no unreached cell"
grep -q '<small>first 1 step</small>' "$tmp/night/nightly.html" || fail "the page does not show the limit"
echo "ok: truncated sweeps compare the golden's first steps and report what they did not reach"
