"""Write a GLSL compute shader, run it on numpy arrays, test and time it; then test a built-in layer.

    python3 examples/custom_shader.py [--size 100000] [--device 0]

Part 1 runs a shader of our own once through vkncnn.testing.run_shader: a leaky ReLU
over a buffer, y = x > 0 ? x : slope * x, with the slope as a specialization constant
and the length as a push constant. vkncnn's preamble gives every shader `sfp` (the
storage type: float, or float16_t with fp16 storage) and buffer_ld1 / buffer_st1 to
load and store it, so one source serves both precisions. The result is compared with
numpy, in fp32 storage and, where the device has 16-bit storage, in fp16.

Part 2 keeps a shader and its buffers on the device with vkncnn.testing.ShaderProgram,
the way to iterate on a kernel: an accumulation y += x is recorded once and replayed
ten times with nothing uploaded in between (y ends as 10 x), new data is written into
the same buffer and seen by the next replay, and the leaky ReLU is timed with GPU
timestamps.

Part 3 runs a built-in layer through the shader test harness, vkncnn.testing.test_layer:
the layer on the numpy path against every GPU variant (fp32/fp16 storage x pack1/pack4),
as `vkncnn shadertest` does from the command line.

Needs a Vulkan device (lavapipe, Mesa's CPU driver, will do) and, for parts 1 and 2, a
GLSL compiler (pip install ".[compiler]", or glslang-tools from the system). Without a
device the script says so and exits 0; without a compiler it skips parts 1 and 2. The
built-in layers of part 3 run from the SPIR-V that ships with vkncnn and need no compiler.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import vkncnn
from vkncnn.testing import ShaderProgram, random_layer_weights, run_shader, test_layer

LEAKY_RELU = """
#version 450
layout (constant_id = 0) const float slope = 0.1;
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (binding = 0) readonly buffer x_blob { sfp x[]; };
layout (binding = 1) writeonly buffer y_blob { sfp y[]; };
layout (push_constant) uniform parameter { int n; } p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n)
        return;
    afp v = buffer_ld1(x, i);
    buffer_st1(y, i, v > afp(0) ? v : v * afp(slope));
}
"""


ACCUMULATE = """
#version 450
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (binding = 0) readonly buffer x_blob { sfp x[]; };
layout (binding = 1) buffer y_blob { sfp y[]; };
layout (push_constant) uniform parameter { int n; } p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n)
        return;
    buffer_st1(y, i, buffer_ld1(y, i) + buffer_ld1(x, i));
}
"""


def leaky_relu_on_gpu(x: np.ndarray, slope: float, fp16: bool, device: int | None) -> np.ndarray:
    (y,) = run_shader(LEAKY_RELU, [x], [x.shape], global_size=(x.size, 1, 1), push_constants=[x.size],
                      specializations=[slope], fp16=fp16, device=device)
    return y


def check_own_shader(size: int, device: int | None) -> bool:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(size).astype(np.float32)
    slope = 0.1
    expected = np.where(x > 0, x, x * np.float32(slope))
    fp16 = vkncnn.get_gpu_info(device or 0).support_fp16_storage()
    ok = True
    for precision, tolerance in [("fp32", 1e-6), ("fp16", 2e-3)][:1 + fp16]:
        try:
            y = leaky_relu_on_gpu(x, slope, precision == "fp16", device)
        except vkncnn.ShaderCompileError as e:
            print(f"part 1 skipped: {str(e).splitlines()[0]}")
            return True
        err = float(np.max(np.abs(y - expected) / np.maximum(1.0, np.abs(expected))))
        ok &= err <= tolerance
        print(f"leaky ReLU, {size} values, {precision} storage: max error {err:.2e} "
              f"({'PASS' if err <= tolerance else 'FAIL'}, tolerance {tolerance:g})")
    return ok


def iterate_with_a_program(size: int, device: int | None) -> bool:
    x0 = np.random.default_rng(2).integers(-8, 8, size).astype(np.float32)  # small ints: the sums are exact
    try:
        accumulate = ShaderProgram(ACCUMULATE, device=device)
    except vkncnn.ShaderCompileError as e:
        print(f"part 2 skipped: {str(e).splitlines()[0]}")
        return True
    with accumulate:
        x = accumulate.buffer(x0)            # uploaded once; stays on the device
        y = accumulate.buffer(x0.shape)      # zeros
        accumulate.record([x, y], [size], global_size=size)
        accumulate.replay(10)                # the recorded command buffer, submitted 10 times
        ok = np.array_equal(y.read(), 10 * x0)
        x.write(-x0)                         # new data in the same buffer: the recording reads it
        accumulate.replay(10)
        ok &= not np.any(y.read())
        print(f"accumulate y += x, {size} values, recorded once and replayed 10 + 10 times: "
              f"{'PASS' if ok else 'FAIL'}")
    with ShaderProgram(LEAKY_RELU, specializations=[0.1], device=device) as leaky:
        x = leaky.buffer(x0)
        y = leaky.buffer(x0.shape)
        timing = leaky.time([x, y], [size], global_size=size, n=50, warmup=5)
        print(f"leaky ReLU, {size} values: {timing}")
    return ok


def check_builtin_layer() -> bool:
    x = np.random.default_rng(1).standard_normal((8, 12, 12)).astype(np.float32)
    # Convolution's params by ncnn id: 0 num_output, 1 kernel, 4 pad, 5 bias_term, 6 weight count
    params = {0: 16, 1: 3, 4: 1, 5: 1, 6: 16 * 8 * 9}
    weights = random_layer_weights("Convolution", params, n_inputs=1)  # seeded, sized by the layer itself
    report = test_layer("Convolution", params, weights, [x])  # (weights=None draws the same ones)
    print(report)
    return report.ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="values in the test buffer")
    ap.add_argument("--device", type=int, help="Vulkan device index (default: vkncnn's choice)")
    args = ap.parse_args(argv)
    if vkncnn.get_gpu_count() == 0:
        print("no Vulkan device: nothing to run (install a Vulkan driver, e.g. mesa-vulkan-drivers for lavapipe)")
        return 0
    ok = check_own_shader(args.size, args.device)
    ok &= iterate_with_a_program(args.size, args.device)
    ok &= check_builtin_layer()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
