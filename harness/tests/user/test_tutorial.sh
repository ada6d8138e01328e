#!/usr/bin/env bash
# The tutorial of harness/examples/README.md, "your kernel under samebits",
# run as a reader would: this build installed into a temporary prefix
# (stage_install.sh; the tutorial's prerequisite), then every `sh` block of
# the tutorial, in order, in one shell with `set -e` in an empty directory,
# SAMEBITS set to this tree. Checks that each file the tutorial shows is the
# file of harness/examples/ it names, and that the commands said what the
# tutorial says they say: the missing golden's regenerate command, the new
# goldens, meson test passing, the first bad commit, the changed golden;
# and that every case header, golden line and outcome line it shows was
# printed as shown.
# Usage: test_tutorial.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
command -v git >/dev/null || { echo "1..0 # SKIP git not installed"; exit 77; }
. "$(dirname "$0")"/tap.sh
tap_begin test_tutorial
export TMPDIR=$tmp
doc=$src/harness/examples/README.md

# the shown files: a "<!-- file: PATH -->" line, then a fenced block
python3 - "$doc" "$src/harness/examples" "$tmp/commands.sh" <<'PY' || fail "the tutorial's files and commands"
import os, re, sys
doc, examples, commands = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(doc).read()
files = re.findall(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```\n", text, re.S)
if len(files) < 2:
    sys.exit(f"{doc}: expected the program and its meson.build shown, found {len(files)} files")
for path, body in files:
    if open(os.path.join(examples, path)).read() != body:
        sys.exit(f"{doc}: the block shown as {path} is not harness/examples/{path}")
    print(f"# {path} as shown")
tutorial = text[text.index("## Tutorial"):text.index("## Reference")]
blocks = re.findall(r"```sh\n(.*?)```\n", tutorial, re.S)
with open(commands, "w") as f:
    f.write("set -euo pipefail\n")
    for b in blocks:
        f.write(b)
print(f"# {len(blocks)} command blocks")
PY
ok "the program and meson.build shown are the files of harness/examples/"

. "$(dirname "$0")/stage_install.sh"
stage_install "$build" "$tmp/dest" 2>"$tmp/install.err" ||
    { sed 's/^/# /' "$tmp/install.err"; fail "meson install into a temporary prefix"; }
export SAMEBITS=$src
export GIT_AUTHOR_NAME=reader GIT_AUTHOR_EMAIL=reader@example.invalid
export GIT_COMMITTER_NAME=reader GIT_COMMITTER_EMAIL=reader@example.invalid
mkdir "$tmp/reader"
rc=0
(cd "$tmp/reader" && bash "$tmp/commands.sh") >"$tmp/out" 2>&1 || rc=$?
sed 's/^/# /' "$tmp/out"
[ "$rc" = 0 ] && ok "every command of the tutorial runs" || fail "the tutorial's commands exited $rc"

said() {    # said WHAT LINE: the output has LINE (a fixed string)
    grep -qF -- "$2" "$tmp/out" && ok "$1" || fail "$1: no line '$2'"
}
said "a missing golden names the program's own command" \
    "golden/dot_reduction.golden: cannot open: No such file or directory; regenerate it with \`./dot golden dot_reduction --golden-dir golden\`"
said "the goldens are written" "golden/dot_blocked.golden: new (3 probes)"
said "the reduction is a reordering at 2 threads" "dot_reduction: as expected"
grep -Eq '^ +2 +1 +reordering +reordering ' "$tmp/out" && ok "2 threads: reordering" ||
    fail "no reordering at 2 threads"
said "meson test passes" "1/1 dot"
culprit=$(git -C "$tmp/reader/dot" log -1 --format=%H --grep="^dot_blocked: blocks of 256$")
said "the bisect names the commit" "first bad commit: $culprit dot_blocked: blocks of 256"
said "the new golden is changed where the bits moved" \
    "golden/dot_blocked.golden: changed: first at step 0 probe dot.out"
# every case header and golden line the tutorial shows is one the
# commands printed
python3 - "$doc" "$tmp/out" <<'PY' || fail "a line the tutorial shows was not printed"
import re, sys
text, out = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
tutorial = text[text.index("## Tutorial"):text.index("## Reference")]
shown, lang = [], None      # lang: the open fence's language, None outside
for l in tutorial.splitlines():
    if l.startswith("```"):
        lang = l[3:] if lang is None else None
    elif lang == "" and re.match(r"\s*(case |golden/|dot_\w+: )", l):
        shown.append(l.strip())
printed = {l.strip() for l in out}
missing = [l for l in shown if l not in printed]
for l in missing:
    print(f"# shown, not printed: {l}")
sys.exit(1 if missing or not shown else 0)
PY
ok "every case header, golden and outcome line shown is printed"
tap_end
