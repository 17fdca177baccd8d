"""The 1-D and 3-D convolution family, its poolings and DeformableConv2D: ncnn's fp32 grids.

Convolution1D (tests/test_convolution1d.cpp), Convolution3D (test_convolution3d.cpp),
ConvolutionDepthWise1D (test_convolutiondepthwise1d.cpp), ConvolutionDepthWise3D
(test_convolutiondepthwise3d.cpp), Deconvolution1D (test_deconvolution1d.cpp), Deconvolution3D
(test_deconvolution3d.cpp), DeconvolutionDepthWise1D (test_deconvolutiondepthwise1d.cpp),
DeconvolutionDepthWise3D (test_deconvolutiondepthwise3d.cpp), Pooling1D (test_pooling1d.cpp),
Pooling3D (test_pooling3d.cpp), DeformableConv2D (test_deformableconv2d.cpp and _1 .. _4, which
split one kernel table between them; the six wide cases that _0 and _4 both hold appear once).
"""

from __future__ import annotations

from .registry import GridCase, activation, case_rng, grid, nc

# (kernel, dilation, stride, pad) rows of the 1-D sweeps
KDSP_1D_CONV = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1),
                (3, 2, 1, 1), (4, 1, 1, 2), (4, 1, 2, -233), (4, 2, 1, -234), (5, 1, 1, -234), (5, 1, 2, 2),
                (5, 2, 2, 2), (7, 1, 1, 3), (7, 1, 2, 3), (7, 2, 1, -233)]
KDSP_1D_DECONV = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1),
                  (3, 2, 1, 1), (4, 1, 1, -233), (4, 1, 2, -234), (4, 2, 1, -234), (5, 1, 1, 2), (5, 1, 2, 2),
                  (5, 2, 2, 2), (7, 1, 1, 3), (7, 1, 2, 3), (7, 2, 1, -233)]
# the short table of the dynamic-weight and 3-D sweeps
KDSP_SHORT = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1),
              (3, 2, 1, -234)]

# Convolution1D: (w, h, outh) per loop row; the bias flag alternates along the row list and
# flips with every kdsp row
CONV1D_ROWS = ([(9, h, o) for h in (1, 3, 7, 15) for o in (1, 3, 7, 15, 31)] + [(9, 31, o) for o in (1, 3, 7, 15)]
               + [(25, 28, 31), (25, 31, 28), (25, 28, 28), (25, 24, 28), (25, 24, 31), (25, 28, 24),
                  (25, 31, 24), (25, 24, 24), (25, 28, 48), (25, 31, 48), (25, 24, 48), (25, 48, 28),
                  (25, 48, 31), (25, 48, 24), (25, 31, 31), (25, 48, 48)])
# single calls after the loop: (w, h, outh, kernel, dilation, stride, pad, bias)
CONV1D_TAIL = [(7, 1, 4, 3, 1, 1, 1, 1), (14, 1, 4, 3, 1, 2, 1, 1), (15, 4, 4, 3, 1, 1, 1, 1),
               (15, 8, 8, 3, 1, 1, 1, 1), (11, 8, 16, 3, 1, 1, 1, 1), (13, 16, 24, 3, 1, 1, 1, 1),
               (8, 16, 24, 3, 1, 1, 1, 0), (4, 16, 24, 3, 1, 1, 1, 1), (4, 16, 24, 3, 1, 1, 1, 0),
               (6, 64, 64, 3, 1, 2, 0, 1)]
# (c, outch, bias) of the dynamic 1-D and the 3-D sweeps
CHANNELS_SHORT = [(1, 1, 1), (4, 13, 0), (13, 4, 1), (12, 12, 0), (8, 12, 1), (8, 13, 0), (13, 8, 1), (12, 16, 0),
                  (15, 15, 0), (16, 16, 0)]
# depthwise (c, outch, bias, group)
DW_ROWS = [(1, 1, 1, 1), (2, 2, 0, 1), (2, 2, 1, 2), (3, 3, 0, 3), (4, 2, 1, 2), (4, 4, 0, 4), (7, 7, 1, 7),
           (8, 8, 0, 2), (8, 8, 1, 8), (12, 12, 0, 4), (15, 15, 1, 15), (16, 8, 0, 2), (16, 16, 1, 16)]
# Deconvolution1D (h, outh, bias, output_pad_right, output_w), input width 9
DECONV1D_ROWS = [(1, 1, 1, 0, 0), (4, 13, 0, 1, 7), (13, 4, 1, 1, 0), (4, 8, 0, 0, 0), (8, 4, 1, 0, 7),
                 (8, 13, 0, 2, 0), (13, 8, 1, 2, 0), (16, 16, 0, 0, 7)]
# Deconvolution3D (c, outch, bias, output pads right/bottom/behind, output w/h/d), input 9 x 8 x 7
DECONV3D_ROWS = [(1, 1, 1, (0, 0, 0), (0, 0, 0)), (4, 13, 0, (1, 1, 1), (7, 6, 5)), (13, 4, 1, (1, 0, 0), (0, 0, 0)),
                 (4, 8, 0, (0, 1, 0), (0, 0, 0)), (8, 4, 1, (0, 0, 0), (7, 6, 5)), (8, 13, 0, (2, 2, 2), (0, 0, 0)),
                 (13, 8, 1, (2, 0, 2), (0, 0, 0)), (16, 16, 0, (0, 2, 0), (7, 6, 5))]
# DeconvolutionDepthWise1D (h, outh, bias, group, output_pad_right, output_w), input width 15
DECONV_DW1D_ROWS = [(1, 1, 1, 1, 0, 0), (2, 2, 0, 1, 1, 7), (2, 2, 1, 2, 1, 0), (3, 3, 0, 3, 0, 0),
                    (4, 2, 1, 2, 0, 7), (4, 4, 0, 4, 2, 0), (7, 7, 1, 7, 2, 0), (8, 8, 0, 2, 0, 7),
                    (8, 8, 1, 8, 0, 0), (12, 12, 0, 4, 3, 0), (15, 15, 1, 15, 3, 7), (16, 8, 0, 2, 0, 0),
                    (16, 16, 1, 16, 0, 0)]
# DeconvolutionDepthWise3D (c, outch, bias, group, output pads, output sizes), input 15 x 11 x 7
DECONV_DW3D_ROWS = [(1, 1, 1, 1, (0, 0, 0), (0, 0, 0)), (2, 2, 0, 1, (1, 1, 1), (7, 6, 5)),
                    (2, 2, 1, 2, (1, 0, 0), (0, 0, 0)), (3, 3, 0, 3, (0, 1, 0), (0, 0, 0)),
                    (4, 2, 1, 2, (0, 0, 0), (7, 6, 5)), (4, 4, 0, 4, (2, 2, 2), (0, 0, 0)),
                    (7, 7, 1, 7, (2, 0, 2), (0, 0, 0)), (8, 8, 0, 2, (0, 2, 0), (7, 6, 5)),
                    (8, 8, 1, 8, (0, 0, 0), (0, 0, 0)), (12, 12, 0, 4, (3, 3, 3), (0, 0, 0)),
                    (15, 15, 1, 15, (3, 0, 0), (7, 6, 5)), (16, 8, 0, 2, (0, 3, 3), (0, 0, 0)),
                    (16, 16, 1, 16, (0, 0, 0), (0, 0, 0))]

POOL_KSP = [(2, 1, 0), (2, 2, 0), (3, 1, 0), (3, 2, 1), (4, 1, 0), (4, 2, 1), (5, 1, 0), (5, 2, 2), (7, 1, 0),
            (7, 2, 1), (7, 3, 2)]
# (channels, pad_mode, avgpool_count_include_pad) of the max and the average sweeps
POOL_MAX_ROWS = [(1, 0, 0), (2, 1, 0), (3, 2, 0), (4, 3, 0), (7, 0, 0), (8, 1, 0), (15, 2, 0), (16, 3, 0)]
POOL_AVG_ROWS = [(1, 0, 0), (2, 1, 0), (3, 0, 1), (4, 1, 0), (7, 0, 0), (8, 1, 1), (12, 2, 1), (15, 0, 0),
                 (16, 1, 0), (64, 3, 1)]
# global pooling (shape, type) and two plain 2-stride windows (shape, pad)
POOL1D_GLOBAL = [((2, 1), 0), ((5, 1), 1), ((3, 3), 0), ((6, 3), 1), ((4, 4), 0), ((6, 4), 1), ((8, 8), 0),
                 ((7, 8), 1), ((11, 16), 0), ((13, 16), 1)]
POOL3D_GLOBAL = [((2, 2, 5, 1), 0), ((5, 2, 2, 1), 1), ((3, 3, 6, 3), 0), ((6, 3, 3, 3), 1), ((4, 4, 4, 4), 0),
                 ((6, 5, 4, 4), 1), ((8, 7, 7, 8), 0), ((7, 7, 8, 8), 1), ((11, 12, 13, 16), 0),
                 ((13, 12, 11, 16), 1)]
# adaptive pooling: (ncnn shape, largest out_w); then an out_w with adaptive off (ignored)
POOL1D_ADAPTIVE = [((2, 1), 6), ((5, 1), 6), ((3, 3), 6), ((4, 4), 8), ((6, 4), 6), ((8, 8), 8)]
POOL3D_ADAPTIVE = [((2, 2, 5, 1), 6), ((5, 2, 2, 1), 6), ((3, 4, 6, 3), 6), ((4, 4, 4, 4), 8), ((6, 5, 4, 4), 6),
                   ((8, 7, 7, 8), 9)]
POOL1D_IGNORED_OUT_W = [((11, 16), range(1, 14, 2)), ((13, 16), range(2, 13, 2))]
POOL3D_IGNORED_OUT_W = [((11, 12, 13, 16), range(1, 14, 2)), ((13, 12, 11, 16), range(2, 13, 2))]

DEFORM_KDSP = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, 0), (3, 1, 1, 1), (3, 1, 2, 1), (3, 2, 1, 1),
               (4, 1, 2, 1), (5, 1, 2, 2), (5, 2, 2, 2)]
# (w, h, c, outch, bias) per kdsp row
DEFORM_ROWS = ([(9, 7, 1, 1, 1), (9, 7, 4, 13, 0), (9, 7, 13, 4, 1), (9, 7, 4, 8, 0), (9, 7, 8, 4, 1),
                (9, 7, 8, 13, 0), (9, 7, 13, 8, 1), (9, 7, 16, 16, 0)]
               + [(16, 16, c * 3, o * 3, 1) for c in (1, 4, 8, 16) for o in (1, 4, 8, 16)])
# (w, h, c, outch) with kernel 4, dilation 2, stride 2, pad 2, bias
DEFORM_WIDE = [(7, 5, 24, 32), (7, 5, 32, 24), (7, 5, 28, 32), (7, 5, 32, 28), (7, 5, 26, 32), (7, 5, 32, 26)]

TOL = 1e-3  # ncnn's own epsilon for these sums

# Not in ncnn's grids: an input with a zero-size axis (params, input shapes). ncnn refuses some
# (-100) and dies on others (a division by zero: the transposed convolutions, global average
# pooling, DeformableConv2D); vkncnn must answer or raise a vkncnn.Error either way.
ZERO_SIZE = {
    "Convolution1D": ({0: 4, 1: 3, 6: 36}, [(3, 0)]),
    "Convolution3D": ({0: 2, 1: 1, 6: 6}, [(3, 0, 4, 5)]),
    "ConvolutionDepthWise1D": ({0: 3, 1: 3, 6: 9, 7: 3}, [(3, 0)]),
    "ConvolutionDepthWise3D": ({0: 3, 1: 1, 6: 3, 7: 3}, [(3, 2, 0, 4)]),
    "Deconvolution1D": ({0: 4, 1: 3, 6: 36}, [(3, 0)]),
    "Deconvolution3D": ({0: 2, 1: 1, 6: 6}, [(3, 0, 4, 5)]),
    "DeconvolutionDepthWise1D": ({0: 3, 1: 3, 6: 9, 7: 3}, [(3, 0)]),
    "DeconvolutionDepthWise3D": ({0: 3, 1: 1, 6: 3, 7: 3}, [(3, 2, 0, 4)]),
    "Pooling1D": ({0: 1, 1: 2, 4: 1}, [(3, 0)]),
    "Pooling3D": ({0: 1, 1: 1, 4: 1}, [(3, 2, 0, 4)]),
    "DeformableConv2D": ({0: 2, 1: 1, 6: 6}, [(3, 0, 5), (2, 0, 5), (1, 0, 5)]),
}


def _with_zero_size(name: str, cases: list) -> list:
    params, inputs = ZERO_SIZE[name]
    return cases + [GridCase(params, None, inputs, edge=True)]


def _conv(outch, kernel, dilation, stride, pad, bias, weight_size, act) -> dict:
    return {0: outch, 1: kernel, 2: dilation, 3: stride, 4: pad, 5: bias, 6: weight_size, **act}


def _dynamic(name, cases, params, data_shape, weight_shape, outch, bias) -> None:
    """A dynamic-weight case: weight (and bias) blobs as inputs, sizes 0 in the params."""
    ins = [data_shape, weight_shape] + ([(outch,)] if bias else [])
    cases.append(GridCase(params, [], ins, tol=TOL, edge=True))


def _forced_pad(pad, output_sizes) -> int:
    """ncnn's deconv tests switch pad to -233 whenever every output size is given."""
    if all(s > 0 for s in output_sizes) and pad not in (-233, -234):
        return -233
    return pad


@grid("Convolution1D")
def convolution1d(name: str) -> list:
    cases = []
    for i, (k, d, s, p) in enumerate(KDSP_1D_CONV):
        for j, (w, h, outh) in enumerate(CONV1D_ROWS):
            bias = (i + j) % 2
            act = activation(case_rng(name, len(cases)), 6)
            cases.append(GridCase(_conv(outh, k, d, s, p, bias, outh * h * k, act), None, [nc(w, h)], tol=TOL))
    for w, h, outh, k, d, s, p, bias in CONV1D_TAIL:
        act = activation(case_rng(name, len(cases)), 6)
        cases.append(GridCase(_conv(outh, k, d, s, p, bias, outh * h * k, act), None, [nc(w, h)], tol=TOL))
    for k, d, s, p in KDSP_SHORT:
        for h, outh, bias in CHANNELS_SHORT:
            params = {**_conv(0, 0, d, s, p, bias, 0, activation(case_rng(name, len(cases)), 7)), 19: 1}
            _dynamic(name, cases, params, nc(11, h), nc(k, h, outh), outh, bias)
    return _with_zero_size(name, cases)


@grid("Convolution3D")
def convolution3d(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_SHORT:
        for c, outch, bias in CHANNELS_SHORT:
            act = activation(case_rng(name, len(cases)), 6)
            params = _conv(outch, k, d, s, p, bias, outch * c * k ** 3, act)
            cases.append(GridCase(params, None, [nc(11, 10, 9, c)], tol=TOL))
    return _with_zero_size(name, cases)


@grid("ConvolutionDepthWise1D")
def convolutiondepthwise1d(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_1D_CONV:
        for w in (15, 18, 25):
            for h, outh, bias, g in DW_ROWS:
                act = activation(case_rng(name, len(cases)), 7)
                # ncnn's test sizes the weights with kernel squared; the layer reads its first part
                size = outh // g * h // g * k * k * g
                cases.append(GridCase({**_conv(outh, k, d, s, p, bias, size, act), 7: g}, None, [nc(w, h)],
                                      tol=TOL))
    for k, d, s, p in KDSP_SHORT:
        for h, outh, bias, g in DW_ROWS:
            params = {**_conv(0, 0, d, s, p, bias, 0, activation(case_rng(name, len(cases)), 7)), 7: g, 19: 1}
            _dynamic(name, cases, params, nc(11, h), nc(k, h // g, outh), outh, bias)
    return _with_zero_size(name, cases)


@grid("ConvolutionDepthWise3D")
def convolutiondepthwise3d(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_SHORT:
        for c, outch, bias, g in DW_ROWS:
            act = activation(case_rng(name, len(cases)), 7)
            size = outch // g * c // g * k ** 3 * g
            cases.append(GridCase({**_conv(outch, k, d, s, p, bias, size, act), 7: g}, None, [nc(11, 10, 9, c)],
                                  tol=TOL))
    return _with_zero_size(name, cases)


@grid("Deconvolution1D")
def deconvolution1d(name: str) -> list:
    cases = []
    for dynamic in (False, True):
        for k, d, s, p in KDSP_1D_DECONV:
            for h, outh, bias, opr, ow in DECONV1D_ROWS:
                act = activation(case_rng(name, len(cases)), 5)
                pad = _forced_pad(p, (ow,))
                extra = {18: opr, 20: ow}
                if dynamic:
                    params = {**_conv(0, 0, d, s, pad, bias, 0, act), **extra, 28: 1}
                    _dynamic(name, cases, params, nc(9, h), nc(k, outh, h), outh, bias)
                else:
                    params = {**_conv(outh, k, d, s, pad, bias, outh * h * k, act), **extra}
                    cases.append(GridCase(params, None, [nc(9, h)], tol=TOL))
    return _with_zero_size(name, cases)


def _deconv3d_extra(pads, sizes) -> dict:
    return {18: pads[0], 19: pads[1], 20: pads[2], 25: sizes[0], 26: sizes[1], 27: sizes[2]}


@grid("Deconvolution3D")
def deconvolution3d(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_SHORT:
        for c, outch, bias, pads, sizes in DECONV3D_ROWS:
            act = activation(case_rng(name, len(cases)), 5)
            params = {**_conv(outch, k, d, s, _forced_pad(p, sizes), bias, outch * c * k ** 3, act),
                      **_deconv3d_extra(pads, sizes)}
            cases.append(GridCase(params, None, [nc(9, 8, 7, c)], tol=TOL))
    return _with_zero_size(name, cases)


@grid("DeconvolutionDepthWise1D")
def deconvolutiondepthwise1d(name: str) -> list:
    cases = []
    for dynamic in (False, True):
        for k, d, s, p in KDSP_1D_DECONV:
            for h, outh, bias, g, opr, ow in DECONV_DW1D_ROWS:
                act = activation(case_rng(name, len(cases)), 5)
                pad = _forced_pad(p, (ow,))
                extra = {7: g, 18: opr, 20: ow}
                if dynamic:
                    params = {**_conv(0, 0, d, s, pad, bias, 0, act), **extra, 28: 1}
                    _dynamic(name, cases, params, nc(15, h), nc(k, outh // g, h), outh, bias)
                else:
                    size = outh // g * h // g * k * g
                    params = {**_conv(outh, k, d, s, pad, bias, size, act), **extra}
                    cases.append(GridCase(params, None, [nc(15, h)], tol=TOL))
    return _with_zero_size(name, cases)


@grid("DeconvolutionDepthWise3D")
def deconvolutiondepthwise3d(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_SHORT:
        for c, outch, bias, g, pads, sizes in DECONV_DW3D_ROWS:
            act = activation(case_rng(name, len(cases)), 5)
            size = outch // g * c // g * k ** 3 * g
            params = {**_conv(outch, k, d, s, _forced_pad(p, sizes), bias, size, act), 7: g,
                      **_deconv3d_extra(pads, sizes)}
            cases.append(GridCase(params, None, [nc(15, 11, 7, c)], tol=TOL))
    return _with_zero_size(name, cases)


def _pool(shape, ptype, kernel, stride, pad, glob, pad_mode, include_pad, adaptive, out_w) -> GridCase:
    params = {0: ptype, 1: kernel, 2: stride, 3: pad, 4: glob, 5: pad_mode, 6: include_pad, 7: adaptive, 8: out_w}
    return GridCase(params, [], [nc(*shape)])


def _pooling_cases(window, global_rows, plain_2x2, adaptive_rows, ignored_rows) -> list:
    """The five pooling sweeps; window(c) is the ncnn shape of the kernel-table sweeps."""
    cases = []
    for ptype, rows in ((0, POOL_MAX_ROWS), (1, POOL_AVG_ROWS)):
        for k, s, p in POOL_KSP:
            cases += [_pool(window(c), ptype, k, s, p, 0, mode, inc, 0, 0) for c, mode, inc in rows]
    cases += [_pool(shape, ptype, 1, 1, 0, 1, 0, 0, 0, 0) for shape, ptype in global_rows]
    cases += [_pool(shape, 0, 2, 2, pad, 0, 0, 0, 0, 0) for shape, pad in plain_2x2]
    for ptype in (1, 0):
        for shape, top in adaptive_rows:
            cases += [_pool(shape, ptype, 1, 1, 0, 0, 0, 0, 1, out_w) for out_w in range(1, top + 1)]
        for shape, out_ws in ignored_rows:
            cases += [_pool(shape, ptype, 1, 1, 0, 0, 0, 1, 0, out_w) for out_w in out_ws]
    return cases


@grid("Pooling1D")
def pooling1d(name: str) -> list:
    return _with_zero_size(name, _pooling_cases(lambda c: (9, c), POOL1D_GLOBAL, [((48, 4), 0), ((48, 15), 1)],
                                                POOL1D_ADAPTIVE, POOL1D_IGNORED_OUT_W))


@grid("Pooling3D")
def pooling3d(name: str) -> list:
    cases = _pooling_cases(lambda c: (9, 8, 7, c), POOL3D_GLOBAL, [((48, 48, 48, 4), 0), ((48, 48, 48, 15), 1)],
                           POOL3D_ADAPTIVE, POOL3D_IGNORED_OUT_W)
    return _with_zero_size(name, cases)


def _deformable(name, cases, w, h, c, outch, k, d, s, p, bias) -> None:
    extent = d * (k - 1) + 1
    out_w, out_h = (w + 2 * p - extent) // s + 1, (h + 2 * p - extent) // s + 1
    act = activation(case_rng(name, len(cases)), 7)
    params = _conv(outch, k, d, s, p, bias, outch * c * k * k, act)
    ins = [nc(w, h, c), nc(out_w, out_h, k * k * 2), nc(out_w, out_h, k * k)]
    cases.append(GridCase(params, None, ins, tol=TOL))


@grid("DeformableConv2D")
def deformableconv2d(name: str) -> list:
    cases = []
    for k, d, s, p in DEFORM_KDSP:
        for w, h, c, outch, bias in DEFORM_ROWS:
            _deformable(name, cases, w, h, c, outch, k, d, s, p, bias)
    for w, h, c, outch in DEFORM_WIDE:
        _deformable(name, cases, w, h, c, outch, 4, 2, 2, 2, 1)
    return _with_zero_size(name, cases)
