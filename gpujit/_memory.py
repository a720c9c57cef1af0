"""Memory: copies to the device (``to_device``; ``device_array`` and
``device_array_like`` are the extension's) and host memory the GPU reaches:
pinned, mapped and managed NumPy arrays, and ``pinned``, which page-locks
existing arrays for a ``with`` block.

The host arrays are NumPy arrays over a buffer the extension allocates
(``_gpujit._host_alloc``: page-locked, mapped or managed on the CUDA target,
plain host memory on the CPU target), which frees it when the array's last
view dies.  NumPy is imported when one is made, not with gpujit.
"""
import contextlib
import math
import sys

from . import _gpujit
from ._gpujit import device_array_like


def _host_array(kind, shape, dtype, strides, order, **flags):
    import numpy as np
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if strides is None:
        nbytes = math.prod(shape) * dtype.itemsize
    else:
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape) or any(s < 0 for s in strides):
            raise ValueError(f"strides {strides} must be {len(shape)} byte counts >= 0")
        nbytes = 0 if 0 in shape else \
            sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize
    if nbytes > sys.maxsize:
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

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape, ``(n0, ...)``.
    dtype : dtype_like
        Its element type (one gpujit has a type for).
    strides : tuple of int, optional
        Bytes between elements along each axis, >= 0 (default: ``order``'s
        contiguous strides).
    order : {"C", "F"}
        The layout when ``strides`` is not given.

    Returns
    -------
    numpy.ndarray
        The array, over the memory, which is freed when its last view dies.

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

    Parameters
    ----------
    shape, dtype, strides, order
        As :func:`pinned_array`'s, and so is the array returned.
    wc : bool
        Write-combined memory.

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
    array to prefer when data moves back and forth often.

    Parameters
    ----------
    shape, dtype, strides, order
        As :func:`pinned_array`'s, and so is the array returned.
    attach_global : bool
        False attaches the memory to the host until a stream uses it.

    Raises
    ------
    CudaOutOfMemoryError
        If there is not that much memory to manage.
    """
    return _host_array("managed", shape, dtype, strides, order, attach_global=attach_global)


@contextlib.contextmanager
def pinned(*arylist):
    """pinned(*arylist) -> context manager

    Page-locks the memory of existing host arrays for the ``with`` block
    (numba's name), so their copies to and from the GPU are faster and, on
    a stream, asynchronous.  Nothing on the CPU target.

    Parameters
    ----------
    *arylist : numpy.ndarray
        Host arrays, each C- or F-contiguous (not written).

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
