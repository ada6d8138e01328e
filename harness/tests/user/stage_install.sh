# Sourced by the tests that use an installed libsamebits:
#   stage_install BUILD_ROOT DEST
# installs that build into DEST (meson install --destdir) and points
# pkg-config at it (PKG_CONFIG_SYSROOT_DIR, PKG_CONFIG_PATH) and the dynamic
# loader at its libraries (LD_LIBRARY_PATH), as an installed prefix would be;
# sets `pc` (the staged samebits.pc) and `libdir` (its libdir, staged).
# Returns nonzero, with meson's output on stderr, when the install fails.
#   staged_variable NAME
# prints a variable of the staged samebits.pc as a path in DEST.
staged_variable() {
    local v
    v=$(pkg-config --variable="$1" samebits)
    # pkgconf puts the sysroot before a variable's value, pkg-config does not
    case $v in "$PKG_CONFIG_SYSROOT_DIR"/*) echo "$v" ;; *) echo "$PKG_CONFIG_SYSROOT_DIR$v" ;; esac
}

stage_install() {
    local build=$1 dest=$2
    meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dest.log" 2>&1 ||
        { cat "$dest.log" >&2; return 1; }
    # A sysroot holds the system's packages too: pkg-config puts the sysroot
    # before the include paths of the ones samebits.pc requires
    # (-I/usr/include), and CMake refuses an imported target whose include
    # path does not exist.
    [ -e "$dest/usr/include" ] || ln -s /usr/include "$dest/usr/include"
    pc=$(find "$dest" -name samebits.pc)
    [ -n "$pc" ] || { echo "no samebits.pc installed in $dest" >&2; return 1; }
    export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH
    PKG_CONFIG_PATH=$(dirname "$pc")
    libdir=$(staged_variable libdir)
    export LD_LIBRARY_PATH=$libdir
}
