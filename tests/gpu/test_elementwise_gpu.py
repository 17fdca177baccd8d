"""GPU path of the elementwise family against the numpy path (vkncnn.testing.test_layer):
fp32 within 1e-4 and fp16 storage within 1e-2, pack1 and pack4, dims 1-4.

Shaders: unaryop.comp (activations, UnaryOp, Power/Exp/Log/Threshold, Cast), affine.comp
(BatchNorm, Bias, Scale, PReLU), binaryop.comp (BinaryOp, ncnn's broadcasting),
eltwise.comp (Eltwise). Every configuration is first checked to really run on the GPU
(support_vulkan), so a silent numpy fallback cannot pass for a shader. Validation messages
fail any test (tests/conftest.py).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vkncnn import testing
from vkncnn.errors import Error, ParamError, ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.gpu.ops import elementwise
from vkncnn.gpu.vulkan import instance
from vkncnn.layer import create_layer
from vkncnn.testing import run_layer

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

# dims 1-4, channel counts 1/3/4/8/12/16/24 along the packing axis, odd inner sizes
SHAPES = [(13,), (24,), (3, 7), (12, 5), (1, 3, 5), (4, 3, 5), (8, 1, 7), (16, 2, 3), (24, 3, 3),
          (3, 2, 3, 5), (12, 2, 3, 3)]
FEW_SHAPES = [(13,), (12, 5), (3, 3, 5), (8, 2, 3), (4, 2, 3, 3)]


def rand(shape, seed=0, lo=-2.5, hi=2.5):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def assert_runs_on_gpu(type_name: str, params: dict) -> None:
    layer = create_layer(type_name)
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, np.asarray(v, np.float32) if isinstance(v, list) else v)
    layer.load_param(pd)
    assert layer.support_vulkan and layer.support_vulkan_packing, f"{type_name} {params} is not on the GPU"


def check(type_name: str, params: dict, weights, inputs) -> None:
    assert_runs_on_gpu(type_name, params)
    report = testing.test_layer(type_name, params, weights, inputs)
    assert report.ok, str(report)


# -- one-input activations and math: unaryop.comp ---------------------------------------------
# (type, params, input range)
ACTIVATIONS = [
    ("ReLU", {}, None), ("ReLU", {0: 0.1}, None),
    ("Sigmoid", {}, None), ("Swish", {}, None), ("TanH", {}, None), ("Mish", {}, None),
    ("Softplus", {}, None), ("AbsVal", {}, None),
    ("GELU", {}, None), ("GELU", {0: 1}, None),
    ("HardSwish", {}, None), ("HardSwish", {0: 1 / 6, 1: 0.5}, None),
    ("HardSigmoid", {}, None), ("HardSigmoid", {0: 1 / 6, 1: 0.5}, None),
    ("Clip", {}, None), ("Clip", {0: -0.5, 1: 0.7}, None), ("Clip", {0: 0.5, 1: -0.5}, None),
    ("ELU", {}, None), ("ELU", {0: 1.0}, None),
    ("SELU", {}, None), ("SELU", {0: 1.5, 1: 0.8}, None),
    ("Threshold", {}, None), ("Threshold", {0: 0.3}, None),
    ("Power", {}, None), ("Power", {0: 2.0, 1: 1.5, 2: 0.3}, None), ("Power", {0: 3.0}, None),
    ("Power", {0: 0.5, 1: 1.0, 2: 3.0}, None), ("Power", {0: -1.5, 1: 0.5, 2: 2.0}, None),
    ("Power", {0: 0.5}, None),  # negative bases: nan on both paths
    ("Exp", {}, None), ("Exp", {0: 2.0, 1: 0.5, 2: 0.1}, None), ("Exp", {0: 0.5, 1: -1.2, 2: 0.3}, None),
    ("Log", {}, (0.05, 3.0)), ("Log", {0: 10.0, 1: 0.5, 2: 2.5}, None), ("Log", {0: 2.0, 1: -1.0, 2: 3.0}, None),
]


@pytest.mark.parametrize("type_name,params,span", ACTIVATIONS,
                         ids=[f"{t}-{'-'.join(f'{k}={v:g}' for k, v in p.items())}" for t, p, _ in ACTIVATIONS])
def test_activation(type_name, params, span):
    lo, hi = span or (-2.5, 2.5)
    for i, shape in enumerate(SHAPES):
        check(type_name, params, [], [rand(shape, seed=i, lo=lo, hi=hi)])


# input ranges inside each UnaryOp function's domain (outside it both paths give nan)
UNARY_SPAN = {5: (0.0, 3.0), 6: (0.05, 3.0), 8: (0.05, 3.0), 12: (-1, 1), 13: (-1, 1), 17: (0.05, 3.0),
              25: (1.0, 3.0), 26: (-0.98, 0.98), 27: (-0.95, 3.0)}


@pytest.mark.parametrize("op_type", range(28))
def test_unaryop(op_type):
    lo, hi = UNARY_SPAN.get(op_type, (-2.5, 2.5))
    for i, shape in enumerate(FEW_SHAPES):
        check("UnaryOp", {0: op_type}, [], [rand(shape, seed=i, lo=lo, hi=hi)])


def test_unaryop_out_of_domain_is_nan_like_the_cpu():
    # sqrt/log/asin of out-of-domain values are nan on both paths, not garbage
    for op_type in (5, 6, 8, 12, 13, 17, 26, 27):
        check("UnaryOp", {0: op_type}, [], [rand((8, 3, 5), seed=op_type, lo=-3, hi=-1.01)])


def test_unaryop_edge_values_fp32():
    # ncnn's SIMD edges (exp saturation, log(0) = nan, 1/0 = nan, ...) as the CPU half has them
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 100.0, -100.0, 88.5, -88.5,
                  0.5, -0.5, 2.5, 1e-8, -1e-8, 0.99999, 1.0000001], np.float32)
    x = np.concatenate([x, np.zeros(4, np.float32)])
    for op_type in range(28):
        if op_type in (9, 10, 11):  # sin/cos/tan: no range reduction for 3e38 on the GPU
            continue
        report = testing.test_layer("UnaryOp", {0: op_type}, [], [x], variants=("fp32-pack1", "fp32-pack4"))
        assert report.ok, str(report)
    for type_name, params in [("Sigmoid", {}), ("Swish", {}), ("Mish", {}), ("Softplus", {}), ("Clip", {}),
                              ("HardSwish", {}), ("ELU", {}), ("GELU", {}), ("GELU", {0: 1}), ("TanH", {}),
                              ("Power", {0: 2.0}), ("Power", {0: -1.0}), ("Power", {0: 0.5}), ("Exp", {}),
                              ("Log", {}), ("Threshold", {})]:
        report = testing.test_layer(type_name, params, [], [x], variants=("fp32-pack1", "fp32-pack4"))
        assert report.ok, str(report)


CASTS = [(1, 2), (2, 1), (1, 4), (4, 1), (3, 1), (1, 1), (2, 2)]


@pytest.mark.parametrize("type_from,type_to", CASTS)
def test_cast(type_from, type_to):
    for i, shape in enumerate(FEW_SHAPES):
        x = rand(shape, seed=i, lo=-300, hi=300)
        if type_from == 3:
            x = np.round(x / 3)
        check("Cast", {0: type_from, 1: type_to}, [], [x])


def test_cast_rounding_edges_fp32():
    # ties to even, fp16 overflow to inf, fp16 subnormals, bf16 of subnormals (to zero) and nan
    x = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65519.0, 65520.0, -70000.0, 2**-24, 3 * 2**-26,
                  2**-25, 1e-8, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1e-39, -1e-39, np.nan, np.inf, -np.inf, 3e38,
                  0.1, -0.3], np.float32)
    for pair in [(1, 2), (1, 4)]:
        report = testing.test_layer("Cast", {0: pair[0], 1: pair[1]}, [], [x], variants=("fp32-pack1", "fp32-pack4"))
        assert report.ok, str(report)


def test_cast_unsupported_pair_falls_back_and_raises_like_the_cpu():
    layer = create_layer("Cast")
    pd = ParamDict()
    pd.set(0, 1)
    pd.set(1, 3)
    layer.load_param(pd)
    assert not layer.support_vulkan
    with pytest.raises(ParamError, match="not supported"):
        run_layer("Cast", {0: 1, 1: 3}, [], [rand((4, 3, 5))], gpu=True)


# -- per-channel affine: affine.comp --------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_batchnorm(shape):
    c = shape[0]
    weights = [rand(c, 1), rand(c, 2), rand(c, 3, lo=0.1, hi=2.0), rand(c, 4)]
    check("BatchNorm", {0: c, 1: 1e-3}, weights, [rand(shape, 5)])


@pytest.mark.parametrize("shape", SHAPES)
def test_bias(shape):
    size = shape[0] + 3 if len(shape) >= 3 else 5  # more values than channels: the first ones count
    check("Bias", {0: size}, [rand(size, 1)], [rand(shape, 2)])


@pytest.mark.parametrize("shape", SHAPES)
def test_scale(shape):
    c = shape[0]
    check("Scale", {0: c}, [rand(c, 1)], [rand(shape, 2)])
    check("Scale", {0: c + 2, 1: 1}, [rand(c + 2, 1), rand(c + 2, 3)], [rand(shape, 2)])


@pytest.mark.parametrize("shape", SHAPES)
def test_scale_from_second_input(shape):
    c = shape[0]
    s = rand(c, 7)
    # the scale blob as ncnn reads it: flat, 1-D or 2-D in any arrangement of its c values
    forms = [(c,), (c, 1), (1, c)] + [(k, c // k) for k in (2, 4) if c % k == 0 and c > k]
    for form in forms:
        check("Scale", {0: -233}, [], [rand(shape, 2), s.reshape(form)])


@pytest.mark.parametrize("shape", SHAPES)
def test_prelu(shape):
    c = shape[0]
    check("PReLU", {0: 1}, [rand(1, 1, lo=0.05, hi=0.5)], [rand(shape, 2)])
    check("PReLU", {0: c + 1}, [rand(c + 1, 3)], [rand(shape, 2)])


def test_affine_shape_errors_on_gpu():
    x = rand((8, 3, 5))
    with pytest.raises(ShapeError):
        run_layer("BatchNorm", {0: 4}, [rand(4, lo=0.1, hi=1.0)] * 4, [x], gpu=True)
    with pytest.raises(ShapeError):
        run_layer("Bias", {0: 4}, [rand(4)], [x], gpu=True)
    with pytest.raises(ShapeError):
        run_layer("Scale", {0: 4}, [rand(4)], [x], gpu=True)
    with pytest.raises(ShapeError):
        run_layer("Scale", {0: -233}, [], [x, rand((8, 1, 1))], gpu=True)
    with pytest.raises(ShapeError):
        run_layer("PReLU", {0: 4}, [rand(4)], [x], gpu=True)


# -- BinaryOp: binaryop.comp ----------------------------------------------------------------
POW_OPS = (6, 9)


def operand(shape, op_type, seed):
    if op_type in POW_OPS:
        return rand(shape, seed, lo=0.2, hi=2.0)  # ncnn's pow is defined for positive bases
    return rand(shape, seed, lo=-2.0, hi=2.0)


@pytest.mark.parametrize("op_type", range(19))
def test_binaryop_every_op(op_type):
    for i, shape in enumerate([(7,), (12, 5), (16, 3, 5), (4, 3, 2, 5)]):
        a, b = operand(shape, op_type, i), operand(shape, op_type, i + 10)
        check("BinaryOp", {0: op_type}, [], [a, b])
    a = operand((8, 3, 5), op_type, 1)
    check("BinaryOp", {0: op_type}, [], [a, operand((8,), op_type, 2)])
    check("BinaryOp", {0: op_type}, [], [operand((8, 3), op_type, 3), a])
    check("BinaryOp", {0: op_type}, [], [a, operand((1, 3, 1), op_type, 4)])


@pytest.mark.parametrize("op_type", range(19))
def test_binaryop_with_scalar(op_type):
    b = 0.5 if op_type in POW_OPS else -0.6
    for i, shape in enumerate([(7,), (12, 5), (3, 2, 3, 5), (8, 3, 3)]):
        check("BinaryOp", {0: op_type, 1: 1, 2: b}, [], [operand(shape, op_type, i)])


def ncnn_partners(shape):
    """Every B ncnn broadcasts against A: same rank with axes set to 1, a prefix of A's shape
    (lower ranks line up with the outer axes) or its all-ones form, and the legacy 1-D row."""
    out = {tuple(1 if m else s for m, s in zip(mask, shape))
           for mask in itertools.product((0, 1), repeat=len(shape))}
    for k in range(1, len(shape)):
        out.add(shape[:k])
        out.add((1,) * k)
    out.add((shape[-1],))
    return sorted(out)


A_SHAPES = [(12,), (8, 5), (4, 3, 5), (24, 2, 3, 5)]
BROADCAST_PAIRS = [(a, b) for a in A_SHAPES for b in ncnn_partners(a)]


@pytest.mark.parametrize("sa", A_SHAPES)
def test_binaryop_broadcasting_every_rank_pair(sa):
    for sb in ncnn_partners(sa):
        a, b = rand(sa, 1), rand(sb, 2)
        check("BinaryOp", {0: 1}, [], [a, b])  # sub: the operand order shows
        check("BinaryOp", {0: 1}, [], [b, a])


MIXED = [((3, 2, 7), (3,)), ((3, 2, 7), (3, 2)), ((3, 2, 7), (7,)), ((24, 1, 5), (24, 1, 1)),
         ((3, 2, 1, 5), (3, 1, 1, 5)), ((16, 2, 3, 5), (16,)), ((8, 3), (1, 3)), ((1, 4, 5), (6, 1, 1)),
         ((1, 5), (3, 1)), ((2, 1, 3, 1), (1, 4, 1, 5)), ((12, 5), (12,)), ((5, 12), (12,)), ((4, 4), (4,)),
         ((1, 8, 1), (4, 1, 3)), ((8, 1), (1, 12)), ((4, 3, 2, 5), (4, 3, 2)), ((1,), (12, 2, 3)),
         ((12, 1, 1, 1), (1, 2, 3, 4))]


@pytest.mark.parametrize("sa,sb", MIXED, ids=[f"{a}x{b}" for a, b in MIXED])
def test_binaryop_broadcasting_mixed_packing(sa, sb):
    # channel counts that pack differently (1/3/8/12/16/24), both operands broadcasting at once
    a, b = rand(sa, 1), rand(sb, 2)
    for op_type in (1, 3):
        check("BinaryOp", {0: op_type}, [], [a, b])
        check("BinaryOp", {0: op_type}, [], [b, a])


def test_binaryop_edges_fp32():
    # division by 0 / inf is nan, pow of a base <= 0 saturates, fmod/remainder exact near ties
    vals = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e38, 0.3, 0.1, -0.7, 2.5, 1.5,
                     0.75, 0.5, -2.0, 7.0, 3.0], np.float32)
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    grid = (np.arange(-48, 48, dtype=np.float32) / 16)
    a = np.concatenate([a, np.repeat(grid, 8)])
    b = np.concatenate([b, np.tile(np.array([0.25, -0.5, 0.75, 1.5, -3.0, 0.125, 2.0, -0.375], np.float32),
                                   len(grid))])
    for op_type in range(19):
        if op_type in (17, 18):  # the CPU half's float64 remainder is inexact for huge quotients
            keep = ~((np.abs(a) > 1e30) | (np.abs(b) > 1e30))
            x, y = a[keep], b[keep]
        else:
            x, y = a, b
        report = testing.test_layer("BinaryOp", {0: op_type}, [], [x, y], variants=("fp32-pack1", "fp32-pack4"))
        assert report.ok, str(report)


def test_binaryop_incompatible_shapes_raise_on_gpu():
    with pytest.raises(Error):
        run_layer("BinaryOp", {0: 0}, [], [rand((4, 3, 5)), rand((4, 2, 5))], gpu=True)
    with pytest.raises(Error):
        run_layer("BinaryOp", {0: 0}, [], [rand((6, 5)), rand((4,))], gpu=True)


def test_broadcast_plan_matches_the_cpu_rule():
    # legacy row: a (5,) against (3, 5) is a row along w; against (5, 5) it is per row
    out, a, b = elementwise.broadcast_plan((3, 5), (5,), 1, 1)
    assert out == (3, 5) and b[2] == 1  # b's packing axis indexes output axis 1 (w)
    out, a, b = elementwise.broadcast_plan((5, 5), (5,), 1, 1)
    assert out == (5, 5) and b[2] == 0
    out, a, b = elementwise.broadcast_plan((2, 1, 3, 1), (1, 4, 1, 5), 1, 1)
    assert out == (2, 4, 3, 5) and a[2] == 0 and b[2] == -1
    with pytest.raises(ShapeError):
        elementwise.broadcast_plan((4, 3), (4, 2), 1, 1)


# -- Eltwise: eltwise.comp --------------------------------------------------------------------
@pytest.mark.parametrize("op_type", [0, 1, 2])
def test_eltwise(op_type):
    for i, shape in enumerate(SHAPES):
        for n in (2, 3, 4):
            inputs = [rand(shape, seed=10 * i + k) for k in range(n)]
            check("Eltwise", {0: op_type}, [], inputs)
            if n == 3:  # coeffs weight a sum; prod and max ignore them
                check("Eltwise", {0: op_type, 1: [0.5, -1.5, 2.0]}, [], inputs)


def test_eltwise_errors_on_gpu():
    with pytest.raises(ShapeError):
        run_layer("Eltwise", {0: 1}, [], [rand((4, 3, 5)), rand((4, 3, 4))], gpu=True)
    with pytest.raises(ParamError):
        run_layer("Eltwise", {0: 1, 1: [1.0, 2.0]}, [], [rand((4, 3))] * 3, gpu=True)


# -- dispatch shape -----------------------------------------------------------------------------
def test_flat_global_size_splits_into_rows_past_the_workgroup_limit():
    class Dev:
        class info:
            @staticmethod
            def max_workgroup_count():
                return (65535, 65535, 65535)

    class Pipe:
        local_size_x = 64

    assert elementwise.flat_global_size(Pipe, Dev, 1000) == (1000, 1, 1)
    x, y, z = elementwise.flat_global_size(Pipe, Dev, 65535 * 64 * 3 + 5)
    assert x == 65535 * 64 and y == 4 and z == 1


def test_row_split_dispatch_computes_the_same(monkeypatch):
    # force a 2-D grid of narrow rows on small tensors: every flat shader must index by rows
    def narrow(pipeline, vkdev, n):
        width = 2 * pipeline.local_size_x
        return (width, -(-n // width), 1)

    monkeypatch.setattr(elementwise, "flat_global_size", narrow)
    x = rand((24, 3, 5), 1)
    check("Sigmoid", {}, [], [x])
    check("Scale", {0: 24, 1: 1}, [rand(24, 2), rand(24, 3)], [x])
    check("BinaryOp", {0: 2}, [], [x, rand((24, 1, 5), 4)])
    check("BinaryOp", {0: 2}, [], [x, rand((24, 3, 5), 4)])
    check("Eltwise", {0: 1}, [], [x, x * 2, x * 3])
