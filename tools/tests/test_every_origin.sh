#!/usr/bin/env bash
# Every origin of a run judged, all in one re-run of each side:
# mutant_xent_mean_of_means at 3 threads has 4 origins (the loss of each of
# its 3 steps and of the evaluation), the first a reordering and a later one
# beyond its bound.
# - swept as is: all 4 located by one child of the reference configuration
#   and one at 3 threads (each given a dump list of the 4, dumps in one
#   directory per step), and the run is beyond-bound, as the case expects;
# - with --max-origins 1 the cap is hit: the reports say so, and the run,
#   judged on its first origin alone, is a reordering, not as expected;
# - `run --dump-list` refuses a malformed list and a listed probe that never
#   came, exit 2, naming the file's line or the probe.
# Usage: test_every_origin.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
export SAMEBITS_DATA_DIR=${SAMEBITS_DATA_DIR:-$src/data}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_every_origin.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
case=$src/cases/mutant_xent_mean_of_means.case
loc=$tmp/w/mutant_xent_mean_of_means.t3.r1.locate

"$sb" sweep "$case" --threads 1,3 --work-dir "$tmp/w" --json "$tmp/all.json" >"$tmp/all.txt" ||
    fail "sweep: exit $?: $(cat "$tmp/all.txt")"
python3 - "$tmp/all.json" <<'PY' || fail "every origin: $(cat "$tmp/all.txt")"
import json, sys
r = json.load(open(sys.argv[1]))["cases"][0]["runs"][1]
assert r["threads"] == 3 and r["verdict"] == "beyond-bound", r["verdict"]
assert (r["origins_count"], r["origins_located"], r["origins_capped"]) == (4, 4, False), r
assert all(o["differing"] is not None for o in r["origins"]), r["origins"]
assert r["worst"]["verdict"] == "beyond-bound" and r["worst"]["step"] > 0, r["worst"]
PY
[ "$(ls "$loc")" = "$(printf '1\n3')" ] ||
    fail "one re-run per side expected, found: $(ls "$loc")"
[ "$(wc -l <"$loc/3/dump.list")" = 4 ] || fail "dump list: $(cat "$loc/3/dump.list")"
while IFS=$'\t' read -r step probe; do
    for side in 1 3; do
        [ -f "$loc/$side/$step/$probe.npy" ] || fail "no dump $side/$step/$probe.npy"
    done
done <"$loc/3/dump.list"
echo "ok: 4 origins located by one re-run of each side; beyond-bound"

rc=0
"$sb" sweep "$case" --threads 1,3 --max-origins 1 --work-dir "$tmp/w1" --json "$tmp/one.json" \
    >"$tmp/one.txt" || rc=$?
[ "$rc" = 1 ] || fail "--max-origins 1: exit $rc, expected 1"
grep -q '^threads 3 repeat 1: 4 origins, 1 located (cap hit: --max-origins); ' "$tmp/one.txt" ||
    fail "cap not reported: $(cat "$tmp/one.txt")"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["cases"][0]["runs"][1]
assert r["verdict"] == "reordering" and r["origins_capped"] and r["origins_located"] == 1, r
' "$tmp/one.json" || fail "--max-origins 1 JSON"
echo "ok: --max-origins 1 hits the cap and says so"

printf '0 loss.fwd.loss\n' >"$tmp/bad.list"
rc=0
"$sb" run "$case" --threads 1 --trace "$tmp/t" --dump-list "$tmp/bad.list" --dump-dir "$tmp/d" \
    2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qx "$tmp/bad.list:1: expected STEP<tab>PROBE" "$tmp/err" ||
    fail "malformed list: exit $rc: $(cat "$tmp/err")"
printf '0\tloss.fwd.loss\n1\tno.such.probe\n' >"$tmp/missing.list"
rc=0
"$sb" run "$case" --threads 1 --trace "$tmp/t" --dump-list "$tmp/missing.list" \
    --dump-dir "$tmp/d" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "probe no.such.probe at step 1 never happened" "$tmp/err" &&
    [ -f "$tmp/d/0/loss.fwd.loss.npy" ] ||
    fail "missing probe: exit $rc: $(cat "$tmp/err")"
echo "ok: run --dump-list refuses a bad line and a probe that never came"
