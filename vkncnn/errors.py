"""One exception hierarchy for everything vkncnn reports.

Every message says where (file, line, layer, blob) and what was expected against
what came, so a user never has to guess why a model did not load or run.
"""


class Error(Exception):
    """Base class of every error vkncnn raises on purpose."""


class ModelFormatError(Error, ValueError):
    """A .param / .param.bin / .bin file is malformed or inconsistent."""


class ModelFileError(ModelFormatError, OSError):
    """A model path cannot be opened, or names something that is not a regular file.

    Also an OSError, so code written for open()'s failures keeps working.
    """


class ParamError(ModelFormatError):
    """A .param file (text or binary) is malformed."""


class WeightError(ModelFormatError):
    """A .bin weight file is truncated, mis-tagged or does not match the params."""


class UnknownLayerError(ModelFormatError):
    """A layer type is neither built in nor registered as a custom layer."""


class GraphError(Error, ValueError):
    """The layer graph is inconsistent (dangling blob, cycle, duplicate producer)."""


class BlobNotFoundError(Error, KeyError):
    """An input/extract named a blob that the net does not have."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ShapeError(Error, ValueError):
    """A layer received blobs whose shapes it cannot work with."""


class MatError(Error, TypeError):
    """A Mat could not be made from, or converted to, what was given."""


class MatShapeError(MatError, RuntimeError):
    """A Mat shape ncnn's binding refuses (too many dims, a batch axis out of range): a
    RuntimeError too, as pyncnn raises one."""


class MatAllocationError(MatError, MemoryError):
    """A Mat (or an image made from one) would need more memory than the machine has."""


class ArgumentError(Error, ValueError):
    """A public function or setter got an argument it cannot use (a value out of range)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """A public function or setter got an argument of a type it does not take."""


class TokenizerError(ArgumentError):
    """Text has a character (or names a token) that the tokenizer has no token for."""


class LayerError(Error, RuntimeError):
    """A layer failed while loading or running; the message names the layer."""


class MemoryBudgetError(Error, MemoryError):
    """A layer would allocate more than opt.memory_budget (vkncnn/memory_budget.py)."""


class GpuError(Error, RuntimeError):
    """The Vulkan path failed: no loader, no device, out of device memory, device lost."""


class ShaderCompileError(GpuError):
    """A GLSL compute shader failed to compile; the message carries glslang's log."""


def where(source: str | None, line: int | None = None) -> str:
    """Format a location prefix such as 'model.param:12: '."""
    if source is None:
        return ""
    return f"{source}:{line}: " if line is not None else f"{source}: "


class MissingPackageError(Error, ImportError):
    """An optional package (OpenCV for drawing, ...) that a helper needs is not installed."""
