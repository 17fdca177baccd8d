"""Winograd convolution F(m x m, 3 x 3) for 3x3, stride-1, dilation-1, one-group convolutions.

An m x m block of outputs needs an a x a input tile (a = m + 2). Winograd's minimal
filtering computes it as

    Y = A^T [ (G g G^T) * (B^T d B) ] A

where the product * is elementwise over the a x a "frequencies". Summed over input
channels, each frequency is an ordinary matrix product, so a whole layer becomes
a*a products of (outc x inc) @ (inc x tiles): a*a multiply-adds per tile and
channel pair instead of 9*m*m (F(4,3): 36 vs 144, F(6,3): 64 vs 324).

The weights are transformed once (`prepare_winograd_weight`, U = G g G^T as an
(a*a, outc, inc) stack; ConvKernel does it on first use of a tile size and keeps it).
Per forward, for each band of tile rows:
  gather the overlapping a x a tiles of the padded input (one strided copy),
  input transform   V = B^T d B, one axis at a time: two products with K = a,
  per-frequency     M = U @ V                     one batched matrix product,
  output transform  Y = A^T M A, one axis at a time: two products with K = a,
  store Y into the output planes (one strided copy per position in the m x m
  block, applying the activation: _store_blocks).
The transforms one axis at a time take 2*a**3 multiply-adds a tile and channel
instead of the a**4 of one product by the Kronecker matrix (F(4,3): 432 against
1296); on a quiet machine that made the transforms of large layers faster. The
second pass of each is a batched product (a calls) and pays more thread hand-offs, so
on a loaded machine (another process on a core) it measured slower per layer than the
Kronecker form; with the store of _store_blocks, whole models still got faster (figures:
docs/perf-notes.md, "CPU Winograd: transforms one axis at a time").
The bias is added to M at the frequency of the point 1, whose column of A^T is all
ones: it reaches every output of the tile at 1/(m*m) of the cost of adding it to Y.
With the activation applied in the scatter, neither costs a pass over Y, which made
the scatter stage and whole models faster (figures: docs/perf-notes.md, "CPU Winograd:
bias at the all-ones frequency, activation in the scatter").
Bands keep these arrays in cache; BLAS threads the products (the copies stay on one
thread: see winograd_conv3x3 for why no thread takes whole bands). The transform
matrices come from the Toom-Cook
construction on the usual interpolation points (0, +-1, +-2, +-1/2 and infinity);
the larger m, the fewer multiplies but the larger the rounding error: F(4,3) is
about 1e-5 relative in float32, F(6,3) about 2e-5 (direct: 5e-7).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .activation import copy_into
from .blas import BlasThreads
from .conv import place_in_border

POINTS = {2: (0, 1, -1), 4: (0, 1, -1, 2, -2), 6: (0, 1, -1, 2, -2, 0.5, -0.5)}
# flattened index (i*a + j) of the frequency at the point 1 in both directions: A^T's
# column there is 1^k = 1 for every output k
ONES_FREQUENCY = {m: POINTS[m].index(1) * (m + 3) for m in POINTS}

# floats of transformed input held per band (a*a*inc*tiles): ~4 MiB, in L2/L3 (the
# time barely moved over a wide range of sizes: docs/perf-notes.md, "CPU Winograd: band
# size")
BAND_FLOATS = 1 << 20

# tile rows at least this long are stored one (i, j) output position at a time
# (_store_blocks)
STORE_ROWS_MIN_TW = 14


@cache
def toom_cook(m: int, r: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A^T, G, B^T) in float64 for F(m, r), from the finite points POINTS[m] and infinity.

    A^T evaluates the product polynomial at the points, G evaluates the filter there
    (scaled by the Lagrange denominators); B^T is then the one matrix that makes
    A^T [(G g) * (B^T d)] the correlation of d with g, solved as a linear system.
    """
    a = m + r - 1
    p = np.asarray(POINTS[m], np.float64)
    at = np.zeros((m, a))
    at[:, :a - 1] = p[None, :] ** np.arange(m)[:, None]
    at[m - 1, a - 1] = 1.0
    g = np.zeros((a, r))
    for j in range(a - 1):
        denominator = np.prod([p[j] - p[k] for k in range(a - 1) if k != j])
        g[j] = p[j] ** np.arange(r) / denominator
    g[a - 1, r - 1] = 1.0
    # sum_j at[i, j] g[j, k] bt[j, n] = [n == i + k] for every output i, tap k, input n
    coef = np.einsum("ij,jk,nl->iknjl", at, g, np.eye(a)).reshape(m * r * a, a * a)
    rhs = np.zeros((m, r, a))
    for i in range(m):
        for k in range(r):
            rhs[i, k, i + k] = 1.0
    bt = np.linalg.lstsq(coef, rhs.ravel(), rcond=None)[0].reshape(a, a)
    return at, g, bt


@cache
def _tile_transforms(m: int) -> tuple[np.ndarray, np.ndarray]:
    """(B^T: a x a, A^T: m x a) in float32, each applied once along each tile axis."""
    at, _, bt = toom_cook(m)
    return np.asarray(bt, np.float32), np.asarray(at, np.float32)


def prepare_winograd_weight(weight: np.ndarray, m: int) -> np.ndarray:
    """(outc, inc, 3, 3) weights -> U = G g G^T as (a*a, outc, inc) float32."""
    _, g, _ = toom_cook(m)
    a = m + 2
    outc, inc = weight.shape[:2]
    # two products with K = 3 over all kernels at once, in float64
    t = weight.astype(np.float64).reshape(outc * inc * 3, 3) @ g.T                # [(o, c, k), b]
    t = t.reshape(outc * inc, 3, a).transpose(1, 0, 2).reshape(3, outc * inc * a)  # [k, (o, c, b)]
    u = (g @ t).reshape(a, outc * inc, a).transpose(0, 2, 1)                     # [a, b, (o, c)]
    return np.ascontiguousarray(u.reshape(a * a, outc, inc), np.float32)


def winograd_conv3x3(x: np.ndarray, u: np.ndarray, m: int, pads: tuple[int, int, int, int],
                     pad_value: float = 0.0, bias: np.ndarray | None = None,
                     store: Callable[[np.ndarray, np.ndarray], None] = copy_into,
                     threads: int = 1) -> np.ndarray:
    """3x3 stride-1 convolution of an unpadded (inc, h, w) float32 input.

    u: prepare_winograd_weight's (a*a, outc, inc); pads (top, bottom, left, right),
    non-negative. `store(src, out)` writes the activation of src into out
    (activation.activation_into). `threads`: how many threads may work
    (opt.num_threads). Returns a new (outc, oh, ow) float32 array.
    """
    a = m + 2
    inc, h, w = x.shape
    outc = u.shape[1]
    top, bottom, left, right = pads
    oh, ow = h + top + bottom - 2, w + left + right - 2
    th, tw = -(-oh // m), -(-ow // m)
    # the tiles cover th*m x tw*m outputs; the rows/columns past the real ones read
    # pad_value too, and their outputs are dropped
    xp = place_in_border(x, top, th * m + 2 - top - h, left, tw * m + 2 - left - w, pad_value)
    out = np.empty((outc, oh, ow), np.float32)
    exact = oh == th * m and ow == tw * m   # tiles cover the output exactly: scatter into it
    full = out.reshape(outc, th, m, tw, m) if exact else np.empty((outc, th, m, tw, m), np.float32)

    # The products are threaded by BLAS; the copies and transforms between them stay on
    # one thread. Threads taking whole bands instead (BLAS single-threaded in each) won
    # for few channels with BLAS threads used only from 30M multiply-adds; from 2M
    # (blas.py) whole models are faster without them (figures: docs/perf-notes.md, "CPU
    # Winograd: products threaded by BLAS, no band threads").
    band = max(1, min(th, BAND_FLOATS // (a * a * max(inc, outc) * tw)))
    with BlasThreads(a * a * inc * outc * band * tw, threads):
        _compute_bands(xp, u, m, band, tw, th, full, bias, store)
    if not exact:
        np.copyto(out, full.reshape(outc, th * m, tw * m)[:, :oh, :ow])
    return out


def _compute_bands(xp, u, m, band, tw, th, full, bias, store) -> None:
    """All tile rows, `band` at a time, into `full` (outc, th, m, tw, m), through one set
    of scratch buffers."""
    a = m + 2
    inc = xp.shape[0]
    outc = u.shape[1]
    bt, at = _tile_transforms(m)
    bias_column = None if bias is None else bias[:, None]
    sc, sy, sx = xp.strides
    # flat scratch buffers, viewed per band at its size (the last band may be shorter)
    gathered = np.empty(a * a * max(inc, outc) * band * tw, np.float32)
    half = np.empty_like(gathered)
    products = np.empty(a * a * outc * band * tw, np.float32)

    for t0 in range(0, th, band):
        nb = min(band, th - t0)
        n = nb * tw
        # tile (ty, tx) of channel c, element (i, j) = xp[c, (t0+ty)*m + i, tx*m + j]
        tiles_view = as_strided(xp[:, t0 * m:], (a, a, inc, nb, tw), (sy, sx, sc, m * sy, m * sx))
        d = gathered[:a * a * inc * n].reshape(a, a, inc * n)
        np.copyto(d.reshape(a, a, inc, nb, tw), tiles_view)
        # B^T d B, one axis at a time: h = B^T along i, then v = B^T along j
        h = half[:a * a * inc * n].reshape(a, a, inc * n)
        np.matmul(bt, d.reshape(a, a * inc * n), out=h.reshape(a, a * inc * n))
        v = d
        np.matmul(bt, h, out=v)
        p = products[:a * a * outc * n].reshape(a * a, outc, n)
        np.matmul(u, v.reshape(a * a, inc, n), out=p)
        if bias_column is not None:  # at the point 1 in both directions: see the module doc
            np.add(p[ONES_FREQUENCY[m]], bias_column, out=p[ONES_FREQUENCY[m]])
        # A^T p A, one axis at a time
        z = gathered[:m * a * outc * n].reshape(m, a * outc * n)
        np.matmul(at, p.reshape(a, a * outc * n), out=z)
        y = half[:m * m * outc * n].reshape(m, m, outc * n)
        np.matmul(at, z.reshape(m, a, outc * n), out=y)
        # y[i, j, o, ty, tx] is output (o, (t0+ty)*m + i, tx*m + j)
        _store_blocks(y.reshape(m, m, outc, nb, tw), full[:, t0:t0 + nb], store)


def _store_blocks(y: np.ndarray, dest: np.ndarray, store) -> None:
    """y (m, m, outc, nb, tw) into dest (outc, nb, m, tw, m): element (i, j, o, ty, tx)
    to (o, ty, i, tx, j), through `store`.

    One strided copy would have numpy walk the destination in memory order, j innermost,
    reading y a whole (i, j) plane apart per element; one call per (i, j) keeps the inner loop on a
    contiguous row of tw tiles instead, which made the store of large layers faster; rows
    shorter than STORE_ROWS_MIN_TW tiles lose to the call overhead, so those keep the
    single copy (figures: docs/perf-notes.md, "CPU Winograd: the store one block position
    at a time").
    """
    m, tw = y.shape[0], y.shape[-1]
    if tw < STORE_ROWS_MIN_TW:
        store(y.transpose(2, 3, 0, 4, 1), dest)
        return
    for i in range(m):
        for j in range(m):
            store(y[i, j], dest[:, :, i, :, j])
