"""The persistent kernel cache (jit(cache=True), GPUJIT_CACHE=1): reuse by a
new dispatcher and by a new process, what the key covers (globals, device
functions, options, argument types), entries that must not be read
(corrupt, truncated, foreign, another user's), writers racing on one key,
the size cap, and the directory.  Every test uses a temporary
GPUJIT_CACHE_DIR.  In-process tests run on every target (on a GPU the
entry holds a cubin); the subprocess tests run on the CPU target, and
again on a GPU where there is one."""
import gc
import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import gpujit
from gpujit import _cache
from conftest import assert_fma_close, poison, random_array

pytestmark = pytest.mark.usefixtures("cache_dir")

N = 1000


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty cache directory of this test; no cache switches from outside."""
    d = tmp_path / "cache"
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(d))
    for var in ("GPUJIT_CACHE", "GPUJIT_CACHE_SIZE", "GPUJIT_DUMP"):
        monkeypatch.delenv(var, raising=False)
    return d


AXPB = """
import gpujit
SCALE = {scale}

@gpujit.jit(cache={cache}{options})
def axpb(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * SCALE + 1
"""


def make(source, name, **fmt):
    """A new kernel from source (always the same file name and lines, so two
    calls with the same text make the same code)."""
    ns = {}
    exec(compile(textwrap.dedent(source).format(**fmt), "cached_kernels.py", "exec"), ns)
    return ns[name]


def axpb(scale=3, cache=True, options=""):
    return make(AXPB, "axpb", scale=scale, cache=cache, options=options)


def check_axpb(kernel, rng, scale=3, dtype=np.float32):
    x = random_array(rng, N, dtype)
    out = poison(N, dtype)
    kernel[(N + 255) // 256, 256](x, out)
    product = x * dtype(scale)
    assert_fma_close(out, product + dtype(1), product)   # x * SCALE + 1 may fuse


class Counts:
    """cache_info()'s hits and misses since it was made."""

    def __init__(self):
        info = gpujit.cache_info()
        self.hits0, self.misses0 = info["hits"], info["misses"]

    def __call__(self):
        info = gpujit.cache_info()
        return info["hits"] - self.hits0, info["misses"] - self.misses0


def entries(cache_dir):
    return sorted(cache_dir.glob("*.gjk")) if cache_dir.exists() else []


# ---- reuse ---------------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_a_new_dispatcher_loads_the_entry_and_computes_the_same(cache_dir, rng):
    counts = Counts()
    check_axpb(axpb(), rng)
    assert counts() == (0, 1)
    assert len(entries(cache_dir)) == 1
    second = axpb()
    check_axpb(second, rng)
    check_axpb(second, rng)   # the in-memory entry: no second lookup
    assert counts() == (1, 1)
    assert len(entries(cache_dir)) == 1


@pytest.mark.usefixtures("target")
def test_a_hit_keeps_inspection(rng):
    first = axpb()
    check_axpb(first, rng)
    counts = Counts()
    second = axpb()
    check_axpb(second, rng)
    assert counts() == (1, 0)
    sig = second.signatures[0]
    assert second.inspect_llvm(sig) == first.inspect_llvm(sig)
    assert second.inspect_asm(sig) == first.inspect_asm(sig)
    a, b = io.StringIO(), io.StringIO()
    first.inspect_types(sig, file=a)
    second.inspect_types(sig, file=b)
    assert a.getvalue() == b.getvalue() and "x: array(float32, 1d, C)" in b.getvalue()


@pytest.mark.usefixtures("target")
def test_two_live_kernels_from_one_entry_run_and_outlive_each_other(rng):
    first = axpb()
    check_axpb(first, rng)
    second = axpb()
    check_axpb(second, rng)   # the same object file, loaded once
    del first
    gc.collect()
    check_axpb(second, rng)
    second.recompile()       # frees its code; a lookup loads it again
    check_axpb(second, rng)


@pytest.mark.usefixtures("target")
def test_recompile_reads_the_cache_again_and_sees_a_changed_global(cache_dir, rng):
    counts = Counts()
    k = axpb(scale=3)
    check_axpb(k, rng, scale=3)
    k.recompile()
    check_axpb(k, rng, scale=3)
    assert counts() == (1, 1)
    k.py_func.__globals__["SCALE"] = 5
    check_axpb(k, rng, scale=3)   # frozen until recompile()
    k.recompile()
    check_axpb(k, rng, scale=5)
    assert counts() == (1, 2)
    assert len(entries(cache_dir)) == 2


@pytest.mark.usefixtures("target")
def test_explicit_signatures_come_from_the_cache_when_decorated(rng):
    src = """
    import gpujit
    @gpujit.jit("void(float32[::1], float32[::1])", cache=True)
    def axpb(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] * 3 + 1
    """
    counts = Counts()
    make(src, "axpb")
    assert counts() == (0, 1)
    check_axpb(make(src, "axpb"), rng)
    assert counts() == (1, 1)


CHECKED = """
import gpujit

@gpujit.jit(cache=True{options})
def shift(x, out, k):
    i = gpujit.grid(1)
    if i < out.size:
        if x[i] < 0:
            raise ValueError("negative")
        out[i] = x[i + k]
"""


@pytest.mark.usefixtures("target")
def test_boundscheck_and_debug_are_other_entries_that_keep_their_error_sites(cache_dir, rng):
    x = np.abs(random_array(rng, N, np.float64))
    for options in ("", ", boundscheck=True", ", debug=True"):
        counts = Counts()
        for k in range(2):   # the second dispatcher's entry comes from the cache
            kernel = make(CHECKED, "shift", options=options)
            out = poison(N, np.float64)
            kernel[(N + 255) // 256, 256](x, out, 0)
            np.testing.assert_array_equal(out, x)
            if options:   # the error sites came back with the entry
                with pytest.raises(IndexError, match=f"^index {N} is out of bounds for axis 0 "
                                   f"with size {N}: array 'x' .*cached_kernels.py:10"):
                    kernel[(N + 255) // 256, 256](x, poison(N, np.float64), 1)
            if "debug" in options:
                y = x.copy()
                y[5] = -1.0
                with pytest.raises(ValueError, match=r"^negative \(cached_kernels.py:9\)"):
                    kernel[(N + 255) // 256, 256](y, poison(N, np.float64), 0)
        assert counts()[1] == 1, options   # one miss per option set: a key of its own
    assert len(entries(cache_dir)) == 3


# ---- switches ----------------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_without_cache_true_nothing_is_kept(cache_dir, rng):
    counts = Counts()
    check_axpb(axpb(cache=False), rng)
    assert counts() == (0, 0) and entries(cache_dir) == []


@pytest.mark.usefixtures("target")
def test_gpujit_cache_1_caches_every_kernel_and_0_none(cache_dir, rng, monkeypatch):
    monkeypatch.setenv("GPUJIT_CACHE", "0")
    check_axpb(axpb(cache=True), rng)
    assert entries(cache_dir) == []
    monkeypatch.setenv("GPUJIT_CACHE", "1")
    counts = Counts()
    check_axpb(axpb(cache=False), rng)
    check_axpb(axpb(cache=False), rng)
    assert counts() == (1, 1) and len(entries(cache_dir)) == 1


@pytest.mark.usefixtures("target")
def test_gpujit_dump_compiles_instead(cache_dir, rng, monkeypatch, capfd):
    monkeypatch.setenv("GPUJIT_DUMP", "types")
    check_axpb(axpb(), rng)
    assert entries(cache_dir) == []
    assert "types" in capfd.readouterr().err


@pytest.mark.usefixtures("target")
def test_gpujit_dump_timing_shows_a_hit(cache_dir, rng, monkeypatch, capfd):
    monkeypatch.setenv("GPUJIT_DUMP", "timing")
    check_axpb(axpb(), rng)
    assert "timing: axpb: infer" in capfd.readouterr().err
    check_axpb(axpb(), rng)
    err = capfd.readouterr().err
    for stage in ("code view", "cache key", "cache file", "cache entry unpacked"):
        assert f"timing: axpb: {stage} " in err
    assert "infer" not in err


@pytest.mark.usefixtures("target")
def test_a_kernel_that_warns_is_not_kept_so_it_warns_again(cache_dir, rng):
    src = """
    import gpujit
    @gpujit.jit(cache=True)
    def maybe(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            if x[i] > 0:
                v = x[i]
            out[i] = v
    """
    for _ in range(2):
        with pytest.warns(gpujit.GpujitWarning, match="'v'"):
            k = make(src, "maybe")
            x = random_array(rng, N, np.float32)
            out = poison(N, np.float32)
            k[4, 256](x, out)
    assert entries(cache_dir) == []


# ---- what the key covers -------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_a_changed_global_is_a_new_entry(cache_dir, rng):
    counts = Counts()
    check_axpb(axpb(scale=3), rng, scale=3)
    check_axpb(axpb(scale=4), rng, scale=4)
    check_axpb(axpb(scale=4.5), rng, scale=4.5)
    assert counts() == (0, 3) and len(entries(cache_dir)) == 3
    check_axpb(axpb(scale=3), rng, scale=3)
    assert counts() == (1, 3)


@pytest.mark.usefixtures("target")
def test_a_changed_global_array_or_closure_is_a_new_entry(cache_dir, rng):
    src = """
    import numpy as np
    import gpujit
    TABLE = np.array({table}, dtype=np.{dtype})
    def outer(offset):
        @gpujit.jit(cache=True)
        def lookup(idx, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = TABLE[idx[i]] + offset
        return lookup
    k = outer({offset})
    """
    idx = rng.integers(0, 3, N)
    keys = set()
    for table, dtype, offset in [([1, 2, 3], "float64", 0), ([1, 2, 4], "float64", 0),
                                 ([1, 2, 3], "float32", 0), ([1, 2, 3], "float64", 1.5)]:
        k = make(src, "k", table=table, dtype=dtype, offset=offset)
        out = poison(N, np.float64)
        k[4, 256](idx, out)
        np.testing.assert_array_equal(out, np.array(table, dtype)[idx] + offset)
        keys.update(entries(cache_dir))
    assert len(keys) == 4


@pytest.mark.usefixtures("target")
def test_a_changed_device_function_is_a_new_entry(cache_dir, rng):
    src = """
    import gpujit
    K = {k}
    @gpujit.jit(device=True)
    def inner(v):
        return v {op} K
    @gpujit.jit(device=True)
    def middle(v):
        return inner(v) + 1
    @gpujit.jit(cache=True)
    def outer(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = middle(x[i])
    """
    x = random_array(rng, N, np.float64)
    counts = Counts()
    for op, k in [("*", 2), ("-", 2), ("*", 3), ("*", 2)]:
        out = poison(N, np.float64)
        make(src, "outer", op=op, k=k)[4, 256](x, out)
        inner = x * k if op == "*" else x - k
        assert_fma_close(out, inner + 1, inner)   # inner(v) + 1 may fuse
    assert counts() == (1, 3) and len(entries(cache_dir)) == 3


@pytest.mark.usefixtures("target")
def test_each_option_is_a_new_entry(cache_dir, rng):
    options = ["", ", fastmath=True", ", fastmath={'arcp'}", ", contract=False",
               ", lineinfo=True", ", opt=False", ", debug=True", ", launch_bounds=256",
               ", launch_bounds=(256, 2)", ", max_registers=64"]
    for o in options:
        check_axpb(axpb(options=o), rng)
    assert len(entries(cache_dir)) == len(options)
    counts = Counts()
    for o in options:
        check_axpb(axpb(options=o), rng)
    assert counts() == (len(options), 0)


@pytest.mark.usefixtures("target")
def test_argument_types_are_separate_entries(cache_dir, rng):
    k = axpb()
    check_axpb(k, rng, dtype=np.float32)
    check_axpb(k, rng, dtype=np.float64)
    assert len(entries(cache_dir)) == 2


# ---- entries that must not be read ---------------------------------------------------

def only_entry(cache_dir):
    (path,) = entries(cache_dir)
    return path


@pytest.mark.parametrize("damage", ["flip a payload byte", "truncate", "bad magic",
                                    "newer format", "empty", "another key's entry",
                                    "checksummed garbage"])
@pytest.mark.usefixtures("target")
def test_a_damaged_entry_is_ignored_and_replaced(cache_dir, rng, damage):
    check_axpb(axpb(scale=7), rng, scale=7)
    other = only_entry(cache_dir).read_bytes()
    other_path = only_entry(cache_dir)
    other_path.unlink()
    check_axpb(axpb(), rng)
    path = only_entry(cache_dir)
    data = bytearray(path.read_bytes())
    if damage == "flip a payload byte":   # in the type dump: only the checksum sees it
        at = data.find(b"x: array(float32, 1d, C)")
        data[at] ^= 0x01
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "bad magic":
        data[:8] = b"NOTGJIT\0"
    elif damage == "newer format":
        data[8] += 1
    elif damage == "empty":
        data = b""
    elif damage == "another key's entry":
        data = other   # whole and checksummed, but for another key
    else:              # a whole entry whose payload is not a result
        payload = b"\x01" + bytes(range(200))
        data = _cache._HEADER.pack(_cache.MAGIC, _cache.FORMAT, bytes.fromhex(path.stem),
                                   len(payload), hashlib.sha256(payload).digest()) + payload
    path.write_bytes(bytes(data))
    counts = Counts()
    check_axpb(axpb(), rng)
    assert counts() == (0, 1)
    check_axpb(axpb(), rng)   # rewritten: whole again
    assert counts() == (1, 1)


@pytest.mark.usefixtures("target")
def test_an_entry_of_another_user_is_not_read(cache_dir, rng):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    check_axpb(axpb(), rng)
    path = only_entry(cache_dir)
    os.chown(path, 65534, 65534)
    counts = Counts()
    check_axpb(axpb(), rng)
    assert counts() == (0, 1)
    assert path.stat().st_uid == os.geteuid()   # replaced by this user's
    check_axpb(axpb(), rng)
    assert counts() == (1, 1)


@pytest.mark.usefixtures("target")
def test_a_symlink_is_not_followed(cache_dir, rng, tmp_path):
    check_axpb(axpb(), rng)
    path = only_entry(cache_dir)
    target = tmp_path / "elsewhere.gjk"
    path.rename(target)
    path.symlink_to(target)
    counts = Counts()
    check_axpb(axpb(), rng)
    assert counts() == (0, 1)
    assert not path.is_symlink()


# ---- the directory and its size ---------------------------------------------------------

@pytest.mark.usefixtures("cpu")
def test_the_directory_is_made_0700(cache_dir, rng):
    check_axpb(axpb(), rng)
    assert (cache_dir.stat().st_mode & 0o777) == 0o700
    assert (only_entry(cache_dir).stat().st_mode & 0o777) == 0o600


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUJIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.directory() == str(tmp_path / "xdg" / "gpujit")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _cache.directory() == str(tmp_path / "home" / ".cache" / "gpujit")
    monkeypatch.setenv("GPUJIT_CACHE_DIR", "~/mine")
    assert _cache.directory() == str(tmp_path / "home" / "mine")


@pytest.mark.parametrize("text, size", [("", 1 << 30), ("1000", 1000), ("64K", 65536),
                                        ("1.5M", 3 << 19), ("2GiB", 2 << 30), ("0", 0)])
def test_gpujit_cache_size(monkeypatch, text, size):
    monkeypatch.setenv("GPUJIT_CACHE_SIZE", text)
    assert _cache.size_limit() == size


def test_a_bad_gpujit_cache_size_says_so(monkeypatch):
    monkeypatch.setenv("GPUJIT_CACHE_SIZE", "lots")
    with pytest.raises(ValueError, match="GPUJIT_CACHE_SIZE.*'lots'"):
        gpujit.cache_info()


@pytest.mark.usefixtures("target")
def test_eviction_keeps_the_cap_and_the_recently_used(cache_dir, rng, monkeypatch):
    check_axpb(axpb(scale=2), rng, scale=2)
    one = only_entry(cache_dir).stat().st_size
    monkeypatch.setenv("GPUJIT_CACHE_SIZE", str(int(one * 2.5)))   # two entries fit
    time.sleep(0.02)
    check_axpb(axpb(scale=3), rng, scale=3)
    time.sleep(0.02)
    counts = Counts()
    check_axpb(axpb(scale=2), rng, scale=2)   # a hit: 2 is now the most recently used
    assert counts() == (1, 0)
    time.sleep(0.02)
    check_axpb(axpb(scale=4), rng, scale=4)   # 3 goes
    info = gpujit.cache_info()
    assert info["entries"] == 2 and info["bytes"] <= one * 2.5
    check_axpb(axpb(scale=2), rng, scale=2)
    check_axpb(axpb(scale=4), rng, scale=4)
    assert counts() == (3, 1)
    check_axpb(axpb(scale=3), rng, scale=3)
    assert counts() == (3, 2)
    assert gpujit.cache_info()["entries"] == 2


@pytest.mark.usefixtures("cpu")
def test_cache_info_and_cache_clear(cache_dir, rng):
    info = gpujit.cache_info()
    assert info["directory"] == str(cache_dir) and info["entries"] == 0 and info["bytes"] == 0
    assert info["size_limit"] == 1 << 30
    check_axpb(axpb(scale=1), rng, scale=1)
    check_axpb(axpb(scale=2), rng, scale=2)
    info = gpujit.cache_info()
    assert info["entries"] == 2
    assert info["bytes"] == sum(p.stat().st_size for p in entries(cache_dir))
    (cache_dir / "unrelated.txt").write_text("kept")
    assert gpujit.cache_clear() == 2
    assert gpujit.cache_info()["entries"] == 0 and (cache_dir / "unrelated.txt").exists()


@pytest.mark.usefixtures("cpu")
def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch, rng):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(blocker / "cache"))
    check_axpb(axpb(), rng)
    check_axpb(axpb(), rng)
    assert gpujit.cache_info()["entries"] == 0


@pytest.mark.usefixtures("cpu")
def test_the_cpu_entry_is_an_object_file(cache_dir, rng):
    check_axpb(axpb(), rng)
    assert b"\x7fELF\x02\x01\x01" in only_entry(cache_dir).read_bytes()


@pytest.mark.gpu
def test_the_cuda_entry_is_a_cubin(cache_dir, rng):
    """On a GPU the entry holds the PTX and the cubin the driver linked from
    it (an ELF file for machine EM_CUDA, 190), which a new process loads
    with no JIT."""
    previous = gpujit.set_target("cuda")
    try:
        check_axpb(axpb(), rng)
    finally:
        gpujit.set_target(previous)
    data = only_entry(cache_dir).read_bytes()
    at = data.find(b"\x7fELF")
    assert at > 0 and int.from_bytes(data[at + 18:at + 20], "little") == 190
    assert b".entry _gj_axpb" in data


# ---- other processes ----------------------------------------------------------------------

SCRIPT = """
import json
import sys

import numpy as np
import gpujit

gpujit.set_target(sys.argv[1])

@gpujit.jit(cache=True)
def vadd(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]

rng = np.random.default_rng(int(sys.argv[2]))
a = rng.random(100_000, dtype=np.float32)
b = rng.random(100_000, dtype=np.float32)
out = np.full_like(a, np.nan)
vadd[(a.size + 255) // 256, 256](a, b, out)
assert (out == a + b).all()
print(json.dumps(gpujit.cache_info()))
"""


def cross_process_targets():
    return ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def start(script, target, seed, cache_dir, **environ):
    env = dict(os.environ, GPUJIT_CACHE_DIR=str(cache_dir), GPUJIT_TARGET=target, **environ)
    for var in ("GPUJIT_CACHE", "GPUJIT_CACHE_SIZE", "GPUJIT_DUMP"):
        env.pop(var, None)
    return subprocess.Popen([sys.executable, "-P", str(script), target, str(seed)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.splitlines()[-1])


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "vadd_script.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.parametrize("target_name", cross_process_targets())
def test_a_new_process_loads_what_another_compiled(cache_dir, script, target_name):
    first = finish(start(script, target_name, 1, cache_dir))
    assert (first["hits"], first["misses"], first["entries"]) == (0, 1, 1)
    second = finish(start(script, target_name, 2, cache_dir))
    assert (second["hits"], second["misses"], second["entries"]) == (1, 0, 1)


@pytest.mark.parametrize("target_name", cross_process_targets())
def test_eight_processes_racing_on_one_key_all_succeed(cache_dir, script, target_name):
    procs = [start(script, target_name, seed, cache_dir) for seed in range(8)]
    infos = [finish(p) for p in procs]
    assert all(i["hits"] + i["misses"] == 1 for i in infos)
    assert len(entries(cache_dir)) == 1
    assert not list(cache_dir.glob(".tmp-*"))
    last = finish(start(script, target_name, 9, cache_dir))
    assert (last["hits"], last["misses"]) == (1, 0)


LIBDEVICE_SCRIPT = """
import json
import math
import sys

import numpy as np
import gpujit

@gpujit.jit(cache=True)
def vadd(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]

@gpujit.jit(cache=True)
def vexp(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = math.exp(a[i])

rng = np.random.default_rng(int(sys.argv[2]))
a = rng.random(10_000, dtype=np.float32)
b = rng.random(10_000, dtype=np.float32)
out = np.full_like(a, np.nan)
vadd[(a.size + 255) // 256, 256](a, b, out)
assert (out == a + b).all()
searched = "gpujit._libdevice" in sys.modules
out = np.full_like(a, np.nan)
vexp[(a.size + 255) // 256, 256](a, out)
np.testing.assert_allclose(out, np.exp(a.astype(np.float64)), rtol=1e-6)
print(json.dumps(dict(gpujit.cache_info(), searched_before_exp=searched)))
"""


@pytest.mark.gpu
def test_an_entry_that_linked_libdevice_is_used_only_with_that_file(cache_dir, tmp_path):
    """The key leaves libdevice out (a kernel without math functions never
    searches for it); an entry that linked it names the file (path, size,
    modification time), and a process that finds another file compiles
    again."""
    source = gpujit.libdevice_path()
    if source is None:
        pytest.skip("no libdevice here")
    one, two = tmp_path / "one", tmp_path / "two"
    for d in (one, two):
        d.mkdir()
        (d / "libdevice.10.bc").write_bytes(open(source, "rb").read())
    script = tmp_path / "libdevice_script.py"
    script.write_text(LIBDEVICE_SCRIPT)

    def run(libdevice, seed):
        return finish(start(script, "cuda", seed, cache_dir, GPUJIT_LIBDEVICE=str(libdevice)))

    first = run(one, 1)
    assert (first["hits"], first["misses"], first["entries"]) == (0, 2, 2)
    again = run(one, 2)
    assert (again["hits"], again["misses"]) == (2, 0)
    assert not again["searched_before_exp"]
    other = run(two, 3)   # same bytes, another file: vexp is compiled again
    assert (other["hits"], other["misses"], other["entries"]) == (1, 1, 2)
    back = run(two, 4)
    assert (back["hits"], back["misses"]) == (2, 0)
