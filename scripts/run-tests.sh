#!/usr/bin/env bash
# Installs gpujit (scripts/setup.sh) and runs the test suite against the
# installed package, in one worker process per CPU and then the tests
# marked serial alone (scripts/pytest-parallel.sh; GJ_TEST_WORKERS=1 runs
# it all in one process).  Extra arguments go to pytest (paths relative to
# tests/).  Tests that need a GPU (or ptxas) are skipped without one; the
# summary counts the skips once per reason (tests/conftest.py).  "No tests
# collected" (pytest's status 5) fails like any other failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
status=0
if (($# == 0)); then
    # the C unit tests (tests/c/meson.build) in the build setup.sh made
    PATH="${GJ_VENV:-$root/.venv}/bin:$PATH" meson test -C "$root/build/pip" --print-errorlogs ||
        status=$?
fi
bash "$root/scripts/pytest-parallel.sh" "${GJ_VENV:-$root/.venv}/bin/python" -q -rfE "$@" ||
    status=$?
if ((status == 5)); then
    echo "run-tests: pytest collected no tests" >&2
fi
exit "$status"
