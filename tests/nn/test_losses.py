"""cross_entropy and mse_loss: the functional wrappers, against NumPy oracles and the issue's stability case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_lab import Engine, Variable
from autograd_lab.nn import cross_entropy, mse_loss
from autograd_lab.ops import MSELossOp, SoftmaxCrossEntropyOp


def test_cross_entropy_of_huge_equal_float32_logits_is_ln2_with_gradient_half_minus_half():
    """Issue 3: float32 logits [1e8, 1e8] with label 1 give ln 2 and gradient [0.5, -0.5]."""
    z = Variable.from_numpy(np.array([[1e8, 1e8]], dtype=np.float32))
    loss = cross_entropy(z, np.array([1]))
    assert isinstance(loss.op, SoftmaxCrossEntropyOp) and loss.dtype == np.float32
    Engine.backward(loss)
    assert loss.item() == pytest.approx(math.log(2), rel=1e-6)
    np.testing.assert_allclose(z.grad, [[0.5, -0.5]], rtol=1e-6)


def test_cross_entropy_with_integer_labels_is_mean_negative_log_softmax():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 4))
    labels = rng.integers(0, 4, 5)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    expected = -log_p[np.arange(5), labels].mean()
    assert cross_entropy(Variable.from_numpy(logits), labels).item() == pytest.approx(expected, rel=1e-12)


def test_mse_loss_value_and_gradient():
    """L = mean((a - b)²); dL/da = 2(a - b)/K."""
    a = Variable.from_numpy(np.array([[1.0, 2.0], [3.0, 5.0]]))
    target = np.array([[1.0, 0.0], [0.0, 1.0]])
    loss = mse_loss(a, target)
    assert isinstance(loss.op, MSELossOp)
    assert loss.item() == pytest.approx((0 + 4 + 9 + 16) / 4)
    Engine.backward(loss)
    np.testing.assert_allclose(a.grad, 2 * (a.data - target) / 4)


def test_mse_loss_refuses_shapes_that_would_broadcast():
    with pytest.raises(ValueError, match="same shape"):
        mse_loss(Variable.from_numpy(np.zeros((3, 1))), np.zeros(3))
