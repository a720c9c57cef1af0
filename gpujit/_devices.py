"""Devices and contexts: ``Device``, ``select_device``,
``get_current_device``, ``list_devices``, ``gpus`` (numba's ``cuda.gpus``),
``memory_info``, ``current_context`` and numba's ``event_elapsed_time``.

A :class:`Device` is a snapshot of the driver's attributes of one device,
made from the extension's ``_device_info``; the current device is the
extension's state (per OS thread, the primary context of the device that
``select_device`` chose), never this module's.  Streams and events are the
extension's types (``gpujit.stream()``, ``gpujit.event()``).
"""
import operator
from collections import namedtuple
from collections.abc import Sequence

from . import _gpujit
from ._gpujit import current_target, synchronize


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

    __module__ = "gpujit"   # as users name it, in reprs and pickles

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

    Parameters
    ----------
    device_id : int
        The device's ordinal, as ``list_devices()`` numbers them.

    Returns
    -------
    Device
        The device now current.

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


class _Gpus(Sequence):
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
        i = operator.index(i)   # TypeError for what is not an integer
        if not -n <= i < n:
            raise IndexError(f"device {i} does not exist ({n} device{'s' * (n != 1)})")
        return Device(_gpujit._device_info(i % n))

    @property
    def current(self):
        return get_current_device()

    def __repr__(self):
        return f"<gpujit.gpus: {len(self)} device{'s' * (len(self) != 1)}>"


# The CUDA devices, as numba's ``cuda.gpus``: ``len(gpus)``, ``gpus[i]`` (a
# Device, also a context manager), iteration, ``gpus.current``.  Its entry
# is docs/api.md's: autodoc reads module data's docs from the source of the
# module it documents, gpujit/__init__.py, where gpus is not assigned.
gpus = _Gpus()

MemoryInfo = namedtuple("MemoryInfo", "free total", module="gpujit")
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

    numba's name for ``start.elapsed_time(end)``.

    Parameters
    ----------
    start, end : Event
        Two events from ``gpujit.event()``, recorded and completed.

    Returns
    -------
    float
        Milliseconds from ``start`` to ``end``.
    """
    return start.elapsed_time(end)
