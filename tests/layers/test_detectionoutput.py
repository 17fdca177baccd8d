"""DetectionOutput (SSD head) against real ncnn: decoded boxes, per-class NMS, top-k cuts,
tie order, the MXNet layout, empty results, and the shapes and params ncnn cannot run.

`compare_with_ncnn` is also used by the YOLO head tests: unlike oracle.check_layer it
copes with ncnn's empty output Mat (pyncnn crashes converting one to numpy).
"""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from tests.oracle import layer_param_text, ncnn, rel_err, run_vkncnn


def _run_ncnn_detection(param_text: str, inputs: dict, outputs: list[str]) -> dict | None:
    """Outputs of real ncnn, an empty array for an empty Mat; None if ncnn refuses."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.param")
        with open(path, "w") as f:
            f.write(param_text)
        net = ncnn.Net()
        o = net.opt
        o.use_vulkan_compute = False
        o.use_fp16_packed = o.use_fp16_storage = o.use_fp16_arithmetic = o.use_bf16_storage = False
        o.num_threads = 2
        if net.load_param(path) != 0:
            return None
        net.load_model(ncnn.DataReaderFromEmpty())
        ex = net.create_extractor()
        keep = []
        for name, arr in inputs.items():
            m = ncnn.Mat(np.ascontiguousarray(arr, np.float32)).clone()
            keep.append(m)
            ex.input(name, m)
        result = {}
        for name in outputs:
            ret, out = ex.extract(name)
            if ret != 0:
                return None
            result[name] = np.zeros((0,), np.float32) if out.empty() else np.array(out, np.float32, copy=True)
        del ex
        net.clear()
        return result


def compare_with_ncnn(type_name: str, params: dict, inputs: list[np.ndarray], n_outputs: int = 1,
                      tol: float = 1e-4, param_text: str | None = None) -> list[np.ndarray]:
    """Run one layer in ncnn and vkncnn; rows, order and values must agree. Returns ncnn's outputs."""
    text = param_text or layer_param_text(type_name, params, len(inputs), n_outputs)
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    names = [f"out{i}" for i in range(n_outputs)]
    want = _run_ncnn_detection(text, feed, names)
    assert want is not None, f"ncnn refused {type_name} {params}"
    got = run_vkncnn(text, b"", feed, names)
    for name in names:
        assert got[name].shape == want[name].shape, (
            f"{type_name} {params}: {name} shape {got[name].shape} != ncnn {want[name].shape}\n"
            f"ncnn:\n{want[name]}\nvkncnn:\n{got[name]}")
        err = rel_err(got[name], want[name])
        assert err <= tol, f"{type_name} {params}: {name} err {err:.3g}\nncnn:\n{want[name]}\nvkncnn:\n{got[name]}"
    return [want[n] for n in names]


def assert_both_reject(type_name: str, params: dict, inputs: list[np.ndarray], error=vkncnn.Error) -> None:
    """ncnn refuses (load_param or extract fails) and vkncnn raises a clear error."""
    text = layer_param_text(type_name, params, len(inputs))
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    assert _run_ncnn_detection(text, feed, ["out0"]) is None, f"ncnn accepted {type_name} {params}"
    with pytest.raises(error):
        run_vkncnn(text, b"", feed, ["out0"])


# -- SSD inputs --------------------------------------------------------------------------------
def ssd_inputs(num_prior: int, num_class: int, seed: int, sharpness: float = 2.5, quantize: int = 0):
    """Softmaxed scores (caffe layout), offsets and a (2, 4*num_prior) priorbox blob."""
    rng = np.random.default_rng(seed)
    loc = rng.normal(0, 1, num_prior * 4).astype(np.float32)
    logits = rng.normal(0, sharpness, (num_prior, num_class))
    conf = np.exp(logits - logits.max(1, keepdims=True))
    conf = conf / conf.sum(1, keepdims=True)
    if quantize:  # many equal scores: the order ncnn's quicksort leaves them in matters
        conf = np.round(conf * quantize) / quantize
    x0, y0 = rng.uniform(0, 0.6, num_prior), rng.uniform(0, 0.6, num_prior)
    priors = np.stack([x0, y0, x0 + rng.uniform(0.05, 0.4, num_prior), y0 + rng.uniform(0.05, 0.4, num_prior)], 1)
    variances = rng.uniform(0.05, 0.3, (num_prior, 4))
    priorbox = np.stack([priors.reshape(-1), variances.reshape(-1)]).astype(np.float32)
    return loc, conf.astype(np.float32).reshape(-1), priorbox


GRID = [(7, 3), (60, 4), (200, 21), (500, 12)]
PARAMS = [
    {4: 0.1},                                   # defaults: nms 0.05, nms_top_k 300, keep_top_k 100
    {1: 0.45, 4: 0.25},
    {1: 0.3, 2: 10, 3: 7, 4: 0.05},             # both top-k cuts bite
    {1: 0.6, 2: 1000, 3: 1000, 4: 0.01},        # keep nearly everything
    {1: 0.5, 3: 3, 4: 0.2},
    {1: 0.45, 4: 0.25, 5: 0.3, 6: 0.2, 7: 0.1, 8: 0.4},  # params 5-8 unused: priorbox row 1 wins
]


@pytest.mark.parametrize("num_prior,num_class", GRID)
@pytest.mark.parametrize("params", PARAMS)
def test_detectionoutput_matches_ncnn(num_prior, num_class, params):
    loc, conf, priorbox = ssd_inputs(num_prior, num_class, seed=num_prior + num_class)
    out = compare_with_ncnn("DetectionOutput", {0: num_class, **params}, [loc, conf, priorbox])
    assert out[0].ndim == 2 and out[0].shape[1] == 6 and len(out[0]) > 0


@pytest.mark.parametrize("quantize", [4, 8, 16])
@pytest.mark.parametrize("params", [{1: 0.5, 2: 40, 3: 30, 4: 0.1}, {1: 0.3, 4: 0.05}, {1: 0.7, 2: 7, 3: 25, 4: 0.2}])
def test_detectionoutput_tied_scores_keep_ncnn_order(quantize, params):
    loc, conf, priorbox = ssd_inputs(400, 6, seed=quantize, sharpness=1.5, quantize=quantize)
    out = compare_with_ncnn("DetectionOutput", {0: 6, **params}, [loc, conf, priorbox])
    assert len(np.unique(out[0][:, 1])) < len(out[0]), "test meant to have tied scores"


@pytest.mark.parametrize("shapes", [
    ("flat", "flat", "2d"), ("2d", "2d", "2d"), ("3d", "3d", "3d"), ("2d", "flat", "3d"), ("c4", "flat", "2d")])
def test_detectionoutput_input_dims(shapes):
    n, c = 48, 5
    loc, conf, priorbox = ssd_inputs(n, c, seed=3)
    as_shape = {"flat": lambda a, k: a.reshape(-1), "2d": lambda a, k: a.reshape(-1, k),
                "3d": lambda a, k: a.reshape(1, -1, k), "c4": lambda a, k: a.reshape(n, 1, 4)}
    inputs = [as_shape[shapes[0]](loc, 4), as_shape[shapes[1]](conf, c),
              priorbox if shapes[2] == "2d" else priorbox.reshape(1, 2, -1)]
    compare_with_ncnn("DetectionOutput", {0: c, 1: 0.45, 4: 0.2}, inputs)


@pytest.mark.parametrize("n_extra", [1, 2])
def test_detectionoutput_ignores_extra_bottoms(n_extra):
    loc, conf, priorbox = ssd_inputs(30, 4, seed=5)
    out = compare_with_ncnn("DetectionOutput", {0: 4, 4: 0.2}, [loc, conf, priorbox] + [priorbox] * n_extra)
    assert len(out[0])


@pytest.mark.parametrize("num_prior,num_class", [(40, 4), (90, 7)])
@pytest.mark.parametrize("variances", [{}, {5: 0.2, 6: 0.3, 7: 0.1, 8: 0.4}])
@pytest.mark.parametrize("priorbox_dims", [2, 3])
def test_detectionoutput_mxnet_layout(num_prior, num_class, variances, priorbox_dims):
    loc, conf, priorbox = ssd_inputs(num_prior, num_class, seed=num_class)
    scores = conf.reshape(num_prior, num_class).T.copy()  # mxnet: (num_class, num_prior)
    priors = priorbox[0].reshape(num_prior, 4)
    priors = priors if priorbox_dims == 2 else priors.reshape(1, num_prior, 4)
    out = compare_with_ncnn("DetectionOutput", {0: -233, 1: 0.4, 4: 0.2, **variances}, [loc, scores, priors])
    assert len(out[0])


@pytest.mark.parametrize("params", [{0: 0}, {0: 1, 4: 0.1}, {0: 5, 4: 0.99}, {0: 5, 4: 0.1, 2: 0},
                                    {0: 5, 4: 0.1, 3: 0}])
def test_detectionoutput_nothing_detected_is_empty(params):
    loc, conf, priorbox = ssd_inputs(30, 5, seed=1)
    out = compare_with_ncnn("DetectionOutput", params, [loc, conf, priorbox])
    assert out[0].size == 0


def test_detectionoutput_negative_nms_threshold_keeps_one_per_class():
    loc, conf, priorbox = ssd_inputs(80, 4, seed=2)
    out = compare_with_ncnn("DetectionOutput", {0: 4, 1: -1.0, 4: 0.1}, [loc, conf, priorbox])
    assert len(out[0]) == len(np.unique(out[0][:, 0]))


def test_priorbox_into_detectionoutput_chain():
    """The SSD tail as models have it: PriorBox on a feature map feeding DetectionOutput."""
    feat_h, feat_w, per_cell, classes = 5, 6, 6, 4
    num_prior = feat_h * feat_w * per_cell
    text = ("7767517\n6 6\n"
            "Input feat 0 1 feat\nInput image 0 1 image\nInput loc 0 1 loc\nInput conf 0 1 conf\n"
            "PriorBox pb 2 1 feat image pb -23300=1,30.0 -23301=1,60.0 -23302=2,2.0,3.0 "
            "9=-233 10=-233 13=0.5 8=1\n"
            "DetectionOutput det 3 1 loc conf pb out0 0=4 1=0.45 2=100 4=0.2\n")
    loc, conf, _ = ssd_inputs(num_prior, classes, seed=11)
    inputs = [np.zeros((8, feat_h, feat_w), np.float32), np.zeros((3, 120, 150), np.float32), loc, conf]
    names = ["feat", "image", "loc", "conf"]
    want = _run_ncnn_detection(text, dict(zip(names, inputs)), ["out0"])
    got = run_vkncnn(text, b"", dict(zip(names, inputs)), ["out0"])
    assert got["out0"].shape == want["out0"].shape and len(want["out0"])
    assert rel_err(got["out0"], want["out0"]) <= 1e-4


# -- what ncnn cannot run ---------------------------------------------------------------------
@pytest.mark.parametrize("params", [{0: 4, 2: -1}, {0: 4, 3: -1}, {0: -1}])
def test_detectionoutput_rejects_params_that_crash_ncnn(params):
    # ncnn resizes a vector to the negative count and aborts; we refuse at load
    loc, conf, priorbox = ssd_inputs(10, 4, seed=0)
    with pytest.raises(vkncnn.ParamError):
        run_vkncnn(layer_param_text("DetectionOutput", params, 3), b"",
                   {"in0": loc, "in1": conf, "in2": priorbox}, ["out0"])


@pytest.mark.parametrize("case", ["short_loc", "short_conf", "flat_priorbox", "two_bottoms", "padded_channels"])
def test_detectionoutput_rejects_inputs_ncnn_would_misread(case):
    loc, conf, priorbox = ssd_inputs(10, 3, seed=0)
    inputs = {
        "short_loc": [loc[:-4], conf, priorbox],
        "short_conf": [loc, conf[:-1], priorbox],
        "flat_priorbox": [loc, conf, priorbox[0]],
        "two_bottoms": [loc, conf],
        # 10 channels of 3 floats: ncnn pads each channel to 4, a flat walk would read padding
        "padded_channels": [loc, conf.reshape(10, 1, 3), priorbox],
    }[case]
    with pytest.raises(vkncnn.ShapeError):
        run_vkncnn(layer_param_text("DetectionOutput", {0: 3, 4: 0.1}, len(inputs)), b"",
                   {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("nms", [0.45, 1.0])
def test_detectionoutput_empty_boxes_suppress_like_ncnn(nms):
    """Boxes of zero width give IoU 0/0: ncnn's build treats that as an overlap."""
    n = 6
    loc = np.zeros((n, 4), np.float32)
    loc[:, 2] = -2000.0  # exp underflows: zero width
    priors = np.array([[i * 0.1, 0.1, i * 0.1 + 0.05, 0.3] for i in range(n)], np.float32)
    priorbox = np.stack([priors.reshape(-1), np.tile([0.1, 0.1, 0.2, 0.2], n).astype(np.float32)])
    conf = np.zeros((n, 2), np.float32)
    conf[:, 1] = np.linspace(0.9, 0.5, n)
    out = compare_with_ncnn("DetectionOutput", {0: 2, 1: nms, 4: 0.1}, [loc.reshape(-1), conf.reshape(-1), priorbox])
    assert len(out[0]) == 1
