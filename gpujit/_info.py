"""What gpujit runs with: ``info()`` (printed by ``python -m gpujit``),
``libdevice_path()``, and the persistent kernel cache's ``cache_info()`` and
``cache_clear()``.

gpujit/_libdevice.py and gpujit/_cache.py, which do the work, are imported
when these are called, not with gpujit.
"""
from . import _gpujit
from ._gpujit import GpujitError, current_target, is_available


def cache_info():
    """cache_info() -> dict

    The persistent kernel cache (``jit(cache=True)``, ``GPUJIT_CACHE=1``).

    Returns
    -------
    dict
        ``directory`` (str), ``entries`` (this user's entries there),
        ``bytes`` (their size), ``size_limit`` (bytes,
        ``GPUJIT_CACHE_SIZE``), and ``hits`` and ``misses``, the lookups of
        this process that found their kernel on disk and that compiled it.

    Raises
    ------
    ValueError
        If ``GPUJIT_CACHE_SIZE`` is not a size.
    """
    from . import _cache
    return _cache.info()


def cache_clear():
    """cache_clear() -> int

    Removes this user's entries from the persistent kernel cache.  Kernels
    already loaded keep running; the next process compiles them again.

    Returns
    -------
    int
        How many entries were removed.
    """
    from . import _cache
    return _cache.clear()


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

    What gpujit runs with, for bug reports; printed by ``python -m gpujit``.
    Never raises for a missing driver or GPU: those show as None and [].

    Returns
    -------
    dict
        ``gpujit``, ``python``, ``numpy`` and ``llvm`` versions, the
        execution ``target`` (``"cuda"`` or ``"cpu"``), ``driver`` (the CUDA
        driver's version as an int, 13000 for 13.0, or None without a
        driver), ``devices`` (a list of dicts: ``name``,
        ``compute_capability``, ``total_memory`` in bytes, ...) and
        ``libdevice`` (``{"path": str or None, "found_by": rule or None}``,
        see :func:`libdevice_path`), and ``cpu``, the CPU the CPU target
        compiles for: ``{"name": LLVM CPU name, "features": LLVM feature
        string, "isa": "avx512" | "avx2" | "avx" | "sse" (else the
        architecture), "vector_bits": the widest float32 vectors,
        "slow_masked_stores": whether its masked stores are microcode (AMD's
        AVX2), "chosen_by": "host" or the GPUJIT_CPU_NAME /
        GPUJIT_CPU_FEATURES variables, "host_name": the host's own CPU name,
        "host_isa": its instruction set}``, or a str saying why there is
        none.
    """
    import platform
    import sys

    import numpy

    from . import __version__, _libdevice
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
