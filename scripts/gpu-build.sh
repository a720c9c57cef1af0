#!/usr/bin/env bash
# Builds a self-contained gpujit for a GPU machine that has Python >= 3.11
# and NumPy but no LLVM and no build tools, into gpubuild/ (git-ignored):
#
#   gpubuild/gpujit/__init__.py ...       the package's Python files
#   gpubuild/gpujit/_gpujit.abi3.so       LLVM linked in statically, stripped
#   gpubuild/gpujit/__pycache__/          their bytecode for the Pythons found here
#
# `PYTHONPATH=$PWD/gpubuild python3 -P ...` then imports it there.  The
# extension uses the limited API (abi3), so the one binary built here with
# Python 3.11 imports under 3.12 and 3.13 too; it needs only libc, libm,
# libstdc++ and libgcc_s (glibc >= 2.36's symbols, as on Debian 12).
#
# Needs what scripts/setup.sh installs (run it first); uses $GJ_VENV's
# Python (default .venv), else python3 if that has meson-python.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${GJ_VENV:-$root/.venv}/bin/python"
[[ -x "$py" ]] || py="python3"
if ! "$py" -c 'import mesonpy' 2>/dev/null; then
    echo "gpu-build: $py lacks meson-python; run scripts/setup.sh first" >&2
    exit 1
fi

# Build the wheel that `pip install .` would build, with LLVM static, and
# unpack it: the layout is then exactly the installed package's.
export PATH="$(dirname "$(command -v "$py")"):$PATH"   # its meson and ninja
wheeldir="build/gpu-wheel"
rm -rf "$wheeldir" gpubuild
PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" -m pip wheel -q --no-build-isolation --no-deps \
    --config-settings=build-dir=build/gpu --config-settings=setup-args=-Dllvm_static=true -w "$wheeldir" .
wheel=("$wheeldir"/gpujit-*.whl)
"$py" -m zipfile -e "${wheel[0]}" gpubuild
rm -rf gpubuild/*.dist-info

so=gpubuild/gpujit/_gpujit.abi3.so
case "${wheel[0]}" in
    *-abi3-*) ;;
    *) echo "gpu-build: ${wheel[0]} is not an abi3 wheel" >&2; exit 1 ;;
esac
exported="$(nm -D --defined-only "$so" | awk '{print $3}')"
if [[ "$exported" != "PyInit__gpujit" ]]; then
    echo "gpu-build: $so exports more than PyInit__gpujit:" >&2
    echo "$exported" | head -20 >&2
    exit 1
fi
unexpected="$(ldd "$so" | awk '{print $1}' |
    grep -Ev '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|stdc\+\+|gcc_s)\.so\.[0-9]+)$' || true)"
if [[ -n "$unexpected" ]]; then
    echo "gpu-build: $so needs libraries a GPU machine may lack:" >&2
    echo "$unexpected" >&2
    exit 1
fi
# Load the extension by itself (not through gpujit/__init__.py): it must
# import, and must not need NumPy to do so.
"$py" -P - "$so" <<'PYEOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("gpujit._gpujit", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
if "numpy" in sys.modules:
    sys.exit("gpu-build: importing the extension imported numpy")
PYEOF
# The bytecode pip writes when it installs a package, for each Python 3.11+
# found here (3.12 is the GPU machine's): a process there then reads .pyc
# files instead of compiling gpujit's sources, as an installed gpujit does.
# Unchecked hashes, since copying may change the sources' times.
for v in 3.11 3.12 3.13 3.14; do
    for cand in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v"; do
        if "$cand" -c "" >/dev/null 2>&1; then
            "$cand" -m compileall -q --invalidation-mode unchecked-hash gpubuild/gpujit
            break
        fi
    done
done
size=$(du -sb gpubuild | cut -f1)
if ((size > 64 * 1024 * 1024)); then
    echo "gpu-build: gpubuild/ is $size bytes, over the 64 MiB a device run carries" >&2
    exit 1
fi
echo "gpu-build: gpubuild/ ready ($size bytes); extension:"
ls -l "$so"
ldd "$so"
