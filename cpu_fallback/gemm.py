"""Matrix-product kernels: InnerProduct, Gemm and MatMul, with ncnn's shape rules.

Every kernel here is one BLAS call (np.matmul); what differs between the layers is
how ncnn reads the operand shapes, and that is spelled out per function.
"""

from __future__ import annotations

import numpy as np

from vkncnn.errors import ShapeError


def innerproduct(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Rows of x (n, num_input) times weight (num_output, num_input)^T, plus bias."""
    out = x @ weight.T
    if bias is not None:
        out += bias
    return out


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, alpha: float, beta: float) -> np.ndarray:
    """(a @ b + beta * c) * alpha, ncnn's order of operations.

    a (M, K), b (K, N); c is None or already shaped to broadcast against (M, N).
    """
    out = a @ b
    if c is not None:
        out += np.float32(beta) * c
    if alpha != 1.0:
        out *= np.float32(alpha)
    return out


def gemm_broadcast_c(c: np.ndarray, broadcast_type: int, m: int, n: int) -> np.ndarray:
    """Shape ncnn's C operand for broadcasting against (M, N).

    broadcast_type: 0 scalar, 1 per row [M], 2 per row [M, 1], 3 full [M, N], 4 per column [N].
    """
    flat = np.asarray(c, np.float32).ravel()
    need = {0: 1, 1: m, 2: m, 3: m * n, 4: n}[broadcast_type]
    if flat.size < need:
        raise ShapeError(f"Gemm C has {flat.size} values, broadcast type {broadcast_type} needs {need}")
    if broadcast_type == 0:
        return flat[:1].reshape(1, 1)
    if broadcast_type in (1, 2):
        return flat[:m].reshape(m, 1)
    if broadcast_type == 3:
        return flat[:m * n].reshape(m, n)
    return flat[:n].reshape(1, n)


def gemm_infer_c_type(c: np.ndarray, m: int, n: int) -> int:
    """ncnn's broadcast type for a C given as a blob; later rules win, as in ncnn
    (so a 1-D C of length M == N is read per column)."""
    kind = None
    if c.ndim == 1 and c.shape[0] == 1:
        kind = 0
    if c.ndim == 1 and c.shape[0] == m:
        kind = 1
    if c.ndim == 1 and c.shape[0] == n:
        kind = 4
    if c.ndim == 2 and c.shape == (m, 1):
        kind = 2
    if c.ndim == 2 and c.shape == (m, n):
        kind = 3
    if c.ndim == 2 and c.shape == (1, n):
        kind = 4
    if kind is None:
        if c.size == 1:
            return 0
        raise ShapeError(f"Gemm C of shape {c.shape} broadcasts neither as a scalar, [M={m}], [M, 1], "
                         f"[M, N={n}] nor [N]")
    return kind


def matmul(a: np.ndarray, b: np.ndarray, trans_b: bool = False) -> np.ndarray:
    """ncnn MatMul: numpy.matmul semantics, ncnn dims.

    1-D x 1-D is a dot product of shape (1,); a 1-D operand is a row (A) or a
    column (B) and its axis is dropped from the result; higher ranks batch over
    their leading axes with numpy broadcasting (ncnn broadcasts size-1 batch axes
    the same way). transB transposes the last two axes of B when B has >= 2 dims.
    """
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise ShapeError(f"MatMul dot product of lengths {a.shape[0]} and {b.shape[0]}")
        return np.array([np.dot(a, b)], np.float32)
    if trans_b and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(f"MatMul inner dimensions differ: A {a.shape} x B {b.shape}"
                         f"{' (transB)' if trans_b else ''}")
    try:
        return np.matmul(a, b)
    except ValueError as e:  # batch axes that do not broadcast
        raise ShapeError(f"MatMul batch dimensions do not broadcast: A {a.shape} x B {b.shape}") from e
