"""AdamW (Loshchilov & Hutter 2019, decoupled weight decay): a case by hand, torch.optim.AdamW as an oracle, how it
differs from Adam's L2 term, no allocations."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter
from autograd_lab.optim import Adam, AdamW

from .measure import peak_bytes_of_steps
from .torch_reference import run_side_by_side


def test_one_step_by_hand_lr_0_1_decay_0_5():
    """p = 1, g = 0.5, lr 0.1, λ 0.5: decay p ← 1·(1 - 0.1·0.5) = 0.95, then Adam's first step moves it by lr
    (m̂/√v̂ = 1): 0.85."""
    p = Parameter(np.array([1.0]))
    p.grad = np.array([0.5])
    AdamW([p], lr=0.1, weight_decay=0.5).step()
    assert p.data[0] == pytest.approx(0.85, abs=1e-8)


def test_the_decay_shrinks_a_parameter_without_gradient_signal_by_lr_times_lambda_per_step():
    """A zero gradient leaves m = v = 0, so Adam's part is 0 and only the decay acts: p·(1 - lr·λ)ᵗ."""
    p = Parameter(np.array([2.0, -4.0]))
    opt = AdamW([p], lr=0.01, weight_decay=0.1)
    for _ in range(3):
        p.grad = np.zeros(2)
        opt.step()
    np.testing.assert_allclose(p.data, np.array([2.0, -4.0]) * (1 - 0.001) ** 3, rtol=1e-12)


def test_decoupled_decay_differs_from_adams_l2_term():
    """Adam divides λ·p by √v̂ like any gradient; AdamW does not: from the same start and gradient they part."""
    start, grad = np.array([1.0, 1.0]), np.array([1e-3, 1.0])
    a, w = Parameter(start.copy()), Parameter(start.copy())
    a.grad, w.grad = grad.copy(), grad.copy()
    Adam([a], lr=0.1, weight_decay=0.5).step()
    AdamW([w], lr=0.1, weight_decay=0.5).step()
    assert not np.allclose(a.data, w.data)


def test_default_weight_decay_is_pytorchs_0_01():
    assert AdamW([Parameter(np.zeros(1))]).weight_decay == 0.01


@pytest.mark.parametrize("kwargs", [{"lr": 0.01}, {"lr": 0.003, "betas": (0.8, 0.99), "eps": 1e-6},
                                    {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.02, "weight_decay": 0.0}])
def test_matches_torch_optim_adamw_over_five_steps(kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = run_side_by_side(AdamW, torch.optim.AdamW, kwargs, [(5, 4), (4,)], seed=1)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-6)


def test_out_of_range_hyper_parameters_name_adamw():
    with pytest.raises(ValueError, match=r"AdamW: weight_decay must be in \[0.0, inf\), got -1"):
        AdamW([Parameter(np.zeros(1))], weight_decay=-1)


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_a_step_allocates_no_parameter_sized_arrays(weight_decay):
    p = Parameter(np.zeros((256, 256), dtype=np.float32))
    opt = AdamW([p], weight_decay=weight_decay)
    p.grad = np.ones(p.shape, dtype=np.float32)
    assert peak_bytes_of_steps(opt) < p.data.nbytes / 10
