#!/usr/bin/env bash
# tools/slurm/merge without a scheduler: three shards of a sweep run by
# hand, each told its shard by another scheduler's variables (GoogleTest's,
# a Kubernetes Indexed Job's with --shard auto/3, a Slurm array task's),
# with the status files a task writes. Every shard there: green, the
# unsharded sweep's runs and verdicts. A task that started and never ended,
# then one that never started: exit 7, each named with what its files say.
# Usage: test_slurm_merge.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_slurm_merge.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cases=("$src/cases/kernel_dense_fwd_det.case" "$src/cases/kernel_xent_loss_loose.case")
d=$tmp/job
mkdir -p "$d/status" "$d/shards"
{
    printf 'mode=sweep\nsrc=%q\ntasks=3\nsamebits=%q\nhistory=%q\n' "$src" "$sb" "$tmp/history"
    printf 'cases=(%s)\nopts=(--threads 1,2,3)\nnames=()\nprebuilt=()\n' "$(printf '%q ' "${cases[@]}")"
} >"$d/job.env"

clean=(env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_COUNT
       -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u JOB_COMPLETION_INDEX)
"${clean[@]}" "$sb" sweep "${cases[@]}" --threads 1,2,3 --json "$tmp/whole.json" >/dev/null 2>&1 ||
    [ $? = 1 ] || fail "the unsharded sweep"
shard() {  # shard I VAR=VALUE... [-- SWEEP-OPTION...]: shard I as a task would run it
    local i=$1
    shift
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    [ $# = 0 ] || shift
    echo start >"$d/status/task-$i.start"
    rc=0
    "${clean[@]}" "${vars[@]}" "$sb" sweep "${cases[@]}" --threads 1,2,3 "$@" \
        --json "$d/shards/shard-$i.json" --work-dir "$tmp/w$i" >/dev/null 2>"$d/shards/shard-$i.err" || rc=$?
    echo "$rc" >"$d/status/task-$i.end"
}
shard 1 GTEST_SHARD_INDEX=0 GTEST_TOTAL_SHARDS=3
shard 2 JOB_COMPLETION_INDEX=1 -- --shard auto/3
shard 3 SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=2
for said in "1:shard 1/3 from GTEST_SHARD_INDEX=0" "2:shard 2/3 from JOB_COMPLETION_INDEX=1" \
            "3:shard 3/3 from SLURM_ARRAY_TASK_ID=7"; do
    grep -q "${said#*:}" "$d/shards/shard-${said%%:*}.err" ||
        fail "shard ${said%%:*} does not say '${said#*:}': $(cat "$d/shards/shard-${said%%:*}.err")"
done

verdicts() {
    python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    for r in c["runs"]:
        print(c["name"], r["threads"], r["repeat"], r["verdict"], r["as_expected"])' "$1"
}
rc=0
"$src/tools/slurm/merge" "$d" 2>"$tmp/merge.err" || rc=$?
[ "$rc" = 0 ] || fail "the merge of three shards exited $rc: $(cat "$tmp/merge.err")"
grep -q "^green: every run as expected, 3 shards merged (task states from status files)" \
    "$d/verdict.txt" || fail "verdict: $(cat "$d/verdict.txt")"
diff <(verdicts "$tmp/whole.json") <(verdicts "$d/report.json") || fail "merged runs differ"
[ "$(verdicts "$d/report.json" | wc -l)" = 6 ] || fail "expected 6 runs"
echo "ok 1 - three shards from three environments merge into the unsharded sweep"

rm "$d/status/task-2.end"
rc=0
"$src/tools/slurm/merge" "$d" 2>"$tmp/merge.err" || rc=$?
[ "$rc" = 7 ] || fail "a task that never ended: the merge exited $rc"
grep -q "^red: 1 of 3 shards lost: shard 2: state unknown, started, never finished" "$d/verdict.txt" ||
    fail "verdict: $(cat "$d/verdict.txt")"
[ ! -e "$d/report.json" ] || fail "a merged report with a shard lost"
echo "ok 2 - a task that started and never ended is lost (exit 7)"

rm "$d/status/task-3.start" "$d/status/task-3.end" "$d/shards/shard-3.json"
rc=0
"$src/tools/slurm/merge" "$d" 2>"$tmp/merge.err" || rc=$?
[ "$rc" = 7 ] || fail "a task that never started: the merge exited $rc"
v=$(cat "$d/verdict.txt")
[[ "$v" == "red: 2 of 3 shards lost: shard 2: "*"; shard 3: state unknown, never started, no report"* ]] ||
    fail "verdict: $v"
[ "$(grep -c '<failure' "$d/report.xml")" = 2 ] || fail "JUnit: $(cat "$d/report.xml")"
grep -q 'data-exit="1"' "$d/report.html" || fail "the page is not red"
echo "ok 3 - a task that never started is lost, the JUnit report fails both"
