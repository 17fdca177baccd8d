"""Where the zoo's model files live. vkncnn never downloads them: each file is looked up
in a local folder and a missing one is a ModelFileError that names the file and the
folder to put it in.

The folder is, first found: the `root` argument (a model's `model_dir`), the
VKNCNN_MODEL_ZOO environment variable, models/ in the platform's cache folder
(~/.cache/vkncnn/models on Linux; vkncnn/user_dirs.py). The files are the ones
ncnn's model zoo uses (https://github.com/nihui/ncnn-assets/tree/master/models).
"""

from __future__ import annotations

import os

from ..errors import ModelFileError
from ..user_dirs import user_cache_root
from ..utils.download import check_sha1

__all__ = ["get_model_file", "model_dir", "purge"]

ENV_VAR = "VKNCNN_MODEL_ZOO"
ASSETS_URL = "https://github.com/nihui/ncnn-assets/raw/master/models/"

# sha1 of the published files: a file given with tag=True must match it
MODEL_SHA1 = {
    "mobilenet_yolo.param": "4ff279e78cdb0b8bbc9363181df6f094ad46dc36",
    "mobilenet_yolo.bin": "1528cf08b9823fc01aaebfc932ec8c8d4a3b1613",
    "mobilenetv2_yolov3.param": "3f5b78b0c982f8bdf3a2c3a27e6136d4d2680e96",
    "mobilenetv2_yolov3.bin": "0705b0f8fe5a77718561b9b7d6ed4f33fcd3d455",
    "yolov4-tiny-opt.param": "de59186323ebad5650631e12a6cc66b526ec7df4",
    "yolov4-tiny-opt.bin": "1765c3b251c041dd6ac59d2ec3ddf7b983fe9ee9",
    "yolov4-opt.param": "e92d3a3a8ac5e6a6c08c433aa2252b0680124328",
    "yolov4-opt.bin": "69d128b42b70fb790e9d3ccabcf1b6e8cc2859fe",
    "yolov5s.param": "6fa8ccc8cabc0f5633ab3c6ffa268e6042b8888f",
    "yolov5s.bin": "0cbab3664deb090480ea748c1305f6fe850b9ac4",
    "yolov7-tiny.param": "35ab0c1ce2864e0759d5794aa818df2de3013ab3",
    "yolov7-tiny.bin": "c0454f072b41997aa230c3fe1c1d504566574b6c",
    "yolov8s.param": "e9de3c929d1c93f7dc94ed0f125795ac16ecc120",
    "yolov8s.bin": "90f4eb9e90086e2ec3af4c7837f00757e710b9c6",
    "yolact.param": "e65bae7052d9e9b9d45e1214a8d1b5fe6f64e8af",
    "yolact.bin": "9bda99f50b1c14c98c5c6bbc08d4f782eed66548",
    "mobilenet_ssd_voc_ncnn.param": "3723ce3e312db6a102cff1a5c39dae80e1de658e",
    "mobilenet_ssd_voc_ncnn.bin": "8e2d2139550dcbee1ce5e200b7697b25aab29656",
    "squeezenet_ssd_voc.param": "52c669821dc32ef5b7ab30749fa71a3bc27786b8",
    "squeezenet_ssd_voc.bin": "347e31d1cbe469259fa8305860a7c24a95039202",
    "mobilenetv2_ssdlite_voc.param": "52dab628ecac8137e61ce3aea1a912f9c5a0a638",
    "mobilenetv2_ssdlite_voc.bin": "9fea06f74f7c60d753cf703ea992f92e50a986d4",
    "mobilenetv3_ssdlite_voc.param": "f36661eff1eda1e36185e7f2f28fc722ad8b66bb",
    "mobilenetv3_ssdlite_voc.bin": "908f63ca9bff0061a499512664b9c533a0b7f485",
    "squeezenet_v1.1.param": "a63d779a1f789af976bc4e2eae86fdd9b0bb6c2c",
    "squeezenet_v1.1.bin": "262f0e33e37aeac69021b5a3556664be65fc0aeb",
    "ZF_faster_rcnn_final.param": "3ba57cccd1d4a583f6eb76eae25a2dbda7ce7f74",
    "ZF_faster_rcnn_final.bin": "1095fbb5f846a1f311b40941add5fef691acaf8d",
    "pelee.param": "3586ec3d663b1cc8ec8c662768caa9c7fbcf4fdc",
    "pelee.bin": "2442ad483dc546940271591b86db0d9c8b1c7118",
    "mnet.25-opt.param": "6cfeda08d5494a1274199089fda77c421be1ecac",
    "mnet.25-opt.bin": "3ff9a51dc81cdf506a87543dbf752071ffc50b8d",
    "rfcn_end2end.param": "50acebff393c91468a73a7b7c604ef231429d068",
    "rfcn_end2end.bin": "9a68cd937959b4dda9c5bf9c99181cb0e40f266b",
    "shufflenet_v2_x0.5.param": "d6b289cda068e9a9d8a171fb909352a05a39a494",
    "shufflenet_v2_x0.5.bin": "2ccd631d04a1b7e05483cd8a8def76bca7d330a8",
    "pose.param": "7c8f8d72c60aab6802985423686b36c61be2f68c",
    "pose.bin": "7f691540972715298c611a3e595b20c59c2147ce",
    "nanodet_m.param": "979d09942881cf1207a93cbfa9853005a434469b",
    "nanodet_m.bin": "51d868905361e4ba9c45bd12e8a5608e7aadd1bd",
}

# files published in parts (name.part01, name.part02, ...): joined here when all parts are present
SPLIT_FILES = {"ZF_faster_rcnn_final.bin": 3, "rfcn_end2end.bin": 2, "yolov4-opt.bin": 7}


def model_dir(root: str | os.PathLike | None = None) -> str:
    """The folder model files are read from (module docstring)."""
    return os.path.expanduser(root or os.environ.get(ENV_VAR) or str(user_cache_root() / "models"))


def _join_parts(folder: str, name: str) -> bool:
    parts = [os.path.join(folder, f"{name}.part{i + 1:02d}") for i in range(SPLIT_FILES.get(name, 0))]
    if not parts or not all(os.path.isfile(p) for p in parts):
        return False
    with open(os.path.join(folder, name), "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                out.write(f.read())
    return True


def get_model_file(name: str, tag: str | bool | None = None, root: str | os.PathLike | None = None) -> str:
    """The path of model file `name` in the model folder.

    tag: a sha1 prefix the file must match, or True for the published file's sha1;
    None (default) accepts any file of that name (a model converted locally, say)."""
    folder = model_dir(root)
    path = os.path.join(folder, name)
    if not os.path.isfile(path) and not _join_parts(folder, name):
        hint = f" (or its parts {name}.part01..)" if name in SPLIT_FILES else ""
        raise ModelFileError(f"model file {name} not found in {folder}: vkncnn does not download models; "
                             f"place {name}{hint} there (published at {ASSETS_URL}{name}), or pass model_dir= "
                             f"or set {ENV_VAR} to the folder that has it")
    expected = MODEL_SHA1.get(name) if tag is True else tag
    if isinstance(expected, str) and not check_sha1(path, expected):
        raise ModelFileError(f"model file {path}: its sha1 does not start with {expected}")
    return path


def purge(root: str | os.PathLike | None = None) -> None:
    """Delete the zoo's known model files from the model folder."""
    folder = model_dir(root)
    for name in MODEL_SHA1:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            os.remove(path)
