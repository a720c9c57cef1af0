"""The Mandelbrot set: escape-time iteration counts for every pixel of an
image, computed by a kernel and checked against the same computation in
NumPy, then written to a PNG.

The kernel runs one thread per pixel on a 2-D grid and calls a device
function (`escape_time`) for the iteration.  The view window and the
iteration limit are module-level globals, frozen into the kernel when it is
compiled.  Both sides compute in float64 with the same operations in the same
order.  gpujit fuses a*b + c into one FMA by default, as CUDA compilers do,
which would round some steps differently from NumPy; the kernel asks for
contract=False (NumPy's rounding, operation by operation), so the iteration
counts are expected to be identical.  A pixel whose orbit runs along the
boundary could still flip with one differently rounded operation, so up to
MAX_MISMATCH of the pixels may differ (by default none do).  Prints the
kernel time and the mismatch count.

Usage: python mandelbrot.py [out.png]   (default: mandelbrot.png in the
system's temporary directory).  The PNG is written with Pillow; without it
the image is skipped with a message.

Runs on the GPU when one is usable, otherwise on gpujit's CPU target, and
prints which.  Exit status: 0 if the counts match NumPy, 1 on a mismatch.
"""
import os
import sys
import tempfile
import time

import numpy as np

import gpujit

WIDTH, HEIGHT = 1200, 900
VIEW = (-2.2, 1.0, -1.2, 1.2)   # x_min, x_max, y_min, y_max (frozen into the kernel)
MAX_ITER = 256                  # frozen too: changing it needs kernel.recompile()
BLOCK = (16, 16)
REPEATS = 10                    # timed launches, averaged
MAX_MISMATCH = 1e-4             # fraction of pixels allowed to differ


@gpujit.jit(device=True)
def escape_time(x0, y0):
    """Iterations before z -> z*z + c leaves the radius-2 disc (MAX_ITER if never)."""
    x = 0.0
    y = 0.0
    for n in range(MAX_ITER):
        x2 = x * x
        y2 = y * y
        if x2 + y2 > 4.0:
            return n
        y = 2.0 * x * y + y0
        x = x2 - y2 + x0
    return MAX_ITER


@gpujit.jit(contract=False)   # also for escape_time, which it calls: NumPy's rounding
def mandelbrot(counts):
    col, row = gpujit.grid(2)
    height, width = counts.shape
    if row < height and col < width:
        dx = (VIEW[1] - VIEW[0]) / width
        dy = (VIEW[3] - VIEW[2]) / height
        counts[row, col] = escape_time(VIEW[0] + col * dx, VIEW[2] + row * dy)


def mandelbrot_numpy(height, width):
    """The kernel's computation, vectorised: the same float64 operations in the
    same order, iterating only the pixels that have not escaped yet."""
    dx = (VIEW[1] - VIEW[0]) / width
    dy = (VIEW[3] - VIEW[2]) / height
    rows, cols = np.divmod(np.arange(height * width), width)
    c_re = VIEW[0] + cols * dx
    c_im = VIEW[2] + rows * dy
    counts = np.full(height * width, MAX_ITER, dtype=np.int64)
    live = np.arange(height * width)
    x = np.zeros(live.size)
    y = np.zeros(live.size)
    for n in range(MAX_ITER):
        x2 = x * x
        y2 = y * y
        escaped = x2 + y2 > 4.0
        counts[live[escaped]] = n
        keep = ~escaped
        live, x, y, x2, y2, c_re, c_im = (a[keep] for a in (live, x, y, x2, y2, c_re, c_im))
        y = 2.0 * x * y + c_im
        x = x2 - y2 + c_re
    return counts.reshape(height, width)


def colour(counts):
    """RGB image: a smooth palette over log(count); the set itself is black."""
    t = np.log1p(counts) / np.log1p(MAX_ITER)
    rgb = np.stack([9 * (1 - t) * t ** 3, 15 * (1 - t) ** 2 * t ** 2, 8.5 * (1 - t) ** 3 * t], -1)
    rgb[counts == MAX_ITER] = 0
    return (np.clip(rgb, 0, 1) * 255).astype(np.uint8)


def write_png(counts, path):
    try:
        from PIL import Image
    except ImportError:
        print("mandelbrot: Pillow is not installed, so no PNG is written "
              "(pip install pillow)")
        return
    Image.fromarray(colour(counts), "RGB").save(path)
    print(f"  image: {path}")


def main(argv):
    target = gpujit.current_target()
    if target == "cuda":
        target = f"cuda ({gpujit.get_current_device().name})"
    print(f"target: {target}")
    path = argv[1] if len(argv) > 1 else os.path.join(tempfile.gettempdir(), "mandelbrot.png")
    grid = ((WIDTH + BLOCK[0] - 1) // BLOCK[0], (HEIGHT + BLOCK[1] - 1) // BLOCK[1])

    counts = gpujit.device_array((HEIGHT, WIDTH), dtype=np.int32)
    mandelbrot[grid, BLOCK](counts)                     # warm-up (and compile)
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(REPEATS):
        mandelbrot[grid, BLOCK](counts)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / REPEATS
    got = counts.copy_to_host()

    t0 = time.perf_counter()
    expected = mandelbrot_numpy(HEIGHT, WIDTH)
    numpy_ms = (time.perf_counter() - t0) * 1e3

    mismatches = int(np.count_nonzero(got != expected))
    print(f"mandelbrot: {WIDTH} x {HEIGHT} pixels, up to {MAX_ITER} iterations, "
          f"grid = {grid[0]} x {grid[1]} blocks of {BLOCK[0]} x {BLOCK[1]}")
    print(f"  kernel time: {ms:.3f} ms (mean of {REPEATS}); NumPy: {numpy_ms:.0f} ms")
    print(f"  pixels in the set: {int(np.count_nonzero(got == MAX_ITER))}, "
          f"differing from NumPy: {mismatches}")
    write_png(got, path)
    if mismatches > MAX_MISMATCH * got.size:
        print(f"mandelbrot: FAILED: {mismatches} pixels differ from NumPy "
              f"(allowed: {MAX_MISMATCH:g} of {got.size})", file=sys.stderr)
        return 1
    print("mandelbrot: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
