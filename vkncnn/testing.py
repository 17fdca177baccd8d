"""The shader test harness: run one layer on the numpy path and on the GPU, compare.

    from vkncnn.testing import test_layer
    report = test_layer("Convolution", {0: 16, 1: 3, 5: 1, 6: 432}, inputs=[x])   # seeded random weights
    print(report)            # max error per GPU variant (fp32/fp16 storage x pack1/pack4)
    test_layer(..., variants=("fp16a-pack4",))   # fp16 storage and fp16 arithmetic

Your own shaders: run_shader (compile, upload, dispatch once, download) and
ShaderProgram (persistent device buffers, recorded replay, GPU timing); both are
re-exported here from vkncnn.gpu. docs/shader-harness.md shows all three.

The numpy path is the reference (itself checked against real ncnn by the test
suite). Each GPU variant gets the same inputs and weights; fp16 storage rounds
them first, as ncnn's testutil does, so only the arithmetic differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .errors import GpuError
from .format.recording_modelbin import RecordingModelBin
from .gpu.run_shader import run_shader
from .gpu.shader_buffer import ShaderBuffer
from .gpu.shader_program import ShaderProgram
from .gpu.shader_timing import ShaderTiming
from .mat import Mat
from .net import Net

__all__ = ["FP16A_TOLERANCE", "FP16_TOLERANCE", "FP32_TOLERANCE", "LayerReport", "ShaderBuffer", "ShaderProgram",
           "ShaderTiming", "param_entries", "random_layer_weights", "random_net_weights", "rel_err", "run_layer",
           "run_shader", "test_layer", "time_layer"]

__test__ = False  # not a pytest module, despite the name

# a layer's params by id: numbers, strings, arrays (ncnn's .param entries)
Params = Mapping[int, float | str | list[float] | tuple[float, ...] | np.ndarray]
# a layer's weights: each load an array of fp32 values, or (array, True) for a tagged load (a
# storage flag word first); or the .bin's bytes themselves
Weights = bytes | bytearray | Sequence[npt.ArrayLike | tuple[npt.ArrayLike, bool]]

FP32_TOLERANCE = 1e-4
FP16_TOLERANCE = 1e-2
# fp16 arithmetic: every intermediate may round to fp16 too. On fp16-rounded inputs the layers
# of tests/gpu/test_fp16_arithmetic.py stay within 2x of real ncnn's own fp16-arithmetic error
# on the same layer; this bound is the harness's default for any layer.
FP16A_TOLERANCE = 2e-2


def _fmt_value(v: float | str | np.number) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (float, np.floating)):
        s = repr(float(v))
        return s if any(c in s for c in ".eEn") else s + ".0"
    return str(int(v))


def param_entries(params: Params) -> str:
    """`{0: 16, 3: [1, 2]}` -> '0=16 -23303=2,1,2' (ncnn's old array form, read everywhere)."""
    parts = []
    for k, v in sorted(params.items()):
        if isinstance(v, (list, tuple, np.ndarray)):
            vals = list(np.asarray(v).ravel()) if isinstance(v, np.ndarray) else list(v)
            parts.append(f"{-23300 - k}={len(vals)}" + "".join("," + _fmt_value(x) for x in vals))
        else:
            parts.append(f"{k}={_fmt_value(v)}")
    return " ".join(parts)


def layer_param_text(type_name: str, params: Params, n_inputs: int, n_outputs: int = 1) -> str:
    """A .param with one Input per layer input, then the layer: blobs in0.., out0.."""
    lines = [f"Input in{i} 0 1 in{i}" for i in range(n_inputs)]
    ins = " ".join(f"in{i}" for i in range(n_inputs))
    outs = " ".join(f"out{i}" for i in range(n_outputs))
    lines.append(f"{type_name} op {n_inputs} {n_outputs} {ins} {outs} {param_entries(params)}".rstrip())
    return f"7767517\n{len(lines)} {n_inputs + n_outputs}\n" + "\n".join(lines) + "\n"


def weights_bin(weights: Weights) -> bytes:
    """Weights as a .bin: each entry an array (raw fp32) or (array, tagged: bool); bytes pass."""
    if isinstance(weights, (bytes, bytearray)):
        return bytes(weights)
    out = bytearray()
    for w in weights:
        arr, flagged = w if isinstance(w, tuple) else (w, False)
        if flagged:
            out += b"\0\0\0\0"
        out += np.ascontiguousarray(arr, dtype="<f4").tobytes()
    return bytes(out)


def rel_err(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """max |a-b| over max(1, max |b|); nan==nan and same-sign infs agree; shape mismatch = inf."""
    with np.errstate(invalid="ignore"):  # a signalling nan (uninitialised memory ncnn returned) widens quietly
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    finite = np.isfinite(a) & np.isfinite(b)
    ok = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b)))
    if not np.all(finite | ok):
        return float("inf")
    with np.errstate(invalid="ignore"):  # inf - inf at the matched positions, masked below
        diff = np.where(ok, 0.0, np.abs(a - b))
    scale = max(1.0, float(np.max(np.where(ok, 0.0, np.abs(b)))))
    return float(np.max(diff)) / scale


def _layer_net(type_name: str, params: Params, weights: Weights, n_inputs: int, n_outputs: int, gpu: bool,
               fp16: bool, packing: bool, fp16_arithmetic: bool = False) -> Net:
    net = Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = fp16 and fp16_arithmetic
    net.opt.use_packing_layout = packing
    net.load_param_mem(layer_param_text(type_name, params, n_inputs, n_outputs))
    if gpu and net.gpu is None:
        raise GpuError("no Vulkan device: the GPU path cannot run (install a Vulkan driver, e.g. "
                       "mesa-vulkan-drivers for lavapipe)")
    net.load_model(weights_bin(weights))
    return net


def _infer(net: Net, inputs: Sequence[npt.ArrayLike], n_outputs: int) -> list[np.ndarray]:
    with net.create_extractor() as ex:
        for i, x in enumerate(inputs):
            ex.input(f"in{i}", Mat(x))
        return [ex.extract(f"out{i}")[1].numpy() for i in range(n_outputs)]


def run_layer(type_name: str, params: Params, weights: Weights, inputs: Sequence[npt.ArrayLike],
              n_outputs: int = 1, gpu: bool = False, fp16: bool = False, packing: bool = True,
              fp16_arithmetic: bool = False) -> list[np.ndarray]:
    """One layer through a real Net (the same path models take); returns its outputs.

    fp16_arithmetic (with fp16): the shaders that have an fp16-arithmetic variant use it, where
    the device has shaderFloat16."""
    net = _layer_net(type_name, params, weights, len(inputs), n_outputs, gpu, fp16, packing, fp16_arithmetic)
    return _infer(net, inputs, n_outputs)


def time_layer(type_name: str, params: Params, weights: Weights | None = None,
               inputs: Sequence[npt.ArrayLike] = (), n_outputs: int = 1, fp16: bool = False, packing: bool = True,
               runs: int = 20, warmup: int = 3, fp16_arithmetic: bool = False) -> dict[str, list[float]]:
    """GPU time of a layer's dispatches: {shader name: microseconds in each of `runs` inferences},
    from the GPU timestamps `vkncnn profile` uses (a shader dispatched twice in one run sums)."""
    arrays = [np.asarray(x, np.float32) for x in inputs]
    if weights is None:
        weights = random_layer_weights(type_name, params, len(arrays), n_outputs)
    net = _layer_net(type_name, params, weights, len(arrays), n_outputs, True, fp16, packing, fp16_arithmetic)
    net.gpu.profile = "dispatches"  # before the first inference: the plan gets its timer when recorded
    for _ in range(max(1, warmup)):
        _infer(net, arrays, n_outputs)
    net.gpu.layer_times.clear()
    for _ in range(runs):
        _infer(net, arrays, n_outputs)
    prefix = f"{type_name} op "  # labels are "Type name shader"; the layer is named op (layer_param_text)
    return {label[len(prefix):]: list(times) for label, times in net.gpu.layer_times.items()
            if label.startswith(prefix)}


@dataclass
class LayerReport:
    type_name: str
    params: dict
    shapes: list
    errors: dict = field(default_factory=dict)  # variant name -> max rel error
    failures: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        cells = "  ".join(f"{k}={v:.2e}" for k, v in self.errors.items())
        state = "PASS" if self.ok else "FAIL " + "; ".join(self.failures)
        return f"{self.type_name} {param_entries(self.params)} {self.shapes}: {cells}  {state}"


def _round_fp16(a: npt.ArrayLike) -> np.ndarray:
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float32)


def random_layer_weights(type_name: str, params: Params, n_inputs: int, n_outputs: int = 1,
                         seed: int = 0) -> bytes:
    """Seeded weights of the right sizes for a layer, asked from the layer itself."""
    return random_net_weights(layer_param_text(type_name, params, n_inputs, n_outputs), seed)


def random_net_weights(param_text: str, seed: int = 0) -> bytes:
    """Seeded weights of the right sizes for every layer of a .param, asked from the layers."""
    net = Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(param_text)
    mb = RecordingModelBin(seed)
    for layer in net.layers():
        mb.start_layer(layer)
        layer.load_model(mb)
    return b"".join(mb.chunks)


def test_layer(type_name: str, params: Params, weights: Weights | None = None,
               inputs: Sequence[npt.ArrayLike] = (), n_outputs: int = 1,
               variants: Sequence[str] = ("fp32-pack1", "fp32-pack4", "fp16-pack1", "fp16-pack4"),
               seed: int = 0) -> LayerReport:
    """Run a layer on the numpy path and on each GPU variant; report the max errors.

    variants: "<precision>-<packing>", precision fp32, fp16 (fp16 storage) or fp16a (fp16
    storage and fp16 arithmetic), packing pack1 or pack4.
    weights: None draws seeded random weights of the sizes the layer's params ask for.
    """
    arrays = [np.asarray(x, np.float32) for x in inputs]
    if weights is None:
        weights = random_layer_weights(type_name, dict(params), len(arrays), n_outputs, seed)
    report = LayerReport(type_name, dict(params), [tuple(x.shape) for x in arrays])
    for variant in variants:
        precision, pack = variant.split("-")
        fp16 = precision in ("fp16", "fp16a")
        ins = [_round_fp16(x) for x in arrays] if fp16 else arrays
        ws = weights
        if fp16 and not isinstance(weights, (bytes, bytearray)):
            ws = [(_round_fp16(w[0]), w[1]) if isinstance(w, tuple) else _round_fp16(w) for w in weights]
        want = run_layer(type_name, params, ws, ins, n_outputs, gpu=False)
        try:
            got = run_layer(type_name, params, ws, ins, n_outputs, gpu=True, fp16=fp16,
                            packing=(pack == "pack4"), fp16_arithmetic=precision == "fp16a")
        except Exception as e:  # the report says what failed; callers decide
            report.errors[variant] = float("inf")
            report.failures.append(f"{variant}: {type(e).__name__}: {e}")
            continue
        err = max(rel_err(g, w) for g, w in zip(got, want))
        report.errors[variant] = err
        tol = FP16A_TOLERANCE if precision == "fp16a" else FP16_TOLERANCE if fp16 else FP32_TOLERANCE
        if err > tol:
            report.failures.append(f"{variant}: error {err:.3g} > {tol}")
    return report
