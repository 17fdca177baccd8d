"""GPU path of the shape, pooling and resize layers against their numpy path.

Every case goes through vkncnn.testing.test_layer: fp32 (1e-4) and fp16 storage (1e-2),
each with pack1 and pack4. The shape layers move data through shaders/gather.comp (or
views of the same buffer); Pooling, Interp, Padding and Dropout have their own shaders.
Every case first checks that the layer really takes the GPU path (support_vulkan), so a
silent numpy fallback cannot pass for a shader. Validation messages fail any test
(tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from vkncnn import testing
from vkncnn.errors import GpuError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.gpu.ops.data_movement import _lift, _merge_axes, _Side
from vkncnn.gpu.vulkan import instance
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.net import Net

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0,
                                 reason=f"no Vulkan device ({instance.unavailable_reason()})")]

SHAPES = [(7,), (12,), (5, 6), (8, 5), (3, 5, 6), (8, 4, 5), (24, 3, 2), (1, 3, 5), (4, 3, 4, 5), (3, 2, 3, 4)]


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def gpu_layer_for(type_name, params, n_inputs, n_outputs=1):
    """The layer as a .param with these params makes it (numpy net: no device work)."""
    net = Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(testing.layer_param_text(type_name, params, n_inputs, n_outputs))
    return net.layers()[-1]


def check(type_name, params, inputs, weights=(), n_outputs=1):
    assert gpu_layer_for(type_name, params, len(inputs), n_outputs).support_vulkan, "not on the GPU path"
    report = testing.test_layer(type_name, params, list(weights), list(inputs), n_outputs=n_outputs)
    assert report.ok, str(report)


def ids(shape):
    return "x".join(map(str, shape))


# -- the strided copy description (pure Python) ------------------------------------------------------
def _side(shape, elempack, base, strides):
    return _Side(VkMat.for_numpy_shape(shape, elempack, 4, None), base, strides)


def test_lift_moves_whole_items_only_when_lanes_travel_together():
    # channel slice [4, 12) of (16, 3, 5) into (8, 3, 5): aligned -> vec4 items
    ext, s, d = [8, 3, 5], [15, 5, 1], [15, 5, 1]
    lifted = _lift(ext, _side((16, 3, 5), 4, 4 * 15, s), s, _side((8, 3, 5), 4, 0, d), d)
    assert lifted is not None
    assert lifted[0] == [2, 3, 5] and lifted[1] == (15, [15, 5, 1])
    # starting at channel 2 splits items: scalar copy
    assert _lift(ext, _side((16, 3, 5), 4, 2 * 15, s), s, _side((8, 3, 5), 4, 0, d), d) is None
    # a channel shuffle moves channels across lanes: scalar copy
    ext, s, d = [2, 4, 15], [15, 30, 1], [60, 15, 1]
    assert _lift(ext, _side((8, 3, 5), 4, 0, s), s, _side((8, 3, 5), 4, 0, d), d) is None
    # pack1 on one side: scalar copy
    assert _lift([8], _side((8,), 1, 0, [1]), [1], _side((8,), 4, 0, [1]), [1]) is None


def test_merge_axes_fuses_contiguous_runs():
    assert _merge_axes([2, 3, 4], [12, 4, 1], [12, 4, 1]) == ([24], [1], [1])
    assert _merge_axes([2, 3, 4], [1, 2, 8], [12, 4, 1]) == ([2, 3, 4], [1, 2, 8], [12, 4, 1])
    assert _merge_axes([2, 3, 4], [1, 8, 2], [12, 4, 1]) == ([2, 12], [1, 2], [12, 1])


def test_views_share_and_release_once():
    from vkncnn.gpu.vulkan.allocator import VkBlobAllocator
    alloc = VkBlobAllocator(instance.get_gpu_device())
    base = VkMat.for_numpy_shape((8, 3, 5), 4, 4, alloc)
    a = gather.view(base, (8, 15))        # same packing axis and positions per item
    b = gather.view(base, (8, 3, 5))
    assert a.data is base.data and b.data is base.data and base.data.refcount == 3
    with pytest.raises(GpuError):
        gather.view(base, (120,))          # pack4 bytes differ from a flat order
    assert alloc.bytes_in_use >= 8 * 15 * 4
    for m in (a, base):                    # any order; the buffer goes back with the last one
        m.release()
        m.release()                        # a second release of the same VkMat is a no-op
        assert alloc.bytes_in_use >= 8 * 15 * 4 and b.data.refcount >= 1
    b.release()
    assert alloc.bytes_in_use == 0
    alloc.clear()


# -- data movers --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_permute(shape):
    x = rand(*shape)
    for order in range({1: 1, 2: 2, 3: 6, 4: 24}[len(shape)]):
        check("Permute", {0: order}, [x])


@pytest.mark.parametrize("shape", [(8, 1, 6), (1, 14, 64), (14, 1, 64), (4, 1, 1, 6), (1, 8, 3, 1)], ids=ids)
def test_permute_moving_axes_of_size_one(shape):
    """Orders that move only axes of size 1 keep C order: the GPU path gives a view where the
    bytes agree (a decode step's one token), a copy where packing or channel padding differ."""
    x = rand(*shape)
    for order in range({3: 6, 4: 24}[len(shape)]):
        check("Permute", {0: order}, [x])


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_concat(shape):
    nd = len(shape)
    for axis in range(-nd, nd):
        other = list(shape)
        other[axis] = 4 if shape[axis] != 4 else 3
        check("Concat", {0: axis}, [rand(*shape), rand(*other, seed=1), rand(*shape, seed=2)])
    check("Concat", {0: 0}, [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_slice(shape):
    x = rand(*shape)
    for axis in range(-len(shape), len(shape)):
        n = shape[axis]
        if n >= 2:
            check("Slice", {1: axis, 0: [-233, -233]}, [x], n_outputs=2)
        if n >= 3:
            check("Slice", {1: axis, 0: [1, -233, 1]}, [x], n_outputs=3)
            check("Slice", {1: axis, 2: [1, -1]}, [x], n_outputs=3)
    check("Slice", {0: [-233]}, [x])  # one piece: the whole blob, a view


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_crop_slices(shape):
    x = rand(*shape)
    nd = len(shape)
    if shape[-1] > 2:
        check("Crop", {9: [1], 10: [-1], 11: [-1]}, [x])
    if min(shape) > 1:
        check("Crop", {9: [1] * nd, 10: [-233] * nd}, [x])
    if shape[0] >= 8:
        check("Crop", {9: [4], 10: [8], 11: [0]}, [x])  # whole items along a packed axis
    check("Crop", {9: [0] * nd, 10: [-233] * nd}, [x])  # everything: a view


def test_crop_other_forms():
    x = rand(12, 5, 6)
    check("Crop", {0: 1, 1: 1, 2: 4, 3: 3, 4: 2, 5: 4}, [x])                # offsets + sizes
    check("Crop", {0: 1, 1: 2, 2: 3, 3: -233, 4: -233, 5: -233}, [x])       # -233: the rest
    check("Crop", {0: 1, 1: 1, 2: 1, 3: -233, 4: -233, 5: -233, 6: 1, 7: 2, 8: 3}, [x])  # tail offsets
    check("Crop", {0: 1, 1: 1}, [x, rand(3, 2, 3)])                         # reference blob
    check("Crop", {0: 1, 1: 1, 13: 1, 2: 4}, [rand(12, 4, 5, 6), rand(4, 2, 2, 3)])
    check("Crop", {19: '"1,1"', 20: '"-1,//(0h,1)"', 21: '"0,1"'}, [x])       # expressions
    check("Crop", {0: 1, 1: 1}, [rand(5, 6), rand(3, 4)])


def test_crop_box_from_data_runs_on_the_cpu_inside_the_gpu_graph():
    # woffset = -233: the box is the 2nd input's int32 data; the output shape depends on
    # device data, so this form stays on the numpy path (inside the GPU graph)
    assert not gpu_layer_for("Crop", {0: -233}, 2).support_vulkan
    assert gpu_layer_for("Crop", {0: 1}, 2).support_vulkan
    box = np.array([1, 1, 0, 3, 2, 4], np.int32)
    x = rand(8, 5, 6)
    got = testing.run_layer("Crop", {0: -233}, [], [x, box.view(np.float32)], gpu=True, packing=True)[0]
    np.testing.assert_array_equal(got, x[0:4, 1:3, 1:4])


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_reshape_flatten_squeeze_expanddims(shape):
    x = rand(*shape)
    n = int(np.prod(shape))
    check("Flatten", {}, [x])
    check("Reshape", {0: -1}, [x])
    check("Reshape", {0: 1, 1: -1}, [x])
    if n % 4 == 0:
        check("Reshape", {0: -1, 1: 1, 2: 4}, [x])
        check("Reshape", {0: 1, 1: -1, 11: 1, 2: 4}, [x])
        check("Reshape", {0: -1, 1: 4}, [x])
    check("Reshape", {6: '"0c,-1"' if len(shape) >= 3 else '"-1"'}, [x])
    check("ExpandDims", {3: [0]}, [x])
    check("ExpandDims", {3: [-1]}, [x])
    check("Squeeze", {0: 1, 1: 1, 11: 1, 2: 1}, [x])
    check("Squeeze", {3: [0]}, [rand(*((1,) + shape[1:]))])


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_tile(shape):
    x = rand(*shape)
    for axis in range(len(shape)):
        check("Tile", {0: axis, 1: 3}, [x])
    check("Tile", {2: [2, 1, 3][:len(shape)]}, [x])
    check("Tile", {2: [2, 3, 1, 2]}, [x])


@pytest.mark.parametrize("shape", [(8, 3, 5), (12, 2, 2), (6, 3, 4), (24, 1, 3), (16, 2, 3, 4), (3, 4, 5)], ids=ids)
def test_channel_moves(shape):
    x = rand(*shape)
    c = shape[0]
    for group in (1, 2, 3, 4, 8):
        if c % group == 0:
            check("ShuffleChannel", {0: group}, [x])
            check("ShuffleChannel", {0: group, 1: 1}, [x])
    for r in (1, 2):
        if c % (r * r) == 0:
            check("PixelShuffle", {0: r, 1: 0}, [x])
            check("PixelShuffle", {0: r, 1: 1}, [x])
    for s in (1, 2):
        if min(shape[-2:]) >= s:
            check("Reorg", {0: s, 1: 0}, [x])
            check("Reorg", {0: s, 1: 1}, [x])


def test_reorg_odd_sizes_and_2d():
    check("Reorg", {0: 2}, [rand(8, 5, 7)])
    check("Reorg", {0: 3, 1: 1}, [rand(4, 7, 6)])
    check("Reorg", {0: 2}, [rand(8, 6)])  # one channel, rows packed in pack4


@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_pass_through_layers(shape):
    x = rand(*shape)
    check("Split", {}, [x], n_outputs=3)
    check("Noop", {}, [x])
    check("Dropout", {}, [x])
    check("Dropout", {0: 0.5}, [x])
    check("Dropout", {0: -2.5}, [x])


@pytest.mark.parametrize("shape", [(7,), (8,), (4, 5), (3, 4, 5), (8, 4, 5), (4, 2, 4, 5)], ids=ids)
def test_memorydata(shape):
    keys = {1: [0], 2: [0, 1], 3: [0, 1, 2], 4: [0, 1, 11, 2]}[len(shape)]
    params = dict(zip(keys, reversed(shape)))
    check("MemoryData", params, [], weights=[rand(*shape)])


# -- pooling ------------------------------------------------------------------------------------
POOL_SHAPES = [(4, 7, 9), (3, 8, 8), (12, 5, 6), (8, 3, 6, 5), (9, 11), (16, 7, 7), (1, 5, 5)]
POOL_PARAMS = [
    {1: 3, 2: 2, 3: 1},                                   # full (ceil) mode with pads
    {1: 2, 11: 3, 2: 2, 12: 1, 5: 1},                     # valid, rectangular
    {1: 3, 2: 2, 3: 1, 14: 0, 13: 2, 15: 1},              # per-side pads
    {1: 3, 2: 2, 5: 2},                                   # SAME_UPPER
    {1: 3, 2: 3, 5: 3},                                   # SAME_LOWER
    {1: 4, 2: 2, 5: 2, 6: 1},                             # count_include_pad
    {1: 2, 2: 3, 5: 2},                                   # kernel < stride: negative SAME pad
    {1: 3, 2: 1, 3: 1, 6: 1},
    {1: 3, 2: 2, 3: 1, 13: 2, 5: 2},                      # SAME with param pads (ncnn's avg quirk)
    {1: 5, 11: 2, 2: 1, 12: 2, 3: 2, 5: 3},
    {7: 1, 8: 3, 18: 2},                                  # adaptive
    {7: 1, 8: 4, 18: 5},
    {4: 1},                                               # global
]


@pytest.mark.parametrize("shape", POOL_SHAPES, ids=ids)
@pytest.mark.parametrize("pooling_type", [0, 1])
def test_pooling(shape, pooling_type):
    x = rand(*shape)
    for params in POOL_PARAMS:
        check("Pooling", {0: pooling_type, **params}, [x])


@pytest.mark.parametrize("pooling_type", [0, 1])
def test_global_pooling_1d_2d_and_large(pooling_type):
    for shape in [(13,), (8,), (8, 5), (7, 3), (24, 30, 31)]:
        check("Pooling", {0: pooling_type, 4: 1}, [rand(*shape)])


# -- interp ---------------------------------------------------------------------------------------
INTERP_SHAPES = [(4, 7, 9), (3, 5, 6), (12, 5, 6), (8, 3, 6, 5), (9, 11), (8, 11), (13,), (8,), (3, 2, 2), (1, 1, 1)]
INTERP_PARAMS = [
    {1: 2.0, 2: 1.5},
    {3: 5, 4: 4},
    {3: 3, 4: 13},
    {1: 1.0, 2: 1.0},                     # same size: a view
]


@pytest.mark.parametrize("shape", INTERP_SHAPES, ids=ids)
@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_interp(shape, resize_type):
    x = rand(*shape)
    for align in (0, 1):
        for params in INTERP_PARAMS:
            check("Interp", {0: resize_type, 6: align, **params}, [x])
        if len(shape) > 1 and min(shape[-2:]) >= 2:
            check("Interp", {0: resize_type, 6: align, 1: 0.5, 2: 0.7}, [x])  # downscale by scale
        check("Interp", {0: resize_type, 6: align, 5: 1}, [x, rand(2, 4, 3)])  # size from a 2nd blob
    check("Interp", {0: resize_type, 9: '"*(0w,2),+(0h,3)"'}, [x])
    check("Interp", {0: resize_type, 9: '"1w,1h"'}, [x, rand(2, 11, 4)])


# -- padding --------------------------------------------------------------------------------------
PAD_SHAPES = [(7,), (8,), (5, 6), (8, 5), (3, 5, 6), (8, 4, 5), (12, 3, 4), (4, 3, 4, 5), (3, 2, 3, 4)]
PAD_PARAMS = [
    {0: 1, 1: 2, 2: 1, 3: 2, 5: 1.5},
    {2: 3, 3: 1, 5: -2.0},
    {0: 1, 1: 2, 2: 1, 3: 1, 7: 1, 8: 2, 5: 0.5},         # channel (3-D) / depth (4-D) pads
    {7: 4, 8: 4, 5: 0.5},                                 # whole items along the channel axis
    {0: 4, 1: 4},                                         # whole items along packed rows (2-D)
    {2: 1, 3: 1},
]


@pytest.mark.parametrize("shape", PAD_SHAPES, ids=ids)
@pytest.mark.parametrize("pad_type", [0, 1, 2])
def test_padding(shape, pad_type):
    x = rand(*shape)
    for params in PAD_PARAMS:
        pads = [params.get(k, 0) for k in (0, 1, 2, 3)]
        extent = {1: [1, 1, shape[-1], shape[-1]]}.get(len(shape)) or [shape[-2]] * 2 + [shape[-1]] * 2
        if pad_type == 2 and any(p >= n for p, n in zip(pads, extent)):
            continue  # reflect needs pads < extent (the CPU path refuses too)
        if pad_type == 2 and len(shape) >= 3 and max(params.get(7, 0), params.get(8, 0)) >= shape[-3]:
            continue
        check("Padding", {4: pad_type, **params}, [x])


@pytest.mark.parametrize("shape", [(3, 5, 6), (8, 4, 5), (4, 2, 3, 4), (8, 5)], ids=ids)
def test_padding_per_channel_values(shape):
    values = rand(shape[0] + 8, seed=7)
    for params in ({0: 1, 1: 1, 2: 1, 3: 1, 7: 1, 8: 2}, {0: 1, 2: 2, 7: 4, 8: 4}, {0: 1, 1: 1}):
        check("Padding", {4: 0, 6: len(values), **params}, [rand(*shape)], weights=[values])


# -- graphs: views flowing between layers, released by light mode ---------------------------------
GRAPH = """7767517
9 12
Input in0 0 1 in0
Split split 1 3 in0 a b c
Reshape flat 1 1 a fa 0=-1
Reshape back 1 1 fa ra 0=6 1=5 2=8
Noop keep 1 1 b nb
Concat cat 3 1 ra nb c cat 0=0
Slice cut 1 2 cat s0 s1 -23300=2,4,-233
Permute perm 1 1 s1 p 0=3
Padding pad 1 1 s0 out0 0=1 1=1 4=1
"""


@pytest.mark.parametrize("variant", ["fp32-pack4", "fp32-pack1", "fp16-pack4"])
def test_views_through_a_graph(variant):
    from vkncnn.mat import Mat
    from vkncnn.net import Net

    x = rand(8, 5, 6)
    fp16 = variant.startswith("fp16")
    results = []
    for gpu in (False, True):
        net = Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16 and gpu
        net.opt.use_packing_layout = variant.endswith("pack4")
        net.opt.lightmode = True
        net.load_param_mem(GRAPH)
        net.load_model(b"")
        got = []
        for _ in range(2):  # the second extract replays the recorded plan
            with net.create_extractor() as ex:
                ex.input("in0", Mat(x))
                got.append([ex.extract(name)[1].numpy() for name in ("out0", "p")])
        net.clear()
        results.append(got)
    tol = 1e-2 if fp16 else 1e-4
    for cpu_out, gpu_run in zip(results[0][0], results[1][0]):
        assert cpu_out.shape == gpu_run.shape
        assert np.max(np.abs(cpu_out - gpu_run)) <= tol
    for first, again in zip(results[1][0], results[1][1]):
        np.testing.assert_array_equal(first, again)


def test_more_invocations_than_one_grid_row():
    # > 65536 invocations: the flat dispatch wraps into a second row of the grid
    x = rand(8, 90, 100)
    check("Permute", {0: 1}, [x])
    check("Concat", {0: 1}, [x, x])
    check("Padding", {0: 1, 1: 1, 4: 2}, [x])
    check("Dropout", {0: 0.5}, [x])
    check("Pooling", {0: 1, 4: 1}, [x])
