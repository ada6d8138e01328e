#!/usr/bin/env bash
# `samebits sweep --shard I/N` and `samebits report --merge`: two kernel
# cases (one det, one loose with located reorderings) at 1..3 threads, two
# repeats each (12 items, so 3 shards take 4 each, across the case boundary),
# swept whole and in 3 shards; the merged JSON must equal the unsharded one
# but for the `seconds` fields (wall times), and the merged JUnit likewise
# but for `time`. Also: a missing shard, a repeated shard and shards of
# different sweeps are refused with exit status 2.
# Usage: test_shard_merge.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_shard_merge.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cases=(cases/kernel_xent_loss_loose.case cases/kernel_dropout_mask_det.case)
opts=(--threads 1-3 --repeat 2)

# The verdicts themselves are not under test here (the determinism suite
# judges them), so a sweep's exit status 1 or 3 is fine; 2 (input error) not.
# All must agree, though: the merge's status is the unsharded sweep's.
run() {
    local rc=0
    "$@" >/dev/null 2>"$tmp/err" || rc=$?
    if [ "$rc" = 2 ] || [ "$rc" -gt 3 ]; then
        cat "$tmp/err"
        echo "FAIL: exit $rc: $*"
        exit 1
    fi
    echo "$rc"
}
export TMPDIR=$tmp      # work directories of failing runs stay in here
full_rc=$(run "$sb" sweep "${cases[@]}" "${opts[@]}" --json "$tmp/full.json" --junit "$tmp/full.xml")
for i in 1 2 3; do
    run "$sb" sweep "${cases[@]}" "${opts[@]}" --shard "$i/3" --json "$tmp/s$i.json" >/dev/null
done
# in any order
merge_rc=$(run "$sb" report --merge "$tmp/s3.json" "$tmp/s1.json" "$tmp/s2.json" \
    --json "$tmp/merged.json" --junit "$tmp/merged.xml")
[ "$merge_rc" = "$full_rc" ] || { echo "FAIL: merge exit $merge_rc, unsharded sweep $full_rc"; exit 1; }

python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]

def untimed(x):    # without the times and the sweep id, which each process has its own
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k not in ("seconds", "sweep_id")}
    if isinstance(x, list):
        return [untimed(v) for v in x]
    return x

full = json.load(open(f"{tmp}/full.json"))
merged = json.load(open(f"{tmp}/merged.json"))
shards = [json.load(open(f"{tmp}/s{i}.json")) for i in (1, 2, 3)]
runs = [len(c["runs"]) for s in shards for c in s["cases"]]
assert runs == [2, 2, 2, 2, 2, 2], f"runs per shard and case: {runs}"
assert [s["shard"] for s in shards] == [{"index": i, "count": 3} for i in (1, 2, 3)]
assert untimed(full) == untimed(merged), "merged JSON differs from the unsharded one"
# the loose case diverges at 2 and 3 threads: the merge carried located divergences
assert any(r["first_divergence"] for c in merged["cases"] for r in c["runs"])

def junit(path):
    text = re.sub(r' time="[^"]*"', "", open(path).read())
    return re.sub(r'name="sweep_id" value="[0-9a-f]{16}"', "", text)
assert junit(f"{tmp}/full.xml") == junit(f"{tmp}/merged.xml"), "merged JUnit differs"
PY

refuse() {
    local what=$1 rc=0
    shift
    "$sb" report --merge "$@" >/dev/null 2>"$tmp/err" || rc=$?
    if [ "$rc" != 2 ]; then
        echo "FAIL: $what: exit $rc, expected 2"
        exit 1
    fi
    echo "refused ($what): $(cat "$tmp/err")"
}
refuse "missing shard" "$tmp/s1.json" "$tmp/s2.json"
refuse "repeated shard" "$tmp/s1.json" "$tmp/s2.json" "$tmp/s2.json"
run "$sb" sweep "${cases[0]}" "${opts[@]}" --shard 3/3 --json "$tmp/other.json" >/dev/null
refuse "another sweep's shard" "$tmp/s1.json" "$tmp/s2.json" "$tmp/other.json"
refuse "bad shard spec" "$tmp/s1.json" --shard
echo "ok: 3 merged shards give the unsharded report"
