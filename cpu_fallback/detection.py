"""Detection heads as numpy kernels: SSD prior boxes, box decoding, YOLO region decoding,
and the score sort + greedy NMS that ncnn runs after them.

Everything is float32 and follows ncnn's operation order, so boxes agree to the last
bit or two. Decoding is vectorised over all anchors at once; only the two steps that
are sequential by nature loop in Python: ncnn's quicksort (replayed only when scores
tie, because then its partition order decides who comes first) and greedy NMS (one
vector pass per kept box).

A detection list is an (n, 6) float32 array of rows [label, score, x1, y1, x2, y2];
when nothing is detected ncnn leaves its output Mat empty, which is `empty_output()`.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def empty_output() -> np.ndarray:
    """What ncnn's detection layers return when nothing passes: an empty Mat (dims 0)."""
    return np.zeros((0,), F32)


# -- ordering ----------------------------------------------------------------------------
def descending_order(scores: np.ndarray) -> np.ndarray:
    """The permutation ncnn's qsort_descent_inplace applies to `scores`.

    It is an unstable Hoare quicksort, so equal scores come out in an order fixed by
    the partitioning; without ties (and NaNs) any correct descending sort agrees with it.
    """
    scores = np.asarray(scores, F32)
    n = scores.size
    if n < 2:
        return np.arange(n)
    if np.all(np.isfinite(scores)) and np.unique(scores).size == n:
        return np.argsort(-scores, kind="stable")
    return _replay_ncnn_quicksort(scores)


def _replay_ncnn_quicksort(scores: np.ndarray) -> np.ndarray:
    """ncnn's recursive quicksort, replayed step by step (an explicit stack replaces recursion:
    the two sub-ranges are disjoint, so the order they are sorted in does not matter).
    (Sorting tie-free sub-ranges directly instead of partitioning them was measured: it
    saved little, not worth its code; figures: docs/perf-notes.md, "ncnn's quicksort
    replayed step by step (shortcut not adopted)".)"""
    s = [float(v) for v in scores]
    order = list(range(len(s)))
    stack = [(0, len(s) - 1)]
    while stack:
        left, right = stack.pop()
        i, j = left, right
        pivot = s[(left + right) // 2]
        while i <= j:
            while s[i] > pivot:
                i += 1
            while s[j] < pivot:
                j -= 1
            if i <= j:
                s[i], s[j] = s[j], s[i]
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
        if left < j:
            stack.append((left, j))
        if i < right:
            stack.append((i, right))
    return np.asarray(order, dtype=np.intp)


# -- non-maximum suppression ---------------------------------------------------------------
def _intersection(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """ncnn's intersection_area of a box (4,) against many (m, 4), or of each box of a
    (n, 1, 4) stack against them (n, m): 0 when they do not touch."""
    apart = ((box[..., 0] > others[:, 2]) | (box[..., 2] < others[:, 0])
             | (box[..., 1] > others[:, 3]) | (box[..., 3] < others[:, 1]))
    iw = np.minimum(box[..., 2], others[:, 2]) - np.maximum(box[..., 0], others[:, 0])
    ih = np.minimum(box[..., 3], others[:, 3]) - np.maximum(box[..., 1], others[:, 1])
    return np.where(apart, F32(0), iw * ih)


def nms_sorted(boxes: np.ndarray, areas: np.ndarray, threshold: float,
               scaled_compare: bool = False) -> np.ndarray:
    """Indices kept by greedy NMS over score-sorted boxes (n, 4) x1,y1,x2,y2.

    A box is dropped when some earlier kept box overlaps it with IoU > threshold.
    ncnn tests `inter / union > t` (SSD, YOLOv2) or `inter > t * union` (YOLOv3, whose
    areas come from the decoded w*h); `scaled_compare` picks the latter. Walking the kept
    boxes and suppressing everything after them gives the same set as ncnn's walk over
    candidates, and the float arithmetic is identical (a + b == b + a in IEEE).

    Two empty boxes give IoU 0/0 = NaN. ncnn's build (finite-math) then suppresses in the
    ratio test, so we test `not IoU <= t`; its YOLOv3 kernel keeps them, as IEEE `>` does.
    """
    n = len(boxes)
    boxes = np.asarray(boxes, F32)
    areas = np.asarray(areas, F32)
    t = F32(threshold)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if n <= NMS_MATRIX_MAX:
            # every pair at once, then a cheap greedy walk over the rows: several times faster
            # than a Python step per kept box (figures: docs/perf-notes.md, "NMS: the whole
            # overlap matrix up to 1024 candidates")
            overlap = _overlaps(boxes[:, None], boxes, areas[:, None], areas, t, scaled_compare)
            return _greedy_walk(overlap, np.zeros(n, bool))
        kept = _nms_sparse(boxes, areas, t, scaled_compare)
        return kept if kept is not None else _nms_in_blocks(boxes, areas, t, scaled_compare)


def _greedy_walk(overlap: np.ndarray, suppressed: np.ndarray) -> np.ndarray:
    """The greedy pass over a square overlap matrix of consecutive candidates, some of
    them already `suppressed` (updated in place): the indices it keeps."""
    kept = []
    for i in range(len(suppressed)):
        if not suppressed[i]:
            kept.append(i)
            suppressed[i + 1:] |= overlap[i, i + 1:]
    return np.asarray(kept, dtype=np.intp)


def _nms_sparse(boxes, areas, t, scaled_compare: bool) -> np.ndarray | None:
    """nms_sorted by testing only the pairs of boxes that meet: where boxes are spread out
    (most of them kept), the pairs tested fall from n^2 / 2 to a few per box.

    Boxes apart (not even touching) have intersection exactly 0, and with every area
    positive (infinity included) and t >= 0 both of ncnn's tests say "keep" for them, so
    leaving them out changes nothing; the pairs that meet or touch are tested with the same
    float32 operations as before (touching boxes with an infinite side give 0 * inf = NaN,
    which the ratio test counts as overlap). Returns None when that reasoning does not hold
    (a NaN, an inverted box, a non-positive area, t < 0) or when too many pairs meet, in
    number or as a share of all pairs: then the blocked walk, which is fast exactly when most
    boxes are suppressed, does the work."""
    x1, y1, x2, y2 = boxes.T
    if not (t >= 0 and not np.isnan(boxes).any() and (areas > 0).all()
            and (x2 >= x1).all() and (y2 >= y1).all()):
        return None
    n = len(boxes)
    # sweep along the axis the boxes spread over more: in start order, box i can only meet
    # the boxes after it that start before it ends (or where it ends)
    along_x, along_y = _sweep(x1, x2), _sweep(y1, y2)
    if along_x[1].sum() <= along_y[1].sum():
        (order, reach), across = along_x, (y1, y2)
    else:
        (order, reach), across = along_y, (x1, x2)
    pairs = int(reach.sum())
    if pairs > NMS_SPARSE_PAIRS_MAX or pairs * NMS_SPARSE_GAIN_MIN > n * (n - 1) // 2:
        return None
    first_of_row = np.cumsum(reach) - reach
    earlier, later = [], []
    for lo, hi in _row_chunks(reach, NMS_PAIRS_MAX):
        count = reach[lo:hi]
        rows = np.repeat(np.arange(lo, hi, dtype=np.int32), count)
        cols = rows + 1 + (np.arange(count.sum(), dtype=np.int32)
                           - np.repeat(first_of_row[lo:hi] - first_of_row[lo], count).astype(np.int32))
        a, b = order[rows], order[cols]
        p, q = np.minimum(a, b), np.maximum(a, b)  # p comes first in score order
        meet = np.minimum(across[1][p], across[1][q]) >= np.maximum(across[0][p], across[0][q])
        p, q = p[meet], q[meet]
        hit = _overlaps(boxes[p], boxes[q], areas[p], areas[q], t, scaled_compare)
        earlier.append(p[hit])
        later.append(q[hit])
    earlier, later = np.concatenate(earlier), np.concatenate(later)
    order = np.argsort(earlier, kind="stable")
    earlier, later = earlier[order], later[order]
    # the greedy walk, visiting only the boxes that suppress something if kept
    suppressed = np.zeros(n, bool)
    owners, first = np.unique(earlier, return_index=True)
    bounds = np.append(first, len(earlier))
    for k, p in enumerate(owners.tolist()):
        if not suppressed[p]:
            suppressed[later[bounds[k]:bounds[k + 1]]] = True
    return np.flatnonzero(~suppressed)


def _sweep(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boxes in order of `start`, and how many of the boxes after each one start no later than it ends."""
    order = np.argsort(start, kind="stable").astype(np.int32)
    reach = np.searchsorted(start[order], end[order], side="right") - np.arange(1, len(order) + 1)
    return order, np.maximum(reach, 0)


def _row_chunks(counts: np.ndarray, per_chunk: int):
    """(lo, hi) row ranges whose counts add up to about per_chunk (at least one row each)."""
    ends = np.cumsum(counts)
    lo = 0
    while lo < len(counts):
        before = ends[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, before + per_chunk, side="right")))
        yield lo, min(hi, len(counts))
        lo = hi


def _nms_in_blocks(boxes, areas, t, scaled_compare: bool) -> np.ndarray:
    """nms_sorted beyond NMS_MATRIX_MAX candidates, NMS_BLOCK at a time: the block's own
    overlaps decide which of its survivors are kept (the greedy walk), then those kept
    suppress every later candidate in one product-sized step. The same pairs are tested
    as one row per kept box, with a Python step per block instead of per kept box, and
    candidates already suppressed are left out of the later steps. That more than halved
    the time on the detection models measured; block sizes around NMS_BLOCK are about
    equal, much larger ones slower (figures: docs/perf-notes.md, "NMS in blocks beyond
    1024 candidates")."""
    n = len(boxes)
    suppressed = np.zeros(n, bool)
    kept = []
    for start in range(0, n, NMS_BLOCK):
        block = slice(start, min(start + NMS_BLOCK, n))
        b, a = boxes[block], areas[block]
        overlap = _overlaps(b[:, None], b, a[:, None], a, t, scaled_compare)
        chosen = start + _greedy_walk(overlap, suppressed[block])
        kept.append(chosen)
        alive = block.stop + np.flatnonzero(~suppressed[block.stop:])  # later, not yet suppressed
        # the kept boxes against the later ones a slice at a time: the pairwise temporaries
        # stay near NMS_PAIRS_MAX values however many candidates there are
        step = max(1, NMS_PAIRS_MAX // max(1, len(chosen)))
        for lo in range(0, len(alive) if len(chosen) else 0, step):
            part = alive[lo:lo + step]
            hits = _overlaps(boxes[chosen][:, None], boxes[part], areas[chosen][:, None], areas[part], t,
                             scaled_compare)
            suppressed[part] = hits.any(axis=0)
    return np.concatenate(kept)


# candidates up to which NMS builds the whole n x n overlap matrix (4 MB of float32 each);
# beyond, blocks of NMS_BLOCK candidates
NMS_MATRIX_MAX = 1024
NMS_BLOCK = 128
NMS_PAIRS_MAX = 1 << 20  # kept x later pairs tested in one step (a few float32 temporaries of 4 MB)
# pairs close enough along one axis to be tested by the sparse walk; beyond, the boxes crowd
# together, most are suppressed and the blocked walk is the faster one. The sparse walk costs
# several times more per pair, so it must leave out most of the n^2 / 2 pairs to win (figures:
# docs/perf-notes.md, "NMS over the pairs that meet")
NMS_SPARSE_PAIRS_MAX = 1 << 23
NMS_SPARSE_GAIN_MIN = 16


def _overlaps(box, others, area, other_areas, t, scaled_compare: bool) -> np.ndarray:
    """Does `box` (or each row of a (n, 1, 4) stack) overlap `others` beyond t? The same
    float32 operations, in the same order, as ncnn's per-pair test."""
    inter = _intersection(box, others)
    union = other_areas + area - inter
    return inter > t * union if scaled_compare else ~(inter / union <= t)


def detections(labels: np.ndarray, scores: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Rows [label, score, x1, y1, x2, y2], or ncnn's empty Mat when there are none."""
    if len(scores) == 0:
        return empty_output()
    out = np.empty((len(scores), 6), F32)
    out[:, 0] = labels
    out[:, 1] = scores
    out[:, 2:] = boxes
    return out


def sort_nms(labels, scores, boxes, areas, nms_threshold, scaled_compare=False):
    """Global descending sort, then NMS across all classes (the YOLO heads)."""
    order = descending_order(scores)
    labels, scores, boxes, areas = labels[order], scores[order], boxes[order], areas[order]
    keep = nms_sorted(boxes, areas, nms_threshold, scaled_compare)
    return detections(labels[keep], scores[keep], boxes[keep])


def corner_areas(boxes: np.ndarray) -> np.ndarray:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


# -- PriorBox --------------------------------------------------------------------------------
def _accumulated_centers(start: float, step: float, n: int) -> np.ndarray:
    """start, start+step, ... summed one by one in float32 as ncnn's `center_x += step_w`."""
    terms = np.full(n, F32(step), F32)
    if n:
        terms[0] = F32(start)
    return np.add.accumulate(terms, dtype=F32)


def priorbox_caffe(w: int, h: int, image_w: int, image_h: int, min_sizes, max_sizes,
                   aspect_ratios, variances, flip: bool, clip: bool, step_w: float,
                   step_h: float, offset: float, center_mmdetection: bool) -> np.ndarray:
    """Caffe-SSD prior boxes: (2, 4*w*h*num_prior), row 0 boxes (normalised), row 1 variances.

    Per cell, per min size: the min box, the sqrt(min*max) box, then each aspect ratio
    (and its flip), exactly in ncnn's order.
    """
    step_w, step_h, offset = F32(step_w), F32(step_h), F32(offset)
    if center_mmdetection:
        start_x, start_y = offset * (step_w - F32(1)), offset * (step_h - F32(1))
    else:
        start_x, start_y = offset * step_w, offset * step_h
    cx = _accumulated_centers(start_x, step_w, w)
    cy = start_y + np.arange(h, dtype=F32) * step_h

    half_sizes = []  # (box_w, box_h) per prior of one cell
    for k, min_size in enumerate(np.asarray(min_sizes, F32)):
        # odd ratios (0, negative) give inf/nan boxes in ncnn too
        half_sizes.append((min_size, min_size))
        if len(max_sizes):
            side = np.sqrt(min_size * F32(max_sizes[k]))
            half_sizes.append((side, side))
        for ar in np.asarray(aspect_ratios, F32):
            with np.errstate(divide="ignore", invalid="ignore"):
                root = np.sqrt(ar)
                box_w, box_h = min_size * root, min_size / root
            half_sizes.append((box_w, box_h))
            if flip:
                half_sizes.append((box_h, box_w))
    sizes = np.asarray(half_sizes, F32).reshape(-1, 2) * F32(0.5)
    half_w, half_h = sizes[:, 0], sizes[:, 1]

    cxg = cx[None, :, None]
    cyg = cy[:, None, None]
    iw, ih = F32(image_w), F32(image_h)
    with np.errstate(divide="ignore", invalid="ignore"):
        boxes = np.stack(np.broadcast_arrays(
            (cxg - half_w) / iw, (cyg - half_h) / ih, (cxg + half_w) / iw, (cyg + half_h) / ih), axis=-1)
    top = np.empty((2, boxes.size), F32)
    top[0] = boxes.reshape(-1)
    if clip:
        np.clip(top[0], F32(0), F32(1), out=top[0])
    top[1] = np.tile(np.asarray(variances, F32), boxes.size // 4)
    return top


def priorbox_mxnet(w: int, h: int, sizes, ratios, step_w: float, step_h: float, offset: float,
                   clip: bool) -> np.ndarray:
    """MXNet _contrib_MultiBoxPrior: (4*w*h*num_prior,), num_prior = len(sizes) - 1 + len(ratios).

    All sizes at ratio 1, then sizes[0] at each ratio after the first; widths are scaled
    by h/w so boxes are square in pixels.
    """
    step_w, step_h, offset = F32(step_w), F32(step_h), F32(offset)
    cx = _accumulated_centers(offset * step_w, step_w, w)
    cy = offset * step_h + np.arange(h, dtype=F32) * step_h
    fh, fw, two = F32(h), F32(w), F32(2)
    sizes = np.asarray(sizes, F32)
    half = [(size * fh / fw / two, size / two) for size in sizes]
    with np.errstate(divide="ignore", invalid="ignore"):
        for ar in np.asarray(ratios, F32)[1:]:
            ratio = np.sqrt(ar)
            half.append((sizes[0] * fh / fw * ratio / two, sizes[0] / ratio / two))
    half = np.asarray(half, F32).reshape(-1, 2)
    cw, ch = half[:, 0], half[:, 1]
    cxg = cx[None, :, None]
    cyg = cy[:, None, None]
    boxes = np.stack(np.broadcast_arrays(cxg - cw, cyg - ch, cxg + cw, cyg + ch), axis=-1)
    out = boxes.reshape(-1).astype(F32)
    if clip:
        np.clip(out, F32(0), F32(1), out=out)
    return out


# -- DetectionOutput (SSD) -------------------------------------------------------------------
def decode_center_size(loc: np.ndarray, priors: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """SSD's CENTER_SIZE decode of (n, 4) offsets against (n, 4) priors -> (n, 4) corners."""
    pb_w = priors[:, 2] - priors[:, 0]
    pb_h = priors[:, 3] - priors[:, 1]
    pb_cx = (priors[:, 0] + priors[:, 2]) * F32(0.5)
    pb_cy = (priors[:, 1] + priors[:, 3]) * F32(0.5)
    with np.errstate(over="ignore", invalid="ignore"):
        cx = variances[:, 0] * loc[:, 0] * pb_w + pb_cx
        cy = variances[:, 1] * loc[:, 1] * pb_h + pb_cy
        half_w = expf(variances[:, 2] * loc[:, 2]) * pb_w * F32(0.5)
        half_h = expf(variances[:, 3] * loc[:, 3]) * pb_h * F32(0.5)
        return np.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=1).astype(F32)


def ssd_detection_output(boxes: np.ndarray, class_scores: np.ndarray, confidence_threshold: float,
                         nms_threshold: float, nms_top_k: int, keep_top_k: int) -> np.ndarray:
    """Per class (skipping background 0): threshold, sort, keep nms_top_k, NMS; then all
    classes together: sort, keep keep_top_k. class_scores is (num_prior, num_class)."""
    threshold = F32(confidence_threshold)
    labels, scores, picked_boxes = [], [], []
    if class_scores.size == 0:  # no prior (or no class): no detection
        return empty_output()
    # only the classes with a candidate: a model of millions of classes (few priors) then
    # costs one pass over the scores, not a Python step per class
    active = 1 + np.flatnonzero((class_scores[:, 1:] > threshold).any(axis=0))
    for label in active.tolist():
        column = class_scores[:, label]
        candidates = np.flatnonzero(column > threshold)
        order = candidates[descending_order(column[candidates])]
        if nms_top_k < len(order):
            order = order[:nms_top_k]
        keep = order[nms_sorted(boxes[order], corner_areas(boxes[order]), nms_threshold)]
        labels.append(np.full(len(keep), label, F32))
        scores.append(column[keep])
        picked_boxes.append(boxes[keep])
    if not scores or sum(len(s) for s in scores) == 0:
        return empty_output()
    labels, scores, picked_boxes = np.concatenate(labels), np.concatenate(scores), np.concatenate(picked_boxes)
    order = descending_order(scores)
    if keep_top_k < len(order):
        order = order[:keep_top_k]
    return detections(labels[order], scores[order], picked_boxes[order])


# -- YOLO heads ------------------------------------------------------------------------------
def expf(x: np.ndarray) -> np.ndarray:
    """float32 exp rounded from float64: agrees with C's expf (glibc's is within 0.502 ulp,
    so nearly always correctly rounded), where numpy's float32 exp is off by an ulp now and
    then. One ulp matters here: it can swap two nearly tied scores in the sort."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(x, np.float64)).astype(F32)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return F32(1) / (F32(1) + expf(-x))


def _first_argmax(scores: np.ndarray, floor: float):
    """Index and value of the first strict maximum along axis 1, starting from `floor`
    (ncnn's `if (score > class_score)` loop): NaNs never win, ties keep the first."""
    clean = np.where(np.isnan(scores), -np.inf, scores)
    index = np.argmax(clean, axis=1)
    value = np.take_along_axis(clean, index[:, None], axis=1)[:, 0]
    beaten = value > F32(floor)
    return np.where(beaten, index, 0), np.where(beaten, value, F32(floor)).astype(F32)


def _grid(w: int, h: int):
    return np.arange(w, dtype=F32)[None, None, :], np.arange(h, dtype=F32)[None, :, None]


def _region_boxes(tx, ty, tw, th, bias_w, bias_h, w: int, h: int):
    """YOLOv2: centre offsets in grid cells + exp-scaled anchors (in cells) -> normalised
    corner boxes, straight from ncnn's formulas."""
    cols, rows = _grid(w, h)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        cx = (cols + _sigmoid(tx)) / F32(w)
        cy = (rows + _sigmoid(ty)) / F32(h)
        half_w = (expf(tw) * bias_w / F32(w)) * F32(0.5)
        half_h = (expf(th) * bias_h / F32(h)) * F32(0.5)
        boxes = np.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=-1)
    return boxes.astype(F32)


def _fused(a, b, c):
    """fma(a, b, c) for float32 operands: exact product in float64, rounded once (or twice)."""
    return (a.astype(np.float64) * np.float64(b) + c).astype(F32)


def _yolov3_boxes(tx, ty, tw, th, bias_w, bias_h, w: int, h: int, net_w: int, net_h: int):
    """YOLOv3 boxes (anchors in net-input pixels) and their w*h areas, as ncnn's x86 build
    evaluates `(j + sigmoid(x)) / w - exp(tw) * bias_w / net_w * 0.5`: it is compiled with
    fast-math and FMA, so the division becomes a multiply by 1/w fused with the half-width,
    and bias_w / net_w is folded first. The last part shows with huge logits: exp(tw) *
    bias_w overflows to inf where exp(tw) * (bias_w / net_w) stays finite."""
    cols, rows = _grid(w, h)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        gx = cols + _sigmoid(tx)
        gy = rows + _sigmoid(ty)
        bw = expf(tw) * (bias_w / F32(net_w))
        bh = expf(th) * (bias_h / F32(net_h))
        half_w, half_h = (bw * F32(0.5)).astype(np.float64), (bh * F32(0.5)).astype(np.float64)
        rw, rh = F32(1) / F32(w), F32(1) / F32(h)
        boxes = np.stack([_fused(gx, rw, -half_w), _fused(gy, rh, -half_h),
                          _fused(gx, rw, half_w), _fused(gy, rh, half_h)], axis=-1)
        return boxes, (bw * bh).astype(F32)


def yolov3_candidates(blob: np.ndarray, num_class: int, num_box: int, bias_w, bias_h,
                      net_w: int, net_h: int, confidence_threshold: float):
    """One YOLOv3 output (c, h, w) -> labels, scores, boxes, areas of boxes passing threshold.

    ncnn's score is 1 / (1 + exp(-obj) * (1 + exp(-cls))) with cls the raw max class logit
    (the code's comment says sigmoid(obj) * sigmoid(cls), its parentheses say otherwise;
    we follow the code). Its x86 build runs this with FMA on any recent CPU, so the
    denominator is one fused multiply-add; so is ours (exact product in float64, one
    rounding to float32 but for rare double-rounding ties), or near-tied scores would sort
    differently. Candidates come anchor by anchor, each in raster order.
    """
    _, h, w = blob.shape
    per_box = blob[:num_box * (5 + num_class)].reshape(num_box, 5 + num_class, h, w)
    logits = np.moveaxis(per_box[:, 5:], 1, -1).reshape(-1, num_class)
    class_index, class_score = _first_argmax(logits, -np.finfo(F32).max)
    class_index = class_index.reshape(num_box, h, w)
    class_score = class_score.reshape(num_box, h, w)
    with np.errstate(over="ignore", invalid="ignore"):
        denominator = (expf(-per_box[:, 4]).astype(np.float64) * (F32(1) + expf(-class_score))
                       + 1.0).astype(F32)
        score = F32(1) / denominator
    bw = np.asarray(bias_w, F32)[:, None, None]
    bh = np.asarray(bias_h, F32)[:, None, None]
    passed = score >= F32(confidence_threshold)
    boxes, areas = _yolov3_boxes(per_box[:, 0], per_box[:, 1], per_box[:, 2], per_box[:, 3],
                                 bw, bh, w, h, net_w, net_h)
    return class_index[passed] + 1, score[passed], boxes[passed], areas[passed]


def softmax_channels(x: np.ndarray) -> np.ndarray:
    """Softmax over axis 0 (ncnn Softmax axis=0 on a c,h,w blob)."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x - np.max(x, axis=0, keepdims=True))
        return (e / np.sum(e, axis=0, keepdims=True)).astype(F32)


def yolo_region_softmax(blob: np.ndarray, num_class: int, num_box: int) -> np.ndarray:
    """A copy of a YOLOv2 region blob with each anchor's class channels softmaxed, as ncnn
    leaves its input after YoloDetectionOutput ran in place."""
    out = np.array(blob, F32, copy=True)
    per_box = 5 + num_class
    for box in range(num_box):
        first = box * per_box + 5
        out[first:first + num_class] = softmax_channels(out[first:first + num_class])
    return out


def yolo_region_candidates(softmaxed: np.ndarray, num_class: int, num_box: int, biases,
                           confidence_threshold: float):
    """One YOLOv2 region output (c, h, w) whose class channels are already softmaxed ->
    labels, scores, boxes, areas passing threshold; score = sigmoid(obj) * max class prob."""
    _, h, w = softmaxed.shape
    per_box = softmaxed[:num_box * (5 + num_class)].reshape(num_box, 5 + num_class, h, w)
    probs = np.moveaxis(per_box[:, 5:], 1, -1).reshape(-1, num_class)
    class_index, class_score = _first_argmax(probs, 0.0)
    class_index = class_index.reshape(num_box, h, w)
    class_score = class_score.reshape(num_box, h, w)
    score = _sigmoid(per_box[:, 4]) * class_score
    biases = np.asarray(biases, F32)
    bw = biases[0:2 * num_box:2][:, None, None]
    bh = biases[1:2 * num_box:2][:, None, None]
    passed = score >= F32(confidence_threshold)
    boxes = _region_boxes(per_box[:, 0], per_box[:, 1], per_box[:, 2], per_box[:, 3],
                          bw, bh, w, h)[passed]
    return class_index[passed] + 1, score[passed], boxes, corner_areas(boxes)
