"""Loop counters: int64 as Python's ints, exact at the edges of the int32 range.

On the GPU a loop whose int64 counter steps by one against a bound runs
with a 32-bit counter when the start and the bound fit in 32 bits, and
as written otherwise (compiler/narrow.c).  These kernels count across
2^31 and -2^31, stop one short of the edges, compare with <, <=, != and
unsigned <, and read the counter after the loop: every result must be
Python's.
"""
import numpy as np
import pytest

import gpujit
from conftest import poison

pytestmark = pytest.mark.usefixtures("target")

EDGE = 2**31


def count_while_less(starts, bounds, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        n = starts[i]
        acc = np.int32(1)
        while n < bounds[i] and acc != 7:
            acc = acc * np.int32(3) + np.int32(n)
            n += 1
        out[i, 0] = n
        out[i, 1] = acc


def count_while_not_equal(starts, bounds, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        n = starts[i]
        acc = np.int32(5)
        while n != bounds[i]:
            acc = acc * np.int32(3) + np.int32(n)
            n += 1
        out[i, 0] = n
        out[i, 1] = acc


def count_while_at_most(starts, bounds, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        n = starts[i]
        acc = np.int32(2)
        while n <= bounds[i]:
            acc = acc * np.int32(3) + np.int32(n)
            n += 1
        out[i, 0] = n
        out[i, 1] = acc


def count_over_a_range(starts, bounds, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        acc = np.int32(3)
        last = np.int64(-1)
        for k in range(starts[i], bounds[i]):
            acc = acc * np.int32(3) + np.int32(k)
            last = k
        out[i, 0] = last
        out[i, 1] = acc


def count_unsigned(starts, bounds, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        n = np.uint64(starts[i])
        acc = np.uint32(1)
        while n < np.uint64(bounds[i]):
            acc = acc * np.uint32(3) + np.uint32(n)
            n += np.uint64(1)
        out[i, 0] = np.int64(n)
        out[i, 1] = np.int64(acc)


KERNELS = [count_while_less, count_while_not_equal, count_while_at_most, count_over_a_range,
           count_unsigned]

# (start, bound) pairs with few trips each, around the edges of int32
PAIRS = [(0, 0), (0, 1), (0, 40), (5, 3), (-3, 4), (EDGE - 40, EDGE - 1), (EDGE - 40, EDGE),
         (EDGE - 3, EDGE + 3), (EDGE - 1, EDGE + 1), (-EDGE, -EDGE + 5), (-EDGE - 2, -EDGE + 2),
         (-EDGE - 5, -EDGE - 1), (2**40, 2**40 + 7), (-2**40, -2**40 + 3), (EDGE - 2, EDGE - 2)]


def python_loop(kernel, start, bound):
    """The kernel's loop run by CPython on NumPy scalars."""
    with np.errstate(all="ignore"):
        if kernel is count_unsigned:
            n, acc = np.uint64(start), np.uint32(1)
            while n < np.uint64(bound):
                acc = acc * np.uint32(3) + np.uint32(n)
                n += np.uint64(1)
            return [np.int64(n), np.int64(acc)]
        if kernel is count_over_a_range:
            acc, last = np.int32(3), -1
            for k in range(start, bound):
                acc = acc * np.int32(3) + np.int32(np.int64(k))
                last = k
            return [last, acc]
        acc = {count_while_less: 1, count_while_not_equal: 5, count_while_at_most: 2}[kernel]
        acc = np.int32(acc)
        n = np.int64(start)
        while True:
            if kernel is count_while_less and not (n < bound and acc != 7):
                break
            if kernel is count_while_not_equal and n == bound:
                break
            if kernel is count_while_at_most and not n <= bound:
                break
            acc = acc * np.int32(3) + np.int32(n)
            n += 1
        return [n, acc]


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.__name__ for k in KERNELS])
def test_counters_at_the_edges_of_int32(kernel):
    pairs = [(s, b) for s, b in PAIRS
             if kernel is not count_while_not_equal or s <= b]   # != past the bound: ~2^64 trips
    if kernel is count_unsigned:
        pairs = [(s, b) for s, b in pairs if s >= 0 and b >= 0] + [(2**63 + 3, 2**63 + 9)]
        starts = np.array([s for s, _ in pairs], np.uint64).astype(np.int64)
        bounds = np.array([b for _, b in pairs], np.uint64).astype(np.int64)
    else:
        starts = np.array([s for s, _ in pairs], np.int64)
        bounds = np.array([b for _, b in pairs], np.int64)
    out = poison((len(pairs), 2), "int64")
    gpujit.jit(kernel)[1, 32](starts, bounds, out)
    want = np.array([python_loop(kernel, s, b) for s, b in pairs], np.int64)
    np.testing.assert_array_equal(out, want)


def count_from_zero(bound, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        n = 0
        acc = np.uint32(7)
        while n < bound:
            acc = acc * np.uint32(0x9E3779B1) + np.uint32(n & 1)
            n += 1
        out[i, 0] = n
        out[i, 1] = acc


def test_more_than_2_31_trips_stay_exact(target):
    # the 64-bit loop, since the bound does not fit in 32 bits: 2^31 + 3 trips
    if target == "cuda":
        pytest.skip("2^31 trips of one thread: a few seconds on the CPU target, "
                    "where the counter is the same Python int")
    bound = EDGE + 3
    out = poison((1, 2), "int64")
    gpujit.jit(count_from_zero)[1, 1](bound, out)
    # acc = acc * c + (n & 1): the recurrence over pairs of steps, in closed form
    c, acc = 0x9E3779B1, 7
    m = 2**32
    pair_mul, pair_add = c * c % m, 1    # two steps: acc*c*c + (0*c + 1)
    # (pair_mul, pair_add) applied bound // 2 times, by squaring
    mul, add, times = 1, 0, bound // 2
    pm, pa = pair_mul, pair_add
    while times:
        if times & 1:
            mul, add = mul * pm % m, (add * pm + pa) % m
        pm, pa = pm * pm % m, (pa * pm + pa) % m
        times >>= 1
    acc = (acc * mul + add) % m
    if bound % 2:
        acc = (acc * c + 0) % m
    assert out.tolist() == [[bound, acc]]
