"""What a compiled kernel uses and the launch configurations that fit it:
numba's get_regs_per_thread(), get_shared_mem_per_block(),
get_local_mem_per_thread(), get_const_mem_size() and
get_max_threads_per_block() (one value for a specialized kernel, a dict by
signature otherwise), suggest_config() from the driver's occupancy
calculator, and forall() sized by it.  Execution tests run on every target
and compare with NumPy on random data; what only a GPU has (registers, the
occupancy calculator's choice) is marked gpu."""
import math

import numpy as np
import pytest

import gpujit
from conftest import poison

TABLE = np.linspace(-1.0, 1.0, 1000)   # frozen into constant memory: 8000 bytes

F32 = ("array(float32, 1d, C)", "array(float32, 1d, C)")
F64 = ("array(float64, 1d, C)", "array(float64, 1d, C)")


def scale(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * 3


def copy(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i]


def tile_sum(x, out):
    """out[i] = x[i] + x[i + 1] within a block, through 16 KiB of shared memory."""
    tile = gpujit.shared.array((64, 64), np.float32)
    t = gpujit.threadIdx.x
    i = gpujit.grid(1)
    if i < x.size:
        tile[t // 64, t % 64] = x[i]
    gpujit.syncthreads()
    if i < out.size:
        u = t + 1 if t + 1 < gpujit.blockDim.x and i + 1 < x.size else t
        out[i] = tile[t // 64, t % 64] + tile[u // 64, u % 64]


def tile_sum_numpy(x, block):
    want = x.copy()
    for start in range(0, x.size, block):
        part = x[start:start + block]
        want[start:start + part.size - 1] = part[:-1] + part[1:]
        want[start + part.size - 1] = 2 * part[-1]
    return want


def pick(x, idx, out):
    """A local array indexed by data: it cannot live in registers."""
    buf = gpujit.local.array(256, np.float32)
    i = gpujit.grid(1)
    if i < out.size:
        for j in range(256):
            buf[j] = x[i] * j
        out[i] = buf[idx[i] % 256]


def lookup(idx, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = TABLE[idx[i]]


def dynamic(x, out):
    buf = gpujit.shared.array(0, np.float32)
    t = gpujit.threadIdx.x
    i = gpujit.grid(1)
    if i < x.size:
        buf[t] = x[i]
    gpujit.syncthreads()
    if i < out.size:
        out[i] = buf[t] * 2


def block_dim(out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = gpujit.blockDim.x


# ---- what a kernel uses --------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_static_shared_memory_is_at_least_the_kernels_arrays(rng):
    k = gpujit.jit(tile_sum)
    x = rng.standard_normal(3000).astype(np.float32)
    out = poison(x.size, np.float32)
    blocks, threads = k.suggest_config(x.size, signature="void(float32[::1], float32[::1])")
    k[blocks, threads](x, out)
    np.testing.assert_array_equal(out, tile_sum_numpy(x, threads))
    assert k.get_shared_mem_per_block(F32) >= 64 * 64 * 4
    assert k.get_shared_mem_per_block() == {F32: k.get_shared_mem_per_block(F32)}
    sig = "void(float32[::1], float32[::1])"
    assert gpujit.jit(sig)(copy).get_shared_mem_per_block(sig) == 0


@pytest.mark.usefixtures("target")
def test_local_memory_holds_a_local_array_indexed_by_data(rng):
    k = gpujit.jit("void(float32[::1], int64[::1], float32[::1])")(pick)
    x = rng.standard_normal(500).astype(np.float32)
    idx = rng.integers(0, 1 << 20, 500)
    out = poison(500, np.float32)
    k.forall(x.size)(x, idx, out)
    np.testing.assert_allclose(out, x * (idx % 256).astype(np.float32), rtol=1e-6)
    assert k.get_local_mem_per_thread() >= 256 * 4


@pytest.mark.usefixtures("target")
def test_constant_memory_holds_the_frozen_arrays(rng):
    k = gpujit.jit("void(int64[::1], float64[::1])")(lookup)
    idx = rng.integers(0, TABLE.size, 700)
    out = poison(700, np.float64)
    k.forall(idx.size)(idx, out)
    np.testing.assert_array_equal(out, TABLE[idx])
    assert k.get_const_mem_size() >= TABLE.nbytes


@pytest.mark.usefixtures("target")
def test_max_threads_per_block_is_the_limit_or_the_launch_bounds():
    sig = "void(float32[::1], float32[::1])"
    assert gpujit.jit([sig])(copy).get_max_threads_per_block(sig) == 1024
    bounded = gpujit.jit(sig, launch_bounds=256)(copy)
    assert bounded.get_max_threads_per_block() == 256


@pytest.mark.usefixtures("target")
def test_without_a_signature_a_dict_unless_specialized(rng):
    k = gpujit.jit(scale)
    assert k.get_local_mem_per_thread() == {}   # numba's answer before any compile
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal(100).astype(dtype)
        out = poison(100, dtype)
        k.forall(x.size)(x, out)
        np.testing.assert_array_equal(out, x * 3)
    for query in (k.get_shared_mem_per_block, k.get_local_mem_per_thread,
                  k.get_const_mem_size, k.get_max_threads_per_block):
        values = query()
        assert set(values) == {F32, F64} == set(k.signatures)
        assert all(isinstance(v, int) and v >= 0 for v in values.values())
        assert values[F32] == query(F32) and values[F64] == query(F64)
    one = gpujit.jit("void(float32[::1], float32[::1])")(scale)
    assert one.specialized and one.get_max_threads_per_block() == 1024
    listed = gpujit.jit(["void(float32[::1], float32[::1])"])(scale)   # numba: not specialized
    assert not listed.specialized and listed.get_max_threads_per_block() == {F32: 1024}
    special = k.specialize(np.zeros(1, np.float64), np.zeros(1, np.float64))
    assert special.get_max_threads_per_block() == 1024


@pytest.mark.usefixtures("target")
def test_a_signature_not_compiled_is_a_key_error_and_compiles_nothing(rng):
    # numba's queries look the signature up in kernel.overloads
    k = gpujit.jit(scale)
    i32 = "void(int32[::1], int32[::1])"
    for query in (k.get_shared_mem_per_block, k.get_local_mem_per_thread,
                  k.get_const_mem_size, k.get_max_threads_per_block):
        with pytest.raises(KeyError) as info:
            query(i32)
        assert info.value.args == (f"kernel scale has no specialisation for '{i32}': compile "
                                   f"it first (scale.compile(signature), or a launch)",)
        with pytest.raises(KeyError, match="no specialisation for"):
            query(gpujit.void(gpujit.int32[::1], gpujit.int32[::1]))
        with pytest.raises(KeyError):
            query(F64)   # a key of .signatures that is not one
    assert k.signatures == []
    x = rng.integers(-100, 100, 50).astype(np.int32)
    out = poison(50, np.int32)
    k.forall(x.size)(x, out)
    np.testing.assert_array_equal(out, x * 3)
    assert k.get_shared_mem_per_block(i32) == 0 and k.get_max_threads_per_block(i32) == 1024
    assert k.compile("void(float64[::1], float64[::1])") == F64
    assert k.get_max_threads_per_block(F64) == 1024
    assert k.get_max_threads_per_block("void(float64[::1], float64[::1])") == 1024
    listed = gpujit.jit([i32, "void(float32[::1], float32[::1])"])(scale)   # numba compiles them
    assert listed.get_const_mem_size("void(float32[::1], float32[::1])") == 0


def test_registers_of_a_signature_not_compiled_are_a_key_error_on_every_target(target):
    # on the CPU target too, where registers of a compiled one are refused
    k = gpujit.jit(scale)
    i32 = "void(int32[::1], int32[::1])"
    with pytest.raises(KeyError, match="no specialisation for"):
        k.get_regs_per_thread(i32)
    k.compile(i32)
    if target == "cpu":
        with pytest.raises(gpujit.CudaSupportError, match="no registers per thread"):
            k.get_regs_per_thread(i32)
    else:
        assert k.get_regs_per_thread(i32) > 0


@pytest.mark.usefixtures("cpu")
def test_the_cpu_target_has_no_registers():
    k = gpujit.jit("void(float32[::1], float32[::1])")(scale)
    with pytest.raises(gpujit.CudaSupportError, match="CPU target.*no registers per thread"):
        k.get_regs_per_thread()
    with pytest.raises(gpujit.CudaSupportError):
        gpujit.jit(scale).get_regs_per_thread()


def test_a_device_function_has_no_launch_of_its_own():
    dev = gpujit.jit(device=True)(lambda a: a + 1)
    for call in (dev.get_shared_mem_per_block, lambda: dev.suggest_config(10),
                 lambda: dev.forall(10)):
        with pytest.raises(RuntimeError, match="device function"):
            call()


# ---- suggest_config and forall -----------------------------------------------------

@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("n", [1, 1000, 123457])
def test_suggest_config_covers_n_threads_in_whole_warps(target, rng, n):
    k = gpujit.jit(scale)
    x = rng.standard_normal(n).astype(np.float32)
    out = poison(n, np.float32)
    sig = "void(float32[::1], float32[::1])"
    blocks, threads = k.suggest_config(n, signature=sig)
    assert isinstance(blocks, int) and isinstance(threads, int)
    assert threads % 32 == 0 and 32 <= threads <= k.get_max_threads_per_block(sig)
    assert blocks == math.ceil(n / threads)
    if target == "cpu":
        assert threads == 128   # the CPU target's documented choice
    k[blocks, threads](x, out)
    np.testing.assert_array_equal(out, x * 3)
    assert k.suggest_config(n) == (blocks, threads)   # its one specialisation


@pytest.mark.usefixtures("target")
def test_suggest_config_with_dynamic_shared_memory(rng):
    k = gpujit.jit(dynamic)
    sig = "void(float32[::1], float32[::1])"
    with pytest.raises(ValueError, match="dynamic shared memory"):
        k.suggest_config(100, signature=sig)   # the kernel needs some: as a launch says
    blocks, threads = k.suggest_config(5000, sharedmem=1024 * 4, signature=sig)
    assert threads <= 1024 and blocks == math.ceil(5000 / threads)
    x = rng.standard_normal(5000).astype(np.float32)
    out = poison(5000, np.float32)
    k[blocks, threads, 0, threads * 4](x, out)
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("args,error,match", [
    ((0,), ValueError, r"n \(threads to launch\) must be at least 1, not 0"),
    ((-5,), ValueError, "at least 1"),
    ((1.5,), TypeError, "must be an int, not float"),
    (("10",), TypeError, "must be an int, not str"),
    ((True,), TypeError, "must be an int, not bool"),
    ((10, -1), ValueError, r"sharedmem \(bytes per block\) must be at least 0"),
    ((10, 2.0), TypeError, "sharedmem .* must be an int"),
    ((10, 1 << 20), ValueError, "exceeds the device's limit of"),
    ((1 << 45,), ValueError, "grid-stride loop"),
])
def test_suggest_config_refuses_bad_arguments(args, error, match):
    k = gpujit.jit("void(float32[::1], float32[::1])")(scale)
    with pytest.raises(error, match=match):
        k.suggest_config(*args)


@pytest.mark.usefixtures("target")
def test_suggest_config_needs_a_signature_unless_the_kernel_has_one(rng):
    k = gpujit.jit(scale)
    with pytest.raises(TypeError, match="no compiled specialisation yet"):
        k.suggest_config(100)
    for dtype in (np.float32, np.float64):
        k[1, 32](np.ones(32, dtype), np.zeros(32, dtype))
    with pytest.raises(TypeError, match="has 2 specialisations; choose one with signature="):
        k.suggest_config(100)
    assert k.suggest_config(100, signature=F64)[0] >= 1
    n_numpy = np.int64(100)   # NumPy integers count as ints
    assert k.suggest_config(n_numpy, signature=F64) == k.suggest_config(100, signature=F64)


@pytest.mark.usefixtures("target")
def test_forall_uses_the_suggested_block_size(rng):
    k = gpujit.jit(block_dim)
    out = poison(3000, np.int64)
    k.forall(out.size)(out)
    blocks, threads = k.suggest_config(out.size)
    np.testing.assert_array_equal(out, threads)
    out = poison(3000, np.int64)
    k.forall(out.size, tpb=64)(out)
    np.testing.assert_array_equal(out, 64)


@pytest.mark.usefixtures("target")
def test_forall_with_dynamic_shared_memory(rng):
    k = gpujit.jit(dynamic)
    x = rng.standard_normal(2000).astype(np.float32)
    out = poison(x.size, np.float32)
    k.forall(x.size, sharedmem=1024 * 4)(x, out)
    np.testing.assert_array_equal(out, x * 2)


@pytest.mark.usefixtures("target")
def test_forall_of_no_task_launches_nothing():
    k = gpujit.jit(scale)
    k.forall(0)(np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert k.signatures == []   # as numba's: nothing compiled either


@pytest.mark.parametrize("args,error,match", [
    ((-1,), ValueError, r"forall\(\): ntasks must be at least 0, not -1"),
    ((2.5,), TypeError, r"forall\(\): ntasks must be an int, not float"),
    ((10, -32), ValueError, "tpb"),
    ((10, 32.0), TypeError, "tpb"),
])
def test_forall_refuses_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        gpujit.jit(scale).forall(*args)


# ---- what only a GPU has ---------------------------------------------------------------

@pytest.fixture
def cuda():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    yield
    gpujit.set_target(previous)


def many_live(x, out, rounds):
    """Sixteen float64 values live through a loop: registers, many of them."""
    i = gpujit.grid(1)
    if i + 16 <= x.size:
        a0, a1, a2, a3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        a4, a5, a6, a7 = x[i + 4], x[i + 5], x[i + 6], x[i + 7]
        a8, a9, a10, a11 = x[i + 8], x[i + 9], x[i + 10], x[i + 11]
        a12, a13, a14, a15 = x[i + 12], x[i + 13], x[i + 14], x[i + 15]
        for _ in range(rounds):
            a0, a1, a2, a3 = a1 * a2 + a3, a2 * a3 + a4, a3 * a4 + a5, a4 * a5 + a6
            a4, a5, a6, a7 = a5 * a6 + a7, a6 * a7 + a8, a7 * a8 + a9, a8 * a9 + a10
            a8, a9, a10, a11 = a9 * a10 + a11, a10 * a11 + a12, a11 * a12 + a13, a12 * a13 + a14
            a12, a13, a14, a15 = a13 * a14 + a15, a14 * a15 + a0, a15 * a0 + a1, a0 * a1 + a2
        out[i] = (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13
                  + a14 + a15)


@pytest.mark.gpu
@pytest.mark.usefixtures("cuda")
def test_registers_grow_with_the_values_a_thread_keeps():
    trivial = gpujit.jit("void(float64[::1], float64[::1])")(copy)
    busy = gpujit.jit("void(float64[::1], float64[::1], int64)")(many_live)
    few, many = trivial.get_regs_per_thread(), busy.get_regs_per_thread()
    assert isinstance(few, int) and isinstance(many, int)
    assert 0 < few < many
    assert many >= 32   # sixteen float64 values are 32 registers
    assert busy.get_max_threads_per_block() <= 1024


@pytest.mark.gpu
@pytest.mark.usefixtures("cuda")
def test_registers_of_each_specialisation(rng):
    k = gpujit.jit(many_live)
    for dtype in (np.float32, np.float64):
        x = rng.uniform(-0.5, 0.5, 64).astype(dtype)
        k[1, 32](x, poison(64, dtype), 2)
    regs = k.get_regs_per_thread()
    assert len(regs) == 2 and set(regs) == set(k.signatures)
    for sig, n in regs.items():
        assert isinstance(n, int) and n > 0 and n == k.get_regs_per_thread(sig)


@pytest.mark.gpu
@pytest.mark.usefixtures("cuda")
def test_max_registers_caps_the_registers():
    capped = gpujit.jit("void(float64[::1], float64[::1], int64)", max_registers=32)(many_live)
    assert capped.get_regs_per_thread() <= 32


@pytest.mark.gpu
@pytest.mark.usefixtures("cuda")
def test_the_occupancy_calculator_respects_launch_bounds_and_shared_memory(rng):
    bounded = gpujit.jit("void(float32[::1], float32[::1])", launch_bounds=96)(scale)
    blocks, threads = bounded.suggest_config(10_000)
    assert threads <= 96 and blocks == math.ceil(10_000 / threads)
    # 200 KiB of dynamic shared memory per block: one block per multiprocessor
    # (an H200 has 228 KiB), so the biggest block the kernel allows
    k = gpujit.jit("void(float32[::1], float32[::1])")(dynamic)
    shared = 200 * 1024
    blocks, threads = k.suggest_config(50_000, sharedmem=shared)
    assert threads == k.get_max_threads_per_block()
    x = rng.standard_normal(50_000).astype(np.float32)
    out = poison(x.size, np.float32)
    k[blocks, threads, 0, shared](x, out)
    np.testing.assert_array_equal(out, x * 2)
