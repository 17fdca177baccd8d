"""A model named on the command line: a shipped benchmark model by name, or any .param by path.

`vkncnn bench` and `vkncnn compare` take either. A benchmark model brings benchncnn's input
shape; a path brings the shapes given with --shape, or those its .param hints at. Weights
come from the .bin when one is given, else seeded random weights fitted to the input
(tools/randweights.py), so any model can be timed or compared without its weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .benchmark_models import BENCHMARK_DIR, INPUT_SHAPES, param_path
from .cmd_common import CommandError, Shape, existing_file
from .model_summary import input_shapes, load_param
from .randweights import random_weights


@dataclass
class ModelSource:
    label: str               # what the tables call it: the benchmark name, or the path as given
    param: Path
    bin: Path | None         # None: seeded random weights
    shapes: dict[str, Shape]  # every input, in the net's input order

    def weights(self, seed: int = 0) -> bytes:
        if self.bin is not None:
            return self.bin.read_bytes()
        return random_weights(str(self.param), seed=seed, input_shapes=dict(self.shapes))

    def random_inputs(self, seed: int = 1) -> dict[str, np.ndarray]:
        """Seeded uniform(-1, 1) arrays, one per input, drawn in input order."""
        rng = np.random.default_rng(seed)
        return {name: rng.uniform(-1, 1, shape).astype(np.float32) for name, shape in self.shapes.items()}


def is_path(token: str) -> bool:
    """A token is a path when it names a .param (text or binary) or an existing file."""
    return token.endswith((".param", ".param.bin")) or "/" in token or Path(token).is_file()


def find_param(token: str) -> tuple[str, Path]:
    """(label, .param path) of a path or a benchmark model's name; a CommandError when neither."""
    if is_path(token):
        return token, existing_file(token, "model")
    if param_path(token).exists():
        return token, param_path(token)
    raise CommandError(f"unknown model {token!r}: not a .param file, and not one of the benchmark models "
                       f"({', '.join(sorted(p.stem for p in BENCHMARK_DIR.glob('*.param')))})")


def resolve_model(token: str, given: list[tuple[str | None, Shape]] = (), bin_path: str | None = None) -> ModelSource:
    """The model `token` names, with a shape for every input; a CommandError says what is missing."""
    label, param = find_param(token)
    weights = existing_file(bin_path, "weights") if bin_path else None
    net = load_param(param)
    names = net.input_names()
    given = list(given)
    if not given and label in INPUT_SHAPES:  # benchncnn's input, for every input of the model
        given = [(name, INPUT_SHAPES[label]) for name in names]
    return ModelSource(label, Path(param), weights, input_shapes(net, given))
