"""Kernels that cooperate within a block: gpujit against numba-cuda and CUDA C.

Three kernels, each in three implementations, in one process on one GPU:

* matmul: C = A @ B in float32 with 16 x 16 shared-memory tiles and
  syncthreads() between the load and multiply phases (examples/matmul.py);
* sum: a float32 reduction: a grid-stride loop, a tree in shared memory down
  to one warp, shfl_down_sync within the warp, one partial per block, and a
  second one-block launch of the same kernel over the partials
  (examples/reduction.py); the time covers both launches;
* histogram: uint8 values into 256 bins, privatised in a shared int32[256]
  with atomic.add, then merged into the global bins with atomic.add
  (examples/histogram.py).

gpujit and numba-cuda compile the same Python functions: the kernels below
are written against a global named `cuda`, and kernels_for() gives each
framework copies of them (the same code objects) whose `cuda` is that
framework's module.  The CUDA C versions are the same algorithms written by
hand, compiled by NVRTC through CuPy's RawKernel with its default
optimisation (the equivalent of nvcc -O3; no fast-math).  All three get the
same inputs, as device arrays, and the same launch configuration.

Each result is checked against NumPy before its kernel is timed (matmul and
sum within the float32 error bounds the examples state, the histogram
exactly).  Kernel times come from CUDA events around each launch (both
launches for the sum): the median of --runs runs after a warm-up launch.
The ratios are gpujit / CUDA C and numba / CUDA C: below 1 is faster than
CUDA C.  A framework that cannot be imported is skipped with a line saying
so.  Exit status: 0 when every result checked, 1 otherwise.

    python -P benchmarks/bench_parallel.py [--matmul N K M] [--n-sum N] [--n-hist N]
                                           [--blocks B] [--runs R]
"""
import argparse
import math
import sys
import traceback
import types
import warnings

import numpy as np

TILE = 16                # matmul: threads per block along x and y, and the tile's side
THREADS = 256            # sum and histogram: threads per block (a power of two, >= 64)
BINS = 256


# ---- the kernels gpujit and numba-cuda compile (the same Python source) -------------

cuda = None   # the module the kernels below call; kernels_for() binds it per framework

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


def block_sums(x, partials):
    buf = cuda.shared.array(THREADS, np.float32)
    tid = cuda.threadIdx.x
    acc = np.float32(0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        acc += x[i]
        i += stride
    buf[tid] = acc
    cuda.syncthreads()
    s = THREADS // 2
    while s >= 32:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = buf[tid]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xffffffff, v, offset)
            offset //= 2
        if tid == 0:
            partials[cuda.blockIdx.x] = v


def histogram(x, hist):
    bins = cuda.shared.array(BINS, np.int32)
    j = cuda.threadIdx.x
    while j < BINS:
        bins[j] = 0
        j += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        cuda.atomic.add(bins, x[i], 1)
        i += stride
    cuda.syncthreads()
    j = cuda.threadIdx.x
    while j < BINS:
        count = bins[j]
        if count != 0:
            cuda.atomic.add(hist, j, count)
        j += cuda.blockDim.x


def kernels_for(module):
    """{name: kernel}: the three functions above, jitted by `module` (gpujit or
    numba.cuda), each a copy of the same code object with `cuda` bound to `module`."""
    env = dict(globals(), cuda=module)
    return {f.__name__: module.jit(types.FunctionType(f.__code__, env, f.__name__))
            for f in (matmul, block_sums, histogram)}


# ---- the same kernels in CUDA C (NVRTC) ------------------------------------------------

CUDA_C = r"""
#define TILE 16
#define THREADS 256
#define BINS 256

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

extern "C" __global__ void block_sums(const float *x, float *partials, long long n) {
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
    if (tid < 32) {
        float v = buf[tid];
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (tid == 0)
            partials[blockIdx.x] = v;
    }
}

extern "C" __global__ void histogram(const unsigned char *x, int *hist, long long n) {
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
"""


# ---- frameworks: one dict of operations each ------------------------------------------

def python_framework(cuda_module):
    """Operations for gpujit or numba.cuda (same API), launching kernels_for(module)."""
    k = kernels_for(cuda_module)

    def device_sum(blocks, x, partials, total):
        k["block_sums"][blocks, THREADS](x, partials)
        k["block_sums"][1, THREADS](partials, total)

    return dict(
        to_device=cuda_module.to_device, to_host=lambda d: d.copy_to_host(),
        event=cuda_module.event, elapsed=lambda start, end: start.elapsed_time(end),
        matmul=lambda grid, a, b, c: k["matmul"][grid, (TILE, TILE)](a, b, c),
        sum=device_sum,
        histogram=lambda blocks, x, hist: k["histogram"][blocks, THREADS](x, hist))


def gpujit_framework():
    import gpujit
    if not gpujit.is_available():
        raise ImportError("gpujit finds no CUDA GPU here")
    return python_framework(gpujit)


def numba_framework():
    # numba still touches numpy.row_stack, which NumPy 2.5 removed.
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda as numba_cuda
    return python_framework(numba_cuda)


def cuda_c_framework():
    import cupy as cp
    module = cp.RawModule(code=CUDA_C)
    mm, bs, hg = (module.get_function(name) for name in ("matmul", "block_sums", "histogram"))

    def device_sum(blocks, x, partials, total):
        bs((blocks,), (THREADS,), (x, partials, np.int64(x.size)))
        bs((1,), (THREADS,), (partials, total, np.int64(partials.size)))

    def run_matmul(grid, a, b, c):
        n, k = a.shape
        mm(grid, (TILE, TILE), (a, b, c, np.int64(n), np.int64(k), np.int64(b.shape[1])))

    return dict(
        to_device=cp.asarray, to_host=cp.asnumpy,
        event=cp.cuda.Event, elapsed=cp.cuda.get_elapsed_time,
        matmul=run_matmul, sum=device_sum,
        histogram=lambda blocks, x, hist: hg((blocks,), (THREADS,), (x, hist, np.int64(x.size))))


FRAMEWORKS = (("CUDA C", cuda_c_framework), ("numba", numba_framework),
              ("gpujit", gpujit_framework))


# ---- inputs, checks and timing -----------------------------------------------------------

def median_ms(fw, launch, runs):
    """Median kernel time in ms of `runs` calls of launch(), after one warm-up call."""
    launch()
    start, end = fw["event"](), fw["event"]()
    times = []
    for _ in range(runs):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(fw["elapsed"](start, end))
    return float(np.median(times))


def sum_additions(n, blocks):
    """The most float32 additions any element goes through in the two-pass sum."""
    tree = int(math.log2(THREADS))
    return -(-n // (blocks * THREADS)) + tree + -(-blocks // THREADS) + tree


class Problems:
    """The inputs (host), the NumPy references and the checks, shared by every framework."""

    def __init__(self, args, rng):
        n, k, m = args.matmul
        self.a = rng.uniform(-1, 1, (n, k)).astype(np.float32)
        self.b = rng.uniform(-1, 1, (k, m)).astype(np.float32)
        a64, b64 = self.a.astype(np.float64), self.b.astype(np.float64)
        self.c = a64 @ b64
        self.c_bound = k * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))   # float32 dot products
        self.grid = ((m + TILE - 1) // TILE, (n + TILE - 1) // TILE)

        self.blocks = args.blocks
        self.x = rng.random(args.n_sum, dtype=np.float32)
        self.total = float(np.sum(self.x, dtype=np.float64))
        self.total_bound = (sum_additions(self.x.size, self.blocks) * 2.0 ** -24
                            * float(np.sum(np.abs(self.x), dtype=np.float64)))

        self.bytes = np.clip(rng.normal(128, 30, args.n_hist), 0, 255).astype(np.uint8)
        self.counts = np.bincount(self.bytes, minlength=BINS)
        self.sizes = {"matmul": f"({n} x {k}) @ ({k} x {m}) float32",
                      "sum": f"n = {args.n_sum} float32, {self.blocks} x {THREADS}",
                      "histogram": f"n = {args.n_hist} uint8, {self.blocks} x {THREADS}"}

    def run_matmul(self, fw, runs):
        d_a, d_b = fw["to_device"](self.a), fw["to_device"](self.b)
        d_c = fw["to_device"](np.full(self.c.shape, np.nan, dtype=np.float32))
        fw["matmul"](self.grid, d_a, d_b, d_c)
        ratio = float(np.max(np.abs(fw["to_host"](d_c) - self.c) / self.c_bound))
        if not ratio <= 1.0:                       # NaN: an element was not written
            return None, f"error / bound = {ratio:.3g}"
        return median_ms(fw, lambda: fw["matmul"](self.grid, d_a, d_b, d_c), runs), None

    def run_sum(self, fw, runs):
        d_x = fw["to_device"](self.x)
        d_partials = fw["to_device"](np.full(self.blocks, np.nan, dtype=np.float32))
        d_total = fw["to_device"](np.full(1, np.nan, dtype=np.float32))
        fw["sum"](self.blocks, d_x, d_partials, d_total)
        error = abs(float(fw["to_host"](d_total)[0]) - self.total)
        if not error <= self.total_bound:
            return None, f"error {error:.3g} > bound {self.total_bound:.3g}"
        return median_ms(fw, lambda: fw["sum"](self.blocks, d_x, d_partials, d_total), runs), None

    def run_histogram(self, fw, runs):
        d_x = fw["to_device"](self.bytes)
        d_hist = fw["to_device"](np.zeros(BINS, dtype=np.int32))
        fw["histogram"](self.blocks, d_x, d_hist)
        wrong = int(np.count_nonzero(fw["to_host"](d_hist) != self.counts))
        if wrong:
            return None, f"{wrong} bins differ from np.bincount"
        ms = median_ms(fw, lambda: fw["histogram"](self.blocks, d_x, d_hist), runs)
        launches = 2 + runs                        # the check, the warm-up, the timed runs
        if launches * self.bytes.size < 2 ** 31:   # the int32 counts did not overflow
            wrong = int(np.count_nonzero(fw["to_host"](d_hist) != launches * self.counts))
            if wrong:
                return None, f"{wrong} bins differ from np.bincount after the timed runs"
        return ms, None


KERNELS = (("matmul", Problems.run_matmul), ("sum", Problems.run_sum),
           ("histogram", Problems.run_histogram))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matmul", type=int, nargs=3, default=(1999, 1500, 1801),
                        metavar=("N", "K", "M"), help="A is N x K, B is K x M")
    parser.add_argument("--n-sum", type=int, default=100_000_007, help="values to sum")
    parser.add_argument("--n-hist", type=int, default=100_000_007, help="values to count")
    parser.add_argument("--blocks", type=int, default=1024,
                        help="blocks per grid of the sum's first pass and the histogram")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per kernel (median)")
    args = parser.parse_args()

    # numba warns that the sum's one-block second pass under-uses the GPU: it is meant to.
    warnings.filterwarnings("ignore", message=".*under-utilization")
    problems = Problems(args, np.random.default_rng())
    frameworks = {}
    failed = False
    for name, make in FRAMEWORKS:
        try:
            frameworks[name] = make()
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
        except Exception as exc:   # e.g. NVRTC rejecting the CUDA C
            print(f"{name}: failed ({type(exc).__name__}: {exc})")
            failed = True

    times = {}       # (kernel, framework) -> ms
    for kernel, run in KERNELS:
        for name, fw in frameworks.items():
            try:
                ms, problem = run(problems, fw, args.runs)
            except Exception as exc:   # one failure must not hide the other numbers
                print(f"{kernel}, {name}: failed ({type(exc).__name__}: {exc})")
                if name == "gpujit":
                    traceback.print_exc()
                failed = True
                continue
            if problem:
                print(f"{kernel}, {name}: WRONG RESULT ({problem}); not timed")
                failed = True
                continue
            times[kernel, name] = ms

    def cell(kernel, name):
        ms = times.get((kernel, name))
        return f"{ms:.4f}" if ms is not None else "-"

    def ratio(kernel, name):
        ms, base = times.get((kernel, name)), times.get((kernel, "CUDA C"))
        return f"{ms / base:.2f}" if ms is not None and base else "-"

    print(f"kernel times in ms: median of {args.runs} runs after a warm-up (CUDA events); "
          f"ratios below 1 are faster than CUDA C")
    print(f"{'kernel':10} {'CUDA C':>9} {'numba':>9} {'gpujit':>9} {'gpujit/C':>9} "
          f"{'numba/C':>8}  sizes")
    for kernel, _ in KERNELS:
        print(f"{kernel:10} {cell(kernel, 'CUDA C'):>9} {cell(kernel, 'numba'):>9} "
              f"{cell(kernel, 'gpujit'):>9} {ratio(kernel, 'gpujit'):>9} "
              f"{ratio(kernel, 'numba'):>8}  {problems.sizes[kernel]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
