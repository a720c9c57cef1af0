"""2-D heat equation over MPI ranks: the plate of heat.py split by rows, one
GPU per rank, halo rows exchanged every step, and the result checked bit for
bit against the same kernel run over the whole plate in one process.

The stencil is heat.py's: every interior cell becomes

    u + alpha * (north + south + west + east - 4 u)

and the edges keep their temperatures.  The interior rows are cut into one
contiguous band per rank (the first (rows - 2) % ranks bands one row
longer).  A rank keeps its band in a device array with one row more above
and below: a halo holding a copy of the neighbour's edge row or, at the top
and bottom of the plate, the fixed boundary row itself.  Every step, each
rank launches the kernel on its band (the kernel copies the first and last
row, as it copies every boundary, and updates the rows between) and then
trades edge rows with its neighbours: its first row goes up while the halo
below arrives from below, then its last row goes down while the halo above
arrives from above (MPI Sendrecv; at the plate's edges MPI.PROC_NULL makes
them do nothing).  Every cell sees the same five values as in one process,
and the kernel does the same arithmetic on them, so the results must agree
to the last bit.

How the rows travel (--staging):
  cuda-aware  MPI is given the device arrays' rows themselves (mpi4py takes
              them through DLPack or the CUDA Array Interface) and moves
              GPU memory directly; this needs an MPI library built for CUDA.
  host        the edge rows are copied into pinned host buffers, MPI
              exchanges those, and the halos are copied back to the GPU;
              any MPI library can do this.
  auto        (default) cuda-aware when every rank's MPI library says it
              takes CUDA memory (MPI 4.1: "cuda" or "cuda:device" in the
              "mpi_memory_alloc_kinds" info), else host.  A library that
              predates that query may be CUDA-aware all the same: say so
              with cuda-aware.
On gpujit's CPU target a device array is host memory: cuda-aware hands it
to MPI in place, which any MPI library can take, and auto chooses it; host
still copies through the pinned buffers (no gain there, but the same code
as on a GPU).

With CUDA, the i-th rank of a node uses GPU i % (the node's GPUs).  On the
CPU target every rank has gpujit's pool of GPUJIT_CPU_THREADS threads
(default one per core); give each its share of the cores, e.g.
GPUJIT_CPU_THREADS=2 mpiexec -n 4 ... on 8 cores.  Rank 0 gathers the plate
at the end, runs the kernel over all of it for the same steps on its own GPU
(or threads) and compares, bit for bit, and with NumPy within 1e-9 (NumPy
does not fuse a multiply and an add into one FMA; slow for large plates:
--no-numpy).  Prints the time per step of the split run (the slowest rank's,
and the longest a rank spent in halo exchanges) and of the one-process run,
and a digest of the plate: the same for any number of ranks.

Usage: mpiexec -n RANKS python heat_mpi.py [--size N] [--steps S]
           [--staging {auto,cuda-aware,host}] [--seed SEED] [--no-numpy]
or `python heat_mpi.py ...` for one rank.  On two GPUs, with a plate large
enough for the split to pay: mpiexec -n 2 python heat_mpi.py --size 16384
--steps 500 --no-numpy.  Runs on the GPU when one is usable, otherwise on
gpujit's CPU target, and prints which.  Exit status, on every rank: 0 if
the split run equals the one-process run bit for bit (and NumPy within the
tolerance), 1 otherwise, 2 for bad arguments.
"""
import argparse
import hashlib
import sys
import time
import traceback

import numpy as np
from mpi4py import MPI

import gpujit

ALPHA = 0.2              # diffusion number; explicit scheme is stable for <= 0.25
BLOCK = (32, 8)          # threads per block: x along a row (coalesced), y across rows
TOLERANCE = 1e-9         # max absolute error against NumPy, temperatures are in [0, 100]
UP, DOWN = 1, 2          # message tags: rows travelling to the rank above / below


@gpujit.jit
def heat_step(u, out, alpha):
    j, i = gpujit.grid(2)                 # x: column, y: row
    n, m = u.shape
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]           # boundaries (and halos) are copied
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


def split_rows(n, ranks):
    """Each rank's first interior row and number of rows: the n - 2 interior
    rows of an n-row plate in contiguous bands, the first (n - 2) % ranks
    bands one row longer."""
    base, extra = divmod(n - 2, ranks)
    counts = [base + (r < extra) for r in range(ranks)]
    starts = [1 + sum(counts[:r]) for r in range(ranks)]
    return starts, counts


def launch_grid(shape):
    rows, cols = shape
    return ((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])


def mpi_takes_cuda_memory(comm):
    """True when the MPI library says it accepts CUDA device memory in
    communication calls (MPI 4.1's memory allocation kinds: "cuda" or
    "cuda:device" in the communicator's "mpi_memory_alloc_kinds")."""
    info = comm.Get_info()
    try:
        kinds = info.Get("mpi_memory_alloc_kinds") or ""
    finally:
        info.Free()
    return any(kind.strip() in ("cuda", "cuda:device") for kind in kinds.split(","))


def choose_staging(requested, comm, target):
    """The staging the ranks use ("cuda-aware" or "host") and why, the same on every rank."""
    if target == "cpu":
        if requested == "host":
            return "host", "copied through pinned host buffers"
        return "cuda-aware", "device rows passed to MPI in place (host memory on the CPU target)"
    reported = comm.allreduce(mpi_takes_cuda_memory(comm), op=MPI.LAND)
    if requested == "host" or (requested == "auto" and not reported):
        return "host", "copied through pinned host buffers"
    why = "the MPI library reports CUDA support" if reported else \
        "asked for; the MPI library does not report CUDA support"
    return "cuda-aware", f"device rows passed to MPI ({why})"


def exchange_halos(comm, band, up, down, staging, stream, pinned):
    """Replaces the halo rows of `band` (a device array, rows 0 and -1) by
    the neighbours' edge rows and sends them this rank's edge rows (1 and -2).
    `up` and `down` are the neighbours' ranks, MPI.PROC_NULL at an edge of
    the plate, whose boundary row then stays as it is.  Waits for the work
    queued on `stream` first (the kernel that wrote the edge rows); `pinned`
    are four host rows for the host staging."""
    if staging == "host":
        send_up, send_down, from_up, from_down = pinned
        if up != MPI.PROC_NULL:
            band[1].copy_to_host(send_up, stream=stream)
        if down != MPI.PROC_NULL:
            band[-2].copy_to_host(send_down, stream=stream)
        stream.synchronize()
    else:
        stream.synchronize()              # MPI does not order itself after the kernel
        send_up, send_down, from_up, from_down = band[1], band[-2], band[0], band[-1]
    comm.Sendrecv(send_up, dest=up, sendtag=UP, recvbuf=from_down, source=down, recvtag=UP)
    comm.Sendrecv(send_down, dest=down, sendtag=DOWN, recvbuf=from_up, source=up, recvtag=DOWN)
    if staging == "host":                 # queued before the next kernel on `stream`
        if up != MPI.PROC_NULL:
            band[0].copy_to_device(from_up, stream=stream)
        if down != MPI.PROC_NULL:
            band[-1].copy_to_device(from_down, stream=stream)


def run_split(comm, u0, steps, staging):
    """Runs `steps` steps on this rank's band of the plate `u0` (host, (n, n),
    float64, the same on every rank); returns the rows this rank owns as a
    host array (with the boundary row at an edge of the plate) and the
    seconds taken in all and in halo exchanges."""
    rank, size = comm.Get_rank(), comm.Get_size()
    starts, counts = split_rows(len(u0), size)
    first, rows = starts[rank], counts[rank]
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL

    stream = gpujit.stream()
    d_u = gpujit.to_device(u0[first - 1:first + rows + 1], stream=stream)   # band and halos
    d_v = gpujit.device_array_like(d_u, stream=stream)
    pinned = None
    if staging == "host":                              # rows to send and rows received
        pinned = [gpujit.pinned_array(u0.shape[1], u0.dtype) for _ in range(4)]
    grid = launch_grid(d_u.shape)
    heat_step[grid, BLOCK, stream](d_u, d_v, ALPHA)    # warm-up (and compile); d_v is scratch
    stream.synchronize()

    comm.Barrier()                                     # start the clocks together
    exchange = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        heat_step[grid, BLOCK, stream](d_u, d_v, ALPHA)
        stream.synchronize()                           # the exchange's time is its own
        t = time.perf_counter()
        exchange_halos(comm, d_v, up, down, staging, stream, pinned)
        exchange += time.perf_counter() - t
        d_u, d_v = d_v, d_u                            # the new plate is the next input
    stream.synchronize()
    elapsed = time.perf_counter() - start

    lo = 0 if up == MPI.PROC_NULL else 1               # the edge ranks add the boundary row
    hi = len(d_u) if down == MPI.PROC_NULL else len(d_u) - 1
    return d_u[lo:hi].copy_to_host(), elapsed, exchange


def run_single(u0, steps):
    """The same kernel over the whole plate in this process: (result, seconds)."""
    stream = gpujit.stream()
    d_u = gpujit.to_device(u0, stream=stream)
    d_v = gpujit.device_array_like(d_u, stream=stream)
    grid = launch_grid(d_u.shape)
    heat_step[grid, BLOCK, stream](d_u, d_v, ALPHA)    # warm-up
    stream.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        heat_step[grid, BLOCK, stream](d_u, d_v, ALPHA)
        d_u, d_v = d_v, d_u
    stream.synchronize()
    elapsed = time.perf_counter() - start
    return d_u.copy_to_host(), elapsed


def wait_idly(request):
    """Waits for an MPI request, sleeping between tests: a blocking call
    polls at full speed, which on the CPU target would take a core from rank
    0's one-process run."""
    while not request.Test():
        time.sleep(1e-3)


def gather_plate(comm, mine, u0):
    """Rank 0: the plate made of every rank's rows (`mine`, as run_split
    returns them); None on the other ranks."""
    size, n = comm.Get_size(), len(u0)
    starts, counts = split_rows(n, size)
    plate, into = None, None
    if comm.Get_rank() == 0:
        plate = np.empty_like(u0)
        firsts = [s - (r == 0) for r, s in enumerate(starts)]       # the edge ranks
        rows = [c + (r == 0) + (r == size - 1) for r, c in enumerate(counts)]   # add a row
        into = [plate, [r * n for r in rows], [f * n for f in firsts], MPI.DOUBLE]
    comm.Gatherv(mine, into, root=0)
    return plate


def compare(got, expected, u0, steps, numpy_too):
    """Rank 0: prints whether the split run's plate `got` equals the
    one-process run's `expected`, and its error against NumPy; True if both
    pass."""
    ok = True
    if np.array_equal(got, expected):
        print("  bit for bit equal to the one-process run: yes")
    else:
        differ = np.argwhere(got != expected)
        i, j = differ[0]
        print(f"heat_mpi: FAILED: {len(differ)} cells differ from the one-process run, the "
              f"first at ({i}, {j}): {float(got[i, j])!r} against {float(expected[i, j])!r}",
              file=sys.stderr)
        ok = False
    if numpy_too:
        error = float(np.max(np.abs(got - heat_numpy(u0, steps, ALPHA))))
        print(f"  max abs error vs NumPy: {error:.3g}")
        if not error <= TOLERANCE:
            print(f"heat_mpi: FAILED: error above {TOLERANCE:g}", file=sys.stderr)
            ok = False
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="cells per side (default 1024)")
    parser.add_argument("--steps", type=int, default=200, help="time steps (default 200)")
    parser.add_argument("--staging", choices=["auto", "cuda-aware", "host"], default="auto",
                        help="how halo rows travel (default auto)")
    parser.add_argument("--seed", type=int, help="seed of the initial plate (default: fresh)")
    parser.add_argument("--numpy", action=argparse.BooleanOptionalAction, default=True,
                        help="also check against NumPy (default yes)")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n, steps = args.size, args.steps
    if n - 2 < size or steps < 1 or (args.seed or 0) < 0:   # the same on every rank
        if rank == 0:
            parser.error(f"--size must be at least ranks + 2 = {size + 2}, --steps at least 1, "
                         f"--seed at least 0")
        return 2

    target = gpujit.current_target()
    where = "the CPU"
    if target == "cuda":                               # one GPU per rank of a node
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        device = gpujit.select_device(node.Get_rank() % len(gpujit.gpus))
        node.Free()
        where = f"GPU {device.id} ({device.name})"
    staging, how = choose_staging(args.staging, comm, target)
    starts, counts = split_rows(n, size)
    layout = comm.gather(f"  rank {rank}: rows {starts[rank]}-{starts[rank] + counts[rank] - 1} "
                         f"({counts[rank]} rows) on {where}", root=0)

    u0 = np.empty((n, n))
    if rank == 0:
        seed = args.seed if args.seed is not None else np.random.SeedSequence().entropy
        u0[...] = initial_plate(n, np.random.default_rng(seed))
        print(f"target: {target}" + (f" ({device.name})" if target == "cuda" else ""))
        print(f"heat_mpi: {n} x {n} plate, {steps} steps, alpha = {ALPHA}, {size} rank(s), "
              f"seed {seed}")
        print("\n".join(layout))
        print(f"  halo exchange: {staging}, {how}", flush=True)
    comm.Bcast(u0, root=0)

    mine, elapsed, exchange = run_split(comm, u0, steps, staging)
    got = gather_plate(comm, mine, u0)
    slowest = np.zeros(2)
    comm.Reduce(np.array([elapsed, exchange]), slowest, op=MPI.MAX, root=0)

    ok = np.zeros(1, np.int32)
    if rank == 0:
        split, exchange = slowest / steps * 1e6
        print(f"  split run: {split:.1f} us per step (the slowest rank; halo exchanges up to "
              f"{exchange:.1f} us of it)")
        expected, single = run_single(u0, steps)
        single *= 1e6 / steps
        print(f"  one process: {single:.1f} us per step; the split is {single / split:.2f}x "
              f"as fast")
        print(f"  centre temperature: {got[n // 2, n // 2]:.4f}")
        print(f"  plate digest (sha256): {hashlib.sha256(got.tobytes()).hexdigest()[:16]}")
        ok[0] = compare(got, expected, u0, steps, args.numpy)
        if ok[0]:
            print("heat_mpi: OK")
    wait_idly(comm.Ibcast(ok, root=0))                 # the verdict, for every rank's exit status
    return 0 if ok[0] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.stdout.flush()
        MPI.COMM_WORLD.Abort(1)           # the other ranks would wait for this one forever
