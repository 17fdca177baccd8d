"""The cache folder: platformdirs' where installed, else XDG_CACHE_HOME or ~/.cache."""

from __future__ import annotations

import sys
import types
from pathlib import Path

from vkncnn import user_dirs
from vkncnn.gpu.compiler import spirv_cache
from vkncnn.model_zoo import model_store


def test_without_platformdirs_the_cache_is_under_home(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # import fails as if not installed
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_dirs.user_cache_root() == tmp_path / ".cache" / "vkncnn"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_dirs.user_cache_root() == tmp_path / "xdg" / "vkncnn"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec says to ignore a relative path
    assert user_dirs.user_cache_root() == tmp_path / ".cache" / "vkncnn"


def test_platformdirs_names_the_folder_when_installed(monkeypatch, tmp_path):
    asked = []

    def user_cache_dir(appname, appauthor=None):
        asked.append((appname, appauthor))
        return str(tmp_path / "platform-cache" / appname)

    monkeypatch.setitem(sys.modules, "platformdirs", types.SimpleNamespace(user_cache_dir=user_cache_dir))
    monkeypatch.delenv("VKNCNN_CACHE_DIR", raising=False)
    monkeypatch.delenv("VKNCNN_MODEL_ZOO", raising=False)
    assert asked == [] and user_dirs.user_cache_root() == tmp_path / "platform-cache" / "vkncnn"
    assert asked == [("vkncnn", False)]
    assert spirv_cache.cache_dir() == tmp_path / "platform-cache" / "vkncnn" / "spirv"
    assert Path(model_store.model_dir()) == tmp_path / "platform-cache" / "vkncnn" / "models"


def test_the_variables_still_come_first(monkeypatch, tmp_path):
    monkeypatch.setenv("VKNCNN_CACHE_DIR", str(tmp_path / "spirv-here"))
    monkeypatch.setenv("VKNCNN_MODEL_ZOO", str(tmp_path / "models-here"))
    assert spirv_cache.cache_dir() == tmp_path / "spirv-here"
    assert model_store.model_dir() == str(tmp_path / "models-here")
