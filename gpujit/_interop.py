"""Memory of other libraries, without copies: DLPack (``from_dlpack``; the
other way is ``DeviceArray.__dlpack__``) and numba's CUDA array interface
functions (``as_cuda_array``, ``is_cuda_array``).  The work is the
extension's (pymodule/); these are the documented Python faces.
"""
from . import _gpujit


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
