"""NMS's three paths (whole overlap matrix for up to NMS_MATRIX_MAX candidates; beyond, only
the pairs that meet when every area is positive, else blocks of NMS_BLOCK) keep exactly the
same boxes as one greedy row per kept box; each path is checked against real ncnn by the
detection layer tests, this checks them against a plain reference walk on awkward boxes."""

from __future__ import annotations

import numpy as np
import pytest

from vkncnn.cpu_fallback import detection


def awkward_boxes(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 50, (n, 2)).astype(np.float32)
    wh = rng.choice([0.0, 1.0, 7.5, 20.0], (n, 2)).astype(np.float32)  # empty boxes too
    boxes = np.concatenate([xy, xy + wh], axis=1)
    boxes[::7] = boxes[0]                   # exact duplicates
    boxes[1::11, 0] = boxes[1::11, 2]       # zero width, touching edges
    areas = ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])).astype(np.float32)
    return boxes, areas


def spread_boxes(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Boxes the sparse path takes: positive areas (decoded apart from the corners, as YOLOv3's
    w * h), edges that touch, infinite sides, boxes spread wide along one axis."""
    boxes, areas = awkward_boxes(n, seed)
    boxes[:, 0::2] *= np.float32(seed % 3 + 1)            # wider spread along x on some seeds
    boxes[2::13, 3] = np.inf                               # infinitely tall, so 0 * inf where edges touch
    boxes[3::17, 0] = -np.inf
    areas = np.maximum(areas, np.float32(0.5))
    areas[2::13] = np.inf
    return boxes, areas


def greedy_reference(boxes, areas, threshold, scaled_compare) -> np.ndarray:
    """One kept box at a time against every later candidate (ncnn's walk, turned around)."""
    n = len(boxes)
    suppressed = np.zeros(n, bool)
    kept = []
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(n):
            if not suppressed[i]:
                kept.append(i)
                rest = slice(i + 1, n)
                suppressed[rest] |= detection._overlaps(boxes[i], boxes[rest], areas[i], areas[rest],
                                                        np.float32(threshold), scaled_compare)
    return np.asarray(kept, dtype=np.intp)


@pytest.mark.parametrize("scaled_compare", [False, True])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.45, 1.0])
@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (40, 2), (300, 3), (700, 4)])
@pytest.mark.parametrize("path", ["matrix", "blocks", "sparse"])
def test_paths_agree_with_the_greedy_walk(monkeypatch, n, seed, threshold, scaled_compare, path):
    boxes, areas = awkward_boxes(n, seed)
    if path != "matrix":
        monkeypatch.setattr(detection, "NMS_MATRIX_MAX", 0)
    if path == "blocks":  # small blocks: a box suppressed across several of them
        monkeypatch.setattr(detection, "NMS_BLOCK", 16)
        monkeypatch.setattr(detection, "NMS_SPARSE_PAIRS_MAX", -1)
    if path == "sparse":  # small chunks of pairs; the blocked walk must not be needed
        boxes, areas = spread_boxes(n, seed)
        monkeypatch.setattr(detection, "NMS_PAIRS_MAX", 37)
        monkeypatch.setattr(detection, "NMS_SPARSE_GAIN_MIN", 0)  # a speed choice: crowded boxes too
        monkeypatch.setattr(detection, "_nms_in_blocks", _must_not_run)
    kept = detection.nms_sorted(boxes, areas, threshold, scaled_compare)
    np.testing.assert_array_equal(kept, greedy_reference(boxes, areas, threshold, scaled_compare))
    assert kept[0] == 0 and len(kept) >= 1



def _must_not_run(*args):
    raise AssertionError("the sparse path gave up")


@pytest.mark.parametrize("spoil", ["nan box", "inverted box", "zero area", "negative threshold", "too many pairs",
                                   "too large a share of pairs"])
def test_sparse_path_gives_way_when_its_reasoning_fails(monkeypatch, spoil):
    boxes, areas = spread_boxes(300, 5)
    threshold = 0.3
    if spoil == "nan box":
        boxes[7, 1] = np.nan
    elif spoil == "inverted box":
        boxes[7, 2] = boxes[7, 0] - 1
    elif spoil == "zero area":
        areas[7] = 0
    elif spoil == "negative threshold":
        threshold = -0.1
    elif spoil == "too many pairs":
        monkeypatch.setattr(detection, "NMS_SPARSE_PAIRS_MAX", 10)
    monkeypatch.setattr(detection, "NMS_MATRIX_MAX", 0)
    if spoil != "too large a share of pairs":
        monkeypatch.setattr(detection, "NMS_SPARSE_GAIN_MIN", 0)
    assert detection._nms_sparse(boxes, areas, np.float32(threshold), False) is None
    kept = detection.nms_sorted(boxes, areas, threshold)
    np.testing.assert_array_equal(kept, greedy_reference(boxes, areas, threshold, False))
