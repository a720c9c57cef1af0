"""DeviceArray on the host side, as numba's DeviceNDArray: views from
indexing and slicing (sharing memory), element reads and writes, reshape,
ravel, transpose, dtype views, copies to and from host arrays of any layout,
flags, __array__, and kernels launched with views.

Every result is compared with NumPy doing the same on the same random data;
outputs start poisoned so an element left unwritten shows.  Each test runs on
every execution target (the memory of the CPU target's device arrays is host
memory; nothing here may depend on that).
"""
import gc
import weakref

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

pytestmark = pytest.mark.usefixtures("target")


def random_grid(rng, shape, dtype, order="C"):
    a = random_array(rng, int(np.prod(shape)), dtype, low=-100, high=100).reshape(shape)
    return np.asfortranarray(a) if order == "F" else a


def assert_same(got, want):
    """Same shape, dtype and every element (a DeviceArray is copied first)."""
    if isinstance(got, gpujit.DeviceArray):
        got = got.copy_to_host()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


KEYS_1D = [slice(2, 10), slice(None, None, 2), slice(None, None, -1), slice(-3, None),
           slice(8, 2, -2), slice(5, 5), slice(1, None, 3), Ellipsis, (None,), (Ellipsis, None),
           slice(-100, 100), slice(None, None, -7)]
KEYS_2D = [(slice(None), 0), 3, -1, (slice(1, 3), slice(None, None, 2)), (Ellipsis, 1),
           (1, Ellipsis), (slice(None, None, -2), slice(1, None, 3)), (slice(None), -1),
           (None, 2, slice(None, None, -1)), (np.int64(2),), (slice(2, 2), 0), ()]
KEYS_3D = [(1, Ellipsis, 2), (slice(None), None, 1), (Ellipsis, slice(None, None, -1)),
           (slice(1, None), 0, slice(None, None, 2)), 2, (-1, -2), (slice(None), 1, -1)]


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "uint8"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape,keys", [((17,), KEYS_1D), ((6, 9), KEYS_2D),
                                        ((4, 5, 6), KEYS_3D)], ids=["1d", "2d", "3d"])
def test_indexing_gives_numpys_views(rng, dtype, order, shape, keys):
    a = random_grid(rng, shape, dtype, order)
    d = gpujit.to_device(a)
    for key in keys:
        want = a[key]
        got = d[key]
        assert isinstance(got, gpujit.DeviceArray), key
        assert got.shape == want.shape and got.strides == want.strides, key
        assert got.base is d and got.dtype == a.dtype
        assert (got.is_c_contiguous(), got.is_f_contiguous()) == \
            (want.flags.c_contiguous, want.flags.f_contiguous), key
        assert got.flags == {"C_CONTIGUOUS": want.flags.c_contiguous,
                             "F_CONTIGUOUS": want.flags.f_contiguous}
        assert_same(got, want)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_indexing_every_axis_reads_one_element_as_a_numpy_scalar(rng, dtype):
    a = random_grid(rng, (5, 7), dtype)
    d = gpujit.to_device(a)
    for i in range(-5, 5):
        for j in range(-7, 7):
            got = d[i, j]
            assert type(got) is type(a[i, j]) and got == a[i, j]
    v = gpujit.to_device(a[::-1].copy())[1:, ::-2]   # an element of a view of a view
    assert v[2, 1] == a[::-1][1:, ::-2][2, 1]
    z = gpujit.to_device(np.array(a[2, 3]))          # 0-d
    assert z.shape == () and z[()] == a[2, 3] and type(z[()]) is type(a[2, 3])
    assert z[...].shape == () and isinstance(z[...], gpujit.DeviceArray)


def test_views_of_views_compose(rng):
    a = random_grid(rng, (12, 10), "float64")
    d = gpujit.to_device(a)
    chains = [
        (lambda x: x[1:, ::2], lambda x: x[::-1, 1], lambda x: x[2:5]),
        (lambda x: x.T, lambda x: x[3], lambda x: x[::-3]),
        (lambda x: x[::2], lambda x: x[:, 3:], lambda x: x[..., 4:1:-1]),
        (lambda x: x[2:8], lambda x: x.reshape(3, 20), lambda x: x[:, ::-4], lambda x: x.T),
    ]
    for chain in chains:
        got, want = d, a
        for step in chain:
            got, want = step(got), step(want)
            assert got.strides == want.strides
            assert_same(got, want)
        assert got.base is d


def numpy_error(fn):
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    raise AssertionError("NumPy raised nothing")


@pytest.mark.parametrize("key", [4, -5, (0, 6), (1, -7), (1, 2, 3), (Ellipsis, 1, Ellipsis),
                                 (0, 0, Ellipsis, 0)])
def test_index_errors_are_numpys(rng, key):
    a = random_grid(rng, (4, 6), "int32")
    d = gpujit.to_device(a)
    kind, message = numpy_error(lambda: a[key])
    assert kind is IndexError
    with pytest.raises(IndexError) as err:
        d[key]
    assert str(err.value) == message
    with pytest.raises(IndexError) as err:
        d[key] = 1
    assert str(err.value) == message


@pytest.mark.parametrize("key", [[0, 1], np.array([1, 2]), np.array([True, False, True, True]),
                                 True, 1.5, (slice(None), [0])])
def test_fancy_and_boolean_indexing_are_refused(rng, key):
    d = gpujit.to_device(random_grid(rng, (4, 6), "float32"))
    with pytest.raises(TypeError, match="fancy and boolean indexing are not supported"):
        d[key]
    with pytest.raises(TypeError, match="fancy and boolean indexing are not supported"):
        d[key] = 0
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        d[::0]


def test_setitem_writes_through_as_numpy_assigns(rng):
    a = random_grid(rng, (9, 8), "float64")
    d = gpujit.to_device(a)
    row = random_array(rng, 8, "float64")
    col = random_array(rng, 5, "float64")
    block = random_grid(rng, (3, 4), "float64")
    writes = [
        (3, 5.5),                                   # a whole row from a scalar
        ((2, 7), -3.25),                            # one element
        ((slice(None), 0), random_array(rng, 9, "float64")),   # a column (strided)
        (slice(1, 4), row),                         # rows from a broadcast row
        ((slice(1, 6), 2), col),                    # part of a column
        ((slice(None, None, -3), slice(1, None, 2)), block),   # negative step, strided
        ((Ellipsis, -1), 42.0),                     # last column, scalar broadcast
        ((-1, slice(None, None, -1)), row),         # last row, reversed
        (Ellipsis, a[::-1] * 2),                    # everything
        ((4, slice(2, 6)), [1, 2, 3, 4]),           # a list, converted
    ]
    want = a.copy()
    for key, value in writes:
        want[key] = value
        d[key] = value
        assert_same(d, want)
    # from a DeviceArray, overlapping its destination (read before written)
    want[1:] = want[:-1].copy()
    d[1:] = d[:-1]
    assert_same(d, want)
    want[:, 3] = a[:, 5]
    d[:, 3] = gpujit.to_device(a)[::-1, 5][::-1]
    assert_same(d, want)


def test_setitem_converts_and_checks_shape(rng):
    a = random_grid(rng, (6, 4), "int32")
    d = gpujit.to_device(a)
    d[2] = np.array([1.9, -2.9, 3.5, 7.0])     # converted as NumPy assigns (truncated)
    want = a.copy()
    want[2] = np.array([1.9, -2.9, 3.5, 7.0])
    assert_same(d, want)
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) "
                                         r"into shape \(4,\)"):
        d[1] = np.arange(3)
    with pytest.raises(ValueError, match="could not broadcast"):
        d[::2, 0] = np.arange(4)
    with pytest.raises(ValueError, match="cannot delete array elements"):
        del d[1]
    assert_same(d, want)   # failed writes wrote nothing


@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_gives_views(rng, order):
    a = random_grid(rng, (4, 6), "float32", order)
    d = gpujit.to_device(a)
    for shape, how in [((24,), order), ((2, 12), order), ((3, -1), order), ((2, 3, 4), order),
                       ((6, 4), "A"), ((-1,), "A"), ((4, 6), "C" if order == "F" else "F")]:
        want = a.reshape(shape, order=how)
        for got in (d.reshape(*shape, order=how), d.reshape(shape, order=how),
                    d.reshape(list(shape), order=how)):
            assert got.shape == want.shape and got.strides == want.strides
            assert got.base is d
            assert_same(got, want)
    r = d.reshape(2, 12, order=order)
    r[1, 3] = 99
    want = a.copy(order="K")
    want.reshape(2, 12, order=order)[1, 3] = 99
    assert_same(d, want)
    # a view with an offset reshapes to a view at that offset
    tail = gpujit.to_device(a.ravel(order="K"))[4:]
    assert_same(tail.reshape(5, 4), a.ravel(order="K")[4:].reshape(5, 4))


def test_reshape_errors(rng):
    d = gpujit.to_device(random_grid(rng, (4, 6), "float64"))
    with pytest.raises(NotImplementedError, match="operation requires copying"):
        d[:, ::2].reshape(12)
    with pytest.raises(NotImplementedError, match="operation requires copying"):
        d.reshape(24, order="F")
    assert d[:, ::2].reshape(4, 3).shape == (4, 3)   # unchanged shape: a view, as numba
    with pytest.raises(ValueError, match=r"cannot reshape array of size 24 into shape \(5, 5\)"):
        d.reshape(5, 5)
    with pytest.raises(ValueError, match="cannot reshape array of size 24"):
        d.reshape(5, -1)
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        d.reshape(-1, -1)
    with pytest.raises(ValueError, match="negative dimensions not allowed"):
        d.reshape(-4, -6)
    with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A'"):
        d.reshape(24, order="K")


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel(rng, order):
    a = random_grid(rng, (5, 3, 4), "int64", order)
    d = gpujit.to_device(a)
    for how in (order, "A"):
        got = d.ravel(order=how)
        assert got.strides == (8,) and got.base is d
        assert_same(got, a.ravel(order=how))
    part = (lambda x: x[2]) if order == "C" else (lambda x: x[..., 2])   # still contiguous
    assert_same(part(d).ravel(order=order), part(a).ravel(order=order))
    other = "F" if order == "C" else "C"
    for bad in (lambda: d.ravel(order=other), lambda: d[:, ::2].ravel(order=order),
                lambda: d[::-1].ravel(order=order)):
        with pytest.raises(NotImplementedError, match="operation requires copying"):
            bad()
    z = gpujit.to_device(np.array(7, dtype=np.int64))
    assert_same(z.ravel(), np.array([7]))


def test_transpose_views(rng):
    a = random_grid(rng, (3, 4, 5), "float64")
    d = gpujit.to_device(a)
    for got, want in [(d.T, a.T), (d.transpose(), a.transpose()),
                      (d.transpose(1, 0, 2), a.transpose(1, 0, 2)),
                      (d.transpose((2, 0, 1)), a.transpose((2, 0, 1))),
                      (d.transpose([-1, 0, 1]), a.transpose([-1, 0, 1])),
                      (d[1].T, a[1].T), (d[:, 2:, ::-2].T, a[:, 2:, ::-2].T)]:
        assert got.strides == want.strides and got.base is d
        assert_same(got, want)
    f = gpujit.to_device(random_grid(rng, (6, 7), "float32"))
    assert f.T.is_f_contiguous() and not f.T.is_c_contiguous()
    for axes, message in [((0, 1), "axes don't match array"),
                          ((0, 0, 1), "repeated axis in transpose"),
                          ((0, 1, 3), "axis out of bounds"),
                          ((0, 1, 2, 3), "axes don't match array")]:
        with pytest.raises(ValueError, match=message):
            d.transpose(axes)


def test_view_reinterprets_dtype(rng):
    a = random_grid(rng, (4, 6), "float32")
    d = gpujit.to_device(a)
    for dtype in ["int32", "uint8", "float64", "complex64", np.int16]:
        want = a.view(dtype)
        got = d.view(dtype)
        assert got.shape == want.shape and got.strides == want.strides and got.base is d
        assert_same(got, want)
    got = d[1:3].view("uint16")
    assert_same(got, a[1:3].view("uint16"))
    got[0, 0] = 0                                   # writes through to d's memory
    want = a.copy()
    want[1:3].view("uint16")[0, 0] = 0
    assert_same(d, want)
    for view_of, dtype in [(lambda x: x.T, "float64"), (lambda x: x[:, :5], "float64"),
                           (lambda x: x[1, 1], "int16")]:
        kind, message = numpy_error(lambda: view_of(a).view(dtype))
        with pytest.raises(kind) as err:
            view_of(d).view(dtype)
        assert str(err.value) == message
    with pytest.raises(TypeError, match="gpujit has no type for dtype"):
        d.view(">f4")


def test_array_protocol_copies_to_the_host(rng):
    a = random_grid(rng, (7, 5), "int16")
    d = gpujit.to_device(a)
    assert_same(np.asarray(d), a)
    assert_same(np.asarray(d[::2, ::-1]), a[::2, ::-1])
    assert_same(np.asarray(d, dtype=np.float64), a.astype(np.float64))
    assert_same(np.array(d.T), a.T.copy())
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        d.__array__(copy=False)
    assert len(d) == 7 and len(d[0]) == 5
    with pytest.raises(TypeError, match="len"):
        len(d[0, 0:1].reshape(()))


def test_copy_to_host_into_host_arrays_of_any_layout(rng):
    a = random_grid(rng, (6, 5), "float64")
    sources = {"C": gpujit.to_device(a), "F": gpujit.to_device(np.asfortranarray(a)),
               "strided": gpujit.to_device(np.kron(a, np.ones((2, 3))))[::2, ::3],
               "reversed": gpujit.to_device(a[::-1, ::-1].copy())[::-1, ::-1]}
    outs = [lambda big: big[::2, ::3], lambda big: big[:6, :5], lambda big: big[::-2, ::-3],
            lambda big: big.T[::3, ::2].T, lambda big: np.asfortranarray(big[:6, :5])]
    for name, d in sources.items():
        for out_of in outs:
            big = poison((12, 15), "float64")
            out = out_of(big)
            want_big = big.copy()
            out_of(want_big)[...] = a
            assert d.copy_to_host(out) is out, name
            np.testing.assert_array_equal(out, a)
            np.testing.assert_array_equal(big, want_big)   # nothing outside the view written
    # F order into C and back; shapes differing by extents of 1 are accepted (numba)
    out = poison((6, 5), "float64")
    gpujit.to_device(np.asfortranarray(a)).copy_to_host(out)
    np.testing.assert_array_equal(out, a)
    col = poison((6, 1), "float64")
    d[:, 2].copy_to_host(col)
    np.testing.assert_array_equal(col[:, 0], a[:, 2])
    with pytest.raises(ValueError, match=r"incompatible shape: \(6, 5\) \(device\) vs. "
                                         r"\(5, 6\) \(host\)"):
        d.copy_to_host(np.empty((5, 6)))
    with pytest.raises(ValueError, match="incompatible shape"):
        d[:, 0].copy_to_host(np.empty((2, 6)))      # broadcasting is not a fit


def test_copy_to_device_from_and_into_any_layout(rng):
    a = random_grid(rng, (6, 8), "int32")
    d = gpujit.to_device(a)
    want = a.copy()
    x = random_grid(rng, (8, 6), "int32").T           # F-ordered host source
    d.copy_to_device(x)
    want[...] = x
    assert_same(d, want)
    y = random_grid(rng, (6, 16), "int32")[:, ::2]    # strided host source
    d.copy_to_device(y)
    want[...] = y
    assert_same(d, want)
    # into views: a column, a reversed strided block (the elements between stay)
    col = random_array(rng, 6, "int32")
    d[:, 3].copy_to_device(col)
    want[:, 3] = col
    blk = random_grid(rng, (3, 3), "int32")
    d[::-2, 1::3].copy_to_device(blk)
    want[::-2, 1::3] = blk
    assert_same(d, want)
    # from DeviceArrays: same layout (on the device), F into C, a view, another dtype
    src = random_grid(rng, (6, 8), "int32")
    d.copy_to_device(gpujit.to_device(src))
    want[...] = src
    assert_same(d, want)
    d.copy_to_device(gpujit.to_device(np.asfortranarray(src * 2)))
    want[...] = src * 2
    assert_same(d, want)
    d[:, 1].copy_to_device(gpujit.to_device(src)[:, 5])
    want[:, 1] = src[:, 5]
    assert_same(d, want)
    # a copy never casts (numba): another dtype is refused, d unchanged
    for other in (gpujit.to_device(src[3].astype(np.float64) + 0.5),
                  src[3].astype(np.int64) + 2**40, np.full(8, 3e10), [0.5] * 8):
        with pytest.raises(TypeError, match=r"copy_to_device\(\): incompatible dtype: int32 "
                                            r"\(device\) vs. (float64|int64)"):
            d[2].copy_to_device(other)
    with pytest.raises(OverflowError):                # NumPy refuses an int that does not fit
        d[2].copy_to_device([2**40] * 8)
    d[2].copy_to_device([int(v) for v in src[4]])     # ints of the same kind convert
    want[2] = src[4]
    assert_same(d, want)
    with pytest.raises(TypeError, match=r"copy_to_host\(\): incompatible dtype: int32 "
                                        r"\(device\) vs. float64 \(host\)"):
        d.copy_to_host(np.empty((6, 8)))
    with pytest.raises(ValueError, match="incompatible shape"):
        d.copy_to_device(np.zeros((8, 6), np.int32))
    with pytest.raises(ValueError, match="incompatible shape"):
        d[0].copy_to_device(gpujit.to_device(np.zeros(6, np.int32)))
    f = gpujit.device_array((6, 8), np.int32, order="F")
    gpujit.to_device(want, to=f)
    assert f.is_f_contiguous()
    assert_same(f, want)


def test_allocation_keeps_the_layout_asked_for(rng):
    for order in ("C", "F"):
        want = np.empty((3, 4, 5), np.float32, order=order)
        d = gpujit.device_array((3, 4, 5), np.float32, order=order)
        assert d.strides == want.strides and d.flags == {
            "C_CONTIGUOUS": order == "C", "F_CONTIGUOUS": order == "F"}
        f = random_grid(rng, (5, 7), "complex64", order)
        for like in (gpujit.device_array_like(f), gpujit.device_array_like(gpujit.to_device(f)),
                     gpujit.to_device(f, copy=False), gpujit.to_device(f)):
            assert like.shape == f.shape and like.strides == f.strides and like.dtype == f.dtype
        assert_same(gpujit.to_device(f), f)
    s = gpujit.device_array((4, 6), np.int64, strides=(8, 32))
    assert s.strides == (8, 32) and s.is_f_contiguous()
    z = gpujit.device_array((), np.float64)
    z[()] = 2.5
    assert z.ndim == 0 and z.size == 1 and z[()] == 2.5
    with pytest.raises(TypeError, match="len"):
        len(z)


def test_views_keep_the_allocation_alive(rng):
    a = random_grid(rng, (64, 33), "float64")
    d = gpujit.to_device(a)
    owner = weakref.ref(d)
    v = d[3:, ::2]
    w = v[::-1, 4]
    del d, v
    gc.collect()
    assert owner() is not None and w.base is owner()
    for _ in range(20):   # new allocations must not reuse the memory w reads
        gpujit.to_device(np.full((64, 33), np.nan))
    assert_same(w, a[3:, ::2][::-1, 4])
    del w
    gc.collect()
    assert owner() is None


@gpujit.jit
def scale_into(x, out, k):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * k


@gpujit.jit
def add_rows(x, out):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] + i - j


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_kernels_write_through_views(rng, dtype):
    n = 1000
    x = random_array(rng, n, dtype)
    d_x = gpujit.to_device(x)
    # every other element, read from a reversed view
    d_out = gpujit.to_device(poison(2 * n, dtype))
    scale_into[(n + 127) // 128, 128](d_x[::-1], d_out[1::2], 3)
    want = poison(2 * n, dtype)
    want[1::2] = x[::-1] * 3
    assert_same(d_out, want)
    # a column of a 2-d array, the parent already dropped by the caller
    m = 300
    d_grid = gpujit.to_device(poison((m, 7), dtype))
    column = d_grid[:, 0]
    scale_into[(m + 127) // 128, 128](d_x[5:5 + m], column, 2)
    want = poison((m, 7), dtype)
    want[:, 0] = x[5:5 + m] * 2
    assert_same(d_grid, want)
    # 2-d views: a strided block of an F-ordered array, a transpose, an offset
    src = random_grid(rng, (40, 60), dtype, "F")
    d_src = gpujit.to_device(src)
    d_dst = gpujit.to_device(poison((50, 90), dtype))
    out_view = d_dst[5:45, ::3][:, ::-1]           # (40, 30)
    add_rows[(3, 2), (16, 16)](d_src[:, 1::2], out_view)
    want = poison((50, 90), dtype)
    i, j = np.indices((40, 30))
    want[5:45, ::3][:, ::-1] = src[:, 1::2] + (i - j).astype(dtype)
    assert_same(d_dst, want)
    d_t = gpujit.to_device(poison((30, 40), dtype))
    add_rows[(2, 3), (16, 16)](d_src[:, :30].T.T.T, d_t.reshape(30, 40))
    i, j = np.indices((30, 40))
    assert_same(d_t, src[:, :30].T + (i - j).astype(dtype))


def test_view_exports_its_own_address(target, rng):
    d = gpujit.to_device(random_grid(rng, (8, 10), "float32"))
    v = d[2:, 3:]
    if target == "cpu":
        with pytest.raises(AttributeError, match="host memory"):
            v.__cuda_array_interface__
        return
    cai, base = v.__cuda_array_interface__, d.__cuda_array_interface__
    assert cai["data"][0] == base["data"][0] + 2 * 40 + 3 * 4
    assert cai["shape"] == (6, 7) and cai["strides"] == (40, 4)


def read_only_export(target, host):
    """(a read-only DeviceArray over host's values, the array it views):
    on the CPU target a read-only NumPy array through from_dlpack (DLPack's
    READ_ONLY flag); on a GPU a device array's memory exported read-only
    through the CUDA Array Interface (data=(ptr, True)), as_cuda_array."""
    if target == "cpu":
        a = host.copy()
        a.flags.writeable = False
        return gpujit.from_dlpack(a), a
    d = gpujit.to_device(host)

    class ReadOnly:
        __cuda_array_interface__ = dict(d.__cuda_array_interface__,
                                        data=(d.device_ctypes_pointer_value, True))
    return gpujit.as_cuda_array(ReadOnly()), d


def test_views_of_a_read_only_export_stay_read_only(target, rng):
    """A read-only export gives a read-only DeviceArray; its views are
    read-only too, and no write path (setitem, copy_to_device) changes the
    memory."""
    before = rng.standard_normal(10)
    d, under = read_only_export(target, before)
    v = d[2:5]
    np.testing.assert_array_equal(v.copy_to_host(), before[2:5])
    with pytest.raises(ValueError, match="read-only"):
        v[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        d[:] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        v.copy_to_device(np.zeros(3))
    np.testing.assert_array_equal(np.asarray(under), before)


def test_copies_between_0d_and_one_element_arrays(rng):
    """Extents of 1 do not count (numba's rule): a 0-d device array copies to
    and from (1,) and (1, 1) arrays, host or device, both ways."""
    value = rng.standard_normal()
    z = gpujit.to_device(np.float64(value))
    one = np.full(1, np.nan)
    z.copy_to_host(one)
    assert one[0] == value
    z.copy_to_device(np.array([[2 * value]]))
    assert z.copy_to_host()[()] == 2 * value
    z.copy_to_device(gpujit.to_device(np.array([3 * value])))
    assert z.copy_to_host()[()] == 3 * value
    d = gpujit.to_device(np.array([4 * value]))
    zero_d = np.full((), np.nan)
    d.copy_to_host(zero_d)
    assert zero_d[()] == 4 * value


def test_threads_writing_different_columns_keep_both(rng):
    """A write into a strided view reads, merges and writes back the bytes
    the view spans; host writes are serialized, so two threads writing two
    columns of one array at once lose nothing."""
    import threading
    d = gpujit.to_device(np.zeros((50_000, 2)))
    errors = []

    def fill(col):
        try:
            for it in range(1, 41):
                d[:, col] = it + 1000 * col
        except BaseException as exc:   # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=fill, args=(c,)) for c in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    got = d.copy_to_host()
    assert (got[:, 0] == 40).all() and (got[:, 1] == 1040).all()


def test_copy_to_host_into_what_is_not_a_host_array_names_the_problem():
    d = gpujit.to_device(np.arange(6.0))
    with pytest.raises(TypeError, match="use dst.copy_to_device"):
        d.copy_to_host(gpujit.device_array(6))
    with pytest.raises(TypeError, match="must be a NumPy array to write into, not bytearray"):
        d.copy_to_host(bytearray(48))


def test_more_misuse_gets_numpys_kind_of_error():
    d = gpujit.to_device(np.arange(6.0)).reshape(2, 3)
    with pytest.raises(TypeError, match="needs the new shape"):
        d.reshape(order="F")
    for dtype in ("M8[s]", "m8[ms]"):
        with pytest.raises(TypeError, match="gpujit has no type for dtype"):
            gpujit.to_device(np.zeros(3, dtype))
