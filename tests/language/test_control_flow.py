"""Control flow on the GPU: if/elif/else, for over range (1-3 arguments,
negative steps), while, break/continue, nested loops, conditional
expressions and boolean operators, each against the same logic in CPython."""
import numpy as np
import pytest

import gpujit
from conftest import poison, random_array

pytestmark = pytest.mark.usefixtures("target")

N = 777  # not a multiple of the block size: the bounds check matters


def launch(kernel, *args):
    out = args[-1]
    kernel[(out.size + 63) // 64, 64](*args)
    return out


def per_element(fn, *arrays, dtype="int64"):
    return np.array([fn(*(int(a[k]) if a.dtype.kind in "iu" else float(a[k]) for a in arrays))
                     for k in range(arrays[0].size)], dtype)


@gpujit.jit
def classify(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        v = a[i]
        if v < -10:
            out[i] = -2
        elif v < 0:
            out[i] = -1
        elif v == 0:
            out[i] = 0
        else:
            out[i] = 1


def classify_ref(v):
    return -2 if v < -10 else -1 if v < 0 else 0 if v == 0 else 1


def test_if_elif_else(rng):
    a = random_array(rng, N, "int32", -20, 20)
    got = launch(classify, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(classify_ref, a))


@gpujit.jit
def range_forms(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        n = a[i]
        s = 0
        for k in range(n):
            s += k
        for k in range(2, n):
            s += 3 * k
        for k in range(n, -5, -2):
            s -= k
        for k in range(-3, n, 4):
            s += k * k
        out[i] = s


def range_forms_ref(n):
    s = sum(range(n)) + sum(3 * k for k in range(2, n))
    s -= sum(range(n, -5, -2))
    s += sum(k * k for k in range(-3, n, 4))
    return s


def test_range_one_two_three_arguments(rng):
    a = random_array(rng, N, "int32", -10, 60)
    got = launch(range_forms, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(range_forms_ref, a))


def range_count_and_sum(a, b, s, out):
    n = 0
    total = np.int64(0)
    for v in range(a[0], b[0], s[0]):
        n += 1
        total += np.int64(v)
        if n > 1000:
            break
    out[0] = n
    out[1] = total


def python_range_count_and_sum(a, b, s):
    """What CPython's range yields (at most 1001 values), its count and sum."""
    length = max(0, (b - a + s - (1 if s > 0 else -1)) // s) if s else 0
    n = min(length, 1001)
    total = sum(a + s * k for k in range(n))
    return n, (total + 2**63) % 2**64 - 2**63


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64"])
def test_range_near_the_limits_of_its_type(dtype, rng):
    # The count is computed from the distance start..stop, so a range whose
    # last step would pass the type's maximum (or minimum) still ends:
    # range(250, 255, 4) of uint8 is 250, 254.  A zero step gives nothing
    # (Python raises ValueError).
    info = np.iinfo(dtype)
    values = [info.min, info.min + 1, 0, 1, 5, info.max - 5, info.max - 1, info.max,
              int(rng.integers(info.min, info.max, dtype=dtype, endpoint=True))]
    steps = [1, 2, 4, 7, info.max, 0] + ([-1, -3, info.min] if info.min < 0 else [])
    kernel = gpujit.jit(range_count_and_sum)
    for a in values:
        for b in values:
            for s in steps:
                out = poison(2, "int64")
                kernel[1, 1](np.array([a], dtype), np.array([b], dtype),
                             np.array([s], dtype), out)
                want = python_range_count_and_sum(int(a), int(b), int(s))
                assert tuple(out) == want, (dtype, a, b, s, tuple(out), want)


@pytest.mark.usefixtures("target")
def test_range_with_a_constant_zero_step_is_a_typing_error():
    def count(out):
        n = 0
        for i in range(0, 10, 0):
            n += 1
        out[0] = n

    with pytest.raises(gpujit.TypingError, match="range\\(\\) arg 3 must not be zero") as caught:
        gpujit.jit(count)[1, 1](np.zeros(1, np.int64))
    assert "for i in range(0, 10, 0):" in str(caught.value)


@gpujit.jit
def collatz(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        n = a[i]
        steps = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        out[i] = steps


def collatz_ref(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_while_loop(rng):
    a = random_array(rng, N, "int64", 1, 100000)
    got = launch(collatz, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(collatz_ref, a))


@gpujit.jit
def break_continue(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        limit = a[i]
        s = 0
        for k in range(100):
            if k % 3 == 0:
                continue
            if k > limit:
                break
            s += k
        j = 0
        while True:
            j += 1
            if j * j > limit:
                break
        out[i] = s * 1000 + j


def break_continue_ref(limit):
    s = 0
    for k in range(100):
        if k % 3 == 0:
            continue
        if k > limit:
            break
        s += k
    j = 0
    while True:
        j += 1
        if j * j > limit:
            break
    return s * 1000 + j


def test_break_continue(rng):
    a = random_array(rng, N, "int32", 0, 120)
    got = launch(break_continue, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(break_continue_ref, a))


@gpujit.jit
def nested(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        acc = 0.0
        for p in range(a[i]):
            for q in range(p, b[i]):
                acc += p * 0.5 - q
        out[i] = acc


def test_nested_loops(rng):
    a = random_array(rng, N, "int32", 0, 12)
    b = random_array(rng, N, "int32", 0, 12)
    got = launch(nested, a, b, poison(N, "float64"))
    want = per_element(lambda x, y: sum(p * 0.5 - q for p in range(x) for q in range(p, y)), a, b,
                       dtype="float64")
    np.testing.assert_array_equal(got, want)


@gpujit.jit
def boolean_ops(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        x = a[i]
        y = b[i]
        r = 0
        if x > 0 and y > 0:
            r += 1
        if x > 0 or y > 0:
            r += 10
        if not x > y:
            r += 100
        if -3 < x <= 3:
            r += 1000
        out[i] = r + (7 if x < y else -7)


def boolean_ops_ref(x, y):
    r = (x > 0 and y > 0) + 10 * (x > 0 or y > 0) + 100 * (not x > y) + 1000 * (-3 < x <= 3)
    return r + (7 if x < y else -7)


def test_boolean_operators_and_ternary(rng):
    a = random_array(rng, N, "int32", -6, 6)
    b = random_array(rng, N, "int32", -6, 6)
    got = launch(boolean_ops, a, b, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(boolean_ops_ref, a, b))


@gpujit.jit
def early_exit(a, out):
    i = gpujit.grid(1)
    if i >= out.size:
        return
    out[i] = a[i] * 2


def test_return_from_kernel(rng):
    a = random_array(rng, N, "int64")
    got = launch(early_exit, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, a * 2)


@gpujit.jit
def tuples(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        x = a[i]
        t = (x, x + 1, x * 2)           # build
        p, q, r = t                     # unpack
        s = t[0] + t[-1] + len(t)       # constant index, len
        for v in t:                     # for over a tuple variable
            s += v
        for w in (1, 2, 3):             # for over a constant tuple
            s = s * w + 1
        for k in range(len(t)):         # a variable index into a homogeneous tuple
            s += t[k] * (k + 1)
        out[i] = s + p - q + r


def tuples_ref(x):
    t = (x, x + 1, x * 2)
    p, q, r = t
    s = t[0] + t[-1] + len(t)
    for v in t:
        s += v
    for w in (1, 2, 3):
        s = s * w + 1
    for k in range(len(t)):
        s += t[k] * (k + 1)
    return s + p - q + r


def test_tuples_and_for_over_tuple(rng):
    a = random_array(rng, N, "int64", -1000, 1000)
    got = launch(tuples, a, poison(N, "int64"))
    np.testing.assert_array_equal(got, per_element(tuples_ref, a))


@gpujit.jit
def tuples_of_two_types(a, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        t = (1, np.float16(a[i]))
        if a[i] > 0:
            t = (2, np.float64(a[i]) / 3)     # the variable holds tuple(int64, float64)
        u = (a[i], np.int8(1)) if a[i] < 1 else (np.float32(2), np.int16(300))
        out[i, 0] = t[0]
        out[i, 1] = t[1]
        out[i, 2] = u[0]
        out[i, 3] = u[1]


def test_tuple_variable_of_two_types_holds_their_promotion(rng):
    # language.md: a variable assigned values of different types gets their
    # promotion; for tuples element by element, as for two returns (the fuzzer
    # found a TypingError "cannot assign tuple(int64, float64, uint8) to 't4',
    # which holds tuple(int64, float16, uint8)").
    a = random_array(rng, N, "float64", -4, 4)
    got = launch(tuples_of_two_types, a, poison((N, 4), "float64"))
    for x, row in zip(a, got):
        t = (2, x / 3) if x > 0 else (1, float(np.float16(x)))
        u = (x, 1) if x < 1 else (2.0, 300)
        assert list(row) == [*t, *u], (x, row)


@gpujit.jit
def find_pair(a, target, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = -1
        for p in range(a.shape[0]):
            for q in range(p + 1, a.shape[0]):
                if a[p] + a[q] == target[i]:
                    out[i] = p * 1000 + q
                    return              # return from inside two loops
        out[i] = -2


def find_pair_ref(a, t):
    for p in range(len(a)):
        for q in range(p + 1, len(a)):
            if a[p] + a[q] == t:
                return p * 1000 + q
    return -2


def test_return_inside_nested_loops(rng):
    a = random_array(rng, 40, "int32", -50, 50)
    target = random_array(rng, N, "int32", -120, 120)
    got = launch(find_pair, a, target, poison(N, "int64"))
    want = np.array([find_pair_ref([int(v) for v in a], int(t)) for t in target])
    np.testing.assert_array_equal(got, want)


@gpujit.jit
def and_or_values(a, b, out):
    i = gpujit.grid(1)
    if i < out.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = x and y             # and/or as values, not just conditions
        out[i, 1] = x or y
        out[i, 2] = (x and y) or -1
        out[i, 3] = not x
        out[i, 4] = x if x > y else (y if y > 0 else x - y)
        out[i, 5] = 1 if x < y <= 2 * x else 0   # chained comparison as a value
        k = 0
        while True:                     # while True with break and continue
            k += 1
            if k % 2 == 0:
                continue
            if k > abs(x) or k > 50:
                break
        out[i, 6] = k


def and_or_ref(x, y):
    k = 0
    while True:
        k += 1
        if k % 2 == 0:
            continue
        if k > abs(x) or k > 50:
            break
    return [x and y, x or y, (x and y) or -1, int(not x),
            x if x > y else (y if y > 0 else x - y), 1 if x < y <= 2 * x else 0, k]


def test_and_or_as_values(rng):
    a = random_array(rng, N, "int64", -4, 4)
    b = random_array(rng, N, "int64", -4, 4)
    out = poison((N, 7), "int64")
    launch(and_or_values, a, b, out)
    want = np.array([and_or_ref(int(x), int(y)) for x, y in zip(a, b)])
    np.testing.assert_array_equal(out, want)


@gpujit.jit
def short_circuit(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        # a[i] is only read when i is in range: the right operand must not run
        n = a.size
        j = i * 7
        if j < n and a[j] > 0:
            out[i] = 1
        elif j >= n or a[j] < -500:
            out[i] = 2
        else:
            out[i] = 3


def test_short_circuit_guards_reads(rng):
    a = random_array(rng, N, "int32")
    got = launch(short_circuit, a, poison(N, "int64"))
    want = [1 if 7 * i < N and a[7 * i] > 0 else 2 if 7 * i >= N or a[7 * i] < -500 else 3
            for i in range(N)]
    np.testing.assert_array_equal(got, want)


# Compiled and checked with ptxas by test_ptx.py, which runs without a GPU.
CONTROL_FLOW_KERNELS = [
    (tuples, "void(int64[::1], int64[::1])"),
    (find_pair, "void(int32[::1], int32[::1], int64[::1])"),
    (and_or_values, "void(int64[::1], int64[::1], int64[:, ::1])"),
    (short_circuit, "void(int32[::1], int64[::1])"),
]



@gpujit.jit
def values_across_joins(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        lim = math.inf if a[i] > 0 else -math.pi
        tid = gpujit.threadIdx.x if a[i] > 0 else gpujit.blockDim.x
        out[i] = min(lim, 1000.0) + tid


import math  # noqa: E402  (read by the kernel above when it compiles)


def test_module_constants_and_dim3_in_conditional_expressions(rng):
    a = random_array(rng, N, "float64", -10, 10)
    got = launch(values_across_joins, a, poison(N, "float64"))
    i = np.arange(N)
    want = np.where(a > 0, 1000.0 + i % 64, -math.pi + 64)
    np.testing.assert_array_equal(got, want)


# ---- variables assigned on some paths only ---------------------------------------------


def last_positive(a, out):
    # `found` is assigned only in some iterations; read after the loop
    i = gpujit.grid(1)
    if i < out.size:
        for k in range(4):
            if a[(i + k) % a.size] > 0:
                found = a[(i + k) % a.size]
        out[i] = found


def alternate(a, out):
    # the first iteration reads `prev` before it is assigned when a[i] <= 0
    i = gpujit.grid(1)
    if i < out.size:
        acc = 0.0
        for k in range(3):
            v = a[(i + k) % a.size]
            if v > 0:
                prev = v
            acc += prev
        out[i] = acc


@pytest.mark.parametrize("fn", [last_positive, alternate])
def test_variable_assigned_on_some_paths_warns_and_runs(fn, rng):
    a = random_array(rng, N, "float64")
    kernel = gpujit.jit(fn)
    with pytest.warns(gpujit.GpujitWarning, match="may be used before it is assigned"):
        got = launch(kernel, a, poison(N, "float64"))
    ran = 0
    for i in range(N):
        try:
            want = run_in_python(fn, i, a)
        except UnboundLocalError:
            continue   # Python raises on this path; gpujit reads zero (not compared)
        ran += 1
        assert got[i] == want, (i, got[i], want)
    assert ran > N // 4


def run_in_python(fn, i, a):
    """fn's body for thread i, by CPython: gpujit.grid(1) replaced by i."""
    out = np.full(N, np.nan)
    glob = dict(fn.__globals__, gpujit=_ThreadIndex(i))
    type(fn)(fn.__code__, glob)(a, out)
    return out[i]


class _ThreadIndex:
    def __init__(self, i):
        self._i = i

    def grid(self, ndim):
        return self._i


def zero_when_unassigned(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        for k in range(2):
            if k == 1 and a[i] > 0:
                m = a[i]
        out[i] = m


def test_unassigned_read_gives_zero(rng):
    # numba's behaviour where Python would raise: zero of the variable's type
    a = random_array(rng, N, "int32")
    with pytest.warns(gpujit.GpujitWarning, match=r"'m'"):
        got = launch(gpujit.jit(zero_when_unassigned), a, poison(N, "int32"))
    np.testing.assert_array_equal(got, np.where(a > 0, a, 0))


def test_unassigned_read_under_debug_raises_unbound_local_error(rng):
    # debug=True: Python's UnboundLocalError on the host, naming the variable,
    # the line and the first thread that read it; the other threads' results
    # and the next launch are unharmed.
    a = random_array(rng, N, "int32")
    a[100] = -5                        # thread 100 reads m unassigned
    a[a == 0] = 1
    kernel = gpujit.jit(debug=True)(zero_when_unassigned)
    out = poison(N, "int32")
    with pytest.warns(gpujit.GpujitWarning, match=r"'m'"):
        with pytest.raises(UnboundLocalError) as info:
            launch(kernel, a, out)
    line = zero_when_unassigned.__code__.co_firstlineno + 6
    msg = str(info.value)
    assert "local variable 'm'" in msg
    assert f"test_control_flow.py:{line}" in msg
    assert "zero_when_unassigned" in msg
    bad = np.flatnonzero(a <= 0)
    threads = [f"threadIdx ({i % 64}, 0, 0) of blockIdx ({i // 64}, 0, 0)" for i in bad]
    assert any(t in msg for t in threads), (msg, bad)
    np.testing.assert_array_equal(out, np.where(a > 0, a, 0))

    b = np.abs(a) + 1                  # every thread assigns m: no error
    np.testing.assert_array_equal(launch(kernel, b, poison(N, "int32")), b)


@gpujit.jit(device=True)
def first_positive(a, i):
    for k in range(2):
        if a[(i + k) % a.size] > 0:
            found = a[(i + k) % a.size]
    return found


def unbound_in_device_function(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = first_positive(a, i)


def test_unassigned_read_in_device_function_under_debug(rng):
    a = np.abs(random_array(rng, N, "int64")) + 1
    a[N // 2:N // 2 + 2] = -1          # thread N // 2 finds nothing
    with pytest.warns(gpujit.GpujitWarning, match=r"'found'"):
        with pytest.raises(UnboundLocalError, match=r"'found'.*threadIdx \(\d+, 0, 0\)"):
            launch(gpujit.jit(debug=True)(unbound_in_device_function), a, poison(N, "int64"))
    with pytest.warns(gpujit.GpujitWarning, match=r"'found'"):
        got = launch(gpujit.jit(unbound_in_device_function), a, poison(N, "int64"))
    want = [next((v for v in (a[(i + 1) % N], a[i]) if v > 0), 0) for i in range(N)]
    np.testing.assert_array_equal(got, want)


def maybe_unassigned_array(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        if i == 0:
            src = a
        out[i] = src[i]


def maybe_unassigned_tuple_of_array(a, out):
    i = gpujit.grid(1)
    if i < out.size:
        if i == 0:
            t = (a, 1)
        out[i] = t[1]


@pytest.mark.parametrize("fn", [maybe_unassigned_array, maybe_unassigned_tuple_of_array])
@pytest.mark.parametrize("debug", [False, True])
def test_possibly_unassigned_array_is_a_typing_error(fn, debug, rng):
    # An array has no zero to read instead (it would be a null pointer): a
    # read that some path reaches unassigned is refused at the read.
    a = random_array(rng, N, "float64")
    with pytest.raises(gpujit.TypingError, match=r"may be used before it is assigned.*no zero") \
            as info:
        launch(gpujit.jit(debug=debug)(fn), a, poison(N, "float64"))
    assert f"test_control_flow.py:{fn.__code__.co_firstlineno + 5}:" in str(info.value)


def reversed_copy(a, n, out):
    k = 0
    for i in range(n - 1, -1, -1):     # -1 is no uint value: the range is int64
        out[k] = a[i]
        k += 1


def count_to_300(a, out):
    n = 0
    for i in range(a[0], 300):          # 300 is no uint8 value
        n += 1
    out[0] = n


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int8"])
def test_range_literal_outside_the_arguments_type(dtype, rng):
    # A literal argument that the other arguments' type cannot hold widens
    # the range to int64, so it yields Python's values instead of wrapping.
    a = random_array(rng, 5, "float64")
    out = poison(5, "float64")
    gpujit.jit(reversed_copy)[1, 1](a, np.dtype(dtype).type(5), out)
    np.testing.assert_array_equal(out, a[::-1])
    if dtype == "uint8":
        counted = poison(1, "int64")
        gpujit.jit(count_to_300)[1, 1](np.array([250], np.uint8), counted)
        assert counted[0] == len(range(250, 300))
