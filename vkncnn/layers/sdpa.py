"""SDPA: scaled dot-product attention with optional mask, grouped KV heads and a KV cache.

Inputs: q (heads, src, d), k (groups, cur, d), v (groups, cur, dv) [, mask (dst, src) or per
head] [, past_k, past_v]. With kv_cache the outputs also carry past+current k and v.

GPU: three dispatches per chunk of heads (shaders/sdpa_*.comp): q k^T * scale + mask into
an fp32 score buffer (4 x 4 register blocks per invocation), a row softmax in place, then
P v into the output (4 x 4 blocks again). A decode step (a few query rows) takes one
dispatch instead (sdpa_decode.comp: each head and row's keys split over workgroups, the last
to finish merging their softmaxes): the barriers between the three steps cost more than
their work there. With
kv_cache, sdpa_kvcat.comp first writes past+current k and v (the extra outputs), and the
attention reads those. Past k and v kept on the device between steps (KvCacheMat,
gpu/kv_cache.py) are written in place instead (sdpa_kvcache.comp, at the row the cache's
position buffer names; a decode step's single dispatch writes them itself); the attention
then reads every row of the cache's capacity, the mask hiding those past its length, and
the extra outputs are the caches themselves.
Heads are processed in chunks so the score buffer stays bounded.
Everything is pack1 (the runtime repacks inputs); int8_scale_term runs on the CPU.
"""

import numpy as np

from vkncnn.cpu_fallback import llm
from vkncnn.errors import GpuError, ShapeError
from vkncnn.gpu.kv_cache import KvCacheMat
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.ops.matrix_product import gemv_merge_pays
from vkncnn.gpu.ops.split_records import SplitRecords, record_words
from vkncnn.gpu.vulkan.pipeline import Pipeline, shader_pipeline, workgroup_cap
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

SCORES_BYTES = 64 << 20  # the fp32 score buffer of one chunk of heads stays below this
SOFTMAX_PER_THREAD_MAX_LEN = 256  # score rows up to this long: one invocation each
# Up to this many query rows (decode steps), P x V splits each output's sum over the keys
# across a workgroup of PV_SPLIT_LOCAL (sdpa_pv_split.comp): the 4 x 4 block kernel would
# give the few outputs one long serial loop each (docs/perf-notes.md).
PV_SPLIT_MAX_ROWS = 4
PV_SPLIT_LOCAL = 64
# Up to this many query rows and keys, one dispatch does scores, softmax and P x V
# (sdpa_decode.comp); longer key rows go back to the three steps, whose score and P x V
# dispatches spread over more workgroups than DECODE_MAX_SPLITS per head and row. At 8000
# keys the one split dispatch still took 2/3 of the three steps' time on the H100
# (docs/perf-notes.md); past 16384 (256 keys a split) it is not measured.
DECODE_MAX_ROWS = 4
DECODE_MAX_KEYS = 16384
DECODE_MAX_D = 256  # sdpa_decode.comp's MAX_D: the q row it keeps in shared memory
# sdpa_decode.comp's workgroup, and the most workgroups that split one (head, row)'s keys:
# a decode step has few heads, and one workgroup each left most of a GPU idle
# (docs/perf-notes.md). A split holds at least DECODE_LANE_KEYS keys for each of its
# summing lanes (local / (dv / 4) invocations share four value columns): the value rows one
# invocation waits for. Fewer splits of more keys left each lane a longer chain of loads.
DECODE_LOCAL = 128
DECODE_MAX_SPLITS = 64
DECODE_LANE_KEYS = 8
# 1: sdpa_decode.comp's pipeline knows the step's shapes (specialization constants), so its
# loops over a key's row and a lane's value rows unroll and their loads are all in flight at
# once; 0: one pipeline for every shape, loops of a runtime length (docs/perf-notes.md).
# Longer loops than DECODE_UNROLL_MAX_STEPS (a chunk of keys a lane) keep the runtime length.
DECODE_UNROLL = 1
# 1: where one product reads a decode step's attention output (through views), it merges the
# attention's splits itself (SplitRecords; docs/perf-notes.md) if they are few enough for it
# to pay (gemv_merge_pays); 0: the attention always merges them
DECODE_MERGE_BY_READER = 1
DECODE_UNROLL_MAX_STEPS = 64
# 1: sdpa_decode.comp's maxima and sums meet by subgroup shuffles where the device has them
# (at most 64 subgroups a workgroup); 0: always in a shared-memory tree
DECODE_SUBGROUP = 1
DECODE_CHUNK = 1024  # sdpa_decode.comp's CHUNK: the keys a workgroup scores before it sums them
# storage buffers of sdpa_decode.comp: q, k, v, mask, out, the splits' workspace; with
# WRITE (the step's rows go into a device KV cache in the same dispatch) also the step's k
# and v and the position. Devices with fewer keep the three steps, or the cache write as a
# dispatch of its own.
DECODE_BINDINGS = {0: 6, 1: 9}
# and with the per-head q and k norms (and their RoPE) folded in (QKNORM=1): gammas, cos, sin
DECODE_QKNORM_BINDINGS = 13


@register_layer("SDPA")
class SDPA(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.support_vulkan = True

    def load_param(self, pd) -> int:
        self.attn_mask = pd.get(5, 0)
        self.scale = pd.get(6, 0.0)
        self.kv_cache = pd.get(7, 0)
        self.int8_scale_term = pd.get(18, 0)
        # dynamic int8 quantisation of q/k/p/v has no shader: the numpy path runs it
        self.support_vulkan = not self.int8_scale_term
        return 0

    def _check_inputs(self, bottoms) -> None:
        need = 3 + bool(self.attn_mask) + 2 * bool(self.kv_cache)
        if len(bottoms) < need:
            raise ShapeError(f"SDPA takes q, k, v{', mask' if self.attn_mask else ''}"
                             f"{', past_k, past_v' if self.kv_cache else ''}: {need} inputs, got {len(bottoms)}")

    def forward_cpu(self, bottoms, opt):
        self._check_inputs(bottoms)
        q, k, v = bottoms[0], bottoms[1], bottoms[2]
        mask = bottoms[3] if self.attn_mask else None
        if self.kv_cache:
            past = 4 if self.attn_mask else 3
            past_k, past_v = bottoms[past], bottoms[past + 1]
            if past_k.size:
                try:
                    k = np.concatenate([past_k.reshape(k.shape[0], -1, k.shape[-1]), k], axis=1)
                    v = np.concatenate([past_v.reshape(v.shape[0], -1, v.shape[-1]), v], axis=1)
                except (ValueError, IndexError):
                    raise ShapeError(f"SDPA past k/v {past_k.shape}/{past_v.shape} do not continue "
                                     f"k {k.shape} / v {v.shape}") from None
        if (q.ndim != 3 or k.ndim != 3 or v.ndim != 3 or not k.shape[0] or q.shape[0] % k.shape[0]
                or q.shape[-1] != k.shape[-1] or v.shape[:2] != k.shape[:2]):
            raise ShapeError(f"SDPA expects q (heads,src,d), k (groups,dst,d), v (groups,dst,dv) with "
                             f"heads divisible by groups; got {q.shape}, {k.shape}, {v.shape}")
        scores = (q.shape[0], q.shape[1], k.shape[1])
        if mask is not None and (mask.ndim not in (2, 3) or not _broadcasts_to(mask.shape, scores)):
            raise ShapeError(f"SDPA mask {mask.shape} does not broadcast against the scores "
                             f"(heads, src, dst) = {scores}")
        # the scores of every query against every key: a KV cache makes them grow run by run
        check_alloc(opt, (q.shape[0], q.shape[1], k.shape[1]), 4, "the attention scores")
        scale = self.scale if self.scale != 0 else 1.0 / np.sqrt(q.shape[-1])
        out = llm.sdpa(q, k, v, mask, scale)
        return [out, k, v] if self.kv_cache else [out]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None or not self.support_vulkan:
            return 0

        fp16 = use_fp16_storage(opt, self.vkdev)

        def make(name: str, local: tuple, spec=()) -> Pipeline:
            return shader_pipeline(self.vkdev, name, fp16, spec, local)

        # each qk / pv invocation computes a 4 x 4 block
        self.qk = make("sdpa_qk", (16, 4, 1), [1 if self.attn_mask else 0])
        self.pv = make("sdpa_pv", (16, 4, 1))
        self.pv_split = make("sdpa_pv_split", (PV_SPLIT_LOCAL, 1, 1))  # a workgroup per 4 outputs
        self.decode_local = decode_local(self.vkdev)
        self.decode_subgroups = decode_subgroups(self.vkdev, opt, self.decode_local)
        buffers = self.vkdev.info.max_per_stage_storage_buffers()

        self.decode_fp16 = fp16

        def decode(write: int):
            if buffers < DECODE_BINDINGS[write] or (write and not self.kv_cache):
                return None
            return self._decode_pipeline(write, [])

        self.decode, self.decode_write = decode(0), decode(1)
        self.decode_unroll = DECODE_UNROLL
        self.softmax_rows = make("sdpa_softmax", (rows.FLAT_LOCAL, 1, 1), [1])   # an invocation per row
        self.softmax_group = make("sdpa_softmax", (rows.FLAT_LOCAL, 1, 1), [0])  # a workgroup per row
        self.kvcat = make("sdpa_kvcat", (rows.FLAT_LOCAL, 1, 1)) if self.kv_cache else None
        self.kvwrite = make("sdpa_kvcache", (rows.FLAT_LOCAL, 1, 1)) if self.kv_cache else None
        return 0

    def _device_cache(self, cache, cur, groups: int, width: int, what: str):
        """A cache kept on the device, checked against the step's rows `cur` and bound to its
        heads and width: the whole cache, (groups, capacity, width), as the attention's k or v
        and the extra output."""
        if not isinstance(cache, KvCacheMat):
            raise ShapeError(f"SDPA past_{what}: past_k and past_v are both device KV caches or neither, "
                             f"got a {type(cache).__name__}")
        if not self.attn_mask:
            raise ShapeError("SDPA with a device KV cache needs its attention mask input (5=1): the mask "
                             "hides the cache's rows past its length")
        cache.bind(groups, width, cur.elemsize)
        cur_rows = cur.numpy_shape()[1]
        if cur_rows > cache.h:
            raise ShapeError(f"SDPA: {cur_rows} new rows do not fit device KV cache {cache.name!r} of "
                             f"{cache.h} rows")
        return cache.reshape(cache.w, cache.h, 1, cache.c, dims=3)  # a view: the plan's blob, the cache's buffer

    def _record_cache_write(self, cmd, cache, cur, groups: int, width: int, repeat: int) -> None:
        """The step's rows written in place into a device cache, at the row its position
        buffer names (repeat > 1: cur holds groups / repeat heads, each written `repeat` times)."""
        cur_rows = cur.numpy_shape()[1]
        total = groups * cur_rows * width
        cmd.record_pipeline(self.kvwrite, [cur, cache, cache.position], [total, cur_rows, width, cache.h, repeat],
                            rows.flat_dispatch(total))

    def _concat_cache(self, cmd, opt, past, cur, groups: int, width: int, what: str):
        """past rows + current rows per kv head, a new (groups, rows, width) VkMat."""
        cur_rows = cur.numpy_shape()[1]
        past_n = 0 if past is None or past.empty() else past.total() * past.elempack
        if past_n % (groups * width):
            raise ShapeError(f"SDPA past_{what} {past.numpy_shape()} does not hold whole rows of "
                             f"{groups} heads x {width}")
        past_rows = past_n // (groups * width)
        top = VkMat.create(width, past_rows + cur_rows, 1, groups, dims=3, elemsize=cur.elemsize,
                           elempack=1, allocator=cmd.blob_allocator(opt))
        total = top.total()
        cmd.record_pipeline(self.kvcat, [past if past_n else None, cur, top],
                            [total, past_rows, cur_rows, width], rows.flat_dispatch(total))
        return top

    def takes_qk_norm(self, q_shape: tuple, k_shape: tuple, caches: list, d: int) -> bool:
        """Record time: can the per-head RMSNorms of q and of the step's keys (q_shape, k_shape:
        (heads, 1, d), (kv heads, 1, d), before any head repeat), and a one-token RoPE after
        them, fold into this attention? One query row and one new key, both caches on the
        device, the one-dispatch kernel with the cache write (sdpa_decode.comp QKNORM)."""
        return (self.decode_write is not None and len(caches) == 2
                and all(isinstance(c, KvCacheMat) for c in caches)
                and self.vkdev.info.max_per_stage_storage_buffers() >= DECODE_QKNORM_BINDINGS
                and len(q_shape) == 3 and len(k_shape) == 3 and q_shape[1] == 1 and k_shape[1] == 1
                and q_shape[2] == k_shape[2] == d and self._one_dispatch(1, caches[0].h, d, caches[1].w))

    def forward_gpu(self, bottoms, cmd, opt, repeat_heads=None, qk_norm=None, split_records=False):
        """repeat_heads ({1: r, 2: r}, k's and v's): that input holds its heads once, and
        stands for each head repeated r times (a Tile before it folded into the device KV
        cache's write, the only reader of k and v here). qk_norm ((q RMSNorm, k RMSNorm,
        (mode, cos, sin) or None), takes_qk_norm): q and k are those norms' inputs, which the
        kernel normalises (and rotates) itself. split_records: where one query row takes the
        one-dispatch kernel, the output is a SplitRecords for the product reading it to merge
        (gpu/ops/split_records.py); elsewhere the output as usual."""
        self._check_inputs(bottoms)
        q, k, v = bottoms[0], bottoms[1], bottoms[2]
        repeat = {1: 1, 2: 1, **(repeat_heads or {})}
        qs, ks, vs = q.numpy_shape(), k.numpy_shape(), v.numpy_shape()
        if repeat != {1: 1, 2: 1}:
            past = 4 if self.attn_mask else 3
            if not (self.kv_cache and all(isinstance(b, KvCacheMat) for b in bottoms[past:past + 2])):
                raise GpuError(f"SDPA {self.name!r}: repeated kv heads need the device KV cache")
            ks = (ks[0] * repeat[1],) + tuple(ks[1:])
            vs = (vs[0] * repeat[2],) + tuple(vs[1:])
        if (len(qs) != 3 or len(ks) != 3 or len(vs) != 3 or not ks[0] or qs[0] % ks[0] or qs[2] != ks[2]
                or vs[0] != ks[0] or vs[1] != ks[1]):
            raise ShapeError(f"SDPA expects q (heads,src,d), k (groups,dst,d), v (groups,dst,dv) with "
                             f"heads divisible by groups; got {qs}, {ks}, {vs}")
        heads, src, d = qs
        groups, dv = ks[0], vs[2]
        tops = []
        past = 4 if self.attn_mask else 3
        on_device = self.kv_cache and any(isinstance(b, KvCacheMat) for b in bottoms[past:past + 2])
        writes = []  # a device cache's writes: (cache, the step's rows, heads, width, repeat)
        if self.kv_cache:
            if on_device:
                writes = [(bottoms[past], k, groups, d, repeat[1]), (bottoms[past + 1], v, groups, dv, repeat[2])]
                k = self._device_cache(bottoms[past], k, groups, d, "k")
                v = self._device_cache(bottoms[past + 1], v, groups, dv, "v")
            else:
                k = self._concat_cache(cmd, opt, bottoms[past], k, groups, d, "k")
                v = self._concat_cache(cmd, opt, bottoms[past + 1], v, groups, dv, "v")
            if k.h != v.h:
                raise ShapeError(f"SDPA past_k and past_v hold {k.h - ks[1]} and {v.h - vs[1]} rows")
            tops = [k, v]
        dst = k.h
        if dst == 0 and src > 0:
            raise ShapeError(f"SDPA: {src} queries attend to no keys (k, v and the cache are empty): the "
                             "softmax of an empty row has no value")

        mask, mask_cstep = None, 0
        if self.attn_mask:
            mask = bottoms[3]
            ms = mask.numpy_shape()
            if len(ms) not in (2, 3) or ms[-2:] != (src, dst) or (len(ms) == 3 and ms[0] not in (1, heads)):
                device = " (with a device KV cache, dst is the cache's capacity)" if on_device else ""
                raise ShapeError(f"SDPA mask {ms} does not fit scores of {heads} heads x ({src}, {dst}){device}")
            mask_cstep = src * dst if len(ms) == 3 and ms[0] > 1 else 0

        scale = self.scale if self.scale != 0 else 1.0 / np.sqrt(d)
        scale = float(np.float32(scale))
        per_group = heads // groups
        one = self._one_dispatch(src, dst, d, dv) and heads
        records = bool(split_records and one and src == 1 and DECODE_MERGE_BY_READER
                       and gemv_merge_pays(self.vkdev, heads * dv, decode_layout(dst, dv, self.decode_local)[0]))
        out = None if records else VkMat.create(dv, src, 1, heads, dims=3, elemsize=q.elemsize, elempack=1,
                                                allocator=cmd.blob_allocator(opt))
        constants = [src, dst, d, dv, per_group, mask_cstep, scale]
        if qk_norm is not None and not (one and writes and src == 1 and self.decode_write is not None
                                         and writes[0][1].numpy_shape()[1] == 1):
            raise GpuError(f"SDPA {self.name!r}: the q and k norms cannot fold into this attention")
        if one and writes and self.decode_write is not None:
            (cache, cur_k, _, _, repeat_k), (_, cur_v, _, _, repeat_v) = writes
            out = self._record_decode(cmd, opt, self.decode_write, [q, k, v, mask, out],
                                      constants + [cur_k.numpy_shape()[1], repeat_k, repeat_v],
                                      [cur_k, cur_v, cache.position], qk_norm)
            return [out] + tops
        for write in writes:
            self._record_cache_write(cmd, *write)
        if one:
            out = self._record_decode(cmd, opt, self.decode, [q, k, v, mask, out], constants + [0, 1, 1], [])
            return [out] + tops
        chunk = max(1, min(heads, SCORES_BYTES // max(1, src * dst * 4)))
        scores = VkMat.create(dst, src, 1, chunk, dims=3, elemsize=4, elempack=1,
                              allocator=cmd.blob_allocator(opt))
        for head0 in range(0, heads, chunk):
            n = min(chunk, heads - head0)
            cmd.record_pipeline(self.qk, [q, k, mask, scores], [src, dst, d, per_group, head0, n, mask_cstep, scale],
                                (-(-dst // 4), -(-src // 4), n))
            self._record_softmax(cmd, scores, n * src, dst)
            constants = [src, dst, dv, per_group, head0, n]
            if src <= PV_SPLIT_MAX_ROWS:
                cmd.record_pipeline(self.pv_split, [scores, v, out], constants,
                                    (PV_SPLIT_LOCAL * -(-dv // 4), src, n))
            else:
                cmd.record_pipeline(self.pv, [scores, v, out], constants, (-(-dv // 4), -(-src // 4), n))
        scores.release()
        return [out] + tops

    def _decode_pipeline(self, write: int, shapes: list, qk: list | None = None, merge_by_reader: bool = False):
        """sdpa_decode.comp, WRITE or not, for the step's shapes (sdpa_decode.comp's D4 ...
        SPLITS) or, shapes empty, for any; qk: QK_ROPE, QK_EPS_Q, QK_EPS_K of the QKNORM
        variant; merge_by_reader: the splits' records are the output (MERGE_BY_READER)."""
        specs = [1 if self.attn_mask else 0] + (shapes or [0] * 5) + (qk or [0, 0.0, 0.0]) + [int(merge_by_reader)]
        return shader_pipeline(self.vkdev, "sdpa_decode", self.decode_fp16, specs,
                               (self.decode_local, 1, 1), {"WRITE": write, "QKNORM": int(qk is not None),
                                                           "SUBGROUP": int(self.decode_subgroups)})

    def _record_decode(self, cmd, opt, pipeline, bindings: list, constants: list, write_bindings: list,
                       qk_norm=None):
        """sdpa_decode.comp with its push constants (src, dst, d, dv, ... as the shader lists
        them; splits and span are added here): the keys of each (head, row) split over
        workgroups (decode_splits), whose partial softmaxes meet in a workspace the host
        zeroes first (its counters), in the same barrier interval. With decode_unroll, a
        pipeline made for these shapes (a cache's capacity changes them only when it grows).
        Returns the output: bindings' out, or where that is None, the splits' SplitRecords for
        the reader to merge."""
        src, dst, d, dv = constants[:4]
        heads = bindings[0].numpy_shape()[0]
        splits, span, lanes = decode_layout(dst, dv, self.decode_local)
        keys = min(span, DECODE_CHUNK)  # a chunk's: the loops restart for each
        score_steps, pv_steps = -(-keys // self.decode_local), -(-keys // lanes)
        shapes, qk = [], None
        if self.decode_unroll and max(score_steps, pv_steps) <= DECODE_UNROLL_MAX_STEPS:
            shapes = [d // 4, dv // 4, score_steps, pv_steps, splits]
        if qk_norm is not None:  # the norms' gammas, and the RoPE's cos and sin (or stand-ins)
            q_norm, k_norm, rope = qk_norm
            mode, cos, sin = rope if rope is not None else (0, q_norm.gamma_gpu, q_norm.gamma_gpu)
            qk = [mode, float(q_norm.eps), float(k_norm.eps)]
            write_bindings = write_bindings + [q_norm.gamma_gpu, k_norm.gamma_gpu, cos, sin]
        records = bindings[4] is None
        if shapes or qk is not None or records:
            pipeline = self._decode_pipeline(int(bool(write_bindings)), shapes, qk, records)
        work = None
        if records:  # src is 1: the records are the output, and nothing in them is counted
            work = SplitRecords(heads, splits, dv, bindings[0].elemsize == 2, cmd.blob_allocator(opt))
        elif splits > 1:
            work = VkMat.create(record_words(heads * src, splits, dv), dims=1, elemsize=4,
                                allocator=cmd.blob_allocator(opt))
            cmd.record_fill(work)
        cmd.record_pipeline(pipeline, bindings + [work] + write_bindings, constants + [splits, span],
                            (heads * splits * self.decode_local, src, 1))
        if records:
            return work
        if work is not None:
            work.release()
        return bindings[4]

    def _one_dispatch(self, src: int, dst: int, d: int, dv: int) -> bool:
        """sdpa_decode.comp for these shapes? A few query rows, keys up to DECODE_MAX_KEYS,
        vec4 rows of q, k and v, q's fitting its shared q row, four value columns per
        invocation."""
        return (0 < src <= DECODE_MAX_ROWS and 0 < dst <= DECODE_MAX_KEYS and d % 4 == 0 and 0 < d <= DECODE_MAX_D
                and dv % 4 == 0 and 0 < dv <= 4 * self.decode_local and self.decode is not None)

    def _record_softmax(self, cmd, scores, n_rows: int, row_len: int) -> None:
        """Softmax of each score row in place: an invocation per short row, else a workgroup."""
        if row_len <= SOFTMAX_PER_THREAD_MAX_LEN or n_rows >= rows.MANY_ROWS:
            cmd.record_pipeline(self.softmax_rows, [scores], [n_rows, row_len], rows.flat_dispatch(n_rows))
            return
        rows_y = min(n_rows, 65535)
        cmd.record_pipeline(self.softmax_group, [scores], [n_rows, row_len],
                            (self.softmax_group.local_size_x, rows_y, -(-n_rows // rows_y)))


def decode_local(vkdev) -> int:
    """Invocations of a sdpa_decode.comp workgroup on `vkdev`: DECODE_LOCAL, or fewer where
    the device's workgroups are smaller."""
    return min(DECODE_LOCAL, workgroup_cap(vkdev))


def decode_subgroups(vkdev, opt, local: int) -> bool:
    """Do sdpa_decode.comp's reductions use subgroup shuffles here (DECODE_SUBGROUP, the
    device's subgroup operations, and at most 64 subgroups in a workgroup of `local`)?"""
    size = vkdev.info.subgroup_size()
    return bool(DECODE_SUBGROUP and rows.use_subgroups(vkdev, opt, local) and local // size <= 64)


def decode_layout(keys: int, dv: int, local: int) -> tuple[int, int, int]:
    """(splits, span, lanes): sdpa_decode.comp's workgroups of `local` invocations per (head,
    row) over `keys` keys, the keys of each, and the invocations of one summing the same four
    value columns (each split holds DECODE_LANE_KEYS keys a lane at least)."""
    lanes = max(1, local // (dv // 4))
    return *decode_splits(keys, DECODE_LANE_KEYS * lanes), lanes


def decode_splits(keys: int, fewest: int) -> tuple[int, int]:
    """(splits, span): sdpa_decode.comp's workgroups per (head, row) and the keys of each, at
    least `fewest` keys a split and at most DECODE_MAX_SPLITS splits, none of them empty."""
    splits = max(1, min(DECODE_MAX_SPLITS, keys // fewest))
    span = -(-keys // splits)
    return -(-keys // span), span


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
