"""Compiling without launching: ``compile_ptx``, numba-cuda's ``compile``
and ``compile_ptx_for_current_device``, which give a kernel's or a device
function's PTX for one signature, with or without a GPU.

The options are checked as ``jit``'s are (gpujit/_decorators.py); numba's
``abi``/``abi_info`` are translated here into the C function's ``c_name``
and ``abi_name``.  The inspection of compiled kernels (``inspect_types``,
``inspect_llvm``, ``inspect_asm``, ...) is the Dispatcher's, in C.
"""
from . import _gpujit
from ._decorators import (_boundscheck_option, _contract_option, _fastmath_bits, _flag,
                          _launch_bounds)
from ._devices import get_current_device


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
