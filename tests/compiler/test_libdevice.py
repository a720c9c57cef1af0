"""Where libdevice (the GPU's math functions) comes from: gpujit/_libdevice.py's
search order, gpujit.libdevice_path() and info(), and the error when there is
none.  Runs without a GPU: compile_ptx needs only LLVM."""
import os
import subprocess
import sys

import pytest

import gpujit
from gpujit import _libdevice

SCRIPT = (
    "import math, gpujit\n"
    "def ok(a):\n    a[0] = math.sqrt(a[1])\n"
    "def needs(a):\n    a[0] = math.sin(a[1])\n"
    "gpujit.compile_ptx(ok, 'void(float32[:])')\n"
    "try:\n    gpujit.compile_ptx(needs, 'void(float32[:])')\n"
    "except gpujit.LoweringError as e:\n    print('ERROR', e)\n"
    "else:\n    print('OK', gpujit.libdevice_path())\n")


def fake_libdevice(directory):
    directory.mkdir(parents=True)
    (directory / "libdevice.10.bc").write_bytes(b"BC")
    return str(directory / "libdevice.10.bc")


def test_search_order(tmp_path):
    site = tmp_path / "site"
    cu12 = fake_libdevice(site / "nvidia" / "cuda_nvcc" / "nvvm" / "libdevice")
    cu13 = fake_libdevice(site / "nvidia" / "cu13" / "nvvm" / "libdevice")
    home = fake_libdevice(tmp_path / "home" / "nvvm" / "libdevice")
    env = {"CUDA_HOME": str(tmp_path / "home")}
    # The newest wheel first, then CUDA 12's layout, then the toolkit.
    assert _libdevice.find(env, [str(site)]) == ("wheel", cu13)
    os.remove(cu13)
    assert _libdevice.find(env, [str(site)]) == ("wheel", cu12)
    os.remove(cu12)
    assert _libdevice.find(env, [str(site)]) == ("CUDA_HOME", home)
    # The switch CI uses hides every toolkit.
    hidden = dict(env, GPUJIT_IGNORE_CUDA_TOOLKIT="1")
    assert _libdevice.find(hidden, [str(site)]) == (None, None)
    assert all(source == "wheel" for source, _ in _libdevice.candidates(hidden, [str(site)]))
    # GPUJIT_LIBDEVICE wins, as a file or a directory, and is then the only place.
    explicit = fake_libdevice(tmp_path / "mine")
    for value in (explicit, os.path.dirname(explicit)):
        assert _libdevice.find(dict(env, GPUJIT_LIBDEVICE=value), [str(site)]) == \
            ("GPUJIT_LIBDEVICE", explicit)
    assert _libdevice.find(dict(env, GPUJIT_LIBDEVICE=str(site)), [str(site)]) == (None, None)


def test_info_reports_libdevice():
    report = gpujit.info()
    assert report["libdevice"]["path"] == gpujit.libdevice_path()
    assert report["llvm"] == gpujit._gpujit.llvm_version and report["python"].startswith("CPython")
    assert report["target"] in ("cpu", "cuda")
    assert isinstance(report["devices"], list)
    out = subprocess.run([sys.executable, "-P", "-m", "gpujit"], capture_output=True, text=True,
                         env=dict(os.environ, GPUJIT_TARGET="cpu"))
    assert out.returncode == 0, out.stderr
    assert "libdevice:" in out.stdout and "llvm: " in out.stdout


def test_math_kernels_compile_with_the_libdevice_found():
    if gpujit.libdevice_path() is None:
        pytest.fail("no libdevice found: scripts/setup.sh installs nvidia-nvvm; "
                    "gpujit.info() shows the search")
    proc = subprocess.run([sys.executable, "-P", "-c", SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK "), proc.stdout


def test_missing_libdevice_names_what_to_install(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = dict(os.environ, CUDA_HOME=str(empty), CUDA_PATH=str(empty),
               GPUJIT_LIBDEVICE=str(empty))
    proc = subprocess.run([sys.executable, "-P", "-c", SCRIPT], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR" in proc.stdout and "libdevice" in proc.stdout
    assert "pip install nvidia-nvvm" in proc.stdout
    assert "GPUJIT_LIBDEVICE" in proc.stdout and "gpujit.libdevice_path()" in proc.stdout


LAZY_SCRIPT = """
import math, sys
import gpujit
from gpujit import _libdevice

def plain(a):
    a[0] = a[0] * 2.0

def with_sin(a):
    a[0] = math.sin(a[0])

def broken(*args, **kwargs):
    raise RuntimeError("the search failed")

_libdevice.find = broken
gpujit.compile_ptx(plain, "void(float32[:])")     # needs no libdevice: no search
print("plain compiled")
try:
    gpujit.compile_ptx(with_sin, "void(float32[:])")
except RuntimeError as e:
    print("raised:", e)
"""


def test_libdevice_is_searched_only_when_a_kernel_needs_it():
    # The search (gpujit/_libdevice.py) runs at the first kernel that calls a
    # math function, not at the first compile; an exception in it is the
    # compile's exception.
    proc = subprocess.run([sys.executable, "-P", "-c", LAZY_SCRIPT], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["plain compiled", "raised: the search failed"], proc.stdout
