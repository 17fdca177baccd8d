"""The `vkncnn` command: subcommands are the tools in this folder."""

from __future__ import annotations

import sys

COMMANDS = {
    "bench": ("vkncnn.tools.bench", "time the benchmark models (optionally against real ncnn)"),
    "layerbench": ("vkncnn.tools.layer_bench", "each distinct layer of the benchmark models alone, against ncnn"),
    "digits": ("vkncnn.tools.digits", "the main job: classify handwritten digits"),
    "randweights": ("vkncnn.tools.randweights", "write a seeded random .bin for a .param"),
    "shadertest": ("vkncnn.tools.shader_test", "compare a layer's GPU shader with numpy"),
    "build-spirv": ("vkncnn.tools.build_spirv", "precompile the built-in shaders"),
    "compare": ("vkncnn.tools.compare_models", "every benchmark model against real ncnn"),
    "fuzz": ("vkncnn.tools.fuzz", "fuzz the model loaders with mutated real files"),
    "layerfuzz": ("vkncnn.tools.layer_fuzz", "random one-layer models, vkncnn against real ncnn"),
}


def main(argv=None) -> int:
    import importlib

    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: vkncnn <command> [args]\n")
        for name, (_, doc) in COMMANDS.items():
            print(f"  {name:<12} {doc}")
        return 0 if not argv else 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
