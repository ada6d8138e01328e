#!/usr/bin/env bash
# A kind = command case end to end (harness/PRODUCERS.md): matvec.py, a
# NumPy producer, swept at 1..4 threads against its committed golden
# (reordering above one thread, located within the bound it dumps), with
# its JSON and JUnit reports and its census; `samebits locate` on it; and a copy that
# aborts in its relu op, placed there from the trace it streams.
# Usage: test_command_case.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
/usr/bin/python3 -c 'import numpy, xxhash' 2>/dev/null ||
    { echo "1..0 # SKIP /usr/bin/python3 has no numpy or xxhash"; exit 0; }
. "$src/harness/tests/user/tap.sh"
tap_begin test_command_case
case=$src/harness/examples/command/matvec.case

rc=0
"$sb" sweep "$case" --threads 1-4 --work-dir "$tmp/w" --json "$tmp/r.json" \
    --junit "$tmp/r.xml" --census >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && ok "the committed golden: sweep 1-4 exits 0" || fail "sweep exit $rc: $(cat "$tmp/out")"
[ "$(grep -c ' reordering    reordering      step 0 mv.out (matvec) ' "$tmp/out")" = 3 ] &&
    ok "2, 3 and 4 threads: reordering at mv.out, within the dumped bound" ||
    fail "table: $(cat "$tmp/out")"
/usr/bin/python3 - "$tmp/r.json" <<'PY' && ok "the JSON report names the case kind command" || fail "JSON: $(cat "$tmp/r.json")"
import json, sys
c = json.load(open(sys.argv[1]))["cases"][0]
assert c["kind"] == "command" and c["as_expected"], c
PY
grep -q 'tests="4"' "$tmp/r.xml" && ok "a JUnit report of 4 tests" || fail "JUnit: $(cat "$tmp/r.xml")"
grep -Eq '^mv\.out +matvec += +R +R +R ' "$tmp/out" && grep -Eq '^relu\.out +relu +(= +)(d +){3}' "$tmp/out" &&
    ok "the census: mv.out a reordering at 2-4 threads, relu.out differing downstream" ||
    fail "census: $(cat "$tmp/out")"

rc=0
"$sb" locate "$case" --threads 1,2 --work-dir "$tmp/l" >"$tmp/loc" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q " 2      1  reordering    reordering      step 0 mv.out (matvec) " "$tmp/loc" &&
    ok "locate 1,2: reordering" || fail "locate exit $rc: $(cat "$tmp/loc")"

# the same producer, aborting in its relu op above one thread
mkdir "$tmp/c" "$tmp/golden"
cp "$src/harness/examples/command/matvec.py" "$src/harness/examples/command/producer.py" "$tmp/c/"
sed -e 's/^name = matvec_numpy/name = matvec_crash/' \
    -e 's/--trace {trace}$/--trace {trace} --crash-in relu/' \
    -e 's/^expect = reordering/expect = crash/' "$case" >"$tmp/c/crash.case"
"$sb" golden "$tmp/c/crash.case" >/dev/null
rc=0
"$sb" sweep "$tmp/c/crash.case" --threads 1,2 --work-dir "$tmp/wc" >"$tmp/cout" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "killed by signal 6 (Aborted) at step 0 in op relu (relu.out), after probe mv.out" "$tmp/cout" &&
    ok "a crash placed in its op from the streamed trace" || fail "crash sweep exit $rc: $(cat "$tmp/cout")"
tap_end
