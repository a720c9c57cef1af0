"""The bytecode frontend on every supported interpreter: the same abi3
extension imports under 3.11 to 3.15, compiles the same kernels to kernels
with the same parameters that compute bitwise the same results (launched on
the CPU target), and reports the same diagnostics, at the same line and
column, with the same caret, except where CPython's own positions moved
(CPYTHON_DIFFERS).  The PTX text itself follows CPython's layout of the
function, which changes between versions.  The bytecode differs (call
protocol, FOR_ITER/END_FOR/POP_ITER, 3.15's two-entry iterators,
LOAD_FAST_LOAD_FAST and 3.14's borrowed loads, RETURN_CONST,
LOAD_SMALL_INT, 3.14's BINARY_OP subscripts and folded constant slices,
LOAD_COMMON_CONSTANT, 3.11's backward jumps, an assert's exception and
message: LOAD_ASSERTION_ERROR or LOAD_COMMON_CONSTANT, called as a method
from 3.12), so identical output means the normaliser absorbed the
differences.

Interpreters found on this machine (pyenv's, /usr/bin/python3.1x, those
GPUJIT_TEST_PYTHONS lists) run the script below in a subprocess (one
without NumPy compiles only); an interpreter that cannot run here (3.14 and
3.15 inside scripts/test-pythons.sh's chroot) is compared through a file:
with GPUJIT_VERSIONS_REFERENCE naming the output another interpreter wrote
(`python -P tests/compiler/test_python_versions.py FILE`), the output of this one
must equal it."""
import glob
import io
import os
import contextlib
import runpy
import shutil
import subprocess
import sys

import pytest

import gpujit

SCRIPT = r'''
import cmath, math, sys, warnings
import gpujit
try:
    import numpy as np
except ImportError:   # an interpreter without NumPy compiles, but launches nothing
    np = None

def kernels():
    def control(a, b, out, n):
        i = gpujit.grid(1)
        if i < out.size:
            s = 0.0
            for k in range(n, 0, -2):
                if k % 3 == 0 and a[i] > 0:
                    continue
                s += a[i] * k
            j = 0
            while j < n or b[i] < 0:
                j += 1
                if j > 100:
                    break
            out[i] = s + (b[i] if s > 0 else -b[i]) + math.sqrt(abs(a[i])) + min(j, n, 5)
    def simple(x, y):
        i = gpujit.grid(ndim=1)   # a keyword call: KW_NAMES (3.11, 3.12), CALL_KW (3.13+)
        if i < y.size:
            y[i] = x[i] // 3 + x[i] % 5 - x[-1]
    def views(b, out, n):
        i = gpujit.grid(1)
        if i < out.size:
            row = b[i]
            s = 0.0
            for x in (1.0, 2.0, 0.5):   # constant slices: folded from 3.14
                s += x * row[1:n:2][0] + b[i, :][-1] + b[:, 0][i] + len(b[2:]) + row[n:][0]
            out[i] = s if s > 0 and n else -s
    @gpujit.jit(device=True)
    def escape(x0, y0, limit):
        x, y = 0.0, 0.0
        for n in range(limit):   # a return inside a loop pops the iterator
            if x * x + y * y > 4.0:
                return n
            x, y = x * x - y * y + x0, 2.0 * x * y + y0
        return limit
    @gpujit.jit(device=True, inline=True)
    def pair(v):
        return (v, -v)
    def calls(out):
        col, row = gpujit.grid(2)
        h, w = out.shape
        if row < h and col < w:
            p = pair(WINDOW[0] + col * 0.01)
            out[row, col] = escape(p[0], WINDOW[1] + row * 0.01, LIMIT)
    def numbers(z, x, out):
        i = gpujit.grid(1)
        if i < out.size:
            q, r = divmod(x[i], 3.0)
            w = z[i].conjugate() * 2j + cmath.exp(z[i]) + complex(q, r)
            out[i] = w.real + abs(w) + round(x[i], 2) + math.pi * math.atan2(x[i], r)
    def loops(a, t, out):
        i = gpujit.grid(1)
        if i < out.size:
            s = 0
            for k, v in enumerate(a):
                for u in t:
                    if u == k:
                        break
                    s += u
                for j in range(k):
                    if j > 3:
                        return
                    s += int(v) + +j
            out[i] = s if not (s < 0) else ~s
    def printing(a):
        i = gpujit.grid(1)
        if i == 0:
            print("a:", a[0], a[1], True, -1)
            return None
    return [(raising, "void(int64[:], int64[:])"),
            (control, "void(float32[:], float32[:], float32[:], int64)"),
            (simple, "void(int32[:], int32[:])"),
            (views, "void(float32[:, ::1], float32[:], int64)"),
            (calls, "void(int32[:, ::1])"),
            (numbers, "void(complex128[:], float64[:], float64[:])"),
            (loops, "void(float64[:], UniTuple(int64, 3), int64[:])"),
            (printing, "void(int64[:])")]

WINDOW = (-2.0, -1.25)
LIMIT = 100

def raising(a, out):
    # Without debug a raise and a failed assert end the thread silently (so
    # out keeps zeros there); with debug=True the first raises on the host.
    i = gpujit.grid(1)
    if i < out.size:
        assert a[i] < 60, "a[i] too big"
        if a[i] == 50:
            raise NotImplementedError   # 3.14: LOAD_COMMON_CONSTANT
        assert a[i] != 55
        out[i] = a[i] + 1

def errors():
    """Kernels that fail, one construct each: the diagnostics' text, line,
    column and caret must not depend on the interpreter."""
    def subscript(a, out):
        i = gpujit.grid(1)
        out[i] = a[1:3] + a[i, 2]
    def slice_store(a, out):
        a[1:3] = out[0:2]
    def print_keywords(a, out):
        print(a[0], sep="")   # 3.15 loads '' with LOAD_COMMON_CONSTANT
    def binop(a, out):
        out[0] = a[0] * (1, 2)
    def chained(a, out):
        if 0 < a[0] < a:
            out[0] = 1
    def keyword(a, out):
        out[0] = math.sqrt(a[0], y=2)
    def attribute(a, out):
        out[0] = a.nonexistent
    def iterate(a, out):
        for x in 5:
            out[0] = x
    def returns(a, out):
        for k in range(3):
            if a[k] > 0:
                return a[k]
    def store(a, out):
        out[0] = a
    def augmented(a, out):
        out[0] += a
    def conditional(a, out):
        out[0] = a if a[0] > 0 else 1.0
    def undefined(a, out):
        out[0] = a[0] + no_such_name_xyz
    def unpack(a, out):
        x, y = a[0]
        out[0] = x
    def asserts(a, out):
        assert a[0] > 0, a[0]   # a message the kernel would have to format
    def withs(a, out):
        with open("f"):
            out[0] = 1
    def genexpr(a, out):
        out[0] = any(x > 0 for x in a)
    def fstring(a, out):
        print(f"{a[0]}")
    def is_none(a, out):
        if a is None:
            out[0] = 1
    def contains(a, out):
        if 1 in a:
            out[0] = 1
    def lists(a, out):
        v = [a[0], a[1]]
        out[0] = v[0]
    def tries(a, out):
        try:
            out[0] = a[0]
        except Exception:
            pass
    def raises(a, out):
        raise ValueError("no") from None
    def deletes(a, out):
        x = a[0]
        del x
    def lambdas(a, out):
        f = lambda v: v + 1
        out[0] = f(a[0])
    def comprehension(a, out):
        out[0] = sum([x for x in a])
    def mixed_tuple(a, out):
        for x in (1, a):
            out[0] = x
    return [subscript, slice_store, print_keywords, binop, chained, keyword, attribute, iterate, returns, store,
            augmented, conditional, undefined, unpack, asserts, withs, genexpr, fstring,
            is_none, contains, lists, tries, raises, deletes, lambdas, comprehension,
            mixed_tuple]

def maybe_unassigned(a, out):
    if a[0] > 0:
        v = a[1]
    out[0] = v + 1.0

def inputs(name):
    """Launch configuration and arguments of each kernel but `printing`
    (whose output bypasses sys.stdout), fixed so every interpreter sees the
    same values."""
    x = np.linspace(-3.0, 5.0, 64)
    a32, b32 = np.float32(np.sin(x) * 4), np.float32(np.cos(x * 3) * 2)
    return {
        "control": ((1, 64), (a32, b32, np.zeros(64, np.float32), 7)),
        "simple": ((1, 64), (np.arange(-20, 44, dtype=np.int32) * 7,
                             np.zeros(64, np.int32))),
        "views": ((1, 64), (a32.reshape(8, 8).copy(), np.zeros(8, np.float32), 3)),
        "calls": (((2, 1), (16, 16)), (np.zeros((16, 24), np.int32),)),
        "numbers": ((1, 64), (x * (1 - 0.5j), x, np.zeros(64))),
        "loops": ((1, 64), (x[:9], (1, 3, 5), np.zeros(64, np.int64))),
        "raising": ((1, 64), (np.arange(64), np.zeros(64, np.int64))),
    }.get(name)

# PTX: the kernel's parameters (the ABI) on every version; the code itself
# follows CPython's layout of the function, which changes between versions
# (3.14 stopped duplicating a while loop's test), so its values are compared
# instead: launched on the CPU target without contraction (every operation
# rounded as Python rounds it), the results are bitwise the same.
previous = gpujit.set_target("cpu")
for fn, sig in kernels():
    ptx, _ = gpujit.compile_ptx(fn, sig)
    entry = ptx[ptx.index(".visible .entry"):]
    sys.stdout.write("=== %s\n%s\n" % (fn.__name__, entry[:entry.index(")")]))
    if np is None:
        sys.stdout.write("result: not launched (no NumPy)\n")
    elif inputs(fn.__name__):
        config, args = inputs(fn.__name__)
        gpujit.jit(fn)[config](*args)
        result = args[-2] if fn.__name__ in ("control", "views") else args[-1]
        sys.stdout.write("result: %r\n" % (result.tolist(),))
sys.stdout.write("=== raised\n")   # the first raise of a debug launch, on the host
if np is None:
    sys.stdout.write("result: not launched (no NumPy)\n")
else:
    try:
        gpujit.jit(raising, debug=True)[1, 64](np.arange(64), np.zeros(64, np.int64))
    except Exception as e:
        sys.stdout.write("result: %s: %s\n" % (type(e).__name__, e))
gpujit.set_target(previous)

for fn in errors():
    try:
        gpujit.compile_ptx(fn, "void(float32[:], float32[:])")
    except gpujit.GpujitError as e:
        sys.stdout.write("=== %s: %s\n%s\n" % (fn.__name__, type(e).__name__, e))
    else:
        sys.stdout.write("=== %s: compiled\n" % fn.__name__)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gpujit.compile_ptx(maybe_unassigned, "void(float32[:], float32[:])")
for w in caught:
    sys.stdout.write("=== warning %s:%d: %s\n" % (w.category.__name__, w.lineno, w.message))
'''

SCRIPT_NAME = "versions_kernels.py"


def interpreters():
    found = {}
    for pattern in ("/root/.pyenv/versions/3.1[12345]*/bin/python3",
                    "/usr/bin/python3.1[12345]", "/usr/local/bin/python3.1[12345]"):
        for exe in sorted(glob.glob(pattern)):
            try:
                ver = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if ver in ("3.11", "3.12", "3.13", "3.14", "3.15"):
                found.setdefault(ver, exe)
    found.setdefault("%d.%d" % sys.version_info[:2], sys.executable)
    for exe in filter(None, os.environ.get("GPUJIT_TEST_PYTHONS", "").split(os.pathsep)):
        ver = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        found[ver] = exe
    return found


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    """gpujit alone on a path, so other interpreters do not see this one's
    site-packages, and the script beside it (diagnostics need its source)."""
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(os.path.dirname(gpujit.__file__), root / "gpujit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / SCRIPT_NAME).write_text(SCRIPT)
    return str(root)


def run_script(exe, path):
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    if gpujit.libdevice_path():   # maybe from a wheel in this environment alone
        env["GPUJIT_LIBDEVICE"] = gpujit.libdevice_path()
    proc = subprocess.run([exe, "-P", os.path.join(path, SCRIPT_NAME)], capture_output=True,
                          text=True, env=env, cwd=path, timeout=120)
    assert proc.returncode == 0, f"{exe}:\n{proc.stderr}"
    return proc.stdout


def script_output(directory):
    """The script's output when run by this interpreter, in this process,
    from `directory` (where the file lives: diagnostics show its path)."""
    path = os.path.join(directory, SCRIPT_NAME)
    with open(path, "w") as f:
        f.write(SCRIPT)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(path, run_name="versions")
    return buf.getvalue()


@pytest.fixture(scope="module")
def in_process_output(package_copy):
    return script_output(package_copy)


INTERPRETERS = sorted(interpreters().items())
# one pytest-xdist worker runs them all: the package is copied and the
# script run in this process once
pytestmark = pytest.mark.xdist_group("versions")

# Diagnostics whose position CPython itself gives differently across versions
# (gpujit reports where CPython's positions for the instruction point): block
# name -> which versions agree, as a function of (major, minor).  Such blocks
# are compared only between versions of one group.
CPYTHON_DIFFERS = {
    # 3.11 points at the test expression, later versions at the statement
    "asserts": lambda v: v >= (3, 12),
    # 3.11 at the whole f-string, later versions at the formatted value
    "fstring": lambda v: v >= (3, 12),
    # 3.11 builds a function for a list comprehension; 3.12 inlines it (PEP 709)
    "comprehension": lambda v: v >= (3, 12),
    # before 3.13 the error is at the `for` or `with` statement, later at its operand
    "iterate": lambda v: v >= (3, 13),
    "mixed_tuple": lambda v: v >= (3, 13),
    "withs": lambda v: v >= (3, 13),
    # 3.12 copies the store into both arms: the store, not the join, fails
    "conditional": lambda v: v == (3, 12),
    # before 3.14 a generator expression is a function (MAKE_FUNCTION); 3.14
    # inlines any()/all() over one and loads the builtin for its test
    "genexpr": lambda v: v >= (3, 14),
}


NOT_LAUNCHED = "result: not launched"


def blocks(out):
    """{name: text} of the script's output, one block per "=== name" line."""
    found = {}
    for block in out.split("=== ")[1:]:
        name = block.split("\n", 1)[0].split(":")[0].split(" ")[0]
        found[name if name != "warning" else block.split(":")[0]] = block
    return found


def assert_same_output(got, want, got_version, want_version):
    got_blocks, want_blocks = blocks(got), blocks(want)
    assert list(got_blocks) == list(want_blocks)
    for name, text in want_blocks.items():
        group = CPYTHON_DIFFERS.get(name)
        if group and group(got_version) != group(want_version):
            continue
        mine = got_blocks[name]
        if NOT_LAUNCHED in mine or NOT_LAUNCHED in text:   # compare the PTX part only
            mine, text = mine.split("result: ")[0], text.split("result: ")[0]
        assert mine == text, (
            "Python %d.%d and %d.%d differ at %s" % (got_version + want_version + (name,)))


def test_script_covers_every_kernel_and_error(in_process_output):
    found = blocks(in_process_output)
    assert sum(".visible .entry" in text for text in found.values()) == 8
    assert ": compiled\n" not in in_process_output, in_process_output
    # every diagnostic shows the source line and a caret under the construct
    for name, text in found.items():
        if ": " in text.split("\n", 1)[0]:
            assert "^" in text, text
    assert any(name.startswith("warning GpujitWarning") for name in found)
    assert set(CPYTHON_DIFFERS) <= set(found)


@pytest.mark.parametrize("ver,exe", INTERPRETERS, ids=[v for v, _ in INTERPRETERS])
def test_same_output_on_every_interpreter(ver, exe, package_copy, in_process_output):
    extension = os.path.basename(gpujit._gpujit.__file__)
    if ".abi3." not in extension and ver != "%d.%d" % sys.version_info[:2]:
        # a build for a debug interpreter is version-specific (meson names it so)
        pytest.skip(f"{extension} imports under this Python only (not abi3)")
    out = run_script(exe, package_copy)
    assert_same_output(out, in_process_output, tuple(map(int, ver.split("."))),
                       sys.version_info[:2])


def test_same_output_as_reference_interpreter(in_process_output, package_copy):
    reference = os.environ.get("GPUJIT_VERSIONS_REFERENCE")
    if not reference:
        pytest.skip("no reference output from another interpreter "
                    "(scripts/test-pythons.sh passes one)")
    with open(reference) as f:
        header, _, want = f.read().partition("\n")
    # the reference was written from another directory: compare paths by name
    got = in_process_output.replace(package_copy + os.sep, "")
    assert_same_output(got, want, sys.version_info[:2],
                       tuple(map(int, header.split()[-1].split("."))))


def write_reference(path):
    """Writes this interpreter's output, paths relative, for another's test."""
    import tempfile
    with tempfile.TemporaryDirectory() as directory:
        out = script_output(directory).replace(directory + os.sep, "")
    with open(path, "w") as f:
        f.write("Python %d.%d\n%s" % (sys.version_info[:2] + (out,)))


if __name__ == "__main__":
    write_reference(sys.argv[1])
