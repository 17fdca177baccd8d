"""Which layers a GPU plan may fold into the dispatch of a layer next to them.

Into the dispatch before them (each saves a dispatch and a barrier, once per block of a
residual net or a decoder):

  Eltwise -> ReLU                   the ReLU applies in the Eltwise's last fold
                                    (forward_gpu's `activation`, takes_gpu_activation)
  Convolution -> Eltwise sum        the other summand is added in the convolution's
                [-> ReLU]           epilogue, then the ReLU (forward_gpu's `residual` and
                                    `activation`), when the convolution has no activation
                                    of its own (accepts_residual)
  Gemm -> BinaryOp add              a decoder's residual sum after a one-row linear layer:
                                    the summand stands in for the matrix-vector kernel's
                                    bias, when the shapes agree as it records
                                    (takes_residual; otherwise both record on their own)
  Gemm -> BinaryOp mul by a         a decoder scaling each block's output before its residual
    constant [-> BinaryOp add]      sum (MiniCPM): the matrix-vector kernel multiplies the
                                    product before the bias (forward_gpu's `scale`, when it
                                    takes it as it records: takes_scale; otherwise each of
                                    the layers records on its own), then adds the summand
  Gemm [-> activation],             a decoder's gate and up projections and their product:
  Gemm -> BinaryOp mul              one matrix-vector dispatch computes both one-row
                                    products and act(gate) * up (forward_gpu's `gated`,
                                    when the two take it as they record: takes_gated)
  Gemm -> Reshape/Permute           a decoder's q or k product and the RoPE of its one
    -> RotaryEmbed                  token: the matrix-vector kernel computes each rotation
                                    pair's rows side by side and rotates them (forward_gpu's
                                    `rope`), when the views prove, as the plan records, to
                                    keep the product's layout (takes_rope)
  RMSNorm -> Reshape/Permute        a decoder's per-head q or k norm and the RoPE after it
    -> RotaryEmbed                  (Qwen3): the norm's workgroup holds the head's row and
                                    rotates its pairs as it writes them, the same way

Into the dispatches after them:

  RMSNorm [-> Split] -> Gemms       a decoder's norm before its q, k, v (or gate and up)
                                    products: each one-row product normalises the norm's
                                    input as it reads it (forward_gpu's `prenorm`), when
                                    every reader takes it as it records (takes_prenorm;
                                    otherwise the norm and its Splits record as usual)
  RMSNorm [-> views] [-> RoPE]      a decoder's per-head q and k norms (Qwen3, Hunyuan) and
    -> SDPA q, and the same         a one-token RoPE after them, before an attention whose
    before its k head repeat        KV cache lives on the device: the attention normalises
                                    (and rotates) its q row and the step's key row itself
                                    (forward_gpu's `qk_norm`, when it takes them as the plan
                                    records: takes_qk_norm; fold_recording._fold_qk_norm; it
                                    comes before the RoPE-in-norm fold above, which takes
                                    the norms the attention refuses)
  SDPA -> Reshape/Permute -> Gemm   a decode step's attention and the o projection reading
                                    it: the attention leaves its splits' partial softmaxes
                                    and the product merges them as it loads its input
                                    (forward_gpu's `split_records`, a SplitRecords the
                                    product reads), when the views keep the output's layout,
                                    the product takes it (takes_split_merge) and the
                                    attention takes its one-dispatch kernel, all known as the
                                    plan records (fold_recording._split_merge_end)
  ExpandDims -> Tile -> Reshape     a decoder's kv heads repeated for grouped-query
    -> SDPA k or v                  attention, before an SDPA whose KV cache lives on the
                                    device: the cache write reads each head `repeat`
                                    times instead (forward_gpu's `repeat_heads`), when the
                                    three layers prove, as the plan records, to repeat
                                    whole heads of the input (fold_recording._repeat_of)

Here only what may fold is planned; fold_recording.py decides, as the plan records, what
does. A blob a fold skips is never stored: a fold needs it to have no other reader in the
plan and not to be the blob asked for, and a later extract of it records a plan of its own,
which computes it. The results are those of the layers apart, up to rounding: a folded
activation or sum skips one rounding to the storage type in fp16 storage, a folded norm
scales the product instead of its input, and a folded RoPE rotates the product in fp32.
"""

from __future__ import annotations


class Fusions:
    """The folding decisions of one plan."""

    def __init__(self) -> None:
        self.activation: dict[int, int] = {}  # producer -> the activation layer it applies
        self.residual: dict[int, tuple] = {}  # convolution -> (Eltwise, other summand blob, activation or None)
        self.folded: set[int] = set()         # layers recorded inside another's dispatch
        self.prenorm: dict[int, tuple] = {}   # RMSNorm -> (its Gemm readers, the Splits between)
        self.gated: dict[int, tuple] = {}     # the earlier of a gate and up pair -> (gate, up, BinaryOp mul)
        self.repeat: dict[int, tuple] = {}    # ExpandDims -> (Tile, Reshape, SDPA, input slot)
        self.rope: dict[int, tuple] = {}      # Gemm -> (the Reshape/Permute views after it, RotaryEmbed)
        self.scaled: dict[int, int] = {}      # Gemm -> the BinaryOp multiplying its output by a constant
        # the earlier of an SDPA's q and k norms -> (SDPA, its q chain, its k chain), each chain
        # (RMSNorm, the views after it, RotaryEmbed or None, the chain's last blob)
        self.qk_norm: dict[int, tuple] = {}
        self.split_merge: dict[int, tuple] = {}  # SDPA -> (the views after it, the Gemm reading them)

    def output_layer(self, li: int) -> int:
        """The layer whose top blobs the (possibly fused) dispatch of layer `li` produces."""
        if li in self.residual:
            eltwise, _, activation = self.residual[li]
            return activation if activation is not None else eltwise
        if li in self.scaled:
            return self.scaled[li]
        return self.activation.get(li, li)

    def unfolded(self, li: int) -> list:
        """Layer li and the layers folded after it by a scaling or a residual sum, in order:
        what records one by one when li refuses the fold as it records."""
        chain = [li] + ([self.scaled[li]] if li in self.scaled else [])
        if li in self.residual:
            eltwise, _, activation = self.residual[li]
            chain += [eltwise] + ([activation] if activation is not None else [])
        return chain


def plan_fusions(graph, schedule: list, target: int, on_gpu) -> Fusions:
    """Fusions for recording `schedule` (layer indices, in order) towards blob `target`;
    `on_gpu(layer)` says whether a layer runs a shader in this net."""
    fusions = Fusions()
    position = {li: i for i, li in enumerate(schedule)}
    layers, blobs = graph.layers, graph.blobs

    def sole_reader(layer):
        """The one scheduled layer reading `layer`'s single output, when nothing else does."""
        if len(layer.tops) != 1 or layer.tops[0] == target:
            return None
        readers = blobs[layer.tops[0]].consumers
        return readers[0] if len(readers) == 1 and readers[0] in position else None

    def activation_after(li):
        """The ReLU-like layer that can be folded after layer li, or None."""
        reader = sole_reader(layers[li])
        if reader is None:
            return None
        act = layers[reader]
        if (hasattr(act, "activation_spec") and on_gpu(act) and len(act.tops) == 1
                and act.tops[0] != layers[li].tops[0]):
            return reader
        return None

    for li in schedule:
        layer = layers[li]
        if hasattr(layer, "takes_scale") and on_gpu(layer):
            reader = sole_reader(layer)
            if reader is not None and _is_constant_scaling(layers[reader]) and on_gpu(layers[reader]):
                fusions.scaled[li] = reader
                fusions.folded.add(reader)

    scaled_by = {mul: li for li, mul in fusions.scaled.items()}
    for li in schedule:
        eltwise = layers[li]
        if li in fusions.folded or not _is_plain_sum(eltwise) or not on_gpu(eltwise):
            continue
        conv_li, other = _residual_producer(eltwise, li, layers, blobs, position, sole_reader, on_gpu, scaled_by)
        if conv_li is not None:
            act = activation_after(li)
            fusions.residual[conv_li] = (li, other, act)
            fusions.folded.add(li)
            if act is not None:
                fusions.folded.add(act)

    for li in schedule:
        layer = layers[li]
        if li in fusions.folded or li in fusions.residual:
            continue
        if getattr(layer, "takes_gpu_activation", False) and on_gpu(layer):
            act = activation_after(li)
            if act is not None and act not in fusions.folded:
                fusions.activation[li] = act
                fusions.folded.add(act)

    for li in schedule:
        layer = layers[li]
        if (hasattr(layer, "takes_rope") and on_gpu(layer) and li not in fusions.activation
                and li not in fusions.residual and li not in fusions.scaled):
            chain = _rope_chain(li, layers, sole_reader, on_gpu)
            if chain is not None:
                fusions.rope[li] = chain

    activation_of = {act: li for li, act in fusions.activation.items()}
    for li in schedule:
        if _is_plain_product(layers[li]) and on_gpu(layers[li]):
            pair = _gated_pair(li, layers, blobs, position, sole_reader, on_gpu, fusions, activation_of)
            if pair is not None:
                gate, up = pair
                fusions.gated[min(gate, up, key=position.get)] = (gate, up, li)

    for li in schedule:
        layer = layers[li]
        if layer.type == "SDPA" and on_gpu(layer) and getattr(layer, "kv_cache", 0):
            for slot in (1, 2):
                chain = _head_repeat_chain(layer.bottoms[slot], layers, blobs, position, sole_reader, on_gpu)
                if chain is not None and sole_reader(layers[chain[2]]) == li:
                    fusions.repeat[chain[0]] = (chain[1], chain[2], li, slot)

    for li in schedule:
        if layers[li].type == "SDPA" and on_gpu(layers[li]):
            chain = _split_merge_chain(li, layers, blobs, position, target, sole_reader, on_gpu)
            if chain is not None:
                fusions.split_merge[li] = chain

    for expand, (_, _, sdpa_li, slot) in fusions.repeat.items():
        sdpa = layers[sdpa_li]
        if slot != 1 or not sdpa.bottoms:
            continue
        q_chain = _norm_chain(sdpa.bottoms[0], layers, blobs, position, target, on_gpu)
        k_chain = _norm_chain(layers[expand].bottoms[0], layers, blobs, position, target, on_gpu)
        if q_chain is not None and k_chain is not None and (q_chain[2] is None) == (k_chain[2] is None):
            fusions.qk_norm[min(q_chain[0], k_chain[0], key=position.get)] = (sdpa_li, q_chain, k_chain)

    for li in schedule:
        if layers[li].type == "RMSNorm" and on_gpu(layers[li]):
            readers = _prenorm_readers(layers[li], layers, blobs, position, target, on_gpu)
            if readers is not None:
                fusions.prenorm[li] = readers
    return fusions


def _is_plain_product(layer) -> bool:
    """A BinaryOp multiplying two different blobs (shapes are checked as the plan records)."""
    return (layer.type == "BinaryOp" and getattr(layer, "op_type", None) == 2 and not getattr(layer, "with_scalar", 0)
            and len(layer.bottoms) == 2 and layer.bottoms[0] != layer.bottoms[1])


def _gated_pair(li, layers, blobs, position, sole_reader, on_gpu, fusions, activation_of):
    """(gate, up) Gemms whose outputs only BinaryOp `li` multiplies, the gate's through an
    activation folded into it (if either has one), or None."""
    sides = []
    for bi in layers[li].bottoms:
        producer = blobs[bi].producer
        if producer not in position:
            return None
        gemm = activation_of.get(producer, producer)  # a folded activation stands for its Gemm
        layer = layers[gemm]
        if (not hasattr(layer, "takes_gated") or not on_gpu(layer) or gemm in fusions.folded
                or gemm in fusions.residual or sole_reader(layers[producer]) != li
                or (gemm != producer and sole_reader(layer) != producer)):
            return None
        sides.append((gemm, gemm != producer))
    (first, first_act), (second, second_act) = sides
    if first == second or (first_act and second_act):
        return None
    return (second, first) if second_act else (first, second)


def _after_views(reader, layers, sole_reader, on_gpu):
    """(the Reshape/Permute views from layer `reader` on, at most 3, each the only reader of
    the one before, and the layer after them, the last one's only reader), or None where the
    chain ends or a view runs off the GPU."""
    views = []
    while reader is not None and layers[reader].type in ("Reshape", "Permute") and len(views) < 3:
        if not on_gpu(layers[reader]):
            return None
        views.append(reader)
        reader = sole_reader(layers[reader])
    return None if reader is None else (views, reader)


def _rope_chain(li, layers, sole_reader, on_gpu):
    """(Reshape/Permute views, RotaryEmbed) reading Gemm li's output, each the only reader of
    the one before, the RoPE's x the last view's output; or None."""
    found = _after_views(sole_reader(layers[li]), layers, sole_reader, on_gpu)
    if found is None:
        return None
    views, reader = found
    if layers[reader].type != "RotaryEmbed" or not on_gpu(layers[reader]):
        return None
    x = layers[views[-1]].tops[0] if views else layers[li].tops[0]
    if layers[reader].bottoms[0] != x or len(layers[reader].bottoms) != 3:
        return None
    return views, reader


def _split_merge_chain(li, layers, blobs, position, target, sole_reader, on_gpu):
    """(Reshape/Permute views, Gemm) after SDPA li's output (its first of three), each the only
    reader of the blob before it and none of those blobs the target; or None."""
    out = layers[li].tops[0]
    readers = blobs[out].consumers
    first = readers[0] if out != target and len(readers) == 1 and readers[0] in position else None
    found = _after_views(first, layers, sole_reader, on_gpu)
    if found is None:
        return None
    views, reader = found
    x = layers[views[-1]].tops[0] if views else out
    product = layers[reader]
    if not hasattr(product, "takes_split_merge") or not on_gpu(product) or list(product.bottoms) != [x]:
        return None
    return views, reader


def _head_repeat_chain(bi, layers, blobs, position, sole_reader, on_gpu):
    """(ExpandDims, Tile, Reshape) producing blob bi, each the only reader of the one before,
    or None. Whether they repeat whole heads is checked as the plan records."""
    chain = []
    for kind in ("Reshape", "Tile", "ExpandDims"):
        li = blobs[bi].producer
        if li not in position or layers[li].type != kind or len(layers[li].bottoms) != 1 or not on_gpu(layers[li]):
            return None
        if chain and sole_reader(layers[li]) != chain[-1]:
            return None
        chain.append(li)
        bi = layers[li].bottoms[0]
    return tuple(reversed(chain))


def _prenorm_readers(norm, layers, blobs, position, target, on_gpu):
    """(Gemm readers, Splits between) of an RMSNorm whose output reaches only Gemms that may
    take it into their dispatch, or None. No blob on the way may be the target. Readers this
    plan does not run are no concern: the norm's blob is never stored, so a later extract
    for them records the norm again."""
    gemms, splits = [], []
    pending = list(norm.tops)
    if len(pending) != 1:
        return None
    while pending:
        bi = pending.pop()
        if bi == target or not blobs[bi].consumers:
            return None
        for reader in blobs[bi].consumers:
            layer = layers[reader]
            if reader not in position:
                continue
            if not on_gpu(layer):
                return None
            if layer.type == "Split":
                splits.append(reader)
                pending.extend(layer.tops)
            elif hasattr(layer, "takes_prenorm") and list(layer.bottoms) == [bi]:
                gemms.append(reader)
            else:
                return None
    return (gemms, splits) if gemms else None


def _norm_chain(bi, layers, blobs, position, target, on_gpu):
    """(RMSNorm, [Reshape/Permute views after it], RotaryEmbed or None, bi) when blob bi comes
    from an RMSNorm through such views and at most one RoPE (last), each blob on the way read
    only by the next layer and none of them the target; else None."""
    end, views, rope = bi, [], None
    while len(views) < 4:
        li = blobs[bi].producer
        if li not in position or bi == target or len(blobs[bi].consumers) != 1 or not on_gpu(layers[li]):
            return None
        layer = layers[li]
        if layer.type == "RMSNorm" and len(layer.bottoms) == 1:
            return li, list(reversed(views)), rope, end
        if layer.type == "RotaryEmbed" and rope is None and not views and len(layer.bottoms) == 3:
            rope = li
        elif layer.type in ("Reshape", "Permute") and len(layer.bottoms) == 1:
            views.append(li)
        else:
            return None
        bi = layer.bottoms[0]
    return None


def _is_constant_scaling(layer) -> bool:
    """A BinaryOp multiplying its one input by a constant."""
    return (layer.type == "BinaryOp" and getattr(layer, "op_type", None) == 2 and bool(getattr(layer, "with_scalar", 0))
            and len(layer.bottoms) == 1 and len(layer.tops) == 1)


def _is_plain_sum(layer) -> bool:
    """An Eltwise adding exactly two different blobs with unit (or no) coefficients, or a
    BinaryOp adding two different blobs (whose shapes the producer checks when it records:
    a broadcasting sum is recorded on its own)."""
    if len(layer.bottoms) != 2 or layer.bottoms[0] == layer.bottoms[1]:
        return False
    if layer.type == "BinaryOp":
        return getattr(layer, "op_type", None) == 0 and not getattr(layer, "with_scalar", 0)
    if layer.type != "Eltwise" or getattr(layer, "op_type", None) != 1:
        return False
    coeffs = layer.sum_coeffs()
    return coeffs is None or all(float(c) == 1.0 for c in coeffs[:2])


def _residual_producer(eltwise, li, layers, blobs, position, sole_reader, on_gpu, scaled_by):
    """(convolution index, other summand blob) for folding `eltwise` into a convolution that
    produces one summand, directly or through a scaling folded into it (scaled_by: the
    scaling's index -> the product's), or (None, None). The other summand must exist before
    that convolution is recorded; of two candidates the later one is taken."""
    best = (None, None)
    for mine, other in ((0, 1), (1, 0)):
        bi, other_bi = eltwise.bottoms[mine], eltwise.bottoms[other]
        producer = blobs[bi].producer
        conv_li = scaled_by.get(producer, producer)
        if conv_li not in position or sole_reader(layers[producer]) != li:
            continue
        conv = layers[conv_li]
        if not (hasattr(conv, "accepts_residual") and on_gpu(conv) and conv.accepts_residual()):
            continue
        other_producer = blobs[other_bi].producer
        if other_producer in position and position[other_producer] > position[conv_li]:
            continue
        if best[0] is None or position[conv_li] > position[best[0]]:
            best = (conv_li, other_bi)
    return best
