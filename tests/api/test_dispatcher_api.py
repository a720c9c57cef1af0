"""numba's dispatcher API: overloads, definitions, specialize, inspect_* keyed
by signature (with the current target's LLVM IR), to_device(copy=, to=),
compile_ptx(abi=, abi_info=) and launch_bounds (.maxntid, .minnctapersm,
.maxclusterrank, and the launch check)."""
import io
import re
import subprocess

import numpy as np
import pytest

import gpujit
from conftest import child_output, poison
from gpujit import float32, int32, int64, void


def scale(x, out, k):
    i = gpujit.grid(1)
    if i < x.size:
        out[i] = x[i] * k


F32_SIG = ("array(float32, 1d, C)", "array(float32, 1d, C)", "float32")


# ---- overloads, definitions, specialize ------------------------------------------------

@pytest.mark.usefixtures("target")
def test_overloads_map_each_signature_to_its_kernel(rng):
    k = gpujit.jit(scale)
    assert len(k.overloads) == 0
    x = rng.random(64, dtype=np.float32)
    k[1, 64](x, poison(64, np.float32), np.float32(2))
    k[1, 64](x.astype(np.float64), poison(64, np.float64), 2.0)
    assert set(k.overloads) == set(k.signatures) and len(k.overloads) == 2
    compiled = k.overloads[F32_SIG]
    assert compiled.signature == F32_SIG and compiled.py_func is scale
    assert ".entry" in compiled.inspect_asm()
    assert "define" in compiled.inspect_llvm()
    text = io.StringIO()
    compiled.inspect_types(file=text)
    assert "k: float32" in text.getvalue()
    assert k.definitions is k.overloads   # numba's older name
    with pytest.raises(KeyError):
        k.overloads[("int8",)]


@pytest.mark.usefixtures("target")
def test_specialize_compiles_for_the_arguments_and_only_them(rng):
    k = gpujit.jit(scale)
    x = rng.random(64, dtype=np.float32)
    out = poison(64, np.float32)
    special = k.specialize(x, out, np.float32(3))
    assert special.specialized and not k.specialized
    assert special.signatures == [F32_SIG]
    assert k.specialize(x, out, np.float32(1)) is special   # made once per types
    special[1, 64](x, out, np.float32(3))
    np.testing.assert_array_equal(out, x * np.float32(3))
    with pytest.raises(TypeError, match="no matching definition"):
        special[1, 64](x.astype(np.float64), poison(64, np.float64), 2.0)
    with pytest.raises(RuntimeError, match="already specialized"):
        special.specialize(x, out, np.float32(3))


def test_specialize_types_layouts_as_numba_does():
    typeof = gpujit.types.typeof
    a = np.zeros((4, 6), np.float32)
    assert str(typeof(a)) == "array(float32, 2d, C)"
    assert str(typeof(np.asfortranarray(a))) == "array(float32, 2d, F)"
    assert str(typeof(a[:, ::2])) == "array(float32, 2d, A)"
    assert typeof(1) is int64 and typeof(np.int32(1)) is int32 and typeof(1.0) is gpujit.float64
    assert typeof(True) is gpujit.boolean and typeof(np.float32(1)) is float32
    with pytest.raises(TypeError):
        typeof("text")


# ---- inspect_* keyed by signature, per target -----------------------------------------

@pytest.mark.usefixtures("target")
def test_inspect_llvm_shows_the_current_targets_code(target, rng):
    k = gpujit.jit(scale)
    x = rng.random(32, dtype=np.float32)
    k[1, 32](x, poison(32, np.float32), np.float32(2))
    k.inspect_asm()   # compiles the PTX twin of a CPU entry: same signature, other target
    (ir,) = k.inspect_llvm().values()
    assert ("nvptx64" in ir) == (target == "cuda")
    assert k.inspect_llvm(F32_SIG) == ir
    assert ("nvptx64" in k.inspect_llvm("void(float32[::1], float32[::1], float32)")) \
        == (target == "cuda")
    assert ".entry" in k.inspect_asm(F32_SIG)


# ---- to_device ----------------------------------------------------------------------

@pytest.mark.usefixtures("target")
def test_a_device_functions_inspect_methods_compile_it_as_compile_ptx_device_does():
    def half(a, b):
        return a / b * 0.5

    dev = gpujit.jit("float32(float32, float32)", device=True, fastmath=True)(half)
    ptx = dev.inspect_asm("float32(float32, float32)")
    assert re.search(r"^\.visible \.func\s+\(\.param \.b32 func_retval0\) "
                     r"_gj_test_a_device_functions_inspect_methods_compile_it_as_compile_ptx_"
                     r"device_does__locals__half\(", ptx, re.M), ptx
    assert "div.approx.ftz.f32" in ptx and ".entry" not in ptx
    assert dev.inspect_asm(float32(float32, float32)) == ptx
    assert dev.inspect_asm() == {("float32", "float32"): ptx}   # jit's signatures
    if not gpujit.is_available():   # sm_90, as compile_ptx's default
        assert ptx == gpujit.compile_ptx(half, "float32(float32, float32)", device=True,
                                         fastmath=True)[0]
    llvm = dev.inspect_llvm("float32(float32, float32)")
    assert re.search(r"^define float @_gj_\w+__half\(float %a\d*, float %b\d*\)", llvm, re.M), llvm
    out = io.StringIO()
    dev.inspect_types("float32(float32, float32)", file=out)
    assert out.getvalue().startswith("half float32(float32, float32)\na: float32\nb: float32\n")
    lazy = gpujit.jit(device=True)(half)   # compiled where kernels call it; inspected on its own
    assert lazy.inspect_asm() == {}
    wide = lazy.inspect_asm("float64(float32, float32)")
    assert "div.rn.f32" in wide and "cvt.f64.f32" in wide and ".param .b64 func_retval0" in wide
    with pytest.raises(gpujit.TypingError):
        lazy.inspect_asm("float32(float32")


def test_to_device_copy_false_allocates_without_copying(rng):
    x = rng.random((5, 7))
    d = gpujit.to_device(x, copy=False)
    assert d.shape == x.shape and d.dtype == x.dtype
    d.copy_to_device(x)
    np.testing.assert_array_equal(d.copy_to_host(), x)
    into = gpujit.device_array((5, 7))
    assert gpujit.to_device(x, to=into) is into
    np.testing.assert_array_equal(into.copy_to_host(), x)


# ---- compile_ptx(abi=, abi_info=) ---------------------------------------------------

def add(a, b):
    return a + b


def test_compile_ptx_c_abi_names_the_function():
    ptx, resty = gpujit.compile_ptx(add, int32(int32, int32), device=True, abi="c")
    assert resty == "int32"
    assert re.search(r"\.visible \.func\s+\(\.param \.b32 func_retval0\) add\(", ptx)
    ptx, _ = gpujit.compile_ptx(add, "int32(int32, int32)", device=True, abi="c",
                                abi_info={"abi_name": "my_add"})
    assert re.search(r"\.func\s+\(\.param \.b32 func_retval0\) my_add\(", ptx)
    ptx, _ = gpujit.compile_ptx(add, "int32(int32, int32)", device=True)
    assert "_gj_add(" in ptx


def test_abi_info_must_be_a_dict():
    with pytest.raises(TypeError, match="^abi_info must be a dict, not str$"):
        gpujit.compile_ptx(add, "int32(int32, int32)", device=True, abi="c", abi_info="zz")


def test_compile_ptx_refuses_what_numba_refuses():
    with pytest.raises(NotImplementedError, match="C ABI is not supported for kernels"):
        gpujit.compile_ptx(scale, "void(float32[:], float32[:], float32)", abi="c")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fortran"):
        gpujit.compile_ptx(add, "int32(int32, int32)", device=True, abi="fortran")


# In a child process: before gpujit checked them, these names ended the process
# in LLVM ("LLVM ERROR: Symbol name with unsupported characters").
C_ABI_NAMES = """
import gpujit, re
from gpujit import int32

def show(f, **abi_info):
    try:
        ptx, _ = gpujit.compile_ptx(f, int32(int32), device=True, abi="c",
                                    abi_info=abi_info or None)
        print(re.search(r"^\\.visible \\.func\\s+\\(\\.param \\.b32 func_retval0\\) (.*)\\($",
                        ptx, re.M).group(1))
    except (ValueError, TypeError) as e:
        print(type(e).__name__ + ": " + str(e))

def ƒ(a):
    return a

def plain(a):
    return a

show(lambda x: x)                   # numba-cuda's test_c_abi_no_env_global
show(ƒ)
for name in ["<lambda>", "ƒ", "", "1abc", "_", "a.b", "a$b", "%r1", "vprintf", "__nv_sinf",
             "_Z4funcii"]:
    show(plain, abi_name=name)
show(plain, abi_name=7)
for name in ["1x", "", "<", "vprintf"]:
    plain.__name__ = name
    show(plain)
"""


def test_c_abi_names_are_ptx_names_or_a_value_error_that_says_why():
    chars = "has a character other than ASCII letters, digits and '_' (a C ABI name is a C identifier)"

    def refused(name, why):
        return (f"ValueError: abi_info[\"abi_name\"] {name!r} cannot name a C ABI function in "
                f"PTX: it {why}")

    def derived(name, why):
        return (f"ValueError: the C ABI name {name!r}, made of the function's __name__ "
                f"{name!r}, cannot name a function in PTX: it {why}; give one with "
                f"abi_info={{\"abi_name\": ...}}")

    vprintf = "is CUDA's vprintf, which gpujit's PTX calls for print()"
    assert child_output(C_ABI_NAMES)[:-1] == [
        "_lambda_",   # each byte outside [A-Za-z0-9_] made '_', as gpujit's own names
        "__",         # ƒ is two bytes of UTF-8
        refused("<lambda>", chars), refused("ƒ", chars), refused("", "is empty"),
        refused("1abc", "starts with a digit"),
        refused("_", "is a lone '_', which PTX does not take as a name"),
        refused("a.b", chars), refused("a$b", chars),
        refused("%r1", chars), refused("vprintf", vprintf),
        refused("__nv_sinf", "starts with __nv_, as libdevice's functions, which gpujit's PTX "
                             "calls"),
        "_Z4funcii",
        'TypeError: abi_info["abi_name"] must be a str, not int',
        derived("1x", "starts with a digit"), derived("", "is empty"),
        "ValueError: the C ABI name '_', made of the function's __name__ '<', cannot name a "
        "function in PTX: it is a lone '_', which PTX does not take as a name; give one with "
        'abi_info={"abi_name": ...}',
        derived("vprintf", vprintf),
    ]


def test_c_abi_names_made_of_python_names_pass_ptxas(ptxas, tmp_path):
    def ƒ(a):
        return a

    for f, name in ((lambda x: x, "_lambda_"), (ƒ, "__")):
        ptx, _ = gpujit.compile_ptx(f, int32(int32), device=True, abi="c")
        assert f") {name}(" in ptx
        check_ptxas(ptxas, tmp_path, ptx)


def test_compile_ptx_c_abi_passes_ptxas(ptxas, tmp_path):
    ptx, _ = gpujit.compile_ptx(add, float32(float32, float32), device=True, abi="c",
                                abi_info={"abi_name": "plus"})
    check_ptxas(ptxas, tmp_path, ptx)


# ---- launch_bounds -------------------------------------------------------------------

def check_ptxas(ptxas, tmp_path, ptx):
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    cmd = [ptxas, "-arch=sm_90", "-c", str(path), "-o", str(tmp_path / "k.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("bounds,directives", [
    (128, [".maxntid 128, 1, 1"]),
    ((256,), [".maxntid 256, 1, 1"]),
    ((256, 2), [".maxntid 256, 1, 1", ".minnctapersm 2"]),
    ((128, 4, 2), [".maxntid 128, 1, 1", ".minnctapersm 4", ".maxclusterrank 2"]),
])
def test_launch_bounds_are_emitted(bounds, directives, ptxas, tmp_path):
    k = gpujit.jit(launch_bounds=bounds)(scale)
    ptx = k.inspect_asm("void(float32[::1], float32[::1], float32)")
    for d in directives:
        assert d in ptx
    check_ptxas(ptxas, tmp_path, ptx)
    ptx, _ = gpujit.compile_ptx(scale, "void(float32[::1], float32[::1], float32)",
                                launch_bounds=bounds)
    for d in directives:
        assert d in ptx


def test_without_launch_bounds_there_are_none():
    ptx, _ = gpujit.compile_ptx(scale, "void(float32[::1], float32[::1], float32)")
    assert ".maxntid" not in ptx and ".minnctapersm" not in ptx


@pytest.mark.parametrize("bad", [0, -1, (), (1, 2, 3, 4), (128, 0), 1.5, "128"])
def test_launch_bounds_are_checked(bad):
    with pytest.raises((ValueError, TypeError), match="launch_bounds"):
        gpujit.jit(launch_bounds=bad)(scale)


@pytest.mark.usefixtures("target")
def test_a_launch_above_launch_bounds_is_a_value_error(rng):
    k = gpujit.jit(launch_bounds=(64, 1))(scale)
    x = rng.random(256, dtype=np.float32)
    out = poison(256, np.float32)
    with pytest.raises(ValueError, match="launch_bounds of 64 threads per block"):
        k[2, 128](x, out, np.float32(2))
    with pytest.raises(ValueError, match="launch_bounds of 64"):
        k[1, (8, 16)](x, out, np.float32(2))
    np.testing.assert_array_equal(out, poison(256, np.float32))   # nothing ran
    k[4, 64](x, out, np.float32(2))
    np.testing.assert_array_equal(out, x * np.float32(2))


def test_a_device_function_takes_no_launch_bounds_into_its_ptx():
    ptx, _ = gpujit.compile_ptx(add, "int32(int32, int32)", device=True, launch_bounds=64)
    assert ".maxntid" not in ptx


# ---- max_registers, inline spellings, forall -------------------------------------------

def test_max_registers_is_maxnreg(ptxas, tmp_path):
    k = gpujit.jit(max_registers=40)(scale)
    ptx = k.inspect_asm("void(float32[::1], float32[::1], float32)")
    assert ".maxnreg 40" in ptx
    check_ptxas(ptxas, tmp_path, ptx)
    with pytest.raises(ValueError, match="max_registers"):
        gpujit.jit(max_registers=0)(scale)


def plus_one(x):
    return x + 1


@pytest.mark.parametrize("options,inlined", [
    (dict(inline="always"), True), (dict(forceinline=True), True), (dict(inline=True), True),
    (dict(inline="never"), False), (dict(), False)])
def test_numbas_inline_spellings(options, inlined):
    dev = gpujit.jit(device=True, **options)(plus_one)

    def k(a):
        a[0] = dev(a[0])
    ptx, _ = gpujit.compile_ptx(k, "void(float64[:])", opt=False)
    assert ("call.uni" not in ptx) == inlined


def test_inline_takes_numbas_strings_only():
    with pytest.raises(ValueError, match="inline"):
        gpujit.jit(inline="sometimes")(plus_one)


@pytest.mark.usefixtures("target")
def test_forall_covers_the_tasks(rng):
    k = gpujit.jit(scale)
    x = rng.random(1000, dtype=np.float32)
    out = poison(1000, np.float32)
    k.forall(x.size)(x, out, np.float32(3))
    np.testing.assert_array_equal(out, x * np.float32(3))
    out = poison(1000, np.float32)
    k.forall(x.size, tpb=64)(x, out, np.float32(2))
    np.testing.assert_array_equal(out, x * np.float32(2))


# ---- compile, compile_ptx_for_current_device ------------------------------------------

def test_compile_defaults_to_a_c_abi_device_function():
    ptx, resty = gpujit.compile(add, "float64(float64, float64)")
    assert resty == "float64"
    assert re.search(r"\.func\s+\(\.param \.b64 func_retval0\) add\(", ptx)
    with pytest.raises(NotImplementedError, match="Unsupported output type: ltoir"):
        gpujit.compile(add, "float64(float64, float64)", output="ltoir")


def test_compile_ptx_for_current_device_needs_a_gpu():
    sig = "void(float32[::1], float32[::1], float32)"
    if not gpujit.is_available():
        with pytest.raises(gpujit.CudaSupportError):
            gpujit.compile_ptx_for_current_device(scale, sig)
        return
    major, minor = gpujit.get_current_device().compute_capability
    ptx, _ = gpujit.compile_ptx_for_current_device(scale, sig)
    assert f".target sm_{major}{minor}" in ptx
