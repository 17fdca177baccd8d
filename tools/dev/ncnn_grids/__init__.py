"""ncnn's own layer-test grids, transcribed as data, run through real ncnn and vkncnn.

    python -m vkncnn.tools.dev.ncnn_grids [--layer NAME] [--gpu] [--show-fails N]

ncnn's tests/test_<layer>.cpp sweep every layer over grids of params and input shapes.
Each family module here (conv.py, norm.py, ...) rewrites those grids as plain data: one
function per layer type returning `GridCase`s. The runner (runner.py) feeds every case to
real ncnn (the judge) and to vkncnn, and counts per layer: cases that agree, cases both
refuse, cases only ncnn refuses (not a failure: vkncnn may define more), and the two kinds
of failure: vkncnn refuses where ncnn answers, or the values differ.

Where ncnn's test draws something at random per call (an activation type, its params) the
grids draw it from a generator seeded per case, so every run sees the same cases.
"""

from __future__ import annotations

from .registry import GRIDS, GridCase, grid_cases

__all__ = ["GRIDS", "GridCase", "grid_cases"]
