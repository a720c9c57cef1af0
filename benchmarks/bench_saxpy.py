"""Launch overhead and SAXPY bandwidth: gpujit against numba-cuda and CuPy.

Runs in one process, on one GPU, each framework on the same inputs:

* launch: host time per launch of a one-thread kernel on a device array,
  over many back-to-back launches (what a small kernel costs from Python);
* saxpy: kernel time of out = a * x + y on n float32 values, device arrays,
  measured with CUDA events after a warm-up launch, as effective bandwidth.

Frameworks that cannot be imported are skipped.  Ratios are other / gpujit
(above 1: gpujit is faster).  Loading numba's llvmlite next to gpujit also
checks that the two LLVM copies stay apart.

    python -P benchmarks/bench_saxpy.py [--n N] [--launches L]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

import gpujit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # see _common.py
from _common import import_numba_cuda  # noqa: E402

THREADS_PER_BLOCK = 256
REPEATS = 20   # timed SAXPY launches, averaged


def gpujit_runner():
    @gpujit.jit
    def saxpy(a, x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @gpujit.jit
    def bump(v):
        i = gpujit.grid(1)
        if i < v.size:
            v[i] = v[i] + 1

    return dict(to_device=gpujit.to_device, saxpy=saxpy, bump=bump, event=gpujit.event,
                elapsed=lambda s, e: s.elapsed_time(e), synchronize=gpujit.synchronize,
                to_host=lambda d: d.copy_to_host())


def numba_runner():
    cuda = import_numba_cuda()

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def bump(v):
        i = cuda.grid(1)
        if i < v.size:
            v[i] = v[i] + 1

    return dict(to_device=cuda.to_device, saxpy=saxpy, bump=bump, event=cuda.event,
                elapsed=cuda.event_elapsed_time, synchronize=cuda.synchronize,
                to_host=lambda d: d.copy_to_host())


def cupy_runner():
    import cupy as cp

    saxpy_k = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out",
                                   "out = a * x + y", "gj_bench_saxpy")
    bump_k = cp.RawKernel(r'''
    extern "C" __global__ void bump(float *v, long long n) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (i < n) v[i] = v[i] + 1.0f;
    }''', "bump")

    class Launch:   # kernel[grid, block](args) like the other two
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, config):
            return lambda *args: self.fn(*args)

    def saxpy(a, x, y, out):
        saxpy_k(a, x, y, out)

    def bump(v):
        bump_k((1,), (32,), (v, np.int64(v.size)))

    def elapsed(s, e):
        return cp.cuda.get_elapsed_time(s, e)

    return dict(to_device=cp.asarray, saxpy=Launch(saxpy), bump=Launch(bump),
                event=cp.cuda.Event, elapsed=elapsed,
                synchronize=cp.cuda.Device().synchronize, to_host=cp.asnumpy)


def measure(fw, n, launches, a, x, y, expected):
    d_x, d_y = fw["to_device"](x), fw["to_device"](y)
    d_out = fw["to_device"](np.zeros(n, np.float32))
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    fw["saxpy"][blocks, THREADS_PER_BLOCK](a, d_x, d_y, d_out)          # warm-up, compile
    fw["synchronize"]()
    start, end = fw["event"](), fw["event"]()
    start.record()
    for _ in range(REPEATS):
        fw["saxpy"][blocks, THREADS_PER_BLOCK](a, d_x, d_y, d_out)
    end.record()
    end.synchronize()
    ms = fw["elapsed"](start, end) / REPEATS
    got = fw["to_host"](d_out)
    error = float(np.max(np.abs(got.astype(np.float64) - expected) / np.abs(expected)))

    v = fw["to_device"](np.zeros(1, np.float32))
    fw["bump"][1, 32](v)                                                # warm-up, compile
    fw["synchronize"]()
    t0 = time.perf_counter()
    for _ in range(launches):
        fw["bump"][1, 32](v)
    fw["synchronize"]()
    launch_us = (time.perf_counter() - t0) / launches * 1e6
    return ms, error, launch_us


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="SAXPY elements")
    parser.add_argument("--launches", type=int, default=20_000, help="timed small launches")
    args = parser.parse_args()
    if not gpujit.is_available():
        print("bench_saxpy: no CUDA GPU is available here", file=sys.stderr)
        return 2

    # numba warns that a one-block launch under-uses the GPU: that is the point here.
    warnings.filterwarnings("ignore", message=".*under-utilization")
    rng = np.random.default_rng()
    a = np.float32(rng.uniform(0.5, 4.0))
    x = rng.random(args.n, dtype=np.float32)
    y = rng.random(args.n, dtype=np.float32)
    expected = a.astype(np.float64) * x + y
    moved = 3 * args.n * 4

    results = {}
    for name, make in (("gpujit", gpujit_runner), ("numba-cuda", numba_runner),
                       ("cupy", cupy_runner)):
        try:
            fw = make()
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        try:
            results[name] = measure(fw, args.n, args.launches, a, x, y, expected)
        except Exception as exc:   # another framework's failure must not hide gpujit's numbers
            if name == "gpujit":
                raise
            print(f"{name}: failed ({type(exc).__name__}: {exc})")

    ms0, _, us0 = results["gpujit"]
    print(f"saxpy n = {args.n} float32 (mean of {REPEATS} launches); "
          f"small-kernel launch: mean of {args.launches}")
    print(f"{'':12} {'kernel ms':>10} {'GB/s':>8} {'rel err':>9} {'launch us':>10}"
          f" {'kernel ratio':>13} {'launch ratio':>13}")
    for name, (ms, error, us) in results.items():
        print(f"{name:12} {ms:10.4f} {moved / (ms * 1e-3) / 1e9:8.1f} {error:9.2g} {us:10.2f}"
              f" {ms / ms0:13.2f} {us / us0:13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
