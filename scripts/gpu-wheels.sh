#!/usr/bin/env bash
# Downloads, on a machine with PyPI, the wheels that the scaling-out tests
# (tests/scaling/test_dask.py, tests/scaling/test_mpi.py) need on a GPU machine without a
# registry, and those that run the tests in parallel there, into .whl/
# (ignored by git), for that machine's Python:
#
#   bash scripts/gpu-wheels.sh [PYTHON_VERSION]      (default 3.12)
#
# Dask's scheduler and the parts of its dependencies that a stock CUDA
# Python image lacks, mpi4py, MPICH's own wheel (MPI's library and
# mpiexec), and pytest-xdist with execnet (scripts/pytest-parallel.sh's
# worker processes, where the image lacks them): about 17 MB.  Carry .whl/
# beside gpubuild/; scripts/gpu-test.sh installs it there into a prefix of
# its own (docs/install.md, "A GPU machine without a registry").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${1:-3.12}"
py="${GJ_VENV:-$root/.venv}/bin/python"
[[ -x $py ]] || py=python3
rm -rf "$root/.whl"
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done
# --no-deps: the image has the rest of distributed's dependencies (click,
# cloudpickle, fsspec, jinja2, msgpack, packaging, psutil, pyyaml,
# sortedcontainers, toolz, urllib3); one version of each package only.
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version "$version" \
    --implementation cp "${platforms[@]}" -d "$root/.whl" \
    dask==2026.8.0 distributed==2026.8.0 tornado partd locket tblib zict \
    mpi4py==4.1.2 mpich==5.0.2 pytest-xdist==3.8.0 execnet
du -sh "$root/.whl"
