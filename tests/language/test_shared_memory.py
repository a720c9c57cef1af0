"""Memory spaces: gpujit.shared.array (static shapes from literals and
module-level globals, and dynamic shared memory sized by the launch),
gpujit.local.array, gpujit.const.array_like, shared and local arrays passed
to device functions, and the launch's shared-memory limits (the opt-in above
48 KiB and the device's limit).  Execution tests run on every target and
compare with NumPy on random data; the PTX and diagnostic tests need no GPU
(ptxas checks the PTX when it is installed)."""
import os
import re
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import assert_fma_close, poison, random_array
from test_diagnostics import compile_error, line_of

THIS_FILE = os.path.basename(__file__)

TILE = 64            # a module-level int as a shape
SHAPE = (3, 4)       # a module-level tuple as a shape
BLOCK_ROWS = 8       # rows of a tile each thread of the transposition copies
REDUCE_BLOCK = 128
COEFFS = np.array([0.5, -1.25, 2.0, 3.5, -0.75], dtype=np.float64)


def run(kernel, x, block, sharedmem=0, grid=None):
    """Launches kernel(x, out) with enough blocks of `block` threads for
    x.size (or `grid` blocks) and returns out (x's dtype, poisoned first)."""
    out = poison(x.size, x.dtype)
    kernel[grid or (x.size + block - 1) // block, block, 0, sharedmem](x, out)
    return out


def ptxas_check(ptxas, ptx, tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ---- kernels ----------------------------------------------------------------------


@gpujit.jit
def reverse_in_blocks(x, out):
    """Each block reverses its (up to) TILE items through a shared array."""
    buf = gpujit.shared.array(TILE, np.float32)
    t = gpujit.threadIdx.x
    start = gpujit.blockIdx.x * TILE
    m = min(TILE, x.size - start)
    if t < m:
        buf[t] = x[start + t]
    gpujit.syncthreads()
    if t < m:
        out[start + m - 1 - t] = buf[t]


@gpujit.jit
def local_matrix(x, out):
    """out[i] = sum over a (3, 4) local matrix m[r, c] = x[i] * (r + 1) - c, read
    back with negative and tuple indices."""
    m = gpujit.local.array(SHAPE, dtype=np.float64)
    i = gpujit.grid(1)
    if i >= x.size:
        return
    for r in range(SHAPE[0]):
        for c in range(SHAPE[1]):
            m[r, c] = x[i] * (r + 1) - c
    total = 0.0
    for r in range(1, SHAPE[0] + 1):
        for c in range(1, SHAPE[1] + 1):
            total += m[-r, -c]
    out[i] = total + m.shape[0] * 1000 + m.shape[1] * 100 + m.size


def make_block_sums(dtype):
    """A tree reduction of each block's items in a shared array of dtype."""
    @gpujit.jit
    def block_sums(x, partial):
        sm = gpujit.shared.array(REDUCE_BLOCK, dtype)
        t = gpujit.threadIdx.x
        i = gpujit.grid(1)
        sm[t] = x[i] if i < x.size else 0
        gpujit.syncthreads()
        stride = gpujit.blockDim.x // 2
        while stride > 0:
            if t < stride:
                sm[t] += sm[t + stride]
            gpujit.syncthreads()
            stride //= 2
        if t == 0:
            partial[gpujit.blockIdx.x] = sm[0]
    return block_sums


@gpujit.jit
def alias_dynamic(x, bits, lengths):
    """Two dynamic shared arrays of different dtypes start at the same byte."""
    f = gpujit.shared.array(0, np.float32)
    b = gpujit.shared.array(0, dtype=np.int32)
    d = gpujit.shared.array(0, np.float64)
    t = gpujit.threadIdx.x
    f[t] = x[t]
    gpujit.syncthreads()
    bits[t] = b[t]
    if t == 0:
        lengths[0] = len(f)
        lengths[1] = b.size
        lengths[2] = d.shape[0]
        lengths[3] = f.ndim


@gpujit.jit
def dynamic_with_static(x, out):
    """Static and dynamic shared memory side by side: neither overwrites the other."""
    st = gpujit.shared.array(TILE, np.int32)
    dy = gpujit.shared.array(0, np.float32)
    t = gpujit.threadIdx.x
    st[t] = t * 3
    dy[t] = x[t]
    gpujit.syncthreads()
    out[t] = dy[TILE - 1 - t] + st[TILE - 1 - t]


@gpujit.jit(device=True)
def fill_powers(buf, base):
    """buf[k] = base ** k for every k: writes through its array argument."""
    v = 1.0
    for k in range(buf.size):
        buf[k] = v
        v *= base


@gpujit.jit(device=True)
def total(buf):
    s = 0.0
    for k in range(buf.size):
        s += buf[k]
    return s


@gpujit.jit
def powers_local(x, out):
    """A local array filled by a device function, then summed by the kernel."""
    i = gpujit.grid(1)
    if i >= x.size:
        return
    p = gpujit.local.array(6, np.float64)
    fill_powers(p, x[i])
    s = 0.0
    for k in range(p.size):
        s += p[k]
    out[i] = s


@gpujit.jit
def powers_shared_and_local(x, out):
    """The same device functions on a shared array (one specialisation) and a
    local array (another)."""
    sm = gpujit.shared.array((REDUCE_BLOCK, 6), np.float64)
    t = gpujit.threadIdx.x
    i = gpujit.grid(1)
    if i < x.size:
        fill_powers(sm[t], x[i])
        p = gpujit.local.array(6, np.float64)
        fill_powers(p, x[i] * 2)
        out[i] = total(sm[t]) + total(p)


@gpujit.jit
def transpose(a, out):
    """Tiled transposition through a (TILE, TILE + 1) shared tile (the extra
    column avoids bank conflicts), with tuple and negative indices."""
    tile = gpujit.shared.array((TILE, TILE + 1), np.float32)
    tx = gpujit.threadIdx.x
    ty = gpujit.threadIdx.y
    x = gpujit.blockIdx.x * TILE + tx
    y0 = gpujit.blockIdx.y * TILE + ty
    for k in range(0, TILE, BLOCK_ROWS):
        y = y0 + k
        if y < a.shape[0] and x < a.shape[1]:
            tile[ty + k, tx] = a[y, x]
    gpujit.syncthreads()
    x = gpujit.blockIdx.y * TILE + tx
    y0 = gpujit.blockIdx.x * TILE + ty
    for k in range(0, TILE, BLOCK_ROWS):
        y = y0 + k
        if y < out.shape[0] and x < out.shape[1]:
            idx = (tx, ty + k - (TILE + 1))   # a negative column: counts from the end
            out[y, x] = tile[idx]


@gpujit.jit
def shared_views(x, out):
    """Views of a shared array: a reversed slice and a row of a 2-D array."""
    sm = gpujit.shared.array(TILE, np.float32)
    grid2 = gpujit.shared.array((2, TILE // 2), np.float32)
    t = gpujit.threadIdx.x
    sm[t] = x[t]
    grid2[t // (TILE // 2), t % (TILE // 2)] = x[t] * 2
    gpujit.syncthreads()
    rev = sm[::-1]
    row = grid2[1]
    out[t] = rev[t] + row[t % (TILE // 2)]


@gpujit.jit
def with_constants(x, out):
    c = gpujit.const.array_like(COEFFS)
    i = gpujit.grid(1)
    if i < x.size:
        out[i] = x[i] * c[i % c.size] + c[-1]


@gpujit.jit
def big_dynamic(x, out):
    """Reverses x through dynamic shared memory of any size (64 KiB here)."""
    sm = gpujit.shared.array(0, np.float32)
    n = sm.size
    t = gpujit.threadIdx.x
    k = t
    while k < n:
        sm[k] = x[k]
        k += gpujit.blockDim.x
    gpujit.syncthreads()
    k = t
    while k < n:
        out[k] = sm[n - 1 - k]
        k += gpujit.blockDim.x


# ---- execution -------------------------------------------------------------------


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("n", [1, TILE, 1000])
def test_shared_array_of_module_level_size(rng, n):
    x = random_array(rng, n, np.float32)
    out = run(reverse_in_blocks, x, TILE)
    ref = np.concatenate([x[s:s + TILE][::-1] for s in range(0, n, TILE)])
    np.testing.assert_array_equal(out, ref)


@pytest.mark.usefixtures("target")
def test_local_array_of_module_level_tuple_shape(rng):
    n = 300
    x = random_array(rng, n, np.float64)
    out = run(local_matrix, x, 64)
    r = np.arange(1, 4)[:, None]
    c = np.arange(4)[None, :]
    ref = (x[:, None, None] * r - c).sum(axis=(1, 2)) + 3 * 1000 + 4 * 100 + 12
    # 12 terms of up to 3000 summed in another order: absolute rounding error, as the
    # total can cancel to near zero
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-10)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("n", [1000, 1024, 129, 1, 777])
def test_tree_reduction_in_shared_memory(rng, n, dtype):
    blocks = (n + REDUCE_BLOCK - 1) // REDUCE_BLOCK
    assert n != 1000 or blocks == 8
    x = random_array(rng, n, dtype)
    partial = poison(blocks, dtype)
    make_block_sums(dtype)[blocks, REDUCE_BLOCK](x, partial)
    padded = np.zeros(blocks * REDUCE_BLOCK, dtype)
    padded[:n] = x
    # sums of signed values in another order: an absolute bound where they cancel
    np.testing.assert_allclose(partial, padded.reshape(blocks, -1).sum(axis=1), rtol=1e-12,
                               atol=1e-9)


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("extra", [0, 6])
def test_dynamic_shared_arrays_alias(rng, extra):
    n = 96
    sharedmem = 4 * n + extra           # not a multiple of 8: lengths round down
    x = random_array(rng, n, np.float32)
    bits = poison(n, np.int32)
    lengths = poison(4, np.int64)
    alias_dynamic[1, n, 0, sharedmem](x, bits, lengths)
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(lengths, [sharedmem // 4, sharedmem // 4, sharedmem // 8, 1])


@pytest.mark.usefixtures("target")
def test_dynamic_shared_memory_is_apart_from_static(rng):
    x = random_array(rng, TILE, np.float32)
    out = run(dynamic_with_static, x, TILE, 4 * TILE)
    np.testing.assert_array_equal(out, (x[::-1] + 3 * np.arange(TILE)[::-1]).astype(np.float32))


@pytest.mark.usefixtures("target")
def test_local_array_filled_by_device_function(rng):
    n = 500
    x = random_array(rng, n, np.float64, -2, 2)
    out = run(powers_local, x, 128)
    ref = sum(x ** k for k in range(6))
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-13)   # the sum can cancel to ~0


@pytest.mark.usefixtures("target")
def test_device_function_on_shared_and_local_arrays(rng):
    n = 300
    x = random_array(rng, n, np.float64, -2, 2)
    out = run(powers_shared_and_local, x, REDUCE_BLOCK)
    ref = sum(x ** k for k in range(6)) + sum((2 * x) ** k for k in range(6))
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-11)   # terms up to 2**10


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("rows,cols", [(200, 130), (64, 64), (1, 77)])
def test_tiled_transpose(rng, rows, cols):
    a = random_array(rng, rows * cols, np.float32).reshape(rows, cols)
    out = poison((cols, rows), np.float32)
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    transpose[grid, (TILE, BLOCK_ROWS)](a, out)
    np.testing.assert_array_equal(out, a.T)


@pytest.mark.usefixtures("target")
def test_views_of_shared_arrays(rng):
    x = random_array(rng, TILE, np.float32)
    out = run(shared_views, x, TILE)
    half = TILE // 2
    np.testing.assert_array_equal(out, x[::-1] + 2 * x[half:][np.arange(TILE) % half])


@pytest.mark.usefixtures("target")
def test_const_array_like(rng):
    n = 257
    x = random_array(rng, n, np.float64)
    out = run(with_constants, x, 64)
    product = x * COEFFS[np.arange(n) % COEFFS.size]
    assert_fma_close(out, product + COEFFS[-1], product)   # x * c + d may fuse


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("kib", [48, 64, 200])
def test_dynamic_shared_memory_above_48_kib(rng, kib):
    n = kib * 1024 // 4
    x = random_array(rng, n, np.float32)
    out = run(big_dynamic, x, 1024, 4 * n, grid=1)
    np.testing.assert_array_equal(out, x[::-1])


@pytest.mark.usefixtures("target")
def test_static_and_dynamic_above_48_kib(rng):
    n = 40 * 1024 // 4                     # 40 KiB dynamic + 256 bytes static
    x = random_array(rng, TILE, np.float32)
    ref = (x[::-1] + 3 * np.arange(TILE)[::-1]).astype(np.float32)
    np.testing.assert_array_equal(run(dynamic_with_static, x, TILE, 4 * n), ref)
    # 48 KiB dynamic + 256 bytes static: past 48 KiB, so the kernel opts in
    np.testing.assert_array_equal(run(dynamic_with_static, x, TILE, 48 * 1024), ref)


@pytest.mark.usefixtures("target")
def test_shared_memory_beyond_the_limit_is_a_value_error():
    x = np.ones(4, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"shared memory of \d+ bytes per block .* exceeds the "
                                         r"device's limit of (\d+) bytes") as info:
        big_dynamic[1, 32, 0, 1 << 20](x, out)
    limit = int(re.search(r"limit of (\d+) bytes", str(info.value)).group(1))
    assert limit >= 48 * 1024
    with pytest.raises(ValueError, match=f"limit of {limit} bytes"):
        big_dynamic[1, 32, 0, limit + 4](x, out)
    with pytest.raises(ValueError, match=r"\(256 static, "):   # the static part counts too
        dynamic_with_static[1, TILE, 0, limit - 128](x, out)
    assert (out == 0).all()   # nothing was launched


@pytest.mark.gpu
def test_opt_in_limit_is_the_devices():
    """The limit in the message is the device's opt-in limit, and a launch
    just below it runs (cuFuncSetAttribute before the launch)."""
    previous = gpujit.set_target("cuda")
    try:
        dev = gpujit.get_current_device()
        limit = dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        assert limit > dev.MAX_SHARED_MEMORY_PER_BLOCK
        x = np.arange(limit // 4, dtype=np.float32)
        out = run(big_dynamic, x, 1024, limit, grid=1)
        np.testing.assert_array_equal(out, x[::-1])
        with pytest.raises(ValueError, match=f"limit of {limit} bytes"):
            big_dynamic[1, 1024, 0, limit + 16](x, out)
    finally:
        gpujit.set_target(previous)


# ---- typing errors ----------------------------------------------------------------


def runtime_shape(x, n):
    buf = gpujit.shared.array(n, np.float32)
    buf[0] = x[0]


def runtime_local_shape(x, n):
    buf = gpujit.local.array((4, n + 1), np.float32)
    buf[0, 0] = x[0]


def test_runtime_shape_is_a_typing_error():
    msg = compile_error(runtime_shape, "void(float32[:], int64)", gpujit.TypingError)
    assert f"{THIS_FILE}:{line_of(runtime_shape, 'shared.array(n')}" in msg
    assert "shape of gpujit.shared.array() must be a compile-time constant" in msg
    assert "int64" in msg and "shape 0" in msg
    msg = compile_error(runtime_local_shape, "void(float32[:], int64)", gpujit.TypingError)
    assert f"{THIS_FILE}:{line_of(runtime_local_shape, 'local.array(')}" in msg
    assert "shape of gpujit.local.array() must be a compile-time constant" in msg


def bad_dtype(x):
    buf = gpujit.local.array(4, 3)
    buf[0] = x[0]


def nonpositive(x):
    buf = gpujit.local.array((4, 0), np.float32)
    buf[0, 0] = x[0]


def static_too_big(x):
    buf = gpujit.shared.array(12 * 1024 + 1, np.float32)
    buf[0] = x[0]


def statics_too_big(x):
    a = gpujit.shared.array((96, 64), np.float64)
    b = gpujit.shared.array(4, np.float32)
    a[0, 0] = x[0]
    b[0] = x[0]


def const_of_argument(x):
    c = gpujit.const.array_like(x)
    x[0] = c[1]


@pytest.mark.parametrize("func,exc,text", [
    (bad_dtype, gpujit.TypingError, "dtype of gpujit.local.array() must be a NumPy scalar type"),
    (nonpositive, gpujit.TypingError, "shape (4, 0) has an extent of 0; each must be positive"),
    (static_too_big, gpujit.TypingError, "48 KiB of shared memory a kernel may declare "
                                         "statically"),
    (statics_too_big, gpujit.LoweringError, "need 49168 bytes, more than the 48 KiB"),
    (const_of_argument, gpujit.TypingError, "needs a module-level NumPy array"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_memory_space_errors(func, exc, text):
    msg = compile_error(func, "void(float32[:])", exc)
    assert text in msg, msg
    assert f"{THIS_FILE}:" in msg


# ---- PTX ------------------------------------------------------------------------------


def local_small(x, out):
    m = gpujit.local.array(SHAPE, np.float32)
    i = gpujit.grid(1)
    for r in range(3):
        for c in range(4):
            m[r, c] = x[i] * r + c
    out[i] = m[2, 3] + m[-1, 0]


def local_indexed(x, out, j):
    m = gpujit.local.array(16, np.float32)
    for k in range(16):
        m[k] = x[k]
    out[0] = m[j]


def device_fn_on_shared(x, out):
    sm = gpujit.shared.array((REDUCE_BLOCK, 6), np.float64)
    t = gpujit.threadIdx.x
    fill_powers(sm[t], x[t])
    gpujit.syncthreads()
    out[t] = total(sm[REDUCE_BLOCK - 1 - t])


def test_ptx_static_shared(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(transpose.py_func, "void(float32[:, ::1], float32[:, ::1])")
    assert re.search(rf"\.shared \.align 16 \.b8 [\w$]+\[{TILE * (TILE + 1) * 4}\];", ptx)
    assert "st.shared.f32" in ptx and "ld.shared.f32" in ptx
    assert ".extern .shared" not in ptx and ".local" not in ptx
    ptxas_check(ptxas, ptx, tmp_path)


def test_ptx_dynamic_shared(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(dynamic_with_static.py_func, "void(float32[::1], float32[::1])")
    assert re.search(r"\.extern \.shared \.align 16 \.b8 [\w$]+\[\];", ptx)
    assert re.search(rf"^\s*\.shared \.align 16 \.b8 [\w$]+\[{TILE * 4}\];", ptx, re.M)
    assert "st.shared.u32" in ptx and "st.shared.f32" in ptx and "ld.shared.f32" in ptx
    ptx, _ = gpujit.compile_ptx(alias_dynamic.py_func,
                                "void(float32[::1], int32[::1], int64[::1])")
    assert len(re.findall(r"\.extern \.shared", ptx)) == 1   # one region, every dtype
    assert "%dynamic_smem_size" in ptx
    ptxas_check(ptxas, ptx, tmp_path)


def test_ptx_local_arrays(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(local_small, "void(float32[::1], float32[::1])")
    assert ".local" not in ptx and "ld.local" not in ptx   # small, constant indices: registers
    ptxas_check(ptxas, ptx, tmp_path)
    ptx, _ = gpujit.compile_ptx(local_indexed, "void(float32[::1], float32[::1], int64)")
    assert "st.local.f32" in ptx and "ld.local.f32" in ptx   # a run-time index: local memory
    ptxas_check(ptxas, ptx, tmp_path)


def test_ptx_views_and_device_functions_stay_shared(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(shared_views.py_func, "void(float32[::1], float32[::1])")
    assert "ld.shared.f32" in ptx and "ld.f32" not in ptx
    ptx, _ = gpujit.compile_ptx(device_fn_on_shared, "void(float64[::1], float64[::1])")
    assert re.search(r"st\.shared(\.v2)?\.f64", ptx) and re.search(r"ld\.shared(\.v2)?\.f64", ptx)
    ptxas_check(ptxas, ptx, tmp_path)


def test_ptx_const_array_like(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(with_constants.py_func, "void(float64[::1], float64[::1])")
    assert ".const .align 16 .b8" in ptx and "ld.const.f64" in ptx
    ptxas_check(ptxas, ptx, tmp_path)


def test_memory_namespaces_exist():
    assert "shared memory" in gpujit.shared.array.__doc__
    assert "private to the thread" in gpujit.local.array.__doc__
    assert "constant memory" in gpujit.const.array_like.__doc__
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        gpujit.shared.array(4, np.float32)


# ---- found by trying it as a user would -------------------------------------------------

@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("words", [20000, 40000])
def test_large_local_array_in_a_synchronising_kernel(words, rng):
    """80 and 160 KiB of local array per thread with a barrier: on the CPU
    target each thread is then a fiber, whose stack grows to hold them (the
    GPU reserves local memory for every thread it can hold: larger arrays
    cost it tens of GB)."""
    globals()["LOCAL_WORDS"] = words      # frozen into the kernel below at its launch

    @gpujit.jit
    def k(x, out):
        scratch = gpujit.local.array(LOCAL_WORDS, np.int32)
        t = gpujit.threadIdx.x
        for i in range(LOCAL_WORDS):
            scratch[i] = x[t] + i
        gpujit.syncthreads()
        out[t] = scratch[LOCAL_WORDS - 1] + scratch[t]
    x = rng.integers(-1000, 1000, 4).astype(np.int32)
    out = poison(4, np.int32)
    k[1, 4](x, out)
    np.testing.assert_array_equal(out, 2 * x + words - 1 + np.arange(4))


@pytest.mark.usefixtures("target")
def test_dynamic_shared_memory_needs_sharedmem():
    @gpujit.jit
    def k(x):
        d = gpujit.shared.array(0, np.float64)
        t = gpujit.threadIdx.x
        d[t] = x[t]
        gpujit.syncthreads()
        x[t] = d[31 - t]
    x = np.arange(32.0)
    with pytest.raises(ValueError, match="kernel k uses dynamic shared memory .* sharedmem"):
        k[1, 32](x)
    np.testing.assert_array_equal(x, np.arange(32.0))     # untouched
    k[1, 32, 0, 32 * 8](x)
    np.testing.assert_array_equal(x, np.arange(32.0)[::-1])


def test_device_function_cannot_return_its_local_array():
    @gpujit.jit(device=True)
    def make():
        scratch = gpujit.local.array(8, np.int64)
        for i in range(8):
            scratch[i] = i
        return scratch

    def k(o):
        s = make()
        o[0] = s[0]
    with pytest.raises(gpujit.TypingError, match="cannot return its local array") as info:
        gpujit.compile_ptx(k, "void(int64[:])")
    assert "return scratch" in str(info.value)
