#!/usr/bin/env bash
# samebits as another project's subproject: the tutorial's project
# (harness/examples/dot/, its meson.build) copied aside with this tree as
# subprojects/samebits (a symbolic link), set up with the subproject forced
# (an installed samebits would be found first otherwise). Its `meson test
# --list` must be its own test alone, the subproject's targets only the
# library (shared, static, the kernels in it) and the command, and its
# `meson test` (the sweep against the committed goldens) must pass.
# Usage: test_subproject.sh SOURCE_ROOT
set -euo pipefail
src=$(cd "$1" && pwd)
. "$(dirname "$0")"/tap.sh
tap_begin test_subproject

cp -r "$src/harness/examples/dot" "$tmp/dot"
rm -rf "$tmp/dot/subprojects"
mkdir "$tmp/dot/subprojects"
ln -s "$src" "$tmp/dot/subprojects/samebits"
meson setup "$tmp/build" "$tmp/dot" --force-fallback-for=samebits >"$tmp/setup.log" 2>&1 ||
    { sed 's/^/# /' "$tmp/setup.log"; fail "meson setup of the outside project"; }
ok "the outside project sets up with samebits as its subproject"

list=$(meson test -C "$tmp/build" --list --no-rebuild 2>/dev/null)
[ "$list" = dot ] && ok "meson test --list: its own test alone" ||
    fail "meson test --list: $(tr '\n' ' ' <<<"$list")"

targets=$(meson introspect "$tmp/build" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["subproject"] == "samebits":
        print(t["type"] + ": " + t["name"])' | sort | tr '\n' ';')
want="executable: samebits;shared library: samebits;static library: samebits;static library: samebits_kernels;"
[ "$targets" = "$want" ] && ok "the subproject builds the library and the command alone" ||
    fail "subproject targets: $targets"

meson test -C "$tmp/build" >"$tmp/test.log" 2>&1 ||
    { sed 's/^/# /' "$tmp/test.log"; fail "meson test of the outside project"; }
grep -q '^Ok: *1 *$' "$tmp/test.log" && ok "its meson test runs its one test, which passes" ||
    { sed 's/^/# /' "$tmp/test.log"; fail "meson test did not run exactly one test"; }
tap_end
