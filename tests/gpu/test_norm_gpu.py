"""GPU path of the reduction / normalisation / LLM / PriorBox layers against the numpy path
(vkncnn.testing.test_layer): fp32 within 1e-4, fp16 storage within 1e-2, pack1 and pack4.

Shaders: reduction_rows.comp (the row reducer behind Softmax, the norms and Reduction, with
its work shapes: one invocation per row, one workgroup per row merged by subgroup shuffles
or shared memory, segmented rows in two passes), softmax.comp and normalize_rows.comp (the
element-wise second passes), rmsnorm_rows.comp (RMSNorm of contiguous rows, one pass),
lrn.comp, rotaryembed.comp, sdpa_{qk,softmax,pv,kvcat}.comp, priorbox.comp. Each layer is
first checked to really run on the GPU, so a silent numpy fallback cannot pass for a shader;
validation messages fail any test (tests/conftest.py).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vkncnn import testing
from vkncnn.errors import ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan import instance
from vkncnn.layer import create_layer
from vkncnn.testing import run_layer

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

# dims 1-4, channels 1/3/4/8/12/16/24 along the packing axis, odd inner sizes
SHAPES = [(7,), (24,), (3, 13), (12, 5), (1, 3, 5), (4, 5, 3), (8, 1, 7), (16, 3, 2), (24, 3, 3),
          (3, 2, 3, 5), (12, 2, 3, 3)]
FEW_SHAPES = [(13,), (12, 5), (3, 3, 5), (8, 2, 3), (4, 2, 3, 3)]


def rand(shape, seed=0, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def assert_runs_on_gpu(type_name: str, params: dict) -> None:
    layer = create_layer(type_name)
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, np.asarray(v, np.float32 if any(isinstance(x, float) for x in v) else np.int32)
               if isinstance(v, list) else v)
    layer.load_param(pd)
    assert layer.support_vulkan, f"{type_name} {params} is not on the GPU"


def check(type_name: str, params: dict, weights, inputs, n_outputs: int = 1) -> None:
    assert_runs_on_gpu(type_name, params)
    report = testing.test_layer(type_name, params, weights, inputs, n_outputs)
    assert report.ok, str(report)


def test_gpu_path_really_runs(monkeypatch):
    """With forward_cpu broken, the GPU nets still produce the numpy result."""
    x = rand((8, 3, 5))
    want = run_layer("Softmax", {0: 1, 1: 1}, [], [x])[0]
    from vkncnn.layers.softmax import Softmax

    def refuse(self, bottoms, opt):
        raise AssertionError("the numpy path ran")
    monkeypatch.setattr(Softmax, "forward_cpu", refuse)
    got = run_layer("Softmax", {0: 1, 1: 1}, [], [x], gpu=True, fp16=False, packing=True)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# -- Softmax -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax_every_axis(shape):
    n = len(shape)
    for axis in list(range(-n, n)) + [n]:  # negative axes, and one the blob lacks (a copy)
        check("Softmax", {0: axis, 1: 1}, [], [rand(shape, seed=axis + 9, lo=-6, hi=6)])


def test_softmax_long_and_masked_rows():
    x = rand((3, 700), seed=1, lo=-20, hi=20)
    x[1, ::3] = -np.inf  # masked entries: exp(-inf) = 0
    check("Softmax", {0: 1, 1: 1}, [], [x])
    check("Softmax", {0: 0}, [], [rand((9001,), seed=2)])  # one long row: segmented, two passes


# -- LayerNorm / InstanceNorm / GroupNorm / RMSNorm ------------------------------------------------
def layernorm_sizes(shape):
    """affine_size values selecting each grouping ncnn has for this blob."""
    sizes = {shape[-1]}
    if len(shape) >= 3:
        sizes.add(int(np.prod(shape[1:])))
    if len(shape) == 4:
        sizes.add(shape[-1] * shape[-2])
    return sorted(sizes)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layernorm(shape):
    for size in layernorm_sizes(shape):
        for affine in (0, 1):
            weights = [rand(size, 1), rand(size, 2)] if affine else []
            x = rand(shape, seed=size) * 3 + 1.5  # an offset mean: the variance must be centred
            check("LayerNorm", {0: size, 1: 1e-4, 2: affine}, weights, [x])


@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) >= 3], ids=str)
def test_instancenorm(shape):
    c = shape[0]
    for affine in (0, 1):
        weights = [rand(c, 1), rand(c, 2)] if affine else []
        check("InstanceNorm", {0: c, 1: 1e-3, 2: affine}, weights, [rand(shape, seed=c) * 2 - 0.5])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_groupnorm(shape):
    c = shape[0]
    for group in [g for g in (1, 2, 3, 4, 6, 12) if c % g == 0]:  # 12/6: 2 channels per group
        weights = [rand(c, 1), rand(c, 2)]
        check("GroupNorm", {0: group, 1: c, 2: 1e-4, 3: 1}, weights, [rand(shape, seed=group) + 1])
    check("GroupNorm", {0: 1, 1: c, 2: 1e-3, 3: 0}, [], [rand(shape)])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rmsnorm(shape):
    sizes = {shape[-1]} | ({shape[-1] * shape[-2]} if len(shape) == 3 else set())
    for size in sorted(sizes):
        for affine in (0, 1):
            weights = [rand(size, 3)] if affine else []
            check("RMSNorm", {0: size, 1: 1e-5, 2: affine}, weights, [rand(shape, seed=size)])


@pytest.mark.parametrize("shape", [(896,), (1, 896), (3, 300), (2, 3, 40), (5, 1000)], ids=str)
def test_rmsnorm_of_contiguous_rows_is_one_dispatch(monkeypatch, shape):
    """pack1 rows along the innermost axes (a decoder's one-token step) take rmsnorm_rows.comp,
    never the two-pass reducer; rows longer than the workgroup included."""
    def refuse(*args, **kwargs):
        raise AssertionError("the two-pass normaliser ran")
    monkeypatch.setattr(rows.RowNormalizer, "record", refuse)
    for affine in (0, 1):
        weights = [rand(shape[-1], 3)] if affine else []
        x = rand(shape, seed=len(shape))
        params = {0: shape[-1], 1: 1e-6, 2: affine}
        want = run_layer("RMSNorm", params, weights, [x], gpu=False)[0]
        for fp16, tol in ((False, 1e-5), (True, 1e-2)):
            got = run_layer("RMSNorm", params, weights, [x], gpu=True, fp16=fp16, packing=False)[0]
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# -- the reducer's work shapes, forced on small tensors ----------------------------------------------
@pytest.mark.parametrize("mode", ["per-row-invocation", "per-row-workgroup", "per-row-long-workgroup", "segments",
                                  "shared-memory", "shared-memory-segments", "folded-grid"])
def test_reducer_work_shapes(monkeypatch, mode):
    if "segments" in mode:
        monkeypatch.setattr(rows, "SEGMENT_LEN", 7)
    if "shared" in mode:
        monkeypatch.setattr(rows, "FORCE_SHARED_MEMORY", True)
    if mode == "per-row-long-workgroup":
        monkeypatch.setattr(rows, "SHORT_ROW", 0)  # the 256-invocation workgroups
    if mode == "folded-grid":
        monkeypatch.setattr(rows, "_MAX_GROUPS", 3)  # rows and elements past 3 groups fold into y/z
    # every row to one invocation, or none at all
    monkeypatch.setattr(rows, "PER_THREAD_MAX_K", 10 ** 9 if mode == "per-row-invocation" else 0)
    x = rand((12, 5, 19), seed=4)
    check("Softmax", {0: 2, 1: 1}, [], [x * 4])
    check("Softmax", {0: 0}, [], [x * 4])
    check("LayerNorm", {0: 95, 1: 1e-4, 2: 1}, [rand(95, 1), rand(95, 2)], [x + 2])
    check("GroupNorm", {0: 3, 1: 12, 2: 1e-4, 3: 0}, [], [x])
    check("Reduction", {0: 0, 1: 0, 3: [0, 2], 4: 1, 5: 1}, [], [x])
    check("Reduction", {0: 6, 1: 1}, [], [1 + 0.02 * x])
    check("Reduction", {0: 4, 1: 0, 3: [1], 5: 1}, [], [x])


# -- Normalize -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", FEW_SHAPES + [(24, 3, 3)], ids=str)
def test_normalize(shape):
    c = shape[0] if len(shape) >= 3 else 1
    for across_spatial, across_channel, shared in itertools.product((0, 1), (0, 1), (0, 1)):
        for eps_mode in (0, 1, 2):
            n = 1 if shared else c
            params = {0: across_spatial, 4: across_channel, 1: shared, 2: 1e-2, 9: eps_mode, 3: n}
            check("Normalize", params, [rand(n, 5, 0.5, 2)], [rand(shape, seed=eps_mode)])


# -- LRN -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) <= 3], ids=str)
def test_lrn(shape):
    for region, local_size in itertools.product((0, 1), (1, 2, 3, 5)):
        check("LRN", {0: region, 1: local_size, 2: 0.7, 3: 0.6, 4: 1.5}, [], [rand(shape, seed=local_size)])
    check("LRN", {}, [], [rand(shape)])  # defaults: across channels, 5, 1, 0.75, 1


# -- Reduction -----------------------------------------------------------------------------------
def reduction_input(op: int, shape, seed: int) -> np.ndarray:
    x = rand(shape, seed)
    if op == 6:
        return 1 + 0.1 * x  # products of many values stay finite
    if op == 9:
        return np.abs(x) + 0.1  # log of a positive sum
    return x


@pytest.mark.parametrize("shape", [(7,), (12, 5), (4, 3, 5), (3, 2, 3, 5), (8, 2, 3, 3)], ids=str)
def test_reduction_every_axes_set(shape):
    """Which elements make a row is all layout: every axes subset, with and without keepdims."""
    x = rand(shape, seed=len(shape))
    check("Reduction", {0: 0, 1: 1, 2: 1.5}, [], [x])
    n = len(shape)
    for k in range(1, n + 1):
        for axes in itertools.combinations(range(n), k):
            check("Reduction", {0: 0, 1: 0, 2: 0.5, 3: list(axes), 4: (k + sum(axes)) % 2, 5: 1}, [], [x])
    check("Reduction", {0: 0, 1: 0, 3: [-1, -n], 4: 1, 5: 1}, [], [x])  # negative axes


@pytest.mark.parametrize("op", range(11))
def test_reduction_every_op(op):
    for shape, axes in [((7,), [0]), ((12, 5), [1]), ((4, 3, 5), [0, 2]), ((8, 2, 3, 3), [1, 3]),
                        ((8, 2, 3, 3), [0])]:
        x = reduction_input(op, shape, seed=op)
        check("Reduction", {0: op, 1: 1, 2: 1.5}, [], [x])
        for keepdims in (0, 1):
            check("Reduction", {0: op, 1: 0, 2: 0.5, 3: axes, 4: keepdims, 5: 1}, [], [x])


@pytest.mark.parametrize("shape", [(24,), (16, 7), (1, 3, 5), (24, 3, 3), (12, 2, 3, 3)], ids=str)
def test_reduction_channels(shape):
    for op in (0, 3, 4, 8):
        check("Reduction", {0: op, 1: 0, 3: [0], 4: 1, 5: 1}, [], [rand(shape, seed=op)])
        check("Reduction", {0: op, 1: 0, 3: [len(shape) - 1], 4: 0, 5: 1}, [], [rand(shape, seed=op)])


# -- RotaryEmbed ---------------------------------------------------------------------------------
@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotaryembed(interleaved):
    cases = [((4, 5, 8), 4), ((3, 7, 6), 6), ((8, 4, 12), 12), ((12, 9, 16), 8), ((1, 3, 4), 2),
             ((5, 10), 5), ((8, 6, 4, 10), 5), ((24, 3, 6), 3)]
    for i, (shape, width) in enumerate(cases):
        seqlen = shape[-2]
        check("RotaryEmbed", {0: interleaved}, [],
              [rand(shape, i), rand((seqlen, width), i + 1), rand((seqlen, width), i + 2)])
    check("RotaryEmbed", {0: interleaved}, [], [rand((8, 4, 6)), rand((1, 4, 3), 1), rand((1, 4, 3), 2)])


# -- SDPA ----------------------------------------------------------------------------------------
def causal_mask(src: int, dst: int) -> np.ndarray:
    past = dst - src
    return np.where(np.arange(dst)[None, :] > np.arange(src)[:, None] + past, -1e4, 0).astype(np.float32)


SDPA_CASES = [
    ({}, [(4, 5, 8), (4, 7, 8), (4, 7, 6)], None),
    ({}, [(8, 3, 16), (2, 9, 16), (2, 9, 12)], None),  # GQA: 4 query heads per kv head
    ({6: 0.3}, [(3, 17, 20), (3, 19, 20), (3, 19, 5)], None),  # several tiles each way
    ({5: 1}, [(4, 5, 8), (4, 7, 8), (4, 7, 6)], "2d"),
    ({5: 1}, [(4, 5, 8), (2, 7, 8), (2, 7, 6)], "per-head"),
    ({5: 1}, [(4, 5, 8), (2, 7, 8), (2, 7, 6)], "one-head"),
    ({7: 1}, [(4, 3, 8), (2, 3, 8), (2, 3, 6), (2, 4, 8), (2, 4, 6)], None),
    ({7: 1}, [(4, 1, 8), (4, 1, 8), (4, 1, 6), (4, 6, 8), (4, 6, 6)], None),  # one decode step
    ({5: 1, 7: 1}, [(4, 3, 8), (2, 3, 8), (2, 3, 6), (2, 4, 8), (2, 4, 6)], "causal"),
]


@pytest.mark.parametrize("params,shapes,mask", SDPA_CASES)
def test_sdpa(params, shapes, mask):
    ins = [rand(s, i) for i, s in enumerate(shapes)]
    heads, src = shapes[0][0], shapes[0][1]
    dst = shapes[1][1] + (shapes[3][1] if params.get(7) else 0)
    if mask is not None:
        m = {"2d": lambda: rand((src, dst), 7), "per-head": lambda: rand((heads, src, dst), 7),
             "one-head": lambda: rand((1, src, dst), 7), "causal": lambda: causal_mask(src, dst)}[mask]()
        ins.insert(3, m)
    check("SDPA", params, [], ins, n_outputs=3 if params.get(7) else 1)


def test_sdpa_first_step_with_empty_cache():
    empty = np.zeros((0,), np.float32)
    check("SDPA", {7: 1}, [], [rand((4, 3, 8)), rand((2, 3, 8), 1), rand((2, 3, 6), 2), empty, empty], 3)


@pytest.mark.parametrize("mode", ["one-head-chunks", "workgroup-softmax"])
def test_sdpa_work_shapes(monkeypatch, mode):
    from vkncnn.layers import sdpa
    if mode == "one-head-chunks":
        monkeypatch.setattr(sdpa, "SCORES_BYTES", 1)  # one head per chunk: the score buffer is reused
    else:
        monkeypatch.setattr(sdpa, "SOFTMAX_PER_THREAD_MAX_LEN", 0)  # a workgroup per score row
    check("SDPA", {5: 1}, [], [rand((4, 5, 8)), rand((2, 7, 8), 1), rand((2, 7, 6), 2), rand((4, 5, 7), 3)])
    check("SDPA", {}, [], [rand((2, 3, 8)), rand((2, 300, 8), 1), rand((2, 300, 6), 2)])


def test_sdpa_int8_runs_on_the_numpy_path():
    layer = create_layer("SDPA")
    pd = ParamDict()
    pd.set(18, 1)
    layer.load_param(pd)
    assert not layer.support_vulkan


# -- PriorBox ------------------------------------------------------------------------------------
PRIORBOX_CASES = [
    ({0: [30.0], 1: [60.0], 2: [2.0], 9: 300, 10: 300}, [(4, 5, 5)]),
    ({0: [30.0, 40.0], 1: [60.0, 70.0], 2: [2.0, 3.0], 7: 1, 8: 1, 9: -233, 10: -233, 13: 0.5},
     [(4, 5, 6), (3, 32, 40)]),
    ({0: [30.0], 2: [2.0, 0.5], 7: 0, 9: -233, 10: 300, 11: 8.0, 12: 16.0, 13: 0.5, 3: 0.2, 6: 0.4},
     [(8, 7, 3), (3, 50, 60)]),
    ({0: [30.0], 9: 320, 10: 320, 13: 0.5, 14: 1, 15: 1}, [(3, 9, 11)]),  # mmdetection steps/centres
    ({0: [0.2, 0.3, 0.5], 2: [1.0, 2.0, 0.5], 9: -233, 10: -233}, [(4, 6, 5)]),  # mxnet style
    ({0: [0.2], 2: [1.0, 2.0], 9: -233, 10: -233, 8: 1, 13: 0.5}, [(12, 6, 7)]),
]


@pytest.mark.parametrize("params,shapes", PRIORBOX_CASES)
def test_priorbox(params, shapes):
    check("PriorBox", params, [], [rand(s, i) for i, s in enumerate(shapes)])


# -- bad input: clear errors on the GPU path too -------------------------------------------------
@pytest.mark.parametrize("type_name,params,weights,inputs", [
    ("InstanceNorm", {0: 5, 2: 0}, [], [rand((5, 7))]),
    ("InstanceNorm", {0: 4, 2: 1}, [rand(4), rand(4)], [rand((5, 3, 7))]),  # 5 channels, 4 of gamma/beta
    ("GroupNorm", {0: 2, 1: 4, 3: 0}, [], [rand((6, 3))]),
    ("LayerNorm", {0: 5, 2: 1}, [rand(5), rand(5)], [rand((3, 7))]),
    ("LRN", {}, [], [rand((4, 2, 3, 5))]),
    ("Reduction", {0: 0, 1: 0, 3: [3], 5: 1}, [], [rand((3, 4, 5))]),
    ("SDPA", {}, [], [rand((4, 5, 8)), rand((3, 7, 8)), rand((3, 7, 6))]),
    ("SDPA", {5: 1}, [], [rand((4, 5, 8)), rand((2, 7, 8)), rand((2, 7, 6)), rand((3, 5, 7))]),
    ("RotaryEmbed", {}, [], [rand((4, 5, 8)), rand((6, 4)), rand((6, 4))]),
])
def test_bad_input_is_a_shape_error(type_name, params, weights, inputs):
    with pytest.raises(ShapeError):
        run_layer(type_name, params, weights, inputs, gpu=True)


def test_a_reduction_over_no_rows_records_nothing():
    """Zero rows of a long row (an empty batch of LayerNorm rows, say) is no work, not a
    division of no rows over the dispatch grid."""
    class NoRecording:
        def record_pipeline(self, *args):
            raise AssertionError("a dispatch was recorded for zero rows")

    layout = rows.RowLayout(axes=((0, False), (1 << 20, True)), strides=(1 << 20, 1))
    reducer = object.__new__(rows.RowReducer)  # its pipelines are never reached
    reducer.record(NoRecording(), None, None, layout)
