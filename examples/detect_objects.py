"""Object detection: letterbox, run, decode, non-maximum suppression, draw.

    python3 examples/detect_objects.py                          # a generated test image
    python3 examples/detect_objects.py photo.ppm -o boxes       # any image file
    python3 examples/detect_objects.py --param FastestDet.param --bin FastestDet.bin photo.jpg

The default model is FastestDet (tools/data/benchmark/FastestDet.param, 80 COCO classes,
352x352 input), one of ncnn's benchmark models. The repository ships its .param only, so
without --bin the script draws seeded random weights (`vkncnn randweights`): the pipeline
runs end to end, but the boxes it finds are noise. Give the trained FastestDet.bin (from
ncnn's model zoo or the FastestDet project) with --bin for real detections; any model
with FastestDet's single (85, H, W) output head decodes the same way.

FastestDet's head, per cell of the output grid: channel 0 the objectness (sigmoid applied
in the model), channels 1-4 the box (x and y offsets in cell units through tanh, width and
height as fractions of the image through sigmoid), channels 5-84 the class scores
(softmax applied in the model). A cell's score is class^0.4 x objectness^0.6.

Writes OUTPUT.txt (one box a line: class, score, x1, y1, x2, y2 in image pixels) and, when
Pillow is installed, OUTPUT.png with the boxes drawn. Binary .ppm/.pgm files are read
directly; other formats need Pillow (pip install pillow).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import vkncnn as ncnn
from vkncnn.tools.cmd_run import read_image
from vkncnn.tools.randweights import random_weights

DEFAULT_PARAM = Path(__file__).resolve().parent.parent / "tools" / "data" / "benchmark" / "FastestDet.param"
SIZE = 352  # the model's input side
PAD_VALUE = 114  # gray border of the letterbox, as YOLO-family training pipelines use


def load_net(param: Path, weights: Path | None, gpu: bool) -> ncnn.Net:
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param(str(param))
    if weights is not None:
        net.load_model(str(weights))
    else:  # seeded random weights, rescaled on one input so the head sees sensible values
        net.load_model(random_weights(str(param), seed=0, input_shapes={"in0": (3, SIZE, SIZE)}))
    return net


def letterbox(pixels: np.ndarray) -> tuple[ncnn.Mat, float, int, int]:
    """(h, w, 3) RGB uint8 -> the (3, SIZE, SIZE) input in [0, 1], the scale and the left/top padding."""
    h, w = pixels.shape[:2]
    scale = min(SIZE / w, SIZE / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    resized = ncnn.Mat.from_pixels_resize(np.ascontiguousarray(pixels), ncnn.Mat.PixelType.PIXEL_RGB, w, h, nw, nh)
    left, top = (SIZE - nw) // 2, (SIZE - nh) // 2
    canvas = np.full((3, SIZE, SIZE), PAD_VALUE, np.float32)
    canvas[:, top:top + nh, left:left + nw] = resized.numpy()
    mat = ncnn.Mat(canvas)
    mat.substract_mean_normalize([], [1 / 255.0] * 3)
    return mat, scale, left, top


def decode(head: np.ndarray, threshold: float) -> np.ndarray:
    """(85, gh, gw) output -> (n, 6) rows of class, score, x1, y1, x2, y2 in input pixels."""
    grid_h, grid_w = head.shape[1:]
    obj, box, classes = head[0], head[1:5], head[5:]
    cls = classes.argmax(axis=0)
    score = classes.max(axis=0) ** 0.4 * obj ** 0.6
    ys, xs = np.nonzero(score > threshold)
    cx = (xs + np.tanh(box[0, ys, xs])) / grid_w * SIZE
    cy = (ys + np.tanh(box[1, ys, xs])) / grid_h * SIZE
    bw = 1 / (1 + np.exp(-box[2, ys, xs])) * SIZE
    bh = 1 / (1 + np.exp(-box[3, ys, xs])) * SIZE
    return np.stack([cls[ys, xs], score[ys, xs], cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)


def iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Intersection over union of one (x1, y1, x2, y2) box with each row of others."""
    x1, y1 = np.maximum(box[0], others[:, 0]), np.maximum(box[1], others[:, 1])
    x2, y2 = np.minimum(box[2], others[:, 2]), np.minimum(box[3], others[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    return inter / np.maximum(area + areas - inter, 1e-9)


def nms(dets: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Greedy per-class non-maximum suppression: best first, drop same-class boxes overlapping a kept one."""
    dets = dets[np.argsort(-dets[:, 1], kind="stable")]
    keep = []
    for i, d in enumerate(dets):
        same = [k for k in keep if dets[k, 0] == d[0]]
        if not same or iou(d[2:], dets[same, 2:]).max() <= iou_threshold:
            keep.append(i)
    return dets[keep]


def detect(net: ncnn.Net, pixels: np.ndarray, threshold: float, iou_threshold: float) -> np.ndarray:
    """(n, 6) boxes in the image's pixels, best first."""
    mat, scale, left, top = letterbox(pixels)
    with net.create_extractor() as ex:
        ex.input("in0", mat)
        _, out = ex.extract("out0")
    dets = decode(out.numpy(), threshold)
    h, w = pixels.shape[:2]
    dets[:, [2, 4]] = np.clip((dets[:, [2, 4]] - left) / scale, 0, w)  # undo the letterbox
    dets[:, [3, 5]] = np.clip((dets[:, [3, 5]] - top) / scale, 0, h)
    return nms(dets, iou_threshold)  # on the boxes as they will be drawn


def test_scene(width: int = 480, height: int = 320) -> np.ndarray:
    """(h, w, 3) uint8: a few flat shapes on a gradient, so the example needs no image file."""
    y, x = np.mgrid[0:height, 0:width]
    img = np.stack([x * 255 // width, y * 255 // height, np.full_like(x, 96)], axis=-1).astype(np.uint8)
    img[40:200, 60:180] = (220, 40, 40)
    img[120:300, 260:440] = (40, 200, 60)
    img[((x - 330) ** 2 + (y - 90) ** 2) < 50 ** 2] = (30, 60, 230)
    return img


def save(dets: np.ndarray, pixels: np.ndarray, prefix: Path) -> None:
    lines = [f"{int(c)} {s:.4f} {x1:.1f} {y1:.1f} {x2:.1f} {y2:.1f}" for c, s, x1, y1, x2, y2 in dets]
    prefix.with_suffix(".txt").write_text("".join(line + "\n" for line in lines))
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        return
    img = Image.fromarray(pixels)
    draw = ImageDraw.Draw(img)
    for c, s, x1, y1, x2, y2 in dets:
        draw.rectangle([x1, y1, x2, y2], outline=(255, 255, 0), width=2)
        draw.text((x1 + 2, y1 + 2), f"{int(c)} {s:.2f}", fill=(255, 255, 0))
    img.save(prefix.with_suffix(".png"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image", nargs="?", type=Path, help="an image file (default: a generated test scene)")
    ap.add_argument("-o", "--output", type=Path, default=Path("detections"),
                    help="prefix of the files written: PREFIX.txt, PREFIX.png (default: detections)")
    ap.add_argument("--param", type=Path, default=DEFAULT_PARAM)
    ap.add_argument("--bin", type=Path, help="trained weights (default: seeded random weights)")
    ap.add_argument("--threshold", type=float, default=0.3, help="score threshold")
    ap.add_argument("--iou", type=float, default=0.45, help="IoU above which NMS drops a box")
    ap.add_argument("--gpu", action="store_true", help="the Vulkan path (default: numpy)")
    args = ap.parse_args(argv)

    if args.image is None:
        pixels = test_scene()
    else:
        pixels = read_image(args.image)
        pixels = np.repeat(pixels[..., None], 3, axis=-1) if pixels.ndim == 2 else pixels
    dets = detect(load_net(args.param, args.bin, args.gpu), pixels, args.threshold, args.iou)
    if args.bin is None:
        print("random weights: the boxes are noise (give --bin for real detections)")
    print(f"{len(dets)} boxes above {args.threshold}")
    for c, s, x1, y1, x2, y2 in dets[:10]:
        print(f"  class {int(c):2d}  score {s:.3f}  ({x1:.0f}, {y1:.0f}) - ({x2:.0f}, {y2:.0f})")
    save(dets, pixels, args.output)
    print(f"wrote {args.output.with_suffix('.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
