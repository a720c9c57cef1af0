"""PTX generation without a GPU: compile_ptx, the kernel entry, target, and
that ptxas (when installed) accepts what the NVPTX backend emits."""
import re

import pytest

import numpy as np

import gpujit
from conftest import assert_assembles


def vector_add(a, b, c):
    i = gpujit.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def saxpy(alpha, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def reverse_sum(a, out, n):
    i = gpujit.grid(1)
    if i < out.size:
        s = 0
        for j in range(n, 0, -1):
            s += a[j - 1] * j
        out[i] = s


def floor_ops(a, b, q, r):
    i = gpujit.grid(1)
    if i < q.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def math_ops(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = math.sqrt(abs(x[i])) + min(x[i], 1.0) - max(x[i], -1.0)


import math  # noqa: E402  (a global the kernel above resolves at compile time)

CASES = [
    (vector_add, "void(float32[:], float32[:], float32[:])"),
    (saxpy, "void(float32, float32[:], float32[:], float32[:])"),
    (reverse_sum, "void(int64[:], int64[:], int64)"),
    (floor_ops, "void(int32[:], int32[:], int32[:], int32[:])"),
    (floor_ops, "void(float64[:], float64[:], float64[:], float64[:])"),
    (math_ops, "void(float32[:], float32[:])"),
]


def _ids(case):
    return f"{case[0].__name__}-{case[1]}"


@pytest.mark.parametrize("func,sig", CASES, ids=[_ids(c) for c in CASES])
def test_compile_ptx_has_kernel_entry(func, sig):
    ptx, resty = gpujit.compile_ptx(func, sig)
    assert isinstance(ptx, str)
    assert re.search(r"^\.target sm_90\b", ptx, re.M), ptx[:400]
    assert re.search(r"\.visible \.entry \w+\(", ptx), "kernel must be a PTX .entry"
    assert str(resty) in ("none", "void")


@pytest.mark.parametrize("func,sig", CASES, ids=[_ids(c) for c in CASES])
def test_ptxas_accepts(func, sig, ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(func, sig)
    assert_assembles(ptxas, ptx, tmp_path)


from test_control_flow import CONTROL_FLOW_KERNELS  # noqa: E402


@pytest.mark.parametrize("kernel,sig", CONTROL_FLOW_KERNELS,
                         ids=[k.py_func.__name__ for k, _ in CONTROL_FLOW_KERNELS])
def test_control_flow_kernels_ptxas_accepts(kernel, sig, ptxas, tmp_path):
    test_ptxas_accepts(kernel.py_func, sig, ptxas, tmp_path)


def test_debug_error_record_is_a_visible_global(ptxas, tmp_path):
    # debug=True: a read that may find its local unassigned is checked; the
    # check writes the module's error record, which the host finds by name.
    from test_control_flow import zero_when_unassigned
    with pytest.warns(gpujit.GpujitWarning):
        ptx, _ = gpujit.compile_ptx(zero_when_unassigned, "void(int32[:], int32[:])", debug=True)
        plain, _ = gpujit.compile_ptx(zero_when_unassigned, "void(int32[:], int32[:])")
    assert re.search(r"^\.visible \.global \.align 8 \.b8 gj\$error\[72\];", ptx, re.M), ptx
    assert "atom.global.cas.b64" in ptx
    assert "gj$error" not in plain
    assert_assembles(ptxas, ptx, tmp_path)


def grid_stride_sum(x, out):
    acc = np.float32(0)
    for i in range(gpujit.grid(1), x.size, gpujit.gridsize(1)):
        acc += x[i]
    out[gpujit.grid(1)] = acc


def test_grid_stride_range_loop_is_unrolled_without_index_wrap():
    # range() computes its trip count first and steps with nsw, so LLVM
    # unrolls the loop (several loads in flight, as nvcc's 4x unrolling)
    # and knows i >= 0 (no negative-index wrap: shr.s64 / and.b64).
    ptx, _ = gpujit.compile_ptx(grid_stride_sum, "void(float32[::1], float32[::1])")
    assert len(re.findall(r"ld\.global\.[fb]32", ptx)) >= 5, ptx   # LLVM 21: ld.global.b32
    assert "shr.s64" not in ptx, ptx


def test_compute_capability_selects_target():
    ptx, _ = gpujit.compile_ptx(vector_add, "void(float32[:], float32[:], float32[:])", cc=(8, 0))
    assert re.search(r"^\.target sm_80\b", ptx, re.M)


def test_float32_math_stays_float32():
    # NEP 50: the Python literal 2.0 is weak, so float32 * 2.0 is float32.
    def scale(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] * 2.0 + 1.0

    ptx, _ = gpujit.compile_ptx(scale, "void(float32[:], float32[:])")
    assert re.search(r"\b(fma\.rn|mul(\.rn)?|add(\.rn)?)\.f32\b", ptx)
    assert ".f64" not in ptx, "float32 kernel must not compute in float64"


def test_int32_plus_literal_stays_int32():
    def inc(a, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = a[i] * 3 + 1

    ptx, _ = gpujit.compile_ptx(inc, "void(int32[:], int32[:])")
    # Computing in int64 would sign-extend the loaded int32 element first.
    assert "cvt.s64.s32" not in ptx, ptx
    assert re.search(r"\bst\.global\.(u|s|b)32\b", ptx), ptx


def test_loads_and_stores_are_global():
    ptx, _ = gpujit.compile_ptx(vector_add, "void(float32[:], float32[:], float32[:])")
    # LLVM 21 moves floats as untyped bits: ld.global.b32
    assert re.search(r"\bld\.global(\.nc)?\.[fb]32\b", ptx), ptx
    assert re.search(r"\bst\.global\.[fb]32\b", ptx), ptx


def _opcodes(ptx):
    body = ptx[ptx.index(".entry"):]
    return sorted(m.group(1) for m in re.finditer(r"^\s+(?:@%p\d+\s+)?([a-z][\w.]*)\s", body, re.M))


def test_thread_index_is_a_widening_multiply():
    # Thread registers are int64 values zero-extended from 32-bit registers with
    # range metadata: blockIdx.x * blockDim.x is one 32x32->64 multiply, and the
    # hand-written index compiles to exactly what grid(1) does.
    def by_grid(out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = 1.0

    def by_hand(out):
        i = gpujit.blockIdx.x * gpujit.blockDim.x + gpujit.threadIdx.x
        if i < out.size:
            out[i] = 1.0

    ptxs = [gpujit.compile_ptx(k, "void(float32[:])")[0] for k in (by_grid, by_hand)]
    for ptx in ptxs:
        assert len(re.findall(r"\b(mul|mad)\.wide\.u32\b", ptx)) == 1, ptx
        assert len(re.findall(r"\bcvt\.u64\.u32\b", ptx)) <= 1, ptx   # only threadIdx.x
        assert not re.search(r"\bmul\.lo\.s32\b", ptx), ptx
    assert _opcodes(ptxs[0]) == _opcodes(ptxs[1])


def test_intrinsic_keyword_argument_is_positional():
    def by_keyword(out):
        i = gpujit.grid(ndim=1)
        if i < out.size:
            out[i] = 1.0

    def by_position(out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = 1.0

    ptxs = [gpujit.compile_ptx(k, "void(float32[:])")[0] for k in (by_keyword, by_position)]
    assert _opcodes(ptxs[0]) == _opcodes(ptxs[1])


def test_signature_layouts_parse():
    for sig in ("void(float32[::1], float32[::1], float32[::1])",
                "(float32[:], float32[:], float32[:])",
                "void(f4[:], f4[:], f4[:])"):
        ptx, _ = gpujit.compile_ptx(vector_add, sig)
        assert ".entry" in ptx


def test_bad_signature_is_a_clear_error():
    with pytest.raises(gpujit.GpujitError, match="float33|signature"):
        gpujit.compile_ptx(vector_add, "void(float33[:], float32[:], float32[:])")


from test_arithmetic import (floor_division_by_abs, int16_abs_and_negation,  # noqa: E402
                             min_of_a_negation, negated_bool_as_float, zero_sign_min_max)
from test_integer_edges import negation_compared_in_a_device_function  # noqa: E402

# What compiler/nvptx_fix.c keeps out of the PTX: instructions that the
# NVPTX backend or ptxas turned into wrong values (test_arithmetic.py runs
# the same kernels on the targets).
MISCOMPILED = [
    (zero_sign_min_max, "void(float16[:], float16[:, :])", r"\b(min|max)(\.NaN)?\.f16\b"),
    (zero_sign_min_max, "void(float32[:], float32[:, :])", r"\b(min|max)(\.NaN)?\.f32\b"),
    (zero_sign_min_max, "void(float64[:], float64[:, :])", r"\b(min|max)\.f64\b"),
    (negated_bool_as_float, "void(boolean[:], boolean[:], float64[:])", r"\bcvt\.rn\.f64\.s32\b"),
    (int16_abs_and_negation, "void(int16[:], int32[:, :])", r"\b(abs|neg)\.s16\b"),
    (negation_compared_in_a_device_function, "void(complex128[:], complex64[:])",
     r"\bneg\.s16\b"),
    (floor_division_by_abs, "void(int32[:], float64[:])", r"\babs\.s32\b"),
    (floor_division_by_abs, "void(int64[:], float64[:])", r"\babs\.s64\b"),
    (min_of_a_negation, "void(int32[:], int32[:], int32[:], int32[:])", r"\bneg\.s32\b"),
]


@pytest.mark.parametrize("func,sig,pattern", MISCOMPILED,
                         ids=[f"{f.__name__}-{s}" for f, s, _ in MISCOMPILED])
def test_ptx_avoids_what_ptxas_or_the_backend_miscompiles(func, sig, pattern):
    ptx, _ = gpujit.compile_ptx(func, sig)
    assert not re.search(pattern, ptx), re.findall(r".*" + pattern + ".*", ptx)


@pytest.mark.parametrize("func,sig,pattern", MISCOMPILED,
                         ids=[f"{f.__name__}-{s}" for f, s, _ in MISCOMPILED])
def test_ptxas_accepts_the_rewritten_ptx(func, sig, pattern, ptxas, tmp_path):
    test_ptxas_accepts(func, sig, ptxas, tmp_path)


def sqrt_then_quotient(t, s, x, out):
    i = gpujit.grid(1)
    if i < out.size:
        root = math.sqrt(t[i])
        out[i] = root * (s[i] / x[i]) + t[i]


def test_a_blocks_loads_come_before_its_arithmetic(ptxas, tmp_path):
    # LLVM's NVPTX backend emits a block in IR order, and ptxas does not hoist
    # a load above sqrt.rn's slow path: gpujit puts a block's loads first, so
    # their memory latencies overlap (Black-Scholes ran 12% behind nvcc's).
    ptx, _ = gpujit.compile_ptx(sqrt_then_quotient,
                                "void(float32[::1], float32[::1], float32[::1], float32[::1])")
    body = ptx[ptx.index(".entry"):]
    loads = [m.start() for m in re.finditer(r"\bld\.global", body)]
    assert len(loads) == 3, body
    assert max(loads) < body.index("sqrt.rn") < body.index("st.global")
    assert_assembles(ptxas, ptx, tmp_path)



from test_loop_counters import count_while_less  # noqa: E402


def test_a_counter_that_fits_in_32_bits_counts_in_32_bits(ptxas, tmp_path):
    # compiler/narrow.c: a second copy of the loop, entered when the start and
    # the bound fit in int32, steps its counter with a 32-bit add
    ptx, _ = gpujit.compile_ptx(count_while_less, "void(int64[:], int64[:], int64[:, :])")
    assert re.search(r"\badd\.s32\s+(%r\d+), \1, 1;", ptx), ptx
    assert re.search(r"\badd\.s64\s+(%rd\d+), \1, 1;", ptx), ptx   # and the 64-bit loop
    assert "2147483647" in ptx or "2147483648" in ptx, ptx          # the guard
    assert_assembles(ptxas, ptx, tmp_path, "count_while_less")
