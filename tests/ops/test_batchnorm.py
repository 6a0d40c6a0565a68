"""BatchNormOp and RunningStats: training and evaluation values, gradients, running statistics (replaced, never
written), stability, PyTorch cross-checks over several steps, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, ShapeError, Variable, check_operator, eval_mode
from autograd_lab.ops import BatchNormOp, RunningStats

RNG = np.random.default_rng(13)


def reference(x, gamma, beta, eps=1e-5):
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    shape = (1, -1) if x.ndim == 2 else (1, -1, 1, 1)
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


def call(stats, x, gamma, beta, **kwargs):
    return BatchNormOp(stats, **kwargs)(*(Variable.from_numpy(a) for a in (x, gamma, beta)))


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 2, 5)])
def test_training_value_and_gradients(shape):
    x, g, b = RNG.standard_normal(shape) * 3 + 1, RNG.standard_normal(3), RNG.standard_normal(3)
    stats = RunningStats(3, np.float64)
    np.testing.assert_allclose(call(stats, x, g, b).data, reference(x, g, b), rtol=1e-12, atol=1e-12)
    check_operator(lambda: BatchNormOp(stats), x, g, b)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 2, 5)])
def test_evaluation_uses_the_running_statistics_and_its_gradients(shape):
    x, g, b = RNG.standard_normal(shape), RNG.standard_normal(3), RNG.standard_normal(3)
    stats = RunningStats(3, np.float64)
    stats.mean, stats.var = np.array([0.5, -1.0, 2.0]), np.array([4.0, 0.25, 1.0])
    s = (1, -1) if len(shape) == 2 else (1, -1, 1, 1)
    expected = (x - stats.mean.reshape(s)) / np.sqrt(stats.var.reshape(s) + 1e-5) * g.reshape(s) + b.reshape(s)
    with eval_mode():
        np.testing.assert_allclose(call(stats, x, g, b).data, expected, rtol=1e-12)
        check_operator(lambda: BatchNormOp(stats), x, g, b)
    np.testing.assert_array_equal(stats.mean, [0.5, -1.0, 2.0])  # evaluation never updates them


def test_training_replaces_the_statistics_with_new_read_only_arrays():
    stats = RunningStats(2, np.float64)
    old_mean, old_var = stats.mean, stats.var
    x = np.array([[1.0, 10.0], [3.0, 20.0], [5.0, 60.0]])
    call(stats, x, np.ones(2), np.zeros(2), momentum=0.5)
    assert stats.mean is not old_mean and stats.var is not old_var
    np.testing.assert_array_equal(old_mean, [0, 0])
    np.testing.assert_array_equal(old_var, [1, 1])  # the arrays someone may hold are untouched
    np.testing.assert_allclose(stats.mean, 0.5 * np.array([3.0, 30.0]))
    np.testing.assert_allclose(stats.var, 0.5 + 0.5 * x.var(axis=0, ddof=1))  # unbiased, as PyTorch
    assert not stats.mean.flags.writeable and not stats.var.flags.writeable and stats.count == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stable_for_a_large_mean(dtype):
    x = np.array([[9999.0], [10000.0], [10001.0]], dtype=dtype)
    stats = RunningStats(1, dtype)
    y = call(stats, x, np.ones(1, dtype), np.zeros(1, dtype), eps=0.0).data
    np.testing.assert_allclose(y[:, 0], [-np.sqrt(1.5), 0.0, np.sqrt(1.5)], rtol=1e-5)
    np.testing.assert_allclose(stats.var, [0.9 + 0.1 * 1.0], rtol=1e-6)  # unbiased variance of the batch is 1


def test_is_training_dependent():
    assert BatchNormOp.training_dependent


@pytest.mark.parametrize(
    ("xs", "gs", "match"),
    [((4, 3), (2,), r"gamma must have shape \(3,\)"), ((4, 3, 2), (3,), r"must be \(N, C\) or \(N, C, H, W\)"),
     ((1, 3), (3,), r"more than one value per channel")],
)
def test_bad_input_raises_shape_error(xs, gs, match):
    stats = RunningStats(3, np.float64)
    with pytest.raises(ShapeError, match=match) as info:
        call(stats, np.ones(xs), np.ones(gs), np.zeros(gs))
    assert "BatchNormOp" in str(info.value) and str(xs) in str(info.value) and "test_batchnorm.py:" in str(info.value)


def test_statistics_of_the_wrong_size_raise_shape_error():
    with pytest.raises(ShapeError, match=r"stats.mean must have shape \(3,\)"):
        call(RunningStats(4, np.float64), np.ones((2, 3)), np.ones(3), np.zeros(3))


def test_bad_settings():
    with pytest.raises(TypeError, match="RunningStats"):
        BatchNormOp(np.zeros(3))
    with pytest.raises(ValueError, match="momentum"):
        BatchNormOp(RunningStats(3), momentum=1.5)
    with pytest.raises(ValueError, match="num_features"):
        RunningStats(0)


class TestAgainstPyTorch:
    torch = pytest.importorskip("torch")

    @pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5, 2)])
    def test_training_steps_then_evaluation(self, shape):
        """Three training steps (values, all gradients, running statistics after each), then evaluation."""
        torch = self.torch
        c = shape[1]
        bn = (torch.nn.BatchNorm1d if len(shape) == 2 else torch.nn.BatchNorm2d)(c, momentum=0.1, eps=1e-5).double()
        g, b = RNG.standard_normal(c), RNG.standard_normal(c)
        with torch.no_grad():
            bn.weight.copy_(torch.tensor(g))
            bn.bias.copy_(torch.tensor(b))
        stats = RunningStats(c, np.float64)
        for step in range(4):
            training = step < 3
            bn.train(training)
            x = RNG.standard_normal(shape) * 2 + 5
            gy = RNG.standard_normal(shape)
            leaves = [Variable.from_numpy(a) for a in (x, g, b)]
            if training:
                y = BatchNormOp(stats)(*leaves)
            else:
                with eval_mode():
                    y = BatchNormOp(stats)(*leaves)
            Engine.backward(y, grad=gy)
            xt = torch.tensor(x, requires_grad=True)
            bn.zero_grad()
            yt = bn(xt)
            yt.backward(torch.tensor(gy))
            np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(leaves[0].grad, xt.grad.numpy(), rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(leaves[1].grad, bn.weight.grad.numpy(), rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(leaves[2].grad, bn.bias.grad.numpy(), rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(stats.mean, bn.running_mean.numpy(), rtol=1e-12)
            np.testing.assert_allclose(stats.var, bn.running_var.numpy(), rtol=1e-12)
