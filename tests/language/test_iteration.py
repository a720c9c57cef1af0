"""Iteration in kernels beyond range: for over arrays (first axis), zip and
enumerate of ranges, tuples and arrays (zip stops at the shortest, nested
unpacking), the operator module's functions as calls equal to the
operators, and min/max of several scalars or of a tuple; each against the
same function run by CPython on random data."""
import operator
from operator import add, mul, lt, neg

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 77


def launch(kernel, *args, threads=None):
    out = args[-1]
    n = threads if threads is not None else out.shape[0]
    kernel[(n + 31) // 32, 32](*args)
    return out


# ---- for over arrays ------------------------------------------------------------


@gpujit.jit
def row_sums(m, out):
    i = gpujit.grid(1)
    if i < 1:
        k = 0
        for row in m:
            s = 0.0
            for v in row:
                s += v
            out[k] = s
            k += 1


def test_for_over_2d_array_rows_and_elements(rng):
    m = random_array(rng, 12 * 5, "float64").reshape(12, 5)
    got = launch(row_sums, m, poison(12, "float64"), threads=1)
    np.testing.assert_allclose(got, [sum(float(v) for v in row) for row in m], rtol=1e-12,
                               atol=1e-10)   # signed sums may cancel


@gpujit.jit
def write_rows(m, out):
    i = gpujit.grid(1)
    if i < 1:
        for row in out:      # rows are views: stores reach `out`
            for j in range(row.shape[0]):
                row[j] = m[0, j] * 2


def test_rows_of_an_argument_are_views_that_write_it(rng):
    m = random_array(rng, 6, "int32").reshape(1, 6)
    got = launch(write_rows, m, poison((4, 6), "int32"), threads=1)
    np.testing.assert_array_equal(got, np.repeat(m * 2, 4, axis=0))


# ---- enumerate ------------------------------------------------------------------


@gpujit.jit
def enumerate_array(a, out):
    i = gpujit.grid(1)
    if i < 1:
        for k, v in enumerate(a):
            out[k] = v * k


@gpujit.jit
def enumerate_start(a, out):
    i = gpujit.grid(1)
    if i < 1:
        for k, v in enumerate(a, 3):
            out[k - 3] = v + k
        for k, v in enumerate(a, start=-2):
            out[k + 2] += k


@gpujit.jit
def enumerate_range_tuple(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        t = (a[i], 2 * a[i], a[i] - 7)
        s = 0
        for k, v in enumerate(t):
            s += k * v
        for k, r in enumerate(range(i, i + 5, 2)):
            s += k * r
        out[i] = s


def test_enumerate_array(rng):
    a = random_array(rng, N, "float32")
    got = launch(enumerate_array, a, poison(N, "float32"), threads=1)
    np.testing.assert_array_equal(got, [np.float32(v) * np.float32(k) for k, v in enumerate(a)])


def test_enumerate_start_positional_and_keyword(rng):
    a = random_array(rng, N, "int64")
    got = launch(enumerate_start, a, poison(N, "int64"), threads=1)
    ref = np.empty(N, "int64")
    for k, v in enumerate(a, 3):
        ref[k - 3] = v + k
    for k, v in enumerate(a, start=-2):
        ref[k + 2] += k
    np.testing.assert_array_equal(got, ref)


def test_enumerate_tuple_and_range(rng):
    a = random_array(rng, N, "int64")
    got = launch(enumerate_range_tuple, a, poison(N, "int64"))
    ref = []
    for i, x in enumerate(a.tolist()):
        s = sum(k * v for k, v in enumerate((x, 2 * x, x - 7)))
        s += sum(k * r for k, r in enumerate(range(i, i + 5, 2)))
        ref.append(s)
    np.testing.assert_array_equal(got, ref)


# ---- zip ------------------------------------------------------------------------


@gpujit.jit
def zip_arrays(a, b, out):
    i = gpujit.grid(1)
    if i < 1:
        k = 0
        for x, y in zip(a, b):          # stops at the shorter, b
            out[k] = x * y
            k += 1
        out[out.size - 1] = k


@gpujit.jit
def zip_mixed(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        s = 0.0
        for r, t, v in zip(range(i, i + 10), (1.5, 2.5, 3.5, 4.5), a):
            s += r * t + v
        out[i] = s


@gpujit.jit
def enumerate_zip(a, b, out):
    i = gpujit.grid(1)
    if i < 1:
        for k, (x, y) in enumerate(zip(a, b)):
            out[k] = k + x - y


def test_zip_arrays_stops_at_the_shortest(rng):
    a = random_array(rng, N, "int32")
    b = random_array(rng, N - 10, "int32")
    out = poison(N, "int64")
    got = launch(zip_arrays, a, b, out, threads=1)
    ref = [int(x) * int(y) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got[:len(ref)], ref)
    assert got[-1] == len(ref)


def test_zip_of_range_tuple_and_array(rng):
    a = random_array(rng, 3, "float64")   # the shortest of the three
    got = launch(zip_mixed, a, poison(N, "float64"))
    ref = [sum(r * t + v for r, t, v in zip(range(i, i + 10), (1.5, 2.5, 3.5, 4.5), a))
           for i in range(N)]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-10)   # signed sums may cancel


def test_enumerate_of_zip_with_nested_unpacking(rng):
    a = random_array(rng, N, "float64")
    b = random_array(rng, N, "float64")
    got = launch(enumerate_zip, a, b, poison(N, "float64"), threads=1)
    np.testing.assert_array_equal(got, [k + x - y for k, (x, y) in enumerate(zip(a, b))])


@gpujit.jit
def zip_2d_rows(m, w, out):
    i = gpujit.grid(1)
    if i < 1:
        for k, (row, s) in enumerate(zip(m, w)):
            acc = 0
            for v in row:
                acc += v
            out[k] = acc * s


def test_zip_rows_of_a_2d_array(rng):
    m = random_array(rng, 8 * 3, "int64").reshape(8, 3)
    w = random_array(rng, 8, "int64")
    got = launch(zip_2d_rows, m, w, poison(8, "int64"), threads=1)
    np.testing.assert_array_equal(got, [int(row.sum()) * int(s) for row, s in zip(m, w)])


# ---- operator -------------------------------------------------------------------


@gpujit.jit
def operators(a, b, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = operator.add(x, y)
        out[i, 1] = operator.sub(x, y)
        out[i, 2] = mul(x, y)
        out[i, 3] = operator.truediv(x, y)
        out[i, 4] = operator.floordiv(x, y)
        out[i, 5] = operator.mod(x, y)
        out[i, 6] = neg(x)
        out[i, 7] = operator.pos(x)
        out[i, 8] = lt(x, y)
        out[i, 9] = operator.le(x, y)
        out[i, 10] = operator.eq(x, x)
        out[i, 11] = operator.ne(x, y)
        out[i, 12] = operator.gt(x, y)
        out[i, 13] = operator.ge(x, y)
        out[i, 14] = operator.abs(x)
        out[i, 15] = operator.not_(x)
        out[i, 16] = operator.truth(y)
        out[i, 17] = operator.pow(x, 2)


def py_operators(x, y):
    return [x + y, x - y, x * y, x / y, x // y, x % y, -x, +x, x < y, x <= y, x == x,
            x != y, x > y, x >= y, abs(x), not x, bool(y), x ** 2]


@gpujit.jit
def int_operators(a, b, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = operator.and_(x, y)
        out[i, 1] = operator.or_(x, y)
        out[i, 2] = operator.xor(x, y)
        out[i, 3] = operator.invert(x)
        out[i, 4] = operator.lshift(x, 3)
        out[i, 5] = operator.rshift(x, 2)
        out[i, 6] = add(x, 1)            # a weak literal stays weak, as in x + 1
        out[i, 7] = operator.inv(y)


def test_operator_module_on_floats(rng):
    a = random_array(rng, N, "float64")
    b = random_array(rng, N, "float64")
    b[b == 0] = 1.0
    got = launch(operators, a, b, poison((N, 18), "float64"))
    ref = [py_operators(float(x), float(y)) for x, y in zip(a, b)]
    np.testing.assert_allclose(got, np.array(ref, dtype="float64"), rtol=1e-15)


def test_operator_module_on_integers(rng):
    a = random_array(rng, N, "int32")
    b = random_array(rng, N, "int32")
    b[b == 0] = 3
    got = launch(int_operators, a, b, poison((N, 8), "int32"))
    ref = [[x & y, x | y, x ^ y, ~x, x << 3, x >> 2, x + 1, ~y]
           for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(got, np.array(ref, dtype="int32"))


def test_operator_floor_semantics_match_the_operators(rng):
    a = random_array(rng, N, "int64")
    b = random_array(rng, N, "int64", -5, 5)
    got = launch(operators, a.astype("float64"), b.astype("float64") + 0.5, poison((N, 18), "float64"))
    ref = [py_operators(float(x), float(y) + 0.5) for x, y in zip(a, b)]
    np.testing.assert_allclose(got, np.array(ref, dtype="float64"), rtol=1e-15)


# ---- min / max ------------------------------------------------------------------


@gpujit.jit
def minmax_many(a, b, c, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        x = a[i]
        y = b[i]
        z = c[i]
        out[i, 0] = min(x, y, z)
        out[i, 1] = max(x, y, z)
        t = (x, y, z, 0.5)
        out[i, 2] = min(t)
        out[i, 3] = max(t)
        out[i, 4] = max((y,))
        out[i, 5] = min(x, y, z, x - 1.0)


def test_min_max_of_several_scalars_and_of_a_tuple(rng):
    a, b, c = (random_array(rng, N, "float64") for _ in range(3))
    got = launch(minmax_many, a, b, c, poison((N, 6), "float64"))
    ref = [[min(x, y, z), max(x, y, z), min((x, y, z, 0.5)), max((x, y, z, 0.5)), max((y,)),
            min(x, y, z, x - 1.0)] for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())]
    np.testing.assert_array_equal(got, ref)


@gpujit.jit
def minmax_int_tuple(a, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        t = (a[i], a[i] * 3, 7)
        out[i, 0] = min(t)
        out[i, 1] = max(t)


def test_min_max_of_an_integer_tuple(rng):
    a = random_array(rng, N, "int32", -20, 20)
    got = launch(minmax_int_tuple, a, poison((N, 2), "int32"))
    ref = [[min(x, 3 * x, 7), max(x, 3 * x, 7)] for x in a.tolist()]
    np.testing.assert_array_equal(got, ref)


# ---- errors ---------------------------------------------------------------------


def test_errors_name_the_construct():
    def bad_iter(a, out):
        for v in 3.5:
            out[0] = v

    def bad_minmax(a, out):
        out[0] = min(a[0])

    def bad_start(a, out):
        for k, v in enumerate(a, 1.5):
            out[0] = v

    with pytest.raises(gpujit.UnsupportedError, match="iterating over"):
        gpujit.jit(bad_iter)[1, 1](np.zeros(3), np.zeros(3))
    with pytest.raises(gpujit.TypingError, match="non-empty tuple"):
        gpujit.jit(bad_minmax)[1, 1](np.zeros(3), np.zeros(3))
    with pytest.raises(gpujit.TypingError, match="start must be an integer"):
        gpujit.jit(bad_start)[1, 1](np.zeros(3), np.zeros(3))


def test_zip_and_enumerate_compile_to_ptx(ptxas, tmp_path):
    import subprocess
    ptx, _ = gpujit.compile_ptx(enumerate_zip, "void(float32[::1], float32[::1], float32[::1])")
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")], check=True)
