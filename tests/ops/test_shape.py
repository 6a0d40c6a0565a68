"""ReshapeOp, TransposeOp, BroadcastToOp: values match NumPy, gradients undo the movement."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import BroadcastToOp, ReshapeOp, SumOp, TransposeOp

X = np.random.default_rng(5).standard_normal((2, 3, 4))


@pytest.mark.parametrize("shape", [(6, 4), (24,), (4, -1), (1, 2, 12, 1), 24])
def test_reshape(shape):
    y = ReshapeOp(shape)(Variable.from_numpy(X))
    np.testing.assert_array_equal(y.data, X.reshape(shape))
    check_operator(lambda: ReshapeOp(shape), X)


def test_reshape_to_a_wrong_size_raises_shape_error():
    with pytest.raises(ShapeError, match=r"ReshapeOp.*\(2, 3, 4\)"):
        ReshapeOp((5, 5))(Variable.from_numpy(X))


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 0, 1), (1, 2, 0), (-1, 0, 1)])
def test_transpose(axes):
    y = TransposeOp(axes)(Variable.from_numpy(X))
    np.testing.assert_array_equal(y.data, np.transpose(X, axes))
    check_operator(lambda: TransposeOp(axes), X)


def test_transpose_with_a_bad_permutation_raises_shape_error():
    with pytest.raises(ShapeError, match="TransposeOp"):
        TransposeOp((0, 0, 1))(Variable.from_numpy(X))


@pytest.mark.parametrize(
    ("shape_in", "shape_out"), [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1, 4), (2, 3, 4)), ((), (2, 2)), ((3,), (3,))]
)
def test_broadcast_to(shape_in, shape_out):
    x = np.random.default_rng(0).standard_normal(shape_in)
    y = BroadcastToOp(shape_out)(Variable.from_numpy(x))
    np.testing.assert_array_equal(y.data, np.broadcast_to(x, shape_out))
    check_operator(lambda: BroadcastToOp(shape_out), x)


def test_broadcast_to_sums_the_gradient_over_the_copies():
    x = Variable.from_numpy([1.0, 2.0])
    Engine.backward(SumOp()(BroadcastToOp((3, 2))(x)))
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_broadcast_to_an_incompatible_shape_raises_shape_error():
    with pytest.raises(ShapeError, match=r"BroadcastToOp.*\(3,\)"):
        BroadcastToOp((2, 4))(Variable.from_numpy(np.zeros(3)))


@pytest.mark.parametrize("op", [lambda: ReshapeOp((3, 2)), lambda: TransposeOp(), lambda: BroadcastToOp((4, 2, 3))])
def test_float32_stays_float32(op):
    x = Variable.from_numpy(np.ones((2, 3), dtype=np.float32))
    y = op()(x)
    Engine.backward(SumOp()(y))
    assert y.dtype == np.float32 and x.grad.dtype == np.float32
