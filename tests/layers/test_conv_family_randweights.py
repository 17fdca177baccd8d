"""tools/randweights.py writes loadable, fan-in-scaled weights for the 1D/3D convolution
family, Pooling3D, Unfold and DeformableConv2D: real ncnn and vkncnn agree on them."""

import numpy as np

from tests.oracle import run_ncnn, run_vkncnn
from vkncnn.tools.randweights import random_weights

CHAIN = """7767517
12 13
Input in0 0 1 in0
ConvolutionDepthWise1D a 1 1 in0 a 0=8 1=3 4=1 5=1 6=24 7=8
Deconvolution1D b 1 1 a b 0=4 1=4 3=2 4=1 5=1 6=128
DeconvolutionDepthWise1D c 1 1 b c 0=4 1=3 5=1 6=24 7=2
Reshape r 1 1 c r 0=10 1=2 11=2 2=4
Convolution3D d 1 1 r d 0=6 1=3 4=1 5=1 6=648
ConvolutionDepthWise3D e 1 1 d e 0=6 1=3 4=1 5=1 6=162 7=6
Deconvolution3D f 1 1 e f 0=4 1=2 3=2 5=1 6=192
DeconvolutionDepthWise3D g 1 1 f g 0=4 1=3 4=1 5=1 6=108 7=4
Pooling3D h 1 1 g h 0=1 1=2 2=2
Reshape r2 1 1 h r2 0=10 1=2 2=8
Unfold u 1 1 r2 out0 1=2
"""

DEFORMABLE = """7767517
4 4
Input in0 0 1 in0
Input in1 0 1 in1
Input in2 0 1 in2
DeformableConv2D dc 3 1 in0 in1 in2 out0 0=4 1=3 4=1 5=1 6=108
"""


def test_chain_weights_load_and_agree(tmp_path):
    path = tmp_path / "chain.param"
    path.write_text(CHAIN)
    weights = random_weights(str(path), seed=0, input_shapes={"in0": (8, 19)})
    x = np.random.default_rng(1).uniform(-1, 1, (8, 19)).astype(np.float32)
    want = run_ncnn(CHAIN, weights, {"in0": x}, ["out0"])["out0"]
    got = run_vkncnn(CHAIN, weights, {"in0": x}, ["out0"])["out0"]
    assert got.shape == want.shape == (32, 9)
    assert np.allclose(got, want, atol=1e-4)
    assert 0.1 < np.abs(want).max() < 10  # scaled by fan-in: neither vanishing nor exploding


def test_deformable_weights_load_and_agree(tmp_path):
    path = tmp_path / "dc.param"
    path.write_text(DEFORMABLE)
    weights = random_weights(str(path), seed=0)
    rng = np.random.default_rng(2)
    feed = {"in0": rng.uniform(-1, 1, (3, 5, 6)), "in1": rng.uniform(-2, 2, (18, 5, 6)),
            "in2": rng.uniform(0, 1, (9, 5, 6))}
    feed = {k: v.astype(np.float32) for k, v in feed.items()}
    want = run_ncnn(DEFORMABLE, weights, feed, ["out0"])["out0"]
    got = run_vkncnn(DEFORMABLE, weights, feed, ["out0"])["out0"]
    assert len(weights) == 4 + 108 * 4 + 4 * 4 and np.allclose(got, want, atol=1e-4)
