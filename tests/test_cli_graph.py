"""`vkncnn graph`: one box per layer, one edge per blob consumer, shapes as real ncnn
gives them, DOT text, and the command's exit codes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import vkncnn
from vkncnn.tools import cli
from vkncnn.tools.benchmark_models import BENCHMARK_DIR
from vkncnn.tools.graph_layout import layered_layout

SQUEEZENET = str(BENCHMARK_DIR / "squeezenet.param")
SVG = "{http://www.w3.org/2000/svg}"


def loaded(param: str) -> vkncnn.Net:
    net = vkncnn.Net()
    net.load_param(param)
    return net


def consumer_edges(net: vkncnn.Net) -> list[tuple[str, str, str]]:
    """(producer, consumer, blob) for every consumer of every blob."""
    layers = net.layers()
    return sorted((layers[b.producer].name, layers[c].name, b.name) for b in net.blobs() for c in b.consumers)


def draw(tmp_path, *args: str) -> ET.Element:
    out = tmp_path / "graph.svg"
    assert cli.main(["graph", *args, "-o", str(out)]) == 0
    return ET.parse(out).getroot()


@pytest.mark.parametrize("model", ["squeezenet", "resnet50"])
def test_svg_has_a_box_per_layer_and_an_edge_per_consumer(tmp_path, model):
    param = str(BENCHMARK_DIR / f"{model}.param")
    net = loaded(param)
    svg = draw(tmp_path, param)
    boxes = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "layer"]
    assert [(g.get("data-type"), g.get("data-name")) for g in boxes] == [(la.type, la.name) for la in net.layers()]
    edges = [p for p in svg.iter(f"{SVG}path") if p.get("class") == "edge"]
    assert len(edges) == len(consumer_edges(net))
    assert sorted(p.find(f"{SVG}title").text.strip() for p in edges) == sorted(e[2] for e in consumer_edges(net))
    outputs = [g.get("data-name") for g in svg.iter(f"{SVG}g") if g.get("class") == "output"]
    assert outputs == net.output_names()
    # laid out top to bottom: every edge starts at its producer's bottom and goes down; no boxes overlap
    rects = [g.find(f"{SVG}rect") for g in boxes]
    spans = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height")) for r in rects]
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            xa, ya, wa, ha = spans[a]
            xb, yb, wb, hb = spans[b]
            assert xa + wa <= xb or xb + wb <= xa or ya + ha <= yb or yb + hb <= ya, (boxes[a].get("data-name"),
                                                                                     boxes[b].get("data-name"))
    for p in edges:
        ys = [float(v) for v in re.findall(r"[-\d.]+,([-\d.]+)", p.get("d"))]
        assert ys[-1] > ys[0]


def test_shapes_label_the_edges_as_real_ncnn_computes_them(tmp_path):
    import ncnn

    svg = draw(tmp_path, SQUEEZENET, "--shape", "data=3,67,67")
    titles = {p.find(f"{SVG}title").text.split()[0]: p.find(f"{SVG}title").text.split()[1]
              for p in svg.iter(f"{SVG}path") if p.get("class") == "edge"}
    net = ncnn.Net()
    net.load_param(SQUEEZENET)
    weights = tmp_path / "zeros.bin"
    weights.write_bytes(b"\0" * 5_000_000)
    net.load_model(str(weights))
    ex = net.create_extractor()
    ex.input("data", ncnn.Mat(np.zeros((3, 67, 67), np.float32)))
    for blob in ("conv1_relu_conv1", "pool3", "fire9/concat_drop9"):
        assert titles[blob] == "x".join(map(str, np.array(ex.extract(blob)[1]).shape))


def test_dot_output(tmp_path, capsys):
    out = tmp_path / "graph.dot"
    assert cli.main(["graph", SQUEEZENET, "-o", str(out)]) == 0  # the suffix picks the format
    text = out.read_text()
    net = loaded(SQUEEZENET)
    assert text.startswith('digraph "squeezenet" {') and text.rstrip().endswith("}")
    assert len(re.findall(r"^  L\d+ \[label=", text, re.M)) == len(net.layers())
    assert len(re.findall(r"^  L\d+ -> L\d+ ", text, re.M)) == len(consumer_edges(net))
    assert cli.main(["graph", SQUEEZENET, "--format", "dot"]) == 0  # to stdout
    assert capsys.readouterr().out.count(" -> ") == text.count(" -> ")


def test_layout_points_every_edge_down_and_routes_long_ones():
    sizes = [(40.0, 20.0)] * 4
    layout = layered_layout(sizes, [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3)])
    ys = [node.y for node in layout.nodes]
    assert ys == sorted(ys) and len(set(ys)) == 4
    assert [len(points) for points in layout.edges] == [2, 2, 3, 2, 4]  # one bend per rank crossed


@pytest.mark.parametrize("argv, status, message", [
    (["graph", "/no/such.param"], 1, "no such file"),
    (["graph", SQUEEZENET, "--shape", "nope=3,8,8"], 1, "not an input"),
    (["graph", SQUEEZENET, "--format", "png"], 2, "invalid choice"),
])
def test_graph_errors(argv, status, message, capsys):
    if status == 2:
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        assert stop.value.code == 2
    else:
        assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
