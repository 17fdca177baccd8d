"""The `vkncnn` command: one subcommand per tool in this folder.

    vkncnn [--debug] COMMAND [options]      (also: python -m vkncnn ...)

Exit status: 0 on success, 2 on a usage error (argparse's), 1 when a command fails. A
failure prints one line, `vkncnn: error: <message>`, and no traceback: users of a command
line want the reason, not the stack. `--debug` (or VKNCNN_DEBUG=1) lets the exception
through with its traceback, for bug reports.

The model commands (info, run, bench, profile, graph, devices, generate, convert) are parsed
here, from the arguments their modules declare. The older tools keep their own parsers:
everything after their name is handed to their main(argv) untouched, so their options and
--help are theirs. Modules load only when their command runs, so `vkncnn --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from importlib import metadata

import vkncnn  # loaded already: this module lives inside the package

# name -> (module, one-line help): commands parsed here; the module has add_arguments(ap) and run(args)
COMMANDS = {
    "info": ("vkncnn.tools.cmd_info", "a model's inputs, outputs, layer shapes, FLOPs, weights"),
    "run": ("vkncnn.tools.cmd_run", "run a model on .npy arrays or images"),
    "bench": ("vkncnn.tools.bench", "time a model or the benchmark models, optionally vs ncnn"),
    "profile": ("vkncnn.tools.cmd_profile", "per-layer times of a model: table, HTML report, Chrome trace"),
    "graph": ("vkncnn.tools.cmd_graph", "a model's layer graph as SVG or Graphviz DOT"),
    "devices": ("vkncnn.tools.cmd_devices", "the Vulkan devices, their features, the default one"),
    "generate": ("vkncnn.tools.cmd_generate", "continue a text with an LLM decoder (a tiny model by default)"),
    "convert": ("vkncnn.tools.cmd_convert", "a TorchScript or ONNX model to .param/.bin via pnnx, then checked"),
}
# name -> (module, one-line help): tools with their own parser; their main(argv) gets the rest of the line
PASS_THROUGH = {
    "digits": ("vkncnn.tools.digits", "the main job: classify handwritten digits"),
    "randweights": ("vkncnn.tools.randweights", "write a seeded random .bin for a .param"),
    "shadertest": ("vkncnn.tools.shader_test", "compare a layer's GPU shader with numpy"),
    "build-spirv": ("vkncnn.tools.build_spirv", "precompile the built-in shaders"),
    "compare": ("vkncnn.tools.compare_models", "the benchmark models, or a .param, vs real ncnn"),
    # developer tools (tools/dev/), for work on vkncnn itself
    "layerbench": ("vkncnn.tools.dev.layer_bench", "(dev) each layer of the benchmark models alone, vs ncnn"),
    "fuzz": ("vkncnn.tools.dev.fuzz", "(dev) fuzz the model loaders with mutated real files"),
    "layerfuzz": ("vkncnn.tools.dev.layerfuzz.runner", "(dev) random one-layer models, vkncnn against real ncnn"),
}
# the last line of `vkncnn --help`
EPILOG = "VKNCNN_DEBUG=1 in the environment is the same as --debug."


def version() -> str:
    """The installed distribution's version, else the package's own, else pyproject's."""
    try:
        return metadata.version("vkncnn")
    except metadata.PackageNotFoundError:
        return getattr(vkncnn, "__version__", "0.1.0")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (the command list is laid out by hand), options' help aligned
    a little further right than argparse's default."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)


class _LazyParser(argparse.ArgumentParser):
    """A subcommand parser whose arguments come from the command's module, added when the
    subcommand is actually parsed: `vkncnn --help` does not import every tool."""

    def __init__(self, *args, module: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._module = module
        self._loaded = False

    def load(self) -> None:
        if self._loaded or not self._module:
            return
        self._loaded = True
        importlib.import_module(self._module).add_arguments(self)
        self.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                          help="on failure, show the traceback instead of one line")

    def parse_known_args(self, args=None, namespace=None):
        self.load()
        return super().parse_known_args(args, namespace)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="vkncnn", description="ncnn-compatible inference in Python: Vulkan compute shaders or numpy.",
        epilog=EPILOG, formatter_class=_Formatter)
    ap.add_argument("--version", action="version", version=f"vkncnn {version()}",
                    help="print the version and exit")
    ap.add_argument("--debug", action="store_true", help="on failure, show the traceback instead of one line")
    listing = {**COMMANDS, **PASS_THROUGH}
    width = max(map(len, listing)) + 2
    # argparse's own listing of subcommands misjudges their indent and wraps the longer names
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_LazyParser,
                            description="\n".join(f"{n:<{width}}{doc}" for n, (_, doc) in listing.items()),
                            help="one of the commands above; `vkncnn COMMAND --help` for its options")
    for name, (module, doc) in COMMANDS.items():
        sp = sub.add_parser(name, description=doc, module=module, formatter_class=_Formatter)
        sp.set_defaults(module=module, pass_through=False)
    for name, (module, doc) in PASS_THROUGH.items():
        # no -h of its own: `vkncnn NAME --help` reaches the tool's parser
        sp = sub.add_parser(name, description=doc, add_help=False)
        sp.set_defaults(module=module, pass_through=True)
    return ap


def split_pass_through(argv: list[str]) -> tuple[list[str], list[str]]:
    """argv up to a pass-through command's name, and what follows it (that tool's own arguments)."""
    for i, token in enumerate(argv):
        if token in PASS_THROUGH:
            return argv[:i + 1], argv[i + 1:]
        if not token.startswith("-"):
            break  # another command: argparse reads the whole line
    return argv, []


def one_line(e: BaseException) -> str:
    """The message of an exception on one line: the reason, with the path for OS errors."""
    if isinstance(e, OSError) and e.strerror:
        text = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    else:
        text = str(e)
        if isinstance(e, KeyError) and e.args:
            text = str(e.args[0])
        if not _is_expected(e) or not text:
            text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return " ".join(text.split())


def _is_expected(e: BaseException) -> bool:
    """Errors whose message says it all; others keep their type's name in front."""
    from vkncnn.errors import Error  # lazy: only on the error path

    from .cmd_common import CommandError

    return isinstance(e, (Error, CommandError, ValueError))


def _runner(args: argparse.Namespace, rest: list[str]) -> Callable[[], object]:
    module = importlib.import_module(args.module)
    if args.pass_through:
        return lambda: module.main(rest)
    return lambda: module.run(args)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    head, rest = split_pass_through(argv)
    parser = build_parser()
    args = parser.parse_args(head)
    if args.command is None:
        parser.print_help(sys.stderr)
        print("vkncnn: error: no command given", file=sys.stderr)
        return 2
    debug = args.debug or os.environ.get("VKNCNN_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")
    try:
        return int(_runner(args, rest)() or 0)
    except KeyboardInterrupt:
        if debug:
            raise
        print("vkncnn: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if debug:
            raise
        print(f"vkncnn: error: {one_line(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
