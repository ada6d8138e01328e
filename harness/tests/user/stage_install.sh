# Sourced by the tests that use an installed libsamebits:
#   stage_install BUILD_ROOT PREFIX
# installs that build into PREFIX, a directory of the test's own, as a user
# without root installs it into a prefix of their own: `meson install
# --destdir` into PREFIX.stage, its prefix then moved to PREFIX (samebits.pc
# is relocatable, and its Libs carry an rpath to its libdir). Only
# PKG_CONFIG_PATH is set, as the user sets it (harness/examples/README.md);
# PKG_CONFIG_SYSROOT_DIR and LD_LIBRARY_PATH are unset, so a program finds
# libsamebits.so by the rpath alone. Sets `pc` (the installed samebits.pc)
# and `libdir`. Returns nonzero, with the reason on stderr, when the install
# fails.
stage_install() {
    local build=$1 prefix=$2 stage=$2.stage
    meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >"$stage.log" 2>&1 ||
        { cat "$stage.log" >&2; return 1; }
    unset PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
    pc=$(find "$stage" -name samebits.pc)
    [ -n "$pc" ] || { echo "no samebits.pc installed in $stage" >&2; return 1; }
    local staged_prefix
    staged_prefix=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix samebits)
    staged_prefix=$(cd "$staged_prefix" && pwd -P)
    mv "$staged_prefix" "$prefix"
    rm -rf "$stage" "$stage.log"
    pc=$(find "$prefix" -name samebits.pc)
    export PKG_CONFIG_PATH
    PKG_CONFIG_PATH=$(dirname "$pc")
    libdir=$(pkg-config --variable=libdir samebits)
}
