#!/usr/bin/env bash
# libsamebits as an installed library: this build installed into a
# temporary prefix of a user's own, not root's (stage_install.sh: only
# PKG_CONFIG_PATH set), then the tutorial's program
# (harness/examples/dot/dot.c) built outside meson against that prefix, found
# through samebits.pc alone, and swept against the goldens committed beside
# it.
#   cc     a plain `cc` line: linked with the shared library (and run with
#          it: the program must name libsamebits.so), then with the static
#          one and the .pc's private requirements (`pkg-config --static`)
#   cmake  CMake's pkg_check_modules (skipped, exit 77, without cmake)
# The command is installed too, and answers --help.
# Usage: test_install.sh cc|cmake BUILD_ROOT SOURCE_ROOT
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
src=$(cd "$3" && pwd)
if [ "$mode" = cmake ] && ! command -v cmake >/dev/null; then
    echo "1..0 # SKIP cmake not installed"
    exit 77
fi
. "$(dirname "$0")"/tap.sh
tap_begin test_install

dest=$tmp/prefix
. "$(dirname "$0")/stage_install.sh"
stage_install "$build" "$dest" 2>"$tmp/install.err" ||
    { sed 's/^/# /' "$tmp/install.err"; fail "meson install into $dest"; }
includedir=$(pkg-config --variable=includedir samebits)
[ -f "$includedir/samebits/samebits.h" ] && [ -f "$libdir/libsamebits.a" ] &&
    [ -e "$libdir/libsamebits.so" ] && ok "header, shared and static library installed" ||
    fail "installed: $(cd "$dest" && find . -name '*samebits*' | tr '\n' ' ')"
sb=$(find "$dest" -type f -name samebits -perm -u+x)
[ -n "$sb" ] && "$sb" --help >/dev/null && ok "the command is installed" || fail "no samebits command"

golden=$src/harness/examples/dot/golden
sweep() {   # sweep WHAT PROGRAM: the program's sweep against the committed goldens
    local rc=0
    "$2" sweep --threads 1,2 --golden-dir "$golden" \
        --work-dir "$tmp/work" >"$tmp/sweep.out" 2>&1 || rc=$?
    [ "$rc" = 0 ] && ok "$1: its sweep is as expected" || { sed 's/^/# /' "$tmp/sweep.out"; fail "$1: sweep exit $rc"; }
}

case $mode in
cc)
    # the -fopenmp is for the program's own pragmas; samebits.pc brings the rest
    cc -fopenmp "$src/harness/examples/dot/dot.c" $(pkg-config --cflags --libs samebits) \
        -o "$tmp/dot_shared"
    readelf -d "$tmp/dot_shared" | grep -q 'NEEDED.*libsamebits\.so' &&
        ok "cc with pkg-config --cflags --libs: linked with libsamebits.so" ||
        fail "dot_shared does not need libsamebits.so"
    readelf -d "$tmp/dot_shared" | grep -Eq "(RUNPATH|RPATH).*$libdir" &&
        ok "its rpath names the prefix's libdir: no LD_LIBRARY_PATH needed" ||
        fail "dot_shared has no rpath to $libdir"
    sweep "shared" "$tmp/dot_shared"
    # static: libsamebits.a in place of -lsamebits, the rest from --static
    cc -fopenmp "$src/harness/examples/dot/dot.c" \
        $(pkg-config --cflags --static --libs samebits | sed "s|-lsamebits|$libdir/libsamebits.a|") \
        -o "$tmp/dot_static"
    ! readelf -d "$tmp/dot_static" | grep -q 'libsamebits' &&
        ok "cc with pkg-config --static: linked with libsamebits.a" ||
        fail "dot_static needs a shared libsamebits"
    sweep "static" "$tmp/dot_static"
    ;;
cmake)
    cmake -S "$src/harness/examples/dot" -B "$tmp/cmake" >"$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 ||
        { sed 's/^/# /' "$tmp/cmake.log"; fail "cmake build"; }
    ok "cmake with pkg_check_modules(samebits) builds dot"
    sweep "cmake" "$tmp/cmake/dot"
    ;;
*) echo "usage: test_install.sh cc|cmake BUILD_ROOT SOURCE_ROOT" >&2; exit 2 ;;
esac
tap_end
