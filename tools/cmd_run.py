"""vkncnn run: feed arrays or images to a model and print or save its outputs.

    vkncnn run model.param model.bin --input data=x.npy
    vkncnn run model.param model.bin --input cat.jpg --size 224,224 --mean 104,117,123 --bgr
    vkncnn run model.param model.bin --input data=photos/ --output prob=probs/

An input is a .npy array in ncnn's layout (numpy order, as np.array(mat): (c, h, w)) or an
image, which goes through ncnn's own preprocessing: Mat.from_pixels_resize to --size,
then substract_mean_normalize with --mean / --norm, so the net sees what the same ncnn
code would feed it. Binary .ppm / .pgm images are read directly, other formats through
Pillow. A folder as input runs every .npy and image in it, in name order.

Without --output each output prints its shape, min / max / mean and its top-k values
(indices into the flattened output). `--output NAME=OUT.npy` saves np.array(mat) of a
blob instead (any blob, not only outputs); with a folder of inputs, `--output NAME=DIR/`
writes DIR/<input name>.npy per input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import vkncnn

from .bench import add_runner_arguments
from .cmd_common import CommandError, existing_file, parse_floats, parse_size
from .progress import Progress

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm", ".pnm"}
PT = vkncnn.Mat.PixelType
# (image channels, order the net wants) -> ncnn pixel type
PIXEL_TYPES = {(3, "rgb"): PT.PIXEL_RGB, (3, "bgr"): PT.PIXEL_RGB2BGR, (3, "gray"): PT.PIXEL_RGB2GRAY,
               (1, "rgb"): PT.PIXEL_GRAY2RGB, (1, "bgr"): PT.PIXEL_GRAY2BGR, (1, "gray"): PT.PIXEL_GRAY}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("param", metavar="MODEL.param", help="the model's .param (text, or binary .param.bin)")
    ap.add_argument("bin", metavar="MODEL.bin", help="the model's weights")
    ap.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE", required=True,
                    help="an input: a .npy array (numpy order), an image, or a folder of them; NAME= may be "
                         "left out for a model with one input (repeat per input)")
    ap.add_argument("--output", "-o", action="append", default=[], metavar="NAME=OUT.npy",
                    help="save blob NAME as .npy (a folder, DIR/, with a folder of inputs); NAME= may be left "
                         "out for a model with one output. Default: print every output's summary")
    ap.add_argument("--topk", type=int, default=5, metavar="K", help="top values printed per output (default 5)")
    ap.add_argument("--quiet", "-q", action="store_true",
                    help="no progress line on stderr over a folder of inputs (it shows only on a terminal)")
    add_runner_arguments(ap)
    img = ap.add_argument_group("image inputs (as ncnn's Mat.from_pixels_resize + substract_mean_normalize)")
    img.add_argument("--size", type=parse_size, metavar="W,H", help="resize images to W,H (default: their own size)")
    img.add_argument("--mean", type=parse_floats, metavar="A,B,C", help="subtract per channel, after resizing")
    img.add_argument("--norm", type=parse_floats, metavar="A,B,C", help="then multiply per channel")
    order = img.add_mutually_exclusive_group()
    order.add_argument("--rgb", dest="pixels", action="store_const", const="rgb", default="rgb",
                       help="feed channels in R,G,B order (default)")
    order.add_argument("--bgr", dest="pixels", action="store_const", const="bgr",
                       help="feed channels in B,G,R order (Caffe and OpenCV-trained models)")
    order.add_argument("--gray", dest="pixels", action="store_const", const="gray", help="feed one gray channel")


# -- reading inputs -----------------------------------------------------------------------------
def _read_netpbm(path: Path) -> np.ndarray | None:
    """A binary PGM (P5) or PPM (P6) of 8-bit samples as (h, w[, 3]) uint8; None for others."""
    data = path.read_bytes()
    if data[:2] not in (b"P5", b"P6"):
        return None
    fields, pos = [], 2
    while len(fields) < 3:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.find(b"\n", pos) + 1 or len(data)
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        if start == pos or not data[start:pos].isdigit():
            raise CommandError(f"{path}: not a valid PPM/PGM header")
        fields.append(int(data[start:pos]))
    w, h, maxval = fields
    if maxval > 255:
        raise CommandError(f"{path}: 16-bit PPM/PGM is not supported (maxval {maxval})")
    channels = 3 if data[:2] == b"P6" else 1
    if w * h == 0 or len(data) < pos + 1 + w * h * channels:
        raise CommandError(f"{path}: {w}x{h} image, but the file holds fewer pixels (truncated?)")
    pixels = np.frombuffer(data, np.uint8, count=w * h * channels, offset=pos + 1)
    return pixels.reshape((h, w, channels) if channels == 3 else (h, w))


def read_image(path: Path) -> np.ndarray:
    """(h, w, 3) RGB or (h, w) gray uint8 pixels."""
    if path.suffix.lower() in (".ppm", ".pgm", ".pnm"):
        pixels = _read_netpbm(path)
        if pixels is not None:
            return pixels
    try:
        from PIL import Image  # lazy: Pillow is optional, needed only for compressed images
    except ImportError:
        raise CommandError(f"reading {path.name} needs Pillow (pip install pillow); without it give the "
                           "input as a .npy array or a binary .ppm/.pgm") from None
    with Image.open(path) as img:
        gray = img.mode in ("1", "L", "I", "I;16", "F")
        return np.asarray(img.convert("L" if gray else "RGB"), np.uint8)


def load_input(path: Path, args: argparse.Namespace) -> vkncnn.Mat:
    """A .npy as it is, or an image through ncnn's preprocessing."""
    if path.suffix.lower() == ".npy":
        return vkncnn.Mat(np.load(path, allow_pickle=False))
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise CommandError(f"{path}: not a .npy array or an image ({', '.join(sorted(IMAGE_SUFFIXES))})")
    pixels = read_image(path)
    h, w = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else 3
    tw, th = args.size or (w, h)
    try:
        mat = vkncnn.Mat.from_pixels_resize(np.ascontiguousarray(pixels), PIXEL_TYPES[channels, args.pixels],
                                            w, h, tw, th)
        if args.mean or args.norm:
            mat.substract_mean_normalize(args.mean or [], args.norm or [])
    except vkncnn.Error as e:
        raise CommandError(f"{path}: {e}") from e
    return mat


def _runnable(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.iterdir()
                   if p.is_file() and (p.suffix.lower() == ".npy" or p.suffix.lower() in IMAGE_SUFFIXES))
    if not files:
        raise CommandError(f"{folder}: no .npy arrays or images in this folder")
    return files


# -- naming inputs and outputs ------------------------------------------------------------------
def _name_and_path(spec: str, names: list[str], known, flag: str, what: str) -> tuple[str, str]:
    """`NAME=PATH`, or `PATH` alone for the model's only `what`."""
    name, sep, rest = spec.partition("=")
    if sep and known(name):
        return name, rest
    if sep and not Path(spec).exists():
        raise CommandError(f"{flag} {spec}: the model has no blob {name!r} ({what}s: {', '.join(names)})")
    if len(names) != 1:
        raise CommandError(f"{flag} {spec} has no NAME=, but the model has {len(names)} {what}s "
                           f"({', '.join(names)}): give NAME=PATH")
    return names[0], spec


def resolve_inputs(net: vkncnn.Net, specs: list[str]) -> dict[str, Path]:
    names = net.input_names()
    paths: dict[str, Path] = {}
    for spec in specs:
        name, path = _name_and_path(spec, names, lambda n: n in names, "--input", "input")
        p = Path(path)
        if not p.exists():
            raise CommandError(f"--input {spec}: {path}: no such file or folder")
        paths[name] = p
    missing = [n for n in names if n not in paths]
    if missing:
        raise CommandError(f"no --input for {', '.join(missing)} (give --input NAME=FILE for each)")
    return paths


def resolve_outputs(net: vkncnn.Net, specs: list[str]) -> dict[str, str]:
    """Blob name -> the path as given (a trailing / says it is a folder)."""
    names = net.output_names()
    outputs: dict[str, str] = {}
    for spec in specs:
        name, path = _name_and_path(spec, names, lambda n: net.find_blob_index_by_name(n) >= 0, "--output", "output")
        outputs[name] = path
    return outputs


# -- running ------------------------------------------------------------------------------------
def load_net(args: argparse.Namespace) -> vkncnn.Net:
    param = existing_file(args.param, "model")
    weights = existing_file(args.bin, "weights")
    net = vkncnn.Net()
    o = net.opt
    o.use_vulkan_compute = args.gpu
    o.num_threads = args.threads
    o.use_fp16_storage = o.use_fp16_packed = args.fp16
    o.use_fp16_arithmetic = args.fp16 and args.fp16_arithmetic
    if args.gpu:
        net.set_vulkan_device(args.device)
    if str(param).endswith(".bin"):
        net.load_param_bin(str(param))
    else:
        net.load_param(str(param))
    if args.gpu and net.gpu is None:
        raise CommandError("--gpu: no usable Vulkan device (`vkncnn devices` says why); run without --gpu "
                           "for the numpy path")
    net.load_model(str(weights))
    return net


def infer(net: vkncnn.Net, inputs: dict[str, vkncnn.Mat], wanted: list[str]) -> dict[str, np.ndarray]:
    with net.create_extractor() as ex:
        for name, mat in inputs.items():
            ex.input(name, mat)
        return {name: np.array(ex.extract(name)[1]) for name in wanted}


def summary_lines(name: str, a: np.ndarray, topk: int) -> list[str]:
    """Shape, min / max / mean and the top-k (flattened index, value) of one output."""
    shape = "x".join(map(str, a.shape)) or "scalar"
    if a.size == 0:
        return [f"{name}: shape {shape} (empty)"]
    flat = a.reshape(-1).astype(np.float64)
    lines = [f"{name}: shape {shape}  min {flat.min():.6g}  max {flat.max():.6g}  mean {flat.mean():.6g}"]
    if topk > 0:
        order = np.argsort(-np.nan_to_num(flat, nan=-np.inf), kind="stable")[:topk]
        lines.append(f"  top-{len(order)}: " + "  ".join(f"{int(i)}: {flat[i]:.6g}" for i in order))
    return lines


def run(args: argparse.Namespace) -> int:
    net = load_net(args)
    input_paths = resolve_inputs(net, args.input)
    outputs = resolve_outputs(net, args.output)
    folders = [n for n, p in input_paths.items() if p.is_dir()]
    if len(folders) > 1:
        raise CommandError(f"only one input may be a folder, got folders for {', '.join(folders)}")
    fixed = {n: load_input(p, args) for n, p in input_paths.items() if not p.is_dir()}
    wanted = list(outputs) or net.output_names()
    if not folders:
        results = infer(net, fixed, wanted)
        for name, a in results.items():
            if name in outputs:
                _save(outputs[name], a, name)
            else:
                print("\n".join(summary_lines(name, a, args.topk)))
        return 0

    items = _runnable(input_paths[folders[0]])
    out_dirs: dict[str, Path] = {}
    for name, path in outputs.items():
        if path.lower().endswith(".npy"):
            raise CommandError(f"--output {name}={path}: with a folder of inputs, give a folder (DIR/): "
                               "each input writes DIR/<input name>.npy")
        out_dirs[name] = Path(path)
        out_dirs[name].mkdir(parents=True, exist_ok=True)
    if len({p.resolve() for p in out_dirs.values()}) < len(out_dirs):
        raise CommandError("two --output blobs name the same folder; give each its own")
    with Progress(len(items), "run", quiet=args.quiet) as progress:
        for item in items:
            results = infer(net, {**fixed, folders[0]: load_input(item, args)}, wanted)
            for name, a in results.items():
                if name in out_dirs:
                    np.save(out_dirs[name] / f"{item.stem}.npy", a)
                else:
                    progress.print("\n".join(summary_lines(f"{item.name} {name}", a, args.topk)))
            progress.advance(item.name)
    return 0


def _save(given: str, a: np.ndarray, name: str) -> None:
    """Write one output to `given`: a .npy file, or NAME.npy inside a folder (DIR/ or an existing one)."""
    path = Path(given)
    if path.is_dir() or given.endswith(("/", "\\")):
        path.mkdir(parents=True, exist_ok=True)
        path = path / (name.replace("/", "_").replace(":", "_") + ".npy")
    elif not path.parent.exists():
        raise CommandError(f"--output {name}={path}: folder {path.parent} does not exist")
    np.save(path, a)
    print(f"{name}: shape {'x'.join(map(str, a.shape))} written to {path}")
