"""Add, Sub, Mul, Div, Neg, Pow: values, gradients against central differences, broadcasting, dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Variable, check_operator
from autograd_lab.ops import AddOp, DivOp, MulOp, NegOp, PowOp, SubOp, SumOp

BROADCAST_PAIRS = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (3, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1, 1), (2, 3)),
]


def away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


@pytest.mark.parametrize("op", [AddOp, SubOp, MulOp, DivOp])
@pytest.mark.parametrize(("shape_a", "shape_b"), BROADCAST_PAIRS)
def test_binary_op_gradients_with_broadcasting(op, shape_a, shape_b):
    rng = np.random.default_rng(len(shape_a) * 10 + len(shape_b))
    check_operator(op, rng.standard_normal(shape_a), away_from_zero(rng, shape_b))


@pytest.mark.parametrize(
    ("op", "expected"),
    [(AddOp, [5.0, 2.0]), (SubOp, [-3.0, 6.0]), (MulOp, [4.0, -8.0]), (DivOp, [0.25, -2.0])],
)
def test_binary_op_values(op, expected):
    a, b = Variable.from_numpy([1.0, 4.0]), Variable.from_numpy([4.0, -2.0])
    np.testing.assert_array_equal(op()(a, b).data, expected)


@pytest.mark.parametrize(
    ("bias", "expected_grad"),
    [
        (np.zeros(3), np.array([4.0, 4.0, 4.0])),
        (np.zeros((1, 3)), np.array([[4.0, 4.0, 4.0]])),
        (np.zeros((1, 1)), np.array([[12.0]])),
        (np.array(0.0), np.array(12.0)),
    ],
    ids=["(3,)", "(1,3)", "(1,1)", "()"],
)
def test_issue_case_bias_gradient_has_the_bias_shape(bias, expected_grad):
    """X = arange(12).reshape(4,3), loss = sum(X + b): each bias element is used once per row it is copied to."""
    x = Variable.from_numpy(np.arange(12.0).reshape(4, 3))
    b = Variable.from_numpy(bias)
    Engine.backward(SumOp()(AddOp()(x, b)))
    assert b.grad.shape == bias.shape
    np.testing.assert_array_equal(b.grad, expected_grad)
    np.testing.assert_array_equal(x.grad, np.ones((4, 3)))


def test_neg_gradient_and_value():
    check_operator(NegOp, np.random.default_rng(0).standard_normal((2, 3)))
    np.testing.assert_array_equal(NegOp()(Variable.from_numpy([1.0, -2.0])).data, [-1.0, 2.0])


@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5, -1.5])
def test_pow_with_constant_exponent(exponent):
    a = np.random.default_rng(1).uniform(0.5, 2.0, size=(3, 2))
    check_operator(lambda: PowOp(exponent), a)
    np.testing.assert_allclose(PowOp(exponent)(Variable.from_numpy(a)).data, a**exponent, rtol=1e-15)


@pytest.mark.parametrize(("shape_a", "shape_p"), [((3,), (3,)), ((2, 3), ()), ((2, 3), (3,))])
def test_pow_with_variable_exponent(shape_a, shape_p):
    rng = np.random.default_rng(2)
    check_operator(PowOp, rng.uniform(0.5, 2.0, size=shape_a), rng.uniform(-2.0, 2.0, size=shape_p))


def test_pow_exponent_gradient_at_zero_base_is_zero_not_nan():
    """d(a^p)/dp = a^p ln a; at a = 0 (p > 0) the limit is 0."""
    a = Variable.from_numpy([0.0, 2.0])
    p = Variable.from_numpy([2.0, 3.0])
    Engine.backward(SumOp()(PowOp()(a, p)))
    np.testing.assert_allclose(p.grad, [0.0, 8.0 * np.log(2.0)], rtol=1e-15)


def test_pow_rejects_two_exponents():
    with pytest.raises(TypeError, match="not both"):
        PowOp(2.0)(Variable.from_numpy([1.0]), Variable.from_numpy([2.0]))


@pytest.mark.parametrize("op", [AddOp, SubOp, MulOp, DivOp])
def test_float32_stays_float32(op):
    a = Variable.from_numpy(np.array([[1.0, 2.0]], dtype=np.float32))
    b = Variable.from_numpy(np.array([3.0, 4.0], dtype=np.float32))
    y = op()(a, b)
    Engine.backward(SumOp()(y))
    assert y.dtype == np.float32 and a.grad.dtype == np.float32 and b.grad.dtype == np.float32


@pytest.mark.parametrize("op", [AddOp, MulOp, DivOp])
def test_float32_gradients_match_central_differences_in_float64(op):
    rng = np.random.default_rng(3)
    check_operator(op, rng.standard_normal((3, 4)).astype(np.float32), away_from_zero(rng, (4,)).astype(np.float32))


def test_pow_with_exponent_zero_has_zero_gradient_even_at_zero():
    """d/dx x⁰ = 0 everywhere; the formula p·x^(p-1) would give 0·inf = NaN at x = 0 (found in review)."""
    x = Variable.from_numpy([0.0, 1.0, -2.0])
    Engine.backward(PowOp(0.0)(x), grad=np.ones(3))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])
    a = Variable.from_numpy([0.0, 0.0, 0.0])
    p = Variable.from_numpy([2.0, 0.0, 1.0])
    Engine.backward(PowOp()(a, p), grad=np.ones(3))
    np.testing.assert_array_equal(a.grad, [0.0, 0.0, 1.0])  # 2·0¹, 0 (constant), 1·0⁰


def test_pow_refuses_an_array_as_constant_exponent():
    with pytest.raises(ValueError, match=r"PowOp\(\)\(a, p\)"):
        PowOp(np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("exponent", [True, "2"])
def test_pow_refuses_a_non_numeric_constant_exponent(exponent):
    with pytest.raises(TypeError, match="real number"):
        PowOp(exponent)
