"""What the layer fuzzer draws: one Case per (layer type, seed, index), and the paths and
tolerances it is judged at."""

from __future__ import annotations

from dataclasses import dataclass

from vkncnn.testing import layer_param_text, param_entries

PATHS = ("cpu", "gpu", "gpu16")
FP32_TOL = 1e-4
FP16_TOL = 1e-2


@dataclass
class Case:
    """One layer, its params, inputs and weights (None: seeded random of the sizes it asks for)."""
    type_name: str
    params: dict
    inputs: list
    weights: object = None
    n_outputs: int = 1
    tol: float = FP32_TOL      # fp32 paths
    tol16: float = FP16_TOL    # fp16 storage path
    paths: tuple = PATHS       # where this config is meaningful (e.g. no fp16 for exact-integer ops)
    # outputs on an integer grid (an int8-requantized result): one step apart still agrees,
    # whatever the output's magnitude (a value a hair from .5 may round either way)
    step: float = 0.0
    # a multi-layer case (chain.py): its whole .param (inputs in0.., layers
    # reading them) and the blobs to extract, in extraction order; params then unused
    text: str = ""
    outputs: tuple = ()

    def param_text(self) -> str:
        return self.text or layer_param_text(self.type_name, self.params, len(self.inputs), self.n_outputs)

    def output_names(self) -> list:
        return list(self.outputs) or [f"out{i}" for i in range(self.n_outputs)]

    def describe(self) -> str:
        shapes = [tuple(x.shape) for x in self.inputs]
        if self.text:
            # each layer as "Type bottoms tops params" (its name and blob counts left out)
            layers = " | ".join(" ".join(line.split()[:1] + line.split()[4:])
                                for line in self.text.splitlines()[2:] if not line.startswith("Input"))
            return f"{layers} inputs={shapes} extract={list(self.outputs)}"
        return f"{self.type_name} {param_entries(self.params)} inputs={shapes}"
