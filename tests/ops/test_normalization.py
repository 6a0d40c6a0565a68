"""LayerNormOp: definition, stable variance, gradients with and without gamma and beta, shape checks."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator
from autograd_lab.ops import LayerNormOp, SumOp

RNG = np.random.default_rng(21)


def reference(x, gamma=None, beta=None, eps=1e-5):
    """Layer norm written out directly from the definition, in float64."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if gamma is None else gamma) + (0 if beta is None else beta)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("n_params", [0, 1, 2])
def test_value_and_gradients(shape, n_params):
    x = RNG.standard_normal(shape)
    params = [RNG.standard_normal(shape[-1:]) for _ in range(n_params)]
    y = LayerNormOp()(*[Variable.from_numpy(a) for a in (x, *params)])
    np.testing.assert_allclose(y.data, reference(x, *params), rtol=1e-12, atol=1e-14)
    check_operator(LayerNormOp, x, *params)


def test_gradients_with_a_large_eps():
    check_operator(lambda: LayerNormOp(eps=0.5), RNG.standard_normal((3, 4)), RNG.standard_normal(4))


def test_float32_stays_float32():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    g = RNG.standard_normal(4).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    check_operator(LayerNormOp, x, g, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_variance_does_not_cancel_for_a_large_mean(dtype):
    """Rows 1e4 + [-1, 0, 1] (float32) or 1e8 + [-1, 0, 1] (float64): E[x²] - E[x]² would lose every digit."""
    offset = 1e4 if dtype == np.float32 else 1e8
    x = (offset + np.array([[-1.0, 0.0, 1.0]])).astype(dtype)
    y = LayerNormOp(eps=0.0)(Variable.from_numpy(x)).data
    np.testing.assert_allclose(y, [[-np.sqrt(1.5), 0.0, np.sqrt(1.5)]], rtol=1e-6, atol=1e-6)


def test_constant_row_maps_to_beta():
    x = Variable.from_numpy(np.full((2, 3), 7.0))
    beta = Variable.from_numpy([1.0, 2.0, 3.0])
    y = LayerNormOp()(x, Variable.from_numpy(np.ones(3)), beta)
    np.testing.assert_array_equal(y.data, [[1.0, 2.0, 3.0]] * 2)
    Engine.backward(SumOp()(y))
    assert np.isfinite(x.grad).all()


@pytest.mark.parametrize("bad", [np.ones(4), np.ones((1, 3))])
def test_gamma_of_the_wrong_shape_raises_shape_error(bad):
    with pytest.raises(ShapeError, match=r"LayerNormOp.*gamma must have shape \(3,\)"):
        LayerNormOp()(Variable.from_numpy(np.zeros((2, 3))), Variable.from_numpy(bad))


def test_0d_input_raises_shape_error():
    with pytest.raises(ShapeError, match="at least one axis"):
        LayerNormOp()(Variable.from_numpy(1.0))
