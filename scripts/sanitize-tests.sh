#!/usr/bin/env bash
# Builds gpujit with AddressSanitizer and UndefinedBehaviorSanitizer
# (meson's b_sanitize=address,undefined; UBSan does not recover, so any
# report is an error) into build/sanitize/ and runs the test suite against
# that build, failing on any sanitizer report.  Extra arguments go to pytest
# (paths relative to tests/).  Needs what scripts/setup.sh installs (run it
# first) and gcc's libasan (Debian: libgcc-12-dev, installed with gcc).
#
# CPython and NumPy are not instrumented, so libasan is preloaded into the
# interpreter; leak detection is off (the interpreter keeps its objects
# until exit, which LeakSanitizer would report by the thousand), and a
# failed allocation returns NULL, as without ASan (tests ask for 1 PiB to
# see the MemoryError).  Code that
# LLVM's JIT makes for the CPU target is not instrumented either.  Warnings
# are not errors here (the normal build has -Dwerror=true): GCC's
# -Wformat-truncation misfires under -fsanitize (a "null format string" in
# arena.c's vsnprintf(NULL, 0, ...)).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${GJ_VENV:-$root/.venv}/bin/python"
export PATH="$(dirname "$py"):$PATH"   # the venv's meson and ninja

pkg=build/sanitize/pkg
rm -rf build/sanitize/wheel "$pkg"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" -m pip wheel -q --no-build-isolation --no-deps \
    --config-settings=build-dir=build/sanitize/build \
    --config-settings=setup-args=-Db_sanitize=address,undefined \
    --config-settings=setup-args=-Db_lundef=false \
    --config-settings=setup-args=-Dwerror=false -w build/sanitize/wheel .
"$py" -m zipfile -e build/sanitize/wheel/gpujit-*.whl "$pkg"

# the C unit tests (tests/c/meson.build), built by that build with the sanitizers
status=0
meson test -C build/sanitize/build --print-errorlogs || status=$?

libasan="$(gcc -print-file-name=libasan.so)"
if [[ ! -e "$libasan" ]]; then
    echo "sanitize-tests: gcc has no libasan.so ($libasan)" >&2
    exit 1
fi
export LD_PRELOAD="$libasan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONPATH="$root/$pkg"
# This run gives every CPU kernel without barriers its thread loops from the
# first launch (the main run keeps the default, where launches of few
# threads run code of one thread per call): CI runs the whole suite once
# with each.
export GPUJIT_CPU_LOOP_THREADS="${GPUJIT_CPU_LOOP_THREADS:-0}"
# The notebooks are left out: matplotlib's ft2font throws a C++ exception
# while it is imported, which the preloaded libasan's __cxa_throw
# interceptor aborts on (a CHECK in asan_interceptors.cpp, not a report).
# In parallel worker processes, as the main run (scripts/pytest-parallel.sh).
bash scripts/pytest-parallel.sh "$py" -q -rfE -p no:cacheprovider --ignore=docs/test_notebooks.py "$@" ||
    status=$?
if ((status == 5)); then
    echo "sanitize-tests: pytest collected no tests" >&2
fi
exit "$status"
