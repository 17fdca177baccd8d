"""Per-channel statistics kernels: MVN (mean-variance normalisation) and StatisticsPooling."""

from __future__ import annotations

import numpy as np

F32 = np.float32


def mvn(x: np.ndarray, normalize_variance: bool, across_channels: bool, eps: float) -> np.ndarray:
    """x (c, n): subtract the mean (per channel, or over everything), then optionally divide
    by sqrt(mean of squares) + eps. ncnn adds eps after the square root, not inside it."""
    x64 = x.astype(np.float64)
    axis = None if across_channels else 1
    mean = F32(x64.mean()) if across_channels else x64.mean(axis=1).astype(F32)[:, None]
    out = x - mean
    if normalize_variance:
        sq = out.astype(np.float64) ** 2
        sqmean = sq.mean(axis=axis)
        norm = (np.sqrt(sqmean) + eps).astype(F32)
        out = out * (F32(1) / norm if across_channels else (F32(1) / norm)[:, None])
    return out.astype(F32, copy=False)


def statistics_pool(x: np.ndarray, include_stddev: bool) -> np.ndarray:
    """x (c, n) -> [means (c)] or [means, population stddevs] (2c)."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1).astype(F32)
    if not include_stddev:
        return mean
    std = np.sqrt(((x64 - mean[:, None]) ** 2).mean(axis=1)).astype(F32)
    return np.concatenate([mean, std])
