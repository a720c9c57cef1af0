"""Kernel faults on the GPU: an illegal address raises CudaKernelFault, which
says the context is lost, and every later CUDA call (a launch, a module
load) says the same instead of blaming something else; host memory, a
pinned array's included, keeps its contents, and the process exits cleanly.

GPU-only: the CPU target has no device memory protection to report a fault
(an out-of-range index there is undefined, as in C).  Runs in a subprocess,
since a fault ends the CUDA context of the process it happens in.
"""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

SCRIPT = textwrap.dedent("""
    import numpy as np
    import gpujit
    gpujit.set_target("cuda")

    @gpujit.jit
    def wild(a):
        a[1 << 40] = 1.0

    @gpujit.jit
    def fine(a):
        a[0] = 2.0

    d = gpujit.device_array(4, np.float32)
    values = np.random.default_rng().random(1000)
    pinned = gpujit.pinned_array(1000)
    pinned[:] = values
    for k in (wild, fine):
        try:
            k[1, 1](d)
            gpujit.synchronize()
            print("no error")
        except gpujit.CudaKernelFault as e:
            print("fault", "context is lost" in str(e))
        except gpujit.GpujitError as e:
            print("other", type(e).__name__)
    # host memory survives: NumPy's and the pinned array's contents
    print("host intact", np.array_equal(pinned, values))
""")


def test_fault_then_later_calls_report_the_lost_context():
    proc = subprocess.run([sys.executable, "-P", "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["fault True", "fault True", "host intact True"], \
        proc.stdout
