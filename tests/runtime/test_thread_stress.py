"""Races between Python threads: eight threads at once launch kernels,
compile new specialisations (new argument types), call recompile() and
drop dispatchers, on each target; every result is checked, and nothing
crashes or hangs.  (Launches release the GIL, so the threads really run
together on the compiled code.)"""
import threading
import time

import numpy as np
import pytest

import gpujit

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int16, np.uint8]


def make_kernel():
    @gpujit.jit(contract=False)   # x * a + x rounded twice, as NumPy computes it
    def scale_add(x, out, a):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i] * a + x[i]

    return scale_add


def expected(x, a):
    return (x * x.dtype.type(a) + x).astype(x.dtype)


@pytest.mark.usefixtures("target")
def test_eight_threads_launch_compile_recompile_and_drop():
    shared = make_kernel()
    stop = threading.Event()
    errors, counts = [], [0] * 8

    def launcher(t):
        rng = np.random.default_rng(t)
        while not stop.is_set():
            dtype = DTYPES[rng.integers(len(DTYPES))]     # new specialisations too
            x = (rng.random(5000) * 50).astype(dtype)
            out = np.zeros_like(x)
            shared[20, 256](x, out, 3)
            if not np.array_equal(out, expected(x, 3)):
                raise AssertionError(f"thread {t}: wrong {dtype.__name__} result")
            d_x = gpujit.to_device(x)
            d_out = gpujit.device_array_like(x)
            shared[20, 256](d_x, d_out, 2)
            if not np.array_equal(d_out.copy_to_host(), expected(x, 2)):
                raise AssertionError(f"thread {t}: wrong {dtype.__name__} result on device")
            counts[t] += 1

    def recompiler(t):
        while not stop.is_set():
            shared.recompile()
            time.sleep(0.001)
            counts[t] += 1

    def dropper(t):
        rng = np.random.default_rng(t)
        while not stop.is_set():
            k = make_kernel()                            # compiled, used, dropped
            x = rng.random(300)
            out = np.zeros_like(x)
            k[2, 256](x, out, 1.5)
            if not np.array_equal(out, expected(x, 1.5)):
                raise AssertionError(f"thread {t}: wrong result of a fresh kernel")
            del k
            counts[t] += 1

    roles = [launcher] * 5 + [recompiler] + [dropper] * 2

    def run(t):
        try:
            roles[t](t)
        except BaseException as e:   # reported by the main thread
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    time.sleep(3.0)
    stop.set()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a thread hangs"
    assert not errors, errors
    assert all(c > 0 for c in counts), counts            # every thread got to work
