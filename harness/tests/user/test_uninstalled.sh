#!/usr/bin/env bash
# libsamebits from the build tree, not installed: the tutorial's program
# (harness/examples/dot/dot.c) built with a plain cc line against the build
# tree's samebits-uninstalled.pc (PKG_CONFIG_PATH=BUILD/meson-uninstalled),
# and run with no LD_LIBRARY_PATH: the .pc's rpath must be the directory the
# library is built in (examples/README.md, "Without installing").
# Usage: test_uninstalled.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
. "$(dirname "$0")"/tap.sh
tap_begin test_uninstalled
export PKG_CONFIG_PATH=$build/meson-uninstalled
unset LD_LIBRARY_PATH
cc -fopenmp "$src/harness/examples/dot/dot.c" $(pkg-config --cflags --libs samebits) \
    -o "$tmp/dot" 2>"$tmp/cc.err" && ok "built against samebits-uninstalled.pc" ||
    fail "cc: $(cat "$tmp/cc.err")"
"$tmp/dot" list >"$tmp/list" 2>"$tmp/err" && grep -qx dot_reduction "$tmp/list" &&
    ok "runs from the build tree without LD_LIBRARY_PATH" || fail "run: $(cat "$tmp/err")"
tap_end
