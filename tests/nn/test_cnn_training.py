"""The CNN learns: a short run's accuracy floor, the command line's ``--model cnn`` end to end (train, save with
running statistics, evaluate), the cosine schedule. The full goals (≥ 98.0%, speed against PyTorch) are measured in
benchmarks/bench_cnn.py, not here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_lab import Parameter
from autograd_lab.cli import main
from autograd_lab.data import load_bundled_mnist
from autograd_lab.nn import CNN
from autograd_lab.optim import SGD
from autograd_lab.training import evaluate, fit
from autograd_lab.training.job import TrainConfig
from autograd_lab.training.models import input_output_sizes, load_model
from autograd_lab.training.schedule import CosineSchedule, cosine_lr


def test_cosine_schedule_goes_from_the_base_rate_to_zero():
    assert cosine_lr(0.1, 0, 10) == 0.1 and cosine_lr(0.1, 10, 10) == 0.0
    assert math.isclose(cosine_lr(0.1, 5, 10), 0.05)
    opt = SGD([Parameter(np.zeros(1))], lr=0.2)
    schedule = CosineSchedule(opt, steps_per_epoch=4, epochs=2)
    schedule(2, 2, None)  # step 6 of 8
    assert math.isclose(opt.lr, 0.2 * 0.5 * (1 + math.cos(math.pi * 6 / 8)))
    with pytest.raises(ValueError, match="lr_schedule"):
        TrainConfig(lr_schedule="step").check()
    with pytest.raises(ValueError, match="channels"):
        TrainConfig(channels=[]).check()


def test_input_output_sizes():
    assert input_output_sizes(CNN(channels=[2], n_classes=7, rng=0)) == (784, 7)


@pytest.mark.slow
def test_two_short_epochs_reach_92_percent_on_the_held_out_images():
    """4,000 images, 2 epochs (about 4 s): the notebook's run. Measured 93.8%; the floor leaves room for BLAS."""
    data = load_bundled_mnist()
    model = CNN(rng=0)
    fit(model, SGD(model.parameters(), lr=0.05, momentum=0.9), data.x_train[:4000], data.y_train[:4000], epochs=2,
        batch_size=64, rng=1)
    assert evaluate(model, data.x_test, data.y_test)[1] >= 0.92


@pytest.mark.slow
def test_train_model_cnn_then_evaluate(tmp_path, capsys):
    out = tmp_path / "run"
    status = main(["train", "--model", "cnn", "--channels", "4", "8", "--dataset", "mnist-bundled", "--epochs", "1",
                   "--lr-schedule", "cosine", "--no-progress", "--no-plots", "--out", str(out)])
    assert status == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["model"] == "cnn" and metrics["test_accuracy"] > 0.85
    model = load_model(out / "model.npz")
    assert isinstance(model, CNN) and model.channels == [4, 8]
    assert not np.array_equal(model.layers[1].stats.mean, 0)  # the running statistics were saved and loaded
    capsys.readouterr()
    assert main(["evaluate", str(out / "model.npz"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["accuracy"] == metrics["test_accuracy"]
