"""Adam (Kingma & Ba 2015): the issue's case, PyTorch's torch.optim.Adam as an oracle, no allocations."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter
from autograd_lab.optim import Adam

from .measure import peak_bytes_of_steps
from .torch_reference import run_side_by_side


def test_issue_case_lr_0_1_gradients_half_then_minus_half():
    """p = 1, lr 0.1, betas (0.9, 0.999), eps 1e-8, grads 0.5 then -0.5: p = 0.9, then 0.90526316.

    By hand: step 1, m̂ = 0.5, v̂ = 0.25, p = 1 - 0.1·0.5/0.5 = 0.9. Step 2, m = 0.045 - 0.05 = -0.005,
    m̂ = -0.005/0.19, v = 0.00049975, v̂ = 0.00049975/0.001999 = 0.25, p = 0.9 + 0.1·(0.005/0.19)/0.5 = 0.90526316.
    """
    p = Parameter(np.array([1.0]))
    opt = Adam([p], lr=0.1, betas=(0.9, 0.999), eps=1e-8)
    p.grad = np.array([0.5])
    opt.step()
    assert p.data[0] == pytest.approx(0.9, abs=1e-8)
    p.grad = np.array([-0.5])
    opt.step()
    assert p.data[0] == pytest.approx(0.90526316, abs=1e-8)


def test_first_step_moves_each_element_by_lr_whatever_the_gradient_scale():
    """Bias correction: after step 1, m̂/√v̂ = g/|g| = ±1, so each element moves by lr (up to eps)."""
    p = Parameter(np.zeros(3))
    p.grad = np.array([1e-3, -2.0, 300.0])
    Adam([p], lr=0.01).step()
    np.testing.assert_allclose(p.data, [-0.01, 0.01, -0.01], rtol=1e-4)


@pytest.mark.parametrize("kwargs", [{"lr": 0.01}, {"lr": 0.003, "betas": (0.8, 0.99), "eps": 1e-6},
                                    {"lr": 0.01, "weight_decay": 0.1}])
def test_matches_torch_optim_adam_over_five_steps(kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = run_side_by_side(Adam, torch.optim.Adam, kwargs, [(5, 4), (4,)], seed=1)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_a_step_allocates_no_parameter_sized_arrays(weight_decay):
    p = Parameter(np.zeros((256, 256), dtype=np.float32))
    opt = Adam([p], weight_decay=weight_decay)
    p.grad = np.ones(p.shape, dtype=np.float32)
    assert peak_bytes_of_steps(opt) < p.data.nbytes / 10
