"""Configurations where pip ncnn (1.0.20261020, x86 CPU) is wrong, found by the layer fuzzer.

In these, a disagreement or an ncnn crash is ncnn's bug: vkncnn's answer was checked
against an independent numpy reference instead (see the notes per rule). The fuzzer
reports such cases as `ncnn-bug`, not as failures.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback.conv import float2int8

SAME = (-233, -234)


def _same_pad_amounts(case) -> tuple[int, int] | None:
    """ncnn's (hpad, wpad) for a -233/-234 convolution: kernel extent + (n-1)//s*s - n."""
    p = case.params
    if p.get(4, 0) not in SAME or not case.inputs or case.inputs[0].ndim != 3:
        return None
    kw = p.get(1, 0)
    kh, dw = p.get(11, kw), p.get(2, 1)
    dh, sw = p.get(12, dw), p.get(3, 1)
    sh = p.get(13, sw)
    _, h, w = case.inputs[0].shape
    hpad = dh * (kh - 1) + 1 + (h - 1) // sh * sh - h
    wpad = dw * (kw - 1) + 1 + (w - 1) // sw * sw - w
    return hpad, wpad


def _gridsample_avx_far_taps(case) -> bool:
    """A 2-D bicubic/reflection/align_corner GridSample with a block of 8 grid points (per
    grid channel; per grid when permute_fusion) and a tap beyond one mirror of an edge."""
    p = case.params
    if (p.get(0, 1), p.get(1, 1), p.get(2, 0)) != (3, 3, 1) or case.inputs[0].ndim != 3:
        return False
    x, grid = case.inputs[0], np.asarray(case.inputs[1])
    permute = p.get(3, 0)
    points = grid.shape[1] * grid.shape[2] if permute else grid.shape[1]
    if points < 8:
        return False
    gx, gy = (grid[0], grid[1]) if permute else (grid[..., 0], grid[..., 1])
    for g, n in ((gx, x.shape[2]), (gy, x.shape[1])):
        first = np.floor((g.astype(np.float32) + 1) / 2 * (n - 1)) - 1  # the taps: first .. first + 3
        if np.any(first < -(n - 1)) or np.any(first + 3 > 2 * (n - 1)):
            return True
    return False


def _pooling_same_pads(case) -> tuple[int, int, bool] | None:
    """(hpad, wpad, upper) of a SAME-mode (pad_mode 2 = upper / 3) window Pooling on (c, h, w)."""
    p = case.params
    mode = p.get(5, 0)
    if case.type_name != "Pooling" or mode not in (2, 3) or p.get(4, 0) or p.get(7, 0) or case.inputs[0].ndim != 3:
        return None
    kw = p.get(1, 0)
    kh, sw = p.get(11, kw), p.get(2, 1)
    sh = p.get(12, sw)
    _, h, w = case.inputs[0].shape
    hpad = kh + (h - 1) // sh * sh - h
    wpad = kw + (w - 1) // sw * sw - w
    return hpad, wpad, mode == 2


def _split(pad: int, upper: bool) -> tuple[int, int]:
    """(before, after) of a SAME amount: SAME_UPPER puts the smaller half before."""
    half = int(pad / 2)  # C's truncating division
    return (half, pad - half) if upper else (pad - half, half)


def _negative_border_bug(case) -> bool:
    """ncnn's copy_make_border given a negative amount (SAME padding whose kernel is smaller
    than the stride on one axis while the other axis pads) writes outside its rows: packed
    channels copy whole source rows into shorter ones (heap corruption, garbage or a crash);
    unpacked rows of 12+ pixels are copied with memcpy at the negative left offset, so the
    last cropped columns of each row hold the next row's first pixels. (Narrow unpacked rows
    are copied pixel by pixel and crop as vkncnn does.) A negative top crops the bottom
    instead, as vkncnn does; but with a negative bottom every source row is still copied, so
    the last channel's rows run past the output's end (heap corruption: a malloc abort on
    Pooling@wide seed 65 case 24)."""
    if case.type_name == "Pooling":
        pads = _pooling_same_pads(case)
        if pads is None:
            return False
        hpad, wpad, upper = pads
    else:
        amounts = _same_pad_amounts(case)
        if amounts is None or case.type_name not in ("Convolution", "ConvolutionDepthWise"):
            return False
        (hpad, wpad), upper = amounts, case.params.get(4) == -233
    if max(hpad, wpad) <= 0 or min(hpad, wpad) >= 0:
        return False
    c, _, w = case.inputs[0].shape
    left, bottom = _split(wpad, upper)[0], _split(hpad, upper)[1]
    return c % 4 == 0 or (left < 0 and w >= 12) or bottom < 0


def _rows_on_a_tie(a: np.ndarray) -> bool:
    """Whether quantizing `a` per row (x * 127 / absmax) has an element that a row scale one
    float step smaller or larger rounds to the other side of a .5 tie."""
    a = np.asarray(a, np.float32)
    absmax = np.abs(a).max(axis=1, keepdims=True)
    scale = np.float32(127) / np.where(absmax == 0, np.float32(127), absmax)  # 1 for a row of zeros
    q = float2int8(a * scale)
    return any(np.any(float2int8(a * np.nextafter(scale, far)) != q) for far in (np.float32(0), np.float32(np.inf)))


def _gemm_int8_scale_tie(case) -> bool:
    """An int8 Gemm whose A, quantized on the fly per row, has an element on a tie."""
    p = case.params
    if case.type_name != "Gemm" or not p.get(18, 0) or p.get(4, 0) or not case.inputs:
        return False
    a = np.asarray(case.inputs[0], np.float32)
    a = a.reshape(a.shape[0], -1)  # a 3-D (c, 1, w) operand is the matrix (c, w)
    return _rows_on_a_tie(a.T if p.get(2, 0) else a)


def _attention_int8_scale_tie(case) -> bool:
    """An int8 MultiHeadAttention one of whose per-row quantized operands (queries, softmax
    scores, the merged heads: intermediate values, so vkncnn's numpy path computes them
    here) has an element on a tie."""
    if case.type_name != "MultiHeadAttention" or not case.params.get(18, 0):
        return False
    from vkncnn.cpu_fallback import attention_int8

    from .runner import case_model, run_vkncnn

    ties, quantize_rows = [], attention_int8.quantize_rows

    def recording(a):
        ties.append(_rows_on_a_tie(a))
        return quantize_rows(a)

    attention_int8.quantize_rows = recording
    try:
        text, wb, feed = case_model(case)
        run_vkncnn(text, wb, feed, case.output_names(), "cpu")
    finally:
        attention_int8.quantize_rows = quantize_rows
    return any(ties)


def _roialign_v0_grid_overflow(case) -> bool:
    """A version-0 ROIAlign with adaptive sampling where some bin's float extent
    ceil(end - start) (clipped to the map) exceeds ceil(bin size): a grid one sample larger
    than the bin size promises."""
    p = case.params
    if case.type_name != "ROIAlign" or p.get(5, 0) != 0 or p.get(3, 0) > 0 or case.inputs[0].ndim != 3:
        return False
    f32 = np.float32
    _, h, w = case.inputs[0].shape
    x1, y1, x2, y2 = (f32(v) * f32(p.get(2, 1.0)) for v in np.asarray(case.inputs[1], f32)[:4])
    if p.get(4, 0):
        x1, y1, x2, y2 = (v - f32(0.5) for v in (x1, y1, x2, y2))
    roi_w, roi_h = x2 - x1, y2 - y1
    if not p.get(4, 0):
        roi_w, roi_h = max(roi_w, f32(1)), max(roi_h, f32(1))
    for start, extent, pooled, size in ((y1, roi_h, p.get(1, 0), h), (x1, roi_w, p.get(0, 0), w)):
        if pooled <= 0:
            continue
        bin_size = f32(extent / f32(pooled))
        k = np.arange(pooled, dtype=f32)
        lo = np.clip(start + k * bin_size, f32(0), f32(size))
        hi = np.clip(start + (k + f32(1)) * bin_size, f32(0), f32(size))
        if np.any(np.ceil(hi - lo) > np.ceil(bin_size)):
            return True
    return False


def known_ncnn_bug(case) -> str:
    """Why ncnn's answer cannot be trusted for this case ('' when it can)."""
    if _negative_border_bug(case):
        return "ncnn copy_make_border with a negative SAME amount writes outside its rows"
    if case.type_name == "ConvolutionDepthWise":
        p = case.params
        group = p.get(7, 1)
        inc = case.inputs[0].shape[0] if case.inputs[0].ndim == 3 else 0
        if p.get(8, 0) and (group < inc or p.get(0, 0) != group):
            # int8 grouped (not depthwise) convolution: ncnn returns uninitialised memory
            # (also with group == channels when each group has several outputs)
            return "ncnn int8 ConvolutionDepthWise that is not 1 output per channel returns garbage"
        pads = _same_pad_amounts(case)
        if pads and max(pads) > 0 and min(pads) < 0 and inc % 4 == 0:
            # SAME padding that crops one axis (negative amount) while padding the other, on
            # packed channels: ncnn corrupts the heap ("pool allocator destroyed too early").
            # Unpacked channels are compared as usual: vkncnn crops as ncnn does there
            # (conv.same_crop_quirk; 360 case-paths of 3, 5 and 6 channels agreed)
            return "ncnn ConvolutionDepthWise SAME padding cropping one axis of packed channels corrupts memory"
    if case.type_name == "Interp" and case.inputs[0].ndim == 4 and case.params.get(0) == 3:
        # bicubic on a 4-D blob: ncnn's x86 kernel returns inf/nan that change run to run
        return "ncnn bicubic Interp of a 4-D blob reads uninitialised memory"
    if case.type_name == "GridSample" and _gridsample_avx_far_taps(case):
        # bicubic + reflection + align_corner: the x86 AVX code (blocks of 8 grid points)
        # mirrors a tap once and does not clamp it, so a tap 2 past a mirrored edge reads
        # outside the plane (nan or a neighbour's value); its scalar code clamps, as vkncnn
        # does (tests/layers/test_gridsample.py::..._clamps_far_taps)
        return "ncnn x86 AVX bicubic GridSample reflection/align_corner reads outside the plane"
    if (case.type_name == "Interp" and case.inputs[0].ndim == 4 and case.params.get(0) == 2
            and 1 in case.inputs[0].shape[2:]):
        # bilinear on a 4-D blob one pixel wide or high: ncnn's x86 kernel reads the pixel
        # before the row (taken with weight 0), so uninitialised padding that holds a nan or
        # inf turns the output nan, run to run; otherwise it agrees with vkncnn
        return "ncnn bilinear Interp of a 4-D blob with a 1-pixel axis reads outside the plane"
    if _gemm_int8_scale_tie(case):
        # the wheel's x86 int8 Gemm quantizes a row alone with 127 / absmax (as vkncnn does)
        # but the same row inside a SIMD block of rows with a scale a float step off (measured
        # on Gemm@int8 seeds 62 case 9, 64 cases 13/33, 65 case 26: the tie element lands one
        # int8 step off there), so a row's rounding depends on where it sits in the matrix
        return "ncnn x86 int8 Gemm quantizes a tie in A by the row's place in its SIMD blocking"
    if _attention_int8_scale_tie(case):
        # the same per-row quantization inside its int8 products (MultiHeadAttention@int8
        # seed 65 case 37: merged row 0 on a tie, ncnn one int8 step the other way)
        return "ncnn x86 int8 MultiHeadAttention quantizes a tie by the row's place in its SIMD blocking"
    if _roialign_v0_grid_overflow(case):
        # the wheel corrupts its heap on exactly these (a crash, a malloc abort, or garbage
        # in a later layer or run; a lone run may still return vkncnn's answer): predicted
        # crash-for-crash on 115 boxes (75 fuzz draws, 40 random; 20 crash), first seen as
        # ROIAlign seed 61 case 10
        return "ncnn ROIAlign version 0 overflows its sample buffer when a bin's float extent rounds up"
    if case.type_name == "ROIPooling":
        # the wheel places some bin edges a pixel off its own source; vkncnn follows the
        # source (tests/layers/test_roialign.py::test_roipooling_matches_reference)
        return "ncnn wheel ROIPooling bin edges differ from ncnn's source"
    if case.type_name == "Requantize":
        p, x = case.params, case.inputs[0]
        tables = (p.get(0, 1), p.get(1, 1), p.get(2, 0))
        if x.ndim >= 2 and x.shape[0] % 8 == 4 and max(tables) > 1:
            # x86 pack4 path with per-channel tables (tests/layers/test_quantize.py)
            return "ncnn x86 Requantize mis-applies per-channel tables when the packed axis is 4 mod 8"
    if case.type_name == "Reshape":
        p, x = case.params, case.inputs[0]
        three_d_target = p.get(2, -233) != -233 and p.get(11, -233) == -233
        if x.ndim == 4 and three_d_target and p.get(2) == 0 and x.shape[0] % 4 == 0:
            # 0 = "copy c" on a 4-D input packed by 4/8: ncnn copies the packed count
            # (c / elempack) and truncates the data: (16,1,1,4) -> (1,4,1) for 0=1 1=4 2=0
            return "ncnn Reshape 4-D -> 3-D with c=0 copies the packed channel count"
    return ""
