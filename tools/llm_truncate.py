"""Cut an LLM decoder .param down to its first L transformer blocks.

A decoder of ncnn's LLM benchmark set is a residual stream: in0, then per block an
attention add and an MLP add (`x = x + attn(norm(x))`, `x = x + mlp(norm(x))`), then a
final norm that writes out0. Cutting after block L means: feed the final norm the stream
as it leaves block L, drop every layer that neither out0 nor a kept block's cache outputs
need, and shrink the Split and Input layers that fanned out to the dropped ones. What is
left is a valid .param of the same structure, L blocks deep (tests and benchmarks run it
in a fraction of the time, with the same layer types and shapes).

    python -m vkncnn.tools.llm_truncate qwen2.5_0.5b_decoder.ncnn.param 2 out.param
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from vkncnn.errors import Error

MAGIC = "7767517"


class TruncateError(Error):
    """The .param is not a decoder this tool knows how to cut."""


@dataclass
class _Line:
    type: str
    name: str
    bottoms: list[str]
    tops: list[str]
    params: list[str] = field(default_factory=list)

    def text(self) -> str:
        head = f"{self.type:<24} {self.name:<24} {len(self.bottoms)} {len(self.tops)}"
        return " ".join([head, *self.bottoms, *self.tops, *self.params])


def _parse(text: str, where: str) -> list[_Line]:
    rows = [r for r in text.splitlines() if r.strip()]
    if len(rows) < 2 or rows[0].strip() != MAGIC:
        raise TruncateError(f"{where}: expected an ncnn text .param (first line {MAGIC}), got {rows[:1]!r}")
    lines = []
    for no, row in enumerate(rows[2:], start=3):
        f = row.split()
        try:
            nb, nt = int(f[2]), int(f[3])
        except (IndexError, ValueError):
            raise TruncateError(f"{where}:{no}: expected 'type name bottoms tops ...', got {row[:80]!r}") from None
        if len(f) < 4 + nb + nt:
            raise TruncateError(f"{where}:{no}: layer {f[1]} names fewer blobs than its counts say")
        lines.append(_Line(f[0], f[1], f[4:4 + nb], f[4 + nb:4 + nb + nt], f[4 + nb + nt:]))
    return lines


def _residual_stream(lines: list[_Line], producer: dict, where: str) -> list[str]:
    """The stream's blobs, in0 first: the input of each residual add, then the last add's output."""
    final = producer.get("out0")
    if final is None or len(final.bottoms) != 1:
        raise TruncateError(f"{where}: expected a one-input layer (the final norm) writing out0")
    stream = [final.bottoms[0]]
    while True:
        layer = producer[stream[-1]]
        if layer.type == "Input":
            return stream[::-1]
        if layer.type != "BinaryOp" or len(layer.bottoms) != 2:
            raise TruncateError(f"{where}: expected the residual stream to go through 2-input BinaryOp adds, "
                                f"found {layer.type} {layer.name}")
        # the stream's own branch is the one a Split fanned out (the other is the block's output)
        split = [producer[b] for b in layer.bottoms if producer[b].type == "Split"]
        if len(split) != 1:
            raise TruncateError(f"{where}: cannot tell the residual branch of {layer.name}")
        stream.append(split[0].bottoms[0])


def truncate_decoder(text: str, blocks: int, where: str = "<param>") -> str:
    """The .param text of the decoder cut to its first `blocks` transformer blocks."""
    lines = _parse(text, where)
    producer = {t: ln for ln in lines for t in ln.tops}
    sdpas = [ln for ln in lines if ln.type == "SDPA" and len(ln.tops) == 3]
    stream = _residual_stream(lines, producer, where)
    if len(stream) != 2 * len(sdpas) + 1:
        raise TruncateError(f"{where}: expected 2 residual adds per attention block, found {len(stream) - 1} "
                            f"adds for {len(sdpas)} blocks")
    if not 1 <= blocks <= len(sdpas):
        raise TruncateError(f"{where}: expected 1..{len(sdpas)} blocks, got {blocks}")
    if blocks == len(sdpas):
        return text
    final = producer["out0"]
    cut = stream[2 * blocks]
    # the block after the cut reads the stream through a Split: take that Split's top
    reader = next(ln for ln in lines if cut in ln.bottoms and ln.type == "Split")
    final.bottoms = [reader.tops[0]]

    wanted = {"out0"} | {t for s in sdpas[:blocks] for t in s.tops[1:]}
    keep, need = [], set(wanted)
    for ln in reversed(lines):
        if ln.type == "Input" or any(t in need for t in ln.tops):
            keep.append(ln)
            need.update(ln.bottoms)
    consumed = {b for ln in keep for b in ln.bottoms}
    out = []
    for ln in reversed(keep):
        if ln.type in ("Input", "Split"):
            ln.tops = [t for t in ln.tops if t in consumed]
            if not ln.tops:
                continue
        out.append(ln)
    blob_count = len({t for ln in out for t in ln.tops})
    return "\n".join([MAGIC, f"{len(out)} {blob_count}", *(ln.text() for ln in out)]) + "\n"


def truncate_proj_out(text: str, vocab: int, where: str = "<param>") -> str:
    """The proj_out .param text with its Gemm cut to the first `vocab` logits (weights shrink alike)."""
    lines = _parse(text, where)
    gemms = [ln for ln in lines if ln.type == "Gemm"]
    if len(gemms) != 1 or not any(p.startswith("8=") for p in gemms[0].params):
        raise TruncateError(f"{where}: expected one Gemm with its N (8=) set, the vocabulary projection")
    gemm = gemms[0]
    full = int(next(p for p in gemm.params if p.startswith("8="))[2:])
    if not 1 <= vocab <= full:
        raise TruncateError(f"{where}: expected a vocabulary of 1..{full}, got {vocab}")
    gemm.params = [f"8={vocab}" if p.startswith("8=") else p for p in gemm.params]
    blob_count = len({t for ln in lines for t in ln.tops})
    return "\n".join([MAGIC, f"{len(lines)} {blob_count}", *(ln.text() for ln in lines)]) + "\n"


def truncate_decoder_file(path: str, blocks: int) -> str:
    with open(path) as f:
        return truncate_decoder(f.read(), blocks, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vkncnn.tools.llm_truncate", description=__doc__.split("\n\n")[0])
    ap.add_argument("param", help="a decoder .param (text)")
    ap.add_argument("blocks", type=int, help="transformer blocks to keep")
    ap.add_argument("out", help="the .param to write")
    args = ap.parse_args(argv)
    text = truncate_decoder_file(args.param, args.blocks)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}: {args.blocks} blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
