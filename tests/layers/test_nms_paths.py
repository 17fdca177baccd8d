"""NMS's two paths (whole overlap matrix for up to NMS_MATRIX_MAX candidates, blocks of
NMS_BLOCK beyond) keep exactly the same boxes as one greedy row per kept box; each path is
checked against real ncnn by the detection layer tests, this checks them against a plain
reference walk on awkward boxes."""

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
@pytest.mark.parametrize("path", ["matrix", "blocks"])
def test_paths_agree_with_the_greedy_walk(monkeypatch, n, seed, threshold, scaled_compare, path):
    boxes, areas = awkward_boxes(n, seed)
    if path == "blocks":  # small blocks: a box suppressed across several of them
        monkeypatch.setattr(detection, "NMS_MATRIX_MAX", 0)
        monkeypatch.setattr(detection, "NMS_BLOCK", 16)
    kept = detection.nms_sorted(boxes, areas, threshold, scaled_compare)
    np.testing.assert_array_equal(kept, greedy_reference(boxes, areas, threshold, scaled_compare))
    assert kept[0] == 0 and len(kept) >= 1

