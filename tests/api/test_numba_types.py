"""numba's type objects (gpujit.types, exported as gpujit.float32, ...): their
repr reads as numba's; they make signatures for jit, compile_ptx and
compile (``void(float32[:, ::1], int32)``, a tuple of argument types); in
kernels ``float32(x)`` converts as NumPy's constructor does."""
import pickle

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array
from gpujit import float32, float64, int32, int64, types, uint8, void


@pytest.mark.parametrize("obj,text", [
    (float32, "float32"), (int32, "int32"), (gpujit.boolean, "bool"), (gpujit.b1, "bool"),
    (gpujit.f8, "float64"), (gpujit.c8, "complex64"), (gpujit.intp, "int64"), (void, "none"),
    (float32[:], "array(float32, 1d, A)"), (float32[::1], "array(float32, 1d, C)"),
    (float32[:, :], "array(float32, 2d, A)"), (float32[:, ::1], "array(float32, 2d, C)"),
    (float32[::1, :], "array(float32, 2d, F)"), (uint8[:, :, ::1], "array(uint8, 3d, C)"),
    (void(float32[:]), "(array(float32, 1d, A),) -> none"),
    (float32(float32, float32), "(float32, float32) -> float32"),
])
def test_repr_reads_as_numbas(obj, text):
    assert repr(obj) == text


@pytest.mark.parametrize("obj,sig", [
    (float32[:, ::1], "float32[:, ::1]"), (float32[::1, :], "float32[::1, :]"),
    (gpujit.boolean[:], "bool[:]"), (void(float32[:], int32), "void(float32[:], int32)"),
    (float32(float32, float32), "float32(float32, float32)"),
    ((float32[::1], int32), "(float32[::1], int32)"),
])
def test_types_render_to_signature_strings(obj, sig):
    if isinstance(obj, types.Type):
        assert obj._signature_string() == sig
    else:
        assert types._signature_string(obj) == sig


def test_equality_hash_and_pickle():
    assert float32[:, ::1] == types.Array(float32, 2, "C")
    assert float32[:] != float32[::1]
    assert float32 is gpujit.f4 is gpujit.types.float32
    assert void(int32) == void(int32) and hash(void(int32)) == hash(void(int32))
    assert pickle.loads(pickle.dumps(float32)) is float32
    assert pickle.loads(pickle.dumps(float32[:, ::1])) == float32[:, ::1]


def test_called_with_a_value_casts_as_numpy():
    assert type(float32(1.1)) is np.float32 and float32(1.1) == np.float32(1.1)
    assert int32(-2.7) == np.int32(-2.7)
    assert type(gpujit.boolean(3)) is np.bool_


@pytest.mark.parametrize("bad", [lambda: float32[1:], lambda: float32[::2],
                                 lambda: float32[::1, ::1], lambda: float32[:, ::1, :],
                                 lambda: void(3)])
def test_malformed_types_raise(bad):
    with pytest.raises(TypeError):
        bad()


def test_jit_signature_not_a_type_raises():
    with pytest.raises(TypeError, match="signature"):
        gpujit.jit((3, 4))(lambda a, b: None)


def scale(a, out, n):
    i = gpujit.grid(1)
    if i < n:
        out[i] = a[i] * 2


@pytest.mark.parametrize("sig", [
    void(float32[::1], float32[::1], int64),
    (float32[::1], float32[::1], int64),
    [void(float32[:], float32[:], int64)],
    "void(float32[::1], float32[::1], int64)",
])
@pytest.mark.usefixtures("target")
def test_jit_accepts_signature_objects(rng, sig):
    kernel = gpujit.jit(sig)(scale)
    a = random_array(rng, 100, "float32")
    out = poison(100, "float32")
    kernel[1, 128](a, out, 100)
    np.testing.assert_array_equal(out, a * 2)
    assert len(kernel.signatures) == 1


def test_compile_and_compile_ptx_accept_signature_objects():
    kernel = gpujit.jit(scale)
    key = kernel.compile(void(float32[::1], float32[:], int64))
    assert key == ("array(float32, 1d, C)", "array(float32, 1d, A)", "int64")
    assert kernel.compile((float64[:], float64[:], int64))[0] == "array(float64, 1d, A)"
    ptx, ret = gpujit.compile_ptx(scale, void(float32[::1], float32[::1], int32))
    assert ".entry" in ptx and ret == "none"


def hypot32(x, y):
    return float32(x * x + y * y) ** float32(0.5)


def test_compile_ptx_device_with_a_return_type():
    ptx, ret = gpujit.compile_ptx(hypot32, float32(float32, float32), device=True)
    assert ".func" in ptx and ret == "float32"


def casts(x, out_f, out_i, out_b, out_u):
    i = gpujit.grid(1)
    if i < x.size:
        out_f[i] = float32(x[i]) * float32(3)
        out_i[i] = int32(x[i])
        out_b[i] = gpujit.boolean(x[i])
        out_u[i] = uint8(int32(x[i]))


@pytest.mark.usefixtures("target")
def test_type_objects_cast_in_kernels_as_numpy(rng):
    x = random_array(rng, 200, "float64", -300, 300)
    x[:3] = [0.0, -0.5, 2.5]
    outs = [poison(200, d) for d in ("float32", "int32", "bool", "uint8")]
    gpujit.jit(casts)[2, 128](x, *outs)
    np.testing.assert_array_equal(outs[0], x.astype(np.float32) * np.float32(3))
    np.testing.assert_array_equal(outs[1], x.astype(np.int32))
    np.testing.assert_array_equal(outs[2], x.astype(np.bool_))
    np.testing.assert_array_equal(outs[3], x.astype(np.int32).astype(np.uint8))


def float32_typed(x):
    return float32(x)


def test_cast_result_type():
    _, ret = gpujit.compile_ptx(float32_typed, "(float64)", device=True)
    assert ret == "float32"


def casts_through_modules(x, out):
    i = gpujit.grid(1)
    if i < x.size:
        out[i] = gpujit.types.int16(x[i]) + types.f4(x[i]) + gpujit.f8(x[i])


@pytest.mark.usefixtures("target")
def test_type_objects_reached_through_modules(rng):
    x = random_array(rng, 100, "float32", -100, 100)
    out = poison(100, "float64")
    gpujit.jit(casts_through_modules)[1, 128](x, out)
    want = x.astype(np.int16) + x.astype(np.float32) + x.astype(np.float64)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("text,sig", [
    ("void(float32[:, ::1], i4)", void(float32[:, ::1], int32)),
    ("f8(f8, float64[::1, :])", float64(float64, float64[::1, :])),
    ("(uint8[:], bool)", types.Signature(None, (uint8[:], gpujit.boolean))),
])
def test_parse_signature_round_trips(text, sig):
    parsed = types.parse_signature(text)
    assert parsed == sig
    assert types.parse_signature(types._signature_string(parsed)) == sig


def test_parse_signature_reports_where():
    with pytest.raises(gpujit.TypingError, match="column"):
        types.parse_signature("void(float32[:,, int32)")
