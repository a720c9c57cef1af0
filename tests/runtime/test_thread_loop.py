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
from conftest import child_output, poison, random_array


@pytest.fixture(autouse=True)
def thread_loops(monkeypatch):
    """Thread loops from a kernel's first launch: without this, launches of
    fewer than GPUJIT_CPU_LOOP_THREADS threads run code of one thread per
    call (tests/runtime/test_cpu_tiers.py)."""
    monkeypatch.setenv("GPUJIT_CPU_LOOP_THREADS", "0")


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


# ---- bodies with loops of their own -------------------------------------------------
# The CPU target runs these W threads at a time as one vector body with a mask
# per block (compiler/vectorize.c); every lane must still do exactly what its
# thread does alone.  Float kernels compare bit for bit, without contraction.

@gpujit.jit(contract=False)
def escape_time(cx, cy, out):
    i = gpujit.grid(1)
    if i < out.size:
        x = cx[i] - cx[i]
        y = x
        n = 0
        while n < 200:              # Mandelbrot's loop: a break, a trip count per thread
            x2 = x * x
            y2 = y * y
            if x2 + y2 > 4.0:
                break
            y = 2.0 * x * y + cy[i]
            x = x2 - y2 + cx[i]
            n += 1
        out[i] = n


def escape_time_reference(cx, cy):
    out = []
    for a, b in zip(cx, cy):
        x = y = a - a
        n = 0
        while n < 200:
            x2, y2 = x * x, y * y
            if x2 + y2 > 4.0:
                break
            y = 2.0 * x * y + b
            x = x2 - y2 + a
            n += 1
        out.append(n)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("block", [7, 64, 100])
def test_divergent_loop_with_break(target, rng, dtype, block):
    n = 777
    cx = (rng.random(n) * 3 - 2).astype(dtype)
    cy = (rng.random(n) * 3 - 1.5).astype(dtype)
    out = poison(n, "int64")
    escape_time[(n + block - 1) // block, block](cx, cy, out)
    np.testing.assert_array_equal(out, escape_time_reference(cx, cy))


@gpujit.jit
def nested_counts(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        total = 0
        for j in range(a[i] % 13):          # outer trip count per thread
            k = j
            while k > 0:                    # inner trip count per outer iteration
                if (k + i) % 3 == 0:
                    total += k
                k -= 1
            total += j * 100
        out[i] = total


def test_nested_loops(target, rng):
    n = 1000
    a = random_array(rng, n, "int64", 0, 1000)
    out = poison(n, "int64")
    nested_counts[(n + 63) // 64, 64](a, out)
    want = [sum(j * 100 + sum(k for k in range(j, 0, -1) if (k + i) % 3 == 0)
                for j in range(v % 13)) for i, v in enumerate(a)]
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def first_negative(a, out, hits):
    i = gpujit.grid(1)
    if i >= out.size:
        return
    for j in range(a.shape[0]):
        v = a[j, i]
        if v < 0:
            out[i] = j
            return                          # from inside the loop
        if v % 7 == 0:
            hits[j, i] = v                  # a store in the loop, under a divergent if
    out[i] = -1


def test_early_return_and_stores_inside_a_loop(target, rng):
    rows, n = 40, 300
    a = random_array(rng, rows * n, "int32", -30, 1000).reshape(rows, n)
    out, hits = poison(n, "int32"), poison((rows, n), "int32")
    first_negative[(n + 31) // 32, 32](a, out, hits)
    want_out, want_hits = np.full(n, -1, np.int32), poison((rows, n), "int32")
    for i in range(n):
        for j in range(rows):
            if a[j, i] < 0:
                want_out[i] = j
                break
            if a[j, i] % 7 == 0:
                want_hits[j, i] = a[j, i]
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(hits, want_hits)


@gpujit.jit(device=True)
def digit_sum(v):
    s = 0
    while v > 0:
        s += v % 10
        v //= 10
    return s


@gpujit.jit
def digit_sums(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = digit_sum(a[i]) + digit_sum(a[i] // 7)


def test_loop_in_a_device_function(target, rng):
    n = 1000
    a = random_array(rng, n, "int64", 0, 10**12)
    out = poison(n, "int64")
    digit_sums[(n + 127) // 128, 128](a, out)
    ds = lambda v: sum(int(c) for c in str(v))   # noqa: E731
    np.testing.assert_array_equal(out, [ds(int(v)) + ds(int(v) // 7) for v in a])


@gpujit.jit
def divide_steps(a, d, out):
    i = gpujit.grid(1)
    if i < out.size:
        v = a[i]
        n = 0
        while v > 1 and n < 64:
            if v % 3 == 0:
                v = v // d[i]               # d[i] may be 0: gives 0, as in NumPy
            else:
                v = v - v % (d[i] + 2) - 1  # d[i] + 2 may be 0 too
            n += 1
        out[i] = v * 1000 + n


def divide_steps_reference(a, d):
    floordiv = lambda x, y: 0 if y == 0 else x // y   # noqa: E731
    mod = lambda x, y: 0 if y == 0 else x % y         # noqa: E731
    out = []
    for v, dv in zip(a.tolist(), d.tolist()):
        n = 0
        while v > 1 and n < 64:
            v = floordiv(v, dv) if v % 3 == 0 else v - mod(v, dv + 2) - 1
            n += 1
        out.append(v * 1000 + n)
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_division_by_per_thread_values_in_divergent_code(target, rng, dtype):
    n = 999
    a = random_array(rng, n, dtype, 0, 100000)
    d = random_array(rng, n, dtype, -3, 5)
    out = poison(n, dtype)
    divide_steps[(n + 99) // 100, 100](a, d, out)
    np.testing.assert_array_equal(out, np.array(divide_steps_reference(a, d), dtype))


@gpujit.jit
def count_down_3d(out):
    x, y, z = gpujit.threadIdx.x, gpujit.threadIdx.y, gpujit.threadIdx.z
    nx, ny, nz = gpujit.blockDim.x, gpujit.blockDim.y, gpujit.blockDim.z
    b = gpujit.blockIdx.x
    k = ((b * nz + z) * ny + y) * nx + x
    v = (x * 7 + y * 3 + z + b) % 11
    steps = 0
    while v > 0:
        v -= 1 + steps % 2
        steps += 1
    out[k] = steps * 1000 + x * 100 + y * 10 + z


@pytest.mark.parametrize("block", [(5, 3, 2), (16, 4, 1), (33, 1, 1), (1, 7, 3), (20, 2, 3)])
def test_loops_in_2d_and_3d_blocks(target, block):
    nx, ny, nz = block
    grid = 3
    out = poison(grid * nx * ny * nz, "int64")
    count_down_3d[grid, block](out)
    want = []
    for b in range(grid):
        for z in range(nz):
            for y in range(ny):
                for x in range(nx):
                    v, steps = (x * 7 + y * 3 + z + b) % 11, 0
                    while v > 0:
                        v -= 1 + steps % 2
                        steps += 1
                    want.append(steps * 1000 + x * 100 + y * 10 + z)
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def grid_stride_scale(x, out):
    for i in range(gpujit.grid(1), out.size, gpujit.gridsize(1)):
        out[i] = x[i] * 2.0 + i


def test_grid_stride_loop(target, rng):
    n = 10007
    x = random_array(rng, n, "float64")
    out = poison(n, "float64")
    grid_stride_scale[5, 96](x, out)
    np.testing.assert_array_equal(out, x * 2.0 + np.arange(n))


@gpujit.jit
def local_histogram(a, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        h = gpujit.local.array(4, np.int64)   # a per-thread array: the body stays scalar
        for k in range(4):
            h[k] = 0
        for k in range(a.shape[1]):
            h[a[i, k] % 4] += 1
        for k in range(4):
            out[i, k] = h[k]


def test_loop_with_a_local_array(target, rng):
    n, m = 300, 37
    a = random_array(rng, n * m, "int64", 0, 1000).reshape(n, m)
    out = poison((n, 4), "int64")
    local_histogram[(n + 63) // 64, 64](a, out)
    want = np.stack([np.bincount(row % 4, minlength=4) for row in a])
    np.testing.assert_array_equal(out, want)


@gpujit.jit(boundscheck=True)
def checked_sums(a, out, bad):
    i = gpujit.grid(1)
    if i < out.size:
        s = a[i] - a[i]
        for k in range(i % 4 + 1):
            j = i
            if i == bad and k == 1:
                j = a.size + 3              # this thread fails its check in its loop
            s += a[j]
        out[i] = s


def test_boundscheck_error_in_a_loop(target, rng):
    n, bad = 500, 203
    a = random_array(rng, n, "float64")
    d_out = gpujit.to_device(poison(n, "float64"))
    with pytest.raises(IndexError, match=f"index {n + 3} is out of bounds"):
        checked_sums[(n + 63) // 64, 64](a, d_out, bad)
    want = a * (np.arange(n) % 4 + 1)
    want[bad] = np.nan
    np.testing.assert_array_equal(d_out.copy_to_host(), want)


def test_print_in_a_loop(cpu):
    lines = child_output(
        "import gpujit\n"
        "gpujit.set_target('cpu')\n"
        "@gpujit.jit\n"
        "def k():\n"
        "    i = gpujit.threadIdx.x\n"
        "    for j in range(i % 3):\n"
        "        print(i, j)\n"
        "k[1, 8]()\n")
    want = [f"{i} {j}" for i in range(8) for j in range(i % 3)]
    assert sorted(line for line in lines if line) == sorted(want)


def vector_mask_phis(kernel):
    ir = kernel.inspect_llvm()
    ir = "\n".join(ir.values()) if isinstance(ir, dict) else ir
    return re.findall(r"phi <\d+ x i1>", ir)


def test_bodies_with_loops_are_vectorised_across_threads(cpu, rng):
    """The loops run for W threads at once: the optimised IR holds the loop's
    mask of active lanes (a phi of a vector of i1), where the host has
    vectors; a body the vectoriser does not take (a local array) has none."""
    n = 64
    escape_time[1, n](np.zeros(n), np.zeros(n), np.empty(n, np.int64))
    collatz_steps[1, n](np.arange(1, n + 1), np.empty(n, np.int64))
    assert vector_mask_phis(escape_time), "escape_time's loop is not vectorised"
    assert vector_mask_phis(collatz_steps), "collatz_steps's loop is not vectorised"
    local_histogram[1, n](np.ones((n, 3), np.int64), np.empty((n, 4), np.int64))
    assert not vector_mask_phis(local_histogram)


# ---- masked memory operations with no lane on, or every lane ------------------------
# compiler/cpu_fix.c puts each masked load and store behind a test of its mask, so a
# vector of threads that all skip the access (past the end of the array, a condition
# false for all of them) costs a branch, not the slow masked instruction, and one whose
# threads all make it is a plain load or store.

@gpujit.jit
def increment(x):
    i = gpujit.grid(1)
    if i < x.size:
        x[i] += 1


@gpujit.jit
def flag_large(x, y):
    i = gpujit.grid(1)
    if i < x.size and x[i] > 0.5:
        y[i] = x[i] * 2


@pytest.mark.parametrize("n", [1, 7, 100, 1000])
def test_threads_past_the_end_touch_nothing(target, rng, n):
    """A grid of 64 blocks of 256 threads over n elements: whole vectors of
    threads are past the end; the elements after x (the same buffer) keep
    their values."""
    buf = random_array(rng, n + 64, "float64")
    want = buf.copy()
    want[:n] += 1
    d_buf = gpujit.to_device(buf)
    increment[64, 256](d_buf[:n])
    np.testing.assert_array_equal(d_buf.copy_to_host(), want)


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.5, 1.0])
def test_conditional_stores_whole_vectors_off_or_on(target, rng, fraction):
    n = 10000
    x = rng.random(n)
    x[rng.random(n) >= fraction] = 0.25          # below the threshold: no store
    y = poison(n, "float64")
    flag_large[(n + 255) // 256, 256](x, y)
    want = poison(n, "float64")
    want[x > 0.5] = 2 * x[x > 0.5]
    np.testing.assert_array_equal(y, want)


def test_masked_stores_are_behind_a_test_of_their_mask(cpu):
    x = np.ones(64)
    flag_large[1, 64](x, np.empty_like(x))
    ir = "\n".join(flag_large.inspect_llvm().values())
    if "llvm.masked." not in ir:
        pytest.skip("the host's vectoriser made no masked store")
    assert re.search(r"br i1 %\S+, label %masked\S*, label", ir), \
        "a masked store runs without a test of its mask"
    # where masked stores are microcode (AMD's AVX2), a vector with every lane
    # on stores with a plain store; elsewhere the masked one stays
    if gpujit.info()["cpu"]["slow_masked_stores"]:
        assert plain_store_when_full(ir), "no plain store for a vector with every lane on"
    else:
        assert "unmasked" not in ir


def plain_store_when_full(ir):
    """Whether ir tests a mask for every lane on and then stores float64
    with a plain store (compiler/cpu_fix.c)."""
    return bool(re.search(r"br i1 %\S+, label %unmasked\S*, label", ir)
                and re.search(r"unmasked\S*:.*\n(  .*\n)*?  store <\d+ x double>", ir))
