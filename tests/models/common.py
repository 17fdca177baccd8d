"""Shared by the whole-model tests: random weights, inputs, and both runtimes."""

from __future__ import annotations

import functools

import numpy as np

import vkncnn
from vkncnn.tools.benchmark_models import INPUT_SHAPES, param_path
from vkncnn.tools.compare_models import with_detections
from vkncnn.tools.randweights import random_weights


@functools.cache
def model_weights(name: str) -> bytes:
    return random_weights(str(param_path(name)), seed=0, input_shapes=INPUT_SHAPES[name])


def model_io(name: str) -> tuple[str, dict[str, np.ndarray], list[str]]:
    text = with_detections(param_path(name).read_text())
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    rng = np.random.default_rng(1)
    inputs = {n: rng.uniform(-1, 1, INPUT_SHAPES[name]).astype(np.float32) for n in net.input_names()}
    return text, inputs, net.output_names()


def output_err(got: np.ndarray, want: np.ndarray) -> float:
    """Relative error of one output; detection lists (N, 6) are compared as sets of boxes.

    Detections whose scores differ in the last bits may swap places between runtimes,
    so both lists are put in one order by (label, x1, y1, x2, y2) before comparing.
    """
    from vkncnn.testing import rel_err

    if got.shape == want.shape and got.ndim == 2 and got.shape[-1] == 6:
        def order(a):
            return a[np.lexsort((a[:, 5], a[:, 4], a[:, 3], a[:, 2], a[:, 0]))]
        return rel_err(order(got), order(want))
    return rel_err(got, want)
