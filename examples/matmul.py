"""Tiled matrix multiply C = A @ B in float32 with shared-memory tiles,
checked against NumPy's float64 product.

Each block of TILE x TILE threads computes one TILE x TILE tile of C.  It
walks along the shared dimension one tile at a time: every thread loads one
element of A and one of B into two shared arrays, the block waits at
syncthreads(), each thread adds the TILE products of its row of the A tile
and its column of the B tile, and the block waits again before the next
tiles overwrite the shared arrays.  So each element of A and B is read from
global memory once per tile instead of once per product.  The sizes are not
multiples of TILE: threads outside A or B load zeros, and threads outside C
write nothing.

The check: A and B hold values in [-1, 1); float32 accumulation of k
products (with or without fused multiply-adds) is within k * 2**-24 *
(|A| @ |B|) of the exact product, element by element, the classic bound for
a dot product of length k.  The float64 product of the float32 inputs stands
in for the exact one (its own error is ~2**29 times smaller).  Prints the
largest error relative to that bound, the kernel time (CUDA events) and the
rate in GFLOP/s.

Usage: python matmul.py [--shape N K M]   (A is N x K, B is K x M; default
1000 700 900 on the GPU, 250 170 230 on the CPU target).  Runs on the GPU
when one is usable, otherwise on gpujit's CPU target, and prints which.
Exit status: 0 if the result is within the bound, 1 otherwise.
"""
import argparse
import sys

import numpy as np

import gpujit

TILE = 16                # threads per block along x and y, and the tile's side
REPEATS = 20             # timed launches, averaged
SHAPES = {"cuda": (1000, 700, 900), "cpu": (250, 170, 230)}   # default N, K, M per target


@gpujit.jit
def matmul(a, b, c):
    a_tile = gpujit.shared.array((TILE, TILE), np.float32)
    b_tile = gpujit.shared.array((TILE, TILE), np.float32)
    tx = gpujit.threadIdx.x
    ty = gpujit.threadIdx.y
    row = gpujit.blockIdx.y * TILE + ty       # of A and C
    col = gpujit.blockIdx.x * TILE + tx       # of B and C
    n, k = a.shape
    m = b.shape[1]
    acc = np.float32(0)
    for t in range((k + TILE - 1) // TILE):
        base = t * TILE
        # Load phase: one element of each tile per thread, zero outside A or B.
        if row < n and base + tx < k:
            a_tile[ty, tx] = a[row, base + tx]
        else:
            a_tile[ty, tx] = 0
        if base + ty < k and col < m:
            b_tile[ty, tx] = b[base + ty, col]
        else:
            b_tile[ty, tx] = 0
        gpujit.syncthreads()              # both tiles complete
        for j in range(TILE):
            acc += a_tile[ty, j] * b_tile[j, tx]
        gpujit.syncthreads()              # everyone done before the next load
    if row < n and col < m:
        c[row, col] = acc


def target_description():
    """"cpu", or "cuda (<device name>)": where gpujit runs the kernels."""
    target = gpujit.current_target()
    if target == "cuda":
        return f"cuda ({gpujit.get_current_device().name})"
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3, metavar=("N", "K", "M"),
                        help="A is N x K, B is K x M (default: 1000 700 900 on the GPU, "
                             "250 170 230 on the CPU)")
    args = parser.parse_args()
    print(f"target: {target_description()}")
    n, k, m = args.shape or SHAPES.get(gpujit.current_target(), SHAPES["cpu"])

    rng = np.random.default_rng()
    a = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    grid = ((m + TILE - 1) // TILE, (n + TILE - 1) // TILE)   # x: columns of C, y: rows

    d_a = gpujit.to_device(a)
    d_b = gpujit.to_device(b)
    d_c = gpujit.to_device(np.full((n, m), np.nan, dtype=np.float32))   # NaN: never written
    matmul[grid, (TILE, TILE)](d_a, d_b, d_c)       # warm-up (and compile)
    got = d_c.copy_to_host()                        # checked from the first launch
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        matmul[grid, (TILE, TILE)](d_a, d_b, d_c)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS

    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = a64 @ b64
    bound = k * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    ratio = float(np.max(np.abs(got - expected) / bound))   # NaN if an element was not written
    rel = float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
    print(f"matmul: ({n} x {k}) @ ({k} x {m}) float32, TILE = {TILE}, "
          f"grid = {grid[0]} x {grid[1]} blocks of {TILE} x {TILE}")
    print(f"  max error / bound (k * 2**-24 * |A| @ |B|): {ratio:.3g}; "
          f"max abs error / max |C|: {rel:.3g}")
    print(f"  kernel time: {ms:.4f} ms (mean of {REPEATS}), "
          f"{2.0 * n * k * m / (ms * 1e-3) / 1e9:.1f} GFLOP/s")
    if not ratio <= 1.0:
        print("matmul: FAILED: error above the float32 accumulation bound", file=sys.stderr)
        return 1
    print("matmul: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
