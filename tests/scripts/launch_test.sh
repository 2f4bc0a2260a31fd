#!/usr/bin/env bash
# Runs launch_test.py with the first Python that imports torch, transformers, accelerate and
# deepspeed: SPPLAN_LAUNCH_TEST_PYTHON, the venv install-deps.sh makes (SPPLAN_VENV, default
# ~/.cache/spplan/venv), then python3. Exit 77 (skipped) when none does. Offline: the models,
# tokenizer and data are made locally; the launchers (torchrun, accelerate, deepspeed,
# arctic_training) are that Python's own.
# Usage: launch_test.sh SPPLAN_BINARY WORK_DIR
set -u
for py in "${SPPLAN_LAUNCH_TEST_PYTHON:-}" "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] &&
     "$py" -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ("torch", "transformers", "accelerate", "deepspeed")))' 2>/dev/null; then
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 exec "$py" "$(dirname "$0")/launch_test.py" "$1" "$2"
  fi
done
echo "no Python with torch, transformers, accelerate and deepspeed (scripts/install-deps.sh installs them): skipped"
exit 77
