"""gpujit: compile a numeric subset of Python into CUDA kernels.

The API follows ``numba.cuda``, so ``import gpujit as cuda`` ports most kernels::

    import numpy as np
    import gpujit

    @gpujit.jit
    def saxpy(a, x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    x = np.arange(1 << 20, dtype=np.float32)
    y = np.ones_like(x)
    out = np.empty_like(x)
    saxpy[(x.size + 255) // 256, 256](np.float32(2), x, y, out)

Importing gpujit loads neither CUDA nor NumPy's C internals: the CUDA driver
is loaded on first use (``is_available()``, a launch, a device array), so a
machine without a GPU can still import gpujit and call ``compile_ptx``.

Kernels run on an *execution target*: ``"cuda"`` (an NVIDIA GPU) or
``"cpu"`` (the host CPU, through LLVM's JIT: blocks on a pool of worker
threads, the threads of a block as fibers).  ``GPUJIT_TARGET=cpu|cuda``
chooses it; without the variable gpujit uses the GPU when a driver and a
device are present and otherwise the CPU, with a one-time warning.
``set_target()`` and ``current_target()`` change and report it.

This module is the package's face: it imports the extension (``_gpujit``,
the only owner of CUDA, target and stream state) and re-exports the public
names by concern: the extension's types, exceptions and functions, numba's
type objects (``types``), the decorator (``_decorators``) and the names
kernels use (``_kernel_api``) now; the rest from the module of its concern
at the name's first use, so that ``import gpujit`` stays fast: ``_compile``
(``compile_ptx``), ``_memory`` (``to_device``, pinned, mapped and managed
host memory), ``_devices`` (devices, contexts), ``_interop`` (DLPack, the
CUDA array interface) and ``_info`` (``info``, libdevice, the kernel cache).
"""
import os as _os

try:
    from . import _gpujit
except ImportError as _exc:   # the source tree, without the built extension
    if _os.path.exists(_os.path.join(_os.path.dirname(__file__), "..", "meson.build")):
        raise ImportError(
            f"gpujit's compiled extension is missing from {_os.path.dirname(__file__)}: this "
            f"is the source tree (the repository root is on sys.path, e.g. the current "
            f"directory). Build and install gpujit as the README says, then run Python from "
            f"another directory or with -P") from _exc
    raise
from ._gpujit import (
    CudaCompileError,
    CudaError,
    CudaKernelFault,
    CudaOutOfMemoryError,
    CudaSupportError,
    DeviceArray,
    Dispatcher,
    GpujitError,
    GpujitPerformanceWarning,
    GpujitWarning,
    InternalError,
    KernelReturnError,
    LoweringError,
    TypingError,
    UnsupportedError,
    current_target,
    default_stream,
    device_array,
    device_array_like,
    event,
    is_available,
    legacy_default_stream,
    per_thread_default_stream,
    set_target,
    stream,
    synchronize,
)

from . import types
from .types import (
    b1, boolean, bool_, byte, c8, c16, complex64, complex128, double, f2, f4, f8, float16,
    float32, float64, float_, half, i1, i2, i4, i8, int8, int16, int32, int64, int_, intc,
    intp, u1, u2, u4, u8, uint8, uint16, uint32, uint64, uintc, uintp, void,
)

__version__ = "0.1.0"

from ._decorators import CompiledKernel, jit
from ._kernel_api import TOP_LEVEL as _KERNEL_API, _Namespace

# The names defined in Python modules that `import gpujit` does not import:
# each module is imported at the first use of one of its names (__getattr__).
_LAZY = {name: module for module, names in (
    ("_compile", ("compile", "compile_ptx", "compile_ptx_for_current_device")),
    ("_memory", ("managed_array", "mapped_array", "pinned", "pinned_array", "to_device")),
    ("_devices", ("Device", "MemoryInfo", "current_context", "event_elapsed_time",
                  "get_current_device", "gpus", "list_devices", "memory_info", "select_device")),
    ("_interop", ("as_cuda_array", "from_dlpack", "is_cuda_array")),
    ("_info", ("cache_clear", "cache_info", "info", "libdevice_path")),
) for name in names}

__all__ = [
    "jit",   # + the kernel API (grid, threadIdx, ...), added from the intrinsic table below
    "to_device", "device_array", "device_array_like", "synchronize", "is_available",
    "compile_ptx", "compile", "compile_ptx_for_current_device",
    "set_target", "current_target", "select_device", "get_current_device", "stream", "event",
    "default_stream", "legacy_default_stream", "per_thread_default_stream",
    "event_elapsed_time", "Dispatcher", "DeviceArray", "Device", "gpus", "list_devices",
    "memory_info", "MemoryInfo", "current_context", "pinned_array", "mapped_array", "managed_array",
    "pinned", "from_dlpack", "as_cuda_array", "is_cuda_array",
    "GpujitError", "TypingError", "UnsupportedError", "KernelReturnError", "LoweringError",
    "InternalError", "GpujitWarning", "GpujitPerformanceWarning",
    "CudaError", "CudaOutOfMemoryError", "CudaCompileError", "CudaKernelFault",
    "CudaSupportError", "libdevice_path", "info", "types", "cache_info", "cache_clear",
    # numba's type objects (gpujit.types), for signatures and casts
    "b1", "boolean", "bool_", "byte", "c8", "c16", "complex64", "complex128", "double", "f2",
    "f4", "f8", "float16", "float32", "float64", "float_", "half", "i1", "i2", "i4", "i8",
    "int8", "int16", "int32", "int64", "int_", "intc", "intp", "u1", "u2", "u4", "u8", "uint8",
    "uint16", "uint32", "uint64", "uintc", "uintp", "void",
]

# The kernel API: grid, threadIdx, syncthreads, the namespaces atomic, shared, ...
globals().update(_KERNEL_API)
__all__ += _KERNEL_API


def __getattr__(name):
    """A name of _LAZY, from its module, imported now and kept in this module."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    value = globals()[name] = getattr(import_module("." + module, __name__), name)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
