"""Time a decode step under several settings of its tuning constants, in one process.

    python3 -m vkncnn.tools.dev.decode_ab qwen2.5_0.5b - GEMV_STEPS=8 GEMV_STEPS=16,DECODE_LOCAL=128

Each SETTING ('-': the defaults; else NAME=VALUE,... over TUNABLES) gets a decoder of its own
(benchmark decoder and proj_out, seeded random weights, fp16 storage, KV cache on the
device), loaded and recorded while the constants hold that setting: the constants are read
as pipelines and plans are made, so each decoder keeps its setting afterwards. The decoders
then step in turn, --steps each per round, after --warmup-s seconds of steps that let the
GPU's clocks rise; the step times of all rounds give each setting's median, and its host
part (the time outside the device's queue submits and waits). Separate
processes per setting saw the clock move between them (docs/perf-notes.md), which one
process with alternating rounds does not.

Then each setting repeats one step and its outputs are compared with the first setting's:
a setting that computes differently, or orders its dispatches wrongly, shows there.

The first setting is also profiled (`net.gpu.profile = "dispatches"`, a decoder of its own):
device time per shader, and the first labels of the step.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import tempfile
import time

import numpy as np

from vkncnn.gpu.ops import matrix_product
from vkncnn.layers import sdpa
from vkncnn.tools import llm_steps
from vkncnn.tools.benchmark_models import LLM_MODELS
from vkncnn.tools.llm_bench import model_files
from vkncnn.tools.llm_steps import VkncnnDecoder, decode_case

# the constants a setting may change, and the module that holds each
TUNABLES = {
    "GEMV_STEPS": matrix_product,
    "GEMV_WORKGROUP": matrix_product,
    "GEMV_SUBGROUP": matrix_product,
    "DECODE_LOCAL": sdpa,
    "DECODE_MAX_KEYS": sdpa,
    "DECODE_MAX_SPLITS": sdpa,
    "DECODE_LANE_KEYS": sdpa,
    "DECODE_UNROLL": sdpa,
    "DECODE_MERGE_BY_READER": sdpa,
    "DECODE_SUBGROUP": sdpa,
    "GEMV_MERGE_MAX_VALUES": matrix_product,
    "HEAD_ON_DEVICE": llm_steps,
}


def parse_setting(text: str) -> dict[str, int]:
    """'-' -> {}; 'A=1,B=2' -> {'A': 1, 'B': 2} (names from TUNABLES)."""
    if text == "-":
        return {}
    setting = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if name not in TUNABLES or not value.lstrip("-").isdigit():
            raise SystemExit(f"setting {text!r}: expected NAME=INT items with NAME in {', '.join(TUNABLES)}")
        setting[name] = int(value)
    return setting


class Applied:
    """The constants set as a setting asks while the block runs, the defaults again after."""

    def __init__(self, setting: dict[str, int]) -> None:
        self.setting = setting

    def __enter__(self) -> None:
        self.saved = {name: getattr(TUNABLES[name], name) for name in self.setting}
        for name, value in self.setting.items():
            setattr(TUNABLES[name], name, value)

    def __exit__(self, *exc) -> None:
        for name, value in self.saved.items():
            setattr(TUNABLES[name], name, value)


def ready_decoder(files, setting: dict[str, int], args, profile: bool):
    """A decoder loaded and recorded under `setting`, with its caches after --past tokens."""
    decoder, dw, proj, pw = files
    with Applied(setting):
        d = VkncnnDecoder(decoder, dw, True, True, proj_out=(proj, pw), device_cache=True)
        if profile:
            for net in (d.net, d.proj):
                net.gpu.profile = "dispatches"  # before the first inference: plans get their timers
        feed, caches = decode_case(d, args.model, args.past)
        d.step(feed, caches)  # records the one-token plan
    return d, caches, feed


def step_ms(d, caches, feed) -> tuple[float, float]:
    """(the step's wall time, the part of it outside the device's queue waits: the host's), ms."""
    vkdev = d.net.gpu.vkdev
    waited = vkdev.queue_seconds
    start = time.perf_counter()
    d.step(feed, caches)
    wall = time.perf_counter() - start
    return wall * 1e3, (wall - (vkdev.queue_seconds - waited)) * 1e3


def profile(d, caches, feed, steps: int) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """(device us per shader, [(label, us)] in the step's order), medians over `steps` steps."""
    for net in (d.net, d.proj):
        net.gpu.layer_times.clear()
    for _ in range(steps):
        d.step(feed, caches)
    shaders: dict[str, float] = collections.defaultdict(float)
    labels = []
    for prefix, net in (("", d.net), ("proj_out ", d.proj)):
        for label, times in net.gpu.layer_times.items():
            us = statistics.median(times[-steps:])
            shaders[label.rsplit(" ", 1)[-1]] += us
            labels.append((prefix + label, us))
    return dict(shaders), labels


def agreement(runs, steps: int) -> None:
    """Print, for each setting, how far its outputs of `steps` repeats of one step lie from
    the first setting's first output and from each other: a setting that computes
    differently, or orders the step's dispatches wrongly, shows here."""
    first = None
    for text, d, caches, feed in runs:
        outs = [np.array(_output(d.step(feed, caches))) for _ in range(steps)]
        first = outs[0] if first is None else first
        spread = max(float(np.max(np.abs(o - outs[0]))) for o in outs)
        print(f"{text:40s} outputs: max |diff| {float(np.max(np.abs(outs[0] - first))):.3g} against the "
              f"first setting, {spread:.3g} between its own {steps} steps")


def _output(result) -> object:
    """The logits of a step (out0 where the decoder has no head)."""
    out0, _, logits = result
    return logits if logits is not None else out0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=sorted(LLM_MODELS))
    ap.add_argument("settings", nargs="*", default=["-"], help="'-' or NAME=VALUE,... (default: '-')")
    ap.add_argument("--past", type=int, default=256, help="cached tokens before each step (default 256)")
    ap.add_argument("--blocks", type=int, help="keep only the first N blocks")
    ap.add_argument("--vocab", type=int, help="cut proj_out to N logits")
    ap.add_argument("--rounds", type=int, default=8, help="rounds of steps (default 8)")
    ap.add_argument("--steps", type=int, default=15, help="steps per setting and round (default 15)")
    ap.add_argument("--warmup-s", type=float, default=3.0, help="seconds of steps first (default 3)")
    ap.add_argument("--labels", type=int, default=12, help="profiled labels to print (default 12)")
    args = ap.parse_intermixed_args(argv)  # options may come after the settings, or before
    settings = [(text, parse_setting(text)) for text in args.settings or ["-"]]

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        files = model_files(args.model, args, tmp)
        runs = [(text, *ready_decoder(files, setting, args, False)) for text, setting in settings]
        profiled = ready_decoder(files, settings[0][1], args, True)
        print(f"{args.model}, {args.past} cached tokens: {len(runs) + 1} decoders ready in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)

        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.warmup_s:
            for _, d, caches, feed in runs:
                d.step(feed, caches)
        times: dict[str, list[tuple[float, float]]] = {text: [] for text, _ in settings}
        for _ in range(args.rounds):
            for text, d, caches, feed in runs:
                times[text] += [step_ms(d, caches, feed) for _ in range(args.steps)]
        base = statistics.median(wall for wall, _ in times[settings[0][0]])
        for text, ts in times.items():
            walls = sorted(wall for wall, _ in ts)
            median = statistics.median(walls)
            print(f"{text:40s} step {median:8.3f} ms  ({median / base:.3f}x the first)  "
                  f"p10 {walls[len(walls) // 10]:.3f}  host {statistics.median(h for _, h in ts):.3f}")

        agreement(runs, args.steps)
        shaders, labels = profile(*profiled, steps=max(1, args.steps))
        print(f"profile of {settings[0][0]!r}: {sum(shaders.values()):.0f} us of device time a step")
        for shader, us in sorted(shaders.items(), key=lambda kv: -kv[1]):
            print(f"  {us:9.1f} us  {shader}")
        for label, us in labels[:args.labels]:
            print(f"  {us:9.1f} us  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
