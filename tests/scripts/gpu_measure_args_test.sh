#!/usr/bin/env bash
# scripts/gpu-measure.sh's arguments (it runs on a GPU node, but its command line is checked here):
# each bad one is one line on stderr naming the flag and value, exit 2, before anything runs.
# Usage: gpu_measure_args_test.sh REPO_ROOT
set -euo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_measure_args_test: $*" >&2; exit 1; }

check() {  # check EXPECTED_TEXT ARGS...
  local want=$1 rc=0
  shift
  OUT=$tmp/out bash "$root/scripts/gpu-measure.sh" "$@" > "$tmp/stdout" 2> "$tmp/stderr" || rc=$?
  [ "$rc" -eq 2 ] || fail "$*: exit $rc (expected 2)"
  [ "$(wc -l < "$tmp/stderr")" -eq 1 ] || fail "$*: stderr is not one line: $(cat "$tmp/stderr")"
  grep -qF -- "$want" "$tmp/stderr" || fail "$*: the message lacks '$want': $(cat "$tmp/stderr")"
  [ ! -s "$tmp/stdout" ] || fail "$*: printed on stdout"
}
check "--deadline: value 'soon' is not valid (allowed: whole seconds" --deadline soon runs
check "--deadline: value '' is not valid" --deadline
check "--pack: value 'out.tgz' is not valid (allowed: a file name ending in .tar.gz)" --pack out.tgz runs
check "--shard: value '1' is not valid (allowed: I/N" --shard 1 validate
check "unknown argument 'kernel' (allowed: --quick, --lease, --shard I/N, --deadline S, --pack FILE, build, kernels" kernel
echo "gpu_measure_args_test: 5 bad command lines refused with one line each"
