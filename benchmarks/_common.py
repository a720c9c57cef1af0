"""What the benchmarks share: loading the frameworks, compiling the kernels
of _kernels.py for each, and timing kernels with CUDA events.

A *framework* runs the kernels of _kernels.py on its own device arrays, with
the same attributes whatever it is:

    name                                  str, for the tables
    to_device(host) -> device array       to_host(device) -> ndarray
    event() -> event (record(), synchronize())
    elapsed(start, end) -> float          ms between two completed events
    synchronize()
    launch(kernel, grid, block, args, c_args)

PythonFramework (gpujit, numba-cuda) launches the Python kernel with args;
CudaC (CUDA C compiled by NVRTC through CuPy) launches the C kernel of the
same name with c_args, which are args followed by the extents the Python
kernel reads from its arrays.

The benchmarks run as `python -P benchmarks/NAME.py`, and -P keeps
benchmarks/ off sys.path: each puts its own directory first to find these
modules (benchmarks/ holds no package that could shadow gpujit).
"""
import statistics
import time
import types

import numpy as np

import _kernels


def import_numba_cuda():
    """numba.cuda, after restoring numpy.row_stack, which NumPy 2.5 removed
    and numba-cuda 0.30 still touches."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda
    return cuda


def jit_kernels(module, names=None, **options):
    """jit_kernels(module, names=None, **options) -> {name: dispatcher}

    The kernels of _kernels.py (those in ``names``, default all), jitted by
    ``module`` (gpujit or numba.cuda) with ``options`` (``boundscheck=True``):
    copies of the same code objects whose global ``cuda`` is ``module``.  The
    device functions they call are jitted first, with device=True, under
    their own names (only those, so that bench_speed's first-kernel timing
    decorates no more than it launches); they are compiled into each kernel
    with the kernel's options.
    """
    env = dict(vars(_kernels), cuda=module)
    chosen = [func for func in _kernels.KERNELS if names is None or func.__name__ in names]

    def bound(func):
        return types.FunctionType(func.__code__, env, func.__name__)

    for func in _kernels.DEVICE_FUNCTIONS:
        if any(func.__name__ in kernel.__code__.co_names for kernel in chosen):
            env[func.__name__] = module.jit(device=True)(bound(func))
    kernels = {func.__name__: module.jit(**options)(bound(func)) for func in chosen}
    kernels.update({alias: kernels[func.__name__] for alias, func in _kernels.ALIASES.items()
                    if func.__name__ in kernels})
    return kernels


class PythonFramework:
    """gpujit or numba-cuda (``module``), running the Python kernels compiled
    with ``options``."""

    def __init__(self, name, module, **options):
        self.name = name
        self.kernels = jit_kernels(module, **options)
        self.to_device = module.to_device
        self.event = module.event
        self.synchronize = module.synchronize

    @staticmethod
    def to_host(device_array):
        return device_array.copy_to_host()

    @staticmethod
    def elapsed(start, end):
        return start.elapsed_time(end)

    def launch(self, kernel, grid, block, args, c_args):
        self.kernels[kernel][grid, block](*args)


class CudaC:
    """_kernels.CUDA_C compiled by NVRTC through CuPy's RawModule (default
    options), on CuPy arrays."""

    name = "CUDA C"

    def __init__(self):
        import cupy
        module = cupy.RawModule(code=_kernels.CUDA_C)
        names = [func.__name__ for func in _kernels.KERNELS] + list(_kernels.ALIASES)
        self.kernels = {name: module.get_function(name) for name in names}
        self.to_device = cupy.asarray
        self.to_host = cupy.asnumpy
        self.event = cupy.cuda.Event
        self.elapsed = cupy.cuda.get_elapsed_time
        self.synchronize = cupy.cuda.Device().synchronize

    def launch(self, kernel, grid, block, args, c_args):
        dim3 = (lambda d: (d,) if isinstance(d, int) else tuple(d))
        self.kernels[kernel](dim3(grid), dim3(block), tuple(c_args))


def gpujit_framework(require_gpu=True, **options):
    """PythonFramework of gpujit, its kernels jitted with ``options``;
    ImportError without a GPU when ``require_gpu`` (otherwise it runs on
    whatever target gpujit chose, the CPU one included)."""
    import gpujit
    if require_gpu and not gpujit.is_available():
        raise ImportError("gpujit finds no CUDA GPU here")
    return PythonFramework("gpujit", gpujit, **options)


def numba_framework():
    return PythonFramework("numba", import_numba_cuda())


def median_ms(fw, launch, runs, *others):
    """Median kernel time in ms of ``runs`` calls of launch(), each between
    two of fw's events, after one warm-up call.  Each timed call is queued
    behind an untimed one, so that the GPU is busy while the host records
    the start event and launches: the interval holds the kernel and not the
    framework's host cost of a launch (which the launch section measures;
    on an idle GPU it would add 3 to 20 us, a framework's own, to every
    kernel).  With ``others`` (more launch functions on fw's arrays), the
    launches take turns, one of each per run, and the result is a list of
    medians, launch's first: so that a drift of the machine (a host warming
    up, another process) weighs on all alike."""
    launches = (launch,) + others
    for each in launches:
        each()
    start, end = fw.event(), fw.event()
    times = [[] for _ in launches]
    for _ in range(runs):
        for each, kept in zip(launches, times):
            each()   # keeps the GPU busy while the next lines run on the host
            start.record()
            each()
            end.record()
            end.synchronize()
            kept.append(fw.elapsed(start, end))
    medians = [float(np.median(kept)) for kept in times]
    return medians if others else medians[0]


def median_seconds(call, repeats):
    """Median wall time in seconds of ``repeats`` calls of call() (which
    waits for its work), for host-side timing where there are no events."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cpu_code_text(gpujit):
    """What the CPU target compiles for, as gpujit.info()["cpu"] says: "avx2
    (256-bit vectors), LLVM CPU haswell, chosen by GPUJIT_CPU_NAME; the host
    rocketlake, avx512", or why that is not known."""
    try:
        cpu = gpujit.info()["cpu"]
    except Exception as exc:   # a build without it
        return not_available(exc)
    if isinstance(cpu, str):
        return f"n/a ({cpu})"
    return (f"{cpu['isa']} ({cpu['vector_bits']}-bit vectors), LLVM CPU {cpu['name']}, "
            f"chosen by {cpu['chosen_by']}; the host {cpu['host_name']}, {cpu['host_isa']}")


def target_text(gpujit):
    """The current target, with the CPU target's instruction set."""
    target = gpujit.current_target()
    return f"cpu: {cpu_code_text(gpujit)}" if target == "cpu" else target


def not_available(exc):
    """"n/a (Error: first line of the message)": a figure that could not be
    measured, for tables and JSON alike."""
    text = str(exc).strip().splitlines()
    return f"n/a ({type(exc).__name__}: {text[0] if text else 'no message'})"
