"""numba's type objects, for signatures and casts: ``from gpujit import float32, void``.

Each object renders to the signature string gpujit's compiler parses
(``float32[:, ::1]``, ``void(float32[:], int32)``) and ``repr`` reads as
numba's (``array(float32, 2d, C)``, ``(array(float32, 1d, A),) -> none``)::

    from gpujit import float32, int32, void

    @gpujit.jit(void(float32[:, ::1], int32))
    def kernel(a, n):
        a[0, 0] = float32(n) / 3     # in a kernel: NumPy's np.float32(n)

A scalar type is also NumPy's constructor: called with a value, in Python
or in a kernel, it converts as ``np.float32(x)`` does.  The compiler sees it
as that constructor through its ``_gpujit_intrinsic`` name
(``"numpy.float32"``), so the intrinsic table needs no row of its own.
"""

_gpujit_intrinsic = "types"   # in a kernel, `types.float32(x)` (pymodule/codeview.c)

__all__ = [
    "Type", "Scalar", "Array", "UniTuple", "Tuple", "NoneType", "Signature",
    "parse_signature",
    "boolean", "bool_", "b1",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
    "intp", "uintp", "intc", "uintc", "int_", "byte",
    "float16", "float32", "float64", "f2", "f4", "f8", "half", "float_", "double",
    "complex64", "complex128", "c8", "c16",
    "void", "none", "typeof",
]


class Type:
    """A numba type: ``repr`` is numba's name; calling it with types makes a
    :class:`Signature` (``float32(float32, float32)``)."""

    name = "?"

    def __repr__(self):
        return self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Type) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (type(self).__name__, self.name)

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return self._cast(args[0])
        return Signature(self, args)

    def _cast(self, value):
        raise TypeError(f"{self.name} cannot convert {value!r}")


class Scalar(Type):
    """A scalar type (``float32``): a NumPy dtype.  ``float32[:, ::1]`` is an
    :class:`Array` of it; ``float32(x)`` converts ``x`` as ``np.float32(x)``."""

    def __init__(self, name, numpy_name):
        self.name = name
        self._numpy_name = numpy_name
        self._gpujit_intrinsic = f"numpy.{numpy_name}"   # pymodule/codeview.c

    def _cast(self, value):
        import numpy
        return getattr(numpy, self._numpy_name)(value)

    def _signature_string(self):
        return self._numpy_name.rstrip("_")

    def __reduce__(self):
        return (_scalar_by_name, (self.name,))

    def __getitem__(self, dims):
        """``float32[:]`` (any layout), ``float32[::1]``, ``float32[:, ::1]``
        (C-contiguous), ``float32[::1, :]`` (Fortran-contiguous)."""
        dims = dims if isinstance(dims, tuple) else (dims,)
        unit = []
        for k, d in enumerate(dims):
            if not isinstance(d, slice) or d.start is not None or d.stop is not None or \
                    d.step not in (None, 1):
                raise TypeError(f"{self.name}[...] takes ':' or '::1' per dimension "
                                f"(float32[:, ::1]), not {d!r}")
            if d.step == 1:
                unit.append(k)
        if len(unit) > 1:
            raise TypeError("only one dimension can be '::1'")
        layout = "A"
        if unit == [len(dims) - 1]:
            layout = "C"
        elif unit == [0]:
            layout = "F"
        elif unit:
            raise TypeError("'::1' must mark the first or the last dimension")
        return Array(self, len(dims), layout)


class Array(Type):
    """An array type: dtype, ndim and layout (``"C"``, ``"F"`` or ``"A"``,
    any strides), as numba's ``array(float32, 2d, C)``."""

    def __init__(self, dtype, ndim, layout):
        if layout not in ("C", "F", "A"):
            raise ValueError(f"layout must be 'C', 'F' or 'A', not {layout!r}")
        self.dtype = dtype
        self.ndim = ndim
        self.layout = layout
        self.name = f"array({dtype}, {ndim}d, {layout})"

    def _signature_string(self):
        dims = [":"] * self.ndim
        if self.layout == "C":
            dims[-1] = "::1"
        elif self.layout == "F":
            dims[0] = "::1"
        return f"{self.dtype._signature_string()}[{', '.join(dims)}]"


class UniTuple(Type):
    """A tuple of ``count`` items of one type, as numba's
    ``UniTuple(float32, 3)`` (``repr``: ``UniTuple(float32 x 3)``): the type
    of a tuple argument ``(x, y, z)`` of three float32s."""

    def __init__(self, dtype, count):
        if not isinstance(dtype, Type) or isinstance(dtype, NoneType):
            raise TypeError(f"UniTuple's item type must be a gpujit type, not {dtype!r}")
        self.dtype = dtype
        self.count = int(count)
        self.name = f"UniTuple({dtype} x {self.count})"

    def _signature_string(self):
        return f"UniTuple({self.dtype._signature_string()}, {self.count})"


class Tuple(Type):
    """A tuple of items of the given types, as numba's
    ``Tuple((int32, float64))``; items of one type make a :class:`UniTuple`,
    as in numba."""

    def __new__(cls, types):
        types = tuple(types)
        if types and all(t == types[0] for t in types):
            return UniTuple(types[0], len(types))
        return super().__new__(cls)

    def __init__(self, types):
        self.types = tuple(types)
        for t in self.types:
            if not isinstance(t, Type) or isinstance(t, NoneType):
                raise TypeError(f"Tuple's item types must be gpujit types, not {t!r}")
        self.name = f"Tuple({', '.join(map(str, self.types))})"

    def _signature_string(self):
        items = ", ".join(t._signature_string() for t in self.types)
        return f"Tuple(({items}{',' if len(self.types) == 1 else ''}))"


class NoneType(Type):
    """The return type of a kernel: ``void`` (numba calls it ``none``)."""

    name = "none"

    def _signature_string(self):
        return "void"


class Signature:
    """``return_type(*args)``: what ``jit``, ``compile_ptx`` and ``compile``
    take, as a string or as this object.  ``repr`` is numba's:
    ``(float32, float32) -> float32``."""

    def __init__(self, return_type, args):
        for a in args:
            if not isinstance(a, Type) or isinstance(a, NoneType):
                raise TypeError(f"a signature's argument types must be gpujit types "
                                f"(float32, float32[:]), not {a!r}")
        self.return_type = return_type
        self.args = tuple(args)

    def __repr__(self):
        return f"{self.args} -> {self.return_type}"

    def __eq__(self, other):
        return isinstance(other, Signature) and (self.return_type, self.args) == \
            (other.return_type, other.args)

    def __hash__(self):
        return hash((self.return_type, self.args))

    def _signature_string(self):
        ret = self.return_type._signature_string() if self.return_type is not None else ""
        return f"{ret}({', '.join(a._signature_string() for a in self.args)})"


def parse_signature(text):
    """parse_signature(text) -> Signature

    The :class:`Signature` a signature string names, parsed by gpujit's
    compiler: ``parse_signature("void(float32[:, ::1], i4)")`` is
    ``void(float32[:, ::1], int32)``; without a return type
    (``"(float32, float32)"``) its ``return_type`` is None.

    Raises
    ------
    TypingError
        If the string is not a signature (the message says where).
    """
    from . import _gpujit
    ret, args = _gpujit._parse_signature(text)
    return Signature(_from_triple(ret) if ret else None, [_from_triple(a) for a in args])


def _from_triple(triple):
    dtype, ndim, layout = triple
    if dtype == "none":
        return void
    if dtype == "tuple":   # layout holds the items' triples
        return Tuple([_from_triple(t) for t in layout])
    scalar = _scalar_by_name(dtype)
    return Array(scalar, ndim, layout) if ndim else scalar


def _signature_string(sig):
    """The signature string of a str, a :class:`Signature`, a type (a return
    type alone is not a signature) or a tuple of argument types; TypeError
    for anything else.  Called by pymodule/dispatcher.c."""
    if isinstance(sig, str):
        return sig
    if isinstance(sig, Signature):
        return sig._signature_string()
    if isinstance(sig, (tuple, list)) and all(isinstance(a, Type) for a in sig):
        return Signature(None, sig)._signature_string()
    raise TypeError(f"a signature is a string (\"void(float32[:], int32)\"), a signature "
                    f"object (void(float32[:], int32)) or a tuple of argument types "
                    f"((float32[:], int32)), not {sig!r}")


# numba's names: (name, NumPy constructor) ------------------------------------------

boolean = Scalar("bool", "bool_")
bool_ = b1 = boolean
int8 = i1 = Scalar("int8", "int8")
int16 = i2 = Scalar("int16", "int16")
int32 = i4 = intc = Scalar("int32", "int32")
int64 = i8 = intp = int_ = Scalar("int64", "int64")
uint8 = u1 = byte = Scalar("uint8", "uint8")
uint16 = u2 = Scalar("uint16", "uint16")
uint32 = u4 = uintc = Scalar("uint32", "uint32")
uint64 = u8 = uintp = Scalar("uint64", "uint64")
float16 = f2 = half = Scalar("float16", "float16")
float32 = f4 = float_ = Scalar("float32", "float32")
float64 = f8 = double = Scalar("float64", "float64")
complex64 = c8 = Scalar("complex64", "complex64")
complex128 = c16 = Scalar("complex128", "complex128")
void = none = NoneType()


def typeof(value):
    """typeof(value) -> Type

    The type a kernel argument gets, as ``numba.typeof``: a Python ``bool``,
    ``int``, ``float`` or ``complex`` is ``boolean``, ``int64``, ``float64``
    or ``complex128``; a NumPy scalar keeps its dtype; an array (NumPy,
    :class:`~gpujit.DeviceArray`, anything with ``shape``, ``strides`` and
    ``dtype``) is an :class:`Array` whose layout is ``"C"`` or ``"F"`` when
    its strides are contiguous that way, else ``"A"``.

    Raises
    ------
    TypeError
        For a value no kernel argument can be.
    """
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    try:
        scalar = _scalar_by_name(str(dtype))
    except KeyError:
        raise TypeError(f"a kernel argument cannot be of type {type(value).__name__}") from None
    import numpy   # NumPy scalars have a shape () too

    if shape is None or isinstance(value, numpy.generic):
        return scalar
    return Array(scalar, len(shape), _layout(shape, getattr(value, "strides", None),
                                             dtype.itemsize))


def _layout(shape, strides, itemsize):
    """"C", "F" or "A" for an array's shape and strides in bytes (None: C)."""
    if strides is None:
        return "C"

    def dense(dims):
        step = itemsize
        for n, s in dims:
            if n != 1 and s != step:
                return False
            step *= n
        return True
    pairs = list(zip(shape, strides))
    if dense(reversed(pairs)):
        return "C"
    return "F" if dense(pairs) else "A"


def _scalar_by_name(name):
    return {t.name: t for t in (boolean, int8, int16, int32, int64, uint8, uint16, uint32,
                                uint64, float16, float32, float64, complex64,
                                complex128)}[name]
