#!/usr/bin/env bash
# ctest cmake_install: `cmake --install` of this build into a temporary prefix puts spplan (and
# spplan-engine, spplan-gui when built), the presets and the bash completion there, and the
# installed spplan finds its presets from there: a preset that exists only in the prefix prices,
# with the source tree's configs out of reach (SPPLAN_CONFIG_DIR unset).
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
fail() { echo "cmake_install: $*" >&2; exit 1; }
for f in bin/spplan share/spplan/configs/models/qwen3-4b.toml share/spplan/configs/gpus/h100-80gb.toml \
         share/bash-completion/completions/spplan; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for exe in spplan-engine spplan-gui; do
  if [ -e "$build/$exe" ] && [ ! -x "$prefix/bin/$exe" ]; then fail "bin/$exe not installed"; fi
done
# A preset only the prefix has: found only through the installed binary's own path.
sed 's/^name = .*/name = "installed-only"/' "$prefix/share/spplan/configs/models/qwen3-4b.toml" \
  > "$prefix/share/spplan/configs/models/installed-only.toml"
unset SPPLAN_CONFIG_DIR
out=$(cd / && "$prefix/bin/spplan" estimate --model installed-only --gpu h100-80gb --gpus 4 --seq 32k --sp 4 --json) ||
  fail "the installed spplan did not find its presets"
grep -q '"model": "installed-only"' <<<"$out" || fail "unexpected output: $out"
"$prefix/bin/spplan" --version | grep -q '^spplan ' || fail "--version"
# The completion loads in bash and completes a command and a knob's values.
bash -c ". '$prefix/share/bash-completion/completions/spplan'
  COMP_WORDS=(spplan plan --offload-optimizer ''); COMP_CWORD=3; _spplan
  [ \"\${COMPREPLY[*]}\" = 'none cpu nvme' ]" || fail "the completion does not offer --offload-optimizer's values"
if [ -x "$prefix/bin/spplan-engine" ]; then
  "$prefix/bin/spplan-engine" --version | grep -q '^spplan-engine ' || fail "the installed spplan-engine does not start"
fi
echo "cmake_install: ok ($prefix)"
