"""Black-Scholes prices of a Dask array of options on a cluster of GPUs, checked against NumPy.

The options are a dask.array of shape (3, n) made on the workers from fresh
random numbers: rows S (spot price, 5 to 30), K (strike, 1 to 100) and T
(years to expiry, 0.25 to 10), with a fixed rate and volatility, as in
NVIDIA's CUDA sample.  `map_blocks` applies `price_block` to each (3, m)
block: it copies the block to the device, launches the kernel
`black_scholes` on it and copies the m call prices back.  The kernels are
defined in this script, so in `__main__`: Dask pickles them by value (their
Python code, through cloudpickle), and each worker compiles them at its
first launch, which a warm-up launch on every worker does before anything
is timed.

One worker process per GPU, each seeing its own device.  With dask-cuda
installed the cluster is its LocalCUDACluster.  Otherwise it is a
SpecCluster (the class LocalCluster builds on) of Nanny-managed worker
processes whose environments differ: worker i gets CUDA_VISIBLE_DEVICES set
to the i-th visible GPU, so that GPU is its device 0 and its only one, on
every thread and for every library in the process (LocalCUDACluster does
the same, listing the worker's GPU first).  This holds because the worker
is a freshly spawned Python, not a fork of this process, and its nanny sets
the variable before the worker touches CUDA (importing gpujit loads no
driver).  Calling gpujit.select_device(i) on each worker would be more
fragile: the current device belongs to a thread, and a worker runs tasks on
threads of its own.  Each worker reports its device at the warm-up, and the
example stops if two share one.  On gpujit's CPU target the same cluster
runs, without the GPU variables.

The same computation runs twice, on fresh data each time: on one worker
(the others idle) and on all of them.  Each is timed from the client until
every block is computed and held by the workers (`persist`), the best of
--repeat runs; the time per block is what the workers measured for the
tasks, copies to and from the GPU included (Dask's task stream).

The check: NumPy computes the same formula in float64, block by block on
the workers, and |kernel - NumPy| must stay below 1e-12 of S + K for every
option.  The two round some steps differently: exp, log and sqrt (GPU or
CPU-target against NumPy's, an ulp or two each) and gpujit's fused a * b + c
(one rounding where NumPy has two).  A price is S * N(d1) - K * exp(-rT) *
N(d2) and N's slope is below 0.4, so an error e in d1 or d2 moves it by at
most 0.4 e (S + K); |d1| < 30, and its roundings keep e within a few dozen
ulps of 30 (below 1e-14).  The other roundings cost a few ulps of S + K, so
the prices differ by less than 1e-14 of S + K (about 4e-16 seen).  A wrong
formula or an unwritten price is off by far more (or NaN, which fails too).

Usage: python dask_blocks.py [--size N] [--chunks M] [--workers W] [--repeat R]
(N options in blocks of M: by default 2**27 in blocks of 2**23 on GPUs, 16
blocks of 256 MiB of inputs and outputs, and 2**21 in blocks of 2**18 on the
CPU target; W workers, default one per GPU, 2 on the CPU target; R timed
runs, default 3).  Needs Dask: pip install "dask[array,distributed]".
Runs on the GPUs when they are usable, otherwise on gpujit's CPU target,
and prints which.  Exit status: 0 if every price matches NumPy, 1 otherwise,
2 for bad arguments.
"""
import argparse
import logging
import math
import os
import statistics
import sys
import time

import numpy as np

import dask
import dask.array as da
from distributed import Client, Nanny, Scheduler, SpecCluster, get_task_stream, wait

import gpujit

RATE = 0.02                   # risk-free interest rate, per year
VOLATILITY = 0.30             # per year
LOW = np.array([5.0, 1.0, 0.25])      # S, K, T drawn uniformly from [LOW, HIGH)
HIGH = np.array([30.0, 100.0, 10.0])
THREADS_PER_BLOCK = 256
TOLERANCE = 1e-12             # max |kernel - NumPy| / (S + K)

# the cumulative normal distribution N(d) by Abramowitz and Stegun's 26.2.17
# (absolute error below 7.5e-8), the one NVIDIA's sample uses
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.3989422804014327     # 1 / sqrt(2 pi)


@gpujit.jit(device=True)
def cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    c = RSQRT2PI * math.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    if d > 0:
        c = 1.0 - c
    return c


@gpujit.jit
def black_scholes(options, rate, volatility, call):
    i = gpujit.grid(1)
    if i < call.size:
        s = options[0, i]
        k = options[1, i]
        t = options[2, i]
        sqrt_t = math.sqrt(t)
        d1 = (math.log(s / k) + (rate + 0.5 * volatility * volatility) * t) / (volatility * sqrt_t)
        d2 = d1 - volatility * sqrt_t
        call[i] = s * cnd(d1) - k * math.exp(-rate * t) * cnd(d2)


def price_block(options):
    """The call prices of one (3, m) block of options: a (m,) float64 host array."""
    m = options.shape[1]
    d_options = gpujit.to_device(options)
    call = gpujit.device_array(m)               # written by the kernel alone: not copied in
    blocks = (m + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    black_scholes[blocks, THREADS_PER_BLOCK](d_options, RATE, VOLATILITY, call)
    return call.copy_to_host()


def price_numpy(options):
    """price_block's arithmetic in NumPy, for the check."""
    s, k, t = options
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (RATE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    return s * cnd_numpy(d1) - k * np.exp(-RATE * t) * cnd_numpy(d2)


def cnd_numpy(d):
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    c = RSQRT2PI * np.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return np.where(d > 0, 1.0 - c, c)


def warm_up():
    """Runs on a worker: compiles the kernel there (one launch on a small
    block) and says where the worker runs."""
    options = LOW[:, None] + (HIGH - LOW)[:, None] * np.random.default_rng().random((3, 1000))
    price_block(options)
    info = {"pid": os.getpid(), "target": gpujit.current_target()}
    if info["target"] == "cuda":
        device = gpujit.get_current_device()
        info.update(device=f"{device.name} at {device.pci_bus_id}", bus=device.pci_bus_id,
                    visible=os.environ.get("CUDA_VISIBLE_DEVICES", "(all)"))
    return info


def visible_gpus():
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES names them."""
    names = os.environ.get("CUDA_VISIBLE_DEVICES")
    if names is not None:
        return [name.strip() for name in names.split(",") if name.strip()][:len(gpujit.gpus)]
    return [str(i) for i in range(len(gpujit.gpus))]


def start_cluster(workers, target):
    """A cluster of `workers` worker processes with one thread each, and
    how it was made.  On CUDA each worker sees one GPU (see the docstring)."""
    quiet = logging.ERROR     # no warnings about event-loop pauses on a busy machine
    if target == "cuda":
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            pass
        else:
            cluster = LocalCUDACluster(n_workers=workers, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=quiet)
            return cluster, "dask-cuda's LocalCUDACluster, one GPU per worker"
    gpus = visible_gpus() if target == "cuda" else []
    specs = {}
    for i in range(workers):
        # the target the client uses: without it, on a machine without a GPU,
        # every worker would warn once that it falls back to the CPU
        env = {"GPUJIT_TARGET": target}
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = gpus[i]
        # memory_limit=0: no spilling to disk, which would time the disk
        specs[f"worker-{i}"] = {"cls": Nanny, "options": {
            "nthreads": 1, "memory_limit": 0, "env": env, "silence_logs": quiet}}
    cluster = SpecCluster(workers=specs, silence_logs=quiet,
                          scheduler={"cls": Scheduler, "options": {"dashboard": False}})
    how = "CUDA_VISIBLE_DEVICES set per worker" if gpus else "gpujit's CPU target in each"
    return cluster, f"SpecCluster of Nanny worker processes, {how}"


def random_options(seed, size, chunks):
    """A (3, size) dask array of options, S, K and T by row, made on the workers."""
    u = da.random.default_rng(seed).random((3, size), chunks=(3, chunks))
    return LOW[:, None] + (HIGH - LOW)[:, None] * u


def timed_run(client, workers, size, chunks, repeat):
    """Prices fresh options on `workers` (addresses) alone, `repeat` times:
    (best wall time in s, that run's time of each block in ms, the number of
    blocks each worker computed, the largest error)."""
    options = client.persist(random_options(np.random.SeedSequence().entropy, size, chunks),
                             workers=workers)
    wait(options)
    best = None
    for r in range(repeat):
        # a new key name per run: an array already held would not be computed again
        call = options.map_blocks(price_block, drop_axis=0, meta=np.empty((0,)),
                                  name=f"price-{r}-{time.time_ns()}")
        with get_task_stream(client) as stream:
            start = time.perf_counter()
            call = client.persist(call, workers=workers)
            wait(call)
            seconds = time.perf_counter() - start
        tasks = [task for task in stream.data if task["key"][0] == call.name]
        block_ms = [(s["stop"] - s["start"]) * 1e3 for task in tasks
                    for s in task["startstops"] if s["action"] == "compute"]
        per_worker = [sum(task["worker"] == w for task in tasks) for w in workers]
        if best is None or seconds < best[0]:
            best = (seconds, block_ms, per_worker, call)
    seconds, block_ms, per_worker, call = best
    expected = options.map_blocks(price_numpy, drop_axis=0, meta=np.empty((0,)))
    error = (abs(call - expected) / (options[0] + options[1])).max()
    return seconds, block_ms, per_worker, float(client.compute(error, workers=workers).result())


def positive_int(text):
    """argparse's type for the counts: an int of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=positive_int,
                        help="options (default 2**27 on GPUs, 2**21 on the CPU target)")
    parser.add_argument("--chunks", type=positive_int,
                        help="options per block (default 2**23 on GPUs, 2**18 on the CPU target)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="worker processes (default: one per GPU, 2 on the CPU target)")
    parser.add_argument("--repeat", type=positive_int, default=3,
                        help="timed runs, the best counts")
    args = parser.parse_args()                  # a bad value: a message and exit status 2
    target = gpujit.current_target()
    gpus = len(gpujit.gpus) if target == "cuda" else 0
    workers = args.workers or gpus or 2                 # counts given are at least 1
    size = args.size or (1 << 27 if gpus else 1 << 21)
    chunks = args.chunks or (1 << 23 if gpus else 1 << 18)
    print(f"target: {target}" + (f" ({gpujit.get_current_device().name})" if gpus else ""))
    if gpus and workers > gpus:
        print(f"dask_blocks: {workers} workers asked for, but {gpus} GPU(s): "
              f"each worker needs a GPU of its own", file=sys.stderr)
        return 1

    # workers start as new processes (the default): a forked one would
    # inherit this process's CUDA state, which it cannot use
    dask.config.set({"distributed.worker.multiprocessing-method": "spawn"})
    cluster, how = start_cluster(workers, target)
    with cluster, Client(cluster) as client:
        print(f"cluster: {workers} worker process(es), 1 thread each: {how}")
        addresses = sorted(client.scheduler_info()["workers"])
        infos = [client.submit(warm_up, workers=[a], pure=False).result() for a in addresses]
        for i, info in enumerate(infos):
            where = (f"{info['device']} (CUDA_VISIBLE_DEVICES={info['visible']})"
                     if "device" in info else "")
            print(f"  worker {i}: pid {info['pid']}, {info['target']} {where}".rstrip())
        if any(info["target"] != target for info in infos):
            print(f"dask_blocks: FAILED: a worker does not run on the {target} target",
                  file=sys.stderr)
            return 1
        if gpus and len({info["bus"] for info in infos}) < len(infos):
            print("dask_blocks: FAILED: two workers share a GPU", file=sys.stderr)
            return 1

        print(f"dask_blocks: Black-Scholes call prices of {size} options in "
              f"{-(-size // chunks)} block(s) of up to {chunks} (float64), best of {args.repeat}")
        runs = {1: timed_run(client, addresses[:1], size, chunks, args.repeat)}
        if workers > 1:
            runs[workers] = timed_run(client, addresses, size, chunks, args.repeat)

    for n, (seconds, block_ms, per_worker, _) in runs.items():
        print(f"  {n} worker{'s' * (n > 1)}: {seconds:.3f} s; per block on the worker "
              f"{statistics.mean(block_ms):.2f} ms (min {min(block_ms):.2f}, max "
              f"{max(block_ms):.2f}); blocks per worker: {' + '.join(map(str, per_worker))}")
    if workers > 1:
        speedup = runs[1][0] / runs[workers][0]
        if gpus:
            print(f"  speedup of {workers} GPUs over 1: {speedup:.2f}x")
        else:
            print(f"  speedup of {workers} workers over 1: {speedup:.2f}x (on the CPU target "
                  f"one worker's launches already use all {os.cpu_count()} cores)")
    error = np.max([run[3] for run in runs.values()])      # NaN if any is
    print(f"  max error vs NumPy: {error:.3g} of S + K")
    if not error <= TOLERANCE:
        print(f"dask_blocks: FAILED: error above {TOLERANCE:g} of S + K", file=sys.stderr)
        return 1
    print("dask_blocks: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
