"""The benchmark kernels, each written twice: in Python and in CUDA C.

gpujit and numba-cuda compile the same Python functions: they are written
against a global named `cuda`, and _common.jit_kernels() gives each
framework copies of them (the same code objects) whose `cuda` is that
framework's module.  Float32 kernels spell their constants np.float32(...)
because numba types a bare float literal as float64 (gpujit's literals are
weak, so the spelling changes nothing there).

CUDA_C holds the same algorithms written by hand as a CUDA C user writes
them: one `extern "C"` kernel per Python kernel, of the same name, with the
same arguments followed by the extents the Python kernels read from their
arrays (as long long).  It is compiled by NVRTC through CuPy with the
default options (as nvcc -O3: IEEE division and square root, multiplies
and adds contracted into FMA).

Used by bench_parallel.py (matmul, block_sums, histogram) and
bench_speed.py (all but block_sums).
"""
import math

import numpy as np

TILE = 16         # matmul: threads per block along x and y, and the tile's side
THREADS = 256     # block_total's block size: a power of two, >= 64
BINS = 256        # histogram bins
MAX_ITER = 256    # Mandelbrot iterations

# Abramowitz & Stegun 26.2.17, the polynomial approximation of the normal
# CDF (|error| < 7.5e-8), with the coefficients of the CUDA samples'
# BlackScholes (BlackScholes_kernel.cuh, cndGPU).
CND_P = np.float32(0.2316419)
CND_A1 = np.float32(0.31938153)
CND_A2 = np.float32(-0.356563782)
CND_A3 = np.float32(1.781477937)
CND_A4 = np.float32(-1.821255978)
CND_A5 = np.float32(1.330274429)
RSQRT2PI = np.float32(0.39894228040143267793994605993438)

cuda = None   # the module the kernels below call; _common.jit_kernels() binds it


# ---- launch overhead -------------------------------------------------------------------

def store(out, x):
    out[0] = x


# ---- element-wise and stencil ----------------------------------------------------------

def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def stencil(a, out, c, d):
    j, i = cuda.grid(2)                   # x: column (coalesced), y: row
    n, m = a.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        out[i, j] = c * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) + d * a[i, j]


def cnd(d):
    """The standard normal CDF at d (A&S 26.2.17, see CND_P)."""
    k = np.float32(1) / (np.float32(1) + CND_P * abs(d))
    c = RSQRT2PI * math.exp(np.float32(-0.5) * d * d) * \
        (k * (CND_A1 + k * (CND_A2 + k * (CND_A3 + k * (CND_A4 + k * CND_A5)))))
    if d > np.float32(0):
        c = np.float32(1) - c
    return c


def black_scholes(call, put, s, x, t, r, v):
    i = cuda.grid(1)
    if i < call.size:
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + np.float32(0.5) * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cnd1 = cnd(d1)
        cnd2 = cnd(d2)
        exp_rt = math.exp(-r * t[i])
        call[i] = s[i] * cnd1 - x[i] * exp_rt * cnd2
        put[i] = x[i] * exp_rt * (np.float32(1) - cnd2) - s[i] * (np.float32(1) - cnd1)


def mandelbrot(counts, x0, y0, dx, dy):
    col, row = cuda.grid(2)
    height, width = counts.shape
    if row < height and col < width:
        cx = x0 + np.float32(col) * dx
        cy = y0 + np.float32(row) * dy
        x = np.float32(0)
        y = np.float32(0)
        n = 0
        while n < MAX_ITER:
            x2 = x * x
            y2 = y * y
            if x2 + y2 > np.float32(4):
                break
            y = np.float32(2) * x * y + cy
            x = x2 - y2 + cx
            n += 1
        counts[row, col] = n


def mandelbrot_bound(counts, x0, y0, dx, dy, max_iter):
    """mandelbrot with the iteration bound an argument (a Python int: int64)
    and the escape test in the loop's condition."""
    col, row = cuda.grid(2)
    height, width = counts.shape
    if row < height and col < width:
        cx = x0 + np.float32(col) * dx
        cy = y0 + np.float32(row) * dy
        x = np.float32(0)
        y = np.float32(0)
        n = 0
        while n < max_iter and x * x + y * y <= np.float32(4):
            x, y = x * x - y * y + cx, np.float32(2) * x * y + cy
            n += 1
        counts[row, col] = n


# ---- shared memory, barriers, shuffles and atomics -------------------------------------

def matmul(a, b, c):
    a_tile = cuda.shared.array((TILE, TILE), np.float32)
    b_tile = cuda.shared.array((TILE, TILE), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    n, k = a.shape
    m = b.shape[1]
    acc = np.float32(0)
    for t in range((k + TILE - 1) // TILE):
        base = t * TILE
        if row < n and base + tx < k:
            a_tile[ty, tx] = a[row, base + tx]
        else:
            a_tile[ty, tx] = 0
        if base + ty < k and col < m:
            b_tile[ty, tx] = b[base + ty, col]
        else:
            b_tile[ty, tx] = 0
        cuda.syncthreads()
        for j in range(TILE):
            acc += a_tile[ty, j] * b_tile[j, tx]
        cuda.syncthreads()
    if row < n and col < m:
        c[row, col] = acc


def block_total(x):
    """The sum of this block's share of x (a grid-stride loop per thread, a
    tree in shared memory down to one warp, then shfl_down_sync): complete
    in thread 0, partial in the others.  Blocks of THREADS threads."""
    buf = cuda.shared.array(THREADS, np.float32)
    tid = cuda.threadIdx.x
    acc = np.float32(0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):   # grid-stride loop
        acc += x[i]
    buf[tid] = acc
    cuda.syncthreads()
    s = THREADS // 2
    while s >= 32:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    v = np.float32(0)
    if tid < 32:
        v = buf[tid]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xffffffff, v, offset)
            offset //= 2
    return v


def block_sums(x, partials):
    v = block_total(x)
    if cuda.threadIdx.x == 0:
        partials[cuda.blockIdx.x] = v


def block_sum_atomic(x, total):
    v = block_total(x)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(total, 0, v)


def histogram(x, hist):
    bins = cuda.shared.array(BINS, np.int32)
    j = cuda.threadIdx.x
    while j < BINS:
        bins[j] = 0
        j += cuda.blockDim.x
    cuda.syncthreads()
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, x[i], 1)
    cuda.syncthreads()
    j = cuda.threadIdx.x
    while j < BINS:
        count = bins[j]
        if count != 0:
            cuda.atomic.add(hist, j, count)
        j += cuda.blockDim.x


DEVICE_FUNCTIONS = (cnd, block_total)    # called by the kernels, never launched
# Python kernels that are generic in a dtype, under the names of the CUDA C
# kernels that must be written once per dtype.
ALIASES = {"histogram_int32": histogram}
KERNELS = (store, vector_add, saxpy, stencil, black_scholes, mandelbrot, mandelbrot_bound,
           matmul, block_sums, block_sum_atomic, histogram)


# ---- the same kernels in CUDA C (NVRTC) ------------------------------------------------

CUDA_C = r"""
#define TILE 16
#define THREADS 256
#define BINS 256
#define MAX_ITER 256

extern "C" __global__ void store(float *out, float x) {
    out[0] = x;
}

extern "C" __global__ void vector_add(const float *a, const float *b, float *out,
                                      long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out,
                                 long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}

extern "C" __global__ void stencil(const float *a, float *out, float c, float d,
                                   long long n, long long m) {
    long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long i = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (0 < i && i < n - 1 && 0 < j && j < m - 1)
        out[i * m + j] = c * (a[(i - 1) * m + j] + a[(i + 1) * m + j] + a[i * m + j - 1]
                              + a[i * m + j + 1]) + d * a[i * m + j];
}

/* Abramowitz & Stegun 26.2.17, as the CUDA samples' BlackScholes (cndGPU),
   with expf and '/' where the sample has __expf and __fdividef. */
__device__ float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
                A4 = -1.821255978f, A5 = 1.330274429f;
    const float RSQRT2PI = 0.39894228040143267793994605993438f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * expf(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    if (d > 0)
        c = 1.0f - c;
    return c;
}

extern "C" __global__ void black_scholes(float *call, float *put, const float *s,
                                         const float *x, const float *t, float r, float v,
                                         long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float cnd1 = cnd(d1), cnd2 = cnd(d2);
        float exp_rt = expf(-r * t[i]);
        call[i] = s[i] * cnd1 - x[i] * exp_rt * cnd2;
        put[i] = x[i] * exp_rt * (1.0f - cnd2) - s[i] * (1.0f - cnd1);
    }
}

extern "C" __global__ void mandelbrot(int *counts, float x0, float y0, float dx, float dy,
                                      long long height, long long width) {
    long long col = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long row = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        float cx = x0 + (float)col * dx, cy = y0 + (float)row * dy;
        float x = 0.0f, y = 0.0f;
        int n = 0;
        while (n < MAX_ITER) {
            float x2 = x * x, y2 = y * y;
            if (x2 + y2 > 4.0f)
                break;
            y = 2.0f * x * y + cy;
            x = x2 - y2 + cx;
            n++;
        }
        counts[row * width + col] = n;
    }
}

extern "C" __global__ void mandelbrot_bound(int *counts, float x0, float y0, float dx,
                                            float dy, int max_iter, long long height,
                                            long long width) {
    long long col = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long row = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        float cx = x0 + (float)col * dx, cy = y0 + (float)row * dy;
        float x = 0.0f, y = 0.0f;
        int n = 0;
        while (n < max_iter && x * x + y * y <= 4.0f) {
            float xn = x * x - y * y + cx;
            y = 2.0f * x * y + cy;
            x = xn;
            n++;
        }
        counts[row * width + col] = n;
    }
}

extern "C" __global__ void matmul(const float *a, const float *b, float *c,
                                  long long n, long long k, long long m) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    long long row = blockIdx.y * (long long)TILE + ty;
    long long col = blockIdx.x * (long long)TILE + tx;
    float acc = 0.0f;
    for (long long base = 0; base < k; base += TILE) {
        a_tile[ty][tx] = row < n && base + tx < k ? a[row * k + base + tx] : 0.0f;
        b_tile[ty][tx] = base + ty < k && col < m ? b[(base + ty) * m + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; j++)
            acc += a_tile[ty][j] * b_tile[j][tx];
        __syncthreads();
    }
    if (row < n && col < m)
        c[row * m + col] = acc;
}

__device__ float block_total(const float *x, long long n) {
    __shared__ float buf[THREADS];
    int tid = threadIdx.x;
    float acc = 0.0f;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + tid; i < n; i += stride)
        acc += x[i];
    buf[tid] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s >= 32; s /= 2) {
        if (tid < s)
            buf[tid] += buf[tid + s];
        __syncthreads();
    }
    float v = 0.0f;
    if (tid < 32) {
        v = buf[tid];
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

extern "C" __global__ void block_sums(const float *x, float *partials, long long n) {
    float v = block_total(x, n);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = v;
}

extern "C" __global__ void block_sum_atomic(const float *x, float *total, long long n) {
    float v = block_total(x, n);
    if (threadIdx.x == 0)
        atomicAdd(total, v);
}

template <typename Key>
__device__ void histogram_of(const Key *x, int *hist, long long n) {
    __shared__ int bins[BINS];
    for (int j = threadIdx.x; j < BINS; j += blockDim.x)
        bins[j] = 0;
    __syncthreads();
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&bins[x[i]], 1);
    __syncthreads();
    for (int j = threadIdx.x; j < BINS; j += blockDim.x) {
        int count = bins[j];
        if (count != 0)
            atomicAdd(&hist[j], count);
    }
}

extern "C" __global__ void histogram(const unsigned char *x, int *hist, long long n) {
    histogram_of(x, hist, n);
}

extern "C" __global__ void histogram_int32(const int *x, int *hist, long long n) {
    histogram_of(x, hist, n);
}
"""
