"""Every speed figure of gpujit in one run, side by side with the CUDA driver,
CUDA C, numba-cuda, CuPy and PyTorch.

Four sections, in this order (--only picks some):

import    Milliseconds of `import X` in a fresh interpreter, for gpujit, numpy,
          numba.cuda, cupy and torch: the median of 5 subprocesses.
first     The first kernel of a new process: in a subprocess whose CUDA
          context already exists, the time of decorating the vector add,
          launching it once and synchronizing; for gpujit and numba-cuda,
          with the driver's JIT cache off (CUDA_CACHE_DISABLE=1) and on
          (warm: a first process fills it), and for gpujit with its
          persistent disk cache (GPUJIT_CACHE=1, driver cache off, warm).
launch    Host microseconds per launch of a one-block kernel (1 x 32
          threads, out[0] = x: a float32 array and a float32 scalar): bursts
          of 100 back-to-back launches, each timed without the synchronize
          that follows it (so the driver's queue never fills and the GPU's
          rate of retiring kernels is not what is measured); the median and
          the fastest of the bursts (--launches in all), after a warm-up
          burst.  Noise only adds time, so the ratios' goals are judged on
          the fastest bursts, the launchers' own cost; the medians show too.  Raw cuLaunchKernel from C (raw_launch.c,
          compiled now; the driver through ctypes without a compiler), gpujit
          on its own device arrays, CuPy arrays, PyTorch tensors and host
          NumPy arrays (copies and a synchronize per launch: apart), numba-cuda,
          a CuPy RawKernel, and PyTorch's own t.add_(1); for reference,
          what no launcher avoids: the same loop calling a C function that
          does nothing, and the reads of a CuPy array's attributes.
kernels   Kernel times of the kernels of _kernels.py in CUDA C (NVRTC through
          CuPy, default options), gpujit and numba-cuda, on the same inputs and
          launch configurations: each result is checked against NumPy first
          (a wrong one prints WRONG and is not timed), then timed with the
          framework's CUDA events around each launch, queued behind an
          untimed launch so that the host's launch cost stays out, the
          median of --runs runs after a warm-up.
          With --boundscheck, also gpujit's kernels compiled with
          boundscheck=True, and their time over gpujit's (the two launched
          in turns on the same arrays).

A figure that cannot be measured (a framework missing or failing, no GPU)
prints as "n/a (reason)" and the run goes on.  --json PATH writes every
figure (a number, or that text) to PATH after each section.

    python -P benchmarks/bench_speed.py [--quick] [--only SECTIONS] [--json PATH]
                                        [--launches N] [--runs R] [--boundscheck]
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)   # see _common.py
from _common import (CudaC, gpujit_framework, import_numba_cuda, jit_kernels,  # noqa: E402
                     cpu_code_text, median_ms, not_available, numba_framework,
                     target_text)
from _kernels import BINS, MAX_ITER, THREADS, TILE  # noqa: E402

SECTIONS = ("import", "first", "launch", "kernels")
LAUNCH_THREADS = 32        # the one block of the launch-overhead kernel
LAUNCH_BURST = 100         # launches per timed burst: far fewer than the driver queues
THREADS_1D = 256           # threads per block of the element-wise kernels
CHILD_TIMEOUT_S = 120      # a subprocess that takes longer is n/a
GOALS = {"launch_raw": 1.1, "launch_cupy": 1.3, "kernel_geomean": 1.00, "kernel_max": 1.05,
         "boundscheck_memory": 1.3}
# The kernels whose time is the memory's: boundscheck's goal is judged on them.
MEMORY_BOUND = ("vector_add", "saxpy", "stencil", "block_sum_atomic", "histogram",
                "histogram_int32")


# ---- tables -------------------------------------------------------------------------------

def cell(value, spec, notes, where):
    """A table cell: a number formatted with `spec`, or the first word of a
    text ("n/a", "WRONG"), whose whole is added to `notes` under `where`."""
    if isinstance(value, str):
        notes.append(f"{where}: {value}")
        return value.split(" ", 1)[0]
    return format(value, spec)


def print_table(header, rows, notes=()):
    """Columns right-aligned but the first; then the notes, one per line."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) if k == 0 else str(c).rjust(w)
                        for k, (c, w) in enumerate(zip(r, widths))).rstrip())
    for note in notes:
        print(f"  {note}")


def ratio(num, den):
    """num / den, or None unless both are numbers."""
    if isinstance(num, float) and isinstance(den, float) and den > 0:
        return num / den
    return None


def goal_text(value, goal):
    return "-" if value is None else f"{value:.2f} ({'met' if value <= goal else 'NOT met'}, " \
                                     f"goal <= {goal})"


# ---- subprocesses ---------------------------------------------------------------------------

def run_child(args, env_changes=None):
    """Runs `python -P args...` with this interpreter and environment (plus
    env_changes); returns its last stdout line, or raises RuntimeError with
    the last line of its stderr."""
    env = dict(os.environ, **(env_changes or {}))
    proc = subprocess.run([sys.executable, "-P", *args], env=env, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = proc.stderr.strip().splitlines()
        raise RuntimeError(err[-1] if err else f"exit status {proc.returncode}")
    return lines[-1]


# ---- import -------------------------------------------------------------------------------

IMPORTS = (   # (name, statements timed in a fresh interpreter)
    ("gpujit", "import gpujit"),
    ("numpy", "import numpy"),
    ("numba.cuda", "import _common; _common.import_numba_cuda()"),   # numpy included
    ("cupy", "import cupy"),
    ("torch", "import torch"),
)


def import_seconds(statements, repeats):
    code = (f"import sys, time; sys.path.insert(0, {HERE!r}); t0 = time.perf_counter()\n"
            f"{statements}\nprint(time.perf_counter() - t0)")
    return statistics.median(float(run_child(["-c", code])) for _ in range(repeats))


def section_import(opts):
    repeats = 3 if opts.quick else 5
    results, rows, notes = {"unit": "ms"}, [], []
    for name, statements in IMPORTS:
        try:
            results[name] = import_seconds(statements, repeats) * 1e3
        except Exception as exc:
            results[name] = not_available(exc)
        rows.append((name, cell(results[name], ".1f", notes, name)))
    print(f"\n== import: ms of the import statement in a fresh `python -P`, median of {repeats} "
          f"(numba.cuda's includes numpy's, imported first for numpy.row_stack)")
    print_table(("module", "import ms"), rows, notes)
    return results


# ---- first kernel of a new process ---------------------------------------------------------

FIRST_N = 1 << 20   # vector add elements

FIRST_CASES = (   # (key, framework, label, environment, warm-up process first)
    ("gpujit_no_driver_cache", "gpujit", "gpujit, driver JIT cache off",
     {"CUDA_CACHE_DISABLE": "1", "GPUJIT_CACHE": "0"}, False),
    ("gpujit_driver_cache", "gpujit", "gpujit, driver JIT cache on (warm)",
     {"CUDA_CACHE_DISABLE": "0", "CUDA_CACHE_PATH": "{tmp}/driver", "GPUJIT_CACHE": "0"}, True),
    ("gpujit_disk_cache", "gpujit", "gpujit, gpujit disk cache (warm), driver cache off",
     {"GPUJIT_CACHE": "1", "GPUJIT_CACHE_DIR": "{tmp}/gpujit", "CUDA_CACHE_DISABLE": "1"}, True),
    ("numba_no_driver_cache", "numba", "numba-cuda, driver JIT cache off",
     {"CUDA_CACHE_DISABLE": "1"}, False),
    ("numba_driver_cache", "numba", "numba-cuda, driver JIT cache on (warm)",
     {"CUDA_CACHE_DISABLE": "0", "CUDA_CACHE_PATH": "{tmp}/driver"}, True),
)


def first_kernel_child(framework):
    """In the subprocess: create the context, then time decorating, launching
    and synchronizing the vector add; print a JSON line."""
    if framework == "numba":
        module = import_numba_cuda()
    else:
        import gpujit as module
    rng = np.random.default_rng()
    a, b = rng.random(FIRST_N, dtype=np.float32), rng.random(FIRST_N, dtype=np.float32)
    d_a, d_b = module.to_device(a), module.to_device(b)          # creates the context
    d_out = module.device_array(FIRST_N, np.float32)
    module.synchronize()
    t0 = time.perf_counter()
    kernel = jit_kernels(module, ("vector_add",))["vector_add"]
    kernel[(FIRST_N + THREADS_1D - 1) // THREADS_1D, THREADS_1D](d_a, d_b, d_out)
    module.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    cache = module.cache_info() if hasattr(module, "cache_info") else None
    print(json.dumps({"ms": ms, "ok": bool(np.array_equal(d_out.copy_to_host(), a + b)),
                      "cache": cache}))


def first_kernel_ms(framework, env, warm, repeats):
    """Median ms over `repeats` fresh processes (after one more if warm)."""
    child = [os.path.abspath(__file__), "--child-first-kernel", framework]
    if warm:
        run_child(child, env)
    times = []
    for _ in range(repeats):
        out = json.loads(run_child(child, env))
        if not out["ok"]:
            return "WRONG (the vector add differs from NumPy's)"
        if env.get("GPUJIT_CACHE") == "1" and out["cache"] and not out["cache"]["hits"]:
            return f"n/a (the disk cache missed: {out['cache']})"
        times.append(out["ms"])
    return statistics.median(times)


def section_first(opts):
    repeats = 1 if opts.quick else 3
    import gpujit
    results, rows, notes = {"unit": "ms"}, [], []
    with tempfile.TemporaryDirectory(prefix="gpujit-bench-") as tmp:
        for key, framework, label, env, warm in FIRST_CASES:
            env = {k: v.format(tmp=tmp) for k, v in env.items()}
            if env.get("GPUJIT_CACHE") == "1" and not hasattr(gpujit, "cache_info"):
                results[key] = "n/a (no disk cache in this build)"
            else:
                try:
                    results[key] = first_kernel_ms(framework, env, warm, repeats)
                except Exception as exc:
                    results[key] = not_available(exc)
            rows.append((label, cell(results[key], ".1f", notes, label)))
    print(f"\n== first kernel of a new process: ms of decorating + first launch + synchronize "
          f"of the vector add (n = {FIRST_N} float32), the context created before; median of "
          f"{repeats} process(es); gpujit target: {target_text(gpujit)}")
    print_table(("case", "ms"), rows, notes)
    return results


# ---- launch overhead ------------------------------------------------------------------------

def us_per_launch(launch, synchronize, launches):
    """Host µs per launch of each burst of LAUNCH_BURST back-to-back launch()
    calls (`launches` in all), each timed without the synchronize() that
    follows it, after a warm-up burst: a list."""
    times = []
    for burst in range(max(1, launches // LAUNCH_BURST) + 1):
        t0 = time.perf_counter()
        for _ in range(LAUNCH_BURST):
            launch()
        t1 = time.perf_counter()
        synchronize()
        if burst:   # the first is the warm-up
            times.append((t1 - t0) / LAUNCH_BURST * 1e6)
    return times


def store_ptx():
    """(ptx, entry): gpujit's PTX of _kernels.store for (float32[::1],
    float32) on this GPU, after checking that its parameters are those
    raw_launch.c passes."""
    import gpujit
    if gpujit.current_target() != "cuda":
        raise RuntimeError("no CUDA GPU for gpujit")
    kernel = jit_kernels(gpujit, ("store",))["store"]
    cc = gpujit.get_current_device().compute_capability
    ptx, _ = gpujit.compile_ptx(kernel, "void(float32[::1], float32)", cc=cc)
    entry = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx)
    kinds = re.findall(r"\.param\s+\.(\w+)", entry.group(2)) if entry else []
    if len(kinds) != 4 or kinds[3] != "f32" or any(k[1:] != "64" for k in kinds[:3]):
        raise RuntimeError(f"gpujit's kernel parameters are {kinds}, not the pointer, extent, "
                           f"stride and float32 raw_launch.c passes")
    return ptx, entry.group(1)


def cuda_include():
    """The directory with cuda.h, or None."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 os.path.dirname(os.path.dirname(nvcc)), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "include", "cuda.h")):
            return os.path.join(root, "include")
    return None


def build_raw_launch(tmp):
    """Compiles raw_launch.c into tmp with the first C compiler that works;
    the executable's path, or None (why, in the second item)."""
    include = cuda_include()
    if include is None:
        return None, "no cuda.h"
    compilers = [os.environ.get("CC"), "cc", "gcc", "clang", "nvcc", "/usr/local/cuda/bin/nvcc"]
    exe = os.path.join(tmp, "raw_launch")
    for compiler in filter(None, compilers):
        if shutil.which(compiler) is None:
            continue
        cmd = [compiler, "-O2", f"-I{include}", os.path.join(HERE, "raw_launch.c"), "-o", exe,
               "-ldl"]
        if subprocess.run(cmd, capture_output=True).returncode == 0:
            return exe, compiler
    return None, "no C compiler that builds raw_launch.c"


def driver_ctypes_us(ptx, entry, launches):
    """The same loop as raw_launch.c, through ctypes (Python's call overhead
    included): for a machine without a C compiler."""
    cu = ctypes.CDLL("libcuda.so.1")

    def check(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed: CUresult {status}")

    device, context, module, func = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), \
        ctypes.c_void_p()
    out = ctypes.c_uint64()
    check(cu.cuInit(0), "cuInit")
    check(cu.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    check(cu.cuModuleLoadData(ctypes.byref(module), ptx.encode()), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(func), module, entry.encode()),
          "cuModuleGetFunction")
    check(cu.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(4)), "cuMemAlloc")
    extent, stride, x = ctypes.c_int64(1), ctypes.c_int64(4), ctypes.c_float(1.0)
    params = (ctypes.c_void_p * 4)(*(ctypes.addressof(v) for v in (out, extent, stride, x)))
    launch = cu.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    return us_per_launch(
        lambda: launch(func, 1, 1, 1, LAUNCH_THREADS, 1, 1, 0, None, params, None),
        lambda: check(cu.cuCtxSynchronize(), "a launch or cuCtxSynchronize"), launches)


def raw_driver_us(launches):
    """(label, µs per launch) of the raw driver: raw_launch.c when it builds,
    else ctypes."""
    ptx, entry = store_ptx()
    with tempfile.TemporaryDirectory(prefix="gpujit-bench-") as tmp:
        exe, how = build_raw_launch(tmp)
        if exe is None:
            return f"driver through ctypes ({how})", driver_ctypes_us(ptx, entry, launches)
        path = os.path.join(tmp, "store.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        proc = subprocess.run([exe, path, entry, str(LAUNCH_BURST),
                               str(max(1, launches // LAUNCH_BURST))], text=True,
                              capture_output=True, timeout=CHILD_TIMEOUT_S)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip() or f"raw_launch exit {proc.returncode}")
        times = [float(line) for line in proc.stdout.split()]
        return f"cuLaunchKernel from C ({os.path.basename(how)})", times


# Each of these returns (launch, synchronize, read): read() -> out[0] after the
# launches (None: nothing to check).

def gpujit_store(array_from, to_host):
    import gpujit
    kernel = jit_kernels(gpujit, ("store",))["store"]
    out, x = array_from(np.zeros(1, np.float32)), np.float32(1)
    return lambda: kernel[1, LAUNCH_THREADS](out, x), gpujit.synchronize, \
        lambda: to_host(out)[0]


def gpujit_on_gpujit():
    import gpujit
    return gpujit_store(gpujit.to_device, lambda d: d.copy_to_host())


def gpujit_on_cupy():
    import cupy
    return gpujit_store(cupy.asarray, cupy.asnumpy)


def gpujit_on_torch():
    import torch
    return gpujit_store(lambda host: torch.from_numpy(host).cuda(), lambda t: t.cpu().numpy())


def gpujit_on_numpy():
    return gpujit_store(lambda host: host, lambda host: host)


def numba_store():
    cuda = import_numba_cuda()
    kernel = jit_kernels(cuda, ("store",))["store"]
    out, x = cuda.to_device(np.zeros(1, np.float32)), np.float32(1)
    return lambda: kernel[1, LAUNCH_THREADS](out, x), cuda.synchronize, \
        lambda: out.copy_to_host()[0]


def cupy_store():
    import cupy
    kernel = CudaC().kernels["store"]
    out, x = cupy.zeros(1, cupy.float32), np.float32(1)
    return lambda: kernel((1,), (LAUNCH_THREADS,), (out, x)), \
        cupy.cuda.Device().synchronize, lambda: cupy.asnumpy(out)[0]


def torch_add():
    import torch
    t = torch.zeros(1, device="cuda")
    return lambda: t.add_(1), torch.cuda.synchronize, None


LAUNCHERS = (   # (key, label, setup, fraction of --launches)
    ("gpujit", "gpujit, gpujit device array", gpujit_on_gpujit, 1),
    ("gpujit_cupy", "gpujit, CuPy array", gpujit_on_cupy, 1),
    ("gpujit_torch", "gpujit, PyTorch tensor", gpujit_on_torch, 1),
    ("numba", "numba-cuda, numba device array", numba_store, 1),
    ("cupy", "CuPy RawKernel, CuPy array", cupy_store, 1),
    ("torch", "PyTorch t.add_(1) (a PyTorch op, not this kernel)", torch_add, 1),
    ("gpujit_numpy", "gpujit, host NumPy array", gpujit_on_numpy, 10),
)
APART = ("gpujit_numpy",)   # copies in and out and synchronizes at each launch


def python_floor():
    """The benchmark's loop calling a C function of two arguments that does
    nothing (operator.is_): what any Python launcher pays before its own work."""
    import operator
    out, x = np.zeros(1, np.float32), np.float32(1)
    return lambda: operator.is_(out, x), lambda: None, None


def cupy_attribute_reads():
    """The attributes gpujit reads from a CuPy array at each launch (dtype,
    data.ptr, strides, shape), read from Python: CuPy's own cost of them."""
    import cupy
    a = cupy.zeros(1, cupy.float32)
    return lambda: (a.dtype, a.data.ptr, a.strides, a.shape), lambda: None, None


REFERENCES = (   # (key, label, setup): no launch; what part of a launch is not gpujit's
    ("python_floor", "for reference: lambda: operator.is_(out, x), no launch", python_floor),
    ("cupy_reads", "for reference: a CuPy array's dtype, data.ptr, strides, shape",
     cupy_attribute_reads),
)


def launcher_us(setup, launches):
    launch, synchronize, read = setup()
    times = us_per_launch(launch, synchronize, launches)
    if read is not None and float(read()) != 1.0:
        return f"WRONG (out[0] = {float(read())} after the launches, not 1.0)"
    return times


def record_bursts(results, key, times):
    """results[key]: the median µs per launch over the bursts (or why there
    is none); results[key + "_fastest"]: the fastest burst's.  The machine's
    noise (other processes, interrupts) only ever adds time, so the fastest
    burst is the launcher's own cost; the median says what a run meets."""
    if isinstance(times, list):
        results[key], results[key + "_fastest"] = statistics.median(times), min(times)
    else:
        results[key] = results[key + "_fastest"] = times


def section_launch(opts):
    launches = opts.launches
    results, rows, apart, notes = {"unit": "us per launch"}, [], [], []
    try:
        label, raw = raw_driver_us(launches)
    except Exception as exc:
        label, raw = "cuLaunchKernel from C", not_available(exc)
    record_bursts(results, "raw", raw)
    results["raw_label"] = label
    rows.append((label, launches, cell(results["raw"], ".2f", notes, label),
                 cell(results["raw_fastest"], ".2f", notes, label)))
    for key, label, setup, fraction in LAUNCHERS:
        n = max(1, launches // fraction)
        try:
            record_bursts(results, key, launcher_us(setup, n))
        except Exception as exc:
            record_bursts(results, key, not_available(exc))
        (apart if key in APART else rows).append(
            (label, n, cell(results[key], ".2f", notes, label),
             cell(results[key + "_fastest"], ".2f", notes, label)))
    for key, label, setup in REFERENCES:
        try:
            record_bursts(results, key, launcher_us(setup, launches))
        except Exception as exc:
            record_bursts(results, key, not_available(exc))
        apart.append((label, launches, cell(results[key], ".2f", notes, label),
                      cell(results[key + "_fastest"], ".2f", notes, label)))
    for name, num, den in (("gpujit/raw", "gpujit", "raw"),
                           ("gpujit_cupy/gpujit", "gpujit_cupy", "gpujit")):
        results[name] = ratio(results[num], results[den])
        results[name + " fastest"] = ratio(results[num + "_fastest"], results[den + "_fastest"])

    import gpujit
    print(f"\n== launch: host us per launch of out[0] = x (float32 array, float32 scalar), "
          f"1 block x {LAUNCH_THREADS} threads; bursts of {LAUNCH_BURST} back-to-back "
          f"launches, each timed without the synchronize after it: the median burst and "
          f"the fastest; gpujit target: {target_text(gpujit)}")
    columns = ("launcher", "launches", "median us", "fastest us")
    print_table(columns, rows)
    for text, name, goal in (("gpujit own arrays / raw driver", "gpujit/raw", "launch_raw"),
                             ("gpujit CuPy arrays / gpujit own arrays", "gpujit_cupy/gpujit",
                              "launch_cupy")):
        print(f"  {text}: fastest bursts {goal_text(results[name + ' fastest'], GOALS[goal])}; "
              f"medians {goal_text(results[name], GOALS[goal])}")
    print("apart: host arrays (copied in and out, a synchronize at each launch), and for "
          "reference the costs no launcher avoids:")
    print_table(columns, apart, notes)
    return results


# ---- kernel times ---------------------------------------------------------------------------

class Case:
    """One kernel's inputs, launch configuration and check, the same for every
    framework.

    arrays: {name: host array} copied to the device before the first launch
    (outputs too, poisoned where the kernel must write).  args, c_args: the
    Python kernel's and the CUDA C kernel's arguments, a str naming one of
    the arrays, anything else passed as is.  check(outputs) -> None when
    right, else what is wrong; outputs: {name: host copy} of those named in
    `outputs`, after one launch.
    """

    def __init__(self, kernel, label, grid, block, arrays, args, c_args, outputs, check):
        self.kernel, self.label, self.grid, self.block = kernel, label, grid, block
        self.arrays, self.args, self.c_args = arrays, args, c_args
        self.outputs, self.check = outputs, check

    def run(self, fw, runs, *others):
        """Median ms, or "WRONG (...)" without timing it.  With ``others``
        (frameworks of fw's kind: gpujit compiled with other options), a
        list, fw's first, of their times, each on arrays of its own,
        launched in turns (median_ms)."""
        launches, results = [], []
        for f in (fw,) + others:
            device = {name: fw.to_device(a) for name, a in self.arrays.items()}
            args, c_args = (tuple(device[a] if isinstance(a, str) else a for a in given)
                            for given in (self.args, self.c_args))
            launches.append(lambda f=f, args=args, c_args=c_args:
                            f.launch(self.kernel, self.grid, self.block, args, c_args))
            launches[-1]()
            problem = self.check({name: fw.to_host(device[name]) for name in self.outputs})
            results.append(f"WRONG ({problem})" if problem else None)
        if any(results):
            return [r or "n/a (another was wrong)" for r in results] if others else results[0]
        return median_ms(fw, launches[0], runs, *launches[1:])


def blocks_for(n, threads):
    return (n + threads - 1) // threads


def count_differing(got, expected, what):
    """None if equal, else how many elements differ from `what`."""
    wrong = int(np.count_nonzero(got != expected))
    return f"{wrong} of {got.size} elements differ from {what}" if wrong else None


def within(got, expected, bound, what):
    """None if |got - expected| <= bound everywhere (NaN fails), else the worst ratio."""
    worst = float(np.max(np.abs(got.astype(np.float64) - expected) / bound))
    return None if worst <= 1.0 else f"error / bound = {worst:.3g} against {what}"


def vector_add_case(rng, n):
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    return Case("vector_add", f"vector add, n = {n} float32", blocks_for(n, THREADS_1D),
                THREADS_1D, {"a": a, "b": b, "out": np.full(n, np.nan, np.float32)},
                ("a", "b", "out"), ("a", "b", "out", np.int64(n)), ("out",),
                lambda o: count_differing(o["out"], a + b, "NumPy's float32 a + b"))


def saxpy_case(rng, n):
    alpha = np.float32(rng.uniform(0.5, 4.0))
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    exact = np.float64(alpha) * x + y
    # One rounding of the product and one of the sum, or one of an FMA.
    bound = 2.0 ** -23 * (np.abs(np.float64(alpha) * x) + np.abs(y))
    return Case("saxpy", f"SAXPY, n = {n} float32", blocks_for(n, THREADS_1D), THREADS_1D,
                {"x": x, "y": y, "out": np.full(n, np.nan, np.float32)},
                (alpha, "x", "y", "out"), (alpha, "x", "y", "out", np.int64(n)), ("out",),
                lambda o: within(o["out"], exact, bound, "float64 a * x + y"))


STENCIL_BLOCK = (32, 8)
STENCIL_C, STENCIL_D = np.float32(0.2), np.float32(0.2)
STENCIL_TOLERANCE = 1e-6   # |a| < 1, so |out| <= 1: six float32 roundings are below 4e-7


def stencil_case(rng, n):
    a = rng.random((n, n), dtype=np.float32)
    a64 = a.astype(np.float64)
    interior = (np.float64(STENCIL_C) * (a64[:-2, 1:-1] + a64[2:, 1:-1] + a64[1:-1, :-2]
                                         + a64[1:-1, 2:]) + np.float64(STENCIL_D) * a64[1:-1, 1:-1])

    def check(o):
        out = o["out"]
        edges = np.concatenate([out[0], out[-1], out[:, 0], out[:, -1]])
        if not np.isnan(edges).all():
            return "the kernel wrote outside the interior"
        return within(out[1:-1, 1:-1], interior, STENCIL_TOLERANCE, "float64 stencil")

    grid = (blocks_for(n, STENCIL_BLOCK[0]), blocks_for(n, STENCIL_BLOCK[1]))
    return Case("stencil", f"5-point stencil, {n} x {n} float32", grid, STENCIL_BLOCK,
                {"a": a, "out": np.full((n, n), np.nan, np.float32)},
                ("a", "out", STENCIL_C, STENCIL_D),
                ("a", "out", STENCIL_C, STENCIL_D, np.int64(n), np.int64(n)), ("out",), check)


BS_RISKFREE, BS_VOLATILITY = np.float32(0.02), np.float32(0.30)   # the CUDA samples' values
BS_TOLERANCE = 1e-4   # relative to max(1, |price|); float32 gives ~1e-5 (measured)


def black_scholes_numpy(s, x, t, r, v):
    """(call, put) in float64: the kernel's formulas, A&S 26.2.17 for the CDF."""
    s, x, t, r, v = (np.asarray(a, np.float64) for a in (s, x, t, r, v))

    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978
                                                                          + k * 1.330274429))))
        c = 0.39894228040143267793994605993438 * np.exp(-0.5 * d * d) * poly
        return np.where(d > 0, 1.0 - c, c)

    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    exp_rt = np.exp(-r * t)
    return (s * cnd(d1) - x * exp_rt * cnd(d2),
            x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1)))


def black_scholes_case(rng, n):
    # Stock price, strike and years to expiry in the CUDA samples' ranges.
    s = rng.uniform(5.0, 30.0, n).astype(np.float32)
    x = rng.uniform(1.0, 100.0, n).astype(np.float32)
    t = rng.uniform(0.25, 10.0, n).astype(np.float32)
    call, put = black_scholes_numpy(s, x, t, BS_RISKFREE, BS_VOLATILITY)

    def check(o):
        return (within(o["call"], call, BS_TOLERANCE * np.maximum(1.0, np.abs(call)), "call")
                or within(o["put"], put, BS_TOLERANCE * np.maximum(1.0, np.abs(put)), "put"))

    arrays = {"call": np.full(n, np.nan, np.float32), "put": np.full(n, np.nan, np.float32),
              "s": s, "x": x, "t": t}
    args = ("call", "put", "s", "x", "t", BS_RISKFREE, BS_VOLATILITY)
    return Case("black_scholes", f"Black-Scholes, {n} options float32",
                blocks_for(n, THREADS_1D), THREADS_1D, arrays, args, args + (np.int64(n),),
                ("call", "put"), check)


MANDELBROT_VIEW = (-2.2, 1.0, -1.2, 1.2)   # x_min, x_max, y_min, y_max
MANDELBROT_BLOCK = (16, 16)
# Escape counts are chaotic near the set's boundary: contracting multiplies and
# adds into FMAs (CUDA C, numba) changes about 0.2% of the pixels (measured
# with NumPy); a wrong kernel changes far more.
MANDELBROT_MISMATCH = 0.01


def mandelbrot_numpy(height, width, x0, y0, dx, dy):
    """The kernel's float32 iteration (no FMA), vectorised over the pixels
    that have not escaped yet."""
    rows, cols = np.divmod(np.arange(height * width), width)
    cx = x0 + cols.astype(np.float32) * dx
    cy = y0 + rows.astype(np.float32) * dy
    counts = np.full(height * width, MAX_ITER, np.int32)
    live = np.arange(height * width)
    x, y = np.zeros(live.size, np.float32), np.zeros(live.size, np.float32)
    for n in range(MAX_ITER):
        x2, y2 = x * x, y * y
        escaped = x2 + y2 > np.float32(4)
        counts[live[escaped]] = n
        keep = ~escaped
        live, x, y, x2, y2, cx, cy = (v[keep] for v in (live, x, y, x2, y2, cx, cy))
        y = np.float32(2) * x * y + cy
        x = x2 - y2 + cx
    return counts.reshape(height, width)


def mandelbrot_case(rng, n):
    x0, y0 = np.float32(MANDELBROT_VIEW[0]), np.float32(MANDELBROT_VIEW[2])
    dx = np.float32((MANDELBROT_VIEW[1] - MANDELBROT_VIEW[0]) / n)
    dy = np.float32((MANDELBROT_VIEW[3] - MANDELBROT_VIEW[2]) / n)
    expected = mandelbrot_numpy(n, n, x0, y0, dx, dy)

    def check(o):
        counts = o["counts"]
        if (counts < 0).any():
            return "pixels not written"
        wrong = int(np.count_nonzero(counts != expected))
        if wrong > MANDELBROT_MISMATCH * counts.size:
            return f"{wrong} of {counts.size} pixels differ from NumPy's float32 counts"
        return None

    grid = (blocks_for(n, MANDELBROT_BLOCK[0]), blocks_for(n, MANDELBROT_BLOCK[1]))
    args = ("counts", x0, y0, dx, dy)
    return Case("mandelbrot", f"Mandelbrot, {n} x {n}, {MAX_ITER} iterations float32",
                grid, MANDELBROT_BLOCK, {"counts": np.full((n, n), -1, np.int32)}, args,
                args + (np.int64(n), np.int64(n)), ("counts",), check)


def mandelbrot_bound_case(rng, n):
    """mandelbrot_case's image with the bound a run-time argument: CUDA C's
    an int, gpujit's and numba's a Python int (int64)."""
    case = mandelbrot_case(rng, n)
    args = case.args + (MAX_ITER,)
    return Case("mandelbrot_bound", f"Mandelbrot, {n} x {n}, bound an argument", case.grid,
                case.block, case.arrays, args, args[:-1] + (np.int32(MAX_ITER), np.int64(n),
                                                            np.int64(n)),
                case.outputs, case.check)


def matmul_case(rng, n):
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = n * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))   # a float32 dot product of length n
    expected = a64 @ b64
    grid = (blocks_for(n, TILE), blocks_for(n, TILE))
    return Case("matmul", f"tiled matmul, {n} x {n} float32", grid, (TILE, TILE),
                {"a": a, "b": b, "c": np.full((n, n), np.nan, np.float32)}, ("a", "b", "c"),
                ("a", "b", "c", np.int64(n), np.int64(n), np.int64(n)), ("c",),
                lambda o: within(o["c"], expected, bound, "float64 A @ B"))


REDUCTION_BLOCKS = 1024    # sum and histogram: grid-stride loops over blocks x THREADS


def sum_case(rng, n):
    x = rng.random(n, dtype=np.float32)
    total = float(np.sum(x, dtype=np.float64))
    # Each value goes through the thread's additions, the block's tree and
    # shuffles, and the atomic adds of the partials: each rounds once, by at
    # most 2**-24 of a partial sum, itself at most the total (x >= 0).
    additions = blocks_for(n, REDUCTION_BLOCKS * THREADS) + int(math.log2(THREADS)) \
        + REDUCTION_BLOCKS
    bound = additions * 2.0 ** -24 * total
    return Case("block_sum_atomic", f"block sum + atomic add, n = {n} float32",
                REDUCTION_BLOCKS, THREADS, {"x": x, "total": np.zeros(1, np.float32)},
                ("x", "total"), ("x", "total", np.int64(n)), ("total",),
                lambda o: within(o["total"], np.array([total]), bound, "float64 sum"))


def histogram_case(rng, n, dtype=np.uint8, kernel="histogram"):
    """n keys of dtype (a clipped normal around 128) into BINS bins."""
    values = np.clip(rng.normal(128, 30, n), 0, 255).astype(dtype)
    counts = np.bincount(values, minlength=BINS).astype(np.int32)
    return Case(kernel, f"histogram, n = {n} {np.dtype(dtype).name} into {BINS} bins",
                REDUCTION_BLOCKS, THREADS, {"x": values, "hist": np.zeros(BINS, np.int32)},
                ("x", "hist"), ("x", "hist", np.int64(n)), ("hist",),
                lambda o: count_differing(o["hist"], counts, "np.bincount"))


def histogram_int32_case(rng, n):
    return histogram_case(rng, n, np.int32, "histogram_int32")


KERNEL_CASES = (   # (make, size in the full run, size with --quick)
    (vector_add_case, 1 << 24, 1 << 18),
    (saxpy_case, 1 << 24, 1 << 18),
    (stencil_case, 4096, 512),
    (black_scholes_case, 1 << 22, 1 << 16),
    (mandelbrot_case, 2048, 256),
    (mandelbrot_bound_case, 2048, 256),
    (matmul_case, 2048, 128),
    (sum_case, 1 << 24, 1 << 18),
    (histogram_case, 1 << 24, 1 << 18),
    (histogram_int32_case, 1 << 26, 1 << 18),
)

KERNEL_FRAMEWORKS = (("CUDA C", CudaC), ("gpujit", lambda: gpujit_framework(require_gpu=False)),
                     ("numba", numba_framework))
BOUNDSCHECK = "gpujit boundscheck"   # --boundscheck's framework: gpujit's kernels, checked


def boundscheck_summary(times):
    """The line that sums up gpujit boundscheck / gpujit: geomean, worst, and
    the worst memory-bound kernel against the goal."""
    ratios = {k: r for (k, name), r in times.items()
              if name == f"{BOUNDSCHECK}/gpujit" and r is not None}
    if not ratios:
        return "  boundscheck / gpujit: n/a"
    geomean = math.exp(sum(map(math.log, ratios.values())) / len(ratios))
    worst = max(ratios, key=ratios.get)
    memory = {k: r for k, r in ratios.items() if k in MEMORY_BOUND}
    text = (f"  boundscheck / gpujit: geomean {geomean:.2f}, worst {ratios[worst]:.2f} "
            f"({worst})")
    if memory:
        slowest = max(memory, key=memory.get)
        text += (f"; memory-bound worst {slowest}: "
                 f"{goal_text(memory[slowest], GOALS['boundscheck_memory'])}")
    return text


def section_kernels(opts):
    import gpujit
    on_gpu = gpujit.current_target() == "cuda"
    frameworks, times, notes = {}, {}, []
    kinds = KERNEL_FRAMEWORKS
    if opts.boundscheck:
        kinds += ((BOUNDSCHECK, lambda: gpujit_framework(require_gpu=False, boundscheck=True)),)
    for name, make in kinds:
        try:
            frameworks[name] = make()
        except Exception as exc:   # its column is n/a, said once
            frameworks[name] = not_available(exc)
            notes.append(f"{name}: {frameworks[name]}")
    rng = np.random.default_rng()
    rows = []
    for make, size, quick_size in KERNEL_CASES:
        try:
            case = make(rng, quick_size if opts.quick else size)
        except Exception as exc:   # e.g. no memory for the reference
            notes.append(f"{make.__name__}: {not_available(exc)}")
            continue
        for name, fw in frameworks.items():
            # gpujit's checked kernels are timed with gpujit's, in turns
            checked = frameworks.get(BOUNDSCHECK) if name == "gpujit" else None
            both = [name] + ([BOUNDSCHECK] if checked else [])
            if name == BOUNDSCHECK:
                continue
            if isinstance(fw, str) or isinstance(checked, str):
                for k in both:
                    times[case.kernel, k] = frameworks[k] if isinstance(frameworks[k], str) \
                        else "n/a (not timed without the other)"
                continue
            try:
                got = case.run(fw, opts.runs, *([checked] if checked else []))
                for k, t in zip(both, got if checked else [got]):
                    times[case.kernel, k] = t
            except Exception as exc:
                for k in both:
                    times[case.kernel, k] = not_available(exc)
        row = [case.label]
        for name in frameworks:
            said = isinstance(frameworks[name], str)
            row.append(cell(times[case.kernel, name], ".4f", [] if said else notes,
                            f"{case.kernel}, {name}"))
        for name in ("gpujit", "numba"):
            r = ratio(times[case.kernel, name], times[case.kernel, "CUDA C"])
            r = r if on_gpu or name != "gpujit" else None   # CPU-target times: no ratio
            times[case.kernel, f"{name}/CUDA C"] = r
            row.append("-" if r is None else f"{r:.2f}")
        if opts.boundscheck:   # the same target's times: a ratio on the CPU target too
            r = ratio(times[case.kernel, BOUNDSCHECK], times[case.kernel, "gpujit"])
            times[case.kernel, f"{BOUNDSCHECK}/gpujit"] = r
            row.append("-" if r is None else f"{r:.2f}")
        rows.append(row)

    ratios = [r for (k, name), r in times.items() if name == "gpujit/CUDA C" and r is not None]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    above = [k for (k, name), r in times.items()
             if name == "gpujit/CUDA C" and r is not None and r > GOALS["kernel_max"]]
    print(f"\n== kernels: ms per launch, median of {opts.runs} runs after a warm-up (each "
          f"framework's CUDA events); results checked against NumPy first; gpujit target: "
          f"{target_text(gpujit)}")
    header = ("kernel", "CUDA C ms", "gpujit ms", "numba ms") + \
        (("checked ms",) if opts.boundscheck else ()) + ("gpujit/CUDA C", "numba/CUDA C") + \
        (("checked/gpujit",) if opts.boundscheck else ())
    print_table(header, rows, notes)
    print(f"  geomean gpujit/CUDA C over {len(ratios)} kernels: "
          f"{goal_text(geomean, GOALS['kernel_geomean'])}; above "
          f"{GOALS['kernel_max']}: {', '.join(above) if above else 'none'}")
    if opts.boundscheck:
        print(f"  checked: gpujit with boundscheck=True\n{boundscheck_summary(times)}")
    return {"unit": "ms per launch (ratios: none)",
            "times": {f"{k} | {name}": v for (k, name), v in times.items()},
            "geomean_gpujit/CUDA C": geomean, "above_max": above}


# ---- the run --------------------------------------------------------------------------------

def versions():
    """What this run ran with: Python, NumPy, gpujit (target, device,
    driver), and the version of each other framework already imported."""
    found = {"python": platform.python_version(), "numpy": np.__version__,
             "date": datetime.datetime.now().isoformat(timespec="seconds")}
    try:
        import gpujit
        info = gpujit.info()
        found.update(gpujit=info["gpujit"], target=info["target"], driver=info["driver"],
                     device=info["devices"][0]["name"] if info["devices"] else None,
                     disk_cache=hasattr(gpujit, "cache_info"), cpu=cpu_code_text(gpujit))
    except Exception as exc:
        found["gpujit"] = not_available(exc)
    for name in ("cupy", "numba", "torch"):
        if name in sys.modules:
            found[name] = getattr(sys.modules[name], "__version__", "?")
    return found


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, few launches and runs (a check that it all works)")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections to run, of {','.join(SECTIONS)}")
    parser.add_argument("--json", metavar="PATH", help="write every figure to PATH (JSON)")
    parser.add_argument("--launches", type=int,
                        help="launches per launcher in the launch section, in bursts of "
                             f"{LAUNCH_BURST} (default 20000, --quick 2000)")
    parser.add_argument("--runs", type=int,
                        help="timed runs per kernel (default 30, --quick 5)")
    parser.add_argument("--boundscheck", action="store_true",
                        help="kernels section: also time gpujit's kernels compiled with "
                             "boundscheck=True, against gpujit's")
    parser.add_argument("--child-first-kernel", choices=("gpujit", "numba"),
                        help=argparse.SUPPRESS)
    opts = parser.parse_args()
    opts.only = [s.strip() for s in opts.only.split(",") if s.strip()]
    unknown = sorted(set(opts.only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    opts.launches = opts.launches or (2_000 if opts.quick else 20_000)
    opts.runs = opts.runs or (5 if opts.quick else 30)
    return opts


def main():
    opts = parse_args()
    if opts.child_first_kernel:
        first_kernel_child(opts.child_first_kernel)
        return 0
    # numba warns that one-block launches under-use the GPU: here they are meant to.
    warnings.filterwarnings("ignore", message=".*under-utilization")
    warnings.filterwarnings("ignore", message=".*running kernels on the CPU target")
    started = time.perf_counter()
    results = {"meta": versions(), "options": {k: v for k, v in vars(opts).items()
                                               if k != "child_first_kernel"}}
    print("bench_speed: " + ", ".join(f"{k} {v}" for k, v in results["meta"].items()))
    run = {"import": section_import, "first": section_first, "launch": section_launch,
           "kernels": section_kernels}
    for section in SECTIONS:
        if section not in opts.only:
            continue
        t0 = time.perf_counter()
        try:
            results[section] = run[section](opts)
        except Exception as exc:   # a section that fails must not hide the others
            results[section] = not_available(exc)
            print(f"\n== {section}: {results[section]}")
        results.setdefault("seconds", {})[section] = time.perf_counter() - t0
        sys.stdout.flush()
        if opts.json:
            results["meta"] = versions()   # now with the frameworks the sections imported
            with open(opts.json, "w") as f:
                json.dump(results, f, indent=1, default=float)
    print(f"\nbench_speed: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
