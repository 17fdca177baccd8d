"""The ordinary pyncnn pattern under load: one Net, 8 threads, extractors never cleared.

    python3 -m tests.gpu.extractor_stress [--threads 8] [--extracts 300]

Each thread makes an extractor per inference and drops it (no clear(), no `with`), while
garbage collections are forced at random points. Prints one JSON line: wrong results,
exceptions, plans recorded and replayed, host RSS and device memory before and after,
and what the validation layer said. Run in a subprocess by test_extractor_lifetime.py, so
that a crash is a failed test and not a dead test run.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import threading

import numpy as np

import vkncnn
from vkncnn.gpu.vulkan import instance
from vkncnn.gpu.vulkan.allocator import live_device_bytes
from vkncnn.gpu.vulkan.lifetime import run_deferred
from vkncnn.tools.benchmark_models import DATA


def rss_kib() -> int:
    import resource
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def load(gpu: bool) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param(str(DATA / "digits.param"))
    net.load_model(str(DATA / "digits.bin"))
    return net


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--extracts", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    images = np.load(DATA / "digits_test.npz")["images"][:16].astype(np.float32)
    cpu = load(gpu=False)
    expected = [cpu.run({"in0": x[None]})["out0"] for x in images]
    load(gpu=True).run({"in0": images[0][None]})  # the device's own buffers exist from here on
    gc.collect()
    run_deferred()
    base_device = live_device_bytes()
    net = load(gpu=True)
    problems: list[str] = []

    def worker(seed: int, count: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(count):
                k = rng.randrange(len(images))
                ex = net.create_extractor()  # never cleared: dropped when rebound
                ex.input("in0", vkncnn.Mat(images[k][None]))
                out = ex.extract("out0")[1].numpy()
                if not np.allclose(out, expected[k], rtol=2e-2, atol=2e-2):
                    problems.append(f"wrong result, off by {float(np.abs(out - expected[k]).max())}")
                if rng.random() < 0.02:
                    gc.collect()
        except Exception as e:  # reported, not raised: the parent test asserts on the list
            problems.append(f"{type(e).__name__}: {e}")

    def round_of(count: int, seed: int) -> None:
        threads = [threading.Thread(target=worker, args=(seed + i, count)) for i in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        gc.collect()
        run_deferred()

    round_of(20, args.seed * 1000)  # warm-up: plans, pools, caches
    rss_before, held_before = rss_kib(), net.gpu.bytes_held()
    recorded_before = net.gpu.plans_recorded
    round_of(args.extracts, args.seed * 1000 + 100)
    report = {
        "problems": problems[:5], "problem_count": len(problems),
        "extracts": args.threads * args.extracts,
        "recorded": net.gpu.plans_recorded - recorded_before,
        "replayed": net.gpu.plans_replayed,
        "rss_growth_kib": rss_kib() - rss_before,
        "held_before": held_before, "held_after": net.gpu.bytes_held(),
    }
    net = None  # dropped: its finalizer queues the release
    gc.collect()
    run_deferred()
    report["device_bytes_left"] = live_device_bytes() - base_device
    report["validation"] = list(instance.validation_messages())[:3]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
