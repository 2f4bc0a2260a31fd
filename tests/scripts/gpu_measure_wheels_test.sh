#!/usr/bin/env bash
# scripts/gpu-measure.sh installs the bundled peers' wheels (SPPLAN_WHEELS) before its stages, into
# a folder under TMPDIR that its Pythons import from; a folder it cannot install is one noted line
# and the stages still run. Checked with a one-module wheel made here (no GPU, no index: the stage
# after it is skipped because build-gpu/spplan is not built in this test's copy).
# Usage: gpu_measure_wheels_test.sh REPO_ROOT
set -euo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_measure_wheels_test: $*" >&2; exit 1; }
# A Python with pip: install-deps.sh's venv, else python3 (the script runs whichever it is given).
py=""
for c in "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" python3; do
  if "$c" -m pip --version >/dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "gpu_measure_wheels_test: SKIP: no Python with pip"; exit 77; }

# A copy of the script alone (its own folder layout), so build-gpu/ of the checkout is not read.
mkdir -p "$tmp/repo/scripts/lib" "$tmp/whl" "$tmp/bad" "$tmp/t"
cp "$root/scripts/gpu-measure.sh" "$tmp/repo/scripts/"
cp "$root/scripts/lib/torch-python.sh" "$tmp/repo/scripts/lib/"
"$py" - "$tmp/whl/spplan_fake_peer-1.0-py3-none-any.whl" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("spplan_fake_peer/__init__.py", "VALUE = 42\n")
    z.writestr("spplan_fake_peer-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: spplan-fake-peer\nVersion: 1.0\n")
    z.writestr("spplan_fake_peer-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("spplan_fake_peer-1.0.dist-info/RECORD", "")
EOF
echo "not a zip" >"$tmp/bad/broken-1.0-py3-none-any.whl"

run() {  # run WHEEL_DIR: gpu-measure.sh compare with that folder, OUT and TMPDIR in $tmp
  rm -rf "$tmp/out" "$tmp/t/spplan-gpu-site"
  SPPLAN_WHEELS=$1 TMPDIR=$tmp/t SPPLAN_TORCH_PYTHON=$py OUT=$tmp/out \
    bash "$tmp/repo/scripts/gpu-measure.sh" compare >"$tmp/stdout" 2>&1 || true
}

run "$tmp/whl"
grep -q "^wheels: 1 from $tmp/whl installed in $tmp/t/spplan-gpu-site$" "$tmp/out/summary.txt" ||
  fail "the good wheel: summary lacks its line: $(cat "$tmp/out/summary.txt")"
[ "$(PYTHONPATH=$tmp/t/spplan-gpu-site "$py" -c 'import spplan_fake_peer; print(spplan_fake_peer.VALUE)')" = 42 ] ||
  fail "the installed module does not import from the site folder"
grep -q "^compare: skipped" "$tmp/out/summary.txt" || fail "the stage after the wheels did not run: $(cat "$tmp/out/summary.txt")"

run "$tmp/bad"
[ "$(grep -c "^wheels: installing $tmp/bad failed (" "$tmp/out/summary.txt")" = 1 ] ||
  fail "the broken wheel: not one noted line: $(cat "$tmp/out/summary.txt")"
grep -q "^compare: skipped" "$tmp/out/summary.txt" || fail "a failed install stopped the stages"

run "$tmp/empty-does-not-exist"
! grep -q "^wheels:" "$tmp/out/summary.txt" || fail "no wheels folder: a wheels line was written"
# bundle-wheels.sh, which fills that folder: a bad argument is one line, exit 2, before any download.
for bad in "--dry-run" "a b"; do
  rc=0
  # shellcheck disable=SC2086  # "a b" is two arguments on purpose
  bash "$root/scripts/bundle-wheels.sh" $bad >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
  if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/stderr")" != 1 ] ||
      ! grep -q "^bundle-wheels: argument '$bad' is not valid (allowed: one folder" "$tmp/stderr"; then
    fail "bundle-wheels.sh $bad: exit $rc, stderr: $(cat "$tmp/stderr")"
  fi
done
rc=0
SPPLAN_NODE_PYTHON=latest bash "$root/scripts/bundle-wheels.sh" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
if [ "$rc" != 2 ] || ! grep -q "^bundle-wheels: SPPLAN_NODE_PYTHON: value 'latest' is not valid (allowed: a Python version" "$tmp/stderr"; then
  fail "SPPLAN_NODE_PYTHON=latest: exit $rc, stderr: $(cat "$tmp/stderr")"
fi
echo "gpu_measure_wheels_test: a wheel installed and importable, a broken one noted, none skipped quietly"
