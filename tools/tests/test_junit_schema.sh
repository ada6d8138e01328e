#!/usr/bin/env bash
# The JUnit report of real sweeps against the Jenkins JUnit schema kept in
# harness/report/schema/ (xmllint --schema), and what a CI server counts
# from it. Three sweeps of planted cases:
#   1. a det kernel case (identical), a loose kernel case whose golden is
#      made at 1 thread while it expects identical at 2 (a <failure>, its
#      details in <system-out>), a tiny det training case that expects
#      beyond-bound at 2 threads swept with --max-steps 1 (a <skipped>);
#   2. the training case with --timeout 0.001 (every run an <error>: its runs
#      take a few hundred milliseconds, where a kernel case's can finish
#      inside the millisecond on a fast CPU);
#   3. the det case and a case without a golden (exit 2: an <error> in a
#      testsuite `samebits`, not a green report of one case).
# Usage: test_junit_schema.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
schema=$src/harness/report/schema/jenkins-junit.xsd
command -v xmllint >/dev/null || { echo "xmllint not installed (libxml2-utils): skip"; exit 77; }
[ -d /usr/share/datasets/fashion-mnist ] || { echo "dataset-fashion-mnist not installed: skip"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_junit_schema.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cases" "$tmp/golden"
fail() { echo "FAIL: $*"; exit 1; }
planted=$src/tools/tests/planted
cp "$planted/xent_sum.case" "$tmp/cases/loose_sum.case"
sed -e 's/^family = loose/family = det/' "$planted/xent_sum.case" >"$tmp/cases/det_sum.case"
{ cat "$planted/tiny_train.case"; echo "expect.2 = beyond-bound"; } >"$tmp/cases/tiny_train.case"
"$sb" golden "$tmp"/cases/*.case >/dev/null
cp "$tmp/cases/det_sum.case" "$tmp/cases/no_golden.case"

# sweep N EXPECTED_EXIT ARGS...: the JUnit report in $tmp/N.xml, validated
sweep() {
    local n=$1 want=$2 rc=0
    shift 2
    "$sb" sweep "$@" --junit "$tmp/$n.xml" --work-dir "$tmp/work$n" >"$tmp/$n.out" 2>&1 || rc=$?
    [ "$rc" = "$want" ] || { cat "$tmp/$n.out"; fail "sweep $n exited $rc, expected $want"; }
    xmllint --noout --schema "$schema" "$tmp/$n.xml" 2>"$tmp/$n.lint" ||
        { cat "$tmp/$n.lint" "$tmp/$n.xml"; fail "sweep $n: the JUnit report fails the schema"; }
}
sweep 1 1 "$tmp/cases/det_sum.case" "$tmp/cases/loose_sum.case" "$tmp/cases/tiny_train.case" \
    --max-steps 1
sweep 2 3 "$tmp/cases/tiny_train.case" --timeout 0.001
sweep 3 2 "$tmp/cases/det_sum.case" "$tmp/cases/no_golden.case"

# the schema refuses what the report must not hold: it can fail
sed -e 's/<testsuites name="samebits"/<testsuites skipped="0" name="samebits"/' "$tmp/1.xml" >"$tmp/bad.xml"
if xmllint --noout --schema "$schema" "$tmp/bad.xml" 2>/dev/null; then
    fail "the schema takes a skipped attribute on <testsuites>"
fi

/usr/bin/python3 - "$tmp" <<'PY'
import re, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]

def counts(el):
    return {k: el.get(k) for k in ("tests", "failures", "errors")}

def check_totals(root):
    # the totals are the sums of the testsuites', which count their testcases
    suites = root.findall("testsuite")
    for k in ("tests", "failures", "errors"):
        assert int(root.get(k)) == sum(int(s.get(k)) for s in suites), (k, ET.tostring(root))
    for s in suites:
        cases = s.findall("testcase")
        assert int(s.get("tests")) == len(cases)
        assert int(s.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(s.get("errors")) == sum(c.find("error") is not None for c in cases)
        assert int(s.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
    for el in root.iter():
        if el.get("time") is not None:
            assert re.fullmatch(r"[0-9]+\.[0-9]{3}", el.get("time")), el.get("time")

r1 = ET.parse(f"{tmp}/1.xml").getroot()
check_totals(r1)
assert counts(r1) == {"tests": "6", "failures": "1", "errors": "0"}, counts(r1)
det, loose, train = r1.findall("testsuite")
assert all(c.find("system-out") is None for c in det.findall("testcase"))
bad = loose.findall("testcase")[1]
f = bad.find("failure")
assert f.get("type") == "reordering"
assert f.get("message") == "expected identical, got reordering at step 0 xent_loss.out0 (xent_loss)", f.get("message")
out = bad.find("system-out").text
assert "first divergence: step 0 xent_loss.out0 (xent_loss)" in out, out
assert "its inputs are identical" in out and "elements differ" in out and "bound ratio" in out, out
assert train.get("skipped") == "1" and train.findall("testcase")[1].find("skipped") is not None

r2 = ET.parse(f"{tmp}/2.xml").getroot()
check_totals(r2)
assert counts(r2) == {"tests": "2", "failures": "0", "errors": "2"}, counts(r2)
for c in r2.iter("testcase"):
    e = c.find("error")
    # milliseconds, not "0.0 s"
    assert e.get("type") == "timeout" and re.search(r"timed out after 0\.0[0-9][0-9] s", e.get("message")), e.get("message")
    assert c.find("system-err") is not None

r3 = ET.parse(f"{tmp}/3.xml").getroot()
check_totals(r3)
assert counts(r3) == {"tests": "3", "failures": "0", "errors": "1"}, counts(r3)
e = r3.findall("testsuite")[-1].find("testcase").find("error")
assert e.get("type") == "input" and "no_golden" in e.get("message"), e.get("message")
PY
echo "ok: the JUnit reports of a failure, a skip, timeouts and an input error pass the schema"
