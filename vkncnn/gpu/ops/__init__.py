"""What families of layers record on the GPU: convolutions, Winograd, matrix products,
row reductions, data movement, element-wise passes, packing, and the pipelines they use."""
