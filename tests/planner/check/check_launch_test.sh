#!/usr/bin/env bash
# Launches every stack check reads on this CPU (make_fixtures.py --check: the HF Trainer from the
# accelerate export as planned and with its parallelism_config removed, ArcticTraining from the
# arctic export, spplan run of a Ulysses and a ring plan and with --sp 1) into WORK_DIR, and holds
# each run's logs against its plan with `spplan check`: every run as planned must pass, every broken
# one be called not split. The Python is found as tests/scripts/launch_test.sh finds it; exit 77
# (skipped) when none imports torch, transformers, accelerate, deepspeed and arctic_training.
# Usage: check_launch_test.sh SPPLAN_BINARY WORK_DIR
set -u
for py in "${SPPLAN_LAUNCH_TEST_PYTHON:-}" "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] &&
     "$py" -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ("torch", "transformers", "accelerate", "deepspeed", "arctic_training", "datasets")))' 2>/dev/null; then
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 exec "$py" "$(dirname "$0")/make_fixtures.py" "$1" "$2" --check
  fi
done
echo "no Python with torch, transformers, accelerate, deepspeed and arctic_training (scripts/install-deps.sh installs them): skipped"
exit 77
