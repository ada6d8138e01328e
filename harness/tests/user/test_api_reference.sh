#!/usr/bin/env bash
# The committed reference of the kernel list's bounds and probe helpers is
# what api_gen makes from kernels.def: the installed header
# (include/samebits/sb_op_probes.h) and the doc (harness/examples/API.md).
# Usage: test_api_reference.sh API_GEN SOURCE_ROOT
set -euo pipefail
gen=$1
src=$(cd "$2" && pwd)
. "$(dirname "$0")"/tap.sh
tap_begin test_api_reference
check() {   # check FILE ARGS...: FILE is what api_gen ARGS prints
    local file=$1
    shift
    "$gen" "$@" >"$tmp/made"
    if diff -u "$src/$file" "$tmp/made" >"$tmp/diff"; then
        ok "$file is made from kernels.def"
    else
        sed 's/^/# /' "$tmp/diff" | head -40
        fail "$file differs from \`api_gen $*\`: remake it (harness/meson.build, api_reference)"
    fi
}
check include/samebits/sb_op_probes.h header
check harness/examples/API.md markdown "$src/kernels/kernels.def"
tap_end
