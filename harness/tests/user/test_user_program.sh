#!/usr/bin/env bash
# A user's program of several kernels (harness/examples/dot/dot.c, two
# kernels, sb_user_main_kernels): `list` names them; `golden` writes every
# golden, or the one named, and leaves an unchanged golden as it was (same
# file, not rewritten); a missing golden is an input error (exit 2) with the
# program's own regenerate command; a named sweep runs only that kernel; the
# options that do not fit (`run` without a name, --golden FILE for two
# kernels, an unknown name, a thread list with a count twice: the one
# thread-list grammar of harness/FORMATS.md) are refused with exit 2.
# Usage: test_user_program.sh DOT_PROGRAM
set -euo pipefail
dot=$1
. "$(dirname "$0")"/tap.sh
tap_begin test_user_program

[ "$("$dot" list)" = "$(printf 'dot_reduction\ndot_blocked')" ] && ok "list names both kernels" ||
    fail "list: $("$dot" list)"

mkdir "$tmp/g"
rc=0
"$dot" sweep --threads 1,2 --golden-dir "$tmp/g" --work-dir "$tmp/w" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "sweep without goldens: exit $rc, expected 2"
grep -qF "$tmp/g/dot_reduction.golden: cannot open: No such file or directory; regenerate it with \`$dot golden dot_reduction --golden-dir $tmp/g\`" "$tmp/err" &&
    ok "a missing golden names the program's own golden command" || fail "message: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] && ok "no kernel without its golden is run" || fail "it swept: $(cat "$tmp/out")"

"$dot" golden dot_blocked --golden-dir "$tmp/g" >"$tmp/out"
[ -f "$tmp/g/dot_blocked.golden" ] && [ ! -e "$tmp/g/dot_reduction.golden" ] &&
    ok "golden NAME writes that kernel's golden alone" || fail "golden dot_blocked: $(ls "$tmp/g")"
ino=$(stat -c %i "$tmp/g/dot_blocked.golden")
"$dot" golden --golden-dir "$tmp/g" >"$tmp/out"
grep -qx "$tmp/g/dot_blocked.golden: unchanged (3 probes)" "$tmp/out" &&
    grep -qx "$tmp/g/dot_reduction.golden: new (3 probes)" "$tmp/out" &&
    [ "$(stat -c %i "$tmp/g/dot_blocked.golden")" = "$ino" ] &&
    ok "golden: new for one, unchanged (not rewritten) for the other" || fail "golden: $(cat "$tmp/out")"
[ -z "$(find "$tmp/g" -name '.*')" ] && ok "no temporary left beside the goldens" ||
    fail "left: $(ls -a "$tmp/g")"

"$dot" sweep dot_blocked --threads 1,2 --golden-dir "$tmp/g" --work-dir "$tmp/w" >"$tmp/out"
grep -q "^case dot_blocked " "$tmp/out" && ! grep -q "dot_reduction" "$tmp/out" &&
    ok "sweep NAME sweeps that kernel alone" || fail "sweep dot_blocked: $(cat "$tmp/out")"

refused() {     # refused WHAT ARGS...: exit 2 with a message
    local what=$1 rc=0
    shift
    "$dot" "$@" >/dev/null 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] && [ -s "$tmp/err" ] && ok "refused: $what ($(head -n 1 "$tmp/err"))" ||
        fail "$what: exit $rc"
}
refused "run without a kernel name" run --threads 1 --trace "$tmp/t"
refused "--golden FILE for two kernels" golden --golden "$tmp/x.golden"
refused "an unknown kernel" sweep dot_nothing --golden-dir "$tmp/g"
refused "a thread count listed twice" sweep --threads 1..4,3 --golden-dir "$tmp/g"
refused "an unknown command" check
tap_end
