"""Reshaping and rearranging layers: Reshape (ncnn's tests/test_reshape.cpp, test_reshape_1.cpp and
the Reshape nets of test_mat_batch.cpp), Tile (test_tile.cpp), Flip (test_flip.cpp), Fold
(test_fold.cpp), Unfold (test_unfold.cpp), Reorg (test_reorg.cpp), CopyTo (test_copyto.cpp,
test_copyto_1.cpp), Diag (test_diag.cpp), CumulativeSum (test_cumulativesum.cpp), Einsum
(test_einsum.cpp), GLU (test_glu.cpp), Noop (test_noop.cpp), DeepCopy (test_deepcopy.cpp).

test_reshape_oom.cpp and test_tile_oom.cpp repeat shapes of the main grids under an allocator
that fails: they add no case here.
"""

from __future__ import annotations

import itertools

from .registry import GridCase, grid, nc

D = -233  # ncnn's "drop this dim"

# (input in ncnn's RandomMat order, [(w, h, d, c), ...]) of test_reshape.cpp
RESHAPE_ROWS = [
    ((3, 8, 5, 32), [(5, 8, 3, 32), (3, 8, 32, 5), (32, 5, 8, 3), (4, 3, 16, -1), (6, 16, -1, 2), (4, -1, 8, 8),
                     (-1, 16, 6, 2), (16, 6, D, -1), (8, -1, D, 8), (-1, 6, D, 16), (8, -1, D, D), (-1, 6, D, D),
                     (-1, D, D, D)]),
    ((4, 5, 12, 26), [(12, 5, 4, 26), (4, 26, 12, 5), (13, 5, 12, 8), (2, 10, 8, -1), (13, 4, -1, 10),
                      (13, -1, 12, 4), (-1, 26, 3, 16), (13, 4, D, -1), (26, -1, D, 12), (-1, 13, D, 16),
                      (12, -1, D, D), (-1, 24, D, D), (-1, D, D, D)]),
    ((6, 7, 32), [(6, 8, 4, 7), (2, 6, 7, 16), (7, 6, D, 32), (6, 32, D, 7), (32, 7, D, 6), (2, 6, D, -1),
                  (-1, 8, D, 2), (-1, 4, D, D), (8, -1, D, D), (32, 42, D, D), (-1, D, D, D)]),
    ((4, 14, 26), [(13, 4, 2, 14), (1, 13, 7, 16), (14, 8, D, 13), (4, 13, D, 28), (13, 14, D, 8), (2, 7, D, -1),
                   (-1, 13, D, 2), (-1, 4, D, D), (8, -1, D, D), (16, 91, D, D), (-1, D, D, D)]),
    ((14, 32), [(2, 7, 2, 16), (16, 1, 7, 4), (7, 2, D, 32), (4, 16, D, 7), (16, 14, D, 2), (2, 4, D, -1),
                (-1, 8, D, 2), (28, 16, D, D), (-1, 14, D, D), (16, -1, D, D), (-1, D, D, D)]),
    ((12, 28), [(4, 3, 2, 14), (1, 3, 14, 8), (7, 2, D, 24), (2, 24, D, 7), (12, 14, D, 2), (2, 4, D, -1),
                (-1, 4, D, 2), (21, 16, D, D), (-1, 14, D, D), (3, -1, D, D), (-1, D, D, D)]),
    ((240,), [(1, 1, 1, 240), (10, 1, 1, 24), (3, 5, D, 16), (3, 8, D, 10), (8, 5, D, 6), (2, 5, D, -1),
              (-1, 5, D, 4), (8, 30, D, D), (-1, 2, D, D), (24, -1, D, D), (-1, D, D, D)]),
    ((210,), [(1, 1, 210, 1), (5, 2, 7, 3), (3, 5, D, 14), (3, 14, D, 5), (14, 5, D, 3), (2, 5, D, -1),
              (-1, 5, D, 2), (6, 35, D, D), (-1, 7, D, D), (21, -1, D, D), (-1, D, D, D)]),
    ((72,), [(0, D, D, D)]),
    ((40, 72), [(0, -1, D, D), (-1, 0, D, D)]),
    ((34, 40, 72), [(4, 0, D, -1), (0, -1, D, 4), (-1, 4, D, 0), (0, 0, D, -1), (0, -1, D, 0), (-1, 0, D, 0)]),
    ((11, 34, 10, 72), [(0, 9, 16, -1), (9, 0, -1, 16), (16, -1, 0, 9), (22, 10, -1, 0), (0, 0, -1, 18),
                        (-1, 17, 0, 0), (22, 0, -1, 0), (0, 0, 0, -1), (0, 0, -1, 0), (0, -1, 0, 0), (-1, 0, 0, 0)]),
    ((1, 19, 15, 18), [(19, 15, D, 18)]),
]

# (inputs in RandomMat order, shape_expr) of test_reshape_1.cpp
RESHAPE_EXPRS = [
    ([(3, 2, 25, 32)], ["0w,0h,*(0d,2),-1", "-1,0w,5,4",
                        "-1,square(neg(abs(max(min(//(*(-(+(0w,1),-1),4),4),100),-4))))",
                        "-1,square(neg(abs(max(min(//(*(-(+(0w,1.0),-1.0),2.0),2.0),100.3),-2.2))))",
                        "-1,trunc(*(round(-(floor(+(ceil(*(0w,1.2)),0.7)),-0.4)),1.0001))",
                        "-1,ceil(sqrt(square(*(asinh(sinh(atanh(tanh(atan(tan(acos(cos(asin(sin(/(0w,2))))))))))),"
                        "16))))"]),
    ([(14, 15, 16), (28, 45, 48)], ["*(1w,0.5),/(1h,3),-(1c,32)", "*(0w,0h),-(-(1c,0c),16)"]),
    ([(14, 15, 16)], ["*(0w,0.5),/(0h,3),-1", "-1", "*(0w,0h),0c"]),
]

# test_mat_batch.cpp's Reshape nets over a batch (pd 12 input_batch_axis, 13 output_batch_axis,
# the `n` token). The grid feeds one item, a batch of one: ncnn answers only when built with
# NCNN_BATCH (the pip wheel may refuse), vkncnn keeps the item as its own batch.
RESHAPE_BATCH = [({0: -1, 12: 0, 13: 233}, nc(5, 3, 2)),
                 ({0: 5, 1: 3, 11: 2, 2: -1, 12: 0, 13: 233}, nc(5, 3, 2)),
                 ({0: 5, 1: 3, 11: 2, 2: -1, 12: -4, 13: 233}, nc(5, 3, 2)),
                 ({0: 5, 1: 3, 11: 2, 2: 3, 12: 0, 13: 233}, nc(5, 3, 2)),  # c=3 wants 3 items
                 ({0: 5, 1: 3, 11: 2, 2: 1, 12: 0, 13: 233}, nc(5, 3, 2)),  # the same for 1 item
                 ({6: '"0w,0h,0c,0n"', 12: 0, 13: 233}, nc(5, 3, 2))]


@grid("Reshape")
def reshape(name: str) -> list:
    cases = [GridCase({0: w, 1: h, 11: d, 2: c}, [], [nc(*mat)])
             for mat, targets in RESHAPE_ROWS for w, h, d, c in targets]
    cases += [GridCase({6: f'"{expr}"'}, [], [nc(*m) for m in mats])
              for mats, exprs in RESHAPE_EXPRS for expr in exprs]
    cases += [GridCase(params, [], [shape], edge=True) for params, shape in RESHAPE_BATCH]
    return cases


# (input in RandomMat order, [(axis, tiles) ...], [repeats ...]) of test_tile.cpp
TILE_ROWS = [
    ((5, 6, 7, 24), [(0, 3), (1, 4), (2, 5), (3, 2)], [[3], [2, 4], [2, 2, 5], [3, 1, 3, 2]]),
    ((7, 8, 9, 12), [(0, 3), (1, 4), (2, 1), (3, 2)], [[3, 1], [4, 1, 4], [2, 2, 2, 1], [3, 2, 1]]),
    ((3, 4, 5, 13), [(0, 3), (1, 4), (2, 5), (3, 2)], [[3], [1, 1, 4], [2, 2, 5], [3, 2, 1, 9]]),
    ((5, 7, 24), [(0, 5), (1, 4), (2, 4)], [[5], [1, 4], [2, 1, 4], [1, 2, 1, 4]]),
    ((7, 9, 12), [(0, 3), (1, 3), (2, 3)], [[3], [1, 3, 3], [2, 3], [2, 3, 3, 3]]),
    ((3, 5, 13), [(0, 1), (1, 2), (2, 2)], [[1], [2, 1], [2, 2, 2], [2, 1, 2, 1]]),
    ((15, 24), [(0, 2), (1, 1)], [[2], [1, 1], [4, 1, 1], [2, 4, 4, 1]]),
    ((17, 12), [(0, 3), (1, 4)], [[3], [2, 4], [2, 4, 3, 1], [1, 2, 1, 4]]),
    ((19, 13), [(0, 5), (1, 6)], [[5], [6, 1], [6, 1, 6], [3, 2, 1, 1]]),
    ((128,), [(0, 1), (0, 2)], [[10], [10, 1], [5, 2, 1], [2, 2, 2, 3]]),
    ((124,), [(0, 3)], [[2], [2, 2], [2, 2, 1], [4, 1, 2, 2]]),
    ((127,), [(0, 4)], [[3], [4, 3], [1], [1, 1], [1, 1, 1], [1, 3, 2, 2]]),
]


@grid("Tile")
def tile(name: str) -> list:
    cases = []
    for mat, axis_tiles, repeats in TILE_ROWS:
        cases += [GridCase({0: axis, 1: tiles}, [], [nc(*mat)]) for axis, tiles in axis_tiles]
        cases += [GridCase({2: r}, [], [nc(*mat)]) for r in repeats]
    return cases


FLIP_MATS = [(5, 6, 7, 24), (7, 8, 9, 12), (3, 4, 5, 13), (5, 7, 24), (7, 9, 12), (3, 5, 13),
             (15, 24), (17, 12), (19, 15), (128,), (124,), (127,)]


@grid("Flip")
def flip(name: str) -> list:
    """Every non-empty axes set of each rank; ncnn's test_flip_nd runs axes [0] once more first."""
    cases = []
    for mat in FLIP_MATS:
        rank = len(mat)
        sets = [list(s) for k in range(1, rank + 1) for s in itertools.combinations(range(rank), k)]
        cases += [GridCase({0: axes}, [], [nc(*mat)]) for axes in sets]
    return cases


@grid("Fold")
def fold(name: str) -> list:
    rows = [(400, 108, 22, 22, 3, 3, 1, 1, 1, 1, 0, 0), (190, 96, 18, 17, 4, 2, 1, 1, 1, 2, 2, 2),
            (120, 36, 11, 5, 3, 2, 2, 1, 1, 1, 4, 2)]
    return [GridCase({1: kw, 11: kh, 2: dw, 12: dh, 3: sw, 13: sh, 4: pw, 14: ph, 20: ow, 21: oh}, [], [nc(w, h)])
            for w, h, ow, oh, kw, kh, dw, dh, sw, sh, pw, ph in rows]


@grid("Unfold")
def unfold(name: str) -> list:
    # pad -233 / -234: SAME padding, the extra pixel after / before
    rows = [(32, 32, 11, 3, 3, 1, 1, 1, 1, 0, 0, 0.0), (32, 32, 12, 4, 2, 1, 1, 1, 2, 2, 2, -0.5),
            (32, 32, 16, 3, 2, 2, 1, 1, 1, 4, 2, 2.0), (32, 32, 11, 3, 3, 1, 1, 1, 1, -233, -233, -0.5),
            (32, 32, 12, 4, 2, 1, 1, 1, 2, -234, -234, 0.0), (32, 32, 16, 3, 2, 2, 1, 1, 1, -233, -233, 1.0)]
    return [GridCase({1: kw, 11: kh, 2: dw, 12: dh, 3: sw, 13: sh, 4: pw, 14: ph, 18: pad_value}, [], [nc(w, h, c)])
            for w, h, c, kw, kh, dw, dh, sw, sh, pw, ph, pad_value in rows]


@grid("Reorg")
def reorg(name: str) -> list:
    rows = [((6, 7, 1), 1), ((6, 6, 2), 2), ((6, 8, 3), 2), ((4, 4, 4), 4), ((8, 8, 8), 2), ((10, 10, 12), 2),
            ((9, 9, 4), 3), ((9, 9, 16), 3)]
    return [GridCase({0: stride, 1: mode}, [], [nc(*mat)]) for mode in (0, 1) for mat, stride in rows]


# (self mats, src mats, [(woffset, hoffset, doffset, coffset) ...], [(starts, axes) ...]) per rank,
# test_copyto.cpp and test_copyto_1.cpp
COPYTO_GROUPS = [
    ([(112,), (126,), (127,)], [(33,), (36,), (64,)],
     [(0, 0, 0, 0), (13, 0, 0, 0), (28, 0, 0, 0), (32, 0, 0, 0)],
     [([0], [0]), ([13], [-1]), ([28], [0]), ([32], [])]),
    ([(72, 112), (87, 126), (64, 127)], [(14, 33), (24, 36), (16, 64), (14,), (24,), (16,)],
     [(0, 0, 0, 0), (1, 13, 0, 0), (3, 28, 0, 0), (10, 32, 0, 0)],
     [([0, 0], [0, 1]), ([13, 1], [-2, -1]), ([28, 3], [0, 1]), ([32, 10], [0, 1])]),
    ([(32, 42, 81), (33, 57, 80), (36, 34, 88)],
     [(1, 14, 23), (12, 1, 28), (11, 8, 32), (1, 14), (12, 1), (11, 8), (1,), (12,), (11,)],
     [(0, 0, 0, 0), (0, 1, 0, 13), (4, 3, 0, 28), (5, 0, 0, 32)],
     [([0, 0, 0], [0, 1, 2]), ([13, 1, 0], [-3, -2, -1]), ([28, 3, 4], [0, 1, 2]), ([32, 0, 5], [0, 1, 2])]),
    ([(12, 42, 7, 81), (13, 57, 5, 80), (16, 34, 6, 88)],
     [(1, 14, 2, 23), (12, 1, 3, 28), (11, 8, 1, 32), (1, 14, 2), (12, 1, 3), (11, 8, 1), (1, 14), (12, 1),
      (11, 8), (1,), (12,), (11,)],
     [(0, 0, 0, 0), (0, 1, 1, 13), (4, 3, 0, 28), (5, 0, 2, 32)],
     [([0, 0, 0, 0], [0, 1, 2, 3]), ([13, 1, 1, 0], [-4, -3, 2, 3]), ([28, 0, 3, 4], [0, 1, 2, 3]),
      ([32, 2, 0, 5], [0, 1, 2, 3])]),
]
COPYTO_SAME = [(15,), (11, 15), (4, 5, 16), (3, 4, 5, 16)]


def _offsets(rank: int, params: dict) -> list:
    """Per numpy axis (outermost first), where the source lands in a self of this rank."""
    if 9 in params:
        off = [0] * rank
        for axis, start in zip(params.get(11, range(rank)), params[9]):
            off[axis % rank] = start
        return off
    return [params.get(k, 0) for k in (2, 13, 1, 0)[4 - rank:]] if rank > 1 else [params.get(0, 0)]


def _fits(self_shape: tuple, src_shape: tuple, params: dict) -> bool:
    src = (1,) * (len(self_shape) - len(src_shape)) + src_shape
    return all(o + n <= m for o, n, m in zip(_offsets(len(self_shape), params), src, self_shape))


def _copyto_params(starts: list, axes: list) -> dict:
    params = {9: starts}
    if axes:  # an empty axes array: ncnn's default, every axis in order
        params[11] = axes
    return params


@grid("CopyTo")
def copyto(name: str) -> list:
    """ncnn's 4-D grid also puts sources whose rows run past self's w (a w offset of 4 or 5
    into w 12, 13 or 16): ncnn's row copy then writes on into the next row, or the next
    channel, of its own memory layout. That is no answer to compare with: vkncnn refuses a
    source that does not fit, and those cases are left out here."""
    cases = []
    for selfs, srcs, offsets, starts_axes in COPYTO_GROUPS:
        for a, b in itertools.product(selfs, srcs):
            ins = [nc(*a), nc(*b)]
            params = [{0: w, 1: h, 13: d, 2: c} for w, h, d, c in offsets]
            params += [_copyto_params(s, ax) for s, ax in starts_axes]
            cases += [GridCase(p, [], ins) for p in params if _fits(ins[0], ins[1], p)]
    cases += [GridCase({0: 0, 1: 0, 13: 0, 2: 0}, [], [nc(*m), nc(*m)]) for m in COPYTO_SAME]
    return cases


@grid("Diag")
def diag(name: str) -> list:
    rows = [((5, 24), 3), ((7, 12), 0), ((6, 6), -4), ((3, 4), -6), ((5,), -1), ((7,), 0), ((3,), 2)]
    return [GridCase({0: k}, [], [nc(*mat)]) for mat, k in rows]


@grid("CumulativeSum")
def cumulativesum(name: str) -> list:
    rows = [((5, 4, 3, 6), a) for a in (0, 1, 2, 3, -4, -3, -2, -1)]
    rows += [((6,), 0), ((10,), 0), ((10,), -1), ((10,), -2), ((101,), 0)]
    rows += [((6, 8), 0), ((20, 103), 1), ((106, 50), -1), ((106, 50), -2)]
    rows += [((10, 6, 8), 0), ((303, 20, 103), 1), ((106, 50, 99), 2), ((303, 200, 103), -1),
             ((303, 200, 103), -2)]
    return [GridCase({0: axis}, [], [nc(*mat)]) for mat, axis in rows]


EINSUM_ROWS = [
    ([(32, 32)], "ii"),
    ([(27, 32)], "ij->i"), ([(27, 32)], "ji->i"),
    *[([(17, 14, 32)], eq) for eq in ("ijk->i", "jik->i", "jki->i", "ikj->ij", "kij->ij", "ijk->ij")],
    *[([(17, 14, 9, 32)], eq) for eq in ("jkli->i", "jkil->i", "jikl->i", "ijkl->i", "iklj->ij", "klij->ij",
                                         "kijl->ij", "ijkl->ij", "ijlk->ijk", "lijk->ijk", "ijkl->ijk")],
    ([(12, 28), (12,)], "ij,j->i"),
    ([(14,), (14, 7, 16)], "k,ijk->ij"),
    ([(27,), (32,)], "i,j->ij"),
    ([(7,), (2,), (11,), (16,)], "i,j,k,l->ijkl"),
    ([(5, 2, 3), (4, 5, 3)], "ijl,ilk->ijk"),
    ([(4, 5, 3), (5, 2, 3)], "ilk,ijl->ijk"),
    ([(15, 12), (24, 15, 13), (24, 12)], "ik,jkl,il->ij"),
    ([(7, 5, 3, 2), (5, 17, 3, 11)], "imnj,kmln->ijkl"),
]


@grid("Einsum")
def einsum(name: str) -> list:
    # the equation travels as an int array of its character codes
    return [GridCase({0: [ord(ch) for ch in eq]}, [], [nc(*m) for m in mats]) for mats, eq in EINSUM_ROWS]


@grid("GLU")
def glu(name: str) -> list:
    rows = [((5, 7, 3, 8), 0), ((5, 7, 6, 3), 1), ((5, 8, 3, 3), 2), ((10, 7, 3, 3), 3),
            ((5, 7, 3, 8), -4), ((5, 7, 6, 3), -3), ((5, 8, 3, 3), -2), ((10, 7, 3, 3), -1),
            ((6, 7, 24), 0), ((6, 8, 24), 1), ((6, 8, 24), 2), ((36, 7, 22), 0), ((5, 256, 23), -2),
            ((129, 9, 60), 2), ((129, 9, 30), -1),
            ((10, 24), 0), ((7, 24), 1), ((128, 22), 0), ((128, 256), 1),
            ((10,), 0), ((20,), 0), ((128,), 0)]
    return [GridCase({0: axis}, [], [nc(*mat)]) for mat, axis in rows]


# Noop and DeepCopy (tests/test_noop.cpp, tests/test_deepcopy.cpp): the input back, unchanged,
# at every rank
_COPY_MATS = [nc(5, 7, 3, 24), nc(7, 9, 5, 12), nc(3, 5, 4, 13), nc(5, 6, 7, 24), nc(7, 8, 9, 12),
              nc(3, 4, 5, 13), nc(5, 7, 24), nc(7, 9, 12), nc(3, 5, 13), nc(15, 24), nc(17, 12),
              nc(19, 15), nc(128), nc(124), nc(127)]


@grid("Noop", "DeepCopy")
def identity_copies(name: str) -> list:
    return [GridCase({}, [], [m]) for m in _COPY_MATS]
