"""SumOp, MeanOp, MaxOp over int, tuple and None axes, with and without keepdims; MaxOp tie-breaking."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import MatMulOp, MaxOp, MeanOp, SumOp

AXES = [None, 0, 1, -1, 2, (0, 2), (1, 2), (-1, 0), (0, 1, 2), ()]


def weighted_axis1_case(reduce_op):
    """The issue's case: x = arange(9).reshape(3,3); y = reduce over axis 1; loss = y · [1, 2, 3]."""
    x = Variable.from_numpy(np.arange(9.0).reshape(3, 3))
    y = reduce_op(x)
    loss = MatMulOp()(y, Variable.from_numpy([1.0, 2.0, 3.0]))
    Engine.backward(loss)
    return x.grad


def test_issue_case_sum_over_axis_1_weighted():
    np.testing.assert_array_equal(weighted_axis1_case(SumOp(axis=1)), [[1, 1, 1], [2, 2, 2], [3, 3, 3]])


def test_issue_case_mean_over_axis_1_weighted_is_divided_by_3():
    np.testing.assert_allclose(
        weighted_axis1_case(MeanOp(axis=1)), np.array([[1, 1, 1], [2, 2, 2], [3, 3, 3]]) / 3, rtol=1e-15
    )


@pytest.mark.parametrize("op", [SumOp, MeanOp, MaxOp])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_value_matches_numpy_and_gradients_match_central_differences(op, axis, keepdims):
    x = np.random.default_rng(7).standard_normal((2, 3, 4))
    y = op(axis=axis, keepdims=keepdims)(Variable.from_numpy(x))
    expected = {SumOp: np.sum, MeanOp: np.mean, MaxOp: np.max}[op](x, axis=axis, keepdims=keepdims)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y.data, expected, rtol=1e-14)
    check_operator(lambda: op(axis=axis, keepdims=keepdims), x)


@pytest.mark.parametrize("op", [SumOp, MeanOp, MaxOp])
def test_float32_stays_float32(op):
    x = Variable.from_numpy(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    y = op(axis=0)(x)
    Engine.backward(SumOp()(y))
    assert y.dtype == np.float32 and x.grad.dtype == np.float32


def test_reduction_of_a_0d_input():
    check_operator(SumOp, np.array(2.5))
    check_operator(MeanOp, np.array(2.5))


def test_max_splits_the_gradient_equally_among_ties():
    x = Variable.from_numpy([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [5.0, 0.0, 1.0]])
    Engine.backward(SumOp()(MaxOp(axis=1)(x)))
    np.testing.assert_allclose(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [1, 0, 0]], rtol=1e-15)


def test_max_tie_gradient_is_a_valid_subgradient_for_gradcheck():
    check_operator(lambda: MaxOp(axis=None), np.array([[1.0, 4.0], [4.0, 2.0]]))


def test_max_with_nan_sends_the_gradient_to_the_nan():
    x = Variable.from_numpy([1.0, np.nan, 3.0])
    y = MaxOp()(x)
    Engine.backward(y)
    assert np.isnan(y.data)
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])


@pytest.mark.parametrize("op", [SumOp, MeanOp, MaxOp])
@pytest.mark.parametrize("axis", [2, -3, (0, 0)])
def test_bad_axis_raises_shape_error_naming_the_op(op, axis):
    with pytest.raises(ShapeError, match=rf"{op.__name__}.*axis"):
        op(axis=axis)(Variable.from_numpy(np.zeros((2, 3))))


def test_max_of_an_empty_array_raises_shape_error():
    with pytest.raises(ShapeError, match="MaxOp"):
        MaxOp()(Variable.from_numpy(np.zeros((0, 3))))
