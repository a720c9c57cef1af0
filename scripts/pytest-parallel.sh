#!/usr/bin/env bash
# Runs the test suite from tests/ with PYTHON in two passes: every test but
# those marked `serial` in parallel worker processes (pytest-xdist), then
# the `serial` ones in one process with nothing beside it, since they read
# the GPU's free memory or time kernels, which other processes' work would
# disturb (tests/conftest.py).  The rest are independent: each worker is a
# process of its own (its own environment, target and CUDA context), tests
# write under their tmp_path, and a module whose tests share a costly
# fixture or cached runs (Dask's cluster, the MPI runs, the documentation
# site) is kept on one worker by an xdist_group mark (--dist loadgroup).
#
#   bash scripts/pytest-parallel.sh PYTHON [PYTEST_ARG...]
#
# The pytest arguments go to both passes (paths relative to tests/).  With
# one worker, or where PYTHON lacks pytest-xdist, it runs the suite in one
# pass in one process instead, as plain pytest does.  Environment:
# GJ_TEST_WORKERS (how many workers; default one per CPU this process may
# use), GJ_JUNIT (a path prefix: JUnit XML into PREFIX.xml, and
# PREFIX-serial.xml for the second pass).  Exit status: 0 if both passes
# passed; 5 (pytest's "no tests collected") if neither had a test to run,
# while one pass without any is no failure (a -k may leave only serial
# tests, or none); else the first failing pass's.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if (($# < 1)); then
    echo "usage: bash scripts/pytest-parallel.sh PYTHON [PYTEST_ARG...]" >&2
    exit 2
fi
py="$1"
shift
# From tests/ and with -P: neither pytest nor the interpreters that tests
# start may import the source tree's gpujit/ (no compiled extension there).
cd "$root/tests"
workers="${GJ_TEST_WORKERS:-$(nproc)}"
junit=() serial_junit=()
if [[ -n "${GJ_JUNIT:-}" ]]; then
    junit=(--junitxml="$GJ_JUNIT.xml")
    serial_junit=(--junitxml="$GJ_JUNIT-serial.xml")
fi

if ((workers <= 1)) || ! "$py" -c 'import xdist' 2>/dev/null; then
    echo "pytest-parallel: one process (GJ_TEST_WORKERS=$workers, or no pytest-xdist)"
    status=0
    "$py" -P -m pytest "${junit[@]}" "$@" || status=$?
    exit "$status"
fi

echo "pytest-parallel: all but the serial tests, in $workers worker processes"
parallel=0
"$py" -P -m pytest -n "$workers" --dist loadgroup --serial-tests=skip "${junit[@]}" "$@" ||
    parallel=$?
echo "pytest-parallel: the serial tests, alone"
serial=0
"$py" -P -m pytest --serial-tests=only "${serial_junit[@]}" "$@" || serial=$?
if ((parallel == 5 && serial == 5)); then
    exit 5
fi
for status in "$parallel" "$serial"; do
    if ((status != 0 && status != 5)); then
        exit "$status"
    fi
done
exit 0
