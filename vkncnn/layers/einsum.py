"""Einsum: a sum of products over named axes, e.g. 'ij,jk->ik' (matrix product).

Param 0 is the equation, stored as an int array of character codes (pnnx writes it
so). ncnn's rules: input letters i..x, output letters i..l (rank 1-4), one input per
left-hand token, every output letter taken from the inputs, and 'ii' alone is the
trace of a square matrix. ncnn lays the
output out positionally (axis n is letter 'ijkl'[n]), so an output that names other
letters or another order ('ij->ji') would silently come out untransposed there; we
refuse such equations instead.
"""

import numpy as np

from vkncnn.cpu_fallback import einsum as kernel
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

INPUT_LETTERS = "ijklmnopqrstuvwx"
MAX_EQUATION = 256
MAX_OUTPUT_ELEMENTS = 1 << 28  # 1 GiB of float32: beyond this a typo, not a model


def _decode(codes: np.ndarray) -> str:
    codes = np.asarray(codes).ravel()
    if codes.size == 0:
        raise ParamError("Einsum needs an equation (param 0, an array of character codes), got none")
    if codes.size > MAX_EQUATION:
        raise ParamError(f"Einsum equation has {codes.size} characters, at most {MAX_EQUATION} allowed")
    if np.any((codes < 32) | (codes > 126)) or np.any(codes != np.round(codes)):
        raise ParamError(f"Einsum equation (param 0) must be printable ASCII codes, got {codes[:16].tolist()}")
    return "".join(chr(int(c)) for c in codes)


def parse_equation(equation: str) -> tuple[list[str], str]:
    """(input tokens, output token); ([], 'ii') for the trace form. Raises ParamError."""
    equation = equation.replace(" ", "")
    if equation == "ii":
        return [], "ii"
    if equation.count("->") != 1:
        raise ParamError(f"Einsum equation {equation!r} must have exactly one '->' (or be 'ii', the trace)")
    lhs, rhs = equation.split("->")
    tokens = lhs.split(",")
    for t in tokens:
        if not t:
            raise ParamError(f"Einsum equation {equation!r} has an empty input term")
        if len(t) > 4:
            raise ParamError(f"Einsum input term {t!r} in {equation!r} has {len(t)} axes; blobs have 1-4")
        bad = [c for c in t if c not in INPUT_LETTERS]
        if bad:
            raise ParamError(f"Einsum input term {t!r} in {equation!r} uses {''.join(bad)!r}; "
                             f"ncnn names axes with the letters i..x only")
    if not 1 <= len(rhs) <= 4:
        raise ParamError(f"Einsum output {rhs!r} in {equation!r} must have 1-4 axes")
    if rhs != kernel.OUTPUT_LETTERS[:len(rhs)]:
        raise ParamError(f"Einsum output {rhs!r} in {equation!r}: ncnn lays out a rank-{len(rhs)} output as "
                         f"{kernel.OUTPUT_LETTERS[:len(rhs)]!r} whatever the letters say; rename the axes so "
                         f"the output reads {kernel.OUTPUT_LETTERS[:len(rhs)]!r}")
    missing = [c for c in rhs if c not in lhs]
    if missing:
        raise ParamError(f"Einsum output {rhs!r} in {equation!r} names {''.join(missing)!r}, which no input has")
    return tokens, rhs


@register_layer("Einsum")
class Einsum(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.equation = _decode(pd.get(0, np.zeros(0, np.int32)))
        self.tokens, self.rhs = parse_equation(self.equation)
        return 0

    def forward_cpu(self, bottoms, opt):
        if not self.tokens:  # trace
            m = bottoms[0] if bottoms else None
            if m is None or m.ndim != 2 or m.shape[0] != m.shape[1]:
                raise ShapeError(f"Einsum 'ii' (trace) needs one square 2-D blob, got "
                                 f"{None if m is None else m.shape}")
            return [kernel.trace(m)]
        if len(bottoms) != len(self.tokens):
            raise ShapeError(f"Einsum {self.equation!r} has {len(self.tokens)} input terms but the layer got "
                             f"{len(bottoms)} blobs")
        sizes: dict[str, int] = {}
        for i, (t, b) in enumerate(zip(self.tokens, bottoms)):
            if b.ndim != len(t):
                raise ShapeError(f"Einsum {self.equation!r}: input {i} term {t!r} has {len(t)} axes, "
                                 f"the blob has shape {b.shape}")
            for c, n in zip(t, b.shape):
                if sizes.setdefault(c, n) != n:
                    raise ShapeError(f"Einsum {self.equation!r}: axis {c!r} is {sizes[c]} in one place and {n} "
                                     f"in input {i} (shape {b.shape})")
        # an output letter may come from different inputs (an outer product): summed in float64
        check_alloc(opt, [sizes.get(c, 1) for c in self.rhs], 8, "the output")
        out_elements = int(np.prod([sizes.get(c, 1) for c in self.rhs], dtype=np.int64))
        if out_elements > MAX_OUTPUT_ELEMENTS:
            raise ShapeError(f"Einsum {self.equation!r} would output {out_elements} values (more than "
                             f"{MAX_OUTPUT_ELEMENTS}); input shapes {[b.shape for b in bottoms]}")
        return [kernel.einsum(self.tokens, list(bottoms), len(self.rhs))]
