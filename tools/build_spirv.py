"""Precompile every built-in shader variant into shaders/spirv/, so installs need no glslang.

    python -m vkncnn.tools.build_spirv            # (re)build what changed, drop orphans
    python -m vkncnn.tools.build_spirv --force    # recompile everything
    python -m vkncnn.tools.build_spirv --check    # exit 1 if anything shipped is stale or missing

Variants per shaders/<name>.comp: fp32 and fp16 storage, times the cartesian product of the
axes its manifest declares, plus its aliases (see vkncnn/gpu/compiler/source.py):

    // variants: PACK4=0,1        -> PACK4=0 and PACK4=1 (the first value is the default)
    // alias: relu_pack4 PACK4=1  -> the name "relu_pack4" means relu.comp with PACK4=1
    // vulkan1.0: SUBGROUP=0      -> the fp32 variants with SUBGROUP=0 also as SPIR-V 1.0
                                     (default: every fp32 variant; `no`: none)

Output: shaders/spirv/<name>-<fp32|fp16s>[-<DEFINE>_<value>...][-vulkan1.0].spv and index.json:

    {"format": 1, "target": "vulkan1.1-spv1.3", "compiler": "...",
     "shaders": {"relu": {"fp32;PACK4=0": {"file": ..., "source_sha256": ..., "spirv_sha256": ...},
                          "fp32;PACK4=0@vulkan1.0": {..., "target": "vulkan1.0-spv1.0"}}}}

"target" is the default target; an entry built for another one names its own.

source_sha256 hashes the exact compiler input (preamble, defines, includes expanded), so
--check needs no compiler: it re-derives the inputs and compares hashes and files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from vkncnn.gpu.compiler.registry import INDEX_FORMAT, SHADER_DIR, BuiltinShaders, source_hash
from vkncnn.gpu.compiler.source import TARGET


def _expected(shaders: BuiltinShaders) -> dict[tuple[str, str], tuple]:
    """(stem, variant key) -> (variant, compiler input, source hash) for everything to ship."""
    out = {}
    for stem in shaders.stems():
        for variant in shaders.all_variants(stem):
            inp = shaders.compiler_input(stem, variant)
            out[(stem, variant.key)] = (variant, inp, source_hash(inp, variant.target))
    return out


def _file_ok(path: Path, sha: str | None) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False


def check(shaders: BuiltinShaders) -> list[str]:
    """Every problem with the shipped SPIR-V, as readable lines; empty when up to date."""
    problems: list[str] = []
    index_path = shaders.spirv_dir / "index.json"
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{index_path}: unreadable ({exc})"]
    if index.get("format") != INDEX_FORMAT or index.get("target") != TARGET:
        problems.append(f"{index_path}: format/target {index.get('format')}/{index.get('target')}, "
                        f"expected {INDEX_FORMAT}/{TARGET}")
    shipped = index.get("shaders", {})
    expected = _expected(shaders)
    for (stem, key), (variant, _inp, sha) in expected.items():
        entry = shipped.get(stem, {}).get(key)
        if entry is None:
            problems.append(f"{stem} [{key}]: not built")
        elif entry.get("source_sha256") != sha:
            problems.append(f"{stem} [{key}]: stale ({stem}.comp, an include or the preamble changed)")
        elif entry.get("file") != variant.file_name(stem) or not _file_ok(
                shaders.spirv_dir / entry["file"], entry.get("spirv_sha256")):
            problems.append(f"{stem} [{key}]: {entry.get('file')} missing or damaged")
    for stem, entries in shipped.items():
        for key in entries:
            if (stem, key) not in expected:
                problems.append(f"{stem} [{key}]: shipped but no longer a variant of any shader")
    wanted_files = {v.file_name(stem) for (stem, _), (v, _, _) in expected.items()}
    for path in sorted(shaders.spirv_dir.glob("*.spv")):
        if path.name not in wanted_files:
            problems.append(f"{path.name}: orphan file")
    return problems


def build(shaders: BuiltinShaders, force: bool = False, verbose: bool = True) -> int:
    """Compile what is missing or stale, rewrite index.json, remove orphans. Returns #compiled."""
    from vkncnn.gpu.compiler import glslang

    shaders.spirv_dir.mkdir(parents=True, exist_ok=True)
    old = shaders.index().get("shaders", {}) if not force else {}
    expected = _expected(shaders)
    names = [v.file_name(stem) for (stem, _), (v, _, _) in expected.items()]
    if len(set(names)) != len(names):
        raise SystemExit("two variants map to the same .spv file name; rename a define value")

    index: dict[str, dict] = {}
    compiled = 0
    for (stem, key), (variant, inp, sha) in expected.items():
        path = shaders.spirv_dir / variant.file_name(stem)
        entry = old.get(stem, {}).get(key)
        if entry and entry.get("source_sha256") == sha and entry.get("file") == path.name \
                and _file_ok(path, entry.get("spirv_sha256")):
            index.setdefault(stem, {})[key] = entry
            continue
        spirv = glslang.compile_spirv(inp.text, f"{stem}.comp", variant.target)
        path.write_bytes(spirv)
        compiled += 1
        if verbose:
            print(f"compiled {stem} [{key}] -> {path.name} ({len(spirv)} bytes)")
        entry = {"file": path.name, "source_sha256": sha, "spirv_sha256": hashlib.sha256(spirv).hexdigest()}
        if variant.target != TARGET:
            entry["target"] = variant.target
        index.setdefault(stem, {})[key] = entry
    for path in shaders.spirv_dir.glob("*.spv"):
        if path.name not in names:
            path.unlink()
            if verbose:
                print(f"removed orphan {path.name}")
    # Informational only (--check ignores it); unchanged when nothing was recompiled.
    compiler = glslang.compiler_identity() if compiled else shaders.index().get("compiler")
    doc = {"format": INDEX_FORMAT, "target": TARGET, "compiler": compiler,
           "shaders": {stem: dict(sorted(v.items())) for stem, v in sorted(index.items())}}
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    index_path = shaders.spirv_dir / "index.json"
    if not index_path.exists() or index_path.read_text(encoding="utf-8") != text:
        index_path.write_text(text, encoding="utf-8")
    shaders._index = None  # the folder's cached index is stale now
    return compiled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vkncnn build-spirv", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="verify only; exit 1 if stale or missing")
    parser.add_argument("--force", action="store_true", help="recompile every variant")
    parser.add_argument("--shader-dir", type=Path, default=SHADER_DIR, help="default: the package's shaders/")
    args = parser.parse_args(argv)
    shaders = BuiltinShaders(args.shader_dir)
    if args.check:
        problems = check(shaders)
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"{len(problems)} problem(s): run `python -m vkncnn.tools.build_spirv`", file=sys.stderr)
            return 1
        print(f"shipped SPIR-V up to date ({len(_expected(shaders))} variants)")
        return 0
    compiled = build(shaders, force=args.force)
    print(f"{compiled} variant(s) compiled, {len(_expected(shaders))} shipped in {shaders.spirv_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
