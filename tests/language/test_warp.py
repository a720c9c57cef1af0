"""Warp and block primitives (numba.cuda's names): laneid/warpsize, the
syncthreads_count/and/or barriers, syncwarp, fences, the shfl_*_sync
shuffles, the *_sync votes, match_*_sync, activemask/lanemask_lt, and the
bit and arithmetic helpers popc/brev/clz/ffs/fma/cbrt/selp.

Each execution test checks every output element against a NumPy/Python
model of the warp (32 consecutive linear thread indices of a block).  Blocks
of 48 threads end in a partial warp of 16 lanes: a full mask names lanes that
do not exist, which take no part (ballot bits 0, activemask without them); a
shuffle reading such a lane is undefined on the GPU, so those elements are
not checked.  PTX shapes and ptxas acceptance, result types and diagnostics
are checked without a GPU."""
import math
from fractions import Fraction

import numpy as np
import pytest

import gpujit
import test_ptx
from conftest import poison
from gpujit import laneid

WARP = 32
BLOCKS = [32, 64, 96, 48]        # 48: a full warp and a partial one of 16 lanes
SHFL_DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
SMALL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16]


def result_type(func, sig):
    """The type name the compiler gives func's return for argument types sig."""
    return gpujit.compile_ptx(func, sig, device=True)[1]


def values(rng, n, dtype):
    """Random values of dtype that use every bit: both halves of 64-bit ints,
    full float mantissas and both signs."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 1000).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)


def ptx_of(func, sig):
    return gpujit.compile_ptx(func, sig)[0]


# ---- the model of a warp -------------------------------------------------------------

def shfl_source(kind, lane, arg, width):
    """The lane a shuffle reads (PTX shfl.sync with CUDA's c for `width`), or the
    caller's own lane when the source is outside its section."""
    base = lane & ~(width - 1)
    hi = base + width - 1
    if kind == "idx":
        return base | (arg & (width - 1))
    if kind == "up":
        j = lane - arg
        return j if j >= base else lane
    j = lane + arg if kind == "down" else lane ^ arg
    return j if j <= hi else lane


def shfl_model(kind, x, block, arg, width):
    """Expected results and which elements are defined (the source lane exists)."""
    n = x.size
    want = x.copy()
    defined = np.ones(n, bool)
    for i in range(n):
        t = i % block
        warp0 = i - t + t // WARP * WARP
        src = warp0 + shfl_source(kind, t % WARP, arg, width)
        if src - (i - t) >= block:   # beyond the block: a lane of a partial warp that is missing
            defined[i] = False
        else:
            want[i] = x[src]
    return want, defined


def warps_of(block, nblocks):
    """(start, length) of every warp of nblocks blocks of `block` threads."""
    out = []
    for b in range(nblocks):
        for w in range(0, block, WARP):
            out.append((b * block + w, min(WARP, block - w)))
    return out


# ---- laneid, warpsize, lanemask_lt ------------------------------------------------------

@gpujit.jit
def lane_registers(lane, size, lt):
    i = gpujit.grid(1)
    lane[i] = gpujit.laneid
    size[i] = gpujit.warpsize
    lt[i] = gpujit.lanemask_lt()


@gpujit.jit
def lane_2d(lane):
    i = gpujit.threadIdx.y * gpujit.blockDim.x + gpujit.threadIdx.x
    lane[gpujit.blockIdx.x, i] = gpujit.laneid


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("block", BLOCKS)
def test_laneid_warpsize_lanemask_lt(block):
    n = 2 * block
    lane, size = poison(n, np.int64), poison(n, np.int64)
    lt = poison(n, np.uint32)
    lane_registers[2, block](lane, size, lt)
    want = np.arange(n) % block % WARP
    np.testing.assert_array_equal(lane, want)
    np.testing.assert_array_equal(size, 32)
    np.testing.assert_array_equal(lt, (1 << want) - 1)


@pytest.mark.usefixtures("target")
def test_laneid_counts_linear_threads_of_a_2d_block():
    lane = poison((2, 16 * 6), np.int64)
    lane_2d[2, (16, 6)](lane)
    np.testing.assert_array_equal(lane, np.tile(np.arange(96) % 32, (2, 1)))


def test_register_values_are_int64_and_lanemask_uint32():
    def lane_value():
        return laneid

    def size_value():
        return gpujit.warpsize

    def mask():
        return gpujit.lanemask_lt()

    def chosen(c):
        return gpujit.laneid if c else 0      # a value crosses the branch

    assert result_type(lane_value, "()") == "int64"
    assert result_type(size_value, "()") == "int64"
    assert result_type(mask, "()") == "uint32"
    assert result_type(chosen, "(bool,)") == "int64"


# ---- shuffles ---------------------------------------------------------------------------

def shuffle_kernel(shfl):
    """A kernel applying shfl (a closure variable: frozen at compile time)."""
    @gpujit.jit
    def k(x, out, arg, width):
        i = gpujit.grid(1)
        out[i] = shfl(0xffffffff, x[i], arg, width)
    return k


SHUFFLES = {"idx": shuffle_kernel(gpujit.shfl_sync), "up": shuffle_kernel(gpujit.shfl_up_sync),
            "down": shuffle_kernel(gpujit.shfl_down_sync),
            "xor": shuffle_kernel(gpujit.shfl_xor_sync)}
# (lane, delta or lane mask; width)
SHFL_ARGS = {
    "idx": [(0, 32), (5, 32), (31, 32), (37, 32), (3, 16), (6, 8), (1, 2), (0, 1)],
    "up": [(1, 32), (5, 32), (16, 32), (31, 32), (3, 16), (2, 8), (1, 2)],
    "down": [(1, 32), (4, 32), (16, 32), (31, 32), (3, 16), (5, 8), (1, 2)],
    "xor": [(1, 32), (16, 32), (31, 32), (5, 32), (16, 16), (4, 8), (7, 4)],
}


def check_shuffle(kind, x, block, arg, width):
    out = poison(x.size, x.dtype)
    SHUFFLES[kind][x.size // block, block](x, out, np.int32(arg), width)
    want, defined = shfl_model(kind, x, block, arg, width)
    np.testing.assert_array_equal(out[defined], want[defined],
                                  err_msg=f"{kind} arg={arg} width={width} block={block}")


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", SHFL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", list(SHUFFLES))
def test_shuffle(kind, dtype, rng):
    for block in BLOCKS:
        x = values(rng, 2 * block, dtype)
        for arg, width in SHFL_ARGS[kind]:
            check_shuffle(kind, x, block, arg, width)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", SMALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", list(SHUFFLES))
def test_shuffle_of_narrow_types(kind, dtype, rng):
    x = values(rng, 96, dtype)
    for arg, width in SHFL_ARGS[kind][:3]:
        check_shuffle(kind, x, 96, arg, width)


@gpujit.jit
def shfl_keywords(x, out):
    i = gpujit.grid(1)
    mask = np.uint32(0xffffffff)
    out[0, i] = gpujit.shfl_sync(mask=mask, value=x[i], src_lane=3)
    out[1, i] = gpujit.shfl_sync(mask, x[i], 3, width=8)
    out[2, i] = gpujit.shfl_down_sync(-1, x[i], 1, 16)


@pytest.mark.usefixtures("target")
def test_shuffle_keywords_defaults_and_masks(rng):
    x = values(rng, 64, np.int32)
    out = poison((3, 64), np.int32)
    shfl_keywords[1, 64](x, out)
    np.testing.assert_array_equal(out[0], shfl_model("idx", x, 64, 3, 32)[0])
    np.testing.assert_array_equal(out[1], shfl_model("idx", x, 64, 3, 8)[0])
    np.testing.assert_array_equal(out[2], shfl_model("down", x, 64, 1, 16)[0])


@gpujit.jit
def warp_sum_down(x, out):
    i = gpujit.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += gpujit.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    if gpujit.laneid == 0:
        out[i // 32] = v


@gpujit.jit
def warp_sum_xor(x, out):
    i = gpujit.grid(1)
    v = x[i]
    for k in range(5):
        v += gpujit.shfl_xor_sync(0xffffffff, v, 16 >> k)
    out[i] = v


@gpujit.jit(device=True)
def warp_max(v):
    for k in range(5):
        v = max(v, gpujit.shfl_xor_sync(0xffffffff, v, 1 << k))
    return v


@gpujit.jit
def warp_max_kernel(x, out):
    i = gpujit.grid(1)
    out[i] = warp_max(x[i])


@pytest.mark.usefixtures("target")
def test_shuffles_in_a_device_function(rng):
    x = values(rng, 128, np.float32)
    out = poison(128, np.float32)
    warp_max_kernel[2, 64](x, out)
    np.testing.assert_array_equal(out, np.repeat(x.reshape(-1, 32).max(axis=1), 32))


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_warp_sum_with_shfl_down(dtype, rng):
    x = values(rng, 8 * 96, dtype)
    out = poison(x.size // 32, dtype)
    warp_sum_down[8, 96](x, out)
    want = x.reshape(-1, 32).sum(axis=1, dtype=dtype)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-9)   # signed sums may cancel


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32])
def test_butterfly_sum_with_shfl_xor(dtype, rng):
    x = values(rng, 4 * 64, dtype)
    out = poison(x.size, dtype)
    warp_sum_xor[4, 64](x, out)
    want = np.repeat(x.reshape(-1, 32).sum(axis=1, dtype=dtype), 32)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-2)
    # every lane ends with the same sum, bit for bit
    assert (out.reshape(-1, 32) == out.reshape(-1, 32)[:, :1]).all()


# ---- votes, match, activemask -----------------------------------------------------------

@gpujit.jit
def votes(x, ballot, all_, any_, eq):
    i = gpujit.grid(1)
    p = x[i] > 0
    ballot[i] = gpujit.ballot_sync(0xffffffff, p)
    all_[i] = gpujit.all_sync(0xffffffff, p)
    any_[i] = gpujit.any_sync(0xffffffff, p)
    eq[i] = gpujit.eq_sync(0xffffffff, x[i])


def warp_predicates(rng, block, nblocks):
    """Per warp: all true, all false or mixed, as int32 values (0 is false)."""
    x = np.zeros(block * nblocks, np.int32)
    for k, (s, n) in enumerate(warps_of(block, nblocks)):
        choice = k % 3
        x[s:s + n] = (rng.integers(1, 100, n) if choice == 0 else
                      0 if choice == 1 else rng.integers(0, 2, n) * rng.integers(1, 100, n))
    return x


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("block", BLOCKS)
def test_votes(block, rng):
    x = warp_predicates(rng, block, 3)
    n = x.size
    ballot = poison(n, np.uint32)
    all_, any_, eq = poison(n, np.int8), poison(n, np.int8), poison(n, np.int8)
    votes[3, block](x, ballot, all_, any_, eq)
    for s, m in warps_of(block, 3):
        p = x[s:s + m] > 0
        bits = np.packbits(np.pad(p, (0, 32 - m)), bitorder="little").view("<u4")[0]
        np.testing.assert_array_equal(ballot[s:s + m], bits)
        np.testing.assert_array_equal(all_[s:s + m], p.all())
        np.testing.assert_array_equal(any_[s:s + m], p.any())
        np.testing.assert_array_equal(eq[s:s + m], p.all() or not p.any())


@gpujit.jit
def ballot_of_low_lanes(x, out):
    i = gpujit.grid(1)
    out[i] = 7
    if gpujit.laneid < 16:
        out[i] = gpujit.ballot_sync(0x0000ffff, x[i] != 0)


@pytest.mark.usefixtures("target")
def test_ballot_with_a_partial_mask(rng):
    x = rng.integers(0, 2, 64).astype(np.int32)
    out = poison(64, np.uint32)
    ballot_of_low_lanes[1, 64](x, out)
    for w in range(2):
        bits = sum(1 << k for k in range(16) if x[32 * w + k])
        np.testing.assert_array_equal(out[32 * w:32 * w + 16], bits)
        np.testing.assert_array_equal(out[32 * w + 16:32 * w + 32], 7)


@gpujit.jit
def matches(x, any_, all_mask, all_pred):
    i = gpujit.grid(1)
    any_[i] = gpujit.match_any_sync(0xffffffff, x[i])
    m, p = gpujit.match_all_sync(0xffffffff, x[i])
    all_mask[i] = m
    all_pred[i] = p


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("block", [64, 48])
def test_match_any_and_all(block, dtype, rng):
    nblocks = 3
    x = rng.integers(0, 4, block * nblocks).astype(dtype)
    warps = warps_of(block, nblocks)
    x[warps[1][0]:warps[1][0] + warps[1][1]] = dtype(3)    # one warp with one value
    if np.dtype(dtype).itemsize == 8:
        x += dtype(1 << 40) if np.dtype(dtype).kind == "u" else dtype(0.5)
    n = x.size
    any_, all_mask = poison(n, np.uint32), poison(n, np.uint32)
    all_pred = poison(n, np.bool_)
    all_pred[:] = True
    matches[nblocks, block](x, any_, all_mask, all_pred)
    for s, m in warps_of(block, nblocks):
        w = x[s:s + m]
        for k in range(m):
            want = sum(1 << j for j in range(m) if w[j] == w[k])
            assert any_[s + k] == want, (s, k)
        uniform = (w == w[0]).all()
        # the lanes that took part: a partial warp's full mask names lanes that do not exist
        np.testing.assert_array_equal(all_mask[s:s + m], (1 << m) - 1 if uniform else 0)
        np.testing.assert_array_equal(all_pred[s:s + m], uniform)


@gpujit.jit
def active(out):
    i = gpujit.grid(1)
    out[i] = gpujit.activemask()


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("block", BLOCKS)
def test_activemask_in_converged_code(block):
    out = poison(2 * block, np.uint32)
    active[2, block](out)
    for s, m in warps_of(block, 2):
        np.testing.assert_array_equal(out[s:s + m], (1 << m) - 1)


@gpujit.jit
def divergent_active(out, ballots):
    t = gpujit.threadIdx.x
    if t % 2 == 0:
        out[t] = gpujit.activemask()
    else:
        out[t] = 0
    gpujit.syncthreads()
    if t < 16:
        out[t + 64] = gpujit.activemask()
    ballots[t] = gpujit.ballot_sync(0xffffffff, True)


@pytest.mark.usefixtures("target")
def test_activemask_in_divergent_code():
    """The lanes of the caller's branch, as the GPU gives them: even lanes
    only, then lanes 0-15; the ballot after the branch joins all 32 lanes."""
    out, ballots = poison(96, np.uint32), poison(32, np.uint32)
    divergent_active[1, 32](out, ballots)
    np.testing.assert_array_equal(out[0:32:2], 0x55555555)
    np.testing.assert_array_equal(out[1:32:2], 0)
    np.testing.assert_array_equal(out[64:80], 0xffff)
    np.testing.assert_array_equal(ballots, 0xffffffff)


@gpujit.jit
def aggregated_add(keep, counter, slots):
    """Warp-aggregated atomics: the leader of the active lanes adds for all."""
    t = gpujit.grid(1)
    if keep[t]:
        m = gpujit.activemask()
        leader = gpujit.ffs(m) - 1
        base = 0
        if gpujit.laneid == leader:
            base = gpujit.atomic.add(counter, 0, gpujit.popc(m))
        base = gpujit.shfl_sync(m, base, leader)
        slots[t] = base + gpujit.popc(m & gpujit.lanemask_lt())
    gpujit.syncthreads()


@pytest.mark.usefixtures("target")
def test_warp_aggregated_atomics(rng):
    keep = rng.random(256) < 0.4
    counter = np.zeros(1, np.int32)
    slots = np.full(256, -1, np.int32)
    aggregated_add[2, 128](keep, counter, slots)
    assert counter[0] == keep.sum()
    assert sorted(slots[keep]) == list(range(keep.sum()))   # each kept thread, one slot
    assert (slots[~keep] == -1).all()


# ---- block barriers with a result, syncwarp, fences --------------------------------------

@gpujit.jit
def sync_ops(x, count, all_, any_):
    i = gpujit.grid(1)
    b = gpujit.blockIdx.x
    for it in range(x.shape[0]):
        p = x[it, i]
        c = gpujit.syncthreads_count(p)
        a = gpujit.syncthreads_and(p)
        o = gpujit.syncthreads_or(p > 0)
        if gpujit.threadIdx.x == 0:
            count[it, b] = c
            all_[it, b] = a
            any_[it, b] = o


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("block", [32, 96, 48, 256])
def test_syncthreads_count_and_or(block, rng):
    iters, nblocks = 6, 3
    x = (rng.random((iters, block * nblocks)) < 0.5).astype(np.int32)
    x[1] = 1
    x[2] = 0
    x[3, :block] = 1                     # block 0 all true, the others random
    count, all_, any_ = (poison((iters, nblocks), np.int32) for _ in range(3))
    sync_ops[nblocks, block](x, count, all_, any_)
    per_block = x.reshape(iters, nblocks, block) != 0
    np.testing.assert_array_equal(count, per_block.sum(axis=2))
    np.testing.assert_array_equal(all_, per_block.all(axis=2))
    np.testing.assert_array_equal(any_, per_block.any(axis=2))


@gpujit.jit
def exchange_in_warp(x, scratch, out):
    i = gpujit.grid(1)
    scratch[i] = x[i] * 2
    gpujit.syncwarp()
    out[0, i] = scratch[i ^ 1]
    gpujit.syncwarp(0xffffffff)
    scratch[i] = x[i] * 3
    gpujit.threadfence_block()
    gpujit.syncwarp(mask=0xffffffff)
    out[1, i] = scratch[i ^ 2]
    gpujit.threadfence()
    gpujit.threadfence_system()


@pytest.mark.usefixtures("target")
def test_syncwarp_orders_an_exchange_through_memory(rng):
    x = values(rng, 128, np.int32) // 8
    scratch = poison(128, np.int32)
    out = poison((2, 128), np.int32)
    exchange_in_warp[2, 64](x, scratch, out)
    idx = np.arange(128)
    np.testing.assert_array_equal(out[0], x[idx ^ 1] * 2)
    np.testing.assert_array_equal(out[1], x[idx ^ 2] * 3)


# ---- the CPU target: misuse is an error, not a hang ------------------------------------

ON_CPU = pytest.mark.parametrize("target", ["cpu"], indirect=True)


@gpujit.jit
def misuse(kind, out):
    i = gpujit.grid(1)
    v = out[i]
    if kind == 0:                    # a width that is not a power of two
        v = gpujit.shfl_sync(0xffffffff, v, 0, 12)
    elif kind == 1:                  # a mask without the calling lane
        v = gpujit.shfl_sync(1 << (gpujit.laneid ^ 1), v, 0)
    elif kind == 2:                  # lanes of one mask at a shuffle and a vote
        if gpujit.laneid < 8:
            v = gpujit.shfl_sync(0xffffffff, v, 0)
        else:
            v = gpujit.ballot_sync(0xffffffff, v > 0)
    elif kind == 3:                  # a warp operation waits for a lane at the barrier
        if gpujit.laneid == 0:
            gpujit.syncthreads()
        else:
            v = gpujit.all_sync(0xffffffff, v > 0)
            gpujit.syncthreads()
    out[i] = v


@ON_CPU
@pytest.mark.parametrize("kind,text", [
    (0, "width must be a power of two"), (1, "does not name the calling lane"),
    (2, "at different warp operations, shfl_sync and ballot_sync"), (3, "a deadlock on the GPU")])
def test_cpu_target_reports_misuse(target, kind, text):
    with pytest.raises(gpujit.GpujitError, match="the CPU target could not run kernel ") as info:
        misuse[2, 64](kind, np.ones(128, np.int32))
    assert text in str(info.value)
    out = np.ones(128, np.int32)
    misuse[2, 64](4, out)            # no misuse: the target is still usable
    np.testing.assert_array_equal(out, 1)


@ON_CPU
def test_cpu_fences_are_llvm_fences_and_collectives_runtime_calls(target, rng):
    x = values(rng, 64, np.int32) // 8
    kernel = gpujit.jit(exchange_in_warp.__wrapped__)   # compiled for this target alone
    kernel[1, 64](x, poison(64, np.int32), poison((2, 64), np.int32))
    (ir,) = kernel.inspect_llvm().values()
    assert 'fence syncscope("singlethread") seq_cst' in ir      # threadfence_block
    assert "fence seq_cst" in ir                                 # threadfence(_system)
    assert "@gj_cpu_syncwarp_mask(" in ir


# ---- bit operations, fma, cbrt, selp ------------------------------------------------------

@gpujit.jit
def bit_ops(x, popc, brev, clz, ffs):
    i = gpujit.grid(1)
    if i < x.size:
        popc[i] = gpujit.popc(x[i])
        brev[i] = gpujit.brev(x[i])
        clz[i] = gpujit.clz(x[i])
        ffs[i] = gpujit.ffs(x[i])


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_popc_brev_clz_ffs(dtype, rng):
    bits = np.dtype(dtype).itemsize * 8
    x = values(rng, 500, dtype)
    x[:6] = [0, 1, 2 ** (bits - 1) if dtype in (np.uint32, np.uint64) else -1,
             x[6] >> 7, x[7] << 9, 1 << (bits - 2)]
    unsigned = np.dtype(f"u{bits // 8}")
    popc, clz = poison(x.size, dtype), poison(x.size, dtype)
    brev, ffs = poison(x.size, unsigned), poison(x.size, np.uint32)
    bit_ops[4, 128](x, popc, brev, clz, ffs)
    for k, v in enumerate(x.tolist()):
        u = v & ((1 << bits) - 1)
        assert popc[k] == bin(u).count("1"), (v, popc[k])
        assert int(brev[k]) == int(format(u, f"0{bits}b")[::-1], 2), (v, brev[k])
        assert clz[k] == bits - u.bit_length(), (v, clz[k])
        assert ffs[k] == (u & -u).bit_length(), (v, ffs[k])


def round_to(value, dtype):
    """The Fraction `value` rounded to nearest-even in dtype (exactly, unlike
    a rounding through float64 first)."""
    f = dtype(float(value))
    cands = [f, np.nextafter(f, dtype(np.inf)), np.nextafter(f, dtype(-np.inf))]
    best = min(abs(Fraction(float(c)) - value) for c in cands)
    near = [c for c in cands if abs(Fraction(float(c)) - value) == best]
    near.sort(key=lambda c: int(np.array(c).view(f"u{np.dtype(dtype).itemsize}")) & 1)
    return near[0]


@gpujit.jit
def fma_kernel(a, b, c, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = gpujit.fma(a[i], b[i], c[i])


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_rounds_once(dtype, rng):
    n = 256
    a = (rng.standard_normal(n) * 10).astype(dtype)
    b = (rng.standard_normal(n) * 10).astype(dtype)
    c = (rng.standard_normal(n) * 10).astype(dtype)
    # c = -(a*b rounded): the fused result is the product's rounding error,
    # an unfused one 0
    c[: n // 2] = -(a[: n // 2] * b[: n // 2])
    out = poison(n, dtype)
    fma_kernel[2, 128](a, b, c, out)
    want = [round_to(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), dtype)
            for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(out, np.array(want, dtype))
    assert (out[: n // 2] != 0).sum() > n // 4
    if hasattr(math, "fma") and dtype is np.float64:
        np.testing.assert_array_equal(out, [math.fma(x, y, z) for x, y, z in zip(a, b, c)])


@gpujit.jit
def cbrt_selp(x, y, cb, sel):
    i = gpujit.grid(1)
    if i < x.size:
        cb[i] = gpujit.cbrt(x[i])
        sel[i] = gpujit.selp(x[i] > y[i], x[i], y[i] * 2)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cbrt_and_selp(dtype, rng):
    x = values(rng, 300, dtype)
    y = values(rng, 300, dtype)
    cb, sel = poison(300, dtype), poison(300, dtype)
    cbrt_selp[3, 128](x, y, cb, sel)
    np.testing.assert_allclose(cb, np.cbrt(x), rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_array_equal(sel, np.where(x > y, x, y * dtype(2)))


RESULT_TYPES = [   # (call, argument type, result type)
    ("gpujit.popc(x)", "int16", "int16"),
    ("gpujit.popc(x)", "uint64", "uint64"),
    ("gpujit.clz(x)", "int32", "int32"),
    ("gpujit.brev(x)", "int32", "uint32"),
    ("gpujit.brev(x)", "int64", "uint64"),
    ("gpujit.ffs(x)", "int64", "uint32"),
    ("gpujit.fma(x, x, 1.0)", "float32", "float32"),
    ("gpujit.fma(x, x, 1.0)", "int32", "float64"),
    ("gpujit.cbrt(x)", "float32", "float32"),
    ("gpujit.selp(x > 0, x, 1)", "int32", "int32"),
    ("gpujit.syncthreads_count(x)", "bool", "int32"),
    ("gpujit.ballot_sync(0xffffffff, x)", "float64", "uint32"),
    ("gpujit.all_sync(0xffffffff, x)", "int32", "bool"),
    ("gpujit.match_any_sync(0xffffffff, x)", "int64", "uint32"),
    ("gpujit.match_all_sync(0xffffffff, x)", "float32", "tuple(uint32, bool)"),
    ("gpujit.activemask()", "int32", "uint32"),
] + [("gpujit.shfl_sync(0xffffffff, x, 0)", t, t)
     for t in ("int8", "uint16", "bool", "float16", "float32", "uint64")]


@pytest.mark.parametrize("call,argtype,want", RESULT_TYPES)
def test_result_types_follow_numba(call, argtype, want):
    scope = {"gpujit": gpujit}
    exec(f"def f(x):\n    return {call}\n", scope)
    assert result_type(scope["f"], f"({argtype},)") == want


# ---- PTX ---------------------------------------------------------------------------------

def everything(x, out, d):
    i = gpujit.grid(1)
    v = x[i]
    v += gpujit.shfl_sync(0xffffffff, v, d)
    v += gpujit.shfl_up_sync(0xffffffff, v, d)
    v += gpujit.shfl_down_sync(0xffffffff, v, d)
    v += gpujit.shfl_xor_sync(0xffffffff, v, d, 16)
    m = gpujit.ballot_sync(0xffffffff, v > 0)
    b = gpujit.popc(m) + gpujit.brev(m) + gpujit.clz(m) + gpujit.ffs(m)
    b += gpujit.all_sync(0xffffffff, v > 0) + gpujit.any_sync(0xffffffff, v > 0)
    b += gpujit.eq_sync(0xffffffff, v > 0)
    b += gpujit.match_any_sync(0xffffffff, v) + gpujit.match_all_sync(0xffffffff, v)[0]
    b += gpujit.activemask() + gpujit.lanemask_lt()
    b += gpujit.syncthreads_count(v > 0) + gpujit.syncthreads_and(v) + gpujit.syncthreads_or(v)
    gpujit.syncwarp()
    gpujit.threadfence()
    gpujit.threadfence_block()
    gpujit.threadfence_system()
    out[i] = gpujit.selp(b > 3, gpujit.fma(v, v, 1.0), gpujit.cbrt(v)) + gpujit.laneid


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "uint64"])
def test_ptx_shapes_and_ptxas(dtype, ptxas, tmp_path):
    ptx = ptx_of(everything, f"void({dtype}[:], float64[:], int32)")
    for shape in ("shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32",
                  "shfl.sync.bfly.b32", "vote.sync.ballot.b32", "vote.sync.all.pred",
                  "vote.sync.any.pred", "vote.sync.uni.pred", "match.any.sync.b",
                  "match.all.sync.b", "activemask.b32", "%lanemask_lt", "bar.red.popc",
                  "bar.red.and", "bar.red.or", "bar.warp.sync", "membar.gl", "membar.cta",
                  "membar.sys", "popc.b32", "brev.b32", "clz.b32", "%laneid"):
        assert shape in ptx, shape
    test_ptx.test_ptxas_accepts(everything, f"void({dtype}[:], float64[:], int32)", ptxas, tmp_path)


def test_64_bit_shuffle_is_two_32_bit_ones():
    def k(x, out, d):
        i = gpujit.grid(1)
        out[i] = gpujit.shfl_down_sync(0xffffffff, x[i], d)

    ptx = ptx_of(k, "void(float64[:], float64[:], int32)")
    assert ptx.count("shfl.sync.down.b32") == 2
    ptx = ptx_of(k, "void(float32[:], float32[:], int32)")
    assert ptx.count("shfl.sync.down.b32") == 1
    # CUDA's c operand for width 32: clamp 31, no section bits
    assert "31, -1;" in ptx


def test_fma_is_one_instruction():
    ptx = ptx_of(fma_kernel.py_func, "void(float32[:], float32[:], float32[:], float32[:])")
    assert "fma.rn.f32" in ptx
    ptx = ptx_of(fma_kernel.py_func, "void(float64[:], float64[:], float64[:], float64[:])")
    assert "fma.rn.f64" in ptx


def test_fences_are_membar_not_fence_instructions():
    def k(x):
        x[0] = 1
        gpujit.threadfence()
        x[1] = 2

    ptx = ptx_of(k, "void(int32[:])")
    assert "membar.gl" in ptx and "fence." not in ptx


# ---- diagnostics --------------------------------------------------------------------------

def shuffle_an_array(x, out):
    out[0] = gpujit.shfl_sync(0xffffffff, x, 0)


def shuffle_a_complex(x, out):
    out[0] = gpujit.shfl_down_sync(0xffffffff, x[0], 1)


def float_mask(x, out):
    out[0] = gpujit.ballot_sync(1.5, x[0] > 0)


def popc_of_float(x, out):
    out[0] = gpujit.popc(x[0])


@pytest.mark.parametrize("func,sig,text", [
    (shuffle_an_array, "void(float32[:], float32[:])",
     "gpujit.shfl_sync() needs a bool, integer or float for 'value', not array(float32, 1d, A)"),
    (shuffle_a_complex, "void(complex64[:], complex64[:])",
     "gpujit.shfl_down_sync() needs a bool, integer or float for 'value', not complex64"),
    (float_mask, "void(float32[:], uint32[:])",
     "gpujit.ballot_sync() needs an integer for 'mask', not float literal"),
    (popc_of_float, "void(float32[:], int32[:])",
     "gpujit.popc() arguments must be integers, not float32"),
])
def test_typing_errors_name_the_function_and_type(func, sig, text):
    with pytest.raises(gpujit.TypingError) as info:
        gpujit.compile_ptx(func, sig)
    assert text in str(info.value)


def test_shuffle_arity_and_keywords_are_checked():
    def too_few(x, out):
        out[0] = gpujit.shfl_sync(0xffffffff, x[0])

    def unknown_keyword(x, out):
        out[0] = gpujit.shfl_sync(0xffffffff, x[0], 1, size=8)

    with pytest.raises(gpujit.TypingError, match=r"takes 3 to 4 arguments, got 2"):
        gpujit.compile_ptx(too_few, "void(int32[:], int32[:])")
    with pytest.raises(gpujit.TypingError, match=r"unexpected keyword argument 'size'"):
        gpujit.compile_ptx(unknown_keyword, "void(int32[:], int32[:])")
