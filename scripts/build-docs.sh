#!/usr/bin/env bash
# Builds the documentation site (Sphinx: docs/*.md through MyST, the API
# reference from the installed gpujit's docstrings) into docs/_build/html,
# warnings as errors.  Needs what scripts/setup.sh installs (run it first);
# uses $GJ_VENV's Python (default .venv).
#
#   bash scripts/build-docs.sh [OUTPUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${GJ_VENV:-$root/.venv}/bin/python"
out="${1:-$root/docs/_build/html}"
cd /   # not the repository root: its gpujit/ would shadow the installed one
"$py" -m sphinx -q -W --keep-going -b html "$root/docs" "$out"
echo "build-docs: $out/index.html"
