# Sourced by the shell tests of user programs (and tools/tests/test_bisect_user.sh):
#   tap_begin NAME    $tmp: a fresh directory, removed at exit unless KEEP is set
#   ok WHAT           the next TAP test line, passed
#   fail WHAT         the next TAP test line, failed; exits 1
#   tap_end           the plan line
tap_begin() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
    n=0
}
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; exit 1; }
tap_end() { echo "1..$n"; }
