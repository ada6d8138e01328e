#!/usr/bin/env bash
# tools/bisect on a throwaway history: a copy of this tree as the good
# commit (with a golden made there for a det xent_loss case), a commit that
# reverses the order in which sb_xent_loss_det combines its row blocks (same
# sum, other bits), and two unrelated commits. The driver must name the
# reversing commit and the loss probe, classify the change between that
# commit and its parent as a reordering (against the golden alone, which it
# cannot re-run, it is beyond-bound), and leave no bisect or worktree behind.
# Usage: test_bisect.sh SOURCE_ROOT
set -euo pipefail
src=$(cd "$1" && pwd)
command -v git >/dev/null || { echo "git not installed: skip"; exit 77; }
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "$src is not a git work tree: skip"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bisect.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
repo=$tmp/repo
mkdir "$repo"

# The tree as it is now, tracked and new files alike, without build output.
(cd "$src" && git ls-files -co --exclude-standard) | while IFS= read -r f; do
    if [ -f "$src/$f" ]; then
        mkdir -p "$repo/$(dirname "$f")"
        cp -p "$src/$f" "$repo/$f"
    fi
done

cd "$repo"
git init --quiet
git config user.email test@example.invalid
git config user.name test
cat > cases/bisect_xent_det.case <<'CASE'
# The batch mean of the cross-entropy, det: a fixed block order.
[case]
kind = kernel
family = det
seed = 5

[kernel]
op = xent_loss
n = 4096
k = 10

[sweep]
threads = 1,2
expect = identical
timeout = 120
CASE
meson setup "$tmp/b0" . >/dev/null
meson compile -C "$tmp/b0" samebits:executable >/dev/null
"$tmp/b0/samebits" golden cases/bisect_xent_det.case
git add -A
git commit --quiet -m "good"
good=$(git rev-parse HEAD)

python3 - kernels/classifier/classifier_det.c <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for (int b = 0; b < SB_ROW_BLOCKS; b++)\n        sum += part[b];\n"
new = "    for (int b = SB_ROW_BLOCKS - 1; b >= 0; b--)\n        sum += part[b];\n"
if s.count(old) != 1:
    sys.exit(p + ": the block-combining loop of sb_xent_loss_det is not where this test expects it")
open(p, "w").write(s.replace(old, new))
PY
git commit --quiet -am "xent_loss det: combine the row blocks last to first"
culprit=$(git rev-parse HEAD)
echo "unrelated" >> README.md
git commit --quiet -am "README: a line"
echo "# unrelated" >> tools/meson.build
git commit --quiet -am "tools: a comment"
head_before=$(git rev-parse HEAD)

rc=0
out=$("$src/tools/bisect" "$good" HEAD cases/bisect_xent_det.case --threads 1,2 2>"$tmp/stderr") || rc=$?
echo "$out"
if [ "$rc" != 0 ]; then
    cat "$tmp/stderr"
    echo "FAIL: tools/bisect exited $rc"
    exit 1
fi
grep -qx "first bad commit: $culprit xent_loss det: combine the row blocks last to first" <<<"$out" ||
    { echo "FAIL: expected first bad commit $culprit"; exit 1; }
grep -q "^first divergent probe: case bisect_xent_det threads 1 repeat 1: step 0 probe xent_loss.out0 (op xent_loss)" <<<"$out" ||
    { echo "FAIL: expected the first divergent probe xent_loss.out0 at 1 thread"; exit 1; }
grep -q "^cross-commit verdict: case bisect_xent_det threads 1: step 0, probe xent_loss.out0 (op xent_loss): reordering$" <<<"$out" ||
    { echo "FAIL: expected the reversal classified as a reordering across the two commits"; exit 1; }
grep -q "^  1 of 1 elements differ" <<<"$out" ||
    { echo "FAIL: expected the element diff of the loss"; exit 1; }
[ "$(git rev-parse HEAD)" = "$head_before" ] || { echo "FAIL: HEAD moved"; exit 1; }
[ ! -e .git/BISECT_LOG ] || { echo "FAIL: a bisect is left in progress"; exit 1; }
[ "$(git worktree list | wc -l)" = 1 ] || { echo "FAIL: a worktree is left"; git worktree list; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "FAIL: the work tree changed"; git status --short; exit 1; }
echo "ok: first bad commit and probe named"
