"""Kernels with assert statements, for test_raise_assert.py.

They live outside the test modules because pytest rewrites the assert
statements of test modules (into calls of its own helpers, which no kernel
can compile); a module that is not a test module keeps Python's bytecode."""
import math

import gpujit


def assert_with_message(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        assert a[i] >= 0, "a[i] must not be negative"
        out[i] = a[i] * 2


def assert_bare(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        assert a[i] >= 0
        out[i] = a[i] * 2


@gpujit.jit(device=True)
def checked_sqrt(x):
    assert x >= 0, "no square root of a negative number"
    return math.sqrt(x)


def assert_in_device_function(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = checked_sqrt(a[i])


def line_of(fn, text):
    """The line of `fn` holding `text`."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)
