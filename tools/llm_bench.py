"""vkncnn bench --llm: benchncnn_llm's cases, tokens per second, optionally against real ncnn.

    vkncnn bench --llm --gpu --compare-ncnn
    vkncnn bench --llm --cpu --models qwen2.5_0.5b --prefill 32 --past 32 --steps 8 --blocks 2

Per decoder (seeded random weights; decoder, then proj_out on the last hidden state, as
benchncnn_llm runs them):
- prefill: `--prefill` tokens with empty caches, timed `--loops` times (tokens/s from the median);
- decode: one token after `--past` cached ones (the caches of one untimed prefill of
  `--past` tokens, fed again at every step), timed `--steps` times (tokens/s from the median).
Each case first runs untimed, `--warmup` times and for at least `--warmup-s` seconds (default
2 on the GPU, so that its clock has ramped up; 0 on the CPU).
Real ncnn's caches go in and out as ncnn Mats from its own extract, as a pyncnn user drives a
decoder; ours stay on the device with --gpu (vkncnn.llm.Decoder: each decode step writes its
row in place after the --past cached ones), and go in and out as vkncnn Mats with --cpu.
--compare-mat-cache also times ours with the caches as Mats on the GPU. The runtimes are
interleaved as in `vkncnn bench` (tools/interleave.py). The decode step time is also given as a multiple
of its weight-read floor: the bytes of weights one step reads (decoder and proj_out, at the
storage precision) over the device's memory bandwidth (`--bandwidth-gbs`, else the data sheet's
for a known GPU, else an H200's). `--blocks` and `--vocab` cut the models down
(tools/llm_truncate.py) for quick runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from .benchmark_models import LLM_MODELS, llm_decoder_path
from .cmd_common import CommandError
from .interleave import set_timing_defaults, time_interleaved, timing_settings, warm_up
from .llm_steps import NcnnDecoder, VkncnnDecoder, decode_case, proj_out_path, step_feed
from .llm_truncate import truncate_decoder_file, truncate_proj_out
from .randweights import random_weights


def add_llm_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("LLM decoders (--llm)")
    g.add_argument("--llm", action="store_true",
                   help="time the LLM decoders (benchncnn_llm's cases) instead of the vision models; "
                        "--models picks among: " + ",".join(LLM_MODELS))
    g.add_argument("--prefill", type=_positive, default=256, help="tokens of the prefill case (default 256)")
    g.add_argument("--past", type=_positive, default=256, help="cached tokens before each decode step (default 256)")
    g.add_argument("--steps", type=_positive, default=16, help="timed decode steps (default 16)")
    g.add_argument("--blocks", type=_positive, help="keep only the first N transformer blocks (default: all)")
    g.add_argument("--vocab", type=_positive, help="cut proj_out to the first N logits (default: all)")
    g.add_argument("--compare-mat-cache", action="store_true",
                   help="with --gpu: also time our decoder with its KV caches passed as Mats in and out (the "
                        "pyncnn way) instead of kept on the device, interleaved")
    g.add_argument("--bandwidth-gbs", type=float,
                   help="the device's memory bandwidth in GB/s, for the decode step's weight-read floor "
                        f"(default: the data sheet's for the GPUs in KNOWN_BANDWIDTH_GBS, else {ASSUMED_GBS:g}, "
                        "an H200's HBM; give your RAM's figure with --cpu)")


# memory bandwidth in GB/s (the vendors' data sheets) of GPUs by a part of their device name,
# the more specific first
KNOWN_BANDWIDTH_GBS = (("H200", 4800), ("H100 NVL", 3900), ("H100 PCIe", 2000), ("H100", 3350),
                       ("A100-SXM4-80GB", 2039), ("A100 80GB PCIe", 1935), ("A100", 1555),
                       ("RTX 4090", 1008), ("RTX 3090", 936))
ASSUMED_GBS = 4800.0  # where neither the device nor --bandwidth-gbs says


def floor_bandwidth(args) -> tuple[float, str]:
    """(GB/s of the weight-read floor, where the figure comes from): --bandwidth-gbs, else the
    GPU's data-sheet figure, else ASSUMED_GBS."""
    if args.bandwidth_gbs is not None:
        return args.bandwidth_gbs, "given"
    if args.gpu:
        import vkncnn  # lazy: only --gpu asks the device

        name = vkncnn.get_gpu_info(args.device).device_name()
        for part, gbs in KNOWN_BANDWIDTH_GBS:
            if part in name:
                return float(gbs), f"{name}'s"
    return ASSUMED_GBS, "assumed, an H200's: --bandwidth-gbs gives your device's"


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return n


class _Case:
    """One runtime's decoder as time_interleaved sees it: infer(x) runs one step of x's case."""

    def __init__(self, decoder) -> None:
        self.decoder = decoder
        self.name = decoder.name

    def infer(self, x) -> None:
        feed, caches = x[self.name]
        self.decoder.step(feed, caches)


def model_files(name: str, args, tmp: str) -> tuple[str, bytes, str, bytes]:
    """The decoder and proj_out .param paths (cut as asked) and their seeded random weights."""
    decoder, proj = str(llm_decoder_path(name)), proj_out_path(name)
    if args.blocks:
        decoder = os.path.join(tmp, f"{name}_decoder.param")
        with open(decoder, "w") as f:
            f.write(truncate_decoder_file(str(llm_decoder_path(name)), args.blocks))
    if args.vocab:
        with open(proj_out_path(name)) as f:
            text = truncate_proj_out(f.read(), args.vocab, proj_out_path(name))
        proj = os.path.join(tmp, f"{name}_proj_out.param")
        with open(proj, "w") as f:
            f.write(text)
    return decoder, random_weights(decoder, seed=0), proj, random_weights(proj, seed=1)


def _weight_floor_ms(weight_bytes: int, args, gbs: float) -> float:
    """Milliseconds to read every weight once at `gbs` GB/s: the decode step's floor."""
    per_weight = 2 if args.fp16 and args.gpu else 4  # the files hold fp32; fp16 storage halves it on the GPU
    return weight_bytes / 4 * per_weight / (gbs * 1e9) * 1e3


def bench_llm(name: str, args) -> dict:
    result: dict = {"model": name, "prefill": args.prefill, "past": args.past, "blocks": args.blocks,
                    "vkncnn_kv_cache": "device" if args.gpu else "mats", **timing_settings(args)}
    with tempfile.TemporaryDirectory() as tmp:
        decoder, dw, proj, pw = model_files(name, args, tmp)
        # (runner, its options): ours with the caches on the device (on the GPU), ours with Mats, ncnn
        kinds = [(VkncnnDecoder, {"device_cache": True})]
        if _mat_cache_too(args):
            kinds.append((VkncnnDecoder, {"device_cache": False}))
        if args.compare_ncnn:
            kinds.append((NcnnDecoder, {}))
        runners = []
        for kind, extra in kinds:
            t0 = time.perf_counter()
            runner = kind(decoder, dw, args.gpu, args.fp16, args.threads, args.device, (proj, pw), **extra)
            if kind is VkncnnDecoder and not runner.device_cache and args.gpu:
                runner.name = MATS
            runners.append(runner)
            result[f"{runner.name}_load_ms"] = (time.perf_counter() - t0) * 1e3
        weight_bytes = len(dw) + len(pw)
        del dw, pw
        prefill = {r.name: (step_feed(name, args.prefill, 0), r.empty_caches()) for r in runners}
        decode = {r.name: decode_case(r, name, args.past) for r in runners}
        cases = [_Case(r) for r in runners]
        for label, x, loops in (("prefill", prefill, args.loops), ("decode", decode, args.steps)):
            warm_up(cases, x, args.warmup, args.warmup_s)
            times = time_interleaved(cases, x, loops, args.block, args.settle_ms / 1e3, args.rewarm_ms / 1e3)
            tokens = args.prefill if label == "prefill" else 1
            for who, ts in times.items():
                result[f"{who}_{label}_median_ms"] = statistics.median(ts)
                result[f"{who}_{label}_tokens_per_s"] = tokens * 1e3 / statistics.median(ts)
        result["weight_bytes_fp32"] = weight_bytes
        gbs = floor_bandwidth(args)[0]
        floor = _weight_floor_ms(weight_bytes, args, gbs)
        result["decode_floor_ms"], result["floor_gbs"] = floor, gbs
        for r in runners:
            result[f"{r.name}_decode_x_floor"] = result[f"{r.name}_decode_median_ms"] / floor
        if _mat_cache_too(args):
            result["mat_cache_decode_gain"] = (result["vkncnn_decode_tokens_per_s"]
                                               / result[f"{MATS}_decode_tokens_per_s"])
        if args.compare_ncnn:
            for label in ("prefill", "decode"):
                result[f"{label}_ratio"] = (result[f"vkncnn_{label}_tokens_per_s"]
                                            / result[f"ncnn_{label}_tokens_per_s"])
        for r in runners:
            if hasattr(r, "close"):
                r.close()
    return result


MATS = "vkncnn_mats"  # ours with the caches as Mats (--compare-mat-cache)


def _mat_cache_too(args) -> bool:
    return bool(args.compare_mat_cache and args.gpu)


def llm_models(args) -> list[str]:
    names = [n for n in (args.models or ",".join(LLM_MODELS)).split(",") if n]
    unknown = [n for n in names if n not in LLM_MODELS]
    if unknown:
        raise CommandError(f"--llm: unknown decoder {', '.join(unknown)}; expected some of {', '.join(LLM_MODELS)}")
    return names


def run(args) -> int:
    if args.model:
        raise CommandError("--llm times the benchmark decoders: choose them with --models, not MODEL")
    names = llm_models(args)
    args.bandwidth_gbs, source = floor_bandwidth(args)
    set_timing_defaults(args)
    storage = "fp16" if args.fp16 and args.gpu else "fp32"
    cache = "  our KV cache on the device" if args.gpu else ""
    print(f"device: {'GPU ' + str(args.device) if args.gpu else 'CPU'}  storage: {storage}{cache}  "
          f"threads: {args.threads}  "
          f"prefill {args.prefill} tokens, decode after {args.past}"
          + (f", first {args.blocks} blocks" if args.blocks else "")
          + f"  floor at {args.bandwidth_gbs:g} GB/s ({source})"
          + f"  interleave: blocks of {args.block}, re-warmed {args.rewarm_ms:g} ms")
    cmp = args.compare_ncnn
    head = f"{'model':<24}{'prefill tok/s':>14}" + (f"{'ncnn':>9}{'ratio':>7}" if cmp else "")
    mats = _mat_cache_too(args)
    head += f"{'decode tok/s':>13}" + (f"{'mats':>9}{'gain':>7}" if mats else "")
    head += (f"{'ncnn':>9}{'ratio':>7}" if cmp else "") + f"{'step ms':>9}{'x floor':>9}"
    print(head + (f"{'ncnn x':>8}" if cmp else ""))
    results, failed = [], 0
    for name in names:
        try:
            r = bench_llm(name, args)
        except Exception as e:
            failed += 1
            reason = " ".join(f"{type(e).__name__}: {e}".split())
            print(f"{name:<24} failed: {reason}", flush=True)
            results.append({"model": name, "error": reason})
            continue
        line = f"{name:<24}{r['vkncnn_prefill_tokens_per_s']:14.1f}"
        if cmp:
            line += f"{r['ncnn_prefill_tokens_per_s']:9.1f}{r['prefill_ratio']:7.2f}"
        line += f"{r['vkncnn_decode_tokens_per_s']:13.2f}"
        if mats:
            line += f"{r[MATS + '_decode_tokens_per_s']:9.2f}{r['mat_cache_decode_gain']:7.2f}"
        if cmp:
            line += f"{r['ncnn_decode_tokens_per_s']:9.2f}{r['decode_ratio']:7.2f}"
        line += f"{r['vkncnn_decode_median_ms']:9.2f}{r['vkncnn_decode_x_floor']:9.1f}"
        if cmp:
            line += f"{r['ncnn_decode_x_floor']:8.1f}"
        print(line, flush=True)
        results.append(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0
