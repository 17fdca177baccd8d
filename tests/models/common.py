"""Shared by the whole-model tests: random weights, inputs, and both runtimes."""

from __future__ import annotations

import functools

import numpy as np

import vkncnn
from vkncnn.tools.benchmark_models import INPUT_SHAPES, param_path
from vkncnn.tools.compare_models import output_err, with_detections  # noqa: F401
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
