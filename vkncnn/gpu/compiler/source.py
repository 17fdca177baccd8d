"""Shader source text before it meets the compiler: includes, preamble splicing, the manifest.

The compiler always receives one self-contained string:

    <comments before #version, if any>
    #version 450
    <#extension lines, then the preamble macros>      (preamble.py)
    <#define lines for the variant's defines>
    #line <n> 0                                       (so errors quote the .comp's own line numbers)
    <the rest of the shader, with every #include "x.comp" inlined>

Includes are a textual pre-pass (simpler than glslang's include callbacks, and the expanded
text is exactly what the SPIR-V cache hashes). Each included file gets its own GLSL source
string number via `#line 1 <k>`; `rewrite_log` turns glslang's "ERROR: <k>:<line>:" back into
file names. A file is inlined once per shader (as if it had `#pragma once`).

Variant manifest: directive comments at the top of a built-in shader, before the first line
of code (`#version` may come before or after them):

    // variants: PACK4=0,1 ACT=0,1,2    one axis per NAME=v1,v2,...; the first value is the
                                        default; build_spirv ships the cartesian product
                                        (times fp32 / fp16 storage)
    // alias: relu_pack4 PACK4=1        a built-in name that means this file with these defines
    // vulkan1.0: SUBGROUP=0            which variants also ship as SPIR-V 1.0 for Vulkan 1.0
                                        devices (fp32 storage, those defines); `no` for none.
                                        Without the line: every fp32-storage variant
    // fp16a: all                       also ship fp16-arithmetic variants (afp = float16_t) of
    // fp16a: MODE=0                    every combination, or only of those whose listed axes take
                                        the listed values; without the line, a request for fp16
                                        arithmetic gets the fp16-storage variant (fp32 arithmetic)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ShaderCompileError

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">][ \t]*(//.*)?$')
_VERSION_RE = re.compile(r"^[ \t]*#[ \t]*version\b")
_DIRECTIVE_RE = re.compile(r"^[ \t]*//[ \t]*(variants|alias|vulkan1\.0|fp16a)[ \t]*:(.*)$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_INCLUDE_DEPTH = 16

# What every compile targets: subgroup operations need SPIR-V 1.3, which Vulkan 1.1 guarantees.
TARGET = "vulkan1.1-spv1.3"
# The second target, for Vulkan 1.0 devices: SPIR-V 1.0, so no subgroup operations.
TARGET_VULKAN_1_0 = "vulkan1.0-spv1.0"
TARGETS = (TARGET, TARGET_VULKAN_1_0)


def compiler_disabled() -> bool:
    """True when VKNCNN_NO_COMPILER asks never to load glslang nor run glslangValidator.

    Lives here, in the text-only module, so that checking it never imports the compiler binding.
    """
    return os.environ.get("VKNCNN_NO_COMPILER", "").strip().lower() not in ("", "0", "false", "no", "off")


@dataclass
class ExpandedSource:
    text: str
    files: list[str] = field(default_factory=list)  # GLSL source-string number -> file name


def expand_includes(source: str, name: str, include_dirs: list[Path]) -> ExpandedSource:
    """Inline every `#include "x"` found in include_dirs (searched in order)."""
    files = [name]
    seen: set[Path] = set()

    def expand(text: str, string_no: int, depth: int) -> list[str]:
        out: list[str] = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            m = _INCLUDE_RE.match(line)
            if not m:
                out.append(line)
                continue
            target = m.group(1)
            path = next((d / target for d in include_dirs if (d / target).is_file()), None)
            if path is None:
                dirs = ", ".join(str(d) for d in include_dirs) or "(none)"
                raise ShaderCompileError(
                    f"shader '{name}': {files[string_no]}:{lineno}: #include \"{target}\" not found in {dirs}")
            if depth >= _MAX_INCLUDE_DEPTH:
                raise ShaderCompileError(f"shader '{name}': #include nested deeper than {_MAX_INCLUDE_DEPTH}")
            path = path.resolve()
            if path in seen:
                out.append(f"// {line.strip()} (already included)")
                continue
            seen.add(path)
            files.append(target)
            child = len(files) - 1
            out.append(f"#line 1 {child}")
            out.extend(expand(path.read_text(encoding="utf-8"), child, depth + 1))
            out.append(f"#line {lineno + 1} {string_no}")
        return out

    return ExpandedSource("\n".join(expand(source, 0, 0)) + "\n", files)


def splice_after_version(source: str, block: str, name: str = "shader") -> str:
    """Insert `block` right after the `#version` line, then restore the line numbering."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if _VERSION_RE.match(line):
            head = "\n".join(lines[: i + 1])
            tail = "\n".join(lines[i + 1:])
            block = block if block.endswith("\n") or not block else block + "\n"
            return f"{head}\n{block}#line {i + 2} 0\n{tail}"
    raise ShaderCompileError(f"shader '{name}': no #version line (vkncnn shaders start with #version 450)")


def normalize_defines(defines: dict | None) -> dict[str, str]:
    """Defines as sorted {NAME: text}; True/False become 1/0."""
    out: dict[str, str] = {}
    for key, value in (defines or {}).items():
        if not _NAME_RE.match(str(key)):
            raise ShaderCompileError(f"bad macro name {key!r} in defines")
        if isinstance(value, bool):
            value = int(value)
        text = "" if value is None else str(value)
        if "\n" in text:
            raise ShaderCompileError(f"macro {key} value must be one line, got {text!r}")
        out[str(key)] = text
    return dict(sorted(out.items()))


def define_lines(defines: dict[str, str]) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in defines.items())


_LOG_RE = re.compile(r"\b(ERROR|WARNING): (\d+):(\d+):")


def rewrite_log(message: str, files: list[str]) -> str:
    """Turn glslang's 'ERROR: 1:12:' into 'ERROR: include/x.comp:12:' using the include map."""
    def sub(m: re.Match) -> str:
        k = int(m.group(2))
        where = files[k] if k < len(files) else m.group(2)
        return f"{m.group(1)}: {where}:{m.group(3)}:"
    return _LOG_RE.sub(sub, message)


@dataclass
class Manifest:
    variants: dict[str, list[str]] = field(default_factory=dict)   # axis name -> values, default first
    aliases: dict[str, dict[str, str]] = field(default_factory=dict)  # alias -> defines
    # `// vulkan1.0:` the defines a variant needs to ship as SPIR-V 1.0 ({} = every fp32
    # variant, the default); None (`no`): the shader needs Vulkan 1.1
    vulkan10: dict[str, str] | None = field(default_factory=dict)
    # fp16-arithmetic variants: None = none shipped; {} = every combination; else the axis
    # values they are shipped for ({"MODE": ["0"]})
    fp16a: dict[str, list[str]] | None = None

    def defaults(self) -> dict[str, str]:
        return {k: v[0] for k, v in self.variants.items()}

    def builds_for_vulkan10(self, defines: dict[str, str]) -> bool:
        """Does the variant with these defines (fp32 storage) ship as SPIR-V 1.0?"""
        return self.vulkan10 is not None and all(defines.get(k) == v for k, v in self.vulkan10.items())

    def has_fp16a(self, defines: dict[str, str]) -> bool:
        """Whether the combination `defines` has an fp16-arithmetic variant."""
        if self.fp16a is None:
            return False
        return all(str(defines.get(k, "")) in values for k, values in self.fp16a.items())


def parse_manifest(source: str, name: str = "shader") -> Manifest:
    """Read the `// variants:`, `// alias:`, `// vulkan1.0:` and `// fp16a:` directives from the
    comment block at the top."""
    manifest = Manifest()
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or _VERSION_RE.match(line):
            continue
        if not stripped.startswith("//"):
            break  # first line of code: the directive block is over
        m = _DIRECTIVE_RE.match(line)
        if not m:
            continue
        kind, body = m.group(1), m.group(2).split()
        try:
            if kind == "vulkan1.0":
                if body == ["no"]:
                    manifest.vulkan10 = None
                else:
                    manifest.vulkan10 = dict(a.split("=", 1) for a in body)
                    if not body or not all(_NAME_RE.match(k) for k in manifest.vulkan10):
                        raise ValueError(line)
            elif kind == "fp16a":
                manifest.fp16a = {}
                for item in body:
                    if item == "all" and len(body) == 1:
                        break
                    key, values = item.split("=", 1)
                    manifest.fp16a[key] = [v for v in values.split(",") if v != ""]
                    if not _NAME_RE.match(key) or not manifest.fp16a[key]:
                        raise ValueError(item)
                if not body:
                    raise ValueError(kind)
            elif kind == "variants":
                for item in body:
                    key, values = item.split("=", 1)
                    manifest.variants[key] = [v for v in values.split(",") if v != ""]
                    if not _NAME_RE.match(key) or not manifest.variants[key]:
                        raise ValueError(item)
            else:
                alias, *assignments = body
                if not _NAME_RE.match(alias):
                    raise ValueError(alias)
                manifest.aliases[alias] = dict(a.split("=", 1) for a in assignments)
        except ValueError:
            raise ShaderCompileError(f"shader '{name}': bad manifest line {line.strip()!r} "
                                     "(expected '// variants: NAME=v1,v2 ...', '// alias: name NAME=v ...' or "
                                     "'// vulkan1.0: NAME=v ... | no', '// fp16a: all' or "
                                     "'// fp16a: NAME=v1,v2 ...')"
                                     ) from None
    return manifest
