"""Pickling of kernels, device functions and device arrays, so that they
travel to other processes: a ``multiprocessing`` pool, a Dask worker, Ray.

A kernel (a :class:`~gpujit.Dispatcher`, also a device function) pickles by
reference when its module's attribute of its qualified name is the kernel
itself, so the receiving process imports the module and takes that kernel.
Otherwise it pickles by value: its Python function through cloudpickle (the
library Dask uses for functions), with the options and signatures given to
``jit``.  That covers kernels defined in ``__main__`` (a script, a notebook
cell), in closures, and in modules registered with
``cloudpickle.register_pickle_by_value``.  The unpickled kernel compiles at
its first launch in the new process, or loads the compiled code from the
disk cache when it has ``cache=True`` (an eager signature compiles at
unpickling, as at decoration).

By value, the globals the function reads are the values they had when the
kernel was pickled: cloudpickle copies them.  By reference they are the
module's in the receiving process.  Unpickled again in one process, with
the same values, a kernel is the same object each time (_kernels_by_id).

A :class:`~gpujit.DeviceArray` pickles as numba's does: through the host,
and it comes back on the receiving process's current device.

The two types' ``__reduce__`` methods (in C) call the reducers here, so
``pickle``, ``multiprocessing``'s pickler and cloudpickle all use them; this
module is imported at the first pickling, not with gpujit.
"""
import _thread
import collections
import hashlib
import sys
import uuid
import weakref

# (thread, kernel) pairs being pickled by value: a kernel whose globals reach
# itself again would otherwise pickle forever.  (pickle itself is imported
# when something is pickled, not with gpujit.)
_in_progress = set()

# A kernel pickled by value carries an id: its own, made when it is first
# pickled, and the digest of its pickled function (so of the globals'
# values).  Each process keeps the kernel it unpickled first for each id,
# so unpickling it again gives that kernel, compiled once.  (Not the
# original, in its own process: that one may have compiled with older
# values.)  Dask unpickles a task's function anew for each task:
# without this, each block would compile the kernel again.  As numba's
# dispatchers do, the kernels are held weakly, and the last few unpickled
# strongly, so that one is still there when the next task arrives.
_kernels_by_id = weakref.WeakValueDictionary()
_recently_unpickled = collections.deque(maxlen=128)


def _cloudpickle():
    """The cloudpickle module, or None where it is not installed."""
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle


def _by_value_modules():
    """The predicate cloudpickle uses for modules registered with
    register_pickle_by_value, or one that is always False."""
    cloudpickle = _cloudpickle()
    return getattr(getattr(cloudpickle, "cloudpickle", None), "_is_registered_pickle_by_value",
                   lambda module: False)


def _importable_name(kernel):
    """The qualified name under which kernel's module holds kernel itself,
    or None when it must travel by value."""
    module_name = getattr(kernel, "__module__", None)
    qualname = getattr(kernel, "__qualname__", None)
    if module_name in (None, "__main__", "__mp_main__") or not qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None or _by_value_modules()(module):
        return None
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:         # "<locals>" of a closure, or a name since rebound
            return None
    return qualname if obj is kernel else None


def reduce_dispatcher(kernel):
    name = _importable_name(kernel)
    if name is not None:
        return name             # pickle saves a global: module and qualified name
    import pickle
    try:
        options = kernel.__dict__["_jit_options"]
    except KeyError:
        raise pickle.PicklingError(f"cannot pickle {kernel!r}: it was not made by "
                                   f"gpujit.jit") from None
    key = (_thread.get_ident(), id(kernel))
    if key in _in_progress:
        raise pickle.PicklingError(f"cannot pickle kernel {kernel.__qualname__} by value: "
                                   f"its globals or closure refer back to itself")
    cloudpickle = _cloudpickle()
    if cloudpickle is None:
        raise pickle.PicklingError(f"pickling kernel {kernel.__qualname__} by value (it is not "
                                   f"importable from its module) needs cloudpickle: "
                                   f"pip install cloudpickle")
    _in_progress.add(key)
    try:
        func = cloudpickle.dumps(kernel.py_func, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        _in_progress.discard(key)
    # the kernel's own id, and the pickled function's digest: a global that
    # changed since the last pickling makes another kernel where it arrives
    ident = (kernel.__dict__.setdefault("_pickle_id", uuid.uuid4().hex),
             hashlib.blake2b(func, digest_size=16).hexdigest())
    return _rebuild_dispatcher, (ident, func, kernel.py_func.__code__.co_filename, options,
                                 kernel.__dict__["_signature"])


def _with_filename(code, filename):
    """code, and the code objects in its constants (lambdas, comprehensions),
    with co_filename set to filename."""
    consts = tuple(_with_filename(c, filename) if isinstance(c, type(code)) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _rebuild_dispatcher(ident, func, filename, options, signature):
    kernel = _kernels_by_id.get(ident)
    if kernel is None:
        import pickle
        from . import jit
        func = pickle.loads(func)
        # cloudpickle writes "<dynamic-code>" for the file: the original name
        # keeps messages' file:line (and source lines where the file is
        # there) and the disk cache's key, which includes it
        func.__code__ = _with_filename(func.__code__, filename)
        kernel = jit(signature, **options)(func)
        kernel.__dict__["_pickle_id"] = ident[0]
        kernel = _kernels_by_id.setdefault(ident, kernel)   # one, if threads raced here
    _recently_unpickled.append(kernel)
    return kernel


def reduce_device_array(array):
    return _rebuild_device_array, (array.copy_to_host(),)


def _rebuild_device_array(host):
    from . import to_device
    return to_device(host)

