"""The zoo's names: get_model("yolov5s", ...) makes the model of that name."""

from __future__ import annotations

from typing import Any

from ..errors import ArgumentError
from ._base import ZooModel
from .fasterrcnn import Faster_RCNN
from .mobilenetssd import MobileNet_SSD
from .mobilenetv2ssdlite import MobileNetV2_SSDLite
from .mobilenetv3ssdlite import MobileNetV3_SSDLite
from .nanodet import NanoDet
from .peleenetssd import PeleeNet_SSD
from .retinaface import RetinaFace
from .rfcn import RFCN
from .shufflenetv2 import ShuffleNetV2
from .simplepose import SimplePose
from .squeezenet import SqueezeNet
from .squeezenetssd import SqueezeNet_SSD
from .yolact import Yolact
from .yolov2 import MobileNet_YoloV2
from .yolov3 import MobileNetV2_YoloV3
from .yolov4 import YoloV4, YoloV4_Tiny
from .yolov5 import YoloV5s
from .yolov7 import YoloV7_Tiny
from .yolov8 import YoloV8s

__all__ = ["get_model", "get_model_list"]

# ncnn's order: get_model_list() lists them so
_models = {
    "mobilenet_yolov2": MobileNet_YoloV2,
    "mobilenetv2_yolov3": MobileNetV2_YoloV3,
    "yolov4_tiny": YoloV4_Tiny,
    "yolov4": YoloV4,
    "yolov5s": YoloV5s,
    "yolov7_tiny": YoloV7_Tiny,
    "yolov8s": YoloV8s,
    "yolact": Yolact,
    "mobilenet_ssd": MobileNet_SSD,
    "squeezenet_ssd": SqueezeNet_SSD,
    "mobilenetv2_ssdlite": MobileNetV2_SSDLite,
    "mobilenetv3_ssdlite": MobileNetV3_SSDLite,
    "squeezenet": SqueezeNet,
    "faster_rcnn": Faster_RCNN,
    "peleenet_ssd": PeleeNet_SSD,
    "retinaface": RetinaFace,
    "rfcn": RFCN,
    "shufflenetv2": ShuffleNetV2,
    "simplepose": SimplePose,
    "nanodet": NanoDet,
}


def get_model(name: str, **kwargs: Any) -> ZooModel:
    """The model called `name` (any case), made with kwargs (and model_dir= for its folder)."""
    if not isinstance(name, str):
        raise ArgumentError(f"get_model(): name must be a str, got {type(name).__name__}")
    model = _models.get(name.lower())
    if model is None:
        listing = "\n\t".join(sorted(_models))
        raise ArgumentError(f'"{name.lower()}" is not among the following model list:\n\t{listing}')
    return model(**kwargs)


def get_model_list() -> list[str]:
    return list(_models)
