"""Kernels in an importable module, for tests/scaling/test_pickling.py: they pickle
by reference (the module's name and the kernel's), so a process that
unpickles them imports this module."""
import gpujit

OFFSET = 0.25


@gpujit.jit(device=True)
def affine(a, b):
    return a * b + OFFSET


@gpujit.jit
def affine_kernel(x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = affine(x[i], y[i])
