#!/usr/bin/env bash
# Runs the whole test suite under Python 3.14 and 3.15, on the CPU target, in
# a Debian sid chroot: Debian 12 has neither interpreter, sid has both.
#
#   scripts/test-pythons.sh [--llvm21 | --debug] [VERSION...]   (default: 3.14 3.15)
#
# 1. The chroot at $GJ_CHROOT (default /var/tmp/gpujit-sid): created with
#    debootstrap on first use (minbase, python3.X and python3.X-venv for each
#    VERSION, about 30 s), then reused; packages missing there are installed
#    with apt-get.  pip inside reaches the index as it does here: the host's
#    pip configuration, the certificate it names and PIP_* are carried in.
# 2. The self-contained extension, built once here (scripts/gpu-build.sh:
#    LLVM linked in statically, abi3), imports in the chroot unchanged.
# 3. tests/compiler/test_python_versions.py's output from this machine's Python, so
#    that test compares 3.1x's kernel results and diagnostics with it.
# 4. Per VERSION: a venv in the chroot (/opt/gpujit-venv<VERSION>: numpy,
#    pytest, pytest-xdist, nvidia-nvvm, cloudpickle; reused), the
#    repository's tracked files (as they are in the working tree) and the
#    extension copied to /src, and pytest run there, from tests/, as CI runs
#    it (GPUJIT_IGNORE_CUDA_TOOLKIT=1; in parallel worker processes:
#    scripts/pytest-parallel.sh).
#    The suite runs the examples too (tests/docs/test_examples.py).
#
# --llvm21 instead builds gpujit in the chroot against Debian's llvm-21-dev
# (`pip install .`, LLVM linked dynamically, -Dwerror=true) and runs the
# suite with that build under the first VERSION: how LLVM 21 is tested.
# --debug runs the suite under the first VERSION's debug interpreter
# (python3.X-dbg: reference-count and GC assertions on, dev mode), with
# gpujit (LLVM 21) and NumPy built against its headers, so that
# sys.gettotalrefcount() counts every reference (tests/runtime/test_reference_leaks.py
# runs only there).  NumPy's build takes about 15 minutes the first time; the
# venv is reused.
#
# Needs root (debootstrap, chroot, bind mounts of /proc and /dev, unmounted
# on exit) and what scripts/setup.sh installs.  Environment: GJ_CHROOT,
# GJ_VENV (this machine's venv, default .venv), GJ_DEBIAN_MIRROR,
# GJ_SKIP_BUILD=1 (reuse gpubuild/ as it is), GJ_PYTEST_ARGS (more pytest
# arguments), GJ_TEST_WORKERS (scripts/pytest-parallel.sh's, carried in).
# Exits non-zero if any version's suite failed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
chroot_dir="${GJ_CHROOT:-/var/tmp/gpujit-sid}"
mirror="${GJ_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
host_py="${GJ_VENV:-$root/.venv}/bin/python"
mode=release
case "${1:-}" in
    --llvm21) mode=llvm21; shift ;;
    --debug) mode=debug; shift ;;
esac
versions=("$@")
((${#versions[@]})) || versions=(3.14 3.15)
[[ $mode == release ]] || versions=("${versions[0]}")
started=$SECONDS
log() { echo "test-pythons: $* ($((SECONDS - started)) s)"; }

if [[ $(id -u) -ne 0 ]]; then
    echo "test-pythons: needs root (debootstrap, chroot, mount)" >&2
    exit 1
fi

# --- 1. the chroot -------------------------------------------------------
packages=(ca-certificates)
for v in "${versions[@]}"; do
    packages+=("python$v" "python$v-venv")
done
if [[ $mode != release ]]; then
    packages+=("python${versions[0]}-dev" llvm-21-dev build-essential pkg-config
               libzstd-dev zlib1g-dev)
    [[ $mode == debug ]] && packages+=("python${versions[0]}-dbg")
fi
if [[ ! -x "$chroot_dir/bin/bash" ]]; then
    if ! command -v debootstrap >/dev/null; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
    fi
    log "creating a Debian sid chroot in $chroot_dir"
    mkdir -p "$chroot_dir"
    debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" sid \
        "$chroot_dir" "$mirror" >/dev/null
fi
mounted=()
cleanup() {
    for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc dev; do
    if ! mountpoint -q "$chroot_dir/$m"; then
        mount --bind "/$m" "$chroot_dir/$m"
        mounted=("$chroot_dir/$m" "${mounted[@]}")
    fi
done
cp /etc/resolv.conf "$chroot_dir/etc/" 2>/dev/null || true
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$chroot_dir/etc/pip.conf"
for cert in "${PIP_CERT:-}" "$("$host_py" -m pip config get global.cert 2>/dev/null || true)"; do
    if [[ -n "$cert" && -f "$cert" ]]; then
        mkdir -p "$chroot_dir$(dirname "$cert")" && cp "$cert" "$chroot_dir$cert"
    fi
done
envs=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
      PIP_DISABLE_PIP_VERSION_CHECK=1)
for var in PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT \
           GJ_TEST_WORKERS; do
    [[ -n "${!var:-}" ]] && envs+=("$var=${!var}")
done
in_chroot() {   # in_chroot COMMAND: bash -c COMMAND in the chroot, clean environment
    chroot "$chroot_dir" /usr/bin/env -i "${envs[@]}" bash -c "$1"
}
missing=()
for p in "${packages[@]}"; do
    in_chroot "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q 'install ok installed'" ||
        missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]} in the chroot"
    # sid's Release file is valid a week: an older chroot (or a clock ahead) still installs
    in_chroot "apt-get -o Acquire::Check-Valid-Until=false update -q &&
               DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
               --no-install-recommends ${missing[*]}" >/dev/null
fi

# --- 2. the extension, and 3. the reference output -----------------------
if [[ $mode == release && ("${GJ_SKIP_BUILD:-}" != 1 || ! -f gpubuild/gpujit/_gpujit.abi3.so) ]]
then
    log "building gpubuild/ (scripts/gpu-build.sh)"
    bash scripts/gpu-build.sh >/dev/null
fi
src="$chroot_dir/src"
rm -rf "$src" && mkdir -p "$src"
git ls-files -z | tar --null --ignore-failed-read -T - -c | tar -x -C "$src"
run_env="GPUJIT_IGNORE_CUDA_TOOLKIT=1 PYTHONPATH=/src/build/site"
if [[ $mode == release ]]; then
    mkdir -p "$src/build" && cp -r gpubuild "$src/build/site"
    PYTHONPATH="$root/gpubuild" "$host_py" -P tests/compiler/test_python_versions.py \
        "$src/versions-reference.txt"
    run_env+=" GPUJIT_VERSIONS_REFERENCE=/src/versions-reference.txt"
fi

# --- 4. the suite, per version -------------------------------------------
failed=()
for v in "${versions[@]}"; do
    py="python$v" venv="/opt/gpujit-venv$v"
    if [[ $mode == debug ]]; then
        py="python${v}d" venv="/opt/gpujit-venv${v}d"
    fi
    log "$py: venv $venv"
    in_chroot "[ -x $venv/bin/python ] || $py -m venv $venv
               $venv/bin/pip install -q pytest pytest-xdist nvidia-nvvm meson-python meson ninja"
    # gpujit's one dependency besides numpy (kernels pickled by value)
    in_chroot "$venv/bin/python -c 'import cloudpickle' 2>/dev/null ||
               $venv/bin/pip install -q cloudpickle"
    case $mode in
    release)
        in_chroot "$venv/bin/pip install -q numpy"
        ;;
    llvm21)
        in_chroot "$venv/bin/pip install -q numpy"
        log "$py: building gpujit against LLVM 21"
        in_chroot "cd /src && PATH=$venv/bin:\$PATH $venv/bin/pip install -q \
                   --no-build-isolation --no-deps --config-settings=build-dir=build/pip \
                   --config-settings=setup-args=-Dwerror=true --target build/site ."
        ;;
    debug)
        in_chroot "$venv/bin/python -c 'import numpy' 2>/dev/null ||
                   $venv/bin/pip install -q --no-binary numpy numpy"
        log "$py: building gpujit against its headers and LLVM 21"
        # meson, not pip: meson names the module for a debug interpreter
        # version-specifically, which meson-python refuses for an abi3 package
        in_chroot "cd /src && export PATH=$venv/bin:\$PATH &&
                   python -m mesonbuild.mesonmain setup build/dbg -Dwerror=true >/dev/null &&
                   ninja -C build/dbg >/dev/null &&
                   mkdir -p build/site/gpujit &&
                   cp gpujit/*.py build/dbg/_gpujit*.so build/site/gpujit/"
        run_env+=" PYTHONDEVMODE=1 PYTHONWARNINGS=ignore::ResourceWarning"
        ;;
    esac
    log "$py: running the suite"
    status=0
    in_chroot "cd /src/tests && export $run_env &&
               $venv/bin/python -P -c 'import sys, gpujit
print(sys.executable, sys.version.split()[0], \"with LLVM\", gpujit._gpujit.llvm_version)' &&
               bash /src/scripts/pytest-parallel.sh $venv/bin/python -q -rfE -p no:cacheprovider \
               ${GJ_PYTEST_ARGS:-}" \
        || status=$?
    log "$py: pytest exit status $status"
    ((status == 0)) || failed+=("$py")
done
if ((${#failed[@]})); then
    log "FAILED under ${failed[*]}"
    exit 1
fi
log "passed under ${versions[*]} ($mode)"
