"""Layers that run a whole batch in one call (`batch_native`) give the stack of their
per-item results, through the same entry the extractor uses for batched blobs."""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from vkncnn.batch_forward import forward_batched
from vkncnn.format.modelbin import ModelBinFromMatArray
from vkncnn.format.paramdict import ParamDict


def make_layer(type_name: str, params: dict, weights=()):
    layer = vkncnn.create_layer(type_name)
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([np.asarray(w, np.float32) for w in weights]))
    return layer


def check_batch(layer, x: np.ndarray, n: int, rtol=1e-5):
    opt = vkncnn.Option()
    assert getattr(layer, "batch_native", False)
    tops, sizes = forward_batched(layer, [x.copy()], [n], opt)
    want = np.stack([layer.forward_cpu([x[b].copy()], opt)[0] for b in range(n)])
    assert sizes == [n]
    assert tops[0].shape == want.shape
    np.testing.assert_allclose(tops[0], want, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("item", [(12,), (3, 2, 2), (5, 12)])  # a vector, a CHW blob, 2-D rows
@pytest.mark.parametrize("bias,act", [(0, 0), (1, 1), (1, 2), (1, 3), (0, 4)])
def test_innerproduct_batch_is_stack_of_items(n, item, bias, act):
    rng = np.random.default_rng(n * 100 + len(item) * 10 + act)
    params = {0: 7, 1: bias, 2: 7 * 12, 9: act}
    if act == 2:
        params[10] = np.array([0.1], np.float32)
    if act == 3:
        params[10] = np.array([-0.5, 0.5], np.float32)
    weights = [rng.standard_normal(7 * 12)] + ([rng.standard_normal(7)] if bias else [])
    layer = make_layer("InnerProduct", params, weights)
    x = rng.standard_normal((n,) + item).astype(np.float32)
    check_batch(layer, x, n)


def test_innerproduct_batch_of_wrong_size_names_the_layer():
    layer = make_layer("InnerProduct", {0: 3, 2: 3 * 4}, [np.ones(12)])
    with pytest.raises(vkncnn.Error, match="InnerProduct expects 4"):
        forward_batched(layer, [np.ones((2, 5), np.float32)], [2], vkncnn.Option())


@pytest.mark.parametrize("type_name,params", [
    ("ReLU", {}), ("ReLU", {0: 0.2}), ("Clip", {0: -0.3, 1: 0.4}), ("Sigmoid", {})])
@pytest.mark.parametrize("n", [2, 4])
def test_elementwise_batch_is_stack_of_items(type_name, params, n):
    layer = make_layer(type_name, params)
    x = np.random.default_rng(n).standard_normal((n, 3, 4, 5)).astype(np.float32)
    check_batch(layer, x, n)


def test_innerproduct_large_weight_batches_only_many_rows():
    # past the crossover weight size, a few rows run per item; 16 rows run as one product
    rng = np.random.default_rng(7)
    layer = make_layer("InnerProduct", {0: 600, 1: 1, 2: 600 * 500},
                       [rng.standard_normal(600 * 500), rng.standard_normal(600)])
    opt = vkncnn.Option()
    few = rng.standard_normal((2, 500)).astype(np.float32)
    assert layer.forward_cpu_batch([few], [2], opt) is None
    check_batch(layer, few, 2)
    many = rng.standard_normal((2, 8, 500)).astype(np.float32)
    assert layer.forward_cpu_batch([many], [2], opt)[0].shape == (2, 8, 600)
    check_batch(layer, many, 2, rtol=1e-4)
