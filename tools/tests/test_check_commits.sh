#!/usr/bin/env bash
# tools/check-commits on a throwaway history: a commit before the marker
# (the commit that adds CONTRIBUTING.md) is not checked, the marker and the
# commits after it are; a subject too long, one not of the form `area: what
# changed`, and a message with no blank line after its subject each fail,
# naming the commit; a shallow clone cut at or after the marker fails and
# says so, one that holds the marker's parent passes.
#
# usage: test_check_commits.sh SOURCE_ROOT
set -euo pipefail

check=$(cd "$1" && pwd)/tools/check-commits
tmp=$(mktemp -d "${TMPDIR:-/tmp}/samebits.check_commits.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# expect STATUS TEXT ARGS...: check-commits ARGS exits STATUS and prints TEXT
expect() {
    local want=$1 text=$2 rc=0
    shift 2
    out=$("$check" "$@" 2>&1) || rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
        echo "FAIL: check-commits $*: wanted exit $want and \"$text\", got exit $rc:"
        echo "$out"
        failed=1
    else
        echo "ok: exit $rc, \"$text\""
    fi
}

commit() {
    echo "$RANDOM" >>file
    git add file
    git commit --quiet -F -
}

repo=$tmp/repo
git init --quiet "$repo"
cd "$repo"
git config user.email test@example.com
git config user.name test
commit <<<"An old subject in the old style that goes on and on well past seventy-two characters"
echo "the convention" >CONTRIBUTING.md
git add CONTRIBUTING.md
commit <<<"docs: the commit convention"
commit <<'EOF'
harness/judge, .ci: a subject with two areas

Why, and the measurements.
EOF
expect 0 "2 commits from"
expect 0 "1 commit from" HEAD~1
mkdir sub
cd sub
expect 0 "2 commits from"       # from a folder of the repository
cd ..

git tag good
commit <<<"Fixed the thing"
expect 1 "subject is not \`area: what changed\`: Fixed the thing"
git reset --quiet --hard good
commit <<<"gemm: a subject that says far more than a subject should say, in one line"
expect 1 "subject is 73 characters, more than 72"
git reset --quiet --hard good
commit <<'EOF'
docs: a subject
a body with no blank line before it
EOF
expect 1 "no blank line after the subject"

git reset --quiet --hard good
git clone --quiet --depth 2 "file://$repo" "$tmp/shallow"
cd "$tmp/shallow"
expect 1 "this clone is shallow"
git clone --quiet --depth 3 "file://$repo" "$tmp/deep_enough"
cd "$tmp/deep_enough"
expect 0 "2 commits from"

exit "$failed"
