"""The fp32 convolution behind the Convolution layers' numpy path, picked per layer shape.

`ConvKernel` holds the weights in every layout it may need, prepared once, and runs
one of three algorithms:

- depthwise (one input channel per group): one np.einsum over channels-last rows,
  cpu_fallback/depthwise.py;
- Winograd F(m, 3) for 3x3 stride-1 convolutions with enough channels that the
  per-frequency matrix products dominate the tile transforms, cpu_fallback/winograd.py
  (transformed weights are made on first use of each tile size m and kept);
- otherwise im2col + one matrix product (a 1x1 stride-1 convolution is the product
  alone; a strided kernel of 7x7 and more gathers its columns by the stride's phases,
  conv.im2col_phases; a stride-1 kernel on small planes in two copies of longer rows,
  conv.im2col_rows), written straight into the output buffer, with bias and the activation
  applied in place. A channels-last input (a depthwise result) needs no copy: BLAS
  reads the transposed operand directly; a channels-last output (for a depthwise
  consumer, vkncnn/channels_last.py) is the same product with operands transposed.
  A padded 1x1 convolution multiplies the unpadded input and fills the border.

Bias and activation are always fused: no extra temporaries per layer.
"""

from __future__ import annotations

import numpy as np

from . import conv
from .activation import activation_into, inplace_activation
from .blas import BlasThreads
from .depthwise import depthwise_conv2d
from .winograd import prepare_winograd_weight, winograd_conv3x3

# widest output for conv.im2col_rows (two copies of longer rows) over conv.im2col: it
# won on outputs up to 28 columns wide and lost from 56 (figures: docs/perf-notes.md,
# "im2col in two copies of longer rows on small planes")
IM2COL_ROWS_MAX_W = 32

# bias rows of this many floats at most (_add_bias_rows): numpy's add got faster with
# longer rows up to about this length and no faster past it (figures: docs/perf-notes.md,
# "Bias added through rows of several pixels")
BIAS_ROW_FLOATS = 1 << 14


class ConvKernel:
    def __init__(self, weight_mat: np.ndarray, kernel_hw, stride_hw, dilation_hw,
                 bias: np.ndarray | None, activation_type: int, activation_params) -> None:
        """weight_mat: conv.prepare_conv_weight's (groups, outc_g, inc_g*kh*kw) float32."""
        self.weight = weight_mat
        self.groups, self.outc_g, k_g = weight_mat.shape
        self.kernel_hw = tuple(kernel_hw)
        self.stride_hw = tuple(stride_hw)
        self.dilation_hw = tuple(dilation_hw)
        kh, kw = self.kernel_hw
        self.inc_g = k_g // (kh * kw)
        self.outc = self.groups * self.outc_g
        self.bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
        self.activation = inplace_activation(activation_type, activation_params)
        self.store_activated = activation_into(activation_type, activation_params)  # Winograd's scatter
        # depthwise: (taps, outc) weights, one row per kernel tap
        self.taps = (np.ascontiguousarray(weight_mat.reshape(self.outc, kh * kw).T)
                     if self.inc_g == 1 else None)
        self.winograd_able = (self.kernel_hw == (3, 3) and self.stride_hw == (1, 1)
                              and self.dilation_hw == (1, 1) and self.groups == 1)
        self._winograd_weights: dict[int, np.ndarray] = {}
        self._depthwise_tiles: dict = {}  # depthwise weight rows per output width
        self._bias_rows: dict[int, np.ndarray] = {}  # bias repeated along output rows, per pixel count
        self.bias_source = bias  # what the owning layer passed, to notice a replacement

    def __call__(self, x: np.ndarray, pads: tuple[int, int, int, int], pad_value: float = 0.0,
                 threads: int = 1, channels_last: bool = False) -> np.ndarray:
        """Convolve an unpadded (inc, h, w) float32 input (any strides); pads (top, bottom,
        left, right), negative ones crop (conv.conv_padding's result). `threads`:
        opt.num_threads, the most BLAS threads the layer may use.
        `channels_last`: give the im2col + GEMM result channels-last in memory (a
        transposed view), for a depthwise consumer; depthwise results always are."""
        x, pads = crop_negative_pads(x, pads)
        kh, kw = self.kernel_hw
        if self.taps is not None:
            if self.outc_g > 1:  # channel multiplier: each input channel feeds outc_g outputs
                x = np.repeat(x, self.outc_g, axis=0)
            return depthwise_conv2d(x, self.taps, self.kernel_hw, self.stride_hw, self.dilation_hw, pads,
                                    pad_value, self.bias, self.activation, self._depthwise_tiles)
        top, bottom, left, right = pads
        c, h, w = x.shape
        oh = (h + top + bottom - conv.kernel_extent(kh, self.dilation_hw[0])) // self.stride_hw[0] + 1
        ow = (w + left + right - conv.kernel_extent(kw, self.dilation_hw[1])) // self.stride_hw[1] + 1
        if self.winograd_able:
            m = winograd_tile(c, self.outc, oh, ow)
            if m:
                return winograd_conv3x3(x, self._winograd_weight(m), m, pads, pad_value, self.bias,
                                        self.store_activated, threads)
        pointwise_padded = kh == kw == 1 and self.stride_hw == (1, 1) and self.groups == 1 and any(pads)
        with BlasThreads(self.outc * self.inc_g * kh * kw * oh * ow, threads):
            if pointwise_padded:
                return self._pointwise_padded(x, pads, pad_value)
            return self._im2col_gemm(x, pads, pad_value, oh, ow, channels_last)

    def column_count(self, c: int, oh: int, ow: int) -> int:
        """Values of the im2col matrix __call__ builds for this geometry (0 on the depthwise,
        Winograd and 1x1 paths, which build none): a caller checks it before the call."""
        kh, kw = self.kernel_hw
        if self.taps is not None or kh * kw == 1:
            return 0
        if self.winograd_able and winograd_tile(c, self.outc, oh, ow):
            return 0
        return c * kh * kw * oh * ow

    def _winograd_weight(self, m: int) -> np.ndarray:
        u = self._winograd_weights.get(m)
        if u is None:
            kh, kw = self.kernel_hw
            u = prepare_winograd_weight(self.weight[0].reshape(self.outc, self.inc_g, kh, kw), m)
            self._winograd_weights[m] = u
        return u

    def _im2col_gemm(self, x: np.ndarray, pads, pad_value: float, oh: int, ow: int,
                     channels_last: bool) -> np.ndarray:
        kh, kw = self.kernel_hw
        sh, sw = self.stride_hw
        if any(pads):
            x = conv.place_in_border(x, *pads, pad_value)
        c = x.shape[0]
        if kh == kw == 1:
            planes = x if sh == sw == 1 else x[:, ::sh, ::sw]
            # a view whenever the planes are (channels-last included), a copy otherwise
            cols = planes[:, :oh, :ow].reshape(c, oh * ow)
        elif kh * kw >= 49 and (sh, sw) != (1, 1) and self.dilation_hw == (1, 1):
            cols = conv.im2col_phases(x, self.kernel_hw, self.stride_hw, (oh, ow))
        elif (sh, sw) == (1, 1) and ow <= IM2COL_ROWS_MAX_W:
            cols = conv.im2col_rows(x, self.kernel_hw, self.dilation_hw, (oh, ow))
        else:
            cols = conv.im2col(x, self.kernel_hw, self.stride_hw, self.dilation_hw, (oh, ow))
        if channels_last and self.groups == 1:
            return self._product_channels_last(cols, oh, ow)
        out = self._product(cols, oh * ow)
        if self.bias is not None:
            np.add(out, self.bias[:, None], out=out)
        if self.activation is not None:
            self.activation(out)
        return out.reshape(self.outc, oh, ow)

    def _pointwise_padded(self, x: np.ndarray, pads, pad_value: float) -> np.ndarray:
        """A padded 1x1 convolution: border outputs see pad_value alone, one value per
        channel, so the product runs on the unpadded input only and the border is
        filled: fewer multiply-adds, and faster (SqueezeNet's conv10, 14x14 padded to
        16x16; figures: docs/perf-notes.md, "Padded 1x1 convolution on the unpadded
        input")."""
        top, bottom, left, right = pads
        c, h, w = x.shape
        inner = self._im2col_gemm(x, (0, 0, 0, 0), pad_value, h, w, channels_last=False)
        edge = self.weight[0].sum(axis=1, dtype=np.float32) * np.float32(pad_value)
        if self.bias is not None:
            edge += self.bias
        if self.activation is not None:
            self.activation(edge)
        return conv.place_in_border(inner, top, bottom, left, right, edge[:, None, None])

    def _product(self, cols: np.ndarray, n: int) -> np.ndarray:
        """weights @ cols, one matrix per group: (outc, n)."""
        out = np.empty((self.outc, n), np.float32)
        if self.groups == 1:
            np.matmul(self.weight[0], cols, out=out)
        else:
            k_g = cols.shape[0] // self.groups
            np.matmul(self.weight, cols.reshape(self.groups, k_g, n), out=out.reshape(self.groups, self.outc_g, n))
        return out

    def _product_channels_last(self, cols: np.ndarray, oh: int, ow: int) -> np.ndarray:
        """(cols^T @ weights^T) as (outc, oh, ow) with channels-last memory: the same BLAS
        product with its operands transposed (free), bias and activation applied."""
        out = np.empty((oh * ow, self.outc), np.float32)
        np.matmul(cols.T, self.weight[0].T, out=out)
        if self.bias is not None:
            self._add_bias_rows(out)
        if self.activation is not None:
            self.activation(out)
        return out.reshape(oh, ow, self.outc).transpose(2, 0, 1)

    def _add_bias_rows(self, out: np.ndarray) -> None:
        """out (n, outc) += bias, through rows of several pixels.

        Broadcasting the bias over (n, outc) makes numpy's inner loop one pixel (outc
        floats) long; the bias repeated r times (r | n, r*outc <= BIAS_ROW_FLOATS) makes
        it long enough for its SIMD loop. That made the bias add alone several times faster
        on narrow outputs and the channels-last convolutions of the MobileNets and
        ShuffleNetV2 faster as a whole (figures: docs/perf-notes.md, "Bias added through
        rows of several pixels").
        """
        n = out.shape[0]
        row = self._bias_rows.get(n)
        if row is None:
            row = np.tile(self.bias, _divisor_at_most(n, BIAS_ROW_FLOATS // self.outc))
            self._bias_rows[n] = row
        rows = out.reshape(-1, row.size)
        np.add(rows, row, out=rows)


def _divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of n that is <= limit (at least 1)."""
    return max((d for d in range(1, min(n, max(limit, 1)) + 1) if n % d == 0), default=1)


def winograd_tile(inc: int, outc: int, oh: int, ow: int) -> int:
    """The Winograd output tile m to use, 0 for im2col + GEMM.

    Winograd saves multiply-adds in the per-frequency products (work ~ inc*outc per
    tile) but pays for the tile transforms and gathers (~ inc + outc per tile), so it
    needs many channels. Larger tiles save more but waste more on small planes
    (partial tiles) and make each of the a*a products thinner. On the benchmark models'
    layers F(4,3) won from 28x28 with at least 32 channels, F(2,3) at 14x14 only with
    many input channels (fewer: GEMM wins), and at 7x7 Winograd lost (figures:
    docs/perf-notes.md, "CPU Winograd: which tile, if any"). F(6,3) beat F(4,3) on single
    large layers but not in whole models, and it rounds twice as much (2e-5 relative in
    float32 against 1e-5), so it is not picked.
    """
    if min(inc, outc) < 32 or min(oh, ow) < 14:
        return 0
    if min(oh, ow) >= 28:
        return 4
    return 2 if inc >= 144 else 0


def crop_negative_pads(x: np.ndarray, pads):
    """Apply the negative pads (ncnn's SAME quirk crops) to x; return x and the pads left."""
    if min(pads) >= 0:
        return x, tuple(pads)
    top, bottom, left, right = pads
    h, w = x.shape[-2:]
    x = x[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    return x, tuple(max(v, 0) for v in pads)
