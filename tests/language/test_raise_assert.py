"""raise and assert in kernels and device functions, as numba-cuda has them.
With debug=True the first one a launch meets becomes the Python exception on
the host once the kernel has completed: its class and message, with the
file and line, the kernel and the thread.  Without debug, a raise or a
failed assert ends its thread silently (numba-cuda's kernels return at a
raise, and only a debug launch reads the status).  Either way the thread
stops there, the other threads' results are NumPy's, and the next launch
runs normally.  Kernels with assert statements are in assert_kernels.py
(pytest rewrites this module's asserts)."""
import os
import textwrap

import numpy as np
import pytest

import gpujit
from assert_kernels import (assert_bare, assert_in_device_function, assert_with_message,
                            checked_sqrt, line_of)
from conftest import assert_assembles, child_output, poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 300
BLOCK = 64
ASSERT_FILE = "/assert_kernels.py"
THIS_FILE = "/" + os.path.basename(__file__)


def launch(kernel, *args):
    kernel[(N + BLOCK - 1) // BLOCK, BLOCK](*args)


def thread_of(i):
    return f"threadIdx ({i % BLOCK}, 0, 0) of blockIdx ({i // BLOCK}, 0, 0)"


class OddValue(ValueError):
    """A module-level exception class: a kernel can raise it."""


def validate(a, out, done):
    i = gpujit.grid(1)
    if i < out.size:
        if a[i] == 13:
            raise ValueError("unlucky value")     # the raise
        if a[i] == 7:
            raise OddValue
        if a[i] == 99:
            raise ZeroDivisionError(99)
        out[i] = a[i] + 1
        done[i] = 1


def run_validate(kernel, a):
    out, done = poison(N, "int64"), np.zeros(N, np.int8)
    launch(kernel, a, out, done)
    return out, done


def check_others(a, out, done, stopped):
    """The threads that did not raise computed NumPy's results; those that
    did stopped at the raise."""
    go = ~np.isin(np.arange(N), stopped)
    np.testing.assert_array_equal(out[go], a[go] + 1)
    assert done[go].all() and not done[stopped].any()
    assert (out[stopped] == poison(1, "int64")[0]).all()


def test_under_debug_a_raise_is_the_exception_on_the_host(rng):
    a = rng.integers(20, 90, N)
    a[[40, 123]] = 13
    out, done = poison(N, "int64"), np.zeros(N, np.int8)
    with pytest.raises(ValueError) as info:
        launch(gpujit.jit(debug=True)(validate), a, out, done)
    assert type(info.value) is ValueError
    msg = str(info.value)
    line = line_of(validate, "# the raise")
    assert msg.startswith(f"unlucky value (") and f"{THIS_FILE}:{line}), in kernel validate " \
        "at threadIdx" in msg, msg
    assert thread_of(40) in msg or thread_of(123) in msg, msg
    assert info.value.args == (msg,)
    check_others(a, out, done, [40, 123])


@pytest.mark.parametrize("value,cls,text", [(7, OddValue, ""), (99, ZeroDivisionError, "99 (")])
def test_classes_and_arguments(rng, value, cls, text):
    a = rng.integers(20, 90, N)
    a[200] = value
    out, done = poison(N, "int64"), np.zeros(N, np.int8)
    with pytest.raises(cls) as info:
        launch(gpujit.jit(debug=True)(validate), a, out, done)
    assert type(info.value) is cls
    msg = str(info.value)
    assert msg.startswith(text + (os.path.dirname(__file__) if not text else "")), msg
    assert thread_of(200) in msg
    check_others(a, out, done, [200])


def test_without_debug_a_raise_ends_the_thread_silently(rng):
    a = rng.integers(20, 90, N)
    a[[3, 77, 250]] = [13, 7, 99]
    out, done = run_validate(gpujit.jit(validate), a)
    check_others(a, out, done, [3, 77, 250])


def test_the_next_launch_runs_normally(rng):
    kernel = gpujit.jit(debug=True)(validate)
    a = rng.integers(20, 90, N)
    a[5] = 13
    with pytest.raises(ValueError):
        run_validate(kernel, a)
    a[5] = 14
    out, done = run_validate(kernel, a)
    check_others(a, out, done, [])


# ---- assert ----------------------------------------------------------------------

@pytest.mark.parametrize("fn,text", [(assert_with_message, "a[i] must not be negative ("),
                                     (assert_bare, "")])
def test_under_debug_a_failed_assert_raises_assertion_error(rng, fn, text):
    a = random_array(rng, N, "float64", 0, 100)
    a[[17, 280]] = -1.0
    out = poison(N, "float64")
    with pytest.raises(AssertionError) as info:
        launch(gpujit.jit(debug=True)(fn), a, out)
    msg = str(info.value)
    line = line_of(fn, "assert a[i] >= 0")
    assert msg.startswith(text), msg
    assert f"{ASSERT_FILE}:{line}" in msg and f"in kernel {fn.__name__} at " in msg, msg
    assert thread_of(17) in msg or thread_of(280) in msg, msg
    good = a >= 0
    np.testing.assert_array_equal(out[good], a[good] * 2)
    assert np.isnan(out[~good]).all()


def test_without_debug_a_failed_assert_ends_the_thread(rng):
    a = random_array(rng, N, "float64", 0, 100)
    a[[17, 280]] = -1.0
    out = poison(N, "float64")
    launch(gpujit.jit(assert_with_message), a, out)
    good = a >= 0
    np.testing.assert_array_equal(out[good], a[good] * 2)
    assert np.isnan(out[~good]).all()


def test_passing_asserts_change_nothing(rng):
    a = random_array(rng, N, "float64", 0, 100)
    for debug in (False, True):
        out = poison(N, "float64")
        launch(gpujit.jit(debug=debug)(assert_with_message), a, out)
        np.testing.assert_array_equal(out, a * 2)


# ---- device functions ------------------------------------------------------------

def test_an_assert_in_a_device_function(rng):
    a = random_array(rng, N, "float64", 0, 100)
    a[222] = -4.0
    out = poison(N, "float64")
    with pytest.raises(AssertionError) as info:
        launch(gpujit.jit(debug=True)(assert_in_device_function), a, out)
    msg = str(info.value)
    line = line_of(checked_sqrt, "assert x >= 0")
    assert msg.startswith("no square root of a negative number ("), msg
    assert f"{ASSERT_FILE}:{line}), in kernel assert_in_device_function at {thread_of(222)}" \
        in msg, msg
    good = np.arange(N) != 222
    np.testing.assert_array_equal(out[good], np.sqrt(a[good]))
    assert np.isnan(out[222])


@gpujit.jit(device=True)
def innermost(v):
    if v < 0:
        raise IndexError("negative")       # the device function's raise
    return v * 3


@gpujit.jit(device=True)
def middle(v):
    w = innermost(v)
    return w + 1                            # not reached after the raise


def nested(a, out, after):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = middle(a[i])
        after[i] = 1


@pytest.mark.parametrize("debug", [False, True])
def test_a_raise_in_a_nested_device_function_stops_the_thread(rng, debug):
    a = rng.integers(0, 1000, N)
    a[[10, 150]] = -5
    out, after = poison(N, "int64"), np.zeros(N, np.int8)
    kernel = gpujit.jit(debug=debug)(nested)
    if debug:
        with pytest.raises(IndexError, match=r"^negative \(.*" + THIS_FILE +
                           f":{line_of(innermost, 'raise IndexError')}\\), in kernel nested at"):
            launch(kernel, a, out, after)
    else:
        launch(kernel, a, out, after)
    good = a >= 0
    np.testing.assert_array_equal(out[good], a[good] * 3 + 1)
    assert after[good].all() and not after[~good].any()
    assert (out[~good] == poison(1, "int64")[0]).all()


# ---- what is refused, at compile time --------------------------------------------

def message_from_a_value(a, out):
    if a[0] < 0:
        raise ValueError(a[0])


def two_arguments(a, out):
    raise ValueError("a", "b")


def raise_from(a, out):
    raise ValueError("x") from None


def bare_raise(a, out):
    raise


def kept_exception(a, out):
    e = ValueError("x")
    raise e


def raise_an_instance_of_nothing(a, out):
    raise a


@pytest.mark.parametrize("fn,text", [
    (message_from_a_value, "must be a constant string"),
    (two_arguments, "takes one argument at most"),
    (raise_from, "raise ... from ..."),
    (bare_raise, "a bare raise"),
    (kept_exception, "can only be raised in a kernel"),
    (raise_an_instance_of_nothing, "can raise an exception class or an instance"),
])
def test_unsupported_forms_are_compile_errors(fn, text, target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")
    with pytest.raises(gpujit.UnsupportedError, match=f"{THIS_FILE}:\\d+:\\d+: .*{text}"):
        gpujit.compile_ptx(fn, "void(float64[::1], float64[::1])", debug=True)


def test_a_class_defined_in_a_function_is_refused(target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")

    class Local(Exception):
        pass

    def raises_local(a):
        raise Local("x")

    with pytest.raises(gpujit.UnsupportedError, match="define it at module level"):
        gpujit.compile_ptx(raises_local, "void(float64[::1])")


def test_debug_ptx_assembles_and_has_no_trap(ptxas, tmp_path, target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")
    for fn, sig in [(validate, "void(int64[::1], int64[::1], int8[::1])"),
                    (nested, "void(int64[::1], int64[::1], int8[::1])"),
                    (assert_in_device_function, "void(float64[::1], float64[::1])")]:
        for debug in (False, True):
            ptx, _ = gpujit.compile_ptx(fn, sig, debug=debug)
            assert "trap" not in ptx
            assert ("gj$error" in ptx) == debug
            assert_assembles(ptxas, ptx, tmp_path, (fn.__name__, debug))


# ---- the GPU: the context survives ------------------------------------------------

GPU_SCRIPT = textwrap.dedent("""
    import numpy as np
    import gpujit
    gpujit.set_target("cuda")

    @gpujit.jit(debug=True)
    def check(a):
        i = gpujit.grid(1)
        if i < a.size and a[i] < 0:
            raise ValueError("negative")

    @gpujit.jit
    def double(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = 2 * x[i]

    a = gpujit.to_device(np.arange(1000.0) - 500)
    try:
        check[4, 256](a)
        print("no error")
    except ValueError as e:
        print("ValueError", str(e).split(" (")[0])
    check[4, 256](gpujit.to_device(np.arange(1000.0)))
    print("clean")
    x = np.random.default_rng().random(1 << 20)
    out = gpujit.device_array_like(x)
    double[(x.size + 255) // 256, 256](gpujit.to_device(x), out)
    print("after", np.array_equal(out.copy_to_host(), 2 * x))
""")


@pytest.mark.gpu
def test_after_a_raise_the_cuda_context_survives(target):
    if target == "cpu":
        pytest.skip("runs CUDA in a child process")
    assert child_output(GPU_SCRIPT)[:3] == ["ValueError negative", "clean", "after True"]
