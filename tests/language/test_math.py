"""math, numpy and cmath functions, math constants and the numeric builtins
(abs, min, max, round, pow, divmod), against CPython/NumPy.

Tolerances: libdevice's functions are not correctly rounded.  The CUDA C
Programming Guide's table of maximum ulp errors ("Mathematical Functions",
CUDA Math API: e.g. sinf 2, tanf 4, powf 4, erfcf 4, tgammaf 5, lgammaf 6;
sin 2, pow 2, erfc 5, tgamma 10, lgamma 4) is copied into ULPS below, as
(float32, float64) pairs; a result may be that many ulps from the correctly
rounded value, plus 2 for the reference (float32 results are compared with
NumPy's float64 result rounded to float32; float64 ones with CPython's libm,
itself within 1 ulp).  sqrt, fabs, floor, ceil, trunc, copysign, fmod,
frexp and ldexp are exact.  Without a GPU only the compile checks run here.
"""
import cmath
import io
import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

N = 1000

# name: (math name, numpy name, nargs, domain, reference on float64 arrays, (ulps f32, f64))
def _vec(f):
    def safe(*xs):
        try:
            return f(*xs)
        except (ValueError, OverflowError):
            return math.nan
    return np.vectorize(safe, otypes=[np.float64])


# Where CPython's math raises (poles, -inf), a kernel cannot: it returns C99's
# value, as libdevice and libm do (C11 7.12.8.3-4, Annex F.10.5.3-4).
def _c99_gamma(x):
    if x == 0:
        return math.copysign(math.inf, x)
    if x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    return math.gamma(x)


def _c99_lgamma(x):
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


FUNCS = {
    "sqrt": ("sqrt", "sqrt", 1, (0, 1e4), np.sqrt, (0, 0)),
    "cbrt": ("cbrt", "cbrt", 1, (-1e4, 1e4), np.cbrt, (1, 1)),
    "exp": ("exp", "exp", 1, (-80, 80), np.exp, (2, 1)),
    "exp2": ("exp2", "exp2", 1, (-100, 100), np.exp2, (2, 1)),
    "expm1": ("expm1", "expm1", 1, (-10, 10), np.expm1, (1, 1)),
    "log": ("log", "log", 1, (1e-5, 1e5), np.log, (1, 1)),
    "log2": ("log2", "log2", 1, (1e-5, 1e5), np.log2, (1, 1)),
    "log10": ("log10", "log10", 1, (1e-5, 1e5), np.log10, (2, 1)),
    "log1p": ("log1p", "log1p", 1, (-0.9, 1e4), np.log1p, (1, 1)),
    "sin": ("sin", "sin", 1, (-100, 100), np.sin, (2, 2)),
    "cos": ("cos", "cos", 1, (-100, 100), np.cos, (2, 2)),
    "tan": ("tan", "tan", 1, (-1.5, 1.5), np.tan, (4, 2)),
    "asin": ("asin", "arcsin", 1, (-1, 1), np.arcsin, (2, 2)),
    "acos": ("acos", "arccos", 1, (-1, 1), np.arccos, (2, 2)),
    "atan": ("atan", "arctan", 1, (-100, 100), np.arctan, (2, 2)),
    "sinh": ("sinh", "sinh", 1, (-80, 80), np.sinh, (3, 2)),
    "cosh": ("cosh", "cosh", 1, (-80, 80), np.cosh, (2, 1)),
    "tanh": ("tanh", "tanh", 1, (-10, 10), np.tanh, (2, 1)),
    "asinh": ("asinh", "arcsinh", 1, (-1e4, 1e4), np.arcsinh, (3, 3)),
    "acosh": ("acosh", "arccosh", 1, (1, 1e4), np.arccosh, (4, 3)),
    "atanh": ("atanh", "arctanh", 1, (-0.99, 0.99), np.arctanh, (3, 2)),
    "erf": ("erf", None, 1, (-5, 5), _vec(math.erf), (2, 2)),
    "erfc": ("erfc", None, 1, (-5, 9), _vec(math.erfc), (4, 5)),
    "gamma": ("gamma", None, 1, (0.1, 30), _vec(_c99_gamma), (5, 10)),
    # float64: CPython's lgamma (a Lanczos sum, not the C library's) is itself a few ulps off
    "lgamma": ("lgamma", None, 1, (0.1, 1e3), _vec(_c99_lgamma), (6, 8)),
    "fabs": ("fabs", "fabs", 1, (-1e4, 1e4), np.fabs, (0, 0)),
    "radians": ("radians", "radians", 1, (-720, 720), np.radians, (1, 1)),
    "degrees": ("degrees", "degrees", 1, (-10, 10), np.degrees, (1, 1)),
    "pow": ("pow", "power", 2, (0.01, 10), np.power, (4, 2)),
    "atan2": ("atan2", "arctan2", 2, (-100, 100), np.arctan2, (3, 2)),
    "hypot": ("hypot", "hypot", 2, (-1e4, 1e4), np.hypot, (3, 2)),
    "copysign": ("copysign", "copysign", 2, (-100, 100), np.copysign, (0, 0)),
    "fmod": ("fmod", "fmod", 2, (-100, 100), np.fmod, (0, 0)),
}

EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan])


def kernel_for(ns, name, nargs):
    args = "a[i]" if nargs == 1 else "a[i], b[i]"
    src = ("def kernel(a, b, out):\n"
           "    i = gpujit.grid(1)\n"
           "    if i < out.size:\n"
           f"        out[i] = {ns}.{name}({args})\n")
    env = {"gpujit": gpujit, "math": math, "np": np, "cmath": cmath}
    exec(src, env)
    return env["kernel"]


def cases():
    for key, (mname, npname, *_rest) in FUNCS.items():
        for ns, name in (("math", mname), ("np", npname)):
            if name:
                yield pytest.param(key, ns, name, id=f"{ns}.{name}")


def check_ulps(got, want, dtype, ulps, floor=0.0):
    """got within `ulps` ulps (of dtype, at max(|want|, floor)) of want; nan and inf exactly.

    floor > 0 bounds the error absolutely near a function's zeros, where
    libraries guarantee an absolute, not a relative, error (lgamma at 1, 2)."""
    want = np.asarray(want, np.float64)
    got = np.asarray(got, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got[np.isnan(got) != np.isnan(want)],
                                                           want[np.isnan(got) != np.isnan(want)])
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = np.isfinite(want)
    allowed = ulps * np.spacing(np.maximum(np.abs(want[fin]), floor).astype(dtype)).astype(np.float64)
    err = np.abs(got[fin] - want[fin])
    bad = ~(err <= allowed)
    assert not bad.any(), (f"{bad.sum()} results off by more than {ulps} ulps, e.g. got "
                           f"{got[fin][bad][:5]} want {want[fin][bad][:5]}")


# ---- compile checks (run everywhere) -------------------------------------------------------

@pytest.mark.parametrize("key,ns,name", list(cases()))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_compiles_and_ptxas_accepts(key, ns, name, dtype, ptxas, tmp_path):
    sig = f"void({dtype}[:], {dtype}[:], {dtype}[:])"
    ptx, _ = gpujit.compile_ptx(kernel_for(ns, name, FUNCS[key][2]), sig)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def result_type(ns, name, nargs, dtype, other=None):
    src = f"def k(a, b):\n    y = {ns}.{name}({'a[0]' if nargs == 1 else 'a[0], b[0]'})\n"
    env = {"math": math, "np": np, "cmath": cmath}
    exec(src, env)
    out = io.StringIO()
    gpujit.jit(env["k"]).inspect_types(signature=f"void({dtype}[:], {other or dtype}[:])",
                                       file=out)
    line = [ln for ln in out.getvalue().splitlines() if ln.startswith("y: ")][0]
    return line[3:]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "float64"])
def test_result_types(dtype):
    wrong = []
    for key, (mname, npname, nargs, *_r) in FUNCS.items():
        x = np.ones(1, dtype)[0]
        if npname:
            with np.errstate(all="ignore"):
                want = getattr(np, npname)(*([x] * nargs)).dtype.name
            got = result_type("np", npname, nargs, dtype)
            if got != want:
                wrong.append(f"np.{npname}({dtype}): gpujit {got}, NumPy {want}")
        # math: float32 in gives float32 out (and float16); integers give float64
        want = dtype if dtype.startswith("float") else "float64"
        got = result_type("math", mname, nargs, dtype)
        if got != want:
            wrong.append(f"math.{mname}({dtype}): gpujit {got}, want {want}")
    assert not wrong, "\n".join(wrong)


REALS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64"]


@pytest.mark.parametrize("first", REALS)
def test_result_types_of_two_types(first):
    # NumPy's ufuncs cast each argument to the loop on its own:
    # np.copysign(uint8, int8) is float16, though uint8 and int8 promote to int16
    wrong = []
    for key, (mname, npname, nargs, *_r) in FUNCS.items():
        if not npname or nargs != 2:
            continue
        for second in REALS:
            with np.errstate(all="ignore"):
                want = getattr(np, npname)(np.ones(1, first)[0], np.ones(1, second)[0]).dtype.name
            got = result_type("np", npname, nargs, first, second)
            if got != want:
                wrong.append(f"np.{npname}({first}, {second}): gpujit {got}, NumPy {want}")
    assert not wrong, "\n".join(wrong)


def copysign_of_two_integer_types(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = np.copysign(a[i], b[i]) % 0.1


@pytest.mark.usefixtures("target")
def test_a_ufunc_of_two_integer_types_computes_in_numpys_loop(rng):
    # the fuzzer's seed 13, kernel 791: computed in float32, 1 % 0.1 was 1.5e-8, not
    # float16's 2.4e-4
    a = random_array(rng, N, "uint8", 0, 255)
    b = random_array(rng, N, "int8", -128, 127)
    out = poison(N, "float16")
    gpujit.jit(copysign_of_two_integer_types)[(N + 127) // 128, 128](a, b, out)
    with np.errstate(all="ignore"):
        want = np.array([np.copysign(x, y) % 0.1 for x, y in zip(a, b)])
    assert want.dtype == np.float16
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("expr,dtype,want", [
    ("math.floor(a[0])", "float32", "int64"), ("np.floor(a[0])", "float32", "float32"),
    ("np.floor(a[0])", "int16", "int16"), ("np.rint(a[0])", "int16", "float32"),
    ("np.rint(a[0])", "uint8", "float16"), ("np.rint(a[0])", "int64", "float64"),
    ("round(a[0])", "float32", "int64"),
    ("round(a[0], 2)", "float32", "float32"), ("math.isnan(a[0])", "float64", "bool"),
    ("math.frexp(a[0])", "float32", "tuple(float32, int64)"),
    ("np.frexp(a[0])", "float64", "tuple(float64, int32)"),
    ("math.ldexp(a[0], 3)", "float32", "float32"), ("divmod(a[0], 3)", "int8", "tuple(int8, int8)"),
    ("pow(a[0], 2)", "uint8", "uint8"), ("math.pi * a[0]", "float32", "float32"),
    ("math.pi", "float32", "float literal"), ("cmath.sqrt(a[0])", "float32", "complex64"),
    ("cmath.exp(a[0])", "complex128", "complex128"), ("cmath.phase(a[0])", "complex64", "float32"),
    ("cmath.polar(a[0])", "complex128", "tuple(float64, float64)"),
    ("np.sqrt(a[0])", "complex64", "complex64"), ("np.abs(a[0])", "complex64", "float32"),
    ("cmath.isnan(a[0])", "complex64", "bool"), ("cmath.rect(a[0], a[0])", "float32", "complex64"),
])
def test_function_types(expr, dtype, want):
    src = f"def k(a):\n    y = {expr}\n"
    env = {"math": math, "np": np, "cmath": cmath}
    exec(src, env)
    out = io.StringIO()
    gpujit.jit(env["k"]).inspect_types(signature=f"void({dtype}[:])", file=out)
    assert f"\ny: {want}\n" in out.getvalue()


def test_math_on_complex_is_a_typing_error():
    def k(a):
        a[0] = math.sqrt(a[1])
    with pytest.raises(gpujit.TypingError, match="use cmath"):
        gpujit.compile_ptx(k, "void(complex128[:])")


def test_imported_names_resolve():
    from math import pi, sin  # noqa: F401  (frozen globals of the kernel below)
    from numpy import float32

    def k(a):
        a[0] = sin(a[1]) + pi + float32(a[2])
    ptx, _ = gpujit.compile_ptx(k, "void(float32[:])")
    assert ".extern" not in ptx   # libdevice's sinf linked in, nothing left unresolved


def test_libdevice_is_pruned():
    def k(a):
        a[0] = math.sin(a[1])
    d = gpujit.jit(k)
    ir = d.inspect_llvm(signature="void(float32[:])")
    assert "__nv_cosf" not in ir and "__nv_expf" not in ir


# ---- execution --------------------------------------------------------------------------------

@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("key,ns,name", list(cases()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_function_values(rng, key, ns, name, dtype):
    _, _, nargs, (lo, hi), ref, ulps = FUNCS[key]
    a = random_array(rng, N, dtype, lo, hi)
    b = random_array(rng, N, dtype, lo, hi)
    # edge values: every pair of them (one-argument functions use a only)
    ea, eb = (EDGES, EDGES) if nargs == 1 else (np.repeat(EDGES, EDGES.size),
                                               np.tile(EDGES, EDGES.size))
    a = np.concatenate([a, ea.astype(dtype)])
    b = np.concatenate([b, eb.astype(dtype)])
    kernel = gpujit.jit(kernel_for(ns, name, nargs))
    out = poison(a.size, dtype)
    kernel[(a.size + 127) // 128, 128](a, b, out)
    with np.errstate(all="ignore"):
        want = ref(a.astype(np.float64), b.astype(np.float64)) if nargs == 2 \
            else ref(a.astype(np.float64))
    want = want.astype(dtype)   # correctly rounded to float32 (or the float64 itself)
    # lgamma crosses zero at 1 and 2: its error there is absolute (glibc's and
    # libdevice's documentation bound it relative to 1, not to the result)
    check_ulps(out, want, dtype, ulps[dtype == "float64"] + 2, 1.0 if name == "lgamma" else 0.0)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_radians_and_degrees_are_numpys(rng, dtype):
    # One multiplication by the constant rounded to the type, as NumPy's; float16
    # in float32, rounded once, as NumPy's float16 loops (the fuzzer found float16
    # multiplied in float16 by a float16 constant: a third of the results an ulp off).
    def k(a, out):
        i = gpujit.grid(1)
        if i < a.size:
            out[0, i] = math.radians(a[i])
            out[1, i] = np.degrees(a[i])
            out[2, i] = np.deg2rad(a[i])
            out[3, i] = math.degrees(a[i])
    a = random_array(rng, N, dtype, -300, 300)
    out = poison((4, N), dtype)
    gpujit.jit(k)[(N + 127) // 128, 128](a, out)
    for got, fn in zip(out, (np.radians, np.degrees, np.deg2rad, np.rad2deg)):
        np.testing.assert_array_equal(got, fn(a))


@pytest.mark.usefixtures("target")
def test_float16_keeps_float16(rng):
    def k(a, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = np.sin(a[i]) + np.exp(a[i] * 0.5)
    a = random_array(rng, N, "float16", -4, 4)
    out = poison(N, "float16")
    gpujit.jit(k)[(N + 127) // 128, 128](a, out)
    want = np.sin(a) + np.exp(a * np.float16(0.5))
    check_ulps(out, want, "float16", 2)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rounding_and_integers(rng, dtype):
    def k(a, f, c, t, r, r2, rn):
        i = gpujit.grid(1)
        if i < f.size:
            f[i] = math.floor(a[i])
            c[i] = math.ceil(a[i])
            t[i] = math.trunc(a[i])
            r[i] = round(a[i])
            r2[i] = round(a[i], 2)
            rn[i] = round(a[i], -1) + np.floor(a[i]) + np.rint(a[i])
    a = random_array(rng, N, dtype, -1000, 1000)
    a[:8] = [0.5, 1.5, 2.5, -0.5, -2.5, 2.675, 3.0, -0.0]
    outs = [poison(N, "int64") for _ in range(4)] + [poison(N, dtype) for _ in range(2)]
    gpujit.jit(k)[(N + 127) // 128, 128](a, *outs)
    np.testing.assert_array_equal(outs[0], [math.floor(float(x)) for x in a])
    np.testing.assert_array_equal(outs[1], [math.ceil(float(x)) for x in a])
    np.testing.assert_array_equal(outs[2], [math.trunc(float(x)) for x in a])
    np.testing.assert_array_equal(outs[3], [round(x) for x in a])          # half to even
    np.testing.assert_array_equal(outs[4], [round(x, 2) for x in a])       # NumPy scalars' round
    np.testing.assert_array_equal(outs[5], [round(x, -1) + np.floor(x) + np.rint(x) for x in a])


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype,values", [
    ("int64", [150, -250, 149, 2**53 + 1, 2**62 + 12345, -2**62 - 987, 9 * 10**18 + 50]),
    ("uint64", [150, 250, 2**63 + 58, 2**63 + 5000, 2**60 + 1, 12934493460]),
    ("int8", [-120, 120, 50, -50, 15, -15, 25]),
])
def test_round_of_an_integer_to_tens_is_numpys(dtype, values):
    # NumPy rounds an integer to a multiple of 10**k in float64 (x / 10**k, rint,
    # times 10**k): beyond 2**53 that is not exact, and gpujit's int64 arithmetic
    # gave other values, for uint64 beyond 2**63 not even multiples of 10**k
    # (2**63 + 58 became ...816; found by the fuzzer).
    def k(a, out):
        i = gpujit.grid(1)
        if i < a.size:
            out[0, i] = round(a[i], -1)
            out[1, i] = round(a[i], -2)
            out[2, i] = round(a[i], 3)
    a = np.array(values, dtype)
    out = poison((3, a.size), dtype)
    gpujit.jit(k)[1, 32](a, out)
    for got, nd in zip(out, (-1, -2, 3)):
        np.testing.assert_array_equal(got, [round(x, nd) for x in a])


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "int64", "float32", "float64"])
def test_divmod_pow_abs_min_max(rng, dtype):
    def k(a, b, q, r, p, m):
        i = gpujit.grid(1)
        if i < q.size:
            q[i], r[i] = divmod(a[i], b[i])
            p[i] = pow(a[i], 3)
            m[i] = min(a[i], b[i], 7) + max(a[i], b[i]) + abs(b[i])
    a = random_array(rng, N, dtype, -100, 100)
    b = random_array(rng, N, dtype, -100, 100)
    if np.dtype(dtype).kind in "iu":
        b[:5] = 0
    outs = [poison(N, dtype) for _ in range(4)]
    gpujit.jit(k)[(N + 127) // 128, 128](a, b, *outs)
    with np.errstate(all="ignore"):
        want = [np.array([divmod(x, y)[0] for x, y in zip(a, b)], dtype),
                np.array([divmod(x, y)[1] for x, y in zip(a, b)], dtype),
                np.array([pow(x, 3) for x, y in zip(a, b)], dtype),
                np.array([min(x, y, 7) + max(x, y) + abs(y) for x, y in zip(a, b)], dtype)]
    for got, w in zip(outs, want):
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(got, w, rtol=1e-6 if dtype == "float32" else 1e-15)
        else:
            np.testing.assert_array_equal(got, w)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_is_exact_where_the_power_is_a_float(rng, dtype):
    # libdevice's pow may be 2 ulp off, so pow(3, 1) could be 2.9999999999999996
    # and int() of it 2: where the exponent is an integer and the exact power
    # is a float, math.pow and ** give it exactly
    def k(x, y, p, q, n):
        i = gpujit.grid(1)
        if i < p.size:
            p[i] = math.pow(x[i], y[i])
            q[i] = x[i] ** y[i]
            n[i] = int(math.pow(x[i], y[i]))
    pairs = [(3, 1), (8, 7), (3, 33), (2, 52), (2, 53), (-3, 5), (-3, 4), (10, 15), (7, 18),
             (2, -3), (3, -1), (-2, -5), (1, 60), (-1, 63), (9, 9), (5, 22), (0.5, 3), (2.5, 2),
             (1e20, 1), (2.0 ** 60, 1), (-(2.0 ** 40), 3), (0.75, 11), (2, -120), (2, 100),
             (3 * 2.0 ** -30, 2), (3, 0.5), (0, 3), (np.nan, 2), (2, np.inf), (np.inf, 3)]
    while len(pairs) < N:
        if len(pairs) % 2:
            pairs.append((int(rng.integers(-300, 300)), int(rng.integers(-40, 40))))
        else:
            pairs.append((int(rng.integers(-60, 60)) * 2.0 ** int(rng.integers(-12, 12)),
                          int(rng.integers(-30, 30))))
    x = np.array([a for a, _ in pairs], dtype)
    y = np.array([b for _, b in pairs], dtype)
    p, q, n = poison(N, dtype), poison(N, dtype), poison(N, "int64")
    with np.errstate(all="ignore"):
        gpujit.jit(k)[(N + 127) // 128, 128](x, y, p, q, n)
    exact_count = 0
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        if not (math.isfinite(a) and math.isfinite(b) and a != 0 and b == int(b) and b != 0):
            continue
        ex = Fraction(a) ** int(b)
        with np.errstate(all="ignore"):
            want = np.array(float(ex) if abs(ex) < 2 ** 1024 else math.inf, dtype)
        if not np.isfinite(want) or Fraction(float(want)) != ex:
            continue                                 # not a float: within the library's ulps
        exact_count += 1
        assert p[i] == want and q[i] == want, (a, b, p[i], q[i], want)
        if abs(ex) < 2 ** 62:
            assert n[i] == int(ex), (a, b, n[i])
    assert exact_count > N // 10
    assert n[0] == 3 and n[1] == 2097152
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    tol = dict(rtol=2e-6, atol=1e-37) if dtype == "float32" else dict(rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(p, ref, **tol)          # subnormal results: atol
    np.testing.assert_allclose(q, ref, **tol)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_predicates_frexp_ldexp_constants(rng, dtype):
    def k(a, flags, m, e, back, c):
        i = gpujit.grid(1)
        if i < m.size:
            flags[i] = math.isnan(a[i]) * 1 + math.isinf(a[i]) * 2 + math.isfinite(a[i]) * 4
            m[i], e[i] = math.frexp(a[i])
            back[i] = math.ldexp(m[i], e[i])
            c[i] = a[i] * math.pi + math.e - math.tau + (math.inf if a[i] > 1e9 else 0.0)
    a = random_array(rng, N, dtype, -1e6, 1e6)
    a[:7] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3.0]
    flags, e = poison(N, "int64"), poison(N, "int64")
    m, back, c = poison(N, dtype), poison(N, dtype), poison(N, dtype)
    gpujit.jit(k)[(N + 127) // 128, 128](a, flags, m, e, back, c)
    np.testing.assert_array_equal(flags, np.isnan(a) * 1 + np.isinf(a) * 2 + np.isfinite(a) * 4)
    fm, fe = np.frexp(a)
    np.testing.assert_array_equal(m, fm)
    fin = np.isfinite(a)
    np.testing.assert_array_equal(e[fin], fe[fin])
    np.testing.assert_array_equal(back, np.ldexp(fm, fe))
    with np.errstate(all="ignore"):
        want = [x * math.pi + math.e - math.tau + (math.inf if x > 1e9 else 0.0) for x in a]
    np.testing.assert_allclose(c, np.array(want, dtype), rtol=1e-6 if dtype == "float32" else 1e-15)


CMATH = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh"]


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("name", CMATH)
@pytest.mark.parametrize("ns,dtype", [("cmath", "complex128"), ("np", "complex64"),
                                      ("np", "complex128")])
def test_complex_functions(rng, name, ns, dtype):
    src = ("def kernel(a, out):\n    i = gpujit.grid(1)\n    if i < out.size:\n"
           f"        out[i] = {ns}.{name}(a[i])\n")
    env = {"gpujit": gpujit, "cmath": cmath, "np": np}
    exec(src, env)
    a = random_array(rng, N, dtype, -3, 3)
    a[:6] = [1, -1, 1j, -1j, 2 + 0j, -4 + 0j]
    out = poison(N, dtype)
    gpujit.jit(env["kernel"])[(N + 127) // 128, 128](a, out)
    want = np.array([getattr(cmath, name)(complex(z)) for z in a], dtype)
    # textbook formulas from libdevice parts: a few ulps of the larger part
    rtol = 1e-5 if dtype == "complex64" else 1e-13
    scale = np.maximum(np.abs(want), 1e-30)
    err = np.abs(out.astype(np.complex128) - want.astype(np.complex128)) / scale
    assert (err <= rtol).all(), (a[err > rtol][:5], out[err > rtol][:5], want[err > rtol][:5])


INVERSE = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
           "acosh": "arccosh", "atanh": "arctanh"}


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("name", list(INVERSE))
@pytest.mark.parametrize("ns,dtype", [("cmath", "complex128"), ("np", "complex64"),
                                      ("np", "complex128")])
def test_complex_inverse_functions(rng, name, ns, dtype):
    fname = name if ns == "cmath" else INVERSE[name]
    src = ("def kernel(a, out):\n    i = gpujit.grid(1)\n    if i < out.size:\n"
           f"        out[i] = {ns}.{fname}(a[i])\n")
    env = {"gpujit": gpujit, "cmath": cmath, "np": np}
    exec(src, env)
    a = random_array(rng, N, dtype, -3, 3)
    a[:N // 4] *= 1e-3                           # near the branch points and 0
    a[N // 4:N // 2] *= 1e3
    a[N // 2:N // 2 + 8] = [1, -1, 1j, -1j, 0.5, -2, 2j + 1e-9, 1 + 1e-7j]
    out = poison(N, dtype)
    gpujit.jit(env["kernel"])[(N + 127) // 128, 128](a, out)

    def ref(z):
        try:
            return getattr(cmath, name)(z)
        except ValueError:     # a pole (atanh(1), atan(1j)): C99's inf, not compared
            return complex(math.nan, math.nan)
    want = np.array([ref(z) for z in a.astype(np.complex128).tolist()])
    # Kahan's formulas on libdevice's functions: a few ulps of the larger part
    rtol = 2e-6 if dtype == "complex64" else 1e-14
    scale = np.maximum(np.abs(want), 1e-30)
    err = np.abs(out.astype(np.complex128) - want) / scale
    err[np.isnan(want)] = 0
    assert (err <= rtol).all(), (a[err > rtol][:5], out[err > rtol][:5], want[err > rtol][:5])


SPECIAL = [-math.inf, -2.5, -0.0, 0.0, 2.5, math.inf, math.nan]
ANNEX_G = ["sqrt", "log", "log10", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh"] + list(INVERSE)


def cmath_ref(name, z):
    """CPython's cmath.<name>(z), with 3.14's values where older versions differ:
    tanh(+-0 + nan j) = +-0 + nan j (C11), so tan(nan +- 0j) = nan +- 0j, and
    acosh(+-0 + nan j) = nan + pi/2 j."""
    want = getattr(cmath, name)(z)
    if sys.version_info < (3, 14) and math.isnan(want.real) and math.isnan(want.imag):
        if name == "tanh" and z.real == 0 and math.isnan(z.imag):
            return complex(z.real, math.nan)
        if name == "tan" and math.isnan(z.real) and z.imag == 0:
            return complex(math.nan, z.imag)
        if name == "acosh" and z.real == 0 and math.isnan(z.imag):
            return complex(math.nan, math.pi / 2)
    return want


def same_float(got, want, rtol):
    """Equal as C99 Annex G means it: nan matches nan, zeros and infinities by sign."""
    if math.isnan(want):
        return math.isnan(got)
    if want == 0 or math.isinf(want):
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return abs(got - want) <= rtol * abs(want)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("name", ANNEX_G)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_special_values_follow_annex_g(name, dtype):
    # every pair of -inf, negative, -0, +0, positive, +inf and nan parts,
    # compared with CPython's cmath (C99 Annex G); pairs where CPython raises
    # (log(0), atanh(1)...) are C99's pole values, not compared here
    src = ("def kernel(a, out):\n    i = gpujit.grid(1)\n    if i < out.size:\n"
           f"        out[i] = cmath.{name}(a[i])\n")
    env = {"gpujit": gpujit, "cmath": cmath}
    exec(src, env)
    a = np.array([complex(x, y) for x in SPECIAL for y in SPECIAL], dtype)
    out = poison(a.size, dtype)
    gpujit.jit(env["kernel"])[1, 64](a, out)
    rtol = 1e-6 if dtype == "complex64" else 1e-15
    bad = []
    for z, got in zip(a.astype(np.complex128).tolist(), out.astype(np.complex128).tolist()):
        try:
            want = cmath_ref(name, z)
        except ValueError:
            continue
        if not (same_float(got.real, want.real, rtol) and same_float(got.imag, want.imag, rtol)):
            bad.append((z, got, want))
    assert not bad, bad[:6]


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("name", ["exp", "sinh", "cosh", "sin", "cos"])
def test_complex_functions_near_overflow(name):
    # e^710 overflows, e^710 cos(3) does not: CPython scales by e, so do we
    src = ("def kernel(a, out):\n    i = gpujit.grid(1)\n    if i < out.size:\n"
           f"        out[i] = cmath.{name}(a[i])\n")
    env = {"gpujit": gpujit, "cmath": cmath}
    exec(src, env)
    rot = name in ("sin", "cos")
    xy = ([(709.85, 2.0), (709.85, -2.0), (709.0, 3.0), (300.0, 1.0)] if name == "exp"
          else [(709.9, 3.0), (-709.9, 3.0), (710.2, -2.0), (-710.2, 1.0)])
    a = np.array([complex(y, x) if rot else complex(x, y) for x, y in xy])
    out = poison(a.size, "complex128")
    gpujit.jit(env["kernel"])[1, 32](a, out)
    want = np.array([getattr(cmath, name)(z) for z in a.tolist()])
    assert np.isfinite(want).all()
    np.testing.assert_allclose(out, want, rtol=1e-13)


@pytest.mark.usefixtures("target")
def test_cmath_phase_polar_rect_predicates(rng):
    def k(z, ph, r, back, flags):
        i = gpujit.grid(1)
        if i < ph.size:
            ph[i] = cmath.phase(z[i])
            r[i], p = cmath.polar(z[i])
            back[i] = cmath.rect(r[i], p)
            flags[i] = cmath.isnan(z[i]) * 1 + cmath.isinf(z[i]) * 2 + cmath.isfinite(z[i]) * 4
    z = random_array(rng, N, "complex128", -5, 5)
    z[:4] = [complex(np.nan, 1), complex(1, np.inf), -1 + 0j, complex(-1, -0.0)]
    ph, r, flags = poison(N, "float64"), poison(N, "float64"), poison(N, "int64")
    back = poison(N, "complex128")
    gpujit.jit(k)[(N + 127) // 128, 128](z, ph, r, back, flags)
    fin = np.isfinite(z)
    np.testing.assert_allclose(ph[fin], [cmath.phase(x) for x in z[fin]], rtol=1e-15)
    np.testing.assert_allclose(r[fin], np.abs(z[fin]), rtol=1e-15)
    np.testing.assert_allclose(back[fin], z[fin], rtol=1e-14)
    np.testing.assert_array_equal(flags, [cmath.isnan(x) * 1 + cmath.isinf(x) * 2 +
                                          cmath.isfinite(x) * 4 for x in z])
