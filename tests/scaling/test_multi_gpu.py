"""Several GPUs in one process (docs/runtime.md, "Several GPUs"): a kernel on
each GPU from its own thread, a copy from one GPU's memory to another's
(cuMemcpyPeer), one kernel loaded into each device, and a kernel given
another device's array refused before launching.

Needs two CUDA devices (the nvidia-h200-x2 machine); skipped elsewhere.
"""
import threading

import numpy as np
import pytest

import gpujit

pytestmark = pytest.mark.gpu


@pytest.fixture
def two_gpus():
    if not gpujit.is_available() or len(gpujit.gpus) < 2:
        pytest.skip("needs two CUDA devices")
    previous = gpujit.set_target("cuda")
    yield
    gpujit.set_target(previous)


@gpujit.jit(contract=False)   # a * x + y rounded twice, as NumPy computes it
def axpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_a_kernel_on_each_gpu_from_two_threads(two_gpus):
    rng = np.random.default_rng()
    n = 1 << 20
    inputs = [(rng.random(n), rng.random(n), float(rng.random())) for _ in range(2)]
    results, errors = [None, None], []

    def work(g):
        try:
            with gpujit.gpus[g]:
                x, y, a = inputs[g]
                dx, dy = gpujit.to_device(x), gpujit.to_device(y)
                out = gpujit.device_array(n)
                for _ in range(20):   # long enough for the two to overlap
                    axpy[(n + 255) // 256, 256](a, dx, dy, out)
                assert gpujit.get_current_device().id == g
                results[g] = (out.copy_to_host(),)
        except BaseException as e:   # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(g,)) for g in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for g in range(2):
        x, y, a = inputs[g]
        np.testing.assert_array_equal(results[g][0], a * x + y)


def test_peer_copy_between_gpus(two_gpus):
    rng = np.random.default_rng()
    host = rng.random((300, 500)).astype(np.float32)
    with gpujit.gpus[0]:
        src = gpujit.to_device(host)
    with gpujit.gpus[1]:
        dst = gpujit.device_array_like(host)
        dst.copy_to_device(np.full_like(host, np.nan))   # poisoned
        dst.copy_to_device(src)                         # device 0 -> device 1
        np.testing.assert_array_equal(dst.copy_to_host(), host)
        s = gpujit.stream()
        back = gpujit.device_array_like(host)
        back.copy_to_device(np.full_like(host, np.nan))
        back.copy_to_device(dst, stream=s)
        s.synchronize()
        np.testing.assert_array_equal(back.copy_to_host(), host)
    with gpujit.gpus[0]:                                # and back to device 0
        again = gpujit.device_array_like(host)
        again.copy_to_device(dst)
        np.testing.assert_array_equal(again.copy_to_host(), host)


def test_a_kernel_refuses_an_array_of_another_gpu(two_gpus):
    x = np.ones(10)
    with gpujit.gpus[0]:
        d0 = gpujit.to_device(x)
    with gpujit.gpus[1]:
        out = gpujit.device_array(10)
        with pytest.raises(ValueError, match="lives on device 0 but the current device is 1"):
            axpy[1, 32](1.0, d0, d0, out)
        axpy[1, 32](2.0, gpujit.to_device(x), gpujit.to_device(x), out)   # still usable
        np.testing.assert_array_equal(out.copy_to_host(), 3.0 * x)
