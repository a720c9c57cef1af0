"""Where gpujit finds libdevice, NVIDIA's math library for the GPU.

libdevice (``libdevice.10.bc``, LLVM bitcode) provides the ``__nv_*``
functions that kernels calling ``math.sin``, ``math.exp``, ... link against
when compiled for a GPU.  It ships with every CUDA toolkit and, for users
who have only a driver, in NVIDIA's ``nvidia-nvvm`` wheel on PyPI
(``pip install "gpujit[cuda]"`` pulls it in).  The CPU target does not need it.

The search order, first match wins:

1. ``GPUJIT_LIBDEVICE``: the file, or a directory holding ``libdevice.10.bc``
   (when set, nothing else is tried);
2. NVIDIA's wheels in this interpreter's environment (every ``sys.path``
   entry): ``nvidia/cu<N>/nvvm/libdevice/`` of ``nvidia-nvvm`` (CUDA 13 and
   later; the highest N first), then ``nvidia/cuda_nvcc/nvvm/libdevice/`` of
   CUDA 12's ``nvidia-cuda-nvcc-cu12``;
3. ``CUDA_HOME``, then ``CUDA_PATH`` (``<root>/nvvm/libdevice/``);
4. the usual toolkit locations: ``/usr/local/cuda``, the newest
   ``/usr/local/cuda-X.Y``, ``/usr/lib/cuda`` and Debian's
   ``/usr/lib/nvidia-cuda-toolkit/libdevice``.

``GPUJIT_IGNORE_CUDA_TOOLKIT=1`` skips steps 3 and 4, as on a machine
without a toolkit (the test suite runs so in CI).  The search runs once, when
the first kernel that calls a math function is compiled for the GPU; the
extension keeps its answer.
"""
import glob
import os
import re
import sys

FILENAME = "libdevice.10.bc"


def _in_dir(directory):
    path = os.path.join(directory, FILENAME)
    return path if os.path.isfile(path) else None


def _cuda_version_key(path):
    """Sort key: the numbers in a versioned path (cu13 -> (13,), cuda-12.4 -> (12, 4))."""
    return tuple(int(n) for n in re.findall(r"\d+", os.path.basename(path.rstrip("/"))))


def candidates(environ=None, path=None):
    """candidates(environ=os.environ, path=sys.path) -> list of (source, directory or file)

    Every place the search looks, in order; ``source`` says which rule the
    place comes from (``"GPUJIT_LIBDEVICE"``, ``"wheel"``, ``"CUDA_HOME"``,
    ``"CUDA_PATH"``, ``"toolkit"``).  Places need not exist.
    """
    environ = os.environ if environ is None else environ
    path = sys.path if path is None else path
    explicit = environ.get("GPUJIT_LIBDEVICE")
    if explicit:
        return [("GPUJIT_LIBDEVICE", explicit)]
    found = []
    for entry in path:
        if not entry or not os.path.isdir(os.path.join(entry, "nvidia")):
            continue
        versioned = sorted(glob.glob(os.path.join(entry, "nvidia", "cu[0-9]*")),
                           key=_cuda_version_key, reverse=True)
        for root in versioned + [os.path.join(entry, "nvidia", "cuda_nvcc")]:
            found.append(("wheel", os.path.join(root, "nvvm", "libdevice")))
    if environ.get("GPUJIT_IGNORE_CUDA_TOOLKIT", "") not in ("", "0"):
        return found
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(var):
            found.append((var, os.path.join(environ[var], "nvvm", "libdevice")))
    roots = ["/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"), key=_cuda_version_key, reverse=True)
    roots.append("/usr/lib/cuda")
    found += [("toolkit", os.path.join(root, "nvvm", "libdevice")) for root in roots]
    found.append(("toolkit", "/usr/lib/nvidia-cuda-toolkit/libdevice"))
    return found


def find(environ=None, path=None):
    """find(environ=os.environ, path=sys.path) -> (source, path) or (None, None)

    The first ``libdevice.10.bc`` of :func:`candidates`, as an absolute path.
    """
    for source, place in candidates(environ, path):
        hit = place if os.path.isfile(place) else _in_dir(place)
        if hit:
            return source, os.path.abspath(hit)
    return None, None
