"""2-D heat equation: an explicit 5-point stencil on a square plate, checked
against the same computation in NumPy.

Each time step replaces every interior cell by

    u + alpha * (north + south + west + east - 4 u)

while the boundary cells stay at their fixed temperatures (a hot top edge,
the other edges cold).  The plate lives in two device arrays that swap roles
after each step, so nothing is copied between steps.  The kernel reads the
three rows around a cell through row views (u[i - 1], u[i], u[i + 1]).

NumPy does the same float64 arithmetic in the same order; gpujit fuses a
multiply and an add into one FMA by default (one rounding instead of two),
so the check allows a small absolute error.  Prints that error and the kernel time per step
(CUDA events).

Usage: python heat.py [--size N] [--steps S]
Runs on the GPU when one is usable, otherwise on gpujit's CPU target, and
prints which.  Exit status: 0 if the result matches NumPy, 1 on a mismatch.
"""
import argparse
import sys

import numpy as np

import gpujit

ALPHA = 0.2              # diffusion number; explicit scheme is stable for <= 0.25
BLOCK = (32, 8)          # threads per block: x along a row (coalesced), y across rows
TOLERANCE = 1e-9         # max absolute error, temperatures are in [0, 100]


@gpujit.jit
def heat_step(u, out, alpha):
    j, i = gpujit.grid(2)                 # x: column, y: row
    n, m = u.shape
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]           # boundaries are fixed
        else:
            north = u[i - 1]              # row views: no copies
            row = u[i]
            south = u[i + 1]
            c = row[j]
            out[i, j] = c + alpha * (north[j] + south[j] + row[j - 1] + row[j + 1] - 4.0 * c)


def heat_numpy(u, steps, alpha):
    u = u.copy()
    v = u.copy()
    for _ in range(steps):
        c = u[1:-1, 1:-1]
        v[1:-1, 1:-1] = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                     - 4.0 * c)
        u, v = v, u
    return u


def initial_plate(n, rng):
    u = rng.uniform(0.0, 50.0, (n, n))
    u[0, :] = 100.0                       # hot top edge
    u[-1, :] = u[:, 0] = u[:, -1] = 0.0   # cold other edges
    return u


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="cells per side (default 1024)")
    parser.add_argument("--steps", type=int, default=200, help="time steps (default 200)")
    args = parser.parse_args()
    target = gpujit.current_target()
    if target == "cuda":
        target = f"cuda ({gpujit.get_current_device().name})"
    print(f"target: {target}")

    n, steps = args.size, args.steps
    u0 = initial_plate(n, np.random.default_rng())
    grid = ((n + BLOCK[0] - 1) // BLOCK[0], (n + BLOCK[1] - 1) // BLOCK[1])

    d_u = gpujit.to_device(u0)
    d_v = gpujit.device_array_like(u0)
    heat_step[grid, BLOCK](d_u, d_v, ALPHA)          # warm-up (and compile); d_v is scratch
    start, end = gpujit.event(), gpujit.event()
    start.record()
    for _ in range(steps):
        heat_step[grid, BLOCK](d_u, d_v, ALPHA)
        d_u, d_v = d_v, d_u                           # the new plate is the next input
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    got = d_u.copy_to_host()

    expected = heat_numpy(u0, steps, ALPHA)
    error = float(np.max(np.abs(got - expected)))    # NaN if a cell was never written
    print(f"heat: {n} x {n} plate, {steps} steps, alpha = {ALPHA}, grid = {grid} x {BLOCK}")
    print(f"  max abs error vs NumPy: {error:.3g}")
    print(f"  kernel time: {ms:.3f} ms total, {ms / steps * 1e3:.1f} us per step, "
          f"{n * n * steps / (ms * 1e-3) / 1e9:.2f} G cell updates/s")
    print(f"  centre temperature: {got[n // 2, n // 2]:.4f}")
    if not error <= TOLERANCE:
        print(f"heat: FAILED: error above {TOLERANCE:g}", file=sys.stderr)
        return 1
    print("heat: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
