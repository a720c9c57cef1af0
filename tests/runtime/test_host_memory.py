"""Host memory the GPU reaches (pymodule/hostmem.c, runtime/exec.h):
pinned_array, mapped_array, managed_array and the pinned() context manager,
as kernel arguments and in copies, on both targets (the CPU target's are
ordinary host memory); on a GPU, that mapped and managed arrays are used in
place (the launch stays asynchronous) and that a copy into pinned memory on
a stream returns before it ends."""
import gc
import time

import numpy as np
import pytest

import gpujit
from conftest import poison, slow_store

pytestmark = pytest.mark.usefixtures("target")

KINDS = ["pinned_array", "mapped_array", "managed_array"]


@gpujit.jit
def scale_add(a, x, out):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a * x[i, j] + out[i, j]


def launch_2d(kernel, shape, *args):
    kernel[((shape[0] + 7) // 8, (shape[1] + 7) // 8), (8, 8)](*args)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_kernel_reads_and_writes_each_kind(kind, order, rng):
    shape = (37, 23)
    x = getattr(gpujit, kind)(shape, np.float32, order=order)
    out = getattr(gpujit, kind)(shape, np.float32, order=order)
    assert x.shape == shape and x.dtype == np.float32
    assert x.flags[f"{order}_CONTIGUOUS"] and x.base.kind == kind.split("_")[0]
    xs = rng.standard_normal(shape).astype(np.float32)
    start = rng.standard_normal(shape).astype(np.float32)
    x[...] = xs
    out[...] = start
    launch_2d(scale_add, shape, np.float32(3), x, out)
    gpujit.synchronize()   # mapped and managed arrays are used in place, asynchronously
    np.testing.assert_allclose(out, np.float32(3) * xs + start, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(x, xs)


@pytest.mark.parametrize("kind", ["mapped_array", "managed_array"])
def test_a_strided_view_of_zero_copy_memory(kind, rng):
    base = getattr(gpujit, kind)((40, 30), np.float32)
    base[...] = poison(base.shape, np.float32)
    view = base[::2, ::-3]
    xs = rng.standard_normal(view.shape).astype(np.float32)
    view[...] = 0
    launch_2d(scale_add, view.shape, np.float32(2), xs, view)
    gpujit.synchronize()
    np.testing.assert_allclose(view, 2 * xs, rtol=1e-6)
    untouched = np.ones(base.shape, bool)
    untouched[::2, ::-3] = False
    assert np.isnan(base[untouched]).all()


def test_explicit_strides_and_empty_and_zero_d():
    a = gpujit.pinned_array((4, 3), np.int16, strides=(12, 4))
    assert a.strides == (12, 4) and a.base.nbytes == 3 * 12 + 2 * 4 + 2
    assert gpujit.mapped_array((0, 5), np.float64).size == 0
    z = gpujit.managed_array((), np.int64)
    z[()] = 7
    assert z.shape == () and z[()] == 7
    with pytest.raises(ValueError, match="negative dimensions"):
        gpujit.pinned_array((-1, 2))
    with pytest.raises(ValueError, match="strides"):
        gpujit.pinned_array((2, 2), strides=(8,))
    with pytest.raises(ValueError, match="too big"):
        gpujit.mapped_array((1 << 40, 1 << 40), np.float64)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [object, "U4", ">f8", [("x", "f4")], np.longdouble])
def test_dtypes_gpujit_has_no_type_for_are_refused(kind, dtype):
    """Object arrays over uninitialised memory would read garbage as
    pointers: every dtype without a gpujit type is a TypeError, as
    to_device's."""
    with pytest.raises(TypeError, match="gpujit has no type for dtype"):
        getattr(gpujit, kind)(16, dtype)


def test_pinned_context_manager_around_copies_on_a_stream(rng):
    a = rng.standard_normal(100_000)
    back = np.full_like(a, np.nan)
    s = gpujit.stream()
    with gpujit.pinned(a, back):
        d = gpujit.to_device(a, stream=s)
        d.copy_to_host(back, stream=s)
        s.synchronize()
    np.testing.assert_array_equal(back, a)
    with pytest.raises(TypeError, match="contiguous"):
        with gpujit.pinned(a[::2]):
            pass


def test_freed_allocations_leave_no_trace(rng):
    for _ in range(50):
        m = gpujit.mapped_array(1000, np.float32)
        m2 = gpujit.managed_array(10, np.float32)
        del m, m2
    gc.collect()
    x = rng.standard_normal((9, 9)).astype(np.float32)
    out = np.zeros_like(x)
    launch_2d(scale_add, x.shape, np.float32(1), x, out)
    np.testing.assert_allclose(out, x, rtol=1e-6)


@pytest.mark.parametrize("kind", ["mapped_array", "managed_array"])
def test_on_a_gpu_zero_copy_memory_is_used_in_place(kind, target):
    """The launch returns while the kernel still runs (no copies, no
    synchronize): the host sees the old values until it synchronizes."""
    if target != "cuda":
        pytest.skip("the CPU target runs kernels synchronously")
    out = getattr(gpujit, kind)(64, np.float32)
    out[:] = -1
    slow_store[1, 64](out, np.float32(5), 10)   # compiled before timing
    gpujit.synchronize()
    out[:] = -1
    slow_store[1, 64](out, np.float32(5), 20_000_000)   # some tens of ms
    early = out.copy()
    gpujit.synchronize()
    assert (early == -1).all(), "the launch waited for the kernel: it copied"
    assert (out == 5).all()


@pytest.mark.serial   # times a copy against the call that queues it: a busy GPU or CPU skews both
def test_on_a_gpu_a_copy_into_pinned_memory_returns_before_it_ends(target):
    if target != "cuda":
        pytest.skip("the CPU target copies synchronously")
    n = 64 << 20   # float32: 256 MiB
    d = gpujit.device_array(n, np.float32)
    d[:] = 3.0
    host = gpujit.pinned_array(n, np.float32)
    host[:] = 0
    s = gpujit.stream()
    begin, end = gpujit.event(), gpujit.event()
    begin.record(s)
    t0 = time.perf_counter()
    d.copy_to_host(host, stream=s)
    call_ms = (time.perf_counter() - t0) * 1e3
    end.record(s)
    s.synchronize()
    copy_ms = begin.elapsed_time(end)
    assert (host == 3).all()
    assert copy_ms > 2.0, copy_ms   # 256 MiB over the bus
    assert call_ms < 0.5 * copy_ms, (call_ms, copy_ms)
