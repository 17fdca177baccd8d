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

int8_scale_term (18): the four weights come int8 (then their scales: q, k, v one per
row, out one) and, as in ncnn, all six products run in int8 (cpu_fallback/attention_int8.py).
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import attention, attention_int8
from vkncnn.cpu_fallback.conv import float2int8
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.ops.dispatch_options import arithmetic_fp16, as_pack1, out_elempack, storage_is_fp16, workgroup_cap
from vkncnn.gpu.ops.matrix_product import GemmOperand, record_gemm
from vkncnn.gpu.vulkan.pipeline import shader_pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("MultiHeadAttention")
class MultiHeadAttention(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

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
        if self.int8_scale_term in (4, 5, 6) or self.int8_scale_term >= 400:
            # 4-6 ncnn refuses; 400+ are its weight block quantizations (4/6/8-bit blocks)
            raise ParamError(f"MultiHeadAttention quantize_term (18={self.int8_scale_term}) is not supported")
        if self.int8_scale_term:
            self.support_vulkan = False  # int8 products run on numpy (exact integer sums)
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
            if w.dtype == np.int8 and not self.int8_scale_term:
                raise WeightError(f"{name} weight is int8 but int8_scale_term (18) is 0")
            return w.reshape(out_dim, in_dim), mb.load(out_dim, 1)

        self.q_weight, self.q_bias = linear(e, self.qdim, "q")
        self.k_weight, self.k_bias = linear(e, self.kdim, "k")
        self.v_weight, self.v_bias = linear(e, self.vdim, "v")
        self.out_weight, self.out_bias = linear(self.qdim, e, "out")
        if self.int8_scale_term:
            self._load_int8(mb)
        return 0

    def _load_int8(self, mb) -> None:
        """Scales after the weights: q, k, v one per output row, out one for all. The int8
        weights stay int8 for the products; the float copies are what they stand for."""
        e = self.embed_dim
        self.int8_scales = {"q": mb.load(e, 1), "k": mb.load(e, 1), "v": mb.load(e, 1),
                            "out": np.float32(mb.load(1, 1)[0])}
        self.int8_weights = {}
        for name in ("q", "k", "v", "out"):
            w, s = getattr(self, f"{name}_weight"), self.int8_scales[name]
            s_rows = s if name != "out" else np.full(w.shape[0], s, np.float32)
            if w.dtype != np.int8:  # stored fp32: quantize it with its scales
                w = float2int8(w * s_rows[:, None])
            self.int8_weights[name] = w
            with np.errstate(divide="ignore", invalid="ignore"):
                fp = np.where(s_rows[:, None] == 0, 0, w.astype(np.float32) / s_rows[:, None])
            setattr(self, f"{name}_weight", np.ascontiguousarray(fp, np.float32))

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
        int8 = bool(self.int8_scale_term) and getattr(opt, "use_int8_inference", True)
        project = self._project_int8 if int8 else self._project

        xq = attention.split_heads(project(q, "q", self.scale), heads)
        past_k = past_v = None
        if self.kv_cache:
            base = n_qkv + self.attn_mask
            past_k, past_v = self._cache(bottoms[base], "k"), self._cache(bottoms[base + 1], "v")
        if past_k is not None and n_qkv > 1:
            xk, xv = past_k, past_v   # cross-attention: the cache already holds the encoded source
        else:
            xk = attention.split_heads(project(k, "k"), heads)
            xv = attention.split_heads(project(v, "v"), heads)
            if past_k is not None:
                xk = np.concatenate([past_k, xk], axis=1)
                xv = np.concatenate([past_v, xv], axis=1)

        # every query against every key: input lengths, not weights, make the scores large
        check_alloc(opt, (heads, xq.shape[1], xk.shape[1]), 4, "the attention scores")
        if int8:
            out = attention_int8.attention_int8(xq, xk, xv, mask)
            y = attention_int8.out_project_int8(attention.merge_heads(out), self.int8_weights["out"],
                                                self.int8_scales["out"], self.out_bias)
        else:
            out = attention.attention(xq, xk, xv, mask)
            y = attention.project(attention.merge_heads(out), self.out_weight, self.out_bias)
        y = np.ascontiguousarray(y, np.float32)
        if self.kv_cache:
            return [y, np.ascontiguousarray(xk, np.float32), np.ascontiguousarray(xv, np.float32)]
        return [y]

    def _project(self, x, name: str, alpha: float = 1.0) -> np.ndarray:
        y = attention.project(x, getattr(self, f"{name}_weight"), getattr(self, f"{name}_bias"))
        return y * np.float32(alpha) if alpha != 1.0 else y

    def _project_int8(self, x, name: str, alpha: float = 1.0) -> np.ndarray:
        return attention_int8.project_int8(x, self.int8_weights[name], self.int8_scales[name],
                                           getattr(self, f"{name}_bias"), alpha)

    # -- GPU -----------------------------------------------------------------------------------
    # Six dispatches, all but one of shaders/gemm.comp, whose strides do every head split
    # and merge (no transposes are materialised):
    #   xq = (q Wq^T + bq) * scale                     (q_len, embed)
    #   xk, xv = k Wk^T + bk, v Wv^T + bv, per head    (heads, kv_len, head_dim), after any cache
    #   scores = xq_h xk_h^T + mask, per head          (heads, q_len, kv_len)
    #   softmax over kv_len, in place                  (multiheadattention_softmax.comp)
    #   merged = scores_h xv_h, per head               (q_len, embed): head h in columns h*head_dim..
    #   y = merged Wout^T + bout                       (q_len, qdim)
    def upload_model(self, cmd, opt) -> int:
        def up(a):
            return cmd.record_upload(np.ascontiguousarray(a, np.float32), opt)

        self.gpu_weights = {name: (up(getattr(self, f"{name}_weight")), up(getattr(self, f"{name}_bias")))
                            for name in ("q", "k", "v", "out")}
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        n_qkv = len(bottoms) - self.attn_mask - 2 * self.kv_cache
        if n_qkv not in (1, 2, 3):
            raise ShapeError(f"MultiHeadAttention (attn_mask={self.attn_mask}, kv_cache={self.kv_cache}) "
                             f"takes {1 + self.attn_mask + 2 * self.kv_cache}-{3 + self.attn_mask + 2 * self.kv_cache} "
                             f"inputs, got {len(bottoms)}")
        blobs = [as_pack1(x, cmd, opt) if not x.empty() else x for x in bottoms]
        q, q_len = self._gpu_rows(blobs[0], self.qdim, "q")
        k, k_len = self._gpu_rows(blobs[0 if n_qkv == 1 else 1], self.kdim, "k")
        v, v_len = self._gpu_rows(blobs[min(n_qkv - 1, 2)], self.vdim, "v")
        if k_len != v_len:
            raise ShapeError(f"k has {k_len} rows but v has {v_len}")
        fp16 = storage_is_fp16(q)
        scalar = q.scalar_size()
        alloc = cmd.blob_allocator(opt)
        heads, embed = self.num_heads, self.embed_dim
        hd = embed // heads

        def linear(x, rows, in_dim, name, out, alpha=1.0):
            weight, bias = self.gpu_weights[name]
            record_gemm(self, cmd, fp16, rows, out.n, in_dim, GemmOperand(x, in_dim, 1),
                        GemmOperand(weight, 1, in_dim, s_bh=out.w_step * in_dim),
                        GemmOperand(bias, 0, 1, s_bh=out.w_step), out.operand, batch=out.batch, alpha=alpha,
                        fp16_arithmetic=arithmetic_fp16(opt, fp16))  # the attention products stay fp32

        xq = VkMat.for_numpy_shape((q_len, embed), 1, scalar, alloc)
        linear(q, q_len, self.qdim, "q", _Out(GemmOperand(xq, embed, 1), embed, 1, 0), alpha=self.scale)

        past_k = past_v = None
        if self.kv_cache:
            base = n_qkv + self.attn_mask
            past_k, past_v = self._gpu_cache(blobs[base], "k"), self._gpu_cache(blobs[base + 1], "v")
        if past_k is not None and n_qkv > 1:
            # cross-attention: the cache already holds the encoded source; hand out copies
            xk, xv = cmd.record_clone(past_k, opt), cmd.record_clone(past_v, opt)
            kv_len = past_k.h
        else:
            past = past_k.h if past_k is not None else 0
            kv_len = past + k_len
            xk = VkMat.for_numpy_shape((heads, kv_len, hd), 1, scalar, alloc)
            xv = VkMat.for_numpy_shape((heads, kv_len, hd), 1, scalar, alloc)
            for x, rows, dim, name, dst, cached in ((k, k_len, self.kdim, "k", xk, past_k),
                                                    (v, v_len, self.vdim, "v", xv, past_v)):
                if cached is not None:
                    self._record_copy_past(cmd, fp16, cached, dst)
                out = GemmOperand(dst, hd, 1, s_bh=kv_len * hd, off=past * hd)
                linear(x, rows, dim, name, _Out(out, hd, heads, hd))

        # scores (heads, q_len, kv_len) = xq_h xk_h^T (+ mask through the C operand)
        check_alloc(opt, (heads, q_len, kv_len), scalar, "the attention scores")
        scores = VkMat.for_numpy_shape((heads, q_len, kv_len), 1, scalar, alloc)
        mask = self._gpu_mask(blobs[n_qkv], heads, q_len, kv_len) if self.attn_mask else None
        record_gemm(self, cmd, fp16, q_len, kv_len, hd, GemmOperand(xq, embed, 1, s_bh=hd),
                    GemmOperand(xk, 1, hd, s_bh=kv_len * hd), mask,
                    GemmOperand(scores, kv_len, 1, s_bh=q_len * kv_len), batch=heads)
        rows = heads * q_len
        lx = min(workgroup_cap(self.vkdev), max(32, 1 << (kv_len - 1).bit_length()))
        gx = max(1, min(rows, 32768))  # an empty q (no rows) dispatches nothing
        softmax = shader_pipeline(self.vkdev, "multiheadattention_softmax", fp16, [], (lx, 1, 1))
        cmd.record_pipeline(softmax, [scores], [rows, kv_len], (gx * lx, -(-rows // gx), 1))

        # merged (q_len, embed) = scores_h xv_h, written straight into head h's columns
        merged = VkMat.for_numpy_shape((q_len, embed), 1, scalar, alloc)
        record_gemm(self, cmd, fp16, q_len, hd, kv_len, GemmOperand(scores, kv_len, 1, s_bh=q_len * kv_len),
                    GemmOperand(xv, hd, 1, s_bh=kv_len * hd), None, GemmOperand(merged, embed, 1, s_bh=hd),
                    batch=heads)
        ep = out_elempack(q_len, opt)
        top = VkMat.for_numpy_shape((q_len, self.qdim), ep, scalar, alloc)
        linear(merged, q_len, embed, "out", _Out(GemmOperand(top, self.qdim * ep, ep, elempack=ep), self.qdim, 1, 0))
        for t in (xq, scores, merged):
            t.release()  # back to the pool once the recorded commands are done with them
        return [top, xk, xv] if self.kv_cache else [top]

    def _gpu_rows(self, x, dim: int, name: str):
        shape = x.numpy_shape()
        if len(shape) == 1:
            shape = (1, shape[0])
        if len(shape) != 2 or shape[1] != dim:
            raise ShapeError(f"{name} must be (seq_len, {dim}), got {x.numpy_shape()}")
        return x, shape[0]

    def _gpu_cache(self, x, name: str):
        """A cached k/v blob as a (heads, past_len, head_dim) VkMat, or None when empty."""
        if x.empty():
            return None
        shape = x.numpy_shape()
        head_dim = self.embed_dim // self.num_heads
        if len(shape) == 2 and self.num_heads == 1:
            shape = (1,) + shape
        if len(shape) != 3 or shape[0] != self.num_heads or shape[2] != head_dim:
            raise ShapeError(f"cached {name} must be (num_heads={self.num_heads}, past_len, "
                             f"head_dim={head_dim}), got {x.numpy_shape()}")
        return x if x.dims == 3 else x.reshape(shape[2], shape[1], 1, shape[0], 3)

    def _record_copy_past(self, cmd, fp16: bool, past, dst) -> None:
        block = past.h * past.w
        pipeline = shader_pipeline(self.vkdev, "multiheadattention_copy", fp16, [], (64, 1, 1))
        cmd.record_pipeline(pipeline, [past, dst], [block, past.c, dst.h * dst.w], (block, past.c, 1))

    def _gpu_mask(self, mask, heads: int, q_len: int, kv_len: int) -> GemmOperand:
        """The additive mask as gemm.comp's C operand: numpy broadcasting through zero strides."""
        shape = mask.numpy_shape()
        full = (heads, q_len, kv_len)
        if len(shape) > 3 or any(s not in (1, f) for s, f in zip(shape[::-1], full[::-1])):
            raise ShapeError(f"attention mask {shape} does not broadcast against "
                             f"(heads, q_len, kv_len) = {full}")
        padded = (1,) * (3 - len(shape)) + tuple(shape)
        strides = [int(np.prod(padded[i + 1:])) if padded[i] > 1 else 0 for i in range(3)]
        return GemmOperand(mask, strides[1], strides[2], s_bh=strides[0])

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


class _Out:
    """Where a projection writes: the output operand, its width n, and, for a projection split
    per head, the number of heads (the batch) and the weight/bias row step between heads."""

    __slots__ = ("batch", "n", "operand", "w_step")

    def __init__(self, operand, n: int, batch: int, w_step: int) -> None:
        self.operand, self.n, self.batch, self.w_step = operand, n, batch, w_step
