"""The folds an ItemRecorder decides as it records, from the shapes it sees (fusion.py
plans which layers may fold; whether they do is known only when the blobs exist).

Each returns False (or None) to leave the layers to record on their own:

    _fold_prenorm   an RMSNorm whose Gemm readers normalise its input themselves
    _record_gated   a gate and an up Gemm and their product in one dispatch
    _fold_repeat    the Tile repeating kv heads, done by a device KV cache's write
    _rope_fold      a one-token RoPE as the epilogue of the product (or norm) before it
    _fold_qk_norm   the per-head q and k norms (and their RoPE) done by the attention after them
    _split_merge_end  an attention's splits merged by the product reading its output

The chains of views and Tiles in between are proven on an index array of the step's shape
(_evaluate_chain): a fold happens only where those layers move the values as the fused
kernel assumes, whatever their parameters say.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..layer import layer_failure
from .kv_cache import KvCacheMat
from .ops import data_movement as gather
from .vulkan.device_limits import KernelUnsupported

# a chain is evaluated on an index array of its input's shape up to this many values (a
# decode step's few rows; a long prefill keeps the layers apart)
CHAIN_CHECK_MAX_VALUES = 1 << 16


class LayerToCpu(Exception):
    """Raised out of a half-recorded plan: `layer` must run on the CPU (why: KernelUnsupported)."""

    def __init__(self, layer, why: KernelUnsupported) -> None:
        super().__init__(str(why))
        self.layer, self.why = layer, why


@contextmanager
def recording_on_gpu(layer):
    """A layer's GPU recording: a kernel the device cannot run sends the layer to the CPU
    (LayerToCpu), any other failure is reported as the layer's."""
    try:
        yield
    except KernelUnsupported as e:
        raise LayerToCpu(layer, e) from e
    except LayerToCpu:
        raise  # a layer recorded inside this one's recording: it, not this one, goes to the CPU
    except Exception as e:
        raise layer_failure(layer, e, "on GPU") from e


class FoldRecording:
    """The record-time folds of ItemRecorder (which provides graph, device, host, owned,
    skipped, prenormed, repeated, qk_norms, cmd, opt, on_device, store, read_later and
    _wanted_elempack)."""

    def _fold_prenorm(self, li: int, norm, readers: tuple) -> bool:
        """Fold RMSNorm `norm` into its Gemm readers if each takes it for these shapes: then
        the norm and the Splits after it record nothing, and the Gemms read its input."""
        gemms, splits = readers
        source = norm.bottoms[0]
        x = self.on_device(source, self._wanted_elempack(norm, source))
        if not all(self.graph.layers[g].takes_prenorm(x, norm) for g in gemms):
            return False
        for bi in [norm.tops[0]] + [bi for s in splits for bi in self.graph.layers[s].tops]:
            self.prenormed[bi] = (source, norm)
        self.skipped.update(splits)
        self.read_later(source, len(gemms))  # the Gemms read the input in the norm's stead
        return True

    def _fold_repeat(self, expand, chain: tuple) -> bool:
        """Fold ExpandDims -> Tile -> Reshape into the SDPA after them if the SDPA writes a
        device KV cache and the three repeat whole heads of their input (evaluated on an
        index array of its shape): the Tile and the Reshape then record nothing."""
        tile_li, reshape_li, sdpa_li, slot = chain
        layers = self.graph.layers
        sdpa, source = layers[sdpa_li], expand.bottoms[0]
        cache = sdpa.bottoms[(4 if sdpa.attn_mask else 3) + slot - 1]
        made = source in self.device or source in self.host
        if not made or not isinstance(self.device.get(cache), KvCacheMat):
            return False
        x = self.on_device(source, self._wanted_elempack(sdpa, source))
        repeat = _repeat_of(tuple(x.numpy_shape()), [expand, layers[tile_li], layers[reshape_li]], self.opt)
        if repeat is None:
            return False
        self.repeated[layers[reshape_li].tops[0]] = (source, repeat, x)
        self.skipped.update((tile_li, reshape_li))
        self.read_later(source, 1)  # the SDPA reads the input in the chain's stead
        return True

    def _rope_fold(self, layer, chain: tuple, x, prenorm):
        """((mode, dim, cos, sin), the RoPE's input shape) if the one-token RotaryEmbed after
        `layer` (a Gemm or an RMSNorm, reading x) can fold into its dispatch: the views
        between keep its output's layout (evaluated on an index array), cos and sin are
        made, the layer takes it; else None."""
        views, rope_li = chain
        layers = self.graph.layers
        rope = layers[rope_li]
        shape = layer.rope_source_shape(x)
        if shape is None or any(bi not in self.device and bi not in self.host for bi in rope.bottoms[1:]):
            return None
        seen = _layout_kept_shape(shape, [layers[v] for v in views], self.opt)
        if seen is None or len(seen) != 3 or seen[1] != 1:
            return None
        dim = seen[-1]
        cos, sin = (self.on_device(bi, 1) for bi in rope.bottoms[1:])
        if not layer.takes_rope(x, dim, cos, sin, prenorm):
            return None
        return (2 if rope.interleaved else 1, dim, cos, sin), seen

    def _fold_qk_norm(self, plan: tuple) -> bool:
        """Fold an SDPA's per-head q and k RMSNorms, the views after them and their one-token
        RoPE into the SDPA, if it takes them for these shapes (SDPA.takes_qk_norm): the chains'
        last blobs become views of the norms' inputs, the chains record nothing, and the SDPA
        normalises (and rotates) q and the step's key row itself."""
        sdpa_li, q_chain, k_chain = plan
        layers = self.graph.layers
        sdpa = layers[sdpa_li]
        past = 4 if sdpa.attn_mask else 3
        caches = [self.device.get(bi) for bi in sdpa.bottoms[past:past + 2]]
        sides = []
        for norm_li, views, rope_li, end in (q_chain, k_chain):
            norm = layers[norm_li]
            x = self.device.get(norm.bottoms[0])
            if x is None or x.elempack != 1 or norm.gamma is None:
                return False
            seen = _layout_kept_shape(tuple(x.numpy_shape()), [layers[v] for v in views], self.opt)
            if seen is None:
                return False
            sides.append((norm, x, seen, rope_li, end))
        (q_norm, xq, q_shape, q_rope, q_end), (k_norm, xk, k_shape, k_rope, k_end) = sides
        d = q_shape[-1]
        if q_norm.affine_size != d or k_norm.affine_size != d or not sdpa.takes_qk_norm(q_shape, k_shape, caches, d):
            return False
        rope = None
        if q_rope is not None:
            rq, rk = layers[q_rope], layers[k_rope]
            same_angles = all(_split_source(self.graph, a) == _split_source(self.graph, b)
                              for a, b in zip(rq.bottoms[1:], rk.bottoms[1:]))
            if rq.interleaved or rk.interleaved or not same_angles:  # the kernel rotates (j, j + d/2) pairs
                return False
            angles = [self.on_device(bi, 1) for bi in rq.bottoms[1:]]
            if any(tuple(a.numpy_shape()) != (1, d // 2) or a.elempack != 1 for a in angles):
                return False
            # views of cos and sin: the skipped RoPEs' reads may release the blobs first
            rope = (1, *(gather.view(a, (1, d // 2)) for a in angles))
        self.store(q_end, gather.view(xq, q_shape))
        self.store(k_end, gather.view(xk, k_shape))
        self.qk_norms[sdpa_li] = (q_norm, k_norm, rope)
        for _, views, rope_li, _ in (q_chain, k_chain):
            self.skipped.update(views + ([rope_li] if rope_li is not None else []))
        self.skipped.update((q_chain[0], k_chain[0]))
        return True

    def _split_merge_end(self, sdpa, bottoms: list, chain: tuple):
        """The blob the product after SDPA `sdpa` reads (chain: the views between, the Gemm),
        if that product can merge the attention's splits for these inputs: one query row, views
        that keep the (heads, 1, dv) output's values in order as one row, a product that takes
        it (Gemm.takes_split_merge). Else None: the attention merges its splits itself."""
        views, gemm_li = chain
        layers = self.graph.layers
        q, v = bottoms[0].numpy_shape(), bottoms[2].numpy_shape()
        if len(q) != 3 or len(v) != 3 or q[1] != 1:
            return None
        heads, dv = q[0], v[2]
        seen = _layout_kept_shape((heads, 1, dv), [layers[li] for li in views], self.opt)
        if seen not in ((heads * dv,), (1, heads * dv)) or not layers[gemm_li].takes_split_merge(heads * dv):
            return None
        return layers[views[-1]].tops[0] if views else sdpa.tops[0]

    def _gemm_input(self, layer):
        """(input VkMat, RMSNorm folded into it or None) of a one-input layer, or None where the
        input is not made yet."""
        bi = layer.bottoms[0]
        if bi in self.prenormed:
            source, norm = self.prenormed[bi]
            return self.device[source], norm
        if bi not in self.device and bi not in self.host:
            return None
        return self.on_device(bi, self._wanted_elempack(layer, bi)), None

    def _record_gated(self, pair: tuple, fusions) -> bool:
        """Gate and up Gemms and the BinaryOp multiplying them as one dispatch, if the two take
        it for these shapes (Gemm.takes_gated); False leaves each to record on its own."""
        layers = self.graph.layers
        gate_li, up_li, mul_li = pair
        gate, up = layers[gate_li], layers[up_li]
        inputs = [self._gemm_input(gate), self._gemm_input(up)]
        if None in inputs:
            return False
        (x, norm), (x_up, up_norm) = inputs
        if norm is not up_norm or not gate.takes_gated(x, up, x_up, norm):
            return False
        act = fusions.activation.get(gate_li)
        spec = layers[act].activation_spec() if act is not None else None
        with recording_on_gpu(gate):
            tops = gate.forward_gpu([x], self.cmd, self.opt, activation=spec, prenorm=norm, gated=(up, x_up))
        self.store(layers[mul_li].tops[0], tops[0])
        self.skipped.update({gate_li, up_li, mul_li})
        return True


def _split_source(graph, bi: int) -> int:
    """The blob whose copies bi is, through Splits (bi itself when no Split made it)."""
    while True:
        li = graph.blobs[bi].producer
        if li < 0 or graph.layers[li].type != "Split":
            return bi
        bi = graph.layers[li].bottoms[0]


def _evaluate_chain(shape: tuple, chain: list, opt):
    """The layers of `chain` (one input, one output each) applied to an index array of
    `shape` (0, 1, 2, ... in order), or None where they do not take it or it is too large."""
    size = int(np.prod(shape))
    if not 0 < size <= CHAIN_CHECK_MAX_VALUES:
        return None
    out = np.arange(size, dtype=np.float32).reshape(shape)
    try:
        for layer in chain:
            out = layer.forward_cpu([out], opt)[0]
    except Exception:  # the chain does not take this shape: nothing to fold
        return None
    return out


def _layout_kept_shape(shape: tuple, views: list, opt):
    """The shape the views of `views` give a blob of `shape`, if they keep its values in
    memory order (a view, not a move); else None."""
    index = _evaluate_chain(shape, views, opt)
    if index is None or not np.array_equal(index.reshape(-1), np.arange(index.size)):
        return None
    return index.shape


def _repeat_of(shape: tuple, chain: list, opt) -> int | None:
    """r if the layers of `chain`, applied to a (heads, rows, width) blob, give each head r
    times in a row (numpy's repeat along axis 0), else None."""
    out = _evaluate_chain(shape, chain, opt) if len(shape) == 3 else None
    if out is None or out.ndim != 3 or out.shape[1:] != shape[1:] or out.shape[0] % shape[0]:
        return None
    index = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    repeat = out.shape[0] // shape[0]
    return repeat if np.array_equal(out, np.repeat(index, repeat, axis=0)) else None
