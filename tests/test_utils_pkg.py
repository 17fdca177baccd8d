"""vkncnn.utils against ncnn.utils: names, objects, numpy helpers, drawing, file helpers."""

import hashlib
import importlib.util

import numpy as np
import pytest

import vkncnn
import vkncnn.utils as ours
from vkncnn.utils import functional as F

ncnn = pytest.importorskip("ncnn")
theirs = pytest.importorskip("ncnn.utils")
real_zoo = pytest.importorskip("ncnn.model_zoo")
from ncnn.utils import functional as RF  # noqa: E402


def public(module):
    return {n for n in dir(module) if not n.startswith("_")}


def test_same_public_names():
    assert public(theirs) - public(ours) == set()
    assert public(RF) - {"np"} <= public(F)
    assert public(real_zoo) - public(vkncnn.model_zoo) == set()


def test_objects_defaults_and_rect_geometry():
    obj, ref = ours.Detect_Object(3, 0.5, 1, 2, 3, 4), theirs.Detect_Object(3, 0.5, 1, 2, 3, 4)
    assert (obj.label, obj.prob, obj.rect.x, obj.rect.y, obj.rect.w, obj.rect.h) == \
        (ref.label, ref.prob, ref.rect.x, ref.rect.y, ref.rect.w, ref.rect.h)
    face, kp = ours.Face_Object(), ours.KeyPoint()
    assert (face.prob, face.landmark, kp.prob, kp.p.x, kp.p.y) == (0.0, [], 0.0, 0.0, 0.0)
    for a, b in [((0, 0, 4, 4), (2, 1, 4, 4)), ((0, 0, 2, 2), (5, 5, 1, 1))]:
        assert ours.Rect(*a).intersection_area(ours.Rect(*b)) == theirs.Rect(*a).intersection_area(theirs.Rect(*b))
        assert ours.Rect(*a).area() == theirs.Rect(*a).area()


def test_functional_matches_ncnn():
    rng = np.random.default_rng(0)
    xywh = rng.uniform(1, 50, (20, 4)).astype(np.float32)
    np.testing.assert_array_equal(F.xywh2xyxy(xywh), RF.xywh2xyxy(xywh))
    np.testing.assert_array_equal(F.xyxy2xywh(xywh), RF.xyxy2xywh(xywh))
    np.testing.assert_array_equal(F.make_grid(5, 3), RF.make_grid(5, 3))
    np.testing.assert_array_equal(F.sigmoid(xywh), RF.sigmoid(xywh))
    logits = rng.standard_normal((6, 9)).astype(np.float32)
    kept = logits.copy()
    np.testing.assert_allclose(F.softmax(logits), RF.softmax(logits.copy()), rtol=1e-6)
    np.testing.assert_array_equal(logits, kept)  # ours leaves its argument alone
    boxes = F.xywh2xyxy(rng.uniform(10, 60, (40, 4)).astype(np.float32))
    scores = rng.uniform(0, 1, 40).astype(np.float32)
    np.testing.assert_allclose(F.iou_of(boxes, boxes[:1]), RF.iou_of(boxes, boxes[:1]))
    for top_k, cand in [(-1, 200), (3, 200), (-1, 10)]:
        assert F.nms(boxes, scores, 0.3, top_k, cand) == RF.nms(boxes, scores, 0.3, top_k, cand)


def test_print_topk_matches(capsys):
    scores = np.array([0.1, 0.7, 0.2], np.float32)
    theirs.print_topk(scores, 2)
    expected = capsys.readouterr().out
    ours.print_topk(scores, 2)
    assert capsys.readouterr().out == expected == "1=0.700000\n2=0.200000\n"


@pytest.mark.skipif(importlib.util.find_spec("cv2") is not None, reason="OpenCV is installed")
def test_drawing_without_opencv_names_the_package():
    image = np.zeros((8, 8, 3), np.uint8)
    for call in (lambda: ours.draw_detection_objects(image, ["a"], []), lambda: ours.draw_faceobjects(image, []),
                 lambda: ours.draw_pose(image, [])):
        with pytest.raises(vkncnn.MissingPackageError, match="opencv-python"):
            call()


def test_check_sha1_and_download_never_fetch(tmp_path):
    f = tmp_path / "model.bin"
    f.write_bytes(b"weights")
    digest = hashlib.sha1(b"weights").hexdigest()
    for h in (digest, digest[:8], "0" * 40):
        assert ours.check_sha1(str(f), h) == theirs.check_sha1(str(f), h)
    url = "https://example.invalid/models/model.bin"
    assert ours.download(url, path=str(tmp_path), sha1_hash=digest[:8]) == str(f)
    with pytest.raises(vkncnn.ModelFileError, match=r"does not download.*other\.bin"):
        ours.download("https://example.invalid/models/other.bin", path=str(tmp_path))
    with pytest.raises(vkncnn.ModelFileError, match="sha1"):
        ours.download(url, path=str(tmp_path), sha1_hash="0" * 40)
