"""Each deliberate difference from numba.cuda that docs/coming-from-numba.md
lists holds, as the page shows it (one test per entry, in its order)."""
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import poison
from numba_shim import TypingError, UnsupportedError, cuda, float32, int32

# ---- typing -----------------------------------------------------------------------------


@cuda.jit
def times_two(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 2.0


def test_float_literals_are_weak(target):
    x = np.full(32, 3e38, np.float32)
    out = poison(32, np.float64)
    times_two[1, 32](x, out)
    np.testing.assert_array_equal(out, np.inf)   # a float32 product; numba's float64 is 6e38


@cuda.jit
def product(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i]


def test_int32_arithmetic_wraps_at_32_bits(target):
    a = np.full(32, 70000, np.int32)
    b = np.full(32, 70000, np.int32)
    out = poison(32, np.int64)
    product[1, 32](a, b, out)
    np.testing.assert_array_equal(out, (a * b).astype(np.int64))   # NumPy's int32 wraps too
    assert out[0] != 70000 * 70000


@cuda.jit
def grid_index_is_wide(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x + 2 ** 40


def test_thread_registers_are_int64(target):
    out = poison(64, np.int64)
    grid_index_is_wide[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(64) + 2 ** 40)


@cuda.jit
def sum_of_squares(n, out):
    s = 0
    for i in range(n):
        s += i * i
    out[0] = s


def test_range_loop_variable_has_its_arguments_type(target):
    out = poison(1, np.int64)
    sum_of_squares[1, 1](np.int32(100000), out)     # i and s are int32: s wraps
    want = sum(i * i for i in range(100000))
    assert out[0] == (want + 2**31) % 2**32 - 2**31 and out[0] != want
    sum_of_squares[1, 1](100000, out)                # int64, as numba's
    assert out[0] == want


# ---- floating point -----------------------------------------------------------------------

def sqrt_over(r, x, y):
    r[0] = math.sqrt(x) / y


def test_a_fastmath_set_applies_its_flags():
    ptx, _ = cuda.compile_ptx(sqrt_over, (float32[::1], float32, float32), fastmath={"arcp"})
    assert "div.approx.f32" in ptx and "sqrt.rn.f32" in ptx and ".ftz" not in ptx
    ptx, _ = cuda.compile_ptx(sqrt_over, (float32[::1], float32, float32), fastmath=True)
    assert "div.approx.ftz.f32" in ptx and "sqrt.approx.ftz.f32" in ptx   # numba-cuda's


@cuda.jit(device=True)
def ratio(a, b):
    return a / b


def ratio_kernel(r, x, y):
    r[0] = ratio(x, y)


def test_a_kernels_fastmath_covers_its_device_functions():
    ptx, _ = cuda.compile_ptx(ratio_kernel, (float32[::1], float32, float32), fastmath=True)
    assert "div.approx.ftz.f32" in ptx and "div.rn" not in ptx


def fused(r, a, b, c):
    r[0] = a * b + c


def test_contract_false_is_gpujits():
    sig = (float32[::1], float32, float32, float32)
    assert "fma.rn.f32" in cuda.compile_ptx(fused, sig)[0]   # as numba-cuda's default
    assert "fma" not in cuda.compile_ptx(fused, sig, contract=False)[0]


# ---- warp primitives --------------------------------------------------------------------

@cuda.jit
def full_ballot(out):
    m = cuda.ballot_sync(0xffffffff, True)
    if cuda.laneid == 0:
        out[0] = m == 0xffffffff
        out[1] = m


def test_ballot_masks_are_uint32(target):
    out = poison(2, np.int64)
    full_ballot[1, 32](out)
    assert out[0] == 1 and out[1] == 0xffffffff


@cuda.jit
def previous_lane(out):
    prev = cuda.laneid - 1
    out[cuda.threadIdx.x] = prev


def test_laneid_is_int64(target):
    out = poison(32, np.int64)
    previous_lane[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(32) - 1)   # -1 in lane 0


# ---- print ----------------------------------------------------------------------------

def test_bools_print(target, tmp_path):
    # A kernel prints through the C runtime: run it in a child and read its stdout.
    script = tmp_path / "print_bool.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np
        from numba_shim import cuda
        cuda.set_target({target!r})

        @cuda.jit
        def show(x):
            i = cuda.grid(1)
            if i < x.size:
                print(x[i] > 0)

        show[1, 2](np.array([1.0, -1.0]))
    """))
    proc = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == ["False", "True"]


# ---- dispatcher and compilation -------------------------------------------------------

def test_signatures_are_tuples_of_type_names(target):
    @cuda.jit
    def kernel(x):
        x[cuda.grid(1)] = 1

    kernel[1, 32](np.zeros(32, np.float32))
    assert list(kernel.overloads) == [("array(float32, 1d, C)",)]
    assert kernel.signatures == [("array(float32, 1d, C)",)]


def add(a, b):
    return a + b


def test_device_functions_have_the_c_abi():
    ptx, resty = cuda.compile_ptx(add, int32(int32, int32), device=True, abi="c")
    assert resty == "int32"
    assert re.search(r"\(\.param \.b32 func_retval0\) add\(\s*\.param \.b32 add_param_0,"
                     r"\s*\.param \.b32 add_param_1\s*\)", ptx)
    ptx, _ = cuda.compile_ptx(add, int32(int32, int32), device=True)   # abi="numba"
    assert re.search(r"\(\.param \.b32 func_retval0\) _gj_add\(\s*\.param \.b32", ptx)
    ptx, _ = cuda.compile_ptx(lambda x: x, int32(int32), device=True, abi="c")
    assert re.search(r"\(\.param \.b32 func_retval0\) _lambda_\(", ptx)
    with pytest.raises(ValueError, match="a C ABI name is a C identifier"):
        cuda.compile_ptx(add, int32(int32, int32), device=True, abi="c",
                         abi_info={"abi_name": "add.v2"})


@pytest.mark.parametrize("target", ["cpu"], indirect=True)
def test_inspect_llvm_shows_the_current_target(target):
    @cuda.jit
    def kernel(x):
        x[cuda.grid(1)] = 1

    kernel[1, 32](np.zeros(32, np.float32))
    sig = ("array(float32, 1d, C)",)
    assert "nvptx64" not in kernel.inspect_llvm(sig)
    assert ".entry" in kernel.inspect_asm(sig)


@cuda.jit
def block_size(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.blockDim.x


def test_suggest_config_is_gpujits(target):
    out = poison(1000, np.int64)
    block_size.forall(out.size)(out)   # numba's: the occupancy calculator's block size
    blocks, threads = block_size.suggest_config(out.size)
    np.testing.assert_array_equal(out, threads)
    assert blocks == math.ceil(out.size / threads)
    if target == "cpu":
        assert threads == 128   # it has no occupancy calculator


def test_a_launch_beyond_launch_bounds_is_a_value_error(target):
    def f(x):
        x[cuda.grid(1)] = 1

    k = cuda.jit(launch_bounds=64)(f)
    with pytest.raises(ValueError, match="exceeds the kernel's launch_bounds of 64"):
        k[1, 128](np.zeros(128, np.float32))


def test_cache_true_keeps_kernels_in_the_user_cache_keyed_by_globals(target, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GPUJIT_CACHE", raising=False)
    source = textwrap.dedent('''
        from numba_shim import cuda
        SCALE = {scale}
        @cuda.jit(cache=True)
        def scale(x):
            x[cuda.grid(1)] *= SCALE
    ''')
    hits = cuda.cache_info()["hits"]
    for scale, expect_hits in [(2, 0), (3, 0), (2, 1)]:
        ns = {}
        exec(compile(source.format(scale=scale), str(tmp_path / "src.py"), "exec"), ns)
        x = np.ones(32, np.float32)
        ns["scale"][1, 32](x)
        np.testing.assert_array_equal(x, scale)
        assert cuda.cache_info()["hits"] - hits == expect_hits
    assert len(list((tmp_path / "cache").glob("*.gjk"))) == 2
    assert not (tmp_path / "__pycache__").exists()


# ---- errors in kernels -----------------------------------------------------------------

def last_element(a, out):
    out[0] = a[a.size]


def test_boundscheck_works_on_the_gpu(target, monkeypatch):
    monkeypatch.delenv("GPUJIT_BOUNDSCHECK", raising=False)
    with pytest.raises(IndexError, match="^index 4 is out of bounds for axis 0 with size 4: "
                                         "array 'a'"):
        cuda.jit(boundscheck=True)(last_element)[1, 1](np.arange(4.0), np.zeros(1))
    with pytest.raises(IndexError):                       # debug checks too
        cuda.jit(debug=True)(last_element)[1, 1](np.arange(4.0), np.zeros(1))
    monkeypatch.setenv("GPUJIT_BOUNDSCHECK", "1")         # the default of later kernels...
    checked = cuda.jit(last_element)
    unchecked = cuda.jit(boundscheck=False)(last_element)   # ...which an explicit option beats
    with pytest.raises(IndexError):
        checked[1, 1](np.arange(4.0), np.zeros(1))
    assert "gj$error" not in unchecked.inspect_asm("void(float64[::1], float64[::1])")


@cuda.jit(device=True)
def checked_log(x):
    if x <= 0:
        raise ValueError("log of a non-positive number")
    return math.log(x)


def logs(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = checked_log(x[i])


def test_raise_reports_from_device_functions(target):
    x = np.array([1.0, 2.0, -1.0, 4.0])
    out = np.zeros(4)
    with pytest.raises(ValueError, match=r"^log of a non-positive number \(.*, in kernel logs "
                                         r"at threadIdx \(2, 0, 0\) of blockIdx \(0, 0, 0\)$"):
        cuda.jit(debug=True)(logs)[1, 4](x, out)
    np.testing.assert_array_equal(out, [0.0, math.log(2.0), 0.0, math.log(4.0)])
    out = np.zeros(4)
    cuda.jit(logs)[1, 4](x, out)                          # without debug: the thread ends
    np.testing.assert_array_equal(out, [0.0, math.log(2.0), 0.0, math.log(4.0)])


# ---- device arrays ---------------------------------------------------------------------


def test_transpose_is_a_view(target, rng):
    a = rng.random((3, 4))
    d = cuda.to_device(a)
    t = d.T
    t[0, 1] = 5
    assert t.base is d and d[1, 0] == 5
    assert cuda.to_device(rng.random((2, 3, 4))).T.shape == (4, 3, 2)


def test_copies_take_host_arrays_of_any_layout(target, rng):
    a = rng.random(6)
    out = poison((6, 3), np.float64)
    cuda.to_device(a)[::-1].copy_to_host(out[:, 0])
    np.testing.assert_array_equal(out[:, 0], a[::-1])
    assert np.isnan(out[:, 1:]).all()
    host = cuda.to_device(np.tile(a, (2, 1)))[:, ::2].copy_to_host()
    assert host.flags.c_contiguous and host.shape == (2, 3)


def test_copy_to_device_writes_into_views_and_never_casts(target):
    d = cuda.to_device(np.zeros((5, 3), np.float32))
    d[:, 0].copy_to_device(np.arange(5, dtype=np.float32))
    want = np.zeros((5, 3), np.float32)
    want[:, 0] = np.arange(5)
    np.testing.assert_array_equal(d.copy_to_host(), want)
    with pytest.raises(TypeError, match="incompatible dtype"):   # as numba
        d[:, 1].copy_to_device(np.arange(5))
    np.testing.assert_array_equal(d.copy_to_host(), want)


def test_writing_a_strided_view_rewrites_its_extent(target, rng):
    a = rng.random((4, 3))
    d = cuda.to_device(a)
    d[:, 0] = 1.0
    a[:, 0] = 1.0
    np.testing.assert_array_equal(d.copy_to_host(), a)   # the rest as it was read


def test_view_follows_numpy(target, rng):
    a = rng.random((5, 8)).astype(np.float32)
    got = cuda.to_device(a)[:, :4].view(np.int64)
    assert got.shape == (5, 2)
    np.testing.assert_array_equal(got.copy_to_host(), a[:, :4].view(np.int64))


def test_the_implicit_copy_warning_comes_once_per_kernel(target, rng, monkeypatch):
    import warnings
    import gpujit
    monkeypatch.delenv("GPUJIT_WARN_ON_IMPLICIT_COPY", raising=False)

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    a = rng.random(1 << 18)   # 2 MiB
    want = a * 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        double[1024, 256](a)
        double[1024, 256](a)   # numba warns again
    np.testing.assert_array_equal(a, want)
    perf = [w for w in caught if issubclass(w.category, gpujit.GpujitPerformanceWarning)]
    assert len(perf) == (1 if target == "cuda" else 0)


# ---- not supported yet (the page's last table) ------------------------------------------

@cuda.jit("float64(float64)", device=True)
def halve_to_one(x):
    if x <= 1.0:
        return x
    return halve_to_one(x / 2.0)


def recursion(a, out):
    out[0] = halve_to_one(a[0])


def transpose(a, out):
    out[0] = a.T[0]


def fp16(a, out):
    out[0] = cuda.fp16.hadd(a[0], a[0])


def cooperative_groups(a, out):
    cuda.cg.this_grid().sync()
    out[0] = a[0]


@pytest.mark.parametrize("func", [recursion, transpose, fp16, cooperative_groups])
def test_not_supported_yet(func):
    with pytest.raises((UnsupportedError, TypingError)):
        cuda.compile_ptx(func, "void(float64[::1], float64[::1])")


def test_record_dtypes_are_not_supported_yet(target):
    @cuda.jit
    def kernel(a):
        a[0] = a[1]

    with pytest.raises(TypeError, match="no type for"):
        kernel[1, 1](np.zeros(2, np.dtype([("x", np.float64), ("y", np.int32)])))


def test_libdevice_and_random_modules_are_not_there_yet():
    assert not hasattr(cuda, "libdevice") and not hasattr(cuda, "random")
