"""Histogram of n uint8 values into 256 bins on the GPU (or the CPU), with
shared-memory privatisation, checked exactly against np.bincount.

Every block keeps its own histogram in a shared int32[256]:

1. the block's threads zero it, then syncthreads();
2. each thread walks its elements in a grid-stride loop and counts each one
   with atomic.add into the shared bins (fast: the atomics stay in the
   block's shared memory and only the block's threads contend for them);
3. after syncthreads(), the threads add the block's non-zero bins into the
   global histogram with atomic.add: 256 global atomics per block at most,
   instead of one per element.

The data look like an image's pixels (a normal distribution around 128,
clipped to [0, 255]), so a few bins take most of the counts: the case where
privatisation matters most.  Integer counts are exact, so the check is
equality with np.bincount(x, minlength=256).  The timed launches keep adding
into the same histogram, which is checked again at the end against
(1 + REPEATS) times the expected counts.  Prints the kernel time and the
input rate.

Usage: python histogram.py [--n N] [--blocks B]   (default n: 20,000,003 on
the GPU, 2,000,003 on the CPU target; B: 1024).  Runs on the GPU when one is
usable, otherwise on gpujit's CPU target, and prints which.  Exit status: 0
if the counts match NumPy's, 1 otherwise.
"""
import argparse
import sys

import numpy as np

import gpujit

BINS = 256
THREADS = 256            # threads per block
BLOCKS = 1024            # blocks per grid: each thread loops over n / (BLOCKS * THREADS)
REPEATS = 20             # timed launches, averaged
SIZES = {"cuda": 20_000_003, "cpu": 2_000_003}   # default n per target


@gpujit.jit
def histogram(x, hist):
    bins = gpujit.shared.array(BINS, np.int32)
    j = gpujit.threadIdx.x
    while j < BINS:                       # works for any block size
        bins[j] = 0
        j += gpujit.blockDim.x
    gpujit.syncthreads()
    for i in range(gpujit.grid(1), x.size, gpujit.gridsize(1)):   # grid-stride loop
        gpujit.atomic.add(bins, x[i], 1)
    gpujit.syncthreads()
    j = gpujit.threadIdx.x
    while j < BINS:
        count = bins[j]
        if count != 0:
            gpujit.atomic.add(hist, j, count)
        j += gpujit.blockDim.x


def target_description():
    """"cpu", or "cuda (<device name>)": where gpujit runs the kernels."""
    target = gpujit.current_target()
    if target == "cuda":
        return f"cuda ({gpujit.get_current_device().name})"
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, help="values (default: 20,000,003 on the GPU, "
                                              "2,000,003 on the CPU)")
    parser.add_argument("--blocks", type=int, default=BLOCKS,
                        help=f"blocks per grid (default {BLOCKS})")
    args = parser.parse_args()
    print(f"target: {target_description()}")
    n = args.n or SIZES.get(gpujit.current_target(), SIZES["cpu"])
    blocks = args.blocks

    rng = np.random.default_rng()
    x = np.clip(rng.normal(128, 30, n), 0, 255).astype(np.uint8)
    expected = np.bincount(x, minlength=BINS)

    d_x = gpujit.to_device(x)
    d_hist = gpujit.to_device(np.zeros(BINS, dtype=np.int32))
    histogram[blocks, THREADS](d_x, d_hist)          # first launch (and compile)
    first = d_hist.copy_to_host()
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        histogram[blocks, THREADS](d_x, d_hist)      # keeps adding into d_hist
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS
    last = d_hist.copy_to_host()

    wrong_first = int(np.count_nonzero(first != expected))
    wrong_last = int(np.count_nonzero(last != (1 + REPEATS) * expected))
    print(f"histogram: n = {n} uint8 into {BINS} bins, grid = {blocks} x {THREADS}")
    print(f"  bins differing from np.bincount: {wrong_first} after one launch, "
          f"{wrong_last} after {1 + REPEATS} (counts x {1 + REPEATS})")
    print(f"  fullest bin: {int(np.argmax(first))} with {int(first.max())} values; "
          f"empty bins: {int(np.count_nonzero(first == 0))}")
    print(f"  kernel time: {ms:.4f} ms (mean of {REPEATS}), "
          f"{n / (ms * 1e-3) / 1e9:.1f} G values/s")
    if wrong_first or wrong_last:
        print("histogram: FAILED: counts differ from np.bincount", file=sys.stderr)
        return 1
    print("histogram: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
