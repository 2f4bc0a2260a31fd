#!/usr/bin/env bash
# ctest python_package: the package's pytest suite with the Python that has it installed
# (scripts/test.sh runs `pip install .` into the venv first). Exit 77 (skipped) when no Python
# here has both spplan and pytest.
# Usage: run_pytest.sh REPO_ROOT SPPLAN_BINARY
set -euo pipefail
repo=$1
export SPPLAN_CLI=$2
venv=${SPPLAN_VENV:-$HOME/.cache/spplan/venv}
for py in "$venv/bin/python" python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import spplan, pytest' 2>/dev/null; then
    cd "$repo"  # not in python/: `import spplan` must find the installed package, not the sources
    exec "$py" -m pytest -q -p no:cacheprovider tests/python
  fi
done
echo "python_package: skipped: no Python with spplan and pytest (scripts/test.sh installs them)"
exit 77
