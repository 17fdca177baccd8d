"""Load-time hostile model files: mutated bytes of real .param text, .param.bin and .bin
files, and the check that loading one either succeeds or raises a vkncnn.Error.

Mutations: truncation, bit flips, byte splices, huge/negative counts and sizes, wrong
storage flags, dangling and duplicate blobs, unknown layer types, non-UTF-8 bytes,
gigantic array params. A load fails the check if it raises anything but a vkncnn.Error,
takes more CPU time than the limit, or peaks above a small multiple of the input size in
Python memory (tracemalloc: numpy buffers included).
"""

from __future__ import annotations

import random
import time
import tracemalloc

from ..benchmark_models import BENCHMARK_DIR, DATA

MEMORY_FLOOR = 8 << 20  # bytes a load may always use (interpreter noise, small models)
MEMORY_FACTOR = 16      # beyond the floor, peak memory may reach this multiple of the input


def seed_corpus() -> list[tuple[str, bytes, bytes]]:
    """(kind, param bytes, bin bytes) taken from files the repository ships."""
    corpus = []
    for name in ("squeezenet", "mobilenet_v3", "nanodet_m", "vision_transformer", "yolov4-tiny"):
        corpus.append(("text", (BENCHMARK_DIR / f"{name}.param").read_bytes(), b""))
    corpus.append(("binary", (DATA / "examples/squeezenet_v1.1.param.bin").read_bytes(), b""))
    digits_param, digits_bin = DATA / "digits.param", DATA / "digits.bin"
    if digits_param.exists() and digits_bin.exists():
        corpus.append(("text", digits_param.read_bytes(), digits_bin.read_bytes()))
    return corpus


def _text_mutation(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    choice = rng.randrange(9)
    if choice == 0:  # huge or negative counts in the header
        lines[1] = rng.choice([b"999999999 1", b"1 999999999", b"-5 10", b"3 -1", b"0 0", b"2147483648 1"])
    elif choice == 1:  # a huge or negative number in a random token
        toks = lines[i].split()
        if toks:
            toks[rng.randrange(len(toks))] = rng.choice([b"999999999", b"-999999999", b"-1", b"0=-2147483649",
                                                          b"1=1e39", b"2=nan", b"-23300=99999999,1"])
        lines[i] = b" ".join(toks)
    elif choice == 2:  # a dangling blob
        lines[i] = lines[i].replace(b" 1 1 ", b" 1 1 no_such_blob ", 1)
    elif choice == 3:  # duplicate a line (duplicate names/tops)
        lines.insert(i, lines[i])
    elif choice == 4:  # unknown layer type
        lines[i] = b"NoSuchLayer" + lines[i][lines[i].find(b" "):] if b" " in lines[i] else b"NoSuchLayer x"
    elif choice == 5:  # non-UTF-8 bytes
        lines[i] = lines[i] + bytes([0xff, 0xfe, 0x80])
    elif choice == 6:  # gigantic array param
        lines[i] = lines[i] + b" 5=" + b",".join([b"1"] * rng.choice([10, 1000, 200000]))
    elif choice == 7:  # swap two lines (consumed before produced)
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:  # drop a line
        del lines[i]
    return b"\n".join(lines)


def _byte_mutation(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    choice = rng.randrange(6)
    if choice == 0:
        return bytes(buf[:rng.randrange(len(buf))])  # truncation
    if choice == 1:
        for _ in range(rng.randint(1, 8)):  # bit flips
            k = rng.randrange(len(buf))
            buf[k] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if choice == 2:  # a 32-bit word replaced by an extreme value
        k = rng.randrange(max(1, len(buf) // 4)) * 4
        buf[k:k + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff",
                                   b"\x47\x6b\x30\x01", b"\x38\x4b\x0d\x00", b"\x17\xff\xff\xff"])
        return bytes(buf)
    if choice == 3:  # splice: a chunk repeated
        a = rng.randrange(len(buf))
        b = min(len(buf), a + rng.randrange(1, 256))
        return bytes(buf[:b] + buf[a:b] + buf[b:])
    if choice == 4:  # a chunk deleted
        a = rng.randrange(len(buf))
        return bytes(buf[:a] + buf[a + rng.randrange(1, 64):])
    return bytes(buf) + bytes(rng.randrange(1, 64))  # trailing garbage


def mutate(kind: str, param: bytes, weights: bytes, rng: random.Random) -> tuple[bytes, bytes]:
    target = rng.randrange(3) if weights else rng.randrange(2)
    for _ in range(rng.randint(1, 3)):
        if target == 2:
            weights = _byte_mutation(weights, rng)
        elif kind == "text" and target == 0:
            param = _text_mutation(param, rng)
        else:
            param = _byte_mutation(param, rng)
    return param, weights


def load_case(kind: str, param: bytes, weights: bytes) -> None:
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    if kind == "text":
        net.load_param(param)
    else:
        net.load_param_bin(param)
    if weights:
        net.load_model(weights)


def run_case(kind: str, param: bytes, weights: bytes, time_limit: float) -> str:
    """'ok', an error class name, or 'FAIL: ...' for a crash, a hang or a memory blow-up."""
    import vkncnn
    import vkncnn.layers  # noqa: F401 - before the clock: a process's first load would import them all

    tracemalloc.start()
    t0 = time.process_time()  # CPU time: a shared, loaded machine must not fake a hang
    try:
        load_case(kind, param, weights)
        outcome = "ok"
    except vkncnn.Error as e:
        outcome = type(e).__name__
    except Exception as e:  # noqa: BLE001 - exactly what the fuzzer hunts
        outcome = f"FAIL: {type(e).__name__}: {e}"
    finally:
        elapsed = time.process_time() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    if elapsed > time_limit:
        outcome = f"FAIL: took {elapsed:.2f} s"
    limit = MEMORY_FLOOR + MEMORY_FACTOR * (len(param) + len(weights))
    if peak > limit:
        outcome = f"FAIL: peak memory {peak} bytes > {limit}"
    return outcome
