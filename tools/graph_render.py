"""A net's layer graph drawn: SVG (our own layered layout) or Graphviz DOT text.

Layers are boxes (type over name, coloured by family); every blob is an edge from its
producer to each of its consumers, labelled with the blob's name and, when shapes are
known, its shape. A net output (a blob nobody reads) ends in a small rounded tag below
its producer.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .graph_layout import layered_layout

FONT = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif"
CHAR_W = 7.0     # px per character of 12px text, an estimate
NAME_CHARS = 36  # longer names are cut in boxes (the tooltip keeps them whole)
BOX_H = 38.0
OUT_H = 22.0
MARGIN = 20.0
BLOB_CHARS = 22  # blob names are cut shorter: edge labels share the space between boxes
BLOB_CHAR_W = 5.8  # px per character of the 10px edge labels, an estimate
LABEL_ROOM = 150.0  # px right of the rightmost box kept for edge labels

FAMILIES = (  # (colour, types): the first family holding a type colours its boxes
    ("#dbe8f7", {"Convolution", "Convolution1D", "Convolution3D", "ConvolutionDepthWise", "ConvolutionDepthWise1D",
                 "ConvolutionDepthWise3D", "Deconvolution", "Deconvolution1D", "Deconvolution3D",
                 "DeconvolutionDepthWise", "DeconvolutionDepthWise1D", "DeconvolutionDepthWise3D",
                 "DeformableConv2D", "InnerProduct", "Gemm", "MatMul", "MultiHeadAttention", "SDPA",
                 "RNN", "LSTM", "GRU"}),
    ("#dff0d8", {"Pooling", "Pooling1D", "Pooling3D", "Interp", "Reduction"}),
    ("#fdebd3", {"ReLU", "PReLU", "Sigmoid", "TanH", "ELU", "SELU", "GELU", "HardSwish", "HardSigmoid", "Swish",
                 "Mish", "Clip", "Softmax", "BNLL", "Threshold", "Erf", "UnaryOp", "Power", "Exp", "Log"}),
    ("#efe3f5", {"BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "Normalize", "LRN", "Scale", "Bias",
                 "RMSNorm"}),
    ("#f7dede", {"BinaryOp", "Eltwise"}),
    ("#fff7c2", {"Input", "MemoryData"}),
)
DEFAULT_FILL = "#eeeeee"  # data movement and the rest


@dataclass
class GraphModel:
    name: str
    layers: list[tuple[str, str]]      # (type, name)
    edges: list[tuple[int, int, str, str]]  # (producer layer, consumer layer, blob name, shape or "")
    outputs: list[tuple[int, str, str]]     # (producer layer, blob name, shape or "")


def graph_of(net, shapes: dict[int, tuple] | None = None, name: str = "") -> GraphModel:
    """The layer graph of a loaded net; `shapes` (blob index -> shape) labels the blobs."""
    layers = net.layers()
    blobs = net.blobs()

    def shape(bi: int) -> str:
        dims = (shapes or {}).get(bi)
        return "x".join(map(str, dims)) if dims else ""

    edges, outputs = [], []
    for bi, blob in enumerate(blobs):
        if blob.producer < 0:
            continue
        for consumer in blob.consumers:
            edges.append((blob.producer, consumer, blob.name, shape(bi)))
        if not blob.consumers:
            outputs.append((blob.producer, blob.name, shape(bi)))
    return GraphModel(name, [(layer.type, layer.name) for layer in layers], edges, outputs)


def _fill(kind: str) -> str:
    return next((colour for colour, kinds in FAMILIES if kind in kinds), DEFAULT_FILL)


def _cut(text: str, chars: int = NAME_CHARS) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "\u2026"


def _blob_label(name: str, shape: str, chars: int = BLOB_CHARS) -> str:
    """The name cut to `chars`, the shape whole: what an edge shows."""
    return _cut(name, max(chars, 2)) + (f"  {shape}" if shape else "")


def _fitted_labels(labels: list[tuple[float, float, str, str]], right_edge: float) -> list[str]:
    """Edge labels as SVG text, each name cut to end before the next label on its line."""
    rows: dict[int, list] = {}
    for label in labels:
        rows.setdefault(round(label[1]), []).append(label)
    parts = []
    for row in rows.values():
        row.sort()
        for i, (x, y, name, shape) in enumerate(row):
            room = (row[i + 1][0] if i + 1 < len(row) else right_edge) - x - 8
            chars = min(BLOB_CHARS, int(room / BLOB_CHAR_W) - (len(shape) + 2 if shape else 0))
            parts.append(f'<text class="blob" x="{x:.1f}" y="{y:.1f}">{escape(_blob_label(name, shape, chars))}'
                         f'<title>{escape(name)} {escape(shape)}</title></text>')
    return parts


def _curve(points: list[tuple[float, float]]) -> str:
    """An SVG path through the points, each step a vertical S-curve."""
    (x, y), rest = points[0], points[1:]
    d = [f"M{x:.1f},{y:.1f}"]
    for nx, ny in rest:
        mid = (y + ny) / 2
        d.append(f"C{x:.1f},{mid:.1f} {nx:.1f},{mid:.1f} {nx:.1f},{ny:.1f}")
        x, y = nx, ny
    return " ".join(d)


def render_svg(graph: GraphModel) -> str:
    n = len(graph.layers)
    sizes = [(max(len(kind), len(_cut(name))) * CHAR_W + 20, BOX_H) for kind, name in graph.layers]
    out_labels = [_blob_label(name, shape) for _, name, shape in graph.outputs]
    sizes += [(len(text) * CHAR_W * 0.85 + 16, OUT_H) for text in out_labels]
    links = [(a, b) for a, b, _, _ in graph.edges] + [(a, n + i) for i, (a, _, _) in enumerate(graph.outputs)]
    layout = layered_layout(sizes, links)
    width, height = layout.width + 2 * MARGIN + LABEL_ROOM, layout.height + 2 * MARGIN + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="{-MARGIN:.0f} {-MARGIN - 24:.0f} {width:.0f} {height:.0f}">',
             f'<title>{escape(graph.name)}: {n} layers, {len(graph.edges)} edges</title>',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
             f'<style>text {{ font-family: {FONT}; font-size: 12px; fill: #222; }} '
             '.type { font-weight: bold; } .blob { font-size: 10px; fill: #555; paint-order: stroke; '
             'stroke: #fff; stroke-width: 3px; } .edge { fill: none; stroke: #888; stroke-width: 1.2; } '
             '.output-edge { fill: none; stroke: #888; stroke-width: 1.2; stroke-dasharray: 3 2; }</style>',
             f'<rect x="{-MARGIN:.0f}" y="{-MARGIN - 24:.0f}" width="100%" height="100%" fill="#fff"/>',
             f'<text x="0" y="-8" class="type">{escape(graph.name)} \u00b7 {n} layers</text>']
    out_degree, in_degree = [0] * n, [0] * n
    for a, b, _, _ in graph.edges:
        out_degree[a] += 1
        in_degree[b] += 1
    labelled: set[tuple[int, str, float]] = set()
    labels: list[tuple[float, float, str, str]] = []  # x, y, blob name, shape
    # edges first, boxes over them. A label goes by the lonelier end of its edge: under a
    # source that several edges leave it would collide with its siblings' labels, above a
    # target that several edges reach with theirs.
    for (a, b, name, shape), points in zip(graph.edges, layout.edges[:len(graph.edges)]):
        parts.append(f'<path class="edge" d="{_curve(points)}" marker-end="url(#arrow)">'
                     f'<title>{escape(name)} {escape(shape)}</title></path>')
        near_target = out_degree[a] > 1 and in_degree[b] <= out_degree[a]
        x, y = (points[-1][0], points[-1][1] - 7) if near_target else (points[0][0], points[0][1] + 13)
        if (a, name, round(x)) in labelled:
            continue  # one blob read twice by the same layer, or fanning out from one point
        labelled.add((a, name, round(x)))
        labels.append((x + 5, y, name, shape))
    parts += _fitted_labels(labels, layout.width + LABEL_ROOM)
    for points in layout.edges[len(graph.edges):]:
        parts.append(f'<path class="output-edge" d="{_curve(points)}" marker-end="url(#arrow)"/>')
    for i, ((kind, name), box) in enumerate(zip(graph.layers, layout.nodes)):
        x, y = box.x - box.w / 2, box.y
        parts.append(f'<g class="layer" data-index="{i}" data-type="{escape(kind)}" data-name="{escape(name)}">'
                     f'<title>{escape(kind)} {escape(name)}</title>'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="5" '
                     f'fill="{_fill(kind)}" stroke="#777"/>'
                     f'<text class="type" x="{box.x:.1f}" y="{y + 16:.1f}" text-anchor="middle">{escape(kind)}</text>'
                     f'<text x="{box.x:.1f}" y="{y + 31:.1f}" text-anchor="middle">{escape(_cut(name))}</text></g>')
    for (_, name, shape), text, box in zip(graph.outputs, out_labels, layout.nodes[n:]):
        parts.append(f'<g class="output" data-name="{escape(name)}"><title>output {escape(name)} {escape(shape)}'
                     f'</title><rect x="{box.x - box.w / 2:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" '
                     f'height="{box.h:.1f}" rx="11" fill="#fff" stroke="#999"/><text class="blob" x="{box.x:.1f}" '
                     f'y="{box.y + 15:.1f}" text-anchor="middle">{escape(text)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render_dot(graph: GraphModel) -> str:
    lines = [f"digraph {_dot_id(graph.name or 'net')} {{", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9, color="#888888"];']
    for i, (kind, name) in enumerate(graph.layers):
        lines.append(f"  L{i} [label={_dot_id(f'{kind}{chr(10)}{name}')}, fillcolor={_dot_id(_fill(kind))}];")
    for a, b, name, shape in graph.edges:
        lines.append(f"  L{a} -> L{b} [label={_dot_id(f'{name} {shape}'.strip())}];")
    for i, (a, name, shape) in enumerate(graph.outputs):
        lines.append(f"  O{i} [label={_dot_id(f'{name} {shape}'.strip())}, shape=oval, style=dashed];")
        lines.append(f"  L{a} -> O{i} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"
