"""fastmath=True, checked on the PTX: approximate float32 division and square
root, flush-to-zero (.ftz) and contraction (fma); without it, IEEE:
correctly rounded div.rn / sqrt.rn, no .ftz and no fused multiply-add."""
import math
import re

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array


def kernel(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] / y[i] + math.sqrt(x[i]) + x[i] * y[i] + out[i]


def ops(ptx, width):
    return set(re.findall(rf"\b((?:div|sqrt|fma|add|mul|rcp)(?:\.\w+)*\.f{width})\b", ptx))


def test_fastmath_float32_ptx():
    ptx, _ = gpujit.compile_ptx(kernel, "void(float32[:], float32[:], float32[:])", fastmath=True)
    found = ops(ptx, 32)
    assert found & {"div.approx.ftz.f32", "div.full.ftz.f32", "div.approx.f32"}, found
    assert "sqrt.approx.ftz.f32" in found, found
    assert any(op.startswith("fma.rn") for op in found), found
    assert all(".ftz" in op for op in found), found       # flush-to-zero everywhere
    assert "div.rn" not in ptx and "sqrt.rn" not in ptx


def test_default_float32_is_ieee():
    ptx, _ = gpujit.compile_ptx(kernel, "void(float32[:], float32[:], float32[:])")
    found = ops(ptx, 32)
    assert {"div.rn.f32", "sqrt.rn.f32"} <= found, found
    assert not any(".ftz" in op or op.startswith("fma") for op in found), found


def test_fastmath_float64_contracts():
    ptx, _ = gpujit.compile_ptx(kernel, "void(float64[:], float64[:], float64[:])", fastmath=True)
    assert "fma.rn.f64" in ptx
    ieee, _ = gpujit.compile_ptx(kernel, "void(float64[:], float64[:], float64[:])")
    assert "fma" not in ieee and "div.rn.f64" in ieee and "sqrt.rn.f64" in ieee


def test_fastmath_libdevice_uses_ftz_variants():
    def k(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = math.sin(x[i]) * math.exp(x[i])
    fast, _ = gpujit.compile_ptx(k, "void(float32[:], float32[:])", fastmath=True)
    ieee, _ = gpujit.compile_ptx(k, "void(float32[:], float32[:])")
    # nvvm-reflect-ftz=1 picks libdevice's flushing paths (its expf uses
    # ex2.approx.ftz either way, so look at the arithmetic around it)
    arith_ftz = re.compile(r"\b(?:mul|add|sub|fma)(?:\.rn)?\.ftz\.f32")
    assert arith_ftz.search(fast) and not arith_ftz.search(ieee)


@pytest.mark.usefixtures("target")
def test_fastmath_results_are_close(rng):
    x = random_array(rng, 1000, "float32", 1, 100)
    y = random_array(rng, 1000, "float32", 1, 100)
    out = poison(1000, "float32")
    out[:] = 1.0
    gpujit.jit(kernel, fastmath=True)[8, 128](x, y, out)
    want = x / y + np.sqrt(x) + x * y + np.float32(1.0)
    np.testing.assert_allclose(out, want, rtol=1e-5)
