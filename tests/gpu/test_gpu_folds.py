"""Layers the GPU planner folds into the dispatch before them, each against the numpy path:
an activation layer (ReLU, Swish) after a convolution or a Gemm, fp32 and fp16 storage (a
producer with an activation of its own keeps the layer apart); a decoder's residual add
after a one-row Gemm, which stands in for the matrix-vector kernel's bias (where the shapes
do not allow it as the plan records, both layers record on their own); an RMSNorm read only
by one-row Gemms, which normalise its input themselves, and a gate and an up Gemm whose
outputs a BinaryOp multiplies, one dispatch for the three (again only where the shapes allow);
the ExpandDims -> Tile -> Reshape that repeats kv heads before an SDPA, which only folds
where it repeats whole heads (the decoders' tests in tests/models/test_llm_decode.py run it);
a one-token RoPE after a Gemm, through the views between them; and a one-row attention's
splits, merged by the product its output reaches through views (not where the row or its
splits are too many for that kernel, or for its merge to pay, nor where the attention's
output is the blob asked for)."""

import numpy as np
import pytest

import vkncnn
from tests.gpu.fold_support import merges_in_the_product
from vkncnn.gpu.vulkan import instance
from vkncnn.tools.randweights import random_weights

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

# (producer line, its input shape): a tiled convolution, a depthwise one, a decode step's Gemm
# (one row: the matrix-vector kernel) and a prefill's (several rows: the matrix kernel)
PRODUCERS = {
    "convolution": ("Convolution p 1 1 x a 0=16 1=3 4=1 5=1 6=1152", (8, 9, 7)),
    "depthwise": ("ConvolutionDepthWise p 1 1 x a 0=8 1=3 4=1 5=1 6=72 7=8", (8, 9, 7)),
    "gemv": ("Gemm p 1 1 x a 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=24 9=32", (1, 32)),
    "gemm": ("Gemm p 1 1 x a 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=24 9=32", (5, 32)),
}
ACTIVATIONS = {"swish": "Swish act 1 1 a y", "relu": "ReLU act 1 1 a y 0=0.1"}


def _nets(tmp_path, producer: str, activation: str):
    line, shape = PRODUCERS[producer]
    text = f"7767517\n3 3\nInput in 0 1 x\n{line}\n{ACTIVATIONS[activation]}\n"
    param = tmp_path / "net.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=4, input_shapes=shape)
    nets = {name: _load(param, weights, gpu, fp16)
            for name, gpu, fp16 in (("cpu", False, False), ("fp32", True, False), ("fp16", True, True))}
    return nets, shape


def _load(param, weights: bytes, gpu: bool, fp16: bool = False) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = False
    net.load_param(str(param))
    net.load_model(weights)
    return net


def _run(net, x, r=None):
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(x))
        if r is not None:
            ex.input("r", vkncnn.Mat(r))
        y = ex.extract("y")[1].numpy()
        plan = ex._gpu.plans[-1] if ex._gpu is not None else None
    return y, plan


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("producer", sorted(PRODUCERS))
def test_activation_folds_into_the_producer(tmp_path, producer, activation):
    nets, shape = _nets(tmp_path, producer, activation)
    x = np.random.default_rng(5).uniform(-3, 3, shape).astype(np.float32)
    want, _ = _run(nets["cpu"], x)
    for name, tol in (("fp32", 1e-4), ("fp16", 2e-2)):
        got, plan = _run(nets[name], x)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{producer} {activation} {name}")
        assert "act" not in [label.split()[1] for label in _dispatch_labels(nets[name], x)], plan


def _dispatch_labels(net, x) -> list:
    """The layers that dispatched, from a profiled plan (every dispatch labelled with its layer)."""
    net.gpu.release_plans()  # a cached plan replays without timestamps
    net.gpu.profile = "dispatches"
    net.gpu.layer_times.clear()
    try:
        _run(net, x)
        labels = list(net.gpu.layer_times)
    finally:
        net.gpu.profile = False
    assert labels, "the profiled plan labelled no dispatch"
    return labels


def test_a_convolution_with_its_own_activation_keeps_the_layer_apart(tmp_path):
    line = "Convolution p 1 1 x a 0=16 1=3 4=1 5=1 6=1152 9=1"
    text = f"7767517\n3 3\nInput in 0 1 x\n{line}\nSwish act 1 1 a y\n"
    param = tmp_path / "own.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=4, input_shapes=(8, 9, 7))
    x = np.random.default_rng(6).uniform(-3, 3, (8, 9, 7)).astype(np.float32)
    cpu, gpu = _load(param, weights, False), _load(param, weights, True)
    np.testing.assert_allclose(_run(gpu, x)[0], _run(cpu, x)[0], rtol=1e-4, atol=1e-4)
    assert "act" in [label.split()[1] for label in _dispatch_labels(gpu, x)]


# -- a residual add after a one-row Gemm ------------------------------------------------------
N, K = 24, 32
RESIDUAL = f"""7767517
5 5
Input x 0 1 x
Input r 0 1 r
Gemm proj 1 1 x p 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
BinaryOp add 2 1 r p s 0=0
ReLU act 1 1 s y
"""


def _residual_nets(tmp_path):
    param = tmp_path / "res.param"
    param.write_text(RESIDUAL)
    weights = random_weights(str(param), seed=2, input_shapes={"x": (1, K), "r": (1, N)})
    return _load(param, weights, False), _load(param, weights, True)


@pytest.mark.parametrize("rows, r_shape, folded", [
    (1, (1, N), True),     # a decode step: one row, the summand of the output's shape
    (3, (3, N), False),    # a prefill: several rows take the matrix kernel, the sum its own dispatch
    (1, (N,), False),      # a 1-D summand broadcasting against (1, N): not a stand-in bias
])
def test_residual_sum_after_a_linear_layer(tmp_path, rows, r_shape, folded):
    cpu, gpu = _residual_nets(tmp_path)
    rng = np.random.default_rng(rows)
    x = rng.uniform(-1, 1, (rows, K)).astype(np.float32)
    r = rng.uniform(-1, 1, r_shape).astype(np.float32)
    want, _ = _run(cpu, x, r=r)
    got, plan = _run(gpu, x, r=r)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    names = plan.cmd.dispatch_count
    if folded:
        assert names == 1  # gemv with the summand and the ReLU: no BinaryOp, no ReLU dispatch
    else:
        assert names >= 3


# -- a product scaled by a constant, then (or not) a residual add: MiniCPM's block output ------
SCALED = f"""7767517
{{count}} {{count}}
Input x 0 1 x
Input r 0 1 r
Gemm proj 1 1 x p 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
BinaryOp scale 1 1 p {{scaled}} 0=2 1=1 2=0.28577
"""


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("rows, folded", [
    (1, True),    # a decode step: the matrix-vector kernel scales the product, then adds r
    (3, False),   # a prefill: the matrix kernel, then the scaling and the sum record apart
])
def test_scaling_folds_into_the_product_before_it(tmp_path, fp16, residual, rows, folded):
    text = SCALED.format(count=5 if residual else 4, scaled="s" if residual else "y")
    if residual:
        text += "BinaryOp add 2 1 r s y 0=0\n"
    param = tmp_path / "scaled.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=3, input_shapes={"x": (rows, K), "r": (rows, N)})
    cpu, gpu = _load(param, weights, False), _load(param, weights, True, fp16)
    rng = np.random.default_rng(rows)
    x = rng.uniform(-1, 1, (rows, K)).astype(np.float32)
    r = rng.uniform(-1, 1, (rows, N)).astype(np.float32)
    want, _ = _run(cpu, x, r=r)
    got, plan = _run(gpu, x, r=r)
    tol = 2e-3 if fp16 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if folded:
        assert plan.cmd.dispatch_count == 1  # no BinaryOp dispatch, for the scaling or the sum
    else:
        assert plan.cmd.dispatch_count >= 2 + residual


# -- an RMSNorm before one-row Gemms ----------------------------------------------------------
PRENORM = f"""7767517
6 7
Input x 0 1 x
RMSNorm norm 1 1 x n 0={K} 1=1e-5 2={{affine}}
Split split 1 2 n n1 n2
Gemm q 1 1 n1 y 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
Gemm k 1 1 n2 g 10=4 2=0 3=1 4=0 5=1 6=1 7=0 8=8 9={K}
Swish act 1 1 g z
"""


@pytest.mark.parametrize("affine", [1, 0])
@pytest.mark.parametrize("rows, folded", [
    (1, True),    # a decode step: both products normalise x themselves
    (3, False),   # a prefill: the matrix kernel reads the norm's output
])
def test_rmsnorm_folds_into_its_gemm_readers(tmp_path, affine, rows, folded):
    param = tmp_path / "prenorm.param"
    param.write_text(PRENORM.format(affine=affine))
    weights = random_weights(str(param), seed=7, input_shapes=(rows, K))
    cpu = _load(param, weights, False)
    x = np.random.default_rng(rows).uniform(-2, 2, (rows, K)).astype(np.float32)
    for fp16, tol in ((False, 1e-4), (True, 2e-2)):
        gpu = _load(param, weights, True, fp16)
        for blob in ("y", "z"):
            with cpu.create_extractor() as ex_c, gpu.create_extractor() as ex_g:
                ex_c.input("x", vkncnn.Mat(x))
                ex_g.input("x", vkncnn.Mat(x))
                np.testing.assert_allclose(ex_g.extract(blob)[1].numpy(), ex_c.extract(blob)[1].numpy(),
                                           rtol=tol, atol=tol, err_msg=f"{blob} fp16={fp16}")
        layers = {label.split()[1] for label in _dispatch_labels(gpu, x)}
        assert ("norm" not in layers) == folded, layers


def test_rmsnorm_asked_for_itself_is_not_folded(tmp_path):
    param = tmp_path / "prenorm.param"
    param.write_text(PRENORM.format(affine=1))
    weights = random_weights(str(param), seed=7, input_shapes=(1, K))
    cpu, gpu = _load(param, weights, False), _load(param, weights, True)
    x = np.random.default_rng(1).uniform(-2, 2, (1, K)).astype(np.float32)
    with cpu.create_extractor() as ex_c, gpu.create_extractor() as ex_g:
        ex_c.input("x", vkncnn.Mat(x))
        ex_g.input("x", vkncnn.Mat(x))
        # y first (the norm folded, its blob never made), then the norm's own output
        np.testing.assert_allclose(ex_g.extract("y")[1].numpy(), ex_c.extract("y")[1].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(ex_g.extract("n1")[1].numpy(), ex_c.extract("n1")[1].numpy(),
                                   rtol=1e-5, atol=1e-5)


# -- a gate and an up Gemm multiplied ---------------------------------------------------------
GATED = f"""7767517
{{count}}
Input x 0 1 x
{{norm}}Split split 1 2 n n1 n2
Gemm gate 1 1 n1 g 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
Swish act 1 1 g a
Gemm up 1 1 n2 u 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
BinaryOp mul 2 1 {{order}} y 0=2
"""


@pytest.mark.parametrize("norm", [False, True], ids=["plain", "rmsnorm"])
@pytest.mark.parametrize("order", ["a u", "u a"])
@pytest.mark.parametrize("rows", [1, 3])
def test_gate_and_up_products_fold_into_one_dispatch(tmp_path, norm, order, rows):
    norm_line = f"RMSNorm norm 1 1 x n 0={K} 1=1e-6 2=1\n" if norm else ""
    text = GATED.format(count="7 8" if norm else "6 7", norm=norm_line, order=order)
    if not norm:
        text = text.replace("Split split 1 2 n n1 n2", "Split split 1 2 x n1 n2")
    param = tmp_path / "gated.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=3, input_shapes=(rows, K))
    cpu = _load(param, weights, False)
    x = np.random.default_rng(rows).uniform(-2, 2, (rows, K)).astype(np.float32)
    want, _ = _run(cpu, x)
    for fp16, tol in ((False, 1e-4), (True, 2e-2)):
        gpu = _load(param, weights, True, fp16)
        got, _ = _run(gpu, x)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"fp16={fp16}")
        layers = [label.split()[1] for label in _dispatch_labels(gpu, x)]
        if rows == 1:
            # one dispatch, labelled with the product recorded first: the other, the multiply,
            # the activation and the norm are inside it
            assert len(layers) == 1 and layers[0] in ("gate", "up"), layers
        else:
            assert {"up", "mul"} <= set(layers), layers


# -- kv heads repeated before an SDPA ---------------------------------------------------------
def _chain(tile_repeats: str, reshape: str):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(f"""7767517
4 4
Input in 0 1 x
ExpandDims e 1 1 x a -23303=1,1
Tile t 1 1 a b -23302={tile_repeats}
Reshape r 1 1 b y {reshape}
""")
    net.load_model(vkncnn.DataReaderFromEmpty())
    return [layer for layer in net.layers() if layer.type != "Input"], net.opt


@pytest.mark.parametrize("repeats, reshape, shape, want", [
    ("4,1,7,1,1", "0=64 1=-1 2=14", (2, 1, 64), 7),    # qwen2.5: 2 kv heads for 14 query heads
    ("4,1,3,1,1", "0=8 1=-1 2=6", (2, 5, 8), 3),       # several rows (a prefill)
    ("4,1,1,1,2", "0=16 1=-1 2=2", (2, 1, 8), None),   # each row doubled along its width
    ("4,2,1,1,1", "0=8 1=-1 2=4", (2, 1, 8), None),    # the heads tiled [0 1 0 1], not repeated
])
def test_head_repeat_is_proven_on_an_index_array(repeats, reshape, shape, want):
    from vkncnn.gpu.fold_recording import _repeat_of

    chain, opt = _chain(repeats, reshape)
    assert _repeat_of(shape, chain, opt) == want


# -- a one-token RoPE after a Gemm ------------------------------------------------------------
ROPE = f"""7767517
7 7
Input x 0 1 x
Input cos 0 1 c
Input sin 0 1 s
Gemm q 1 1 x p {{c_term}} 2=0 3=1 4=0 5=1 6=1 7=0 8=16 9={K}
Reshape heads 1 1 p h 0=8 1=2 2=-1
Permute swap 1 1 h t 0=2
RotaryEmbed rope 3 1 t c s y 0={{interleaved}}
"""


def _rope_fold_case(tmp_path, text: str, seed: int, rows: int, width: int, fp32_tol: float) -> set:
    """Run a net ending in RotaryEmbed `rope` (inputs x of (rows, width), cos and sin of
    (rows, 4)) on the GPU, fp32 and fp16 storage, against the numpy path; return the layer
    names that dispatched (fp16, a plan recorded again with timestamps)."""
    param = tmp_path / "rope.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=seed, input_shapes={"x": (rows, width), "c": (rows, 4), "s": (rows, 4)})
    rng = np.random.default_rng(rows + seed)
    angles = rng.uniform(0, 6.28, (rows, 4)).astype(np.float32)
    feed = {"x": rng.uniform(-2, 2, (rows, width)).astype(np.float32), "c": np.cos(angles), "s": np.sin(angles)}

    def run(net):
        with net.create_extractor() as ex:
            for name, a in feed.items():
                ex.input(name, vkncnn.Mat(a))
            return ex.extract("y")[1].numpy()

    want = run(_load(param, weights, False))
    for fp16, tol in ((False, fp32_tol), (True, 2e-2)):
        gpu = _load(param, weights, True, fp16)
        np.testing.assert_allclose(run(gpu), want, rtol=tol, atol=tol, err_msg=f"fp16={fp16}")
    gpu.gpu.release_plans()
    gpu.gpu.profile = "dispatches"
    gpu.gpu.layer_times.clear()
    run(gpu)
    return {label.split()[1] for label in gpu.gpu.layer_times}


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("c_term", ["10=-1", "10=4"], ids=["no-bias", "bias"])
@pytest.mark.parametrize("rows, folded", [(1, True), (3, False)])
def test_rope_folds_into_the_product_before_it(tmp_path, interleaved, c_term, rows, folded):
    layers = _rope_fold_case(tmp_path, ROPE.format(c_term=c_term, interleaved=interleaved), 9, rows, K, 1e-4)
    assert ("rope" not in layers) == folded, layers


# -- a one-token RoPE after a per-head RMSNorm (Qwen3's q and k) --------------------------------
NORM_ROPE = """7767517
7 7
Input x 0 1 x
Input cos 0 1 c
Input sin 0 1 s
Reshape heads 1 1 x h 0=8 1=4 2=-1
RMSNorm norm 1 1 h n 0=8 1=1e-6 2={affine}
Permute swap 1 1 n t 0=2
RotaryEmbed rope 3 1 t c s y 0={interleaved}
"""


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("affine", [1, 0])
@pytest.mark.parametrize("rows, folded", [(1, True), (3, False)])
def test_rope_folds_into_the_norm_before_it(tmp_path, interleaved, affine, rows, folded):
    """The norm's rows are heads of 8 values: with one token the Permute keeps their layout
    and the norm rotates them as it writes them; a prefill's rows do not, and the RoPE
    records on its own."""
    layers = _rope_fold_case(tmp_path, NORM_ROPE.format(affine=affine, interleaved=interleaved), 5, rows, 32, 1e-5)
    assert "norm" in layers and ("rope" not in layers) == folded, layers


def test_a_layer_recorded_inside_another_moves_to_the_cpu_itself():
    """A fold the producer refuses records its layers one by one inside the outer layer's
    recording: a kernel the device lacks for one of them sends that layer to the CPU, not the
    outer one, and any other failure is still the outer layer's."""
    from vkncnn.errors import LayerError
    from vkncnn.gpu.fold_recording import LayerToCpu, recording_on_gpu
    from vkncnn.gpu.vulkan.device_limits import KernelUnsupported

    class Named:
        def __init__(self, name):
            self.name, self.type = name, "Gemm"

    outer, inner = Named("outer"), Named("inner")
    with pytest.raises(LayerToCpu) as moved:
        with recording_on_gpu(outer):
            with recording_on_gpu(inner):
                raise KernelUnsupported("no such kernel here")
    assert moved.value.layer is inner
    with pytest.raises(LayerError, match="outer"):
        with recording_on_gpu(outer):
            raise ValueError("broken")


# -- an attention's splits merged by the product reading it ----------------------------------
def _attention_net(tmp_path, heads: int, keys: int, dv: int = 64):
    """One query row attending over `keys` (2 kv heads), its output through a Permute and a
    Reshape into a one-row Gemm (a decoder's o projection)."""
    k = heads * dv
    param = tmp_path / f"attn{heads}.param"
    param.write_text(f"""7767517
7 7
Input q 0 1 q
Input k 0 1 k
Input v 0 1 v
SDPA attn 3 1 q k v a 6=0.125
Permute perm 1 1 a b 0=2
Reshape flat 1 1 b c 0={k} 1=-1
Gemm o 1 1 c y 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=32 9={k}
""")
    shapes = {"q": (heads, 1, dv), "k": (2, keys, dv), "v": (2, keys, dv)}
    weights = random_weights(str(param), seed=3, input_shapes=shapes)
    rng = np.random.default_rng(8)
    feed = {name: rng.uniform(-1, 1, shape).astype(np.float32) for name, shape in shapes.items()}
    return param, weights, feed


def _run_attention(net, feed, target="y"):
    with net.create_extractor() as ex:
        for name, x in feed.items():
            ex.input(name, vkncnn.Mat(x))
        return ex.extract(target)[1].numpy()


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("heads,keys,nan,merged", [
    # (where the device takes the fold: merges_in_the_product)
    (4, 300, False, True),    # 4 splits of the keys, merged as the product loads them
    (4, 40, False, True),     # one split: its record all the same
    (4, 300, True, True),     # a NaN key: the heads that read it come out NaN, as unmerged
    (40, 300, False, False),  # 2560 values a row: past the merging kernel's row, kept apart
    (4, 3000, False, False),  # 46 splits: more than the merging kernel holds, kept apart
    (32, 600, False, True),   # 9 splits of 2048 values: within GEMV_MERGE_MAX_VALUES
    (32, 900, False, False),  # 14 of them: past it, the attention merges them itself
], ids=["splits", "one_split", "nan", "row_too_long", "too_many_splits", "splits_in_bound", "splits_past_bound"])
def test_attention_splits_merge_in_the_product_after_it(tmp_path, monkeypatch, fp16, heads, keys, nan, merged):
    from vkncnn.gpu.ops import matrix_product
    from vkncnn.gpu.ops.split_records import SplitRecords
    from vkncnn.layers import gemm

    param, weights, feed = _attention_net(tmp_path, heads, keys)
    if nan:
        feed["k"][1, 7, 3] = np.nan
    want = _run_attention(_load(param, weights, False), feed)
    reads = []
    record_gemv = matrix_product.record_gemv
    monkeypatch.setattr(gemm, "record_gemv", lambda layer, cmd, fp16_, x, *a, **k: (
        reads.append(isinstance(x, SplitRecords)), record_gemv(layer, cmd, fp16_, x, *a, **k))[1])
    got = _run_attention(_load(param, weights, True, fp16), feed)
    assert reads == [merged and merges_in_the_product(heads, 64, keys)]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tol = 2e-2 if fp16 else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_an_attention_output_asked_for_itself_is_merged_by_the_attention(tmp_path):
    param, weights, feed = _attention_net(tmp_path, 4, 300)
    cpu, gpu = _load(param, weights, False), _load(param, weights, True)
    np.testing.assert_allclose(_run_attention(gpu, feed, "a"), _run_attention(cpu, feed, "a"), rtol=1e-4, atol=1e-4)


def test_the_host_knows_the_merging_kernels_limits():
    """gemv_merge_fits keeps to innerproduct_gemv.comp's shared row and its registers."""
    from pathlib import Path

    from vkncnn.gpu.ops import matrix_product

    source = (Path(__file__).parents[2] / "shaders" / "innerproduct_gemv.comp").read_text()
    assert f"#define MERGE_MAX_K4 {matrix_product.GEMV_MERGE_MAX_K4} " in source
    assert f"#define MERGE_MAX_STEPS {matrix_product.GEMV_MERGE_MAX_STEPS} " in source
    assert f"#define MERGE_MAX_SPLITS {matrix_product.GEMV_MERGE_MAX_SPLITS} " in source
