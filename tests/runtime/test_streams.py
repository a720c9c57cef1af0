"""Streams, events, memory information and the device list (runtime/exec.h
through pymodule/stream.c): each on both targets where it exists there
(the CPU target's launches are synchronous, its events host timestamps),
and what only a GPU shows (default-stream handles, ordering across streams
with events, two Python threads overlapping on two streams) on the GPU."""
import re
import threading

import numpy as np
import pytest

import gpujit
from conftest import poison, slow_store


@gpujit.jit
def axpy(a, x, y, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def run_axpy(rng, stream):
    n = 5000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    dx = gpujit.to_device(x, stream=stream)
    dy = gpujit.to_device(y, stream=stream)
    dout = gpujit.to_device(poison(n, np.float32), stream=stream)
    axpy[(n + 127) // 128, 128, stream](np.float32(2), dx, dy, dout)
    out = poison(n, np.float32)
    dout.copy_to_host(out, stream=stream)
    return x, y, out


@pytest.mark.usefixtures("target")
@pytest.mark.parametrize("which", ["stream", "default_stream", "legacy_default_stream",
                                   "per_thread_default_stream"])
def test_kernels_and_copies_on_each_kind_of_stream(rng, which):
    s = getattr(gpujit, which)()
    with s.auto_synchronize() as same:
        assert same is s
        x, y, out = run_axpy(rng, s)
    np.testing.assert_allclose(out, np.float32(2) * x + y, rtol=2e-7, atol=1e-6)


@pytest.mark.gpu
def test_default_stream_handles_are_the_drivers():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        assert gpujit.default_stream().handle == 0
        assert gpujit.legacy_default_stream().handle == 1      # CU_STREAM_LEGACY
        assert gpujit.per_thread_default_stream().handle == 2  # CU_STREAM_PER_THREAD
        assert gpujit.stream().handle not in (0, 1, 2)
    finally:
        gpujit.set_target(previous)


@pytest.mark.usefixtures("target")
def test_event_query_wait_and_elapsed_time(rng):
    s1, s2 = gpujit.stream(), gpujit.stream()
    n = 256
    d = gpujit.to_device(poison(n, np.float32))
    start, written = gpujit.event(), gpujit.event()
    start.record(s1)
    slow_store[1, n, s1](d, np.float32(7), 20000)
    written.record(s1)
    written.wait(s2)   # s2's copy waits for the kernel on s1
    out = poison(n, np.float32)
    d.copy_to_host(out, stream=s2)
    s2.synchronize()
    assert (out == 7).all()
    assert written.query() and start.query()
    written.synchronize()
    assert start.elapsed_time(written) >= 0
    assert gpujit.event_elapsed_time(start, written) == start.elapsed_time(written)


@pytest.mark.usefixtures("target")
def test_elapsed_time_refuses_events_never_recorded_or_of_two_devices(target):
    a, b = gpujit.event(), gpujit.event()
    a.record()
    if target == "cpu":
        with pytest.raises(ValueError, match="never recorded"):
            a.elapsed_time(b)
    else:
        with pytest.raises(gpujit.CudaError):
            a.elapsed_time(b)
    with pytest.raises(TypeError, match="another gpujit event"):
        a.elapsed_time(1.0)


@pytest.mark.usefixtures("target")
def test_an_event_without_timing_cannot_time(target):
    """As the driver refuses it (CUDA_ERROR_INVALID_HANDLE), the CPU target
    refuses too, so code tested there behaves the same on a GPU."""
    a, b = gpujit.event(timing=False), gpujit.event(timing=False)
    a.record()
    b.record()
    b.synchronize()
    if target == "cpu":
        with pytest.raises(ValueError, match="timing=False"):
            a.elapsed_time(b)
    else:
        with pytest.raises(gpujit.CudaError, match="CUDA_ERROR_INVALID_HANDLE"):
            a.elapsed_time(b)


def test_set_target_cuda_without_a_gpu_says_so_and_changes_nothing():
    if gpujit.is_available():
        pytest.skip("a GPU is here")
    previous = gpujit.set_target("cpu")
    try:
        with pytest.raises(gpujit.CudaSupportError):
            gpujit.set_target("cuda")
        assert gpujit.current_target() == "cpu"
    finally:
        gpujit.set_target(previous)


@pytest.mark.serial   # another process's allocations would move the free memory it reads
@pytest.mark.usefixtures("target")
def test_memory_info_and_current_context(target):
    info = gpujit.memory_info()
    assert isinstance(info, gpujit.MemoryInfo)
    assert 0 < info.free <= info.total
    assert gpujit.current_context().get_memory_info().total == info.total
    if target == "cuda":
        assert info.total == gpujit.get_current_device().total_memory
        before = gpujit.memory_info().free
        d = gpujit.device_array(256 << 20, np.uint8)   # 256 MiB
        assert gpujit.memory_info().free <= before - (200 << 20)
        del d


@pytest.mark.usefixtures("cpu")
def test_host_out_of_memory_is_a_memory_error_and_the_next_allocation_works():
    with pytest.raises(MemoryError, match="out of host memory") as caught:
        gpujit.device_array(1 << 50, np.uint8)
    assert not isinstance(caught.value, gpujit.CudaError)
    d = gpujit.to_device(np.arange(10, dtype=np.int64))
    assert (d.copy_to_host() == np.arange(10)).all()


def test_device_list_without_or_with_gpus():
    n = len(gpujit.gpus)
    assert len(gpujit.list_devices()) == n
    with pytest.raises(IndexError, match="does not exist"):
        gpujit.gpus[n]
    if n == 0:
        return
    for i, dev in enumerate(gpujit.gpus):
        assert dev.id == i and dev == gpujit.list_devices()[i]
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.0", dev.pci_bus_id)
        assert dev.MULTIPROCESSOR_COUNT > 0 and dev.total_memory > 0
    last = gpujit.gpus[-1]
    with last as entered:
        assert entered is last
        assert gpujit.get_current_device().id == last.id
    assert gpujit.gpus.current.id == 0


@pytest.mark.gpu
@pytest.mark.serial   # another process's kernels, time-sliced in, would stretch the intervals
def test_two_threads_on_two_streams_overlap():
    """Each thread launches a one-block kernel of some milliseconds on its own
    stream between two events and synchronizes (the GIL is released while
    it waits); a third event, recorded before both, dates them.  The two
    kernels' intervals overlap on the GPU."""
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        rounds = 2_000_000
        outs = [gpujit.device_array(32, np.float32) for _ in range(2)]
        slow_store[1, 32](outs[0], np.float32(0), 10)   # compiled before timing
        gpujit.synchronize()
        origin = gpujit.event()
        origin.record()
        origin.synchronize()
        spans, errors = [None, None], []
        barrier = threading.Barrier(2)

        def work(k):
            try:
                s = gpujit.stream()
                begin, end = gpujit.event(), gpujit.event()
                barrier.wait()
                begin.record(s)
                slow_store[1, 32, s](outs[k], np.float32(k + 1), rounds)
                end.record(s)
                s.synchronize()
                spans[k] = (origin.elapsed_time(begin), origin.elapsed_time(end))
            except BaseException as exc:   # reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for k in range(2):
            assert (outs[k].copy_to_host() == k + 1).all()
        (b0, e0), (b1, e1) = spans
        shorter = min(e0 - b0, e1 - b1)
        overlap = min(e0, e1) - max(b0, b1)
        assert shorter > 1.0, spans   # ms: long enough to see an overlap
        assert overlap > 0.5 * shorter, f"kernel intervals (ms) {spans} barely overlap"
    finally:
        gpujit.set_target(previous)


@pytest.mark.gpu
def test_out_of_gpu_memory_says_how_much_and_the_next_allocation_works():
    if not gpujit.is_available():
        pytest.skip("no CUDA device available")
    previous = gpujit.set_target("cuda")
    try:
        total = gpujit.memory_info().total
        with pytest.raises(gpujit.CudaOutOfMemoryError, match="bytes free") as caught:
            gpujit.device_array(1 << 50, np.uint8)
        e = caught.value
        assert isinstance(e, MemoryError)
        assert e.requested == 1 << 50 and e.total == total and 0 < e.free <= total
        d = gpujit.to_device(np.arange(1000, dtype=np.int32))
        assert (d.copy_to_host() == np.arange(1000)).all()
    finally:
        gpujit.set_target(previous)
