"""The bytecode frontend on every supported interpreter: the same abi3
extension imports under 3.11, 3.12 and 3.13 where they are installed, and
compiles the same kernels to the same PTX.  The bytecode of these versions
differs (call protocol, FOR_ITER/END_FOR, LOAD_FAST_LOAD_FAST,
RETURN_CONST, 3.11's backward jumps), so identical PTX means the
normaliser absorbed the differences."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

import gpujit

SCRIPT = r'''
import cmath, math, re, sys
import gpujit

def kernels():
    def control(a, b, out, n):
        i = gpujit.grid(1)
        if i < out.size:
            s = 0.0
            for k in range(n, 0, -2):
                if k % 3 == 0 and a[i] > 0:
                    continue
                s += a[i] * k
            j = 0
            while j < n or b[i] < 0:
                j += 1
                if j > 100:
                    break
            out[i] = s + (b[i] if s > 0 else -b[i]) + math.sqrt(abs(a[i])) + min(j, n, 5)
    def simple(x, y):
        i = gpujit.grid(ndim=1)   # a keyword call: KW_NAMES (3.11, 3.12), CALL_KW (3.13)
        if i < y.size:
            y[i] = x[i] // 3 + x[i] % 5 - x[-1]
    def views(b, out, n):
        i = gpujit.grid(1)
        if i < out.size:
            row = b[i]
            s = 0.0
            for x in (1.0, 2.0, 0.5):
                s += x * row[1:n:2][0] + b[i, :][-1] + b[:, 0][i] + len(b[2:]) + row[n:][0]
            out[i] = s if s > 0 and n else -s
    @gpujit.jit(device=True)
    def escape(x0, y0, limit):
        x, y = 0.0, 0.0
        for n in range(limit):
            if x * x + y * y > 4.0:
                return n
            x, y = x * x - y * y + x0, 2.0 * x * y + y0
        return limit
    @gpujit.jit(device=True, inline=True)
    def pair(v):
        return (v, -v)
    def calls(out):
        col, row = gpujit.grid(2)
        h, w = out.shape
        if row < h and col < w:
            p = pair(WINDOW[0] + col * 0.01)
            out[row, col] = escape(p[0], WINDOW[1] + row * 0.01, LIMIT)
    def numbers(z, x, out):
        i = gpujit.grid(1)
        if i < out.size:
            q, r = divmod(x[i], 3.0)
            w = z[i].conjugate() * 2j + cmath.exp(z[i]) + complex(q, r)
            out[i] = w.real + abs(w) + round(x[i], 2) + math.pi * math.atan2(x[i], r)
    return [(control, "void(float32[:], float32[:], float32[:], int64)"),
            (simple, "void(int32[:], int32[:])"),
            (views, "void(float32[:, ::1], float32[:], int64)"),
            (calls, "void(int32[:, ::1])"),
            (numbers, "void(complex128[:], float64[:], float64[:])")]

WINDOW = (-2.0, -1.25)
LIMIT = 100

for fn, sig in kernels():
    ptx, _ = gpujit.compile_ptx(fn, sig)
    body = ptx[ptx.index(".visible .entry"):]
    # LLVM numbers call sites per process ("// callseq 27"): not part of the code
    body = re.sub(r"callseq \d+", "callseq N", body)
    sys.stdout.write("=== %s\n%s\n" % (fn.__name__, body))
'''


def interpreters():
    found = {}
    for pattern in ("/root/.pyenv/versions/3.1[123]*/bin/python3",
                    "/usr/bin/python3.1[123]", "/usr/local/bin/python3.1[123]"):
        for exe in sorted(glob.glob(pattern)):
            try:
                ver = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if ver in ("3.11", "3.12", "3.13"):
                found.setdefault(ver, exe)
    found.setdefault("%d.%d" % sys.version_info[:2], sys.executable)
    return found


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    """gpujit alone on a path, so other interpreters do not see this one's site-packages."""
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(os.path.dirname(gpujit.__file__), root / "gpujit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(root)


def run_script(exe, path):
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    if gpujit.libdevice_path():   # maybe from a wheel in this environment alone
        env["GPUJIT_LIBDEVICE"] = gpujit.libdevice_path()
    proc = subprocess.run([exe, "-P", "-c", SCRIPT], capture_output=True, text=True, env=env,
                          cwd=path, timeout=120)
    assert proc.returncode == 0, f"{exe}:\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def in_process_ptx():
    """The script's output when run by this interpreter, in this process."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(SCRIPT, "<versions>", "exec"), {"__name__": "versions"})
    return buf.getvalue()


INTERPRETERS = sorted(interpreters().items())


@pytest.mark.parametrize("ver,exe", INTERPRETERS, ids=[v for v, _ in INTERPRETERS])
def test_same_ptx_on_every_interpreter(ver, exe, package_copy, in_process_ptx):
    assert in_process_ptx.count(".visible .entry") == 5
    out = run_script(exe, package_copy)
    assert out == in_process_ptx, (
        f"PTX from Python {ver} differs from Python %d.%d's" % sys.version_info[:2])
