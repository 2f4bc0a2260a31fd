#!/usr/bin/env bash
# Runs longest_gpu_test.py (bench/engine/longest_gpu.py's search, and --smoke on the CPU) with the
# first Python that imports torch: SPPLAN_VENV's (default ~/.cache/spplan/venv), then python3.
# Exit 77 (skipped) when none does. Usage: longest_gpu_test.sh SOURCE_DIR SPPLAN_BINARY
set -u
src=$1 spplan=$2
for py in "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null; then
    exec "$py" "$src/tests/scripts/longest_gpu_test.py" "$src" "$spplan"
  fi
done
echo "no Python with torch: skipped"
exit 77
