"""Dask: gpujit kernels on the blocks of a dask.array, on a dask.distributed
cluster of worker processes, which receive the kernels pickled: by reference
(a kernel of this module, which a worker imports) or by value (a kernel made
in a closure).  examples/dask_blocks.py runs as a user runs it.  Every test
runs on the CPU target and, on a GPU machine, on the GPU; all skip where
dask or distributed is not installed."""
import logging
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpujit
from conftest import ROOT, TESTS_DIR

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

THREADS = 128
# one pytest-xdist worker runs them all: one cluster per target, not one per worker
pytestmark = pytest.mark.xdist_group("dask")


@gpujit.jit
def sqrt_plus(x, offset, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = math.sqrt(x[i]) + offset     # both operations correctly rounded


def make_divide(divisor):
    """A kernel out = x / divisor that reads divisor from its closure: it
    cannot be imported, so it pickles by value."""
    @gpujit.jit
    def divide(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] / divisor
    return divide


def launch(kernel, x, *args):
    """Runs on a worker: kernel over the (n,) host array x into a NaN-poisoned
    output.  x is the host array as Dask delivers it, often with its data at
    an odd byte offset (flags.aligned False), which the launch copies.
    Returns the output and what the worker saw."""
    compiled_before = bool(kernel.signatures)
    out = gpujit.to_device(np.full_like(x, np.nan))
    kernel[(x.size + THREADS - 1) // THREADS, THREADS](x, *args, out)
    module = sys.modules.get(kernel.__module__)
    return {"out": out.copy_to_host(), "pid": os.getpid(), "target": gpujit.current_target(),
            "compiled_before": compiled_before,
            # by reference: the worker imported the module and took its kernel
            "imported": getattr(module, kernel.__name__, None) is kernel}


def sqrt_plus_block(block, offset):
    return launch(sqrt_plus, block, offset)["out"]


def divide_block_function(divisor):
    kernel = make_divide(divisor)
    return lambda block: launch(kernel, block)["out"]


@pytest.fixture(scope="module", params=["cpu", "cuda"])
def client(request):
    """A client of a LocalCluster of two worker processes (one thread each) on
    the parameter's target, one per module and target."""
    if request.param == "cuda" and not gpujit.is_available():
        pytest.skip("no CUDA device available")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR,
                                  env={"GPUJIT_TARGET": request.param}) as cluster, \
            distributed.Client(cluster) as c:
        c.target = request.param
        yield c


def random_x(rng, n=10_007):
    return rng.random(n) * 1000.0


def test_a_kernel_of_a_module_runs_on_the_workers(client, rng):
    x, offset = random_x(rng), rng.random()
    want = np.sqrt(x) + offset
    ran = client.submit(launch, sqrt_plus, x, offset).result()
    assert ran["pid"] != os.getpid() and ran["target"] == client.target
    assert ran["imported"]
    np.testing.assert_array_equal(ran["out"], want)
    blocks = da.from_array(x, chunks=1_500).map_blocks(sqrt_plus_block, offset,
                                                       meta=np.empty((0,)))
    np.testing.assert_array_equal(blocks.compute(), want)


def test_a_kernel_of_a_closure_runs_on_the_workers(client, rng):
    x, divisor = random_x(rng), 1.0 + rng.random()
    want = x / divisor
    ran = client.submit(launch, make_divide(divisor), x).result()
    assert ran["pid"] != os.getpid() and ran["target"] == client.target
    np.testing.assert_array_equal(ran["out"], want)
    blocks = da.from_array(x, chunks=1_500).map_blocks(divide_block_function(divisor),
                                                       meta=np.empty((0,)))
    np.testing.assert_array_equal(blocks.compute(), want)


@pytest.mark.parametrize("made", ["module", "closure"])
def test_a_worker_compiles_a_kernel_once_not_once_per_task(client, rng, made):
    """Dask pickles a task's function and arguments for each task: the
    kernel a worker unpickles again must be the one it compiled already."""
    x, number = random_x(rng, 1000), 1.0 + rng.random()
    if made == "module":
        kernel, args, want = sqrt_plus, (number,), np.sqrt(x) + number
    else:
        kernel, args, want = make_divide(number), (), x / number
    worker = sorted(client.scheduler_info()["workers"])[0]
    for task in range(3):
        ran = client.submit(launch, kernel, x, *args, workers=[worker], pure=False).result()
        np.testing.assert_array_equal(ran["out"], want)
        assert ran["compiled_before"] or task == 0, f"task {task} compiled the kernel again"


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_the_example_runs_and_checks_itself(target):
    if target == "cuda" and not gpujit.is_available():
        pytest.skip("no CUDA device available")
    env = dict(os.environ, GPUJIT_TARGET=target)
    proc = subprocess.run([sys.executable, "-P", os.path.join(ROOT, "examples", "dask_blocks.py"),
                           "--size", "200000", "--chunks", "40000", "--repeat", "1"],
                          capture_output=True, text=True, env=env, timeout=300,
                          cwd=TESTS_DIR)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    assert f"target: {target}" in proc.stdout
    assert "dask_blocks: OK" in proc.stdout
    assert "per block on the worker" in proc.stdout


@pytest.mark.parametrize("argument", [("--workers", "-1"), ("--size", "0"), ("--repeat", "0")])
def test_the_example_refuses_bad_counts(argument):
    """Status 2 and the argument's name, before any cluster starts (a
    cluster of -1 workers used to wait for ever)."""
    proc = subprocess.run([sys.executable, "-P", os.path.join(ROOT, "examples", "dask_blocks.py"),
                           *argument], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, GPUJIT_TARGET="cpu"))
    assert proc.returncode == 2, proc.stderr
    assert f"argument {argument[0]}: must be at least 1" in proc.stderr
