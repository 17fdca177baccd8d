"""A profile as one self-contained HTML page: inline CSS and SVG, no script, no network.

Top to bottom: what was measured (model, device, path, date, totals), the time per layer
type (largest first, one colour per type, the legend of the chart below), and one bar
per layer in execution order with its time, share and output shape. Every bar has a
tooltip (SVG <title>) with the full name. The markup is well-formed XML, so tests and
other tools can read it back with any XML parser.
"""

from __future__ import annotations

import math
from html import escape

from .layer_profile import LayerTiming, Profile

# colours for the types that take the most time, in order; the rest share OTHER
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#8cd17d", "#499894", "#d37295")
OTHER = "#bab0ac"
ROW = 18          # px per bar row
CHAR_W = 6.9      # px per character of the 12px labels, an estimate (no script measures text here)
BAR_AREA = 460    # px of the longest bar
LABEL_CHARS = 48  # longer labels are cut, the tooltip keeps them whole

CSS = """
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #222;
       margin: 24px 32px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h1 small { font-weight: normal; color: #777; font-size: 15px; }
h2 { font-size: 16px; margin: 28px 0 6px; }
.meta { color: #555; margin: 0 0 14px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.card b { display: block; font-size: 20px; }
.card span { color: #666; font-size: 12px; }
.note { color: #666; font-size: 12px; max-width: 900px; }
svg text { font: 12px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; fill: #222; }
svg text.dim { fill: #777; }
svg text.axis { fill: #666; font-size: 11px; }
svg line.grid { stroke: #e4e4e4; }
"""


def _ms(us: float) -> str:
    ms = us / 1e3
    return f"{ms:.3f} ms" if ms < 10 else f"{ms:.2f} ms" if ms < 100 else f"{ms:.1f} ms"


def _dims(shapes: list[list[int]]) -> str:
    return " ".join("x".join(map(str, s)) for s in shapes if s) or "-"


def _cut(text: str, chars: int = LABEL_CHARS) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "\u2026"


def _nice_step(top: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 x 10^k) giving about `ticks` ticks up to `top`."""
    raw = max(top, 1e-9) / ticks
    scale = 10 ** math.floor(math.log10(raw))
    return next(m * scale for m in (1, 2, 5, 10) if m * scale >= raw * (1 - 1e-9))


def _colours(profile: Profile) -> dict[str, str]:
    return {kind: PALETTE[i] if i < len(PALETTE) else OTHER for i, (kind, _, _) in enumerate(profile.by_type())}


def _axis(x0: float, y: float, height: float, top_ms: float) -> tuple[list[str], float]:
    """Ticks in ms above the bars and grid lines through them; returns (svg parts, px per ms)."""
    step = _nice_step(top_ms)
    end = step * max(1, -(-top_ms // step))
    per_ms = BAR_AREA / end
    parts, tick = [], 0.0
    while tick <= end + 1e-9:
        x = x0 + tick * per_ms
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="{y + 4}" x2="{x:.1f}" y2="{y + 6 + height}"/>')
        parts.append(f'<text class="axis" x="{x:.1f}" y="{y}" text-anchor="middle">{tick:g}</text>')
        tick += step
    parts.append(f'<text class="axis" x="{x0 + end * per_ms + 24:.1f}" y="{y}">ms</text>')
    return parts, per_ms


def type_chart(profile: Profile, colours: dict[str, str]) -> str:
    rows = profile.by_type()
    total = profile.layers_total_us or 1.0
    label_w = max(len(k) for k, _, _ in rows) * CHAR_W + 16 if rows else 60
    width, height = label_w + BAR_AREA + 260, 28 + ROW * len(rows)
    parts, per_ms = _axis(label_w, 14, ROW * len(rows), max(us for _, _, us in rows) / 1e3 if rows else 1)
    for i, (kind, count, us) in enumerate(rows):
        y = 22 + i * ROW
        w = us / 1e3 * per_ms
        parts.append(f'<text x="{label_w - 8:.1f}" y="{y + 12}" text-anchor="end">{escape(kind)}</text>')
        parts.append(f'<rect class="type-bar" data-type="{escape(kind)}" x="{label_w:.1f}" y="{y + 2}" '
                     f'width="{w:.2f}" height="{ROW - 5}" fill="{colours[kind]}"><title>{escape(kind)}: '
                     f'{_ms(us)}, {count} layers</title></rect>')
        parts.append(f'<text x="{label_w + BAR_AREA + 110:.1f}" y="{y + 12}" text-anchor="end">{_ms(us)}</text>'
                     f'<text class="dim" x="{label_w + BAR_AREA + 124:.1f}" y="{y + 12}">'
                     f'{100 * us / total:.1f}% \u00b7 {count} layer{"s" if count != 1 else ""}</text>')
    return _svg(width, height, parts, "time per layer type")


def _layer_note(layer: LayerTiming, total: float) -> str:
    return layer.note() or f"{_ms(layer.median_us)}, {100 * layer.median_us / total:.1f}%"


def layer_chart(profile: Profile, colours: dict[str, str]) -> str:
    layers = profile.layers
    total = profile.layers_total_us or 1.0
    labels = [_cut(layer.label()) for layer in layers]
    label_w = max(map(len, labels)) * CHAR_W + 16 if labels else 60
    width, height = label_w + BAR_AREA + 330, 28 + ROW * len(layers)
    top_ms = max((layer.median_us for layer in layers), default=1.0) / 1e3
    parts, per_ms = _axis(label_w, 14, ROW * len(layers), top_ms)
    for i, (layer, label) in enumerate(zip(layers, labels)):
        y = 22 + i * ROW
        if i % 2:
            parts.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW}" fill="#f6f6f6"/>')
        w = layer.median_us / 1e3 * per_ms
        tip = (f"#{i + 1} {layer.label()} ({layer.runs_on}): {_layer_note(layer, total)}, output "
               f"{_dims(layer.shapes)}" + "".join(f"\n  {s}: {_ms(sorted(v)[len(v) // 2])}"
                                                 for s, v in layer.dispatches.items()))
        parts.append(f'<text x="{label_w - 8:.1f}" y="{y + 13}" text-anchor="end">{escape(label)}'
                     f'<title>{escape(layer.label())}</title></text>')
        parts.append(f'<rect class="bar" data-name="{escape(layer.name)}" data-type="{escape(layer.type)}" '
                     f'x="{label_w:.1f}" y="{y + 3}" width="{w:.2f}" height="{ROW - 6}" '
                     f'fill="{colours.get(layer.type, OTHER)}"><title>{escape(tip)}</title></rect>')
        x = label_w + BAR_AREA
        if layer.note():
            # in the empty bar's place: the value columns stay free
            parts.append(f'<text class="dim" x="{label_w + 6:.1f}" y="{y + 13}">{escape(layer.note())}</text>')
        else:
            parts.append(f'<text x="{x + 110:.1f}" y="{y + 13}" text-anchor="end">{_ms(layer.median_us)}</text>'
                         f'<text x="{x + 160:.1f}" y="{y + 13}" text-anchor="end">'
                         f'{100 * layer.median_us / total:.1f}%</text>')
        parts.append(f'<text class="dim" x="{x + 176:.1f}" y="{y + 13}">{escape(_dims(layer.shapes))}</text>')
    return _svg(width, height, parts, "time per layer in execution order")


def _svg(width: float, height: float, parts: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}">\n'
            + "\n".join(parts) + "\n</svg>")


def render_html(profile: Profile) -> str:
    colours = _colours(profile)
    path = {"cpu": "numpy path", "gpu": "Vulkan path"}[profile.path]
    ran = sum(1 for layer in profile.layers if not layer.note())
    cards = [(_ms(profile.run_median_us), "inference, median wall time"),
             (_ms(profile.layers_total_us), "sum of layer medians"),
             (f"{len(profile.layers)}", "layers run" if ran == len(profile.layers) else
              f"layers run ({len(profile.layers) - ran} without GPU work of their own)"),
             (f"{profile.loops}", f"timed inferences (+{profile.warmup_runs} warm-up)")]
    note = (f"Layer times: {profile.clock}, the median over {profile.loops} inferences. "
            + ("GPU times include the barriers and uploads before each dispatch; a fused layer runs inside "
               "the dispatch of the layer named, whose time includes it. The wall time also counts recording, "
               "submission and the download of the outputs." if profile.path == "gpu" else
               "The wall time also counts feeding the inputs and copying the outputs out."))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>vkncnn profile: {escape(profile.model)}</title>
<style>{CSS}</style>
</head>
<body>
<h1>{escape(profile.model)} <small>layer profile</small></h1>
<p class="meta">{escape(profile.device)} \u00b7 {path}, {escape(profile.precision)} \u00b7 {escape(profile.date)}</p>
<div class="cards">
{"".join(f'<div class="card"><b>{escape(v)}</b><span>{escape(k)}</span></div>' for v, k in cards)}
</div>
<h2>Time per layer type</h2>
{type_chart(profile, colours)}
<h2>Time per layer, in execution order</h2>
<p class="note">{escape(note)}</p>
{layer_chart(profile, colours)}
<p class="note">Made by vkncnn profile. Hover a bar for the layer's full name, output shape and dispatches.</p>
</body>
</html>
"""
