"""Two-operand elementwise kernels: BinaryOp (with ncnn's broadcasting) and Eltwise.

ncnn broadcasts differently from numpy. Shapes line up from the OUTER end: in numpy
(c, h, w) terms a lower-rank operand is a *prefix* of the other's shape (a (c,) vector
is per channel, an (h, w) matrix is per channel-row), then same-rank operands
broadcast over axes of size 1 as numpy does. One legacy rule survives: a 1-D operand
that is not per-row/per-channel is read as a row along w (numpy's own rule).
See docs/developer-guide/binaryop-broadcasting.md and BinaryOp::forward.
"""

from __future__ import annotations

import numpy as np

from vkncnn.errors import ParamError, ShapeError

from .activation import EXP_ARG_MAX, FLT_MAX, FLT_MIN, exp_ps

OP_NAMES = ("add", "sub", "mul", "div", "max", "min", "pow", "rsub", "rdiv", "rpow", "atan2", "ratan2",
            "fmod", "rfmod", "logaddexp", "floor_divide", "rfloor_divide", "remainder", "rremainder")

# ncnn's vectorised x86 kernels (the path nearly every element takes) differ from
# IEEE/libm at the edges; we follow them:
# - division multiplies by a refined reciprocal estimate, so x / 0, x / subnormal and
#   x / inf are nan;
# - pow is exp_ps(y * log_ps(x)): a base <= 0 (or a nan exponent product) yields exp_ps's
#   saturated 2.4061436e38, as does any overflow, and the base is clamped into
#   [FLT_MIN, FLT_MAX].
# Not modelled: when a blob's channel count is not a multiple of 4, the last (run % 4)
# elements of each contiguous run go through a scalar libm tail in ncnn, where x / 0 is
# +-inf and pow(-2, 2) is 4.
_EXP_MAX = exp_ps(EXP_ARG_MAX)


def _div(x, y) -> np.ndarray:
    x, y = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))
    q = np.divide(x, y)
    return np.where((np.abs(y) < FLT_MIN) | np.isinf(y), np.float32(np.nan), q)


def _pow(x, y) -> np.ndarray:
    x, y = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))
    xc = np.clip(x, FLT_MIN, FLT_MAX)
    # a materialised exponent: numpy turns a broadcast (stride-0) 0.5 into sqrt, which
    # differs from pow at -0 and -inf
    y = np.ascontiguousarray(y)
    t = y * np.log(xc)
    r = np.minimum(np.power(xc, y), _EXP_MAX)
    return np.where((x > 0) & ~np.isnan(t), r, _EXP_MAX)


def _atan2(y, x) -> np.ndarray:
    # ncnn's atan2 gives +0 or pi at the origin by the sign of x only
    r = np.arctan2(y, x)
    origin = (y == 0) & (x == 0)
    return np.where(origin, np.where(np.signbit(x), np.float32(np.pi), np.float32(0)), r)


def _remainder(x, y) -> np.ndarray:
    """IEEE remainder (C remainderf): x - n * y with n = x / y rounded half to even."""
    x64, y64 = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return x64 - np.rint(x64 / y64) * y64


def _floor_divide(x, y) -> np.ndarray:
    return np.floor(_div(x, y))


# op(x, y) with x from the first input, y from the second (or the scalar b).
_OPS = (
    np.add,
    np.subtract,
    np.multiply,
    _div,
    np.maximum,
    np.minimum,
    _pow,
    lambda x, y: np.subtract(y, x),
    lambda x, y: _div(y, x),
    lambda x, y: _pow(y, x),
    _atan2,
    lambda x, y: _atan2(y, x),
    np.fmod,
    lambda x, y: np.fmod(y, x),
    np.logaddexp,
    _floor_divide,
    lambda x, y: _floor_divide(y, x),
    _remainder,
    lambda x, y: _remainder(y, x),
)


def check_op_type(op_type: int) -> None:
    if not 0 <= op_type < len(_OPS):
        names = ", ".join(OP_NAMES)
        raise ParamError(f"BinaryOp op_type {op_type} is not one of 0-{len(_OPS) - 1} ({names})")


def apply_op(x, y, op_type: int) -> np.ndarray:
    """op_type applied elementwise (numpy broadcasting) in float32."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        out = _OPS[op_type](x, y)
    return np.asarray(out, dtype=np.float32)


def _expand_rank(x: np.ndarray, other: np.ndarray, outdims: int) -> np.ndarray:
    """Give a lower-rank operand ncnn's view at rank `outdims` (BinaryOp's 'expand inner axes')."""
    if x.ndim == outdims:
        return x
    if x.ndim == 1:
        n = x.shape[0]
        # per-row (2-D target) or per-channel (3-D/4-D target) when the length matches that
        # outer axis, else the legacy reading: a row along w
        if n == other.shape[0]:
            return x.reshape((n,) + (1,) * (outdims - 1))
        return x.reshape((1,) * (outdims - 1) + (n,))
    # 2-D into 3-D/4-D, 3-D into 4-D: the shape is a prefix, new axes go innermost
    return x.reshape(x.shape + (1,) * (outdims - x.ndim))


def broadcast_shapes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both operands reshaped to the output rank, checked to broadcast axis by axis."""
    outdims = max(a.ndim, b.ndim)
    a2 = _expand_rank(a, b, outdims)
    b2 = _expand_rank(b, a, outdims)
    for sa, sb in zip(a2.shape, b2.shape):
        if sa != sb and sa != 1 and sb != 1:
            raise ShapeError(
                f"BinaryOp cannot broadcast shapes {a.shape} and {b.shape} (seen as {a2.shape} and "
                f"{b2.shape}): each axis must match or be 1; a lower-rank operand lines up with the "
                f"outer axes (ncnn's rule, not numpy's)")
    return a2, b2


def binary_op(a: np.ndarray, b: np.ndarray, op_type: int) -> np.ndarray:
    """BinaryOp on two blobs with ncnn's broadcasting."""
    a2, b2 = broadcast_shapes(a, b)
    return apply_op(a2, b2, op_type)


def binary_op_scalar(a: np.ndarray, b: float, op_type: int) -> np.ndarray:
    """BinaryOp with with_scalar=1: op(x, b) for every x."""
    return apply_op(a, np.float32(b), op_type)


# -- Eltwise ----------------------------------------------------------------------
ELTWISE_PROD, ELTWISE_SUM, ELTWISE_MAX = 0, 1, 2


def eltwise(inputs: list[np.ndarray], op_type: int, coeffs: np.ndarray | None = None) -> np.ndarray:
    """Eltwise over N same-shape blobs: product, (weighted) sum or maximum.

    coeffs weight the sum only; ncnn ignores them for prod and max.
    """
    if op_type == ELTWISE_PROD:
        out = inputs[0] * inputs[1]
        for x in inputs[2:]:
            out = out * x
    elif op_type == ELTWISE_SUM:
        if coeffs is None or len(coeffs) == 0:
            out = inputs[0] + inputs[1]
            for x in inputs[2:]:
                out = out + x
        else:
            c = np.asarray(coeffs, np.float32)
            out = inputs[0] * c[0] + inputs[1] * c[1]
            for i, x in enumerate(inputs[2:], start=2):
                out = out + x * c[i]
    elif op_type == ELTWISE_MAX:
        out = np.maximum(inputs[0], inputs[1])
        for x in inputs[2:]:
            out = np.maximum(out, x)
    else:
        raise ParamError(f"Eltwise op_type {op_type} is not 0 (prod), 1 (sum) or 2 (max)")
    return np.asarray(out, dtype=np.float32)
