"""GridCase, the layer -> grid table, and the small helpers the family modules share."""

from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np


class GridCase(NamedTuple):
    """One layer run: its params, its weights (None: seeded random of the sizes the layer
    asks for; a list of arrays as vkncnn.testing.weights_bin takes), and its inputs (numpy
    shapes, filled with seeded uniform(-1, 1) values, or ready arrays)."""
    params: dict
    weights: object
    inputs: list
    n_outputs: int = 1
    tol: float = 1e-4
    edge: bool = False  # an edge case (a zero size, a zero count): always kept when sampling
    # elements that may differ beyond tol: a discontinuous op (floor, remainder) may round a
    # quotient that sits on a step either way, and so does ncnn between its own code paths
    stray: int = 0


GRIDS: dict = {}  # layer type -> function returning its list of GridCase


def grid(*type_names):
    """Register a grid function for one or more layer types (it gets the type name)."""
    def wrap(fn):
        for name in type_names:
            GRIDS[name] = fn
        return fn
    return wrap


# Not in ncnn's grids: an input with a zero-size axis, per layer (params, inputs). ncnn either
# refuses it (-100) or answers an empty Mat of dims 0; vkncnn may keep the axes (an empty
# answer agrees with ncnn's dims-0 one), but must not fail with anything but a vkncnn.Error.
ZERO = (3, 0, 5)
ZERO_SIZE_CASES = {
    "ReLU": ({}, [ZERO]), "Sigmoid": ({}, [ZERO]), "Clip": ({0: -1.0, 1: 1.0}, [ZERO]),
    "UnaryOp": ({0: 1}, [ZERO]), "BinaryOp": ({0: 0}, [ZERO, ZERO]), "Eltwise": ({0: 1}, [ZERO, ZERO]),
    "Concat": ({0: 0}, [ZERO, ZERO]), "Split": ({}, [ZERO]), "Cast": ({0: 1, 1: 2}, [ZERO]),
    "Softmax": ({0: 0, 1: 1}, [ZERO]), "Permute": ({0: 1}, [ZERO]), "Squeeze": ({0: 1, 1: 1, 2: 1}, [ZERO]),
    "Interp": ({0: 1, 1: 2.0, 2: 2.0}, [ZERO]), "LayerNorm": ({0: 5, 2: 0}, [ZERO]),
    "Padding": ({0: 1, 1: 1}, [ZERO]), "Pooling": ({0: 0, 1: 1}, [ZERO]), "Dropout": ({}, [ZERO]),
}


def grid_cases(type_name: str) -> list:
    _load_families()
    cases = GRIDS[type_name](type_name)
    if type_name in ZERO_SIZE_CASES:
        params, inputs = ZERO_SIZE_CASES[type_name]
        cases = cases + [GridCase(params, [], inputs, edge=True)]
    return cases


def _load_families() -> None:
    from . import (  # noqa: F401  (they register themselves)
        attention,
        binary,
        conv,
        conv_nd,
        elementwise,
        linear,
        norm,
        recurrent_quant,
        shape,
        shape_misc,
        vision,
        window,
    )


def nc(*ncnn_dims) -> tuple:
    """ncnn's RandomMat(w, h, d, c) argument order as a numpy shape (c, d, h, w)."""
    return tuple(reversed(ncnn_dims))


def case_rng(type_name: str, index: int) -> np.random.Generator:
    return np.random.default_rng([index, zlib.crc32(type_name.encode())])


def activation(rng: np.random.Generator, n_types: int = 5) -> dict:
    """The fused activation ncnn's conv tests draw per case: type 0..n_types-1 and its params."""
    kind = int(rng.integers(n_types))
    alpha = float(rng.uniform(0, 1)) if kind == 6 else float(rng.uniform(-1, 0))
    return {9: kind, 10: [alpha, float(rng.uniform(0, 1))]}
