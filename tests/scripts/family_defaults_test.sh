#!/usr/bin/env bash
# Runs family_defaults_test.py (spplan's per-family defaults against transformers' AutoConfig) with
# the first Python that imports transformers: the venv install-deps.sh makes (SPPLAN_VENV, default
# ~/.cache/spplan/venv), then python3. Exit 77 (skipped) when none does.
# Usage: family_defaults_test.sh SPPLAN_BINARY
set -u
for py in "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import transformers, tomllib' 2>/dev/null; then
    exec "$py" "$(dirname "$0")/family_defaults_test.py" "$1"
  fi
done
echo "no Python with transformers (and tomllib, Python 3.11+): skipped"
exit 77
