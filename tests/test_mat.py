"""Mat: pyncnn's shapes and constructors, but an owned float32 copy of whatever array it is
given (strides and dtypes respected, never aliasing the user's array, valid after the array
is gone), and clear MatErrors for what cannot be a Mat."""

import gc

import numpy as np
import pytest

import vkncnn

ncnn = pytest.importorskip("ncnn")


def fields(m) -> tuple:
    return (m.dims, m.w, m.h, m.d, m.c, m.elemsize, m.elempack, m.empty(), len(m))


# -- shapes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(7,), (5, 13), (3, 6, 7), (12, 2, 3, 5), (1,), (1, 1, 1), (24, 1, 1, 1)])
def test_numpy_shapes_map_to_dims_like_pyncnn(shape):
    a = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    m = vkncnn.Mat(a)
    assert fields(m) == fields(ncnn.Mat(a))
    assert m.numpy().shape == shape
    np.testing.assert_array_equal(m.numpy(), a)


@pytest.mark.parametrize("args", [(), (5,), (5, 3), (5, 3, 2), (5, 3, 4, 2), ((5, 3),), ((5, 3, 2),),
                                  ((5, 3, 4, 2),), (0,), (0, 3), (4, 0, 2)])
def test_size_constructors_match_pyncnn(args):
    m = vkncnn.Mat(*args)
    assert fields(m) == fields(ncnn.Mat(*args))
    assert not np.any(m.numpy())


@pytest.mark.parametrize("shape", [(0,), (2, 0), (3, 0, 2)])
def test_empty_arrays_keep_their_dims_like_pyncnn(shape):
    a = np.zeros(shape, np.float32)
    assert fields(vkncnn.Mat(a)) == fields(ncnn.Mat(a))


@pytest.mark.parametrize("elemsize,dtype", [(4, np.float32), (2, np.float16), (1, np.int8)])
def test_elemsize_selects_storage(elemsize, dtype):
    m = vkncnn.Mat(5, 3, elemsize=elemsize)
    assert m.elemsize == ncnn.Mat(5, 3, elemsize=elemsize).elemsize
    assert m.numpy().dtype == dtype


@pytest.mark.parametrize("args,match", [
    ((-1,), ">= 0"), ((2, 3, 4, 5, 6), "1, 2, 3 or 4 dims"), (((0.5, 2),), "ints"), ((2.0, 3), "ints"),
    ((np.zeros((1, 1, 1, 1, 2)),), "1-4 dims"),
])
def test_bad_shapes_raise(args, match):
    with pytest.raises(vkncnn.MatError, match=match):
        vkncnn.Mat(*args)


def test_list_is_data_tuple_is_shape():
    np.testing.assert_array_equal(vkncnn.Mat([0.5, 0.25, 2.0]).numpy(), [0.5, 0.25, 2.0])
    np.testing.assert_array_equal(vkncnn.Mat([[1, 2], [3, 4]]).numpy(), [[1, 2], [3, 4]])
    assert vkncnn.Mat((4, 3)).numpy().shape == (3, 4)


# -- strides and dtypes -------------------------------------------------------------------------
def strided_views():
    base = np.arange(2 * 6 * 8, dtype=np.float32).reshape(2, 6, 8)
    return {
        "transposed": base[0].T,
        "sliced": base[:, 1:5, ::2],
        "reversed": base[::-1, :, ::-1],
        "channel_last": np.moveaxis(base, 0, -1),
        "broadcast": np.broadcast_to(np.arange(5, dtype=np.float32), (3, 5)),
        "fortran": np.asfortranarray(base),
    }


@pytest.mark.parametrize("name", list(strided_views()))
def test_strided_arrays_are_read_by_value(name):
    view = strided_views()[name]
    m = vkncnn.Mat(view)
    assert m.numpy().shape == view.shape and m.numpy().flags.c_contiguous
    np.testing.assert_array_equal(m.numpy(), view)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, bool])
def test_other_real_dtypes_convert_by_value(dtype):
    rng = np.random.default_rng(1)
    a = (rng.integers(0, 2, (3, 4, 5)) if dtype is bool else rng.integers(-100, 250, (3, 4, 5))).astype(dtype)
    m = vkncnn.Mat(a)
    assert m.numpy().dtype == np.float32 and m.elemsize == 4
    np.testing.assert_array_equal(m.numpy(), a.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.int8, np.uint16])
def test_small_real_dtypes_are_shared_and_the_net_reads_their_values(dtype):
    a = np.random.default_rng(1).integers(-100, 250, (3, 4, 5)).astype(dtype)
    m = vkncnn.Mat(a)
    assert m.elemsize == a.itemsize and m.numpy() is a
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in0 0 1 in0\nReLU relu 1 1 in0 out0\n")
    with net.create_extractor() as ex:
        ex.input("in0", m)
        _, out = ex.extract("out0")
    np.testing.assert_array_equal(out.numpy(), np.maximum(a.astype(np.float32), 0))


def test_int32_array_reads_back_through_format_i_as_pyncnn():
    a = np.array([1, 2, 3], np.int32)
    for module in (vkncnn, ncnn):
        view = module.Mat(a).numpy(format="i")
        a[0] = 10 if module is vkncnn else 11
        assert view.dtype == np.int32 and view[0] == a[0], module.__name__
    f = vkncnn.Mat(np.array([1.5], np.float32))
    assert f.numpy(format="i")[0] == np.float32(1.5).view(np.int32)  # the bits, as pyncnn


def test_float64_fractions_round_to_float32():
    a = np.array([0.1, 1 / 3, 1e-30, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(vkncnn.Mat(a).numpy(), a.astype(np.float32))


@pytest.mark.parametrize("bad,match", [
    (np.zeros(3, np.complex64), "real-valued"),
    (np.array([1, "a"], dtype=object), "real-valued"),
    (np.array(["ab", "cd"]), "real-valued"),
    (np.array([1e39, 1.0]), "float32's range"),
])
def test_unconvertible_arrays_raise(bad, match):
    with pytest.raises(vkncnn.MatError, match=match):
        vkncnn.Mat(bad)


# -- ownership ----------------------------------------------------------------------------------
def test_mat_shares_a_contiguous_float32_array_both_ways():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    m = vkncnn.Mat(a)
    m.fill(7.0)
    assert np.all(a == 7.0)
    m[3] = -1.0
    assert a.flat[3] == -1.0
    a[...] = -5.0
    assert np.all(m.numpy() == -5.0) and np.shares_memory(m.numpy(), a)


@pytest.mark.parametrize("make", [
    lambda: np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, :, ::2],   # strided
    lambda: np.arange(24, dtype=np.float64).reshape(2, 3, 4),              # 8-byte values
    lambda: np.broadcast_to(np.float32(3), (2, 3, 4)),                     # read-only view
])
def test_arrays_pyncnn_would_misread_are_copied_and_never_written(make):
    a = make()
    keep = a.copy()
    m = vkncnn.Mat(a)
    np.testing.assert_array_equal(m.numpy(), keep.astype(np.float32))
    m.fill(9.0)
    np.testing.assert_array_equal(a, keep)
    assert not np.shares_memory(m.numpy(), a)


def test_mat_stays_valid_after_the_array_is_gone():
    a = np.random.default_rng(2).normal(size=(3, 64, 64)).astype(np.float32)
    expected = a.copy()
    m = vkncnn.Mat(a)
    del a
    gc.collect()
    junk = [np.full((3, 64, 64), 123.0, np.float32) for _ in range(8)]  # reuse freed memory
    np.testing.assert_array_equal(m.numpy(), expected)
    assert junk


def test_numpy_round_trip_and_array_protocol():
    a = np.random.default_rng(3).normal(size=(4, 5, 6)).astype(np.float32)
    m = vkncnn.Mat(a)
    np.testing.assert_array_equal(m.numpy(), a)
    copied = np.array(m)
    np.testing.assert_array_equal(copied, a)
    copied[0, 0, 0] = 1234.0
    assert m.numpy()[0, 0, 0] != 1234.0, "np.array(mat) copies, as pyncnn"
    shared = np.asarray(m)
    shared[0, 0, 0] = 4321.0
    assert m.numpy()[0, 0, 0] == 4321.0, "np.asarray(mat) shares, as pyncnn"
    assert np.array(m, dtype=np.float64).dtype == np.float64


def test_mat_of_mat_shares_and_clone_copies():
    m = vkncnn.Mat(np.zeros((2, 3), np.float32))
    same = vkncnn.Mat(m)
    other = m.clone()
    m.fill(3.0)
    assert np.all(same.numpy() == 3.0) and not np.any(other.numpy())


def test_flat_index_and_channel_views():
    m = vkncnn.Mat(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert m[13] == 13.0
    ch = m.channel(1)
    assert ch.dims == 2 and ch.numpy().shape == (3, 4)
    ch[0] = -1.0  # writes through the channel view, like ncnn's channel()
    assert m[12] == -1.0
    r = m.reshape(4, 6)
    assert (r.w, r.h, r.dims) == (4, 6, 2)
    with pytest.raises(vkncnn.MatError):
        m.reshape(5, 5)


def test_flat_setitem_writes_through_strided_data():
    base = np.zeros((4, 6), np.float32)
    m = vkncnn.Mat.from_array(base[:, ::2])  # runtime-owned strided view
    m[1] = 9.0
    assert base[0, 2] == 9.0 and m[1] == 9.0


def test_extractor_input_copies_the_array():
    text = "7767517\n2 2\nInput in0 0 1 in0\nReLU relu 1 1 in0 out0\n"
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    a = np.array([[-1.0, 2.0]], np.float32)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(a))
        a[...] = 100.0
        _, out = ex.extract("out0")
    np.testing.assert_array_equal(out.numpy(), [[0.0, 2.0]])
