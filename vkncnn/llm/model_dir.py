"""Load a generator from a model directory: three nets, a tokenizer and a config.

    decoder.ncnn.param/.bin    ncnn's decoder form (embeddings, mask, RoPE, KV caches)
    proj_out.ncnn.param/.bin   hidden state -> logits
    embed.ncnn.param/.bin      int32 token ids -> embeddings
    tokenizer.json             {"kind": "char", "alphabet": ..., "specials": [...]}
    config.json                {"head_dim": ..., "rope_base": ..., "vocab_size": ...,
                                "max_context": ..., "stop_tokens": [...]}

tools/dev/train_tiny_lm.py writes such a directory (tools/data/tiny_lm/).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ModelFileError, ModelFormatError
from ..net import Net
from .generate import Generator
from .tokenizer import CharTokenizer

NETS = ("decoder", "proj_out", "embed")
CONFIG_KEYS = {"head_dim": int, "rope_base": (int, float), "vocab_size": int, "max_context": int, "stop_tokens": list}


def load_net(stem: Path, gpu: bool, fp16: bool) -> Net:
    net = Net()
    net.opt.use_vulkan_compute = gpu
    # fp32 by default: the numpy and GPU paths then pick the same tokens
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = fp16
    net.load_param(f"{stem}.ncnn.param")
    net.load_model(f"{stem}.ncnn.bin")
    return net


def read_config(path: Path) -> dict:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model config ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise ModelFormatError(f"{path}: not a JSON config ({exc})") from exc
    for key, kind in CONFIG_KEYS.items():
        if not isinstance(config, dict) or not isinstance(config.get(key), kind) or isinstance(config.get(key), bool):
            got = config.get(key) if isinstance(config, dict) else config
            raise ModelFormatError(f"{path}: expected {key!r} ({getattr(kind, '__name__', 'number')}), "
                                   f"got {got!r:.40}")
    return config


def load_generator(model_dir: str | Path, gpu: bool = False, fp16: bool = False) -> Generator:
    """A Generator for the model in model_dir, on the GPU path if gpu, with fp16 storage if fp16."""
    root = Path(model_dir)
    if not root.is_dir():
        raise ModelFileError(f"{root}: expected a model directory ({', '.join(NETS)} nets, tokenizer.json, "
                             f"config.json), found {'a file' if root.exists() else 'nothing'}")
    config = read_config(root / "config.json")
    nets = [load_net(root / name, gpu, fp16) for name in NETS]
    # an id past the embedding's rows would be clamped to its last row (ncnn's Embed), not refused
    rows = [layer.input_dim for layer in nets[NETS.index("embed")].layers() if layer.type == "Embed"]
    if rows and config["vocab_size"] > rows[0]:
        raise ModelFormatError(f"{root / 'config.json'}: vocab_size {config['vocab_size']} is more than the "
                               f"{rows[0]} rows of the embedding (embed.ncnn.param)")
    return Generator(*nets, head_dim=config["head_dim"], rope_base=config["rope_base"],
                     tokenizer=CharTokenizer.from_file(root / "tokenizer.json"),
                     vocab_size=config["vocab_size"], stop_tokens=config["stop_tokens"],
                     max_context=config["max_context"])
