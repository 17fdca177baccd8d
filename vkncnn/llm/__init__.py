"""Text generation with ncnn LLM decoders (decoder + proj_out form): prefill, KV-cache decoding,
greedy and sampled token choice, streaming, a KV cache kept on the device. Beyond ncnn's API;
see docs/generate.md and docs/llm.md."""

from .decoder import Decoder, DeviceCache, device_cache_problem, device_head_step, device_step
from .decoder_inputs import causal_mask, rope_tables
from .generate import Generation, Generator
from .mat_cache_step import MatCache, cache_blob_names, decoder_step
from .model_dir import load_generator
from .sampling import SamplingParams, next_token
from .tokenizer import CharTokenizer, FunctionTokenizer

__all__ = ["CharTokenizer", "Decoder", "DeviceCache", "FunctionTokenizer", "Generation", "Generator", "MatCache",
           "SamplingParams", "cache_blob_names", "causal_mask", "decoder_step", "device_cache_problem",
           "device_head_step", "device_step", "load_generator", "next_token", "rope_tables"]
