#!/usr/bin/env bash
# Installs gpujit (scripts/setup.sh) and runs examples/vector_add.py.
# Without an NVIDIA GPU the example runs on the CPU target (gpujit warns
# once) and prints "target: cpu".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# -P: don't put the working directory on sys.path, so the installed package
# is imported rather than the source tree's gpujit/ (which has no extension).
exec "${GJ_VENV:-$root/.venv}/bin/python" -P "$root/examples/vector_add.py"
