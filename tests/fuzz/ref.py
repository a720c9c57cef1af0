"""The fuzzer's reference: what a generated kernel must compute, from CPython.

A generated kernel is run a second time by CPython, thread by thread, on
NumPy scalars (``reference_namespace`` holds what its source names).  NumPy
2's scalar arithmetic is the semantics gpujit documents (docs/typing.md),
so ``+``, ``//``, ``<``, ``**``, ``.real``... are NumPy's own.  Where a
kernel and CPython read the same source differently on purpose, a name of
the namespace stands in for the builtin and gives the kernel's meaning:

* ``int(x)``, ``len(x)``, ``round(x)``, ``math.floor(x)``..., the counts of
  ``range`` and ``enumerate``: strong int64 NumPy scalars (CPython gives
  Python ints, which NEP 50 treats as weak);
* ``float``, ``bool``, ``complex``: float64, bool and complex128 scalars;
* ``min``, ``max``: Python's choice of item, converted to the promoted type;
* ``math.f``: "float32 in gives float32 out", NumPy's function on the
  promoted float type (CPython's ``math`` gives Python floats and raises
  on domain errors where the kernel gives nan or inf);
* ``gpujit.jit`` leaves a function as it is; ``gpujit.grid(1)`` is the
  index of the thread the reference is running.

What the documentation leaves undefined raises ``Undefined`` here (a float
that does not fit the integer it is converted to, nan and inf included; a
``copysign`` whose sign comes from a nan, since the sign of a nan is
unspecified: x86 makes invalid operations give a negative nan, NVIDIA GPUs
a positive one, LLVM's constant folding a positive one); the fuzzer then
leaves that thread's outputs unchecked.
"""
import builtins
import math
import operator

import numpy as np

INTS = ("int8", "int16", "int32", "int64")
UINTS = ("uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64")
COMPLEXES = ("complex64", "complex128")
SCALARS = ("bool",) + INTS + UINTS + FLOATS + COMPLEXES


class Undefined(Exception):
    """The thread did what docs/typing.md calls unspecified; its outputs are not compared."""


def kind(t):
    """'b', 'i', 'u', 'f' or 'c' for a scalar type name."""
    return np.dtype(t).kind


def to_int(x, dtype):
    """x converted to the integer dtype as a kernel converts it: integers
    wrap (a C cast, which NumPy's constructors do for NumPy scalars), floats
    truncate toward zero, and a float whose truncation the dtype cannot
    hold is Undefined."""
    cls = np.dtype(dtype).type
    if isinstance(x, (np.floating, float)):
        if not np.isfinite(x):
            raise Undefined(f"{dtype}({x!r})")
        t = math.trunc(float(x))
        info = np.iinfo(dtype)
        if not info.min <= t <= info.max:
            raise Undefined(f"{dtype}({x!r})")
        return cls(t)
    if isinstance(x, (np.complexfloating, complex)):
        raise TypeError(f"the generator converted a complex to {dtype}")
    return cls(x)


def _checked(dtype):
    def convert(x):
        return to_int(x, dtype)
    convert.__name__ = dtype
    return convert


def _signed_by(copysign):
    """copysign(x, y), Undefined when y is a nan (its sign is unspecified)."""
    def f(x, y):
        if np.isnan(y):
            raise Undefined(f"copysign({x!r}, {y!r})")
        return copysign(x, y)
    f.__name__ = "copysign"
    return f


class _NumpyShim:
    """numpy, but its integer constructors treat an out-of-range float as
    Undefined, and copysign a nan's sign."""

    def __init__(self):
        for t in INTS + UINTS:
            setattr(self, t, _checked(t))
        self.intp, self.uintp, self.int_ = self.int64, self.uint64, self.int64
        self.intc, self.uintc = self.int32, self.uint32
        self.copysign = _signed_by(np.copysign)

    def __getattr__(self, name):
        return getattr(np, name)


def promote(args):
    """The type NumPy 2 promotes the arguments to (Python numbers are weak); a
    result of Python numbers alone is that kind's default type."""
    return np.result_type(*args).type


def _as_float_type(args):
    """The float (or complex) type a math function computes in: the promoted
    type, or float64 for integers and bools."""
    t = promote(args)
    return t if issubclass(t, np.inexact) else np.float64


def _math1(ufunc):
    def f(x):
        return ufunc(_as_float_type([x])(x))
    f.__name__ = ufunc.__name__
    return f


def _math2(ufunc):
    def f(x, y):
        t = _as_float_type([x, y])
        return ufunc(t(x), t(y))
    f.__name__ = ufunc.__name__
    return f


def _rounded(ufunc, x):
    """math.floor(x)... as int64: a float rounded, an integer as it is (int() of it)."""
    if isinstance(x, (np.floating, float)):
        x = ufunc(x)
    return to_int(x, "int64")


class _MathShim:
    """``math`` with gpujit's typing: the argument's float type, nan and inf for domain errors."""
    pi, e, tau, inf, nan = math.pi, math.e, math.tau, math.inf, math.nan

    def __init__(self):
        for name, uf in (("sqrt", np.sqrt), ("fabs", np.fabs), ("sin", np.sin), ("cos", np.cos),
                         ("tan", np.tan), ("exp", np.exp), ("exp2", np.exp2),
                         ("expm1", np.expm1), ("log", np.log), ("log2", np.log2),
                         ("log10", np.log10), ("log1p", np.log1p), ("atan", np.arctan),
                         ("asin", np.arcsin), ("acos", np.arccos), ("sinh", np.sinh),
                         ("cosh", np.cosh), ("tanh", np.tanh), ("asinh", np.arcsinh),
                         ("cbrt", np.cbrt), ("radians", np.radians), ("degrees", np.degrees)):
            setattr(self, name, _math1(uf))
        for name, uf in (("atan2", np.arctan2), ("hypot", np.hypot), ("fmod", np.fmod),
                         ("pow", np.power)):
            setattr(self, name, _math2(uf))
        self.copysign = _signed_by(_math2(np.copysign))

    @staticmethod
    def floor(x):
        return _rounded(np.floor, x)

    @staticmethod
    def ceil(x):
        return _rounded(np.ceil, x)

    @staticmethod
    def trunc(x):
        return _rounded(np.trunc, x)

    @staticmethod
    def isnan(x):
        return np.bool_(np.isnan(x))

    @staticmethod
    def isinf(x):
        return np.bool_(np.isinf(x))

    @staticmethod
    def isfinite(x):
        return np.bool_(np.isfinite(x))

    @staticmethod
    def ldexp(x, n):
        return np.ldexp(_as_float_type([x])(x), np.int64(n))

    @staticmethod
    def frexp(x):
        m, e = np.frexp(_as_float_type([x])(x))
        return m, np.int64(e)


def _minmax(pick):
    def f(*args):
        items = args[0] if len(args) == 1 else args
        return promote(items)(pick(items))
    f.__name__ = pick.__name__
    return f


def _round(x, ndigits=None):
    if ndigits is not None:
        if isinstance(x, np.integer) and ndigits < 0:
            # NumPy rounds in float64 and converts back: a result the type
            # cannot hold (round(np.int8(127), -1) is 130) is unspecified
            f = 10.0 ** -ndigits
            y = float(np.rint(np.float64(x) / f) * f)
            info = np.iinfo(x.dtype)
            if not info.min <= y <= info.max:      # Python compares float and int exactly
                raise Undefined(f"round({x!r}, {ndigits})")
        return builtins.round(x, ndigits)
    if not isinstance(x, (np.floating, float)):
        return to_int(x, "int64")           # an integer: itself, as int() gives it
    if not np.isfinite(x):
        raise Undefined(f"round({x!r})")
    return to_int(float(builtins.round(x)), "int64")


def _range(*args):
    """range() whose values have the kernel's type: the promotion of the
    strong arguments, int64 when there are none or a literal does not fit."""
    strong = [a for a in args if isinstance(a, np.generic)]
    t = promote(strong) if strong else np.int64
    for a in args:
        if not isinstance(a, np.generic) and t is not np.int64:
            info = np.iinfo(t)
            if not info.min <= a <= info.max:
                t = np.int64
    return map(t, builtins.range(*(int(a) for a in args)))


def _enumerate(it, start=0):
    return ((np.int64(k), v) for k, v in builtins.enumerate(it, int(start)))


def _complex(re=0.0, im=None):
    # complex(z) is z: complex(z, 0.0) would add 0.0 to a -0.0 imaginary part
    return np.complex128(builtins.complex(re) if im is None else builtins.complex(re, im))


class Thread:
    """Stands in for the gpujit module: the reference's thread index."""

    def __init__(self):
        self.index = 0

    @staticmethod
    def jit(func=None, **options):
        return func if func is not None else (lambda f: f)

    def grid(self, ndim):
        return np.int64(self.index)


def reference_namespace(thread):
    """Globals for exec'ing a generated module in CPython: thread is a Thread."""
    return {
        "__builtins__": builtins, "gpujit": thread, "np": _NumpyShim(), "math": _MathShim(),
        "operator": operator,
        "int": lambda x: to_int(x, "int64"), "float": np.float64, "bool": np.bool_,
        "complex": _complex, "min": _minmax(builtins.min), "max": _minmax(builtins.max),
        "round": _round, "range": _range, "enumerate": _enumerate,
        "len": lambda x: np.int64(builtins.len(x)),
    }


# ---- values ----------------------------------------------------------------------

def integer_edges():
    """The minimum and maximum of every integer type, and their neighbours inside it."""
    out = set()
    for t in INTS + UINTS:
        info = np.iinfo(t)
        out |= {info.min, info.min + 1, info.max - 1, info.max}
    return out


def edge_values(t):
    """The values of scalar type t that tend to break things."""
    if t == "bool":
        return [False, True]
    if kind(t) in "iu":
        info = np.iinfo(t)
        vals = {0, 1, 2, 7} | {v for v in integer_edges() if info.min <= v <= info.max}
        if kind(t) == "i":
            vals |= {-1, -2, -7}
        return sorted(vals)
    if kind(t) == "f":
        info = np.finfo(t)
        # The integer types' edges too: a float clamped or converted to an
        # integer type lands there (seed 90622: -inf clamped to int16's -32768).
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, float(info.max),
                -float(info.max), float(info.smallest_normal), float(info.smallest_subnormal),
                -float(info.smallest_subnormal), 3.0, 1e3]
        ints = {float(np.dtype(t).type(v)) for v in integer_edges() if abs(v) <= float(info.max)}
        return vals + sorted(ints - set(vals))
    part = "float32" if t == "complex64" else "float64"
    pv = edge_values(part)
    return [complex(a, b) for a, b in zip(pv, pv[3:] + pv[:3])]


def random_values(rng, t, n, edge=0.15):
    """n values of scalar type t: mostly moderate random ones, a fraction
    `edge` from edge_values(t).  rng is a numpy Generator."""
    dt = np.dtype(t)
    if dt.kind == "b":
        out = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        small = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True)
        wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        out = np.where(rng.random(n) < 0.7, small.astype(dt), wide)
    elif dt.kind == "f":
        mag = np.exp2(rng.uniform(-12, 12, n))
        scale = 10.0 ** rng.integers(0, 4, n)
        moderate = np.round(rng.uniform(-100, 100, n) * scale) / scale
        out = np.where(rng.random(n) < 0.5, moderate, np.where(rng.random(n) < 0.5, -mag, mag))
    else:
        part = "float32" if t == "complex64" else "float64"
        out = random_values(rng, part, n, 0) + 1j * random_values(rng, part, n, 0)
    out = np.asarray(out).astype(dt)
    pool = edge_values(t)
    for k in np.flatnonzero(rng.random(n) < edge):
        out[k] = pool[rng.integers(len(pool))]
    return out


# ---- comparing -------------------------------------------------------------------

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def float_order(x):
    """Integers in the order of the floats x (an array), one apart per ulp:
    -0.0 and 0.0 are one apart, inf is one past the largest float."""
    x = np.asarray(x)
    bits = x.view(_UINT[x.itemsize]).astype(np.int64) if x.itemsize < 8 else \
        x.view(np.int64).copy()
    sign = bits < 0 if x.itemsize == 8 else bits >= (1 << (8 * x.itemsize - 1))
    mag = bits & ((1 << (8 * x.itemsize - 1)) - 1) if x.itemsize < 8 else bits & 0x7FFFFFFFFFFFFFFF
    return np.where(sign, -mag - 1, mag)


def float_diff(got, want, ulps):
    """Mask of elements where floats got and want differ: both nan is alike;
    otherwise they must be within `ulps` (0: the same bits, -0.0 != 0.0)."""
    got, want = np.asarray(got), np.asarray(want)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    og, ow = float_order(got), float_order(want)
    cap = ulps + 1       # the distance of opposite signs, capped so that it cannot overflow
    cross = np.minimum(np.abs(og), cap) + np.minimum(np.abs(ow), cap)
    dist = np.where((og < 0) == (ow < 0), np.abs(og - ow), cross)
    return np.where(nan_g | nan_w, nan_g != nan_w, dist > ulps)


def differ(got, want, ulps=0):
    """Mask of the elements of two arrays of one dtype that differ (ulps: how
    far floats may be apart; complex numbers part by part)."""
    if got.dtype.kind == "c":
        return float_diff(got.real, want.real, ulps) | float_diff(got.imag, want.imag, ulps)
    if got.dtype.kind == "f":
        return float_diff(got, want, ulps)
    return got != want
