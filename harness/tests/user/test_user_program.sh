#!/usr/bin/env bash
# A user's program of several kernels (harness/examples/dot/dot.c, two
# kernels, sb_user_main_kernels): `list` names them; `golden` writes every
# golden, or the one named, and leaves an unchanged golden as it was (same
# file, not rewritten); a missing golden is an input error (exit 2) with the
# program's own regenerate command; a named sweep runs only that kernel; the
# options that do not fit (`run` without a name, --golden FILE for two
# kernels, an unknown name, a thread list with a count twice: the one
# thread-list grammar of harness/FORMATS.md, an unwritable report) are
# refused with exit 2 and one line; a changed golden is rewritten only
# with --update, and --check writes nothing;
# --help after every subcommand prints the usage, which lists every exit
# status, and exits 0; golden makes a --golden-dir that is missing; a
# golden's build line names the program's own compiler before libsamebits'.
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

# another golden's bits in dot_blocked's place: a change, written only
# when asked
cp "$tmp/g/dot_blocked.golden" "$tmp/blocked.golden"
sed 's/^case dot_reduction$/case dot_blocked/' "$tmp/g/dot_reduction.golden" >"$tmp/g/dot_blocked.golden"
cp "$tmp/g/dot_blocked.golden" "$tmp/changed.golden"
rc=0
"$dot" golden dot_blocked --check --golden-dir "$tmp/g" >"$tmp/out" || rc=$?
[ "$rc" = 1 ] && grep -q "^$tmp/g/dot_blocked.golden: changed: first at step 0 probe .*; not written (--check)$" "$tmp/out" &&
    cmp -s "$tmp/g/dot_blocked.golden" "$tmp/changed.golden" &&
    ok "golden --check: exit 1, the change named, nothing written" || fail "golden --check: exit $rc, $(cat "$tmp/out")"
rc=0
"$dot" golden dot_blocked --golden-dir "$tmp/g" >"$tmp/out" || rc=$?
[ "$rc" = 1 ] && grep -q "not written: rewrite it with --update$" "$tmp/out" &&
    cmp -s "$tmp/g/dot_blocked.golden" "$tmp/changed.golden" &&
    ok "golden without --update leaves a changed golden as it was" || fail "golden: exit $rc, $(cat "$tmp/out")"
"$dot" golden dot_blocked --update --golden-dir "$tmp/g" >"$tmp/out"
grep -q "; rewritten$" "$tmp/out" && cmp -s "$tmp/g/dot_blocked.golden" "$tmp/blocked.golden" &&
    ok "golden --update rewrites it" || fail "golden --update: $(cat "$tmp/out")"

refused() {     # refused WHAT ARGS...: exit 2 with one line
    local what=$1 rc=0
    shift
    "$dot" "$@" >/dev/null 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok "refused: $what ($(cat "$tmp/err"))" ||
        fail "$what: exit $rc, $(cat "$tmp/err")"
}
refused "run without a kernel name" run --threads 1 --trace "$tmp/t"
refused "--golden FILE for two kernels" golden --golden "$tmp/x.golden"
refused "an unknown kernel" sweep dot_nothing --golden-dir "$tmp/g"
refused "a thread count listed twice" sweep --threads 1..4,3 --golden-dir "$tmp/g"
refused "an unknown command" check
refused "no command"
refused "a report in a missing directory, before any run" sweep --golden-dir "$tmp/g" --json "$tmp/missing/r.json"
grep -qF "$tmp/missing/r.json: its directory $tmp/missing does not exist (create it): No such file or directory" "$tmp/err" &&
    ok "the report's file named" || fail "message: $(cat "$tmp/err")"

for cmd in list golden sweep run; do
    rc=0
    "$dot" $cmd --help >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = 0 ] && grep -q "^usage: $dot list" "$tmp/out" && [ ! -s "$tmp/err" ] &&
        ok "$cmd --help: the usage, exit 0" || fail "$cmd --help: exit $rc, $(cat "$tmp/err")"
done
for code in 0 1 2 3 4; do
    grep -Eq "(^|[:,]) *$code [a-z]" "$tmp/out" || fail "the usage does not say what exit $code means"
done
ok "the usage says what every exit status means (0-4)"

"$dot" golden dot_blocked --golden-dir "$tmp/new/golden" >"$tmp/out" 2>"$tmp/err" &&
    [ -f "$tmp/new/golden/dot_blocked.golden" ] && ok "golden --golden-dir makes the folder" ||
    fail "golden into a missing folder: $(cat "$tmp/err")"
grep -Eq '^build (gcc|clang) [^;]+ (un)?optimized[^;]*; libsamebits ' "$tmp/new/golden/dot_blocked.golden" &&
    ok "the golden's build line names the program's build" ||
    fail "build line: $(grep '^build' "$tmp/new/golden/dot_blocked.golden")"
tap_end
