"""Kernels, device functions and device arrays pickle, so that they travel to
other processes (multiprocessing, Dask, Ray): by reference when importable
from their module, by value (cloudpickle) otherwise, with their options and
signatures; frozen globals keep their values at pickling.  Each round trip
is checked by launching the unpickled kernel, in this process and in a new
one, against NumPy."""
import os
import pickle
import subprocess
import sys
import textwrap

import cloudpickle
import numpy as np
import pytest

import gpujit
from conftest import assert_fma_close, child_output, poison, TESTS_DIR

import pickled_kernels

pytestmark = pytest.mark.usefixtures("target")

# tests/ first on a child's path (for pickled_kernels), then what this one has
CHILD_PATH = os.pathsep.join(filter(None, [TESTS_DIR, os.environ.get("PYTHONPATH")]))
PICKLERS = [pickle, cloudpickle]


def run_affine(kernel, rng, n=1000):
    """Launches kernel(x, y, out) and checks out = x * y + 0.25 on fresh data."""
    x, y = rng.random(n), rng.random(n)
    out = poison(n, np.float64)
    kernel[(n + 127) // 128, 128](x, y, out)
    assert_fma_close(out, x * y + 0.25, x * y)


def in_new_process(payload, script, tmp_path, target, env=None):
    """Runs script in a new Python process (tests/ on its path) with the
    pickled bytes of payload in the variable `payload`; returns its stdout
    lines.  The script must exit 0."""
    data = tmp_path / "payload.pickle"
    data.write_bytes(payload)
    prologue = (f"import pickle, numpy as np, gpujit\n"
                f"payload = pickle.loads(open({str(data)!r}, 'rb').read())\n")
    lines = child_output(prologue + textwrap.dedent(script), timeout=300,
                         env=dict(PYTHONPATH=CHILD_PATH, GPUJIT_TARGET=target, **(env or {})))
    return " ".join(lines).split()


CHECK_AFFINE = """
    rng = np.random.default_rng()
    x, y = rng.random(777), rng.random(777)
    out = np.full(777, np.nan)
    payload[7, 128](x, y, out)
    err = np.abs(out - (x * y + 0.25)) / np.spacing(x * y + 0.25)
    print(payload.__module__, payload.__qualname__, float(err.max()))
"""


@pytest.mark.parametrize("pickler", PICKLERS, ids=lambda m: m.__name__)
def test_importable_kernel_pickles_by_reference(pickler, rng, tmp_path, target):
    data = pickler.dumps(pickled_kernels.affine_kernel)
    assert b"affine_kernel" in data and len(data) < 200     # a name, not code
    assert pickle.loads(data) is pickled_kernels.affine_kernel
    assert pickle.loads(pickler.dumps(pickled_kernels.affine)) is pickled_kernels.affine
    run_affine(pickle.loads(data), rng)
    module, name, ulps = in_new_process(data, CHECK_AFFINE, tmp_path, target)
    assert (module, name) == ("pickled_kernels", "affine_kernel") and float(ulps) <= 1


def make_closure_kernel(offset):
    @gpujit.jit(device=True)
    def shift(v):
        return v + offset

    @gpujit.jit
    def affine_closure(x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = shift(x[i] * y[i])
    return affine_closure


@pytest.mark.parametrize("pickler", PICKLERS, ids=lambda m: m.__name__)
def test_closure_kernel_pickles_by_value(pickler, rng, tmp_path, target):
    kernel = make_closure_kernel(0.25)
    data = pickler.dumps(kernel)
    again = pickle.loads(data)
    assert isinstance(again, gpujit.Dispatcher) and again is not kernel
    assert again.__qualname__ == kernel.__qualname__
    run_affine(again, rng)
    # the new process has no make_closure_kernel: the code travels
    module, name, ulps = in_new_process(data, CHECK_AFFINE, tmp_path, target)
    assert name.endswith("affine_closure") and float(ulps) <= 1


def test_main_script_kernel_pickles_by_value(tmp_path, target):
    """A kernel defined in a script (its __main__) unpickles in a process
    that never ran that script."""
    script = tmp_path / "make_kernel.py"
    script.write_text(textwrap.dedent("""
        import sys, pickle, gpujit
        SCALE = 0.25

        @gpujit.jit
        def affine_main(x, y, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = x[i] * y[i] + SCALE

        open(sys.argv[1], "wb").write(pickle.dumps(affine_main))
    """))
    data = tmp_path / "kernel.pickle"
    subprocess.run([sys.executable, "-P", str(script), str(data)], check=True, timeout=120,
                   env=dict(os.environ, GPUJIT_TARGET=target))
    script.unlink()                      # the code travels in the pickle, not by the file
    module, name, ulps = in_new_process(data.read_bytes(), CHECK_AFFINE, tmp_path, target)
    assert (module, name) == ("__main__", "affine_main") and float(ulps) <= 1


def test_device_function_pickles_by_value(rng):
    offset = 0.25

    @gpujit.jit(device=True)
    def plus_offset(v):
        return v + offset

    moved = pickle.loads(pickle.dumps(plus_offset))
    assert moved is not plus_offset

    @gpujit.jit
    def uses_moved(x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = moved(x[i] * y[i])

    run_affine(uses_moved, rng)


G = 2.0


def make_times_g():
    """A kernel out = x * G, made in a closure: it pickles by value, with G."""
    @gpujit.jit
    def times_g(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] * G
    return times_g


def test_frozen_globals_keep_their_values_at_pickling(rng):
    global G
    n = 300
    times_g = make_times_g()
    x, out = rng.random(n), poison(n, np.float64)
    try:
        G = 2.0
        times_g[3, 128](x, out)          # compiled now: G frozen at 2
        G = 3.0
        data = pickle.dumps(times_g)     # G is 3 at pickling
        G = 5.0
        moved = pickle.loads(data)
        moved[3, 128](x, out)
        assert np.array_equal(out, x * 3.0)
        times_g[3, 128](x, out)          # the original keeps its compiled value
        assert np.array_equal(out, x * 2.0)
    finally:
        G = 2.0


def test_unpickled_again_is_the_same_kernel_until_a_global_changes(rng):
    """Dask unpickles a task's function for each task: the kernel it reaches
    must be made (and compiled) once per process, not once per task."""
    global G
    n = 200
    kernel = make_times_g()
    x, out = rng.random(n), poison(n, np.float64)
    try:
        G = 2.0
        first = pickle.loads(pickle.dumps(kernel))
        assert first is not kernel
        assert pickle.loads(pickle.dumps(kernel)) is first
        assert pickle.loads(cloudpickle.dumps(kernel)) is first
        first[2, 128](x, out)
        assert np.array_equal(out, x * 2.0)
        G = 3.0                          # another value: another kernel where it arrives
        second = pickle.loads(pickle.dumps(kernel))
        assert second is not first
        second[2, 128](x, out)
        assert np.array_equal(out, x * 3.0)
        first[2, 128](x, out)
        assert np.array_equal(out, x * 2.0)
        assert pickle.loads(pickle.dumps(first)) is first    # its id travels with it
    finally:
        G = 2.0


def test_options_travel(rng):
    """boundscheck=True and contract=False survive a round trip: the moved
    kernel rounds a * b + c twice (NumPy's bits) and reports an index out of
    bounds."""
    def make():
        @gpujit.jit(boundscheck=True, contract=False)
        def fused_or_not(x, y, out, extra):
            i = gpujit.grid(1)
            if i < out.size + extra:
                out[i] = x[i] * y[i] + 0.25
        return fused_or_not

    moved = pickle.loads(pickle.dumps(make()))
    n = 500
    x, y, out = rng.random(n), rng.random(n), poison(n, np.float64)
    moved[4, 128](x, y, out, 0)
    assert np.array_equal(out, x * y + 0.25)
    with pytest.raises(IndexError, match=r"out.*test_pickling\.py:\d+"):   # the file travels
        moved[4, 128](x, y, out, 1)


def test_signatures_travel(rng):
    def make():
        @gpujit.jit("void(float32[::1], float32[::1])")
        def halve(x, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = x[i] * np.float32(0.5)
        return halve

    kernel = make()
    moved = pickle.loads(pickle.dumps(kernel))
    assert moved.specialized and list(moved.overloads) == list(kernel.overloads)
    x = rng.random(200).astype(np.float32)
    out = poison(200, np.float32)
    moved[2, 128](x, out)
    assert np.array_equal(out, x * np.float32(0.5))
    with pytest.raises(TypeError):
        moved[2, 128](x.astype(np.float64), out.astype(np.float64))


def test_specialization_travels(rng):
    kernel = make_closure_kernel(0.25)
    x, y, out = rng.random(100), rng.random(100), poison(100, np.float64)
    special = kernel.specialize(x, y, out)
    moved = pickle.loads(pickle.dumps(special))
    assert moved.specialized
    run_affine(moved, rng, n=100)
    with pytest.raises(TypeError):
        moved[1, 128](x.astype(np.float32), y, out)


def test_self_reference_is_a_pickling_error():
    def make():
        @gpujit.jit
        def loops_back(out):
            if out.size < 0:
                loops_back(out)
        return loops_back

    with pytest.raises(pickle.PicklingError, match="loops_back.*refer back to itself"):
        pickle.dumps(make())


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_device_array_pickles_through_the_host(order, dtype, rng, tmp_path, target):
    host = np.asarray(rng.integers(-1000, 1000, (37, 5)), dtype=dtype, order=order)
    device = gpujit.to_device(host)
    moved = pickle.loads(pickle.dumps(device))
    assert isinstance(moved, gpujit.DeviceArray)
    assert moved.shape == host.shape and moved.dtype == host.dtype
    assert np.array_equal(moved.copy_to_host(), host)
    column = pickle.loads(cloudpickle.dumps(device[:, 3]))      # a strided view: its values
    assert np.array_equal(column.copy_to_host(), host[:, 3])
    lines = in_new_process(pickle.dumps(device), """
        print(type(payload).__name__, payload.shape, int(payload.copy_to_host().sum().real))
    """, tmp_path, target)
    assert lines[0] == "DeviceArray" and int(lines[-1]) == int(host.sum().real)


def test_unpickled_kernel_loads_from_the_disk_cache(tmp_path, target, rng, monkeypatch):
    """A cache=True kernel pickled by value, compiled in this process, loads
    from the disk cache in the processes that unpickle it: the copy keeps
    the original's file name (cloudpickle writes "<dynamic-code>"), which
    the cache's key includes."""
    def make():
        @gpujit.jit(cache=True)
        def cached_affine(x, y, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = x[i] * y[i] + 0.25
        return cached_affine

    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "cache"))
    kernel = make()
    before = gpujit.cache_info()["misses"]
    run_affine(kernel, rng)
    assert gpujit.cache_info()["misses"] == before + 1      # compiled here, stored
    data = pickle.dumps(kernel)
    script = textwrap.dedent(CHECK_AFFINE) + \
        "info = gpujit.cache_info(); print(info['hits'], info['misses'])\n"
    for _ in range(2):
        lines = in_new_process(data, script, tmp_path, target)
        assert lines[1].endswith("cached_affine") and float(lines[2]) <= 1
        assert lines[3:] == ["1", "0"]


POOL_SCRIPT = """
import concurrent.futures, multiprocessing, sys
import numpy as np
import gpujit

@gpujit.jit
def square_plus(x, out, c):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * x[i] + c

def apply(kernel, x, c):
    out = np.full_like(x, np.nan)
    kernel[(x.size + 63) // 64, 64](x, out, c)
    return out

if __name__ == "__main__":
    spawn = multiprocessing.get_context("spawn")
    chunks = np.array_split(np.random.default_rng().random(10_001), 4)
    with spawn.Pool(2) as pool:
        pooled = pool.starmap(apply, [(square_plus, x, 0.5) for x in chunks])
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=spawn) as executor:
        futures = [executor.submit(apply, square_plus, x, 1.5) for x in chunks]
        executed = [f.result() for f in futures]
    for x, p, e in zip(chunks, pooled, executed):
        for got, c in ((p, 0.5), (e, 1.5)):
            want = x * x + c
            assert np.all(np.abs(got - want) <= np.spacing(want)), (got, want)
    print("pools: OK", sum(x.size for x in chunks))
"""


def test_main_kernel_runs_in_spawn_pools(tmp_path, target):
    """The kernel of a script's __main__ travels as an argument to a spawn
    Pool and a ProcessPoolExecutor, whose workers launch it."""
    script = tmp_path / "pools.py"
    script.write_text(POOL_SCRIPT)
    proc = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, GPUJIT_TARGET=target))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["pools:", "OK", "10001"]


@pytest.mark.gpu   # the CPU target works in a fork() child; CUDA does not
def test_fork_after_cuda_names_the_spawn_fix(target):
    if target != "cuda":
        pytest.skip("CUDA's rule")
    script = textwrap.dedent("""
        import multiprocessing, numpy as np, gpujit
        gpujit.to_device(np.ones(4))            # CUDA is initialised here

        def child(queue):
            try:
                gpujit.to_device(np.ones(4))
                queue.put("no error")
            except gpujit.CudaError as exc:
                queue.put(str(exc))

        fork = multiprocessing.get_context("fork")
        queue = fork.Queue()
        process = fork.Process(target=child, args=(queue,))
        process.start()
        print(queue.get(timeout=60))
        process.join()
    """)
    stdout = "\n".join(child_output(script, env={"GPUJIT_TARGET": "cuda"}))
    assert "fork()" in stdout and "ProcessPoolExecutor(mp_context=" in stdout
    assert "get_context('spawn')" in stdout


def test_without_cloudpickle_by_reference_works_and_by_value_says_what_is_missing():
    script = textwrap.dedent("""
        import pickle, sys
        sys.modules["cloudpickle"] = None      # as if not installed
        import gpujit, pickled_kernels
        assert pickle.loads(pickle.dumps(pickled_kernels.affine_kernel)) is \\
            pickled_kernels.affine_kernel
        try:
            pickle.dumps(gpujit.jit(lambda out: None))
        except pickle.PicklingError as exc:
            print(exc)
    """)
    stdout = "\n".join(child_output(script, env={"PYTHONPATH": CHILD_PATH}))
    assert "<lambda> by value" in stdout and "pip install cloudpickle" in stdout
