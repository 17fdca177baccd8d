"""The differential layer fuzzer: random valid models of one layer (or a short chain),
vkncnn against real ncnn.

    python -m vkncnn.tools.dev.layerfuzz --help      (also: vkncnn layerfuzz --help)

runner.py draws, runs and compares; case.py is what a case holds; registry.py maps each
layer type to its generator, and the generators live by layer family (conv.py, pooling.py,
matrix.py, norm.py, activation.py, elementwise.py, reduction.py, shape.py, resample.py,
attention.py, recurrent.py, spectral.py, detection.py, quantization.py) or by the variant
they draw (wide.py, long.py, stored.py, chain.py). draw.py holds the random draws they
share, storage.py the .bin storage forms, discrete.py the discrete-GPU kernel profiles,
known.py the configurations where ncnn itself is wrong.
"""
