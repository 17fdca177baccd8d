"""The shader compiler side: glslang binding, preamble, includes, SPIR-V caches, shipped SPIR-V."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vkncnn import Option, ShaderCompileError
from vkncnn.gpu.compiler import glslang, spirv_cache
from vkncnn.gpu.compiler import registry as registry
from vkncnn.gpu.compiler.preamble import make_preamble
from vkncnn.gpu.compiler.source import expand_includes, parse_manifest, splice_after_version
from vkncnn.gpu.compiler.spirv_reflect import reflect

SPIRV_MAGIC = b"\x03\x02\x23\x07"

SIMPLE = textwrap.dedent("""\
    #version 450
    layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
    layout (binding = 0) buffer blob { sfp data[]; };
    layout (push_constant) uniform parameter { int n; } p;
    void main()
    {
        int gi = int(gl_GlobalInvocationID.x);
        if (gi >= p.n) return;
        buffer_st1(data, gi, buffer_ld1(data, gi) * afp(2));
    }
    """)

# Uses every macro of the preamble once, so a typo in any of them fails to compile.
ALL_MACROS = textwrap.dedent("""\
    #version 450
    layout (constant_id = 0) const int n = 0;
    layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
    layout (binding = 0) buffer a1 { sfp a1_data[]; };
    layout (binding = 1) buffer a2 { sfpvec2 a2_data[]; };
    layout (binding = 2) buffer a4 { sfpvec4 a4_data[]; };
    layout (binding = 3) buffer b1 { sfp b1_data[]; };
    layout (binding = 4) buffer b4 { sfpvec4 b4_data[]; };
    layout (push_constant) uniform parameter { int n; } p;
    shared lfp sm1[64];
    shared lfpvec4 sm4[64];
    void main()
    {
        int gi = int(gl_GlobalInvocationID.x);
        if (gi >= psc(n)) return;
        afp x = buffer_ld1(a1_data, gi);
        afpvec2 y = buffer_ld2(a2_data, gi);
        afpvec4 z = buffer_ld4(a4_data, gi);
        buffer_sm1(sm1, gi % 64, a1_data, gi);
        buffer_sm4(sm4, gi % 64, a4_data, gi);
        barrier();
        x += lfp2afp(sm1[0]) + sfp2afp(a1_data[0]);
        z += lfp2afpvec4(sm4[0]) + sfp2afpvec4(a4_data[0]);
        sm1[1] = afp2lfp(x);
        sm4[1] = afp2lfpvec4(z);
        a1_data[1] = afp2sfp(x);
        a4_data[1] = afp2sfpvec4(z);
        a2_data[1] = afp2sfpvec2(sfp2afpvec2(a2_data[2]));
        buffer_st1(a1_data, gi, x);
        buffer_st2(a2_data, gi, y);
        buffer_st4(a4_data, gi, z);
        buffer_cp1(b1_data, gi, a1_data, gi);
        buffer_cp2(a2_data, gi, a2_data, gi + 1);
        buffer_cp4(b4_data, gi, a4_data, gi);
        buffer_cp1to4(b4_data, gi, a1_data, ivec4(0, 1, 2, 3) + gi * 4);
        buffer_cp4to1(b1_data, ivec4(0, 1, 2, 3) + gi * 4, a4_data, gi);
    #if NCNN_fp16_storage
        a1_data[2] = float16_t(x);
    #endif
    #if NCNN_fp16_arithmetic
        float16_t hx = x;
    #endif
    }
    """)

needs_library = pytest.mark.skipif(glslang.load_library() is None, reason="glslang library not loadable")
needs_validator = pytest.mark.skipif(glslang.find_validator() is None, reason="no working glslangValidator")
# either back end: what an install with the `compiler` extra or glslang-tools has; the shipped
# SPIR-V needs neither, so a deployment without them skips only the tests that compile
needs_compiler = pytest.mark.skipif(glslang.backend() is None, reason="no GLSL compiler (library or glslangValidator)")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets its own disk cache and an empty in-process memo."""
    monkeypatch.setenv("VKNCNN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VKNCNN_NO_COMPILER", raising=False)
    monkeypatch.delenv("VKNCNN_GLSLANG_BACKEND", raising=False)
    registry._memo.clear()
    registry.builtin_shaders()._memo.clear()
    yield tmp_path / "cache"
    registry._memo.clear()


def full_text(source: str, **kw) -> str:
    inp = registry.build_compiler_input(source, "t", kw.pop("defines", {}), kw.pop("fp16_storage", False),
                                        kw.pop("fp16_arithmetic", False), [])
    return inp.text


def spirv_valid(spirv: bytes) -> None:
    assert spirv[:4] == SPIRV_MAGIC and len(spirv) % 4 == 0
    version = int.from_bytes(spirv[4:8], "little")
    assert version == 0x00010300, hex(version)  # SPIR-V 1.3
    val = shutil.which("spirv-val")
    if val:
        r = subprocess.run([val, "--target-env", "vulkan1.1", "-"], input=spirv, capture_output=True, check=False)
        assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------- the two back ends

@needs_library
def test_library_compiles_and_warm_compile_is_fast():
    text = full_text(SIMPLE)
    spirv_valid(glslang.compile_with_library(text, "simple"))
    times = []
    for _ in range(5):
        t = time.perf_counter()
        glslang.compile_with_library(text, "simple")
        times.append(time.perf_counter() - t)
    print(f"\nwarm in-process glslang compile: {min(times) * 1e3:.2f} ms (best of 5)")


@needs_validator
def test_validator_subprocess_compiles():
    text = full_text(SIMPLE)
    glslang.compile_with_validator(text, "simple")  # warm the OS caches
    t = time.perf_counter()
    spirv = glslang.compile_with_validator(text, "simple")
    print(f"\nglslangValidator subprocess compile: {(time.perf_counter() - t) * 1e3:.1f} ms")
    spirv_valid(spirv)


@needs_library
@needs_validator
def test_backend_can_be_forced_and_keys_differ(monkeypatch):
    monkeypatch.setenv("VKNCNN_GLSLANG_BACKEND", "subprocess")
    assert glslang.backend() == "subprocess"
    sub_id = glslang.compiler_identity()
    spirv_valid(registry.compile_glsl(SIMPLE, name="forced"))
    monkeypatch.setenv("VKNCNN_GLSLANG_BACKEND", "library")
    assert glslang.backend() == "library"
    assert glslang.compiler_identity() != sub_id
    monkeypatch.setenv("VKNCNN_GLSLANG_BACKEND", "bogus")
    with pytest.raises(ShaderCompileError, match="VKNCNN_GLSLANG_BACKEND"):
        glslang.backend()


def test_broken_validator_on_path_is_skipped(tmp_path, monkeypatch):
    fake = tmp_path / "glslangValidator"
    fake.write_text("#!/bin/sh\nexit 127\n")
    fake.chmod(0o755)
    monkeypatch.setenv("VKNCNN_GLSLANG_VALIDATOR", str(fake))
    monkeypatch.setattr(glslang, "_validator", None)
    monkeypatch.setattr(glslang, "_validator_searched", False)
    assert glslang.find_validator() is None
    with pytest.raises(ShaderCompileError, match="no working glslangValidator"):
        glslang.compile_with_validator(full_text(SIMPLE), "x")


# ---------------------------------------------------------------- preamble

@needs_compiler
@pytest.mark.parametrize("fp16_storage", [False, True])
@pytest.mark.parametrize("fp16_arithmetic", [False, True])
def test_every_preamble_macro_compiles(fp16_storage, fp16_arithmetic):
    spirv = registry.compile_glsl(ALL_MACROS, name="all_macros", fp16_storage=fp16_storage,
                                  fp16_arithmetic=fp16_arithmetic)
    spirv_valid(spirv)


@needs_compiler
@pytest.mark.parametrize("fp16_storage", [False, True])
@pytest.mark.parametrize("pack4", [0, 1])
def test_relu_variants_compile(fp16_storage, pack4):
    source = (registry.SHADER_DIR / "relu.comp").read_text()
    spirv_valid(registry.compile_glsl(source, {"PACK4": pack4}, "relu", fp16_storage=fp16_storage))


def test_preamble_contents():
    fp32, fp16 = make_preamble(False), make_preamble(True)
    assert "#define sfp float\n" in fp32 and "#define afpvec4 vec4\n" in fp32
    assert "NCNN_fp16_storage" not in fp32 and "#extension" not in fp32
    assert "#define sfpvec4 f16vec4\n" in fp16 and "#define afp float\n" in fp16
    assert fp16.startswith("#extension GL_EXT_shader_16bit_storage : require\n")
    arith = make_preamble(True, True)
    assert "#define afp float16_t\n" in arith and "GL_EXT_shader_explicit_arithmetic_types_float16" in arith
    assert "#define psc(x) (x==0?p.x:x)\n" in fp32


def test_preamble_goes_right_after_version_and_keeps_line_numbers():
    source = "// leading comment\n#version 450\n#extension GL_KHR_shader_subgroup_basic : enable\nvoid main() {}\n"
    text = splice_after_version(source, make_preamble(True) + "#define X 1\n")
    lines = text.splitlines()
    assert lines[0] == "// leading comment" and lines[1] == "#version 450"
    assert lines[2].startswith("#extension GL_EXT_shader_16bit_storage")
    assert "#line 3 0" in lines and lines.index("#line 3 0") < lines.index("#define X 1") + 2
    with pytest.raises(ShaderCompileError, match="#version"):
        splice_after_version("void main() {}\n", "")


@needs_compiler
def test_compile_error_names_shader_and_line():
    bad = "#version 450\nlayout (local_size_x = 1) in;\n\nvoid main()\n{\n    float x = not_declared;\n}\n"
    with pytest.raises(ShaderCompileError) as info:
        registry.compile_glsl(bad, name="my_broken_shader", fp16_storage=True)
    message = str(info.value)
    assert "my_broken_shader" in message and "not_declared" in message
    assert "my_broken_shader:6:" in message  # line 6 of the user's text despite the preamble


# ---------------------------------------------------------------- includes

def write_includes(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "twice.comp").write_text("afp twice(afp x) { return x * afp(2); }\n")
    (folder / "helpers.comp").write_text('#include "twice.comp"\nafp quad(afp x) { return twice(twice(x)); }\n')
    (folder / "broken.comp").write_text("// line 1\nafp oops() { return missing_thing; }\n")


INCLUDER = textwrap.dedent("""\
    #version 450
    layout (local_size_x = 64) in;
    layout (binding = 0) buffer blob { sfp data[]; };
    #include "helpers.comp"
    #include "twice.comp"
    void main()
    {
        uint i = gl_GlobalInvocationID.x;
        buffer_st1(data, i, quad(buffer_ld1(data, i)));
    }
    """)


@needs_compiler
def test_includes_are_inlined_once(tmp_path):
    inc = tmp_path / "inc"
    write_includes(inc)
    expanded = expand_includes(INCLUDER, "main.comp", [inc])
    assert expanded.files == ["main.comp", "helpers.comp", "twice.comp"]
    assert expanded.text.count("afp twice(") == 1
    spirv_valid(registry.compile_glsl(INCLUDER, name="main.comp", include_dirs=[inc]))


@needs_compiler
def test_include_errors(tmp_path):
    inc = tmp_path / "inc"
    write_includes(inc)
    with pytest.raises(ShaderCompileError, match='#include "nowhere.comp" not found'):
        registry.compile_glsl(INCLUDER.replace("twice.comp", "nowhere.comp"), include_dirs=[inc])
    with pytest.raises(ShaderCompileError, match=r"broken\.comp:2:") as info:
        registry.compile_glsl(INCLUDER.replace('#include "twice.comp"\n', '#include "broken.comp"\n'),
                              name="main.comp", include_dirs=[inc])
    assert "missing_thing" in str(info.value)


# ---------------------------------------------------------------- disk cache

def count_compiles(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = glslang.compile_spirv

    def counting(text, name="shader", target=glslang.TARGET):
        calls.append(name)
        return real(text, name, target)
    monkeypatch.setattr(glslang, "compile_spirv", counting)
    return calls


@needs_compiler
def test_cache_miss_then_hit(private_cache, monkeypatch):
    calls = count_compiles(monkeypatch)
    first = registry.compile_glsl(SIMPLE, name="cached")
    assert calls == ["cached"] and len(list(private_cache.glob("*.spv"))) == 1
    registry._memo.clear()  # a new process, as far as the memo knows
    assert registry.compile_glsl(SIMPLE, name="cached") == first
    assert calls == ["cached"], "second compile should have come from the disk cache"
    registry.compile_glsl(SIMPLE, name="cached", defines={"UNUSED": 1})
    registry.compile_glsl(SIMPLE, name="cached", fp16_storage=True)
    assert len(calls) == 3 and len(list(private_cache.glob("*.spv"))) == 3


@needs_compiler
@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_corrupt_cache_entry_is_ignored_and_rewritten(private_cache, monkeypatch, damage):
    calls = count_compiles(monkeypatch)
    good = registry.compile_glsl(SIMPLE, name="c")
    (entry,) = private_cache.glob("*.spv")
    blob = entry.read_bytes()
    broken = {"truncate": blob[:-8], "flip": blob[:-1] + bytes([blob[-1] ^ 0xFF]), "empty": b"",
              "garbage": b"not a cache file at all"}[damage]
    entry.write_bytes(broken)
    registry._memo.clear()
    assert registry.compile_glsl(SIMPLE, name="c") == good
    assert len(calls) == 2, "damaged entry must count as a miss"
    assert entry.read_bytes() == blob, "and be rewritten"
    assert not list(private_cache.glob("*.tmp")), "no temporary files left behind"


def test_cache_store_into_unwritable_folder_is_harmless(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert spirv_cache.store("k", SPIRV_MAGIC + bytes(20), blocker / "sub") is False
    assert spirv_cache.load("k", blocker / "sub") is None


# ---------------------------------------------------------------- built-in shaders

def test_manifest_convention():
    m = parse_manifest("// variants: PACK4=0,1 ACT=0,1,2\n// alias: foo_pack4 PACK4=1 ACT=2\n"
                       "#version 450\n// variants: LATE=1\nvoid main() {}\n// variants: IGNORED=1\n")
    assert m.variants == {"PACK4": ["0", "1"], "ACT": ["0", "1", "2"], "LATE": ["1"]}
    assert m.defaults() == {"PACK4": "0", "ACT": "0", "LATE": "1"}
    assert m.aliases == {"foo_pack4": {"PACK4": "1", "ACT": "2"}}
    with pytest.raises(ShaderCompileError, match="bad manifest line"):
        parse_manifest("// variants: PACK4\n#version 450\n")
    assert m.vulkan10 == {} and m.builds_for_vulkan10({"PACK4": "1"})  # no line: every fp32 variant


def test_manifest_vulkan10_line():
    m = parse_manifest("// variants: SUBGROUP=0,1\n// vulkan1.0: SUBGROUP=0\n#version 450\n")
    assert m.builds_for_vulkan10({"SUBGROUP": "0"}) and not m.builds_for_vulkan10({"SUBGROUP": "1"})
    assert parse_manifest("// vulkan1.0: no\n#version 450\n").vulkan10 is None
    with pytest.raises(ShaderCompileError, match="vulkan1.0"):
        parse_manifest("// vulkan1.0: SUBGROUP\n#version 450\n")


def test_builtin_names_and_variant_resolution():
    names = registry.list_builtin_shaders()
    assert "relu" in names and "relu_pack4" in names
    shaders = registry.builtin_shaders()
    assert shaders.resolve("relu", False) == ("relu", registry.Variant(False, (("PACK4", "0"),)))
    assert shaders.resolve("relu_pack4", True) == ("relu", registry.Variant(True, (("PACK4", "1"),)))
    assert shaders.resolve("relu", True, {"PACK4": True})[1].key == "fp16s;PACK4=1"
    assert [v.key for v in shaders.all_variants("relu")] == ["fp32;PACK4=0", "fp32;PACK4=1",
                                                              "fp16s;PACK4=0", "fp16s;PACK4=1",
                                                              "fp32;PACK4=0@vulkan1.0", "fp32;PACK4=1@vulkan1.0"]
    with pytest.raises(ShaderCompileError, match="no built-in shader named 'nope'.*relu"):
        registry.get_builtin_spirv("nope", Option())


class FakeInfo:
    def __init__(self, fp16, api=(1 << 22) | (3 << 12)):
        self.fp16 = fp16
        self.api = api

    def support_fp16_storage(self):
        return self.fp16

    def api_version(self):
        return self.api


class FakeDevice:
    def __init__(self, fp16, api=(1 << 22) | (3 << 12)):
        self.info = FakeInfo(fp16, api)


def test_vulkan10_devices_get_spirv_1_0_where_a_build_exists(monkeypatch):
    """A Vulkan 1.0 device gets the SPIR-V 1.0 build (shipped); a variant that needs Vulkan 1.1
    (subgroups) or fp16 storage keeps SPIR-V 1.3, which the device guard then refuses alone."""
    from vkncnn.gpu.compiler.source import TARGET, TARGET_VULKAN_1_0
    calls = count_compiles(monkeypatch)
    v10, v13 = FakeDevice(False, 1 << 22), FakeDevice(False)
    assert registry.spirv_target(v10) == TARGET_VULKAN_1_0
    assert registry.spirv_target(v13) == registry.spirv_target(None) == TARGET
    opt = Option()
    opt.use_fp16_storage = False
    assert reflect(registry.get_builtin_spirv("relu", opt, v10)).spirv_version == (1, 0)
    assert reflect(registry.get_builtin_spirv("relu", opt, v13)).spirv_version == (1, 3)
    shaders = registry.builtin_shaders()
    def target(name, fp16, defines):
        return shaders.resolve(name, fp16, defines, target=TARGET_VULKAN_1_0)[1].target
    assert target("reduction_rows", False, {"SUBGROUP": 0}) == TARGET_VULKAN_1_0
    assert target("reduction_rows", False, {"SUBGROUP": 1}) == TARGET
    assert target("relu", True, None) == TARGET
    assert target("convolution_coopmat", False, None) == TARGET
    spirv = registry.get_builtin_spirv("reduction_rows", opt, v10, {"SUBGROUP": 1})
    assert reflect(spirv).spirv_version == (1, 3)
    assert calls == [], "shipped SPIR-V must not be recompiled"


def test_fp16_storage_choice():
    opt = Option()
    assert registry.effective_fp16_storage(opt) is True
    assert registry.effective_fp16_storage(opt, FakeDevice(True)) is True
    assert registry.effective_fp16_storage(opt, FakeDevice(False)) is False
    opt.use_fp16_storage = False
    assert registry.effective_fp16_storage(opt, FakeDevice(True)) is False


def test_builtin_comes_from_shipped_spirv(monkeypatch):
    calls = count_compiles(monkeypatch)
    index = json.loads((registry.SHADER_DIR / "spirv" / "index.json").read_text())
    opt = Option()
    for fp16, pack4, name in [(False, 0, "relu"), (False, 1, "relu_pack4"), (True, 0, "relu"), (True, 1, "relu_pack4")]:
        opt.use_fp16_storage = fp16
        key = f"{'fp16s' if fp16 else 'fp32'};PACK4={pack4}"
        shipped = (registry.SHADER_DIR / "spirv" / index["shaders"]["relu"][key]["file"]).read_bytes()
        assert registry.get_builtin_spirv(name, opt) == shipped
        assert registry.get_builtin_spirv("relu", opt, FakeDevice(fp16), {"PACK4": pack4}) == shipped
    assert calls == [], "shipped SPIR-V must not be recompiled"


def test_shipped_spirv_is_up_to_date():
    r = subprocess.run([sys.executable, "-m", "vkncnn.tools.build_spirv", "--check"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


@needs_compiler
def test_build_and_check_on_a_private_shader_folder(tmp_path, monkeypatch):
    from vkncnn.tools import build_spirv
    folder = tmp_path / "shaders"
    write_includes(folder / "include")
    (folder / "scale.comp").write_text("// variants: FACTOR=2,3\n// alias: scale_by_5 FACTOR=5\n"
                                       + INCLUDER.replace("quad(", "FACTOR * quad("))
    shaders = registry.BuiltinShaders(folder)
    assert build_spirv.main(["--check", "--shader-dir", str(folder)]) == 1  # nothing built yet
    # (FACTOR 2, 3, alias 5) x (fp32, fp16s, fp32 as SPIR-V 1.0)
    assert build_spirv.build(shaders, verbose=False) == 9
    assert build_spirv.check(shaders) == []
    spirv10 = (folder / "spirv" / "scale-fp32-FACTOR_5-vulkan1.0.spv").read_bytes()
    assert reflect(spirv10).spirv_version == (1, 0)
    assert build_spirv.build(registry.BuiltinShaders(folder), verbose=False) == 0  # nothing to redo

    calls = count_compiles(monkeypatch)
    fresh = registry.BuiltinShaders(folder)
    shipped = fresh.get("scale_by_5", True)
    assert calls == [] and shipped == (folder / "spirv" / "scale-fp16s-FACTOR_5.spv").read_bytes()

    # Editing an include makes every variant stale; the registry then compiles instead.
    (folder / "include" / "twice.comp").write_text("afp twice(afp x) { return x * afp(3); }\n")
    assert len(build_spirv.check(registry.BuiltinShaders(folder))) == 9
    assert registry.BuiltinShaders(folder).get("scale_by_5", True) != shipped and len(calls) == 1
    (folder / "spirv" / "orphan.spv").write_bytes(b"x")
    problems = build_spirv.check(registry.BuiltinShaders(folder))
    assert any("orphan" in p for p in problems) and any("stale" in p for p in problems)
    build_spirv.build(registry.BuiltinShaders(folder), verbose=False)
    assert build_spirv.check(registry.BuiltinShaders(folder)) == []


NO_COMPILER_SCRIPT = textwrap.dedent("""\
    import sys
    import vkncnn
    from vkncnn.gpu.compiler import registry as r
    opt = vkncnn.Option()
    sizes = []
    for fp16 in (False, True):
        opt.use_fp16_storage = fp16
        for name in ("relu", "relu_pack4"):
            sizes.append(len(r.get_builtin_spirv(name, opt)))
    try:
        r.compile_glsl("#version 450\\nvoid main() {}\\n")
        raise SystemExit("compile_glsl should have refused")
    except vkncnn.ShaderCompileError as exc:
        assert "VKNCNN_NO_COMPILER" in str(exc), exc
    maps = open("/proc/self/maps").read()
    assert "libglslang" not in maps and "libSPIRV" not in maps, "glslang was loaded"
    assert "vkncnn.gpu.compiler.glslang" not in sys.modules, "the compiler binding was imported"
    print("ok", sizes)
    """)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")
def test_no_compiler_mode_uses_only_shipped_spirv(tmp_path):
    env = dict(os.environ, VKNCNN_NO_COMPILER="1", VKNCNN_CACHE_DIR=str(tmp_path / "empty-cache"))
    r = subprocess.run([sys.executable, "-c", NO_COMPILER_SCRIPT],
                       capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr


def test_no_compiler_mode_refuses_stale_builtin(tmp_path, monkeypatch):
    folder = tmp_path / "shaders"
    (folder / "include").mkdir(parents=True)
    (folder / "tiny.comp").write_text("#version 450\nlayout (local_size_x = 1) in;\nvoid main() {}\n")
    monkeypatch.setenv("VKNCNN_NO_COMPILER", "1")
    with pytest.raises(ShaderCompileError, match="not shipped.*VKNCNN_NO_COMPILER"):
        registry.BuiltinShaders(folder).get("tiny", False)


@needs_validator
def test_falls_back_to_validator_when_library_is_missing(tmp_path):
    script = ("from vkncnn.gpu.compiler import glslang, registry as r\n"
              "spv = r.compile_glsl('#version 450\\nlayout (local_size_x = 1) in;\\nvoid main() {}\\n')\n"
              "assert spv[:4] == b'\\x03\\x02\\x23\\x07'\n"
              "print(glslang.backend(), glslang.library_error())\n")
    env = dict(os.environ, VKNCNN_GLSLANG_LIBRARY_DIR=str(tmp_path), VKNCNN_CACHE_DIR=str(tmp_path / "c"))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0 and r.stdout.startswith("subprocess no libglslang"), r.stdout + r.stderr
