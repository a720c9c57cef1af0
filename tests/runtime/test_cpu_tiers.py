"""The CPU target's two tiers (docs/internals/cpu-target.md, "How a block runs"): a
kernel without barriers first runs code of one thread per call, which
compiles quickly, and is compiled again with thread loops (vectorised across
threads) once its launches of one signature have run GPUJIT_CPU_LOOP_THREADS
threads; a first launch that large gets the loops at once.  Every launch
gives the same values whichever code runs it."""
import re
import textwrap
import threading
import warnings

import numpy as np
import pytest

import gpujit
from conftest import child_output, poison, random_array

pytestmark = pytest.mark.usefixtures("cpu")

LIMIT = 1000   # GPUJIT_CPU_LOOP_THREADS in these tests

SAXPY = """
import gpujit

@gpujit.jit(cache={cache})
def saxpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
"""

BLOCK_SUM = """
import gpujit
import numpy as np

@gpujit.jit(cache={cache})
def block_sum(x, out):
    s = gpujit.shared.array(64, np.float64)
    t = gpujit.threadIdx.x
    i = gpujit.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    gpujit.syncthreads()
    if t == 0:
        total = 0.0
        for k in range(64):
            total += s[k]
        out[gpujit.blockIdx.x] = total
"""


@pytest.fixture
def limit(monkeypatch, tmp_path):
    """GPUJIT_CPU_LOOP_THREADS=LIMIT, and a cache directory of this test's."""
    monkeypatch.setenv("GPUJIT_CPU_LOOP_THREADS", str(LIMIT))
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUJIT_CACHE", raising=False)
    monkeypatch.delenv("GPUJIT_DUMP", raising=False)
    return LIMIT


def make(source, name, cache=False):
    """A kernel of its own (a new Dispatcher, so no earlier test's code)."""
    ns = {}
    exec(compile(textwrap.dedent(source).format(cache=cache), "tier_kernels.py", "exec"), ns)
    return ns[name]


def vectorised(kernel):
    """Whether the CPU code of kernel's one signature holds float vectors:
    thread loops do (the host has SIMD registers), one thread's code not."""
    ir = kernel.inspect_llvm()
    assert len(ir) == 1
    return bool(re.search(r"<\d+ x (float|double)>", next(iter(ir.values()))))


def run_saxpy(kernel, rng, blocks, threads=100):
    n = blocks * threads
    a = np.float32(rng.uniform(-4, 4))
    x, y = random_array(rng, n, "float32"), random_array(rng, n, "float32")
    out = poison(n, "float32")
    kernel[blocks, threads](a, x, y, out)
    np.testing.assert_allclose(out, a * x + y, rtol=2e-6, atol=1e-3)


def misses():
    return gpujit.cache_info()["misses"]


def in_threads(work, count):
    """work(seed) in `count` Python threads at once; the first exception
    any of them raised is raised here."""
    errors = []

    def run(seed):
        try:
            work(seed)
        except Exception as e:   # noqa: BLE001 - raised below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_small_launches_run_one_threads_code_until_the_limit(limit, rng):
    saxpy = make(SAXPY, "saxpy")
    run_saxpy(saxpy, rng, 3)                      # 300 threads
    assert not vectorised(saxpy)
    run_saxpy(saxpy, rng, 6)                      # 900 in all
    assert not vectorised(saxpy)
    run_saxpy(saxpy, rng, 2)                      # 1,100: past the limit, this launch too
    assert vectorised(saxpy)
    run_saxpy(saxpy, rng, 1)                      # small again: the loops stay
    assert vectorised(saxpy)


def test_a_large_first_launch_compiles_the_loops_only(limit, rng):
    saxpy = make(SAXPY, "saxpy", cache=True)
    before = misses()
    run_saxpy(saxpy, rng, 11)
    assert vectorised(saxpy)
    run_saxpy(saxpy, rng, 1)
    assert misses() - before == 1


def test_the_persistent_cache_keeps_each_tier(limit, rng):
    first = make(SAXPY, "saxpy", cache=True)
    before = gpujit.cache_info()
    run_saxpy(first, rng, 1)
    run_saxpy(first, rng, 10)
    after = gpujit.cache_info()
    assert (after["misses"] - before["misses"], after["entries"] - before["entries"]) == (2, 2)
    second = make(SAXPY, "saxpy", cache=True)     # as a new process would: both from files
    run_saxpy(second, rng, 1)
    assert not vectorised(second)
    run_saxpy(second, rng, 10)
    assert vectorised(second)
    last = gpujit.cache_info()
    assert (last["hits"] - after["hits"], last["misses"] - after["misses"]) == (2, 0)


def test_a_kernel_with_barriers_is_compiled_once(limit, rng):
    block_sum = make(BLOCK_SUM, "block_sum", cache=True)
    before = misses()
    for blocks in (3, 30, 3):                     # 192, 2,112, 2,304 threads in all
        x = random_array(rng, blocks * 64 - 5, "float64")
        out = poison(blocks, "float64")
        block_sum[blocks, 64](x, out)
        want = np.add.reduceat(np.append(x, np.zeros(5)), np.arange(0, blocks * 64, 64))
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-9)
    assert misses() - before == 1


def test_limit_zero_gives_thread_loops_from_the_first_launch(limit, rng, monkeypatch):
    monkeypatch.setenv("GPUJIT_CPU_LOOP_THREADS", "0")
    saxpy = make(SAXPY, "saxpy")
    run_saxpy(saxpy, rng, 1, threads=1)
    assert vectorised(saxpy)


def test_forall_counts_its_tasks(limit, rng):
    saxpy = make(SAXPY, "saxpy")
    n = 4 * LIMIT + 7
    a, x, y = np.float32(1.5), random_array(rng, n, "float32"), random_array(rng, n, "float32")
    out = poison(n, "float32")
    saxpy.forall(n)(a, x, y, out)
    np.testing.assert_allclose(out, a * x + y, rtol=2e-6, atol=1e-3)
    assert vectorised(saxpy)


def test_threads_that_cross_the_limit_together_agree(limit):
    """Python threads launching one kernel at once: whichever compiles the
    loops, every launch before, during and after gives the right values."""
    saxpy = make(SAXPY, "saxpy")

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            run_saxpy(saxpy, rng, int(rng.integers(1, 4)))
    in_threads(work, 4)
    assert vectorised(saxpy)


def test_threads_making_the_first_launch_together_share_one_specialisation(limit):
    """Two threads that compile one signature at once (the GIL released)
    keep one entry, which counts both launches (600 threads each) and so
    has the loops; entries of their own would count 600 each."""
    for _ in range(3):
        saxpy = make(SAXPY, "saxpy")
        start = threading.Barrier(2)

        def first(seed):
            start.wait()
            run_saxpy(saxpy, np.random.default_rng(seed), 6)
        in_threads(first, 2)
        assert vectorised(saxpy)


MAYBE_UNASSIGNED = """
import gpujit

@gpujit.jit
def pick(x, out):
    i = gpujit.grid(1)
    if i < x.size:
        if x[i] > 0:
            found = x[i]
        out[i] = found
"""


def test_the_loops_compile_warns_no_more(limit, rng):
    """A kernel's warnings come with its first compile; the thread loops'
    compile adds none, so a filter that makes them errors later changes
    nothing."""
    pick = make(MAYBE_UNASSIGNED, "pick")
    x = random_array(rng, 600, "float64")
    out = poison(600, "float64")
    with pytest.warns(gpujit.GpujitWarning, match="'found' may be used before"):
        pick[6, 100](x, out)
    np.testing.assert_array_equal(out, np.where(x > 0, x, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            out = poison(600, "float64")
            pick[6, 100](x, out)                  # 1,200 threads: the loops
            np.testing.assert_array_equal(out, np.where(x > 0, x, 0))
    assert vectorised(pick)


def test_forall_under_the_limit_compiles_one_tier(limit, rng):
    saxpy = make(SAXPY, "saxpy", cache=True)
    before = misses()
    n = LIMIT - 1                                 # its grid rounds up past the limit
    a, x, y = np.float32(2), random_array(rng, n, "float32"), random_array(rng, n, "float32")
    out = poison(n, "float32")
    saxpy.forall(n)(a, x, y, out)
    np.testing.assert_allclose(out, a * x + y, rtol=2e-6, atol=1e-3)
    assert misses() - before == 1 and not vectorised(saxpy)


def test_a_limit_beyond_any_grid_means_never(limit, rng, monkeypatch, recwarn):
    monkeypatch.setenv("GPUJIT_CPU_LOOP_THREADS", "9" * 30)
    saxpy = make(SAXPY, "saxpy")
    run_saxpy(saxpy, rng, 40)
    assert not vectorised(saxpy)
    assert not [w for w in recwarn if "GPUJIT_CPU_LOOP_THREADS" in str(w.message)]


def test_a_bad_limit_warns_once_and_keeps_the_default():
    lines = child_output(
        "import os, warnings\n"
        "os.environ['GPUJIT_CPU_LOOP_THREADS'] = 'lots'\n"
        "import numpy as np, gpujit\n"
        "gpujit.set_target('cpu')\n"
        "@gpujit.jit\n"
        "def k(out):\n"
        "    out[gpujit.grid(1)] = 1.0\n"
        "out = np.zeros(64, np.float32)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    k[1, 64](out)\n"
        "    k[1, 64](out)\n"
        "print(len(w), out.sum())\n"
        "print(w[0].message)\n")
    assert lines[0] == "1 64.0"
    assert "GPUJIT_CPU_LOOP_THREADS=lots is not a number of threads" in lines[1]
