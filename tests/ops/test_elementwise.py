"""Exp, Log, Sqrt, Sigmoid, Tanh, ReLU, LeakyReLU: values, gradients, stability, kink conventions, dtypes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from autograd_lab import Engine, Variable, check_operator
from autograd_lab.ops import ExpOp, LeakyReLUOp, LogOp, ReLUOp, SigmoidOp, SqrtOp, SumOp, TanhOp

RNG = np.random.default_rng(0)


def away_from_zero(shape: tuple[int, ...], low: float = 0.1) -> np.ndarray:
    return RNG.uniform(low, 2.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def value_and_grad(op, values, dtype=np.float64):
    x = Variable.from_numpy(np.asarray(values, dtype=dtype))
    y = op(x)
    Engine.backward(SumOp()(y))
    return y.data, x.grad


@pytest.mark.parametrize(
    ("factory", "values"),
    [
        (ExpOp, RNG.standard_normal((3, 4))),
        (LogOp, RNG.uniform(0.2, 3.0, (3, 4))),
        (SqrtOp, RNG.uniform(0.2, 3.0, (3, 4))),
        (SigmoidOp, 3 * RNG.standard_normal((3, 4))),
        (TanhOp, 2 * RNG.standard_normal((3, 4))),
        (ReLUOp, away_from_zero((3, 4))),
        (LeakyReLUOp, away_from_zero((3, 4))),
        (lambda: LeakyReLUOp(slope=0.2), away_from_zero((3, 4))),
    ],
    ids=["exp", "log", "sqrt", "sigmoid", "tanh", "relu", "leaky_relu", "leaky_relu_0.2"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_central_differences_and_dtype_is_kept(factory, values, dtype):
    check_operator(factory, values.astype(dtype))


@pytest.mark.parametrize(
    ("op", "x", "y"),
    [
        (ExpOp, [0.0, 1.0], [1.0, math.e]),
        (LogOp, [1.0, math.e], [0.0, 1.0]),
        (SqrtOp, [4.0, 9.0], [2.0, 3.0]),
        (ReLUOp, [-2.0, 0.0, 3.0], [0.0, 0.0, 3.0]),
        (lambda: LeakyReLUOp(0.1), [-2.0, 0.0, 3.0], [-0.2, 0.0, 3.0]),
    ],
)
def test_values(op, x, y):
    np.testing.assert_allclose(op()(Variable.from_numpy(x)).data, y, rtol=1e-15)


@pytest.mark.parametrize(
    ("op", "value", "grad"),
    [(TanhOp, [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]), (SigmoidOp, [0.0, 0.5, 1.0], [0.0, 0.25, 0.0])],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_issue_case_tanh_and_sigmoid_saturate_at_plus_minus_1000_without_warnings(op, value, grad, dtype):
    with np.errstate(all="raise"):
        y, g = value_and_grad(op(), [-1000.0, 0.0, 1000.0], dtype)
    np.testing.assert_array_equal(y, value)
    np.testing.assert_array_equal(g, grad)
    assert y.dtype == dtype and g.dtype == dtype


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=st.one_of(
        arrays(np.float64, st.integers(1, 8), elements=st.floats(allow_nan=False, allow_infinity=False)),
        arrays(np.float32, st.integers(1, 8), elements=st.floats(allow_nan=False, allow_infinity=False, width=32)),
    ),
    op=st.sampled_from([SigmoidOp, TanhOp]),
)
def test_sigmoid_and_tanh_never_overflow_or_warn_for_finite_input(x, op):
    with np.errstate(all="raise"):
        y, g = value_and_grad(op(), x, x.dtype)
    low = 0.0 if op is SigmoidOp else -1.0
    assert np.all((y >= low) & (y <= 1.0)) and np.all(np.isfinite(g)) and np.all(g >= 0)


def test_sigmoid_keeps_relative_precision_far_below_zero():
    """sigmoid(-40) = 1/(1+e^40) ≈ e^-40 ≈ 4.25e-18; the 0.5(1+tanh(x/2)) form would give 0."""
    y, g = value_and_grad(SigmoidOp(), [-40.0])
    np.testing.assert_allclose(y, [1 / (1 + math.exp(40.0))], rtol=1e-14)
    np.testing.assert_allclose(g, [math.exp(40.0) / (1 + math.exp(40.0)) ** 2], rtol=1e-13)


def test_relu_gradient_at_zero_is_zero_by_convention():
    _, g = value_and_grad(ReLUOp(), [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_leaky_relu_gradient_is_the_slope_at_and_below_zero():
    _, g = value_and_grad(LeakyReLUOp(slope=0.05), [-1.0, 0.0, 2.0])
    np.testing.assert_allclose(g, [0.05, 0.05, 1.0], rtol=1e-15)


def test_relu_passes_gradcheck_at_the_kink_because_zero_is_a_subgradient():
    check_operator(ReLUOp, np.array([-1.0, 0.0, 2.0]))


def test_log_and_sqrt_outside_their_domain_follow_numpy():
    with np.errstate(all="ignore"):
        y = LogOp()(Variable.from_numpy([0.0, -1.0])).data
        s = SqrtOp()(Variable.from_numpy([-1.0])).data
    assert y[0] == -np.inf and np.isnan(y[1]) and np.isnan(s[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_is_bit_identical_to_the_select_formulation_it_replaced(dtype):
    """SigmoidOp's forward computes its numerator as max(z, [x >= 0]) for speed; the values must equal the textbook
    stable form where(x >= 0, 1, z) / (1 + z) bit for bit, signed zeros, NaN, infinities and underflow included,
    so that a trained model does not change (and the backward y·(1 - y) likewise)."""
    rng = np.random.default_rng(5)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, -87.0, -104.0, -745.0, -800.0, 800.0]
    x = np.concatenate([30 * rng.standard_normal(5000), rng.standard_normal(5000), specials]).astype(dtype)
    with np.errstate(all="ignore"):
        z = np.exp(-np.abs(x))
        expected = np.where(x >= 0, 1, z) / (1 + z)
        gy = rng.standard_normal(x.shape).astype(dtype)
        expected_grad = gy * (expected * (1 - expected))
    op = SigmoidOp()
    y = op(Variable.from_numpy(x)).data
    assert y.dtype == expected.dtype == dtype
    assert np.array_equal(y, expected, equal_nan=True) and np.array_equal(np.signbit(y), np.signbit(expected))
    (g,) = op.backward(gy)
    assert g.dtype == dtype and np.array_equal(g, expected_grad, equal_nan=True)
    assert np.array_equal(np.signbit(g), np.signbit(expected_grad))
    x0 = np.array(-3.0, dtype=dtype)  # 0-d: NumPy returns scalars there, which in-place updates must survive
    z0 = np.exp(-np.abs(x0))
    assert SigmoidOp().forward(x0) == np.where(x0 >= 0, 1, z0) / (1 + z0)
