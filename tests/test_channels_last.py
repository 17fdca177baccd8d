"""Channels-last blobs on the numpy path (vkncnn/channels_last.py): which convolutions
write channels-last, and small graphs where such blobs flow through depthwise, 1x1,
elementwise and other layers, against real ncnn; what leaves the net is C-contiguous."""

import numpy as np
import pytest

import vkncnn
from tests.oracle import bin_bytes, rand, raw, rel_err, run_ncnn, tagged
from vkncnn.testing import param_entries


def conv(name, bottom, top, inc, outc, kernel=1, group=1, stride=1, pad=0, act=1, extra=None):
    params = {0: outc, 1: kernel, 3: stride, 4: pad, 5: 1, 6: outc * inc // group * kernel * kernel, 9: act,
              **(extra or {})}
    kind = "Convolution"
    if group > 1:
        kind, params[7] = "ConvolutionDepthWise", group
    weights = [tagged(rand(outc, inc // group, kernel, kernel, seed=outc + inc) / np.sqrt(inc // group * kernel ** 2)),
               raw(rand(outc, seed=outc))]
    return f"{kind} {name} 1 1 {bottom} {top} {param_entries(params)}", weights


def graph(lines):
    """(param text, weights .bin) for [(line, weights)]: blob counts from the tops."""
    text_lines = ["Input in0 0 1 in0"] + [line for line, _ in lines]
    tops = sum(int(line.split()[3]) for line in text_lines)
    text = f"7767517\n{len(text_lines)} {tops}\n" + "\n".join(text_lines) + "\n"
    return text, bin_bytes([w for _, ws in lines for w in ws])


def layer(line):
    return line, []


# conv1 (3x3, im2col) -> Split -> [HardSwish | BinaryOp] -> depthwise s2 -> 1x1 -> Split
# -> {depthwise s1 -> 1x1 -> residual Eltwise -> 1x1 -> depthwise 5x5 -> Pooling | Concat}
MOBILE_BLOCKS = [
    conv("stem", "in0", "a", 3, 16, kernel=3, stride=2, pad=1, act=0),
    layer("Split sp0 1 2 a a0 a1"),
    layer("HardSwish hs 1 1 a0 b 0=0.1666667 1=0.5"),
    layer("BinaryOp mul 2 1 a1 b c 0=2"),
    conv("dw1", "c", "d", 16, 16, kernel=3, group=16, stride=2, pad=1),
    conv("pw1", "d", "e", 16, 24, act=0),
    layer("Split sp1 1 3 e e0 e1 e2"),
    conv("expand", "e0", "f", 24, 48),
    conv("dw2", "f", "g", 48, 48, kernel=3, group=48, pad=1),
    conv("linear", "g", "h", 48, 24, act=0),
    layer("Eltwise add 2 1 e1 h i 0=1"),
    conv("expand2", "i", "j", 24, 40),
    conv("dw3", "j", "k", 40, 40, kernel=5, group=40, pad=2),
    layer("Pooling gap 1 1 k out0 0=1 4=1"),
    layer("Concat cat 2 1 e2 k out1 0=0"),
]


def test_plan_marks_producers_of_depthwise_inputs():
    text, _ = graph(MOBILE_BLOCKS)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    marked = {layer.name for layer in net.layers() if getattr(layer, "channels_last_top", False)}
    # stem and expand feed a depthwise (stem through HardSwish and BinaryOp); linear
    # through the Eltwise and expand2; pw1's output also feeds the Concat, which vetoes
    assert marked == {"stem", "expand", "linear", "expand2"}


@pytest.mark.parametrize("threads", [1, 2])
def test_graph_matches_ncnn(threads):
    text, weights = graph(MOBILE_BLOCKS)
    x = rand(3, 45, 38, seed=5)
    want = run_ncnn(text, weights, {"in0": x}, ["out0", "out1"])
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.num_threads = threads
    net.load_param_mem(text)
    net.load_model(weights)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(x))
        for name in ("out0", "out1"):
            got = ex.extract(name)[1].numpy()
            assert got.flags.c_contiguous
            assert rel_err(got, want[name]) <= 1e-4, name


def test_intermediate_blob_comes_out_c_contiguous():
    text, weights = graph(MOBILE_BLOCKS)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    net.load_model(weights)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(rand(3, 32, 32)))
        for name in ("a", "d", "f", "g"):  # written channels-last inside the net
            assert ex.extract(name)[1].numpy().flags.c_contiguous


@pytest.mark.parametrize("kernel,stride,dilation", [(3, 1, 1), (3, 2, 1), (5, 2, 1), (3, 1, 2), (2, 3, 1), (3, 2, 2)])
@pytest.mark.parametrize("pads", [{4: 1}, {4: -233}, {4: -234}, {4: 1, 15: 0, 14: 2, 16: 1}, {}])
def test_depthwise_on_channels_last_input(kernel, stride, dilation, pads):
    """The depthwise kernel reading a channels-last blob (from a 1x1 convolution), every
    geometry its tap planes handle, with pad_value."""
    if kernel < stride and pads.get(4, 0) < 0:
        pytest.skip("ncnn corrupts memory on SAME padding with kernel < stride")
    extent = dilation * (kernel - 1) + 1
    text, weights = graph([conv("pw", "in0", "a", 5, 12),
                           conv("dw", "a", "out0", 12, 12, kernel=kernel, group=12, stride=stride, pad=0, act=3,
                                extra={2: dilation, 18: 0.3, 10: [0.0, 6.0], **pads})])
    x = rand(5, extent + 9, extent + 6, seed=kernel + stride)
    want = run_ncnn(text, weights, {"in0": x}, ["out0"])["out0"]
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    net.load_model(weights)
    assert net.layers()[1].channels_last_top
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(x))
        got = ex.extract("out0")[1].numpy()
    assert got.shape == want.shape
    assert rel_err(got, want) <= 1e-4
