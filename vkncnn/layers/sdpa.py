"""SDPA: scaled dot-product attention with optional mask, grouped KV heads and a KV cache.

Inputs: q (heads, src, d), k (groups, cur, d), v (groups, cur, dv) [, mask (dst, src) or per
head] [, past_k, past_v]. With kv_cache the outputs also carry past+current k and v.
"""

import numpy as np

from vkncnn.cpu_fallback import llm
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("SDPA")
class SDPA(Layer):
    def load_param(self, pd) -> int:
        self.attn_mask = pd.get(5, 0)
        self.scale = pd.get(6, 0.0)
        self.kv_cache = pd.get(7, 0)
        self.int8_scale_term = pd.get(18, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        q, k, v = bottoms[0], bottoms[1], bottoms[2]
        mask = bottoms[3] if self.attn_mask else None
        if self.kv_cache:
            past = 4 if self.attn_mask else 3
            past_k, past_v = bottoms[past], bottoms[past + 1]
            if past_k.size:
                k = np.concatenate([past_k.reshape(k.shape[0], -1, k.shape[-1]), k], axis=1)
                v = np.concatenate([past_v.reshape(v.shape[0], -1, v.shape[-1]), v], axis=1)
        if q.ndim != 3 or k.ndim != 3 or v.ndim != 3 or q.shape[0] % k.shape[0] or q.shape[-1] != k.shape[-1]:
            raise ShapeError(f"SDPA expects q (heads,src,d), k (groups,dst,d), v (groups,dst,dv) with "
                             f"heads divisible by groups; got {q.shape}, {k.shape}, {v.shape}")
        scale = self.scale if self.scale != 0 else 1.0 / np.sqrt(q.shape[-1])
        out = llm.sdpa(q, k, v, mask, scale)
        return [out, k, v] if self.kv_cache else [out]
