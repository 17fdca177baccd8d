"""Proposal (Faster R-CNN RPN) against real ncnn: boxes and scores after NMS."""

import numpy as np
import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer


def _rpn(h, w, seed, stride=16):
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 1, (18, h, w)).astype(np.float32)
    deltas = rng.uniform(-0.3, 0.3, (36, h, w)).astype(np.float32)
    info = np.array([h * stride, w * stride, 1.0], np.float32)
    return [scores, deltas, info]


@pytest.mark.parametrize("h,w", [(3, 5), (7, 6), (8, 8)])
@pytest.mark.parametrize("params", [{}, {2: 50, 3: 20}, {4: 0.5, 5: 4}, {0: 8, 1: 8}, {3: 5, 4: 0.3}])
def test_proposal_matches_ncnn(h, w, params):
    stride = params.get(0, 16)
    check_layer("Proposal", params, [], _rpn(h, w, h * w, stride), n_outputs=2)


def test_proposal_single_output():
    check_layer("Proposal", {3: 10}, [], _rpn(4, 4, 1))


def test_proposal_bad_inputs():
    with pytest.raises(ParamError, match="base_size"):
        run_layer("Proposal", {1: 0}, [], _rpn(3, 3, 0))
    s, d, info = _rpn(3, 3, 0)
    with pytest.raises(ShapeError, match="bbox deltas"):
        run_layer("Proposal", {}, [], [s, d[:20], info])
    with pytest.raises(ShapeError, match="im_info"):
        run_layer("Proposal", {}, [], [s, d, info[:2]])


@needs_gpu
def test_proposal_inside_gpu_net_matches_ncnn():
    check_layer("Proposal", {3: 20}, [], _rpn(5, 5, 3), n_outputs=2, gpu=True)
