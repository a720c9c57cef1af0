"""Add two vectors of 10 million float32 values on the GPU (or the CPU) and check the sum.

Runs the kernel twice: once on NumPy arrays (gpujit copies them to the device
and copies the written output back) and once on device arrays (no copies;
this launch is timed with events).  Prints the largest difference from
NumPy (float32 addition is exact to reproduce, so it must be 0), the kernel
time and the effective memory bandwidth.

Runs on the GPU when one is usable, otherwise on the CPU target (gpujit
warns once; GPUJIT_TARGET=cpu|cuda chooses explicitly), and prints which
target ran ("target: cpu" or "target: cuda (<device name>)").

Exit status: 0 if both results match NumPy, 1 on a mismatch.
"""
import sys
import warnings

import numpy as np

import gpujit

N = 10_000_000
THREADS_PER_BLOCK = 256
REPEATS = 20             # timed launches, averaged


@gpujit.jit
def vector_add(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def target_description():
    """"cpu", or "cuda (<device name>)": where gpujit runs the kernels."""
    target = gpujit.current_target()
    if target == "cuda":
        return f"cuda ({gpujit.get_current_device().name})"
    return target


def main():
    print(f"target: {target_description()}")

    rng = np.random.default_rng()
    a = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    expected = a + b
    blocks = (N + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK

    # Device arrays: the launch is asynchronous and copies nothing.  (This
    # runs first so that d_out is fresh memory, not a buffer that an earlier
    # launch already filled with the right answer.)
    d_a = gpujit.to_device(a)
    d_b = gpujit.to_device(b)
    d_out = gpujit.device_array(N, dtype=np.float32)
    vector_add[blocks, THREADS_PER_BLOCK](d_a, d_b, d_out)     # warm-up (and compile)
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        vector_add[blocks, THREADS_PER_BLOCK](d_a, d_b, d_out)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS
    device_error = np.max(np.abs(d_out.copy_to_host() - expected))

    # NumPy arrays: a, b and out are copied in; only out (written) comes back.
    # On a GPU gpujit warns once that this copying launch is slow
    # (GpujitPerformanceWarning); here it is the point, so the warning is off.
    out = np.full(N, np.nan, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpujit.GpujitPerformanceWarning)
        vector_add[blocks, THREADS_PER_BLOCK](a, b, out)
    host_error = np.max(np.abs(out - expected))   # NaN if an element was not written

    moved = 3 * N * np.dtype(np.float32).itemsize   # read a and b, write out
    print(f"vector_add: n = {N}, grid = {blocks} x {THREADS_PER_BLOCK}")
    print(f"  max abs error, NumPy arrays:  {host_error}")
    print(f"  max abs error, device arrays: {device_error}")
    print(f"  kernel time: {ms:.4f} ms (mean of {REPEATS}), "
          f"effective bandwidth: {moved / (ms * 1e-3) / 1e9:.1f} GB/s")

    if not (host_error == 0 and device_error == 0):
        print("vector_add: FAILED: result differs from NumPy", file=sys.stderr)
        return 1
    print("vector_add: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
