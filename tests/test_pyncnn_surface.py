"""vkncnn against the pinned pip `ncnn` as a Python module: every public name, and the
behaviour scripts rely on (Mat layout numbers, views, reference counts, batched Mats,
ParamDict, allocators, devices), compared value by value with the real binding."""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn

ncnn = pytest.importorskip("ncnn")


def _public(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_every_public_name_of_the_module_exists():
    missing = _public(ncnn) - _public(vkncnn) - {"ncnn"}  # `ncnn.ncnn` is the binary extension itself
    assert not missing


@pytest.mark.parametrize("make", [
    lambda m: m.Mat(3), lambda m: m.Mat(2, 3), lambda m: m.Mat(4, 5, 6), lambda m: m.Mat(7, 8, 9, 10),
    lambda m: m.Option(), lambda m: m.ParamDict(), lambda m: m.Blob(), lambda m: m.Layer(),
    lambda m: m.PoolAllocator(), lambda m: m.UnlockedPoolAllocator(), lambda m: m.DataReaderFromEmpty(),
], ids=["mat1", "mat2", "mat3", "mat4", "option", "paramdict", "blob", "layer", "pool", "unlocked", "reader"])
def test_every_public_member_exists(make):
    assert not _public(make(ncnn)) - _public(make(vkncnn))


def test_every_public_member_of_an_extractor_exists():
    text = "7767517\n1 1\nInput in0 0 1 in0\n"
    nets = []
    for m in (ncnn, vkncnn):
        net = m.Net()
        net.load_param_mem(text)
        nets.append(net)
    assert not _public(nets[0]) - _public(nets[1])
    assert not _public(nets[0].create_extractor()) - _public(nets[1].create_extractor())


@pytest.mark.parametrize("sizes", [(1,), (5,), (2, 3), (7, 3), (4, 5, 6), (3, 5, 7), (1, 1, 1), (7, 8, 9, 10),
                                   (3, 1, 2, 5)])
@pytest.mark.parametrize("elemsize", [1, 2, 4])
def test_layout_numbers_as_ncnn(sizes, elemsize):
    ours, theirs = vkncnn.Mat(*sizes, elemsize=elemsize), ncnn.Mat(*sizes, elemsize=elemsize)
    for attr in ("dims", "w", "h", "d", "c", "n", "elemsize", "elempack", "cstep"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert (ours.total(), ours.elembits(), ours.empty()) == (theirs.total(), theirs.elembits(), theirs.empty())
    s, t = ours.shape(), theirs.shape()
    assert (s.dims, s.w, s.h, s.d, s.c, s.empty()) == (t.dims, t.w, t.h, t.d, t.c, t.empty())


@pytest.mark.parametrize("shape", [(6,), (2, 3), (2, 3, 5), (2, 2, 3, 5)])
def test_mats_from_arrays_report_ncnn_layout(shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ours, theirs = vkncnn.Mat(a), ncnn.Mat(a)
    assert (ours.cstep, ours.total(), ours.refcount) == (theirs.cstep, theirs.total(), theirs.refcount)


def test_views_read_the_same_values_and_write_through():
    data = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    ours, theirs = vkncnn.Mat(data.copy()), ncnn.Mat(data.copy())
    pairs = [
        (ours.channel(1), theirs.channel(1)), (ours.channel(1).depth(2), theirs.channel(1).depth(2)),
        (ours.channel(0).depth_range(1, 2), theirs.channel(0).depth_range(1, 2)),
        (ours.channel_range(1, 1), theirs.channel_range(1, 1)),
        (ours.channel(1).depth(0).row_range(1, 2), theirs.channel(1).depth(0).row_range(1, 2)),
        (ours.channel(1).depth(0).range(2, 7), theirs.channel(1).depth(0).range(2, 7)),
    ]
    for mine, real in pairs:
        assert (mine.dims, mine.w, mine.h, mine.c) == (real.dims, real.w, real.h, real.c)
        np.testing.assert_array_equal(mine.numpy(), real.numpy())
    assert list(ours.channel(1).depth(2).row(3)) == list(theirs.channel(1).depth(2).row(3))
    ours.channel(1).depth(2).fill(-7.0)
    assert np.all(ours.numpy()[1, 2] == -7.0) and ours.numpy()[1, 1, 0, 0] == data[1, 1, 0, 0]


def test_reference_counts_as_ncnn():
    for m in (vkncnn, ncnn):
        a = m.Mat(3)
        b = m.Mat(a)
        assert (a.refcount, b.refcount) == (2, 2), m.__name__
        b.release()
        assert (a.refcount, b.refcount, b.dims) == (1, None, 0), m.__name__
        a.addref()
        assert a.refcount == 2
        assert m.Mat().refcount is None and m.Mat(3).clone().refcount == 1


@pytest.mark.parametrize("shape,batch_index", [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), -1),
                                               ((3, 5, 2, 7), 2), ((2, 3, 4, 5, 6), -2), ((2, 3, 4, 5, 6), 0)])
def test_batched_mats_as_ncnn(shape, batch_index):
    a = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    ours, theirs = vkncnn.Mat(a, batch_index=batch_index), ncnn.Mat(a, batch_index=batch_index)
    assert (ours.dims, ours.w, ours.h, ours.d, ours.c, ours.n) == (theirs.dims, theirs.w, theirs.h, theirs.d,
                                                                    theirs.c, theirs.n)
    np.testing.assert_array_equal(ours.numpy(batch_index=batch_index), a)
    np.testing.assert_array_equal(ours.numpy(batch_index=batch_index), theirs.numpy(batch_index=batch_index))
    for b in range(ours.n):
        np.testing.assert_array_equal(ours.batch(b).numpy(), theirs.batch(b).numpy())
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))  # item 0, as the buffer protocol gives
    twin = ours.clone()
    assert twin.n == ours.n and np.array_equal(twin.numpy(batch_index=0), ours.numpy(batch_index=0))


@pytest.mark.parametrize("shape,batch_index", [((3,), 0), ((2, 3), 2), ((2, 3), -3), ((2,) * 6, 0)])
def test_bad_batch_axes_are_refused_like_ncnn(shape, batch_index):
    a = np.zeros(shape, np.float32)
    with pytest.raises(RuntimeError):
        ncnn.Mat(a, batch_index=batch_index)
    with pytest.raises(vkncnn.MatShapeError):
        vkncnn.Mat(a, batch_index=batch_index)


def test_create_with_n_and_create_like():
    m = vkncnn.Mat()
    m.create(4, 5, 6, n=3)
    assert (m.dims, m.w, m.h, m.c, m.n) == (3, 4, 5, 6, 3)
    like = vkncnn.Mat()
    like.create_like(m, 2)
    assert (like.dims, like.w, like.h, like.c, like.n) == (3, 4, 5, 6, 2)


def test_paramdict_holds_a_mat_as_type_4():
    for m in (vkncnn, ncnn):
        pd = m.ParamDict()
        mat = m.Mat(3)
        mat.fill(2.5)
        pd.set(3, mat)
        got = pd.get(3, m.Mat())
        assert pd.type(3) == 4 and got.dims == 1 and got.w == 3 and got[1] == 2.5, m.__name__


def test_pool_allocator_reuses_blocks_within_the_ratio():
    pool = vkncnn.PoolAllocator()
    pool.set_size_compare_ratio(0.5)
    a = pool.fastMalloc(1000)
    base = a.base
    pool.fastFree(a)
    assert pool.fastMalloc(600).base is base  # 600 >= 0.5 * 1000: the freed block again
    assert pool.fastMalloc(400).base is not base
    with pytest.raises(vkncnn.ArgumentError):
        pool.fastFree(np.zeros(3, np.uint8))
    with pytest.raises(vkncnn.ArgumentError):
        pool.set_size_compare_ratio(1.5)


def test_extractor_has_no_public_constructor_and_blob_has_one():
    for m in (vkncnn, ncnn):
        with pytest.raises(TypeError, match="No constructor"):
            m.Extractor()
        blob = m.Blob()
        assert (blob.name, blob.producer, blob.consumer, blob.shape.dims) == ("", -1, -1, 0)


def _device_or_skip():
    try:
        if vkncnn.get_gpu_count() == 0:
            pytest.skip("no Vulkan device")
    except vkncnn.Error:
        pytest.skip("no Vulkan runtime")


@pytest.mark.gpu
def test_vulkan_device_gpu_info_and_allocators():
    _device_or_skip()
    dev = vkncnn.VulkanDevice(0)
    assert dev is vkncnn.get_gpu_device(0) and isinstance(dev, vkncnn.VulkanDevice)
    assert dev.info().api_version() > 0 and isinstance(dev.info(), vkncnn.GpuInfo)
    for cls in (vkncnn.VkBlobAllocator, vkncnn.VkWeightAllocator, vkncnn.VkStagingAllocator,
                vkncnn.VkWeightStagingAllocator):
        alloc = cls(dev)
        assert alloc.buffer_memory_type_index >= 0 and alloc.image_memory_type_index >= 0
        buf = alloc.fastMalloc(10 * 1024)
        assert isinstance(buf, vkncnn.VkBufferMemory) and buf.capacity >= 10 * 1024
        alloc.fastFree(buf)
        image = alloc.fastMalloc(4, 4, 3, 4, 1)
        if cls is vkncnn.VkWeightStagingAllocator:
            assert image is None
        else:
            assert isinstance(image, vkncnn.VkImageMemory) and (image.width, image.height, image.depth) == (4, 4, 3)
            alloc.fastFree(image)
        alloc.clear()


@pytest.mark.gpu
def test_net_reports_the_device_it_was_given():
    _device_or_skip()
    net = vkncnn.Net()
    assert net.vulkan_device() is None
    net.set_vulkan_device(0)
    assert net.vulkan_device() is vkncnn.get_gpu_device(0)
    other = vkncnn.Net()
    other.set_vulkan_device(vkncnn.get_gpu_device(0))
    assert other.vulkan_device() is vkncnn.get_gpu_device(0)
