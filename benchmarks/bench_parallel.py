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

gpujit and numba-cuda compile the same Python functions, and CUDA C runs
the same algorithms written by hand, compiled by NVRTC through CuPy with
its default options (the equivalent of nvcc -O3; no fast-math): the
kernels of _kernels.py, whose block_total (a device function) does the
sum's grid-stride loop, tree and shuffles.  All three get the
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
import os
import sys
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # see _common.py
from _common import CudaC, gpujit_framework, median_ms, numba_framework  # noqa: E402
from _kernels import BINS, THREADS, TILE  # noqa: E402

FRAMEWORKS = (("CUDA C", CudaC), ("numba", numba_framework), ("gpujit", gpujit_framework))


# ---- inputs, checks and timing -----------------------------------------------------------

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

    def matmul(self, fw, d_a, d_b, d_c):
        n, k = self.a.shape
        fw.launch("matmul", self.grid, (TILE, TILE), (d_a, d_b, d_c),
                  (d_a, d_b, d_c, np.int64(n), np.int64(k), np.int64(self.b.shape[1])))

    def sum(self, fw, d_x, d_partials, d_total):
        fw.launch("block_sums", self.blocks, THREADS, (d_x, d_partials),
                  (d_x, d_partials, np.int64(self.x.size)))
        fw.launch("block_sums", 1, THREADS, (d_partials, d_total),
                  (d_partials, d_total, np.int64(self.blocks)))

    def histogram(self, fw, d_x, d_hist):
        fw.launch("histogram", self.blocks, THREADS, (d_x, d_hist),
                  (d_x, d_hist, np.int64(self.bytes.size)))

    def run_matmul(self, fw, runs):
        d_a, d_b = fw.to_device(self.a), fw.to_device(self.b)
        d_c = fw.to_device(np.full(self.c.shape, np.nan, dtype=np.float32))
        self.matmul(fw, d_a, d_b, d_c)
        ratio = float(np.max(np.abs(fw.to_host(d_c) - self.c) / self.c_bound))
        if not ratio <= 1.0:                       # NaN: an element was not written
            return None, f"error / bound = {ratio:.3g}"
        return median_ms(fw, lambda: self.matmul(fw, d_a, d_b, d_c), runs), None

    def run_sum(self, fw, runs):
        d_x = fw.to_device(self.x)
        d_partials = fw.to_device(np.full(self.blocks, np.nan, dtype=np.float32))
        d_total = fw.to_device(np.full(1, np.nan, dtype=np.float32))
        self.sum(fw, d_x, d_partials, d_total)
        error = abs(float(fw.to_host(d_total)[0]) - self.total)
        if not error <= self.total_bound:
            return None, f"error {error:.3g} > bound {self.total_bound:.3g}"
        return median_ms(fw, lambda: self.sum(fw, d_x, d_partials, d_total), runs), None

    def run_histogram(self, fw, runs):
        d_x = fw.to_device(self.bytes)
        d_hist = fw.to_device(np.zeros(BINS, dtype=np.int32))
        self.histogram(fw, d_x, d_hist)
        wrong = int(np.count_nonzero(fw.to_host(d_hist) != self.counts))
        if wrong:
            return None, f"{wrong} bins differ from np.bincount"
        ms = median_ms(fw, lambda: self.histogram(fw, d_x, d_hist), runs)
        launches = 2 + runs                        # the check, the warm-up, the timed runs
        if launches * self.bytes.size < 2 ** 31:   # the int32 counts did not overflow
            wrong = int(np.count_nonzero(fw.to_host(d_hist) != launches * self.counts))
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
