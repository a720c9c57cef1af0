"""The decorator: ``jit``, the checks of its options, and what it adds to
each kernel in Python.

``jit`` checks and translates numba's options (``fastmath`` as a set of
flag names, ``inline="always"``, ``contract=None`` from ``GPUJIT_CONTRACT``,
``boundscheck=None`` from ``GPUJIT_BOUNDSCHECK``, ...) into the compiler's,
makes the C :class:`~gpujit.Dispatcher`, and puts into its ``__dict__``
numba's dispatcher attributes that need no C (``overloads``,
``definitions``, ``specialize``, ``specialized``) and what pickling by value
needs to make the kernel again (``_jit_options``, ``_signature``; see
gpujit/_pickling.py).  The option checks (``_flag``, ``_fastmath_bits``,
``_contract_option``, ``_boundscheck_option``, ``_launch_bounds``) serve
``compile_ptx`` too (gpujit/_compile.py).
"""
import functools
import os
from collections.abc import Mapping
from types import MethodType

from . import _gpujit, types
from ._gpujit import current_target


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
        if isinstance(func, MethodType):   # it has a __code__, but binds `self` too
            raise TypeError(f"gpujit.jit needs a function, not the bound method "
                            f"{func.__qualname__}: a kernel has no `self`; decorate a plain "
                            f"function and pass the object's arrays as arguments")
        kernel = _gpujit.Dispatcher(func, **options)
        functools.update_wrapper(kernel, func)
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
    text = os.environ.get(env, "").strip()
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


class _Overloads(Mapping):
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

    __module__ = "gpujit"   # as users name it, in reprs and pickles

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
