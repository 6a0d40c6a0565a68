"""SoftmaxOp and LogSoftmaxOp: normalisation, stability for any magnitude, gradients, axes, dtypes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograd_lab import Engine, Variable, check_operator
from autograd_lab.ops import LogSoftmaxOp, SoftmaxOp, SumOp

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("op", [SoftmaxOp, LogSoftmaxOp])
@pytest.mark.parametrize(("shape", "axis"), [((4,), -1), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_central_differences(op, shape, axis, dtype):
    check_operator(lambda: op(axis=axis), (2 * RNG.standard_normal(shape)).astype(dtype))


def test_softmax_rows_sum_to_one_and_match_the_definition():
    x = RNG.standard_normal((3, 4))
    y = SoftmaxOp()(Variable.from_numpy(x)).data
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-15)


def test_log_softmax_matches_the_log_of_softmax():
    x = RNG.standard_normal((3, 4))
    expected = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(LogSoftmaxOp()(Variable.from_numpy(x)).data, expected, rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stable_for_huge_logits_without_warnings(dtype):
    """exp(1000) overflows; exp(1e8) in float32 too. Subtracting the maximum first avoids both."""
    x = np.array([[1000.0, 0.0, -1000.0], [1e8, 1e8, -1e8], [-1e30, -1e30, -1e30]], dtype=dtype)
    with np.errstate(all="raise"):
        p = SoftmaxOp()(Variable.from_numpy(x)).data
        v = Variable.from_numpy(x)
        logp = LogSoftmaxOp()(v)
        Engine.backward(SumOp()(logp))
    np.testing.assert_array_equal(p[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(p[1], [0.5, 0.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(p[2], [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(logp.data[0], [0.0, -1000.0, -2000.0], rtol=1e-6)
    np.testing.assert_allclose(logp.data[1, :2], [-math.log(2)] * 2, rtol=1e-6)
    assert np.isfinite(v.grad).all() and p.dtype == dtype and logp.dtype == dtype and v.grad.dtype == dtype


def test_softmax_gradient_of_a_constant_upstream_is_zero():
    """Σ softmax = 1 whatever x, so d(Σ y)/dx = 0."""
    x = Variable.from_numpy(RNG.standard_normal((2, 5)))
    Engine.backward(SumOp()(SoftmaxOp()(x)))
    np.testing.assert_allclose(x.grad, 0.0, atol=1e-15)
