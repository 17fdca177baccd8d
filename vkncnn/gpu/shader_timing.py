"""ShaderTiming: what ShaderProgram.time() measured, in microseconds.

Device time comes from GPU timestamps written around each dispatch (barriers between
dispatches included, the submit and the fence wait not); wall time is the host's
perf_counter around each run (submit, GPU work, fence wait), the cost a caller sees.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field


@dataclass
class ShaderTiming:
    runs: int                                   # timed runs (warm-up runs not counted)
    dispatches: int                             # dispatches in one run
    gpu_us: list = field(default_factory=list)  # device time of each run, all its dispatches
    wall_us: list = field(default_factory=list)  # host time of each run
    per_dispatch_us: list = field(default_factory=list)  # per dispatch: its device time in each run

    @property
    def median_us(self) -> float:
        """Median device time of one run (of one dispatch when a single one is timed)."""
        return statistics.median(self.gpu_us)

    @property
    def min_us(self) -> float:
        return min(self.gpu_us)

    @property
    def max_us(self) -> float:
        return max(self.gpu_us)

    @property
    def mean_us(self) -> float:
        return statistics.fmean(self.gpu_us)

    @property
    def wall_median_us(self) -> float:
        return statistics.median(self.wall_us)

    def dispatch_medians_us(self) -> list:
        """Median device time of each dispatch of a run, in recording order."""
        return [statistics.median(times) for times in self.per_dispatch_us]

    def __str__(self) -> str:
        what = "dispatch" if self.dispatches == 1 else f"run of {self.dispatches} dispatches"
        return (f"GPU {_fmt(self.median_us)} us per {what} (median of {self.runs}; min {_fmt(self.min_us)}, "
                f"max {_fmt(self.max_us)}); wall {_fmt(self.wall_median_us)} us")


def _fmt(us: float) -> str:
    return f"{us:.1f}" if math.isfinite(us) and us < 1e4 else f"{us:.4g}"
