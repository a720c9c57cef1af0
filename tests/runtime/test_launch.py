"""Launching: configurations, argument passing (NumPy arrays, device arrays,
scalars), implicit copies, dim3 intrinsics, and the errors raised before a
launch."""
import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

pytestmark = pytest.mark.usefixtures("target")


@gpujit.jit
def vector_add(a, b, c):
    i = gpujit.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_vector_add_numpy_arguments(rng, dtype):
    n = 100_003
    a = random_array(rng, n, dtype)
    b = random_array(rng, n, dtype)
    a_copy, b_copy = a.copy(), b.copy()
    c = poison(n, dtype)
    vector_add[(n + 255) // 256, 256](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    # Inputs that the kernel only reads are not copied back (and not changed).
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(b, b_copy)


def test_vector_add_device_arrays(rng):
    n = 1 << 16
    a = random_array(rng, n, "float32")
    b = random_array(rng, n, "float32")
    d_a, d_b = gpujit.to_device(a), gpujit.to_device(b)
    d_c = gpujit.device_array(n, np.float32)
    assert d_c.shape == (n,) and d_c.dtype == np.float32 and d_c.size == n
    vector_add[n // 256, 256](d_a, d_b, d_c)
    c = d_c.copy_to_host()
    np.testing.assert_array_equal(c, a + b)
    np.testing.assert_array_equal(d_a.copy_to_host(), a)


def test_device_array_round_trip(rng):
    a = random_array(rng, 1000, "int64")
    d = gpujit.to_device(a)
    assert d.shape == a.shape and d.dtype == a.dtype and len(d) == 1000
    out = poison(1000, "int64")
    d.copy_to_host(out)
    np.testing.assert_array_equal(out, a)


@gpujit.jit(contract=False)   # NumPy's rounding: the check is exact, on the argument types
def axpb(alpha, beta, x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + beta


@pytest.mark.parametrize("alpha,beta", [
    (2, 3),                          # Python int -> int64
    (0.5, -1.25),                    # Python float -> float64
    (True, False),                   # bool
    (np.float32(1.5), np.float32(2)),  # NumPy scalars keep their dtype
    (np.int32(-3), np.int64(7)),
])
def test_scalar_arguments(rng, alpha, beta):
    x = random_array(rng, 5000, "float32")
    out = poison(5000, "float64")
    axpb[20, 256](alpha, beta, x, out)
    # Python int/float/bool arguments are int64/float64/bool in the kernel (not weak literals).
    strong = {int: np.int64, float: np.float64, bool: np.bool_}
    al, be = (strong.get(type(v), lambda s: s)(v) for v in (alpha, beta))
    with np.errstate(all="ignore"):
        want = np.array([al * x[k] + be for k in range(x.size)])
    np.testing.assert_array_equal(out, want.astype(np.float64))


@gpujit.jit
def store_scalar(out, x):
    out[0] = x


class Float32Subclass(np.float32):
    """A subclass takes the general path, not the exact-type fast one."""


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_numpy_scalar_arguments_keep_dtype_and_bits(rng, dtype):
    # NumPy scalars are read in place by exact type (the launcher's fast
    # path): each one's value arrives bit for bit, and its dtype selects
    # the specialisation.
    for _ in range(3):
        value = random_array(rng, 1, dtype)[0]
        out = poison(1, dtype)
        store_scalar[1, 1](out, value)
        assert out.view(np.uint8).tobytes() == np.array([value]).view(np.uint8).tobytes()
    assert any(sig[1] == dtype for sig in store_scalar.signatures)


def test_numpy_scalar_subclass_argument(rng):
    value = Float32Subclass(rng.random())
    out = poison(1, "float32")
    store_scalar[1, 1](out, value)
    assert out[0] == np.float32(value)


def misaligned(values):
    """values in a writable array whose data starts one byte past an item
    boundary (NumPy's flags.aligned is False), as np.frombuffer at an offset
    and arrays that Dask hands over give."""
    raw = np.empty(values.nbytes + 1, np.uint8)
    a = np.frombuffer(raw.data, dtype=values.dtype, count=values.size, offset=1)
    a[:] = values
    assert not a.flags.aligned and a.flags.writeable
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_misaligned_host_arrays_run_through_aligned_copies(dtype, rng):
    """Read and written through aligned copies (the CPU target uses host
    memory in place, and a kernel's loads assume alignment); the written
    one gets its results back."""
    a = misaligned(random_array(rng, 300, dtype))
    out = misaligned(poison(300, dtype))
    vector_add[3, 128](a, a, out)
    np.testing.assert_array_equal(out, a + a)


@gpujit.jit
def sizes(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a.size * 1000000 + a.shape[0] * 1000 + len(a)


def test_size_shape_len():
    a = np.arange(123, dtype=np.float64)
    out = poison(10, "int64")
    sizes[1, 32](a, out)
    np.testing.assert_array_equal(out, np.full(10, 123 * 1000000 + 123 * 1000 + 123))


@gpujit.jit
def dim3_values(idx, dims):
    i = gpujit.grid(1)
    if i < idx.shape[0]:
        idx[i] = threadIdx.x + blockIdx.x * 10000
        dims[i] = blockDim.x + gridDim.x * 10000 + gpujit.gridsize(1) * 100000000


from gpujit import blockDim, blockIdx, gridDim, threadIdx  # noqa: E402


@pytest.mark.parametrize("blocks,threads", [(1, 1), (3, 64), (7, 96), (2, 1024)])
def test_dim3_intrinsics(blocks, threads):
    n = blocks * threads
    idx, dims = poison(n, "int64"), poison(n, "int64")
    dim3_values[blocks, threads](idx, dims)
    i = np.arange(n)
    np.testing.assert_array_equal(idx, i % threads + (i // threads) * 10000)
    np.testing.assert_array_equal(dims, np.full(n, threads + blocks * 10000 + n * 100000000))


@gpujit.jit
def tuple_config(out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = threadIdx.y * 100 + blockIdx.y * 10 + threadIdx.z


def test_tuple_launch_configuration():
    out = poison(4 * 8, "int64")
    tuple_config[(4, 2, 1), (8, 3, 2)](out)
    # Threads with y, z > 0 write the same i as y = z = 0 ones: check only that
    # every element was written with a value the formula can produce.
    assert np.all(out >= 0) and np.all(out < 1000)


def test_zero_blocks_is_a_no_op():
    out = poison(16, "float32")
    before = out.copy()
    vector_add[0, 32](np.ones(16, np.float32), np.ones(16, np.float32), out)
    np.testing.assert_array_equal(out, before)


def test_block_too_large_raises_before_launch():
    with pytest.raises(ValueError, match="1024"):
        vector_add[1, 2048](np.ones(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))


def test_bad_grid_raises():
    with pytest.raises(ValueError):
        vector_add[(1, 1 << 20, 1), 32](np.ones(4, np.float32), np.ones(4, np.float32),
                                        np.ones(4, np.float32))
    with pytest.raises((ValueError, TypeError)):
        vector_add[-1, 32](np.ones(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))


def test_wrong_argument_count():
    with pytest.raises(TypeError, match="3"):
        vector_add[1, 32](np.ones(4, np.float32), np.ones(4, np.float32))


def test_unsupported_argument_type():
    with pytest.raises(TypeError):
        vector_add[1, 32]("abc", np.ones(4, np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("good,bad", [((2, 4), (2.0, 4)), ((2, 4), (2 + 0j, 4)),
                                      ((2, 4), (np.float64(2), np.float32(4))),
                                      ((1, 1), (True, True)), (((2, 1), 4), ((2.0, 1), 4))])
def test_configuration_equal_to_the_last_is_still_checked(good, bad, rng):
    # The launcher of the last configuration is reused only for the same
    # values of the same types: one that compares equal (2.0 == 2) but is
    # refused on its own is refused after it too.
    a = random_array(rng, 8, "float32")
    out = poison(8, "float32")
    vector_add[good](a, a, out)
    with pytest.raises(TypeError) as after:
        vector_add[bad](a, a, out)
    fresh = gpujit.jit(vector_add.py_func)
    with pytest.raises(TypeError) as alone:
        fresh[bad](a, a, out)
    assert str(after.value) == str(alone.value)


def test_a_mutated_configuration_object_is_read_again(rng):
    # A 0-d array (any object with __index__) may change between launches:
    # its launcher is never reused, so the new value runs, or is refused.
    a = random_array(rng, 40, "float32")
    blocks = np.array(2)
    out = poison(40, "float32")
    vector_add[blocks, 4](a, a, out)
    np.testing.assert_array_equal(out[:8], a[:8] * 2)
    assert np.isnan(out[8:]).all()
    blocks[()] = 5
    vector_add[blocks, 4](a, a, out)
    np.testing.assert_array_equal(out[:20], a[:20] * 2)
    assert np.isnan(out[20:]).all()
    blocks[()] = -1
    with pytest.raises(ValueError):
        vector_add[blocks, 4](a, a, out)


def test_call_without_configuration():
    with pytest.raises(ValueError, match=r"\["):   # numba's class
        vector_add(np.ones(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("config", [(1,), (1, 2, 0, 0, 5), 1])
def test_malformed_configuration_is_a_value_error(config):
    # numba's class; the message says what a configuration is
    with pytest.raises(ValueError, match=r"kernel\[griddim, blockdim\]"):
        vector_add[config]


def test_context_survives_errors(rng):
    with pytest.raises(gpujit.GpujitError):
        gpujit.compile_ptx(lambda a: [a], "void(float32[:])")
    with pytest.raises(ValueError):
        vector_add[1, 4096](np.ones(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))
    test_vector_add_device_arrays(rng)


def test_inspect_asm_after_launch():
    vector_add[1, 32](np.ones(4, np.float32), np.ones(4, np.float32), np.zeros(4, np.float32))
    asm = vector_add.inspect_asm()
    assert isinstance(asm, dict) and asm
    assert all(".entry" in ptx for ptx in asm.values())


def test_inspect_asm_of_a_signature_adds_no_signature():
    kernel = gpujit.jit(vector_add.py_func)
    a = np.ones(4, np.float32)
    kernel[1, 32](a, a, np.zeros(4, np.float32))
    (sig,) = kernel.signatures
    for asked in (sig, "void(float32[::1], float32[::1], float32[::1])"):
        assert ".entry" in kernel.inspect_asm(asked)
        assert ".entry" in kernel.inspect_asm()[sig]
        assert kernel.signatures == [sig]


@pytest.mark.parametrize("shape", [2**62, (2**32, 2**32), 2**63 - 1])
def test_device_array_too_big_is_refused(shape):
    # The byte count overflows: refused before any allocation, as NumPy does.
    with pytest.raises(ValueError, match="too big"):
        gpujit.device_array(shape, np.float64)


@gpujit.jit
def takes_one(x):
    i = gpujit.grid(1)
    if i < x.size:
        x[i] = 0


@pytest.mark.parametrize("arg", [np.zeros(3, "M8[s]"), np.zeros(3, ">f4"), np.zeros(3, "U2")],
                         ids=["datetime64", "big-endian", "str"])
def test_array_of_unsupported_dtype_names_argument_and_dtype(arg):
    with pytest.raises(TypeError, match=r"argument 1 \('x'\) has dtype") as info:
        takes_one[1, 32](arg)
    assert str(arg.dtype) in str(info.value) or arg.dtype.str in str(info.value)


@pytest.mark.parametrize("arg", [None, np.array(["ab"]), np.zeros(3, ">f4")])
def test_to_device_of_unsupported_dtype_names_dtype(arg):
    with pytest.raises(TypeError, match="no type for dtype"):
        gpujit.to_device(arg)


def test_numpy_integers_in_launch_configuration(rng):
    n = 1000
    a, b = random_array(rng, n, "int64"), random_array(rng, n, "int64")
    c = poison(n, "int64")
    vector_add[np.int64(4), (np.int32(256),)](a, b, c)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("config", [(2**70, 1), (1, -5), (True, 32)])
def test_out_of_range_launch_dimensions(config):
    with pytest.raises((ValueError, TypeError), match="griddim|blockdim"):
        vector_add[config](np.ones(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32))


# ---- the implicit-copy warning -------------------------------------------------------------

def copy_through(src, dst):
    i = gpujit.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def launch_fresh(src, dst):
    """A new dispatcher of copy_through (so its once-per-kernel warning is
    fresh), launched over dst."""
    gpujit.jit(copy_through)[(dst.size + 255) // 256, 256](src, dst)


@pytest.mark.usefixtures("target")
def test_large_host_arrays_warn_once_per_kernel_where_they_are_copied(target, rng,
                                                                      monkeypatch):
    """numba's NumbaPerformanceWarning: on a GPU, a kernel given host arrays
    of 1 MiB or more warns once (they are copied in and out at every
    launch); on the CPU target host arrays are used in place and nothing
    warns.  GPUJIT_WARN_ON_IMPLICIT_COPY=0 silences it; device arrays and
    small host arrays never warn; a filter that makes it an error stops the
    launch before anything is copied."""
    import warnings
    monkeypatch.delenv("GPUJIT_WARN_ON_IMPLICIT_COPY", raising=False)
    src = rng.standard_normal(1 << 18)   # 2 MiB of float64
    kernel = gpujit.jit(copy_through)
    dst = np.full_like(src, np.nan)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            kernel[(src.size + 255) // 256, 256](src, dst)
    assert (dst == src).all()
    perf = [w for w in caught if issubclass(w.category, gpujit.GpujitPerformanceWarning)]
    if target == "cpu":
        assert perf == []
        return
    assert len(perf) == 1
    assert "copy_through" in str(perf[0].message)
    assert "copied to the GPU and back" in str(perf[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpujit.GpujitPerformanceWarning)
        monkeypatch.setenv("GPUJIT_WARN_ON_IMPLICIT_COPY", "0")
        launch_fresh(src, np.full_like(src, np.nan))
        monkeypatch.delenv("GPUJIT_WARN_ON_IMPLICIT_COPY")
        small, out = src[:1000].copy(), np.zeros(1000)
        launch_fresh(small, out)
        assert (out == small).all()
        d_dst = gpujit.device_array_like(src)
        launch_fresh(gpujit.to_device(src), d_dst)
        assert (d_dst.copy_to_host() == src).all()
        poisoned = np.full_like(src, np.nan)
        with pytest.raises(gpujit.GpujitPerformanceWarning):
            launch_fresh(src, poisoned)
        assert np.isnan(poisoned).all()


@gpujit.jit
def add_index(a):
    i = gpujit.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] + i


@pytest.mark.parametrize("step", [2, -1, -2])
def test_strided_buffer_objects_are_written_back(rng, step):
    # a memoryview of a bytearray, strided: the kernel runs on a contiguous
    # copy, and its writes go back into the bytearray
    data = bytearray(rng.integers(0, 100, 11, dtype=np.uint8).tobytes())
    want = np.frombuffer(bytes(data), np.uint8).copy()
    view = memoryview(data)[::step]
    add_index[1, 32](view)
    want[::step] += np.arange(len(want[::step]), dtype=np.uint8)
    np.testing.assert_array_equal(np.frombuffer(bytes(data), np.uint8), want)
