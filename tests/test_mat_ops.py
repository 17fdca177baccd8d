"""Module-level Mat helpers (vkncnn/mat_ops.py) against real ncnn.

Real ncnn packs its results when opt.use_packing_layout is on (and pyncnn's numpy view
of a packed Mat crashes), and its numpy view ignores channel-step padding, so the
oracle runs unpacked, on shapes whose planes are multiples of 4 values."""

import numpy as np
import pytest

import vkncnn
from tests.oracle import cpu_has_avx512_bf16
from vkncnn import mat_ops

ncnn = pytest.importorskip("ncnn")


def real_opt():
    opt = ncnn.Option()
    opt.use_packing_layout = False
    opt.num_threads = 1
    return opt


def data(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 10).astype(np.float32)


@pytest.mark.parametrize("border", [0, 1, 2])
def test_copy_make_border(border):
    a = data((3, 4, 6))
    theirs = np.asarray(ncnn.copy_make_border(ncnn.Mat(a), 1, 3, 2, 4, border, 2.5, real_opt()))
    ours = vkncnn.copy_make_border(vkncnn.Mat(a), 1, 3, 2, 4, border, 2.5)
    assert ours.dims == 3
    np.testing.assert_array_equal(np.asarray(ours), theirs)


def test_copy_make_border_dst_form_keywords_and_enum():
    a = data((2, 4, 4))
    theirs = ncnn.Mat()
    ncnn.copy_make_border(ncnn.Mat(a), theirs, 2, 2, 0, 4, ncnn.BorderType.BORDER_REPLICATE, 0.0, real_opt())
    ours = vkncnn.Mat()
    assert vkncnn.copy_make_border(src=vkncnn.Mat(a), dst=ours, top=2, bottom=2, left=0, right=4,
                                   type=vkncnn.BorderType.BORDER_REPLICATE, v=0.0) is None
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert int(vkncnn.BorderType.BORDER_CONSTANT) == int(ncnn.BorderType.BORDER_CONSTANT)
    assert int(vkncnn.BorderType.BORDER_REPLICATE) == int(ncnn.BorderType.BORDER_REPLICATE)


@pytest.mark.parametrize("border", [0, 1, 2])
def test_copy_make_border_3d(border):
    a = data((2, 3, 4, 4))
    theirs = np.asarray(ncnn.copy_make_border_3d(ncnn.Mat(a), 1, 1, 2, 2, 1, 2, border, -1.0, real_opt()))
    ours = vkncnn.copy_make_border_3d(vkncnn.Mat(a), 1, 1, 2, 2, 1, 2, border, -1.0)
    np.testing.assert_array_equal(np.asarray(ours), theirs)


def test_copy_cut_border():
    a = data((3, 6, 8))
    theirs = np.asarray(ncnn.copy_cut_border(ncnn.Mat(a), 1, 1, 3, 1, real_opt()))
    ours = vkncnn.copy_cut_border(vkncnn.Mat(a), 1, 1, 3, 1)
    np.testing.assert_array_equal(np.asarray(ours), theirs)
    np.testing.assert_array_equal(np.asarray(ours), a[:, 1:5, 3:7])
    with pytest.raises(vkncnn.ArgumentError, match="at least w 9"):
        vkncnn.copy_cut_border(vkncnn.Mat(a), 0, 0, 5, 4)


@pytest.mark.parametrize("name,tol", [("resize_nearest", 0), ("resize_bilinear", 1e-5), ("resize_bicubic", 1e-4)])
@pytest.mark.parametrize("size", [(12, 4), (4, 8)])
def test_resize(name, tol, size):
    a = data((3, 4, 6))
    theirs = np.asarray(getattr(ncnn, name)(ncnn.Mat(a), *size, real_opt()))
    ours = getattr(vkncnn, name)(vkncnn.Mat(a), *size)
    assert np.asarray(ours).shape == theirs.shape == (3, size[1], size[0])
    np.testing.assert_allclose(np.asarray(ours), theirs, rtol=tol, atol=tol * 10)


def test_flatten_and_convert_packing():
    a = data((8, 2, 4))
    theirs = ncnn.Mat()
    ncnn.flatten(ncnn.Mat(a), theirs, real_opt())
    ours = vkncnn.flatten(vkncnn.Mat(a))
    assert ours.dims == theirs.dims == 1
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # ncnn packs and unpacks back to the same values; vkncnn's host Mats stay unpacked
    unpacked = ncnn.convert_packing(ncnn.convert_packing(ncnn.Mat(a), 4), 1)
    ours = vkncnn.convert_packing(vkncnn.Mat(a), 4)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(unpacked))
    with pytest.raises(vkncnn.ArgumentError):
        vkncnn.convert_packing(vkncnn.Mat(a), 0)


# 16 values: x86 ncnn converts whole SIMD vectors with round-to-nearest-even and a tail
# shorter than a vector with round-half-up; vkncnn rounds every value to nearest even
SPECIAL = np.array([1.0, -2.0, 3.14159, 65520, 1e-8, -0.0, 1.0000001, 3.3e38, np.inf, np.nan,
                    1.00390625, 1.01171875, -1.00390625, 7.5, -1e-3, 123.456], np.float32)


def test_fp16_casts():
    theirs = ncnn.cast_float32_to_float16(ncnn.Mat(SPECIAL), real_opt())
    ours = vkncnn.cast_float32_to_float16(vkncnn.Mat(SPECIAL))
    assert ours.elemsize == theirs.elemsize == 2
    np.testing.assert_array_equal(np.asarray(ours).view(np.uint16), np.asarray(theirs).view(np.uint16))
    back_theirs = np.asarray(ncnn.cast_float16_to_float32(theirs, real_opt()))
    back_ours = vkncnn.cast_float16_to_float32(ours)
    assert back_ours.elemsize == 4
    np.testing.assert_array_equal(np.asarray(back_ours), back_theirs)


def test_bf16_casts():
    theirs = ncnn.cast_float32_to_bfloat16(ncnn.Mat(SPECIAL), real_opt())
    ours = vkncnn.cast_float32_to_bfloat16(vkncnn.Mat(SPECIAL))
    assert ours.elemsize == theirs.elemsize == 2
    ours_bits, their_bits = np.asarray(ours).view(np.uint16), np.asarray(theirs).view(np.uint16)
    back_ours = np.asarray(vkncnn.cast_bfloat16_to_float32(ours))
    back_theirs = np.asarray(ncnn.cast_bfloat16_to_float32(theirs, real_opt()))
    # +-1.00390625 lie halfway between two bf16 values: vkncnn rounds them to even (+-1.0), as
    # ncnn does on CPUs with AVX512-BF16; elsewhere ncnn rounds them up, so there they are
    # checked against the rule instead
    ties = np.isin(SPECIAL, [1.00390625, -1.00390625])
    if not cpu_has_avx512_bf16():
        np.testing.assert_array_equal(back_ours[ties], [1.0, -1.0])
        ours_bits, their_bits = ours_bits[~ties], their_bits[~ties]
        back_ours, back_theirs = back_ours[~ties], back_theirs[~ties]
    np.testing.assert_array_equal(ours_bits, their_bits)
    np.testing.assert_array_equal(back_ours, back_theirs)


@pytest.mark.parametrize("scales", [[1.0], [3.0, 0.5, 20.0]])
def test_quantize_and_int8_cast(scales):
    a = data((3, 2, 4)) * 3
    a[0, 0, :4] = [0.5, -0.5, 1.5, -2.5]
    theirs = ncnn.Mat()
    ncnn.quantize_to_int8(ncnn.Mat(a), theirs, ncnn.Mat(np.array(scales, np.float32)), real_opt())
    ours = vkncnn.quantize_to_int8(vkncnn.Mat(a), vkncnn.Mat(np.array(scales, np.float32)))
    assert ours.elemsize == theirs.elemsize == 1
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    back_theirs = np.asarray(ncnn.cast_int8_to_float32(theirs, real_opt()))
    np.testing.assert_array_equal(np.asarray(vkncnn.cast_int8_to_float32(ours)), back_theirs)


def test_bad_arguments_are_clear_errors():
    m = vkncnn.Mat(data((2, 4, 4)))
    with pytest.raises(vkncnn.ArgumentTypeError, match="top must be an int"):
        vkncnn.copy_make_border(m, 1.5, 0, 0, 0, 0, 0.0)
    with pytest.raises(vkncnn.ArgumentError, match="type must be"):
        vkncnn.copy_make_border(m, 1, 0, 0, 0, 7, 0.0)
    with pytest.raises(vkncnn.ArgumentTypeError, match="src must be a vkncnn.Mat"):
        vkncnn.resize_bilinear(np.zeros((4, 4), np.float32), 2, 2)
    with pytest.raises(vkncnn.ArgumentTypeError, match="missing argument 'h'"):
        vkncnn.resize_nearest(m, 2)
    with pytest.raises(vkncnn.MatError, match="float16"):
        vkncnn.cast_float16_to_float32(m)
    with pytest.raises(vkncnn.MatError, match="empty"):
        vkncnn.flatten(vkncnn.Mat())


def test_input_is_not_modified():
    a = data((2, 4, 4))
    m = vkncnn.Mat(a)
    before = np.asarray(m).copy()
    mat_ops.copy_make_border(m, 1, 1, 1, 1, 0, 0.0)
    mat_ops.resize_bicubic(m, 3, 3)
    np.testing.assert_array_equal(np.asarray(m), before)
