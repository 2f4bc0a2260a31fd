#!/usr/bin/env bash
# Runs export_check_test.py with the first Python that imports one of the export targets
# (deepspeed, transformers, accelerate, arctic_training, megatron.core): SPPLAN_EXPORT_CHECK_PYTHON,
# the venv install-deps.sh makes (SPPLAN_VENV, default ~/.cache/spplan/venv), then python3. Exit 77
# (skipped) when none does. Offline: the model's config.json is written locally.
# Usage: export_check_test.sh SPPLAN_BINARY WORK_DIR
set -u
for py in "${SPPLAN_EXPORT_CHECK_PYTHON:-}" "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] &&
     "$py" -c 'import importlib.util as u, sys; sys.exit(not any(u.find_spec(m) for m in ("deepspeed", "transformers", "accelerate", "arctic_training", "megatron")))' 2>/dev/null; then
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 exec "$py" "$(dirname "$0")/export_check_test.py" "$1" "$2"
  fi
done
echo "no Python with deepspeed, transformers, accelerate, arctic_training or megatron-core (scripts/install-deps.sh installs them): skipped"
exit 77
