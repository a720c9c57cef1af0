"""The CPU that the CPU target compiles for (compiler/cpuhost.c): the host's,
or the LLVM CPU GPUJIT_CPU_NAME names and the features GPUJIT_CPU_FEATURES
appends.  The choice is read once per process, so each case runs in a child:
the same kernels compute the same values for an AVX2 choice as for the host
(and NumPy's for a plain SSE one), the choice keys the persistent cache, the
code really is for it (its assembly), and a choice the host cannot run, or a
malformed one, is refused with a message."""
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from conftest import _session_seed
from gpujit import _gpujit

ISAS = ["sse", "avx", "avx2", "avx512"]


def host_isa():
    return _gpujit._cpu_info()["host_isa"]


pytestmark = pytest.mark.skipif(host_isa() not in ISAS, reason="not an x86-64 host")

# name -> the variables that choose it, and its instruction set
CHOICES = {
    "host": ({}, None),
    "avx2": ({"GPUJIT_CPU_NAME": "x86-64-v3"}, "avx2"),
    "host without avx512": ({"GPUJIT_CPU_FEATURES": "-avx512f"}, "avx2"),
    "sse": ({"GPUJIT_CPU_NAME": "x86-64"}, "sse"),
}


def run_child(script, args=(), env=None, fails=False):
    """(stdout, stderr) of script run with args in a fresh interpreter on
    the CPU target (thread loops from the first launch), with env's
    variables set and this process's GPUJIT_CPU_* ones removed; it must exit
    0 (or, when `fails`, not)."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_CPU_")}
    child_env.update({"GPUJIT_TARGET": "cpu", "GPUJIT_CPU_LOOP_THREADS": "0"}, **(env or {}))
    proc = subprocess.run([sys.executable, "-P", "-c", script, *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=child_env)
    assert (proc.returncode != 0) == fails, proc.stderr
    return proc.stdout, proc.stderr


def runnable(isa):
    return isa is None or ISAS.index(isa) <= ISAS.index(host_isa())


# Kernels with the shapes the CPU target compiles differently: a guarded
# thread loop (masked loads and stores, every lane on but in the last
# vectors), a multiply-add (FMA contraction), a store under a data-dependent
# condition, and a loop of each thread's own (vectorize.c's vector body).
KERNELS = """
import sys
import numpy as np
import gpujit

@gpujit.jit
def vector_add(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]

@gpujit.jit
def saxpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

@gpujit.jit
def flag_large(x, y):
    i = gpujit.grid(1)
    if i < x.size and x[i] > 0.5:
        y[i] = x[i] * 2

@gpujit.jit
def escape_time(cx, cy, out):
    i = gpujit.grid(1)
    if i < out.size:
        x = np.float32(0)
        y = np.float32(0)
        n = 0
        while n < 200 and x * x + y * y <= 4:
            x, y = x * x - y * y + cx[i], 2 * x * y + cy[i]
            n += 1
        out[i] = n
"""

RUN = KERNELS + """
a, b, c, cx, cy = (np.load(sys.argv[1])[k] for k in ("a", "b", "c", "cx", "cy"))
n = a.size
blocks = (n + 255) // 256
out = {}
out["vector_add"] = np.full(n, np.nan, np.float32)
vector_add[blocks, 256](a, b, out["vector_add"])
out["saxpy"] = np.full(n, np.nan, np.float32)
saxpy[blocks, 256](np.float32(2.5), a, b, out["saxpy"])
out["flag_large"] = np.full(c.size, -1.0)
flag_large[(c.size + 127) // 128, 128](c, out["flag_large"])
out["escape_time"] = np.full(cx.size, -1, np.int64)
escape_time[(cx.size + 63) // 64, 64](cx, cy, out["escape_time"])
np.savez(sys.argv[2], **out)
info = gpujit.info()["cpu"]
print(info["isa"], info["vector_bits"], info["chosen_by"])
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    rng = np.random.default_rng([_session_seed(), zlib.crc32(b"test_cpu_choice")])
    n = 10_007   # not a multiple of any vector width: the last vector is partly off
    data = {"a": rng.random(n, dtype=np.float32), "b": rng.random(n, dtype=np.float32),
            "c": rng.random(3001),
            "cx": rng.uniform(-2, 0.5, 4099).astype(np.float32),
            "cy": rng.uniform(-1.2, 1.2, 4099).astype(np.float32)}
    path = tmp_path_factory.mktemp("inputs") / "inputs.npz"
    np.savez(path, **data)
    return path, data


@pytest.fixture(scope="module")
def results(inputs, tmp_path_factory):
    """{choice: (outputs, the isa line it printed)} of the choices this host runs."""
    path, _ = inputs
    out = {}
    for name, (env, isa) in CHOICES.items():
        if runnable(isa):
            dest = tmp_path_factory.mktemp("out") / "out.npz"
            stdout, _ = run_child(RUN, (path, dest), env)
            out[name] = (dict(np.load(dest)), stdout.split())
    return out


def numpy_escape_time(cx, cy):
    x, y = np.zeros_like(cx), np.zeros_like(cy)
    n = np.zeros(cx.size, np.int64)
    live = np.ones(cx.size, bool)
    for _ in range(200):
        live &= x * x + y * y <= 4
        x, y = (np.where(live, x * x - y * y + cx, x),
                np.where(live, np.float32(2) * x * y + cy, y))
        n += live
    return n


@pytest.mark.parametrize("choice", CHOICES)
def test_each_choice_computes_numpys_values(inputs, results, choice):
    if choice not in results:
        pytest.skip(f"this host ({host_isa()}) cannot run {CHOICES[choice][1]} code")
    _, d = inputs
    got, printed = results[choice]
    env, isa = CHOICES[choice]
    assert printed[0] == (isa or host_isa())
    assert int(printed[1]) == {"sse": 128, "avx": 256, "avx2": 256, "avx512": 512}[printed[0]]
    assert " ".join(printed[2:]) == (", ".join(env) or "host")
    np.testing.assert_array_equal(got["vector_add"], d["a"] + d["b"])
    want = np.float32(2.5) * d["a"].astype(np.float64) + d["b"]
    np.testing.assert_allclose(got["saxpy"], want, rtol=2 ** -22, atol=0)
    flagged = np.where(d["c"] > 0.5, d["c"] * 2, -1.0)
    np.testing.assert_array_equal(got["flag_large"], flagged)
    # FMA contraction moves a few points near the set's border
    assert np.mean(got["escape_time"] != numpy_escape_time(d["cx"], d["cy"])) < 0.01


@pytest.mark.parametrize("choice", ["avx2", "host without avx512"])
def test_an_avx2_choice_computes_what_the_host_does(results, choice):
    """Both contract multiply-adds into FMAs, so the values are the same to
    the bit, whatever the vectors' width."""
    if choice not in results:
        pytest.skip(f"this host ({host_isa()}) has no AVX2")
    for kernel, want in results["host"][0].items():
        np.testing.assert_array_equal(results[choice][0][kernel], want, err_msg=kernel)


CACHED = """
import numpy as np
import gpujit

@gpujit.jit(cache=True)
def add_one(a):
    i = gpujit.grid(1)
    if i < a.size:
        a[i] += 1

a = np.arange(1000.0)
add_one[4, 256](a)
assert (a == np.arange(1000.0) + 1).all()
info = gpujit.cache_info()
print(info["hits"], info["misses"], info["entries"])
"""


def test_the_choice_keys_the_persistent_cache(tmp_path):
    """An entry compiled for the host is not loaded for an AVX2 choice (a
    miss, and a second entry), and the choice's own entry is."""
    if not runnable("avx2"):
        pytest.skip("this host has no AVX2")
    env = {"GPUJIT_CACHE_DIR": str(tmp_path)}
    avx2 = dict(env, GPUJIT_CPU_NAME="x86-64-v3")
    assert run_child(CACHED, env=env)[0].split() == ["0", "1", "1"]
    assert run_child(CACHED, env=env)[0].split() == ["1", "0", "1"]
    assert run_child(CACHED, env=avx2)[0].split() == ["0", "1", "2"]
    assert run_child(CACHED, env=avx2)[0].split() == ["1", "0", "2"]


def test_the_code_is_for_the_chosen_cpu():
    """The host assembly (GPUJIT_DUMP=asm) of a vectorised loop uses AVX-512's
    registers for an AVX-512 host and only AVX2's for an AVX2 choice."""
    script = KERNELS + """
cx = np.zeros(256, np.float32)
escape_time[1, 256](cx, cx, np.empty(256, np.int64))
"""
    asm = {}
    for name in ("host", "avx2"):
        env, isa = CHOICES[name]
        if runnable(isa):
            asm[name] = run_child(script, env=dict(env, GPUJIT_DUMP="asm"))[1]
            assert "---- asm: " in asm[name] and "escape_time" in asm[name]
    if "avx2" in asm:
        assert "%ymm" in asm["avx2"] and "%zmm" not in asm["avx2"]
    if host_isa() == "avx512":
        assert "%zmm" in asm["host"]


@pytest.mark.parametrize("name,slow", [("znver3", True), ("x86-64-v3", True),
                                       ("haswell", False), ("x86-64-v4", False)])
def test_where_masked_stores_are_microcode_a_full_vector_stores_plainly(name, slow):
    """cpu_fix.c: for AVX2 code of AMD's cores (and the generic x86-64
    levels), whose VMASKMOVPS stores are microcode, a masked store whose lanes
    are all on is a plain store; Intel's AVX2 code and AVX-512 code keep the
    masked one, fast there."""
    if not runnable("avx512" if name == "x86-64-v4" else "avx2"):
        pytest.skip(f"this host ({host_isa()}) cannot run code for {name}")
    script = KERNELS + """
x = np.ones(256)
flag_large[1, 256](x, np.empty_like(x))
ir = "\\n".join(flag_large.inspect_llvm().values())
print(gpujit.info()["cpu"]["slow_masked_stores"], "unmasked" in ir, "llvm.masked.store" in ir)
"""
    stdout, _ = run_child(script, env={"GPUJIT_CPU_NAME": name})
    assert stdout.split() == [str(slow), str(slow), "True"]


REFUSED = KERNELS + """
try:
    vector_add[1, 32](np.ones(32), np.ones(32), np.empty(32))
except gpujit.UnsupportedError as e:
    print(e)
print(gpujit.info()["cpu"])
"""


def host_lacks():
    """A feature LLVM lists as off on this host."""
    features = _gpujit._cpu_info()["features"]
    if _gpujit._cpu_info()["chosen_by"] != "host":
        pytest.skip("this process compiles for a GPUJIT_CPU_* choice")
    return next(f[1:] for f in features.split(",") if f.startswith("-"))


@pytest.mark.parametrize("features,message", [
    ("avx2", "is not a list of LLVM features"),
    ("+avx2,,-fma", "is not a list of LLVM features"),
    ("-sse2", "turns off sse2, which x86-64 code needs"),
    ("-64bit", "turns off 64bit, which x86-64 code needs"),
    (None, "which this host lacks"),
])
def test_a_choice_the_host_cannot_run_is_refused(features, message):
    """The launch raises UnsupportedError saying why, and info() says the
    same; nothing runs code the host lacks."""
    features = features or "+" + host_lacks()
    stdout, _ = run_child(REFUSED, env={"GPUJIT_CPU_FEATURES": features})
    lines = [line for line in stdout.splitlines() if "CPU target unavailable" in line]
    assert len(lines) == 2 and all(message in line for line in lines), stdout
    assert f"GPUJIT_CPU_FEATURES='{features}'" in lines[0]


def test_a_later_instruction_set_than_the_hosts_is_refused():
    if host_isa() == "avx512":
        pytest.skip("no x86 instruction set here is later than this host's")
    stdout, _ = run_child(REFUSED, env={"GPUJIT_CPU_NAME": "x86-64-v4"})
    assert "cannot run" in stdout and "x86-64-v4 (avx512)" in stdout, stdout


def test_host_is_the_default_name():
    stdout, _ = run_child("import gpujit; print(gpujit.info()['cpu']['chosen_by'])",
                          env={"GPUJIT_CPU_NAME": "host"})
    assert stdout.split() == ["host"]


def test_python_m_gpujit_prints_the_choice():
    if not runnable("avx2"):
        pytest.skip("this host has no AVX2")
    stdout, _ = run_child("import runpy; runpy.run_module('gpujit', run_name='__main__')",
                          env={"GPUJIT_CPU_NAME": "x86-64-v3"})
    assert "cpu target: avx2, 256-bit vectors, LLVM CPU x86-64-v3 (chosen by GPUJIT_CPU_NAME;" \
        in stdout, stdout
