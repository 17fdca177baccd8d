"""Classify an image with a trained model that ships in the repository.

    python3 examples/classify_image.py                      # a generated test image
    python3 examples/classify_image.py --save digit.pgm     # ... and write it to a file
    python3 examples/classify_image.py digit.pgm [--gpu]    # any image file

The model (tools/data/digits.param + digits.bin) is a small CNN trained on scikit-learn's
8x8 handwritten digits and converted with pnnx; it takes one gray 8x8 plane in [0, 1]
(blob in0) and gives ten logits (out0). The preprocessing is ncnn's: from_pixels_resize
scales any gray or RGB image to 8x8, substract_mean_normalize maps 0..255 to 0..1.
It expects a light digit on a dark background, as the training images were.

Without an image file, the script renders one of the held-out test digits
(tools/data/digits_test.npz) at 64x64 pixels and classifies that. Binary .pgm/.ppm files
are read directly; other formats need Pillow (pip install pillow).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import vkncnn as ncnn
from vkncnn.tools.cmd_run import read_image

DATA = Path(__file__).resolve().parent.parent / "tools" / "data"


def load_net(gpu: bool) -> ncnn.Net:
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu  # without a Vulkan device vkncnn warns once and uses numpy
    net.load_param(str(DATA / "digits.param"))
    net.load_model(str(DATA / "digits.bin"))
    return net


def test_image(index: int, size: int = 64) -> tuple[np.ndarray, int]:
    """A held-out digit as (size, size) uint8 pixels, and its label."""
    with np.load(DATA / "digits_test.npz") as z:
        image, label = z["images"][index], int(z["labels"][index])
    block = size // image.shape[0]
    pixels = np.kron(image, np.ones((block, block)))  # nearest-neighbour upscale
    return np.round(pixels * 255).astype(np.uint8), label


def write_pgm(path: Path, pixels: np.ndarray) -> None:
    h, w = pixels.shape
    path.write_bytes(f"P5\n{w} {h}\n255\n".encode() + pixels.tobytes())


def classify(net: ncnn.Net, pixels: np.ndarray) -> np.ndarray:
    """Softmax probabilities of the ten digits for (h, w) gray or (h, w, 3) RGB uint8 pixels."""
    h, w = pixels.shape[:2]
    kind = ncnn.Mat.PixelType.PIXEL_GRAY if pixels.ndim == 2 else ncnn.Mat.PixelType.PIXEL_RGB2GRAY
    mat = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(pixels), kind, w, h, 8, 8)
    mat.substract_mean_normalize([], [1 / 255.0])
    with net.create_extractor() as ex:
        ex.input("in0", mat)
        _, out = ex.extract("out0")
    logits = out.numpy().reshape(-1).astype(np.float64)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image", nargs="?", type=Path, help="an image file (default: a generated test digit)")
    ap.add_argument("--index", type=int, default=0, help="which test digit to render without an image (0-359)")
    ap.add_argument("--save", type=Path, help="write the generated test digit to this .pgm file")
    ap.add_argument("--gpu", action="store_true", help="the Vulkan path (default: numpy)")
    args = ap.parse_args(argv)

    if args.image is not None:
        pixels, label = read_image(args.image), None
    else:
        pixels, label = test_image(args.index)
        if args.save:
            write_pgm(args.save, pixels)
            print(f"wrote {args.save}")
    probs = classify(load_net(args.gpu), pixels)
    top = np.argsort(probs)[::-1][:3]
    print("top 3:", ", ".join(f"{d} ({probs[d]:.3f})" for d in top))
    print(f"predicted digit: {top[0]}" + ("" if label is None else f" (label {label})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
