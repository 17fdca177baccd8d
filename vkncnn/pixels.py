"""Pixel helpers: interleaved uint8 images <-> planar float Mats, as ncnn's mat_pixel*.cpp.

A pixel type is a format (RGB, BGR, GRAY, RGBA, BGRA) or a conversion `src | dst << 16`.
`from_pixels` reads rows of `stride` bytes and gives a (channels, h, w) float Mat in the
destination order; `to_pixels` goes back, truncating towards zero and saturating to 0..255.
Colour to gray uses ncnn's integer weights, (77 R + 150 G + 29 B) >> 8. Resizing works on the
uint8 image with ncnn's fixed-point bilinear kernel (11-bit coefficients, resize_bilinear_cN),
before (from_pixels_resize) or after (to_pixels_resize) the conversion, as ncnn does.

Unlike pyncnn these check their input: the image must be uint8 and hold h * stride bytes,
the stride must cover a row, the ROI must lie inside the image; otherwise a MatError says
what was expected and what came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .array_checks import as_array, check_buffer, is_int
from .errors import MatError
from .mat import Mat

if TYPE_CHECKING:
    from .allocators import Allocator

# what the from_pixels family reads: a uint8 array (h, w[, c]) or the raw bytes of one
Pixels = np.ndarray | bytes | bytearray | memoryview

PIXEL_CONVERT_SHIFT = 16
PIXEL_FORMAT_MASK = 0x0000FFFF
PIXEL_CONVERT_MASK = 0xFFFF0000
PIXEL_RGB, PIXEL_BGR, PIXEL_GRAY, PIXEL_RGBA, PIXEL_BGRA = 1, 2, 3, 4, 5

# channel order of each format; "Y" is gray
_LAYOUT = {PIXEL_RGB: "RGB", PIXEL_BGR: "BGR", PIXEL_GRAY: "Y", PIXEL_RGBA: "RGBA", PIXEL_BGRA: "BGRA"}
_NAME = {PIXEL_RGB: "RGB", PIXEL_BGR: "BGR", PIXEL_GRAY: "GRAY", PIXEL_RGBA: "RGBA", PIXEL_BGRA: "BGRA"}

# ncnn's fixed-point luma: coefficients 0.299, 0.587, 0.114 scaled by 256
_GRAY_WEIGHTS = {"R": 77, "G": 150, "B": 29}
_GRAY_SHIFT = 8


def _conversion(src: int, dst: int) -> int:
    return src | (dst << PIXEL_CONVERT_SHIFT)


# Every conversion ncnn's from_pixels implements (all 20 PixelType conversions);
# to_pixels implements only these few, the rest log "unimplemented" in ncnn.
_FROM_CONVERSIONS = {
    _conversion(s, d) for s, d in [
        (PIXEL_RGB, PIXEL_BGR), (PIXEL_RGB, PIXEL_GRAY), (PIXEL_RGB, PIXEL_RGBA), (PIXEL_RGB, PIXEL_BGRA),
        (PIXEL_BGR, PIXEL_RGB), (PIXEL_BGR, PIXEL_GRAY), (PIXEL_BGR, PIXEL_RGBA), (PIXEL_BGR, PIXEL_BGRA),
        (PIXEL_GRAY, PIXEL_RGB), (PIXEL_GRAY, PIXEL_BGR), (PIXEL_GRAY, PIXEL_RGBA), (PIXEL_GRAY, PIXEL_BGRA),
        (PIXEL_RGBA, PIXEL_RGB), (PIXEL_RGBA, PIXEL_BGR), (PIXEL_RGBA, PIXEL_GRAY), (PIXEL_RGBA, PIXEL_BGRA),
        (PIXEL_BGRA, PIXEL_RGB), (PIXEL_BGRA, PIXEL_BGR), (PIXEL_BGRA, PIXEL_GRAY), (PIXEL_BGRA, PIXEL_RGBA)]}
_TO_CONVERSIONS = {
    _conversion(s, d) for s, d in [
        (PIXEL_RGB, PIXEL_BGR), (PIXEL_BGR, PIXEL_RGB), (PIXEL_RGB, PIXEL_RGBA), (PIXEL_BGR, PIXEL_BGRA),
        (PIXEL_BGR, PIXEL_RGBA), (PIXEL_RGB, PIXEL_BGRA), (PIXEL_GRAY, PIXEL_RGBA), (PIXEL_GRAY, PIXEL_BGRA),
        (PIXEL_RGBA, PIXEL_BGRA), (PIXEL_BGRA, PIXEL_RGBA)]}


def type_name(type: int) -> str:
    """'PIXEL_BGR2RGB' for 0x10002, or the number when it is no pixel type."""
    src, dst = type & PIXEL_FORMAT_MASK, type >> PIXEL_CONVERT_SHIFT
    if src in _NAME and dst == 0:
        return f"PIXEL_{_NAME[src]}"
    if src in _NAME and dst in _NAME:
        return f"PIXEL_{_NAME[src]}2{_NAME[dst]}"
    return str(type)


def _split_type(type: object, supported: set[int], what: str) -> tuple[str, str]:
    """Source and destination channel layouts of a pixel type, or a MatError."""
    if not is_int(type):
        raise MatError(f"{what}: pixel type must be an int such as Mat.PixelType.PIXEL_RGB, "
                       f"got {type!r:.40}")
    type = int(type)
    src, dst = type & PIXEL_FORMAT_MASK, (type & PIXEL_CONVERT_MASK) >> PIXEL_CONVERT_SHIFT
    if dst == 0 and src in _LAYOUT:
        return _LAYOUT[src], _LAYOUT[src]
    if type in supported:
        return _LAYOUT[src], _LAYOUT[dst]
    names = ", ".join(sorted(type_name(t) for t in supported))
    raise MatError(f"{what} does not implement pixel type {type_name(type)} ({type}); it takes "
                   f"PIXEL_RGB/BGR/GRAY/RGBA/BGRA or one of: {names}")


# -- channel conversion on (h, w, channels) uint8/int arrays ------------------------------------
def _convert_channels(image: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Reorder, drop, add (alpha 255), replicate (gray) or mix (to gray) channels."""
    if src == dst:
        return image
    if dst == "Y":
        r, g, b = (image[..., src.index(ch)].astype(np.int32) * w for ch, w in _GRAY_WEIGHTS.items())
        return ((r + g + b) >> _GRAY_SHIFT)[..., None]
    planes = []
    for ch in dst:
        if ch in src:
            planes.append(image[..., src.index(ch)])
        elif ch == "A":
            planes.append(np.full(image.shape[:-1], 255, image.dtype))
        else:  # gray to colour
            planes.append(image[..., 0])
    return np.stack(planes, axis=-1)


# -- input checks -------------------------------------------------------------------------------
def _pixel_bytes(pixels: object, w: int, h: int, stride: int, channels: int, layout_name: str) -> np.ndarray:
    """The image as a flat uint8 array after checking type, sizes and byte count."""
    if isinstance(pixels, (bytes, bytearray, memoryview)):
        try:
            data = np.frombuffer(pixels, np.uint8)
        except (TypeError, ValueError, BufferError) as e:  # e.g. a non-contiguous memoryview
            raise MatError(f"pixels: cannot read {type(pixels).__name__} as bytes: {e}") from None
    else:
        data = as_array(pixels, "pixels")
        if data.dtype != np.uint8:
            raise MatError(f"pixels must be a uint8 array (interleaved {layout_name} bytes), got dtype "
                           f"{data.dtype}; convert with .astype(np.uint8) if the values are 0..255")
        if data.ndim == 3 and data.shape[2] != channels:
            raise MatError(f"{layout_name} pixels have {channels} channel(s) per pixel, but the array has "
                           f"shape {data.shape} with {data.shape[2]}")
        data = np.ascontiguousarray(data).reshape(-1)
    if w <= 0 or h <= 0:
        raise MatError(f"image width and height must be > 0, got w={w} h={h}")
    if stride < w * channels:
        raise MatError(f"stride must be at least w * channels = {w} * {channels} = {w * channels} bytes, "
                       f"got {stride}")
    if data.size < h * stride:
        raise MatError(f"{layout_name} image of w={w} h={h} stride={stride} needs h * stride = "
                       f"{h * stride} bytes, the pixels have {data.size}")
    return data


def _rows(data: np.ndarray, w: int, h: int, stride: int, channels: int) -> np.ndarray:
    """(h, w, channels) view of row-strided bytes."""
    return data[:h * stride].reshape(h, stride)[:, :w * channels].reshape(h, w, channels)


def _int(value: object, name: str) -> int:
    # strict as pybind's int caster: 2.7 or "3" for a size is a bug to report, not to round
    if not is_int(value):
        raise MatError(f"{name} must be an int, got {type(value).__name__} {value!r:.40}")
    return int(value)


# bytes per output value a bilinear resize holds at once: its float32 Mat or uint8 rows,
# plus about five int32 temporaries (the two taps, the interpolated rows, the two row taps)
_RESIZE_BYTES_PER_VALUE = 24


def _check_resize(src_h: int, target_w: int, target_h: int, channels: int, what: str) -> None:
    """Refuse a target the machine cannot hold before resize_bilinear allocates it; its
    horizontal pass works on every source row at the target width."""
    check_buffer((max(src_h, target_h), target_w, channels), _RESIZE_BYTES_PER_VALUE,
                 f"{what} of {src_h} rows to {target_w} x {target_h} x {channels} channels")


def _stride_and_rest(args: tuple, n_rest: int, what: str) -> tuple[int, tuple]:
    """ncnn's overloads: (..., [stride,] a, b, ...): split off the optional stride (0 = default)."""
    if len(args) == n_rest:
        return 0, args
    if len(args) == n_rest + 1:
        return _int(args[0], "stride"), args[1:]
    raise MatError(f"{what} takes {n_rest} or {n_rest + 1} (with stride) values after pixels, type, "
                   f"w, h; got {len(args)}")


# -- fixed-point bilinear resize (ncnn's resize_bilinear_c1..c4) ---------------------------------
INTER_RESIZE_COEF_BITS = 11
INTER_RESIZE_COEF_SCALE = 1 << INTER_RESIZE_COEF_BITS


def _resize_taps(src_size: int, dst_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Left source index and the two 11-bit weights of each destination pixel.

    Centre-aligned like OpenCV: f = (d + 0.5) * scale - 0.5, computed in double then float;
    the edges clamp to the first/last pair of source pixels.
    """
    scale = src_size / dst_size
    f = ((np.arange(dst_size) + 0.5) * scale - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    f = f - s.astype(np.float32)
    low, high = s < 0, s >= src_size - 1
    s = np.where(low, 0, np.where(high, src_size - 2, s))
    f = np.where(low, np.float32(0), np.where(high, np.float32(1), f)).astype(np.float32)
    scale_f = np.float32(INTER_RESIZE_COEF_SCALE)
    a0 = ((np.float32(1) - f) * scale_f + np.float32(0.5)).astype(np.int32)  # SATURATE_CAST_SHORT
    a1 = (f * scale_f + np.float32(0.5)).astype(np.int32)
    return s, a0, a1


def resize_bilinear(image: np.ndarray, target_w: int, target_h: int) -> np.ndarray:
    """ncnn's resize_bilinear_cN on an (h, w, N) uint8 image -> (target_h, target_w, N) uint8.

    Rows are first interpolated horizontally to 15-bit values ((a0*S0 + a1*S1) >> 4), then
    vertically with ((b0*R0 >> 16) + (b1*R1 >> 16) + 2) >> 2, bit for bit as ncnn's integer
    kernel. A 1-pixel-wide or -high source takes index -1 with weight 0, as ncnn does.
    """
    src_h, src_w, _ = image.shape
    xs, a0, a1 = _resize_taps(src_w, target_w)
    ys, b0, b1 = _resize_taps(src_h, target_h)
    pixels = image.astype(np.int32)
    left, right = np.take(pixels, xs, axis=1, mode="wrap"), np.take(pixels, xs + 1, axis=1, mode="wrap")
    rows = (left * a0[None, :, None] + right * a1[None, :, None]) >> 4
    top, bottom = np.take(rows, ys, axis=0, mode="wrap"), np.take(rows, ys + 1, axis=0, mode="wrap")
    out = (((b0[:, None, None] * top) >> 16) + ((b1[:, None, None] * bottom) >> 16) + 2) >> 2
    return out.astype(np.uint8)


# -- image -> Mat -------------------------------------------------------------------------------
def _mat_from_image(image: np.ndarray) -> Mat:
    """(h, w, c) values -> a (c, h, w) float32 Mat (dims 3 even for gray, as ncnn)."""
    return Mat.from_array(np.ascontiguousarray(np.moveaxis(image, -1, 0), dtype=np.float32), 3)


def _read_image(pixels: object, type: object, w: object, h: object, stride: object,
                what: str) -> tuple[np.ndarray, str, str, int, int, int]:
    src, dst = _split_type(type, _FROM_CONVERSIONS, what)
    w, h, stride = _int(w, "w"), _int(h, "h"), _int(stride, "stride")
    channels = len(src)
    stride = stride or w * channels
    data = _pixel_bytes(pixels, w, h, stride, channels, src)
    return data, src, dst, w, h, stride


def from_pixels(pixels: Pixels, type: int, w: int, h: int, stride: int = 0) -> Mat:
    """Interleaved uint8 pixels (rows of `stride` bytes, 0 = packed) -> (c, h, w) float Mat."""
    data, src, dst, w, h, stride = _read_image(pixels, type, w, h, stride, "from_pixels")
    return _mat_from_image(_convert_channels(_rows(data, w, h, stride, len(src)), src, dst))


@overload
def from_pixels_resize(pixels: Pixels, type: int, w: int, h: int, target_w: int, target_h: int, /) -> Mat:
    ...


@overload
def from_pixels_resize(pixels: Pixels, type: int, w: int, h: int, stride: int, target_w: int, target_h: int,
                       /) -> Mat:
    ...


def from_pixels_resize(pixels: Pixels, type: int, w: int, h: int, *args: int) -> Mat:
    """from_pixels_resize(pixels, type, w, h, [stride,] target_w, target_h): bilinear resize of
    the uint8 image in its own layout, then the conversion."""
    stride, (target_w, target_h) = _stride_and_rest(args, 2, "from_pixels_resize")
    data, src, dst, w, h, stride = _read_image(pixels, type, w, h, stride, "from_pixels_resize")
    return _from_image_resized(_rows(data, w, h, stride, len(src)), src, dst, target_w, target_h,
                               "from_pixels_resize")


def _from_image_resized(image: np.ndarray, src: str, dst: str, target_w: object, target_h: object,
                        what: str) -> Mat:
    target_w, target_h = _int(target_w, "target_w"), _int(target_h, "target_h")
    if target_w <= 0 or target_h <= 0:
        raise MatError(f"target size must be > 0, got {target_w} x {target_h}")
    _check_resize(image.shape[0], target_w, target_h, max(len(src), len(dst)), what)
    if image.shape[:2] != (target_h, target_w):
        image = resize_bilinear(image, target_w, target_h)
    return _mat_from_image(_convert_channels(image, src, dst))


def _roi(image: np.ndarray, w: int, h: int, roi: Sequence[object]) -> np.ndarray:
    roix, roiy, roiw, roih = (_int(v, n) for v, n in zip(roi, ("roix", "roiy", "roiw", "roih")))
    if roix < 0 or roiy < 0 or roiw <= 0 or roih <= 0 or roix + roiw > w or roiy + roih > h:
        raise MatError(f"roi x={roix} y={roiy} w={roiw} h={roih} is not inside the {w} x {h} image")
    return image[roiy:roiy + roih, roix:roix + roiw]


@overload
def from_pixels_roi(pixels: Pixels, type: int, w: int, h: int, roix: int, roiy: int, roiw: int, roih: int,
                    /) -> Mat:
    ...


@overload
def from_pixels_roi(pixels: Pixels, type: int, w: int, h: int, stride: int, roix: int, roiy: int, roiw: int,
                    roih: int, /) -> Mat:
    ...


def from_pixels_roi(pixels: Pixels, type: int, w: int, h: int, *args: int) -> Mat:
    """from_pixels_roi(pixels, type, w, h, [stride,] roix, roiy, roiw, roih): a crop."""
    stride, roi = _stride_and_rest(args, 4, "from_pixels_roi")
    data, src, dst, w, h, stride = _read_image(pixels, type, w, h, stride, "from_pixels_roi")
    crop = _roi(_rows(data, w, h, stride, len(src)), w, h, roi)
    return _mat_from_image(_convert_channels(crop, src, dst))


@overload
def from_pixels_roi_resize(pixels: Pixels, type: int, w: int, h: int, roix: int, roiy: int, roiw: int, roih: int,
                           target_w: int, target_h: int, /) -> Mat:
    ...


@overload
def from_pixels_roi_resize(pixels: Pixels, type: int, w: int, h: int, stride: int, roix: int, roiy: int,
                           roiw: int, roih: int, target_w: int, target_h: int, /) -> Mat:
    ...


def from_pixels_roi_resize(pixels: Pixels, type: int, w: int, h: int, *args: int) -> Mat:
    """from_pixels_roi_resize(pixels, type, w, h, [stride,] roix, roiy, roiw, roih, target_w, target_h)."""
    stride, rest = _stride_and_rest(args, 6, "from_pixels_roi_resize")
    data, src, dst, w, h, stride = _read_image(pixels, type, w, h, stride, "from_pixels_roi_resize")
    crop = _roi(_rows(data, w, h, stride, len(src)), w, h, rest[:4])
    target_w, target_h = rest[4:]
    return _from_image_resized(crop, src, dst, target_w, target_h, "from_pixels_roi_resize")


# -- Mat -> image -------------------------------------------------------------------------------
def saturate_uint8(values: np.ndarray) -> np.ndarray:
    """ncnn's SATURATE_CAST_UCHAR: truncate towards zero, clamp to 0..255 (NaN -> 0)."""
    with np.errstate(invalid="ignore"):
        clean = np.nan_to_num(np.asarray(values, np.float64), nan=0.0, posinf=255.0, neginf=0.0)
    return np.clip(np.trunc(clean), 0, 255).astype(np.uint8)


def _image_of_mat(mat: object, src: str, what: str) -> np.ndarray:
    """The Mat's planes as an (h, w, c) float array, checking it has the source's channels."""
    data = mat.numpy() if isinstance(mat, Mat) else as_array(mat, what)
    channels = len(src)
    if data.ndim == 3 and data.shape[0] == channels:
        planes = data
    elif data.ndim in (1, 2) and channels == 1:
        planes = data.reshape(1, -1, data.shape[-1]) if data.ndim == 2 else data.reshape(1, 1, -1)
    else:
        raise MatError(f"{what} with source layout {src} needs a (c={channels}, h, w) Mat, got shape "
                       f"{tuple(data.shape)}")
    if planes.size == 0:
        raise MatError(f"{what}: the Mat is empty")
    if planes.dtype.kind not in "fiu":
        raise MatError(f"{what}: Mat data of dtype {planes.dtype} cannot become pixels")
    return np.moveaxis(planes, 0, -1)


def _write_rows(image: np.ndarray, stride: int) -> np.ndarray:
    """Place (h, w, c) uint8 rows into a buffer of `stride`-byte rows; return the (h, w, c) view."""
    h, w, c = image.shape
    stride = stride or w * c
    if stride < w * c:
        raise MatError(f"stride must be at least w * channels = {w} * {c} = {w * c} bytes, got {stride}")
    check_buffer((h, stride), 1, f"pixels of {h} rows {stride} bytes apart")
    buffer = np.zeros((h, stride), np.uint8)
    view = buffer[:, :w * c].reshape(h, w, c)
    view[...] = image
    return view


def _to_image(mat: object, type: object, what: str) -> np.ndarray:
    src, dst = _split_type(type, _TO_CONVERSIONS, what)
    return _convert_channels(saturate_uint8(_image_of_mat(mat, src, what)), src, dst)


def to_pixels(mat: Mat, type: int, stride: int = 0) -> np.ndarray:
    """A Mat -> uint8 pixels (h, w, channels); rows are `stride` bytes apart in the buffer."""
    return _write_rows(_to_image(mat, type, "to_pixels"), _int(stride, "stride"))


def to_pixels_resize(mat: Mat, type: int, target_w: int, target_h: int, stride: int = 0) -> np.ndarray:
    """to_pixels, then ncnn's fixed-point bilinear resize of the uint8 image."""
    image = _to_image(mat, type, "to_pixels_resize")
    target_w, target_h = _int(target_w, "target_w"), _int(target_h, "target_h")
    if target_w <= 0 or target_h <= 0:
        raise MatError(f"target size must be > 0, got {target_w} x {target_h}")
    if image.shape[:2] != (target_h, target_w):
        _check_resize(image.shape[0], target_w, target_h, image.shape[2], "to_pixels_resize")
        image = resize_bilinear(image, target_w, target_h)
    return _write_rows(image, _int(stride, "stride"))


# -- normalisation -------------------------------------------------------------------------------
def _per_channel(values: object, channels: int, name: str) -> np.ndarray | None:
    if values is None:
        return None
    array = as_array(values, f"substract_mean_normalize: {name}")
    if array.dtype.kind not in "biuf":
        raise MatError(f"substract_mean_normalize: {name} must be numbers, one per channel; got "
                       f"{type(values).__name__} of dtype {array.dtype}")
    values = array.astype(np.float32).reshape(-1)
    if values.size == 0:
        return None
    if values.size != channels:
        raise MatError(f"substract_mean_normalize: {name} needs one value per channel ({channels}), "
                       f"got {values.size}")
    return values


def substract_mean_normalize(mat: Mat, mean: Sequence[float] | np.ndarray | None,
                             norm: Sequence[float] | np.ndarray | None) -> None:
    """In place, per channel: x - mean, x * norm, or both as x * norm + (-mean * norm).

    ncnn runs these as its Bias / Scale layers; with both, the bias is -mean*norm and the
    x86 Scale kernel fuses the multiply-add, which we reproduce (float64 product, one rounding).
    An empty (or None) list skips that part.
    """
    if not isinstance(mat, Mat):
        raise MatError(f"substract_mean_normalize expects a Mat, got {type(mat).__name__}")
    data = mat.numpy()
    if mat.empty():
        raise MatError("substract_mean_normalize: the Mat is empty")
    if data.dtype.kind != "f":
        raise MatError(f"substract_mean_normalize needs float data, the Mat holds {data.dtype}")
    channels = mat.c
    mean_v, norm_v = _per_channel(mean, channels, "mean"), _per_channel(norm, channels, "norm")
    shape = (channels,) + (1,) * (data.ndim - 1) if data.ndim >= 3 else (1,) * data.ndim
    if norm_v is None:
        if mean_v is None:
            return
        result = data.astype(np.float32) + (-mean_v).reshape(shape)
    elif mean_v is None:
        result = data.astype(np.float32) * norm_v.reshape(shape)
    else:
        bias = (-mean_v * norm_v).reshape(shape)
        result = (data.astype(np.float32).astype(np.float64) * norm_v.reshape(shape) + bias).astype(np.float32)
    data[...] = result


# -- ncnn's spellings: Mat members ----------------------------------------------------------------
# ncnn declares these in mat.h and defines them in mat_pixel*.cpp. Here too they live with the
# pixel code, so that pixels depend on Mat and Mat (mat.py) on nothing of pixels; vkncnn's
# __init__ imports this module, so every Mat has them.
def _mat_from_pixels(pixels: Pixels, type: int, w: int, h: int, stride: int = 0,
                     allocator: Allocator | None = None) -> Mat:
    return from_pixels(pixels, type, w, h, stride)


def _mat_from_pixels_resize(pixels: Pixels, type: int, w: int, h: int, *args: Any,
                            allocator: Allocator | None = None) -> Mat:
    return from_pixels_resize(pixels, type, w, h, *args)


def _mat_from_pixels_roi(pixels: Pixels, type: int, w: int, h: int, *args: Any,
                         allocator: Allocator | None = None) -> Mat:
    return from_pixels_roi(pixels, type, w, h, *args)


def _mat_from_pixels_roi_resize(pixels: Pixels, type: int, w: int, h: int, *args: Any,
                                allocator: Allocator | None = None) -> Mat:
    return from_pixels_roi_resize(pixels, type, w, h, *args)


def _mat_to_pixels(self: Mat, type: int, stride: int = 0) -> np.ndarray:
    return to_pixels(self, type, stride)


def _mat_to_pixels_resize(self: Mat, type: int, target_w: int, target_h: int, stride: int = 0) -> np.ndarray:
    return to_pixels_resize(self, type, target_w, target_h, stride)


def _mat_substract_mean_normalize(self: Mat, mean: Sequence[float] | np.ndarray | None,
                                  norm: Sequence[float] | np.ndarray | None) -> None:
    """In place: per channel, x = (x - mean[c]) * norm[c]; an empty list skips that step."""
    substract_mean_normalize(self, mean, norm)


# Mat declares these for type checkers (mat.py); setattr, since a type checker refuses
# assignments to methods it knows
_MAT_MEMBERS = {
    "from_pixels": staticmethod(_mat_from_pixels),
    "from_pixels_resize": staticmethod(_mat_from_pixels_resize),
    "from_pixels_roi": staticmethod(_mat_from_pixels_roi),
    "from_pixels_roi_resize": staticmethod(_mat_from_pixels_roi_resize),
    "to_pixels": _mat_to_pixels,
    "to_pixels_resize": _mat_to_pixels_resize,
    "substract_mean_normalize": _mat_substract_mean_normalize,
}
for _name, _member in _MAT_MEMBERS.items():
    setattr(Mat, _name, _member)
del _name, _member
