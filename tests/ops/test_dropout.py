"""DropoutOp: the issue's cases, inverted scaling, evaluation mode, masks, randomness."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator, eval_mode
from autograd_lab.ops import DropoutOp, MulOp, SumOp


def test_issue_case_fixed_mask_gives_output_and_gradient_2_0_2_2():
    x = Variable.from_numpy(np.ones(4))
    y = DropoutOp(0.5, mask=np.array([1, 0, 1, 1]))(x)
    Engine.backward(SumOp()(y))
    np.testing.assert_array_equal(y.data, [2.0, 0.0, 2.0, 2.0])
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, 2.0, 2.0])


def test_issue_case_evaluation_mode_is_the_exact_identity():
    values = np.random.default_rng(0).standard_normal((3, 4))
    x = Variable.from_numpy(values)
    with eval_mode():
        y = DropoutOp(0.5)(x)
        Engine.backward(SumOp()(y))
    np.testing.assert_array_equal(y.data, values)
    np.testing.assert_array_equal(x.grad, np.ones((3, 4)))


def test_issue_case_mean_of_a_million_ones_with_p_02_is_within_0002_of_1():
    x = Variable.from_numpy(np.ones(10**6))
    y = DropoutOp(0.2, rng=np.random.default_rng(1234))(x)
    assert abs(y.data.mean() - 1.0) < 0.002
    assert abs((y.data == 0).mean() - 0.2) < 0.002
    np.testing.assert_allclose(np.unique(y.data), [0.0, 1.25], rtol=1e-15)


def test_operator_declares_that_it_depends_on_the_mode():
    assert DropoutOp.training_dependent


def test_gradient_matches_central_differences_with_a_fixed_mask():
    mask = np.array([[1, 0, 1], [0, 1, 1]])
    check_operator(lambda: DropoutOp(0.3, mask=mask), np.random.default_rng(2).standard_normal((2, 3)))


def test_float32_stays_float32():
    x = Variable.from_numpy(np.ones(5, dtype=np.float32))
    y = DropoutOp(0.5, mask=np.array([1, 0, 1, 0, 1]))(x)
    Engine.backward(SumOp()(y))
    assert y.dtype == np.float32 and x.grad.dtype == np.float32


def test_same_seed_same_mask_and_engine_forward_draws_a_new_mask():
    values = np.ones(1000)
    first = DropoutOp(0.5, rng=np.random.default_rng(7))(Variable.from_numpy(values)).data
    again = DropoutOp(0.5, rng=np.random.default_rng(7))(Variable.from_numpy(values)).data
    np.testing.assert_array_equal(first, again)
    x = Variable.from_numpy(values)
    y = DropoutOp(0.5, rng=np.random.default_rng(7))(x)
    before = y.data
    Engine.forward(y)
    assert not np.array_equal(before, y.data)


def test_backward_uses_the_mask_of_the_forward():
    """The gradient of y = dropout(x)·w must be zero exactly where the output was dropped."""
    x = Variable.from_numpy(np.ones(200))
    w = Variable.from_numpy(np.full(200, 3.0))
    y = DropoutOp(0.5, rng=np.random.default_rng(3))(x)
    Engine.backward(SumOp()(MulOp()(y, w)))
    np.testing.assert_array_equal(x.grad == 0, y.data == 0)
    np.testing.assert_allclose(x.grad[y.data != 0], 6.0, rtol=1e-15)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_p_outside_0_1_raises(p):
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        DropoutOp(p)


def test_mask_must_hold_zeros_and_ones():
    with pytest.raises(ValueError, match=r"0 .* or 1"):
        DropoutOp(0.5, mask=np.array([0.5, 1.0]))


def test_mask_of_the_wrong_shape_raises_shape_error():
    with pytest.raises(ShapeError, match=r"DropoutOp.*mask shape \(3,\)"):
        DropoutOp(0.5, mask=np.ones(3))(Variable.from_numpy(np.ones(4)))


def test_p_zero_is_the_identity_in_training():
    values = np.arange(4.0)
    np.testing.assert_array_equal(DropoutOp(0.0)(Variable.from_numpy(values)).data, values)
