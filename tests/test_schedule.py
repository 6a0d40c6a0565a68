"""The one-cycle learning-rate schedule (Smith & Topin 2017, in PyTorch's OneCycleLR form) and ``--lr-schedule
onecycle``."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from autograd_lab import Parameter
from autograd_lab.optim import SGD
from autograd_lab.training.schedule import OneCycleSchedule, onecycle_lr


def test_onecycle_starts_at_a_25th_peaks_after_30_percent_and_ends_at_a_25th_of_a_10000th():
    """T = 100: step 0 lr/25, step 29 (⌊0.3·100⌋ - 1) the peak, step 99 lr/(25·10⁴); rising then falling."""
    rates = [onecycle_lr(0.01, t, 100) for t in range(100)]
    assert math.isclose(rates[0], 0.01 / 25)
    assert math.isclose(rates[29], 0.01) and max(rates) == rates[29]
    assert math.isclose(rates[99], 0.01 / 25 / 1e4)
    assert all(a < b for a, b in pairwise(rates[:30]))
    assert all(a > b for a, b in pairwise(rates[29:]))
    assert onecycle_lr(0.01, 150, 100) == rates[99]  # past the end it stays at the last rate


@pytest.mark.parametrize("total", [2, 7, 100, 4750])
def test_onecycle_equals_torch_onecyclelr_at_every_step(total):
    """PyTorch's ``OneCycleLR(max_lr, total_steps, cycle_momentum=False)`` with its defaults (pct_start 0.3, cosine,
    div_factor 25, final_div_factor 1e4) as the oracle."""
    torch = pytest.importorskip("torch")
    weight = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([weight], lr=0.1)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=total, cycle_momentum=False)
    for t in range(total):
        assert onecycle_lr(3e-3, t, total) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12), t
        opt.step()
        scheduler.step()


def test_the_schedule_sets_the_first_steps_rate_before_any_step_and_the_next_after_each():
    """The optimizer's rate on construction is the peak; the schedule lowers it to peak/25 at once, so the first
    update is a small one."""
    opt = SGD([Parameter(np.zeros(1))], lr=0.05)
    schedule = OneCycleSchedule(opt, steps_per_epoch=5, epochs=4)
    assert math.isclose(opt.lr, 0.05 / 25)
    schedule(2, 1, None)  # 6 steps done: the rate of step 6, the first after the peak (step ⌊0.3·20⌋ - 1 = 5)
    assert opt.lr == onecycle_lr(0.05, 6, 20)
    schedule(4, 5, None)
    assert opt.lr == onecycle_lr(0.05, 20, 20) == onecycle_lr(0.05, 19, 20)


@pytest.mark.parametrize(("total", "warmup"), [(1, 0.3), (10, 0.0), (10, 1.0)])
def test_a_run_too_short_or_a_warmup_outside_0_1_is_refused(total, warmup):
    with pytest.raises(ValueError, match="onecycle_lr: needs total_steps ≥ 2 and warmup in"):
        onecycle_lr(0.1, 0, total, warmup)


def test_a_one_step_run_is_refused_by_the_schedule():
    with pytest.raises(ValueError, match="OneCycleSchedule: a run of 1 step"):
        OneCycleSchedule(SGD([Parameter(np.zeros(1))], lr=0.1), steps_per_epoch=1, epochs=1)
