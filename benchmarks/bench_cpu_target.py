"""Vector add on the host CPU: gpujit's CPU target against numba's CUDA simulator.

Both run the same numba-style kernel (c[i] = a[i] + b[i], float32) without a
GPU: gpujit compiles it for the host with LLVM's JIT and runs the grid on a
pool of worker threads; numba's simulator (NUMBA_ENABLE_CUDASIM=1) runs every
CUDA thread as a Python thread interpreting the kernel.  The simulator is
very slow, so it runs a smaller n; times are compared per element.  Each
measurement is the median of several calls on device arrays (no copies),
after a warm-up call that compiles; results are checked against NumPy.

    python -P benchmarks/bench_cpu_target.py [--n N] [--sim-n M] [--repeats R]

Needs numba (or numba-cuda) for the simulator column; without it only
gpujit's numbers are printed.  The goal is a ratio of at least 100.
"""
import argparse
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"   # before numba is imported
os.environ.setdefault("GPUJIT_TARGET", "cpu")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

if not hasattr(np, "row_stack"):   # numba's simulator still names it; NumPy 2.5 dropped it
    np.row_stack = np.vstack

import gpujit  # noqa: E402

THREADS_PER_BLOCK = 256


cuda = None   # numba.cuda once imported: the simulator patches the kernel's globals


def vector_add_gpujit(a, b, c):
    i = gpujit.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def vector_add_numba(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def run(api, body, n, repeats, rng):
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    kernel = api.jit(body)
    d_a, d_b = api.to_device(a), api.to_device(b)
    d_c = api.device_array(n, dtype=np.float32)
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK

    def call():
        kernel[blocks, THREADS_PER_BLOCK](d_a, d_b, d_c)
        api.synchronize()

    call()   # warm-up: compiles
    seconds = _common.median_seconds(call, repeats)
    error = float(np.max(np.abs(d_c.copy_to_host() - (a + b))))
    return seconds, error


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="elements for gpujit")
    parser.add_argument("--sim-n", type=int, default=20_000, help="elements for the simulator")
    parser.add_argument("--repeats", type=int, default=10, help="timed gpujit calls")
    parser.add_argument("--sim-repeats", type=int, default=3, help="timed simulator calls")
    args = parser.parse_args()
    rng = np.random.default_rng()

    if gpujit.current_target() != "cpu":
        print("bench_cpu_target: set GPUJIT_TARGET=cpu (this compares CPU targets)",
              file=sys.stderr)
        return 2
    global cuda
    rows = [("gpujit (cpu target)", args.n,
             *run(gpujit, vector_add_gpujit, args.n, args.repeats, rng))]
    try:
        from numba import cuda
        rows.append(("numba CUDA simulator", args.sim_n,
                     *run(cuda, vector_add_numba, args.sim_n, args.sim_repeats, rng)))
    except ImportError as exc:
        print(f"numba simulator: skipped ({exc})")

    print(f"vector add, float32, {THREADS_PER_BLOCK} threads per block, median time per call; "
          f"gpujit's code for {_common.cpu_code_text(gpujit)}")
    print(f"{'':22} {'n':>11} {'ms per call':>12} {'ns per element':>15} {'max err':>8}"
          f" {'ratio':>10}")
    ns0 = rows[0][2] / rows[0][1] * 1e9
    for name, n, seconds, error in rows:
        ns = seconds / n * 1e9
        print(f"{name:22} {n:11d} {seconds * 1e3:12.3f} {ns:15.3f} {error:8.2g}"
              f" {ns / ns0:10.1f}")
    if len(rows) > 1:
        ratio = (rows[1][2] / rows[1][1]) / (rows[0][2] / rows[0][1])
        print(f"gpujit's CPU target is {ratio:.0f}x faster per element than numba's simulator "
              f"(goal: >= 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
