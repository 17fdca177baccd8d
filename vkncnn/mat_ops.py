"""ncnn's module-level Mat helpers: borders, resizing, packing, flattening, casts, int8.

ncnn implements each of these by running one layer on one Mat (Padding, Crop, Interp,
Packing, Flatten, Cast, Quantize: src/mat.cpp), so the geometric ones here run vkncnn's
own layers on the numpy path and give the same values as those layers do in a net.

Every helper has pyncnn's two forms: `f(src, dst, ...)` writes the result into `dst`
and returns None, `f(src, ...)` returns a new Mat. Arguments may be passed by name
(`src`, `dst`, `top`, ..., `opt`), as pybind allows.

Storage types follow pyncnn's numpy view: an fp16 Mat holds float16 values, a bf16 Mat
holds the bf16 bits in a 2-byte array viewed as float16 (what np.asarray gives for
ncnn's bf16 Mat), an int8 Mat holds int8 values.

Host Mats in vkncnn are never packed (elempack 1): packing is a storage layout of the
Vulkan path. convert_packing therefore checks its arguments and returns the values in
ncnn's logical order, which is what convert_packing(x, 1) of a packed ncnn Mat gives.
"""

from __future__ import annotations

import enum
from typing import Any, overload

import numpy as np

from .errors import ArgumentError, ArgumentTypeError, MatError
from .format.modelbin import ModelBinFromMatArray
from .format.paramdict import ParamDict
from .layer import create_layer
from .mat import Mat, is_int
from .option import Option

__all__ = [
    "BorderType", "cast_bfloat16_to_float32", "cast_float16_to_float32", "cast_float32_to_bfloat16",
    "cast_float32_to_float16", "cast_int8_to_float32", "convert_packing", "copy_cut_border", "copy_make_border",
    "copy_make_border_3d", "flatten", "quantize_to_int8", "resize_bicubic", "resize_bilinear", "resize_nearest",
]


class BorderType(enum.IntEnum):
    """Padding modes of copy_make_border (ncnn's Padding layer, param 4)."""

    BORDER_CONSTANT = 0
    BORDER_REPLICATE = 1
    BORDER_REFLECT = 2  # ncnn's Padding has it; pyncnn's enum lists only the first two


_REQUIRED = object()
_INT, _FLOAT, _MAT = "int", "float", "Mat"


def _parse(name: str, args: tuple, kwargs: dict,
           params: list[tuple[str, str, object]]) -> tuple[Mat, Mat | None, dict[str, Any]]:
    """Bind pyncnn's two overloads: (src, dst, *params) -> None or (src, *params) -> Mat.

    Returns (src, dst or None, {param: value}), every value checked against its kind."""
    rest, named = list(args), dict(kwargs)
    src = rest.pop(0) if rest else named.pop("src", _REQUIRED)
    if "dst" in named:
        dst = named.pop("dst")
    elif rest and isinstance(rest[0], Mat) and _is_dst_form(rest, named, params):
        dst = rest.pop(0)
    else:
        dst = None
    if len(rest) > len(params):
        raise ArgumentTypeError(f"{name}() takes at most {len(params) + 2} arguments (src, dst, "
                                f"{', '.join(p[0] for p in params)}), got {len(rest) + 1 + (dst is not None)}")
    values = {}
    for i, (pname, kind, default) in enumerate(params):
        if i < len(rest):
            if pname in named:
                raise ArgumentTypeError(f"{name}() got two values for argument {pname!r}")
            value = rest[i]
        else:
            value = named.pop(pname, default)
        if value is _REQUIRED:
            raise ArgumentTypeError(f"{name}() is missing argument {pname!r}")
        values[pname] = _checked(name, pname, kind, value)
    if named:
        raise ArgumentTypeError(f"{name}() got unexpected keyword argument(s) {sorted(named)}")
    if src is _REQUIRED:
        raise ArgumentTypeError(f"{name}() is missing argument 'src'")
    _checked(name, "src", _MAT, src)
    if dst is not None:
        _checked(name, "dst", _MAT, dst)
    return src, dst, values


def _is_dst_form(args: list, kwargs: dict, params: list) -> bool:
    """The Mat after src is dst unless the first parameter is itself a Mat (quantize's
    scale_data) given in that place."""
    if params[0][1] != _MAT:
        return True
    return params[0][0] in kwargs or (len(args) >= 2 and isinstance(args[1], Mat))


def _checked(name: str, pname: str, kind: str, value):
    if kind == _INT:
        if not (is_int(value) or isinstance(value, enum.IntEnum)):
            raise ArgumentTypeError(f"{name}(): {pname} must be an int, got {type(value).__name__} {value!r:.40}")
        return int(value)
    if kind == _FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ArgumentTypeError(f"{name}(): {pname} must be a number, got {type(value).__name__}")
        return float(value)
    if kind == _MAT:
        if not isinstance(value, Mat):
            raise ArgumentTypeError(f"{name}(): {pname} must be a vkncnn.Mat, got {type(value).__name__}")
        return value
    if value is None:
        return Option()
    if not isinstance(value, Option):
        raise ArgumentTypeError(f"{name}(): opt must be a vkncnn.Option, got {type(value).__name__}")
    return value


def _finish(result: Mat, dst: Mat | None) -> Mat | None:
    if dst is None:
        return result
    dst.clone_from(result)
    return None


def _checked_dims(name: str, src: Mat) -> np.ndarray:
    if src.dims == 0 or src.empty():
        raise MatError(f"{name}(): src is an empty Mat")
    return np.asarray(src)


def _run_layer(type_name: str, params: dict, data: np.ndarray, opt: Option, weights=None) -> np.ndarray:
    """One built-in layer, numpy path, on float32 data: what ncnn's helpers do in C++."""
    layer = create_layer(type_name)
    pd = ParamDict()
    for key, value in params.items():
        pd.set(key, value)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray(weights or []))
    layer.create_pipeline(opt)
    return layer.forward_cpu([np.ascontiguousarray(data, np.float32)], opt)[0]


def _storage_run(type_name: str, params: dict, src: Mat, opt: Option, name: str) -> Mat:
    """Run a data-movement layer and give the result src's storage type (copies of values
    of that type stay exact through float32)."""
    data = _checked_dims(name, src)
    out = _run_layer(type_name, params, data.astype(np.float32), opt)
    if data.dtype != np.float32:
        out = out.astype(data.dtype)
    return Mat.from_array(np.ascontiguousarray(out), out.ndim)


_OPT = ("opt", "opt", None)
_BORDER = [("top", _INT, _REQUIRED), ("bottom", _INT, _REQUIRED), ("left", _INT, _REQUIRED),
           ("right", _INT, _REQUIRED)]


def _check_border_type(name: str, type_: int) -> None:
    if type_ not in tuple(BorderType):
        raise ArgumentError(f"{name}(): type must be 0 (BORDER_CONSTANT), 1 (BORDER_REPLICATE) or "
                            f"2 (BORDER_REFLECT), got {type_}")


def _check_non_negative(name: str, values: dict, keys: tuple) -> None:
    for key in keys:
        if values[key] < 0:
            raise ArgumentError(f"{name}(): {key} must be >= 0, got {values[key]}")


@overload
def copy_make_border(src: Mat, dst: Mat, top: int, bottom: int, left: int, right: int, type: int, v: float,
                     opt: Option | None = None) -> None:
    ...


@overload
def copy_make_border(src: Mat, top: int, bottom: int, left: int, right: int, type: int, v: float,
                     opt: Option | None = None) -> Mat:
    ...


def copy_make_border(*args: Any, **kwargs: Any) -> Mat | None:
    """copy_make_border(src, [dst,] top, bottom, left, right, type, v, opt=Option())"""
    name = "copy_make_border"
    src, dst, p = _parse(name, args, kwargs, _BORDER + [("type", _INT, _REQUIRED), ("v", _FLOAT, _REQUIRED), _OPT])
    _check_border_type(name, p["type"])
    _check_non_negative(name, p, ("top", "bottom", "left", "right"))
    params = {0: p["top"], 1: p["bottom"], 2: p["left"], 3: p["right"], 4: p["type"], 5: p["v"]}
    return _finish(_storage_run("Padding", params, src, p["opt"], name), dst)


@overload
def copy_make_border_3d(src: Mat, dst: Mat, top: int, bottom: int, left: int, right: int, front: int, behind: int,
                        type: int, v: float, opt: Option | None = None) -> None:
    ...


@overload
def copy_make_border_3d(src: Mat, top: int, bottom: int, left: int, right: int, front: int, behind: int, type: int,
                        v: float, opt: Option | None = None) -> Mat:
    ...


def copy_make_border_3d(*args: Any, **kwargs: Any) -> Mat | None:
    """copy_make_border_3d(src, [dst,] top, bottom, left, right, front, behind, type, v, opt=Option())"""
    name = "copy_make_border_3d"
    src, dst, p = _parse(name, args, kwargs, _BORDER + [("front", _INT, _REQUIRED), ("behind", _INT, _REQUIRED),
                                                        ("type", _INT, _REQUIRED), ("v", _FLOAT, _REQUIRED), _OPT])
    _check_border_type(name, p["type"])
    _check_non_negative(name, p, ("top", "bottom", "left", "right", "front", "behind"))
    params = {0: p["top"], 1: p["bottom"], 2: p["left"], 3: p["right"], 4: p["type"], 5: p["v"],
              7: p["front"], 8: p["behind"]}
    return _finish(_storage_run("Padding", params, src, p["opt"], name), dst)


@overload
def copy_cut_border(src: Mat, dst: Mat, top: int, bottom: int, left: int, right: int,
                    opt: Option | None = None) -> None:
    ...


@overload
def copy_cut_border(src: Mat, top: int, bottom: int, left: int, right: int, opt: Option | None = None) -> Mat:
    ...


def copy_cut_border(*args: Any, **kwargs: Any) -> Mat | None:
    """copy_cut_border(src, [dst,] top, bottom, left, right, opt=Option())"""
    name = "copy_cut_border"
    src, dst, p = _parse(name, args, kwargs, _BORDER + [_OPT])
    _check_non_negative(name, p, ("top", "bottom", "left", "right"))
    _checked_dims(name, src)
    if p["left"] + p["right"] > src.w or p["top"] + p["bottom"] > src.h:
        # ncnn logs this and leaves dst empty; vkncnn says so
        raise ArgumentError(f"{name}(): cutting top {p['top']}, bottom {p['bottom']}, left {p['left']}, "
                            f"right {p['right']} needs a Mat of at least w {p['left'] + p['right']} and "
                            f"h {p['top'] + p['bottom']}, got w {src.w}, h {src.h}")
    params = {0: p["left"], 1: p["top"], 2: 0, 3: src.w - p["left"] - p["right"],
              4: src.h - p["top"] - p["bottom"], 5: -233}
    return _finish(_storage_run("Crop", params, src, p["opt"], name), dst)


def _resize(name: str, resize_type: int, args: tuple, kwargs: dict) -> Mat | None:
    src, dst, p = _parse(name, args, kwargs, [("w", _INT, _REQUIRED), ("h", _INT, _REQUIRED), _OPT])
    data = _checked_dims(name, src)
    if data.dtype != np.float32:
        raise MatError(f"{name}(): src must hold float32 values (elemsize 4), got elemsize {src.elemsize}; "
                       "cast it with cast_float16_to_float32 / cast_bfloat16_to_float32 / cast_int8_to_float32")
    if p["w"] <= 0 or p["h"] <= 0:
        raise ArgumentError(f"{name}(): w and h must be > 0, got w {p['w']}, h {p['h']}")
    out = _run_layer("Interp", {0: resize_type, 3: p["h"], 4: p["w"]}, data, p["opt"])
    return _finish(Mat.from_array(np.ascontiguousarray(out, np.float32), out.ndim), dst)


@overload
def resize_nearest(src: Mat, dst: Mat, w: int, h: int, opt: Option | None = None) -> None:
    ...


@overload
def resize_nearest(src: Mat, w: int, h: int, opt: Option | None = None) -> Mat:
    ...


def resize_nearest(*args: Any, **kwargs: Any) -> Mat | None:
    """resize_nearest(src, [dst,] w, h, opt=Option())"""
    return _resize("resize_nearest", 1, args, kwargs)


@overload
def resize_bilinear(src: Mat, dst: Mat, w: int, h: int, opt: Option | None = None) -> None:
    ...


@overload
def resize_bilinear(src: Mat, w: int, h: int, opt: Option | None = None) -> Mat:
    ...


def resize_bilinear(*args: Any, **kwargs: Any) -> Mat | None:
    """resize_bilinear(src, [dst,] w, h, opt=Option()): half-pixel centres, as ncnn's Interp."""
    return _resize("resize_bilinear", 2, args, kwargs)


@overload
def resize_bicubic(src: Mat, dst: Mat, w: int, h: int, opt: Option | None = None) -> None:
    ...


@overload
def resize_bicubic(src: Mat, w: int, h: int, opt: Option | None = None) -> Mat:
    ...


def resize_bicubic(*args: Any, **kwargs: Any) -> Mat | None:
    """resize_bicubic(src, [dst,] w, h, opt=Option()): ncnn's Interp cubic (a = -0.75)."""
    return _resize("resize_bicubic", 3, args, kwargs)


@overload
def convert_packing(src: Mat, dst: Mat, elempack: int, opt: Option | None = None) -> None:
    ...


@overload
def convert_packing(src: Mat, elempack: int, opt: Option | None = None) -> Mat:
    ...


def convert_packing(*args: Any, **kwargs: Any) -> Mat | None:
    """convert_packing(src, [dst,] elempack, opt=Option()): a copy in logical order (module docstring)."""
    name = "convert_packing"
    src, dst, p = _parse(name, args, kwargs, [("elempack", _INT, _REQUIRED), _OPT])
    if p["elempack"] <= 0:
        raise ArgumentError(f"{name}(): elempack must be > 0, got {p['elempack']}")
    data = np.asarray(src)
    return _finish(Mat.from_array(np.array(data, copy=True), src.dims), dst)


@overload
def flatten(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def flatten(src: Mat, opt: Option | None = None) -> Mat:
    ...


def flatten(*args: Any, **kwargs: Any) -> Mat | None:
    """flatten(src, [dst,] opt=Option()): every value in one row (dims 1)."""
    name = "flatten"
    src, dst, _ = _parse(name, args, kwargs, [_OPT])
    data = _checked_dims(name, src)
    return _finish(Mat.from_array(np.array(data.reshape(-1), copy=True), 1), dst)


def _storage(name: str, src: Mat, dtype, what: str) -> np.ndarray:
    data = _checked_dims(name, src)
    if data.dtype != dtype:
        raise MatError(f"{name}(): src must hold {what} (elemsize {np.dtype(dtype).itemsize}), "
                       f"got elemsize {src.elemsize} ({data.dtype})")
    return data


def _cast_args(name: str, args: tuple, kwargs: dict):
    src, dst, _ = _parse(name, args, kwargs, [_OPT])
    return src, dst


@overload
def cast_float32_to_float16(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def cast_float32_to_float16(src: Mat, opt: Option | None = None) -> Mat:
    ...


def cast_float32_to_float16(*args: Any, **kwargs: Any) -> Mat | None:
    """cast_float32_to_float16(src, [dst,] opt=Option()): round to nearest even, overflow to inf."""
    src, dst = _cast_args("cast_float32_to_float16", args, kwargs)
    data = _storage("cast_float32_to_float16", src, np.float32, "float32 values")
    with np.errstate(over="ignore"):
        out = data.astype(np.float16)
    return _finish(Mat.from_array(out, src.dims), dst)


@overload
def cast_float16_to_float32(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def cast_float16_to_float32(src: Mat, opt: Option | None = None) -> Mat:
    ...


def cast_float16_to_float32(*args: Any, **kwargs: Any) -> Mat | None:
    """cast_float16_to_float32(src, [dst,] opt=Option()): exact."""
    src, dst = _cast_args("cast_float16_to_float32", args, kwargs)
    data = _storage("cast_float16_to_float32", src, np.float16, "float16 values")
    return _finish(Mat.from_array(data.astype(np.float32), src.dims), dst)


@overload
def cast_float32_to_bfloat16(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def cast_float32_to_bfloat16(src: Mat, opt: Option | None = None) -> Mat:
    ...


def cast_float32_to_bfloat16(*args: Any, **kwargs: Any) -> Mat | None:
    """cast_float32_to_bfloat16(src, [dst,] opt=Option()): nearest bf16, ties to even, as
    ncnn's x86 Cast layer rounds (layers/cast.py); the bits are kept in a 2-byte array
    viewed as float16, as pyncnn's numpy view shows them."""
    src, dst, p = _parse("cast_float32_to_bfloat16", args, kwargs, [_OPT])
    data = _storage("cast_float32_to_bfloat16", src, np.float32, "float32 values")
    rounded = _run_layer("Cast", {0: 1, 1: 4}, data, p["opt"])  # float32 values that bf16 holds
    bits = (np.ascontiguousarray(rounded, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return _finish(Mat.from_array(bits.view(np.float16), src.dims), dst)


@overload
def cast_bfloat16_to_float32(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def cast_bfloat16_to_float32(src: Mat, opt: Option | None = None) -> Mat:
    ...


def cast_bfloat16_to_float32(*args: Any, **kwargs: Any) -> Mat | None:
    """cast_bfloat16_to_float32(src, [dst,] opt=Option()): exact (bits shifted into float32's top half)."""
    src, dst = _cast_args("cast_bfloat16_to_float32", args, kwargs)
    data = _storage("cast_bfloat16_to_float32", src, np.float16, "bfloat16 bits")
    out = (np.ascontiguousarray(data).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return _finish(Mat.from_array(out, src.dims), dst)


@overload
def cast_int8_to_float32(src: Mat, dst: Mat, opt: Option | None = None) -> None:
    ...


@overload
def cast_int8_to_float32(src: Mat, opt: Option | None = None) -> Mat:
    ...


def cast_int8_to_float32(*args: Any, **kwargs: Any) -> Mat | None:
    """cast_int8_to_float32(src, [dst,] opt=Option()): exact."""
    src, dst = _cast_args("cast_int8_to_float32", args, kwargs)
    data = _storage("cast_int8_to_float32", src, np.int8, "int8 values")
    return _finish(Mat.from_array(data.astype(np.float32), src.dims), dst)


@overload
def quantize_to_int8(src: Mat, dst: Mat, scale_data: Mat, opt: Option | None = None) -> None:
    ...


@overload
def quantize_to_int8(src: Mat, scale_data: Mat, opt: Option | None = None) -> Mat:
    ...


def quantize_to_int8(*args: Any, **kwargs: Any) -> Mat | None:
    """quantize_to_int8(src, [dst,] scale_data, opt=Option()): ncnn's Quantize layer,
    clamp(round(x * scale), -127, 127), halves away from zero; one scale or one per
    row (2-D) / channel (3-D, 4-D)."""
    name = "quantize_to_int8"
    src, dst, p = _parse(name, args, kwargs, [("scale_data", _MAT, _REQUIRED), _OPT])
    data = _storage(name, src, np.float32, "float32 values")
    scale = np.asarray(p["scale_data"], np.float32).reshape(-1)
    if scale.size == 0:
        raise ArgumentError(f"{name}(): scale_data is empty; give one scale or one per row/channel")
    out = _run_layer("Quantize", {0: int(scale.size)}, data, p["opt"], weights=[scale])
    return _finish(Mat.from_array(np.ascontiguousarray(out).astype(np.int8), src.dims), dst)
