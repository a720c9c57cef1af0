"""The names kernels use: ``grid``, ``threadIdx``, ``shared.array``,
``atomic.add``, ``syncthreads``, ... as Python objects of the package.

The compiler recognises these objects by their ``_gpujit_intrinsic`` name
(pymodule/codeview.c freezes globals); in Python they only raise.  They are
made from the compiler's intrinsic table (compiler/intrinsics.h), so a row
added there needs no edit here.  gpujit/__init__.py puts the top-level ones
(``grid``, the namespace ``atomic``, ...) into the package and its
``__all__``, from :data:`TOP_LEVEL`, made once at import.

The objects pickle by name as attributes of ``gpujit`` (``gpujit.atomic.add``),
so their classes say ``__module__ = "gpujit"``.
"""
from . import _gpujit


class _Intrinsic:
    __module__ = "gpujit"   # pickle finds the object as gpujit.<name>

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
    __module__ = "gpujit"

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"gpujit.{self._gpujit_intrinsic}.{attr} can only be read "
                               f"inside a kernel compiled by gpujit.jit")
        raise AttributeError(attr)


class _Namespace:
    """A namespace of kernel API objects (``gpujit.atomic``)."""

    __module__ = "gpujit"

    def __init__(self, name):
        self._gpujit_intrinsic = name

    def __repr__(self):
        return f"<gpujit namespace {self._gpujit_intrinsic}>"

    def __reduce__(self):
        return self._gpujit_intrinsic


def _make_kernel_api():
    """The top-level kernel API objects, {name: object} in the order of the
    compiler's intrinsic table; a dotted row (``atomic.add``) becomes an
    attribute of its namespace, made at the namespace's first row."""
    top, namespaces = {}, {}
    for name, kind, params, doc in _gpujit._intrinsics():
        obj = (_Dim3 if kind == "dim3" else _Intrinsic)(name, doc + "\n\nKernel code only.")
        *outer, last = name.split(".")
        scope = top
        for k in range(len(outer)):
            ns_name = ".".join(outer[:k + 1])
            if ns_name not in namespaces:
                namespaces[ns_name] = scope[outer[k]] = _Namespace(ns_name)
            scope = vars(namespaces[ns_name])
        scope[last] = obj
    return top


#: The kernel API's top-level objects by name (functions, thread indices and
#: namespaces), as gpujit exports them.
TOP_LEVEL = _make_kernel_api()
