"""Model files: every param value form, binary params, .bin storage flags, damaged files."""

import io
import struct

import numpy as np
import pytest

import vkncnn
from vkncnn.format.modelbin import FLAG_FP16, FLAG_INT8, model_bin_from_bytes
from vkncnn.format.param_bin import parse_param_bin
from vkncnn.format.param_text import parse_param_text
from vkncnn.tools.benchmark_models import BENCHMARK_DIR, DATA


def _params(line_params: str):
    spec = parse_param_text(f"7767517\n1 1\nInput in 0 1 x {line_params}\n", "t.param")
    return spec.layers[0].params


def test_scalar_value_forms():
    pd = _params("0=3 1=-2 2=1.5 3=1e-5 4=-2.5E+3 5=.25 6=abc 7=\"two words\"")
    assert pd.get(0, 0) == 3 and pd.get(1, 0) == -2
    assert pd.get(2, 0.0) == 1.5 and pd.get(3, 0.0) == pytest.approx(1e-5)
    assert pd.get(4, 0.0) == -2500.0 and pd.get(5, 0.0) == 0.25
    assert pd.get(6, "") == "abc" and pd.get(7, "") == "two words"
    assert pd.type(0) == 2 and pd.type(2) == 3 and pd.type(6) == 7


def test_array_forms_old_and_new():
    pd = _params("-23300=3,1,2,3 -23301=2,0.5,1e-1 2=4,5,6 3=1.5,2")
    assert pd.get_int_array(0).tolist() == [1, 2, 3]
    assert np.allclose(pd.get_float_array(1), [0.5, 0.1])
    assert pd.get_int_array(2).tolist() == [4, 5, 6]
    assert np.allclose(pd.get_float_array(3), [1.5, 2.0])
    assert pd.get(9, 7) == 7  # absent -> default


def test_keys_30_31_reach_the_layer():
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x -23330=4,3,8,8,3 0=8\nReLU r 1 1 x y 31=16\n")
    relu = net.layers()[1]
    assert net.layers()[0].top_shapes == [(3, 8, 8, 3)]
    assert relu.featmask == 16


def test_binary_param_matches_text():
    text = parse_param_text((DATA / "examples/squeezenet_v1.1.param").read_text())
    binary = parse_param_bin((DATA / "examples/squeezenet_v1.1.param.bin").read_bytes())
    assert (binary.layer_count, binary.blob_count) == (text.layer_count, text.blob_count) == (75, 83)
    assert [layer.type for layer in binary.layers] == [layer.type for layer in text.layers]
    conv_t, conv_b = text.layers[1], binary.layers[1]
    for key in (0, 1, 2, 3, 4, 5, 6):
        assert conv_b.params.get(key, 0) == conv_t.params.get(key, 0)


@pytest.mark.parametrize("how", ["path", "file", "bytes", "reader"])
def test_load_param_and_model_from_every_source(how, tmp_path):
    text = "7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=3\n"
    weights = np.array([1, 2, 3], np.float32).tobytes()
    p, b = tmp_path / "m.param", tmp_path / "m.bin"
    p.write_text(text)
    b.write_bytes(weights)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    if how == "path":
        net.load_param(str(p)), net.load_model(str(b))
    elif how == "file":
        with open(p, "rb") as fp, open(b, "rb") as fb:
            net.load_param(fp), net.load_model(fb)
    elif how == "bytes":
        net.load_param_mem(text), net.load_model(weights)
    else:
        net.load_param(vkncnn.DataReaderFromMemory(text.encode()))
        net.load_model(vkncnn.DataReaderFromMemory(weights))
    out = net.run({"x": np.zeros((3, 2, 2), np.float32)})["y"]
    assert out[:, 0, 0].tolist() == [1, 2, 3]


def _tagged(flag: int, payload: bytes) -> bytes:
    return struct.pack("<I", flag) + payload


def test_storage_flags():
    vals = np.array([0.5, -1.25, 3.0], np.float32)
    fp32 = model_bin_from_bytes(_tagged(0, vals.tobytes()))
    assert np.array_equal(fp32.load(3, 0), vals)
    fp16 = model_bin_from_bytes(_tagged(FLAG_FP16, vals.astype("<f2").tobytes() + b"\0\0"))
    assert np.array_equal(fp16.load(3, 0), vals)
    i8 = model_bin_from_bytes(_tagged(FLAG_INT8, bytes([1, 255, 7, 0])))
    assert i8.load(3, 0).tolist() == [1, -1, 7]
    table = np.linspace(-1, 1, 256).astype(np.float32)
    lut = model_bin_from_bytes(_tagged(0x12345678, table.tobytes() + bytes([0, 255, 128, 0])))
    assert np.array_equal(lut.load(3, 0), table[[0, 255, 128]])
    raw = model_bin_from_bytes(vals.tobytes())
    assert np.array_equal(raw.load(3, 1), vals)


def test_fp16_padding_keeps_next_tensor_aligned():
    a = np.array([1, 2, 3], np.float32)
    data = _tagged(FLAG_FP16, a.astype("<f2").tobytes() + b"\0\0") + a.tobytes()
    mb = model_bin_from_bytes(data)
    assert np.array_equal(mb.load(3, 0), a) and np.array_equal(mb.load(3, 1), a)


BAD_PARAMS = {
    "wrong magic": ("7767518\n1 1\nInput in 0 1 x\n", "magic"),
    "no counts": ("7767517\n", "layer count"),
    "negative count": ("7767517\n-1 1\nInput in 0 1 x\n", "layer count"),
    "truncated layer": ("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1\n", "ends"),
    "fewer layers": ("7767517\n3 3\nInput in 0 1 x\nReLU r 1 1 x y\n", "declares 3 layers"),
    "unknown type": ("7767517\n2 2\nInput in 0 1 x\nFooBar f 1 1 x y\n", "FooBar"),
    "consumed before produced": ("7767517\n2 3\nInput in 0 1 x\nReLU r 1 1 z y\n", "'z'"),
    "duplicate top": ("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x x\n", "already produced"),
    "more blobs than declared": ("7767517\n2 1\nInput in 0 1 x\nReLU r 1 1 x y\n", "more blobs"),
    "huge bottom count": ("7767517\n2 2\nInput in 0 1 x\nReLU r 99999999 1 x y\n", "bottom count"),
    "bad param id": ("7767517\n1 1\nInput in 0 1 x 40=1\n", "param id 40"),
    "bad number": ("7767517\n1 1\nInput in 0 1 x 0=1.2.3\n", "number"),
    "array count mismatch": ("7767517\n1 1\nInput in 0 1 x -23300=5,1,2\n", "declares 5"),
}


@pytest.mark.parametrize("case", list(BAD_PARAMS))
def test_damaged_param_text_is_a_clear_error(case):
    text, needle = BAD_PARAMS[case]
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    with pytest.raises(vkncnn.Error) as info:
        net.load_param_mem(text)
    assert needle in str(info.value), str(info.value)


def test_non_utf8_param_file(tmp_path):
    p = tmp_path / "bad.param"
    p.write_bytes(b"7767517\n1 1\nInput \xff\xfe 0 1 x\n")
    with pytest.raises(vkncnn.ParamError, match="UTF-8"):
        vkncnn.Net().load_param(str(p))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(vkncnn.ModelFormatError, match="cannot open"):
        vkncnn.Net().load_param(str(tmp_path / "nope.param"))


def test_truncated_bin_names_layer_and_offset():
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=1000\n")
    with pytest.raises(vkncnn.WeightError) as info:
        net.load_model(b"\0" * 100)
    assert "'b'" in str(info.value) and "remain" in str(info.value)


def test_binary_param_errors():
    good = (DATA / "examples/squeezenet_v1.1.param.bin").read_bytes()
    for bad in (good[:7], good[:200], b"\x01\x02\x03\x04" + good[4:],
                good[:4] + struct.pack("<i", 1 << 30) + good[8:]):
        with pytest.raises(vkncnn.ParamError):
            parse_param_bin(bad, "x.param.bin")


def test_every_shipped_param_parses():
    for path in sorted(BENCHMARK_DIR.rglob("*.param")):
        spec = parse_param_text(path.read_text(), str(path))
        assert spec.layers, path


def test_nanodet_declares_one_layer_fewer_and_loads():
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param(str(BENCHMARK_DIR / "nanodet_m.param"))
    assert len(net.layers()) == 179


def test_stream_reader_with_pyncnn_style_read():
    class Reader(vkncnn.DataReader):
        def __init__(self, data):
            self.stream = io.BytesIO(data)

        def read(self, buf, size):
            chunk = self.stream.read(size)
            buf[:len(chunk)] = chunk
            return len(chunk)

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param(Reader(b"7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=2\n"))
    net.load_model(Reader(np.array([5, 6], np.float32).tobytes()))
    assert net.run({"x": np.zeros((2, 1, 1), np.float32)})["y"].ravel().tolist() == [5, 6]


def test_streamed_parse_matches_in_memory_parse(monkeypatch):
    """Reading a .param a few bytes at a time (lines, CRLFs and UTF-8 cut anywhere) parses
    exactly as the whole text does."""
    from vkncnn.format import param_text
    monkeypatch.setattr(param_text, "READ_CHUNK", 7)
    texts = [path.read_text() for path in sorted(BENCHMARK_DIR.rglob("*.param"))[:6]]
    texts.append("7767517\r\n2 2\r\nInput in 0 1 x 6=\"é ü\"\r\nBias b 1 1 x y 0=3\r\n")
    for text in texts:
        whole = parse_param_text(text, "t")
        streamed = param_text.parse_param_reader(vkncnn.DataReaderFromMemory(text.encode()), "t", 1 << 30)
        assert [(s.type, s.name, s.bottoms, s.tops, s.line, repr(s.params)) for s in streamed.layers] == \
               [(s.type, s.name, s.bottoms, s.tops, s.line, repr(s.params)) for s in whole.layers]
