"""Atomics (gpujit.atomic.*): every operation on every dtype it supports,
with many threads of several blocks hitting a few elements at once.  The
final array is checked against a Python fold and the returned old values
against the chain they must form (each application maps the value it read
to the next one).  Also: compare-and-swap from every thread, 2-D arrays
with negative indices, a histogram against numpy.bincount, the float
min/max NaN rules, arrays written only by atomics being copied back,
the typing errors, and the PTX instructions."""
import re
import subprocess
from collections import Counter

import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

execution = pytest.mark.usefixtures("target")
atomic = gpujit.atomic

INTS = ["int32", "int64", "uint32", "uint64"]
FLOATS = ["float32", "float64"]

# op name -> (the dtypes gpujit supports it on, the Python value of op(old, v))
OPS = {
    "add": (INTS + FLOATS + ["float16"], lambda o, v: o + v),
    "sub": (INTS + FLOATS, lambda o, v: o - v),
    "and_": (INTS, lambda o, v: o & v),
    "or_": (INTS, lambda o, v: o | v),
    "xor": (INTS, lambda o, v: o ^ v),
    "exch": (INTS, lambda o, v: v),
    "max": (INTS + FLOATS, lambda o, v: max(o, v)),
    "min": (INTS + FLOATS, lambda o, v: min(o, v)),
    "nanmin": (INTS + FLOATS, lambda o, v: min(o, v)),
    "nanmax": (INTS + FLOATS, lambda o, v: max(o, v)),
    "inc": (["uint32", "uint64"], lambda o, v: 0 if o >= v else o + 1),
    "dec": (["uint32", "uint64"], lambda o, v: v if o == 0 or o > v else o - 1),
}
ALL_DTYPES = INTS + FLOATS + ["float16"]
CASES = [(op, dt) for op, (dts, _) in OPS.items() for dt in dts]
UNSUPPORTED = [(op, dt) for op, (dts, _) in OPS.items() for dt in ALL_DTYPES if dt not in dts]

NSLOTS = 7


def make_apply(op):
    """Thread i applies op to ary[slots[i, j]] with vals[i, j], for each j."""
    def apply(ary, slots, vals, olds):
        i = gpujit.grid(1)
        if i < slots.shape[0]:
            for j in range(slots.shape[1]):
                olds[i, j] = op(ary, slots[i, j], vals[i, j])
    return apply


APPLY = {name: gpujit.jit(make_apply(getattr(atomic, name))) for name in OPS}


def wrap(x, dtype):
    """Python number x as a value of dtype (integers wrap as in the kernel)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return (int(x) - info.min) % (1 << info.bits) + info.min
    return dtype.type(x).item()


def values(rng, op, dtype, n):
    """Operands for op: exact under float rounding in any order (small
    integers for float add/sub), spanning signs and the high bit otherwise."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if op in ("add", "sub"):
            return rng.integers(-8, 9, size=n).astype(dtype)
        return random_array(rng, n, dtype)
    info = np.iinfo(dtype)
    if op in ("add", "sub"):
        lo = -(1 << 20) if dtype.kind == "i" else 0
        return rng.integers(lo, 1 << 20, size=n).astype(dtype)
    return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)


def check_chain(init, olds, vals, final, f):
    """The olds of one element form a chain from init to final: as
    multisets, {init} + {f(old, v)} == {olds} + {final}."""
    produced = Counter([init] + [f(o, v) for o, v in zip(olds, vals)])
    consumed = Counter(list(olds) + [final])
    assert produced == consumed


@execution
@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
@pytest.mark.parametrize("nthreads", [1, 200])
def test_every_op_and_dtype(op, dtype, nthreads, rng):
    f = OPS[op][1]
    per_thread = 3
    slots = rng.integers(0, NSLOTS, size=(nthreads, per_thread)).astype(np.int64)
    if op in ("inc", "dec"):
        # the same bound for every application to a slot: the fold is order-free
        bound = rng.integers(3, 40, size=NSLOTS).astype(dtype)
        init = (bound + rng.integers(-2, 2, size=NSLOTS)).astype(dtype)
        vals = bound[slots]
    else:
        init = values(rng, op, dtype, NSLOTS)
        vals = values(rng, op, dtype, slots.size).reshape(slots.shape)
    ary = init.copy()
    olds = poison(slots.shape, dtype)
    APPLY[op][(nthreads + 63) // 64, 64](ary, slots, vals, olds)

    py = [x.item() for x in init]
    for s in range(NSLOTS):
        hit = slots == s
        o = [x.item() for x in olds[hit]]
        v = [x.item() for x in vals[hit]]
        g = lambda a, b: wrap(f(a, b), dtype)   # noqa: E731
        check_chain(py[s], o, v, ary[s].item(), g)
        if op != "exch":   # every other op's final value is independent of the order
            expect = py[s]
            for x in v:
                expect = g(expect, x)
            assert ary[s].item() == expect, (s, ary[s], expect)
        elif v:
            assert ary[s].item() in v


@execution
def test_returns_old_value_and_keeps_int32(rng):
    # a Python int literal into an int32 array stays int32 (no int64 widening)
    @gpujit.jit
    def count(ary, olds):
        i = gpujit.grid(1)
        if i < olds.size:
            olds[i] = atomic.add(ary, 0, 1)

    n = 300
    ary = np.array([5], np.int32)
    olds = poison(n, np.int32)
    count[5, 64](ary, olds)
    assert ary[0] == 5 + n
    np.testing.assert_array_equal(np.sort(olds), np.arange(5, 5 + n, dtype=np.int32))


@execution
def test_cas_one_winner(rng):
    @gpujit.jit
    def grab(flag, olds):
        i = gpujit.grid(1)
        olds[i] = atomic.cas(flag, 0, 0, 7)

    for dtype in INTS:
        flag = np.zeros(1, dtype)
        olds = poison(4 * 128, dtype)
        grab[4, 128](flag, olds)
        assert flag[0] == 7
        assert (olds == 0).sum() == 1, dtype
        assert (olds == 7).sum() == olds.size - 1


@execution
@pytest.mark.parametrize("dtype", INTS)
def test_cas_per_slot(dtype, rng):
    # every thread tries to replace the initial value of its slot; exactly one does
    @gpujit.jit
    def swap(ary, slots, expected, vals, olds):
        i = gpujit.grid(1)
        if i < slots.size:
            olds[i] = atomic.cas(ary, slots[i], expected[slots[i]], vals[i])

    n = 250
    init = values(rng, "exch", dtype, NSLOTS)
    slots = rng.integers(0, NSLOTS, size=n)
    vals = values(rng, "exch", dtype, n)
    vals[vals == init[slots]] += 1
    ary, olds = init.copy(), poison(n, dtype)
    swap[4, 64](ary, slots, init, vals, olds)
    for s in range(NSLOTS):
        hit = np.flatnonzero(slots == s)
        if hit.size == 0:
            assert ary[s] == init[s]
            continue
        winners = hit[olds[hit] == init[s]]
        assert winners.size == 1
        assert ary[s] == vals[winners[0]]
        assert (olds[hit] == ary[s]).sum() == hit.size - 1


@execution
def test_2d_negative_index(rng):
    @gpujit.jit
    def tally(hist, k):
        i = gpujit.grid(1)
        if i < k.size:
            atomic.add(hist, (k[i] % 4, -1), 1)
            atomic.add(hist, (-1 - k[i] % 4, 0), 2)

    k = rng.integers(0, 1000, size=1000)
    hist = np.zeros((4, 3), np.int32)
    tally[16, 64](hist, k)
    counts = np.bincount(k % 4, minlength=4)
    np.testing.assert_array_equal(hist[:, 2], counts)
    np.testing.assert_array_equal(hist[:, 0], 2 * counts[::-1])
    np.testing.assert_array_equal(hist[:, 1], 0)


@execution
def test_nd_and_negative_1d_index(rng):
    @gpujit.jit
    def bump(a3, a1, olds):
        i = gpujit.grid(1)
        if i < olds.shape[0]:
            olds[i, 0] = atomic.max(a3, (1, -1, i % 2), i)
            olds[i, 1] = atomic.sub(a1, -2, 3)

    n = 100
    a3 = np.full((2, 3, 2), -5, np.int64)
    a1 = np.zeros(5, np.int64)
    olds = poison((n, 2), np.int64)
    bump[2, 64](a3, a1, olds)
    want = np.full((2, 3, 2), -5, np.int64)
    want[1, 2] = [n - 2, n - 1]
    np.testing.assert_array_equal(a3, want)
    np.testing.assert_array_equal(a1, [0, 0, 0, -3 * n, 0])
    np.testing.assert_array_equal(np.sort(olds[:, 1]), -3 * np.arange(n)[::-1])


@execution
@pytest.mark.parametrize("n", [1, 100, 1000, 4097])
def test_histogram_matches_bincount(n, rng):
    @gpujit.jit
    def histogram(x, bins):
        i = gpujit.grid(1)
        if i < x.size:
            atomic.add(bins, x[i], 1)

    x = rng.integers(0, 37, size=n).astype(np.int32)
    bins = np.zeros(37, np.int32)
    histogram[(n + 127) // 128, 128](x, bins)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=37))


BINS = 64


@execution
@pytest.mark.parametrize("n, threads", [(1, 64), (63, 64), (1000, 128), (4097, 256), (70001, 96)])
def test_shared_memory_histogram(n, threads, rng):
    """Privatised histogram: each block counts into a shared int32[BINS] with
    atomic.add (old values summed per block as a check), then adds its bins
    into the global histogram; a grid-stride loop and a partial last block."""
    @gpujit.jit
    def histogram(x, hist, olds):
        local = gpujit.shared.array(BINS, np.int32)
        t = gpujit.threadIdx.x
        j = t
        while j < BINS:
            local[j] = 0
            j += gpujit.blockDim.x
        gpujit.syncthreads()
        i = gpujit.grid(1)
        seen = 0
        while i < x.size:
            seen += atomic.add(local, x[i], 1) >= 0
            i += gpujit.gridsize(1)
        olds[gpujit.grid(1)] = seen
        gpujit.syncthreads()
        j = t
        while j < BINS:
            atomic.add(hist, j, local[j])
            j += gpujit.blockDim.x
    x = rng.integers(0, BINS, size=n).astype(np.uint8)
    hist = np.zeros(BINS, np.int32)
    blocks = min(7, (n + threads - 1) // threads)
    olds = poison(blocks * threads, np.int64)
    histogram[blocks, threads](x, hist, olds)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=BINS))
    assert olds.sum() == n    # every returned old value was a count >= 0


def make_once(op):
    """One thread applies op to a[0] with v[0]."""
    @gpujit.jit
    def once(a, v, olds):
        olds[0] = op(a, 0, v[0])
    return once


ONCE = {name: make_once(getattr(atomic, name)) for name in ("max", "min", "nanmax", "nanmin")}


NAN = float("nan")
# (op, element, value, element after).  max/min are Python's max(ary[idx], val):
# a NaN element stays NaN, a NaN value changes nothing (as numba's atomic.max);
# nanmin/nanmax treat NaN as missing on both sides (numpy.nanmin/nanmax of the two).
FLOAT_MINMAX = [
    ("max", -7.0, -3.5, -3.5),
    ("max", -3.5, -7.0, -3.5),
    ("max", -0.5, 2.0, 2.0),
    ("max", NAN, -3.5, NAN),
    ("max", -3.5, NAN, -3.5),
    ("min", -3.5, -7.0, -7.0),
    ("min", -7.0, -3.5, -7.0),
    ("min", NAN, 1.0, NAN),
    ("min", 1.0, NAN, 1.0),
    ("nanmin", NAN, -3.5, -3.5),
    ("nanmin", -3.5, NAN, -3.5),
    ("nanmin", NAN, NAN, NAN),
    ("nanmin", 2.0, -3.5, -3.5),
    ("nanmax", NAN, -3.5, -3.5),
    ("nanmax", -3.5, NAN, -3.5),
    ("nanmax", NAN, NAN, NAN),
    ("nanmax", -7.0, -3.5, -3.5),
]


@execution
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op,elem,val,after", FLOAT_MINMAX)
def test_float_minmax_nan_rules(op, elem, val, after, dtype):
    a = np.array([elem], dtype)
    olds = poison(1, dtype)
    ONCE[op][1, 1](a, np.array([val], dtype), olds)
    np.testing.assert_array_equal(a, np.array([after], dtype))
    np.testing.assert_array_equal(olds, np.array([elem], dtype))


@execution
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_max_many_threads(dtype, rng):
    @gpujit.jit
    def reduce_max(x, out):
        i = gpujit.grid(1)
        if i < x.size:
            atomic.max(out, 0, x[i])
            atomic.min(out, 1, x[i])

    x = random_array(rng, 5000, dtype) - 2000   # mostly negative
    out = np.array([-np.inf, np.inf], dtype)
    reduce_max[(x.size + 255) // 256, 256](x, out)
    np.testing.assert_array_equal(out, [x.max(), x.min()])


@gpujit.jit
def add_only(ary, n):
    i = gpujit.grid(1)
    if i < n:
        atomic.add(ary, i % ary.size, 1)


@execution
def test_array_written_only_by_atomics_is_copied_back():
    # a strided host array goes through a contiguous copy, which comes back
    # only if the kernel may write it; the atomic row's GJ_IF_WRITES_ARG0 says so
    base = np.zeros(20, np.int32)
    add_only[2, 64](base[::2], 100)
    np.testing.assert_array_equal(base[::2], [10] * 10)
    np.testing.assert_array_equal(base[1::2], 0)


@gpujit.jit(device=True)
def count_into(ary, k):
    return atomic.add(ary, k, 1)


@gpujit.jit
def count_through_device_function(ary, olds):
    i = gpujit.grid(1)
    if i < olds.size:
        olds[i] = count_into(ary, i % 3)


@execution
def test_atomic_in_device_function_and_keywords():
    base = np.zeros(6, np.int64)
    olds = poison(90, np.int64)
    count_through_device_function[2, 64](base[::2], olds)   # written back through the copy
    np.testing.assert_array_equal(base, [30, 0, 30, 0, 30, 0])
    for k in range(3):
        np.testing.assert_array_equal(np.sort(olds[k::3]), np.arange(30))

    @gpujit.jit
    def by_keyword(ary, olds):
        i = gpujit.grid(1)
        olds[i] = atomic.cas(ary, idx=0, old=0, val=i + 1)

    ary = np.zeros(1, np.int32)
    olds = poison(64, np.int32)
    by_keyword[1, 64](ary, olds)
    assert (olds == 0).sum() == 1 and ary[0] == np.flatnonzero(olds == 0)[0] + 1


@execution
def test_read_only_array_refused_for_atomics():
    ary = np.zeros(4, np.int32)
    ary.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        add_only[1, 32](ary, 10)


# ---- typing ------------------------------------------------------------------------

@pytest.mark.parametrize("op,dtype", UNSUPPORTED, ids=[f"{o}-{d}" for o, d in UNSUPPORTED])
def test_unsupported_dtype_is_a_typing_error(op, dtype):
    with pytest.raises(gpujit.TypingError, match=rf"gpujit\.atomic\.{op}\(\) does not support "
                                                 rf"{dtype} arrays"):
        gpujit.compile_ptx(make_apply(getattr(atomic, op)),
                           f"void({dtype}[:], int64[:, :], {dtype}[:, :], {dtype}[:, :])")


FROZEN = np.zeros(4, np.int32)


def add_to_frozen(out):
    out[0] = atomic.add(FROZEN, 0, 1)


def add_to_view(ary, out):
    out[0] = atomic.add(ary, 0, 1)


def add_complex(ary, out):
    out[0] = atomic.add(ary, 0, 1j)


def add_bool(ary, out):
    out[0] = atomic.add(ary, 0, 1)


def swap_in_2d(ary):
    atomic.compare_and_swap(ary, 0, 1)


def swap_floats(ary):
    atomic.compare_and_swap(ary, 0.0, 1.0)


@pytest.mark.parametrize("func,sig,message", [
    (swap_in_2d, "void(int32[:, :])", r"compare_and_swap\(\) needs a 1-d array"),
    (swap_floats, "void(float32[:])", r"compare_and_swap\(\) does not support float32 arrays"),
    (add_to_frozen, "void(int32[:])", r"gpujit\.atomic\.add\(\) cannot write to readonly array"),
    (add_to_view, "void(int32[:, :], int32[:])", r"needs the index of one element"),
    (add_complex, "void(float64[:], float64[:])", r"needs a real number"),
    (add_bool, "void(bool[:], int32[:])", r"does not support bool arrays"),
])
def test_typing_errors(func, sig, message):
    with pytest.raises(gpujit.TypingError, match=message):
        gpujit.compile_ptx(func, sig)


# ---- PTX -----------------------------------------------------------------------------

def ptx_of(op, dtype):
    def k(ary, slots, vals, olds):
        i = gpujit.grid(1)
        olds[i, 0] = op(ary, slots[i, 0], vals[i, 0])
    return gpujit.compile_ptx(k, f"void({dtype}[:], int64[:, :], {dtype}[:, :], {dtype}[:, :])")[0]


@pytest.mark.parametrize("op,dtype,instruction", [
    ("add", "float32", "atom.global.add.f32"),
    ("add", "float64", "atom.global.add.f64"),
    ("add", "float16", "atom.global.add.noftz.f16"),
    ("add", "int32", "atom.global.add.u32"),
    ("add", "uint64", "atom.global.add.u64"),
    ("sub", "float32", "atom.global.add.f32"),   # the addition of -val
    ("max", "int32", "atom.global.max.s32"),
    ("max", "uint32", "atom.global.max.u32"),
    ("min", "int64", "atom.global.min.s64"),
    ("and_", "int32", "atom.global.and.b32"),
    ("or_", "uint64", "atom.global.or.b64"),
    ("xor", "int32", "atom.global.xor.b32"),
    ("exch", "int64", "atom.global.exch.b64"),
    ("inc", "uint32", "atom.global.inc.u32"),
    ("dec", "uint32", "atom.global.dec.u32"),
    ("max", "float32", "atom.global.cas.b32"),
    ("nanmin", "float64", "atom.global.cas.b64"),
    ("nanmax", "float32", "atom.global.cas.b32"),
    ("nanmax", "uint64", "atom.global.max.u64"),
])
def test_ptx_instruction(op, dtype, instruction, ptxas, tmp_path):
    ptx = ptx_of(getattr(atomic, op), dtype)
    assert instruction in ptx
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_ptxas_accepts_every_op(op, dtype, ptxas, tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(ptx_of(getattr(atomic, op), dtype))
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_ptx_cas():
    def k(ary, olds):
        i = gpujit.grid(1)
        olds[i] = atomic.cas(ary, i, 0, 1)
    # LLVM 21 spells the relaxed (monotonic) ordering out: atom.relaxed.global.cas
    ptx, _ = gpujit.compile_ptx(k, "void(int32[:], int32[:])")
    assert re.search(r"\batom(\.relaxed)?\.global\.cas\.b32\b", ptx), ptx
    ptx, _ = gpujit.compile_ptx(k, "void(uint64[:], uint64[:])")
    assert re.search(r"\batom(\.relaxed)?\.global\.cas\.b64\b", ptx), ptx


def test_ptx_int_literal_stays_32_bit():
    def k(ary):
        atomic.add(ary, gpujit.grid(1), 1)
    ptx, _ = gpujit.compile_ptx(k, "void(int32[:])")
    assert "atom.global.add.u32" in ptx
