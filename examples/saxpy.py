"""SAXPY (out = a * x + y) on 10 million float32 values, checked against NumPy.

Runs the kernel on NumPy arrays (copied to the device and back by gpujit) and on
device arrays (timed with events).  gpujit fuses the multiply and add into
one FMA by default (one rounding instead of NumPy's two; on the CPU target
where the host has FMA), so results can differ from NumPy's in the last bit
(by one ulp at most, all values being positive): the check allows a
relative error of 1e-6.
Prints that error, the kernel time and the effective memory bandwidth.

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
TOLERANCE = 1e-6         # max relative error


@gpujit.jit
def saxpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def max_relative_error(got, expected):
    got = got.astype(np.float64)
    expected = expected.astype(np.float64)
    scale = np.maximum(np.abs(expected), np.finfo(np.float32).tiny)
    return float(np.max(np.abs(got - expected) / scale))   # NaN if an element was not written


def target_description():
    """"cpu", or "cuda (<device name>)": where gpujit runs the kernels."""
    target = gpujit.current_target()
    if target == "cuda":
        return f"cuda ({gpujit.get_current_device().name})"
    return target


def main():
    print(f"target: {target_description()}")

    rng = np.random.default_rng()
    a = np.float32(rng.uniform(0.5, 4.0))   # a NumPy scalar keeps its dtype: float32
    x = rng.random(N, dtype=np.float32)
    y = rng.random(N, dtype=np.float32)
    expected = a * x + y                     # float32, as the kernel computes it
    blocks = (N + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK

    # Device arrays: asynchronous, no copies.  (First, so that d_out is fresh
    # memory rather than a buffer an earlier launch filled with the answer.)
    d_x = gpujit.to_device(x)
    d_y = gpujit.to_device(y)
    d_out = gpujit.device_array(N, dtype=np.float32)
    saxpy[blocks, THREADS_PER_BLOCK](a, d_x, d_y, d_out)       # warm-up (and compile)
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        saxpy[blocks, THREADS_PER_BLOCK](a, d_x, d_y, d_out)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS
    device_error = max_relative_error(d_out.copy_to_host(), expected)

    # NumPy arrays: x, y and out are copied in; only out (written) comes back.
    # On a GPU gpujit warns once that this copying launch is slow
    # (GpujitPerformanceWarning); here it is the point, so the warning is off.
    out = np.full(N, np.nan, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpujit.GpujitPerformanceWarning)
        saxpy[blocks, THREADS_PER_BLOCK](a, x, y, out)
    host_error = max_relative_error(out, expected)

    moved = 3 * N * np.dtype(np.float32).itemsize   # read x and y, write out
    print(f"saxpy: n = {N}, a = {a}, grid = {blocks} x {THREADS_PER_BLOCK}")
    print(f"  max relative error, NumPy arrays:  {host_error:.3g}")
    print(f"  max relative error, device arrays: {device_error:.3g}")
    print(f"  kernel time: {ms:.4f} ms (mean of {REPEATS}), "
          f"effective bandwidth: {moved / (ms * 1e-3) / 1e9:.1f} GB/s")

    if not (host_error <= TOLERANCE and device_error <= TOLERANCE):
        print(f"saxpy: FAILED: relative error above {TOLERANCE:g}", file=sys.stderr)
        return 1
    print("saxpy: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
