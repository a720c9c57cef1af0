"""Explicit signatures: numba-style strings ("void(float32[:], float32[:, ::1],
int64)") compile eagerly on decoration when a GPU is present and at first
use otherwise; a list compiles each; "::1" marks the contiguous dimension
(C or F layout); compile_ptx(func, signature) needs no GPU, and with
device=True compiles a device function with a return type
("float32(float32, float32)").  Malformed signatures raise at once."""
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array


def axpy(a, x, y, n):
    i = gpujit.grid(1)
    if i < n:
        y[i] = a * x[i] + y[i]


def row_sums(m, out, ncols):
    i = gpujit.grid(1)
    if i < out.size:
        s = 0.0
        for j in range(ncols):
            s += m[i, j]
        out[i] = s


def test_layouts_of_signature_strings():
    kernel = gpujit.jit(row_sums)
    cases = {
        "void(float32[:, :], float32[:], int64)": "array(float32, 2d, A)",
        "void(float32[:, ::1], float32[::1], int64)": "array(float32, 2d, C)",
        "void(float32[::1, :], float32[:], int64)": "array(float32, 2d, F)",
    }
    for sig, first in cases.items():
        key = kernel.compile(sig)
        assert key[0] == first
        assert key[2] == "int64"
    assert kernel.compile("void(float32[:, ::1], float32[::1], int64)")[1] == \
        "array(float32, 1d, C)"
    assert len(kernel.signatures) == 3


def test_c_layout_drops_stride_loads():
    # With a contiguous last dimension the kernel never reads that stride.
    strided, _ = gpujit.compile_ptx(axpy, "void(float32, float32[:], float32[:], int64)")
    contiguous, _ = gpujit.compile_ptx(axpy, "void(float32, float32[::1], float32[::1], int64)")
    assert contiguous.count("ld.param") < strided.count("ld.param")


def test_signature_list():
    sigs = ["void(float32, float32[:], float32[:], int64)",
            "void(float64, float64[::1], float64[::1], int64)"]
    kernel = gpujit.jit(sigs)(axpy)
    for sig in sigs:
        kernel.compile(sig)   # already compiled (GPU) or compiled now: the same two entries
    assert sorted(kernel.signatures) == sorted([
        ("float32", "array(float32, 1d, A)", "array(float32, 1d, A)", "int64"),
        ("float64", "array(float64, 1d, C)", "array(float64, 1d, C)", "int64"),
    ])


def test_signature_keyword_and_positional_agree():
    a = gpujit.jit("void(float32, float32[:], float32[:], int64)")(axpy)
    b = gpujit.jit(signature="void(float32, float32[:], float32[:], int64)")(axpy)
    assert a.signatures == b.signatures
    with pytest.raises(TypeError):
        gpujit.jit("void()", signature="void()")


def test_signatures_compile_on_decoration():
    kernel = gpujit.jit("void(float32, float32[:], float32[:], int64)")(axpy)
    assert kernel.signatures == [("float32", "array(float32, 1d, A)",
                                  "array(float32, 1d, A)", "int64")]


def broken(x, out):
    out[0] = x[0][1]   # a float32 cannot be indexed


def test_eager_compile_reports_errors_at_decoration():
    with pytest.raises(gpujit.TypingError):
        gpujit.jit("void(float32[:], float32[:])")(broken)


def test_bad_signature_string_fails_at_decoration():
    with pytest.raises(gpujit.GpujitError, match="float33"):
        gpujit.jit("void(float33[:], float32[:])")(broken)


@pytest.mark.usefixtures("target")
def test_eagerly_compiled_kernel_runs(rng):
    kernel = gpujit.jit("void(float64, float64[::1], float64[::1], int64)")(axpy)
    x = random_array(rng, 1000, "float64")
    y = random_array(rng, 1000, "float64")
    expected = 2.0 * x + y
    kernel[4, 256](2.0, x, y, 1000)
    np.testing.assert_allclose(y, expected, rtol=1e-15)
    assert len(kernel.signatures) == 1   # the launch used the eager entry


@pytest.mark.usefixtures("target")
def test_two_dimensional_c_signature_runs(rng):
    kernel = gpujit.jit("void(float32[:, ::1], float32[::1], int64)")(row_sums)
    m = random_array(rng, 300 * 7, "float32", -10, 10).reshape(300, 7)
    out = poison(300, "float32")
    kernel[2, 256](m, out, 7)
    expected = np.zeros(300, np.float64)
    for j in range(7):
        expected += m[:, j]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=2e-5)   # float32 sums


# ---- compile_ptx with device=True ---------------------------------------------------------


def hypot2(a, b):
    return a * a + b * b


def to_int(v):
    return v * 3   # int64 arithmetic, returned as the declared float32


def test_compile_ptx_device_function(ptxas, tmp_path):
    ptx, resty = gpujit.compile_ptx(hypot2, "float32(float32, float32)", device=True)
    assert resty == "float32"
    assert ".visible .func" in ptx and ".entry" not in ptx
    # a * a + b * b: one product rounded, the other fused (contraction is the default)
    assert "func_retval0" in ptx and "mul.rn.f32" in ptx and "fma.rn.f32" in ptx
    src = tmp_path / "d.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-c", "-o", str(tmp_path / "d.o"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_compile_ptx_device_declared_return_type_converts():
    ptx, resty = gpujit.compile_ptx(to_int, "float32(int64)", device=True)
    assert resty == "float32"
    assert "cvt.rn.f32.s64" in ptx


def test_compile_ptx_device_inferred_return_type():
    _, resty = gpujit.compile_ptx(hypot2, "(int32, int32)", device=True)
    assert resty == "int32"
    _, resty = gpujit.compile_ptx(hypot2, "(float32, float64)", device=True)
    assert resty == "float64"


def test_compile_ptx_of_device_dispatcher():
    dev = gpujit.jit(device=True)(hypot2)
    ptx, resty = gpujit.compile_ptx(dev, "float64(float64, float64)")
    assert resty == "float64" and ".func" in ptx and ".entry" not in ptx


def test_kernel_signature_must_return_void():
    with pytest.raises(TypeError, match="void"):
        gpujit.compile_ptx(hypot2, "float32(float32, float32)")


def returns_tuple(a):
    return a, a


def test_declared_return_type_must_fit():
    with pytest.raises(gpujit.TypingError, match="signature declares"):
        gpujit.compile_ptx(returns_tuple, "float32(float32)", device=True)


# ---- malformed signatures ------------------------------------------------------------------


@pytest.mark.parametrize("sig,text", [
    ("void(float32[:], flot32)", "unknown type"),
    ("void(float32[:]", "')'"),
    ("void(float32[::2])", "::1"),
    ("void(float32[:, ::1, :])", "first or the last"),
    ("void float32", "'('"),
    ("void(float32[:]) trailing", "unexpected text"),
])
def test_malformed_signatures(sig, text):
    with pytest.raises(gpujit.TypingError) as info:
        gpujit.compile_ptx(axpy, sig)
    assert text in str(info.value)


def test_wrong_number_of_argument_types():
    with pytest.raises(TypeError, match="4"):
        gpujit.compile_ptx(axpy, "void(float32, float32[:])")
    kernel = gpujit.jit(axpy)
    with pytest.raises(TypeError):
        kernel.compile("void(float32, float32[:])")


def test_signature_must_be_a_string():
    with pytest.raises(TypeError):
        gpujit.jit(axpy).compile(("float32",))


@pytest.mark.usefixtures("target")
def test_explicit_signatures_restrict_launches(rng):
    kernel = gpujit.jit("void(float64, float64[::1], float64[::1], int64)")(axpy)
    x = random_array(rng, 100, "float64")
    y = random_array(rng, 100, "float64")
    with pytest.raises(TypeError, match="no matching definition"):
        kernel[1, 128](2.0, x.astype(np.float32), y, 100)   # float32: not a signature
    assert len(kernel.signatures) == 1
    expected = 2.0 * x + y
    kernel.recompile()                                     # recompiles the signatures on use
    kernel[1, 128](2.0, x, y, 100)
    np.testing.assert_allclose(y, expected, rtol=1e-15)


@pytest.mark.parametrize("sig,ok", [("void(float64, float64[:], float64[:], int64,)", True),
                                    ("(float64, float64[:], float64[:], int64 , )", True),
                                    ("void(float64,, float64[:], float64[:], int64)", False),
                                    ("void(,)", False)])
def test_trailing_comma_in_signature(sig, ok):
    # Python allows one trailing comma in a call or a tuple; nothing else.
    if ok:
        ptx, _ = gpujit.compile_ptx(axpy, sig)
        assert ".entry" in ptx
    else:
        with pytest.raises(gpujit.TypingError, match="invalid signature"):
            gpujit.compile_ptx(axpy, sig)


# ---- scalar arguments convert to an explicit signature (as numba) -------------------


def fill_ij(a, i, j):
    a[i, j] = i * 10 + j


@pytest.mark.usefixtures("target")
def test_python_scalars_convert_to_the_signature(rng):
    kernel = gpujit.jit("void(float32[:, :], int32, int32)")(fill_ij)
    a = random_array(rng, 30, "float32").reshape(5, 6)
    expected = a.copy()
    expected[3, 4] = 34
    kernel[1, 1](a, 3, 4)                       # Python ints -> int32
    kernel[1, 1](a, np.int64(3), np.uint8(4))   # NumPy scalars whose values fit
    np.testing.assert_array_equal(a, expected)
    assert kernel.signatures == [("array(float32, 2d, A)", "int32", "int32")]


def store_value(out, v):
    out[0] = v


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("value", [0.1, 3, -7, np.float64(2.5), True])
def test_float_signature_takes_ints_and_floats(value):
    kernel = gpujit.jit("void(float32[:], float32)")(store_value)
    out = poison(1, "float32")
    kernel[1, 1](out, value)
    assert out[0] == np.float32(value)


@pytest.mark.usefixtures("target")
def test_values_that_do_not_fit_match_no_signature():
    kernel = gpujit.jit("void(int32[:], int32)")(store_value)
    out = poison(1, "int32")
    for bad in (2**40, 1.5, np.float64(2.5), 1j):
        with pytest.raises(TypeError, match="no matching definition"):
            kernel[1, 1](out, bad)
    kernel[1, 1](out, 3.0)   # an integral float fits
    assert out[0] == 3


@pytest.mark.usefixtures("target")
def test_exact_match_then_the_best_conversion():
    kernel = gpujit.jit(["void(int32[:], int32)", "void(int32[:], float64)"])(store_value)
    out = poison(1, "int32")
    kernel[1, 1](out, np.int16(-5))    # int16 -> int32 promotes, beats the safe -> float64
    assert out[0] == -5
    kernel[1, 1](out, np.float32(2.0))  # float32 -> float64 promotes
    assert out[0] == 2
    assert len(kernel.signatures) == 2


@pytest.mark.usefixtures("target")
def test_ambiguous_conversion_names_the_candidates():
    kernel = gpujit.jit(["void(float64[:], int32)", "void(float64[:], float32)"])(store_value)
    out = poison(1, "float64")
    with pytest.raises(TypeError, match="ambiguous") as info:
        kernel[1, 1](out, 5)   # int64 -> int32 or float32: both fit
    assert "'int32'" in str(info.value) and "'float32'" in str(info.value)
    kernel[1, 1](out, np.int32(5))   # exact
    assert out[0] == 5


@pytest.mark.parametrize("sig", ["int32(float32[:])", "float64(float64[:], int64)"])
def test_kernel_signature_must_return_void(sig):
    def k(a):
        a[0] = 1
    with pytest.raises(TypeError, match="CUDA kernel must have void return type"):
        gpujit.jit(sig)(k)


def test_a_signature_array_has_at_most_eight_dimensions():
    # a 9-d array could never be launched (kernel arguments have 8 at most)
    def kernel(a):
        a[0, 0, 0, 0, 0, 0, 0, 0, 0] = 1

    nine = "void(float32[" + ", ".join([":"] * 9) + "])"
    with pytest.raises(gpujit.TypingError, match="an array has at most 8 dimensions"):
        gpujit.jit(nine)(kernel)
    with pytest.raises(gpujit.TypingError, match="an array has at most 8 dimensions"):
        gpujit.compile_ptx(kernel, nine)
    eight = "void(float32[" + ", ".join([":"] * 8) + "])"
    gpujit.compile_ptx(lambda a: None, eight)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("to", ["float32", "float64", "complex64", "complex128"])
def test_float16_scalars_promote_to_an_explicit_signature(rng, to):
    @gpujit.jit(f"void({to}[::1], {to})")
    def store(out, x):
        out[0] = x

    bits = rng.integers(0, 1 << 16, 300, dtype=np.uint16)
    values = bits.view(np.float16)
    values = values[~np.isnan(values)]    # every finite, infinite, subnormal half
    out = poison(1, to)
    for v in values:
        store[1, 1](out, v)
        assert out[0] == np.dtype(to).type(v), (v, out[0])
