"""Text generation with ncnn LLM decoders (decoder + proj_out form): prefill, KV-cache decoding,
greedy and sampled token choice, streaming. Beyond ncnn's API; see docs/generate.md."""

from .decoder_inputs import causal_mask, rope_tables
from .generate import Generation, Generator
from .mat_cache_step import MatCache, cache_blob_names, decoder_step
from .model_dir import load_generator
from .sampling import SamplingParams, next_token
from .tokenizer import CharTokenizer, FunctionTokenizer

__all__ = ["CharTokenizer", "FunctionTokenizer", "Generation", "Generator", "MatCache", "SamplingParams",
           "cache_blob_names", "causal_mask", "decoder_step", "load_generator", "next_token", "rope_tables"]
