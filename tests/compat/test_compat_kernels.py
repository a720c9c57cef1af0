"""numba.cuda kernels as numba's documentation and examples write them, run
unchanged (only ``from numba import`` reads ``from numba_shim import``)
and compared with NumPy on every execution target.

One test per idiom of numba's CUDA guide: thread indexing (``grid``,
``gridsize``, the dim3 registers), grid-stride loops, 2-D and 3-D grids,
shared memory (static, dynamic, the tiled matmul), local and constant
arrays, barriers and their counting forms, atomics, warp shuffles and
votes, device functions with and without signatures, explicit signatures
as strings and as type objects, ``math``, device arrays and streams.
"""
import math

import numpy as np
import pytest

from conftest import poison
from numba_shim import cuda, float32, float64, int32, int64, uint32, void

pytestmark = pytest.mark.usefixtures("target")


# ---- thread indexing -------------------------------------------------------------------

@cuda.jit
def vector_add(x, y, out):
    idx = cuda.grid(1)
    if idx < x.size:
        out[idx] = x[idx] + y[idx]


def test_vector_add(rng):
    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    out = poison(1000, np.float32)
    threadsperblock = 128
    blockspergrid = (x.size + (threadsperblock - 1)) // threadsperblock
    vector_add[blockspergrid, threadsperblock](x, y, out)
    np.testing.assert_array_equal(out, x + y)


@cuda.jit
def increment_by_one(an_array):
    # Thread id in a 1D block
    tx = cuda.threadIdx.x
    # Block id in a 1D grid
    ty = cuda.blockIdx.x
    # Block width, i.e. number of threads per block
    bw = cuda.blockDim.x
    # Compute flattened index inside the array
    pos = tx + ty * bw
    if pos < an_array.size:  # Check array boundaries
        an_array[pos] += 1


def test_increment_by_one_with_the_registers(rng):
    a = rng.integers(-100, 100, 777).astype(np.int64)
    expect = a + 1
    increment_by_one[(a.size + 31) // 32, 32](a)
    np.testing.assert_array_equal(a, expect)


@cuda.jit
def scale_grid_stride(x, out, factor):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] * factor


def test_grid_stride_loop(rng):
    x = rng.random(5000)
    out = poison(5000, np.float64)
    scale_grid_stride[4, 64](x, out, 2.5)   # 256 threads for 5000 elements
    np.testing.assert_array_equal(out, x * 2.5)


@cuda.jit
def manual_stride(x, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < x.size:
        out[i] = x[i] * x[i]
        i += cuda.blockDim.x * cuda.gridDim.x


def test_manual_stride_with_while(rng):
    x = rng.standard_normal(1500).astype(np.float32)
    out = poison(1500, np.float32)
    manual_stride[3, 128](x, out)
    np.testing.assert_array_equal(out, x * x)


@cuda.jit
def increment_a_2D_array(an_array):
    x, y = cuda.grid(2)
    if x < an_array.shape[0] and y < an_array.shape[1]:
        an_array[x, y] += 1


def test_2d_grid(rng):
    a = rng.random((37, 53))
    expect = a + 1
    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(a.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(a.shape[1] / threadsperblock[1])
    increment_a_2D_array[(blockspergrid_x, blockspergrid_y), threadsperblock](a)
    np.testing.assert_array_equal(a, expect)


@cuda.jit
def transpose_2d_stride(a, out):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            out[j, i] = a[i, j]


def test_2d_grid_stride_transpose(rng):
    a = rng.random((70, 45)).astype(np.float32)
    out = poison((45, 70), np.float32)
    transpose_2d_stride[(2, 2), (8, 8)](a, out)
    np.testing.assert_array_equal(out, a.T)


@cuda.jit
def fill_3d(out):
    i, j, k = cuda.grid(3)
    ni, nj, nk = out.shape
    if i < ni and j < nj and k < nk:
        out[i, j, k] = i * 10000 + j * 100 + k


def test_3d_grid():
    out = poison((9, 10, 11), np.int64)
    fill_3d[(3, 3, 3), (4, 4, 4)](out)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 10000 + j * 100 + k)


# ---- explicit signatures ---------------------------------------------------------------

@cuda.jit(void(float32, float32[:], float32[:], float32[:]))
def saxpy_typed(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_signature_of_type_objects(rng):
    x = rng.random(300, dtype=np.float32)
    y = rng.random(300, dtype=np.float32)
    out = poison(300, np.float32)
    saxpy_typed[3, 128](np.float32(1.5), x, y, out)
    np.testing.assert_allclose(out, np.float32(1.5) * x + y, rtol=1e-6)
    assert len(saxpy_typed.signatures) == 1


@cuda.jit("void(int32[:], int32[:], int32)")
def add_scalar_typed(a, out, k):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + k


def test_signature_string_converts_a_python_int(rng):
    a = rng.integers(-1000, 1000, 200).astype(np.int32)
    out = poison(200, np.int32)
    add_scalar_typed[1, 256](a, out, 7)   # the int converts to int32, as numba converts it
    np.testing.assert_array_equal(out, a + 7)


@cuda.jit(["void(float32[:], float32[:])", "void(float64[:], float64[:])"])
def square_two_signatures(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * a[i]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_list_of_signatures(rng, dtype):
    a = rng.random(100).astype(dtype)
    out = poison(100, dtype)
    square_two_signatures[1, 128](a, out)
    np.testing.assert_array_equal(out, a * a)


# ---- device functions -----------------------------------------------------------------

@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit("float64(float64, float64)", device=True)
def smooth_max(a, b):
    return 0.5 * (a + b + abs(a - b))


@cuda.jit
def use_device_functions(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = clamp(smooth_max(a[i], b[i]), 0.25, 0.75)


def test_device_functions_with_and_without_signature(rng):
    a, b = rng.random(400), rng.random(400)
    out = poison(400, np.float64)
    use_device_functions[4, 128](a, b, out)
    np.testing.assert_allclose(out, np.clip(np.maximum(a, b), 0.25, 0.75), rtol=1e-15)


@cuda.jit(device=True)
def lerp(a, b, t=0.5):
    return a + (b - a) * t


@cuda.jit
def use_keywords_and_defaults(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = lerp(a[i], b[i])
        out[i, 1] = lerp(a[i], b[i], t=0.25)
        out[i, 2] = lerp(b=a[i], a=b[i])


def test_device_function_keyword_arguments_and_defaults(rng):
    a, b = rng.random(400), rng.random(400)
    out = poison((400, 3), np.float64)
    use_keywords_and_defaults[4, 128](a, b, out)
    expect = np.stack([a + (b - a) * 0.5, a + (b - a) * 0.25, b + (a - b) * 0.5], axis=1)
    np.testing.assert_allclose(out, expect, rtol=1e-15)


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


@cuda.jit
def create_fractal(min_x, max_x, min_y, max_y, image, iters):
    height = image.shape[0]
    width = image.shape[1]
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    x, y = cuda.grid(2)
    if x < width and y < height:
        real = min_x + x * pixel_size_x
        imag = min_y + y * pixel_size_y
        image[y, x] = mandel(real, imag, iters)


def test_mandelbrot_device_function():
    image = poison((24, 36), np.uint8)
    create_fractal[(3, 2), (16, 16)](-2.0, 1.0, -1.0, 1.0, image, 20)
    h, w = image.shape
    expect = np.array([[mandel.py_func(-2.0 + x * 3.0 / w, -1.0 + y * 2.0 / h, 20)
                        for x in range(w)] for y in range(h)], np.uint8)
    np.testing.assert_array_equal(image, expect)


# ---- shared memory --------------------------------------------------------------------

TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x    # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def test_shared_memory_matmul_from_numbas_guide(rng):
    n = 40   # not a multiple of TPB: the bounds checks matter
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = poison((n, n), np.float32)
    blocks = (n + TPB - 1) // TPB
    fast_matmul[(blocks, blocks), (TPB, TPB)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


@cuda.jit
def matmul_naive(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


def test_naive_matmul(rng):
    A, B = rng.random((20, 30)), rng.random((30, 25))
    C = poison((20, 25), np.float64)
    matmul_naive[(2, 2), (16, 16)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-13)


@cuda.jit
def block_sum(x, out):
    buf = cuda.shared.array(128, dtype=float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = buf[0]


def test_shared_memory_tree_reduction(rng):
    x = rng.random(1000)
    out = poison(8, np.float64)
    block_sum[8, 128](x, out)
    expect = np.add.reduceat(np.concatenate([x, np.zeros(24)]), np.arange(0, 1024, 128))
    np.testing.assert_allclose(out, expect, rtol=1e-13)


@cuda.jit
def reverse_in_block(x, out):
    dyn = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    dyn[t] = x[base + t]
    cuda.syncthreads()
    out[base + t] = dyn[cuda.blockDim.x - 1 - t]


def test_dynamic_shared_memory(rng):
    x = rng.random(256, dtype=np.float32)
    out = poison(256, np.float32)
    reverse_in_block[4, 64, 0, 64 * 4](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, 64)[:, ::-1].ravel())


@cuda.jit
def count_positive_per_block(x, out):
    i = cuda.grid(1)
    n = cuda.syncthreads_count(x[i] > 0)
    every = cuda.syncthreads_and(x[i] > -10)
    some = cuda.syncthreads_or(x[i] > 2)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x, 0] = n
        out[cuda.blockIdx.x, 1] = every
        out[cuda.blockIdx.x, 2] = some


def test_syncthreads_count_and_or(rng):
    x = rng.standard_normal(4 * 64)
    out = poison((4, 3), np.int32)
    count_positive_per_block[4, 64](x, out)
    blocks = x.reshape(4, 64)
    np.testing.assert_array_equal(out[:, 0], (blocks > 0).sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], (blocks > -10).all(axis=1))
    np.testing.assert_array_equal(out[:, 2], (blocks > 2).any(axis=1))


# ---- local and constant memory --------------------------------------------------------

@cuda.jit
def moving_window_sort(x, out):
    i = cuda.grid(1)
    if i + 4 <= x.size:
        window = cuda.local.array(4, dtype=float64)
        for k in range(4):
            window[k] = x[i + k]
        for a in range(4):            # insertion sort of the window
            for b in range(a + 1, 4):
                if window[b] < window[a]:
                    window[a], window[b] = window[b], window[a]
        out[i] = window[1] + window[2]   # the sum of the two middle values


def test_local_array(rng):
    x = rng.random(100)
    out = poison(97, np.float64)
    moving_window_sort[1, 128](x, out)
    windows = np.sort(np.lib.stride_tricks.sliding_window_view(x, 4), axis=1)
    np.testing.assert_array_equal(out, windows[:, 1] + windows[:, 2])


WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)


@cuda.jit
def smooth(x, out):
    w = cuda.const.array_like(WEIGHTS)
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        out[i] = w[0] * x[i - 1] + w[1] * x[i] + w[2] * x[i + 1]
    elif i == 0 or i == x.size - 1:
        out[i] = x[i]


def test_const_array_like(rng):
    x = rng.random(300, dtype=np.float32)
    out = poison(300, np.float32)
    smooth[3, 128](x, out)
    expect = x.copy()
    expect[1:-1] = WEIGHTS[0] * x[:-2] + WEIGHTS[1] * x[1:-1] + WEIGHTS[2] * x[2:]
    np.testing.assert_allclose(out, expect, rtol=1e-6)


# ---- atomics -------------------------------------------------------------------------

@cuda.jit
def sum_atomic(x, result):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(result, 0, x[i])


@cuda.jit
def max_atomic(x, result):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(result, 0, x[i])
        cuda.atomic.min(result, 1, x[i])


def test_atomic_max_min(rng):
    x = rng.standard_normal(2000)
    result = np.array([-np.inf, np.inf])
    max_atomic[8, 256](x, result)
    np.testing.assert_array_equal(result, [x.max(), x.min()])


@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        bin_number = int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)


def test_histogram_from_numbas_examples(rng):
    x = rng.random(4000).astype(np.float32)
    hist = np.zeros(10, np.int32)
    histogram[4, 128](x, np.float32(0.0), np.float32(1.0), hist)
    bins = ((x - np.float32(0.0)) / ((np.float32(1.0) - np.float32(0.0)) / 10)).astype(np.int32)
    np.testing.assert_array_equal(hist, np.bincount(bins, minlength=10)[:10])


@cuda.jit
def shared_histogram(x, out):
    local_hist = cuda.shared.array(16, dtype=int32)
    t = cuda.threadIdx.x
    if t < 16:
        local_hist[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(local_hist, x[i] % 16, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(out, t, local_hist[t])


def test_shared_then_global_atomics(rng):
    x = rng.integers(0, 1000, 2500).astype(np.int64)
    out = np.zeros(16, np.int32)
    shared_histogram[(x.size + 127) // 128, 128](x, out)
    np.testing.assert_array_equal(out, np.bincount(x % 16, minlength=16))


@cuda.jit
def first_negative(x, result):
    i = cuda.grid(1)
    if i < x.size and x[i] < 0:
        cuda.atomic.min(result, 0, i)


def test_atomic_min_index(rng):
    x = rng.random(1000)
    x[[417, 600, 901]] = -1.0
    result = np.array([x.size], np.int64)
    first_negative[4, 256](x, result)
    assert result[0] == 417


@cuda.jit
def claim_slot(flags, owner):
    i = cuda.grid(1)
    if i < owner.size:
        old = cuda.atomic.compare_and_swap(flags, 0, i + 1)   # only the first thread wins
        owner[i] = old


def test_atomic_compare_and_swap(rng):
    flags = np.zeros(1, np.int64)
    owner = poison(64, np.int64)
    claim_slot[2, 32](flags, owner)
    winner = flags[0] - 1
    assert 0 <= winner < 64 and owner[winner] == 0
    np.testing.assert_array_equal(np.delete(owner, winner), winner + 1)


# ---- warp primitives ------------------------------------------------------------------

@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    val = x[i]
    offset = 16
    while offset > 0:
        val += cuda.shfl_down_sync(0xffffffff, val, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, val)


@pytest.mark.parametrize("kernel,dtype,n", [(sum_atomic, np.int64, 3000),
                                             (warp_sum, np.int32, 256)],
                         ids=["atomic.add", "shfl_down_sync"])
def test_sum_reductions(rng, kernel, dtype, n):
    x = rng.integers(-1000, 1000, n).astype(dtype)
    result = np.zeros(1, dtype)
    kernel[(n + 127) // 128, 128](x, result)   # warp_sum: n a multiple of 32, every lane loads
    assert result[0] == x.sum()


@cuda.jit
def warp_vote(x, counts, flags):
    i = cuda.grid(1)
    mask = cuda.ballot_sync(0xffffffff, x[i] > 0)
    everyone = cuda.all_sync(0xffffffff, x[i] > -100)
    someone = cuda.any_sync(0xffffffff, x[i] > 1.5)
    if cuda.laneid == 0:
        counts[i // 32] = cuda.popc(mask)
        flags[i // 32, 0] = everyone
        flags[i // 32, 1] = someone


def test_ballot_popc_and_votes(rng):
    x = rng.standard_normal(128)
    counts = poison(4, np.int32)
    flags = poison((4, 2), np.int32)
    warp_vote[1, 128](x, counts, flags)
    warps = x.reshape(4, 32)
    np.testing.assert_array_equal(counts, (warps > 0).sum(axis=1))
    np.testing.assert_array_equal(flags[:, 0], (warps > -100).all(axis=1))
    np.testing.assert_array_equal(flags[:, 1], (warps > 1.5).any(axis=1))


@cuda.jit
def broadcast_lane0(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_sync(0xffffffff, x[i], 0) + cuda.shfl_xor_sync(0xffffffff, x[i], 1)


def test_shfl_sync_and_xor(rng):
    x = rng.random(64)
    out = poison(64, np.float64)
    broadcast_lane0[1, 64](x, out)
    warps = x.reshape(2, 32)
    lane = np.arange(64) % 32
    expect = warps[np.arange(64) // 32, 0] + warps[np.arange(64) // 32, lane ^ 1]
    np.testing.assert_array_equal(out, expect)


# ---- math and scalar functions ---------------------------------------------------------

@cuda.jit
def polar(x, y, r, theta, rest):
    i = cuda.grid(1)
    if i < x.size:
        r[i] = math.hypot(x[i], y[i])
        theta[i] = math.atan2(y[i], x[i])
        rest[i] = math.exp(-x[i] * x[i]) + math.sin(x[i]) * math.cos(y[i]) + \
            math.sqrt(abs(y[i])) + math.log1p(abs(x[i])) + math.floor(x[i] * 3)


def test_math_functions(rng):
    x, y = rng.standard_normal(500), rng.standard_normal(500)
    r, theta, rest = (poison(500, np.float64) for _ in range(3))
    polar[4, 128](x, y, r, theta, rest)
    np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-15)
    np.testing.assert_allclose(theta, np.arctan2(y, x), rtol=1e-15)
    expect = np.exp(-x * x) + np.sin(x) * np.cos(y) + np.sqrt(np.abs(y)) + \
        np.log1p(np.abs(x)) + np.floor(x * 3)
    # the terms (up to ~10) can cancel to near zero: an ulp of the terms is absolute
    np.testing.assert_allclose(rest, expect, rtol=1e-14, atol=1e-14)


@cuda.jit
def float32_math(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.tanh(x[i]) + math.erf(x[i]) + cuda.fma(x[i], x[i], float32(1.0))


def test_math_keeps_float32(rng):
    x = rng.standard_normal(300).astype(np.float32)
    out = poison(300, np.float32)
    float32_math[3, 128](x, out)
    erf = np.vectorize(math.erf)(x.astype(np.float64))
    np.testing.assert_allclose(out, np.tanh(x) + erf + (x * x + 1), rtol=1e-5, atol=1e-6)


@cuda.jit
def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = min(a[i], b[i]) * max(a[i], 3)
        out[i, 3] = a[i] << 2 | (b[i] & 7)


def test_python_integer_semantics(rng):
    a = rng.integers(-1000, 1000, 300)
    b = rng.integers(1, 50, 300) * rng.choice([-1, 1], 300)
    out = poison((300, 4), np.int64)
    int_ops[3, 128](a, b, out)
    np.testing.assert_array_equal(out[:, 0], a // b)
    np.testing.assert_array_equal(out[:, 1], a % b)
    np.testing.assert_array_equal(out[:, 2], np.minimum(a, b) * np.maximum(a, 3))
    np.testing.assert_array_equal(out[:, 3], a << 2 | (b & 7))


@cuda.jit
def control_flow(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    acc = 0
    for k in range(x[i]):
        if k % 3 == 0:
            continue
        if k > 40:
            break
        acc += k
    out[i] = acc


def test_loops_with_break_continue_and_early_return(rng):
    x = rng.integers(0, 60, 200)
    out = poison(200, np.int64)
    control_flow[2, 128](x, out)
    expect = [sum(k for k in range(n) if k % 3 and k <= 40) for n in x]
    np.testing.assert_array_equal(out, expect)


# ---- host API: device arrays, streams ---------------------------------------------------

@cuda.jit
def axpy_inplace(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def test_device_arrays_and_a_stream(rng):
    x = rng.random(1000)
    y = rng.random(1000)
    stream = cuda.stream()
    d_x = cuda.to_device(x, stream=stream)
    d_y = cuda.to_device(y, stream=stream)
    axpy_inplace[8, 128, stream](2.0, d_x, d_y)
    result = d_y.copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_allclose(result, y + 2.0 * x, rtol=1e-15)


def test_device_array_like_and_to_device_into(rng):
    x = rng.random(500)
    d_out = cuda.device_array_like(x)
    d_x = cuda.to_device(np.zeros_like(x))
    assert cuda.to_device(x, to=d_x) is d_x
    scale_grid_stride[2, 64](d_x, d_out, 3.0)
    cuda.synchronize()
    np.testing.assert_array_equal(d_out.copy_to_host(), x * 3.0)


@cuda.jit
def typed_scalars(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = int64(i) * 3_000_000_000
        out[i, 1] = uint32(i) - uint32(1) if i > 0 else uint32(7)
        out[i, 2] = int32(float64(i) * 2.5)


def test_numba_type_objects_as_casts():
    out = poison((100, 3), np.int64)
    typed_scalars[1, 128](out)
    i = np.arange(100)
    np.testing.assert_array_equal(out[:, 0], i * 3_000_000_000)
    np.testing.assert_array_equal(out[:, 1], np.where(i > 0, i - 1, 7))
    np.testing.assert_array_equal(out[:, 2], (i * 2.5).astype(np.int32))



# ---- the same kernels as PTX ----------------------------------------------------------

F64, F32, I64 = "float64[::1]", "float32[::1]", "int64[::1]"
PTX_CASES = [
    (vector_add, f"void({F32}, {F32}, {F32})"),
    (increment_by_one, f"void({I64})"),
    (scale_grid_stride, f"void({F64}, {F64}, float64)"),
    (manual_stride, f"void({F32}, {F32})"),
    (increment_a_2D_array, "void(float64[:, ::1])"),
    (transpose_2d_stride, "void(float32[:, ::1], float32[:, ::1])"),
    (fill_3d, "void(int64[:, :, ::1])"),
    (use_device_functions, f"void({F64}, {F64}, {F64})"),
    (create_fractal, "void(float64, float64, float64, float64, uint8[:, ::1], int64)"),
    (fast_matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    (matmul_naive, "void(float64[:, ::1], float64[:, ::1], float64[:, ::1])"),
    (block_sum, f"void({F64}, {F64})"),
    (reverse_in_block, f"void({F32}, {F32})"),
    (count_positive_per_block, f"void({F64}, int32[:, ::1])"),
    (moving_window_sort, f"void({F64}, {F64})"),
    (smooth, f"void({F32}, {F32})"),
    (sum_atomic, f"void({I64}, {I64})"),
    (max_atomic, f"void({F64}, {F64})"),
    (histogram, "void(float32[::1], float32, float32, int32[::1])"),
    (shared_histogram, f"void({I64}, int32[::1])"),
    (first_negative, f"void({F64}, {I64})"),
    (claim_slot, f"void({I64}, {I64})"),
    (warp_sum, "void(int32[::1], int32[::1])"),
    (warp_vote, f"void({F64}, int32[::1], int32[:, ::1])"),
    (broadcast_lane0, f"void({F64}, {F64})"),
    (polar, f"void({F64}, {F64}, {F64}, {F64}, {F64})"),
    (float32_math, f"void({F32}, {F32})"),
    (int_ops, f"void({I64}, {I64}, int64[:, ::1])"),
    (control_flow, f"void({I64}, {I64})"),
    (axpy_inplace, f"void(float64, {F64}, {F64})"),
    (typed_scalars, "void(int64[:, ::1])"),
]



@cuda.jit
def row_sums(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for v in a[i]:
            s += v
        out[i] = s


def test_iterating_over_an_array(rng):
    a = rng.random((37, 11))
    out = poison(37, np.float64)
    row_sums[2, 32](a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-12)
