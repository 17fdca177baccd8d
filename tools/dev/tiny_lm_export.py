"""Export the tiny language model with pnnx into ncnn's decoder + proj_out form.

pnnx converts each part on its own (with two sequence lengths, so the length stays dynamic);
then the decoder's .param gets what ncnn's LLM decoders have and a traced torch graph cannot
express: every SDPA layer takes the cached keys and values of the step before (cache_k<i>,
cache_v<i>, fed through one Input layer named kv_cache) and returns them with the new tokens
appended (out_cache_k<i>, out_cache_v<i>), with SDPA's param 7=1. The RoPE tables are fed at
half the head dim, as ncnn's decoders take them: the torch model doubles them with a cat,
which RotaryEmbed does not need (it reads the first half of each row), so those Concat layers
are dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from .tiny_lm_model import TinyLM, rope_tables
from .train_digits import pnnx_executable


def run_pnnx(module: torch.nn.Module, inputs: tuple, inputs2: tuple | None, stem: Path) -> None:
    """Trace `module`, convert it with pnnx, and keep only <stem>.ncnn.param / .ncnn.bin."""
    def shapes(ts: tuple) -> str:
        return ",".join("[" + ",".join(map(str, t.shape)) + "]" + ("i32" if t.dtype == torch.int32 else "")
                        for t in ts)

    with tempfile.TemporaryDirectory(prefix="pnnx_") as tmp:
        pt = os.path.join(tmp, "model.pt")
        with torch.no_grad():
            torch.jit.trace(module, inputs).save(pt)
        cmd = [pnnx_executable(), pt, f"inputshape={shapes(inputs)}", "device=cpu", "fp16=0"]
        if inputs2 is not None:
            cmd.append(f"inputshape2={shapes(inputs2)}")
        run = subprocess.run(cmd, check=False, cwd=tmp, capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(os.path.join(tmp, "model.ncnn.param")):
            sys.exit(f"pnnx failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
        stem.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(tmp, "model.ncnn.param"), f"{stem}.ncnn.param")
        shutil.copyfile(os.path.join(tmp, "model.ncnn.bin"), f"{stem}.ncnn.bin")


def parse_layers(text: str) -> list[list]:
    """[type, name, inputs, outputs, params] per layer line of a text .param."""
    layers = []
    for line in text.splitlines()[2:]:
        parts = line.split()
        if not parts:
            continue
        n_in, n_out = int(parts[2]), int(parts[3])
        ins, outs = parts[4:4 + n_in], parts[4 + n_in:4 + n_in + n_out]
        layers.append([parts[0], parts[1], ins, outs, parts[4 + n_in + n_out:]])
    return layers


def format_layers(layers: list[list]) -> str:
    blobs = {b for layer in layers for b in layer[2] + layer[3]}
    lines = ["7767517", f"{len(layers)} {len(blobs)}"]
    for kind, name, ins, outs, params in layers:
        lines.append(" ".join([f"{kind:<24}", f"{name:<24}", str(len(ins)), str(len(outs)), *ins, *outs, *params]))
    return "\n".join(lines) + "\n"


def drop_rope_doubling(layers: list[list]) -> list[list]:
    """Remove `Concat(t, t)` of an input table split in two; its readers take the table itself."""
    producer = {out: layer for layer in layers for out in layer[3]}
    rename: dict[str, str] = {}
    dropped = set()
    for layer in layers:
        kind, name, ins = layer[0], layer[1], layer[2]
        source = producer.get(ins[0]) if ins else None
        if (kind == "Concat" and source is not None and source[0] == "Split"
                and all(producer.get(b) is source for b in ins) and source[2][0].startswith("in")):
            rename[layer[3][0]] = source[2][0]
            dropped.update({name, source[1]})
    out = []
    for kind, name, ins, outs, params in layers:
        if name not in dropped:
            out.append([kind, name, [rename.get(b, b) for b in ins], outs, params])
    return out


def splits_after_inputs(layers: list[list]) -> list[list]:
    """Each Split of an input right after its Input layer, as in ncnn's decoders (the order is cosmetic)."""
    inputs = {layer[3][0]: layer for layer in layers if layer[0] == "Input"}
    fan_outs = {id(layer): layer for layer in layers if layer[0] == "Split" and layer[2][0] in inputs}
    out = []
    for layer in layers:
        if id(layer) in fan_outs:
            continue
        out.append(layer)
        if layer[0] == "Input":
            out += [split for split in fan_outs.values() if split[2][0] == layer[3][0]]
    return out


def plain_reshapes(layers: list[list]) -> list[list]:
    """Reshape 6="32,4,0h" (one axis taken from the input) -> 0=32 1=4 2=-1, as ncnn's decoders write it."""
    for layer in layers:
        exprs = [p for p in layer[4] if p.startswith("6=")]
        if layer[0] != "Reshape" or not exprs:
            continue
        dims = exprs[0][3:-1].split(",")
        unknown = [i for i, d in enumerate(dims) if not d.lstrip("-").isdigit()]
        if len(unknown) == 1 and "-1" not in dims and len(dims) <= 3:
            dims[unknown[0]] = "-1"
            layer[4] = [p for p in layer[4] if not p.startswith("6=")] + [f"{i}={d}" for i, d in enumerate(dims)]
    return layers


def add_kv_cache(layers: list[list], head_dim: int) -> list[list]:
    """Give every SDPA cache inputs and outputs (param 7=1), its scale (6=), and one Input layer feeding the caches."""
    cache_names = []
    for layer in layers:
        if layer[0] == "SDPA":
            i = len(cache_names) // 2
            layer[2] += [f"cache_k{i}", f"cache_v{i}"]
            layer[3] += [f"out_cache_k{i}", f"out_cache_v{i}"]
            # an explicit scale: without one, ncnn's x86 SDPA builds a Gemm on every call
            layer[4] = [p for p in layer[4] if p.split("=")[0] not in ("6", "7")] + [f"6={head_dim ** -0.5:.6g}", "7=1"]
            cache_names += [f"cache_k{i}", f"cache_v{i}"]
    # after the last Input (and the Split fanning it out), where ncnn's decoders have it
    at = max(i for i, layer in enumerate(layers) if layer[0] == "Input")
    if at + 1 < len(layers) and layers[at + 1][0] == "Split" and layers[at + 1][2] == layers[at][3]:
        at += 1
    return layers[:at + 1] + [["Input", "kv_cache", [], cache_names, []]] + layers[at + 1:]


def export_tiny_lm(model: TinyLM, out: Path) -> None:
    cfg = model.cfg
    model.eval()
    seq, seq2 = 5, 7

    def decoder_inputs(n: int) -> tuple:
        cos, sin = rope_tables(torch.arange(n), cfg)
        return torch.randn(1, n, cfg.hidden), torch.triu(torch.full((n, n), -1e30), 1), cos, sin

    run_pnnx(model.decoder, decoder_inputs(seq), decoder_inputs(seq2), out / "decoder")
    param = out / "decoder.ncnn.param"
    layers = splits_after_inputs(plain_reshapes(drop_rope_doubling(parse_layers(param.read_text()))))
    layers = add_kv_cache(layers, cfg.head_dim)
    param.write_text(format_layers(layers))
    # an untied copy: a weight shared with the embedding makes pnnx trace F.linear, not one Gemm
    proj_out = torch.nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
    proj_out.weight.data = model.proj_out.weight.detach().clone()
    run_pnnx(proj_out, (torch.randn(2, cfg.hidden),), (torch.randn(3, cfg.hidden),), out / "proj_out")
    run_pnnx(model.embed, (torch.arange(seq, dtype=torch.int32),), (torch.arange(seq2, dtype=torch.int32),),
             out / "embed")
