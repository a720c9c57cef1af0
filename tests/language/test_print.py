"""print() in kernels and device functions: one line per call and thread,
values separated by spaces, formatted as numba.cuda does (integers in full,
floats as C's %f, bools as True/False, str constants as written).

A kernel writes to fd 1 (the CPU target at once, CUDA at the next
synchronisation), so each execution test runs in a fresh interpreter and
compares its stdout lines, as a multiset (threads run in no fixed order),
with what Python formats for the same values."""
import collections
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit
from conftest import random_array, TESTS_DIR


TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def run_kernel_script(target, body):
    """Runs body (after imports of numpy as np, gpujit, inf and nan) under GPUJIT_TARGET=target;
    returns its stdout lines."""
    env = dict(os.environ, GPUJIT_TARGET=target)
    code = "from math import inf, nan\nimport numpy as np\nimport gpujit\n" + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-P", "-c", code], cwd=TESTS_DIR, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def py_format(value):
    """What gpujit's print writes for one value: numba's formats."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return "%f" % float(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def lines_of(*rows):
    """The lines print(*row) gives for each row."""
    return [" ".join(py_format(v) for v in row) for row in rows]


def same_lines(got, expected):
    assert collections.Counter(got) == collections.Counter(expected), (got, expected)


INT_EDGES = {
    "int8": [-128, -1, 127], "int16": [-32768, 32767, -2], "int32": [-2**31, 2**31 - 1, 7],
    "int64": [-2**63, 2**63 - 1, -5], "uint8": [255, 0, 1], "uint16": [65535, 0, 9],
    "uint32": [2**32 - 1, 0, 3], "uint64": [2**64 - 1, 0, 2**63],
}
FLOAT_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-7, -2.5, 123456.789, 1e20, 3e38]


@pytest.mark.parametrize("target", TARGETS)
def test_integers_of_every_width(target, rng):
    n = 8
    cols = {}
    for name, edges in INT_EDGES.items():
        info = np.iinfo(name)
        rand = random_array(rng, n - len(edges), name, max(info.min, -10**6), min(info.max, 10**6))
        cols[name] = np.concatenate([np.array(edges, dtype=name), rand])
    names = list(INT_EDGES)
    got = run_kernel_script(target, f"""
        @gpujit.jit
        def k({", ".join(names)}):
            i = gpujit.grid(1)
            if i < {n}:
                print({", ".join(f"{a}[i]" for a in names)})

        cols = {{name: np.array(values, dtype=name) for name, values in
                {repr({k: v.tolist() for k, v in cols.items()})}.items()}}
        k[2, 4]({", ".join(f"cols[{a!r}]" for a in names)})
    """)
    same_lines(got, lines_of(*zip(*(cols[a].tolist() for a in names))))


@pytest.mark.parametrize("target", TARGETS)
def test_floats_and_bools(target, rng):
    f64 = np.concatenate([np.array(FLOAT_EDGES), random_array(rng, 6, "float64", -1e6, 1e6)])
    f32 = f64.astype(np.float32)
    f64[-1] = 1.5e300   # out of float32's range
    with np.errstate(over="ignore"):   # large values become inf, as intended
        f16 = f64.astype(np.float16)
    flags = np.arange(f64.size) % 3 == 0
    got = run_kernel_script(target, f"""
        @gpujit.jit
        def k(a, b, c, h):
            i = gpujit.grid(1)
            if i < a.size:
                print(a[i], b[i], c[i], a[i] > 0, h[i])

        a = np.array({f32.tolist()!r}, dtype=np.float32)
        b = np.array({f64.tolist()!r})
        c = np.array({flags.tolist()!r})
        h = np.array({f16.tolist()!r}, dtype=np.float16)
        k[1, 32](a, b, c, h)
    """)
    same_lines(got, lines_of(*((float(x), float(y), bool(z), bool(x > 0), float(w))
                               for x, y, z, w in zip(f32, f64, flags, f16))))


@pytest.mark.parametrize("target", TARGETS)
def test_strings_none_literals_and_empty_line(target):
    got = run_kernel_script(target, """
        @gpujit.jit
        def k(x):
            print("hello,  world", x, "100% sure %d", None)
            print()
            print(2, 2.5, True, np.int8(-3), np.float32(0.25))
            print("x:" , x * 2)

        k[1, 2](np.int32(21))
    """)
    same_lines(got, ["hello,  world 21 100% sure %d None", "", "2 2.500000 True -3 0.250000",
                     "x: 42"] * 2)


@pytest.mark.parametrize("target", TARGETS)
def test_prints_in_branches_loops_and_device_functions(target):
    got = run_kernel_script(target, """
        @gpujit.jit(device=True)
        def show(tag, x):
            print("dev", tag, x)
            return x + 1

        @gpujit.jit
        def k(n):
            i = gpujit.grid(1)
            if i % 2 == 1:
                print("odd", i)
            else:
                for j in range(i):
                    print("loop", i, j)
            print("back", show(7, i))

        k[2, 3](np.int64(6))
    """)
    expected = []
    for i in range(6):
        if i % 2 == 1:
            expected.append(f"odd {i}")
        else:
            expected += [f"loop {i} {j}" for j in range(i)]
        expected += [f"dev 7 {i}", f"back {i + 1}"]
    same_lines(got, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_one_line_per_thread_across_blocks(target):
    got = run_kernel_script(target, """
        @gpujit.jit
        def k(out):
            i = gpujit.grid(1)
            out[i] = i
            print("thread", i, "block", gpujit.blockIdx.x, "of", gpujit.gridDim.x)

        out = np.zeros(8 * 64, dtype=np.int64)
        k[8, 64](out)
    """)
    same_lines(got, [f"thread {i} block {i // 64} of 8" for i in range(8 * 64)])


@pytest.mark.parametrize("target", TARGETS)
def test_python_output_stays_in_order(target):
    """Python's buffered sys.stdout is flushed before a printing kernel runs."""
    got = run_kernel_script(target, """
        @gpujit.jit
        def k(a):
            print("kernel", a[gpujit.grid(1)])

        print("before")
        a = np.arange(4)
        k[1, 4](a)
        print("after")
    """)
    assert got[0] == "before" and got[-1] == "after", got
    same_lines(got[1:-1], [f"kernel {i}" for i in range(4)])


# ---- diagnostics and PTX (no GPU) -------------------------------------------------

def print_array(a):
    print(a)


def print_complex(z):
    print("z", z)


def print_sep(x):
    print(x, x, sep=",")


@pytest.mark.parametrize("func,sig,exc,text", [
    (print_array, "void(float32[:])", gpujit.TypingError, "argument 1 (array(float32, 1d"),
    (print_complex, "void(complex128)", gpujit.UnsupportedError, "complex128 (argument 2)"),
    (print_sep, "void(int32)", gpujit.UnsupportedError, "print() takes no keyword arguments"),
])
def test_unprintable_arguments_are_clear_errors(func, sig, exc, text):
    with pytest.raises(exc) as info:
        gpujit.compile_ptx(func, sig)
    assert text in str(info.value)


def print_values(i8, u64, f32, flag):
    print("values:", i8, u64, f32, flag)


def test_ptx_calls_vprintf(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(print_values, "void(int8, uint64, float32, boolean)")
    assert re.search(r"\.extern \.func\s*\(\.param \.b32 \w+\) vprintf", ptx), ptx
    assert re.search(r"call\.uni \(retval0\),\s*vprintf,\s*\(\s*param0,\s*param1\s*\)", ptx), ptx
    assert "values: %lld %llu %f %s" in ptx_strings(ptx)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def ptx_strings(ptx):
    """The text of the byte-array constants in ptx (.b8 name[n] = {...})."""
    out = []
    for body in re.findall(r"\.b8 [\w$]+\[\d+\] = \{([\d, ]+)\}", ptx):
        out.append(bytes(int(b) for b in body.split(",")).decode(errors="replace"))
    return "\n".join(out)

