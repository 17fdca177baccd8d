"""NMS's two paths (whole overlap matrix for up to NMS_MATRIX_MAX candidates, one row
at a time beyond) keep exactly the same boxes; each is checked against real ncnn by the
detection layer tests, this checks them against each other on awkward boxes."""

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


@pytest.mark.parametrize("scaled_compare", [False, True])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.45, 1.0])
@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (40, 2), (300, 3)])
def test_matrix_and_row_paths_agree(monkeypatch, n, seed, threshold, scaled_compare):
    boxes, areas = awkward_boxes(n, seed)
    by_matrix = detection.nms_sorted(boxes, areas, threshold, scaled_compare)
    monkeypatch.setattr(detection, "NMS_MATRIX_MAX", 0)
    by_rows = detection.nms_sorted(boxes, areas, threshold, scaled_compare)
    np.testing.assert_array_equal(by_matrix, by_rows)
    assert by_matrix[0] == 0 and len(by_matrix) >= 1
