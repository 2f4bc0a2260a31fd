#!/usr/bin/env bash
# Runs tokenize_test.py with the first Python that imports `tokenizers`: SPPLAN_TOKENIZE_PYTHON,
# the venv install-deps.sh makes (SPPLAN_VENV, default ~/.cache/spplan/venv), then python3.
# Exit 77 (skipped) when none does. Usage: tokenize_test.sh SOURCE_DIR
set -u
for py in "${SPPLAN_TOKENIZE_PYTHON:-}" "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import tokenizers' 2>/dev/null; then
    exec "$py" "$(dirname "$0")/tokenize_test.py" "$1"
  fi
done
echo "no Python with the tokenizers package: skipped"
exit 77
