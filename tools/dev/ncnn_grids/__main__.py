"""python -m vkncnn.tools.dev.ncnn_grids [--layer NAME[,NAME]] [--gpu] [--show-fails N]"""

from __future__ import annotations

import argparse
import sys
import time

from vkncnn.tools.dev.ncnn_worker import NcnnWorker

from .registry import GRIDS, _load_families
from .runner import STATUSES, run_layer


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vkncnn.tools.dev.ncnn_grids", description=__doc__)
    ap.add_argument("--layer", default="", help="comma-separated layer types (default: every grid)")
    ap.add_argument("--gpu", action="store_true", help="vkncnn's Vulkan path (fp32) instead of the numpy path")
    ap.add_argument("--show-fails", type=int, default=5, help="failing cases printed per layer")
    ap.add_argument("--every", type=int, default=1, help="run every k-th case (edge cases always)")
    args = ap.parse_args(argv)
    _load_families()
    layers = [s for s in args.layer.split(",") if s] or sorted(GRIDS)
    unknown = [name for name in layers if name not in GRIDS]
    if unknown:
        ap.error(f"no grid for {unknown}; grids: {', '.join(sorted(GRIDS))}")
    worker = NcnnWorker()
    print(f"{'layer':<26}{'cases':>6}" + "".join(f"{s:>15}" for s in STATUSES) + f"{'s':>7}")
    bad = 0
    try:
        for name in layers:
            t0 = time.perf_counter()
            tally = run_layer(name, worker, "gpu" if args.gpu else "cpu", args.every)
            bad += tally.failed
            print(f"{name:<26}{tally.cases:>6}" + "".join(f"{tally.counts[s]:>15}" for s in STATUSES)
                  + f"{time.perf_counter() - t0:>7.1f}", flush=True)
            for index, desc, detail in tally.failures[:args.show_fails]:
                print(f"    #{index} {desc}\n        {detail[:300]}")
    finally:
        worker.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
