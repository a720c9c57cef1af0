"""DLPack both ways, without copies: DeviceArray.__dlpack__ read by NumPy,
PyTorch and CuPy, and gpujit.from_dlpack (and kernel arguments with only
__dlpack__) reading theirs.

The CPU target's device arrays are host memory (DLPack kDLCPU), so NumPy
answers every question of layout, lifetime and dtype here; the tests
marked gpu do the same with CUDA memory (kDLCUDA) and add stream ordering.
"""
import gc
import sys
import weakref

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def address(arr):
    return arr.__array_interface__["data"][0]


@gpujit.jit
def scale_2d(a, out, k):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * k


@gpujit.jit
def fill_index(out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = i * 3 + 1


def launch_2d(a, out, k):
    scale_2d[((out.shape[0] + 15) // 16, (out.shape[1] + 15) // 16), (16, 16)](a, out, k)
    gpujit.synchronize()


class OnlyDLPack:
    """An array that speaks DLPack and nothing else (as a JAX array): no
    buffer protocol, no __cuda_array_interface__."""

    def __init__(self, arr):
        self._arr = arr
        self.calls = 0

    def __dlpack__(self, **kwargs):
        self.calls += 1
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()

    @property
    def shape(self):
        return tuple(self._arr.shape)


# ---- the CPU target: NumPy on either side -------------------------------------------

@pytest.mark.usefixtures("cpu")
class TestCpuTarget:
    def test_numpy_views_a_device_array_and_sees_kernel_writes(self, rng):
        a = random_array(rng, 1000, "float64")
        d = gpujit.to_device(a)
        assert d.__dlpack_device__() == (1, 0)
        view = np.from_dlpack(d)
        assert address(view) == d.device_ctypes_pointer_value
        np.testing.assert_array_equal(view, a)
        view[7] = -1.5                               # NumPy writes, gpujit reads
        assert d.copy_to_host()[7] == -1.5
        fill_index[4, 256](d)                        # gpujit writes, NumPy reads
        np.testing.assert_array_equal(view, np.arange(1000) * 3 + 1)

    def test_numpy_view_outlives_the_device_array(self, rng):
        a = random_array(rng, (4096), "int32")
        d = gpujit.to_device(a)
        view = np.from_dlpack(d)
        del d
        gc.collect()
        np.testing.assert_array_equal(view, a)       # the capsule still owns the memory
        view[:] = 5
        np.testing.assert_array_equal(view, np.full(4096, 5, np.int32))

    def test_from_dlpack_of_numpy_shares_memory_and_a_kernel_writes_it(self, rng):
        a = random_array(rng, 64 * 80, "float32").reshape(64, 80)
        out = poison((64, 80), "float32")
        d_a, d_out = gpujit.from_dlpack(a), gpujit.from_dlpack(out)
        assert d_a.device_ctypes_pointer_value == address(a)
        assert d_out.device_ctypes_pointer_value == address(out)
        assert (d_out.shape, d_out.strides, d_out.dtype) == (out.shape, out.strides, out.dtype)
        launch_2d(d_a, d_out, np.float32(3))
        np.testing.assert_array_equal(out, a * np.float32(3))   # every element, in place

    def test_from_dlpack_view_keeps_the_producer_alive(self, rng):
        a = random_array(rng, 300, "int64")
        expected = a.copy()
        d = gpujit.from_dlpack(a)
        alive = weakref.ref(a)
        del a
        gc.collect()
        assert alive() is not None                   # the view's capsule holds NumPy's tensor
        np.testing.assert_array_equal(d.copy_to_host(), expected)
        assert type(d.base).__name__ == "PyCapsule"
        assert gpujit.to_device(expected).base is None
        del d                                        # its death calls the tensor's deleter
        gc.collect()
        assert alive() is None

    def test_strided_numpy_views_in_and_out(self, rng):
        a = random_array(rng, 60 * 90, "float64").reshape(60, 90)
        for view in (a[:, ::2], a.T, a[5:50:3, 7:80:4], a[::-1, ::-3]):
            d = gpujit.from_dlpack(view)
            assert d.strides == view.strides and d.shape == view.shape
            np.testing.assert_array_equal(d.copy_to_host(), view)
            out = poison(view.shape, "float64")
            launch_2d(d, out, 2.0)
            np.testing.assert_array_equal(out, view * 2.0)
            rows, cols = view.shape
            wide = poison((rows, 2 * cols), "float64")
            launch_2d(view, gpujit.from_dlpack(wide[:, 1::2]), 1.0)   # a strided output
            np.testing.assert_array_equal(wide[:, 1::2], view)
            assert np.isnan(wide[:, ::2]).all()                      # and nothing else

    def test_strided_device_arrays_out(self, rng):
        a = random_array(rng, 40 * 50, "int16").reshape(40, 50)
        d = gpujit.device_array((40, 25), np.int16, strides=(200, 4))   # every other column
        raw = np.from_dlpack(d)
        assert raw.strides == (200, 4) and address(raw) == d.device_ctypes_pointer_value
        launch_2d(a[:, ::2], d, 1)
        np.testing.assert_array_equal(raw, a[:, ::2])
        back = gpujit.from_dlpack(raw)                   # round trip: the same memory
        assert back.device_ctypes_pointer_value == d.device_ctypes_pointer_value
        assert back.strides == d.strides

    def test_zero_dimensional_and_empty(self):
        scalar = np.array(2.5)
        d = gpujit.from_dlpack(scalar)
        assert d.shape == () and d.copy_to_host() == 2.5
        assert np.from_dlpack(d).shape == () and np.from_dlpack(d)[()] == 2.5
        d0 = gpujit.to_device(np.array(7, np.int32))
        assert np.from_dlpack(d0)[()] == 7
        for shape in ((0,), (3, 0), (0, 4)):
            e = np.zeros(shape, np.float32)
            de = gpujit.from_dlpack(e)
            assert de.shape == shape and de.size == 0
            assert np.from_dlpack(de).shape == shape
            back = np.from_dlpack(gpujit.device_array(shape, np.float32))
            assert back.shape == shape and back.dtype == np.float32

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_every_dtype_both_ways(self, dtype, rng):
        a = random_array(rng, 97, dtype, low=-100, high=100)
        d = gpujit.to_device(a)
        out = np.from_dlpack(d)
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out, a)
        view = gpujit.from_dlpack(a)
        assert view.dtype == np.dtype(dtype) and view.device_ctypes_pointer_value == address(a)
        np.testing.assert_array_equal(view.copy_to_host(), a)

    def test_capsules_legacy_and_versioned(self, rng):
        d = gpujit.to_device(random_array(rng, 10, "float32"))
        assert '"dltensor"' in repr(d.__dlpack__())
        assert '"dltensor"' in repr(d.__dlpack__(max_version=(0, 8)))
        assert '"dltensor_versioned"' in repr(d.__dlpack__(max_version=(1, 0)))
        assert '"dltensor_versioned"' in repr(d.__dlpack__(max_version=(1, 3)))

    def test_unconsumed_capsules_release_the_array(self, rng):
        d = gpujit.to_device(random_array(rng, 10, "float32"))
        before = sys.getrefcount(d)
        caps = [d.__dlpack__(), d.__dlpack__(max_version=(1, 0))]
        assert sys.getrefcount(d) == before + 2
        del caps
        gc.collect()
        assert sys.getrefcount(d) == before

    def test_a_capsule_is_consumed_once(self):
        cap = np.arange(5.0).__dlpack__()
        d = gpujit.from_dlpack(cap)
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(5.0))
        with pytest.raises(BufferError, match="already consumed"):
            gpujit.from_dlpack(cap)
        cap2 = gpujit.to_device(np.arange(3)).__dlpack__(max_version=(1, 0))
        np.testing.assert_array_equal(gpujit.from_dlpack(cap2).copy_to_host(), np.arange(3))
        with pytest.raises(BufferError, match="already consumed"):
            gpujit.from_dlpack(cap2)

    def test_what_is_not_dlpack(self):
        with pytest.raises(TypeError, match="needs an object with __dlpack__.*'list'"):
            gpujit.from_dlpack([1, 2])
        import datetime   # a capsule of another kind: datetime's C API
        with pytest.raises(TypeError, match="not a DLPack tensor"):
            gpujit.from_dlpack(datetime.datetime_CAPI)

    def test_read_only_stays_read_only(self, rng):
        a = random_array(rng, 50, "float64")
        a.flags.writeable = False
        d = gpujit.from_dlpack(a)
        with pytest.raises(ValueError, match="read-only"):
            fill_index[1, 64](d)
        assert not np.from_dlpack(d).flags.writeable
        with pytest.raises(BufferError, match="read-only"):
            d.__dlpack__()                       # a legacy capsule cannot say read-only
        with pytest.raises(ValueError, match="read-only"):
            d.copy_to_device(a)
        np.testing.assert_array_equal(d.copy_to_host(), a)

    def test_export_arguments(self, rng):
        d = gpujit.to_device(random_array(rng, 8, "int32"))
        with pytest.raises(BufferError, match="without copying"):
            d.__dlpack__(copy=True)
        with pytest.raises(BufferError, match=r"device \(1, 0\), not \(2, 0\)"):
            d.__dlpack__(dl_device=(2, 0))
        d.__dlpack__(dl_device=(1, 0), copy=False)
        with pytest.raises(ValueError, match="stream must be None"):
            d.__dlpack__(stream=5)
        with pytest.raises(TypeError):
            d.__dlpack__(None)                  # keyword-only, as the standard says
        if np.lib.NumpyVersion(np.__version__) >= "2.1.0":   # from_dlpack(copy=) is 2.1's
            assert address(np.from_dlpack(d, copy=False)) == d.device_ctypes_pointer_value

    def test_kernel_argument_with_only_dlpack(self, rng):
        host = random_array(rng, 48 * 40, "float32").reshape(48, 40)
        out = poison((48, 40), "float32")
        src, dst = OnlyDLPack(host), OnlyDLPack(out)
        launch_2d(src, dst, np.float32(-2))
        np.testing.assert_array_equal(out, host * np.float32(-2))
        assert src.calls >= 1 and dst.calls >= 1   # 2: a NumPy without max_version, retried
        strided = poison((48, 80), "float32")
        launch_2d(src, OnlyDLPack(strided[:, ::2]), np.float32(1))
        np.testing.assert_array_equal(strided[:, ::2], host)

    def test_gpu_memory_is_refused_by_name(self):
        class CudaTensor(OnlyDLPack):
            def __dlpack_device__(self):
                return (2, 0)
        fake = CudaTensor(np.zeros(4))
        with pytest.raises(BufferError, match=r"kDLCUDA \(CUDA device\) memory.*cpu.*kDLCPU"):
            gpujit.from_dlpack(fake)
        assert fake.calls == 0                  # refused before the producer did anything
        with pytest.raises(BufferError, match="kDLCUDA"):
            fill_index[1, 32](fake)

    def test_unsupported_argument_message_names_dlpack(self):
        with pytest.raises(TypeError, match="__cuda_array_interface__ or __dlpack__"):
            fill_index[1, 32](object())

    def test_cuda_array_interface_on_the_cpu_target(self):
        assert not gpujit.is_cuda_array(np.zeros(3))

        class Cai:
            __cuda_array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (0, False),
                                        "version": 3}
        assert gpujit.is_cuda_array(Cai())
        with pytest.raises(TypeError, match="CPU target cannot use"):
            gpujit.as_cuda_array(Cai())


# ---- the CUDA target: PyTorch and CuPy --------------------------------------------

@pytest.fixture
def cuda_target():
    previous = gpujit.set_target("cuda")
    yield
    gpujit.set_target(previous)


def cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


@gpujit.jit
def slow_fill(out, value, spins):
    # Each thread spins before writing, so that a consumer not ordered
    # after the kernel would read the old contents.
    i = gpujit.grid(1)
    if i < out.size:
        acc = 0.0
        for _ in range(spins):
            acc = acc * 0.5 + 1.0
        out[i] = value + acc - acc


@pytest.mark.gpu
@pytest.mark.usefixtures("cuda_target")
class TestCudaTarget:
    def test_device_array_dlpack_device(self):
        d = gpujit.device_array(4, np.float32)
        assert d.__dlpack_device__() == (2, gpujit.get_current_device().id)
        with pytest.raises(ValueError, match="stream 0"):
            d.__dlpack__(stream=0)

    def test_torch_from_dlpack_shares_memory_and_sees_kernels(self, rng):
        torch = cuda_torch()
        d = gpujit.to_device(np.zeros(1000, np.int64))
        t = torch.from_dlpack(d)
        assert t.data_ptr() == d.device_ctypes_pointer_value and t.is_cuda
        fill_index[4, 256](d)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(t.cpu().numpy(), np.arange(1000) * 3 + 1)
        t += 1                                   # torch writes, gpujit reads
        torch.cuda.synchronize()
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(1000) * 3 + 2)
        del d
        gc.collect()
        assert int(t[999]) == 999 * 3 + 2        # the tensor keeps the memory alive

    def test_cupy_sees_kernels_through_both_protocols(self, rng):
        cp = pytest.importorskip("cupy")
        d = gpujit.device_array(512, np.float32)
        fill_index[2, 256](d)
        gpujit.synchronize()
        for arr in (cp.asarray(d), cp.from_dlpack(d)):
            assert arr.data.ptr == d.device_ctypes_pointer_value
            np.testing.assert_array_equal(cp.asnumpy(arr), np.arange(512) * 3 + 1)

    def test_from_dlpack_of_torch_and_cupy(self, rng):
        torch = cuda_torch()
        t = torch.zeros((64, 80), dtype=torch.float32, device="cuda")
        d = gpujit.from_dlpack(t)
        assert d.device_ctypes_pointer_value == t.data_ptr() and d.shape == (64, 80)
        host = random_array(rng, 64 * 80, "float32").reshape(64, 80)
        launch_2d(gpujit.to_device(host), d, np.float32(2))
        np.testing.assert_array_equal(t.cpu().numpy(), host * 2)
        view = gpujit.from_dlpack(t[:, ::2])
        assert view.strides == (320, 8) and view.device_ctypes_pointer_value == t.data_ptr()
        cp = pytest.importorskip("cupy")
        c = cp.arange(10, dtype=cp.int32)
        assert gpujit.from_dlpack(c).device_ctypes_pointer_value == c.data.ptr

    def test_kernel_on_a_noncontiguous_torch_view(self, rng):
        torch = cuda_torch()
        host = random_array(rng, 48 * 64, "float32").reshape(48, 64)
        t = torch.from_numpy(host).cuda()
        out = torch.full((48, 32), float("nan"), device="cuda")
        launch_2d(t[:, ::2], out, np.float32(3))
        np.testing.assert_array_equal(out.cpu().numpy(), host[:, ::2] * np.float32(3))
        wide = torch.full((48, 64), float("nan"), device="cuda")
        launch_2d(t[:, ::2], wide[:, 1::2], np.float32(1))       # a strided output
        np.testing.assert_array_equal(wide.cpu().numpy()[:, 1::2], host[:, ::2])

    def test_kernel_argument_with_only_dlpack_on_the_gpu(self, rng):
        torch = cuda_torch()
        host = random_array(rng, 32 * 32, "float64").reshape(32, 32)
        src = OnlyDLPack(torch.from_numpy(host).cuda())
        out = torch.full((32, 32), float("nan"), dtype=torch.float64, device="cuda")
        launch_2d(src, OnlyDLPack(out), 0.5)
        np.testing.assert_array_equal(out.cpu().numpy(), host * 0.5)
        assert src.calls >= 1        # twice for a PyTorch without max_version (retried)

    def test_torch_on_its_own_stream_waits_for_a_gpujit_stream(self):
        torch = cuda_torch()
        n = 1 << 20
        d = gpujit.to_device(np.zeros(n, np.float32))
        s = gpujit.stream()
        slow_fill[n // 256, 256, s](d, np.float32(7), 100000)   # still running on return
        theirs = torch.cuda.Stream()
        with torch.cuda.stream(theirs):
            t = torch.from_dlpack(d)             # __dlpack__(stream=theirs): waits, on the GPU
            total = t.sum()
        theirs.synchronize()
        assert float(total) == 7.0 * n
        s.synchronize()

    def test_dlpack_stream_argument_orders_a_raw_stream(self):
        torch = cuda_torch()
        n = 1 << 20
        d = gpujit.to_device(np.zeros(n, np.float32))
        slow_fill[n // 256, 256](d, np.float32(3), 100000)      # legacy default stream
        theirs = torch.cuda.Stream()
        cap = d.__dlpack__(stream=theirs.cuda_stream)     # a "dltensor": every PyTorch reads it
        with torch.cuda.stream(theirs):
            t = torch.from_dlpack(cap)
            total = t.sum()
        theirs.synchronize()
        assert float(total) == 3.0 * n

    def test_host_tensor_is_refused_on_the_cuda_target(self):
        torch = cuda_torch()
        with pytest.raises(BufferError, match=r"kDLCPU \(host\) memory.*cuda"):
            gpujit.from_dlpack(torch.zeros(3))

    def test_a_negative_cuda_device_id_is_refused(self):
        # a producer that names no GPU: the runtime reads negative devices as
        # the CPU target's, so the id is refused before anything is asked of it
        class NoGpu:
            def __dlpack_device__(self):
                return (2, -3)

            def __dlpack__(self, **kwargs):
                raise AssertionError("asked for a capsule after a bad device id")

        with pytest.raises(BufferError, match="device id is -3; a GPU's is 0 or more"):
            gpujit.from_dlpack(NoGpu())
        d = gpujit.to_device(np.arange(4, dtype=np.float32))   # the context survives
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(4, dtype=np.float32))
