#!/usr/bin/env bash
# Installs gpujit (scripts/setup.sh) and runs the test suite against the
# installed package.  Extra arguments go to pytest (paths relative to
# tests/).  Tests that need a GPU (or ptxas) are skipped without one; the
# summary counts the skips once per reason (tests/conftest.py).  "No tests
# collected" (pytest's status 5) fails like any other failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Run from tests/, with -P: neither pytest nor the interpreters that tests
# start with `python -c` may import the source tree's gpujit/ (which has no
# compiled extension) instead of the installed package.
cd "$root/tests"
status=0
"${GJ_VENV:-$root/.venv}/bin/python" -P -m pytest -q -rfE "$@" || status=$?
if ((status == 5)); then
    echo "run-tests: pytest collected no tests" >&2
fi
exit "$status"
