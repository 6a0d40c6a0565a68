"""MatMulOp: np.matmul semantics (matrices, vectors, batches, broadcasting), transposes, gradients."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import ShapeError, Variable, check_operator
from autograd_lab.ops import MatMulOp

CASES = [
    ((2, 3), (3, 4), False, False),
    ((3, 2), (3, 4), True, False),
    ((2, 3), (4, 3), False, True),
    ((3, 2), (4, 3), True, True),
    ((3,), (3, 4), False, False),
    ((2, 3), (3,), False, False),
    ((3,), (3,), False, False),
    ((5, 2, 3), (3, 4), False, False),
    ((2, 3), (5, 3, 4), False, False),
    ((5, 1, 2, 3), (4, 3, 2), False, False),
    ((5, 3, 2), (5, 4, 3), True, True),
    ((3,), (5, 3, 4), False, False),
    ((5, 2, 3), (3,), False, False),
]


@pytest.mark.parametrize(("shape_a", "shape_b", "ta", "tb"), CASES)
def test_matmul_value_matches_numpy_and_gradients_match_central_differences(shape_a, shape_b, ta, tb):
    rng = np.random.default_rng(sum(shape_a) + sum(shape_b))
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    y = MatMulOp(transpose_a=ta, transpose_b=tb)(Variable.from_numpy(a), Variable.from_numpy(b))
    a_op = np.swapaxes(a, -1, -2) if ta else a
    b_op = np.swapaxes(b, -1, -2) if tb else b
    np.testing.assert_allclose(y.data, np.matmul(a_op, b_op), rtol=1e-14)
    check_operator(lambda: MatMulOp(transpose_a=ta, transpose_b=tb), a, b)


def test_matmul_float32():
    rng = np.random.default_rng(0)
    check_operator(
        lambda: MatMulOp(transpose_b=True),
        rng.standard_normal((4, 3)).astype(np.float32),
        rng.standard_normal((5, 3)).astype(np.float32),
    )


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError, match=r"MatMulOp.*\(2, 3\), \(2, 3\)"):
        MatMulOp()(Variable.from_numpy(np.zeros((2, 3))), Variable.from_numpy(np.zeros((2, 3))))


@pytest.mark.parametrize(
    "shape_a, shape_b, ta, tb, inner, hint",
    [
        ((4, 3), (5, 3), False, False, "(3)", "MatMulOp(transpose_b=True) would fit"),
        ((3, 4), (3, 5), False, False, "(4)", "MatMulOp(transpose_a=True) would fit"),
        ((4, 3), (3, 5), False, True, "(5)", "MatMulOp(transpose_b=False) would fit"),
        ((4, 3), (2,), False, False, "only axis (2)", None),
    ],
)
def test_matmul_mismatch_names_the_inner_dimensions_and_the_flag_that_fits(shape_a, shape_b, ta, tb, inner, hint):
    a, b = Variable.from_numpy(np.ones(shape_a)), Variable.from_numpy(np.ones(shape_b))
    with pytest.raises(ShapeError) as info:
        MatMulOp(transpose_a=ta, transpose_b=tb)(a, b)
    message = str(info.value)
    assert "inner dimensions disagree" in message and inner in message and "gufunc" not in message
    assert __file__ in message, "the message names the calling line"
    if hint is None:
        assert "would fit" not in message
    else:
        assert hint in message
        flags = {"transpose_a": ta, "transpose_b": tb}
        flags.update({k: v == "True" for k, v in (hint.split("(")[1].split(")")[0].split("="),)})
        assert MatMulOp(**flags)(a, b).shape, "the suggested flags really do fit"


def test_matmul_batch_mismatch_says_the_batch_axes_do_not_broadcast():
    a, b = Variable.from_numpy(np.ones((2, 4, 3))), Variable.from_numpy(np.ones((5, 3, 2)))
    with pytest.raises(ShapeError, match=r"batch axes \(2,\) and \(5,\) do not broadcast"):
        MatMulOp()(a, b)
