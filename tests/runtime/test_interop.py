"""Interoperability through __cuda_array_interface__: zero-copy arguments
from CuPy, gpujit's device arrays seen by others, and as_cuda_array /
is_cuda_array (numba's functions).  DLPack has its own file, test_dlpack.py.

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


@gpujit.jit
def scale_2d(a, out, k):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * k


def random_grid(rng, shape, dtype):
    return random_array(rng, int(np.prod(shape)), dtype, low=-40, high=40).reshape(shape)


def launch_2d(a, out, k):
    scale_2d[((out.shape[0] + 15) // 16, (out.shape[1] + 15) // 16), (16, 16)](a, out, k)
    gpujit.synchronize()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "complex64"])
def test_cupy_views_every_launch_reads_the_array_afresh(dtype, rng):
    # CuPy arrays take a fast path that reads data.ptr, shape, strides and
    # dtype on every launch: views, transposes and an in-place reshape of the
    # same object between launches must all be seen.
    cupy = pytest.importorskip("cupy")
    a = random_grid(rng, (96, 130), dtype)
    d_a = cupy.asarray(a)
    for view, host in [(d_a, a), (d_a.T, a.T), (d_a[5:70:3, ::-2], a[5:70:3, ::-2]),
                       (d_a[:, 7:9], a[:, 7:9])]:
        out = cupy.full(host.shape, 77, dtype=dtype)
        launch_2d(view, out, 3)
        np.testing.assert_array_equal(cupy.asnumpy(out), host * 3)
    flat = cupy.asarray(random_grid(rng, (60,), dtype))
    out = cupy.full((6, 10), 77, dtype=dtype)
    grid = flat.reshape(6, 10)
    launch_2d(grid, out, 2)
    grid.shape = (10, 6)                      # same object, new shape and strides
    out2 = cupy.full((10, 6), 77, dtype=dtype)
    launch_2d(grid, out2, 2)
    np.testing.assert_array_equal(cupy.asnumpy(out2), cupy.asnumpy(flat).reshape(10, 6) * 2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool"])
def test_torch_tensors_strided_and_contiguous(dtype, rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    host = random_grid(rng, (64, 80), dtype)
    t = torch.from_numpy(host).cuda()
    for view, h in [(t, host), (t.t(), host.T), (t[3:50:2, 1::3], host[3:50:2, 1::3])]:
        out = torch.zeros(h.shape, dtype=t.dtype, device="cuda")
        launch_2d(view, out, 1)
        np.testing.assert_array_equal(out.cpu().numpy(), h * np.asarray(1, h.dtype))


def test_torch_tensor_requiring_grad_or_on_the_host_is_refused():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    out = torch.zeros((4, 4), device="cuda")
    with pytest.raises(RuntimeError, match="grad"):
        launch_2d(torch.ones((4, 4), device="cuda", requires_grad=True), out, 1)
    # A host tensor has no __cuda_array_interface__ but has __dlpack__,
    # whose device (kDLCPU) the CUDA target refuses by name.
    with pytest.raises(BufferError, match=r"kDLCPU \(host\) memory.*cuda"):
        launch_2d(torch.ones((4, 4)), out, 1)


class Exporter:
    """Any object with __cuda_array_interface__ (the generic path)."""

    def __init__(self, dev, strides=None):
        self._dev = dev
        self._strides = strides

    @property
    def __cuda_array_interface__(self):
        cai = dict(self._dev.__cuda_array_interface__)
        cai["strides"] = self._strides
        return cai


def test_generic_exporter_with_and_without_strides(rng):
    a = random_grid(rng, (20, 30), "float32")
    d = gpujit.to_device(a)
    out = gpujit.device_array((20, 30), np.float32)
    launch_2d(Exporter(d), out, 2)
    np.testing.assert_array_equal(out.copy_to_host(), a * 2)
    out_t = gpujit.device_array((30, 20), np.float32)   # the same memory read as a.T
    launch_2d(Exporter(_reshaped(d, (30, 20)), strides=(4, 120)), out_t, 1)
    np.testing.assert_array_equal(out_t.copy_to_host(), a.T)
    with pytest.raises(TypeError, match="strides do not match"):
        launch_2d(Exporter(d, strides=(4,)), out, 1)
    big_endian = _reshaped(d, (20, 30), typestr=">f4")
    with pytest.raises(TypeError, match="typestr '>f4'"):
        launch_2d(big_endian, out, 1)


def _reshaped(dev, shape, **fields):
    class View:
        @property
        def __cuda_array_interface__(self):
            return dict(dev.__cuda_array_interface__, shape=shape, **fields)
    return View()


def test_as_cuda_array_views_without_copying(rng):
    cupy = pytest.importorskip("cupy")
    a = random_grid(rng, (40, 60), "float32")
    c = cupy.asarray(a)
    assert gpujit.is_cuda_array(c) and not gpujit.is_cuda_array(a)
    for view, host in [(c, a), (c[::2, 1::3], a[::2, 1::3]), (c.T, a.T)]:
        d = gpujit.as_cuda_array(view)
        assert d.base is view and d.device_ctypes_pointer_value == view.data.ptr
        assert d.shape == host.shape and d.strides == view.strides
        np.testing.assert_array_equal(d.copy_to_host(), host)
    out = cupy.full((40, 60), np.nan, dtype=cupy.float32)
    launch_2d(gpujit.as_cuda_array(c), gpujit.as_cuda_array(out), 2)
    np.testing.assert_array_equal(cupy.asnumpy(out), a * 2)   # written in place


def test_as_cuda_array_keeps_the_exporter_alive(rng):
    cupy = pytest.importorskip("cupy")
    a = random_array(rng, 1000, "int32")
    d = gpujit.as_cuda_array(cupy.asarray(a))   # the only reference to the CuPy array
    import gc
    gc.collect()
    np.testing.assert_array_equal(d.copy_to_host(), a)


def test_as_cuda_array_waits_for_the_interface_stream(rng):
    a = random_array(rng, 256, "float64")
    d = gpujit.to_device(a)
    s = gpujit.stream()
    synced = gpujit.as_cuda_array(_reshaped(d, (256,), stream=s.handle))
    np.testing.assert_array_equal(synced.copy_to_host(), a)
    gpujit.as_cuda_array(_reshaped(d, (256,), stream=0), sync=False)   # not read unless sync
    with pytest.raises(ValueError, match="stream 0"):
        gpujit.as_cuda_array(_reshaped(d, (256,), stream=0))
    with pytest.raises(TypeError, match="has no __cuda_array_interface__"):
        gpujit.as_cuda_array(a)


def test_read_only_interface_is_kept(rng):
    d = gpujit.to_device(random_array(rng, 64, "float32"))
    ro = gpujit.as_cuda_array(_reshaped(d, (64,), data=(d.device_ctypes_pointer_value, True)))
    assert ro.__cuda_array_interface__["data"][1] is True
    with pytest.raises(ValueError, match="read-only"):
        vector_add[1, 64](d, d, ro)


class HostMemoryClaimingToBeGPU:
    """An exporter whose __cuda_array_interface__ points at host memory (a
    NumPy array's): launched, it would fault the kernel, which ends the CUDA
    context of the process."""

    def __init__(self, host, offset=0, n=None):
        self.host = host
        n = host.size - offset if n is None else n
        self.__cuda_array_interface__ = {
            "shape": (n,), "strides": None, "typestr": host.dtype.str, "version": 3,
            "data": (host.ctypes.data + offset * host.itemsize, False)}


def test_host_memory_behind_the_interface_is_refused(rng):
    host = random_array(rng, 1000, "float32")
    out = gpujit.to_device(np.full(1000, np.nan, np.float32))
    with pytest.raises(ValueError, match=r"kernel argument 1: its __cuda_array_interface__ "
                                         r"points at 0x[0-9a-f]+, which is not GPU memory"):
        vector_add[4, 256](HostMemoryClaimingToBeGPU(host), out, out)
    with pytest.raises(ValueError, match=r"as_cuda_array\(\): its __cuda_array_interface__"):
        gpujit.as_cuda_array(HostMemoryClaimingToBeGPU(host))
    # the context is intact: a real launch runs, and a view that passes the
    # end of a real allocation is refused too
    d = gpujit.to_device(host)
    vector_add[4, 256](d, d, out)
    np.testing.assert_array_equal(out.copy_to_host(), host + host)
    past_end = HostMemoryClaimingToBeGPU(host)
    n = 10_000_000   # past any rounding of the 4000-byte allocation
    past_end.__cuda_array_interface__ = dict(d.__cuda_array_interface__, shape=(n,))
    with pytest.raises(ValueError, match="pass the end of its allocation"):
        vector_add[n // 256, 256](past_end, past_end, gpujit.device_array(n, np.float32))


def test_misaligned_device_memory_is_refused_and_the_context_survives(rng):
    # A misaligned load would be a fault (CUDA_ERROR_MISALIGNED_ADDRESS) that
    # ends the process's context: refused before the launch.
    host = random_array(rng, 1000, "float32")
    d = gpujit.to_device(host)
    out = gpujit.to_device(np.full(999, np.nan, np.float32))
    shifted = HostMemoryClaimingToBeGPU(host, n=999)
    shifted.__cuda_array_interface__ = dict(d.__cuda_array_interface__, shape=(999,),
                                            data=(d.device_ctypes_pointer_value + 2, False))
    with pytest.raises(ValueError, match="kernel argument 1 is not aligned to its float32 items"):
        vector_add[4, 256](shifted, d, out)
    odd_strides = HostMemoryClaimingToBeGPU(host, n=500)   # 500 x 6 bytes: in the allocation
    odd_strides.__cuda_array_interface__ = dict(d.__cuda_array_interface__, shape=(500,),
                                                strides=(6,))
    with pytest.raises(ValueError, match="kernel argument 2 is not aligned"):
        vector_add[4, 256](d, odd_strides, out)
    vector_add[4, 256](d, d, out)
    np.testing.assert_array_equal(out.copy_to_host(), (host + host)[:999])
