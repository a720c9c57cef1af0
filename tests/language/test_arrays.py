"""Arrays in kernels: 1-4 dimensions in C, F and strided layouts (NumPy
views as arguments and as outputs), negative indices, a tuple variable as
index, .shape/.strides/.ndim/.size/len(), bool arrays, stores that cast to
the array's dtype, zero-size arrays, slicing views inside kernels (with
Python's clamping of out-of-range bounds), N-d DeviceArrays, and the
diagnostics for what slicing does not support.  Each execution test is
checked element by element against NumPy; the compile tests run anywhere."""
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

execution = pytest.mark.usefixtures("target")


def launch(kernel, n, *args):
    kernel[(n + 63) // 64, 64](*args)


def layouts(rng, shape, dtype="float64"):
    """The same random values as C, F and non-contiguous (strided, reversed) arrays."""
    base = random_array(rng, int(np.prod(shape)), dtype).reshape(shape)
    big = poison(tuple(2 * s + 1 for s in shape), dtype)
    strided = big[tuple(slice(None, 2 * s, 2) for s in shape)]
    strided[...] = base
    rev = np.ascontiguousarray(base[::-1])[::-1]
    return {"C": base, "F": np.asfortranarray(base), "strided": strided, "reversed": rev}


def out_views(shape, dtype):
    """Poisoned outputs in each layout: (the view passed, its base, the view's mask in base)."""
    c = poison(shape, dtype)
    f = np.asfortranarray(poison(shape, dtype))
    big = poison(tuple(2 * s + 1 for s in shape), dtype)
    sel = tuple(slice(1, 2 * s + 1, 2) for s in shape)
    mask = np.zeros(big.shape, bool)
    mask[sel] = True
    return {"C": (c, c, None), "F": (f, f, None), "strided": (big[sel], big, mask)}


# ---- 1 to 4 dimensions, every layout ----------------------------------------------------

@gpujit.jit
def affine1(a, out):
    i = gpujit.grid(1)
    if i < a.size:
        out[i] = a[i] * 2.0 + 1.0


@gpujit.jit
def affine2(a, out):
    i = gpujit.grid(1)
    if i < a.size:
        n0, n1 = a.shape
        j = i % n1
        h = i // n1
        out[h, j] = a[h, j] * 2.0 + 1.0


@gpujit.jit
def affine3(a, out):
    i = gpujit.grid(1)
    if i < a.size:
        k = i % a.shape[2]
        j = (i // a.shape[2]) % a.shape[1]
        h = i // (a.shape[2] * a.shape[1])
        idx = (h, j, k)            # a tuple variable as the index
        out[idx] = a[idx] * 2.0 + 1.0


@gpujit.jit
def affine4(a, out):
    i = gpujit.grid(1)
    if i < a.size:
        n0, n1, n2, n3 = a.shape
        l = i % n3
        k = (i // n3) % n2
        j = (i // (n3 * n2)) % n1
        h = i // (n3 * n2 * n1)
        out[h, j, k, l] = a[h, j, k, l] * 2.0 + 1.0


AFFINE = {1: (affine1, (37,)), 2: (affine2, (9, 7)), 3: (affine3, (5, 4, 6)),
          4: (affine4, (3, 4, 2, 5))}


@execution
@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("in_layout", ["C", "F", "strided", "reversed"])
@pytest.mark.parametrize("out_layout", ["C", "F", "strided"])
def test_ndim_and_layouts(rng, ndim, in_layout, out_layout):
    kernel, shape = AFFINE[ndim]
    a = layouts(rng, shape)[in_layout]
    out, base, mask = out_views(shape, "float64")[out_layout]
    launch(kernel, a.size, a, out)
    np.testing.assert_array_equal(out, a * 2.0 + 1.0)
    if mask is not None:   # nothing outside the view was touched
        assert np.isnan(base[~mask]).all()


# ---- indexing ----------------------------------------------------------------------------

@gpujit.jit
def negative_indices(a, b, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        out[i, 0] = a[-1 - i]
        out[i, 1] = b[-1, -1 - i]
        out[i, 2] = b[-b.shape[0], i]
        out[-1 - i, 3] = a[i]


@execution
def test_negative_indices(rng):
    a = random_array(rng, 50, "int64")
    b = random_array(rng, 150, "int64").reshape(3, 50)
    out = poison((50, 4), "int64")
    launch(negative_indices, 50, a, b, out)
    np.testing.assert_array_equal(out[:, 0], a[::-1])
    np.testing.assert_array_equal(out[:, 1], b[-1, ::-1])
    np.testing.assert_array_equal(out[:, 2], b[0])
    np.testing.assert_array_equal(out[:, 3], a[::-1])


@gpujit.jit
def attributes(a, out):
    i = gpujit.grid(1)
    if i == 0:
        out[0] = a.ndim
        out[1] = a.size
        out[2] = len(a)
        out[3] = a.shape[0]
        out[4] = a.shape[-1]
        out[5] = a.strides[0]
        out[6] = a.strides[1]
        out[7] = a.strides[2]
        out[8] = len(a.shape)
        s = 0
        for n in a.shape:        # for over a tuple
            s = s * 100 + n
        out[9] = s


@execution
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_shape_strides_ndim_size_len(rng, layout):
    a = layouts(rng, (3, 5, 7), "float32")[layout]
    out = poison(10, "int64")
    launch(attributes, 1, a, out)
    assert out[:5].tolist() == [3, a.size, 3, 3, 7]
    assert out[8] == 3 and out[9] == 30507
    # A strided host array may reach the kernel as a contiguous copy.
    assert tuple(out[5:8]) in (a.strides, np.ascontiguousarray(a).strides)


@gpujit.jit
def bool_logic(a, b, out, count):
    i = gpujit.grid(1)
    if i < a.size:
        out[i] = (a[i] and not b[i]) or (b[i] and not a[i])
        if out[i]:
            count[i] = 1
        else:
            count[i] = 0


@execution
def test_bool_arrays(rng):
    a = random_array(rng, 301, "bool")
    b = random_array(rng, 301, "bool")
    out = np.ones(301, bool) & ~(a ^ b)   # differs from the answer wherever it matters
    count = poison(301, "int32")
    launch(bool_logic, 301, a, b, out, count)
    np.testing.assert_array_equal(out, a ^ b)
    np.testing.assert_array_equal(count, (a ^ b).astype(np.int32))


@gpujit.jit
def store_casts(x, i64, to_i32, to_u8, to_i8, to_f32, to_bool):
    i = gpujit.grid(1)
    if i < x.size:
        to_i32[i] = x[i]          # float64 -> int32 truncates toward zero
        to_u8[i] = abs(x[i])      # float64 -> uint8 (values in range)
        to_i8[i] = i64[i]         # int64 -> int8 wraps
        to_f32[i] = i64[i]        # int64 -> float32 rounds
        to_bool[i] = x[i]         # nonzero -> True


@execution
def test_stores_cast_to_the_array_dtype(rng):
    n = 257
    x = random_array(rng, n, "float64", -250, 250)
    x[:3] = [0.0, -0.0, 0.75]
    i64 = random_array(rng, n, "int64", -(1 << 40), 1 << 40)
    outs = [poison(n, t) for t in ("int32", "uint8", "int8", "float32")]
    to_bool = ~(x != 0)
    launch(store_casts, n, x, i64, *outs, to_bool)
    np.testing.assert_array_equal(outs[0], x.astype(np.int32))
    np.testing.assert_array_equal(outs[1], np.abs(x).astype(np.uint8))
    np.testing.assert_array_equal(outs[2], i64.astype(np.int8))
    np.testing.assert_array_equal(outs[3], i64.astype(np.float32))
    np.testing.assert_array_equal(to_bool, x != 0)


@gpujit.jit
def augmented_2d(a, out):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] += a[i, j]
        out[i, j] *= 3
        out[i, j - out.shape[1]] -= 0.5 if j % 2 == 0 else 0.25   # the same element
        out[i, j] //= 1.0


@execution
def test_augmented_assignment_on_elements(rng):
    a = random_array(rng, 24 * 10, "float64").reshape(24, 10)
    out = random_array(rng, 24 * 10, "float64").reshape(24, 10)
    want = (out + a) * 3
    want[:, ::2] -= 0.5
    want[:, 1::2] -= 0.25
    want //= 1.0
    augmented_2d[(1, 1), (24, 10)](a, out)
    np.testing.assert_allclose(out, want, rtol=0, atol=0)


# ---- zero-size arrays -----------------------------------------------------------------

@gpujit.jit
def fill_2d(out, v):
    i, j = gpujit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = v


@execution
@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (0, 0)])
def test_zero_size_arrays_launch_as_no_ops(shape):
    out = np.empty(shape, np.float32)
    fill_2d[(1, 1), (8, 8)](out, np.float32(1.5))    # a grid, but nothing to do
    fill_2d[(0, 1), (8, 8)](out, np.float32(1.5))    # an empty grid
    assert out.shape == shape and out.size == 0
    affine1[1, 32](np.empty(0), np.empty(0))


@execution
def test_zero_size_device_arrays():
    d = gpujit.device_array((3, 0), np.float64)
    assert d.shape == (3, 0) and d.size == 0
    fill_2d[(1, 1), (4, 4)](d, 2.0)
    assert d.copy_to_host().shape == (3, 0)
    e = gpujit.to_device(np.empty(0, np.int32))
    assert e.copy_to_host().shape == (0,)


# ---- slicing views inside kernels ----------------------------------------------------------

@gpujit.jit
def slice_sums(a, starts, stops, steps, out_len, out_sum):
    i = gpujit.grid(1)
    if i < out_len.size:
        v = a[starts[i]:stops[i]:steps[i]]
        s = 0
        for k in range(len(v)):
            s += v[k] * (k + 1)
        out_len[i] = len(v)
        out_sum[i] = s


@execution
def test_slices_with_variable_bounds_clamp_like_python(rng):
    n = 500
    a = random_array(rng, 40, "int64")
    starts = random_array(rng, n, "int64", -60, 60)
    stops = random_array(rng, n, "int64", -60, 60)
    steps = rng.choice([-7, -3, -2, -1, 1, 2, 3, 9], n).astype(np.int64)
    out_len, out_sum = poison(n, "int64"), poison(n, "int64")
    launch(slice_sums, n, a, starts, stops, steps, out_len, out_sum)
    for k in range(n):
        v = a[starts[k]:stops[k]:steps[k]]
        assert out_len[k] == len(v), (starts[k], stops[k], steps[k])
        assert out_sum[k] == sum(int(x) * (j + 1) for j, x in enumerate(v))


@gpujit.jit
def constant_slices(a, out):
    i = gpujit.grid(1)
    if i == 0:
        views = (a[2:10], a[::2], a[::-1], a[-5:], a[:-30], a[5:1000], a[-1000:3], a[7:2],
                 a[10:2:-3], a[:], a[1::7])
        k = 0
        for v in views:
            out[k, 0] = len(v)
            out[k, 1] = v[0] if len(v) > 0 else -1
            out[k, 2] = v[-1] if len(v) > 0 else -1
            out[k, 3] = v.strides[0]
            k += 1


@execution
def test_constant_slices(rng):
    a = random_array(rng, 33, "int64", 0, 1000)
    out = poison((11, 4), "int64")
    launch(constant_slices, 1, a, out)
    views = (a[2:10], a[::2], a[::-1], a[-5:], a[:-30], a[5:1000], a[-1000:3], a[7:2],
             a[10:2:-3], a[:], a[1::7])
    for k, v in enumerate(views):
        want = [len(v), v[0] if len(v) else -1, v[-1] if len(v) else -1]
        assert out[k, :3].tolist() == want, k
        if len(v) > 1:
            assert out[k, 3] == v.strides[0], k


@gpujit.jit
def views_2d(b, out):
    i, j = gpujit.grid(2)
    if i < b.shape[0] and j < b.shape[1]:
        row = b[i]              # a[i] of a 2-d array: a 1-d view
        col = b[:, j]
        inner = b[1:-1, 1:-1]
        tail = b[i, j:]
        flipped = b[::-1, ::2]
        r = row[j] + 10 * col[i] + 100 * len(tail)
        if i < inner.shape[0] and j < inner.shape[1]:
            r += 1000 * inner[i, j]
        if j < flipped.shape[1]:
            r += 100000 * flipped[i, j]
        out[i][j] = r           # a store through a view


@execution
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_views_of_2d_arrays(rng, layout):
    b = layouts(rng, (12, 9), "int64")[layout] % 10
    out = poison((12, 9), "int64")
    views_2d[(1, 1), (12, 9)](b, out)
    want = np.empty_like(out)
    for i in range(12):
        for j in range(9):
            r = b[i][j] + 10 * b[:, j][i] + 100 * len(b[i, j:])
            if i < 10 and j < 7:
                r += 1000 * b[1:-1, 1:-1][i, j]
            if j < 5:
                r += 100000 * b[::-1, ::2][i, j]
            want[i, j] = r
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def row_writer(out, v):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        row = out[i, :]
        for j in range(row.size):
            row[j] = v * i + j
        block = out[i:i + 1, ::-1]
        block[0, 0] = -1.0


@execution
def test_stores_through_views_reach_host_arrays():
    out = np.full((6, 5), np.nan)
    launch(row_writer, 6, out, 10.0)
    want = 10.0 * np.arange(6)[:, None] + np.arange(5)
    want[:, -1] = -1.0
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def view_3d(c, out):
    i = gpujit.grid(1)
    if i < c.shape[0]:
        m = c[i]            # 2-d view
        v = m[1]            # 1-d view of a view
        s = 0.0
        for k in range(v.size):
            s += v[k]
        out[i] = s + m.ndim * 1000 + m.shape[1]


@execution
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_views_of_views(rng, layout):
    c = layouts(rng, (7, 3, 4))[layout]
    out = poison(7, "float64")
    launch(view_3d, 7, c, out)
    np.testing.assert_allclose(out, c[:, 1, :].sum(axis=1) + 2000 + 4, rtol=1e-12)


# ---- host arrays that are not contiguous -------------------------------------------------

@gpujit.jit
def copy_negate(src, dst):
    i, j = gpujit.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = -src[i, j]


@execution
@pytest.mark.parametrize("view", ["every_other_row", "transpose", "column_slice", "reversed"])
def test_host_views_in_and_out(rng, view):
    base_in = random_array(rng, 20 * 12, "float32").reshape(20, 12)
    base_out = poison((20, 12), "float32")
    pick = {"every_other_row": lambda x: x[::2],
            "transpose": lambda x: x.T,
            "column_slice": lambda x: x[:, 1:],
            "reversed": lambda x: x[::-1, ::-1]}[view]
    src, dst = pick(base_in), pick(base_out)
    copy_negate[(1, 1), (32, 32)](src, dst)
    np.testing.assert_array_equal(dst, -src)
    untouched = np.ones(base_out.shape, bool)
    pick(untouched)[...] = False
    assert np.isnan(base_out[untouched]).all()


@execution
def test_device_arrays_keep_shape_strides_and_order(rng):
    a = np.asfortranarray(random_array(rng, 6 * 5 * 4, "float64").reshape(6, 5, 4))
    d = gpujit.to_device(a)
    assert d.shape == a.shape and d.strides == a.strides and d.ndim == 3
    back = d.copy_to_host()
    assert back.flags.f_contiguous
    np.testing.assert_array_equal(back, a)
    out = gpujit.device_array((6, 5, 4), np.float64)
    launch(affine3, a.size, d, out)
    np.testing.assert_array_equal(out.copy_to_host(), a * 2.0 + 1.0)


@execution
@pytest.mark.parametrize("order", ["C", "F"])
def test_device_array_like_keeps_the_order(rng, order):
    a = random_array(rng, 96 * 8, "float32").reshape(96, 8)
    a = np.asfortranarray(a) if order == "F" else a
    for like in (a, gpujit.to_device(a), gpujit.device_array_like(a)):
        d = gpujit.device_array_like(like)
        assert d.shape == (96, 8) and d.strides == a.strides, (type(like), d.strides)
        assert d.is_f_contiguous() == (order == "F") and d.is_c_contiguous() == (order == "C")
    out = gpujit.device_array_like(gpujit.to_device(a))
    launch(affine2, a.size, a, out)
    got = out.copy_to_host()
    assert got.flags.f_contiguous == (order == "F")
    np.testing.assert_array_equal(got, a * 2.0 + 1.0)


@gpujit.jit
def zero_d(x, r, v, shape):
    if gpujit.grid(1) == 0:
        r[()] = x[()] * 2.0 + v[()]
        shape[0] = len(x.shape) + len(r.shape) * 10 + x.ndim * 100 + x.size * 1000


@execution
def test_zero_d_arrays_are_arrays(rng):
    # numba: a 0-d array is an array indexed by (); a NumPy scalar stays a scalar
    x = np.array(rng.uniform(1, 2))
    r = np.array(np.nan)
    v = np.array(rng.integers(1, 100), np.int32)
    shape = poison(1, "int64")
    zero_d[1, 32](x, r, v, shape)
    assert r.shape == () and r[()] == x[()] * 2.0 + v[()]
    assert shape[0] == 1000
    d = gpujit.to_device(np.array(np.nan))
    assert d.shape == () and d.ndim == 0
    zero_d[1, 32](gpujit.to_device(x), d, v, shape)
    assert d.copy_to_host()[()] == x[()] * 2.0 + v[()]

    @gpujit.jit
    def scalar(s, out):
        out[0] = s * 2.0
    out = poison(1, "float64")
    scalar[1, 1](np.float64(1.25), out)    # a NumPy scalar is passed by value
    assert out[0] == 2.5


# ---- compile checks and diagnostics (no GPU needed) ---------------------------------------

KERNELS = [
    (affine1, "void(float64[::1], float64[::1])"),
    (affine2, "void(float64[::1, :], float64[:, :])"),
    (affine3, "void(float64[:, :, ::1], float64[::1, :, :])"),
    (affine4, "void(float64[:, :, :, :], float64[:, :, :, ::1])"),
    (negative_indices, "void(int64[::1], int64[:, ::1], int64[:, ::1])"),
    (attributes, "void(float32[:, :, :], int64[::1])"),
    (bool_logic, "void(bool[::1], bool[::1], bool[::1], int32[::1])"),
    (store_casts, "void(float64[::1], int64[::1], int32[::1], uint8[::1], int8[::1], "
                  "float32[::1], bool[::1])"),
    (augmented_2d, "void(float64[:, ::1], float64[:, ::1])"),
    (fill_2d, "void(float32[:, ::1], float32)"),
    (slice_sums, "void(int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
                 "int64[::1])"),
    (constant_slices, "void(int64[::1], int64[:, ::1])"),
    (views_2d, "void(int64[:, ::1], int64[:, ::1])"),
    (views_2d, "void(int64[::1, :], int64[:, ::1])"),
    (views_2d, "void(int64[:, :], int64[:, ::1])"),
    (row_writer, "void(float64[:, ::1], float64)"),
    (view_3d, "void(float64[:, :, ::1], float64[::1])"),
    (copy_negate, "void(float32[:, :], float32[:, :])"),
]


@pytest.mark.parametrize("kernel,sig", KERNELS,
                         ids=[f"{k.py_func.__name__}-{i}" for i, (k, _) in enumerate(KERNELS)])
def test_kernels_compile_and_ptxas_accepts(kernel, sig, ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(kernel.py_func, sig)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_contiguous_views_need_no_stride_loads():
    """b[i, :] of a C array is C: its elements are addressed without the
    stride parameter of the last axis (which PTX would load as a param)."""
    def row_sum(b, out):
        i = gpujit.grid(1)
        if i < out.size:
            row = b[i, :]
            s = 0.0
            for k in range(row.size):
                s += row[k]
            out[i] = s
    ptx, _ = gpujit.compile_ptx(row_sum, "void(float64[:, ::1], float64[::1])")
    assert "_param_4" not in ptx.split(".visible .entry")[1].split("{")[1]


def store_into_slice(a, b):
    a[2:10] = b[0]


def store_into_row(a, b):
    a[0] = b[0]


def newaxis_index(a, b):
    b[0] = a[None, 0]


def float_index(a, b):
    b[0] = a[1.5]


def zero_step(a, b):
    v = a[::0]
    b[0] = v[0]


def tuple_slice(a, b):
    t = (1, 2, 3)
    u = t[1:]
    b[0] = u[0]


def mixed_tuple_loop(a, b):
    for x in (1, 2.5, a):
        b[0] = x


@pytest.mark.parametrize("func,sig,exc,text,line", [
    (store_into_slice, "void(int32[::1], int32[::1])", gpujit.UnsupportedError,
     "assignment to a slice", 1),
    (store_into_row, "void(int32[:, ::1], int32[::1])", gpujit.UnsupportedError,
     "assignment to a slice", 1),
    (newaxis_index, "void(int32[::1], int32[::1])", gpujit.UnsupportedError, "newaxis", 1),
    (float_index, "void(int32[::1], int32[::1])", gpujit.TypingError,
     "must be an integer or a slice, not float", 1),
    (zero_step, "void(int32[::1], int32[::1])", gpujit.TypingError,
     "slice step cannot be zero", 1),
    (tuple_slice, "void(int32[::1], int32[::1])", gpujit.UnsupportedError,
     "slicing a tuple", 2),
    (mixed_tuple_loop, "void(int32[::1], int32[::1])", gpujit.UnsupportedError,
     "loop over a tuple needs items of one type", 1),
])
def test_unsupported_slicing_is_a_clear_error(func, sig, exc, text, line):
    with pytest.raises(exc) as info:
        gpujit.compile_ptx(func, sig)
    msg = str(info.value)
    assert text in msg, msg
    assert f":{func.__code__.co_firstlineno + line}:" in msg.splitlines()[0], msg
