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
"""
import contextlib as _contextlib
import functools as _functools
import math as _math
import operator as _operator
import os as _os
import sys as _sys
from collections import namedtuple as _namedtuple
from collections.abc import Mapping as _Mapping
from collections.abc import Sequence as _Sequence
from types import MethodType as _MethodType

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


# ---- the decorator -----------------------------------------------------------

def jit(func_or_sig=None, *, device=False, signature=None, debug=False, boundscheck=None,
        fastmath=False, contract=None, lineinfo=False, cache=False, inline=False, opt=True,
        launch_bounds=None, forceinline=False, max_registers=None):
    """jit(func=None, *, device=False, signature=None, debug=False, boundscheck=None, fastmath=False, contract=None, lineinfo=False, cache=False, inline=False, launch_bounds=None, forceinline=False, max_registers=None)

    Compile a Python function into a CUDA kernel.

    Use as ``@gpujit.jit``, ``@gpujit.jit(fastmath=True)`` or with a
    signature first, ``@gpujit.jit("void(float32[:], float32[:])")``.
    Without a signature the kernel is compiled at its first launch for the
    argument types of that launch, and again for each new combination of
    types (a *specialisation*).

    Parameters
    ----------
    func : function, signature or list of signatures, optional
        The kernel, or its signatures (as ``signature``).
    device : bool
        Compile a device function: callable from kernels (and other device
        functions) only, never launched.  A plain ``@jit`` function may be
        called from kernels too.
    signature : signature or list of signatures, optional
        Signatures to compile now, for the current target (the GPU, or the
        CPU target without one), as numba does: a string
        (``"void(float32[::1], float32[:, ::1], int64)"``; ``::1`` marks the
        contiguous dimension), the same made of type objects
        (``void(float32[::1], float32[:, ::1], int64)``, see
        :mod:`gpujit.types`) or a tuple of argument types
        (``(float32[::1], int64)``).  A device function's signature may name
        its return type (``"int32(int32, int32)"``).
    debug : bool
        Compile without optimisation, with run-time checks that raise on the
        host after the launch (which then waits for the kernel): a read of a
        local variable that no assignment came before raises
        ``UnboundLocalError``, a ``raise`` or failed ``assert`` in the kernel
        or its device functions raises that exception, each naming the line
        and the thread.  Also turns on ``boundscheck`` unless it is given.
    boundscheck : bool or None
        Check every array index (and variable tuple index) against its
        axis: a thread that indexes out of bounds stops there without the
        access, and the launch raises ``IndexError`` naming the array, the
        index, the axis and its size, the line and the thread.  ``None``
        (the default): ``GPUJIT_BOUNDSCHECK`` (0 or 1) when set when the
        kernel is decorated, else ``debug``.  Any other value raises
        ``TypeError``.
    fastmath : bool, set or dict
        numba's fast-math option.  ``True`` (numba's ``{'fast'}``) is
        numba-cuda's fastmath: float32 denormals flush to zero, float32
        division, ``sqrt`` and ``tanh`` are approximate, ``sin``, ``cos``,
        ``tan``, ``exp``, ``log``, ``log2``, ``log10`` and ``pow`` on float32
        are libdevice's fast versions, and every LLVM fast-math flag is set.
        A set of flag names, or a dict of name -> bool, picks some:
        ``'nnan'``, ``'ninf'``, ``'nsz'``, ``'reassoc'``, ``'contract'``
        (LLVM's flags), ``'arcp'`` (also: approximate float32 division),
        ``'afn'`` (also: the approximate functions above), ``'fast'`` (all,
        with flush-to-zero).
    contract : bool or None
        Whether ``a * b + c`` may be fused into one FMA (rounded once), as
        nvcc's ``-fmad=true`` and numba-cuda do by default.  ``None`` (the
        default) is True unless the environment variable
        ``GPUJIT_CONTRACT=0`` is set when the kernel is decorated.
        ``False`` rounds every operation as NumPy does, so the results
        match NumPy's bit for bit (``fastmath`` contracts regardless).
    lineinfo : bool
        Emit Python line numbers into the PTX (for profilers and compute-sanitizer).
    inline : bool or {"always", "never"}
        Always inline this function where a kernel calls it (True or
        numba's ``"always"``; ``"never"`` is False).
    forceinline : bool
        numba-cuda's other spelling of ``inline=True``.
    cache : bool
        Keep the compiled code in the persistent kernel cache on disk, so
        that another process launching the same kernel with the same
        argument types loads it instead of compiling it (a cubin on a GPU,
        an object file on the CPU target).  ``GPUJIT_CACHE=1`` caches every
        kernel, ``GPUJIT_CACHE=0`` none; see :func:`cache_info` and
        docs/cache.md.
    launch_bounds : int or tuple of 1 to 3 ints, optional
        As CUDA C's ``__launch_bounds__`` and numba-cuda's: the most threads
        per block the kernel is launched with, then optionally the fewest
        blocks per multiprocessor to fit and the most blocks per cluster.
        The PTX gets ``.maxntid``, ``.minnctapersm`` and ``.maxclusterrank``,
        so the register allocation can rely on them.
    max_registers : int, optional
        The most registers a thread of the kernel may use (PTX ``.maxnreg``).

    Returns
    -------
    Dispatcher
        Launch it as ``kernel[griddim, blockdim](*args)`` or
        ``kernel[griddim, blockdim, stream, sharedmem](*args)``; ``griddim`` and
        ``blockdim`` are an int or a tuple of 1 to 3 ints (blocks per grid,
        threads per block), ``sharedmem`` is dynamic shared memory in bytes.

    Raises
    ------
    TypingError, UnsupportedError
        At compile time (first launch, or now for an eager signature) when the
        kernel's types do not check or it uses Python gpujit does not compile.
    IndexError
        After a launch of a ``boundscheck`` kernel in which a thread indexed
        an array out of bounds (the first such access).
    ValueError
        At a launch with more threads per block than ``launch_bounds`` allows;
        now, for a fastmath flag numba does not have (the message names it)
        or a ``GPUJIT_CONTRACT`` or ``GPUJIT_BOUNDSCHECK`` other than 0 or 1.
    TypeError
        Now, for a bool option (``device``, ``debug``, ``lineinfo``,
        ``cache``, ``opt``, ``forceinline``; ``contract`` and ``boundscheck``
        also take None) given anything but True or False.

    Notes
    -----
    The dispatcher (:class:`Dispatcher`) has numba's inspection API:
    ``overloads`` (signature → compiled kernel, with ``definitions`` its older
    name), ``specialize(*args)``, ``inspect_types()``, ``inspect_llvm()`` and
    ``inspect_asm()``, what a kernel uses (``get_regs_per_thread()``,
    ``get_shared_mem_per_block()``, ...), and ``forall(n)``;
    ``suggest_config(n)`` gives the occupancy calculator's launch
    configuration.

    Globals the kernel reads are frozen when it is compiled; after changing
    one, call ``kernel.recompile()``. Host NumPy arguments are copied to the
    device before the launch and, if the kernel may write them, back after it,
    and the call then synchronizes; DeviceArray and ``__cuda_array_interface__``
    arguments are passed without copies and the launch stays asynchronous.
    """
    if isinstance(func_or_sig, (str, list, tuple, types.Signature)):
        if signature is not None:
            raise TypeError("jit() got a signature twice (positional and signature=)")
        signature, func_or_sig = func_or_sig, None

    for name, value in (("device", device), ("debug", debug), ("lineinfo", lineinfo),
                        ("cache", cache), ("opt", opt), ("forceinline", forceinline)):
        _flag(name, value)
    contract = _contract_option(contract)
    boundscheck = _boundscheck_option(boundscheck, debug)
    jit_options = dict(device=device, debug=debug, fastmath=fastmath, contract=contract,
                       lineinfo=lineinfo, inline=inline, opt=opt, launch_bounds=launch_bounds,
                       forceinline=forceinline, max_registers=max_registers, cache=cache,
                       boundscheck=boundscheck)
    if inline not in (True, False, "always", "never"):
        raise ValueError(f"inline must be a bool, 'always' or 'never', not {inline!r}")
    options = dict(debug=bool(debug), fastmath=_fastmath_bits(fastmath), contract=contract,
                   lineinfo=bool(lineinfo), opt=bool(opt) and not debug, device=bool(device),
                   inline=inline in (True, "always") or bool(forceinline), cache=bool(cache),
                   boundscheck=boundscheck)
    if launch_bounds is not None:
        options["launch_bounds"] = _launch_bounds(launch_bounds)
    if max_registers is not None:
        if not isinstance(max_registers, int) or max_registers <= 0:
            raise ValueError(f"max_registers must be a positive int, not {max_registers!r}")
        options["max_registers"] = max_registers

    def decorate(func):
        if isinstance(func, _MethodType):   # it has a __code__, but binds `self` too
            raise TypeError(f"gpujit.jit needs a function, not the bound method "
                            f"{func.__qualname__}: a kernel has no `self`; decorate a plain "
                            f"function and pass the object's arrays as arguments")
        kernel = _gpujit.Dispatcher(func, **options)
        _functools.update_wrapper(kernel, func)
        _add_dispatcher_api(kernel, jit_options)
        # what pickling by value needs to make the kernel again (gpujit/_pickling.py)
        kernel.__dict__.update(_jit_options=jit_options, _signature=signature)
        if signature is not None:   # a device function's: compiled where kernels call it
            signatures = _signature_list(signature)
            kernel._set_signatures(signatures)
            # numba's rule: one signature, not in a list, makes a specialized kernel
            kernel.__dict__["specialized"] = len(signatures) == 1 and \
                not isinstance(signature, list)
        return kernel

    if func_or_sig is None:
        return decorate
    if not callable(func_or_sig):
        raise TypeError(f"jit() needs a function or a signature string, not "
                        f"{type(func_or_sig).__name__}")
    return decorate(func_or_sig)


_FASTMATH_FLAGS = _gpujit._fastmath_flags()   # numba's flag names -> the compiler's bits


def _fastmath_bits(fastmath):
    """numba's fastmath option (a bool, or a set or dict of flag names) as
    the compiler's bits; ValueError names a flag numba does not have."""
    if isinstance(fastmath, dict):
        names, chosen = set(fastmath), {name for name, on in fastmath.items() if on}
    elif isinstance(fastmath, (set, frozenset)):
        names = chosen = set(fastmath)
    elif fastmath in (True, False):
        names = chosen = {"fast"} if fastmath else set()
    else:
        raise TypeError(f"fastmath must be a bool, or a set or dict of flag names, not "
                        f"{type(fastmath).__name__}")
    unknown = sorted(repr(name) for name in names if name not in _FASTMATH_FLAGS)
    if unknown:
        known = ", ".join(repr(name) for name in sorted(_FASTMATH_FLAGS))
        raise ValueError(f"unrecognized fastmath flag{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)}: numba's flags are {known}")
    bits = 0
    for name in chosen:
        bits |= _FASTMATH_FLAGS[name]
    return bits


def _flag(name, value, env=None, off=None):
    """A bool jit option: True or False, else TypeError (a str such as "no"
    would otherwise be true).  With ``env``, None is taken too and gives
    that environment variable's setting, read now: True (1), False (0, what
    ``off`` says) or None (unset); another value is a ValueError."""
    if isinstance(value, bool):
        return value
    if value is not None or env is None:
        allowed = f"True, False or None ({env} decides)" if env else "True or False"
        raise TypeError(f"{name} must be {allowed}, not {value!r}")
    text = _os.environ.get(env, "").strip()
    if text not in ("", "0", "1"):
        raise ValueError(f"{env} must be 0 ({off}) or 1, not {text!r}")
    return text == "1" if text else None


def _contract_option(contract):
    """The contract option: as given, or for None the global default, off
    when the environment has GPUJIT_CONTRACT=0 (read now)."""
    on = _flag("contract", contract, "GPUJIT_CONTRACT", "no contraction")
    return True if on is None else on


def _boundscheck_option(boundscheck, debug):
    """The boundscheck option: as given, or for None the global setting,
    GPUJIT_BOUNDSCHECK (0 or 1, read now), as numba's NUMBA_BOUNDSCHECK;
    without it, on under debug (as numba's CPU target)."""
    on = _flag("boundscheck", boundscheck, "GPUJIT_BOUNDSCHECK", "no bounds checks")
    return bool(debug) if on is None else on


def _launch_bounds(bounds):
    """launch_bounds as (max threads per block, min blocks per SM, max blocks
    per cluster), 0 for each one not given."""
    items = (bounds,) if isinstance(bounds, int) else \
        tuple(bounds) if isinstance(bounds, (tuple, list)) else ()
    if not 1 <= len(items) <= 3 or not all(isinstance(b, int) and b > 0 for b in items):
        raise ValueError(f"launch_bounds must be a positive int or a tuple of 1 to 3 "
                         f"positive ints (max threads per block, min blocks per "
                         f"multiprocessor, max blocks per cluster), not {bounds!r}")
    return items + (0,) * (3 - len(items))


class _Overloads(_Mapping):
    """kernel.overloads: {signature tuple: CompiledKernel}, as numba's; a view
    of kernel.signatures, so it shows every specialisation compiled so far."""

    def __init__(self, kernel):
        self._kernel = kernel

    def __getitem__(self, signature):
        if signature not in self._kernel.signatures:
            raise KeyError(signature)
        return CompiledKernel(self._kernel, signature)

    def __iter__(self):
        return iter(self._kernel.signatures)

    def __len__(self):
        return len(self._kernel.signatures)

    def __repr__(self):
        return repr(dict(self))


class CompiledKernel:
    """CompiledKernel(dispatcher, signature)

    One specialisation of a kernel, as numba's ``kernel.overloads[sig]``:
    its ``signature`` (a tuple of type names, a key of
    ``kernel.signatures``), ``py_func``, and the inspection methods of that
    signature alone.
    """

    def __init__(self, dispatcher, signature):
        self._dispatcher = dispatcher
        self.signature = signature
        self.argtypes = signature
        self.py_func = dispatcher.py_func

    def inspect_asm(self):
        """inspect_asm() -> str: the PTX."""
        return self._dispatcher.inspect_asm(self.signature)

    def inspect_llvm(self):
        """inspect_llvm() -> str: the optimised LLVM IR for the current target."""
        return self._dispatcher.inspect_llvm(self.signature)

    def inspect_types(self, file=None):
        """inspect_types(file=None) -> None: writes the type of every variable."""
        self._dispatcher.inspect_types(self.signature, file=file)

    def __repr__(self):
        return f"<compiled {self.py_func.__qualname__}{self.signature}>"


def _add_dispatcher_api(kernel, jit_options):
    """Gives kernel numba's dispatcher attributes that are plain Python:
    overloads (and its older name definitions), specialize(), specialized.
    The Dispatcher type is immutable, so they live in the kernel's
    __dict__."""
    specializations = {}

    def specialize(*args):
        """specialize(*args) -> Dispatcher

        A kernel compiled now for the types of ``args`` (as
        ``gpujit.types.typeof`` gives them) and for those alone, as numba's:
        a launch with other argument types raises TypeError.  Made once per
        target and set of types.

        Raises
        ------
        RuntimeError
            If this kernel is itself a specialisation.
        """
        if kernel.specialized:
            raise RuntimeError("Dispatcher already specialized")
        argtypes = tuple(types.typeof(a) for a in args)
        key = (current_target(), argtypes)
        if key not in specializations:
            special = jit(argtypes, **jit_options)(kernel.py_func)
            special.__dict__["specialized"] = True
            specializations[key] = special
        return specializations[key]

    overloads = _Overloads(kernel)
    kernel.__dict__.update(overloads=overloads, definitions=overloads, specialize=specialize,
                           specialized=False)


def _signature_list(signature):
    """jit()'s signature argument as a list of signatures: a list (or a tuple
    of strings) holds several; a str, a signature object or a tuple of types
    is one."""
    if isinstance(signature, list) or isinstance(signature, tuple) and signature and \
            all(isinstance(s, (str, types.Signature)) for s in signature):
        return list(signature)
    return [signature]


# ---- host functions with numba's parameters -----------------------------------

# ---- host memory the GPU reaches ----------------------------------------------------

def _host_array(kind, shape, dtype, strides, order, **flags):
    import numpy as np
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if strides is None:
        nbytes = _math.prod(shape) * dtype.itemsize
    else:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape) or any(s < 0 for s in strides):
            raise ValueError(f"strides {strides} must be {len(shape)} byte counts >= 0")
        nbytes = 0 if 0 in shape else \
            sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize
    if nbytes > _sys.maxsize:
        raise ValueError(f"array is too big: {nbytes} bytes")
    memory = _gpujit._host_alloc(kind, nbytes, dtype, **flags)   # checks the dtype
    return np.ndarray(shape, dtype, buffer=memory, strides=strides, order=order)


def pinned_array(shape, dtype=float, strides=None, order="C"):
    """pinned_array(shape, dtype=np.float64, strides=None, order='C') -> numpy.ndarray

    An uninitialised NumPy array in page-locked host memory (numba's name):
    copies between it and the GPU run at full bus speed and, given a stream,
    asynchronously (``d.copy_to_host(a, stream=s)`` returns before the copy
    ends; synchronize the stream before reading ``a``).  A kernel given it
    still copies it in and out, as any host array.  On the CPU target it is
    ordinary host memory.

    Raises
    ------
    CudaOutOfMemoryError
        If the driver cannot page-lock that much memory.
    """
    return _host_array("pinned", shape, dtype, strides, order)


def mapped_array(shape, dtype=float, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    """mapped_array(shape, dtype=np.float64, strides=None, order='C', stream=0, portable=False, wc=False) -> numpy.ndarray

    An uninitialised NumPy array in page-locked host memory mapped into the
    GPU's address space (numba's name): a kernel given it reads and writes it
    in place, over the bus, with no copy, and the launch stays asynchronous,
    so synchronize before the host reads what a kernel wrote.  ``wc=True``
    makes the memory write-combined (fast for the host to write and the GPU
    to read, slow for the host to read).  Mapped memory is portable to every
    context (``portable`` is accepted for numba's sake); ``stream`` is
    unused, as in numba.

    Raises
    ------
    CudaOutOfMemoryError
        If the driver cannot page-lock that much memory.
    """
    return _host_array("mapped", shape, dtype, strides, order, wc=wc)


def managed_array(shape, dtype=float, strides=None, order="C", stream=0, attach_global=True):
    """managed_array(shape, dtype=np.float64, strides=None, order='C', stream=0, attach_global=True) -> numpy.ndarray

    An uninitialised NumPy array in unified (managed) memory (numba's name):
    the host and every GPU use the same address, the driver migrating pages
    on use, so a kernel given it works in place with no explicit copy; the
    launch stays asynchronous (synchronize before the host reads).  The
    array to prefer when data moves back and forth often.  ``attach_global``
    False attaches the memory to the host until a stream uses it.

    Raises
    ------
    CudaOutOfMemoryError
        If there is not that much memory to manage.
    """
    return _host_array("managed", shape, dtype, strides, order, attach_global=attach_global)


@_contextlib.contextmanager
def pinned(*arylist):
    """``pinned(*arylist)``: a context manager that page-locks the memory of
    existing contiguous host arrays for the ``with`` block (numba's name),
    so their copies to and from the GPU are faster and, on a stream,
    asynchronous.  Nothing on the CPU target.

    Raises
    ------
    TypeError
        If an array is not contiguous.
    CudaError
        If the driver cannot page-lock the memory.
    """
    held = []
    try:
        for ary in arylist:
            held.append(_gpujit._host_register(ary))
        yield
    finally:
        for registration in reversed(held):
            registration.close()


def to_device(obj, stream=0, copy=True, to=None):
    """to_device(obj, stream=0, copy=True, to=None) -> DeviceArray

    Copies a host array to the device, as numba's ``cuda.to_device``.

    Parameters
    ----------
    obj : array_like
        The host array (any shape, dtype and layout; not written).
    stream : Stream or 0
        The stream of the copy (0: the default stream, synchronous).
    copy : bool
        False: allocate the device array (``obj``'s shape and dtype; F order
        when ``obj`` is F-contiguous, else C) without copying, its contents
        undefined.  An F-contiguous ``obj`` stays F-ordered when copied too.
    to : DeviceArray, optional
        Copy into this device array (of ``obj``'s shape and dtype) and
        return it, instead of allocating one.

    Returns
    -------
    DeviceArray
        ``to``, or a new device array.

    Raises
    ------
    ValueError
        If ``to``'s shape does not fit ``obj``'s (``to`` may have any layout).
    """
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    if not copy:
        import numpy

        return device_array_like(numpy.asarray(obj), stream=stream)
    return _gpujit.to_device(obj, stream)


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=True, abi="numba", abi_info=None, launch_bounds=None,
                contract=None, boundscheck=None):
    """compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False, cc=None, opt=True, abi="numba", abi_info=None, launch_bounds=None, contract=None, boundscheck=None) -> (str, str)

    Compiles ``pyfunc`` for one signature to PTX, without a GPU, as numba's
    ``cuda.compile_ptx``.

    Parameters
    ----------
    pyfunc : function or Dispatcher
    sig : signature
        A string (``"void(float32[:], int64)"``), a signature made of
        :mod:`gpujit.types` objects, or a tuple of argument types.
    device : bool
        Compile a device function (a PTX ``.func`` that returns its value)
        rather than a kernel (``.entry``).
    cc : tuple of int, optional
        The compute capability (default ``(9, 0)``).
    abi : {"numba", "c"}
        The device function's calling convention.  gpujit has one: the C
        one (arguments and the return value by value), so both give it;
        ``"c"`` names the function as C would, ``pyfunc.__name__`` or
        ``abi_info["abi_name"]``, where ``"numba"`` gives gpujit's
        ``_gj_<qualname>``.  A ``__name__`` has each character outside
        ASCII letters, digits and ``_`` made ``_``, as PTX names allow no
        other (``<lambda>`` gives ``_lambda_``).
    abi_info : dict, optional
        ``{"abi_name": name}``: the PTX name of a ``"c"`` ABI function, a C
        identifier (ASCII letters, digits and ``_``, not starting with a
        digit, not ``_`` alone) other than the functions gpujit's PTX calls
        (``vprintf``, libdevice's ``__nv_*``).
    launch_bounds : int or tuple of 1 to 3 ints, optional
        As :func:`jit`'s.
    fastmath, contract, boundscheck
        As :func:`jit`'s: ``fastmath`` a bool, set or dict of numba's flags;
        ``contract`` None for ``GPUJIT_CONTRACT``'s default (on);
        ``boundscheck`` None for ``GPUJIT_BOUNDSCHECK``'s, else ``debug``.

    Returns
    -------
    (str, str)
        The PTX, and the name of the return type (``"none"`` for a kernel).

    Raises
    ------
    NotImplementedError
        For an ABI other than "numba" and "c", or the C ABI for a kernel
        (numba's errors).
    TypeError
        For an ``abi_info`` that is not a dict, or an ``abi_name`` that is
        not a str.
    ValueError
        For an unknown fastmath flag, named in the message; for an
        ``abi_name`` that is not such a name, or a ``__name__`` that gives
        none (empty, or starting with a digit), named with the reason.
    TypingError, UnsupportedError
        If ``pyfunc`` does not compile for ``sig``.
    InternalError
        If LLVM stops with a fatal error (a gpujit bug): its message.
    """
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    for name, value in (("debug", debug), ("lineinfo", lineinfo), ("device", device),
                        ("opt", opt)):
        _flag(name, value)
    options = dict(fastmath=_fastmath_bits(fastmath), contract=_contract_option(contract),
                   lineinfo=lineinfo, debug=debug, opt=opt and not debug,
                   device=device, boundscheck=_boundscheck_option(boundscheck, debug))
    if cc is not None:
        options["cc"] = tuple(cc)
    if abi == "c":
        if abi_info is not None and not isinstance(abi_info, dict):
            raise TypeError(f"abi_info must be a dict, not {type(abi_info).__name__}")
        abi_name = (abi_info or {}).get("abi_name")
        if abi_name is None:
            options["c_name"] = pyfunc.__name__
        elif isinstance(abi_name, str):
            options["abi_name"] = abi_name
        else:
            raise TypeError(f'abi_info["abi_name"] must be a str, not {type(abi_name).__name__}')
    if launch_bounds is not None:
        options["launch_bounds"] = _launch_bounds(launch_bounds)
    return _gpujit.compile_ptx(pyfunc, sig, **options)


def compile(pyfunc, sig, debug=False, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=True, abi="c", abi_info=None, output="ptx", launch_bounds=None, contract=None):
    """compile(pyfunc, sig, debug=False, lineinfo=False, device=True, fastmath=False, cc=None, opt=True, abi="c", abi_info=None, output="ptx", launch_bounds=None, contract=None) -> (str, str)

    numba-cuda's ``cuda.compile``: :func:`compile_ptx` with its other
    defaults, a device function with the C ABI.

    Raises
    ------
    NotImplementedError
        For an ``output`` other than ``"ptx"`` (numba's ``"ltoir"`` needs
        NVIDIA's NVVM, which gpujit does not use).
    """
    if output != "ptx":
        raise NotImplementedError(f"Unsupported output type: {output}")
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                       launch_bounds=launch_bounds, contract=contract)


def compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False,
                                   fastmath=False, opt=True, abi="numba", abi_info=None,
                                   launch_bounds=None, contract=None):
    """compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False, opt=True, abi="numba", abi_info=None, launch_bounds=None, contract=None) -> (str, str)

    :func:`compile_ptx` for the compute capability of the current GPU, as
    numba's.

    Raises
    ------
    CudaSupportError
        If there is no GPU (use :func:`compile_ptx` with ``cc``).
    """
    cc = get_current_device().compute_capability
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                       launch_bounds=launch_bounds, contract=contract)


# ---- kernel API objects --------------------------------------------------------
#
# The compiler recognises these objects by their `_gpujit_intrinsic` name
# (pymodule/codeview.c freezes globals); in Python they only raise.  They are
# made from the compiler's intrinsic table (compiler/intrinsics.h), so a row
# added there needs no edit here.

class _Intrinsic:
    def __init__(self, name, doc):
        self._gpujit_intrinsic = name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"gpujit.{self._gpujit_intrinsic} can only be used inside a "
                           f"kernel compiled by gpujit.jit")

    def __repr__(self):
        return f"<gpujit intrinsic {self._gpujit_intrinsic}>"

    def __reduce__(self):
        return self._gpujit_intrinsic


class _Dim3(_Intrinsic):
    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"gpujit.{self._gpujit_intrinsic}.{attr} can only be read "
                               f"inside a kernel compiled by gpujit.jit")
        raise AttributeError(attr)


class _Namespace:
    """A namespace of kernel API objects (``gpujit.atomic``)."""

    def __init__(self, name):
        self._gpujit_intrinsic = name

    def __repr__(self):
        return f"<gpujit namespace {self._gpujit_intrinsic}>"

    def __reduce__(self):
        return self._gpujit_intrinsic


def _make_kernel_api():
    """Builds gpujit's kernel API objects (and their ``__all__`` entries) from
    the compiler's intrinsic table."""
    made = {}
    for name, kind, params, doc in _gpujit._intrinsics():
        obj = (_Dim3 if kind == "dim3" else _Intrinsic)(name, doc + "\n\nKernel code only.")
        *outer, last = name.split(".")
        if not outer or len(outer) == 1 and outer[0] not in made:
            __all__.append(outer[0] if outer else last)
        scope = globals()
        for k in range(len(outer)):
            ns_name = ".".join(outer[:k + 1])
            if ns_name not in made:
                made[ns_name] = _Namespace(ns_name)
                if k == 0:
                    globals()[outer[0]] = made[ns_name]
                else:
                    setattr(made[".".join(outer[:k])], outer[k], made[ns_name])
            scope = vars(made[ns_name])
        scope[last] = obj


_make_kernel_api()


# ---- devices ---------------------------------------------------------------------

class Device:
    """Properties of a CUDA device (as returned by ``get_current_device()``).

    Attributes
    ----------
    id : int
        Device ordinal.
    name : str
    compute_capability : tuple of int
        ``(major, minor)``, e.g. ``(9, 0)``.
    MAX_THREADS_PER_BLOCK, WARP_SIZE, MULTIPROCESSOR_COUNT : int
    MAX_BLOCK_DIM_X/Y/Z, MAX_GRID_DIM_X/Y/Z : int
    MAX_SHARED_MEMORY_PER_BLOCK : int
        Bytes of shared memory every block may have (48 KiB).
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN : int
        Bytes of shared memory (static plus dynamic) a block may have; a launch
        above ``MAX_SHARED_MEMORY_PER_BLOCK`` opts in for it (227 KiB on an H200).
    total_memory : int
        Bytes.
    pci_bus_id : str
        ``"domain:bus:device.0"`` in hex, as ``nvidia-smi`` shows it.

    A Device is a context manager: ``with gpujit.gpus[1]:`` makes device 1
    current on this thread for the block, and the device current before it
    again after.
    """

    def __init__(self, info):
        self.id = info["id"]
        self.name = info["name"]
        self.compute_capability = tuple(info["compute_capability"])
        self.MAX_THREADS_PER_BLOCK = info["max_threads_per_block"]
        self.MAX_BLOCK_DIM_X, self.MAX_BLOCK_DIM_Y, self.MAX_BLOCK_DIM_Z = info["max_block_dim"]
        self.MAX_GRID_DIM_X, self.MAX_GRID_DIM_Y, self.MAX_GRID_DIM_Z = info["max_grid_dim"]
        self.MAX_SHARED_MEMORY_PER_BLOCK = info["max_shared_memory_per_block"]
        self.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = info["max_shared_memory_per_block_optin"]
        self.WARP_SIZE = info["warp_size"]
        self.MULTIPROCESSOR_COUNT = info["multiprocessor_count"]
        self.total_memory = info["total_memory"]
        self.driver_version = info["driver_version"]
        self.pci_bus_id = info["pci_bus_id"]
        self._previous = []

    def __enter__(self):
        self._previous.append(_gpujit._device_info()["id"])
        select_device(self.id)
        return self

    def __exit__(self, *exc):
        select_device(self._previous.pop())
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        major, minor = self.compute_capability
        return f"<gpujit.Device {self.id} '{self.name}' (sm_{major}{minor})>"


def select_device(device_id):
    """select_device(device_id) -> Device

    Make device ``device_id`` current for the calling thread: later launches,
    allocations and copies on this thread use it.

    Raises
    ------
    CudaSupportError
        If there is no driver or device.
    CudaError
        If ``device_id`` does not exist (name ``CUDA_ERROR_INVALID_DEVICE``).
    """
    return Device(_gpujit.select_device(device_id))


def get_current_device():
    """get_current_device() -> Device

    The calling thread's current device (device 0 until ``select_device``).

    Raises
    ------
    CudaSupportError
        If there is no driver or device.
    """
    return Device(_gpujit._device_info())


def list_devices():
    """list_devices() -> list of Device

    Every CUDA device the driver shows (``CUDA_VISIBLE_DEVICES`` applies),
    by ordinal; an empty list without a driver or device.
    """
    return [Device(_gpujit._device_info(i)) for i in range(_gpujit._device_count())]


class _Gpus(_Sequence):
    """``gpujit.gpus``: the CUDA devices, as numba's ``cuda.gpus``.

    ``len(gpus)``, ``gpus[i]`` (a :class:`Device`, also a context manager:
    ``with gpus[1]: ...``), iteration, and ``gpus.current`` (the calling
    thread's device).
    """

    def __len__(self):
        return _gpujit._device_count()

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        i = _operator.index(i)   # TypeError for what is not an integer
        if not -n <= i < n:
            raise IndexError(f"device {i} does not exist ({n} device{'s' * (n != 1)})")
        return Device(_gpujit._device_info(i % n))

    @property
    def current(self):
        return get_current_device()

    def __repr__(self):
        return f"<gpujit.gpus: {len(self)} device{'s' * (len(self) != 1)}>"


#: The CUDA devices, as numba's ``cuda.gpus``: ``len(gpus)``, ``gpus[i]`` (a
#: :class:`Device`, also a context manager), iteration, ``gpus.current``.
gpus = _Gpus()

MemoryInfo = _namedtuple("MemoryInfo", "free total")
MemoryInfo.__doc__ = "Free and total bytes of a device's memory."


def memory_info():
    """memory_info() -> MemoryInfo(free, total)

    Free and total bytes of the current device's memory (of the host's
    memory on the CPU target), as numba's
    ``cuda.current_context().get_memory_info()``.
    """
    return MemoryInfo(*_gpujit._memory_info())


class _Context:
    """The current device's context, as far as numba code asks for it:
    ``get_memory_info()``, ``synchronize()`` and ``device``."""

    def get_memory_info(self):
        return memory_info()

    def synchronize(self):
        synchronize()

    @property
    def device(self):
        return get_current_device()

    def __repr__(self):
        return f"<gpujit context of {current_target()}>"


def current_context():
    """current_context() -> context

    numba's ``cuda.current_context()``: an object with ``get_memory_info()``
    (``MemoryInfo(free, total)`` bytes), ``synchronize()`` and ``device``.
    """
    return _Context()


def event_elapsed_time(start, end):
    """event_elapsed_time(start, end) -> float

    Milliseconds between two recorded, completed events (numba's name for
    ``start.elapsed_time(end)``).
    """
    return start.elapsed_time(end)


# ---- memory of other libraries -----------------------------------------------------

def from_dlpack(obj):
    """from_dlpack(obj) -> DeviceArray

    A view of another library's array through DLPack, without copying: a
    PyTorch or JAX tensor, a CuPy or NumPy array (anything with
    ``__dlpack__`` and ``__dlpack_device__``), or a DLPack capsule not yet
    consumed.  The view keeps the producer's memory alive until it dies;
    writes through either are seen by the other.

    Parameters
    ----------
    obj : array or PyCapsule
        On the CUDA target, GPU memory (DLPack kDLCUDA or kDLCUDAManaged),
        shape ``(n0, ...)``, any strides; its producer is asked to order
        its pending work before gpujit's legacy default stream (``stream=1``).
        On the CPU target, host memory (kDLCPU, e.g. a NumPy array).

    Returns
    -------
    DeviceArray
        Same shape, dtype and strides, in the producer's memory; read-only
        if the producer said so (a kernel that writes it raises ValueError).

    Raises
    ------
    BufferError
        If the memory is not where the current target runs kernels (the
        message names both DLPack device types), the dtype has no gpujit
        type, or a capsule was already consumed.
    TypeError
        If obj has no ``__dlpack__`` and is not a DLPack capsule.
    """
    return _gpujit.from_dlpack(obj)


def as_cuda_array(obj, sync=True):
    """as_cuda_array(obj, sync=True) -> DeviceArray

    A view of an object exporting ``__cuda_array_interface__`` (numba's
    function), without copying; the view holds a reference to obj.

    Parameters
    ----------
    obj : object with __cuda_array_interface__
        GPU memory of shape ``(n0, ...)`` (a CuPy array, a PyTorch CUDA
        tensor, a numba device array, ...).
    sync : bool
        If the interface (version 3) names a ``stream``, wait for it
        first, as numba does, so that the producer's pending writes are
        done.

    Returns
    -------
    DeviceArray
        Same shape, dtype and strides; ``base`` keeps obj alive.

    Raises
    ------
    TypeError
        If obj has no ``__cuda_array_interface__``, the interface is
        malformed, or the current target is the CPU (the memory is a GPU's).
    """
    return _gpujit.as_cuda_array(obj, sync)


def is_cuda_array(obj):
    """is_cuda_array(obj) -> bool

    True if obj exports ``__cuda_array_interface__`` (numba's test).
    """
    return hasattr(obj, "__cuda_array_interface__")


# ---- the persistent kernel cache ---------------------------------------------------

def cache_info():
    """cache_info() -> dict

    The persistent kernel cache (``jit(cache=True)``, ``GPUJIT_CACHE=1``):
    ``directory`` (str), ``entries`` (this user's entries there),
    ``bytes`` (their size), ``size_limit`` (bytes, ``GPUJIT_CACHE_SIZE``),
    and ``hits`` and ``misses``, the lookups of this process that found
    their kernel on disk and that compiled it.

    Raises
    ------
    ValueError
        If ``GPUJIT_CACHE_SIZE`` is not a size.
    """
    from . import _cache
    return _cache.info()


def cache_clear():
    """cache_clear() -> int

    Removes this user's entries from the persistent kernel cache and returns
    how many.  Kernels already loaded keep running; the next process
    compiles them again.
    """
    from . import _cache
    return _cache.clear()


# ---- the installation ------------------------------------------------------------

def libdevice_path():
    """libdevice_path() -> str or None

    The ``libdevice.10.bc`` (NVIDIA's math library, LLVM bitcode) that kernels
    compiled for a GPU link when they call math functions, or None if there is
    none (kernels without math functions still compile; the CPU target never
    needs it).  Searched in this order: ``GPUJIT_LIBDEVICE``; the
    ``nvidia-nvvm`` wheel (``pip install "gpujit[cuda]"``) or CUDA 12's
    ``nvidia-cuda-nvcc-cu12`` in this environment; ``CUDA_HOME``,
    ``CUDA_PATH``; ``/usr/local/cuda`` and the other usual toolkit locations
    (skipped with ``GPUJIT_IGNORE_CUDA_TOOLKIT=1``).  ``info()["libdevice"]``
    also says which rule found it.
    """
    from . import _libdevice
    return _libdevice.find()[1]


def info():
    """info() -> dict

    What gpujit runs with, for bug reports: ``gpujit``, ``python``,
    ``numpy`` and ``llvm`` versions, the execution ``target`` (``"cuda"`` or
    ``"cpu"``), ``driver`` (the CUDA driver's version as an int, 13000 for
    13.0, or None without a driver), ``devices`` (a list of dicts: ``name``,
    ``compute_capability``, ``total_memory`` in bytes, ...) and
    ``libdevice`` (``{"path": str or None, "found_by": rule or None}``, see
    :func:`libdevice_path`), and ``cpu``, the CPU the CPU target compiles
    for: ``{"name": LLVM CPU name, "features": LLVM feature string, "isa":
    "avx512" | "avx2" | "avx" | "sse" (else the architecture), "vector_bits":
    the widest float32 vectors, "slow_masked_stores": whether its masked
    stores are microcode (AMD's AVX2), "chosen_by": "host" or the GPUJIT_CPU_NAME /
    GPUJIT_CPU_FEATURES variables, "host_name": the host's own CPU name,
    "host_isa": its instruction set}``, or a str saying why there is none.
    Printed by ``python -m gpujit``.

    Never raises for a missing driver or GPU: those show as None and [].
    """
    import platform
    import sys

    import numpy

    from . import _libdevice
    found_by, path = _libdevice.find()
    try:
        cpu = _gpujit._cpu_info()
    except GpujitError as exc:   # no JIT, or a GPUJIT_CPU_* choice refused
        cpu = str(exc)
    count = _gpujit._device_count() if is_available() else 0
    devices = [_gpujit._device_info(i) for i in range(count)]
    return {
        "gpujit": __version__,
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "numpy": numpy.__version__,
        "llvm": _gpujit.llvm_version,
        "target": current_target(),
        "driver": devices[0]["driver_version"] if devices else None,
        "devices": devices,
        "libdevice": {"path": path, "found_by": found_by},
        "cpu": cpu,
    }
