"""MultiHeadAttention (torch.nn.MultiheadAttention, batch of one).

    xq = (q Wq^T + bq) * scale      xk = k Wk^T + bk      xv = v Wv^T + bv
    per head h:  o_h = softmax(xq_h xk_h^T + mask) xv_h
    y = concat_h(o_h) Wout^T + bout

Inputs are rows (seq_len, dim): q, then k and v when they differ from q (1, 2 or 3
blobs: self-attention, k == v, or all distinct), then the additive mask when
attn_mask=1, then the cached keys and values when kv_cache=1. Weights in the .bin:
q_w (embed_dim, qdim), q_b, k_w (embed_dim, kdim), k_b, v_w (embed_dim, vdim),
v_b, out_w (qdim, embed_dim), out_b; qdim = weight_data_size / embed_dim.

kv_cache=1 adds two outputs, the keys and values attended over, as
(num_heads, seq_len, head_dim); the matching inputs take the previous step's
outputs (empty on the first step). Self-attention appends the new keys/values to
the cache; cross-attention reuses a non-empty cache and ignores the new k/v.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import attention
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.layer import Layer, register_layer


@register_layer("MultiHeadAttention")
class MultiHeadAttention(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.embed_dim = pd.get(0, 0)
        self.num_heads = pd.get(1, 1)
        self.weight_data_size = pd.get(2, 0)
        self.kdim = pd.get(3, self.embed_dim)
        self.vdim = pd.get(4, self.embed_dim)
        self.attn_mask = pd.get(5, 0)
        if self.embed_dim <= 0 or self.num_heads <= 0 or self.embed_dim % self.num_heads:
            raise ParamError(f"embed_dim (0) {self.embed_dim} must be a positive multiple of "
                             f"num_heads (1) {self.num_heads}")
        # ncnn: 1.f / sqrtf(embed_dim / num_heads) with integer division, in float32
        self.scale = pd.get(6, float(np.float32(1) / np.sqrt(np.float32(self.embed_dim // self.num_heads))))
        self.kv_cache = pd.get(7, 0)
        self.int8_scale_term = pd.get(18, 0)
        if self.int8_scale_term:
            raise ParamError(f"MultiHeadAttention int8/block quantization (18={self.int8_scale_term}) "
                             "is not supported yet")
        if self.weight_data_size <= 0 or self.weight_data_size % self.embed_dim:
            raise ParamError(f"weight_data_size (2) {self.weight_data_size} is not a positive multiple "
                             f"of embed_dim {self.embed_dim}")
        if self.kdim <= 0 or self.vdim <= 0:
            raise ParamError(f"kdim/vdim (3/4) must be positive, got {self.kdim}/{self.vdim}")
        self.qdim = self.weight_data_size // self.embed_dim
        return 0

    def load_model(self, mb) -> int:
        e = self.embed_dim

        def linear(out_dim: int, in_dim: int, name: str):
            w = mb.load(out_dim * in_dim, 0)
            if w.dtype == np.int8:
                raise WeightError(f"{name} weight is int8 but int8_scale_term (18) is 0")
            return np.ascontiguousarray(w.reshape(out_dim, in_dim), np.float32), mb.load(out_dim, 1)

        self.q_weight, self.q_bias = linear(e, self.qdim, "q")
        self.k_weight, self.k_bias = linear(e, self.kdim, "k")
        self.v_weight, self.v_bias = linear(e, self.vdim, "v")
        self.out_weight, self.out_bias = linear(self.qdim, e, "out")
        return 0

    # -- forward -------------------------------------------------------------------------------
    def forward_cpu(self, bottoms, opt):
        n_qkv = len(bottoms) - self.attn_mask - 2 * self.kv_cache
        if n_qkv not in (1, 2, 3):
            raise ShapeError(f"MultiHeadAttention (attn_mask={self.attn_mask}, kv_cache={self.kv_cache}) "
                             f"takes {1 + self.attn_mask + 2 * self.kv_cache}-{3 + self.attn_mask + 2 * self.kv_cache} "
                             f"inputs, got {len(bottoms)}")
        q = self._rows(bottoms[0], self.qdim, "q")
        k = self._rows(bottoms[0 if n_qkv == 1 else 1], self.kdim, "k")
        v = self._rows(bottoms[min(n_qkv - 1, 2)], self.vdim, "v")
        if k.shape[0] != v.shape[0]:
            raise ShapeError(f"k has {k.shape[0]} rows but v has {v.shape[0]}")
        mask = np.asarray(bottoms[n_qkv], np.float32) if self.attn_mask else None
        heads = self.num_heads

        xq = attention.split_heads(attention.project(q, self.q_weight, self.q_bias) * np.float32(self.scale),
                                   heads)
        past_k = past_v = None
        if self.kv_cache:
            base = n_qkv + self.attn_mask
            past_k, past_v = self._cache(bottoms[base], "k"), self._cache(bottoms[base + 1], "v")
        if past_k is not None and n_qkv > 1:
            xk, xv = past_k, past_v   # cross-attention: the cache already holds the encoded source
        else:
            xk = attention.split_heads(attention.project(k, self.k_weight, self.k_bias), heads)
            xv = attention.split_heads(attention.project(v, self.v_weight, self.v_bias), heads)
            if past_k is not None:
                xk = np.concatenate([past_k, xk], axis=1)
                xv = np.concatenate([past_v, xv], axis=1)

        out = attention.attention(xq, xk, xv, mask)
        y = attention.project(attention.merge_heads(out), self.out_weight, self.out_bias)
        y = np.ascontiguousarray(y, np.float32)
        if self.kv_cache:
            return [y, np.ascontiguousarray(xk, np.float32), np.ascontiguousarray(xv, np.float32)]
        return [y]

    @staticmethod
    def _rows(x: np.ndarray, dim: int, name: str) -> np.ndarray:
        x = np.asarray(x, np.float32)
        if x.ndim == 1:
            x = x.reshape(1, -1)
        if x.ndim != 2 or x.shape[1] != dim:
            raise ShapeError(f"{name} must be (seq_len, {dim}), got {x.shape}")
        return x

    def _cache(self, x: np.ndarray, name: str):
        """A cached k/v blob as (heads, past_len, head_dim), or None when empty."""
        x = np.asarray(x, np.float32)
        if x.size == 0:
            return None
        head_dim = self.embed_dim // self.num_heads
        if x.ndim == 2 and self.num_heads == 1:
            x = x[None]
        if x.ndim != 3 or x.shape[0] != self.num_heads or x.shape[2] != head_dim:
            raise ShapeError(f"cached {name} must be (num_heads={self.num_heads}, past_len, "
                             f"head_dim={head_dim}), got {x.shape}")
        return x
