"""ncnn's benchmark model set (shipped in tools/data/benchmark) and benchncnn's inputs."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
BENCHMARK_DIR = DATA / "benchmark"

# benchncnn's input for each model, numpy (c, h, w); the default run order.
INPUT_SHAPES: dict[str, tuple[int, int, int]] = {
    "squeezenet": (3, 227, 227),
    "mobilenet": (3, 224, 224),
    "mobilenet_v2": (3, 224, 224),
    "mobilenet_v3": (3, 224, 224),
    "shufflenet": (3, 224, 224),
    "shufflenet_v2": (3, 224, 224),
    "mnasnet": (3, 224, 224),
    "proxylessnasnet": (3, 224, 224),
    "efficientnet_b0": (3, 224, 224),
    "efficientnetv2_b0": (3, 224, 224),
    "regnety_400m": (3, 224, 224),
    "blazeface": (3, 128, 128),
    "googlenet": (3, 224, 224),
    "resnet18": (3, 224, 224),
    "alexnet": (3, 227, 227),
    "vgg16": (3, 224, 224),
    "resnet50": (3, 224, 224),
    "squeezenet_ssd": (3, 300, 300),
    "mobilenet_ssd": (3, 300, 300),
    "mobilenet_yolo": (3, 416, 416),
    "mobilenetv2_yolov3": (3, 352, 352),
    "yolov4-tiny": (3, 416, 416),
    "nanodet_m": (3, 320, 320),
    "yolo-fastest-1.1": (3, 320, 320),
    "yolo-fastestv2": (3, 352, 352),
    "vision_transformer": (3, 384, 384),
    "FastestDet": (3, 352, 352),
}

INT8_MODELS = ["squeezenet_int8", "mobilenet_int8", "googlenet_int8", "resnet18_int8", "vgg16_int8",
               "resnet50_int8", "squeezenet_ssd_int8", "mobilenet_ssd_int8"]


def param_path(name: str) -> Path:
    return BENCHMARK_DIR / f"{name}.param"


def llm_params() -> list[Path]:
    return sorted((BENCHMARK_DIR / "llm").glob("*.param"))


# benchncnn_llm's decoders: name -> (hidden size, RoPE half dim).
LLM_MODELS: dict[str, tuple[int, int]] = {
    "minicpm4_0.5b": (1024, 32),
    "qwen2.5_0.5b": (896, 32),
    "qwen3_0.6b": (1024, 64),
    "hunyuan_0.5b_instruct": (1024, 64),
    "tinyllama_1.1b": (2048, 32),
    "llama3.2_1b": (2048, 32),
    "youtu_llm_2b": (2048, 64),
}


def llm_decoder_path(name: str) -> Path:
    return BENCHMARK_DIR / "llm" / f"{name}_decoder.ncnn.param"


def llm_prefill_inputs(name: str, seqlen: int, seed: int = 0) -> dict:
    """benchncnn_llm's prefill feed (no past): embeddings, causal mask, RoPE cos/sin.

    The per-layer KV-cache inputs are empty on prefill; callers feed them as empty Mats.
    """
    import numpy as np

    hidden, half = LLM_MODELS[name]
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 3, (seqlen, half))
    return {
        "in0": rng.uniform(-1, 1, (seqlen, hidden)).astype(np.float32),
        "in1": np.triu(np.full((seqlen, seqlen), -1e30, np.float32), 1),
        "in2": np.cos(angles).astype(np.float32),
        "in3": np.sin(angles).astype(np.float32),
    }
