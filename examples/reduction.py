"""Sum of n float32 values on the GPU (or the CPU): a block reduction in
shared memory and warp shuffles, checked against NumPy's float64 sum.

The kernel `block_sums` writes one partial sum per block:

1. each thread adds up its elements in a grid-stride loop (element i,
   i + gridsize, ...), so any grid size covers any n;
2. the block halves its THREADS values in shared memory, with a
   syncthreads() after each step, until one warp's worth (32) is left;
3. the first warp finishes with shfl_down_sync: after offsets 16, 8, 4, 2
   and 1, lane 0 holds the block's sum and writes it to partials[blockIdx.x].

A second launch of the same kernel, with one block, sums the partials into
one value, so the total stays on the device.  Partial sums rather than an
atomic.add per block into one result: float addition is not associative,
so atomics would give a result that depends on the order in which blocks
finish, while the partials give the same sum on every run.

Every element goes through at most `levels` float32 additions (its thread's
loop, the tree in each pass), so the float32 result is within
levels * 2**-24 * sum(|x|) of the exact sum; the check uses that bound,
with np.sum(x, dtype=np.float64) standing in for the exact sum.  Besides the
timed run (BLOCKS blocks, a grid-stride loop), the same kernel is checked
with one element per thread, where the last block is only partly full, for
n = 1, THREADS - 1, THREADS + 1 and n.

Usage: python reduction.py [--n N] [--blocks B]   (default n: 10,000,019 on
the GPU, 1,000,003 on the CPU target; B: 1024).  Runs on the GPU when one is
usable, otherwise on gpujit's CPU target, and prints which.  Exit status: 0
if every sum is within its bound, 1 otherwise.
"""
import argparse
import math
import sys

import numpy as np

import gpujit

THREADS = 256            # threads per block: a power of two, at least 64
BLOCKS = 1024            # blocks of the timed run (each thread loops over n / (BLOCKS * THREADS))
REPEATS = 20             # timed runs (both launches), averaged
SIZES = {"cuda": 10_000_019, "cpu": 1_000_003}   # default n per target


@gpujit.jit
def block_sums(x, partials):
    buf = gpujit.shared.array(THREADS, np.float32)
    tid = gpujit.threadIdx.x
    acc = np.float32(0)
    for i in range(gpujit.grid(1), x.size, gpujit.gridsize(1)):
        acc += x[i]
    buf[tid] = acc
    gpujit.syncthreads()
    s = THREADS // 2
    while s >= 32:                        # shared memory, down to 32 values
        if tid < s:
            buf[tid] += buf[tid + s]
        gpujit.syncthreads()
        s //= 2
    if tid < 32:                          # the first warp, in registers
        v = buf[tid]
        offset = 16
        while offset > 0:
            v += gpujit.shfl_down_sync(0xffffffff, v, offset)
            offset //= 2
        if tid == 0:
            partials[gpujit.blockIdx.x] = v


def device_sum(d_x, d_partials, d_total, blocks):
    """Launches both passes: blocks partial sums into d_partials[:blocks], then d_total[0]."""
    block_sums[blocks, THREADS](d_x, d_partials)
    block_sums[1, THREADS](d_partials, d_total)


def additions(n, blocks):
    """The most float32 additions any element goes through in device_sum."""
    tree = int(math.log2(THREADS))
    per_thread = -(-n // (blocks * THREADS))
    per_thread_2 = -(-blocks // THREADS)
    return per_thread + tree + per_thread_2 + tree


def check(x, d_x, blocks, label):
    """Sums x (also on the device as d_x) with `blocks` blocks; prints the error and returns
    whether it is within the bound."""
    d_partials = gpujit.to_device(np.full(blocks, np.nan, dtype=np.float32))  # NaN: unwritten
    d_total = gpujit.to_device(np.full(1, np.nan, dtype=np.float32))
    device_sum(d_x, d_partials, d_total, blocks)
    got = float(d_total.copy_to_host()[0])
    exact = float(np.sum(x, dtype=np.float64))
    bound = additions(x.size, blocks) * 2.0 ** -24 * float(np.sum(np.abs(x), dtype=np.float64))
    ok = abs(got - exact) <= bound                 # False for NaN
    print(f"  {label}: n = {x.size}, grid = {blocks} x {THREADS}: sum {got:.9g}, "
          f"float64 {exact:.9g}, error {abs(got - exact):.3g} (bound {bound:.3g})"
          f"{'' if ok else '  FAILED'}")
    return ok


def target_description():
    """"cpu", or "cuda (<device name>)": where gpujit runs the kernels."""
    target = gpujit.current_target()
    if target == "cuda":
        return f"cuda ({gpujit.get_current_device().name})"
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, help="values to sum (default: 10,000,019 on the GPU, "
                                              "1,000,003 on the CPU)")
    parser.add_argument("--blocks", type=int, default=BLOCKS,
                        help=f"blocks of the timed run (default {BLOCKS})")
    args = parser.parse_args()
    print(f"target: {target_description()}")
    n = args.n or SIZES.get(gpujit.current_target(), SIZES["cpu"])
    blocks = args.blocks

    rng = np.random.default_rng()
    x = rng.random(n, dtype=np.float32)
    d_x = gpujit.to_device(x)
    print(f"reduction: sum of n = {n} float32, blocks of {THREADS} threads")
    ok = check(x, d_x, blocks, "grid-stride")

    # Timed: both passes, device arrays only.
    d_partials = gpujit.device_array(blocks, dtype=np.float32)
    d_total = gpujit.device_array(1, dtype=np.float32)
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        device_sum(d_x, d_partials, d_total, blocks)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS

    # One element per thread, so the last block is only partly full (with the default n,
    # no size below is a multiple of THREADS).
    for size in (1, THREADS - 1, THREADS + 1, n):
        xs = x[:size]
        ok &= check(xs, gpujit.to_device(xs), -(-size // THREADS), "one element per thread")

    print(f"  time, both launches: {ms:.4f} ms (mean of {REPEATS}), "
          f"{n * 4 / (ms * 1e-3) / 1e9:.1f} GB/s read")
    if not ok:
        print("reduction: FAILED: a sum is outside its float32 error bound", file=sys.stderr)
        return 1
    print("reduction: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
