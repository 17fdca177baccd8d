"""Einsum against real ncnn, and the equations it refuses (ncnn rejects them too, or would
silently lay the output out positionally)."""

import numpy as np
import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer


def eq(s: str) -> list[int]:
    return [ord(c) for c in s]


CASES = [
    ("ii", [(4, 4)]),
    ("ii", [(1, 1)]),
    ("ii->i", [(5, 5)]),
    ("i,i->i", [(7,), (7,)]),
    ("ij->i", [(3, 7)]),
    ("ij->ij", [(3, 5)]),
    ("ik,kj->ij", [(3, 4), (4, 5)]),
    ("ik,jk->ij", [(3, 5), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk->ij", [(3, 4, 5)]),
    ("ijk->i", [(4, 3, 5)]),
    ("imn,jmn->ij", [(3, 4, 5), (2, 4, 5)]),
    ("ijm,ijm->ij", [(2, 3, 8), (2, 3, 8)]),
    ("ijm,imk->ijk", [(2, 3, 4), (2, 4, 5)]),
    ("ijkl->ijkl", [(2, 3, 4, 5)]),
    ("ijkm,ijlm->ijkl", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijk,k->ijk", [(3, 4, 5), (5,)]),
    ("im,mn,nj->ij", [(3, 4), (4, 5), (5, 2)]),
    ("ijx,x->ij", [(4, 3, 12), (12,)]),
]


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_ncnn(equation, shapes):
    xs = [rand(*s, seed=k) for k, s in enumerate(shapes)]
    check_layer("Einsum", {0: eq(equation)}, [], xs)


@pytest.mark.parametrize("equation", ["ij,jk->ik", "ij->ji", "i->ij", "ij", "ij->", "i,j->ijklm",
                                      "iy->i", "Ij->I", "ij,,jk->ij", "ij->i->i", "ijklm->i"])
def test_einsum_refuses_equations(equation):
    with pytest.raises(ParamError, match="Einsum"):
        run_layer("Einsum", {0: eq(equation)}, [], [rand(3, 3)])


def test_einsum_refuses_non_ascii_codes():
    with pytest.raises(ParamError, match="printable"):
        run_layer("Einsum", {0: [105, 0, 105]}, [], [rand(3, 3)])


@pytest.mark.parametrize("equation,shapes", [
    ("ik,kj->ij", [(3, 4), (5, 2)]),     # k disagrees
    ("ik,kj->ij", [(3, 4)]),             # one blob for two terms
    ("ijk->ij", [(3, 4)]),               # rank disagrees
    ("ii", [(3, 4)]),                    # trace of a non-square matrix
])
def test_einsum_bad_shapes(equation, shapes):
    with pytest.raises(ShapeError, match="Einsum"):
        run_layer("Einsum", {0: eq(equation)}, [], [rand(*s) for s in shapes])


def test_einsum_refuses_huge_outputs():
    with pytest.raises(ShapeError, match="would output"):
        run_layer("Einsum", {0: eq("i,j,k->ijk")}, [], [rand(1000), rand(1000), rand(1000)])


def test_einsum_is_a_matrix_product():
    a, b = rand(3, 4), rand(4, 5, seed=1)
    out = run_layer("Einsum", {0: eq("ik,kj->ij")}, [], [a, b])[0]
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)


@needs_gpu
def test_einsum_inside_gpu_net_matches_ncnn():
    check_layer("Einsum", {0: eq("ik,kj->ij")}, [], [rand(3, 4), rand(4, 5, seed=1)], gpu=True)
