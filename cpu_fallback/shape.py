"""Tensor-manipulation kernels: padding, permutes, channel shuffles, depth/space moves,
and ncnn's shape-expression language (the `*_expr` params of Reshape, Crop and Interp).

Arrays follow vkncnn's convention: numpy shape (w,), (h, w), (c, h, w) or (c, d, h, w),
i.e. ncnn's innermost-first [w, h, d, c] read backwards.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np


# -- ncnn's view of a shape -----------------------------------------------------------
def ncnn_shape(x: np.ndarray) -> tuple[int, int, int, int, int]:
    """(dims, w, h, d, c) as an ncnn Mat reports them: missing extents are 1."""
    s = x.shape
    if x.ndim == 1:
        return 1, s[0], 1, 1, 1
    if x.ndim == 2:
        return 2, s[1], s[0], 1, 1
    if x.ndim == 3:
        return 3, s[2], s[1], 1, s[0]
    if x.ndim == 4:
        return 4, s[3], s[2], s[1], s[0]
    raise ValueError(f"ncnn blobs have 1-4 dims, got shape {s}")


def numpy_shape(dims: int, w: int, h: int = 1, d: int = 1, c: int = 1) -> tuple[int, ...]:
    """The numpy shape of an ncnn blob of `dims` dims."""
    return {1: (w,), 2: (h, w), 3: (c, h, w), 4: (c, d, h, w)}[dims]


def positive_axis(axis: int, ndim: int) -> int:
    """ncnn's axis convention for Concat/Slice/Crop: numpy-style, negative counts from the end."""
    return axis + ndim if axis < 0 else axis


# -- shape expressions (ncnn docs/developer-guide/expression.md) ----------------------
# `op(a,b)` prefix notation, comma-separated list, `0w`/`1h`/... = extent of blob 0/1,
# `0n` = the batch size of blob 0 (how many items it holds; 1 for a plain blob).
# Values are typed like ncnn's: int stays int through + - * // max min abs neg sign
# square and bitwise ops; anything involving a float, `/` or a math function is a
# 32-bit float; the final list is truncated to int.
_INT_BINARY = {"+", "-", "*", "//", "max", "min"}
_INT_UNARY = {"abs", "neg", "sign", "square"}
_ROUNDING = {"trunc", "ceil", "floor", "round"}
_FLOAT_UNARY = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh,
    "atan": math.atan, "atanh": math.atanh, "cos": math.cos, "cosh": math.cosh, "erf": math.erf,
    "exp": math.exp, "log": math.log, "log10": math.log10, "reciprocal": lambda a: 1.0 / a,
    "rsqrt": lambda a: 1.0 / math.sqrt(a), "sin": math.sin, "sinh": math.sinh, "sqrt": math.sqrt,
    "tan": math.tan, "tanh": math.tanh,
}
_FLOAT_BINARY = {"/", "atan2", "fmod", "pow", "remainder", "logaddexp"}
_BITWISE = {"and", "or", "xor", "lshift", "rshift"}


def _f32(v: float) -> float:
    """Round to float32, as ncnn's `float` arithmetic does."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _c_int_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_to_int(v: float) -> int:
    """C's (int)f on x86: INT_MIN for NaN, infinities and anything out of int range."""
    if not math.isfinite(v) or not -(2**31) <= v < 2**31:
        return -(2**31)
    return int(v)


def _i32(v: int) -> int:
    """Wrap to a 32-bit int as ncnn's `int` arithmetic does: a hostile expression such as
    lshift(1,2147483647) or square(square(...)) must not grow a Python int without bound."""
    return (v + 2**31) % 2**32 - 2**31


def _safe(fn, *args) -> float:
    try:
        return _f32(fn(*args))
    except (ValueError, ZeroDivisionError, OverflowError):
        return math.nan


def count_expression_blobs(expr: str) -> int:
    """How many input blobs an expression references (highest index + 1)."""
    count = 0
    for tok in _tokens(expr):
        if _is_blob_ref(tok):
            count = max(count, int(tok[0]) + 1)
    return count


def _tokens(expr: str) -> list[str]:
    out, cur = [], ""
    for ch in expr:
        if ch in "(),":
            if cur:
                out.append(cur)
                cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _is_blob_ref(tok: str) -> bool:
    return len(tok) == 2 and tok[0].isdigit() and tok[1] in "whdcn"


def _literal(tok: str):
    """sscanf("%d") and sscanf("%f") both, as ncnn: int when they agree, else float."""
    mi = re.match(r"\s*[+-]?\d+", tok)
    mf = re.match(r"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|nan)", tok, re.IGNORECASE)
    if mf is None:
        raise ValueError(f"malformed literal {tok!r} in shape expression")
    vf = _f32(float(mf.group(0)))
    if mi is not None and int(mi.group(0)) == vf and -(2**31) <= vf < 2**31:
        return int(mi.group(0))
    return vf


def eval_list_expression(expr: str, blobs: list[np.ndarray], batch_sizes: list[int] | None = None) -> list[int]:
    """Evaluate a comma-separated list of prefix expressions against the blobs' shapes.

    `blobs` are one item of each blob (numpy shape (w,), (h, w), (c, h, w) or (c, d, h, w));
    `batch_sizes[i]` is how many items blob i holds, the value of the token `<i>n` (default: 1 each)."""
    if batch_sizes is not None and len(batch_sizes) != len(blobs):
        raise ValueError(f"shape expression {expr!r}: {len(batch_sizes)} batch sizes for {len(blobs)} blob(s)")
    stack: list = []

    def pop():
        if not stack:
            raise ValueError(f"shape expression {expr!r} is malformed (an operator lacks operands)")
        return stack.pop()

    for tok in reversed(_tokens(expr)):
        if _is_blob_ref(tok):
            i = int(tok[0])
            if i >= len(blobs):
                raise ValueError(f"shape expression {expr!r} references blob {i} but the layer has "
                                 f"{len(blobs)} input(s)")
            if tok[1] == "n":
                stack.append(1 if batch_sizes is None else int(batch_sizes[i]))
                continue
            _, w, h, d, c = ncnn_shape(blobs[i])
            stack.append({"w": w, "h": h, "d": d, "c": c}[tok[1]])
        elif tok in _INT_BINARY:
            a, b = pop(), pop()
            stack.append(_int_binary(tok, a, b))
        elif tok in _INT_UNARY:
            a = pop()
            stack.append(_int_unary(tok, a))
        elif tok in _ROUNDING:
            a = pop()
            stack.append(a if isinstance(a, int) else _round(tok, a))
        elif tok in _FLOAT_UNARY:
            a = float(pop())
            stack.append(_safe(_FLOAT_UNARY[tok], a))
        elif tok in _FLOAT_BINARY:
            a, b = float(pop()), float(pop())
            stack.append(_float_binary(tok, a, b))
        elif tok in _BITWISE:
            a, b = (v if isinstance(v, int) else _trunc_to_int(v) for v in (pop(), pop()))
            if tok in ("lshift", "rshift"):
                b &= 31  # the shift count as x86 takes it (C leaves larger counts undefined)
            stack.append(_i32({"and": a & b, "or": a | b, "xor": a ^ b,
                               "lshift": a << b, "rshift": a >> b}[tok]))
        else:
            stack.append(_literal(tok))
    # the first item of the list is on top of the stack
    return [v if isinstance(v, int) else _trunc_to_int(v) for v in reversed(stack)]


def _int_binary(op: str, a, b):
    if isinstance(a, int) and isinstance(b, int):
        if op == "+":
            return _i32(a + b)
        if op == "-":
            return _i32(a - b)
        if op == "*":
            return _i32(a * b)
        if op == "//":
            return a if b == 0 else _i32(_c_int_div(a, b))  # ncnn logs and keeps a on /0
        return max(a, b) if op == "max" else min(a, b)
    a, b = float(a), float(b)
    if op == "+":
        return _f32(a + b)
    if op == "-":
        return _f32(a - b)
    if op == "*":
        return _f32(a * b)
    if op == "//":  # floorf(a / b), still a float
        q = _float_binary("/", a, b)
        return float(math.floor(q)) if math.isfinite(q) else q
    return max(a, b) if op == "max" else min(a, b)


def _int_unary(op: str, a):
    if op == "abs":
        return _i32(abs(a)) if isinstance(a, int) else abs(a)
    if op == "neg":
        return _i32(-a) if isinstance(a, int) else -a
    if op == "sign":
        return 1 if a > 0 else (0 if a == 0 else -1)
    return _i32(a * a) if isinstance(a, int) else _f32(a * a)


def _round(op: str, a: float) -> int:
    if not math.isfinite(a):
        return -(2**31)
    if op == "trunc":
        r = int(a)
    elif op == "ceil":
        r = math.ceil(a)
    elif op == "floor":
        r = math.floor(a)
    else:
        r = int(math.copysign(math.floor(abs(a) + 0.5), a))  # C round: half away from zero
    return r if -(2**31) <= r < 2**31 else -(2**31)  # (int) of an out-of-range value, as x86


def _float_binary(op: str, a: float, b: float) -> float:
    if op == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        return _f32(a / b)
    if op == "atan2":
        return _safe(math.atan2, a, b)
    if op == "fmod":
        return _safe(math.fmod, a, b)
    if op == "pow":
        return _safe(math.pow, a, b)
    if op == "remainder":
        r = _safe(math.fmod, a, b)
        return _f32(r + b) if a * b < 0 else r
    return _safe(lambda: math.log(math.exp(a) + math.exp(b)))


# -- padding ----------------------------------------------------------------------------
PAD_CONSTANT, PAD_REPLICATE, PAD_REFLECT = 0, 1, 2


def pad_index(n_out: int, before: int, size: int, mode: int) -> np.ndarray:
    """Source index of each output position along one axis for replicate/reflect padding.

    Reflect mirrors about the edge pixel without repeating it (numpy's 'reflect'), once,
    as ncnn does; a pad wider than size - 1 has no source in ncnn and is refused."""
    i = np.arange(n_out) - before
    if size == 0 and n_out:
        raise ValueError("an empty axis has no values to replicate or reflect")
    if mode == PAD_REPLICATE:
        return np.clip(i, 0, size - 1)
    i = np.abs(i)
    i = (size - 1) - np.abs(i - (size - 1))
    if size == 0 or i.min() < 0 or i.max() > size - 1:
        raise ValueError(f"reflect padding needs pads < extent ({size})")
    return i


def pad_last_axes(x: np.ndarray, pads: list[tuple[int, int]], mode: int, value) -> np.ndarray:
    """Pad the trailing len(pads) axes of x by (before, after) each.

    `value` (constant mode) is a scalar or an array broadcasting against the leading
    axes of x (one value per channel). Negative pads crop, as ncnn's copy_make_border."""
    lead = x.ndim - len(pads)
    if mode == PAD_CONSTANT:
        out_shape = x.shape[:lead] + tuple(n + b + a for n, (b, a) in zip(x.shape[lead:], pads))
        if min(out_shape, default=1) < 0:
            raise ValueError(f"pads {pads} crop more than the extent of {x.shape}")
        v = np.asarray(value, np.float32).reshape(np.shape(value) + (1,) * len(pads))
        out = np.empty(out_shape, np.float32)
        out[...] = v
        src, dst = [slice(None)] * lead, [slice(None)] * lead
        for n, (b, a) in zip(x.shape[lead:], pads):
            src.append(slice(max(0, -b), n - max(0, -a)))
            dst.append(slice(max(0, b), max(0, b) + max(0, n - max(0, -b) - max(0, -a))))
        out[tuple(dst)] = x[tuple(src)]
        return out
    y = x
    for k, (b, a) in enumerate(pads):
        axis = lead + k
        n = x.shape[axis]
        y = np.take(y, pad_index(n + b + a, b, n, mode), axis=axis)
    return y.astype(np.float32, copy=False)


# -- permutes and channel moves ---------------------------------------------------------
# ncnn names orders innermost-first; numpy's order is the name read backwards.
PERMUTE_ORDERS_3D = ("WHC", "HWC", "WCH", "CWH", "HCW", "CHW")
PERMUTE_ORDERS_4D = ("WHDC", "HWDC", "WDHC", "DWHC", "HDWC", "DHWC", "WHCD", "HWCD", "WCHD", "CWHD",
                     "HCWD", "CHWD", "WDCH", "DWCH", "WCDH", "CWDH", "DCWH", "CDWH", "HDCW", "DHCW",
                     "HCDW", "CHDW", "DCHW", "CDHW")


def permute_axes(order_name: str) -> tuple[int, ...]:
    """numpy transpose axes for an ncnn order name such as 'CWH' on a (c[,d],h,w) array."""
    letters = "CDHW" if len(order_name) == 4 else ("CHW" if len(order_name) == 3 else "HW")
    return tuple(letters.index(ch) for ch in reversed(order_name))


def shuffle_channels(x: np.ndarray, group: int) -> np.ndarray:
    """Channel i*group + j of the output = channel j*(c/group) + i of the input."""
    c = x.shape[0]
    return np.ascontiguousarray(x.reshape((group, c // group) + x.shape[1:]).swapaxes(0, 1)).reshape(x.shape)


def pixel_shuffle(x: np.ndarray, r: int, mode: int) -> np.ndarray:
    """Depth to space: (c, h, w) -> (c/r^2, h*r, w*r).

    mode 0 (PyTorch): input channel = out_c * r*r + sub_y * r + sub_x;
    mode 1: input channel = (sub_y * r + sub_x) * out_c + out_c_index."""
    c, h, w = x.shape
    oc = c // (r * r)
    if mode == 0:
        y = x.reshape(oc, r, r, h, w).transpose(0, 3, 1, 4, 2)
    else:
        y = x.reshape(r, r, oc, h, w).transpose(2, 3, 0, 4, 1)
    return np.ascontiguousarray(y).reshape(oc, h * r, w * r)


def reorg(x: np.ndarray, s: int, mode: int) -> np.ndarray:
    """Space to depth: (c, h, w) -> (c*s*s, h//s, w//s), the inverse layout of pixel_shuffle.

    mode 0: output channel = q * s*s + sub_y * s + sub_x; mode 1: (sub_y * s + sub_x) * c + q."""
    c, h, w = x.shape
    oh, ow = h // s, w // s
    t = x[:, :oh * s, :ow * s].reshape(c, oh, s, ow, s)
    if mode == 0:
        y = t.transpose(0, 2, 4, 1, 3)      # (c, sy, sx, oh, ow)
    else:
        y = t.transpose(2, 4, 0, 1, 3)      # (sy, sx, c, oh, ow)
    return np.ascontiguousarray(y).reshape(c * s * s, oh, ow)
