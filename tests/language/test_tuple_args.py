"""Tuples as kernel arguments, as numba.cuda accepts them: homogeneous and
heterogeneous tuples of numbers, nested tuples, and tuples of arrays (a host
array written through a tuple is copied back like a plain array argument);
each is flattened into kernel parameters and keyed by its element types.
Explicit signatures spell them as numba does (UniTuple(float32, 3),
Tuple((int32, float64))).  Values against CPython/NumPy on random data."""
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import assert_fma_close, poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 99


def launch(kernel, *args):
    out = args[-1]
    kernel[(out.shape[0] + 31) // 32, 32](*args)
    return out


@gpujit.jit
def affine(coef, a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = coef[0] * a[i] * a[i] + coef[1] * a[i] + coef[2]


def test_homogeneous_tuple_of_python_floats(rng):
    a = random_array(rng, N, "float64")
    coef = tuple(float(c) for c in rng.random(3) * 10 - 5)
    got = launch(affine, coef, a, poison(N, "float64"))
    want = [coef[0] * x * x + coef[1] * x + coef[2] for x in a]
    # a * b + c contracts to FMAs, each rounding once where Python rounds
    # twice: the results differ by a few ulps of the terms, not of the sum
    # (which may cancel to near zero)
    terms = np.abs(coef[0] * a * a) + np.abs(coef[1] * a) + abs(coef[2])
    np.testing.assert_array_less(np.abs(got - want), 8 * np.finfo(np.float64).eps * terms)


def test_tuple_of_numpy_scalars_keeps_their_dtypes(rng):
    a = random_array(rng, N, "float32")
    coef = tuple(np.float32(c) for c in rng.random(3) * 10 - 5)
    got = launch(affine, coef, a, poison(N, "float32"))
    ref = coef[0] * a * a + coef[1] * a + coef[2]
    # float32 throughout; contracted, so within a few ulps of the terms, not
    # of the sum, which may cancel to near zero (as the float64 test above)
    terms = np.abs(coef[0] * a * a) + np.abs(coef[1] * a) + np.abs(coef[2])
    np.testing.assert_array_less(np.abs(got - ref), 8 * np.finfo(np.float32).eps * terms)
    assert any("tuple(float32, float32, float32)" in s for s in map(str, affine.signatures))


@gpujit.jit
def mixed(t, a, out):
    i = gpujit.grid(1)
    if i < out.size:
        n, scale, flag, z = t
        v = a[i] * scale + n
        if flag:
            v = -v
        out[i] = v + z.real


def test_heterogeneous_tuple(rng):
    a = random_array(rng, N, "float32")
    for flag in (True, False):
        t = (int(rng.integers(-50, 50)), np.float32(rng.random() * 4), flag, 1.5 - 2j)
        got = launch(mixed, t, a, poison(N, "float64"))
        ref = [(-1 if flag else 1) * (float(np.float32(x) * t[1]) + t[0]) + 1.5 for x in a]
        np.testing.assert_allclose(got, ref, rtol=1e-6)


@gpujit.jit
def nested(t, out):
    i = gpujit.grid(1)
    if i < out.size:
        (a, (b, c)), d = t
        out[i] = (a * i + b) * c - d + len(t)


def test_nested_tuples(rng):
    t = ((int(rng.integers(1, 9)), (np.int32(rng.integers(-9, 9)), 2.5)), np.int16(7))
    got = launch(nested, t, poison(N, "float64"))
    (a, (b, c)), d = t
    np.testing.assert_allclose(got, [(a * i + int(b)) * c - int(d) + 2 for i in range(N)])


@gpujit.jit
def axpy_pair(arrays, alpha, out):
    i = gpujit.grid(1)
    if i < out.size:
        x, y = arrays
        out[i] = alpha * x[i] + y[i]


@gpujit.jit
def write_through_tuple(arrays, n):
    i = gpujit.grid(1)
    if i < n:
        src, dst, grid2 = arrays
        dst[i] = src[i] * 2
        if i < grid2.size:                       # one writer per element
            grid2[i // grid2.shape[1], i % grid2.shape[1]] = i


def test_tuple_of_arrays_read(rng):
    x = random_array(rng, N, "float32")
    y = random_array(rng, N, "float32")
    x.setflags(write=False)   # read-only inputs are fine: the kernel does not write the tuple
    y.setflags(write=False)
    got = launch(axpy_pair, (x, y), np.float32(3), poison(N, "float32"))
    assert_fma_close(got, np.float32(3) * x + y, np.float32(3) * x)   # a * x + y may fuse


def test_tuple_of_arrays_written_is_copied_back(rng):
    src = random_array(rng, N, "int64")
    dst = poison(N, "int64")
    grid2 = poison((3, 5), "int32")
    write_through_tuple[(N + 31) // 32, 32]((src, dst, grid2), N)
    np.testing.assert_array_equal(dst, src * 2)
    np.testing.assert_array_equal(grid2, np.arange(15, dtype="int32").reshape(3, 5))


def test_read_only_array_in_a_written_tuple_is_refused(rng):
    src = random_array(rng, N, "int64")
    src.setflags(write=False)
    with pytest.raises(ValueError, match=r"'arrays\[0\]' is read-only"):
        write_through_tuple[1, 32]((src, poison(N, "int64"), poison((3, 5), "int32")), N)


def test_strided_and_device_arrays_in_a_tuple(rng):
    src = random_array(rng, 2 * N, "int64")[::2]      # strided: through a temporary
    base = poison((N, 2), "int64")
    dst = base[:, 1]                                   # a strided view, written back
    grid2 = gpujit.to_device(poison((3, 5), "int32"))
    write_through_tuple[(N + 31) // 32, 32]((src, dst, grid2), N)
    np.testing.assert_array_equal(dst, src * 2)
    assert (base[:, 0] == poison(1, "int64")[0]).all()
    assert (grid2.copy_to_host() < N).all()


def test_each_tuple_type_is_a_specialisation(rng):
    @gpujit.jit
    def total(t, out):
        i = gpujit.grid(1)
        if i < out.size:
            s = 0
            for v in t:
                s += v
            out[i] = s

    for t in [(1, 2), (1, 2, 3), (np.int8(1), np.int8(2)), (1.5, 2.25)]:
        got = launch(total, t, poison(4, "float64"))
        np.testing.assert_array_equal(got, [sum(float(v) for v in t)] * 4)
    assert len(total.signatures) == 4
    launch(total, (5, 6), poison(4, "float64"))
    assert len(total.signatures) == 4


def test_explicit_signatures_with_numba_tuple_spellings(rng):
    @gpujit.jit(["void(UniTuple(float32, 3), float32[:])",
                 "void(Tuple((int32, float64)), float64[:])"])
    def k(t, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = t[0] * i + t[1]

    out32 = launch(k, (1.5, 2.25, 7.0), poison(N, "float32"))   # Python floats -> float32
    np.testing.assert_array_equal(out32, np.float32(1.5) * np.arange(N, dtype="float32") + 2.25)
    out64 = launch(k, (3, 0.5), poison(N, "float64"))
    np.testing.assert_array_equal(out64, 3.0 * np.arange(N) + 0.5)
    assert sorted(map(str, k.signatures)) == sorted(
        ["('tuple(float32, float32, float32)', 'array(float32, 1d, A)')",
         "('tuple(int32, float64)', 'array(float64, 1d, A)')"])
    with pytest.raises(TypeError, match="no matching definition"):
        launch(k, (1, 2, 3, 4), poison(N, "float32"))


def test_signature_parser_errors():
    def k(t, out):
        out[0] = t[0]

    with pytest.raises(gpujit.TypingError, match="UniTuple"):
        gpujit.compile_ptx(k, "void(UniTuple(float32), float32[:])")
    with pytest.raises(gpujit.TypingError, match="expected"):
        gpujit.compile_ptx(k, "void(Tuple((int32, float64), float32[:])")


def test_tuple_signatures_compile_to_ptx(ptxas, tmp_path):
    def k(t, u, out):
        a, b = u
        out[0] = t[0] + t[1] + a[0] + b

    ptx, _ = gpujit.compile_ptx(k, "void(UniTuple(int64 x 2), Tuple(float32[::1], int8), "
                                   "float64[:])")
    assert ".param .u64" in ptx
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")], check=True)


def test_numba_tuple_type_objects(rng):
    from gpujit.types import Tuple, UniTuple, float32, float64, int32, parse_signature, void

    assert repr(UniTuple(float32, 3)) == "UniTuple(float32 x 3)"
    assert Tuple((int32, int32)) == UniTuple(int32, 2)        # numba: one type is a UniTuple
    assert repr(Tuple((int32, float64))) == "Tuple(int32, float64)"
    sig = void(UniTuple(float32, 2), Tuple((int32, float64[::1])), float64[:])
    assert parse_signature(sig._signature_string()) == sig

    @gpujit.jit(sig)
    def k(t, u, out):
        i = gpujit.grid(1)
        if i < out.size:
            n, w = u
            out[i] = (t[0] * i + t[1]) * n + w[i]

    w = random_array(rng, N, "float64")
    got = launch(k, (0.5, 2.0), (3, w), poison(N, "float64"))
    np.testing.assert_allclose(got, [(np.float32(0.5) * i + 2.0) * 3 + w[i] for i in range(N)])
