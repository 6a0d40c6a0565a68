"""Issue 22: a gradient is never silently wrong outside an unchecked assumption.

One test per row of ``docs/conventions.md``: the value PyTorch gives at each point where a derivative is undefined or
infinite, written out, and the issue's handed cases of the three bugs (cross-entropy with a zero target row, the
exponent gradient of PowOp at base ≤ 0, max pooling over a window holding NaN).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_lab import Engine, Variable
from autograd_lab import ops as O

nan, inf = math.nan, math.inf


def grads(op, *values, gy=None):
    """Run ``op`` on float64 Variables of ``values``; return (output value, [gradient of each input])."""
    xs = [Variable.from_numpy(np.asarray(v, dtype=np.float64)) for v in values]
    y = op(*xs)
    Engine.backward(y, grad=np.ones(y.shape) if gy is None else gy)
    return y.data, [x.grad for x in xs]


# -- bug 1: cross-entropy takes the general gradient (softmax(z)·Σt - t)/N -------------------------------------------

def test_issue22_handed_case_a_zero_target_row_has_loss_0_and_gradient_exactly_0():
    loss, (g_logits, _) = grads(O.SoftmaxCrossEntropyOp(), [[1.0, 2.0, 3.0]], [[0.0, 0.0, 0.0]])
    assert loss == 0.0
    np.testing.assert_array_equal(g_logits, [[0.0, 0.0, 0.0]])


def test_a_target_row_summing_to_2_gives_twice_softmax_minus_the_target():
    """Rows need not sum to 1: dL/dz = (p·Σt - t)/N with p = softmax([0, 0]) = [1/2, 1/2] and Σt = 2."""
    _, (g, _) = grads(O.SoftmaxCrossEntropyOp(), [[0.0, 0.0]], [[2.0, 0.0]])
    np.testing.assert_allclose(g, [[2 * 0.5 - 2.0, 2 * 0.5 - 0.0]], rtol=1e-15)


def test_a_masked_example_leaves_the_other_rows_gradient_as_the_mean_over_all_rows():
    """Two rows, the second masked: the first row's gradient is (p - onehot)/2 (PyTorch divides by N = 2)."""
    _, (g, _) = grads(O.SoftmaxCrossEntropyOp(), [[0.0, 0.0], [5.0, 1.0]], [[1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(g, [[-0.25, 0.25], [0.0, 0.0]], rtol=1e-15)


# -- bug 2: undefined derivatives are NaN and infinite ones ±inf, as PyTorch gives ---------------------------------

@pytest.mark.parametrize(
    ("base", "exponent", "d_base", "d_exponent"),
    [
        (-2.0, 3.0, 12.0, nan),     # issue 22: d/dp = (-8)·ln(-2), ln of a negative number
        (-inf, 0.0, 0.0, nan),      # issue 22: d/dp = 1·ln(-inf)
        (0.0, -1.0, -inf, -inf),    # issue 22: d/dp = inf·ln 0 = -inf (was NaN)
        (0.0, 0.0, 0.0, 0.0),       # 0^p for p ≥ 0: d/dp is the one-sided limit 0
        (0.0, 2.0, 0.0, 0.0),
        (0.0, 0.5, inf, 0.0),       # d/da = 0.5·0^-0.5
        (-2.0, 0.5, nan, nan),      # a negative base to a fractional power: NaN value and gradients
        (nan, 0.0, 0.0, nan),       # a^0 = 1 for every a, so d/da = 0; d/dp = 1·ln(NaN)
    ],
)
def test_pow_gradients_at_base_zero_or_below_are_pytorchs(base, exponent, d_base, d_exponent):
    _, (ga, gp) = grads(O.PowOp(), [base], [exponent])
    np.testing.assert_array_equal(ga, [d_base])
    np.testing.assert_array_equal(gp, [d_exponent])


@pytest.mark.parametrize(
    ("op", "x", "value", "grad"),
    [
        (O.SqrtOp, [0.0, -1.0], [0.0, nan], [inf, nan]),
        (O.LogOp, [0.0, -1.0], [-inf, nan], [inf, -1.0]),
        (O.AbsOp, [0.0, -0.0, nan], [0.0, 0.0, nan], [0.0, 0.0, 0.0]),
        (O.ReLUOp, [0.0], [0.0], [0.0]),
        (lambda: O.LeakyReLUOp(0.1), [0.0, nan], [0.0, nan], [0.1, 0.1]),
        (lambda: O.ClipOp(-1.0, 1.0), [-1.0, 1.0, nan], [-1.0, 1.0, nan], [1.0, 1.0, 0.0]),
        (lambda: O.PowOp(-1.0), [0.0], [inf], [-inf]),
        (lambda: O.StdOp(), [1.0, 1.0, 1.0], 0.0, [0.0, 0.0, 0.0]),
        (lambda: O.StdOp(), [1.0], nan, [nan]),
        (lambda: O.LogSumExpOp(), [-inf, -inf], -inf, [nan, nan]),
        (lambda: O.LogSumExpOp(), [inf, 1.0], inf, [nan, 0.0]),
    ],
    ids=["sqrt", "log", "abs", "relu", "leaky_relu", "clip", "reciprocal", "std_constant", "std_one_element",
         "logsumexp_all_-inf", "logsumexp_+inf"],
)
def test_values_and_gradients_at_undefined_points_are_pytorchs(op, x, value, grad):
    with np.errstate(all="raise"):  # and no floating-point warning on the way
        y, (g,) = grads(op(), x)
    np.testing.assert_array_equal(y, value)
    np.testing.assert_array_equal(g, grad)


def test_division_by_zero_gives_inf_and_nan_as_pytorch_without_a_warning():
    with np.errstate(all="raise"):
        y, (ga, gb) = grads(O.DivOp(), [1.0, 0.0, -1.0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(y, [inf, nan, -inf])
    np.testing.assert_array_equal(ga, [inf, inf, inf])
    np.testing.assert_array_equal(gb, [-inf, nan, inf])


def test_exp_overflows_to_inf_in_value_and_gradient_without_a_warning():
    with np.errstate(all="raise"):
        y, (g,) = grads(O.ExpOp(), [1000.0, nan])
    np.testing.assert_array_equal(y, [inf, nan])
    np.testing.assert_array_equal(g, [inf, nan])


def test_an_empty_mean_squared_error_is_nan_not_a_silent_0():
    loss, (ga, gb) = grads(O.MSELossOp(), np.zeros(0), np.zeros(0))
    assert math.isnan(loss)
    assert ga.shape == gb.shape == (0,)


# -- bug 3: one NaN rule for every max-like op: the NaN is the maximum and receives the gradient ----------------------

def test_issue22_handed_case_max_pooling_sends_a_nan_windows_gradient_to_its_last_nan():
    y, (g,) = grads(O.MaxPool2DOp(2), [[[[1.0, nan], [3.0, nan]]]], gy=np.array([[[[5.0]]]]))
    np.testing.assert_array_equal(y, [[[[nan]]]])
    np.testing.assert_array_equal(g, [[[[0.0, 0.0], [0.0, 5.0]]]])


def test_max_pooling_keeps_the_first_of_tied_maxima_and_a_window_of_minus_inf_its_first_real_input():
    _, (g,) = grads(O.MaxPool2DOp(2), [[[[2.0, 2.0], [1.0, 2.0]]]])
    np.testing.assert_array_equal(g, [[[[1.0, 0.0], [0.0, 0.0]]]])
    _, (g,) = grads(O.MaxPool2DOp(2, padding=1), np.full((1, 1, 2, 2), -inf), gy=np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(g, np.ones((1, 1, 2, 2)))  # each padded window's only real input


def test_max_reduction_gives_the_nan_the_gradient_and_splits_it_between_nans():
    y, (g,) = grads(O.MaxOp(), [1.0, nan, nan])
    assert math.isnan(y)
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5])


def test_relu_passes_the_gradient_to_a_nan_input():
    y, (g,) = grads(O.ReLUOp(), [nan, -1.0, 2.0])
    np.testing.assert_array_equal(y, [nan, 0.0, 2.0])
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])


def test_maximum_and_minimum_give_both_inputs_the_gradient_at_nan_and_half_at_ties():
    for op in (O.MaximumOp, O.MinimumOp):
        y, (ga, gb) = grads(op(), [nan, 1.0, 3.0], [1.0, nan, 3.0])
        np.testing.assert_array_equal(y, [nan, nan, 3.0])
        np.testing.assert_array_equal(ga, [1.0, 1.0, 0.5])
        np.testing.assert_array_equal(gb, [1.0, 1.0, 0.5])
