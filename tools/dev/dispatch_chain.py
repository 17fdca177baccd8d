"""What one dependent dispatch costs on this device: chains of layers, each reading the last.

    python3 -m vkncnn.tools.dev.dispatch_chain [--short 16] [--long 128] [--loops 50]

Each case is a net of one-row layers in a chain (so a barrier stands between every two
dispatches), built at two lengths; the difference of their medians, divided by the difference
of their lengths, is the time of one more link, free of the extract's fixed costs (uploads,
the download, the submit and the fence wait). The cases:

  relu            ReLU over 896 values: a barrier and a launch, next to no work
  relu,sigmoid    ReLU and Sigmoid in turn: the same, with another pipeline bound each link
                  (as every level of a decoder binds), against `relu`'s one pipeline
  ip 896x896      InnerProduct, fp16 weights of 1.6 MB (a decoder's o product)
  ip 896x4864,... two InnerProducts a link, 896 -> 4864 -> 896 (an MLP's up and down)
  sdpa 14x384x64  SDPA of one query row over 384 keys, 14 heads of 64 (a decode step's
                  attention, sdpa_decode.comp, without the cache write); each link's output
                  is the next one's q, all read the same keys and values

Every link has weights of its own, so the chain streams them from memory as a decoder does
(the longer chains' weights outgrow the GPU's L2 cache). The effective bandwidth of a product
case counts its weight bytes only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import NamedTuple

import numpy as np

import vkncnn
from vkncnn.tools.dev.decode_ab import Applied, parse_setting

CASES = {
    "relu": [("ReLU", 896, 896)],
    "relu,sigmoid": [("ReLU", 896, 896), ("Sigmoid", 896, 896)],
    "ip 896x896": [("InnerProduct", 896, 896)],
    "ip 896x4864,4864x896": [("InnerProduct", 896, 4864), ("InnerProduct", 4864, 896)],
    "ip 896x128,128x896": [("InnerProduct", 896, 128), ("InnerProduct", 128, 896)],
    "sdpa 14x384x64": [("SDPA", 64, 384)],
}
SDPA_HEADS = 14


class Chain(NamedTuple):
    """A chain's net, the inputs it is fed and the blob at its end."""
    net: vkncnn.Net
    feed: dict[str, vkncnn.Mat]
    output: str

    def run(self) -> np.ndarray:
        """One extract of the chain's end."""
        with self.net.create_extractor() as ex:
            for name, mat in self.feed.items():
                ex.input(name, mat)
            return ex.extract(self.output)[1].numpy()


def chain_net(links: list[tuple[str, int, int]], repeats: int, fp16: bool) -> Chain:
    """A net of `repeats` copies of `links` in a chain, with seeded weights and inputs."""
    rng = np.random.default_rng(0)
    sdpa = any(kind == "SDPA" for kind, _, _ in links)
    first = f"Input in0 0 1 b0 0=64 1=1 2={SDPA_HEADS}" if sdpa else "Input in0 0 1 b0 0=896"
    layers, weights = [first], [b""]
    if sdpa:
        keys = links[0][2]
        layers += [f"Input kin 0 1 kk 0=64 1={keys} 2={SDPA_HEADS}", f"Input vin 0 1 vv 0=64 1={keys} 2={SDPA_HEADS}"]
    drawn: dict[tuple[int, int], bytes] = {}  # one draw per shape: each link still has a buffer of its own
    n = 0
    for _ in range(repeats):
        for kind, k, out in links:
            if kind in ("ReLU", "Sigmoid"):
                layers.append(f"{kind} a{n} 1 1 b{n} b{n + 1}")
            elif kind == "SDPA":
                layers.append(f"SDPA s{n} 3 1 b{n} kk vv b{n + 1} 6=0.125")
            else:
                layers.append(f"InnerProduct ip{n} 1 1 b{n} b{n + 1} 0={out} 1=0 2={k * out}")
                if (k, out) not in drawn:
                    w = (rng.standard_normal((out, k)) / np.sqrt(k)).astype(np.float32)
                    drawn[k, out] = np.zeros(1, np.uint32).tobytes() + w.tobytes()
                weights.append(drawn[k, out])
            n += 1
    param = f"7767517\n{len(layers)} {n + 1 + 2 * sdpa}\n" + "\n".join(layers) + "\n"
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = True
    net.opt.use_fp16_storage = fp16
    net.opt.use_fp16_arithmetic = False
    net.load_param_mem(param)
    net.load_model_mem(b"".join(weights))
    rng = np.random.default_rng(1)
    first_shape = (SDPA_HEADS, 1, 64) if sdpa else (896,)
    feed = {"b0": vkncnn.Mat(rng.uniform(-1, 1, first_shape).astype(np.float32))}
    if sdpa:
        for name in ("kk", "vv"):
            feed[name] = vkncnn.Mat(rng.uniform(-1, 1, (SDPA_HEADS, keys, 64)).astype(np.float32))
    return Chain(net, feed, f"b{n}")


def extract_ms(chain: Chain) -> float:
    """Wall time of one extract of the chain's end, ms."""
    start = time.perf_counter()
    chain.run()
    return (time.perf_counter() - start) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", type=int, default=16, help="links of the short chain (default 16)")
    ap.add_argument("--long", type=int, default=128, help="links of the long chain (default 128)")
    ap.add_argument("--loops", type=int, default=50, help="extracts timed per chain (default 50)")
    ap.add_argument("--warmup-s", type=float, default=2.0, help="seconds of extracts first (default 2)")
    ap.add_argument("--fp32", action="store_true", help="fp32 storage (default fp16)")
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--set", default="-", help="NAME=VALUE,... of decode_ab's tunables, for the whole run")
    args = ap.parse_args(argv)
    with Applied(parse_setting(args.set)):
        run(args)
    return 0


def run(args) -> None:
    if vkncnn.get_gpu_count() == 0:
        raise SystemExit("no Vulkan device")
    print(f"device: {vkncnn.get_gpu_device().info.device_name()}, settings: {args.set}")
    for case in args.cases:
        links = CASES[case]
        chains = {r: chain_net(links, r, not args.fp32) for r in (args.short, args.long)}
        # the GPU idles at a low clock and raises it only after a while of work: extract for
        # --warmup-s first, then alternate the two lengths, so that a clock change lands on both
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.warmup_s:
            for chain in chains.values():
                extract_ms(chain)
        times: dict[int, list[float]] = {r: [] for r in chains}
        for _ in range(args.loops):
            for r, chain in chains.items():
                times[r].append(extract_ms(chain))
        short, long = (statistics.median(times[r]) for r in (args.short, args.long))
        link_us = (long - short) / (args.long - args.short) * 1e3
        per_dispatch = link_us / len(links)
        weight_bytes = sum(k * out for kind, k, out in links if kind == "InnerProduct") * (2 if not args.fp32 else 4)
        rate = f"  {weight_bytes / link_us / 1e3:7.1f} GB/s of weights" if weight_bytes else ""
        print(f"{case:24s} {args.short}: {short:8.3f} ms  {args.long}: {long:8.3f} ms  "
              f"{per_dispatch:7.2f} us a dispatch{rate}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
