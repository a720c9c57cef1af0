"""Fault injection: the n-th host allocation of the CPU target, or the n-th
CUDA driver call, fails on purpose (_gpujit._inject_fault, a test-only
switch in runtime/), for every n over a script that compiles, allocates,
copies, launches and synchronises.  Each failure must become the right
exception (MemoryError, CudaOutOfMemoryError, CudaError), leave nothing
behind (the process's memory, the GPU's free memory), and the next run of
the script without injection must give the right result."""
import gc
import os
import resource

import numpy as np
import pytest

import gpujit
from gpujit import _gpujit


@gpujit.jit
def axpb(x, out, a):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + 1.0


def script(rng):
    """Allocates (device arrays, a host array's temporary, pinned memory),
    copies both ways, launches twice and synchronises; checks the result."""
    x = rng.random(1000)
    d_x = gpujit.to_device(x)
    d_out = gpujit.device_array_like(x)
    axpb[4, 256](d_x, d_out, 2.0)
    host_out = np.full_like(x, np.nan)
    axpb[4, 256](x, host_out, 3.0)          # implicit copies: temporaries on a GPU
    pinned = gpujit.pinned_array(1000)
    d_out.copy_to_host(pinned)
    gpujit.synchronize()
    assert np.array_equal(pinned, 2.0 * x + 1.0)
    assert np.array_equal(host_out, 3.0 * x + 1.0)


def sweep(where, code, expected, rng, limit):
    """Fails call n = 1, 2, ... of the script until it runs through; returns
    how many failures were injected."""
    script(rng)                              # compiled and loaded before the sweep
    for n in range(1, limit + 1):
        _gpujit._inject_fault(where, n, code)
        try:
            script(rng)
            done = True
        except expected:
            done = False
        finally:
            _gpujit._inject_fault(where, 0)
        script(rng)                          # the next run works
        if done:
            return n - 1
    raise AssertionError(f"the script still failed at call {limit}")


def max_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.usefixtures("cpu")
def test_every_host_allocation_failure_is_a_memory_error(rng):
    failures = sweep("host", 0, MemoryError, rng, 20)
    assert failures >= 3, failures          # the two device arrays and the pinned array
    before = max_rss_kib()
    for _ in range(200):
        sweep("host", 0, MemoryError, rng, 20)
    gc.collect()
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):   # ASan's quarantine keeps
        # freed memory mapped (scripts/sanitize-tests.sh): its own checks judge there
        assert max_rss_kib() - before < 16 * 1024, (before, max_rss_kib())   # KiB: no leak


def test_the_switch_refuses_nonsense():
    with pytest.raises(ValueError, match="where must be 'cuda' or 'host'"):
        _gpujit._inject_fault("disk", 1)
    with pytest.raises(ValueError, match="n must be >= 0"):
        _gpujit._inject_fault("host", -1)


@pytest.mark.gpu
@pytest.mark.serial   # another process's allocations would move the free memory it compares
@pytest.mark.parametrize("code, expected", [(2, gpujit.CudaOutOfMemoryError),
                                            (1, gpujit.CudaError)],
                         ids=["out-of-memory", "invalid-value"])
def test_every_driver_call_failure_is_a_cuda_error(rng, code, expected):
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        script(rng)
        gc.collect()
        free_before = gpujit.memory_info().free
        failures = sweep("cuda", code, expected, rng, 200)
        assert failures >= 8, failures
        gc.collect()
        # an injected failure of a free leaks that one allocation (the driver
        # refused it): a few small arrays at most, not one per call
        assert free_before - gpujit.memory_info().free < 64 << 20
    finally:
        gpujit.set_target(previous)
