"""No reference leaks in a long-lived process: 1,000 cycles of compiling and
launching kernels leave sys.gettotalrefcount() where it was.  Only a debug
build of CPython has that function (python3.14-dbg: scripts/test-pythons.sh
--debug runs the suite under it), so elsewhere the test is skipped.

A cycle is what a program that builds kernels at run time does: a fresh
dispatcher compiled for a signature and launched with host arrays and a
tuple (device function, frozen global array, keyword arguments, a math
function), the same kernel compiled to PTX, a compile that fails with a
TypingError, and a device array's round trip.  Each leaked reference per
cycle would add 1,000 to the total.

CPython's type attribute cache (4,096 entries) keeps a strong reference to
each attribute name it caches, and the extension looks attributes up by C
strings (`PyObject_GetAttrString`), a new name object each time: the total
then creeps up until the cache is full.  So the interpreter's internal
caches are cleared before each count.  Counts are exact only when every
extension in the process was built against the debug interpreter (a
release NumPy's references are not counted and drift the total)."""
import gc
import math
import sys

import numpy as np
import pytest

import gpujit

pytestmark = [
    pytest.mark.skipif(not hasattr(sys, "gettotalrefcount"),
                       reason="needs a debug build of CPython (sys.gettotalrefcount)"),
    pytest.mark.usefixtures("target"),
]

CYCLES = 1000
WARMUP = 50
WEIGHTS = np.linspace(0.5, 1.5, 8)


@gpujit.jit(device=True)
def scaled(x, factor=2.0):
    return x * factor + WEIGHTS[3]


def kernel(a, pair, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = scaled(a[i], factor=pair[0]) + math.sqrt(abs(a[i])) * pair[1]


def mistyped(a, pair, out):
    out[0] = a   # an array stored into an element: a TypingError


def cycle(a, out):
    k = gpujit.jit(kernel)
    k[2, 32](a, (1.5, 2), out)
    gpujit.compile_ptx(kernel, "void(float64[:], UniTuple(float64, 2), float64[:])")
    try:
        gpujit.compile_ptx(mistyped, "void(float64[:], UniTuple(float64, 2), float64[:])")
    except gpujit.TypingError:
        pass
    d = gpujit.to_device(out)
    return d.copy_to_host()


def settle():
    gc.collect()
    getattr(sys, "_clear_internal_caches", getattr(sys, "_clear_type_cache", None))()
    gc.collect()


def test_compile_and_launch_cycles_do_not_leak_references():
    a = np.linspace(-3.0, 3.0, 64)
    out = np.zeros(64)
    for _ in range(WARMUP):   # first-use state: module caches, libdevice search...
        cycle(a, out)
    want = a * 1.5 + WEIGHTS[3] + np.sqrt(np.abs(a)) * 2
    np.testing.assert_allclose(cycle(a, out), want, rtol=1e-12)
    settle()
    before = sys.gettotalrefcount()
    for _ in range(CYCLES):
        cycle(a, out)
    settle()
    grown = sys.gettotalrefcount() - before
    assert grown < CYCLES // 20, f"{grown} references more after {CYCLES} cycles"
