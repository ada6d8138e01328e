#!/usr/bin/env bash
# The probe graph checked when a golden is made (graph_faults.c, one kernel
# per fault): an input no earlier probe has, a name twice in a step and a
# probe with no op each stop the golden with exit 2 and one line naming the
# step and the probe, and write no golden; a kernel that declares external
# inputs gets a warning and its golden; a clean one its golden alone; a
# run that probes past its stop fails, and a resumed run's joined trace is
# checked as its runs are (an outside input declared: allowed); a stop
# past its steps is named once in a sweep; asking for the steps without a
# hook fails the run; a resumed run that names a restored tensor "?" where
# the golden names it is warned of, once, and one that names it is not.
# Usage: test_graph.sh GRAPH_FAULTS_PROGRAM
set -euo pipefail
prog=$1
. "$(dirname "$0")"/tap.sh
tap_begin test_graph

golden() {  # golden NAME: exit status of PROG golden NAME, stderr in $tmp/err
    local rc=0
    "$prog" golden "$1" --golden-dir "$tmp/g" --work-dir "$tmp/w" >"$tmp/out" 2>"$tmp/err" || rc=$?
    return $rc
}
refused() { # refused NAME LINE: exit 2, LINE said, no golden
    local rc=0
    golden "$1" || rc=$?
    sed 's/^/# /' "$tmp/err"
    [ "$rc" = 2 ] && grep -qF -- "$2" "$tmp/err" && [ ! -e "$tmp/g/$1.golden" ] &&
        ok "$1: refused, \"$2\"" || fail "$1: exit $rc"
}
golden clean && [ -s "$tmp/g/clean.golden" ] && [ ! -s "$tmp/err" ] && ok "clean: its golden, no word" ||
    fail "clean: $(cat "$tmp/err")"
refused misspelt "step 0 probe y: input xx is no earlier probe of the run (misspelt, or never probed?)"
refused same_step "step 0 probe y: a second probe of that name in the step (is its step right?)"
refused no_op "step 0 probe y: no op (the op's name, or \"source\")"
golden external && [ -s "$tmp/g/external.golden" ] &&
    grep -qF "warning: step 0 probe y: input outside is no earlier probe of the run" "$tmp/err" &&
    ok "external: its golden, and a warning" || fail "external: $(cat "$tmp/err")"

# the resume hook: a run that probes past its stop, and a resumed run whose
# joined trace names an outside input
rc=0
"$prog" run stray --threads 1 --trace "$tmp/t" --stop-at 1 --checkpoint "$tmp/ck" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qF "stray: step 1 probe y: outside the steps 0..0 this run runs" "$tmp/err" &&
    [ ! -e "$tmp/ck" ] && ok "stray: a probe past the stop fails the run, no checkpoint" ||
    fail "stray: exit $rc: $(cat "$tmp/err")"
golden external_resumed || fail "external_resumed golden: $(cat "$tmp/err")"
rc=0
"$prog" sweep external_resumed --threads 1 --resume 1,2 --golden-dir "$tmp/g" --work-dir "$tmp/w" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ "$(grep -Ec '^resume [12] +1 +1  identical ' "$tmp/out")" = 2 ] &&
    ok "external_resumed: resumed at 1 and 2, its golden" || fail "external_resumed: exit $rc: $(cat "$tmp/out" "$tmp/err")"
golden stray || fail "stray golden: $(cat "$tmp/err")"
rc=0
"$prog" sweep stray --threads 1 --resume 1 --golden-dir "$tmp/g" --work-dir "$tmp/w" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
    grep -qF "stray (resume=1 threads=1): step 1 probe y: outside the steps 0..0 this run runs (sb_user_run_steps): a run that stops at K ends before K" "$tmp/err" &&
    ok "stray: a sweep's resume names the kernel once" || fail "stray sweep: exit $rc: $(cat "$tmp/err")"
refused steps_unhooked "steps_unhooked: the run asks sb_user_run_steps for its steps, and the kernel declares no .steps"
resumed() {  # NAME: its golden, then swept resumed at 1 and 2; out and err in $tmp
    local rc=0
    golden "$1" || { fail "$1 golden: $(cat "$tmp/err")"; return 1; }
    "$prog" sweep "$1" --threads 1 --resume 1,2 --golden-dir "$tmp/g" --work-dir "$tmp/w" \
        >"$tmp/out" 2>"$tmp/err" || rc=$?
    sed 's/^/# /' "$tmp/err"
    [ "$rc" = 0 ] && [ "$(grep -Ec '^resume [12] +1 +1  identical ' "$tmp/out")" = 2 ]
}
resumed restored_named && [ ! -s "$tmp/err" ] &&
    ok "restored_named: resumed, identical, no warning" || fail "restored_named: $(cat "$tmp/out" "$tmp/err")"
resumed restored_unnamed && [ "$(grep -c '^warning: ' "$tmp/err")" = 2 ] &&
    grep -qF 'warning: restored_unnamed (resume=1 threads=1): step 1 probe y names its input 1 "?" where the golden names w: call sb_probes_restored' "$tmp/err" &&
    ok "restored_unnamed: a warning per resumed run, naming sb_probes_restored" ||
    fail "restored_unnamed: $(cat "$tmp/out" "$tmp/err")"
tap_end
