"""Sequential MNIST models (issue 12): ``--model rnn`` / ``--model lstm`` build, save, load and train from the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_lab import ShapeError, Variable
from autograd_lab.cli import build_parser, main
from autograd_lab.nn import SequenceClassifier
from autograd_lab.training.job import TrainConfig
from autograd_lab.training.models import MODELS, build_model, load_model

X = np.random.default_rng(0).random((5, 784), dtype=np.float32)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_the_registry_builds_a_row_by_row_classifier_of_the_configured_size(cell):
    model = build_model(TrainConfig(model=cell, hidden_size=12), 784, 10, np.random.default_rng(0))
    assert isinstance(model, SequenceClassifier) and model.cell == cell
    assert model.recurrent.input_size == 28 and model.steps == 28 and model.recurrent.hidden_size == 12
    assert model(Variable.from_numpy(X)).shape == (5, 10)
    assert cell in MODELS


def test_the_first_step_reads_the_first_image_row():
    """Rows are time steps: changing only the last row cannot change h_1."""
    model = SequenceClassifier("rnn", 28, 8, 10, rng=0)
    rows = X.reshape(5, 28, 28)
    changed = rows.copy()
    changed[:, -1] += 1
    first = [model.recurrent(Variable.from_numpy(r))[0].data[:, 0] for r in (rows, changed)]
    np.testing.assert_array_equal(first[0], first[1])


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_save_and_load_give_the_same_logits(tmp_path, cell):
    model = SequenceClassifier(cell, 28, 10, 10, rng=1)
    model.save(tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert isinstance(loaded, SequenceClassifier) and loaded.config() == model.config()
    np.testing.assert_array_equal(loaded(Variable.from_numpy(X)).data, model(Variable.from_numpy(X)).data)


def test_flat_input_of_the_wrong_width_is_refused_naming_the_layout():
    layout = r"SequenceClassifier.*\(N, 784\).*steps 28 x input_size 28.*\(5, 783\).*test_sequence_classifier\.py"
    with pytest.raises(ShapeError, match=layout):
        SequenceClassifier("lstm", rng=0)(Variable.from_numpy(X[:, :783]))


def test_an_unknown_cell_is_refused():
    with pytest.raises(ValueError, match=r"unknown cell 'gru'"):
        SequenceClassifier("gru")


def test_hidden_size_is_a_train_option():
    args = build_parser().parse_args(["train", "--model", "lstm", "--hidden-size", "32"])
    assert args.model == "lstm" and args.hidden_size == 32
    assert build_parser().parse_args(["train"]).hidden_size == TrainConfig().hidden_size == 64
    with pytest.raises(ValueError, match="hidden_size must be an integer ≥ 1"):
        TrainConfig(hidden_size=0).check()


@pytest.mark.slow
def test_train_rnn_from_the_command_line_then_evaluate(tmp_path, capsys):
    out = tmp_path / "run"
    status = main(["train", "--model", "rnn", "--dataset", "mnist-bundled", "--epochs", "1", "--hidden-size", "16",
                   "--optimizer", "adam", "--lr", "3e-3", "--augment-shift", "0", "--no-progress", "--no-plots",
                   "--out", str(out)])
    assert status == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["model"] == "rnn" and metrics["test_accuracy"] > 0.3  # chance is 0.1
    capsys.readouterr()
    assert main(["evaluate", str(out / "model.npz")]) == 0
    assert f"{metrics['test_accuracy']:.2%}" in capsys.readouterr().out
