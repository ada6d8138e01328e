#!/usr/bin/env bash
# The example training loop (harness/examples/mlp/mlp.c) as a user builds it:
# this build installed into a prefix of the user's own (stage_install.sh),
# the program built with a plain cc line and pkg-config alone, its goldens
# written into a folder that does not exist yet, then swept at 1-4 threads:
# the reduction clause's bias gradient is as expected (a reordering or
# nondeterministic, never beyond-bound), and the chunking bug is
# beyond-bound at 3 threads, at the forward GEMM, and nowhere else, with a
# JUnit report that says so.
# Usage: test_mlp.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
. "$(dirname "$0")"/tap.sh
tap_begin test_mlp

. "$(dirname "$0")/stage_install.sh"
stage_install "$build" "$tmp/prefix" 2>"$tmp/install.err" ||
    { sed 's/^/# /' "$tmp/install.err"; fail "meson install into a prefix of one's own"; }
cd "$tmp"
cc -fopenmp "$src/harness/examples/mlp/mlp.c" $(pkg-config --cflags --libs samebits) -lm -o mlp &&
    ok "built with cc and pkg-config alone" || fail "cc mlp.c"

./mlp golden --golden-dir golden >golden.out 2>&1 || { sed 's/^/# /' golden.out; fail "mlp golden"; }
grep -qF "golden/mlp_reduction.golden: new (86 probes)" golden.out &&
    ok "golden: --golden-dir made, 86 probes" || { sed 's/^/# /' golden.out; fail "golden"; }

rc=0
./mlp sweep mlp_reduction --threads 1-4 --golden-dir golden --work-dir work >red.out 2>&1 || rc=$?
sed 's/^/# /' red.out
[ "$rc" = 0 ] && grep -qF "mlp_reduction: as expected" red.out &&
    ok "the reduction clause: as expected" || fail "mlp_reduction: exit $rc"
! grep -q "beyond-bound" red.out && ok "the reduction clause is never beyond-bound" ||
    fail "the reduction clause beyond-bound"

rc=0
./mlp sweep mlp_chunk_bug --threads 1-4 --golden-dir golden --work-dir work \
    --junit bug.xml >bug.out 2>&1 || rc=$?
sed 's/^/# /' bug.out
[ "$rc" = 1 ] && ok "the chunking bug: exit status 1" || fail "mlp_chunk_bug: exit $rc, not 1"
grep -Eq '^ +3 +1 +beyond-bound +identical \* +step 0 fc1.out \(dense_fwd\) ' bug.out &&
    ok "3 threads: beyond-bound at step 0 fc1.out" || fail "no beyond-bound at fc1.out at 3 threads"
[ "$(grep -Ec '^ +[124] +1 +identical +identical ' bug.out)" = 3 ] &&
    ok "1, 2 and 4 threads (dividing the batch): identical" || fail "1, 2, 4 threads not identical"
grep -q "beyond the reordering bound" bug.xml && ! grep -q "within the reordering bound" bug.xml &&
    ok "its JUnit says beyond the bound" || { sed 's/^/# /' bug.xml; fail "the JUnit text"; }
tap_end
