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


# Kernels that LLVM 19's NVPTX backend or ptxas once compiled into wrong
# values (compiler/nvptx_fix.c; test_ptx.py checks their PTX).

def zero_sign_min_max(x, out):
    # Python keeps the first of equal values: max(-0.0, 0.0) is -0.0, which
    # PTX's max.f64 (the backend's choice for such a select) makes 0.0
    i = gpujit.grid(1)
    if i < x.size:
        out[i, 0] = max(-0.0, x[i])
        out[i, 1] = min(0.0, x[i])
        out[i, 2] = max(x[i], 0.0)
        out[i, 3] = min(x[i], -0.0)
        out[i, 4] = x[i] if x[i] > -0.0 else -0.0


def negated_bool_as_float(a, b, out):
    # -1.0 or 0.0: `sitofp i1`, which the backend made +1.0
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = -np.int32(a[i] ^ b[i]) * 1.5


def int16_abs_and_negation(a, out):
    # abs(-32768) and -(-32768) wrap to -32768; ptxas's abs.s16 and neg.s16
    # gave +32768 once widened
    i = gpujit.grid(1)
    if i < a.size:
        out[i, 0] = np.int32(abs(a[i]))
        out[i, 1] = np.int32(-a[i])


def floor_division_by_abs(a, out):
    # abs(INT_MIN) is INT_MIN, negative: ptxas took abs.s64 to be
    # non-negative and dropped the floor division's sign correction
    i = gpujit.grid(1)
    if i < a.size:
        out[i] = 1.0 // abs(a[i])


def min_of_a_negation(a, b, c, out):
    # ptxas folded the neg.s32 into a three-input minimum and lost it
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = min(a[i], -b[i], c[i])


def same_bits(got, want):
    """Floats equal bit for bit up to the nan payload: zeros by sign."""
    got, want = np.asarray(got), np.asarray(want)
    return bool(np.all((np.isnan(got) & np.isnan(want)) |
                       ((got == want) & (np.signbit(got) == np.signbit(want)))))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_min_max_of_zeros_keep_the_first_as_python(dtype):
    x = np.array([0.0, -0.0, 1.0, -1.0, np.nan], dtype)
    out = poison((x.size, 5), dtype)
    gpujit.jit(zero_sign_min_max)[1, 32](x, out)
    f = np.dtype(dtype).type
    want = [[max(f(-0.0), v), min(f(0.0), v), max(v, f(0.0)), min(v, f(-0.0)),
             v if v > -0.0 else f(-0.0)] for v in x]
    assert same_bits(out, np.array(want, dtype)), out


def test_a_negated_bool_converts_to_minus_one():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    out = poison(a.size, "float64")
    gpujit.jit(negated_bool_as_float)[1, 32](a, b, out)
    np.testing.assert_array_equal(out, [0.0, -1.5, -1.5, 0.0])


def test_int16_abs_and_negation_wrap():
    a = np.array([-32768, -32767, -5, 0, 7, 32767], np.int16)
    out = poison((a.size, 2), "int32")
    gpujit.jit(int16_abs_and_negation)[1, 32](a, out)
    with np.errstate(all="ignore"):
        want = [[np.int32(abs(v)), np.int32(-v)] for v in a]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_floor_division_by_abs_of_the_minimum(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min + 1, -3, 3, info.max], dtype)
    out = poison(a.size, "float64")
    gpujit.jit(floor_division_by_abs)[1, 32](a, out)
    with np.errstate(all="ignore"):
        want = [1.0 // abs(v) for v in a]
    np.testing.assert_array_equal(out, want)


def test_min_of_a_negation(rng):
    a, b, c = (random_array(rng, N, "int32", -100, 100) for _ in range(3))
    out = poison(N, "int32")
    gpujit.jit(min_of_a_negation)[(N + 127) // 128, 128](a, b, c, out)
    np.testing.assert_array_equal(out, np.minimum(np.minimum(a, -b), c))
