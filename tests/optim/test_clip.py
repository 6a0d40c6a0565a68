"""clip_grad_norm over the global norm (Pascanu et al. 2013), against the issue's case and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.optim import clip_grad_norm


def params_with(*grads):
    out = []
    for g in grads:
        p = Parameter(np.zeros(len(g)))
        p.grad = np.array(g, dtype=np.float64)
        out.append(p)
    return out


def test_issue_case_3_0_and_0_4_with_max_norm_1():
    """Global norm √(9 + 16) = 5; scaled by 1/5: [0.6, 0] and [0, 0.8]."""
    a, b = params_with([3.0, 0.0], [0.0, 4.0])
    assert clip_grad_norm([a, b], 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad, [0.6, 0.0], rtol=1e-15)
    np.testing.assert_allclose(b.grad, [0.0, 0.8], rtol=1e-15)


def test_gradients_below_the_threshold_are_left_alone_and_missing_ones_skipped():
    a, b = params_with([0.3, 0.0], [0.0, 0.4])
    idle = Parameter(np.zeros(2))
    assert clip_grad_norm([a, idle, b], 1.0) == pytest.approx(0.5)
    np.testing.assert_array_equal(a.grad, [0.3, 0.0])
    assert idle.grad is None


def test_a_nan_gradient_is_named_and_nothing_is_scaled():
    a, b = params_with([3.0, 0.0], [np.nan, 4.0])
    b.name = "layers.2.bias"
    with pytest.raises(FloatingPointError, match=r"layers\.2\.bias.*NaN or inf"):
        clip_grad_norm([a, b], 1.0)
    np.testing.assert_array_equal(a.grad, [3.0, 0.0])


def test_only_parameters_and_a_positive_threshold_are_accepted():
    with pytest.raises(TypeError, match="not a Parameter"):
        clip_grad_norm([Variable.from_numpy(np.zeros(2))], 1.0)
    with pytest.raises(ValueError, match="max_norm must be positive"):
        clip_grad_norm(params_with([1.0]), 0.0)


def test_matches_torch_clip_grad_norm():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s) for s in [(4, 3), (3,), (2, 2)]]
    ours = []
    for g in grads:
        p = Parameter(np.zeros(g.shape))
        p.grad = g.copy()
        ours.append(p)
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for t, g in zip(theirs, grads):
        t.grad = torch.from_numpy(g.copy())
    total = clip_grad_norm(ours, 0.5)
    t_total = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
    assert total == pytest.approx(float(t_total), rel=1e-12)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-5)  # torch adds 1e-6 to the norm


def test_clip_grad_norm_of_huge_finite_float32_gradients_does_not_overflow():
    """float32 entries of 1e20 square to inf in float32; the norm must still be exact (found by the 08 notebook)."""
    a = Parameter(np.zeros(2, np.float32))
    b = Parameter(np.zeros(2, np.float32))
    a.grad = np.array([3e20, 0.0], np.float32)
    b.grad = np.array([0.0, 4e20], np.float32)
    total = clip_grad_norm([a, b], max_norm=1.0)
    assert total == pytest.approx(5e20, rel=1e-6)
    np.testing.assert_allclose(a.grad, [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad, [0.0, 0.8], rtol=1e-6)
