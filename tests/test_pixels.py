"""Pixel helpers against real ncnn: every PIXEL_* type and conversion, row strides, ROIs,
the fixed-point bilinear resize (bit-exact), substract_mean_normalize, to_pixels round
trips (pyncnn binds no to_pixels), and the input checks pyncnn lacks."""

import numpy as np
import pytest

import vkncnn
from vkncnn import pixels

ncnn = pytest.importorskip("ncnn")
T = ncnn.Mat.PixelType
TYPES = {name: int(value) for name, value in T.__members__.items()
         if name.startswith("PIXEL_") and "MASK" not in name and "SHIFT" not in name}
CHANNELS = {1: 3, 2: 3, 3: 1, 4: 4, 5: 4}


def channels_in(type_code: int) -> int:
    return CHANNELS[type_code & 0xFFFF]


def image(h, w, c, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def ncnn_array(mat) -> np.ndarray:
    assert not mat.empty(), "ncnn returned an empty Mat"
    return np.array(mat.clone(), np.float32)


def test_pixel_type_constants_match_ncnn():
    for name, value in TYPES.items():
        assert getattr(vkncnn.Mat.PixelType, name) == value, name
    assert vkncnn.Mat.PixelType.PIXEL_CONVERT_SHIFT == 16


@pytest.mark.parametrize("name", sorted(TYPES))
@pytest.mark.parametrize("w,h", [(7, 5), (16, 9), (1, 1), (33, 2)])
def test_from_pixels_every_type(name, w, h):
    code = TYPES[name]
    img = image(h, w, channels_in(code), seed=w * h)
    want = ncnn_array(ncnn.Mat.from_pixels(img, code, w, h))
    got = vkncnn.Mat.from_pixels(img, code, w, h)
    assert got.dims == 3 and got.numpy().shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", ["PIXEL_RGB2GRAY", "PIXEL_BGR2GRAY", "PIXEL_RGBA2GRAY", "PIXEL_BGRA2GRAY"])
def test_gray_uses_ncnn_integer_weights(name):
    img = image(4, 64, channels_in(TYPES[name]), seed=3)
    src = name[6:name.index("2")]
    r, g, b = (img[..., src.index(ch)].astype(np.int32) for ch in "RGB")
    expected = ((77 * r + 150 * g + 29 * b) >> 8).astype(np.float32)
    np.testing.assert_array_equal(vkncnn.Mat.from_pixels(img, TYPES[name], 64, 4).numpy()[0], expected)


@pytest.mark.parametrize("name", ["PIXEL_BGR2RGB", "PIXEL_GRAY", "PIXEL_RGBA2GRAY", "PIXEL_BGR2GRAY",
                                  "PIXEL_GRAY2BGRA"])
@pytest.mark.parametrize("call,args", [
    ("from_pixels", ()), ("from_pixels_resize", (20, 7)), ("from_pixels_resize", (13, 9)),
    ("from_pixels_roi", (2, 3, 7, 5)), ("from_pixels_roi", (0, 0, 13, 9)),
    ("from_pixels_roi_resize", (2, 3, 7, 5, 4, 11)), ("from_pixels_roi_resize", (1, 0, 12, 9, 30, 2)),
])
@pytest.mark.parametrize("padding", [0, 5])
def test_strides_and_rois_match_ncnn(name, call, args, padding):
    code, c = TYPES[name], channels_in(TYPES[name])
    w, h = 13, 9
    stride = w * c + padding
    buf = np.random.default_rng(padding).integers(0, 256, h * stride, dtype=np.uint8)
    full = (stride,) + args
    want = ncnn_array(getattr(ncnn.Mat, call)(buf, code, w, h, *full))
    got = getattr(vkncnn.Mat, call)(buf, code, w, h, *full).numpy()
    np.testing.assert_array_equal(got, want)
    if padding == 0:  # the overload without stride
        np.testing.assert_array_equal(getattr(vkncnn.Mat, call)(buf, code, w, h, *args).numpy(), want)


RESIZES = [((8, 6), (16, 12)), ((16, 12), (8, 6)), ((13, 7), (5, 11)), ((5, 11), (31, 3)), ((1, 1), (4, 3)),
           ((1, 9), (5, 2)), ((9, 1), (2, 5)), ((300, 200), (224, 224)), ((64, 48), (63, 47)), ((3, 3), (1, 1))]


@pytest.mark.parametrize("name", ["PIXEL_GRAY", "PIXEL_RGB", "PIXEL_BGRA", "PIXEL_BGR2RGB", "PIXEL_RGBA2GRAY",
                                  "PIXEL_GRAY2RGB"])
@pytest.mark.parametrize("src,dst", RESIZES)
def test_from_pixels_resize_is_bit_exact(name, src, dst):
    """resize_bilinear_c1/c3/c4 in 11-bit fixed point: identical bytes, before the float conversion."""
    code = TYPES[name]
    (w, h), (tw, th) = src, dst
    img = image(h, w, channels_in(code), seed=w + 7 * h)
    want = ncnn_array(ncnn.Mat.from_pixels_resize(img, code, w, h, tw, th))
    got = vkncnn.Mat.from_pixels_resize(img, code, w, h, tw, th).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_resize_kernel_any_channel_count(channels):
    # c2 has no pixel type; check it agrees channel by channel with the c1 kernel ncnn runs
    img = image(11, 9, channels, seed=channels)
    out = pixels.resize_bilinear(img, 20, 5)
    assert out.shape == (5, 20, channels) and out.dtype == np.uint8
    for k in range(channels):
        plane = np.ascontiguousarray(img[..., k])
        want = ncnn_array(ncnn.Mat.from_pixels_resize(plane, T.PIXEL_GRAY, 9, 11, 20, 5))[0]
        np.testing.assert_array_equal(out[..., k], want)


# -- substract_mean_normalize -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 7, 9), (1, 5, 5), (4, 3, 8), (2, 3, 4, 5)])
@pytest.mark.parametrize("parts", ["both", "mean", "norm", "none"])
def test_substract_mean_normalize_matches_ncnn(shape, parts):
    rng = np.random.default_rng(len(shape))
    x = rng.uniform(0, 255, shape).astype(np.float32)
    c = shape[0]
    mean = list(rng.uniform(0, 200, c)) if parts in ("both", "mean") else []
    norm = list(rng.uniform(0.001, 0.1, c)) if parts in ("both", "norm") else []
    ref = ncnn.Mat(x).clone()
    ref.substract_mean_normalize(mean, norm)
    mat = vkncnn.Mat(x)
    before = mat.numpy()
    mat.substract_mean_normalize(mean, norm)
    assert mat.numpy() is before, "must work in place on the Mat's data"
    np.testing.assert_array_equal(mat.numpy(), np.array(ref))


@pytest.mark.parametrize("shape", [(6, 7), (9,)])
def test_substract_mean_normalize_1d_2d_is_one_channel(shape):
    # ncnn's Scale reads one norm per row (2-D) or per element (1-D) past the end of the
    # list here; we treat the Mat as the single channel it is
    x = np.random.default_rng(0).uniform(0, 255, shape).astype(np.float32)
    mat = vkncnn.Mat(x.copy())
    mat.substract_mean_normalize([10.0], [0.5])
    expected = (x.astype(np.float64) * np.float32(0.5) + np.float32(-10.0 * 0.5)).astype(np.float32)
    np.testing.assert_array_equal(mat.numpy(), expected)


def test_substract_mean_normalize_after_from_pixels():
    img = image(10, 12, 3, seed=1)
    mean, norm = [103.53, 116.28, 123.675], [0.017429, 0.017507, 0.017125]
    ref = ncnn.Mat.from_pixels_resize(img, T.PIXEL_BGR2RGB, 12, 10, 16, 16)
    ref.substract_mean_normalize(mean, norm)
    mat = vkncnn.Mat.from_pixels_resize(img, TYPES["PIXEL_BGR2RGB"], 12, 10, 16, 16)
    mat.substract_mean_normalize(mean, norm)
    np.testing.assert_array_equal(mat.numpy(), np.array(ref))


@pytest.mark.parametrize("mean,norm", [([1.0, 2.0], []), ([], [1.0, 2.0, 3.0, 4.0]), ([1.0], [1.0])])
def test_substract_mean_normalize_needs_one_value_per_channel(mean, norm):
    mat = vkncnn.Mat(np.ones((3, 2, 2), np.float32))
    with pytest.raises(vkncnn.MatError, match="per channel"):
        mat.substract_mean_normalize(mean, norm)


# -- to_pixels (not bound in pyncnn: round trips and ncnn's source semantics) -----------------
@pytest.mark.parametrize("name", ["PIXEL_RGB", "PIXEL_BGR", "PIXEL_GRAY", "PIXEL_RGBA", "PIXEL_BGRA",
                                  "PIXEL_RGB2BGR", "PIXEL_BGR2RGB", "PIXEL_RGBA2BGRA", "PIXEL_BGRA2RGBA"])
@pytest.mark.parametrize("stride_pad", [0, 3])
def test_to_pixels_round_trip(name, stride_pad):
    code = TYPES[name]
    w, h, c = 11, 6, channels_in(code)
    img = image(h, w, c, seed=code)
    mat = vkncnn.Mat.from_pixels(img, code, w, h)
    out = mat.to_pixels(code, w * c + stride_pad)  # the same code maps the Mat back
    assert out.shape == (h, w, c) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, img)
    if stride_pad:
        assert out.strides[0] == w * c + stride_pad


@pytest.mark.parametrize("to_name,from_name", [
    ("PIXEL_RGB2RGBA", "PIXEL_RGBA2RGB"), ("PIXEL_BGR2BGRA", "PIXEL_BGRA2BGR"),
    ("PIXEL_RGB2BGRA", "PIXEL_BGRA2RGB"), ("PIXEL_BGR2RGBA", "PIXEL_RGBA2BGR"),
    ("PIXEL_GRAY2RGBA", "PIXEL_RGBA2GRAY"), ("PIXEL_GRAY2BGRA", "PIXEL_BGRA2GRAY")])
def test_to_pixels_adds_opaque_alpha(to_name, from_name):
    src_c = channels_in(TYPES[to_name])
    img = image(5, 7, src_c, seed=2)
    mat = vkncnn.Mat.from_pixels(img, TYPES[to_name.split("2")[0]], 7, 5)  # planes in the source order
    out = mat.to_pixels(TYPES[to_name])
    assert out.shape == (5, 7, 4) and np.all(out[..., 3] == 255)
    back = ncnn_array(ncnn.Mat.from_pixels(np.ascontiguousarray(out), TYPES[from_name], 7, 5))
    if src_c == 1:  # gray replicated to R=G=B: ncnn's weights sum to 256, so gray comes back
        np.testing.assert_array_equal(back[0], img[..., 0])
    else:
        np.testing.assert_array_equal(np.moveaxis(back, 0, -1), img)


def test_to_pixels_truncates_and_saturates_like_ncnn():
    values = np.array([[-3.7, -0.2, 0.2, 0.999, 127.5, 254.99, 255.0, 300.0, 1e10, np.inf, -np.inf, np.nan]],
                      np.float32)
    out = vkncnn.Mat(values[None]).to_pixels(TYPES["PIXEL_GRAY"])
    np.testing.assert_array_equal(out[0, :, 0], [0, 0, 0, 0, 127, 254, 255, 255, 255, 255, 0, 0])


@pytest.mark.parametrize("name", ["PIXEL_GRAY", "PIXEL_RGB", "PIXEL_BGRA", "PIXEL_RGB2BGR", "PIXEL_GRAY2RGBA"])
@pytest.mark.parametrize("src,dst", RESIZES[:6])
def test_to_pixels_resize_uses_ncnn_kernel(name, src, dst):
    """to_pixels then the fixed-point resize: the same bytes ncnn's from_pixels_resize makes of them."""
    code = TYPES[name]
    (w, h), (tw, th) = src, dst
    planes = np.random.default_rng(w).uniform(-10, 270, (channels_in(code), h, w)).astype(np.float32)
    mat = vkncnn.Mat(planes)
    out = mat.to_pixels_resize(code, tw, th)
    full = np.ascontiguousarray(mat.to_pixels(code))
    target = TYPES["PIXEL_" + name.split("2")[-1].replace("PIXEL_", "")]
    want = ncnn_array(ncnn.Mat.from_pixels_resize(full, target, w, h, tw, th))
    np.testing.assert_array_equal(np.moveaxis(out, -1, 0).astype(np.float32), want)


def test_to_pixels_resize_with_stride():
    mat = vkncnn.Mat(np.random.default_rng(0).uniform(0, 255, (3, 6, 8)).astype(np.float32))
    out = mat.to_pixels_resize(TYPES["PIXEL_RGB"], 5, 4, 5 * 3 + 7)
    assert out.shape == (4, 5, 3) and out.strides[0] == 22
    np.testing.assert_array_equal(out, mat.to_pixels_resize(TYPES["PIXEL_RGB"], 5, 4))


# -- inputs pyncnn would misread ----------------------------------------------------------------
def test_pixels_accept_bytes_like():
    img = image(3, 4, 3)
    want = vkncnn.Mat.from_pixels(img, TYPES["PIXEL_RGB"], 4, 3).numpy()
    for buf in (img.tobytes(), bytearray(img.tobytes()), memoryview(img.tobytes())):
        np.testing.assert_array_equal(vkncnn.Mat.from_pixels(buf, TYPES["PIXEL_RGB"], 4, 3).numpy(), want)


def test_pixels_read_strided_arrays_by_value():
    big = image(10, 12, 3, seed=4)
    crop = big[2:7, 3:9]  # a non-contiguous view: its own pixels, not the parent's bytes
    got = vkncnn.Mat.from_pixels(crop, TYPES["PIXEL_RGB"], 6, 5).numpy()
    np.testing.assert_array_equal(got, np.moveaxis(crop, -1, 0))


@pytest.mark.parametrize("call,args,match", [
    ("from_pixels", (np.zeros((4, 5, 3), np.float32), 1, 5, 4), "uint8"),
    ("from_pixels", (np.zeros((4, 5, 3), np.int64), 1, 5, 4), "uint8"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), 1, 5, 5), "needs h \\* stride = 75 bytes"),
    ("from_pixels", (np.zeros((4, 5, 4), np.uint8), 1, 5, 4), "3 channel"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, 14), "stride must be at least"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), 1, 0, 4), "must be > 0"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), 7, 5, 4), "does not implement"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), 1 | (1 << 16), 5, 4), "does not implement"),
    ("from_pixels", (np.zeros((4, 5, 3), np.uint8), "rgb", 5, 4), "must be an int"),
    ("from_pixels_resize", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, 0, 3), "target size"),
    ("from_pixels_resize", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, 3), "takes 2 or 3"),
    ("from_pixels_roi", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, 2, 1, 4, 2), "not inside"),
    ("from_pixels_roi", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, -1, 0, 2, 2), "not inside"),
    ("from_pixels_roi_resize", (np.zeros((4, 5, 3), np.uint8), 1, 5, 4, 0, 0, 0, 2, 3, 3), "not inside"),
])
def test_bad_pixel_input_raises(call, args, match):
    with pytest.raises(vkncnn.MatError, match=match):
        getattr(vkncnn.Mat, call)(*args)


@pytest.mark.parametrize("shape,name,match", [
    ((4, 5, 6), "PIXEL_RGB", "needs a \\(c=3"),
    ((3, 5, 6), "PIXEL_GRAY", "needs a \\(c=1"),
    ((3, 5, 6), "PIXEL_RGB2GRAY", "does not implement"),
    ((1, 5, 6), "PIXEL_GRAY2RGB", "does not implement"),
    ((4, 5, 6), "PIXEL_RGBA2RGB", "does not implement"),
])
def test_bad_to_pixels_raises(shape, name, match):
    with pytest.raises(vkncnn.MatError, match=match):
        vkncnn.Mat(np.zeros(shape, np.float32)).to_pixels(TYPES[name])


def test_to_pixels_of_2d_mat_is_gray():
    mat = vkncnn.Mat(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(mat.to_pixels(TYPES["PIXEL_GRAY"])[..., 0], np.arange(12).reshape(3, 4))
