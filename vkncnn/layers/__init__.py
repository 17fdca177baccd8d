"""Built-in layers: one module per ncnn layer type, each registering itself.

Importing this package imports every module in it, which fills LAYER_REGISTRY.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
