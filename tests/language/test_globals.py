"""Globals and closures: module-level int, float, bool and tuple values are
frozen into the kernel as constants when it is compiled (a later change is
not seen until kernel.recompile() or a new decorator); module-level NumPy
arrays become constant memory (PTX .const); closures over such values and
over device functions work.  Execution tests run on every target; the PTX
and diagnostic tests need no GPU."""
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

N = 999
target = pytest.mark.usefixtures("target")

SCALE = 3
OFFSET = -1.25
NEGATE = True
PAIR = (7, 0.5)
NESTED = ((1, 2), 3.0)
LOOKUP = np.array([0.5, -1.5, 2.25, 1e30, -0.0, 3.0, np.inf], dtype=np.float32)
GRID = np.arange(12, dtype=np.int16).reshape(3, 4) * np.int16(-3)
MASK = np.array([True, False, False, True, True])


def launch(kernel, *args):
    out = args[-1]
    kernel[(out.size + 63) // 64, 64](*args)
    return out


@gpujit.jit(contract=False)   # NumPy's rounding: the check is exact
def scalar_globals(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        v = x[i] * SCALE + OFFSET
        if NEGATE:
            v = -v
        out[i] = v + PAIR[0] * PAIR[1] + NESTED[0][1] - NESTED[1]


@target
def test_number_bool_and_tuple_globals(rng):
    x = random_array(rng, N, "float64")
    got = launch(scalar_globals, x, poison(N, "float64"))
    np.testing.assert_array_equal(got, -(x * 3 - 1.25) + 7 * 0.5 + 2 - 3.0)


@gpujit.jit
def array_globals(idx, out_f, out_i, out_b):
    i = gpujit.grid(1)
    if i < out_f.size:
        k = idx[i]
        out_f[i] = LOOKUP[k % LOOKUP.size]
        out_i[i] = GRID[k % 3, k % GRID.shape[1]]
        out_b[i] = MASK[k % 5]


@target
def test_numpy_array_globals(rng):
    idx = random_array(rng, N, "int64", 0, 1 << 20)
    out_f, out_i, out_b = poison(N, "float32"), poison(N, "int16"), poison(N, "bool")
    out_b[:] = True   # poison for the False entries of MASK
    array_globals[(N + 63) // 64, 64](idx, out_f, out_i, out_b)
    np.testing.assert_array_equal(out_f, LOOKUP[idx % 7])
    np.testing.assert_array_equal(out_i, GRID[idx % 3, idx % 4])
    np.testing.assert_array_equal(out_b, MASK[idx % 5])


def make_closure_kernel(factor, table, shift):
    @gpujit.jit(device=True)
    def scaled(v):
        return v * factor + table[1]

    @gpujit.jit
    def kernel(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = scaled(x[i]) + table[i % table.size] + shift[0] - shift[1]
    return kernel


@target
def test_closures_over_numbers_tuples_arrays_and_device_functions(rng):
    table = random_array(rng, 5, "int32")
    kernel = make_closure_kernel(4, table, (10, 3))
    x = random_array(rng, N, "int64")
    got = launch(kernel, x, poison(N, "int64"))
    np.testing.assert_array_equal(got, x * 4 + table[1] + table[np.arange(N) % 5] + 7)


COUNTER = 5


@gpujit.jit
def reads_counter(out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = COUNTER + i


@target
def test_changed_global_needs_recompile():
    global COUNTER
    COUNTER = 5
    reads_counter.recompile()
    np.testing.assert_array_equal(launch(reads_counter, poison(64, "int64")), np.arange(64) + 5)
    try:
        COUNTER = 100
        # Frozen: the compiled kernel keeps the value it was compiled with.
        np.testing.assert_array_equal(launch(reads_counter, poison(64, "int64")),
                                      np.arange(64) + 5)
        reads_counter.recompile()
        np.testing.assert_array_equal(launch(reads_counter, poison(64, "int64")),
                                      np.arange(64) + 100)
    finally:
        COUNTER = 5
        reads_counter.recompile()


# ---- PTX (no GPU needed) ---------------------------------------------------------------

def ptx_body(kernel, sig):
    ptx = kernel.inspect_asm(sig)
    return ptx[ptx.index(".entry"):]


def test_frozen_value_in_ptx_until_recompile():
    global COUNTER
    sig = "void(int64[:])"
    kernel = gpujit.jit(reads_counter.py_func)
    try:
        COUNTER = 123457
        kernel.compile(sig)
        assert "123457" in ptx_body(kernel, sig)
        COUNTER = 765433
        assert "123457" in ptx_body(kernel, sig)   # not seen yet
        kernel.recompile()
        kernel.compile(sig)
        assert "765433" in ptx_body(kernel, sig)
        # A new decorator also reads the globals again.
        assert "765433" in ptx_body(gpujit.jit(reads_counter.py_func), sig)
    finally:
        COUNTER = 5


def test_array_globals_are_constant_memory(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(array_globals, "void(int64[:], float32[:], int16[:], bool[:])")
    assert ptx.count(".const .align") == 3
    assert "ld.const.f32" in ptx and "ld.const.u16" in ptx
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_array_global_bytes_are_the_arrays():
    ptx, _ = gpujit.compile_ptx(array_globals, "void(int64[:], float32[:], int16[:], bool[:])")
    expected = ", ".join(str(b) for b in MASK.astype(np.uint8).tobytes())
    assert "{" + expected + "}" in ptx


def test_same_array_from_kernel_and_device_function_is_one_constant():
    @gpujit.jit(device=True)
    def first(i):
        return LOOKUP[i]

    def kernel(idx, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = LOOKUP[idx[i]] + first(idx[i] + 1)

    ptx, _ = gpujit.compile_ptx(kernel, "void(int64[:], float32[:])")
    assert ptx.count(".const .align") == 1


def test_non_contiguous_array_global_is_copied_in_c_order():
    view = GRID[:, ::2]   # strided view of a global: frozen as a C-ordered copy

    def kernel(out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = view[i // 2, i % 2]

    ptx, _ = gpujit.compile_ptx(kernel, "void(int16[:])")
    expected = ", ".join(str(b) for b in np.ascontiguousarray(view).tobytes())
    assert "{" + expected + "}" in ptx


# ---- errors ------------------------------------------------------------------------------


def stores_into_global(out):
    LOOKUP[0] = out[0]


def test_storing_into_array_global_is_a_typing_error():
    with pytest.raises(gpujit.TypingError, match="constant memory"):
        gpujit.compile_ptx(stores_into_global, "void(float32[:])")


BIG = np.zeros(70_000, np.uint8)


def reads_big(out):
    out[0] = BIG[1]


def test_array_global_over_64k_is_unsupported():
    with pytest.raises(gpujit.UnsupportedError, match="64 KiB"):
        gpujit.compile_ptx(reads_big, "void(uint8[:])")


BYTES_48K = np.zeros(12_000, np.float32)   # each fits in constant memory,
BYTES_36K = np.ones(9_000, np.float32)     # both together do not


def reads_two_big(out):
    out[0] = BYTES_48K[1] + BYTES_36K[2]


def test_constant_memory_total_over_64k_is_an_error():
    with pytest.raises(gpujit.LoweringError, match="64 KiB"):
        gpujit.compile_ptx(reads_two_big, "void(float32[:])")


STRINGS = np.array(["a", "b"])


def reads_strings(out):
    out[0] = len(STRINGS[0])


def test_array_global_of_unsupported_dtype():
    with pytest.raises(gpujit.UnsupportedError, match="dtype"):
        gpujit.compile_ptx(reads_strings, "void(int64[:])")


def test_plain_python_function_global_is_unsupported():
    def helper(v):
        return v + 1

    def kernel(out):
        out[0] = helper(out[0])

    with pytest.raises(gpujit.UnsupportedError, match="helper.*gpujit.jit"):
        gpujit.compile_ptx(kernel, "void(int64[:])")


def _store_global_kernel(env_value):
    env = {"G": env_value}
    exec("def k(x):\n    x[0] = G\n", env)
    return env["k"]


@pytest.mark.parametrize("value", [np.longdouble(1.5), np.clongdouble(1 + 2j),
                                   np.datetime64("2026-01-01")],
                         ids=["longdouble", "clongdouble", "datetime64"])
def test_numpy_scalar_global_without_gpujit_type(value):
    with pytest.raises(gpujit.UnsupportedError, match=type(value).__name__):
        gpujit.compile_ptx(_store_global_kernel(value), "void(float64[:])")


def test_deeply_nested_tuple_global_is_refused():
    g = ()
    for _ in range(100000):
        g = (g,)
    with pytest.raises(gpujit.UnsupportedError, match="tuple"):
        gpujit.compile_ptx(_store_global_kernel(g), "void(float64[:])")


def test_uint64_global_above_int64_range():
    ptx, _ = gpujit.compile_ptx(_store_global_kernel(np.uint64(2**63 + 5)), "void(uint64[:])")
    # the constant keeps its 64 bits: 2**63 + 5 as a signed 64-bit immediate
    assert str(-(2**63) + 5) in ptx or hex(2**63 + 5)[2:].upper() in ptx.upper()
