"""Floating-point contraction: by default a kernel's a * b + c fuses into one
FMA (rounded once), as nvcc's -fmad=true and numba-cuda do; contract=False
(per kernel) or GPUJIT_CONTRACT=0 (the default of kernels decorated after it
is set) rounds every operation as NumPy does.

Checked on the PTX (fma.rn with contraction, mul.rn and add.rn without:
the .rn keeps ptxas from fusing them itself), and on the results: without
contraction bit for bit NumPy's; with it the correctly rounded a * b + c
(where the machine has an FMA: every GPU, x86 hosts with FMA3, AArch64),
which differs from NumPy's by at most half an ulp of the product plus one
ulp of the result (conftest.assert_fma_close), one ulp when a * b and c
have the same sign.
"""
import platform
import re
from fractions import Fraction

import numpy as np
import pytest

import gpujit
from conftest import assert_fma_close, poison, random_array

N = 2000


def axpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] * x[i] + y[i]


def products(a, x, y, out):
    """The three shapes that fuse: a*x + y, a*x - y (fma with -y), y - a*x (fma with -a)."""
    i = gpujit.grid(1)
    if i < out.shape[0]:
        out[i, 0] = a[i] * x[i] + y[i]
        out[i, 1] = a[i] * x[i] - y[i]
        out[i, 2] = y[i] - a[i] * x[i]


@gpujit.jit(device=True)
def muladd(a, b, c):
    return a * b + c


def via_device_function(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = muladd(a[i], x[i], y[i])


def complex_mul(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i]


def fp_ops(ptx, width):
    return set(re.findall(rf"\b(?:fma|mul|add|sub|neg)(?:\.\w+)*\.f{width}\b", ptx))


def launch(kernel, *args):
    out = args[-1]
    kernel[(out.shape[0] + 127) // 128, 128](*args)
    return out


def host_has_fma():
    """Whether the host CPU has a fused multiply-add (the CPU target fuses only then)."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read().replace("\n", " ")
    except OSError:
        return False


def correctly_rounded_fma(a, b, c, dtype):
    """a * b + c rounded once to dtype, from exact rationals (what an FMA gives)."""
    dtype = np.dtype(dtype)
    out = np.empty(len(a), dtype)
    for k in range(len(a)):
        exact = Fraction(float(a[k])) * Fraction(float(b[k])) + Fraction(float(c[k]))
        r = dtype.type(float(exact))   # float() rounds correctly; to float32 it may round twice
        if dtype == np.float32:        # so take the nearest of r and its neighbours, ties to even
            cands = [np.nextafter(r, dtype.type(-np.inf)), r, np.nextafter(r, dtype.type(np.inf))]
            r = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                          int(v.view(np.uint32)) & 1))
        out[k] = r
    return out


# ---- the PTX -------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [32, 64])
def test_ptx_fuses_by_default(width):
    sig = f"void(float{width}[:], float{width}[:], float{width}[:], float{width}[:, :])"
    ptx, _ = gpujit.compile_ptx(products, sig)
    ops = fp_ops(ptx, width)
    assert f"fma.rn.f{width}" in ops, ops
    assert not ops & {f"mul.rn.f{width}", f"add.rn.f{width}", f"sub.rn.f{width}"}, ops


@pytest.mark.parametrize("width", [32, 64])
def test_ptx_without_contraction_has_no_fma(width):
    sig = f"void(float{width}[:], float{width}[:], float{width}[:], float{width}[:, :])"
    ptx, _ = gpujit.compile_ptx(products, sig, contract=False)
    ops = fp_ops(ptx, width)
    assert not any(op.startswith("fma") for op in ops), ops
    # .rn: ptxas may not fuse what LLVM left apart
    assert {f"mul.rn.f{width}", f"add.rn.f{width}", f"sub.rn.f{width}"} <= ops, ops


def test_contract_flows_through_the_dispatcher_and_compile():
    sig = "void(float32[:], float32[:], float32[:], float32[:])"
    assert "fma.rn.f32" in gpujit.jit(axpy).inspect_asm(sig)
    assert "fma" not in gpujit.jit(axpy, contract=False).inspect_asm(sig)
    assert "fma" not in gpujit.compile(muladd, "float32(float32, float32, float32)",
                                       contract=False)[0]
    assert "fma.rn.f32" in gpujit.compile(muladd, "float32(float32, float32, float32)")[0]


def test_the_kernels_switch_covers_its_device_functions():
    sig = "void(float64[:], float64[:], float64[:], float64[:])"
    assert "fma.rn.f64" in gpujit.compile_ptx(via_device_function, sig)[0]
    assert "fma" not in gpujit.compile_ptx(via_device_function, sig, contract=False)[0]


def test_gpujit_contract_environment_variable(monkeypatch):
    sig = "void(float32[:], float32[:], float32[:], float32[:])"
    monkeypatch.setenv("GPUJIT_CONTRACT", "0")
    assert "fma" not in gpujit.jit(axpy).inspect_asm(sig)
    assert "fma" not in gpujit.compile_ptx(axpy, sig)[0]
    assert "fma.rn.f32" in gpujit.jit(axpy, contract=True).inspect_asm(sig)   # per kernel wins
    monkeypatch.setenv("GPUJIT_CONTRACT", "1")
    assert "fma.rn.f32" in gpujit.jit(axpy).inspect_asm(sig)
    monkeypatch.setenv("GPUJIT_CONTRACT", "yes")
    with pytest.raises(ValueError, match="GPUJIT_CONTRACT must be 0"):
        gpujit.jit(axpy)


def test_fastmath_contracts_whatever_the_switch():
    sig = "void(float32[:], float32[:], float32[:], float32[:])"
    ptx, _ = gpujit.compile_ptx(axpy, sig, contract=False, fastmath={"contract"})
    assert "fma.rn.f32" in ptx


# ---- the results ---------------------------------------------------------------------------

@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_without_contraction_numpy_bit_for_bit(rng, dtype):
    a, x, y = (random_array(rng, N, dtype) for _ in range(3))
    out = launch(gpujit.jit(products, contract=False), a, x, y, poison((N, 3), dtype))
    np.testing.assert_array_equal(out[:, 0], a * x + y)
    np.testing.assert_array_equal(out[:, 1], a * x - y)
    np.testing.assert_array_equal(out[:, 2], y - a * x)
    dev = launch(gpujit.jit(via_device_function, contract=False), a, x, y, poison(N, dtype))
    np.testing.assert_array_equal(dev, a * x + y)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_multiply_without_contraction_is_numpys(rng, dtype):
    # NumPy's scalars multiply by the formula, (ac - bd) + (ad + bc)j, each
    # operation rounded; its array loop uses FMA instructions on x86-64-v3
    # and later hosts, so the reference is the scalars'.
    a, b = random_array(rng, N, dtype), random_array(rng, N, dtype)
    out = launch(gpujit.jit(complex_mul, contract=False), a, b, poison(N, dtype))
    np.testing.assert_array_equal(out, np.array([p * q for p, q in zip(a, b)], dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_contraction_is_one_rounding(target, rng, dtype):
    if target == "cpu" and not host_has_fma():
        pytest.skip("the host CPU has no FMA: the CPU target does not fuse")
    a, x, y = (random_array(rng, N, dtype) for _ in range(3))
    out = launch(gpujit.jit(products), a, x, y, poison((N, 3), dtype))
    np.testing.assert_array_equal(out[:, 0], correctly_rounded_fma(a, x, y, dtype))
    np.testing.assert_array_equal(out[:, 1], correctly_rounded_fma(a, x, -y, dtype))
    np.testing.assert_array_equal(out[:, 2], correctly_rounded_fma(-a, x, y, dtype))


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_contraction_stays_near_numpy(rng, dtype):
    # mixed signs: a * x + y may cancel, so the bound has the product's half ulp
    a, x, y = (random_array(rng, N, dtype) for _ in range(3))
    out = launch(gpujit.jit(axpy), a, x, y, poison(N, dtype))
    assert_fma_close(out, a * x + y, a * x)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_contraction_one_ulp_without_cancellation(rng, dtype):
    """The example of docs/language.md: a, x, y in [1, 2).  About a fifth of
    the fused results differ from NumPy's, each by one ulp; the fused ones are
    correctly rounded (at most half an ulp from the exact a * x + y), NumPy's
    are up to one ulp off."""
    n = 20000
    a, x, y = (random_array(rng, n, dtype, 1, 2) for _ in range(3))
    out = launch(gpujit.jit(axpy), a, x, y, poison(n, dtype))
    want = a * x + y
    ulps = np.abs(out.astype(np.float64) - want) / np.spacing(want)
    assert ulps.max() <= 1
    if gpujit.current_target() == "cuda" or host_has_fma():
        assert 0.1 < np.mean(ulps != 0) < 0.3
        k = slice(0, 2000)
        exact = correctly_rounded_fma(a[k], x[k], y[k], dtype)
        np.testing.assert_array_equal(out[k], exact)


@pytest.mark.usefixtures("target")
def test_contraction_keeps_a_products_rounding_error(rng):
    """x * y - p with p = NumPy's float32 x * y: NumPy gives 0, the fused
    kernel the exact error of p, which a float64 product shows."""
    x, y = random_array(rng, N, "float32", 1, 2), random_array(rng, N, "float32", 1, 2)
    p = x * y
    out = launch(gpujit.jit(axpy), x, y, -p, poison(N, "float32"))
    assert np.all(launch(gpujit.jit(axpy, contract=False), x, y, -p, poison(N, "float32")) == 0)
    if gpujit.current_target() == "cuda" or host_has_fma():
        exact_error = x.astype(np.float64) * y - p   # exact: 48-bit products
        np.testing.assert_array_equal(out, exact_error.astype(np.float32))
        assert np.count_nonzero(out) > N // 2
