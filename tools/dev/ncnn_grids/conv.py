"""Convolution, ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise: ncnn's fp32 grids
(tests/test_convolution.cpp, _3 dynamic; test_convolutiondepthwise.cpp, _1 dynamic;
test_deconvolution.cpp; test_deconvolutiondepthwise.cpp, _1 dynamic). Int8 grids left out."""

from __future__ import annotations

from .registry import GridCase, activation, case_rng, grid, nc

# (kernel, dilation, stride, pad) rows the conv tests loop over
KDSP_CONV = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1), (3, 2, 1, 1),
             (4, 1, 1, 2), (4, 1, 2, -233), (4, 2, 1, -234), (5, 1, 1, -234), (5, 1, 2, 2), (5, 2, 2, 2),
             (7, 1, 1, 3), (7, 1, 2, 3), (7, 2, 1, -233)]
KDSP_DECONV = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1), (3, 2, 1, 1),
               (4, 1, 1, -233), (4, 1, 2, -234), (4, 2, 1, -234), (5, 1, 1, 2), (5, 1, 2, 2), (5, 2, 2, 2),
               (7, 1, 1, 3), (7, 1, 2, 3), (7, 2, 1, -233)]
KDSP_DYNAMIC = [(1, 1, 1, 0), (1, 1, 2, 0), (2, 1, 1, 1), (2, 1, 2, -233), (3, 1, 1, 1), (3, 1, 2, 1), (3, 2, 1, -234)]

CONV_SIZES = [(9, 7), (18, 17), (25, 33)]
CONV_CHANNELS = [(1, 1, 1), (4, 13, 0), (13, 4, 1), (12, 12, 0), (8, 12, 1), (8, 13, 0), (13, 24, 1), (12, 16, 0),
                 (15, 15, 0), (16, 16, 0)]  # (c, outch, bias)
DYN_CHANNELS = [(1, 1, 1), (4, 13, 0), (13, 4, 1), (12, 12, 0), (8, 12, 1), (8, 13, 0), (13, 8, 1), (12, 16, 0),
                (15, 15, 0), (16, 16, 0)]
DW_CHANNELS = [(1, 1, 1, 1), (2, 2, 0, 1), (2, 2, 1, 2), (3, 3, 0, 3), (4, 2, 1, 2), (4, 4, 0, 4), (7, 7, 1, 7),
               (8, 8, 0, 2), (8, 8, 1, 8), (12, 12, 0, 4), (15, 15, 1, 15), (16, 8, 0, 2), (16, 16, 1, 16)]
# (w, h, c, outch, bias, output_pad_right, output_pad_bottom, output_w, output_h)
DECONV_ROWS = [(9, 7, 1, 1, 1, 0, 0, 0, 0), (9, 7, 4, 13, 0, 1, 1, 7, 5), (9, 7, 13, 4, 1, 1, 0, 0, 0),
               (9, 7, 4, 8, 0, 0, 1, 0, 0), (9, 7, 8, 4, 1, 0, 0, 7, 5), (7, 7, 12, 12, 1, 0, 1, 0, 0),
               (4, 5, 12, 11, 0, 0, 1, 1, 0), (9, 7, 8, 13, 0, 2, 2, 0, 0), (9, 7, 13, 8, 1, 2, 0, 0, 0),
               (9, 7, 16, 16, 0, 0, 2, 7, 5)]
# single calls after the loops: (w, h, c, outch, kernel, dilation, stride, pad, bias, opr, opb, ow, oh)
DECONV_TIERS = [(5, 4, 7, 3, 1, 1, 1, 0, 0), (6, 7, 2, 3, 2, 1, 1, 1, 1), (5, 3, 1, 3, 1, 1, 1, 0, 0),
                (8, 6, 8, 2, 3, 2, 1, 1, 1), (8, 4, 8, 15, 1, 1, 2, 0, 0, 0, 1), (4, 5, 1, 8, 3, 1, 1, 1, 0),
                (5, 4, 2, 7, 1, 1, 1, 0, 1), (5, 4, 2, 8, 3, 1, 1, 1, 0), (4, 5, 2, 1, 3, 1, 1, 1, 0),
                (5, 4, 1, 5, 1, 1, 1, 0, 0), (3, 3, 14, 2, 3, 1, 1, 1, 1), (3, 3, 14, 1, 3, 1, 1, 1, 0),
                (5, 4, 1, 16, 1, 1, 1, 0, 0), (5, 4, 2, 16, 3, 1, 1, 1, 0), (5, 4, 8, 16, 3, 1, 2, 1, 1),
                (4, 3, 5, 16, 1, 1, 1, 0, 0), (5, 4, 24, 8, 3, 1, 1, 1, 1), (5, 4, 20, 8, 3, 1, 1, 1, 0),
                (4, 5, 17, 8, 1, 1, 1, 0, 1), (5, 4, 7, 5, 3, 1, 1, 1, 0), (4, 3, 24, 5, 3, 1, 1, 1, 0),
                (5, 4, 20, 5, 3, 1, 1, 1, 0), (4, 3, 17, 5, 3, 1, 1, 1, 0), (4, 3, 24, 2, 3, 1, 1, 1, 1),
                (5, 4, 17, 2, 3, 1, 1, 1, 0), (5, 4, 20, 2, 3, 1, 2, 1, 0), (4, 3, 7, 1, 3, 1, 1, 1, 0),
                (5, 4, 16, 1, 1, 1, 1, 0, 0), (4, 3, 24, 1, 3, 1, 1, 1, 1), (5, 4, 20, 1, 1, 1, 1, 0, 0),
                (4, 3, 17, 1, 3, 1, 1, 1, 1)]
DECONV_WIDE = [(7, 5, 24, 32), (7, 5, 32, 24), (7, 5, 28, 32), (7, 5, 32, 28), (7, 5, 26, 32), (7, 5, 32, 26)]
# DeconvolutionDepthWise rows: (c, outch, bias, group, opr, opb, ow, oh), input 15 x 7
DECONV_DW_ROWS = [(1, 1, 1, 1, 0, 0, 0, 0), (2, 2, 0, 1, 1, 1, 7, 5), (2, 2, 1, 2, 1, 0, 0, 0),
                  (3, 3, 0, 3, 0, 1, 0, 0), (4, 2, 1, 2, 0, 0, 7, 5), (4, 4, 0, 4, 2, 2, 0, 0),
                  (7, 7, 1, 7, 2, 0, 0, 0),
                  (8, 8, 0, 2, 0, 2, 7, 5), (8, 8, 1, 8, 0, 0, 0, 0), (12, 12, 0, 4, 3, 3, 0, 0),
                  (15, 15, 1, 15, 3, 0, 7, 5), (16, 8, 0, 2, 0, 3, 0, 0), (16, 16, 1, 16, 0, 0, 0, 0)]


def _conv_params(outch, kernel, dilation, stride, pad, bias, weight_size, rng, n_act=7, group=None) -> dict:
    p = {0: outch, 1: kernel, 2: dilation, 3: stride, 4: pad, 5: bias, 6: weight_size, **activation(rng, n_act)}
    if group is not None:
        p[7] = group
    return p


def _deconv_extra(opr, opb, ow, oh, pad) -> tuple:
    """ncnn's deconv tests force pad -233 whenever an output size is given."""
    if ow > 0 and oh > 0 and pad not in (-233, -234):
        pad = -233
    return {18: opr, 19: opb, 20: ow, 21: oh}, pad


@grid("Convolution")
def convolution(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_CONV[:12]:  # the test loops over the first 12 rows only
        for w, h in CONV_SIZES:
            for c, outch, bias in CONV_CHANNELS:
                rng = case_rng(name, len(cases))
                cases.append(GridCase(_conv_params(outch, k, d, s, p, bias, outch * c * k * k, rng), None,
                                      [nc(w, h, c)], tol=1e-3))
    for k, d, s, p in KDSP_DYNAMIC:  # dynamic weights: weight (and bias) blobs as inputs, num_output 0
        for c, outch, bias in DYN_CHANNELS:
            rng = case_rng(name, len(cases))
            params = {**_conv_params(0, 0, d, s, p, bias, 0, rng), 19: 1}
            ins = [nc(11, 10, c), nc(k, k, c, outch)] + ([(outch,)] if bias else [])
            cases.append(GridCase(params, [], ins, tol=1e-3, edge=True))
    return cases


@grid("ConvolutionDepthWise")
def convolution_depthwise(name: str) -> list:
    cases = []
    for k, d, s, p in KDSP_CONV:
        for w, h in [(15, 7), (18, 17), (25, 33)]:
            for c, outch, bias, g in DW_CHANNELS:
                rng = case_rng(name, len(cases))
                size = outch // g * c // g * k * k * g
                cases.append(GridCase(_conv_params(outch, k, d, s, p, bias, size, rng, group=g), None,
                                      [nc(w, h, c)], tol=1e-3))
    for k, d, s, p in KDSP_DYNAMIC:
        for c, outch, bias, g in DW_CHANNELS:
            rng = case_rng(name, len(cases))
            params = {**_conv_params(0, 0, d, s, p, bias, 0, rng, group=g), 19: 1}
            ins = [nc(11, 10, c), nc(k, k, c // g, outch)] + ([(outch,)] if bias else [])
            cases.append(GridCase(params, [], ins, tol=1e-3, edge=True))
    return cases


@grid("Deconvolution")
def deconvolution(name: str) -> list:
    cases = []

    def add(w, h, c, outch, k, d, s, p, bias, opr=0, opb=0, ow=0, oh=0, dynamic=False):
        rng = case_rng(name, len(cases))
        extra, p = _deconv_extra(opr, opb, ow, oh, p)
        if dynamic:
            params = {**_conv_params(0, 0, d, s, p, bias, 0, rng), **extra, 28: 1}
            ins = [nc(w, h, c), nc(k, k, outch, c)] + ([(outch,)] if bias else [])
            cases.append(GridCase(params, [], ins, tol=1e-3, edge=True))
        else:
            params = {**_conv_params(outch, k, d, s, p, bias, outch * c * k * k, rng, n_act=5), **extra}
            cases.append(GridCase(params, None, [nc(w, h, c)], tol=1e-3))

    for dynamic, table in ((False, KDSP_DECONV), (True, KDSP_DYNAMIC)):
        for k, d, s, p in table:
            for w, h, c, outch, bias, opr, opb, ow, oh in DECONV_ROWS:
                add(w, h, c, outch, k, d, s, p, bias, opr, opb, ow, oh, dynamic=dynamic)
        for row in DECONV_TIERS:
            add(*row, dynamic=dynamic)
        if not dynamic:
            for w, h, c, outch in DECONV_WIDE:
                add(w, h, c, outch, 4, 2, 2, 2, 1)
    return cases


@grid("DeconvolutionDepthWise")
def deconvolution_depthwise(name: str) -> list:
    cases = []
    for dynamic in (False, True):
        for k, d, s, p in KDSP_DECONV:
            for c, outch, bias, g, opr, opb, ow, oh in DECONV_DW_ROWS:
                rng = case_rng(name, len(cases))
                extra, pad = _deconv_extra(opr, opb, ow, oh, p)
                if dynamic:
                    params = {**_conv_params(0, 0, d, s, pad, bias, 0, rng, n_act=5, group=g), **extra, 28: 1}
                    ins = [nc(15, 7, c), nc(k, k, outch // g, c)] + ([(outch,)] if bias else [])
                    cases.append(GridCase(params, [], ins, tol=1e-3, edge=True))
                else:
                    size = outch // g * c // g * k * k * g
                    params = {**_conv_params(outch, k, d, s, pad, bias, size, rng, n_act=5, group=g), **extra}
                    cases.append(GridCase(params, None, [nc(15, 7, c)], tol=1e-3))
    return cases
