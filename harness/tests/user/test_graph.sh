#!/usr/bin/env bash
# The probe graph checked when a golden is made (graph_faults.c, one kernel
# per fault): an input no earlier probe has, a name twice in a step and a
# probe with no op each stop the golden with exit 2 and one line naming the
# step and the probe, and write no golden; a kernel that declares external
# inputs gets a warning and its golden; a clean one its golden alone.
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
tap_end
