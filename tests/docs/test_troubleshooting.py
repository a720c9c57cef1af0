"""docs/troubleshooting.md quotes gpujit's messages: each is produced here
(on a GPU where only a GPU gives it) and compared with the page's quote, so
the page stays true to the code."""
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gpujit
from conftest import ROOT

PAGE = os.path.join(ROOT, "docs", "troubleshooting.md")


def quote(start):
    """The page's quoted message (a ```text block) that begins with start."""
    with open(PAGE) as f:
        blocks = re.findall(r"```text\n(.*?)\n\s*```", f.read(), re.S)
    return next(b.strip() for b in blocks if b.strip().startswith(start))


def quoted(start):
    """quote(start) up to its first '...' or a number (what varies from run
    to run)."""
    return re.split(r"\.\.\.|\d", quote(start))[0]


def test_no_gpu_messages():
    if gpujit.is_available():
        pytest.skip("a GPU is here")
    with pytest.raises(gpujit.CudaSupportError) as caught:
        gpujit.set_target("cuda")
    text = f"CudaSupportError: {caught.value}"
    assert text.startswith(quoted("CudaSupportError"))


# What a CUDA 11.8 driver offers gpujit: cuGetProcAddress without the _v2
# that CUDA 12.0 added (and through which gpujit resolves every entry point).
CUDA_11_DRIVER = r"""
int cuDriverGetVersion(int *version) { *version = 11080; return 0; }
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags)
{
    (void)symbol; (void)version; (void)flags;
    *fn = 0;
    return 500;   /* CUDA_ERROR_NOT_FOUND */
}
"""


def test_a_driver_older_than_cuda_12_is_refused(tmp_path):
    """A stand-in libcuda.so.1 of a CUDA 11.8 driver, found first through
    LD_LIBRARY_PATH by a child process: gpujit says the driver is too old,
    in the page's words, and runs kernels on the CPU target."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in driver")
    (tmp_path / "driver.c").write_text(CUDA_11_DRIVER)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"),
                    str(tmp_path / "driver.c")], check=True)
    child = """if True:
        import warnings
        import numpy as np
        import gpujit
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(gpujit.current_target(), gpujit.is_available(), gpujit.info()["driver"])
        print(next(str(w.message) for w in caught if w.category is RuntimeWarning))
        try:
            gpujit.set_target("cuda")
        except gpujit.CudaSupportError as e:
            print(f"CudaSupportError: {e}")
    """
    env = {k: v for k, v in os.environ.items() if k != "GPUJIT_TARGET"}
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-P", "-c", child], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    state, warning, error = proc.stdout.splitlines()
    assert state == "cpu False None"
    assert warning.startswith("gpujit: no CUDA GPU found: running kernels on the CPU target")
    assert error == quote("CudaSupportError: the NVIDIA driver is too old")


# NVIDIA's first driver for each architecture (CUDA release notes), and the
# newest PTX ISA of the drivers that matter here: a driver for CUDA 12.0 is
# the oldest gpujit loads.
FIRST_DRIVER = {70: 9000, 75: 10000, 80: 11000, 86: 11010, 89: 11080, 90: 11080, 100: 12080,
                101: 12080, 120: 12080}
DRIVER_PTX = {12000: (8, 0), 12080: (8, 7)}


@pytest.mark.parametrize("cc", [(7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0),
                                (12, 0)])
def test_the_ptx_is_never_newer_than_a_driver_of_its_gpu(cc):
    """For each GPU architecture, the PTX gpujit emits (for LLVM's newest
    architecture when the GPU's is newer) has an ISA version that the
    oldest driver gpujit loads and the GPU runs on accepts."""
    def kernel(x):
        x[0] = 1

    ptx, _ = gpujit.compile_ptx(kernel, "void(float32[::1])", cc=cc)
    version = tuple(int(v) for v in re.search(r"^\.version (\d+)\.(\d+)$", ptx, re.M).groups())
    sm = int(re.search(r"^\.target sm_(\d+)", ptx, re.M).group(1))
    assert sm <= cc[0] * 10 + cc[1]
    oldest = max(12000, FIRST_DRIVER[sm])
    assert version <= DRIVER_PTX[oldest], (cc, sm, version)
    assert version == (7, 8) or sm != 90   # the page's example


@pytest.mark.gpu
def test_ptx_newer_than_the_driver_message():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    def kernel(x):
        x[0] = 1

    ptx, _ = gpujit.compile_ptx(kernel, "void(float32[::1])")
    gpujit._gpujit._load_ptx(ptx)   # as it is: loads
    newer = re.sub(r"^\.version \d+\.\d+$", ".version 99.9", ptx, flags=re.M)
    with pytest.raises(gpujit.CudaCompileError) as caught:
        gpujit._gpujit._load_ptx(newer)
    assert f"CudaCompileError: {caught.value}".startswith(quoted("CudaCompileError"))


@pytest.mark.usefixtures("cpu")
def test_host_out_of_memory_message():
    with pytest.raises(MemoryError) as caught:
        gpujit.device_array(1 << 50, np.uint8)
    assert str(caught.value).startswith("out of host memory: ")


@pytest.mark.gpu
def test_gpu_out_of_memory_message():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        with pytest.raises(gpujit.CudaOutOfMemoryError) as caught:
            gpujit.device_array(1 << 50, np.uint8)
        assert f"CudaOutOfMemoryError: {caught.value}".startswith(quoted("CudaOutOfMemoryError"))
    finally:
        gpujit.set_target(previous)


@gpujit.jit
def vector_add(a, b, out):   # at module level: the message names its __qualname__
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@pytest.mark.gpu
def test_implicit_copy_message(monkeypatch):
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    monkeypatch.delenv("GPUJIT_WARN_ON_IMPLICIT_COPY", raising=False)
    previous = gpujit.set_target("cuda")
    try:
        a = np.ones(1 << 20, np.float32)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vector_add[4096, 256](a, a, np.zeros_like(a))
        text = next(f"GpujitPerformanceWarning: {w.message}" for w in caught
                    if issubclass(w.category, gpujit.GpujitPerformanceWarning))
        assert text.startswith(quoted("GpujitPerformanceWarning"))
    finally:
        gpujit.set_target(previous)


@pytest.mark.usefixtures("target")
def test_contract_false_matches_numpy_bit_for_bit(rng):
    @gpujit.jit(contract=False)
    def axpy(a, x, y, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    x = rng.standard_normal(4096).astype(np.float32)
    y = rng.standard_normal(4096).astype(np.float32)
    out = np.full_like(x, np.nan)
    axpy[16, 256](np.float32(1.7), x, y, out)
    np.testing.assert_array_equal(out, np.float32(1.7) * x + y)


FAULT = """
import numpy as np
import gpujit
gpujit.set_target("cuda")

@gpujit.jit
def wild(a):
    a[1 << 40] = 1.0

try:
    wild[1, 1](gpujit.device_array(4, np.float32))
    gpujit.synchronize()
except gpujit.CudaKernelFault as e:
    print(f"CudaKernelFault: {e}")
"""


@pytest.mark.gpu
def test_kernel_fault_message():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    # in a subprocess: the fault resets the context, which would end the
    # device arrays of the other tests in this one
    proc = subprocess.run([sys.executable, "-P", "-c", FAULT], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(quoted("CudaKernelFault")), proc.stdout
