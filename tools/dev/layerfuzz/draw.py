"""Random draws shared by the layer fuzzer's case generators: sizes, shapes, tensors.

Sizes favour what breaks packed kernels: channel counts that are not multiples of 4,
odd spatial extents, 1s. Tensor values are rounded to fp16 so the fp16-storage path
is judged on its arithmetic, not on the rounding of its inputs.
"""

from __future__ import annotations

import numpy as np

CHANNELS = (1, 3, 4, 5, 8, 12, 16, 24)


def pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def chance(rng: np.random.Generator, p: float) -> bool:
    return bool(rng.random() < p)


def extent(rng: np.random.Generator, lo: int = 1, hi: int = 13) -> int:
    return int(rng.integers(lo, hi + 1))


def channels(rng: np.random.Generator) -> int:
    return pick(rng, CHANNELS)


def shape(rng: np.random.Generator, dims: int, lo: int = 1, hi: int = 9) -> tuple:
    """A numpy shape of ncnn rank `dims`: (w,), (h, w), (c, h, w), (c, d, h, w)."""
    if dims == 1:
        return (pick(rng, (extent(rng, lo, 3 * hi), channels(rng))),)
    if dims == 2:
        return (pick(rng, (extent(rng, lo, hi), channels(rng))), extent(rng, lo, 2 * hi))
    rest = tuple(extent(rng, lo, hi) for _ in range(dims - 1))
    return (channels(rng),) + rest


def dims(rng: np.random.Generator, lo: int = 1, hi: int = 4) -> int:
    """An ncnn rank, 1..4 unless bounded."""
    return int(rng.integers(lo, hi + 1))


def tensor(rng: np.random.Generator, shp, lo: float = -1.5, hi: float = 1.5) -> np.ndarray:
    return rng.uniform(lo, hi, size=shp).astype(np.float16).astype(np.float32)


def floats(rng: np.random.Generator, n: int, lo: float, hi: float) -> list[float]:
    return [float(np.float16(v)) for v in rng.uniform(lo, hi, n)]


def activation(rng: np.random.Generator) -> dict:
    """ncnn's fused activation params 9/10: 0 none, 1 relu, 2 leaky, 3 clip, 4 sigmoid, 5 mish, 6 hardswish."""
    t = int(rng.integers(0, 7))
    if t == 2:
        return {9: 2, 10: floats(rng, 1, 0.0, 0.5)}
    if t == 3:
        lo = floats(rng, 1, -1.0, 0.0)[0]
        return {9: 3, 10: [lo, lo + floats(rng, 1, 0.1, 1.5)[0]]}
    if t == 6:
        return {9: 6, 10: [floats(rng, 1, 0.1, 0.3)[0], floats(rng, 1, 0.3, 0.6)[0]]}
    return {9: t} if t else {}


def deconv1d_cut(rng, full: int) -> dict:
    """How a 1-D transposed convolution's full output of `full` pixels is cut, as params:
    none, explicit pads (4) with an output pad (18), or SAME (-233/-234) to an output
    width (20) of full-2..full."""
    kind = int(rng.integers(0, 3))
    if kind == 1 and full > 2:
        return {4: 1, 18: int(rng.integers(0, 2))}
    if kind == 2:
        return {4: pick(rng, (-233, -234)), 20: int(rng.integers(max(1, full - 2), full + 1))}
    return {}
