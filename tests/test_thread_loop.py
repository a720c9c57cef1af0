"""Kernels without barriers, whose blocks the CPU target runs as one loop over
the block's threads (compiler/target_cpu.c), vectorised across threads where
LLVM can: every thread of every block runs once with its own indices, and
what a thread does alone (an early return, a loop with its own trip count, a
failed bounds check) ends or changes that thread only.  The kernels are valid
CUDA, so they run on every target; the vectorisation check is the CPU's."""
import re

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array


@gpujit.jit
def saxpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("n,block", [(1, 1), (3, 3), (100, 17), (1000, 33), (4099, 256),
                                     (5000, 1023), (70000, 1024)])
def test_blocks_not_a_multiple_of_the_vector_width(target, rng, n, block):
    x, y = random_array(rng, n, "float32"), random_array(rng, n, "float32")
    out = poison(n, "float32")
    saxpy[(n + block - 1) // block, block](np.float32(3), x, y, out)
    np.testing.assert_allclose(out, np.float32(3) * x + y, rtol=1e-6, atol=1e-3)


@gpujit.jit
def clamp_or_stop(a, out):
    i = gpujit.grid(1)
    if i >= out.size:
        return
    v = a[i]
    if v < 0:
        return                  # this thread writes nothing
    if v > 500:
        out[i] = 500
        return
    out[i] = v * 2


def test_early_returns_end_only_their_thread(target, rng):
    n = 3001
    a = random_array(rng, n, "int64")
    out = poison(n, "int64")
    clamp_or_stop[(n + 127) // 128, 128](a, out)
    want = np.where(a > 500, 500, a * 2)
    want = np.where(a < 0, poison(n, "int64"), want)
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def collatz_steps(start, steps):
    i = gpujit.grid(1)
    if i < steps.size:
        v = start[i]
        n = 0
        while v != 1:           # a trip count of each thread's own
            if v % 2 == 0:
                v //= 2
            else:
                v = 3 * v + 1
            n += 1
            if n == 400:
                break
        steps[i] = n


def collatz_reference(v):
    n = 0
    while v != 1 and n < 400:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        n += 1
    return n


def test_divergent_while_loop(target, rng):
    start = rng.integers(1, 100000, 2000)
    steps = poison(2000, "int64")
    collatz_steps[16, 128](start, steps)
    np.testing.assert_array_equal(steps, [collatz_reference(int(v)) for v in start])


@gpujit.jit
def thread_coordinates(out):
    x, y, z = gpujit.threadIdx.x, gpujit.threadIdx.y, gpujit.threadIdx.z
    bx, by, bz = gpujit.blockIdx.x, gpujit.blockIdx.y, gpujit.blockIdx.z
    nx, ny, nz = gpujit.blockDim.x, gpujit.blockDim.y, gpujit.blockDim.z
    block = bx + gpujit.gridDim.x * (by + gpujit.gridDim.y * bz)
    lin = x + nx * (y + ny * z)
    k = block * (nx * ny * nz) + lin
    out[k, 0] = x
    out[k, 1] = y
    out[k, 2] = z
    out[k, 3] = block
    out[k, 4] = gpujit.laneid      # lane and warp ids without any warp operation
    out[k, 5] = lin // gpujit.warpsize


@pytest.mark.parametrize("grid,block", [((2, 3, 1), (3, 5, 7)), ((1, 1, 2), (8, 4, 2)),
                                        ((3, 1, 1), (48, 1, 1)), ((2, 2, 2), (5, 7, 1)),
                                        ((1, 1, 1), (1, 1, 64)), ((4, 1, 1), (1, 1, 1))])
def test_2d_and_3d_blocks_run_every_thread_once(target, grid, block):
    nthreads, nblocks = int(np.prod(block)), int(np.prod(grid))
    out = poison((nblocks * nthreads, 6), "int64")
    thread_coordinates[grid, block](out)
    z, y, x = np.meshgrid(*(np.arange(d) for d in block[::-1]), indexing="ij")
    lin = np.arange(nthreads)
    one = np.stack([x.ravel(), y.ravel(), z.ravel(), np.zeros(nthreads, np.int64), lin % 32,
                    lin // 32], axis=1)
    want = np.concatenate([one + [0, 0, 0, b, 0, 0] for b in range(nblocks)])
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def own_index(out):
    out[gpujit.threadIdx.x, gpujit.threadIdx.y] = gpujit.threadIdx.x * 1000 + gpujit.threadIdx.y


@gpujit.jit
def via_device_function(out):
    own_index_device(out)


@gpujit.jit(device=True)
def own_index_device(out):
    out[gpujit.threadIdx.x, gpujit.threadIdx.y] = gpujit.threadIdx.x * 1000 + gpujit.threadIdx.y


def test_device_function_sees_the_callers_thread(target):
    for kernel in (own_index, via_device_function):
        out = poison((7, 9), "int64")
        kernel[1, (7, 9)](out)
        np.testing.assert_array_equal(out, np.arange(7)[:, None] * 1000 + np.arange(9))


@gpujit.jit
def add(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def test_output_aliasing_an_input(target, rng):
    n = 10007
    a, b = random_array(rng, n, "float32"), random_array(rng, n, "float32")
    want = a + b
    add[(n + 255) // 256, 256](a, b, a)              # out is a
    np.testing.assert_array_equal(a, want)
    b0 = b.copy()
    add[(n + 255) // 256, 256](b, b, b)              # every argument is b
    np.testing.assert_array_equal(b, b0 + b0)


def test_interleaved_views_of_one_array(target, rng):
    x = random_array(rng, 2 * 5000, "float64")
    want = x[0::2] + x[1::2]
    add[20, 256](x[0::2], x[1::2], x[1::2])           # each thread its own pair
    np.testing.assert_array_equal(x[1::2], want)


@gpujit.jit(boundscheck=True)
def shifted_copy(a, out, bad):
    i = gpujit.grid(1)
    if i < out.size:
        j = i
        if i == bad:
            j = a.size + 3      # this thread fails its check and ends
        out[i] = a[j]


def test_boundscheck_error_ends_one_thread_of_the_loop(target, rng):
    n, bad = 1000, 421
    a = random_array(rng, n, "float32")
    d_out = gpujit.to_device(poison(n, "float32"))
    with pytest.raises(IndexError, match=f"index {n + 3} is out of bounds for axis 0 "
                                         f"with size {n}"):
        shifted_copy[(n + 127) // 128, 128](a, d_out, bad)
    got = d_out.copy_to_host()
    want = a.copy()
    want[bad] = poison(1, "float32")[0]
    np.testing.assert_array_equal(got, want)


def test_straight_line_kernel_is_vectorised_across_threads(cpu):
    """The CPU target's block loop: saxpy's threads become SIMD lanes (a
    vector of floats in the optimised IR), where the host has vectors."""
    x = np.ones(64, np.float32)
    saxpy[1, 64](np.float32(2), x, x, np.empty_like(x))
    ir = saxpy.inspect_llvm()
    ir = "\n".join(ir.values()) if isinstance(ir, dict) else ir
    assert re.search(r"<\d+ x float>", ir), "no vector of float32 in saxpy's loop"
