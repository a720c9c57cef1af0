"""The host-CPU grid executor (runtime/cpuexec.c) on its own, without Python
or LLVM: tests/c/test_cpuexec.c is compiled with the C compiler against the
runtime's source and run, with the assembly context switch and with the
ucontext fallback, under several worker counts, and under
AddressSanitizer/UBSan and ThreadSanitizer where the compiler can link them.
It checks grid and block indices, per-block shared memory, barrier and
warp-sync ordering, early-returning threads, the block and warp collectives
(syncthreads_count/and/or, shuffles, votes, matches, activemask), misuse
errors, vprintf, error reports, concurrent launches and fork()."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

RUNTIME = os.path.join(ROOT, "runtime")
SOURCES = [os.path.join(ROOT, "tests", "c", "test_cpuexec.c")] + [
    os.path.join(RUNTIME, name) for name in ("cpuexec.c", "cpuwarp.c", "cpuprint.c")]
# The project's warning flags (meson.build, STYLE.md), as errors.
FLAGS = ["-std=c11", "-O2", "-g", "-Wall", "-Wextra", "-Wshadow", "-Wconversion",
         "-Wmissing-prototypes", "-Wstrict-prototypes", "-Wswitch-enum", "-Werror",
         "-D_GNU_SOURCE", "-pthread"]

VARIANTS = {
    "asm": [],
    "ucontext": ["-DGJ_CPUEXEC_UCONTEXT"],
    "asan": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined"],
    "tsan": ["-fsanitize=thread"],
}
# ThreadSanitizer is slow: one worker count, the one that shares blocks out most.
SLOW = {"tsan": "3"}

CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = [pytest.mark.skipif(CC is None, reason="no C compiler"),
              pytest.mark.xdist_group("cpuexec")]   # one pytest-xdist worker: each variant built once


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Compiles a variant once per module; returns the executable's path."""
    out = tmp_path_factory.mktemp("cpuexec")
    built = {}

    def get(variant):
        if variant not in built:
            exe = str(out / f"test_cpuexec_{variant}")
            cmd = [CC, *FLAGS, *VARIANTS[variant], "-I", RUNTIME, *SOURCES, "-o", exe]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if variant in ("asan", "tsan") and res.returncode != 0 and "sanitize" in res.stderr:
                pytest.skip(f"the C compiler cannot link the {variant} sanitizer here")
            assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
            assert res.stderr == "", f"warnings:\n{res.stderr}"
            built[variant] = exe
        return built[variant]

    return get


@pytest.mark.parametrize("threads", [None, "1", "3"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cpuexec(build, variant, threads):
    if variant in SLOW and threads != SLOW[variant]:
        pytest.skip(f"{variant} runs with GPUJIT_CPU_THREADS={SLOW[variant]} only")
    env = dict(os.environ)
    env.pop("GPUJIT_CPU_THREADS", None)
    # scripts/sanitize-tests.sh preloads libasan into Python; these programs
    # link their own sanitizer (ThreadSanitizer cannot run beside ASan)
    env.pop("LD_PRELOAD", None)
    if threads is not None:
        env["GPUJIT_CPU_THREADS"] = threads
    if variant == "asan":
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    if variant == "tsan":
        env["TSAN_OPTIONS"] = "halt_on_error=1"
        env["GJ_TEST_NO_FORK"] = "1"   # TSan does not support threads after fork()
    res = subprocess.run([build(variant)], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("ok: 0 failure(s)"), res.stdout + res.stderr
    workers = int(res.stdout.split("workers:")[1].split()[0])
    assert workers == (int(threads) if threads else max(1, len(os.sched_getaffinity(0))))
