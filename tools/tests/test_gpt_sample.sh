#!/usr/bin/env bash
# `samebits sample` on the char_gpt short case (3 steps) at 1 and 2 threads:
# the det model, trained again in each process, must print the same
# evaluations and the same sampled characters at both counts; the sample has
# the length asked for and the validation loss comes with the validation
# text's unigram entropy. A case of another model is refused (exit 2).
# Usage: test_gpt_sample.sh SAMEBITS SOURCE_ROOT
set -euo pipefail
sb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
export SAMEBITS_DATA_DIR=${SAMEBITS_DATA_DIR:-$src/data}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_gpt_sample.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for t in 1 2; do
    "$sb" sample "$src/cases/char_gpt_short.case" --threads $t --chars 40 --seed 7 \
        >"$tmp/sample$t.txt" || fail "sample at $t threads exited $?"
done
cat "$tmp/sample1.txt"
cmp -s "$tmp/sample1.txt" "$tmp/sample2.txt" ||
    { diff "$tmp/sample1.txt" "$tmp/sample2.txt"; fail "the samples at 1 and 2 threads differ"; }
grep -q '^final validation loss [0-9.]* nats per character; unigram entropy of the validation text (258674 characters) [0-9.]*$' \
    "$tmp/sample1.txt" || fail "no final validation loss and unigram entropy line"
# the 40 characters follow the header line (they may hold newlines)
chars=$(sed -n '/^sample (seed 7, 40 characters):$/,$p' "$tmp/sample1.txt" | tail -n +2 | head -c -1 | wc -c)
[ "$chars" -eq 40 ] || fail "the sample has $chars characters, not 40"

set +e
"$sb" sample "$src/cases/keras_mnist_cnn_short.case" >/dev/null 2>"$tmp/err.txt"
rc=$?
set -e
[ $rc -eq 2 ] || fail "a CNN case gave exit $rc, not 2"
grep -q 'samebits sample takes a training case of model char_gpt' "$tmp/err.txt" ||
    fail "no message for a CNN case: $(cat "$tmp/err.txt")"
echo "ok: the same sample at 1 and 2 threads"
