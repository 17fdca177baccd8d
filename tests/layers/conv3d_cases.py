"""Params and weights for the 3D (de)convolution tests: kernel (kd, kh, kw), ids 1/11/21."""

from tests.oracle import rand, raw, tagged

ACTIVATIONS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]


def params3d(outc, inc, kernel, group=1, bias=True, extra=None):
    kd, kh, kw = kernel
    p = {0: outc, 1: kw, 11: kh, 21: kd, 5: int(bias), 6: outc * (inc // group) * kd * kh * kw}
    if group > 1:
        p[7] = group
    return {**p, **(extra or {})}


def weights3d(outc, inc, kernel, group=1, bias=True, seed=0):
    w = [tagged(rand(outc, inc // group, *kernel, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w
