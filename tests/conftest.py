"""Suite-wide test settings.

* Vulkan validation (incl. synchronization validation) is on for the whole suite
  unless VKNCNN_VALIDATION is set otherwise, and every test fails if the
  validation layer reported anything while it ran.
* `slow` tests (long profiles: every LLM decoder, 20-run stress tests) run only when
  asked for with `-m slow`.
* With VKNCNN_REQUIRE_GPU=1 (set by .ci/run) a missing Vulkan device fails the run
  instead of letting GPU tests skip: CI must really exercise the GPU path.
"""

import os
import sys

import pytest

os.environ.setdefault("VKNCNN_VALIDATION", "1")


def pytest_sessionstart(session):
    if os.environ.get("VKNCNN_REQUIRE_GPU") == "1":
        from vkncnn.gpu.vulkan import instance
        if instance.get_gpu_count() == 0:
            raise pytest.UsageError(f"VKNCNN_REQUIRE_GPU=1 but no Vulkan device: {instance.unavailable_reason()}")


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def vulkan_validation_is_silent():
    instance = sys.modules.get("vkncnn.gpu.vulkan.instance")
    if instance is not None:
        instance.clear_validation_messages()
    yield
    instance = sys.modules.get("vkncnn.gpu.vulkan.instance")
    if instance is not None:
        messages = list(instance.validation_messages())
        instance.clear_validation_messages()
        assert messages == [], f"Vulkan validation reported: {messages[:3]}"
