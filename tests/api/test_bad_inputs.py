"""Misuse that gpujit once accepted or answered unclearly (issue: safety):
each gets a named exception that says what is wrong, and nothing runs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpujit


@gpujit.jit
def store_one(x, out):
    out[0] = 1


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("scalar", [np.datetime64("2020-01-01"), np.timedelta64(5, "s"),
                                    np.bytes_(b"ab")])
def test_numpy_scalars_without_a_gpujit_type_are_refused(scalar):
    # they export their bytes as a 1-d uint8 buffer; once taken as such an array
    out = np.zeros(1)
    with pytest.raises(TypeError, match=r"kernel argument 1 \('x'\) has dtype"):
        store_one[1, 1](scalar, out)
    assert out[0] == 0


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("value, name", [
    (np.zeros(2, "M8[D]"), "datetime64[D]"), (np.zeros(2, "m8[s]"), "timedelta64[s]"),
    (np.datetime64("2020-01-01"), "datetime64[D]"), (np.timedelta64(5, "ms"), "timedelta64[ms]")])
def test_datetime64_and_timedelta64_are_named_by_their_names_not_only_their_codes(value, name):
    supported = ("(supported: bool, int8-64, uint8-64, float16-64, complex64/128, in native "
                 "byte order)")
    out = np.zeros(1)
    with pytest.raises(TypeError) as info:
        store_one[1, 1](value, out)
    assert str(info.value) == (f"kernel argument 1 ('x') has dtype {value.dtype!r} ({name}), "
                               f"which gpujit has no type for {supported}")
    assert out[0] == 0
    if isinstance(value, np.ndarray):
        with pytest.raises(TypeError) as info:
            gpujit.to_device(value)
        assert str(info.value) == f"gpujit has no type for dtype {value.dtype!r} ({name}) {supported}"


def test_a_signature_with_a_nul_is_refused():
    with pytest.raises(ValueError, match="contains a NUL character"):
        gpujit.jit("void(float32[:])\x00junk")(lambda a: None)


@pytest.mark.usefixtures("target")
def test_star_args_and_keyword_only_parameters_are_refused_for_any_argument_count():
    def star(*args):
        pass

    def keyword_only(a, *, b=1):
        pass

    for n in (1, 2, 3):
        with pytest.raises(gpujit.UnsupportedError, match=r"do not support \*args"):
            gpujit.jit(star)[1, 1](*range(n))
        with pytest.raises(gpujit.UnsupportedError, match="keyword-only parameters"):
            gpujit.jit(keyword_only)[1, 1](*range(n))


@pytest.mark.usefixtures("target")
def test_sharedmem_of_the_wrong_type_is_named():
    with pytest.raises(TypeError, match=r"sharedmem \(the launch's 4th item\) must be an int "
                                        r"count of bytes, not str"):
        store_one[1, 1, 0, "x"]


def test_bound_methods_are_refused_at_decoration():
    class Model:
        def step(self, a):
            a[0] = 1

    with pytest.raises(TypeError, match=r"not the bound method .*Model.step: a kernel has no "
                                        r"`self`"):
        gpujit.jit(Model().step)


G_HUGE = (1, (2, 2**70))
G_DEEP = 1
for _ in range(40):
    G_DEEP = (G_DEEP,)


@pytest.mark.usefixtures("target")
def test_a_global_tuple_says_why_its_item_cannot_be_used():
    def huge(out):
        out[0] = G_HUGE[0]

    def deep(out):
        out[0] = 1 if G_DEEP else 0

    with pytest.raises(gpujit.UnsupportedError,
                       match=r"global 'G_HUGE' of type tuple holding int \(outside int64\)"):
        gpujit.jit(huge)[1, 1](np.zeros(1))
    with pytest.raises(gpujit.UnsupportedError,
                       match=r"global 'G_DEEP' of type tuple holding tuple \(nested too "
                             r"deeply\)"):
        gpujit.jit(deep)[1, 1](np.zeros(1))


@pytest.mark.parametrize("name, value", [("GPUJIT_CPU_THREADS", "abc"),
                                         ("GPUJIT_CPU_THREADS", "0"),
                                         ("GPUJIT_CPU_THREADS", "-3"),
                                         ("GPUJIT_CPU_THREADS", str(10**30)),
                                         ("GPUJIT_CPU_STACK_KIB", "1")])
def test_unusable_cpu_pool_settings_are_reported(name, value):
    env = dict(os.environ, GPUJIT_TARGET="cpu", **{name: value})
    script = ("import numpy as np, gpujit\n"
              "@gpujit.jit\n"
              "def k(o):\n"
              "    o[0] = 7\n"
              "o = np.zeros(1)\n"
              "k[1, 1](o)\n"
              "assert o[0] == 7\n")
    proc = subprocess.run([sys.executable, "-P", "-W", "always", "-c", script], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"RuntimeWarning: gpujit: {name}='{value}' is not a" in proc.stderr, proc.stderr


@pytest.mark.usefixtures("target")
def test_python_ints_go_into_unsigned_arrays_and_numpy_refuses_what_does_not_fit(rng):
    values = [int(v) for v in rng.integers(0, 256, 5)]
    d = gpujit.to_device(np.zeros(5, np.uint8))
    d.copy_to_device(values)
    assert d.copy_to_host().tolist() == values
    with pytest.raises(OverflowError):
        d.copy_to_device([-1] + values[1:])
    assert d.copy_to_host().tolist() == values                 # unchanged
    z = gpujit.to_device(np.zeros((), np.uint32))
    z.copy_to_device(7)
    assert z.copy_to_host() == 7
    with pytest.raises(TypeError, match="incompatible dtype: bool"):
        gpujit.to_device(np.zeros(2, np.bool_)).copy_to_device([3, 4])


@pytest.mark.usefixtures("target")
def test_to_device_of_a_python_number_is_0_d():
    for value in (5, 5.0, True):
        d = gpujit.to_device(value)
        assert d.shape == () and d.copy_to_host() == value, value


@pytest.mark.usefixtures("target")
def test_default_parameter_values_are_named():
    def with_default(a, b=2.0):
        a[0] = b

    out = np.zeros(1)
    with pytest.raises(TypeError, match=r"with_default\(\) has default parameter values, which "
                                        r"a kernel does not use: pass all 2 arguments"):
        gpujit.jit(with_default)[1, 1](out)
    gpujit.jit(with_default)[1, 1](out, 3.0)
    assert out[0] == 3.0


class TwoArgumentError(ValueError):
    def __init__(self, a, b):
        super().__init__(a, b)


@pytest.mark.usefixtures("target")
def test_an_exception_class_that_takes_no_single_message_keeps_the_kernels_error():
    def raises(a):
        raise TwoArgumentError("x")

    with pytest.raises(RuntimeError, match=r"the kernel raised TwoArgumentError: x \(.*"
                                           r"test_bad_inputs.py:\d+\), in kernel .*raises at "
                                           r"threadIdx"):
        gpujit.jit(debug=True)(raises)[1, 1](np.zeros(1))


@pytest.mark.usefixtures("target")
def test_values_numpy_cannot_make_an_array_of_keep_numpys_error():
    with pytest.raises(ValueError, match="inhomogeneous"):
        gpujit.to_device([[1, 2], [3]])
    d = gpujit.to_device(np.arange(2, dtype=np.uint8))
    with pytest.raises(TypeError, match=r"incompatible dtype: uint8 \(device\) vs. <U1"):
        d.copy_to_device(["a", "b"])                  # no gpujit type: refused, not looked up
    assert d.copy_to_host().tolist() == [0, 1]


@pytest.mark.parametrize("option", ["debug", "lineinfo", "cache", "opt", "device",
                                    "forceinline", "contract"])
@pytest.mark.parametrize("value", ["no", "False", 1, 0, 2.0])
def test_boolean_jit_options_take_bools_only(option, value):
    # "no" is a true str: taken as given it would turn the option on
    with pytest.raises(TypeError, match=f"{option} must be True"):
        gpujit.jit(**{option: value})


@pytest.mark.parametrize("option", ["debug", "lineinfo", "device", "opt", "contract"])
def test_compile_ptx_boolean_options_take_bools_only(option):
    def kernel(a):
        a[0] = 1

    with pytest.raises(TypeError, match=f"{option} must be True"):
        gpujit.compile_ptx(kernel, "void(int32[:])", **{option: "no"})


class FailingIndex:
    def __index__(self):
        raise RuntimeError("index not ready")


def test_a_launch_dimension_whose_index_raises_shows_its_own_error():
    @gpujit.jit
    def kernel(a):
        a[0] = 1

    a = np.zeros(1, np.int32)
    with pytest.raises(RuntimeError, match="index not ready"):
        kernel[FailingIndex(), 1](a)
    kernel[1, 1](a)
    assert a[0] == 1
