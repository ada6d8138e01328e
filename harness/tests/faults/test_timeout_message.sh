#!/usr/bin/env bash
# A run timed out after less than a second says how long in milliseconds:
# `--timeout 0.001` on a training case gives "timed out after 0.00N s" in the
# report, not "0.0 s", and the sweep exits 3 (a configuration timed out).
# Usage: test_timeout_message.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_timeout_message.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rc=0
"$sb" sweep cases/keras_mnist_cnn_short.case --threads 1 --timeout 0.001 \
    --json "$tmp/report.json" --work-dir "$tmp/work" >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || { echo "not ok 1 - exit status $rc, expected 3"; exit 1; }
echo "ok 1 - exit status 3"
message=$(grep '"message"' "$tmp/report.json")
if ! grep -Eq '"timed out after 0\.[0-9]{3} s' <<<"$message" ||
     grep -q 'after 0\.000 s' <<<"$message"; then
    echo "not ok 2 - $message"
    exit 1
fi
echo "ok 2 - $message"
echo "1..2"
