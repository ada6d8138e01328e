#!/usr/bin/env bash
# A kind = command case that stops and resumes (harness/PRODUCERS.md, "The
# resume hook"): sgd.py swept at 1 and 2 threads, each resumed at steps 2
# and 4, against its committed golden (identical, every record from the
# resume on), with the resume axis in its JSON report; the same producer
# with a restore that drops the velocity (sgd_forget.case), located at the
# first step after the resume; a stop that leaves no checkpoint, a crash of
# its configuration; a restore that starts again at step 0, an input error
# naming the cause; and the refusals, one line and exit 2 each: a case
# without the hook (--resume, [sweep] resume), a resume step past the
# golden's last step, a stop key without a restore key.
# Usage: test_command_resume.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
/usr/bin/python3 -c 'import numpy, xxhash' 2>/dev/null ||
    { echo "1..0 # SKIP /usr/bin/python3 has no numpy or xxhash"; exit 0; }
. "$src/harness/tests/user/tap.sh"
tap_begin test_command_resume
dir=$src/harness/examples/command

rc=0
"$sb" sweep "$dir/sgd.case" --work-dir "$tmp/w" --json "$tmp/r.json" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && ok "resumed at 2 and 4, 1 and 2 threads: sweep exits 0" ||
    fail "sweep exit $rc: $(cat "$tmp/out")"
[ "$(grep -Ec '^resume [24] +[12] +1  identical     identical ' "$tmp/out")" = 4 ] &&
    [ "$(grep -Ec '^threads +[12] +1  identical ' "$tmp/out")" = 2 ] &&
    ok "every resumed run is the golden from its resume on" || fail "table: $(cat "$tmp/out")"
/usr/bin/python3 - "$tmp/r.json" <<'PY' && ok "the JSON report: axis resume, resume_at 2 and 4" ||
import json, sys
runs = json.load(open(sys.argv[1]))["cases"][0]["runs"]
assert sorted(r.get("resume_at", 0) for r in runs if r["axis"] == "resume") == [2, 2, 4, 4], runs
PY
    fail "JSON: $(cat "$tmp/r.json")"
[ -z "$(find "$tmp/w" -name '*.ckpt' 2>/dev/null)" ] && ok "no checkpoint left in the work directory" ||
    fail "left: $(find "$tmp/w")"

rc=0
"$sb" sweep "$dir/sgd_forget.case" --work-dir "$tmp/f" >"$tmp/fout" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(grep -Ec '^resume 3 +[12] +1  beyond-bound  beyond-bound    step 3 sgd\.v \(momentum\) +y ' "$tmp/fout")" = 2 ] &&
    ok "a restore that drops the velocity: an origin at step 3, sgd.v, beyond-bound" ||
    fail "forget sweep exit $rc: $(cat "$tmp/fout")"

# a stop that runs the whole run and writes nothing where the checkpoint goes
mkdir "$tmp/c" "$tmp/golden"
cp "$dir/sgd.py" "$dir/producer.py" "$tmp/c/"
sed -e 's/^name = sgd_numpy/name = sgd_nock/' \
    -e 's/^stop = .*/stop = --dump-step {resume_at} --dump-dir {checkpoint}/' \
    "$dir/sgd.case" >"$tmp/c/nock.case"
"$sb" golden "$tmp/c/nock.case" >/dev/null
rc=0
"$sb" sweep "$tmp/c/nock.case" --threads 1 --resume 2 --work-dir "$tmp/n" >"$tmp/nout" 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -Eq '^resume 2 +1 +1  crash ' "$tmp/nout" && grep -q "left no checkpoint" "$tmp/nout" &&
    ok "a stop that leaves no checkpoint: a crash of that configuration, exit 3" ||
    fail "no-checkpoint sweep exit $rc: $(cat "$tmp/nout")"

# a restore that ignores its checkpoint and starts again at step 0
sed -e 's/^name = sgd_numpy/name = sgd_ignores/' \
    -e 's/^restore = .*/restore = --dump-dir {checkpoint}.unused/' \
    "$dir/sgd.case" >"$tmp/c/ignores.case"
"$sb" golden "$tmp/c/ignores.case" >/dev/null
rc=0
"$sb" sweep "$tmp/c/ignores.case" --threads 1 --resume 2 --work-dir "$tmp/i" >"$tmp/iout" 2>"$tmp/ierr" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/ierr")" = 1 ] &&
    grep -qF "$tmp/c/ignores.case (resume=2 threads=1): the resumed run's trace: the resumed process wrote records from step 0 (probe init.w) where it must start at step 2 (K)" "$tmp/ierr" &&
    ok "a restore that starts again at step 0: exit 2, the cause in one line naming the case once" ||
    fail "ignores sweep exit $rc: $(cat "$tmp/ierr")"

refused() {     # WHAT MESSAGE ARGS...: exit 2 and one line holding MESSAGE
    local what=$1 message=$2 rc=0
    shift 2
    "$sb" "$@" >"$tmp/rout" 2>"$tmp/rerr" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/rerr")" = 1 ] && grep -qF -- "$message" "$tmp/rerr" &&
        ok "$what: exit 2, one line" || fail "$what: exit $rc: $(cat "$tmp/rerr")"
}
refused "--resume on a case without the hook" \
    "$dir/matvec.case: resume at 1: a kind = command case resumes through the keys stop and restore" \
    sweep "$dir/matvec.case" --resume 1 --work-dir "$tmp/r1"
refused "a resume step past the golden's last step" \
    "$dir/sgd.case: resume at 6: K must be in 1..5 (the golden's last step)" \
    sweep "$dir/sgd.case" --resume 6 --work-dir "$tmp/r2"
sed -e 's/^threads = 1..4/threads = 1..4\nresume = 1/' "$dir/matvec.case" >"$tmp/c/nohook.case"
refused "[sweep] resume in a case without the hook" \
    "$tmp/c/nohook.case:18: expected resume in a kind = command case with the keys stop and restore" \
    sweep "$tmp/c/nohook.case" --work-dir "$tmp/r3"
sed -e '/^restore = /d' "$dir/sgd.case" >"$tmp/c/halfhook.case"
refused "a stop key without a restore key" \
    "$tmp/c/halfhook.case:17: expected keys stop and restore in [command] together" \
    sweep "$tmp/c/halfhook.case" --work-dir "$tmp/r4"
tap_end
