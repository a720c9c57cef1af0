"""Arithmetic on the GPU against NumPy 2 scalar semantics (NEP 50).

Each kernel applies one Python expression per element; the reference runs
the same expression in CPython on NumPy scalars of the same dtypes, which is
exactly the semantics gpujit follows (weak literals, floor division and
modulo with the divisor's sign, integer division by zero giving 0).
"""
import math

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 1000
INT_TYPES = ["int32", "int64"]
FLOAT_TYPES = ["float32", "float64"]


def reference(fn, out_dtype, *arrays):
    out = np.empty(arrays[0].size, out_dtype)
    with np.errstate(all="ignore"):
        for k in range(out.size):
            out[k] = fn(*(a[k] for a in arrays))
    return out


def make_binary(expr, **options):
    src = (
        "def kernel(a, b, out):\n"
        "    i = gpujit.grid(1)\n"
        "    if i < out.size:\n"
        f"        out[i] = {expr}\n"
    )
    env = {"gpujit": gpujit, "math": math}
    exec(src, env)
    return gpujit.jit(env["kernel"], **options), eval(f"lambda a, b: {expr.replace('a[i]', 'a').replace('b[i]', 'b')}", env)


def run(kernel, out_dtype, *arrays):
    out = poison(arrays[0].size, out_dtype)
    kernel[(out.size + 127) // 128, 128](*arrays, out)
    return out


def check(got, want, dtype):
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", INT_TYPES + FLOAT_TYPES)
@pytest.mark.parametrize("expr", ["a[i] + b[i]", "a[i] - b[i]", "a[i] * b[i]", "a[i] // b[i]",
                                  "a[i] % b[i]", "-a[i] + 3", "abs(a[i]) - b[i]",
                                  "min(a[i], b[i])", "max(a[i], b[i], 7)"])
def test_binary_ops_same_dtype(rng, dtype, expr):
    kernel, fn = make_binary(expr)
    a = random_array(rng, N, dtype)
    b = random_array(rng, N, dtype)
    if "//" in expr or "%" in expr:
        b[::17] = 0  # integer division by zero gives 0 (NumPy); floats give inf/nan
    want = reference(fn, np.result_type(dtype, dtype), a, b)
    got = run(kernel, want.dtype, a, b)
    check(got, want, want.dtype.name)


@pytest.mark.parametrize("dtype", FLOAT_TYPES + INT_TYPES)
def test_true_division(rng, dtype):
    kernel, fn = make_binary("a[i] / b[i]")
    a = random_array(rng, N, dtype)
    b = random_array(rng, N, dtype)
    b[b == 0] = 3
    want = reference(fn, "float64" if dtype.startswith("int") else dtype, a, b)
    got = run(kernel, want.dtype, a, b)
    check(got, want, want.dtype.name)


@pytest.mark.parametrize("ta,tb", [("float32", "int64"), ("int32", "float32"), ("int32", "int64"),
                                   ("float32", "float64"), ("int64", "float64")])
def test_mixed_dtypes_promote_like_numpy(rng, ta, tb):
    # contract=False: NumPy's rounding exactly, so only the promotion can differ
    kernel, fn = make_binary("a[i] * b[i] + a[i]", contract=False)
    a = random_array(rng, N, ta, -100, 100)
    b = random_array(rng, N, tb, -100, 100)
    out_dtype = np.result_type(ta, tb)
    want = reference(fn, out_dtype, a, b)
    # Store into a float64 buffer so the test sees the precision the kernel computed in.
    got = run(kernel, "float64", a, b)
    check(got.astype(out_dtype), want, out_dtype.name)


def test_weak_float_literal_keeps_float32(rng):
    # x * 0.1 in float32 differs from the float64 product rounded to float32;
    # contract=False rounds each operation as NumPy does, so equality is exact.
    kernel, fn = make_binary("a[i] * 0.1 + b[i] * 0.3", contract=False)
    a = random_array(rng, N, "float32")
    b = random_array(rng, N, "float32")
    want = reference(fn, "float32", a, b)
    got = run(kernel, "float64", a, b)
    assert np.all(got == want.astype(np.float64)), "float32 arithmetic expected (NEP 50 weak literals)"


def test_int32_wraps_on_overflow(rng):
    kernel, fn = make_binary("a[i] * b[i] + 2147483647")
    a = random_array(rng, N, "int32", -(1 << 30), 1 << 30)
    b = random_array(rng, N, "int32", -(1 << 30), 1 << 30)
    want = reference(fn, "int32", a, b)
    got = run(kernel, "int32", a, b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_power(rng, dtype):
    kernel, fn = make_binary("a[i] ** 2 + a[i] ** 3 - b[i] ** 2")
    a = random_array(rng, N, dtype, -50, 50)
    b = random_array(rng, N, dtype, -50, 50)
    want = reference(fn, dtype, a, b)
    got = run(kernel, dtype, a, b)
    if dtype == "float32":
        # x**3 may round differently from NumPy's pow; the sum then cancels.
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-2)
    elif dtype == "float64":
        # Likewise in float64: terms up to 50**3 differ by an ulp (~1e-11) and
        # can cancel to a small sum, so the error is absolute, not relative.
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-9)
    else:
        check(got, want, dtype)


def test_float_power_non_integer(rng):
    kernel, fn = make_binary("abs(a[i]) ** b[i]")
    a = random_array(rng, N, "float64", -4, 4)
    b = random_array(rng, N, "float64", -3, 3)
    want = reference(fn, "float64", a, b)
    got = run(kernel, "float64", a, b)
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("expr", ["a[i] < b[i]", "a[i] <= b[i]", "a[i] == b[i]", "a[i] != b[i]",
                                  "a[i] > b[i]", "a[i] >= b[i]"])
def test_comparisons(rng, expr):
    kernel, fn = make_binary(f"1 if {expr} else 0")
    a = random_array(rng, N, "int32", -5, 5)
    b = random_array(rng, N, "int32", -5, 5)
    want = reference(fn, "int64", a, b)
    got = run(kernel, "int64", a, b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_math_functions_keep_float_width(rng, dtype):
    kernel, _ = make_binary("math.sqrt(abs(a[i])) + math.fabs(b[i])")
    a = random_array(rng, N, dtype, -100, 100)
    b = random_array(rng, N, dtype, -100, 100)
    want = reference(lambda x, y: np.sqrt(abs(x)) + np.abs(y), dtype, a, b)
    got = run(kernel, "float64", a, b)   # float64 buffer: shows the width computed in
    assert np.all(got == want.astype(np.float64))


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_floor_ceil_return_integers(rng, dtype):
    kernel, fn = make_binary("math.floor(a[i]) * 1000 + math.ceil(b[i])")
    a = random_array(rng, N, dtype, -100, 100)
    b = random_array(rng, N, dtype, -100, 100)
    want = reference(fn, "int64", a, b)
    got = run(kernel, "int64", a, b)
    np.testing.assert_array_equal(got, want)


def test_float_edge_values():
    kernel, fn = make_binary("a[i] // b[i] + a[i] % b[i]")
    vals = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 7.0, -7.0], np.float64)
    a = np.repeat(vals, vals.size)
    b = np.tile(vals, vals.size)
    want = reference(fn, "float64", a, b)
    got = run(kernel, "float64", a, b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_int_floor_semantics_edges(dtype):
    kernel, fn = make_binary("a[i] // b[i] * 1000 + a[i] % b[i]")
    vals = np.array([0, 1, -1, 7, -7, 3, -3, 100, -100], dtype)
    a = np.repeat(vals, vals.size)
    b = np.tile(vals, vals.size)
    want = reference(fn, dtype, a, b)
    got = run(kernel, dtype, a, b)
    np.testing.assert_array_equal(got, want)
