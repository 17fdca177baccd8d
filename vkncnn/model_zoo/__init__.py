"""ncnn's model zoo for vkncnn: classifiers and detectors with their pre- and
post-processing. Model files are read from a local folder (model_store.py); nothing
is downloaded."""

from . import model_store  # noqa: F401
from .model_zoo import get_model, get_model_list

__all__ = ["get_model", "get_model_list"]
