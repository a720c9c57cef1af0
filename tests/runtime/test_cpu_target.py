"""The host-CPU execution target: choosing it (GPUJIT_TARGET, the automatic
fallback and its one-time warning, set_target/current_target), device arrays
in host memory, barriers (threads of a block run as fibers), streams and
events, and arguments the CPU target treats specially.  Kernels' values are
covered for every target by the execution tests (the ``target`` fixture);
this file checks what only the CPU target has."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpujit
from conftest import child_output, poison, random_array


def run_python(code, **env_changes):
    """Runs code in a fresh interpreter with env_changes (None removes a variable)."""
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-P", "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


LAUNCH = """
    import numpy as np
    import gpujit

    @gpujit.jit
    def add1(a):
        i = gpujit.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.arange(1000, dtype=np.int64)
    add1[4, 256](a)
    add1[4, 256](a)
    assert (a == np.arange(1000) + 2).all(), a
"""


def test_gpujit_target_cpu_selects_the_cpu_without_a_warning():
    r = run_python("import warnings; warnings.simplefilter('error')\n" + textwrap.dedent(LAUNCH)
                   + "print(gpujit.current_target())", GPUJIT_TARGET="cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu"]


def test_automatic_choice_warns_once_without_a_gpu():
    code = ("import warnings; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            + textwrap.indent(textwrap.dedent(LAUNCH), "    ")
            + "\n    print(gpujit.current_target(), gpujit.is_available())\n"
            "print(sum('no CUDA GPU found' in str(w.message) and w.category is RuntimeWarning"
            " for w in caught))\n")
    r = run_python(code, GPUJIT_TARGET=None)
    assert r.returncode == 0, r.stderr
    target, available, warnings = r.stdout.split()
    if gpujit.is_available():
        assert (target, available, warnings) == ("cuda", "True", "0")
    else:
        # Two launches and a current_target() call: exactly one warning.
        assert (target, available, warnings) == ("cpu", "False", "1")


def test_gpujit_target_rejects_unknown_names():
    r = run_python("import gpujit\ngpujit.current_target()", GPUJIT_TARGET="tpu")
    assert r.returncode != 0
    assert "GPUJIT_TARGET must be 'cpu' or 'cuda', not 'tpu'" in r.stderr


def test_gpujit_target_cuda_launches_on_the_gpu_or_raises_without_one():
    r = run_python("import gpujit\nprint(gpujit.current_target())\n" + textwrap.dedent(LAUNCH),
                   GPUJIT_TARGET="cuda")
    assert r.stdout.split() == ["cuda"]
    if gpujit.is_available():
        assert r.returncode == 0, r.stderr
    else:   # no silent fallback to the CPU when the GPU was asked for
        assert r.returncode != 0
        assert "CudaSupportError" in r.stderr


def test_set_target_returns_the_previous_target():
    previous = gpujit.set_target("cpu")
    try:
        assert previous in ("cpu", "cuda")
        assert gpujit.current_target() == "cpu"
        assert gpujit.set_target("cpu") == "cpu"
        with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
            gpujit.set_target("gpu")
        with pytest.raises(TypeError):
            gpujit.set_target(1)
        assert gpujit.current_target() == "cpu"
    finally:
        gpujit.set_target(previous)
    assert gpujit.current_target() == previous


@gpujit.jit
def scale(x, out, k):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * k


def test_device_arrays_live_in_host_memory(cpu, rng):
    x = random_array(rng, 5000, "float64")
    d_x = gpujit.to_device(x)
    d_out = gpujit.device_array_like(x)
    assert d_out.shape == x.shape and d_out.dtype == x.dtype
    scale[20, 256](d_x, d_out, 3.0)
    np.testing.assert_array_equal(d_out.copy_to_host(), x * 3.0)
    np.testing.assert_array_equal(d_x.copy_to_host(), x)
    # copy_to_device from host and from another device array, then into a given buffer.
    y = random_array(rng, 5000, "float64")
    d_x.copy_to_device(y)
    d_out.copy_to_device(d_x)
    got = poison(5000, "float64")
    d_out.copy_to_host(got)
    np.testing.assert_array_equal(got, y)
    with pytest.raises(AttributeError, match="host memory"):
        d_x.__cuda_array_interface__


def test_device_array_of_one_target_is_refused_by_the_other(rng):
    if not gpujit.is_available():
        pytest.skip("needs device arrays of both targets")
    previous = gpujit.set_target("cpu")
    try:
        d = gpujit.to_device(np.ones(10))
        gpujit.set_target("cuda")
        with pytest.raises(ValueError, match="cpu target"):
            scale[1, 32](d, np.zeros(10), 1.0)
    finally:
        gpujit.set_target(previous)


@gpujit.jit
def block_reverse(a, tmp):
    # Reverses each block's slice of `a` in place, through a global scratch
    # array: every thread's write must land before any thread reads.
    t = gpujit.threadIdx.x
    base = gpujit.blockIdx.x * gpujit.blockDim.x
    tmp[base + t] = a[base + t]
    gpujit.syncthreads()
    a[base + t] = tmp[base + gpujit.blockDim.x - 1 - t]


@pytest.mark.parametrize("blocks,threads", [(1, 1), (1, 256), (7, 64), (3, 1024)])
def test_barrier_orders_a_block(cpu, rng, blocks, threads):
    n = blocks * threads
    a = random_array(rng, n, "int32")
    tmp = poison(n, "int32")
    got = a.copy()
    block_reverse[blocks, threads](got, tmp)
    np.testing.assert_array_equal(got, a.reshape(blocks, threads)[:, ::-1].ravel())


@gpujit.jit
def block_scan(x, a, b):
    # Hillis-Steele inclusive prefix sum of each block's slice, ping-ponging
    # between two global arrays with two barriers per step.
    t = gpujit.threadIdx.x
    base = gpujit.blockIdx.x * gpujit.blockDim.x
    a[base + t] = x[base + t]
    gpujit.syncthreads()
    step = 1
    while step < gpujit.blockDim.x:
        v = a[base + t]
        if t >= step:
            v += a[base + t - step]
        gpujit.syncthreads()
        b[base + t] = v
        gpujit.syncthreads()
        a[base + t] = b[base + t]
        gpujit.syncthreads()
        step *= 2


def test_many_barriers_in_a_loop(cpu, rng):
    blocks, threads = 5, 512
    x = random_array(rng, blocks * threads, "int64")
    a, b = poison(x.size, "int64"), poison(x.size, "int64")
    block_scan[blocks, threads](x, a, b)
    np.testing.assert_array_equal(a, np.cumsum(x.reshape(blocks, threads), axis=1).ravel())


@gpujit.jit
def transpose_block(a, out):
    # 2-D block: thread (x, y) writes, a barrier, then reads the mirrored slot.
    x = gpujit.threadIdx.x
    y = gpujit.threadIdx.y
    w = gpujit.blockDim.x
    out[y * w + x] = a[y * w + x]
    gpujit.syncthreads()
    a[y * w + x] = out[x * w + y]


def test_barrier_in_a_2d_block(cpu, rng):
    w = 16
    a = random_array(rng, w * w, "float32")
    got = a.copy()
    transpose_block[1, (w, w)](got, poison(w * w, "float32"))
    np.testing.assert_array_equal(got, a.reshape(w, w).T.ravel())


def test_strided_host_array_is_written_back(cpu, rng):
    x = random_array(rng, 1000, "float64")
    out = poison(2000, "float64")
    scale[4, 256](x, out[::2], 2.0)
    np.testing.assert_array_equal(out[::2], x * 2.0)
    assert np.isnan(out[1::2]).all()   # the gaps were not touched


def test_read_only_array_written_raises(cpu):
    out = np.zeros(10)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        scale[1, 32](np.ones(10), out, 2.0)


def test_streams_and_events(cpu, rng):
    x = random_array(rng, 100_000, "float32")
    d_x, d_out = gpujit.to_device(x), gpujit.device_array(x.size, np.float32)
    s = gpujit.stream()
    start, end = gpujit.event(), gpujit.event()
    start.record(s)
    scale[(x.size + 255) // 256, 256, s](d_x, d_out, np.float32(0.5))
    end.record(s)
    s.synchronize()
    end.synchronize()
    gpujit.synchronize()
    assert start.elapsed_time(end) >= 0.0
    np.testing.assert_array_equal(d_out.copy_to_host(), x * np.float32(0.5))
    with pytest.raises(ValueError, match="never recorded"):
        gpujit.event().elapsed_time(end)


def test_launch_limits_are_a_cuda_devices(cpu):
    ones = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="1024"):
        scale[1, (32, 32, 2)](ones, ones, 1.0)
    with pytest.raises(ValueError, match="blockDim.z"):
        scale[1, (1, 1, 65)](ones, ones, 1.0)
    with pytest.raises(ValueError, match="gridDim.y"):
        scale[(1, 65536), 1](ones, ones, 1.0)


def test_inspect_asm_gives_ptx_on_the_cpu(cpu):
    @gpujit.jit
    def k(a):
        a[0] = 1.0

    k[1, 1](np.zeros(1))
    asm = k.inspect_asm()
    assert len(asm) == 1 and ".entry" in next(iter(asm.values()))


def test_local_arrays_larger_than_a_threads_stack_are_an_error_not_a_crash():
    """A kernel without barriers runs its blocks on the launching thread's
    stack: 512 KiB of local arrays from a thread of 256 KiB is refused with a
    GpujitError naming the stack (it used to overflow it: SIGSEGV), and the
    same launch from the main thread and from a thread with a larger stack
    computes every element."""
    lines = child_output(
        "import threading\n"
        "import numpy as np, gpujit\n"
        "gpujit.set_target('cpu')\n"
        "@gpujit.jit\n"
        "def k(x, out):\n"
        "    i = gpujit.grid(1)\n"
        "    if i < out.size:\n"
        "        a = gpujit.local.array(65536, np.float64)\n"
        "        for j in range(65536):\n"
        "            a[j] = x[i] + j\n"
        "        out[i] = a[65535] + a[i]\n"
        "x = np.random.default_rng().random(4)\n"
        "want = x + 65535 + x + np.arange(4)\n"
        "def launch(result):\n"
        "    out = np.full(4, np.nan)\n"
        "    try:\n"
        "        k[1, 4](x, out)\n"
        "        result.append(bool((out == want).all()))\n"
        "    except gpujit.GpujitError as e:\n"
        "        result.append(str(e))\n"
        "for size in (256 * 1024, 4 << 20):\n"
        "    threading.stack_size(size)\n"
        "    result = []\n"
        "    t = threading.Thread(target=launch, args=(result,))\n"
        "    t.start(); t.join()\n"
        "    print(result[0])\n"
        "result = []\n"
        "launch(result)\n"
        "print(result[0])\n")
    assert "need more stack than the launching thread has left" in lines[0], lines
    assert "512 KiB a thread" in lines[0]
    assert lines[1:3] == ["True", "True"], lines
