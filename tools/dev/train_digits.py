"""Train the small digits CNN that `python -m vkncnn.tools.digits` runs, and convert it with pnnx.

Needs torch, scikit-learn and pnnx (`pip install torch scikit-learn pnnx`); vkncnn itself
needs none of them, and CI never runs this script. It rewrites tools/data/:

    digits.param, digits.bin   the ncnn model (pnnx output, fp32 weights)
    digits_test.npz            the held-out test set: images float32 (N, 8, 8) in [0, 1],
                               labels int64 (N,)

Everything is seeded and runs single-threaded with deterministic kernels, so a rerun on
the same torch version writes the same weights.

    python tools/dev/train_digits.py [--epochs 60] [--out tools/data]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

SEED = 20240611
N_TEST = 360  # the last 360 of sklearn's 1797 digits are the test set


class DigitsNet(nn.Module):
    """Two 3x3 convolutions, one 2x2 max-pool, two fully connected layers: ~38k weights."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """sklearn's digits, pixels scaled from 0..16 to [0, 1]; a fixed train/test split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    return images[:-N_TEST], labels[:-N_TEST], images[-N_TEST:], labels[-N_TEST:]


def random_shift(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Move each image by up to one pixel in y and x (zero fill).

    The last 360 digits come from other writers than the first ones; without this
    augmentation the net memorises stroke positions and stops near 94% on them.
    """
    padded = nn.functional.pad(x, (1, 1, 1, 1))
    dy = torch.randint(0, 3, (len(x),), generator=gen)
    dx = torch.randint(0, 3, (len(x),), generator=gen)
    out = torch.empty_like(x)
    for a in range(3):  # nine offsets, each applied to its images at once
        for b in range(3):
            pick = (dy == a) & (dx == b)
            out[pick] = padded[pick][..., a:a + 8, b:b + 8]
    return out


def train(x_train: np.ndarray, y_train: np.ndarray, epochs: int) -> DigitsNet:
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    model = DigitsNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    x = torch.from_numpy(x_train)[:, None]  # (N, 1, 8, 8)
    y = torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(epochs):
        model.train()
        for idx in torch.randperm(len(x), generator=gen).split(64):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(random_shift(x[idx], gen)), y[idx])
            loss.backward()
            opt.step()
        sched.step()
    return model.eval()


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    with torch.no_grad():
        pred = model(torch.from_numpy(images)[:, None]).argmax(1).numpy()
    return float(np.mean(pred == labels))


def pnnx_executable() -> str:
    """The pnnx binary: the one inside the pip package, else whatever is on PATH."""
    try:
        import pnnx
        return pnnx.EXEC_PATH
    except ImportError:
        found = shutil.which("pnnx")
        if found is None:
            sys.exit("pnnx not found: pip install pnnx")
        return found


def convert_with_pnnx(model: nn.Module, inputs: list[torch.Tensor], param_out: Path, bin_out: Path,
                      fp16: bool = False, dynamic_batch: bool = False) -> str:
    """Trace `model`, run pnnx in a scratch directory, copy only the ncnn .param/.bin out.

    pnnx writes half a dozen side files (.pnnx.param, _pnnx.py, .pnnx.onnx, ...); they stay
    in the temporary directory. fp16=False keeps the weights fp32 so outputs can be
    compared with torch at 1e-4. dynamic_batch: also give pnnx the shapes with a batch of 2
    (inputshape2), so it treats the batch as variable and writes batch-aware layers (the
    `0n` token, Reshape's input/output batch axes). Returns the .param text.
    """
    model.eval()
    with tempfile.TemporaryDirectory(prefix="pnnx_") as tmp:
        pt = os.path.join(tmp, "model.pt")
        with torch.no_grad():
            torch.jit.trace(model, tuple(inputs)).save(pt)
        shapes = ",".join("[" + ",".join(str(d) for d in t.shape) + "]" for t in inputs)
        cmd = [pnnx_executable(), pt, f"inputshape={shapes}", "device=cpu", f"fp16={int(fp16)}"]
        if dynamic_batch:
            cmd.append("inputshape2=" + ",".join("[" + ",".join(str(d) for d in (2, *t.shape[1:])) + "]"
                                                 for t in inputs))
        run = subprocess.run(cmd, check=False, cwd=tmp, capture_output=True, text=True)
        param, weights = os.path.join(tmp, "model.ncnn.param"), os.path.join(tmp, "model.ncnn.bin")
        if run.returncode != 0 or not os.path.exists(param):
            sys.exit(f"pnnx failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
        param_out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(param, param_out)
        shutil.copyfile(weights, bin_out)
        return Path(param).read_text()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    args = ap.parse_args(argv)

    x_train, y_train, x_test, y_test = load_split()
    model = train(x_train, y_train, args.epochs)
    print(f"train accuracy {accuracy(model, x_train, y_train):.4f}, "
          f"test accuracy {accuracy(model, x_test, y_test):.4f}")

    param = convert_with_pnnx(model, [torch.from_numpy(x_test[:1])[:, None]],
                              args.out / "digits.param", args.out / "digits.bin")
    np.savez_compressed(args.out / "digits_test.npz", images=x_test, labels=y_test)
    print(param)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
