"""What several layer modules share: base classes (unary, affine, recurrent) and helpers
(windows, quantization tables, ROI sampling, allocation limits). Not layers themselves."""
