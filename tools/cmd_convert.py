"""vkncnn convert: a TorchScript or ONNX model to ncnn's .param/.bin through pnnx, then checked.

    vkncnn convert model.pt --shape 1,3,224,224
    vkncnn convert model.onnx --shape "[1,3,224,224];[1,10]" -o out/ --fp32
    vkncnn convert model.pt --no-check

The conversion is pnnx's (the `pnnx` pip package, whose executable carries its own
libtorch and ONNX Runtime). pnnx writes seven files next to its input, so it runs in a
temporary folder on a link to the model; only MODEL.ncnn.param and MODEL.ncnn.bin come
out, into --output-dir (default: the model's folder). The model file itself is only read.

--shape is in the source framework's order, batch first: [1,3,224,224]. ncnn has no batch
axis, so the converted model's input in0 is (3,224,224) and a (1,10) output is out0 (10,).
A model traced with torch.jit.trace, or an ONNX model with fixed dims, carries its shapes
and needs no --shape.

The check feeds one seeded random input (uniform in [-1, 1)) to the source model, through
torch (TorchScript) or onnxruntime (ONNX), and to the converted model on vkncnn's numpy path
and on its GPU path (when a Vulkan device exists), and prints each output's max abs error
and that error relative to the output's largest magnitude. Above --tol the command fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import vkncnn
from vkncnn.errors import MissingPackageError

from .cmd_common import CommandError, Shape, existing_file, human

PNNX_INSTALL = "pip install pnnx (or pip install vkncnn[convert])"
DEFAULT_TOL = 1e-2  # fp16 weights and fp16 storage: DESIGN's bound for fp16 against fp32
_DIMS = re.compile(r"\d+(?:[,x]\d+)*")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# an annotated blob of a pnnx.param line: #name=(1,3,224,224)f32, `?` for a dim pnnx does not know
_PNNX_BLOB = re.compile(r"#\S+?=\(([^)]*)\)(\w+)")


# -- arguments ----------------------------------------------------------------------------------
def parse_input_shapes(text: str) -> list[Shape]:
    """`[1,3,224,224]`, `1,3,224,224` or `1x3x224x224`; several: `[1,3,8,8],[1,10]` or `1,3,8,8;1,10`."""
    chunks = re.findall(r"\[([^\[\]]*)\]", text)
    if chunks:
        if re.sub(r"\[[^\[\]]*\]", "", text).strip(" ,;"):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a list of shapes: give [1,3,224,224] or [1,3,224,224],[1,10] (no type suffix)")
    else:
        chunks = text.split(";")
    shapes = []
    for chunk in chunks:
        dims = chunk.strip().lower()
        if not _DIMS.fullmatch(dims):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a shape: give the source model's dims, batch first, e.g. 1,3,224,224 or "
                "[1,3,224,224] (';' between inputs)")
        shape = tuple(int(v) for v in re.split(r"[,x]", dims))
        if 0 in shape:
            raise argparse.ArgumentTypeError(f"{text!r}: a dim is 0")
        if len(shape) > 1 and shape[0] != 1:
            raise argparse.ArgumentTypeError(
                f"{text!r}: the first dim is the batch, which ncnn models do not have: give 1")
        if len(shape) > 5:
            raise argparse.ArgumentTypeError(f"{text!r}: ncnn takes at most 4 dims after the batch, got "
                                             f"{len(shape) - 1}")
        shapes.append(shape)
    return shapes


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number > 0")
    return value


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("model", metavar="MODEL",
                    help="a TorchScript file (.pt/.pth from torch.jit.trace(...).save) or an .onnx model")
    ap.add_argument("--shape", action="append", default=[], type=parse_input_shapes, metavar="DIMS",
                    help="an input's shape in the source's order, batch first: 1,3,224,224 or [1,3,224,224] "
                         "(repeat, or ';' between shapes, for several inputs, in the model's order); default: "
                         "the shapes a traced or fixed-size model carries")
    ap.add_argument("--output-dir", "-o", type=Path, metavar="DIR",
                    help="where MODEL.ncnn.param and MODEL.ncnn.bin go (default: MODEL's folder)")
    prec = ap.add_mutually_exclusive_group()
    prec.add_argument("--fp16", dest="fp16", action="store_true", default=True,
                      help="store the weights as fp16, half the size (pnnx's default)")
    prec.add_argument("--fp32", dest="fp16", action="store_false",
                      help="store the weights as fp32; the check then runs fp32 throughout")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="convert only: do not run the converted model against the source")
    ap.add_argument("--tol", type=_positive_float, default=DEFAULT_TOL, metavar="REL",
                    help=f"the check fails above this error, relative to each output's largest magnitude "
                         f"(default {DEFAULT_TOL:g})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random input the check feeds (default 0)")
    ap.add_argument("--verbose", "-v", action="store_true", help="show pnnx's own output as it converts")


# -- finding what is needed ---------------------------------------------------------------------
def _spec(module: str):
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
        return None


def installed(module: str) -> bool:
    return _spec(module) is not None


def find_pnnx() -> Path | None:
    """The pnnx executable inside the `pnnx` package (found without importing it: its
    __init__ imports torch, which an ONNX conversion does not need), else one on PATH."""
    spec = _spec("pnnx")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for name in ("pnnx", "pnnx.exe"):
            exe = Path(folder) / name
            if exe.is_file() and os.access(exe, os.X_OK):
                return exe
    found = shutil.which("pnnx")
    return Path(found) if found else None


def source_kind(path: Path) -> str:
    """'onnx' or 'torchscript'; a torch.save checkpoint or another file is refused here, with
    what to do, rather than by pnnx with a stack trace."""
    if path.suffix.lower() == ".onnx":
        return "onnx"
    if not zipfile.is_zipfile(path):
        raise CommandError(f"{path}: not a TorchScript file (that is a zip archive, from torch.jit.save) nor an "
                           ".onnx model")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    if not any("/code/" in n for n in names):
        raise CommandError(f"{path}: a torch.save checkpoint (pickled weights or module), not TorchScript: "
                           "save the model with torch.jit.trace(model, example_input).save(path) first")
    return "torchscript"


def _require(module: str, why: str, install: str) -> None:
    if not installed(module):
        raise MissingPackageError(f"{why} needs {module}: {install}; or convert without the check (--no-check)")


# -- converting ---------------------------------------------------------------------------------
@dataclass
class Converted:
    param: Path
    bin: Path
    inputs: list[tuple[Shape | None, str]]  # the source's input shapes and types, as pnnx saw them
    seconds: float


def _pnnx_io(pnnx_param: str, op: str) -> list[tuple[Shape | None, str]]:
    """(shape, type) of each `op` line (pnnx.Input, pnnx.Output) of a .pnnx.param; shape None
    where pnnx has none."""
    found = []
    for line in pnnx_param.splitlines():
        if line.split(maxsplit=1)[:1] == [op]:
            m = _PNNX_BLOB.search(line)
            dims = m.group(1).split(",") if m else []
            shape = tuple(int(d) for d in dims) if dims and all(d.strip().isdigit() for d in dims) else None
            found.append((shape, m.group(2) if m else "?"))
    return found


def _pnnx_tail(log: str | None) -> str:
    """What pnnx said last, on one line: its own error, not the progress lines before it.
    log is None when its output went to the terminal (--verbose)."""
    if log is None:
        return "its output is above"
    lines = [ln.strip() for ln in _ANSI.sub("", log).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#####") and not set(ln) <= set("-")]
    return " | ".join(lines[-3:]) or "no output"


def _pnnx_failure(log: str | None, returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"pnnx crashed ({name}); its last words: {_pnnx_tail(log)}"
    return f"pnnx failed (exit {returncode}): {_pnnx_tail(log)}"


def convert(source: Path, kind: str, shapes: list[Shape], fp16: bool, out_dir: Path,
            verbose: bool = False) -> Converted:
    exe = find_pnnx()
    if exe is None:
        raise MissingPackageError(f"vkncnn convert needs pnnx, which is not installed: {PNNX_INSTALL}")
    stem = source.stem
    with tempfile.TemporaryDirectory(prefix="vkncnn-convert-") as tmp:
        work = Path(tmp)
        model = work / ("model.onnx" if kind == "onnx" else "model.pt")
        try:
            model.symlink_to(source.resolve())
        except OSError:  # no symlinks (Windows without the privilege): a copy, in the temporary folder still
            shutil.copyfile(source, model)
        # every file pnnx writes is named, so none can land beside the user's model
        outputs = {key: work / name for key, name in (
            ("pnnxparam", "model.pnnx.param"), ("pnnxbin", "model.pnnx.bin"), ("pnnxpy", "model_pnnx.py"),
            ("pnnxonnx", "model.pnnx.onnx"), ("ncnnparam", "model.ncnn.param"), ("ncnnbin", "model.ncnn.bin"),
            ("ncnnpy", "model_ncnn.py"))}
        argv = [str(exe), model.name, *(f"{k}={v.name}" for k, v in outputs.items()), f"fp16={int(fp16)}"]
        if shapes:
            argv.append("inputshape=" + ",".join("[" + ",".join(map(str, s)) + "]" for s in shapes))
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL, text=True, errors="replace",
                              stdout=None if verbose else subprocess.PIPE,
                              stderr=None if verbose else subprocess.STDOUT)
        seconds = time.perf_counter() - start
        produced = outputs["ncnnparam"].is_file() and outputs["ncnnbin"].is_file()
        if done.returncode != 0 or not produced:
            if done.returncode == 0:
                raise CommandError(f"pnnx wrote no ncnn model for {source}; its last words: {_pnnx_tail(done.stdout)}")
            raise CommandError(f"converting {source}: {_pnnx_failure(done.stdout, done.returncode)}")
        pnnx_param = outputs["pnnxparam"].read_text(errors="replace") if outputs["pnnxparam"].is_file() else ""
        inputs = _pnnx_io(pnnx_param, "pnnx.Input")
        if not shapes and any(shape is None for shape, _ in inputs):
            raise CommandError(f"{source} carries no input shape for pnnx (a scripted module, or dims left open): "
                               "give --shape, e.g. --shape 1,3,224,224")
        out_dir.mkdir(parents=True, exist_ok=True)
        param, weights = out_dir / f"{stem}.ncnn.param", out_dir / f"{stem}.ncnn.bin"
        shutil.move(outputs["ncnnparam"], param)
        shutil.move(outputs["ncnnbin"], weights)
    return Converted(param, weights, inputs, seconds)


# -- checking -----------------------------------------------------------------------------------
def ncnn_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The source's shape without its batch axis, as ncnn holds it: (1,3,8,8) -> (3,8,8)."""
    return tuple(shape[1:]) if len(shape) > 1 and shape[0] == 1 else tuple(shape)


def _flatten(value, into: list) -> list:
    """The tensors of a module's result in order (tuples and lists depth first, dict values), as
    pnnx numbers the outputs out0, out1, ..."""
    if isinstance(value, (tuple, list)):
        for v in value:
            _flatten(v, into)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten(v, into)
    elif hasattr(value, "detach"):
        into.append(value.detach().cpu().float().numpy())
    return into


def reference_torchscript(source: Path, inputs: list[np.ndarray]) -> tuple[str, list[np.ndarray]]:
    import torch  # lazy: only the check of a TorchScript model needs it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is deprecated, and what pnnx reads
        module = torch.jit.load(str(source), map_location="cpu")
    module.eval()
    with torch.inference_mode():
        result = module(*(torch.from_numpy(a) for a in inputs))
    return f"torch {torch.__version__}", _flatten(result, [])


ORT_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64}


def reference_onnx(source: Path, inputs: list[np.ndarray]) -> tuple[str, list[np.ndarray]]:
    import onnxruntime as ort  # lazy: only the check of an ONNX model needs it

    session = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"])
    declared = session.get_inputs()
    if len(declared) != len(inputs):
        raise CommandError(f"{source} takes {len(declared)} inputs, the check has {len(inputs)} shapes")
    feed = {}
    for d, a in zip(declared, inputs):
        if d.type not in ORT_TYPES:
            raise CommandError(f"{source}: input {d.name} is {d.type}; the check feeds float inputs only "
                               "(--no-check converts without it)")
        feed[d.name] = a.astype(ORT_TYPES[d.type])
    outputs = session.run(None, feed)
    return f"onnxruntime {ort.__version__}", [np.asarray(o, np.float32) for o in outputs]


def run_vkncnn(conv: Converted, inputs: dict[str, np.ndarray], gpu: bool, fp16: bool) -> dict[str, np.ndarray] | None:
    """The converted model's outputs on one path; None when the GPU path has no device."""
    net = vkncnn.Net()
    o = net.opt
    o.use_vulkan_compute = gpu
    if not fp16:
        o.use_fp16_storage = o.use_fp16_packed = o.use_fp16_arithmetic = False
    try:
        net.load_param(str(conv.param))
        if gpu and net.gpu is None:
            return None
        net.load_model(str(conv.bin))
        return net.run(inputs)
    finally:
        net.clear()


def errors(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    """(max abs error, that error over want's largest magnitude); NaN where only one side has it is inf."""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    both_nan = np.isnan(g) & np.isnan(w)
    diff = np.where(both_nan, 0.0, np.abs(g - w))
    diff = np.where(np.isnan(diff), np.inf, diff)
    err = float(diff.max()) if diff.size else 0.0
    scale = float(np.nanmax(np.abs(w))) if w.size and not np.isnan(w).all() else 0.0
    rel = err / scale if scale > 0 else (0.0 if err == 0 else float("inf"))
    return err, rel


def check(source: Path, kind: str, conv: Converted, shapes: list[Shape], fp16: bool, tol: float,
          seed: int) -> int:
    if not shapes:
        shapes = [s for s, _ in conv.inputs if s is not None]
    if not shapes:
        raise CommandError(f"no input shape is known for the check (pnnx wrote none): give --shape; the model was "
                           f"converted to {conv.param}")
    not_float = [f"in{i} is {t}" for i, (_, t) in enumerate(conv.inputs) if t not in ("f32", "f16", "f64", "?")]
    if not_float:
        raise CommandError(f"the check feeds float inputs only, and {', '.join(not_float)}: the model was "
                           f"converted to {conv.param}; --no-check skips the check")
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.0, 1.0, s).astype(np.float32) for s in shapes]
    try:
        framework, reference = (reference_onnx if kind == "onnx" else reference_torchscript)(source, arrays)
    except CommandError:
        raise
    except Exception as e:  # the framework's own error, whatever its type: said on one line, with whose it is
        raise CommandError(f"running {source} on its own framework failed ({type(e).__name__}: {e}); the model "
                           f"was converted to {conv.param}; --no-check skips the check") from e
    feed_all = {f"in{i}": a.reshape(ncnn_shape(a.shape)) for i, a in enumerate(arrays)}

    net = vkncnn.Net()
    net.load_param(str(conv.param))
    names_in, names_out = net.input_names(), net.output_names()
    unknown = [n for n in names_in if n not in feed_all]
    if unknown:
        raise CommandError(f"{conv.param} has inputs {', '.join(unknown)}, but the check has {len(arrays)} "
                           f"shape(s) (in0..in{len(arrays) - 1}): give one --shape per input of {source.name}")
    feed = {n: feed_all[n] for n in names_in}
    shown = ", ".join(f"{n} {'x'.join(map(str, a.shape))}" for n, a in feed.items())
    print(f"check: seeded random input (seed {seed}) {shown}; reference {framework}")

    results = {}
    for path in ("numpy", "gpu") if vkncnn.get_gpu_count() > 0 else ("numpy",):
        try:
            results[path] = run_vkncnn(conv, feed, gpu=path == "gpu", fp16=fp16)
        except vkncnn.Error as e:
            raise CommandError(f"the converted model {conv.param} does not run on the {path} path: {e}") from e
    if results.get("gpu") is None:
        results.pop("gpu", None)
        print("gpu: no usable Vulkan device (`vkncnn devices` says why); the numpy path only")

    failures = []
    if len(reference) != len(names_out):
        failures.append(f"{framework} gives {len(reference)} outputs, the converted model {len(names_out)}")
    rows = []
    for i, want in enumerate(reference):
        name = f"out{i}"
        if name not in names_out:
            continue
        want_ncnn = want.reshape(ncnn_shape(want.shape))
        for path, outs in results.items():
            got = outs[name]
            shape = "x".join(map(str, got.shape)) or "scalar"
            if got.size != want.size:
                rows.append((name, shape, path, "-", "-", "shape"))
                failures.append(f"{name} on the {path} path has shape {shape}, {framework} gives "
                                f"{'x'.join(map(str, want.shape))}")
                continue
            err, rel = errors(got.reshape(want_ncnn.shape), want_ncnn)
            ok = rel <= tol
            rows.append((name, shape, path, f"{err:.3g}", f"{rel:.3g}", "ok" if ok else "FAIL"))
            if not ok:
                failures.append(f"{name} on the {path} path: relative error {rel:.3g} > --tol {tol:g}")
    head = ("output", "shape", "path", "max abs err", "rel err", "")
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(head)]
    for row in (head, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    paths = " and ".join(results)
    if failures:
        raise CommandError(f"the converted model differs from {framework}: {'; '.join(failures)} "
                           f"(files kept: {conv.param}, {conv.bin})")
    print(f"ok: {len(rows) // len(results)} output(s) within --tol {tol:g} of {framework} on the {paths} "
          f"path{'s' if len(results) > 1 else ''}")
    return 0


def run(args: argparse.Namespace) -> int:
    source = existing_file(args.model, "model")
    kind = source_kind(source)
    shapes = [s for group in args.shape for s in group]
    if args.check:  # before converting: a check that cannot run should not leave files behind first
        if kind == "onnx":
            _require("onnxruntime", "checking an ONNX model", "pip install onnxruntime")
        else:
            _require("torch", "checking a TorchScript model", "pip install torch")
    out_dir = args.output_dir if args.output_dir is not None else source.parent
    conv = convert(source, kind, shapes, args.fp16, out_dir, verbose=args.verbose)
    print(f"wrote {conv.param} and {conv.bin} ({human(conv.bin.stat().st_size)}B, "
          f"{'fp16' if args.fp16 else 'fp32'} weights); pnnx took {conv.seconds:.1f} s")
    sys.stdout.flush()
    if not args.check:
        return 0
    return check(source, kind, conv, shapes, args.fp16, args.tol, args.seed)
