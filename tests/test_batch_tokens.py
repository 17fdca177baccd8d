"""Batch inference pieces that do not need a batching extractor: the `n` token of shape
expressions, Reshape across the batch (pd 12/13, cpu_fallback/batch_reshape.py), and the
batch fixtures' data. Real ncnn, fed `ncnn.Mat(x, batch_index=0)`, is the judge."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from tests.oracle import layer_param_text
from vkncnn.cpu_fallback import shape
from vkncnn.cpu_fallback.batch_reshape import plan_batch_reshape, reshape_batched
from vkncnn.errors import ParamError, ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.tools.ncnn_oracle import run_ncnn_batch

FIXTURES = Path(__file__).parent / "fixtures"
BATCH_FIXTURES = sorted(p.parent.name for p in FIXTURES.glob("*/io_batch3.npz"))


def reshape_layer(params: dict):
    layer = vkncnn.create_layer("Reshape")
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    layer.load_param(pd)
    return layer


def reshape_param_text(params: str, n_inputs: int = 1) -> str:
    return layer_param_text("Reshape", {}, n_inputs).rstrip("\n") + f" {params}\n"


# -- the n token ---------------------------------------------------------------------------
def test_n_token_reads_each_blobs_batch_size():
    blobs = [np.zeros((2, 3, 4), np.float32), np.zeros((5,), np.float32)]
    assert shape.eval_list_expression("0n,1n,*(0n,0w),+(1n,1w)", blobs, [3, 7]) == [3, 7, 12, 12]
    assert shape.eval_list_expression("0n,1n", blobs) == [1, 1]  # a plain blob holds one item
    assert shape.count_expression_blobs("*(2n,4)") == 3
    with pytest.raises(ValueError, match="2 batch sizes for 1 blob"):
        shape.eval_list_expression("0n", blobs[:1], [3, 7])


@pytest.mark.parametrize("n", [1, 3])
def test_n_token_in_a_batch_reshape_matches_ncnn(n):
    """6="-1,0n" with both batch axes 0: the target (0n, -1) keeps the batch and flattens each item."""
    x = np.arange(n * 24, dtype=np.float32).reshape(n, 2, 3, 4)
    ret, want, want_n = run_ncnn_batch(reshape_param_text('6="-1,0n" 12=0 13=0'), b"", {"in0": x}, ["out0"])["out0"]
    assert ret == 0 and want_n == n and want.shape == (n, 24)
    layer = reshape_layer({6: "-1,0n", 12: 0, 13: 0})
    assert layer.support_batch
    (got,), (got_n,) = layer.forward_cpu_batch([x if n > 1 else x[0]], [n], None)
    assert got_n == n
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_n_token_folds_the_batch_into_rows_as_pnnx_writes_it():
    """pnnx's `x.reshape(b * c, h * w)`: 12=0 13=233 6="20,*(4,0n)", then the way back."""
    x = np.random.default_rng(0).standard_normal((3, 4, 4, 5)).astype(np.float32)
    text = reshape_param_text('12=0 13=233 6="20,*(4,0n)"')
    ret, want, want_n = run_ncnn_batch(text, b"", {"in0": x}, ["out0"])["out0"]
    assert ret == 0 and want_n == 1 and want.shape == (1, 12, 20)
    (rows,), (rows_n,) = reshape_layer({6: "20,*(4,0n)", 12: 0, 13: 233}).forward_cpu_batch([x], [3], None)
    assert rows_n == 1
    np.testing.assert_array_equal(rows, want[0])
    np.testing.assert_array_equal(rows, x.reshape(12, 20))
    back = reshape_layer({6: "5,4,4,//(*(20,0h),80)", 12: 233, 13: 0})
    (y,), (y_n,) = back.forward_cpu_batch([rows], [1], None)
    assert y_n == 3
    np.testing.assert_array_equal(y, x)


# -- reshape across the batch against ncnn --------------------------------------------------
def targets_for(logical: list[int]) -> list[list[int]]:
    total = math.prod(logical)
    out = [[total], [-1], [0, -1], [-1, 0], list(logical), list(logical[::-1]), [0, 0, -1],
           [-1, -1], [-2, -1], [7, -1], [total, 1, 1, 1, 1]]
    if len(logical) > 1:
        out.append([logical[0] * logical[1], *logical[2:]])
    return out


def batch_cases():
    for item in [(6,), (4, 6), (2, 3, 4), (2, 1, 3, 4)]:
        for n in (1, 3):
            for in_axis in (0, 1, -1, len(item), len(item) + 1, 233):
                a = in_axis + len(item) + 1 if in_axis < 0 else in_axis
                logical = list(item) if not 0 <= a <= len(item) else [*item[:a], n, *item[a:]]
                for target in targets_for(logical):
                    for out_axis in (0, 1, -1, len(target), 233):
                        if (in_axis, out_axis) != (233, 233):
                            yield item, n, in_axis, target, out_axis


@pytest.mark.parametrize("item,n", [(i, n) for i in [(6,), (4, 6), (2, 3, 4), (2, 1, 3, 4)] for n in (1, 3)])
def test_reshape_batched_matches_ncnn_or_refuses_where_it_does(item, n):
    x = np.arange(n * math.prod(item), dtype=np.float32).reshape((n, *item))
    agreed = refused = 0
    for c_item, c_n, in_axis, target, out_axis in batch_cases():
        if (c_item, c_n) != (item, n):
            continue
        expr = ",".join(str(v) for v in target[::-1])
        params = f'6="{expr}" 12={in_axis} 13={out_axis}'
        try:
            layer = reshape_layer({6: expr, 12: in_axis, 13: out_axis})
        except ParamError:  # ncnn refuses the same file at load: checked below
            layer = None
        try:
            ret, want, want_n = run_ncnn_batch(reshape_param_text(params), b"", {"in0": x}, ["out0"])["out0"]
        except AssertionError:  # load_param failed in ncnn
            assert layer is None, f"{params}: ncnn refuses it at load, vkncnn loads it"
            refused += 1
            continue
        assert layer is not None, f"{params}: ncnn loads it, vkncnn refuses it"
        try:
            got, got_n = reshape_batched(x, n, target, in_axis, out_axis, has_batch_axis=True)
        except ShapeError:
            assert ret != 0, f"{params} on {x.shape}: ncnn answers, vkncnn refuses"
            refused += 1
            continue
        assert ret == 0, f"{params} on {x.shape}: ncnn returns {ret}, vkncnn answers {got.shape}"
        assert (got_n, got.shape) == (want_n, want.shape), f"{params}: {got.shape} n={got_n}, ncnn n={want_n}"
        np.testing.assert_array_equal(got, want, err_msg=params)
        agreed += 1
    assert agreed > 30 and refused > 30  # both sides of the grid really ran


def test_params_target_and_ncnn_agree_at_batch_3():
    """The pd 0/1/11/2 form: extents outermost first over the logical (batch-included) shape."""
    x = np.arange(36, dtype=np.float32).reshape(3, 2, 6)
    for params, pd in [("0=3 1=3 2=4 12=1 13=1", {0: 3, 1: 3, 2: 4, 12: 1, 13: 1}),
                       ("0=-1 1=0 12=0 13=233", {0: -1, 1: 0, 12: 0, 13: 233}),
                       ("0=2 1=3 11=6 2=1 12=2 13=1", {0: 2, 1: 3, 11: 6, 2: 1, 12: 2, 13: 1})]:
        ret, want, want_n = run_ncnn_batch(reshape_param_text(params), b"", {"in0": x}, ["out0"])["out0"]
        assert ret == 0, params
        (got,), (got_n,) = reshape_layer(pd).forward_cpu_batch([x], [3], None)
        assert got_n == want_n, params
        np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=params)


def test_batch_reshape_errors_say_why():
    with pytest.raises(ShapeError, match="batch of 3 but input_batch_axis"):
        plan_batch_reshape((4, 6), 3, [-1], 233, 0)
    with pytest.raises(ShapeError, match="more than one -1"):
        plan_batch_reshape((4, 6), 3, [-1, -1], 0, 0)
    with pytest.raises(ShapeError, match="leading axis of 3"):
        reshape_batched(np.zeros((4, 6), np.float32), 3, [-1], 0, 233)
    with pytest.raises(ParamError, match="at most 4"):
        reshape_layer({6: "1,1,1,1,24", 12: 0, 13: 233})


def test_reshape_without_batch_axes_is_unchanged():
    layer = reshape_layer({0: -1})
    assert not layer.support_batch
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(layer.forward_cpu([x], None)[0], x.reshape(24))
    with pytest.raises(ShapeError, match="item by item"):
        layer.forward_cpu_batch([x], [1], None)


# -- the batch fixtures' data -----------------------------------------------------------------
def test_batch_fixtures_present():
    assert {"se_block", "cbam_block", "flatten_linear", "batch_reshape"} <= set(BATCH_FIXTURES)


@pytest.mark.parametrize("name", BATCH_FIXTURES)
def test_ncnn_batch_3_matches_torch(name):
    """Guards io_batch3.npz: real ncnn at batch 3 gives torch's 3 answers with n == 3."""
    d = FIXTURES / name
    with np.load(d / "io_batch3.npz") as z:
        arrays = {k: z[k] for k in z.files}
    inputs = {k: v for k, v in arrays.items() if k.startswith("in")}
    outs = sorted(k for k in arrays if k.startswith("out") and not k.endswith("_n"))
    got = run_ncnn_batch((d / "model.param").read_text(), (d / "model.bin").read_bytes(), inputs, outs)
    for k in outs:
        ret, arr, n = got[k]
        assert ret == 0 and n == int(arrays[f"{k}_n"]), f"{name} {k}: ret {ret}, n {n}"
        assert arr.shape == arrays[k].shape
        np.testing.assert_allclose(arr, arrays[k], rtol=1e-3, atol=1e-4, err_msg=f"{name} {k}")
