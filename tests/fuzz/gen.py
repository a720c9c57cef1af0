"""The fuzzer's generator: random, well-typed kernels as a small tree.

A program is device functions plus one kernel (``Func``), each a list of
statements (``Stmt``: clauses such as ``if``/``elif``/``else``, each a
header with expressions and a body) over typed expressions (``N``: a
format string and its operands).  ``Program.source()`` prints it as
Python; ``reduce.py`` edits the same tree.  Every thread of the kernel
computes from its own elements and writes ``out<k>[i]`` for each output,
unconditionally, at the end of the kernel, so every element is written.

Types are NumPy's names (``"int8"``...), ``"wint"``/``"wfloat"``/
``"wcomplex"`` for Python literals (weak), ``"pybool"`` for ``not x``
(CPython gives a Python bool), ``Tup`` and ``Arr``.  The generator asks
NumPy for the type of each operation (``binop_type``), so the types it
tracks are the ones the reference computes; it keeps a kernel away from:

* what is undefined or differs on purpose: an integer to a negative power,
  arithmetic with a literal its partner's type cannot hold (NumPy raises;
  comparisons, which compare by value, do get such literals), ordering of
  complex numbers, an index out of range (indices are ``% len``), a
  tuple index out of range, a read of a variable not assigned on every
  path (each variable is read only in the block that assigns it), a
  variable assigned values of two types, a loop of unbounded count
  (``range`` counts are small, ``while`` loops count up to a literal);
* what CPython reads differently: a literal alone as a value, the two
  sides of ``x if c else y``, ``x and y`` or a ``return`` of different types;
* results that are not exactly rounded (transcendental functions, float
  ``**``, ``abs`` of a complex): only at the root of an output, never
  feeding other arithmetic, and compared within TOLERANCE ulps;
* a float64 times a complex64 as such: NumPy multiplies them in its
  complex128 array loop, which uses FMA on x86-64 with AVX2 (an underflowed
  product then keeps the sign its scalars, and gpujit, give to +0.0), so
  the complex64 operand is converted first (docs/language.md: complex
  ``*`` is the formula of NumPy's scalars).
"""
import functools
import operator
import random

import numpy as np

from .ref import INTS, SCALARS, UINTS, edge_values, kind, random_values


class Arr(tuple):
    """An array type: (dtype, ndim)."""
    dtype = property(operator.itemgetter(0))
    ndim = property(operator.itemgetter(1))


class Tup(tuple):
    """A tuple type: the types of its items."""


STRONG = frozenset(SCALARS)
INTEGERS = frozenset(INTS + UINTS)

# CUDA Math API maximum errors (ulps, float32 then float64), which gpujit documents
# for libdevice; the CPU target uses libm.  REF_ULPS more allow for NumPy's own
# error (its SIMD float32 functions reach 4 ulps).  float16 results: 1 ulp.
TOLERANCE = {
    "sin": (2, 2), "cos": (2, 2), "tan": (4, 2), "exp": (2, 1), "exp2": (2, 1),
    "expm1": (1, 1), "log": (1, 1), "log2": (1, 1), "log10": (2, 1), "log1p": (1, 1),
    "atan": (2, 2), "asin": (2, 2), "acos": (2, 2), "sinh": (3, 2), "cosh": (2, 1),
    "tanh": (2, 1), "asinh": (3, 2), "cbrt": (1, 1), "atan2": (3, 2), "hypot": (3, 2),
    "pow": (4, 2),
}
REF_ULPS = 4
NP_NAMES = {"atan": "arctan", "asin": "arcsin", "acos": "arccos", "asinh": "arcsinh",
            "atan2": "arctan2", "pow": "power"}


def tolerance(fn, dtype):
    """ulps a result of fn (a TOLERANCE key, None: exact) of dtype may be off by."""
    if fn is None:
        return 0
    dt = np.dtype(dtype)
    if dt.kind == "c":
        dt = np.dtype(dt.char.lower())
    if dt.itemsize == 2:
        return 1
    return TOLERANCE[fn][dt.itemsize == 8] + REF_ULPS


# ---- the tree --------------------------------------------------------------------

class N:
    """An expression: fmt.format(*kids).  keep: reduction may not replace this
    node by a child or a constant (an index kept in range, a bounded count)."""
    __slots__ = ("fmt", "kids", "t", "tol", "keep")

    def __init__(self, fmt, kids=(), t=None, tol=None, keep=False):
        self.fmt, self.kids, self.t, self.tol, self.keep = fmt, list(kids), t, tol, keep

    def src(self):
        return self.fmt.format(*[k.src() for k in self.kids]) if self.kids else self.fmt


class Clause:
    """One line of a statement (`if c:`, `x = e`), with a body if it opens a block."""
    __slots__ = ("fmt", "kids", "body")

    def __init__(self, fmt, kids=(), body=None):
        self.fmt, self.kids, self.body = fmt, list(kids), body


class Stmt:
    """A statement: its clauses (if/elif/else), and what it is (tag)."""
    __slots__ = ("clauses", "tag")

    def __init__(self, clauses, tag=None):
        self.clauses, self.tag = clauses, tag


def line(fmt, *kids, tag=None):
    return Stmt([Clause(fmt, kids)], tag)


class Func:
    """A device function (decorator "@gpujit.jit(device=True)"...) or the kernel."""

    def __init__(self, name, params, decorator):
        self.name, self.params, self.decorator = name, params, decorator
        self.body = []
        self.ret = None   # device functions: the return type

    def source(self):
        out = [self.decorator, f"def {self.name}({', '.join(p for p, _ in self.params)}):"]
        emit_block(out, self.body, 1)
        return "\n".join(out) + "\n"


def emit_block(out, body, depth):
    if not body:
        out.append("    " * depth + "pass")
    for s in body:
        for c in s.clauses:
            out.append("    " * depth + (c.fmt.format(*[k.src() for k in c.kids]) if c.kids
                                         else c.fmt))
            if c.body is not None:
                emit_block(out, c.body, depth + 1)


class Program:
    """Device functions, the kernel, its arguments and outputs, the launch."""

    def __init__(self):
        self.funcs = []          # device functions, callees first
        self.kernel = None
        self.args = []           # (name, value passed to gpujit, value the reference gets)
        self.outputs = []        # (name, dtype, shape, tolerance key)
        self.griddim = self.blockdim = self.nthreads = 0

    def source(self):
        return "\n\n".join(f.source() for f in self.funcs + [self.kernel])

    def checked_outputs(self):
        """Indices of the outputs the kernel still stores (reduction may drop some)."""
        found = set()

        def walk(body):
            for s in body:
                if isinstance(s.tag, tuple) and s.tag[0] == "store":
                    found.add(s.tag[1])
                for c in s.clauses:
                    if c.body is not None:
                        walk(c.body)
        walk(self.kernel.body)
        return sorted(found)


# ---- NumPy's types ---------------------------------------------------------------

_SAMPLE = {"wint": 1, "wfloat": 1.0, "wcomplex": 1j}
BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
          "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
          "|": operator.or_, "^": operator.xor}
OPERATOR_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
                  "%": "mod", "<<": "lshift", ">>": "rshift", "&": "and_", "|": "or_",
                  "^": "xor", "u-": "neg", "u+": "pos", "u~": "invert", "<": "lt", "<=": "le",
                  ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
UNOPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "abs": abs}


def sample(t):
    return _SAMPLE[t] if t in _SAMPLE else np.dtype(t).type(1)


def type_of(v):
    if isinstance(v, np.generic):
        return v.dtype.name
    return {bool: "pybool", int: "wint", float: "wfloat", complex: "wcomplex"}[type(v)]


@functools.lru_cache(maxsize=None)
def binop_type(op, ta, tb):
    """The type NumPy gives `a op b` for operands of types ta, tb; None if it refuses."""
    try:
        with np.errstate(all="ignore"):
            return type_of(BINOPS[op](sample(ta), sample(tb)))
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=None)
def unop_type(op, t):
    try:
        with np.errstate(all="ignore"):
            return type_of(UNOPS[op](sample(t)))
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=None)
def numpy_type(name, *ts):
    """The type NumPy's function `name` gives for arguments of types ts (None: refused)."""
    try:
        with np.errstate(all="ignore"):
            r = getattr(np, name)(*[sample(t) for t in ts])
    except TypeError:
        return None
    return type_of(r) if type_of(r) in STRONG else None


def float_type(*ts):
    """The type a `math` function of arguments ts computes in (float64 for integers)."""
    t = np.result_type(*[sample(t) for t in ts])
    return t.name if t.kind in "fc" else "float64"


def fits(value, t):
    """Whether NumPy accepts the Python literal value beside a t (NEP 50)."""
    if t in INTEGERS and isinstance(value, int):
        info = np.iinfo(t)
        return info.min <= value <= info.max
    return True


def part_type(t):
    return "float32" if t == "complex64" else "float64"


def fmt_float(v):
    """A Python expression for the float v (math.inf, math.nan, -0.0...)."""
    if v != v:
        return "math.nan"
    if v in (float("inf"), float("-inf")):
        return "math.inf" if v > 0 else "(-math.inf)"
    s = repr(float(v))
    return f"({s})" if s.startswith("-") else s


def clamp(e, t):
    """min(hi, max(lo, e)) for the float e: a value the integer type t can hold
    after truncation (nan becomes lo, as Python's max(lo, nan) is lo), so
    that converting it is defined.  lo and hi are floats of e's type."""
    f = np.dtype(e.t).type
    big = float(np.finfo(e.t).max)
    info = np.iinfo(t)
    lo, hi = f(max(info.min, -big)), f(min(info.max, big))
    if float(lo) < max(info.min, -big):
        lo = np.nextafter(lo, f(np.inf))
    if float(hi) > min(info.max, big):
        hi = np.nextafter(hi, f(-np.inf))
    return N(f"min({fmt_float(float(hi))}, max({fmt_float(float(lo))}, {{0}}))", [e], e.t,
             keep=True)


def constant(t, value):
    """A typed constant: a NumPy constructor of a literal."""
    if t == "bool":
        return N(f"np.bool_({bool(value)})", t=t)
    if t in INTEGERS:
        value = int(value)
        if value > np.iinfo("int64").max:       # a kernel constant must fit int64
            return N(f"(~np.uint64({~value & (2**64 - 1)}))", t=t)
        return N(f"np.{t}({value})", t=t)
    if kind(t) == "f":
        return N(f"np.{t}({fmt_float(value)})", t=t)
    value = complex(value)
    return N(f"np.{t}({fmt_float(value.real)}, {fmt_float(value.imag)})", t=t)


# ---- the generator ---------------------------------------------------------------

class Gen:
    """Makes one Program from a random.Random and a numpy Generator."""

    def __init__(self, r, nprng, size=1.0):
        self.r, self.np, self.size = r, nprng, size
        self.count = 0
        self.frames = []
        self.readonly = set()       # loop variables and while counters
        self.loops = 0              # loops around the statement being made
        self.stmts = 0              # statements left to make in this function
        self.funcs = []
        self.in_kernel = False

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def weighted(self, table):
        return self.r.choices([k for k, _ in table], [w for _, w in table])[0]

    # -- scopes --

    def visible(self):
        out = {}
        for f in self.frames:
            out.update(f)
        return out

    def declare(self, name, t):
        self.frames[-1][name] = t

    def names_of(self, test):
        return [n for n, t in self.visible().items() if test(t)]

    def block(self, n, depth, tail=None):
        """Up to n statements (fewer when the function's budget runs out), then
        the statements tail() makes, which see the block's variables."""
        self.frames.append({})
        body = []
        for _ in range(n):
            if self.stmts <= 0:
                break
            self.stmts -= 1
            s = self.stmt(depth)
            if s is not None:
                body.append(s)
        if tail is not None:
            body += tail()
        self.frames.pop()
        return body

    # -- expressions --

    def lit(self, partner, op=None):
        """A weak literal to stand beside a `partner`-typed value in `op`: an int
        literal fits the partner's type, but in a comparison ("cmp"), which
        compares by value, it may not."""
        k = kind(partner) if partner in STRONG else "i"
        roll = self.r.random()
        if roll < 0.55 or k in "biu" and roll < 0.8:
            choices = [0, 1, 2, 3, 5, 7, 10, 100, 127, -1, -2, -3, 255, 1000, 65535, -128]
            if op == "cmp":
                choices += [256, -129, 70000, -2**31 - 1, 2**40, -2**40]
            v = self.pick([c for c in choices if op == "cmp" or fits(c, partner)])
            if op in ("<<", ">>"):
                v = self.r.randrange(0, 9)
            return N(f"({v})" if v < 0 else str(v), t="wint")
        if roll < 0.9 or k != "c" and roll < 0.97:
            v = self.pick([0.5, 1.0, 2.0, -1.5, 0.1, 3.25, 1e-3, 1e10, -0.0, 100.0, 0.3])
            if self.chance(0.05):
                return N(self.pick(["math.pi", "math.inf", "math.e"]), t="wfloat")
            return N(fmt_float(v), t="wfloat")
        return N(self.pick(["1j", "2.5j", "(1+2j)", "(-0.5+1j)"]), t="wcomplex")

    def const(self, t):
        if self.chance(0.5):
            pool = edge_values(t)
            return constant(t, pool[self.r.randrange(len(pool))])
        return constant(t, random_values(self.np, t, 1, 0)[0])

    def index(self, length, d, negative=True):
        """An int64 index in range for an axis of length `length` (an N, > 0);
        negative: it may count from the end."""
        e = self.expr(d, prefer_int=True)
        e = self.cast(e, "int64", spell="int({0})")
        if negative and self.chance(0.3):
            return N("(-1 - {0} % {1})", [e, length], "int64", keep=True)
        return N("({0} % {1})", [e, length], "int64", keep=True)

    def real(self, e):
        return N("{0}.real", [e], part_type(e.t)) if kind(e.t) == "c" else e

    def array(self):
        """An array in scope (an N), or None."""
        arrays = self.names_of(lambda t: isinstance(t, Arr))
        if not arrays:
            return None
        name = self.pick(arrays)
        return N(name, t=self.visible()[name])

    def element(self, d):
        """An element of an array in scope, or None."""
        a = self.array()
        if a is None:
            return None
        name, t = a.fmt, a.t
        if t.ndim == 1:
            if self.in_kernel and name in self.inputs and self.chance(0.5):
                return N("{0}[i]", [a], t.dtype)
            return N("{0}[{1}]", [a, self.index(N("len({0})", [a], "int64"), d - 1)], t.dtype)
        rows = self.index(N("{0}.shape[0]", [a], "int64"), d - 1)
        cols = self.index(N("{0}.shape[1]", [a], "int64"), d - 1)
        return N(self.pick(["{0}[{1}, {2}]", "{0}[{1}][{2}]"]), [a, rows, cols], t.dtype)

    def leaf(self, d, prefer_int=False):
        table = [("var", 4), ("elem", 3 if d >= 0 else 0), ("const", 1.5), ("item", 1)]
        if self.in_kernel:
            table.append(("i", 0.5))
        for _ in range(6):
            what = self.weighted(table)
            if what == "var":
                names = self.names_of(lambda t: t in STRONG)
                if prefer_int:
                    names = [n for n in names if self.visible()[n] in INTEGERS] or names
                if names:
                    n = self.pick(names)
                    return N(n, t=self.visible()[n])
            elif what == "elem":
                e = self.element(d)
                if e is not None and (not prefer_int or e.t in INTEGERS or self.chance(0.3)):
                    return e
            elif what == "item":
                tups = self.names_of(lambda t: isinstance(t, Tup) and
                                     any(u in STRONG for u in t))
                if tups:
                    n = self.pick(tups)
                    return self.item(N(n, t=self.visible()[n]), d)
            elif what == "i":
                return N("i", t="int64")
        t = self.pick(sorted(INTEGERS)) if prefer_int else self.pick(SCALARS)
        return self.const(t)

    def item(self, tup, d):
        """An item of the tuple tup (an N): a constant index (also from the end);
        a variable one, len(), min() or max() where the items have one type."""
        t = tup.t
        if len(set(t)) == 1 and self.chance(0.4):
            what = self.pick(["index", "len", "min"] if kind(t[0]) != "c" else ["index", "len"])
            if what == "index":
                k = self.index(N("len({0})", [tup], "int64"), d - 1)
                return N("{0}[{1}]", [tup, k], t[0])
            if what == "len":
                return N("len({0})", [tup], "int64")
            return N(f"{self.pick(['min', 'max'])}({{0}})", [tup], t[0])
        k = self.pick([k for k, u in enumerate(t) if u in STRONG])
        spell = str(k) if self.chance(0.7) else str(k - len(t))
        return N(f"{{0}}[{spell}]", [tup], t[k])

    def strong(self, e):
        """e as a value of a NumPy type: a literal or `not x` gets a constructor."""
        if e.t == "pybool":
            return N("np.bool_({0})", [e], "bool")
        if e.t == "cond":
            return N("np.bool_({0})", [e], "bool")
        if e.t in ("wint", "wfloat", "wcomplex"):
            return N({"wint": "np.int64({0})", "wfloat": "np.float64({0})",
                      "wcomplex": "np.complex128({0})"}[e.t], [e], _WEAK_DEFAULT[e.t])
        return e

    def expr(self, d, prefer_int=False):
        """An exactly computed expression of some NumPy scalar type."""
        if d <= 0 or self.chance(0.2):
            return self.leaf(d, prefer_int)
        table = [("bin", 6), ("un", 1), ("cmp", 1.5), ("ifexp", 1), ("cast", 2), ("math", 2),
                 ("minmax", 1), ("attr", 0.7), ("call", 2), ("tuple", 0.5), ("andor", 0.5),
                 ("divmod", 0.3)]
        for _ in range(4):
            e = getattr(self, "x_" + self.weighted(table))(d - 1)
            if e is not None:
                return self.strong(e)
        return self.leaf(d, prefer_int)

    def of_type(self, t, d):
        """An expression of type t exactly."""
        names = self.names_of(lambda u: u == t)
        if names and self.chance(0.3):
            return N(self.pick(names), t=t)
        return self.cast(self.expr(d), t)

    def cast(self, e, t, force=False, spell=None):
        """e converted to the scalar type t, as the kernel's constructors convert.
        A float to an integer is mostly clamped first (clamp())."""
        if e.t == t and not force:
            return e
        if kind(e.t) == "c" and kind(t) != "c":
            e = N(self.pick(["{0}.real", "{0}.imag"]), [e], part_type(e.t))
            if e.t == t and not force:
                return e
        if kind(e.t) == "f" and t in INTEGERS and self.chance(0.85):
            e = clamp(e, t)
        if spell is not None:
            return N(spell, [e], t)
        spells = [f"np.{t}({{0}})"]
        if t == "int64" and kind(e.t) != "c":
            spells.append("int({0})")
        elif t == "float64" and kind(e.t) != "c":
            spells.append("float({0})")
        elif t == "bool":
            spells = ["bool({0})", "np.bool_({0})"]
        elif t == "complex128":
            spells.append("complex({0})")
        elif t == "float32":
            spells.append("np.single({0})")
        return N(self.pick(spells), [e], t)

    def x_cast(self, d):
        return self.cast(self.expr(d), self.pick(SCALARS), force=True)

    def x_bin(self, d):
        op = self.weighted([("+", 4), ("-", 3), ("*", 3), ("/", 1.5), ("//", 1.5), ("%", 1.5),
                            ("**", 1), ("<<", 0.7), (">>", 0.7), ("&", 1), ("|", 1),
                            ("^", 1)])
        a = self.expr(d)
        if op == "**":
            return self.power(a, d)
        b = self.lit(a.t, op) if self.chance(0.3) else self.expr(d)
        if op in ("<<", ">>") and b.t in INTEGERS and self.chance(0.6):
            b = N("({0} & 7)", [b], b.t, keep=True)   # mostly counts within the width
        if b.t in ("wint", "wfloat", "wcomplex") and self.chance(0.3):
            a, b = b, a
        if op == "*" and {a.t, b.t} == {"float64", "complex64"}:
            a, b = [N("np.complex128({0})", [e], "complex128") if e.t == "complex64" else e
                    for e in (a, b)]
        t = binop_type(op, a.t, b.t)
        if t is None or t not in STRONG:
            return None
        if self.chance(0.15):
            return N(f"operator.{OPERATOR_NAMES[op]}({{0}}, {{1}})", [a, b], t)
        return N(f"({{0}} {op} {{1}})", [a, b], t)

    def power(self, a, d):
        """a ** n with an exponent whose power NumPy computes exactly."""
        k = kind(a.t)
        if k == "f":
            return None                       # float powers round: only at an output
        if k == "c":
            v = self.r.randint(-2, 4)
            n = N(f"({v})" if v < 0 else str(v), t="wint")
        elif self.chance(0.5):
            n = N(str(self.r.randint(0, 4)), t="wint")
        else:
            b = self.expr(d, prefer_int=True)
            if b.t not in INTEGERS:
                return None
            n = N("({0} & 3)", [b], b.t, keep=True)
        t = binop_type("**", a.t, n.t)
        if t is None or t not in STRONG or kind(t) == "f":
            return None
        spell = self.weighted([("({0} ** {1})", 4), ("pow({0}, {1})", 1),
                               ("operator.pow({0}, {1})", 0.5),   # np.power: real only
                               ("np.power({0}, {1})", 0.5 if k != "c" else 0)])
        return N(spell, [a, n], t)

    def x_un(self, d):
        a = self.expr(d)
        op = self.pick(["-", "+", "~", "abs"])
        t = unop_type(op, a.t)
        if t is None or t not in STRONG or kind(a.t) == "c" and op == "abs":
            return None
        if op != "abs" and self.chance(0.15):
            return N(f"operator.{OPERATOR_NAMES['u' + op]}({{0}})", [a], t)
        return N("abs({0})" if op == "abs" else f"({op}{{0}})", [a], t)

    def compare(self, d):
        a = self.expr(d)
        b = self.lit(a.t, "cmp") if self.chance(0.3) else self.expr(d)
        ops = ["<", "<=", ">", ">=", "==", "!="]
        if kind(a.t) == "c" or b.t in STRONG and kind(b.t) == "c" or b.t == "wcomplex":
            ops = ["==", "!="]
        if binop_type("-", a.t, b.t) is None and binop_type("+", a.t, b.t) is None:
            return None
        op = self.pick(ops)
        if op in ("<", "<=") and self.chance(0.2):
            c = self.expr(d)
            if kind(c.t) != "c":
                return N(f"({{0}} {op} {{1}} {self.pick(ops)} {{2}})", [a, b, c], "bool")
        if self.chance(0.1):
            return N(f"operator.{OPERATOR_NAMES[op]}({{0}}, {{1}})", [a, b], "bool")
        return N(f"({{0}} {op} {{1}})", [a, b], "bool")

    def x_cmp(self, d):
        return self.compare(d)

    def cond(self, d):
        """A condition: anything with a truth value."""
        what = self.weighted([("cmp", 6), ("not", 1), ("andor", 2), ("value", 1.5),
                              ("isnan", 0.5)])
        if what == "cmp" or d <= 0:
            return self.compare(d) or self.leaf(d)
        if what == "not":
            return N("(not {0})", [self.cond(d - 1)], "pybool")
        if what == "andor":
            op = self.pick(["and", "or"])
            return N(f"({{0}} {op} {{1}})", [self.cond(d - 1), self.cond(d - 1)], "cond")
        if what == "isnan":
            x = self.expr(d - 1)
            if kind(x.t) != "f":
                return self.compare(d) or x
            return N(f"math.{self.pick(['isnan', 'isinf', 'isfinite'])}({{0}})", [x], "bool")
        return self.expr(d - 1)

    def x_ifexp(self, d):
        a = self.expr(d)
        return N("({0} if {1} else {2})", [a, self.cond(d), self.of_type(a.t, d)], a.t)

    def x_andor(self, d):
        a = self.expr(d)
        op = self.pick(["and", "or"])
        return N(f"({{0}} {op} {{1}})", [a, self.of_type(a.t, d)], a.t)

    def x_attr(self, d):
        a = self.expr(d)
        what = self.pick(["real", "imag", "conjugate()"])
        t = part_type(a.t) if kind(a.t) == "c" and what != "conjugate()" else a.t
        return N(f"{{0}}.{what}", [a], t)

    def x_math(self, d):
        """An exactly rounded function of math or numpy (typed as NumPy types it)."""
        x = self.real(self.expr(d))
        fn = self.weighted([("sqrt", 3), ("fabs", 1), ("copysign", 1), ("fmod", 1),
                            ("floor", 1), ("ceil", 1), ("trunc", 1), ("round", 1.5),
                            ("round2", 1), ("ldexp", 0.7), ("frexp", 0.7), ("np1", 3),
                            ("np2", 1.5), ("angle", 0.5)])
        ft = float_type(x.t)
        if fn in ("floor", "ceil", "trunc", "round"):
            if x.t == "bool":
                return None
            return N("round({0})" if fn == "round" else f"math.{fn}({{0}})", [x], "int64")
        if fn == "round2":
            if x.t == "bool":
                return None
            return N(f"round({{0}}, {self.r.randint(-2, 3)})", [x], x.t)
        if fn in ("copysign", "fmod"):
            y = self.real(self.expr(d))
            return N(f"math.{fn}({{0}}, {{1}})", [x, y], float_type(x.t, y.t))
        if fn == "ldexp":
            n = self.expr(d, prefer_int=True)
            n = N(str(self.r.randint(-30, 30)), t="wint") if self.chance(0.5) else \
                N("({0} % 64 - 32)", [self.cast(n, "int64")], "int64", keep=True) \
                if self.chance(0.7) or n.t not in INTEGERS else n
            mod = self.pick(["math", "np"])
            t = ft if mod == "math" else numpy_type("ldexp", x.t, n.t)
            return N(f"{mod}.ldexp({{0}}, {{1}})", [x, n], t) if t else None
        if fn == "frexp":
            k = self.r.randrange(2)
            mod = self.pick(["math", "np"])
            t = (ft, "int64")[k] if mod == "math" else type_of(np.frexp(sample(x.t))[k])
            return N(f"{mod}.frexp({{0}})[{k}]", [x], t)
        if fn == "np1":
            name = self.pick(["sqrt", "floor", "ceil", "trunc", "rint", "fabs", "abs",
                              "absolute"])
            t = numpy_type(name, x.t)
            return N(f"np.{name}({{0}})", [x], t) if t else None
        if fn == "np2":
            name = self.pick(["fmod", "copysign"])
            y = self.real(self.expr(d))
            t = numpy_type(name, x.t, y.t)
            return N(f"np.{name}({{0}}, {{1}})", [x, y], t) if t else None
        if fn == "angle":
            name = self.pick(["math.radians", "math.degrees", "np.radians", "np.degrees",
                              "np.deg2rad", "np.rad2deg"])
            t = ft if name.startswith("math") else numpy_type(name[3:], x.t)
            return N(f"{name}({{0}})", [x], t) if t else None
        return N(f"math.{fn}({{0}})", [x], ft)

    def x_minmax(self, d):
        args = [self.real(self.expr(d)) for _ in range(self.r.randint(2, 3))]
        t = np.result_type(*[sample(a.t) for a in args]).name
        if self.chance(0.3):
            args.append(self.lit(t))
            if args[-1].t == "wcomplex":
                return None
            t = np.result_type(*[sample(a.t) for a in args]).name
        fmt = ", ".join(f"{{{k}}}" for k in range(len(args)))
        return N(f"{self.pick(['min', 'max'])}({fmt})", args, t)

    def x_divmod(self, d):
        a, b = self.expr(d), self.expr(d)
        t = binop_type("//", a.t, b.t)
        if t is None or t not in STRONG:
            return None
        return N(f"divmod({{0}}, {{1}})[{self.r.randrange(2)}]", [a, b], t)

    def x_tuple(self, d):
        items = [self.expr(d) for _ in range(self.r.randint(2, 3))]
        k = self.r.randrange(len(items))
        fmt = "(" + ", ".join(f"{{{j}}}" for j in range(len(items))) + f")[{k}]"
        return N(fmt, items, items[k].t)

    def call_args(self, f, d):
        """Arguments for device function f in this scope, or None."""
        args = []
        for _, t in f.params:
            if isinstance(t, Arr):
                names = self.names_of(lambda u: isinstance(u, Arr) and u.dtype == t.dtype and
                                      u.ndim == t.ndim)
                if not names:
                    return None
                args.append(N(self.pick(names), t=t))
            else:
                args.append(self.of_type(t, d))
        return args

    def call(self, d):
        if not self.funcs:
            return None
        f = self.pick(self.funcs)
        args = self.call_args(f, d)
        if args is None:
            return None
        spell = [f"{{{k}}}" for k in range(len(args))]
        if len(args) > 1 and self.chance(0.3):
            spell[-1] = f"{f.params[-1][0]}={spell[-1]}"
        return N(f"{f.name}({', '.join(spell)})", args, f.ret)

    def x_call(self, d):
        c = self.call(d)
        if c is None or c.t in STRONG:
            return c
        k = self.r.randrange(len(c.t))
        return N(f"{{0}}[{k}]", [c], c.t[k])

    # -- what an output may hold beyond exact expressions --

    def approx(self, d):
        """A function of an exact expression whose result is not exactly rounded."""
        fn = self.pick(sorted(TOLERANCE))
        x = self.real(self.expr(d))
        if fn in ("atan2", "hypot", "pow"):
            y = self.real(self.expr(d))
            t = float_type(x.t, y.t)
            if fn == "pow" and self.chance(0.4):
                if kind(x.t) != "f" and kind(y.t) != "f":
                    return None
                return N("({0} ** {1})", [x, y], binop_type("**", x.t, y.t), tol="pow")
            return N(f"math.{fn}({{0}}, {{1}})", [x, y], t, tol=fn)
        if self.chance(0.25) and x.t != "bool":
            npfn = getattr(np, NP_NAMES.get(fn, fn))
            return N(f"np.{npfn.__name__}({{0}})", [x], type_of(npfn(sample(x.t))), tol=fn)
        if fn == "hypot" or self.chance(0.1):
            z = self.expr(d)
            if kind(z.t) == "c":
                return N("abs({0})", [z], part_type(z.t), tol="hypot")
        return N(f"math.{fn}({{0}})", [x], float_type(x.t), tol=fn)

    # -- statements --

    def stmt(self, depth):
        d = self.r.randint(1, 3)
        # in nested blocks, mostly update the variables of outer ones: the
        # values then reach the outputs rather than die with the block
        outer = depth > 1 and self.assignable(lambda t: t in STRONG)
        table = [("assign", 2 if outer else 5), ("reassign", 4 if outer else 2),
                 ("aug", 4 if outer else 2), ("if", 2.5 if depth < 3 else 0),
                 ("for", 1.5 if depth < 3 else 0), ("while", 0.7 if depth < 3 else 0),
                 ("tuple", 1), ("unpack", 1), ("view", 1.2),
                 ("foreach", 1 if depth < 3 else 0), ("jump", 1.5 if self.loops else 0),
                 ("ret", 0.7 if not self.in_kernel else 0)]
        for _ in range(5):
            s = getattr(self, "s_" + self.weighted(table))(d, depth)
            if s is not None:
                return s
        return None

    def s_assign(self, d, depth):
        e = self.expr(d)
        name = self.fresh("v")
        self.declare(name, e.t)
        return line(f"{name} = {{0}}", e)

    def assignable(self, test):
        return [n for n in self.names_of(test) if n not in self.readonly and
                n not in self.frames[0]]

    def s_reassign(self, d, depth):
        names = self.assignable(lambda t: t in STRONG)
        if not names:
            return None
        n = self.pick(names)
        return line(f"{n} = {{0}}", self.of_type(self.visible()[n], d))

    def s_aug(self, d, depth):
        names = self.assignable(lambda t: t in STRONG)
        if not names:
            return None
        n = self.pick(names)
        t = self.visible()[n]
        for _ in range(4):
            op = self.pick(["+", "-", "*", "//", "%", "&", "|", "^", "/", "<<", ">>"])
            b = self.lit(t, op) if self.chance(0.4) else self.expr(d)
            if binop_type(op, t, b.t) == t:
                return line(f"{n} {op}= {{0}}", b)
        return None

    def s_if(self, d, depth):
        clauses = [Clause("if {0}:", [self.cond(d)], self.block(self.r.randint(1, 3), depth + 1))]
        for _ in range(self.r.choice([0, 0, 1, 2])):
            clauses.append(Clause("elif {0}:", [self.cond(d)],
                                  self.block(self.r.randint(1, 2), depth + 1)))
        if self.chance(0.5):
            clauses.append(Clause("else:", [], self.block(self.r.randint(1, 2), depth + 1)))
        return Stmt(clauses, "if")

    def loop_body(self, var, t, depth, extra=()):
        self.frames.append({var: t, **dict(extra)})
        self.readonly.update([var, *dict(extra)])
        self.loops += 1
        body = self.block(self.r.randint(1, 3), depth + 1)
        self.loops -= 1
        self.frames.pop()
        return body

    def range_args(self, d):
        """Arguments of a range of at most 7 values, and the loop variable's type."""
        shape = self.weighted([("n", 3), ("ab", 2), ("abs", 2), ("typed", 2), ("count", 2)])
        if shape == "n":
            return [N(str(self.r.randint(0, 6)), t="wint")], "int64"
        if shape == "ab":
            a = self.r.randint(-5, 5)
            return [N(f"({a})" if a < 0 else str(a), t="wint"),
                    N(str(a + self.r.randint(-1, 6)), t="wint")], "int64"
        if shape == "abs":
            step = self.pick([-3, -2, -1, 1, 2, 3])
            a = self.r.randint(-6, 6)
            b = a + step * self.r.randint(0, 6)
            return [N(f"({v})" if v < 0 else str(v), t="wint") for v in (a, b, step)], "int64"
        if shape == "count":
            n = self.cast(self.expr(d, prefer_int=True), "int64")
            return [N("({0} % 6)", [n], "int64", keep=True)], "int64"
        t = self.pick(["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64"])
        n = self.cast(self.expr(d, prefer_int=True), t)
        stop = N(f"({{0}} % np.{t}(6))", [n], t, keep=True)
        if self.chance(0.5):
            return [stop], t
        start = self.r.randint(0, 5)
        step = self.pick([1, 2, -1, -2])
        lo, hi = (start, stop) if step > 0 else (stop, start)
        lo = lo if isinstance(lo, N) else N(str(lo), t="wint")
        hi = hi if isinstance(hi, N) else N(str(hi), t="wint")
        st = N(f"({step})" if step < 0 else str(step), t="wint")
        lt = "int64" if step < 0 and t.startswith("u") else t
        return [lo, hi, st], lt

    def s_for(self, d, depth):
        args, t = self.range_args(d)
        var = self.fresh("k")
        fmt = f"for {var} in range(" + ", ".join(f"{{{k}}}" for k in range(len(args))) + "):"
        return Stmt([Clause(fmt, args, self.loop_body(var, t, depth))], "for")

    def s_while(self, d, depth):
        var = self.fresh("w")
        t = self.pick(["int32", "int64", "uint8", "int16"])
        limit = self.r.randint(1, 6)
        self.declare(var, t)
        self.readonly.add(var)
        self.loops += 1
        self.frames.append({})
        body = [line(f"{var} += 1")] + self.block(self.r.randint(1, 3), depth + 1)
        self.frames.pop()
        self.loops -= 1
        if self.chance(0.3):
            head = Clause("while True:", [], [Stmt([Clause(f"if {var} >= {limit}:", [],
                                                          [line("break")])])] + body)
        elif self.chance(0.4):
            head = Clause(f"while {var} < {limit} and {{0}}:", [self.cond(d)], body)
        else:
            head = Clause(f"while {var} < {limit}:", [], body)
        return Stmt([Clause(f"{var} = np.{t}(0)"), head], "while")

    def s_jump(self, d, depth):
        return Stmt([Clause("if {0}:", [self.cond(d)],
                            [line(self.pick(["break", "continue"]))])], "jump")

    def s_ret(self, d, depth):
        return Stmt([Clause("if {0}:", [self.cond(d)], [self.ret_stmt(d)])], "ret")

    def ret_stmt(self, d):
        t = self.ret_type
        if isinstance(t, Tup):
            items = [self.of_type(u, d) for u in t]
            return line("return ({0}, {1})", *items)
        return line("return {0}", self.of_type(t, d))

    def s_tuple(self, d, depth):
        if self.chance(0.3):
            c = self.call(d)
            if c is not None and isinstance(c.t, Tup):
                name = self.fresh("t")
                self.declare(name, c.t)
                return line(f"{name} = {{0}}", c)
        items = [self.expr(d) for _ in range(self.r.randint(2, 4))]
        if self.chance(0.3):
            items = [self.of_type(items[0].t, d) for _ in items]
        name = self.fresh("t")
        self.declare(name, Tup(e.t for e in items))
        fmt = "(" + ", ".join(f"{{{k}}}" for k in range(len(items))) + ")"
        return line(f"{name} = {fmt}", *items)

    def s_unpack(self, d, depth):
        tups = self.names_of(lambda t: isinstance(t, Tup) and all(u in STRONG for u in t))
        if tups and self.chance(0.5):
            n = self.pick(tups)
            t = self.visible()[n]
            names = [self.fresh("u") for _ in t]
            for m, u in zip(names, t):
                self.declare(m, u)
            return line(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {n}")
        pairs = self.assignable(lambda t: t in STRONG)
        if len(pairs) >= 2 and self.chance(0.5):
            a = self.pick(pairs)
            same = [b for b in pairs if b != a and self.visible()[b] == self.visible()[a]]
            if same:
                b = self.pick(same)
                return line(f"{a}, {b} = {b}, {a}")
        a, b = self.expr(d), self.expr(d)
        t = binop_type("//", a.t, b.t)
        if t is None or t not in STRONG:
            return None
        q, r = self.fresh("q"), self.fresh("r")
        self.declare(q, t)
        self.declare(r, t)
        return line(f"{q}, {r} = divmod({{0}}, {{1}})", a, b)

    def view(self, d):
        """A view of an array in scope that has at least one element."""
        a = self.array()
        if a is None:
            return None
        t = a.t
        if t.ndim == 1:
            lo = self.index(N("len({0})", [a], "int64"), d, negative=False)
            shape = self.pick(["{0}[{1}:]", "{0}[{1}::2]", "{0}[{1}::-1]", "{0}[::-1]",
                               "{0}[{1}:{1} + 3]", "{0}[::3]", "{0}[{1}::-2]"])
            if "{1}" not in shape:
                return N(shape, [a], Arr((t.dtype, 1)))
            return N(shape.replace("{1} + 3", "({1}) + 3"), [a, lo], Arr((t.dtype, 1)))
        r = self.index(N("{0}.shape[0]", [a], "int64"), d)
        c = self.index(N("{0}.shape[1]", [a], "int64"), d)
        shape, nd = self.pick([("{0}[{1}]", 1), ("{0}[{1}, :]", 1), ("{0}[:, {2}]", 1),
                               ("{0}[{1}, {2}:]", 1), ("{0}[{1}:, {2}]", 1), ("{0}[::-1]", 2),
                               ("{0}[{1}:]", 2), ("{0}[:, ::-1]", 2)])
        return N(shape, [a, r, c], Arr((t.dtype, nd)))

    def s_view(self, d, depth):
        v = self.view(d)
        if v is None:
            return None
        name = self.fresh("w")
        self.declare(name, v.t)
        return line(f"{name} = {{0}}", v)

    def s_foreach(self, d, depth):
        what = self.weighted([("view", 2), ("enum", 1), ("zip", 1), ("tuple", 1)])
        var = self.fresh("x")
        if what == "tuple":
            tups = self.names_of(lambda t: isinstance(t, Tup) and len(set(t)) == 1 and
                                 t[0] in STRONG)
            if not tups:
                return None
            n = self.pick(tups)
            t = self.visible()[n][0]
            return Stmt([Clause(f"for {var} in {n}:", [], self.loop_body(var, t, depth))],
                        "for")
        v = self.view(d)
        if v is None:
            return None
        # at most a few elements: a short slice of the view
        v = N("{0}[:4]", [v], v.t) if v.t.ndim == 1 else N("{0}[:3]", [v], v.t)
        item = v.t.dtype if v.t.ndim == 1 else Arr((v.t.dtype, 1))
        if what == "enum":
            j = self.fresh("j")
            body = self.loop_body(var, item, depth, [(j, "int64")])
            return Stmt([Clause(f"for {j}, {var} in enumerate({{0}}):", [v], body)], "for")
        if what == "zip":
            w = self.view(d)
            if w is None or w.t.ndim != 1:
                return None
            y = self.fresh("y")
            body = self.loop_body(var, item, depth, [(y, w.t.dtype)])
            return Stmt([Clause(f"for {var}, {y} in zip({{0}}, {{1}}):", [v, w], body)], "for")
        return Stmt([Clause(f"for {var} in {{0}}:", [v], self.loop_body(var, item, depth))],
                    "for")

    # -- functions and the program --

    def device_function(self, k):
        params = []
        for j in range(self.r.randint(1, 3)):
            params.append((f"p{j}", self.pick(SCALARS)))
        if self.chance(0.3):
            params.append(("arr", Arr((self.pick(self.input_dtypes), 1))))
        decorator = self.pick(["@gpujit.jit(device=True)", "@gpujit.jit(device=True)",
                               "@gpujit.jit(device=True, inline=True)", "@gpujit.jit"])
        f = Func(f"f{k}", params, decorator)
        self.ret_type = self.pick(SCALARS) if self.chance(0.75) else \
            Tup((self.pick(SCALARS), self.pick(SCALARS)))
        f.ret = self.ret_type
        self.frames = [dict(params)]
        self.in_kernel = False
        self.stmts = int(self.r.randint(1, 5) * self.size)
        f.body = self.block(self.stmts, 1, lambda: [self.ret_stmt(2)])
        self.frames = []
        return f

    def program(self):
        p = Program()
        r = self.r
        p.nthreads = r.randint(1, 80)
        p.blockdim = self.pick([1, 7, 32, 32, 64, 128])
        p.griddim = -(-p.nthreads // p.blockdim) + (1 if self.chance(0.2) else 0)
        self.input_dtypes = [self.pick(SCALARS) for _ in range(r.randint(1, 3))]
        for k in range(r.randint(0, 3)):
            f = self.device_function(k)
            p.funcs.append(f)
            self.funcs.append(f)
        params = self.arguments(p)
        self.frames = [dict(params), {}]
        self.in_kernel = True
        self.stmts = int(r.randint(3, 14) * self.size)
        body = self.block(self.stmts, 1, lambda: self.stores(p))
        self.frames = []
        names = [n for n, _ in params] + [o[0] for o in p.outputs]
        p.kernel = Func("kernel", [(n, None) for n in names], "@gpujit.jit(contract=False)")
        if self.chance(0.3):   # the guard's statements stay in reduction (tag "guard")
            leave = Clause("if i >= out0.shape[0]:", [], [line("return", tag="guard")])
            p.kernel.body = [line("i = gpujit.grid(1)"), Stmt([leave], "guard")] + body
        else:
            p.kernel.body = [line("i = gpujit.grid(1)"),
                             Stmt([Clause("if i < out0.shape[0]:", [], body)], "guard")]
        return p

    def stores(self, p):
        """The kernel's last statements: out<k>[i] = ... for each output, made in
        the scope of its body; appends the outputs to p.outputs."""
        r, stores = self.r, []
        for k in range(r.randint(1, 4)):
            e = self.approx(2) if self.chance(0.25) else None
            e = self.strong(e if e is not None else self.expr(r.randint(1, 4)))
            p.outputs.append((f"out{k}", e.t, (p.nthreads,), e.tol))
            stores.append(line(f"out{k}[i] = {{0}}", e, tag=("store", k)))
        # the final values of the kernel's variables, each its own output
        for name in self.names_of(lambda t: t in STRONG):
            if name in self.frames[0] or len(p.outputs) >= 8 or not self.chance(0.7):
                continue
            k = len(p.outputs)
            t = self.visible()[name]
            p.outputs.append((f"out{k}", t, (p.nthreads,), None))
            stores.append(line(f"out{k}[i] = {name}", tag=("store", k)))
        if self.chance(0.25):
            k = len(p.outputs)
            j = self.fresh("j")
            self.frames.append({j: "int64"})
            e = self.strong(self.expr(r.randint(1, 3)))
            self.frames.pop()
            p.outputs.append((f"out{k}", e.t, (p.nthreads, r.randint(1, 4)), None))
            store = line(f"out{k}[i, {j}] = {{0}}", e, tag=("store", k))
            stores.append(Stmt([Clause(f"for {j} in range(out{k}.shape[1]):", [], [store])],
                               ("store", k)))
        return stores

    def arguments(self, p):
        """The kernel's input arguments: 1-d arrays of self.input_dtypes, maybe a 2-d
        array, scalars and a tuple; appended to p.args; returns (name, type) pairs."""
        params, rng, n = [], self.np, p.nthreads
        self.inputs = set()
        for k, dt in enumerate(self.input_dtypes):
            length = n + self.r.randint(0, 9)
            step = self.pick([1, 1, 1, 2, -1])
            base = random_values(rng, dt, length * abs(step), 0.15)
            value = base[::step] if step > 0 else base[::-1]
            name = f"a{k}"
            p.args.append((name, value, value))
            params.append((name, Arr((dt, 1))))
            self.inputs.add(name)
        if self.chance(0.6):
            dt = self.pick(SCALARS)
            shape = (self.r.randint(1, 6), self.r.randint(1, 6))
            value = random_values(rng, dt, shape[0] * shape[1], 0.15).reshape(shape)
            value = self.pick([value, np.asfortranarray(value), value[::-1], value[:, ::-1]])
            p.args.append(("m0", value, value))
            params.append(("m0", Arr((dt, 2))))
        for k in range(self.r.randint(0, 3)):
            t = self.pick(SCALARS)
            v = random_values(rng, t, 1, 0.2)[0]
            name = f"s{k}"
            if self.chance(0.3) and t in ("bool", "int64", "float64", "complex128"):
                p.args.append((name, {"bool": bool, "int64": int, "float64": float,
                                      "complex128": complex}[t](v), v))
            else:
                p.args.append((name, v, v))
            params.append((name, t))
        if self.chance(0.25):
            ts = [self.pick(SCALARS) for _ in range(self.r.randint(1, 3))]
            vals = tuple(random_values(rng, t, 1, 0.2)[0] for t in ts)
            p.args.append(("tp", vals, vals))
            params.append(("tp", Tup(ts)))
        return params


_WEAK_DEFAULT = {"wint": "int64", "wfloat": "float64", "wcomplex": "complex128"}


def make_program(seed, index, size=1.0):
    """The index-th program of a seed: the same on every machine and Python."""
    g = Gen(random.Random(f"{seed}:{index}"), np.random.default_rng([seed, index]), size)
    return g.program()
