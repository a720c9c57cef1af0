"""Bounds checking (boundscheck=True, GPUJIT_BOUNDSCHECK=1, or debug=True):
every array element access (loads, stores, atomics, the integer indices of
a view; argument, shared, local and constant arrays, in kernels and device
functions) and every variable tuple index is checked after negative
wrapping.  A thread that indexes out of bounds does not make the access
and stops; the launch raises IndexError with NumPy's words, the array, the
file and line, the kernel and the thread.  Compared with NumPy on random
data, outputs poisoned; every execution target runs them (the GPU's
context survives: tests at the end)."""
import os
import re
import textwrap

import numpy as np
import pytest

import gpujit
from conftest import assert_assembles, child_output, poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 300
BLOCK = 64
THIS_FILE = os.path.basename(__file__)


def checked(fn):
    return gpujit.jit(boundscheck=True)(fn)


def line_of(fn, text):
    """The line of `fn` holding `text`."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def threads_of(indices, block=BLOCK):
    """The "threadIdx (...) of blockIdx (...)" texts of 1-d global indices."""
    return [f"threadIdx ({i % block}, 0, 0) of blockIdx ({i // block}, 0, 0)" for i in indices]


def launch(kernel, n, *args):
    kernel[(n + BLOCK - 1) // BLOCK, BLOCK](*args)


def raises_index_error(kernel, n, *args):
    with pytest.raises(IndexError) as info:
        launch(kernel, n, *args)
    return str(info.value)


# ---- loads and stores, 1-d ----------------------------------------------------------

def gather(a, idx, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[idx[i]]     # the checked load
        idx[i] = -12345        # not reached by a thread whose load failed


def test_in_bounds_indices_give_numpys_results_negative_ones_too(rng):
    a = random_array(rng, 50, "float64")
    idx = rng.integers(-50, 50, N)
    out = poison(N, "float64")
    want = a[idx]
    launch(checked(gather), N, a, idx, out)
    np.testing.assert_array_equal(out, want)
    assert (idx == -12345).all()


@pytest.mark.parametrize("bad", [50, 51, 1 << 40, -51, -(1 << 40)])
def test_an_index_out_of_bounds_raises_index_error_naming_it(rng, bad):
    a = random_array(rng, 50, "float64")
    idx = rng.integers(-50, 50, N)
    idx[[7, 200]] = bad
    keep = idx.copy()
    out = poison(N, "float64")
    msg = raises_index_error(checked(gather), N, a, idx, out)
    assert msg.startswith(f"index {bad} is out of bounds for axis 0 with size 50: array 'a' ")
    assert f"/{THIS_FILE}:{line_of(gather, 'the checked load')})" in msg
    assert "in kernel gather at " in msg
    assert any(t in msg for t in threads_of([7, 200])), msg
    good = np.ones(N, bool)
    good[[7, 200]] = False
    np.testing.assert_array_equal(out[good], a[keep[good]])
    assert np.isnan(out[[7, 200]]).all()              # the failing threads stopped
    assert (idx[good] == -12345).all() and (idx[[7, 200]] == bad).all()


def scatter(a, idx, v):
    i = gpujit.grid(1)
    if i < idx.size:
        a[idx[i]] = v[i]


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
def test_a_store_out_of_bounds_leaves_the_array_as_it_was(rng, dtype):
    a = random_array(rng, 40, dtype)
    idx = rng.permutation(40)[:30]                       # distinct, so stores do not race
    idx[5] = 40 if dtype != "int16" else -41
    v = random_array(rng, 30, dtype)
    want = a.copy()
    good = np.arange(30) != 5
    want[idx[good]] = v[good]
    msg = raises_index_error(checked(scatter), 30, a, idx, v)
    assert msg.startswith(f"index {idx[5]} is out of bounds for axis 0 with size 40: array 'a'")
    assert "threadIdx (5, 0, 0) of blockIdx (0, 0, 0)" in msg
    np.testing.assert_array_equal(a, want)


def index_types(a, i8, u8, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i8[i]] + a[u8[i]]


def test_narrow_and_unsigned_index_types(rng):
    a = random_array(rng, 200, "int64")
    i8 = rng.integers(-100, 100, N).astype(np.int8)
    u8 = rng.integers(0, 200, N).astype(np.uint8)
    out = poison(N, "int64")
    launch(checked(index_types), N, a, i8, u8, out)
    np.testing.assert_array_equal(out, a[i8] + a[u8])
    u8[9] = 255                                          # 255 >= 200: unsigned never wraps
    msg = raises_index_error(checked(index_types), N, a, i8, u8, poison(N, "int64"))
    assert msg.startswith("index 255 is out of bounds for axis 0 with size 200")


def at_row_col(a, rows, cols, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[rows[i], cols[i]]


@pytest.mark.parametrize("bad", [2**63, 2**63 + 7, 2**64 - 1])
def test_a_uint64_index_at_or_above_2_63_is_reported_as_it_is_not_as_negative(rng, bad):
    a = random_array(rng, 40, "float64")
    idx = rng.integers(0, 40, N).astype(np.uint64)
    idx[17] = bad
    msg = raises_index_error(checked(gather), N, a, idx, poison(N, "float64"))
    assert msg.startswith(f"index {bad} is out of bounds for axis 0 with size 40: array 'a' "
                          f"("), msg
    assert f"/{THIS_FILE}:{line_of(gather, 'the checked load')})" in msg
    assert threads_of([17])[0] in msg
    b = random_array(rng, 6 * 7, "float32").reshape(6, 7)
    rows = rng.integers(-6, 6, N)                        # int64: a negative one stays negative
    cols = rng.integers(0, 7, N).astype(np.uint64)
    out = poison(N, "float32")
    launch(checked(at_row_col), N, b, rows, cols, out)
    np.testing.assert_array_equal(out, b[rows, cols])
    cols[3] = bad
    msg = raises_index_error(checked(at_row_col), N, b, rows, cols, poison(N, "float32"))
    assert msg.startswith(f"index {bad} is out of bounds for axis 1 with size 7: array 'a'"), msg
    rows[2] = -7
    msg = raises_index_error(checked(at_row_col), N, b, rows, cols, poison(N, "float32"))
    assert msg.startswith("index -7 is out of bounds for axis 0 with size 6: array 'a'"), msg


def first_element(a, out):
    out[0] = a[0]


def first_row_element(a, out):
    out[0] = a[0, 0]


@pytest.mark.parametrize("shape,axis", [((0,), 0), ((3, 0), 1), ((0, 3), 0)])
def test_empty_arrays_fail_every_index(shape, axis):
    out = poison(1, "float64")
    kernel = checked(first_element if len(shape) == 1 else first_row_element)
    with pytest.raises(IndexError, match=f"^index 0 is out of bounds for axis {axis} with size 0"):
        kernel[1, 1](np.zeros(shape), out)
    assert np.isnan(out).all()


def iterate(a, out):
    s = 0.0
    for v in a:                  # in bounds by construction: not checked
        s += v
    out[0] = s + a.size


def test_iterating_over_an_empty_array_is_no_error():
    out = poison(1, "float64")
    checked(iterate)[1, 1](np.zeros(0), out)
    assert out[0] == 0.0
    d = gpujit.to_device(np.zeros(0))                    # no memory at all on a GPU
    gpujit.jit(debug=True)(iterate)[1, 1](d, out)        # debug: unoptimised code
    assert out[0] == 0.0


# ---- 2-d: each axis, every layout ----------------------------------------------------

def gather2(a, rows, cols, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[rows[i], cols[i]]


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_two_d_arrays_check_each_axis(rng, layout):
    base = random_array(rng, 7 * 11 * 2, "float32").reshape(14, 11)
    a = {"C": base[:7].copy(), "F": np.asfortranarray(base[:7]), "strided": base[::2]}[layout]
    rows = rng.integers(-7, 7, N)
    cols = rng.integers(-11, 11, N)
    out = poison(N, "float32")
    launch(checked(gather2), N, a, rows, cols, out)
    np.testing.assert_array_equal(out, a[rows, cols])
    for axis, (r, c, size) in enumerate([(7, 0, 7), (0, -12, 11)]):
        bad_rows, bad_cols = rows.copy(), cols.copy()
        bad_rows[33], bad_cols[33] = r, c
        msg = raises_index_error(checked(gather2), N, a, bad_rows, bad_cols, poison(N, "float32"))
        assert msg.startswith(f"index {r if axis == 0 else c} is out of bounds for axis {axis} "
                              f"with size {size}: array 'a'"), msg
    both_rows, both_cols = rows.copy(), cols.copy()
    both_rows[1], both_cols[1] = -8, 11                  # the first failing axis is named
    msg = raises_index_error(checked(gather2), N, a, both_rows, both_cols, poison(N, "float32"))
    assert msg.startswith("index -8 is out of bounds for axis 0 with size 7")


def tuple_index(a, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        idx = (i, a.shape[1] - i)       # a tuple variable as the index
        out[i] = a[idx]


def test_a_tuple_of_indices(rng):
    a = random_array(rng, 5 * 9, "int32").reshape(5, 9)
    msg = raises_index_error(checked(tuple_index), 5, a, poison(5, "int32"))
    assert msg.startswith("index 9 is out of bounds for axis 1 with size 9: array 'a'")
    assert "threadIdx (0, 0, 0)" in msg


# ---- views --------------------------------------------------------------------------

def row_sum(a, which, out):
    i = gpujit.grid(1)
    if i < out.size:
        row = a[which[i]]          # the row's index is checked; the slice below clamps
        tail = row[2:1000]
        s = 0.0
        for k in range(tail.size):
            s += tail[k]
        out[i] = s + a[:, which[i] % a.shape[1]][0]


def test_a_view_checks_the_indices_that_select_an_axis(rng):
    a = random_array(rng, 6 * 5, "float64").reshape(6, 5)
    which = rng.integers(-6, 6, N)
    out = poison(N, "float64")
    launch(checked(row_sum), N, a, which, out)
    want = a[which, 2:].sum(axis=1) + a[0, which % 5]
    np.testing.assert_allclose(out, want, rtol=1e-12)
    which[17] = 6
    msg = raises_index_error(checked(row_sum), N, a, which, poison(N, "float64"))
    assert msg.startswith("index 6 is out of bounds for axis 0 with size 6: array 'a' ")
    assert f":{line_of(row_sum, 'the slice below clamps')})" in msg


def view_of_view(a, out):
    row = a[1]
    out[0] = row[a.shape[1]]          # a view kept in a variable


def test_a_view_is_named_as_its_variable(rng):
    a = random_array(rng, 12, "float64").reshape(3, 4)
    msg = raises_index_error(checked(view_of_view), 1, a, poison(1, "float64"))
    assert msg.startswith("index 4 is out of bounds for axis 0 with size 4: array 'row'")


# ---- memory spaces ------------------------------------------------------------------

def shared_reverse(x, out, shift):
    buf = gpujit.shared.array(BLOCK, np.float32)
    t = gpujit.threadIdx.x
    buf[t] = x[gpujit.grid(1)]
    gpujit.syncthreads()
    out[gpujit.grid(1)] = buf[BLOCK - 1 - t + shift]


def test_shared_arrays(rng):
    x = random_array(rng, 4 * BLOCK, "float32")
    out = poison(4 * BLOCK, "float32")
    checked(shared_reverse)[4, BLOCK](x, out, 0)
    np.testing.assert_array_equal(out, x.reshape(4, BLOCK)[:, ::-1].ravel())
    out = poison(4 * BLOCK, "float32")
    with pytest.raises(IndexError) as info:
        checked(shared_reverse)[4, BLOCK](x, out, 1)
    msg = str(info.value)
    assert msg.startswith(f"index {BLOCK} is out of bounds for axis 0 with size {BLOCK}: "
                          "shared array 'buf'"), msg
    assert "threadIdx (0, 0, 0)" in msg
    got, xb = out.reshape(4, BLOCK), x.reshape(4, BLOCK)
    assert np.isnan(got[:, 0]).all()                      # thread 0 of each block stopped
    np.testing.assert_array_equal(got[:, 1:], xb[:, BLOCK - np.arange(1, BLOCK)])


def local_window(x, out, width):
    loc = gpujit.local.array(4, np.int64)
    i = gpujit.grid(1)
    if i < out.size:
        for k in range(width):
            loc[k] = x[i] + k
        out[i] = loc[0] + loc[3]


def test_local_arrays(rng):
    x = random_array(rng, N, "int64")
    out = poison(N, "int64")
    launch(checked(local_window), N, x, out, 4)
    np.testing.assert_array_equal(out, 2 * x + 3)
    msg = raises_index_error(checked(local_window), N, x, poison(N, "int64"), 5)
    assert msg.startswith("index 4 is out of bounds for axis 0 with size 4: local array 'loc'")


TABLE = np.arange(10, dtype=np.float64) * 1.5


def frozen(idx, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = TABLE[idx[i]]


def test_constant_memory_arrays(rng):
    idx = rng.integers(-10, 10, N)
    out = poison(N, "float64")
    launch(checked(frozen), N, idx, out)
    np.testing.assert_array_equal(out, TABLE[idx])
    idx[0] = 10
    msg = raises_index_error(checked(frozen), N, idx, poison(N, "float64"))
    assert msg.startswith("index 10 is out of bounds for axis 0 with size 10: array 'TABLE'")


# ---- atomics ------------------------------------------------------------------------

def count(bins, keys):
    i = gpujit.grid(1)
    if i < keys.size:
        gpujit.atomic.add(bins, keys[i], 1)


def test_atomics_check_their_index(rng):
    keys = rng.integers(-16, 16, N)
    bins = np.zeros(16, np.int64)
    launch(checked(count), N, bins, keys)
    np.testing.assert_array_equal(bins, np.bincount(keys % 16, minlength=16))
    keys[100] = 16
    bins = np.zeros(16, np.int64)
    msg = raises_index_error(checked(count), N, bins, keys)
    assert msg.startswith("index 16 is out of bounds for axis 0 with size 16: array 'bins'")
    good = np.arange(N) != 100
    np.testing.assert_array_equal(bins, np.bincount(keys[good] % 16, minlength=16))


def swap_first(a, out):
    out[0] = gpujit.atomic.compare_and_swap(a, 0, 7)


def test_compare_and_swap_on_an_empty_array():
    out = poison(1, "int32")
    with pytest.raises(IndexError, match="^index 0 is out of bounds for axis 0 with size 0"):
        checked(swap_first)[1, 1](np.zeros(0, np.int32), out)
    assert out[0] == poison(1, "int32")[0]


# ---- tuples -------------------------------------------------------------------------

def pick(t, which, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = t[which[i]]


def test_a_variable_tuple_index(rng):
    which = rng.integers(-3, 3, N)
    out = poison(N, "int64")
    launch(checked(pick), N, (10, 20, 30), which, out)
    np.testing.assert_array_equal(out, np.array([10, 20, 30])[which])
    which[3] = 3
    msg = raises_index_error(checked(pick), N, (10, 20, 30), which, poison(N, "int64"))
    assert msg.startswith("tuple index 3 is out of range for 3 items: tuple 't' ")
    for bad in (2**63, 2**64 - 1):                     # unsigned: never counted from the end
        huge = np.full(N, bad, np.uint64)
        msg = raises_index_error(checked(pick), N, (10, 20, 30), huge, poison(N, "int64"))
        assert msg.startswith(f"tuple index {bad} is out of range for 3 items: tuple 't' "), msg


# ---- kernels named as gpujit's own symbols were -----------------------------------

def named(name):
    """A checked kernel `name`: out[i] = a[idx[i]] (gpujit's symbols were _gj_error,
    the error record, and _gj_report, the reporting function: what a kernel
    called error or report was named too)."""
    ns = {}
    exec(f"def {name}(a, idx, out):\n    i = gpujit.grid(1)\n    if i < out.size:\n"
         f"        out[i] = a[idx[i]]\n", {"gpujit": gpujit}, ns)
    return checked(ns[name])


@pytest.mark.parametrize("name", ["error", "report", "shared_dynamic", "shared_static_bytes"])
def test_a_kernel_named_as_a_gpujit_symbol_was_reports_its_errors(rng, name):
    kernel = named(name)
    a = random_array(rng, 50, "float64")
    idx = rng.integers(-50, 50, N)
    out = poison(N, "float64")
    launch(kernel, N, a, idx, out)
    np.testing.assert_array_equal(out, a[idx])
    idx[7] = 50
    msg = raises_index_error(kernel, N, a, idx, poison(N, "float64"))
    assert msg.startswith("index 50 is out of bounds for axis 0 with size 50: array 'a' ("), msg
    assert msg.endswith(f", in kernel {name} at {threads_of([7])[0]}"), msg
    ptx = kernel.inspect_asm(kernel.signatures[0])
    assert re.findall(r"^\.visible \.(?:entry|global|func).*", ptx, re.M) == [
        ".visible .global .align 8 .b8 gj$error[72];",   # the error record, 9 int64 words
        f".visible .entry _gj_{name}("]


# ---- device functions ---------------------------------------------------------------

@gpujit.jit(device=True)
def load_at(a, k):
    return a[k] * 2          # the device function's access


@gpujit.jit(device=True)
def through(a, k):
    v = load_at(a, k)
    return v + 1


def via_device(a, idx, out, done):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = through(a, idx[i])
        done[i] = 1          # a thread whose device function failed does not get here


def test_device_functions_check_and_stop_the_thread(rng):
    a = random_array(rng, 20, "float64")
    idx = rng.integers(-20, 20, N)
    out, done = poison(N, "float64"), np.zeros(N, np.int8)
    launch(checked(via_device), N, a, idx, out, done)
    np.testing.assert_array_equal(out, a[idx] * 2 + 1)
    assert done.all()
    idx[250] = -21
    out, done = poison(N, "float64"), np.zeros(N, np.int8)
    msg = raises_index_error(checked(via_device), N, a, idx, out, done)
    assert msg.startswith("index -21 is out of bounds for axis 0 with size 20: array 'a' ")
    assert f"/{THIS_FILE}:{line_of(load_at, 'the device function')})" in msg
    assert "in kernel via_device at threadIdx (58, 0, 0) of blockIdx (3, 0, 0)" in msg
    assert done[250] == 0 and np.isnan(out[250])
    good = np.arange(N) != 250
    assert done[good].all()
    np.testing.assert_array_equal(out[good], a[idx[good]] * 2 + 1)


# ---- the launches after, and the switches -------------------------------------------

def test_the_next_launch_runs_correctly(rng):
    a = random_array(rng, 50, "float64")
    bad = np.full(N, 50)
    kernel = checked(gather)
    raises_index_error(kernel, N, a, bad, poison(N, "float64"))
    idx = rng.integers(-50, 50, N)
    out = poison(N, "float64")
    launch(kernel, N, a, idx.copy(), out)                 # the same kernel: no stale error
    np.testing.assert_array_equal(out, a[idx])
    out = poison(N, "float64")
    launch(gpujit.jit(gather), N, a, idx.copy(), out)    # another kernel
    np.testing.assert_array_equal(out, a[idx])


def test_one_of_the_failing_threads_is_reported(rng):
    a = random_array(rng, 50, "float64")
    idx = rng.integers(0, 50, N)
    bad = np.sort(rng.choice(N, 20, replace=False))
    idx[bad] = 50 + bad
    msg = raises_index_error(checked(gather), N, a, idx, poison(N, "float64"))
    k = int(re.match(r"index (\d+) ", msg).group(1)) - 50
    assert k in bad and threads_of([k])[0] in msg, msg


def test_switches(monkeypatch, rng, target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")
    a = random_array(rng, 50, "float64")
    idx = np.full(4, 3)
    assert "gj$error" not in gpujit.jit(gather).inspect_asm("void(float64[::1], int64[::1], "
                                                             "float64[::1])")
    for env, options, on in [(None, {}, False), (None, {"boundscheck": True}, True),
                             (None, {"debug": True}, True),
                             (None, {"debug": True, "boundscheck": False}, False),
                             ("1", {}, True), ("1", {"boundscheck": False}, False),
                             ("0", {"debug": True}, False), ("0", {"boundscheck": True}, True)]:
        if env is None:
            monkeypatch.delenv("GPUJIT_BOUNDSCHECK", raising=False)
        else:
            monkeypatch.setenv("GPUJIT_BOUNDSCHECK", env)
        kernel = gpujit.jit(**options)(gather)   # the variable is read when decorating
        monkeypatch.setenv("GPUJIT_BOUNDSCHECK", "0" if on else "1")
        out = poison(4, "float64")
        kernel[1, 4](a, idx.copy(), out)
        np.testing.assert_array_equal(out, a[3])
        ptx = kernel.inspect_asm(kernel.signatures[0])
        assert ("gj$error" in ptx) == on, (env, options)
    monkeypatch.setenv("GPUJIT_BOUNDSCHECK", "yes")
    with pytest.raises(ValueError, match="GPUJIT_BOUNDSCHECK must be 0"):
        gpujit.jit(gather)


def test_compile_ptx_takes_boundscheck(target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")
    sig = "void(float64[::1], int64[::1], float64[::1])"
    assert "gj$error" in gpujit.compile_ptx(gather, sig, boundscheck=True)[0]
    assert "gj$error" not in gpujit.compile_ptx(gather, sig)[0]


# ---- range loops: what the loop proves, and what it does not ------------------------

def grid_stride_double(x, stop):
    for i in range(gpujit.grid(1), stop, gpujit.gridsize(1)):
        x[i] = 2 * x[i]        # the grid-stride access


def test_a_grid_stride_loop_past_the_end_still_raises(rng):
    x = random_array(rng, N, "float64")
    want = 2 * x
    launch(checked(grid_stride_double), 64, x, N)     # fewer threads than elements
    np.testing.assert_array_equal(x, want)
    y = random_array(rng, N, "float64")
    msg = raises_index_error(checked(grid_stride_double), 64, y, N + 1)
    assert msg.startswith(f"index {N} is out of bounds for axis 0 with size {N}: array 'x' ")
    assert f"/{THIS_FILE}:{line_of(grid_stride_double, 'the grid-stride access')})" in msg


def ranges(a, start, stop, step, k32, out):
    i = gpujit.grid(1)
    if i == 0:
        n = 0
        for j in range(start, stop, step):           # the step's sign known at run time only
            out[n] = a[j]
            n += 1
        for j in range(k32, np.int32(-1), np.int32(-1)):   # int32, a negative constant step
            out[n] = a[j]
            n += 1
        for j in range(np.uint32(k32), np.uint32(0), np.uint32(2)):
            out[n] = a[j]                            # an unsigned range: empty
            n += 1
        for j, v in enumerate(a[:3], stop):          # enumerate's counter has no stop
            out[n] = v + j
            n += 1


@pytest.mark.parametrize("start,stop,step", [(2, 40, 3), (40, 2, -3), (-5, 5, 1), (5, -45, -7),
                                             (3, 3, 1), (0, 50, 0)])
def test_range_loops_of_every_step_check_as_python_indexes(rng, start, stop, step):
    a = random_array(rng, 50, "float64")
    out = poison(80, "float64")
    k32 = np.int32(4)
    first = [] if step == 0 else [a[j] for j in range(start, stop, step)]   # a kernel: no error
    want = first + [a[j] for j in range(4, -1, -1)] + \
        [v + j for j, v in enumerate(a[:3], stop)]
    checked(ranges)[1, 1](a, start, stop, step, k32, out)
    np.testing.assert_array_equal(out[:len(want)], want)
    assert np.isnan(out[len(want):]).all()


def test_range_loops_past_an_array_raise(rng):
    a = random_array(rng, 50, "float64")
    with pytest.raises(IndexError, match="index 50 is out of bounds for axis 0 with size 50"):
        checked(ranges)[1, 1](a, 45, 52, 1, np.int32(0), poison(80, "float64"))
    with pytest.raises(IndexError, match="index -51 is out of bounds for axis 0 with size 50"):
        checked(ranges)[1, 1](a, -49, -60, -1, np.int32(0), poison(80, "float64"))


# ---- PTX ----------------------------------------------------------------------------

def test_checked_ptx_assembles_and_has_no_trap(ptxas, tmp_path, target):
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")
    sigs = {gather: "void(float32[::1], int32[::1], float32[::1])",
            gather2: "void(float64[:, :], int64[::1], int64[::1], float64[::1])",
            shared_reverse: "void(float32[::1], float32[::1], int64)",
            count: "void(uint32[::1], int64[::1])",
            via_device: "void(float64[::1], int64[::1], float64[::1], int8[::1])",
            pick: "void(UniTuple(int64, 3), int64[::1], int64[::1])",
            ranges: "void(float64[::1], int64, int64, int64, int32, float64[::1])"}
    for fn, sig in sigs.items():
        ptx, _ = gpujit.compile_ptx(fn, sig, boundscheck=True)
        assert "trap" not in ptx
        assert_assembles(ptxas, ptx, tmp_path, fn.__name__)


def test_a_grid_stride_loop_to_the_extent_has_no_check_left(target):
    """The range's stop is the array's extent: the loop proves x[i], so no
    report call is left (and the loop unrolls as without boundscheck)."""
    if target == "cuda":
        pytest.skip("compiling: the CPU target's run says it")

    def double_all(x):
        for i in range(gpujit.grid(1), x.size, gpujit.gridsize(1)):
            x[i] = 2 * x[i]

    ptx, _ = gpujit.compile_ptx(double_all, "void(float32[::1])", boundscheck=True)
    assert "gj$error" in ptx and "call.uni" not in ptx


# ---- the GPU: the context survives ----------------------------------------------------

GPU_SCRIPT = textwrap.dedent("""
    import numpy as np
    import gpujit
    gpujit.set_target("cuda")

    @gpujit.jit(boundscheck=True)
    def wild(a):
        a[1 << 40] = 1.0            # faults without boundscheck (test_faults.py)

    @gpujit.jit(boundscheck=True)
    def empty(a, out):
        out[0] = a[0]

    @gpujit.jit
    def double(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = 2 * x[i]

    d = gpujit.to_device(np.arange(4, dtype=np.float32))
    for k, args in [(wild, (d,)), (empty, (gpujit.device_array(0), gpujit.device_array(1)))]:
        try:
            k[1, 1](*args)
            print("no error")
        except IndexError as e:
            print("IndexError", str(e).split(":")[0])
        except gpujit.GpujitError as e:
            print("other", type(e).__name__, e)
    x = np.random.default_rng().random(1 << 20)
    out = gpujit.device_array_like(x)
    double[(x.size + 255) // 256, 256](gpujit.to_device(x), out)
    print("after", np.array_equal(out.copy_to_host(), 2 * x), np.array_equal(d.copy_to_host(),
                                                                            np.arange(4)))
""")


@pytest.mark.gpu
def test_after_an_index_error_the_cuda_context_survives(target):
    if target == "cpu":
        pytest.skip("runs CUDA in a child process")
    assert child_output(GPU_SCRIPT)[:3] == [
        "IndexError index 1099511627776 is out of bounds for axis 0 with size 4",
        "IndexError index 0 is out of bounds for axis 0 with size 0",
        "after True True"]


@pytest.mark.parametrize("value", ["yes", 1, 0.0, [True]])
def test_boundscheck_option_must_be_a_bool(value):
    with pytest.raises(TypeError, match="boundscheck must be True, False or None"):
        gpujit.jit(boundscheck=value)
