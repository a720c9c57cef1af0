#!/usr/bin/env bash
# Installs what gpujit needs on Debian 12 and builds it into a virtual
# environment, from a clean checkout.  Run from anywhere, as root (or with
# sudo available); idempotent, so running it again only rebuilds.
#
#   1. apt: the packages below that are missing (apt-get update first).
#   2. A venv at $GJ_VENV (default: .venv in the repository root) with the
#      build tools, numpy, pytest and nvidia-nvvm (libdevice) from PyPI.
#   3. `pip install .` of gpujit into that venv (meson-python; build tree in
#      build/pip, reused between runs).  With CI set, warnings are errors.
#
# Environment: GJ_VENV (venv path), GJ_PIP_ARGS (extra `pip install` args),
# CI (any non-empty value but "false" turns on -Dwerror=true).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${GJ_VENV:-$root/.venv}"

# --- 1. system packages -------------------------------------------------
# llvm-19-dev: LLVM's C API and libraries; libzstd-dev and zlib1g-dev: what a
# static LLVM link (-Dllvm_static=true) needs besides LLVM's archives.
packages=(python3 python3-venv python3-dev build-essential g++ pkg-config
          llvm-19-dev libzstd-dev zlib1g-dev)
missing=()
if ! command -v dpkg-query >/dev/null; then
    echo "setup: not a Debian system; make sure these (or their equivalents) are" \
         "installed: ${packages[*]}" >&2
    packages=()
fi
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- 2. virtual environment ---------------------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup: creating $venv"
    python3 -m venv "$venv"
fi
py="$venv/bin/python"
export PATH="$venv/bin:$PATH"    # meson-python runs the venv's meson and ninja
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$py" -m pip install -q "meson-python>=0.16" "meson>=1.3.0" ninja "numpy>=2" pytest \
    pytest-xdist \
    nbclient nbformat ipykernel matplotlib \
    sphinx myst-parser \
    cloudpickle "dask[distributed]" mpi4py mpich
# (pytest-xdist: scripts/pytest-parallel.sh's worker processes; the
# notebooks' and the documentation site's tests; cloudpickle, Dask and
# MPI for the scaling-out tests: mpich is MPICH's own wheel, with mpiexec)
# NVIDIA's libdevice (the GPU's math functions, what gpujit's "cuda" extra
# brings), so kernels that call math functions compile for a GPU on a
# machine without a CUDA toolkit.  A 75 MB wheel, fetched once.
if ! "$py" -m pip install -q nvidia-nvvm; then
    echo "setup: could not install nvidia-nvvm; GPU kernels that call math functions" \
         "will need a CUDA toolkit (see docs/install.md)" >&2
fi

# --- 3. gpujit ----------------------------------------------------------
setup_args=()
if [[ -n "${CI:-}" && "${CI:-}" != "false" ]]; then
    setup_args+=("--config-settings=setup-args=-Dwerror=true")
fi
echo "setup: building and installing gpujit into $venv"
# --no-build-isolation: build with the meson/ninja just installed in the
# venv, and keep the build tree in build/pip so a second run is incremental.
# shellcheck disable=SC2086
"$py" -m pip install --no-build-isolation --no-deps --config-settings=build-dir=build/pip \
    "${setup_args[@]}" ${GJ_PIP_ARGS:-} .
"$py" -P -c 'import gpujit; print("setup: gpujit installed at", gpujit.__path__[0])'
