"""Every scalar type: NumPy 2 promotion (checked pair by pair, and the table in
docs/typing.md), arithmetic, wrap-around, casts through int()/float()/bool()/
complex() and NumPy's scalar constructors, bool arrays, float16, complex.

Typing checks run anywhere (inspect_types needs no GPU); execution checks
compare each element with the same expression evaluated by CPython on NumPy
scalars of the same dtypes, which is the semantics gpujit follows.
"""
import cmath
import io
import math
import os
import re
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array, ROOT

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
N = 500
ENV = {"gpujit": gpujit, "math": math, "cmath": cmath, "np": np}


def var_types(src, sig):
    """{local: type name} that gpujit infers for the kernel `src` (a def k(...))."""
    env = dict(ENV)
    exec(src, env)
    out = io.StringIO()
    gpujit.jit(env["k"]).inspect_types(signature=sig, file=out)
    types = {}
    for line in out.getvalue().splitlines()[1:]:
        if not line.strip():
            break
        name, _, ty = line.partition(": ")
        types[name] = ty
    return types


def gj_name(dtype):
    return np.dtype(dtype).name


# ---- promotion --------------------------------------------------------------------

def gpujit_promotion(ta, tb):
    return var_types("def k(a, b):\n    y = a[0] + b[0]\n", f"void({ta}[:], {tb}[:])")["y"]


def test_promotion_matches_numpy_for_every_pair():
    wrong = []
    for ta in DTYPES:
        for tb in DTYPES:
            want = np.result_type(ta, tb).name
            if ta == tb == "bool":
                want = "bool"   # bool + bool is logical or in NumPy
            got = gpujit_promotion(ta, tb)
            if got != want:
                wrong.append(f"{ta} + {tb}: gpujit {got}, NumPy {want}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("literal,pyvalue", [("1", 1), ("1.5", 1.5), ("1j", 1j)])
def test_weak_literals_follow_nep50(literal, pyvalue):
    for t in DTYPES:
        got = var_types(f"def k(a):\n    y = a[0] + {literal}\n", f"void({t}[:])")["y"]
        want = (np.zeros(1, t)[0] + pyvalue).dtype.name
        assert got == want, f"{t} + {literal}: gpujit {got}, NumPy {want}"


@pytest.mark.usefixtures("target")
def test_comparison_with_a_literal_the_type_cannot_hold():
    # NumPy 2 compares an integer with a Python int by value (np.uint8(3) > -1 is
    # True); converting the literal to uint8 would make it 255 (the fuzzer found it).
    cmps = ["u[i] > -1", "-1 < u[i]", "u[i] == -1", "u[i] != 300", "s[i] < 200", "s[i] >= -129",
            "w[i] > -1", "-5 >= w[i]", "w[i] != -1", "w[i] < 3", "q[i] > -1", "q[i] < 2**40"]
    src = "def k(u, s, w, q, out):\n    i = gpujit.grid(1)\n    if i < out.shape[0]:\n"
    src += "".join(f"        out[i, {j}] = {c}\n" for j, c in enumerate(cmps))
    env = dict(ENV)
    exec(src, env)
    u = np.array([0, 3, 255], np.uint8)
    s = np.array([-128, 0, 127], np.int8)
    w = np.array([0, 2, 2**64 - 1], np.uint64)
    q = np.array([0, -2**31, 2**31 - 1], np.int32)
    out = poison((3, len(cmps)), "bool")
    gpujit.jit(env["k"])[1, 32](u, s, w, q, out)
    for j, c in enumerate(cmps):
        want = [eval(c, {"u": u, "s": s, "w": w, "q": q, "i": i}) for i in range(3)]
        assert list(out[:, j]) == want, c


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("signed", ["int8", "int32", "int64"])
def test_signed_against_uint64_compares_by_value(signed, rng):
    """int64 and uint64 promote to float64, which rounds both above 2**53;
    NumPy 2 compares them by value (np.int64(2**63 - 1) < np.uint64(2**63)),
    and so does a kernel (the fuzzer found it)."""
    cmps = ["s[i] < u[i]", "s[i] <= u[i]", "s[i] == u[i]", "s[i] != u[i]", "s[i] > u[i]",
            "s[i] >= u[i]", "u[i] < s[i]", "u[i] == s[i]", "u[i] >= s[i]"]
    src = "def k(s, u, out):\n    i = gpujit.grid(1)\n    if i < out.shape[0]:\n"
    src += "".join(f"        out[i, {j}] = {c}\n" for j, c in enumerate(cmps))
    env = dict(ENV)
    exec(src, env)
    info = np.iinfo(signed)
    n = 400
    s = rng.integers(info.min, info.max, n, dtype=signed, endpoint=True)
    u = s.astype(np.uint64)                     # equal where s >= 0, huge where s < 0
    u[::4] += rng.integers(1, 3, u[::4].size).astype(np.uint64)    # just above
    u[1::4] -= rng.integers(0, 3, u[1::4].size).astype(np.uint64)  # at or just below
    u[2::8] = rng.integers(0, 2**64 - 1, u[2::8].size, dtype=np.uint64, endpoint=True)
    s[:4], u[:4] = [info.max, -1, info.max, info.min], [2**63, 2**64 - 1, info.max, 0]
    out = poison((n, len(cmps)), "bool")
    gpujit.jit(env["k"])[(n + 127) // 128, 128](s, u, out)
    for j, c in enumerate(cmps):
        want = [bool(eval(c, {"s": s, "u": u, "i": i})) for i in range(n)]
        bad = [i for i in range(n) if out[i, j] != want[i]]
        assert not bad, f"{c} at s={s[bad[0]]!r}, u={u[bad[0]]!r}: got {out[bad[0], j]}"


def promotion_table_markdown():
    """The promotion table that docs/typing.md must contain, made by NumPy."""
    short = {t: t.replace("complex", "c").replace("float", "f").replace("uint", "u")
             .replace("int", "i") for t in DTYPES}
    lines = ["| | " + " | ".join(short[t] for t in DTYPES) + " |",
             "|---" * (len(DTYPES) + 1) + "|"]
    for ta in DTYPES:
        row = []
        for tb in DTYPES:
            r = "bool" if ta == tb == "bool" else np.result_type(ta, tb).name
            row.append(short[r])
        lines.append(f"| **{short[ta]}** | " + " | ".join(row) + " |")
    return "\n".join(lines)


def test_promotion_table_in_docs_is_numpys():
    path = os.path.join(ROOT, "docs", "typing.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert promotion_table_markdown() in text, (
        "docs/typing.md's table differs from NumPy's; regenerate it with:\n"
        + promotion_table_markdown())


# ---- typing of conversions and constructors --------------------------------------------

@pytest.mark.parametrize("src", ["int8", "uint8", "float16", "float32", "float64", "complex64"])
def test_conversion_types(src):
    conv = ["int(a[0])", "float(a[0])", "bool(a[0])", "complex(a[0])"]
    conv += [f"np.{t}(a[0])" for t in DTYPES if t != "bool"] + ["np.bool_(a[0])"]
    if src.startswith("complex"):
        conv = ["bool(a[0])", "complex(a[0])", "np.complex64(a[0])", "np.complex128(a[0])"]
    body = "".join(f"    y{k} = {c}\n" for k, c in enumerate(conv))
    types = var_types("def k(a):\n" + body, f"void({src}[:])")
    x = np.ones(1, src)[0]
    for k, c in enumerate(conv):
        want = eval(c, dict(ENV, a=[x]))
        want = {int: "int64", float: "float64", bool: "bool", complex: "complex128"}.get(
            type(want), getattr(want, "dtype", None) and want.dtype.name)
        assert types[f"y{k}"] == want, c


def test_complex_attribute_types():
    types = var_types("def k(a, b):\n    r = a[0].real\n    i = a[0].imag\n    c = a[0].conjugate()\n"
                      "    m = abs(a[0])\n    f = b[0].imag\n    z = complex(b[0], 2)\n",
                      "void(complex64[:], float32[:])")
    assert types == {"a": "array(complex64, 1d, A)", "b": "array(float32, 1d, A)",
                     "r": "float32", "i": "float32", "c": "complex64", "m": "float32",
                     "f": "float32", "z": "complex128"}


def test_complex_ordering_is_a_typing_error():
    with pytest.raises(gpujit.TypingError, match="cannot be ordered"):
        var_types("def k(a):\n    y = a[0] < a[1]\n", "void(complex128[:])")
    with pytest.raises(gpujit.TypingError, match="not defined for complex"):
        var_types("def k(a):\n    y = a[0] // a[1]\n", "void(complex128[:])")


# ---- every dtype compiles and ptxas accepts it ---------------------------------------------

def every_op(a, b, s, out):
    i = gpujit.grid(1)
    if i < out.size:
        x = a[i] + b[i] * s - a[i] / (b[i] + s)
        out[i] = x if a[i] == b[i] else -x


def int_ops(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = (a[i] // b[i]) + (a[i] % b[i]) + (a[i] << 2) + (a[i] >> 1) + (a[i] & b[i]) + ~a[i]


@pytest.mark.parametrize("dtype", [t for t in DTYPES if t != "bool"])
def test_every_dtype_compiles(dtype, ptxas, tmp_path):
    ptxs = [gpujit.compile_ptx(every_op, f"void({dtype}[:], {dtype}[:], {dtype}, {dtype}[:])")[0]]
    if dtype in INTS:
        ptxs.append(gpujit.compile_ptx(int_ops, f"void({dtype}[:], {dtype}[:], {dtype}[:])")[0])
    for k, ptx in enumerate(ptxs):
        src = tmp_path / f"k{k}.ptx"
        src.write_text(ptx)
        proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_complex_scalar_parameter_is_passed_by_value():
    ptx, _ = gpujit.compile_ptx(every_op, "void(complex128[:], complex128[:], complex128, "
                                          "complex128[:])")
    assert re.search(r"\.param \.align 8 \.b8 \w+\[16\]", ptx), ptx[:2000]


# ---- execution -------------------------------------------------------------------------------

def make_kernel(expr, nargs=2):
    params = ", ".join("ab"[:nargs])
    src = (f"def kernel({params}, out):\n"
           "    i = gpujit.grid(1)\n"
           "    if i < out.size:\n"
           f"        out[i] = {expr}\n")
    env = dict(ENV)
    exec(src, env)
    ref = eval(f"lambda {params}: {expr.replace('a[i]', 'a').replace('b[i]', 'b')}", env)
    # contract=False: these tests check typing against NumPy's rounding, and
    # a fused a * 3 + 1 near -1/3 cancels to a result far (relatively) from it
    return gpujit.jit(contract=False)(env["kernel"]), ref


def reference(fn, out_dtype, *arrays):
    out = np.empty(arrays[0].size, out_dtype)
    with np.errstate(all="ignore"):
        for k in range(out.size):
            out[k] = fn(*(a[k] for a in arrays))
    return out


def result_dtype(fn, *values):
    """The dtype of fn's result for these values, as NumPy computes it (its
    overflow warnings silenced: the kernels wrap as NumPy does)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*values)).dtype


def launch(kernel, out_dtype, *arrays):
    out = poison(arrays[0].size, out_dtype)
    kernel[(out.size + 127) // 128, 128](*arrays, out)
    return out


def edge_values(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([0, 1, 2, info.max, info.max - 1, info.min, info.min + 1, 100, 3], dtype)
    if dtype.kind == "f":
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e4], dtype)
    if dtype.kind == "c":
        return np.array([0, 1, -1j, 1 + 1j, 3 - 4j, complex(np.inf, 0), 1e3 + 1e-3j], dtype)
    return np.array([True, False])


def inputs(rng, dtype):
    """Random values, then every pair of edge values."""
    a = random_array(rng, N, dtype, -100, 100)
    b = random_array(rng, N, dtype, -100, 100)
    e = edge_values(dtype)
    return np.concatenate([a, np.repeat(e, e.size)]), np.concatenate([b, np.tile(e, e.size)])


def assert_close(got, want, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        part = dtype.itemsize if dtype.kind == "f" else dtype.itemsize // 2
        rtol = {2: 1e-3, 4: 1e-6, 8: 1e-14}[part]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [t for t in DTYPES if t != "bool"])
@pytest.mark.parametrize("expr", ["a[i] + b[i]", "a[i] - b[i]", "a[i] * b[i]", "-a[i]",
                                  "a[i] // b[i]", "a[i] % b[i]", "a[i] / b[i]",
                                  "abs(a[i])", "a[i] == b[i]", "a[i] != b[i]", "a[i] < b[i]",
                                  "a[i] * 3 + 1"])
def test_arithmetic_every_dtype(rng, dtype, expr):
    kernel, fn = make_kernel(expr)
    if dtype.startswith("complex") and any(op in expr for op in ("//", "%", "<")):
        # NumPy defines no //, % or ordering for complex numbers: refused when typing.
        with pytest.raises(gpujit.TypingError):
            gpujit.compile_ptx(kernel.py_func, f"void({dtype}[:], {dtype}[:], float64[:])")
        return
    a, b = inputs(rng, dtype)
    want = reference(fn, result_dtype(fn, a[0], b[0]), a, b)
    got = launch(kernel, want.dtype, a, b)
    if want.dtype.kind == "f" and dtype.startswith("float16"):
        np.testing.assert_array_equal(got, want)   # float16: computed in float32, rounded once
    else:
        assert_close(got, want, want.dtype)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", INTS)
def test_integers_wrap_around(rng, dtype):
    info = np.iinfo(dtype)
    kernel, fn = make_kernel("a[i] + b[i] * b[i] - a[i] * 7")
    a = np.concatenate([random_array(rng, N, dtype, info.min, info.max),
                        np.array([info.max, info.min, info.max, 200 % (info.max + 1)], dtype)])
    b = np.concatenate([random_array(rng, N, dtype, info.min, info.max),
                        np.array([1, info.max, info.min, 100], dtype)])
    want = reference(fn, dtype, a, b)
    np.testing.assert_array_equal(launch(kernel, dtype, a, b), want)


@pytest.mark.usefixtures("target")
def test_uint8_wraps_at_8_bits_and_converts_as_numpy():
    kernel, _ = make_kernel("float(a[i] + b[i]) + a[i] * 1000.0")
    a = np.array([200, 255, 0], np.uint8)
    b = np.array([100, 1, 0], np.uint8)
    got = launch(kernel, "float64", a, b)
    np.testing.assert_array_equal(got, [44.0 + 200000.0, 0.0 + 255000.0, 0.0])


CONVERSIONS = ["int(a[i])", "float(a[i])", "bool(a[i])", "complex(a[i], b[i])",
               "np.int8(a[i])", "np.int16(a[i])", "np.int32(a[i])", "np.int64(a[i])",
               "np.uint8(a[i])", "np.uint16(a[i])", "np.uint32(a[i])", "np.uint64(a[i])",
               "np.float16(a[i])", "np.float32(a[i])", "np.float64(a[i])",
               "np.complex64(a[i])", "np.complex128(a[i])", "np.bool_(a[i])"]


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("src", ["bool", "int8", "int64", "uint8", "uint64", "float16",
                                 "float32", "float64"])
@pytest.mark.parametrize("conv", CONVERSIONS)
def test_conversions(rng, src, conv):
    if src.startswith("float") and re.match(r"(int\(|np\.u?int)", conv):
        lo, hi = -100, 100   # floats to integers: in range (C's rule elsewhere)
        if "uint" in conv:
            lo = 0
    else:
        lo, hi = -1000, 1000
    kernel, fn = make_kernel(conv)
    a = random_array(rng, N, src, lo, hi)
    b = random_array(rng, N, src, lo, hi)
    if src in INTS:   # wrap-around of narrowing and sign changes
        info = np.iinfo(src)
        a[:4] = [info.max, info.min, info.max - 7, 200 if info.max >= 200 else 100]
    want = reference(fn, result_dtype(fn, a[0], b[0]), a, b)
    got = launch(kernel, want.dtype, a, b)
    np.testing.assert_array_equal(got, want)


@gpujit.jit
def _float_to_int_out_of_range(x, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        out[i, 0] = int(x[i]) % 5
        out[i, 1] = np.int32(math.nan) & 3
        count = 0
        for _ in range(np.int16(x[i]) & 3):
            count += 1
        out[i, 2] = count
        out[i, 3] = 7 if int(math.inf) == int(math.inf) else 8


@pytest.mark.usefixtures("target")
def test_float_to_int_out_of_range_is_some_value():
    # docs/typing.md: nan, inf and floats out of an integer type's range convert
    # to an unspecified value.  LLVM's fptosi gives poison for them, and a store,
    # a branch or a divisor that depends on poison is undefined behaviour: O3
    # dropped these stores, and made an endless loop of a kernel the fuzzer
    # found (tests/fuzz).  Whatever the value, what follows must hold for it.
    x = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 3.0])
    out = np.full((x.size, 4), -1, np.int64)
    _float_to_int_out_of_range[1, 32](x, out)
    assert ((0 <= out[:, 0]) & (out[:, 0] < 5)).all(), out
    assert ((0 <= out[:, 1:3]) & (out[:, 1:3] <= 3)).all(), out
    assert (out[:, 3] == 7).all() and out[5, 0] == 3 and out[5, 2] == 3, out


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("expr", ["a[i] and not b[i]", "a[i] & b[i]", "a[i] | b[i]",
                                  "a[i] ^ b[i]", "a[i] + b[i]", "a[i] * b[i]",
                                  "a[i] == b[i]", "~a[i]"])
def test_bool_arrays(rng, expr):
    kernel, fn = make_kernel(expr)
    a = rng.random(N) < 0.5
    b = rng.random(N) < 0.5
    want = reference(fn, "bool", a, b)
    out = np.ones(N, bool)
    out[::2] = False
    kernel[(N + 127) // 128, 128](a, b, out)
    np.testing.assert_array_equal(out, want)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("expr", ["a[i] * b[i] + a[i] / b[i]", "a[i] ** 2 - b[i] ** 3",
                                  "a[i].conjugate() * 1j", "complex(a[i].imag, a[i].real)",
                                  "abs(a[i]) + b[i].real", "a[i] ** b[i]", "a[i] ** 0.5",
                                  "a[i] + 2.5", "(a[i] == b[i]) + (a[i] != a[i])"])
def test_complex_arithmetic(rng, dtype, expr):
    kernel, fn = make_kernel(expr)
    a = random_array(rng, N, dtype, -3, 3)
    b = random_array(rng, N, dtype, -3, 3)
    b[:3] = [0, 1, -2]
    a[:3] = [0, 2j, 1]
    want = reference(fn, result_dtype(fn, a[0], b[0]), a, b)
    got = launch(kernel, want.dtype, a, b)
    # ** goes through exp(b log a) (NumPy's cpow uses the same identity, in another order)
    rtol = (1e-4 if dtype == "complex64" else 1e-12) if "**" in expr else None
    if "abs(" in expr:
        # abs is hypot (a few ulps); the sum with b.real can cancel, so bound
        # the error by the size of the terms, not of the result.
        eps = 4 * np.finfo(np.complex64 if dtype == "complex64" else np.complex128).eps
        scale = np.abs(a).astype(np.float64) + np.abs(b.real).astype(np.float64)
        assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= eps * scale)
    elif rtol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        assert_close(got, want, want.dtype)


@pytest.mark.usefixtures("target")
def test_complex_scalar_argument(rng):
    kernel, fn = make_kernel("a[i] * b", nargs=2)
    a = random_array(rng, N, "complex128")
    got = launch(kernel, "complex128", a, 2 - 3j)
    np.testing.assert_allclose(got, a * (2 - 3j), rtol=1e-15)


@pytest.mark.usefixtures("target")
def test_complex_power_follows_numpy_exactly():
    # npy_cpow: b == 0 gives 1, a zero base 0 for b.real > 0 (else nan), an
    # integral exponent below 100 a product (so (1+1j)**2 is exactly 2j).
    pairs = [(0j, 1 + 2j), (0j, -1 + 0j), (0j, 0j), (1 + 1j, 2 + 0j), (1 + 1j, -3 + 0j),
             (complex("inf"), 2 + 0j), (complex("nan+1j"), 1 + 0j), (1 + 1j, 7 + 0j),
             (0.5 - 2j, -13 + 0j)]
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    kernel, _ = make_kernel("a[i] ** b[i]")
    got = launch(kernel, "complex128", a, b)
    with np.errstate(all="ignore"):
        want = a ** b
    np.testing.assert_array_equal(got, want)


def complex_from_parts(re_, im_, out64, out128, outpy):
    i = gpujit.grid(1)
    if i < re_.size:
        out64[i] = np.complex64(re_[i], im_[i])
        out128[i] = np.complex128(re_[i], im_[i] * 2)
        outpy[i] = complex(re_[i], im_[i])


@pytest.mark.usefixtures("target")
def test_complex_types_take_real_and_imaginary_parts(rng):
    re_ = random_array(rng, 300, "float64")
    im_ = random_array(rng, 300, "float32")
    outs = [poison(300, "complex64"), poison(300, "complex128"), poison(300, "complex128")]
    gpujit.jit(complex_from_parts)[3, 128](re_, im_, *outs)
    np.testing.assert_array_equal(outs[0], [np.complex64(a, b) for a, b in zip(re_, im_)])
    np.testing.assert_array_equal(outs[1], [np.complex128(a, b * 2) for a, b in zip(re_, im_)])
    np.testing.assert_array_equal(outs[2], [complex(a, b) for a, b in zip(re_, im_)])


def test_complex_type_with_three_arguments_is_a_typing_error():
    with pytest.raises(gpujit.TypingError, match="complex64"):
        gpujit.compile_ptx(lambda a: np.complex64(a[0], a[1], a[2]), "void(float32[:])")
