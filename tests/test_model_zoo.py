"""vkncnn.model_zoo against ncnn.model_zoo, both reading the same local files.

Real weights are not available here, so the model files are ncnn's own .param files
(ncnn-examples, ncnn-benchmark) with seeded random weights (vkncnn.tools.randweights);
real ncnn's zoo is pointed at the same folder by replacing its downloader."""

import importlib
import os

import numpy as np
import pytest

import vkncnn
from vkncnn.tools.compare_models import with_detections
from vkncnn.tools.randweights import random_weights

ncnn = pytest.importorskip("ncnn")
real_zoo = pytest.importorskip("ncnn.model_zoo")

MODELS = "/work/shared/models"


def _place(folder, source, name, shape, edit=lambda text: text):
    """Write source .param (edited) as `name`.param and seeded random weights as `name`.bin."""
    if not os.path.isfile(source):
        pytest.skip(f"{source} not present")
    text = edit(open(source).read())
    param = folder / f"{name}.param"
    param.write_text(text)
    (folder / f"{name}.bin").write_bytes(random_weights(str(param), seed=0, input_shapes=shape))


def _real_model(monkeypatch, module, folder, cls, **kwargs):
    mod = importlib.import_module(f"ncnn.model_zoo.{module}")
    monkeypatch.setattr(mod, "get_model_file", lambda name, *a, **k: str(folder / name))
    return getattr(mod, cls)(**kwargs)


def _image(h=240, w=320):
    return np.random.default_rng(3).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _rename_output(new):
    """The benchmark files name the detection blob 'output'; the zoo reads `new`."""
    def edit(text):
        lines = text.splitlines()
        lines[-1] = lines[-1].replace(" output", f" {new}")
        return "\n".join(lines) + "\n"
    return edit


def _same_objects(ours, theirs):
    """Same detections; near-equal scores may come in either order, so compare by place."""
    assert len(ours) == len(theirs) > 0
    key = lambda o: (int(o.label), round(float(o.rect.x)), round(float(o.rect.y)))  # noqa: E731
    for a, b in zip(sorted(ours, key=key), sorted(theirs, key=key)):
        assert int(a.label) == int(b.label)
        assert float(a.prob) == pytest.approx(float(b.prob), rel=1e-3, abs=1e-4)
        for field in ("x", "y", "w", "h"):
            assert float(getattr(a.rect, field)) == pytest.approx(float(getattr(b.rect, field)), rel=1e-3, abs=0.05)


def test_model_list_matches_ncnn():
    assert vkncnn.model_zoo.get_model_list() == real_zoo.get_model_list()
    with pytest.raises(vkncnn.ArgumentError, match="not among"):
        vkncnn.model_zoo.get_model("no_such_model")


def test_missing_file_names_file_and_folder(tmp_path):
    with pytest.raises(vkncnn.ModelFileError, match=r"squeezenet_v1\.1\.param.*" + str(tmp_path)):
        vkncnn.model_zoo.get_model("squeezenet", model_dir=str(tmp_path))


def test_model_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("VKNCNN_MODEL_ZOO", str(tmp_path))
    with pytest.raises(vkncnn.ModelFileError, match=str(tmp_path)):
        vkncnn.model_zoo.get_model("yolov8s")


def test_squeezenet_matches_ncnn(tmp_path, monkeypatch):
    _place(tmp_path, f"{MODELS}/ncnn-examples/squeezenet_v1.1.param", "squeezenet_v1.1", (3, 227, 227))
    img = _image()
    ours = vkncnn.model_zoo.get_model("SqueezeNet", model_dir=str(tmp_path))(img)
    theirs = _real_model(monkeypatch, "squeezenet", tmp_path, "SqueezeNet")(img)
    assert ours.shape == theirs.shape == (1000,)
    np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-6)
    assert np.argmax(ours) == np.argmax(theirs)


def test_mobilenet_ssd_matches_ncnn(tmp_path, monkeypatch):
    edit = lambda text: _rename_output("detection_out")(with_detections(text))  # noqa: E731
    _place(tmp_path, f"{MODELS}/ncnn-benchmark/mobilenet_ssd.param", "mobilenet_ssd_voc_ncnn", (3, 300, 300), edit)
    img = _image()
    ours = vkncnn.model_zoo.get_model("mobilenet_ssd", model_dir=str(tmp_path))(img)
    theirs = _real_model(monkeypatch, "mobilenetssd", tmp_path, "MobileNet_SSD")(img)
    _same_objects(ours, theirs)


def test_yolov4_tiny_matches_ncnn(tmp_path, monkeypatch):
    _place(tmp_path, f"{MODELS}/ncnn-benchmark/yolov4-tiny.param", "yolov4-tiny-opt", (3, 416, 416))
    img = _image(200, 260)
    ours = vkncnn.model_zoo.get_model("yolov4_tiny", model_dir=str(tmp_path))(img)
    theirs = _real_model(monkeypatch, "yolov4", tmp_path, "YoloV4_Tiny")(img)
    _same_objects(ours, theirs)
