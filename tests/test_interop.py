"""Interoperability through __cuda_array_interface__: zero-copy arguments
from CuPy, and gpujit's device arrays seen by others.

GPU-only: the interface describes GPU memory, which only the CUDA target has
(the CPU target's device arrays are host memory, and CuPy needs a GPU).
"""
import numpy as np
import pytest

import gpujit
from conftest import random_array

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def cuda_target():
    if not hasattr(gpujit, "set_target"):
        yield
        return
    previous = gpujit.set_target("cuda")
    try:
        yield
    finally:
        gpujit.set_target(previous)


@gpujit.jit
def vector_add(a, b, c):
    i = gpujit.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def test_cuda_array_interface_zero_copy(rng):
    cupy = pytest.importorskip("cupy")
    a = random_array(rng, 4096, "float32")
    d_a = cupy.asarray(a)
    d_c = cupy.full(4096, np.nan, dtype=cupy.float32)
    vector_add[16, 256](d_a, d_a, d_c)
    gpujit.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(d_c), a + a)


def test_device_array_exposes_cuda_array_interface(rng):
    a = random_array(rng, 100, "int32")
    d = gpujit.to_device(a)
    cai = d.__cuda_array_interface__
    assert cai["shape"] == (100,) and cai["typestr"] == "<i4" and cai["data"][0] != 0
