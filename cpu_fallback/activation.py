"""Elementwise kernels: activations (ReLU .. SELU) and elementwise math (UnaryOp, Power,
Exp, Log), as numpy functions ndarray -> new float32 ndarray.

Where ncnn's x86 kernels give a definite answer at the edge of a function's domain
(log(0), 1/0, exp overflow, ...) these functions give the same one; see "ncnn's SIMD
math" below.
"""

from __future__ import annotations

import numpy as np

# np.clip with scalar bounds runs a SIMD loop; np.maximum/np.minimum against a scalar
# do not and measured several times slower, so ReLU and Clip are written as clips
# (figures: docs/perf-notes.md, "ReLU and Clip as np.clip").
_ZERO = np.float32(0)
_INF = np.float32(np.inf)


def relu(x: np.ndarray, slope: float = 0.0) -> np.ndarray:
    if slope == 0.0:
        return np.clip(x, _ZERO, _INF).astype(np.float32, copy=False)
    return np.where(x < 0, x * np.float32(slope), x).astype(np.float32, copy=False)


def fused_activation(x: np.ndarray, activation_type: int, params) -> np.ndarray:
    """The activation fused into Convolution/InnerProduct/Gemm (ncnn's activation_type 0-6).

    0 none, 1 ReLU, 2 LeakyReLU(slope), 3 Clip(min, max), 4 Sigmoid, 5 Mish,
    6 HardSwish(alpha, beta): y = x * clamp(alpha * x + beta, 0, 1).
    """
    p = [float(v) for v in np.asarray(params, dtype=np.float32).ravel()] if params is not None else []
    if activation_type == 0:
        return x
    if activation_type == 1:
        return relu(x)
    if activation_type == 2:
        return relu(x, p[0] if p else 0.0)
    if activation_type == 3:
        lo = p[0] if len(p) > 0 else -np.inf
        hi = p[1] if len(p) > 1 else np.inf
        return np.clip(x, np.float32(lo), np.float32(hi)).astype(np.float32, copy=False)
    if activation_type == 4:
        return sigmoid(x)
    if activation_type == 5:
        return mish(x)
    if activation_type == 6:
        alpha = p[0] if len(p) > 0 else 0.2
        beta = p[1] if len(p) > 1 else 0.5
        return hardswish(x, alpha, beta)
    raise ValueError(f"unknown activation_type {activation_type} (expected 0-6)")


def inplace_activation(activation_type: int, params):
    """fused_activation as a function that overwrites its (freshly computed) argument,
    or None for no activation: kernels apply it to a block still in cache, with no
    new array. ReLU and Clip, the common ones, run as one in-place ufunc."""
    if activation_type == 0:
        return None
    bounds = _clip_bounds(activation_type, params)
    if bounds is not None:
        lo, hi = bounds
        return lambda a: np.clip(a, lo, hi, out=a)  # hi wins when lo > hi, as fused_activation
    p = [float(v) for v in np.asarray(params, dtype=np.float32).ravel()] if params is not None else []

    def generic(a: np.ndarray) -> None:
        a[...] = fused_activation(a, activation_type, p)

    return generic


def activation_into(activation_type: int, params):
    """fused_activation as f(src, out) that writes activation(src) into `out` (any
    strides): a kernel that has to copy its result into place anyway applies the
    activation in that copy, not in a pass of its own. ReLU and Clip: one clip ufunc;
    no activation: a plain copy; the others: the copy, then in place."""
    if activation_type == 0:
        return copy_into
    bounds = _clip_bounds(activation_type, params)
    if bounds is not None:
        lo, hi = bounds
        return lambda src, out: np.clip(src, lo, hi, out=out)
    inplace = inplace_activation(activation_type, params)

    def generic(src: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, src)
        inplace(out)

    return generic


def copy_into(src: np.ndarray, out: np.ndarray) -> None:
    """activation_into with no activation."""
    np.copyto(out, src)


def _clip_bounds(activation_type: int, params) -> tuple[np.float32, np.float32] | None:
    """(lo, hi) float32 when the fused activation is a clip (ReLU, Clip), else None."""
    if activation_type == 1:
        return _ZERO, _INF
    if activation_type == 3:
        p = [float(v) for v in np.asarray(params, dtype=np.float32).ravel()] if params is not None else []
        return np.float32(p[0] if len(p) > 0 else -np.inf), np.float32(p[1] if len(p) > 1 else np.inf)
    return None


def sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a large negative overflows to inf and gives exactly 0, as ncnn does
    with np.errstate(over="ignore"):
        return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32, copy=False)


def softplus(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.log(np.float32(1) + np.exp(x)).astype(np.float32, copy=False)


def mish(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (x * np.tanh(softplus(x))).astype(np.float32, copy=False)


def hardswish(x: np.ndarray, alpha: float = 0.2, beta: float = 0.5) -> np.ndarray:
    """x * clamp(alpha * x + beta, 0, 1), in one float32 buffer (four passes, no temporaries)."""
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        gate = np.multiply(x, np.float32(alpha))
        np.add(gate, np.float32(beta), out=gate)
        np.clip(gate, _ZERO, np.float32(1), out=gate)
        return np.multiply(gate, x, out=gate)


# -- ncnn's SIMD math ------------------------------------------------------------
# ncnn's x86/arm kernels evaluate exp and log with the Cephes-style polynomial
# routines of sse_mathfun.h (exp_ps, log_ps). Inside their domain they agree with
# libm to ~1 ulp, but their edges differ, and those edges decide what a model
# outputs for extreme inputs, so we copy them:
#   exp_ps clamps its argument to +-88.3762626647949: exp(+inf) = 2.4061436e38, not inf;
#   log_ps is nan for x <= 0 (log(0) is nan, not -inf) and clamps the argument into
#   [FLT_MIN, FLT_MAX]: log(+inf) = 88.72284, log(1e-40) = -87.33655.

FLT_MAX = np.float32(3.4028234663852886e38)
FLT_MIN = np.float32(1.1754943508222875e-38)
EXP_ARG_MAX = np.float32(88.3762626647949)


def exp_ps(x: np.ndarray) -> np.ndarray:
    """exp as ncnn's vectorised kernels compute it (argument clamped above at 88.376)."""
    with np.errstate(under="ignore", over="ignore"):
        return np.exp(np.minimum(x, EXP_ARG_MAX)).astype(np.float32, copy=False)


def log_ps(x: np.ndarray) -> np.ndarray:
    """log as ncnn's vectorised kernels compute it: nan for x <= 0, argument clamped to the normal range."""
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.log(np.clip(x, FLT_MIN, FLT_MAX)).astype(np.float32, copy=False)
    return np.where(x > 0, y, np.float32(np.nan))


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, vectorised (numpy has none).

    Abramowitz & Stegun 7.1.26 evaluated in float64: absolute error below 1.5e-7,
    far inside float32 model tolerance.
    """
    z = np.abs(np.asarray(x, dtype=np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * np.exp(-z * z)
    return (np.sign(x) * y).astype(np.float32)


# -- activation layers -------------------------------------------------------------

def swish(x: np.ndarray) -> np.ndarray:
    """Swish / SiLU: x / (1 + exp(-x)), with ncnn's clamped exp so that swish(-inf) = -inf."""
    with np.errstate(invalid="ignore"):
        return (x / (np.float32(1) + exp_ps(-x))).astype(np.float32, copy=False)


def gelu(x: np.ndarray, fast: bool = False) -> np.ndarray:
    """GELU: 0.5 x (1 + erf(x / sqrt 2)); fast=True is the tanh approximation."""
    half = np.float32(0.5)
    with np.errstate(over="ignore", invalid="ignore"):
        if fast:
            inner = np.float32(0.79788452) * (x + np.float32(0.044715) * x * x * x)
            return (half * x * (np.float32(1) + np.tanh(inner))).astype(np.float32, copy=False)
        return (half * x * (np.float32(1) + erf(x * np.float32(0.70710678)))).astype(np.float32, copy=False)


def hardsigmoid(x: np.ndarray, alpha: float = 0.2, beta: float = 0.5) -> np.ndarray:
    """HardSigmoid: clamp(alpha * x + beta, 0, 1)."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        y = np.multiply(x, np.float32(alpha))
        np.add(y, np.float32(beta), out=y)
        return np.clip(y, _ZERO, np.float32(1), out=y)


def clip(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Clip: min(max(x, lo), hi), so hi wins when lo > hi (as ncnn's two compares do)."""
    return np.clip(x, np.float32(lo), np.float32(hi)).astype(np.float32, copy=False)


def tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x).astype(np.float32, copy=False)


def elu(x: np.ndarray, alpha: float = 0.1) -> np.ndarray:
    """ELU: x for x >= 0, alpha * (exp(x) - 1) below."""
    neg = np.float32(alpha) * (np.exp(np.minimum(x, np.float32(0))) - np.float32(1))
    return np.where(x < 0, neg, x).astype(np.float32, copy=False)


def selu(x: np.ndarray, alpha: float, lambd: float) -> np.ndarray:
    """SELU: lambda * x for x >= 0, lambda * alpha * (exp(x) - 1) below."""
    neg = (np.exp(np.minimum(x, np.float32(0))) - np.float32(1)) * np.float32(alpha) * np.float32(lambd)
    return np.where(x < 0, neg, x * np.float32(lambd)).astype(np.float32, copy=False)


def celu(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """CELU: x for x >= 0, alpha * (exp(x / alpha) - 1) below."""
    a = np.float32(alpha)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        neg = (np.exp(np.minimum(x, np.float32(0)) / a) - np.float32(1)) * a
    return np.where(x < 0, neg, x).astype(np.float32, copy=False)


def shrink(x: np.ndarray, bias: float = 0.0, lambd: float = 0.5) -> np.ndarray:
    """Shrink: x + bias below -lambd, x - bias above lambd, 0 between (soft/hard shrink)."""
    b, lam = np.float32(bias), np.float32(lambd)
    return np.where(x < -lam, x + b, np.where(x > lam, x - b, np.float32(0))).astype(np.float32, copy=False)


def bnll(x: np.ndarray) -> np.ndarray:
    """BNLL: log(1 + exp(x)), written x + log(1 + exp(-x)) for x > 0 so it cannot overflow."""
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return (np.maximum(x, np.float32(0)) + np.log1p(e)).astype(np.float32, copy=False)


def prelu(x: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """PReLU: x * slope where x < 0. `slope` is 1 value or one per channel (numpy axis 0)."""
    s = np.asarray(slope, np.float32)
    if s.size != 1:
        s = s.reshape((-1,) + (1,) * (x.ndim - 1))
    else:
        s = s.reshape(())
    return np.where(x < 0, x * s, x).astype(np.float32, copy=False)


def threshold(x: np.ndarray, t: float) -> np.ndarray:
    """Threshold: 1 where x > t, else 0."""
    return (x > np.float32(t)).astype(np.float32)


def absval(x: np.ndarray) -> np.ndarray:
    return np.abs(x).astype(np.float32, copy=False)


# -- elementwise math: UnaryOp, Exp, Log, Power -----------------------------------------

def rsqrt(x: np.ndarray) -> np.ndarray:
    """1/sqrt(x) as ncnn's SIMD kernel gets it (rsqrt estimate + a Newton step): nan
    where the estimate is inf or 0 (x = 0 and x = +inf), not only for x < 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.float32(1) / np.sqrt(x)
    return np.where((x == 0) | np.isinf(x), np.float32(np.nan), y).astype(np.float32, copy=False)


def reciprocal(x: np.ndarray) -> np.ndarray:
    """1/x as ncnn's SIMD kernel gets it (reciprocal estimate + a Newton step): nan for
    x = 0, subnormal x and +-inf."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = np.float32(1) / x
    return np.where((np.abs(x) < FLT_MIN) | np.isinf(x), np.float32(np.nan), y).astype(np.float32, copy=False)


def _atan(x: np.ndarray) -> np.ndarray:
    # ncnn's atan_ps returns nan for +-inf rather than +-pi/2
    return np.where(np.isinf(x), np.float32(np.nan), np.arctan(x))


def _f64(fn, x: np.ndarray) -> np.ndarray:
    """fn evaluated in float64: numpy's float32 asinh/acosh lose ~1e-5 near FLT_MAX."""
    return fn(np.asarray(x, np.float64)).astype(np.float32)


def _expm1(x: np.ndarray) -> np.ndarray:
    return np.expm1(np.minimum(x, EXP_ARG_MAX))


def _sinh(x: np.ndarray) -> np.ndarray:
    # built from exp_ps, so it saturates at exp_ps(88.376) / 2 instead of overflowing
    return np.sinh(np.clip(x, -EXP_ARG_MAX, EXP_ARG_MAX))


def _cosh(x: np.ndarray) -> np.ndarray:
    return np.cosh(np.clip(x, -EXP_ARG_MAX, EXP_ARG_MAX))


def _asinh(x: np.ndarray) -> np.ndarray:
    # log_ps clamps at FLT_MAX: asinh(+-inf) = +-(log(FLT_MAX) + log 2)
    return _f64(np.arcsinh, np.clip(x, -FLT_MAX, FLT_MAX))


def _acosh(x: np.ndarray) -> np.ndarray:
    # below the domain ncnn takes log_ps of a nan, which comes out as log(FLT_MIN) = -87.33655
    y = _f64(np.arccosh, np.minimum(np.maximum(x, np.float32(1)), FLT_MAX))
    return np.where(x < 1, np.log(FLT_MIN), y)


def _atanh(x: np.ndarray) -> np.ndarray:
    # nan at +-1 too (numpy gives +-inf)
    return np.where(np.abs(x) >= 1, np.float32(np.nan), np.arctanh(x))


def _log1p(x: np.ndarray) -> np.ndarray:
    # nan at -1 too (numpy gives -inf); log1p(+inf) clamps to log(FLT_MAX)
    return np.where(x <= -1, np.float32(np.nan), np.log1p(np.minimum(x, FLT_MAX)))


_LOG10_E = np.float32(0.4342944819032518)

UNARY_OPS = (
    ("abs", np.abs),
    ("neg", np.negative),
    ("floor", np.floor),
    ("ceil", np.ceil),
    ("square", np.square),
    ("sqrt", np.sqrt),
    ("rsqrt", rsqrt),
    ("exp", exp_ps),
    ("log", log_ps),
    ("sin", np.sin),
    ("cos", np.cos),
    ("tan", np.tan),
    ("asin", np.arcsin),
    ("acos", np.arccos),
    ("atan", _atan),
    ("reciprocal", reciprocal),
    ("tanh", np.tanh),
    ("log10", lambda x: log_ps(x) * _LOG10_E),
    ("round", np.rint),  # half to even, as ncnn's nearbyint / _mm_round_ps
    ("trunc", np.trunc),
    ("sign", np.sign),
    ("expm1", _expm1),
    ("sinh", _sinh),
    ("asinh", _asinh),
    ("cosh", _cosh),
    ("acosh", _acosh),
    ("atanh", _atanh),
    ("log1p", _log1p),
)


def unary_op(x: np.ndarray, op_type: int) -> np.ndarray:
    """UnaryOp op_type 0-27 (abs, neg, floor, ceil, square, sqrt, rsqrt, exp, log, sin, cos,
    tan, asin, acos, atan, reciprocal, tanh, log10, round, trunc, sign, expm1, sinh, asinh,
    cosh, acosh, atanh, log1p)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        return np.asarray(UNARY_OPS[op_type][1](x), dtype=np.float32)


def power(x: np.ndarray, power_: float, scale: float, shift: float) -> np.ndarray:
    """Power layer: (shift + x * scale) ^ power."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        base = np.float32(shift) + x * np.float32(scale)
        # a full exponent array: with a scalar 0.5 numpy takes sqrt, which differs from
        # C pow at -0 and -inf
        return np.power(base, np.full_like(base, power_)).astype(np.float32, copy=False)


def exp_layer(x: np.ndarray, base: float, scale: float, shift: float) -> np.ndarray:
    """Exp layer: base ^ (shift + x * scale); base -1 means e."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        t = np.float32(shift) + x * np.float32(scale)
        if base == -1:
            return np.exp(t).astype(np.float32, copy=False)
        return np.power(np.float32(base), t).astype(np.float32, copy=False)


def log_layer(x: np.ndarray, base: float, scale: float, shift: float) -> np.ndarray:
    """Log layer: log_base(shift + x * scale); base -1 means the natural log."""
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.log(np.float32(shift) + x * np.float32(scale))
        if base != -1:
            y = y / np.log(np.float32(base))
        return y.astype(np.float32, copy=False)
