"""The CPU target against the host's other ways to run these kernels.

Runs the kernels of _kernels.py (vector add, SAXPY, 5-point stencil,
Black-Scholes, Mandelbrot, and block_sums: a shared-memory reduction with
barriers and shuffles) on gpujit's CPU target, beside NumPy (one thread,
whole-array operations) and NVIDIA Warp's CPU device when `warp-lang` is
installed, in one process.  Each figure is the median wall time of several
calls on arrays already in place (gpujit: device arrays, which are host
memory on the CPU target; Warp: arrays on its "cpu" device), after a
warm-up call that compiles; the three take turns, so that other work on the
host weighs on all alike.  Outputs start poisoned (NaN, -1), and every
result is checked against NumPy's.  Also
printed: the host's copy bandwidth (NumPy copying a 256 MiB array: bytes
read + written per second), the bandwidth each memory-bound kernel reaches,
and the cost of launching a tiny kernel (one block, and eight) on the CPU
target, and what each of the CPU target's two tiers costs: a small vector
add's first call (its compile) and a vector add's time per thread.  The
second line says what the code is for: the instruction set (avx512, avx2,
avx, sse), the vector width and the LLVM CPU name, the host's unless
GPUJIT_CPU_NAME or GPUJIT_CPU_FEATURES chose another (docs/language.md).

    python -P benchmarks/bench_cpu_host.py [--quick] [--repeats R] [--only NAMES]
    GPUJIT_CPU_NAME=haswell python -P benchmarks/bench_cpu_host.py   # as on an AVX2 host

Ratios are NumPy's time / the other's (higher is faster than NumPy) and
Warp's time / gpujit's (above 1: gpujit is ahead).
"""
import argparse
import math
import os
import sys
import time

os.environ["GPUJIT_TARGET"] = "cpu"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import _common  # noqa: E402
import _kernels  # noqa: E402
import gpujit  # noqa: E402

BLOCK = 256          # threads per block of the 1-D kernels
TILE2 = (16, 16)     # threads per block of the 2-D kernels (x, y)


def median_seconds(call, repeats):
    call()   # warm-up: compiles
    return _common.median_seconds(call, repeats)


# ---- the problems: inputs, NumPy's answer, gpujit's launch --------------------------

class Problem:
    """One kernel's inputs (host arrays), its NumPy version, the bytes it
    must move (0: compute-bound) and how to launch it on gpujit."""

    def __init__(self, name, size, bytes_moved, tolerance):
        self.name, self.size, self.bytes_moved, self.tolerance = name, size, bytes_moved, tolerance


def vector_add(n, rng):
    p = Problem("vector add", f"{n:,} float32", 12 * n, 0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full_like(a, np.nan)
    p.inputs, p.out_index = (a, b, out), 2
    p.numpy = lambda: np.add(a, b, out=out)
    p.grid, p.block = (n + BLOCK - 1) // BLOCK, BLOCK
    return p


def saxpy(n, rng):
    p = Problem("SAXPY", f"{n:,} float32", 12 * n, 1e-6)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a, out, tmp = np.float32(2.5), np.full_like(x, np.nan), np.empty_like(x)

    def numpy():
        np.multiply(a, x, out=tmp)
        np.add(tmp, y, out=out)
    p.inputs, p.out_index, p.numpy = (a, x, y, out), 3, numpy
    p.grid, p.block = (n + BLOCK - 1) // BLOCK, BLOCK
    return p


def stencil(side, rng):
    p = Problem("5-point stencil", f"{side}x{side} float32", 8 * side * side, 1e-5)
    a = rng.random((side, side), dtype=np.float32)
    out = np.full_like(a, np.nan)
    out[0], out[-1], out[:, 0], out[:, -1] = 0, 0, 0, 0   # the kernel writes the inside
    c, d = np.float32(0.2), np.float32(0.1)
    tmp = np.empty((side - 2, side - 2), np.float32)

    def numpy():
        np.add(a[:-2, 1:-1], a[2:, 1:-1], out=tmp)
        tmp.__iadd__(a[1:-1, :-2])
        tmp.__iadd__(a[1:-1, 2:])
        tmp.__imul__(c)
        out[1:-1, 1:-1] = tmp + d * a[1:-1, 1:-1]
    p.inputs, p.out_index, p.numpy = (a, out, c, d), 1, numpy
    p.grid = ((side + TILE2[0] - 1) // TILE2[0], (side + TILE2[1] - 1) // TILE2[1])
    p.block = TILE2
    return p


def black_scholes(n, rng):
    p = Problem("Black-Scholes", f"{n:,} options", 20 * n, 2e-4)
    s = rng.uniform(5, 30, n).astype(np.float32)
    x = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    r, v = np.float32(0.02), np.float32(0.30)
    call, put = np.full_like(s, np.nan), np.full_like(s, np.nan)

    def cnd(d):
        k = 1 / (1 + _kernels.CND_P * np.abs(d))
        c = _kernels.RSQRT2PI * np.exp(np.float32(-0.5) * d * d) * (
            k * (_kernels.CND_A1 + k * (_kernels.CND_A2 + k * (
                _kernels.CND_A3 + k * (_kernels.CND_A4 + k * _kernels.CND_A5)))))
        return np.where(d > 0, 1 - c, c)

    def numpy():
        sqrt_t = np.sqrt(t)
        d1 = (np.log(s / x) + (r + np.float32(0.5) * v * v) * t) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cnd1, cnd2 = cnd(d1), cnd(d2)
        exp_rt = np.exp(-r * t)
        call[:] = s * cnd1 - x * exp_rt * cnd2
        put[:] = x * exp_rt * (1 - cnd2) - s * (1 - cnd1)
    p.inputs, p.out_index, p.numpy = (call, put, s, x, t, r, v), 0, numpy
    p.grid, p.block = (n + BLOCK - 1) // BLOCK, BLOCK
    return p


def mandelbrot(side, rng):
    del rng
    p = Problem("Mandelbrot", f"{side}x{side}, {_kernels.MAX_ITER} iter", 0, 0)
    counts = np.full((side, side), -1, np.int64)
    x0, y0 = np.float32(-2.0), np.float32(-1.25)
    dx, dy = np.float32(2.5 / side), np.float32(2.5 / side)
    cx = (x0 + np.arange(side, dtype=np.float32) * dx)[None, :].repeat(side, 0)
    cy = (y0 + np.arange(side, dtype=np.float32) * dy)[:, None].repeat(side, 1)

    def numpy():   # the same float32 recurrence, on the points still iterating
        x, y = np.zeros_like(cx), np.zeros_like(cy)
        n = np.zeros((side, side), np.int64)
        live = np.ones((side, side), bool)
        for _ in range(_kernels.MAX_ITER):
            x2, y2 = x * x, y * y
            live &= ~(x2 + y2 > 4)
            if not live.any():
                break
            y = np.where(live, np.float32(2) * x * y + cy, y)
            x = np.where(live, x2 - y2 + cx, x)
            n += live
        counts[:] = n
    p.inputs, p.out_index, p.numpy = (counts, x0, y0, dx, dy), 0, numpy
    p.grid = ((side + TILE2[0] - 1) // TILE2[0], (side + TILE2[1] - 1) // TILE2[1])
    p.block = TILE2
    p.mismatch_allowed = 1e-2   # FMA contraction moves a few points near the border
    return p


def block_sums(n, rng):
    p = Problem("block sums (barriers)", f"{n:,} float32", 4 * n, 0)
    x = rng.random(n, dtype=np.float32)
    blocks = 256
    partials = np.full(blocks, np.nan, np.float32)
    total = np.zeros(1, np.float64)
    p.inputs, p.out_index = (x, partials), 1
    p.numpy = lambda: total.__setitem__(0, x.sum(dtype=np.float64))
    p.grid, p.block = blocks, _kernels.THREADS
    p.check = lambda got: abs(float(got.sum(dtype=np.float64)) - float(total[0])) \
        <= 1e-5 * float(total[0])
    return p


PROBLEMS = {
    "vector_add": (vector_add, 10_000_000, 1_000_000),
    "saxpy": (saxpy, 10_000_000, 1_000_000),
    "stencil": (stencil, 4096, 512),
    "black_scholes": (black_scholes, 4_000_000, 400_000),
    "mandelbrot": (mandelbrot, 1024, 256),
    "block_sums": (block_sums, 1 << 24, 1 << 20),
}


def with_output(p, initial):
    """p's arguments, the output replaced by `initial` (its poisoned state)."""
    return [initial.copy() if k == p.out_index else a for k, a in enumerate(p.inputs)]


def gpujit_call(kernels, name, p, initial):
    """The launch to time (on device arrays) and a function reading its output."""
    args = [gpujit.to_device(a) if isinstance(a, np.ndarray) else a
            for a in with_output(p, initial)]
    kernel = kernels[name][p.grid, p.block]

    def call():
        kernel(*args)
        gpujit.synchronize()
    return call, args[p.out_index].copy_to_host


def take_turns(calls, repeats):
    """{name: median seconds} of calls {name: (call, runs)}, after one
    warm-up call each (which compiles): the calls take turns, one of each
    per round while it has runs left, so that a drift of the machine (other
    processes on a shared host) weighs on all alike."""
    times = {name: [] for name in calls}
    for call, _ in calls.values():
        call()
    for round_ in range(repeats):
        for name, (call, runs) in calls.items():
            if round_ < runs:
                t0 = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(kept)) for name, kept in times.items()}


def agrees(p, got, want):
    check = getattr(p, "check", None)
    if check:
        return check(got)
    if p.tolerance == 0 and not hasattr(p, "mismatch_allowed"):
        return np.array_equal(got, want)
    if hasattr(p, "mismatch_allowed"):
        return np.mean(got != want) <= p.mismatch_allowed
    return np.allclose(got, want, rtol=p.tolerance, atol=p.tolerance)


# ---- NVIDIA Warp's CPU device -------------------------------------------------------

def warp_kernels(wp):
    """The kernels in Warp's language, as _kernels.py writes them."""
    max_iter = _kernels.MAX_ITER

    @wp.kernel
    def vector_add(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32),
                   out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = a[i] + b[i]

    @wp.kernel
    def saxpy(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
              out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = a * x[i] + y[i]

    @wp.kernel
    def stencil(a: wp.array2d(dtype=wp.float32), out: wp.array2d(dtype=wp.float32),
                c: wp.float32, d: wp.float32):
        i, j = wp.tid()
        n = a.shape[0]
        m = a.shape[1]
        if i > 0 and i < n - 1 and j > 0 and j < m - 1:
            out[i, j] = c * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) \
                + d * a[i, j]

    @wp.func
    def cnd(d: wp.float32):
        k = 1.0 / (1.0 + 0.2316419 * wp.abs(d))
        c = 0.39894228040143267793994605993438 * wp.exp(-0.5 * d * d) * (
            k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (
                -1.821255978 + k * 1.330274429)))))
        if d > 0.0:
            c = 1.0 - c
        return c

    @wp.kernel
    def black_scholes(call: wp.array(dtype=wp.float32), put: wp.array(dtype=wp.float32),
                      s: wp.array(dtype=wp.float32), x: wp.array(dtype=wp.float32),
                      t: wp.array(dtype=wp.float32), r: wp.float32, v: wp.float32):
        i = wp.tid()
        sqrt_t = wp.sqrt(t[i])
        d1 = (wp.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cnd1 = cnd(d1)
        cnd2 = cnd(d2)
        exp_rt = wp.exp(-r * t[i])
        call[i] = s[i] * cnd1 - x[i] * exp_rt * cnd2
        put[i] = x[i] * exp_rt * (1.0 - cnd2) - s[i] * (1.0 - cnd1)

    @wp.kernel
    def mandelbrot(counts: wp.array2d(dtype=wp.int64), x0: wp.float32, y0: wp.float32,
                   dx: wp.float32, dy: wp.float32):
        row, col = wp.tid()
        cx = x0 + wp.float32(col) * dx
        cy = y0 + wp.float32(row) * dy
        x = wp.float32(0.0)
        y = wp.float32(0.0)
        n = int(0)
        while n < max_iter:
            x2 = x * x
            y2 = y * y
            if x2 + y2 > 4.0:
                break
            y = 2.0 * x * y + cy
            x = x2 - y2 + cx
            n += 1
        counts[row, col] = wp.int64(n)

    @wp.kernel
    def block_sums(x: wp.array(dtype=wp.float32), partials: wp.array(dtype=wp.float32)):
        # one thread per block's share: Warp's CPU device has no block-wide
        # shared memory or barrier, so each of `blocks` threads sums a strided
        # share, as block_total's threads do before their tree
        b = wp.tid()
        stride = partials.shape[0]
        acc = float(0.0)
        i = b
        while i < x.shape[0]:
            acc += x[i]
            i += stride
        partials[b] = acc

    return {"vector_add": vector_add, "saxpy": saxpy, "stencil": stencil,
            "black_scholes": black_scholes, "mandelbrot": mandelbrot, "block_sums": block_sums}


def warp_call(wp, kernels, name, p, initial):
    """The launch on Warp's CPU device and a function reading its output."""
    arrays = [wp.array(a, device="cpu") if isinstance(a, np.ndarray) else a
              for a in with_output(p, initial)]
    shape = p.inputs[p.out_index].shape
    if name == "block_sums":
        dim = p.inputs[1].shape[0]
    elif len(shape) == 2:
        dim = shape
    else:
        dim = shape[0]

    def call():
        wp.launch(kernels[name], dim=dim, inputs=arrays, device="cpu")
        wp.synchronize_device("cpu")
    return call, arrays[p.out_index].numpy


def load_warp():
    try:
        import warp as wp
        wp.config.quiet = True
        wp.init()
        return wp, warp_kernels(wp), None
    except Exception as exc:   # not installed, or failing: the column says why
        return None, None, _common.not_available(exc)


# ---- the host and the launch -------------------------------------------------------

def host_bandwidth(repeats):
    """GB/s of NumPy copying 256 MiB (bytes read + bytes written)."""
    src = np.ones(1 << 26, np.float32)
    dst = np.empty_like(src)
    seconds = median_seconds(lambda: np.copyto(dst, src), repeats)
    return 2 * src.nbytes / seconds / 1e9


def tiny_launch_us(launches, blocks):
    """Microseconds per launch of `out[0] = x` in `blocks` blocks of 32
    threads on a device array: the fastest of 20 bursts of `launches` // 20,
    each followed by a synchronize, as bench_speed's launch section times
    it.  More than one block wakes the pool's helper threads."""
    kernel = _common.jit_kernels(gpujit, ["store"])["store"][blocks, 32]
    out = gpujit.to_device(np.zeros(1, np.float32))
    x = np.float32(3)
    burst = max(1, launches // 20)
    kernel(out, x)
    best = math.inf
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(burst):
            kernel(out, x)
        gpujit.synchronize()
        best = min(best, (time.perf_counter() - t0) / burst)
    assert out.copy_to_host()[0] == 3
    return best * 1e6


def tiers(repeats, kernels=7):
    """The CPU target's two tiers (docs/internals/cpu-target.md, "How a block runs"):
    {tier: (ms, ns)}, the median first call (compile included) of `kernels`
    new vector-add kernels launched with 64 threads, and the nanoseconds per
    thread of a vector add of 2^22 float32, for code of one thread per call
    and for thread loops (GPUJIT_CPU_LOOP_THREADS set to keep each)."""
    n = 1 << 22
    a, b = (gpujit.to_device(np.full(n, v, np.float32)) for v in (1, 2))
    out = gpujit.device_array(n, np.float32)
    small = [np.ones(64, np.float32), np.ones(64, np.float32), np.empty(64, np.float32)]
    before = os.environ.get("GPUJIT_CPU_LOOP_THREADS")
    result = {}
    try:
        for tier, limit in (("one thread per call", 1 << 63), ("thread loops", 0)):
            os.environ["GPUJIT_CPU_LOOP_THREADS"] = str(limit)
            firsts = []
            for _ in range(kernels):
                kernel = _common.jit_kernels(gpujit, ["vector_add"], cache=False)["vector_add"]
                t0 = time.perf_counter()
                kernel[1, 64](*small)
                firsts.append(time.perf_counter() - t0)
            launch = kernel[n // 256, 256]
            per_thread = median_seconds(lambda: launch(a, b, out), repeats) / n
            assert (out.copy_to_host() == 3).all()
            result[tier] = (sorted(firsts)[kernels // 2] * 1e3, per_thread * 1e9)
    finally:
        if before is None:
            os.environ.pop("GPUJIT_CPU_LOOP_THREADS", None)
        else:
            os.environ["GPUJIT_CPU_LOOP_THREADS"] = before
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 repeats")
    parser.add_argument("--repeats", type=int, default=11, help="timed calls per figure")
    parser.add_argument("--only", default="", help="comma-separated problem names")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    rng = np.random.default_rng(1)
    names = [n for n in PROBLEMS if not args.only or n in args.only.split(",")]
    kernels = _common.jit_kernels(gpujit, names)
    wp, wkernels, warp_missing = load_warp()

    print(f"gpujit CPU target, {gpujit.__version__}: {os.cpu_count()} cores, "
          f"host copy bandwidth {host_bandwidth(repeats):.1f} GB/s")
    print(f"code for: {_common.cpu_code_text(gpujit)}")
    print(f"launch of out[0] = x, 32 threads per block: 1 block {tiny_launch_us(20000, 1):.2f}"
          f" us, 8 blocks {tiny_launch_us(20000, 8):.2f} us")
    for tier, (ms, ns) in tiers(repeats).items():
        print(f"vector add as {tier}: first call {ms:.1f} ms (a new kernel, 64 threads), "
              f"{ns:.2f} ns per thread (2^22 threads)")
    if warp_missing:
        print(f"Warp: {warp_missing}")
    print(f"{'kernel':24} {'size':22} {'NumPy ms':>9} {'gpujit ms':>10} {'Warp ms':>9}"
          f" {'NumPy/gpujit':>13} {'Warp/gpujit':>12} {'gpujit GB/s':>12}")
    status = 0
    for name in names:
        make, size, quick_size = PROBLEMS[name]
        p = make(quick_size if args.quick else size, rng)
        initial = p.inputs[p.out_index].copy()   # poisoned: NaN, -1
        p.numpy()
        want = p.inputs[p.out_index].copy()
        # NumPy's Mandelbrot iterates every live point in Python-level steps:
        # slow, so fewer runs
        calls = {"numpy": (p.numpy, max(1, repeats // 4) if name == "mandelbrot" else repeats)}
        gj_call, read_gj = gpujit_call(kernels, name, p, initial)
        calls["gpujit"] = (gj_call, repeats)
        warp_cell, ratio_warp, read_wp = "n/a", "", None
        if wp is not None:
            try:
                wp_call, read_wp = warp_call(wp, wkernels, name, p, initial)
                calls["warp"] = (wp_call, repeats)
            except Exception as exc:
                warp_cell = _common.not_available(exc)
        t = take_turns(calls, repeats)
        t_numpy, t_gj = t["numpy"], t["gpujit"]
        got = read_gj()
        ok = agrees(p, got, want)
        if read_wp:
            t_wp, got_wp = t["warp"], read_wp()
            warp_ok = agrees(p, got_wp, want) or name == "block_sums" and np.isclose(
                got_wp.sum(dtype=np.float64), got.sum(dtype=np.float64), rtol=1e-5)
            warp_cell = f"{t_wp * 1e3:9.2f}" + ("" if warp_ok else " WRONG")
            ratio_warp = f"{t_wp / t_gj:12.2f}"
        gbs = f"{p.bytes_moved / t_gj / 1e9:12.1f}" if p.bytes_moved else ""
        print(f"{p.name:24} {p.size:22} {t_numpy * 1e3:9.2f} {t_gj * 1e3:10.2f}"
              f"{'' if ok else ' WRONG'} {warp_cell:>9} {t_numpy / t_gj:13.2f}"
              f" {ratio_warp:>12} {gbs}")
        status |= not ok
    return status


if __name__ == "__main__":
    sys.exit(main())
