#!/usr/bin/env bash
# A user's op with no bound is never called a bug nor a reordering
# (unbounded.c): swept at 1 and 2 threads, the op with no bound is
# `unbounded`, the op declared exact `beyond-bound`, the op with a bound
# `reordering`; the sweep exits 1 (two runs not as expected), and the text
# report and the JUnit failure name the op and say that a bound can be given;
# `samebits diff --dumps` of the locator's dumps says the same.
# One run a count (--repeat 1): the ops are the same sum at every run.
# Usage: test_unbounded.sh UNBOUNDED_PROGRAM SAMEBITS
set -euo pipefail
prog=$1 samebits=$2
. "$(dirname "$0")"/tap.sh
tap_begin test_unbounded

mkdir "$tmp/g"
"$prog" golden --golden-dir "$tmp/g" >/dev/null
rc=0
"$prog" sweep --threads 1,2 --repeat 1 --golden-dir "$tmp/g" --work-dir "$tmp/w" --junit "$tmp/j.xml" \
    --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && ok "the sweep is not as expected (exit 1)" ||
    fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"

row() {     # row CASE: the verdict and expected cells of the case's 2-thread row
    awk -v c="$1" '/^case /{in_case = ($2 == c)}
                   in_case && $1 == 2 {print $3, $4 ($5 == "*" ? " *" : "")}' "$tmp/out"
}
[ "$(row sum_no_bound)" = "unbounded reordering *" ] && ok "no bound: unbounded" ||
    fail "sum_no_bound: $(row sum_no_bound)"
[ "$(row sum_exact)" = "beyond-bound reordering *" ] && ok "declared exact: beyond-bound" ||
    fail "sum_exact: $(row sum_exact)"
[ "$(row sum_bounded)" = "reordering reordering" ] && ok "a bound: reordering" ||
    fail "sum_bounded: $(row sum_bounded)"

why='no bound is known for op my_sum (step 0 sum.out): its elements differ and a reordering cannot be told from a bug; supply the op'"'"'s bound (sum.out.bound.npy beside its dump'
grep -qF "threads 2 repeat 1: unbounded: $why" "$tmp/out" &&
    ok "the text report names the op and what to add" || fail "text: $(cat "$tmp/out")"
grep -qF "message=\"expected reordering, got unbounded: ${why%%\'*}" "$tmp/j.xml" &&
    ok "the JUnit failure names the op and what to add" || fail "junit: $(cat "$tmp/j.xml")"
schema=$(dirname "$0")/../../report/schema/jenkins-junit.xsd
if ! command -v xmllint >/dev/null; then
    n=$((n + 1)); echo "ok $n - the JUnit report is valid # SKIP xmllint not installed"
elif xmllint --noout --schema "$schema" "$tmp/j.xml" 2>"$tmp/lint"; then
    ok "the JUnit report is valid against the Jenkins schema"
else
    fail "xmllint: $(cat "$tmp/lint")"
fi
python3 - "$tmp/r.json" <<'PY' && ok "the JSON report: unbounded, bound_ratio null" || fail "json"
import json, sys
cases = {c["name"]: c for c in json.load(open(sys.argv[1]))["cases"]}
r = cases["sum_no_bound"]["runs"][1]
assert r["verdict"] == "unbounded" and r["first_divergence"]["bound_ratio"] is None, r
assert r["first_divergence"]["differing"] == 1, r
assert cases["sum_exact"]["runs"][1]["first_divergence"]["bound_ratio"] == "inf"
PY

diff_dumps() {  # diff_dumps CASE: samebits diff --dumps of the case's 2-thread locate
    local l=$tmp/w/$1.t2.r1.locate rc=0
    "$samebits" diff "$l/1/run.trace" "$l/2/run.trace" --dumps "$l/1/0,$l/2/0" >"$tmp/diff" || rc=$?
    [ "$rc" = 1 ]
}
diff_dumps sum_no_bound && grep -qx 'verdict: unbounded' "$tmp/diff" &&
    grep -qE ', max ULP [0-9]+, no bound known$' "$tmp/diff" && grep -qF "  $why" "$tmp/diff" &&
    ok "diff --dumps without a bound file: unbounded, the bound missing" ||
    fail "diff --dumps: $(cat "$tmp/diff")"
diff_dumps sum_exact && grep -qx 'verdict: beyond-bound' "$tmp/diff" &&
    grep -qF 'bound ratio inf' "$tmp/diff" &&
    ok "diff --dumps with a bound of zeros: beyond-bound" || fail "diff --dumps: $(cat "$tmp/diff")"
tap_end
