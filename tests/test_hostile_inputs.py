"""Hostile input at every public entry point: a clear vkncnn.Error, never a crash, a hang,
an unbounded allocation or a foreign exception.

Time bounds use CPU time and are generous (a loaded 2-core machine must not make them
flaky); memory bounds use tracemalloc, which sees numpy's buffers too.
"""

import io
import math
import os
import threading
import time
import tracemalloc

import numpy as np
import pytest

import vkncnn
from vkncnn.errors import ArgumentError, ArgumentTypeError, MatAllocationError, ModelFileError
from vkncnn.format.graph_spec import MAX_BLOB_COUNT, MAX_LAYER_COUNT
from vkncnn.net import MAX_PARAM_BYTES

BIAS_NET = "7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=3\n"
BIAS_WEIGHTS = np.array([1, 2, 3], np.float32).tobytes()


def _net(text: str | None = BIAS_NET) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    if text is not None:
        net.load_param_mem(text)
    return net


class Bounded:
    """Runs a call under tracemalloc and the CPU clock; the outcome is kept for asserts."""

    def __init__(self, fn, *args, **kwargs) -> None:
        tracemalloc.start()
        t0 = time.process_time()
        self.error = None
        try:
            self.result = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the tests assert what it is
            self.error = e
        finally:
            self.seconds = time.process_time() - t0
            self.peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()

    def refused(self, kind: type, *needles: str, seconds: float = 2.0, peak: int = 16 << 20):
        assert isinstance(self.error, kind), repr(self.error)
        assert isinstance(self.error, vkncnn.Error)
        for needle in needles:
            assert needle in str(self.error), str(self.error)
        assert self.seconds < seconds, f"took {self.seconds:.2f} s of CPU"
        assert self.peak < peak, f"peak Python memory {self.peak} bytes"
        return self.error


def _refused(kind, fn, *args, needles=(), **kwargs):
    with pytest.raises(kind) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, vkncnn.Error), repr(info.value)
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    return info.value


# -- paths: what is not a regular file is refused before it is opened ---------------------------
def _loaders(net: vkncnn.Net):
    return {"load_param": net.load_param, "load_param_bin": net.load_param_bin, "load_model": net.load_model}


@pytest.mark.parametrize("loader", ["load_param", "load_param_bin", "load_model"])
def test_fifo_is_refused_without_blocking(tmp_path, loader):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def unblock():
        # if the loader did block in open(), a writer appearing lets it go on, so the test
        # fails on the time check below instead of hanging the suite
        deadline = time.monotonic() + 10
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet: the loader did not open it
                time.sleep(0.05)
                continue
            os.close(fd)
            return

    writer = threading.Thread(target=unblock, daemon=True)
    writer.start()
    t0 = time.monotonic()
    try:
        err = _refused(ModelFileError, _loaders(_net())[loader], str(fifo), needles=("FIFO", str(fifo)))
    finally:
        stop.set()
        writer.join()
    assert time.monotonic() - t0 < 5
    assert isinstance(err, OSError)  # code written for open()'s failures catches it too


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
@pytest.mark.parametrize("loader", ["load_param", "load_param_bin", "load_model"])
def test_character_devices_are_refused_at_once(device, loader):
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    run = Bounded(_loaders(_net())[loader], device)
    run.refused(ModelFileError, "character device", device, seconds=1.0, peak=1 << 20)


@pytest.mark.parametrize("loader", ["load_param", "load_param_bin", "load_model"])
def test_directory_and_missing_and_nul_paths(tmp_path, loader):
    load = _loaders(_net())[loader]
    _refused(ModelFileError, load, str(tmp_path), needles=("directory",))
    _refused(ModelFileError, load, tmp_path / "missing.param", needles=("cannot open", "missing.param"))
    err = _refused(ModelFileError, load, str(tmp_path / "a\0b"), needles=("cannot be used as a path",))
    assert isinstance(err, ValueError)


def test_symlink_to_a_device_is_refused(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    link = tmp_path / "model.param"
    link.symlink_to("/dev/zero")
    _refused(ModelFileError, _net(None).load_param, str(link), needles=("character device",))


@pytest.mark.parametrize("loader", ["load_param", "load_param_bin"])
def test_param_file_over_the_limit_is_refused_from_its_size(tmp_path, loader):
    big = tmp_path / "huge.param"
    with open(big, "wb") as f:  # sparse: costs no disk, reads as zeros
        f.truncate(MAX_PARAM_BYTES + 1)
    run = Bounded(_loaders(_net(None))[loader], str(big))
    run.refused(vkncnn.ParamError, f"{MAX_PARAM_BYTES + 1} bytes", "limit", seconds=1.0, peak=1 << 20)


def test_many_gigabyte_bin_is_read_only_as_far_as_layers_ask(tmp_path):
    weights = tmp_path / "huge.bin"
    with open(weights, "wb") as f:
        f.write(BIAS_WEIGHTS)
        f.truncate(3 << 30)  # a 3 GB file (sparse): never read past the 12 bytes the net needs
    net = _net()
    run = Bounded(net.load_model, str(weights))
    assert run.error is None, run.error
    assert run.seconds < 2 and run.peak < 4 << 20, (run.seconds, run.peak)
    assert net.run({"x": np.zeros((3, 1, 1), np.float32)})["y"].ravel().tolist() == [1, 2, 3]


def test_weights_larger_than_the_file_are_refused_before_allocation(tmp_path):
    weights = tmp_path / "small.bin"
    weights.write_bytes(BIAS_WEIGHTS)
    net = _net("7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=1000000000\n")
    run = Bounded(net.load_model, str(weights))
    run.refused(vkncnn.WeightError, "'b'", "remain", peak=1 << 20)


def test_stream_of_unknown_length_costs_only_the_bytes_that_arrive():
    class Trickle(io.RawIOBase):  # a pipe-like stream: no length, 4 bytes of weights then EOF
        def readable(self):
            return True

        def readinto(self, buf):
            return 0

    net = _net("7767517\n2 2\nInput in 0 1 x\nBias b 1 1 x y 0=1000000000\n")
    run = Bounded(net.load_model, Trickle())
    run.refused(vkncnn.WeightError, "file ended after 0", peak=4 << 20)


def test_a_path_is_closed_after_loading(tmp_path):
    p, b = tmp_path / "m.param", tmp_path / "m.bin"
    p.write_text(BIAS_NET)
    b.write_bytes(BIAS_WEIGHTS)
    short = tmp_path / "short.bin"
    short.write_bytes(BIAS_WEIGHTS[:4])
    net = _net(None)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(3):
        net.load_param(str(p))
        net.load_model(str(b))
        with pytest.raises(vkncnn.WeightError):
            net.load_model(str(short))  # fails halfway: the file is closed all the same
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


# -- file objects and readers ---------------------------------------------------------------------
def test_closed_file_object_is_a_clear_error(tmp_path):
    p = tmp_path / "m.param"
    p.write_text(BIAS_NET)
    with open(p, "rb") as f:
        pass
    for load in (_net(None).load_param, _net(None).load_param_bin, _net().load_model):
        err = _refused(ModelFileError, load, f, needles=("closed", "m.param"))
        assert isinstance(err, ValueError)


def test_zero_stream_as_param_stops_at_the_first_chunk():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    with open("/dev/zero", "rb") as zeros:  # a file object the user opened: read, bounded
        Bounded(_net(None).load_param, zeros).refused(vkncnn.ParamError, "magic", peak=8 << 20)
        Bounded(_net(None).load_param_bin, zeros).refused(vkncnn.ParamError, "magic", peak=1 << 20)


def test_binary_header_is_checked_before_the_rest_is_read():
    class Counting(io.BytesIO):
        taken = 0

        def read(self, size=-1):
            data = super().read(size)
            Counting.taken += len(data)
            return data

    head = np.array([7767517, MAX_LAYER_COUNT + 1, 4], "<i4").tobytes()
    stream = Counting(head + bytes(8 << 20))
    _refused(vkncnn.ParamError, _net(None).load_param_bin, stream, needles=(str(MAX_LAYER_COUNT),))
    assert Counting.taken == 12


def test_readers_that_misbehave_are_vkncnn_errors():
    class Raises(vkncnn.DataReader):
        def read_bytes(self, size):
            raise RuntimeError("disk on fire")

    class WrongType(vkncnn.DataReader):
        def read_bytes(self, size):
            return "7767517"

    class PyncnnStyleBadCount(vkncnn.DataReader):
        def read(self, buf, size):
            return "many"

    err = _refused(ModelFileError, _net(None).load_param, Raises(), needles=("RuntimeError", "disk on fire"))
    assert isinstance(err.__cause__, RuntimeError)
    _refused(vkncnn.ModelFormatError, _net(None).load_param, WrongType(), needles=("returned str",))
    _refused(vkncnn.ModelFormatError, _net().load_model, PyncnnStyleBadCount(), needles=("ValueError",))


def test_utf8_error_offset_is_exact_across_reads():
    class OneByte(vkncnn.DataReader):  # pyncnn style, one byte per call
        def __init__(self, data):
            self.stream = io.BytesIO(data)

        def read(self, buf, size):
            chunk = self.stream.read(1)
            buf[:len(chunk)] = chunk
            return len(chunk)

    text = "7767517\n1 1\nInput in 0 1 x 6=\"é\" ".encode() + b"\xc3\x28 rest\n"
    bad_at = text.index(b"\xc3\x28")
    _refused(vkncnn.ParamError, _net(None).load_param, OneByte(text), needles=(f"at byte {bad_at}", "UTF-8"))
    net = _net(None)
    net.load_param(OneByte("7767517\n1 1\nInput in 0 1 x 6=\"é\"\n".encode()))  # é split over reads
    assert net.layers()[0].name == "in"


# -- huge layer and blob counts ---------------------------------------------------------------
def test_million_layer_chain_is_refused_from_its_header(tmp_path):
    n = 1_000_000
    path = tmp_path / "chain.param"
    with open(path, "w") as f:
        f.write(f"7767517\n{n + 1} {n + 1}\nInput in 0 1 b0\n")
        f.writelines(f"ReLU r{i} 1 1 b{i} b{i + 1}\n" for i in range(n))
    assert path.stat().st_size > 30 << 20
    run = Bounded(_net(None).load_param, str(path))
    run.refused(vkncnn.ParamError, "chain.param:2:", "layer count", str(MAX_LAYER_COUNT), "1000001",
                seconds=1.0, peak=8 << 20)


def test_error_on_line_4_of_a_huge_file_is_reported_before_reading_on(tmp_path):
    path = tmp_path / "err4.param"
    with open(path, "w") as f:  # counts within the limits, then 30 MB after the bad line
        f.write(f"7767517\n{MAX_LAYER_COUNT} {MAX_LAYER_COUNT}\nInput in 0 1 b0\nReLU r0 1 1 b0 b1 0=1.2.3\n")
        f.writelines("ReLU r 1 1 b0 b1\n" for _ in range(1_800_000))
    run = Bounded(_net(None).load_param, str(path))
    run.refused(vkncnn.ParamError, "err4.param:4:", "1.2.3", seconds=1.0, peak=8 << 20)


@pytest.mark.parametrize("header,needle", [
    (f"{MAX_LAYER_COUNT + 1} 1", f"layer count must be in 1..{MAX_LAYER_COUNT}"),
    (f"1 {MAX_BLOB_COUNT + 1}", f"blob count must be in 1..{MAX_BLOB_COUNT}"),
    ("4000000 4000000", "limit"),
    ("99999999999999999999 1", "layer count"),
])
def test_absurd_text_header_counts(header, needle):
    err = _refused(vkncnn.ParamError, _net(None).load_param_mem, f"7767517\n{header}\nInput in 0 1 x\n",
                   needles=(needle,))
    assert "<memory>:2:" in str(err)


def test_counts_at_the_limits_are_accepted():
    # the cap is inclusive: a file declaring exactly the limits parses until its real error
    text = f"7767517\n{MAX_LAYER_COUNT} {MAX_BLOB_COUNT}\nInput in 0 1 x\n"
    _refused(vkncnn.ParamError, _net(None).load_param_mem, text, needles=(f"declares {MAX_LAYER_COUNT} layers",))


@pytest.mark.parametrize("counts,needle", [
    ((MAX_LAYER_COUNT + 1, 4), "layer count"), ((1, MAX_BLOB_COUNT + 1), "blob count"),
    ((0, 1), "positive"), ((-5, 1), "positive"),
])
def test_absurd_binary_header_counts(counts, needle):
    data = np.array([7767517, *counts, 16, 0, 1, 0, -233], "<i4").tobytes()
    _refused(vkncnn.ParamError, _net(None).load_param_bin, data, needles=(needle,))


def test_long_lines_and_unclosed_quotes_stay_bounded():
    many_params = "7767517\n1 1\nInput in 0 1 x " + "0=1 " * 250_000 + "\n"  # one 1 MB line
    run = Bounded(_net(None).load_param_mem, many_params)
    assert run.error is None and run.seconds < 10 and run.peak < 24 << 20, (run.error, run.seconds, run.peak)
    unclosed = "7767517\n1 1\nInput in 0 1 x 6=\"open " + "word " * 200_000 + "\n"
    Bounded(_net(None).load_param_mem, unclosed).refused(vkncnn.ParamError, "longer than 255", peak=16 << 20)


# -- Net's entry points with odd arguments ------------------------------------------------------
@pytest.mark.parametrize("value", [b"\xff", b"7767517\n1 1\nInput \xff 0 1 x\n", bytearray(b"\xfe\xfe")])
def test_load_param_mem_non_utf8(value):
    err = _refused(vkncnn.ParamError, _net(None).load_param_mem, value, needles=("UTF-8",))
    assert isinstance(err, ValueError)


@pytest.mark.parametrize("value", [None, 5, 1.5, ["7767517"], object()])
def test_load_param_mem_wrong_type(value):
    err = _refused(ArgumentTypeError, _net(None).load_param_mem, value,
                   needles=("load_param_mem()", type(value).__name__))
    assert isinstance(err, TypeError)


@pytest.mark.parametrize("value", ["abc", 5, None, 1.5, [1, 2], object()])
def test_load_model_mem_wrong_type(value):
    err = _refused(ArgumentTypeError, _net().load_model_mem, value, needles=("load_model_mem()", "bytes"))
    assert isinstance(err, TypeError)


def test_load_model_mem_takes_buffers_and_leaves_them_alone():
    for data in (bytearray(BIAS_WEIGHTS), memoryview(BIAS_WEIGHTS), np.frombuffer(BIAS_WEIGHTS, np.uint8).copy()):
        keep = bytes(data)
        net = _net()
        assert net.load_model_mem(data) == 0
        assert bytes(data) == keep
        assert net.run({"x": np.zeros((3, 1, 1), np.float32)})["y"].ravel().tolist() == [1, 2, 3]
    strided = memoryview(bytes(24))[::2]
    _refused(vkncnn.ModelFormatError, _net().load_model_mem, strided, needles=("contiguous",))


@pytest.mark.parametrize("value", [None, 5, 1.5, object(), ["m.param"]])
@pytest.mark.parametrize("loader", ["load_param", "load_param_bin", "load_model"])
def test_loaders_wrong_source_type(value, loader):
    err = _refused(ArgumentTypeError, _loaders(_net())[loader], value, needles=("expected a path",))
    assert isinstance(err, TypeError)


@pytest.mark.parametrize("args,kind,needle", [
    ((None, vkncnn.Layer), ArgumentTypeError, "NoneType"),
    ((1.5, vkncnn.Layer), ArgumentTypeError, "float"),
    ((True, vkncnn.Layer), ArgumentTypeError, "bool"),
    (("", vkncnn.Layer), ArgumentError, "without whitespace"),
    (("My Layer", vkncnn.Layer), ArgumentError, "without whitespace"),
    (("x" * 300, vkncnn.Layer), ArgumentError, "1-255"),
    ((-1, vkncnn.Layer), ArgumentError, "0..2^31-1"),
    ((1 << 40, vkncnn.Layer), ArgumentError, "0..2^31-1"),
    ((200, vkncnn.Layer), vkncnn.UnknownLayerError, "index 200"),
    (("Mine", "not callable"), ArgumentTypeError, "creator must be callable"),
    (("Mine", vkncnn.Layer, 42), ArgumentTypeError, "destroyer"),
])
def test_register_custom_layer_bad_arguments(args, kind, needle):
    _refused(kind, _net(None).register_custom_layer, *args, needles=(needle,))


def test_register_custom_layer_good_arguments():
    net = _net(None)
    assert net.register_custom_layer("Mine", vkncnn.Layer) == 0
    assert net.register_custom_layer(np.int32(256 | 7), vkncnn.Layer, None) == 0
    assert net.register_custom_layer(26, vkncnn.Layer) == 0  # ReLU by ncnn's index


@pytest.mark.parametrize("value,kind", [("0", ArgumentTypeError), (1.5, ArgumentTypeError),
                                        (None, ArgumentTypeError), (True, ArgumentTypeError),
                                        (float("nan"), ArgumentTypeError), (-2, ArgumentError)])
def test_set_vulkan_device_bad_arguments(value, kind):
    _refused(kind, _net(None).set_vulkan_device, value, needles=("set_vulkan_device()",))


def test_set_vulkan_device_good_arguments():
    class Device:
        index = 0

    net = _net(None)
    net.set_vulkan_device(-1)
    assert net._vkdev_index is None  # -1: the default device
    net.set_vulkan_device(np.int64(0))
    net.set_vulkan_device(Device())
    assert net._vkdev_index == 0


@pytest.mark.parametrize("value", [None, 0, 1.5, [], b"x"])
def test_find_blob_index_by_name_wrong_type(value):
    _refused(ArgumentTypeError, _net().find_blob_index_by_name, value, needles=("blob name",))


def test_find_blob_index_by_name_and_run_good_arguments():
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    assert net.find_blob_index_by_name("y") == 1 and net.find_blob_index_by_name("nope") == -1
    out = net.run({"x": np.zeros((3, 1, 1), np.float32)}, "y")  # one name, not its characters
    assert list(out) == ["y"]


def test_run_reads_a_number_as_one_value_never_as_a_size():
    net = _net("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x y\n")
    for value, want in ((5, [5.0]), (np.float32(-2), [0.0]), (2.5, [2.5]), (np.array(3.0), [3.0])):
        assert net.run({"x": value})["y"].tolist() == want


@pytest.mark.parametrize("inputs,outputs,needle", [
    ([("x", 1)], None, "dict"), (None, None, "dict"), ({"x": np.zeros(3)}, 5, "list of blob names"),
])
def test_run_bad_arguments(inputs, outputs, needle):
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    _refused(ArgumentTypeError, net.run, inputs, outputs, needles=(needle,))


def test_create_extractor_before_load():
    _refused(vkncnn.Error, _net(None).create_extractor, needles=("before load_param",))


# -- Extractor.input / extract --------------------------------------------------------------
@pytest.mark.parametrize("blob", [float("nan"), float("inf"), 1.5, None, True, b"x", ["x"]])
def test_input_and_extract_blob_of_wrong_type(blob):
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    with net.create_extractor() as ex:
        err = _refused(ArgumentTypeError, ex.input, blob, np.zeros((3, 1, 1), np.float32),
                       needles=("input()", "blob name (str) or index (int)"))
        assert isinstance(err, TypeError)
        _refused(ArgumentTypeError, ex.extract, blob, needles=("extract()",))


@pytest.mark.parametrize("mat,kind", [(5, ArgumentTypeError), (None, ArgumentTypeError), ("abc", ArgumentTypeError),
                                      (2.5, ArgumentTypeError), ([[1, 2], [3]], vkncnn.MatError),
                                      (np.array([1, "a"], dtype=object), vkncnn.MatError)])
def test_input_of_things_that_are_no_mat(mat, kind):
    net = _net()
    with net.create_extractor() as ex:
        _refused(kind, ex.input, "x", mat)


@pytest.mark.parametrize("args,kwargs,kind,needle", [
    (("a",), {}, ArgumentTypeError, "type must be the int 0 or 1"),
    ((float("nan"),), {}, ArgumentTypeError, "nan"),
    ((2,), {}, ArgumentError, "got 2"),
    ((), {"type": 1.0}, ArgumentTypeError, "float"),
    ((), {"type": -1}, ArgumentError, "got -1"),
    ((vkncnn.Mat(), 0, 0), {}, ArgumentError, "at most"),
])
def test_extract_bad_extra_arguments(args, kwargs, kind, needle):
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    with net.create_extractor() as ex:
        ex.input("x", np.zeros((3, 1, 1), np.float32))
        _refused(kind, ex.extract, "y", *args, needles=(needle,), **kwargs)


def test_extract_good_argument_forms():
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    with net.create_extractor() as ex:
        ex.input(np.int64(0), np.zeros((3, 1, 1), np.float32))
        assert ex.extract(np.int32(1))[1].numpy().ravel().tolist() == [1, 2, 3]
        m = vkncnn.Mat()
        assert ex.extract("y", m, 1) == 0 and m.numpy().ravel().tolist() == [1, 2, 3]
        assert ex.extract("y", type=0)[0] == 0
        _refused(vkncnn.BlobNotFoundError, ex.extract, 99, needles=("out of range",))


# -- Mat ----------------------------------------------------------------------------------------
def test_mat_larger_than_memory_is_refused_without_allocating(monkeypatch):
    import vkncnn.array_checks as checks
    monkeypatch.setattr(checks, "default_budget", lambda: 1 << 30)  # any machine: a 1 GiB budget
    run = Bounded(vkncnn.Mat, 2048, 2048, 2048)
    err = run.refused(MatAllocationError, "Mat(2048, 2048, 2048)", "34359738368 bytes", "budget", peak=1 << 20)
    assert isinstance(err, MemoryError) and isinstance(err, vkncnn.MatError)


def test_mat_past_the_element_cap_is_refused_on_any_machine():
    for args in ((1 << 20, 1 << 20), (np.uint64(1 << 40), np.uint64(1 << 40), 3), (1 << 62, 1 << 62, 1 << 62, 4)):
        run = Bounded(vkncnn.Mat, *args)
        run.refused(MatAllocationError, "2^33", peak=1 << 20)
    huge_view = np.broadcast_to(np.float32(1), (1 << 17, 1 << 17))  # 16 bytes of data, 64 GiB as a copy
    Bounded(vkncnn.Mat, huge_view).refused(MatAllocationError, "2^33", peak=1 << 20)


@pytest.mark.parametrize("args,kwargs,needle", [
    ((None,), {}, "NoneType"), ((1.5,), {}, "float"), (("abc",), {}, "str"), ((b"ab",), {}, "bytes"),
    ((complex(1, 2),), {}, "complex"), ((np.float32(2),), {}, "float32"), ((np.bool_(True),), {}, "bool"),
    ((True,), {}, "ints"), ((-1,), {}, ">= 0"), ((2, 3.0), {}, "ints"),
    ((2, None), {}, "ints"), ((2, "3"), {}, "ints"), ((float("nan"), 2), {}, "ints"),
    (([[1, 2], [3]],), {}, "inhomogeneous"), ((np.array([1, "a"], dtype=object),), {}, "real-valued"),
    ((object(),), {}, "real-valued"), ((np.zeros(3, np.complex64),), {}, "real-valued"),
    ((np.zeros(3, "datetime64[s]"),), {}, "real-valued"), ((np.zeros(2, [("a", "f4")]),), {}, "real-valued"),
    ((np.zeros((1,) * 5),), {}, "1-4 dims"), ((3,), {"elemsize": "x"}, "elemsize"),
    ((3,), {"elemsize": [1]}, "elemsize"), ((3,), {"elemsize": 3}, "elemsize"),
])
def test_mat_constructor_odd_arguments(args, kwargs, needle):
    _refused(vkncnn.MatError, vkncnn.Mat, *args, needles=(needle,), **kwargs)


def test_mat_from_object_whose_array_conversion_fails():
    class Bad:
        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("no array here")

    err = _refused(vkncnn.MatError, vkncnn.Mat, Bad(), needles=("RuntimeError", "no array here"))
    assert isinstance(err, TypeError)


def test_mat_leaves_a_read_only_array_alone():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    a.flags.writeable = False
    m = vkncnn.Mat(a)
    m.fill(9.0)
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("shape", [(2.5,), ("6",), (None,), (-2, -3), (1 << 32, 1 << 32), (), (1, 1, 1, 1, 6),
                                   (True, 6)])
def test_mat_reshape_odd_arguments(shape):
    _refused(vkncnn.MatError, vkncnn.Mat(6).reshape, *shape)


def test_mat_accessors_with_odd_arguments():
    m = vkncnn.Mat(np.zeros((2, 3, 4), np.float32))
    for q in (2, -1, 1.0, None):
        _refused(vkncnn.MatError, m.channel, q, needles=("channel()",))
    for y in (6, -1, "0"):
        _refused(vkncnn.MatError, m.row, y, needles=("row()",))
    _refused(vkncnn.MatError, m.fill, "abc", needles=("fill()",))
    with pytest.raises(vkncnn.MatError):
        m[0] = "x"
    _refused(vkncnn.MatError, m.create_like, np.zeros(3))
    assert m.reshape(np.int64(4), 6).h == 6 and m.channel(np.int64(1)).dims == 2
    assert len(list(vkncnn.Mat(np.arange(3, dtype=np.float32)))) == 3  # iteration still ends on IndexError


# -- pixel helpers ------------------------------------------------------------------------------
IMAGE = np.zeros((4, 5, 3), np.uint8)


@pytest.mark.parametrize("args,needle", [
    ((IMAGE, 1, float("inf"), 4), "w must be an int"),
    ((IMAGE, 1, 5.0, 4), "w must be an int"),
    ((IMAGE, 1, 5, None), "h must be an int"),
    ((IMAGE, 1.0, 5, 4), "pixel type must be an int"),
    ((IMAGE, 1, 5, 4, float("nan")), "stride must be an int"),
    ((None, 1, 5, 4), "uint8"),
    (([[1, 2], [3]], 1, 5, 4), "inhomogeneous"),
    ((memoryview(np.zeros((4, 12), np.uint8)[:, ::2]), 1, 2, 2), "cannot read memoryview"),
    (("pixels", 1, 5, 4), "uint8"),
])
def test_from_pixels_odd_arguments(args, needle):
    _refused(vkncnn.MatError, vkncnn.Mat.from_pixels, *args, needles=(needle,))


def test_pixel_resizes_beyond_memory_are_refused_without_allocating():
    for call, args in (("from_pixels_resize", (IMAGE, 1, 5, 4, 1 << 20, 1 << 20)),
                       ("from_pixels_roi_resize", (IMAGE, 1, 5, 4, 0, 0, 2, 2, 1 << 16, 1 << 18))):
        Bounded(getattr(vkncnn.Mat, call), *args).refused(MatAllocationError, call, peak=1 << 20)
    mat = vkncnn.Mat(np.zeros((3, 4, 5), np.float32))
    Bounded(mat.to_pixels_resize, 1, 1 << 20, 1 << 20).refused(MatAllocationError, "to_pixels_resize", peak=1 << 20)
    Bounded(mat.to_pixels, 1, 1 << 40).refused(MatAllocationError, "bytes apart", peak=1 << 20)


def test_substract_mean_normalize_odd_arguments():
    from vkncnn.pixels import substract_mean_normalize
    m = vkncnn.Mat(np.zeros((3, 2, 2), np.float32))
    _refused(vkncnn.MatError, m.substract_mean_normalize, "abc", [], needles=("mean",))
    _refused(vkncnn.MatError, m.substract_mean_normalize, [], [object()] * 3, needles=("norm",))
    _refused(vkncnn.MatError, m.substract_mean_normalize, [[1], [2, 3]], [], needles=("mean",))
    _refused(vkncnn.MatError, substract_mean_normalize, np.zeros((3, 2, 2)), [1, 2, 3], [], needles=("expects a Mat",))


# -- Option ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value,kind", [
    ("num_threads", "4", ArgumentTypeError), ("num_threads", 2.5, ArgumentTypeError),
    ("num_threads", None, ArgumentTypeError), ("num_threads", True, ArgumentTypeError),
    ("num_threads", -1, ArgumentError), ("flush_denormals", 4, ArgumentError),
    ("vulkan_device_index", -2, ArgumentError), ("openmp_blocktime", float("inf"), ArgumentTypeError),
    ("use_vulkan_compute", "yes", ArgumentTypeError), ("use_vulkan_compute", None, ArgumentTypeError),
    ("use_fp16_storage", 2, ArgumentTypeError), ("lightmode", 0.5, ArgumentTypeError),
])
def test_option_setters_refuse_wrong_values(field, value, kind):
    opt = vkncnn.Option()
    before = getattr(opt, field)
    _refused(kind, setattr, opt, field, value, needles=(f"Option.{field}",))
    assert getattr(opt, field) == before


def test_option_setters_accept_ncnn_forms():
    opt = vkncnn.Option()
    opt.use_vulkan_compute = 0
    opt.lightmode = np.bool_(True)
    opt.num_threads = np.int64(3)
    assert opt.use_vulkan_compute is False and opt.lightmode is True and opt.num_threads == 3
    opt.blob_allocator = object()  # allocators and vkncnn's own fields pass as they are
    twin = opt.copy()
    assert twin.num_threads == 3 and twin.use_vulkan_compute is False


# -- a sweep: every entry point, every odd value: it works or raises a vkncnn.Error --------------
ODD_VALUES = [None, True, -1, 0, 2 ** 70, 1.5, float("nan"), float("inf"), "", "x", "a\0b", b"\xff", bytearray(3),
              [], [1, [2]], {}, object(), np.float64("nan"), np.array([np.nan]), np.zeros((0,)), np.zeros((2, 0, 3)),
              np.array(["a"]), math.pi]


def _entry_points():
    net = _net()
    net.load_model_mem(BIAS_WEIGHTS)
    ex = net.create_extractor()
    mat = vkncnn.Mat(np.zeros((3, 2, 2), np.float32))
    opt = vkncnn.Option()
    return {
        "Net.load_param": _net(None).load_param, "Net.load_param_bin": _net(None).load_param_bin,
        "Net.load_param_mem": _net(None).load_param_mem, "Net.load_model": _net().load_model,
        "Net.load_model_mem": _net().load_model_mem,
        "Net.register_custom_layer": lambda v: _net(None).register_custom_layer(v, vkncnn.Layer),
        "Net.register_custom_layer(creator)": lambda v: _net(None).register_custom_layer("T", v),
        "Net.set_vulkan_device": _net(None).set_vulkan_device,
        "Net.find_blob_index_by_name": net.find_blob_index_by_name,
        "Net.run": net.run, "Net.run(outputs)": lambda v: net.run({"x": np.zeros((3, 1, 1))}, v),
        "Extractor.input(blob)": lambda v: ex.input(v, np.zeros((3, 1, 1), np.float32)),
        "Extractor.input(mat)": lambda v: ex.input("x", v),
        "Extractor.extract": ex.extract, "Extractor.extract(type)": lambda v: ex.extract("y", v),
        "Mat": vkncnn.Mat, "Mat(w, v)": lambda v: vkncnn.Mat(2, v), "Mat.reshape": mat.reshape,
        "Mat.channel": mat.channel, "Mat.fill": mat.fill, "Mat.clone_from": mat.clone_from,
        "Mat.from_pixels(pixels)": lambda v: vkncnn.Mat.from_pixels(v, 1, 2, 2),
        "Mat.from_pixels(w)": lambda v: vkncnn.Mat.from_pixels(IMAGE, 1, v, 4),
        "Mat.from_pixels(type)": lambda v: vkncnn.Mat.from_pixels(IMAGE, v, 5, 4),
        "Mat.from_pixels_resize": lambda v: vkncnn.Mat.from_pixels_resize(IMAGE, 1, 5, 4, v, 3),
        "Mat.from_pixels_roi": lambda v: vkncnn.Mat.from_pixels_roi(IMAGE, 1, 5, 4, v, 0, 2, 2),
        "Mat.to_pixels": mat.to_pixels, "Mat.to_pixels(stride)": lambda v: mat.to_pixels(1, v),
        "Mat.to_pixels_resize": lambda v: mat.to_pixels_resize(1, v, 2),
        "Mat.substract_mean_normalize": lambda v: mat.clone().substract_mean_normalize(v, v),
        "Option.num_threads": lambda v: setattr(opt, "num_threads", v),
        "Option.use_vulkan_compute": lambda v: setattr(opt, "use_vulkan_compute", v),
    }


@pytest.mark.parametrize("entry", list(_entry_points()))
def test_every_entry_point_works_or_raises_a_vkncnn_error(entry):
    call = _entry_points()[entry]
    for value in ODD_VALUES:
        try:
            call(value)
        except vkncnn.Error:
            pass
        except Exception as e:  # noqa: BLE001 - exactly what this test hunts
            pytest.fail(f"{entry}({value!r}) raised {type(e).__name__}: {e}")



# -- failures inside a layer, on both paths ---------------------------------------------------
class _Raises(vkncnn.Layer):
    """A custom layer whose forward raises what a buggy layer might."""

    exc = KeyError("no such thing")

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt=None):
        raise self.exc


@pytest.mark.parametrize("gpu", [False, pytest.param(True, marks=pytest.mark.gpu)], ids=["cpu", "gpu"])
@pytest.mark.parametrize("param,kind", [
    ("Interp i 1 1 x y 0=1 1=1e39 2=1e39", vkncnn.ShapeError),   # an infinite scale
    ("Interp i 1 1 x y 0=1 3=40000 4=40000", MemoryError),        # refused by the memory budget
    ("Custom c 1 1 x y", vkncnn.LayerError),                     # a custom layer's KeyError
])
def test_every_failure_inside_a_layer_is_a_vkncnn_error_naming_it(gpu, param, kind):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.memory_budget = 1 << 30
    net.register_custom_layer("Custom", _Raises)
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\n" + param + "\n")
    if gpu and net.gpu is None:
        pytest.skip("no Vulkan device")
    with pytest.raises(vkncnn.Error) as info:
        net.run({"x": np.ones((1, 4, 4), np.float32)})
    assert isinstance(info.value, kind)
    assert f"layer '{param.split()[1]}'" in str(info.value)
