"""The on-disk VkPipelineCache: written after pipelines are made, reused, damage ignored."""

from __future__ import annotations

import pytest

from vkncnn.gpu.vulkan import instance
from vkncnn.gpu.vulkan import pipeline_cache as pc
from vkncnn.gpu.vulkan.pipeline import Pipeline

pytestmark = pytest.mark.gpu

@pytest.fixture
def vkdev(tmp_path, monkeypatch):
    monkeypatch.setenv("VKNCNN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("VKNCNN_PIPELINE_CACHE", raising=False)
    return instance.get_gpu_device()


def saved_cache(vkdev) -> pc.DiskPipelineCache:
    cache = pc.DiskPipelineCache(vkdev)
    cache.pipeline_created()
    assert cache.save()
    cache.destroy()
    return cache


def test_saved_then_loaded(vkdev):
    cache = saved_cache(vkdev)
    payload = pc.read_payload(cache.path, vkdev.info)
    assert payload is not None and pc.payload_matches(payload, vkdev.info)
    again = pc.DiskPipelineCache(vkdev)
    try:
        assert again.loaded_bytes == len(payload)
        assert not again.save()  # nothing new: no write
    finally:
        again.destroy()


def test_pipelines_go_through_the_device_cache(vkdev):
    disk = vkdev.vk_pipeline_cache()
    disk._dirty = False
    pipe = Pipeline(vkdev)
    pipe.set_local_size_xyz(13, 3, 1)  # a local size no other code asks for: a new pipeline
    pipe.create("upload_cast")
    try:
        assert disk._dirty
    finally:
        pipe.destroy()


@pytest.mark.parametrize("damage", ["flip_payload", "truncate", "foreign_device", "not_ours", "empty"])
def test_damaged_or_foreign_file_is_ignored(vkdev, damage):
    path = saved_cache(vkdev).path
    blob = bytearray(path.read_bytes())
    if damage == "flip_payload":
        blob[-1] ^= 0xFF
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "foreign_device":  # checksum fine, Vulkan header names another vendor
        payload = bytearray(blob[pc._HEADER:])
        payload[8] ^= 0x01
        pc.write_payload(path, bytes(payload))
        blob = bytearray(path.read_bytes())
    elif damage == "not_ours":
        blob = bytearray(b"garbage" * 10)
    else:
        blob = bytearray()
    path.write_bytes(bytes(blob))
    assert pc.read_payload(path, vkdev.info) is None
    cache = pc.DiskPipelineCache(vkdev)  # starts empty instead of handing the driver junk
    try:
        assert cache.loaded_bytes == 0
    finally:
        cache.destroy()


def test_oversized_file_is_not_read(vkdev, monkeypatch):
    path = saved_cache(vkdev).path
    monkeypatch.setattr(pc, "MAX_FILE_BYTES", 0)
    assert pc.read_payload(path, vkdev.info) is None


def test_switched_off(vkdev, monkeypatch, tmp_path):
    monkeypatch.setenv("VKNCNN_PIPELINE_CACHE", "0")
    cache = pc.DiskPipelineCache(vkdev)
    try:
        cache.pipeline_created()
        assert cache.path is None and not cache.save()
    finally:
        cache.destroy()
    assert not list(tmp_path.glob("*.vkpc"))


def test_unwritable_folder_is_no_error(vkdev, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    monkeypatch.setenv("VKNCNN_CACHE_DIR", str(blocker / "sub"))  # a folder under a file
    cache = pc.DiskPipelineCache(vkdev)
    try:
        cache.pipeline_created()
        assert not cache.save()
    finally:
        cache.destroy()
