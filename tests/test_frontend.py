"""The compiler's frontend stages and the IR verifier.

tests/c/test_frontend.c is compiled with the C compiler against the front
end's files of compiler/ (FRONTEND: no LLVM, which only lowering needs; the
other files are compiled with the same flags, not linked, where LLVM's
headers are found) and run: it decodes hand-written dis
listings of 3.11, 3.12 and 3.13, builds, checks and types their IR, and
breaks one IR invariant at a time to see the verifier (compiler/irverify.c)
report it.  Built as a release build is (NDEBUG, the verifier off unless
GPUJIT_VERIFY_IR=1) and as a debug build under AddressSanitizer/UBSan where
the compiler can link them.

The verifier is off in release builds, so one test runs a broad set of this
suite's kernels (control flow, loops, device functions, raise/assert,
tuples, the examples) in a subprocess with GPUJIT_VERIFY_IR=1: a pass that
breaks the IR fails there with an InternalError."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import build_c_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPILER = os.path.join(ROOT, "compiler")
TESTS = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wshadow", "-Wconversion",
         "-Wmissing-prototypes", "-Wstrict-prototypes", "-Wswitch-enum", "-Werror",
         "-D_GNU_SOURCE"]
VARIANTS = {
    "release": ["-DNDEBUG"],
    "asan": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined"],
}

CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

# The front end: code view -> typed IR (compiler/frontend.h), and what it
# links against; built without LLVM's include path, so none may include it.
FRONTEND = ["arena.c", "build.c", "bytecode.c", "defassign.c", "devfunc.c", "effects.c",
            "frontend.c", "intrinsics.c", "ir.c", "irverify.c", "typecall.c", "typeinfer.c",
            "typemem.c", "types.c"]


def llvm_config():
    """The llvm-config of an LLVM gpujit builds with (meson.build: 19 to 21), or None."""
    for name in ("llvm-config-21", "llvm-config-20", "llvm-config-19", "llvm-config"):
        path = shutil.which(name)
        if not path:
            continue
        version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        if re.match(r"(19|20|21)\.", version):
            return path
    return None


def test_frontend_stages_and_verifier(tmp_path, variant):
    if CC is None:
        pytest.skip("no C compiler")
    sources = [os.path.join(TESTS, "c", "test_frontend.c")] + [
        os.path.join(COMPILER, n) for n in FRONTEND]
    exe = str(tmp_path / "test_frontend")
    cmd = [CC, *FLAGS, *VARIANTS[variant], "-I", COMPILER, *sources, "-lm", "-o", exe]
    build_c_test(cmd, sanitized=variant == "asan")
    lc = llvm_config()
    if lc is not None:   # the rest of compiler/ compiles alike, warning-free (not linked)
        include = subprocess.run([lc, "--includedir"], capture_output=True, text=True,
                                 check=True).stdout.strip()
        rest = sorted(os.path.join(COMPILER, n) for n in os.listdir(COMPILER)
                      if n.endswith(".c") and n not in FRONTEND)
        build_c_test(["sh", "-c", 'cd "$0" && exec "$@"', str(tmp_path), CC, *FLAGS,
                      *VARIANTS[variant], "-I", COMPILER, "-isystem", include, "-c", *rest],
                     sanitized=variant == "asan")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    env.pop("LD_PRELOAD", None)        # scripts/sanitize-tests.sh's libasan
    env.pop("GPUJIT_VERIFY_IR", None)  # the program sets it itself
    run = subprocess.run([exe], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok: 0 failure(s)"), run.stdout + run.stderr


@pytest.fixture(params=list(VARIANTS))
def variant(request):
    return request.param


# Test files whose kernels together use every op and every kind of variable.
VERIFIED = ["test_control_flow.py", "test_iteration.py", "test_device_functions.py",
            "test_raise_assert.py", "test_tuple_args.py", "test_arithmetic.py",
            "test_boundscheck.py", "test_examples.py"]


def test_the_ir_verifier_passes_a_broad_set_of_kernels():
    env = dict(os.environ, GPUJIT_VERIFY_IR="1")
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         "-k", "not cuda", *VERIFIED],
        capture_output=True, text=True, env=env, cwd=TESTS, timeout=900)
    tail = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert "InternalError" not in proc.stdout, tail
    assert re.search(r"\d+ passed", proc.stdout), tail
