"""docs/troubleshooting.md quotes gpujit's messages: each is produced here
(on a GPU where only a GPU gives it) and compared with the page's quote, so
the page stays true to the code."""
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpujit

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                    "troubleshooting.md")


def quoted(start):
    """The page's quoted message (a ```text block) that begins with start, up
    to its first '...' or a number (what varies from run to run)."""
    with open(PAGE) as f:
        blocks = re.findall(r"```text\n(.*?)\n\s*```", f.read(), re.S)
    block = next(b.strip() for b in blocks if b.strip().startswith(start))
    return re.split(r"\.\.\.|\d", block)[0]


def test_no_gpu_messages():
    if gpujit.is_available():
        pytest.skip("a GPU is here")
    with pytest.raises(gpujit.CudaSupportError) as caught:
        gpujit.set_target("cuda")
    text = f"CudaSupportError: {caught.value}"
    assert text.startswith(quoted("CudaSupportError"))


@pytest.mark.usefixtures("cpu")
def test_host_out_of_memory_message():
    with pytest.raises(MemoryError) as caught:
        gpujit.device_array(1 << 50, np.uint8)
    assert str(caught.value).startswith("out of host memory: ")


@pytest.mark.gpu
def test_gpu_out_of_memory_message():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        with pytest.raises(gpujit.CudaOutOfMemoryError) as caught:
            gpujit.device_array(1 << 50, np.uint8)
        assert f"CudaOutOfMemoryError: {caught.value}".startswith(quoted("CudaOutOfMemoryError"))
    finally:
        gpujit.set_target(previous)


@gpujit.jit
def vector_add(a, b, out):   # at module level: the message names its __qualname__
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@pytest.mark.gpu
def test_implicit_copy_message(monkeypatch):
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    monkeypatch.delenv("GPUJIT_WARN_ON_IMPLICIT_COPY", raising=False)
    previous = gpujit.set_target("cuda")
    try:
        a = np.ones(1 << 20, np.float32)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vector_add[4096, 256](a, a, np.zeros_like(a))
        text = next(f"GpujitPerformanceWarning: {w.message}" for w in caught
                    if issubclass(w.category, gpujit.GpujitPerformanceWarning))
        assert text.startswith(quoted("GpujitPerformanceWarning"))
    finally:
        gpujit.set_target(previous)


@pytest.mark.usefixtures("target")
def test_contract_false_matches_numpy_bit_for_bit(rng):
    @gpujit.jit(contract=False)
    def axpy(a, x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    x = rng.standard_normal(4096).astype(np.float32)
    y = rng.standard_normal(4096).astype(np.float32)
    out = np.full_like(x, np.nan)
    axpy[16, 256](np.float32(1.7), x, y, out)
    np.testing.assert_array_equal(out, np.float32(1.7) * x + y)


FAULT = """
import numpy as np
import gpujit
gpujit.set_target("cuda")

@gpujit.jit
def wild(a):
    a[1 << 40] = 1.0

try:
    wild[1, 1](gpujit.device_array(4, np.float32))
    gpujit.synchronize()
except gpujit.CudaKernelFault as e:
    print(f"CudaKernelFault: {e}")
"""


@pytest.mark.gpu
def test_kernel_fault_message():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    # in a subprocess: the fault resets the context, which would end the
    # device arrays of the other tests in this one
    proc = subprocess.run([sys.executable, "-P", "-c", FAULT], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(quoted("CudaKernelFault")), proc.stdout
