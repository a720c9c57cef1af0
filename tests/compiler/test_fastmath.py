"""fastmath as numba's: True (numba's {'fast'}) is numba-cuda's fast math,
a set or dict of numba's flag names picks LLVM's fast-math flags one by one.

On the PTX: with fastmath=True float32 division, sqrt and tanh are the
approximate instructions (div.approx.ftz.f32, sqrt.approx.ftz.f32,
tanh.approx.f32 from sm_75), sin, cos, tan, exp, log, log2, log10 and pow
are libdevice's __nv_fast_* (sin.approx, cos.approx, ex2.approx,
lg2.approx), and every float32 instruction flushes denormals (.ftz), as in
numba-cuda's own tests; without it, IEEE: div.rn, sqrt.rn, no .ftz.  'arcp'
alone gives the approximate division, 'afn' alone the approximate
functions, neither flushes.  On the results (the CPU target, and the GPU
where there is one): within the errors CUDA documents for its fast
intrinsics.
"""
import math
import re
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

F32 = "void(float32[:], float32[:], float32[:])"
F64 = "void(float64[:], float64[:], float64[:])"


def kernel(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] / y[i] + math.sqrt(x[i]) + x[i] * y[i] + out[i]


def ops(ptx, width):
    return set(re.findall(rf"\b((?:div|sqrt|fma|add|mul|rcp|tanh)(?:\.\w+)*\.f{width})\b", ptx))


# ---- PTX: arithmetic -----------------------------------------------------------------------

def test_fastmath_float32_ptx():
    ptx, _ = gpujit.compile_ptx(kernel, F32, fastmath=True)
    found = ops(ptx, 32)
    assert "div.approx.ftz.f32" in found and "sqrt.approx.ftz.f32" in found, found
    assert any(op.startswith("fma.rn") for op in found), found
    assert all(".ftz" in op for op in found), found       # flush-to-zero everywhere
    assert "div.rn" not in ptx and "sqrt.rn" not in ptx


def test_default_float32_is_ieee():
    ptx, _ = gpujit.compile_ptx(kernel, F32)
    found = ops(ptx, 32)
    assert {"div.rn.f32", "sqrt.rn.f32", "fma.rn.f32"} <= found, found   # fma: contraction
    assert not any(".ftz" in op or ".approx" in op for op in found), found
    plain, _ = gpujit.compile_ptx(kernel, F32, contract=False)
    assert not any(op.startswith("fma") for op in ops(plain, 32)), ops(plain, 32)


def test_fastmath_float64_keeps_ieee_division_and_sqrt():
    # numba-cuda's fast division and sqrt are float32's (NVVM's -prec-div, -prec-sqrt)
    ptx, _ = gpujit.compile_ptx(kernel, F64, fastmath=True)
    assert "fma.rn.f64" in ptx and "div.rn.f64" in ptx and "sqrt.rn.f64" in ptx
    assert ".approx" not in ptx and ".ftz" not in ptx


def test_fastmath_libdevice_uses_ftz_variants():
    def k(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = math.atan(x[i]) * math.expm1(x[i])   # no __nv_fast_ variants
    fast, _ = gpujit.compile_ptx(k, "void(float32[:], float32[:])", fastmath=True)
    ieee, _ = gpujit.compile_ptx(k, "void(float32[:], float32[:])")
    # nvvm-reflect-ftz=1 picks libdevice's flushing paths
    arith_ftz = re.compile(r"\b(?:mul|add|sub|fma)(?:\.rn)?\.ftz\.f32")
    assert arith_ftz.search(fast) and not arith_ftz.search(ieee)


def test_division_by_a_constant_multiplies():
    def k(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] / 3.0
    ptx, _ = gpujit.compile_ptx(k, "void(float32[:], float32[:])", fastmath=True)
    # x * (1/3): arcp (LLVM 21 spells the multiply mul.ftz.f32)
    assert "div." not in ptx and re.search(r"mul(\.rn)?\.ftz\.f32", ptx)


# ---- PTX: the fast functions, as numba-cuda's test_fastmath checks them --------------------

def unary_kernel(op):
    def k(r, x):
        r[0] = op(x)
    return k


def unary_device(op):
    def d(x):
        return op(x)
    return d


FAST_UNARY = [   # (function, in the fast PTX, absent from the precise PTX)
    (math.cos, ["cos.approx.ftz.f32 "], ["cos.approx.ftz.f32 "]),
    (math.sin, ["sin.approx.ftz.f32 "], ["sin.approx.ftz.f32 "]),
    (math.tan, ["sin.approx.ftz.f32 ", "cos.approx.ftz.f32 ", "div.approx.ftz.f32 "],
     ["sin.approx.ftz.f32 "]),
    (math.log, ["lg2.approx.ftz.f32 ", "0f3F317218"], ["lg2.approx.ftz.f32 "]),   # ln 2
    (math.log10, ["lg2.approx.ftz.f32 ", "0f3E9A209B"], ["lg2.approx.ftz.f32 "]),  # log10 2
    (math.log2, ["lg2.approx.ftz.f32 "], ["lg2.approx.ftz.f32 "]),
    (math.sqrt, ["sqrt.approx.ftz.f32 "], ["sqrt.approx"]),
]


@pytest.mark.parametrize("fn, fast_has, precise_lacks", FAST_UNARY,
                         ids=[row[0].__name__ for row in FAST_UNARY])
@pytest.mark.parametrize("device", [False, True])
def test_fast_functions_ptx(fn, fast_has, precise_lacks, device):
    if device:
        func, sig = unary_device(fn), "float32(float32)"
    else:
        func, sig = unary_kernel(fn), "void(float32[::1], float32)"
    fast, _ = gpujit.compile_ptx(func, sig, device=device, fastmath=True)
    precise, _ = gpujit.compile_ptx(func, sig, device=device)
    assert all(s in fast for s in fast_has), fast
    assert not any(s in precise for s in precise_lacks), precise


@pytest.mark.parametrize("fn, fast_has, precise_lacks", FAST_UNARY,
                         ids=[row[0].__name__ for row in FAST_UNARY])
@pytest.mark.parametrize("device", [False, True])
def test_fast_functions_through_jit_and_inspect_asm(fn, fast_has, precise_lacks, device):
    # numba-cuda's own fastmath tests take this path: jit(sig, device=...,
    # fastmath=True)(f).inspect_asm(sig), a tuple of argument types as sig
    if device:
        func, sig = unary_device(fn), (gpujit.float32,)
    else:
        func, sig = unary_kernel(fn), (gpujit.float32[::1], gpujit.float32)
    fast = gpujit.jit(sig, device=device, fastmath=True)(func).inspect_asm(sig)
    precise = gpujit.jit(sig, device=device)(func).inspect_asm(sig)
    assert all(s in fast for s in fast_has), fast
    assert not any(s in precise for s in precise_lacks), precise
    entry = r"\.visible \.func\s+\(\.param \.b32 func_retval0\) _gj_" if device else \
        r"\.visible \.entry _gj_"
    assert re.search(entry, fast) and re.search(entry, precise)


def test_fast_exp_has_no_fma():
    # libdevice's accurate expf is built on fma.rn; __nv_fast_expf is ex2.approx of a product
    fast, _ = gpujit.compile_ptx(unary_kernel(math.exp), "void(float32[::1], float32)",
                                 fastmath=True)
    precise, _ = gpujit.compile_ptx(unary_kernel(math.exp), "void(float32[::1], float32)")
    assert "fma.rn.f32 " not in fast and "ex2.approx.ftz.f32 " in fast
    assert "fma.rn.f32 " in precise


def test_fast_pow_and_division():
    def k(r, x, y):
        r[0] = math.pow(x, y) + x ** y + x / y
    fast, _ = gpujit.compile_ptx(k, "void(float32[::1], float32, float32)", fastmath=True)
    precise, _ = gpujit.compile_ptx(k, "void(float32[::1], float32, float32)")
    assert "lg2.approx.ftz.f32 " in fast and "div.approx.ftz.f32 " in fast
    assert "div.rn.f32" not in fast
    assert "lg2.approx.ftz.f32 " not in precise and "div.rn.f32" in precise


def test_tanh_approx_from_sm75():
    k, sig = unary_kernel(math.tanh), "void(float32[::1], float32)"
    assert "tanh.approx.f32 " in gpujit.compile_ptx(k, sig, fastmath=True, cc=(7, 5))[0]
    assert "tanh.approx" not in gpujit.compile_ptx(k, sig, cc=(7, 5))[0]
    assert "tanh.approx" not in gpujit.compile_ptx(k, sig, fastmath=True, cc=(7, 0))[0]


def test_float64_functions_stay_accurate():
    k = unary_kernel(math.sin)
    ptx, _ = gpujit.compile_ptx(k, "void(float64[::1], float64)", fastmath=True)
    assert ".approx" not in ptx.replace("rcp.approx.ftz.f64", "")


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])   # CUDA 13's ptxas has no sm_7x
@pytest.mark.parametrize("fastmath", [True, {"afn", "arcp"}])
def test_ptxas_accepts_the_fast_instructions(ptxas, tmp_path, cc, fastmath):
    def k(r, x, y):
        r[0] = (math.sin(x) + math.cos(x) + math.tan(x) + math.exp(x) + math.log(x) +
                math.log2(x) + math.log10(x) + math.pow(x, y) + math.sqrt(x) + math.tanh(x) +
                x / y)
    ptx, _ = gpujit.compile_ptx(k, "void(float32[::1], float32, float32)", fastmath=fastmath,
                                cc=cc)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    arch = f"-arch=sm_{cc[0]}{cc[1]}"
    proc = subprocess.run([ptxas, arch, "-c", "-o", str(tmp_path / "k.o"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ---- flags one by one ----------------------------------------------------------------------

def test_arcp_alone_is_approximate_division_without_ftz():
    found = ops(gpujit.compile_ptx(kernel, F32, fastmath={"arcp"})[0], 32)
    assert "div.approx.f32" in found and "sqrt.rn.f32" in found, found
    assert not any(".ftz" in op for op in found), found


def test_afn_alone_is_approximate_functions_without_ftz():
    def k(r, x):
        r[0] = math.sin(x) + math.sqrt(x) + math.tanh(x) + x / r[1]
    ptx, _ = gpujit.compile_ptx(k, "void(float32[::1], float32)", fastmath={"afn"}, cc=(8, 0))
    for s in ("sin.approx.f32 ", "sqrt.approx.f32 ", "tanh.approx.f32 ", "div.rn.f32 "):
        assert s in ptx
    assert ".ftz" not in ptx


def test_a_dict_names_flags_on_and_off():
    as_dict = gpujit.compile_ptx(kernel, F32, fastmath={"afn": True, "arcp": False})[0]
    as_set = gpujit.compile_ptx(kernel, F32, fastmath={"afn"})[0]
    assert as_dict == as_set and "div.rn.f32" in as_dict


def test_fast_in_a_set_is_true():
    assert (gpujit.compile_ptx(kernel, F32, fastmath={"fast"})[0] ==
            gpujit.compile_ptx(kernel, F32, fastmath=True)[0])


@pytest.mark.parametrize("flag", ["nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"])
def test_each_flag_is_llvms(cpu_target, flag):
    k = gpujit.jit(kernel, fastmath={flag})
    ir = k.inspect_llvm(F64)
    if flag == "afn":   # for functions: a division without arcp stays exact (LLVM 21
        # would approximate an fdiv that carries afn)
        assert re.search(r"call afn double @llvm\.sqrt", ir) and "fdiv double" in ir, ir
    else:
        assert re.search(rf"fdiv {flag} double", ir), ir


def test_true_sets_every_llvm_flag_and_flushes(cpu_target):
    ir = gpujit.jit(kernel, fastmath=True).inspect_llvm(F64)
    assert "fdiv fast double" in ir and '"denormal-fp-math-f32"="preserve-sign' in ir
    ir = gpujit.jit(kernel, fastmath={"nnan", "ninf", "nsz", "arcp", "contract", "afn",
                                       "reassoc"}).inspect_llvm(F64)
    assert "fdiv fast double" in ir and "denormal-fp-math" not in ir   # no ftz without 'fast'


@pytest.fixture
def cpu_target():
    previous = gpujit.set_target("cpu")
    yield
    gpujit.set_target(previous)


# ---- what is refused -----------------------------------------------------------------------

@pytest.mark.parametrize("value, named", [({"fsat"}, "'fsat'"), ({"afn", "ftz"}, "'ftz'"),
                                          ({"nnan": True, "fastest": False}, "'fastest'")])
def test_unknown_flags_are_value_errors_naming_them(value, named):
    with pytest.raises(ValueError, match=f"unrecognized fastmath flag {named}"):
        gpujit.jit(kernel, fastmath=value)
    with pytest.raises(ValueError, match=named):
        gpujit.compile_ptx(kernel, F32, fastmath=value)


def test_fastmath_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="fastmath must be a bool, or a set or dict"):
        gpujit.jit(kernel, fastmath=["afn"])


# ---- results -------------------------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_fastmath_results_are_close(rng):
    x = random_array(rng, 1000, "float32", 1, 100)
    y = random_array(rng, 1000, "float32", 1, 100)
    out = poison(1000, "float32")
    out[:] = 1.0
    gpujit.jit(kernel, fastmath=True)[8, 128](x, y, out)
    want = x / y + np.sqrt(x) + x * y + np.float32(1.0)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def _exp_ulps(x):
    return 2 + np.floor(np.abs(1.173 * x)) + 1


# (function, NumPy's, input range, absolute error, error in ulps of the result): CUDA's
# documented bounds for its fast intrinsics (__sinf, __expf, ...), plus one ulp for the
# rounding of the float64 reference; tan and pow are derived (sin / cos, exp2(y log2 x)),
# so looser.  On the CPU target the functions are libm's: well within them.
FAST_BOUNDS = [
    ("sin", np.sin, (-math.pi, math.pi), 2 ** -21.41, 1),
    ("cos", np.cos, (-math.pi, math.pi), 2 ** -21.19, 1),
    ("tan", np.tan, (-1, 1), 2 ** -18, 2),   # |sin/cos error| <= 2**-21.2 (1/|cos| + 1/cos**2)
    ("exp", np.exp, (-10, 10), 0, _exp_ulps),
    ("log", np.log, (0.5, 2), 2 ** -21.41, 1),
    ("log", np.log, (2, 1000), 0, 4),
    ("log2", np.log2, (0.5, 2), 2 ** -22, 1),
    ("log2", np.log2, (2, 1000), 0, 3),
    ("log10", np.log10, (0.5, 2), 2 ** -24, 1),
    ("log10", np.log10, (2, 1000), 0, 4),
    ("sqrt", np.sqrt, (1e-30, 1e30), 0, 3),
    ("tanh", np.tanh, (-5, 5), 2 ** -10, 1),
]


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("name, ref, bounds, abs_err, ulps", FAST_BOUNDS,
                         ids=[f"{row[0]}[{row[2][0]:g},{row[2][1]:g}]" for row in FAST_BOUNDS])
def test_fast_functions_within_cudas_bounds(rng, name, ref, bounds, abs_err, ulps):
    fn = getattr(math, name)

    def k(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = fn(x[i])

    lo, hi = bounds
    x = (np.exp(rng.uniform(np.log(lo), np.log(hi), 4000)) if lo > 0 and hi / lo > 100
         else rng.uniform(lo, hi, 4000)).astype(np.float32)
    out = poison(x.size, "float32")
    gpujit.jit(k, fastmath=True)[(x.size + 127) // 128, 128](x, out)
    want = ref(x.astype(np.float64))
    allowed = abs_err + (ulps(x) if callable(ulps) else ulps) * np.spacing(
        np.abs(want).astype(np.float32)).astype(np.float64)
    err = np.abs(out.astype(np.float64) - want)
    worst = int(np.argmax(err - allowed))
    assert np.all(err <= allowed), f"{name}({x[worst]!r}) = {out[worst]!r}, want {want[worst]!r}"


@pytest.mark.usefixtures("target")
def test_fast_division_within_two_ulp(rng):
    def k(x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] / y[i]
    x = random_array(rng, 4000, "float32", -1e6, 1e6)
    y = random_array(rng, 4000, "float32", 1e-3, 1e3) * rng.choice(np.float32([-1, 1]), 4000)
    out = poison(x.size, "float32")
    gpujit.jit(k, fastmath={"arcp"})[(x.size + 127) // 128, 128](x, y, out)
    want = x.astype(np.float64) / y
    allowed = 3 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)   # 2 + rounding
    assert np.all(np.abs(out - want) <= allowed)
