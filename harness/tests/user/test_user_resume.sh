#!/usr/bin/env bash
# The resume hook of a user's program (samebits.h, sb_user_kernel's steps,
# save and restore; harness/examples/momentum/momentum.c): its sweep
# resumed at steps 2 and 4 at 1 and 2 threads is the committed golden from
# each resume on; a restore that drops the velocity (momentum_forgets) is
# located at the first step after the resume; `run --stop-at K` and `run
# --resume` split the steps between two processes; and the refusals, one
# line and exit 2 each: a kernel without the hook (sweep --resume, run
# --stop-at), a step out of range, a checkpoint of another kernel.
# Usage: test_user_resume.sh MOMENTUM_PROGRAM USER_KERNEL_PROGRAM SOURCE_ROOT
set -euo pipefail
momentum=$1
user_kernel=$2
golden=$3/harness/examples/golden
. "$(dirname "$0")"/tap.sh
tap_begin test_user_resume

rc=0
"$momentum" sweep momentum --threads 1,2 --resume 2,4 --repeat 1 --golden-dir "$golden" \
    --work-dir "$tmp/w" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ "$(grep -Ec '^resume [24] +[12] +1  identical     identical ' "$tmp/out")" = 4 ] &&
    ok "resumed at 2 and 4, 1 and 2 threads: the golden from each resume on" ||
    fail "sweep exit $rc: $(cat "$tmp/out")"

rc=0
"$momentum" sweep momentum_forgets --threads 1,2 --resume 3 --repeat 1 --golden-dir "$golden" \
    --work-dir "$tmp/f" >"$tmp/fout" 2>&1 || rc=$?
[ "$rc" = 1 ] && [ "$(grep -Ec '^resume 3 +[12] +1  beyond-bound  identical \* +step 3 sgd\.v \(momentum\) +y ' "$tmp/fout")" = 2 ] &&
    [ "$(grep -Ec '^threads +[12] +1  identical ' "$tmp/fout")" = 2 ] &&
    ok "a restore that drops the velocity: an origin at step 3, sgd.v, beyond-bound, exit 1" ||
    fail "forgets sweep exit $rc: $(cat "$tmp/fout")"

"$momentum" run momentum --threads 2 --trace "$tmp/a.trace" --stop-at 2 --checkpoint "$tmp/ck"
"$momentum" run momentum --threads 1 --trace "$tmp/b.trace" --resume "$tmp/ck"
steps() { awk 'NR > 6 && $1 ~ /^[0-9]+$/ { print $1 }' "$1" | sort -un | tr '\n' ' '; }
[ "$(steps "$tmp/a.trace")" = "0 1 " ] && [ "$(steps "$tmp/b.trace")" = "2 3 4 5 " ] &&
    head -1 "$tmp/ck" | grep -qx 'samebits-user-checkpoint 1' &&
    ok "run --stop-at 2 runs steps 0-1, run --resume the rest" ||
    fail "steps: $(steps "$tmp/a.trace") / $(steps "$tmp/b.trace")"

refused() {     # WHAT MESSAGE PROGRAM ARGS...: exit 2 and one line holding MESSAGE
    local what=$1 message=$2 rc=0
    shift 2
    "$@" >"$tmp/rout" 2>"$tmp/rerr" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/rerr")" = 1 ] && grep -qF -- "$message" "$tmp/rerr" &&
        ok "$what: exit 2, one line" || fail "$what: exit $rc: $(cat "$tmp/rerr")"
}
refused "sweep --resume of a kernel without the hook" \
    "user_matvec: resume at 1: the kernel has no resume hook" \
    "$user_kernel" sweep --resume 1 --golden "$golden/user_matvec.golden" --work-dir "$tmp/r1"
refused "run --stop-at of a kernel without the hook" \
    "user_matvec run: resume: the kernel has no resume hook" \
    "$user_kernel" run --threads 1 --trace "$tmp/t" --stop-at 1 --checkpoint "$tmp/ck1"
refused "sweep --resume past the last step" \
    "momentum: resume at 6: K must be in 1..5 (the kernel's last step)" \
    "$momentum" sweep momentum --resume 6 --golden-dir "$golden" --work-dir "$tmp/r2"
refused "run --stop-at past the last step" "momentum run: --stop-at: '6' is not an integer in 1..5" \
    "$momentum" run momentum --threads 1 --trace "$tmp/t" --stop-at 6 --checkpoint "$tmp/ck2"
refused "a checkpoint of another kernel" "$tmp/ck: a checkpoint of kernel momentum (digest" \
    "$momentum" run momentum_forgets --threads 1 --trace "$tmp/t" --resume "$tmp/ck"
tap_end
