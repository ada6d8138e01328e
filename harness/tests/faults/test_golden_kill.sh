#!/usr/bin/env bash
# `samebits golden` killed with SIGKILL at random points: the golden is
# always the old file or the complete new one, and the next golden run
# leaves no temporary of it (golden/.NAME.golden.sbtmp.*) and no work
# directory (samebits.golden.* in $TMPDIR) of the killed runs. A kernel
# case, so that each run takes milliseconds; every run rewrites its golden
# on purpose (--update).
# Usage: test_golden_kill.sh SAMEBITS SOURCE_ROOT [KILLS]
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
kills=${3:-40}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_golden_kill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cases" "$tmp/golden" "$tmp/tmpdir"
export TMPDIR=$tmp/tmpdir   # the work directories of these runs alone
case=$tmp/cases/kernel_dense_fwd_det.case
golden=$tmp/golden/kernel_dense_fwd_det.golden
cp cases/kernel_dense_fwd_det.case "$case"
# The old golden: this case's with another seed (other bits, another
# digest), so that every run writes the new one.
old=$tmp/old.golden
sum() { sha256sum "$1" | cut -d' ' -f1; }
sed 's/^seed = .*/seed = 12345/' cases/kernel_dense_fwd_det.case >"$case"
"$sb" golden "$case" >/dev/null
mv "$golden" "$old"
cp cases/kernel_dense_fwd_det.case "$case"
cp "$old" "$golden"
"$sb" golden --update "$case" >/dev/null
new_sum=$(sum "$golden")
old_sum=$(sum "$old")
start=$(date +%s%N)
"$sb" golden "$case" >/dev/null   # unchanged: measures a run that writes nothing
span_ms=$(( ($(date +%s%N) - start) / 1000000 + 5 ))

n=0
fail() { echo "not ok $n - $*"; exit 1; }
left_tmp=0 left_work=0
for ((k = 1; k <= kills; k++)); do
    cp "$old" "$golden"
    "$sb" golden --update "$case" >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '0.%03d' $((RANDOM % span_ms)))"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    s=$(sum "$golden")
    n=$((n + 1))
    if [ "$s" = "$old_sum" ]; then
        echo "ok $n - kill $k: the old golden"
    elif [ "$s" = "$new_sum" ]; then
        echo "ok $n - kill $k: the complete new golden"
    else
        fail "kill $k: the golden is neither the old nor the new one"
    fi
    compgen -G "$tmp/golden/.kernel_dense_fwd_det.golden.sbtmp.*" >/dev/null && left_tmp=$((left_tmp + 1))
    compgen -G "$TMPDIR/samebits.golden.*" >/dev/null && left_work=$((left_work + 1))
done
echo "# $left_tmp of $kills kills left a temporary golden, $left_work a work directory"
sleep 0.2   # a killed run's orphaned child finishes on its own
cp "$old" "$golden"
"$sb" golden --update "$case" >/dev/null
n=$((n + 1))
[ "$(sum "$golden")" = "$new_sum" ] || fail "the run after the kills did not write the new golden"
echo "ok $n - the run after the kills wrote the new golden"
n=$((n + 1))
if compgen -G "$tmp/golden/.kernel_dense_fwd_det.golden.sbtmp.*" >/dev/null; then
    fail "temporaries left: $(ls -a "$tmp/golden" | tr '\n' ' ')"
fi
echo "ok $n - no temporary golden left"
n=$((n + 1))
if compgen -G "$TMPDIR/samebits.golden.*" >/dev/null; then
    fail "work directories left: $(ls "$TMPDIR" | tr '\n' ' ')"
fi
echo "ok $n - no work directory left"
echo "1..$n"
