"""Classify handwritten digits with a small CNN: vkncnn's end-to-end example.

    python -m vkncnn.tools.digits [--cpu | --gpu] [--show N] [--threshold 0.9]

The model (tools/data/digits.param + .bin) is a PyTorch net converted by pnnx:
Convolution+ReLU x2, max Pooling, Flatten, InnerProduct+ReLU, InnerProduct. It was
trained on scikit-learn's 8x8 digits by tools/dev/train_digits.py; the 360 held-out test
images ship in tools/data/digits_test.npz. Each image goes through the net one at a
time, as an app would feed it, and the tool prints a few predictions and the accuracy.
It exits 1 when the accuracy falls below --threshold (2 when the model cannot run),
so CI can run it as a smoke test.

Only numpy and vkncnn are needed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import vkncnn

DATA_DIR = Path(__file__).resolve().parent / "data"
INPUT, OUTPUT = "in0", "out0"  # pnnx names the first input and output so


@dataclass
class DigitsResult:
    logits: np.ndarray  # (N, 10) float32, the net's raw outputs
    labels: np.ndarray  # (N,) int64, the true digits
    path: str  # "gpu" or "cpu": where the net actually ran

    @property
    def predictions(self) -> np.ndarray:
        return self.logits.argmax(axis=1)

    @property
    def confidences(self) -> np.ndarray:
        """Softmax probability of the predicted class."""
        z = self.logits - self.logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        return (p / p.sum(axis=1, keepdims=True)).max(axis=1)

    @property
    def accuracy(self) -> float:
        return float(np.mean(self.predictions == self.labels))


def load_test_set(data_dir: Path = DATA_DIR) -> tuple[np.ndarray, np.ndarray]:
    """The held-out images, float32 (N, 8, 8) in [0, 1], and their labels, int64 (N,)."""
    with np.load(data_dir / "digits_test.npz") as z:
        return z["images"].astype(np.float32), z["labels"].astype(np.int64)


def load_net(use_gpu: bool, data_dir: Path = DATA_DIR) -> vkncnn.Net:
    """The digits net; with use_gpu and no usable GPU, vkncnn runs it on the CPU path."""
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = use_gpu
    net.load_param(str(data_dir / "digits.param"))
    net.load_model(str(data_dir / "digits.bin"))
    return net


def classify(net: vkncnn.Net, images: np.ndarray) -> np.ndarray:
    """Run each (8, 8) image through the net as a (1, 8, 8) Mat; return (N, 10) logits."""
    logits = np.empty((len(images), 10), np.float32)
    for i, image in enumerate(images):
        with net.create_extractor() as ex:
            ex.input(INPUT, vkncnn.Mat(image[None]))
            _, out = ex.extract(OUTPUT)
            logits[i] = out.numpy().reshape(-1)
    return logits


def gpu_available() -> bool:
    try:
        return vkncnn.get_gpu_count() > 0
    except (vkncnn.Error, OSError):  # a broken Vulkan install counts as no GPU: the CPU path works
        return False


def run_digits(use_gpu: bool | None = None, data_dir: Path = DATA_DIR) -> DigitsResult:
    """Classify the whole test set. use_gpu=None: the GPU when one exists, else the CPU."""
    if use_gpu is None:
        use_gpu = gpu_available()
    images, labels = load_test_set(data_dir)
    net = load_net(use_gpu, data_dir)
    try:
        path = "gpu" if net.gpu is not None else "cpu"
        return DigitsResult(classify(net, images), labels, path)
    finally:
        net.clear()


def report(result: DigitsResult, show: int, out: Callable[[str], None] = print) -> None:
    out(f"path: {result.path}, {len(result.labels)} test images")
    if show > 0:
        out(f"{'index':>5}  {'label':>5}  {'pred':>4}  {'conf':>6}")
        pred, conf = result.predictions, result.confidences
        for i in range(min(show, len(result.labels))):
            mark = "" if pred[i] == result.labels[i] else "  <- wrong"
            out(f"{i:5d}  {result.labels[i]:5d}  {pred[i]:4d}  {conf[i]:6.3f}{mark}")
    wrong = int(np.sum(result.predictions != result.labels))
    out(f"accuracy: {result.accuracy:.4f} ({wrong} wrong)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn digits",
                                 description="Classify sklearn's 8x8 test digits with vkncnn.")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--cpu", dest="use_gpu", action="store_false", default=None,
                       help="numpy path (use_vulkan_compute = False)")
    where.add_argument("--gpu", dest="use_gpu", action="store_true",
                       help="Vulkan path (falls back to the CPU with a warning when there is no GPU)")
    ap.add_argument("--show", type=int, default=10, metavar="N", help="print the first N predictions")
    ap.add_argument("--threshold", type=float, default=0.9,
                    help="exit 1 when accuracy is below this (default 0.9)")
    args = ap.parse_args(argv)

    try:
        result = run_digits(args.use_gpu)
    except vkncnn.Error as e:  # a model the runtime cannot run: one clear line, not a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    report(result, args.show)
    if result.accuracy < args.threshold:
        print(f"FAIL: accuracy {result.accuracy:.4f} < {args.threshold}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
