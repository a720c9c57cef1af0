"""Device functions: @gpujit.jit(device=True) functions and plain @gpujit.jit
functions called from kernels, with scalar, tuple and array arguments and
return values, nested calls, inline=True and one specialisation per
argument-type signature; and the errors: a kernel that returns a value,
recursion (direct and mutual), launching a kernel from a kernel, calling a
device function from Python.  Execution tests run on every target; the
PTX and diagnostic tests need no GPU."""
import inspect
import io
import math
import os
import re
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import assert_assembles, assert_fma_close, poison, random_array

N = 1001  # not a multiple of the block size: the bounds check matters
THIS_FILE = os.path.basename(__file__)


def launch(kernel, *args):
    n = args[-1].shape[0]
    kernel[(n + 63) // 64, 64](*args)
    return args[-1]


def line_of(func, text):
    lines, start = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {func.__name__}")


# ---- device functions -----------------------------------------------------------


@gpujit.jit(device=True)
def clamp_add(a, b, lo, hi):
    return min(max(a + b, lo), hi)


@gpujit.jit(device=True)
def divmod_(a, b):
    return a // b, a % b


@gpujit.jit(device=True)
def dot2(p, q):
    return p[0] * q[0] + p[1] * q[1]


@gpujit.jit(device=True)
def axpy_at(a, x, y, out, i):
    out[i] = a * x[i] + y[i]


@gpujit.jit(device=True)
def pick(a, b, first):
    return a if first else b


@gpujit.jit(device=True, inline=True)
def sq(v):
    return v * v


@gpujit.jit(device=True)
def hyp2(a, b):
    return sq(a) + sq(b)


@gpujit.jit
def relu(v):
    return v if v > 0 else 0


@gpujit.jit(device=True)
def store_positive(out, i, v):
    if v < 0:
        out[i] = 0
        return
    out[i] = v


# ---- kernels that call them ------------------------------------------------------


@gpujit.jit
def k_clamp(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = clamp_add(x[i], y[i], -500.0, 500.0)


@gpujit.jit
def k_divmod(a, b, q, r):
    i = gpujit.grid(1)
    if i < q.size:
        t = divmod_(a[i], b[i])
        q[i] = t[0]
        r[i] = t[1]


@gpujit.jit
def k_dot2(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = dot2((x[i], y[i]), (y[i], x[i]))


@gpujit.jit
def k_axpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        axpy_at(a, x, y, out, i)


@gpujit.jit
def k_pick(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = pick(x, y, i % 3 == 0)[i]


@gpujit.jit
def k_nested(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = hyp2(a[i], b[i])


@gpujit.jit
def k_two_specialisations(a, x, out_i, out_f):
    i = gpujit.grid(1)
    if i < out_i.size:
        out_i[i] = sq(a[i])
        out_f[i] = sq(x[i])


@gpujit.jit
def k_plain(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = relu(x[i])


@gpujit.jit
def k_void(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        store_positive(out, i, x[i])


# ---- execution ------------------------------------------------------------------------

target = pytest.mark.usefixtures("target")


@target
def test_scalar_arguments_and_return(rng):
    x = random_array(rng, N, "float32")
    y = random_array(rng, N, "float32")
    got = launch(k_clamp, x, y, poison(N, "float32"))
    np.testing.assert_array_equal(got, np.clip(x + y, -500, 500).astype(np.float32))


@target
def test_tuple_return(rng):
    a = random_array(rng, N, "int32", -1000, 1000)
    b = random_array(rng, N, "int32", 1, 40) * rng.choice(np.array([-1, 1], np.int32), N)
    q, r = poison(N, "int32"), poison(N, "int32")
    k_divmod[(N + 63) // 64, 64](a, b, q, r)
    np.testing.assert_array_equal(q, a // b)   # Python's floor semantics, as NumPy's
    np.testing.assert_array_equal(r, a % b)


@target
def test_tuple_arguments(rng):
    x = random_array(rng, N, "float64")
    y = random_array(rng, N, "float64")
    got = launch(k_dot2, x, y, poison(N, "float64"))
    np.testing.assert_array_equal(got, x * y + y * x)


@target
def test_array_arguments_written_through_device_function(rng):
    # `out` is only stored to inside axpy_at: it must still be copied back.
    x = random_array(rng, N, "float32")
    y = random_array(rng, N, "float32")
    x_copy = x.copy()
    got = launch(k_axpy, np.float32(2.5), x, y, poison(N, "float32"))
    assert_fma_close(got, np.float32(2.5) * x + y, np.float32(2.5) * x)
    np.testing.assert_array_equal(x, x_copy)


@target
def test_array_return(rng):
    x = random_array(rng, N, "int64")
    y = random_array(rng, N, "int64")
    got = launch(k_pick, x, y, poison(N, "int64"))
    np.testing.assert_array_equal(got, np.where(np.arange(N) % 3 == 0, x, y))


@target
def test_nested_calls_and_inline(rng):
    a = random_array(rng, N, "int64", -3000, 3000)
    b = random_array(rng, N, "int64", -3000, 3000)
    got = launch(k_nested, a, b, poison(N, "int64"))
    np.testing.assert_array_equal(got, a * a + b * b)


@target
def test_one_function_two_specialisations(rng):
    a = random_array(rng, N, "int32", -40000, 40000)
    x = random_array(rng, N, "float64")
    out_i, out_f = poison(N, "int32"), poison(N, "float64")
    k_two_specialisations[(N + 63) // 64, 64](a, x, out_i, out_f)
    np.testing.assert_array_equal(out_i, a * a)   # int32 wraps, as in NumPy
    np.testing.assert_array_equal(out_f, x * x)


@target
def test_plain_jit_function_called_from_kernel(rng):
    x = random_array(rng, N, "float32")
    x[:4] = [0.0, -0.0, np.inf, -np.inf]
    got = launch(k_plain, x, poison(N, "float32"))
    np.testing.assert_array_equal(got, np.where(x > 0, x, np.float32(0)))


@target
def test_device_function_returning_none(rng):
    x = random_array(rng, N, "int32")
    got = launch(k_void, x, poison(N, "int32"))
    np.testing.assert_array_equal(got, np.maximum(x, 0))


@target
def test_device_function_from_closure(rng):
    def make(offset):
        @gpujit.jit(device=True)
        def shift(v):
            return v + offset

        @gpujit.jit
        def kernel(x, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = shift(x[i])
        return kernel

    x = random_array(rng, N, "int64")
    got = launch(make(17), x, poison(N, "int64"))
    np.testing.assert_array_equal(got, x + 17)


# ---- PTX (no GPU needed) ------------------------------------------------------------

SIG_I64 = "void(int64[:], int64[:], int64[:])"


def test_device_functions_are_ptx_functions(ptxas, tmp_path):
    # Without optimisation a device function stays a .func the kernel calls;
    # inline=True functions are inlined even then.
    ptx, _ = gpujit.compile_ptx(k_nested, SIG_I64, opt=False)
    assert ".func" in ptx and "call" in ptx
    assert "hyp2" in ptx and "_gj_dev_sq" not in ptx
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


CASES = [
    (k_clamp, "void(float32[:], float32[:], float32[:])"),
    (k_divmod, "void(int32[:], int32[:], int32[:], int32[:])"),
    (k_dot2, "void(float64[:], float64[:], float64[:])"),
    (k_axpy, "void(float32, float32[:], float32[:], float32[:])"),
    (k_pick, SIG_I64),
    (k_nested, SIG_I64),
    (k_two_specialisations, "void(int32[:], float64[:], int32[:], float64[:])"),
    (k_plain, "void(float32[:], float32[:])"),
    (k_void, "void(int32[:], int32[:])"),
]


@pytest.mark.parametrize("opt", [True, False])
@pytest.mark.parametrize("kernel,sig", CASES, ids=[c[0].__name__ for c in CASES])
def test_ptxas_accepts(kernel, sig, opt, ptxas, tmp_path):
    ptx, resty = gpujit.compile_ptx(kernel, sig, opt=opt, lineinfo=True)
    assert resty == "none"
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_specialisations_are_per_signature():
    ptx, _ = gpujit.compile_ptx(k_two_specialisations,
                                "void(int32[:], float64[:], int32[:], float64[:])", opt=False)
    # One function, two signatures: an int32 and a float64 square.
    assert "mul.lo.s32" in ptx and re.search(r"mul(\.rn)?\.f64", ptx)   # LLVM 21: mul.f64


def test_inspect_types_shows_call_result():
    kernel = gpujit.jit(k_divmod.py_func)
    kernel.compile("void(int32[:], int32[:], int32[:], int32[:])")
    buf = io.StringIO()
    kernel.inspect_types(file=buf)
    assert "t: tuple(int32, int32)" in buf.getvalue()


# ---- errors ---------------------------------------------------------------------------


def compile_error(func, sig, exc):
    with pytest.raises(exc) as info:
        gpujit.compile_ptx(func, sig)
    return str(info.value)


def kernel_returns_value(x, out):
    out[0] = x[0]
    return out[0]


def test_kernel_returning_value_is_unsupported():
    msg = compile_error(kernel_returns_value, "void(float32[:], float32[:])",
                        gpujit.UnsupportedError)
    assert f":{line_of(kernel_returns_value, 'return out[0]')}:" in msg
    assert "cannot return a value" in msg


def test_plain_jit_function_with_return_value_cannot_be_launched():
    # relu is callable from kernels, but launching it compiles it as a kernel.
    with pytest.raises(gpujit.UnsupportedError, match="cannot return a value"):
        gpujit.compile_ptx(relu, "void(float32)")


@gpujit.jit(device=True)
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def calls_factorial(out):
    out[0] = factorial(5)


def test_recursion_is_unsupported_at_the_call():
    msg = compile_error(calls_factorial, "void(int64[:])", gpujit.UnsupportedError)
    assert "recursive call to 'factorial'" in msg
    assert f":{line_of(factorial.py_func, 'factorial(n - 1)')}:" in msg
    assert "n * factorial(n - 1)" in msg   # the source line, with a caret
    assert f"{line_of(calls_factorial, 'factorial(5)')}" in msg   # during: the kernel's call


@gpujit.jit(device=True)
def ping(n):
    return pong(n - 1) if n > 0 else 0


@gpujit.jit(device=True)
def pong(n):
    return ping(n - 1)


def calls_ping(out):
    out[0] = ping(3)


def test_mutual_recursion_is_unsupported():
    msg = compile_error(calls_ping, "void(int64[:])", gpujit.UnsupportedError)
    assert "recursive call to 'ping'" in msg
    assert f":{line_of(pong.py_func, 'ping(n - 1)')}:" in msg


@gpujit.jit
def self_calling(out):
    out[0] = 1
    self_calling(out)


def test_kernel_calling_itself_is_recursion():
    msg = compile_error(self_calling, "void(int64[:])", gpujit.UnsupportedError)
    assert "recursive call to 'self_calling'" in msg


def launches_kernel(out):
    k_void[1, 32](out, out)


def test_launching_a_kernel_from_a_kernel_is_unsupported():
    msg = compile_error(launches_kernel, "void(int32[:])", gpujit.UnsupportedError)
    assert "launching a kernel from a kernel" in msg
    assert f":{line_of(launches_kernel, 'k_void[1, 32]')}:" in msg


def test_device_function_cannot_be_called_or_launched_from_python():
    # numba's classes: ValueError for a call, RuntimeError for a launch
    with pytest.raises(ValueError, match="device function"):
        clamp_add(1.0, 2.0, 0.0, 5.0)
    with pytest.raises(RuntimeError, match="device function"):
        clamp_add[1, 1]


@gpujit.jit(device=True)
def bad_attribute(v):
    w = v + 1
    return w.real_part


def calls_bad_attribute(x, out):
    out[0] = bad_attribute(x[0])


def test_error_inside_device_function_points_into_it():
    msg = compile_error(calls_bad_attribute, "void(float32[:], float32[:])",
                        gpujit.UnsupportedError)
    assert f":{line_of(bad_attribute.py_func, 'w.real_part')}:" in msg
    assert "return w.real_part" in msg
    assert f"{line_of(calls_bad_attribute, 'bad_attribute(x[0])')}" in msg


def wrong_argument_count(out):
    out[0] = sq(1, 2)


def test_wrong_argument_count():
    msg = compile_error(wrong_argument_count, "void(int64[:])", gpujit.TypingError)
    assert "takes 1 argument, got 2" in msg


@gpujit.jit(device=True)
def mixed_returns(v):
    if v > 0:
        return v
    return (v, v)


def calls_mixed_returns(out):
    out[0] = mixed_returns(out[1])


def test_returns_of_different_kinds_are_a_typing_error():
    msg = compile_error(calls_mixed_returns, "void(float32[:])", gpujit.TypingError)
    assert "every return must have one type" in msg


@gpujit.jit(device=True)
def weak_and_strong_returns(v):
    if v > 0:
        return v
    return 0   # an int literal joins float32


def calls_weak_and_strong(out):
    out[0] = weak_and_strong_returns(out[1]) + out[2]


def test_literal_return_joins_the_other_returns():
    kernel = gpujit.jit(calls_weak_and_strong)
    ptx = kernel.inspect_asm("void(float32[:])")
    assert "f64" not in ptx.split(".entry")[1]   # float32 all the way


# ---- device functions declared with a signature (as numba) ---------------------------


@gpujit.jit("int32(int32, int32, int32, int32)", device=True)
def rgba(r, g, b, a):
    return ((r & 0xFF) << 16) | ((g & 0xFF) << 8) | ((b & 0xFF) << 0) | ((a & 0xFF) << 24)


@gpujit.jit
def k_rgba(channels, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = rgba(channels[i, 0], channels[i, 1], channels[i, 2], channels[i, 3])


@target
def test_signature_casts_arguments_and_result(rng):
    # float32 channels become int32 (truncated, as NumPy's astype) before the call.
    channels = random_array(rng, 4 * N, "float32", 0, 255).reshape(N, 4)
    got = launch(k_rgba, channels, poison(N, "int64"))
    c = channels.astype(np.int32) & 0xFF
    expected = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2] | (c[:, 3] << 24)
    np.testing.assert_array_equal(got, expected.astype(np.int32).astype(np.int64))


@gpujit.jit("float32(float64, float64)", device=True)
def mul32(x, y):
    return x * y


@gpujit.jit
def k_mul32(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = mul32(x[i], y[i]) + mul32(i, 2)


@target
def test_signature_return_type_rounds_the_result(rng):
    x = random_array(rng, N, "float64")
    y = random_array(rng, N, "float64")
    got = launch(k_mul32, x, y, poison(N, "float64"))
    expected = (x * y).astype(np.float32) + (np.arange(N) * 2).astype(np.float32)
    np.testing.assert_array_equal(got, expected.astype(np.float64))


def test_signature_gives_one_specialisation():
    # int64 and float64 arguments both convert to the one declared signature.
    ptx, _ = gpujit.compile_ptx(k_mul32, "void(float32[:], float32[:], float64[:])", opt=False)
    names = set(re.findall(r"\.func\s+(?:\([^)]*\)\s*)?(\w+)", ptx))
    assert len(names) == 1, names


@gpujit.jit("float32(float32[:])", device=True)
def first(a):
    return a[0]


@gpujit.jit
def k_first(a, out):
    out[0] = first(a)


def test_signature_array_mismatch_is_a_typing_error():
    with pytest.raises(gpujit.TypingError, match="int32.*float32"):
        gpujit.compile_ptx(k_first, "void(int32[:], float32[:])")
    ptx, _ = gpujit.compile_ptx(k_first, "void(float32[::1], float32[:])")   # A takes C
    assert ".entry" in ptx


def test_kernel_returning_value_is_a_type_error_with_a_caret():
    with pytest.raises(TypeError) as info:   # numba's class
        gpujit.compile_ptx(kernel_returns_value, "void(float32[:], float32[:])")
    msg = str(info.value)
    assert isinstance(info.value, gpujit.KernelReturnError)
    assert f":{line_of(kernel_returns_value, 'return out[0]')}:" in msg
    assert "return out[0]" in msg and "^" in msg


# ---- compile_ptx(device=True) of functions calling libdevice ------------------------


def exp_cos(x):
    return math.exp(x) * math.cos(x)


@pytest.mark.parametrize("sig", ["float32(float32)", "float64(float64)"])
def test_device_ptx_keeps_its_function_when_linking_libdevice(sig, ptxas, tmp_path):
    ptx, ret = gpujit.compile_ptx(exp_cos, sig, device=True)
    assert ret == sig.split("(")[0]
    assert ".visible .func" in ptx and "exp_cos" in ptx
    src = tmp_path / "f.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-c", "-o", str(tmp_path / "f.o"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@gpujit.jit("float32(float32)", device=True)
def exp_cos32(x):
    return math.exp(x) * math.cos(x)


@gpujit.jit
def k_exp_cos(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = exp_cos32(x[i])


@target
def test_libdevice_device_function_runs(rng):
    x = random_array(rng, N, "float32", -5, 5)
    got = launch(k_exp_cos, x, poison(N, "float32"))
    np.testing.assert_allclose(got, np.exp(x) * np.cos(x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("sig,exc", [("int32(int32)", TypeError),
                                     ("int32(int32, flaot32)", gpujit.TypingError)])
def test_device_signature_is_checked_when_decorated(sig, exc):
    with pytest.raises(exc):
        gpujit.jit(sig, device=True)(lambda a, b: a + b)
    with pytest.raises(TypeError, match="one signature"):
        gpujit.jit(["int32(int32, int32)", "int64(int64, int64)"], device=True)(lambda a, b: a)


# ---- keyword arguments and default parameter values ------------------------------


@gpujit.jit(device=True)
def scaled(x, scale=2.0, shift=(1, -1)):
    return x * scale + shift[0] - shift[1]


@gpujit.jit(device=True)
def weighted(a, b, wa=1, wb=3):
    return a * wa + b * wb


@gpujit.jit(contract=False)   # exact: a * wa + b * wb may cancel, and a fused one differs
def k_keywords(x, y, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        v = x[i]
        out[i, 0] = scaled(v)
        out[i, 1] = scaled(v, 3.0)
        out[i, 2] = scaled(v, scale=3.0)
        out[i, 3] = scaled(x=v, scale=3.0)
        out[i, 4] = scaled(v, shift=(2, 5))
        out[i, 5] = scaled(shift=(0.5, 0.25), x=v)
        out[i, 6] = weighted(v, y[i])
        out[i, 7] = weighted(v, y[i], wb=-2)
        out[i, 8] = weighted(b=v, a=y[i], wa=4)


@target
def test_keyword_arguments_and_defaults(rng):
    x = random_array(rng, N, "float64")
    y = random_array(rng, N, "float64")
    out = poison((N, 9), "float64")
    k_keywords[(N + 63) // 64, 64](x, y, out)
    py_scaled, py_weighted = scaled.py_func, weighted.py_func
    for i in range(N):
        v = x[i]
        want = [py_scaled(v), py_scaled(v, 3.0), py_scaled(v, scale=3.0),
                py_scaled(x=v, scale=3.0), py_scaled(v, shift=(2, 5)),
                py_scaled(shift=(0.5, 0.25), x=v), py_weighted(v, y[i]),
                py_weighted(v, y[i], wb=-2), py_weighted(b=v, a=y[i], wa=4)]
        np.testing.assert_allclose(out[i], want, rtol=1e-15)
    assert np.all(out == out)   # every element written


def test_keyword_call_ptx_is_accepted_by_ptxas(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(k_keywords, "void(float64[:], float64[:], float64[:, :])")
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@gpujit.jit(device=True)
def with_none(x, unused=None, offset=0.5):
    return x + offset


@gpujit.jit
def k_none_default(x, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        out[i, 0] = with_none(x[i])
        out[i, 1] = with_none(x[i], offset=-2.0)


@target
def test_none_default_is_accepted(rng):
    # None is frozen like any default; testing it (`is None`) is not supported yet.
    x = random_array(rng, N, "float64", -1, 1)
    out = poison((N, 2), "float64")
    k_none_default[(N + 63) // 64, 64](x, out)
    f = with_none.py_func
    np.testing.assert_array_equal(out, np.array([[f(v), f(v, offset=-2.0)] for v in x]))


def missing_argument(out):
    out[0] = weighted(b=out[1])


def unknown_keyword(out):
    out[0] = scaled(out[1], scael=2.0)


def duplicate_keyword(out):
    out[0] = scaled(out[1], 2.0, scale=3.0)


@pytest.mark.parametrize("kernel,text", [
    (missing_argument, "weighted() missing required argument 'a'"),
    (unknown_keyword, "scaled() got an unexpected keyword argument 'scael'"),
    (duplicate_keyword, "scaled() got multiple values for argument 'scale'"),
])
def test_keyword_call_errors_name_function_and_parameter(kernel, text):
    msg = compile_error(kernel, "void(float64[:])", gpujit.TypingError)
    assert text in msg
    assert f"{THIS_FILE}:{line_of(kernel, 'out[0] =')}:" in msg


@gpujit.jit(device=True)
def bad_default(x, table=[1, 2]):
    return x


def uses_bad_default(out):
    out[0] = bad_default(out[1])


def test_default_that_is_not_a_number_is_a_typing_error():
    msg = compile_error(uses_bad_default, "void(float64[:])", gpujit.TypingError)
    assert "default value of parameter 'table' of bad_default() is a list" in msg


# ---- names that are not ASCII -------------------------------------------------------

@gpujit.jit(device=True)
def ƒ(a):
    return a + 1.5


@gpujit.jit(device=True)
def é(a):   # the same symbol as ƒ's, _gj_dev___: LLVM renames the second one
    return a * 2.5


@gpujit.jit
def kérnel(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        ñ = ƒ(ƒ(x[i]))
        out[i] = é(ñ)


@pytest.mark.usefixtures("target")
def test_non_ascii_names_of_kernels_device_functions_and_variables(rng, ptxas, tmp_path):
    x = random_array(rng, N, "float64")
    out = launch(kérnel, x, poison(N, "float64"))
    np.testing.assert_array_equal(out, (x + 1.5 + 1.5) * 2.5)
    for options in ({}, {"lineinfo": True}, {"debug": True, "opt": False}):
        ptx, _ = gpujit.compile_ptx(kérnel, "void(float64[::1], float64[::1])", **options)
        assert ".visible .entry _gj_k__rnel(" in ptx   # each byte of é made '_'
        assert_assembles(ptxas, ptx, tmp_path, str(options))
    defined = re.findall(r"^\.func .* (_gj_dev_\w*)\($", ptx, re.M)   # debug: not inlined
    assert defined == ["_gj_dev___", "_gj_dev___1"], defined
