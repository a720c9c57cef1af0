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
import shutil
import struct
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


UNSIGNED = """
import gpujit

@gpujit.jit(cache=True, boundscheck=True)
def at(x, i, out):
    out[0] = x[i]
"""


@pytest.mark.usefixtures("target")
def test_an_unsigned_index_is_reported_unsigned_by_an_entry_from_the_cache(cache_dir, rng):
    x = random_array(rng, 4, np.float64)
    counts = Counts()
    for k in range(2):   # the second dispatcher's entry comes from the cache
        out = poison(1, np.float64)
        kernel = make(UNSIGNED, "at")
        kernel[1, 1](x, np.uint64(3), out)
        assert out[0] == x[3]
        with pytest.raises(IndexError, match=r"^index 9223372036854775808 is out of bounds for "
                                             r"axis 0 with size 4: array 'x' "
                                             r"\(cached_kernels.py:6\)"):
            kernel[1, 1](x, np.uint64(2**63), poison(1, np.float64))
    assert counts() == (1, 1)


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


@pytest.mark.parametrize("value, kept", [("1", True), (" yes ", True), ("On", True),
                                         ("true", True), ("0", False), (" Off ", False),
                                         ("FALSE", False), ("no", False), ("", False)])
@pytest.mark.usefixtures("cpu")
def test_gpujit_cache_values(cache_dir, rng, monkeypatch, value, kept):
    """1, true, yes and on turn caching on, 0, false, no and off off (any
    case, with white space); an empty one leaves it to jit(cache=...)."""
    monkeypatch.setenv("GPUJIT_CACHE", value)
    check_axpb(axpb(cache=False), rng)
    assert len(entries(cache_dir)) == kept


@pytest.mark.parametrize("value", ["maybe", "2", "yes please"])
def test_gpujit_cache_other_values_warn_and_are_ignored(value):
    code = textwrap.dedent(f"""
        import os, tempfile, warnings
        import numpy as np
        import gpujit
        os.environ["GPUJIT_CACHE_DIR"] = tempfile.mkdtemp()
        gpujit.set_target("cpu")
        @gpujit.jit
        def k(a):
            a[0] = 1
        a = np.zeros(1, np.int32)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            k[1, 1](a)
            k[1, 1](a.astype(np.int64))
        print(a[0], [str(x.message) for x in w if "GPUJIT_CACHE" in str(x.message)],
              gpujit.cache_info()["entries"])
    """)
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, GPUJIT_CACHE=value), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1 ["), out.stdout
    assert out.stdout.count("is not 1, true, yes or on") == 1, out.stdout
    assert out.stdout.rstrip().endswith(" 0"), out.stdout   # nothing cached


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


# A kernel that calls a device function through a closure, which calls
# another through a global: each one's bytecode and globals are in its key.
DEVICE_CHAIN = """
import gpujit
K = {k}

@gpujit.jit(device=True)
def inner(v):
    return v {op} K

@gpujit.jit(device=True)
def middle(v):
    return inner(v) + {add}

def make(f):
    @gpujit.jit(cache=True)
    def kernel(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = f(x[i])
    return kernel

kernel = make(middle)

def expect(x):
    return (x {op} K) + {add}
"""


@pytest.mark.usefixtures("target")
def test_a_changed_device_function_is_a_new_entry(cache_dir, rng):
    x = random_array(rng, N, np.float64)
    counts = Counts()
    for op, k in [("*", 2), ("-", 2), ("*", 3), ("*", 2)]:
        out = poison(N, np.float64)
        make(DEVICE_CHAIN, "kernel", op=op, k=k, add=1)[4, 256](x, out)
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

def entry_file(key, payload):
    """An entry file as docs/internals/package.md describes it: magic, format, key,
    the payload's length and SHA-256, the payload."""
    return struct.pack("<8sI32sQ32s", b"GPUJITK\0", 1, bytes.fromhex(key), len(payload),
                       hashlib.sha256(payload).digest()) + payload


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
        data = entry_file(path.stem, payload)
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
    # the kernels run; one RuntimeWarning says why nothing is cached
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="cannot be written") as warned:
        check_axpb(axpb(), rng)
        check_axpb(axpb(), rng)
    assert sum("cannot be written" in str(w.message) for w in warned) == 1
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


# ---- new processes: the key is made before the code view ----------------------------------
#
# A lookup keys the function's code object, its frozen globals, closure
# cells and defaults and those of the device functions it calls, without
# reading its instructions through dis; only a miss reads them.  Each test
# below runs a child process per variant of a module of kernels (always the
# same file, so that only the variant differs) on the CPU target, checks
# the kernel's result against NumPy there, and counts hits and misses.

CHILD = """
import dis
import json
import sys

import numpy as np
import gpujit

calls = []
real_get_instructions = dis.get_instructions


def counted(*args, **kwargs):
    calls.append(args)
    return real_get_instructions(*args, **kwargs)


dis.get_instructions = counted
sys.path.insert(0, sys.argv[1])
import kernels

x = np.random.default_rng(int(sys.argv[2])).random(1000) + 0.5
out = np.full_like(x, np.nan)
kernels.kernel[4, 256](x, out)
np.testing.assert_allclose(out, kernels.expect(x), rtol=1e-12)
cache_module = "gpujit._cache" in sys.modules
print(json.dumps(dict(gpujit.cache_info(), dis=len(calls), cache_module=cache_module,
                      gpujit=gpujit.__file__)))
"""


@pytest.fixture
def child(tmp_path, cache_dir):
    """child(module_source, **environ) -> cache_info() of a new process that
    imports module_source as `kernels` and launches its `kernel`, with
    "dis" (how many times dis read instructions) and "cache_module" (whether
    gpujit._cache was imported by the launch)."""
    script = tmp_path / "cache_child.py"
    script.write_text(CHILD)
    module_dir = tmp_path / "kernels"
    module_dir.mkdir()
    seeds = iter(range(1000))

    def run(source, **environ):
        (module_dir / "kernels.py").write_text(textwrap.dedent(source))
        env = dict(os.environ, GPUJIT_CACHE_DIR=str(cache_dir), GPUJIT_TARGET="cpu",
                   PYTHONDONTWRITEBYTECODE="1", **environ)   # no stale .pyc of kernels.py
        for var in ("GPUJIT_CACHE", "GPUJIT_CACHE_SIZE", "GPUJIT_DUMP"):
            env.pop(var, None)
        proc = subprocess.run([sys.executable, "-P", str(script), str(module_dir),
                               str(next(seeds))], env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.splitlines()[-1])

    return run


def counts_of(info):
    return info["hits"], info["misses"]


SCALED = """
import gpujit
SCALE = {scale}

@gpujit.jit(cache=True)
def kernel(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * SCALE + {offset}

def expect(x):
    return x * SCALE + {offset}
"""


def test_a_hit_in_a_new_process_reads_no_instructions_and_imports_no_cache_module(child):
    first = child(SCALED.format(scale=3, offset=1))
    assert counts_of(first) == (0, 1) and first["dis"] == 1 and first["cache_module"]
    second = child(SCALED.format(scale=3, offset=1))
    assert counts_of(second) == (1, 0)
    assert second["dis"] == 0 and not second["cache_module"]


def test_a_changed_global_or_constant_in_a_new_process(child):
    """SCALE is a frozen global, the offset a constant of the bytecode."""
    seen = [child(SCALED.format(scale=3, offset=1))]
    for scale, offset in [(4, 1), (3, 2), (3.0, 1), (3, 1)]:
        seen.append(child(SCALED.format(scale=scale, offset=offset)))
    assert [counts_of(i) for i in seen] == [(0, 1), (0, 1), (0, 1), (0, 1), (1, 0)]


def test_a_changed_device_function_in_a_new_process(child):
    variants = [dict(k=2, op="*", add=1), dict(k=2, op="-", add=1), dict(k=3, op="*", add=1),
                dict(k=2, op="*", add=5), dict(k=2, op="*", add=1)]
    seen = [counts_of(child(DEVICE_CHAIN.format(**v))) for v in variants]
    assert seen == [(0, 1), (0, 1), (0, 1), (0, 1), (1, 0)]


def test_a_changed_closure_or_default_in_a_new_process(child):
    source = """
    import gpujit

    @gpujit.jit(device=True)
    def shift(v, by={default}):
        return v + by

    def make(factor):
        @gpujit.jit(cache=True)
        def kernel(x, out):
            i = gpujit.grid(1)
            if i < out.size:
                out[i] = shift(x[i] * factor)
        return kernel

    kernel = make({factor})

    def expect(x):
        return x * {factor} + {default}
    """
    variants = [dict(default=1, factor=2), dict(default=1.5, factor=2),
                dict(default=1, factor=3), dict(default=1, factor=2)]
    seen = [counts_of(child(source.format(**v))) for v in variants]
    assert seen == [(0, 1), (0, 1), (0, 1), (1, 0)]


OPTIONED = """
import gpujit

@gpujit.jit(cache=True{options})
def kernel(x, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = x[i] * 3.0 + 1.0

def expect(x):
    return x * 3.0 + 1.0
"""


def test_a_changed_option_in_a_new_process(child):
    options = ["", ", fastmath=True", ", contract=False", ", debug=True", ", opt=False"]
    seen = [counts_of(child(OPTIONED.format(options=o))) for o in options + options]
    assert seen == [(0, 1)] * len(options) + [(1, 0)] * len(options)


def test_a_set_of_fastmath_flags_hits_whatever_the_hash_seed(child):
    """The jit keywords are keyed as the Dispatcher has them (a set of
    fastmath flags as its bits): a set's own order follows string hashes,
    which differ between processes."""
    source = OPTIONED.format(options=', fastmath={"arcp", "contract", "nsz", "afn", "reassoc"}')
    seen = [counts_of(child(source, PYTHONHASHSEED=str(seed))) for seed in range(1, 5)]
    assert seen == [(0, 1), (1, 0), (1, 0), (1, 0)]


def test_a_global_read_past_the_first_256_names_is_keyed(child):
    """LOAD_GLOBAL of a name whose index needs EXTENDED_ARG: the scan that
    finds a kernel's globals without dis reads it too."""
    names = [f"G{k}" for k in range(300)]
    source = "\n".join(["import gpujit"] + [f"{n} = {k}" for k, n in enumerate(names[:-1])] + [
        f"{names[-1]} = {{last}}",
        "@gpujit.jit(cache=True)",
        "def kernel(x, out):",
        "    i = gpujit.grid(1)",
        "    if i < out.size:",
        "        out[i] = x[i] + (" + " + ".join(names) + ")",
        "def expect(x):",
        "    return x + (" + " + ".join(names) + ")",
    ])
    seen = [counts_of(child(source.format(last=v))) for v in (1, 2, 1)]
    assert seen == [(0, 1), (0, 1), (1, 0)]


@pytest.mark.parametrize("damage", ["truncate", "flip a byte of the object code",
                                    "checksummed garbage", "another file format"])
def test_a_damaged_entry_in_a_new_process_is_compiled_again(child, cache_dir, damage):
    source = SCALED.format(scale=3, offset=1)
    child(source)
    path = only_entry(cache_dir)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:len(data) - 100]
    elif damage == "flip a byte of the object code":
        data[data.find(b"\x7fELF") + 64] ^= 0x10
    elif damage == "checksummed garbage":
        data = entry_file(path.stem, b"\x02" + bytes(range(256)) * 4)
    else:
        data[8:12] = (2).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    again = child(source)
    assert counts_of(again) == (0, 1) and again["dis"] == 1
    assert counts_of(child(source)) == (1, 0)   # replaced by a whole entry


def test_another_build_of_gpujit_compiles_again(child, tmp_path):
    """The key holds gpujit's version and the extension file's path, size
    and modification time: a copy of the package elsewhere, a rebuilt
    extension (here: its modification time moved) or another version never
    loads this build's entries."""
    source = SCALED.format(scale=3, offset=1)
    installed = os.path.dirname(gpujit.__file__)
    copy = tmp_path / "site" / "gpujit"
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(tmp_path / "site")}
    (ext,) = copy.glob("_gpujit*.so")

    assert counts_of(child(source)) == (0, 1)            # the installed build
    first = child(source, **env)
    assert first["gpujit"] == str(copy / "__init__.py")
    assert counts_of(first) == (0, 1)                     # the copy: another path
    assert counts_of(child(source, **env)) == (1, 0)
    st = ext.stat()
    os.utime(ext, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert counts_of(child(source, **env)) == (0, 1)      # "rebuilt"
    assert counts_of(child(source, **env)) == (1, 0)
    init = copy / "__init__.py"
    text = init.read_text()
    assert '__version__ = "' in text
    init.write_text(text.replace('__version__ = "', '__version__ = "1+other.', 1))
    assert counts_of(child(source, **env)) == (0, 1)      # another version
    assert counts_of(child(source)) == (1, 0)             # the installed build's entry is whole

