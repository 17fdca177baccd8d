"""Regenerate tests/fixtures/: small PyTorch models converted by pnnx, with torch's answers.

Needs torch and pnnx (`pip install torch pnnx`); CI never runs this, it only reads what
it wrote. Each fixture is one directory, tests/fixtures/<name>/:

    model.param, model.bin   pnnx's ncnn output (fp32 weights, so torch agrees to 1e-4)
    io.npz                   in0.. the inputs, out0.. torch's outputs, in ncnn's shapes
                             (the batch dimension of 1 dropped, as pnnx does)
    io_batch3.npz            (batch fixtures only) in0.. a batch of 3 inputs, out0.. torch's
                             3 outputs, each with the batch as its leading axis: what
                             `ncnn.Mat(x, batch_index=0)` takes and `out.numpy(batch_index=0)`
                             gives; out0_n.. the batch size real ncnn's output has (3)

The batch fixtures (se_block, cbam_block, flatten_linear, batch_reshape) are converted with
a variable batch, so pnnx writes what it writes for batched inference: in batch_reshape,
Reshape layers with input/output batch axes (pd 12/13) and the `0n` token.

The models are chosen to make pnnx write the layers it writes most often: fused
Convolution/InnerProduct activations, BatchNorm folding, depthwise convolution, the
common activations, LayerNorm, Softmax, MultiHeadAttention, Interp, Concat, PixelShuffle,
PReLU, 1-D convolution and pooling, Deconvolution, Padding, ShuffleChannel,
Slice, Reshape/Permute, Clip, UnaryOp; one fixture has two outputs. Weights are seeded; BatchNorm statistics and PReLU
slopes are randomised so folding them is actually exercised.

    python tools/dev/make_fixtures.py [--out tests/fixtures] [name ...]
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

try:  # run as `python tools/dev/make_fixtures.py` or as a module
    from .train_digits import convert_with_pnnx
except ImportError:
    from train_digits import convert_with_pnnx

SEED = 1234
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def randomise_stats(model: nn.Module, gen: torch.Generator) -> nn.Module:
    """Give BatchNorm running stats and PReLU slopes values that are not the identity."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.3)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.2)
            elif isinstance(m, nn.PReLU):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5)
    return model


class ConvBN(nn.Module):
    """Classic CNN stem: Conv+BN+ReLU6, strided Conv+BN+ReLU, average pooling, a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU6())
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
                                nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.AvgPool2d(2)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.pool(self.c2(self.c1(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


class DepthwiseSeparable(nn.Module):
    """MobileNetV3-like block: 1x1 expand + Hardswish, 3x3 depthwise + SiLU,
    squeeze-excite (global pool, 1x1 convs, Hardsigmoid, multiply), 1x1 project, residual."""

    def __init__(self) -> None:
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(8, 24, 1, bias=False), nn.BatchNorm2d(24), nn.Hardswish())
        self.dw = nn.Sequential(nn.Conv2d(24, 24, 3, padding=1, groups=24, bias=False),
                                nn.BatchNorm2d(24), nn.SiLU())
        self.se_reduce = nn.Conv2d(24, 6, 1)
        self.se_expand = nn.Conv2d(6, 24, 1)
        self.project = nn.Sequential(nn.Conv2d(24, 8, 1, bias=False), nn.BatchNorm2d(8))

    def forward(self, x):
        y = self.dw(self.expand(x))
        s = F.adaptive_avg_pool2d(y, 1)
        s = F.hardsigmoid(self.se_expand(F.relu(self.se_reduce(s))))
        return x + self.project(y * s)


class MLP(nn.Module):
    """Token MLP on a (seq, features) input: Linear, GELU, LayerNorm, Linear, Softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(self.norm(F.gelu(self.fc1(x)))), dim=-1)


class EncoderLayer(nn.Module):
    """A pre-norm transformer encoder layer built from nn.MultiheadAttention."""

    def __init__(self, d: int = 16, heads: int = 2, ff: int = 32) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


class UpsampleConcat(nn.Module):
    """Decoder-style: bilinear and nearest upsampling, Concat, PixelShuffle, PReLU, Sigmoid."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(4, 4, 3, padding=1)
        self.b = nn.Conv2d(4, 4, 1)
        self.act = nn.PReLU(8)
        self.out = nn.Conv2d(8, 12, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        a = F.interpolate(self.a(x), scale_factor=2, mode="bilinear", align_corners=False)
        b = F.interpolate(self.b(x), scale_factor=2, mode="nearest")
        y = self.act(torch.cat([a, b], dim=1))
        return torch.sigmoid(self.shuffle(self.out(y)))


class Conv1dNet(nn.Module):
    """1-D signal net: Conv1d+BN+LeakyReLU, MaxPool1d, dilated Conv1d+Tanh, mean over time."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.BatchNorm1d(8), nn.LeakyReLU(0.1))
        self.pool = nn.MaxPool1d(2)
        self.c2 = nn.Sequential(nn.Conv1d(8, 12, 3, dilation=2), nn.Tanh())

    def forward(self, x):
        return self.c2(self.pool(self.c1(x))).mean(dim=2)


class ShuffleDeconv(nn.Module):
    """Tensor plumbing pnnx also writes: reflect padding, channel shuffle, chunk, a transposed
    convolution, reshape/permute, clamp and element-wise unary ops."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, groups=2)
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.mish = nn.Mish()

    def forward(self, x):
        y = self.conv(F.pad(x, (1, 1, 1, 1), mode="reflect"))
        c, h, w = y.shape[1:]
        y = y.view(1, 2, c // 2, h, w).transpose(1, 2).reshape(1, c, h, w)  # channel shuffle
        a, b = y.chunk(2, dim=1)
        u = self.mish(self.up(a))  # (1, 6, 2h, 2w)
        v = torch.clamp(b, -0.5, 0.5).abs().exp()
        t = u.flatten(2).permute(0, 2, 1)  # (1, 4hw, 6): token layout
        return t, v


class SqueezeExcite(nn.Module):
    """Squeeze-excite with Linear layers: pool, view(b, c), Linear, ReLU, Linear, sigmoid,
    view(b, c, 1, 1), multiply."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = nn.Linear(8, 4)
        self.fc2 = nn.Linear(4, 8)

    def forward(self, x):
        x = self.conv(x)
        b, c = x.shape[:2]
        s = F.adaptive_avg_pool2d(x, 1).view(b, c)
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s)))).view(b, c, 1, 1)
        return x * s


class CBAM(nn.Module):
    """CBAM: channel attention (avg and max pool through one MLP, view(b, c, 1, 1)), then
    spatial attention (mean and max over channels, cat, conv, sigmoid)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.mlp = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 8))
        self.spatial = nn.Conv2d(2, 1, 3, padding=1)

    def forward(self, x):
        x = self.conv(x)
        b, c = x.shape[:2]
        a = self.mlp(F.adaptive_avg_pool2d(x, 1).view(b, c)) + self.mlp(F.adaptive_max_pool2d(x, 1).view(b, c))
        x = x * torch.sigmoid(a).view(b, c, 1, 1)
        m = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        return x * torch.sigmoid(self.spatial(m))


class FlattenLinear(nn.Module):
    """A classifier head two ways: x.view(b, -1) and x.flatten(1), each into a Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.fc1 = nn.Linear(4 * 3 * 3, 5)
        self.fc2 = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = self.conv(x)
        return self.fc1(x.view(x.size(0), -1)), self.fc2(x.flatten(1))


class BatchIntoRows(nn.Module):
    """A per-pixel MLP that folds the batch into the rows: permute, reshape(b*h*w, c), Linear,
    reshape(b, h, w, -1), permute back, a 1x1 conv."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 6)
        self.out = nn.Conv2d(6, 2, 1)

    def forward(self, x):
        x = self.conv(x)
        b, c, h, w = x.shape
        y = self.fc(x.permute(0, 2, 3, 1).reshape(b * h * w, c))
        return self.out(y.reshape(b, h, w, -1).permute(0, 3, 1, 2))


# name -> (model factory, input shapes with batch 1)
FIXTURES: dict[str, tuple[Callable[[], nn.Module], list[tuple[int, ...]]]] = {
    "conv_bn": (ConvBN, [(1, 3, 16, 16)]),
    "dw_separable": (DepthwiseSeparable, [(1, 8, 9, 11)]),
    "mlp": (MLP, [(1, 6, 16)]),
    "transformer": (EncoderLayer, [(1, 7, 16)]),
    "upsample": (UpsampleConcat, [(1, 4, 5, 6)]),
    "conv1d": (Conv1dNet, [(1, 4, 23)]),
    "shuffle_deconv": (ShuffleDeconv, [(1, 4, 5, 7)]),
    "se_block": (SqueezeExcite, [(1, 3, 6, 6)]),
    "cbam_block": (CBAM, [(1, 3, 6, 6)]),
    "flatten_linear": (FlattenLinear, [(1, 3, 7, 7)]),
    "batch_reshape": (BatchIntoRows, [(1, 3, 4, 5)]),
}
# converted with a variable batch; io_batch3.npz holds a batch of this many
BATCH_FIXTURES = {"se_block", "cbam_block", "flatten_linear", "batch_reshape"}
BATCH = 3


def layer_types(param_text: str) -> list[str]:
    """The layer types a .param uses (first column of each layer line), in order of appearance."""
    types: list[str] = []
    for line in param_text.splitlines()[2:]:
        t = line.split()[0] if line.strip() else None
        if t and t not in types:
            types.append(t)
    return types


def batch_io(model: nn.Module, shapes: list[tuple[int, ...]], gen: torch.Generator) -> dict[str, np.ndarray]:
    """A batch of BATCH inputs and torch's outputs, the batch as the leading axis of each."""
    inputs = [torch.randn((BATCH, *s[1:]), generator=gen) for s in shapes]
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    arrays = {f"in{i}": t.numpy().astype(np.float32) for i, t in enumerate(inputs)}
    arrays.update({f"out{i}": t.numpy().astype(np.float32) for i, t in enumerate(outputs)})
    arrays.update({f"out{i}_n": np.array(BATCH, np.int32) for i in range(len(outputs))})
    return arrays


def make_fixture(name: str, out_root: Path) -> list[str]:
    factory, shapes = FIXTURES[name]
    gen = torch.Generator().manual_seed(SEED)
    torch.manual_seed(SEED)
    model = randomise_stats(factory(), gen).eval()
    inputs = [torch.randn(s, generator=gen) for s in shapes]
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]

    out_dir = out_root / name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    batched = name in BATCH_FIXTURES
    param = convert_with_pnnx(model, inputs, out_dir / "model.param", out_dir / "model.bin", dynamic_batch=batched)
    arrays = {f"in{i}": t[0].numpy().astype(np.float32) for i, t in enumerate(inputs)}
    arrays.update({f"out{i}": t[0].numpy().astype(np.float32) for i, t in enumerate(outputs)})
    np.savez_compressed(out_dir / "io.npz", **arrays)
    if batched:
        np.savez_compressed(out_dir / "io_batch3.npz", **batch_io(model, shapes, gen))
    size = sum(f.stat().st_size for f in out_dir.iterdir())
    print(f"{name}: {size} bytes, layers: {' '.join(layer_types(param))}")
    return layer_types(param)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("names", nargs="*", help=f"fixtures to rebuild (default all: {', '.join(FIXTURES)})")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    every: list[str] = []
    for name in args.names or FIXTURES:
        every += [t for t in make_fixture(name, args.out) if t not in every]
    print("all layer types:", " ".join(sorted(every)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
