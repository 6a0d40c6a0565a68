"""SGD: hand-derived updates, PyTorch's torch.optim.SGD as an oracle, per-parameter clipping, no allocations."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter
from autograd_lab.optim import SGD

from .measure import peak_bytes_of_steps
from .torch_reference import run_side_by_side


def run(opt_kwargs: dict, grads: list, p0: float = 1.0) -> list[float]:
    """Apply SGD to a one-element parameter with the given gradients; return p after each step."""
    p = Parameter(np.array([p0]))
    opt = SGD([p], **opt_kwargs)
    out = []
    for g in grads:
        p.grad = np.array([g])
        opt.step()
        out.append(float(p.data[0]))
    return out


def test_plain_step_is_p_minus_lr_times_grad():
    """p = 1, g = 0.5, lr = 0.1: p = 1 - 0.05 = 0.95."""
    assert run({"lr": 0.1}, [0.5]) == pytest.approx([0.95], abs=1e-15)


def test_momentum_by_hand():
    """μ = 0.9, g = 1 twice: b = 1 then 0.9·1 + 1 = 1.9; p = 1 - 0.1 = 0.9, then 0.9 - 0.19 = 0.71."""
    assert run({"lr": 0.1, "momentum": 0.9}, [1.0, 1.0]) == pytest.approx([0.9, 0.71], abs=1e-15)


def test_nesterov_by_hand():
    """μ = 0.9, g = 1 twice: step direction g + μ·b = 1 + 0.9 = 1.9, then 1 + 0.9·1.9 = 2.71; p = 0.81, 0.539."""
    assert run({"lr": 0.1, "momentum": 0.9, "nesterov": True}, [1.0, 1.0]) == pytest.approx([0.81, 0.539], abs=1e-15)


def test_weight_decay_by_hand():
    """λ = 0.1, p = 1, g = 0.5: d = 0.5 + 0.1·1 = 0.6; p = 1 - 0.1·0.6 = 0.94."""
    assert run({"lr": 0.1, "weight_decay": 0.1}, [0.5]) == pytest.approx([0.94], abs=1e-15)


def test_nesterov_with_weight_decay_by_hand():
    """λ = 0.5, μ = 0.5, p = 1, g = 1: d = 1.5, b = 1.5, direction 1.5 + 0.75 = 2.25; p = 1 - 0.1·2.25 = 0.775."""
    kwargs = {"lr": 0.1, "momentum": 0.5, "nesterov": True, "weight_decay": 0.5}
    assert run(kwargs, [1.0]) == pytest.approx([0.775], abs=1e-15)


def test_per_parameter_clipping_as_the_seed_simple_sgd_with_threshold_5():
    """SimpleSGD (seed article): a gradient whose norm exceeds 5 is scaled to norm 5; [6, 8] (norm 10) -> [3, 4]."""
    big, small = Parameter(np.zeros(2)), Parameter(np.zeros(2))
    big.grad, small.grad = np.array([6.0, 8.0]), np.array([0.3, 0.4])
    SGD([big, small], lr=1.0, clip_per_param=5.0).step()
    np.testing.assert_allclose(big.data, [-3.0, -4.0], rtol=1e-15)
    np.testing.assert_allclose(small.data, [-0.3, -0.4], rtol=1e-15)  # below the threshold: unchanged


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": 0.1},
        {"lr": 0.05, "momentum": 0.9},
        {"lr": 0.05, "momentum": 0.9, "nesterov": True},
        {"lr": 0.1, "weight_decay": 0.01},
        {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.01},
        {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01},
    ],
)
def test_matches_torch_optim_sgd_over_five_steps(kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = run_side_by_side(SGD, torch.optim.SGD, kwargs, [(4, 3), (3,)], seed=0)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p, t, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}])
def test_a_step_allocates_no_parameter_sized_arrays(kwargs):
    p = Parameter(np.zeros((256, 256), dtype=np.float32))  # 256 KB
    opt = SGD([p], lr=0.1, **kwargs)
    p.grad = np.ones(p.shape, dtype=np.float32)
    assert peak_bytes_of_steps(opt) < p.data.nbytes / 10  # the warm-up step fills the momentum buffer
