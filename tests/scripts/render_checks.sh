# shellcheck shell=bash
# Shared by the tests of the scripts that render kept measurements into README tables
# (engine_table_test.sh, gpu_table_test.sh). Source it with the test's name as its argument; it
# makes $tmp (removed on exit) and defines:
#   fail MESSAGE            print "NAME: MESSAGE" on stderr and exit 1
#   expect_bad_input INPUT CMD...   CMD must exit 2 with one line on stderr naming INPUT and print
#                                   nothing on stdout (no partial table)
name=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$name: $*" >&2; exit 1; }
expect_bad_input() {
  local input=$1 rc=0
  shift
  "$@" > "$tmp/stdout" 2> "$tmp/stderr" || rc=$?
  [ "$rc" -eq 2 ] || fail "$input: exit $rc (expected 2)"
  [ "$(wc -l < "$tmp/stderr")" -eq 1 ] || fail "$input: stderr is not one line: $(cat "$tmp/stderr")"
  grep -qF "$input" "$tmp/stderr" || fail "$input: the message does not name the file: $(cat "$tmp/stderr")"
  [ ! -s "$tmp/stdout" ] || fail "$input: printed a partial table"
}
