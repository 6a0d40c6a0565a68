"""The ``autograd-lab`` command line: the subcommand registry, ``train`` end to end, ``evaluate``, failures."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.cli import SUBCOMMANDS, build_parser, main
from autograd_lab.nn import MLP
from autograd_lab.training.job import TrainConfig

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_every_registered_subcommand_module_exposes_add_parser_and_appears_in_help(capsys):
    for name in SUBCOMMANDS:
        assert callable(importlib.import_module(f"autograd_lab.cli.{name}").add_parser), name
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "train" in out and "evaluate" in out


def test_no_subcommand_prints_help_and_returns_2(capsys):
    assert main([]) == 2
    assert "subcommands" in capsys.readouterr().err


def test_train_defaults_are_the_training_config_defaults_and_out_is_an_alias():
    args = build_parser().parse_args(["train", "--out", "somewhere"])
    defaults = TrainConfig()
    for key in ("dataset", "epochs", "batch_size", "lr", "hidden", "optimizer", "seed", "augment_shift",
                "val_fraction", "momentum"):
        assert getattr(args, key) == getattr(defaults, key), key
    assert args.output_dir == "somewhere" and args.data_dir is None
    args = build_parser().parse_args(
        ["train", "--hidden", "64", "32", "--learning-rate", "0.01", "--optimizer", "adam"])
    assert args.hidden == [64, 32] and args.lr == 0.01 and args.optimizer == "adam"


@pytest.mark.slow
def test_train_then_evaluate_on_the_bundled_subset(tmp_path, capsys):
    out = tmp_path / "run"
    status = main(["train", "--dataset", "mnist-bundled", "--epochs", "1", "--hidden", "32", "--no-progress",
                   "--out", str(out), "--seed", "3"])
    assert status == 0
    printed = capsys.readouterr().out
    assert "bundled" in printed and "test accuracy:" in printed
    for name in ("curves.png", "confusion.png", "misclassified.png"):
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE, name
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["data"] == {"name": "mnist", "source": "bundled", "location": metrics["data"]["location"],
                               "train": 7600, "validation": 400, "test": 2000}
    assert metrics["config"]["seed"] == 3 and len(metrics["history"]["train_loss"]) == 1
    assert 0.8 < metrics["test_accuracy"] <= 1.0
    model = MLP.load(out / "model.npz")
    assert model.sizes == [784, 32, 10]

    assert main(["evaluate", str(out / "model.npz"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["source"] == "bundled" and result["images"] == 2000
    assert result["accuracy"] == metrics["test_accuracy"]


def test_diverging_training_exits_1_with_a_message_naming_the_step(tmp_path, capsys):
    with np.errstate(all="ignore"):
        status = main(["train", "--dataset", "mnist-bundled", "--epochs", "2", "--lr", "1e9", "--no-progress",
                       "--no-plots", "--out", str(tmp_path)])
    assert status == 1
    err = capsys.readouterr().err
    assert "training stopped: the loss became" in err and "at epoch 1, step" in err and "detect_anomaly" in err


def test_detect_anomaly_names_the_operation_that_produced_the_first_inf(tmp_path, capsys):
    with np.errstate(all="ignore"):
        status = main(["train", "--dataset", "mnist-bundled", "--epochs", "2", "--lr", "1e9", "--no-progress",
                       "--no-plots", "--detect-anomaly", "--out", str(tmp_path)])
    assert status == 1
    err = capsys.readouterr().err
    assert "detect_anomaly stopped training:" in err and "Op" in err and "inf" in err


def test_evaluate_reports_a_missing_or_foreign_file(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "missing.npz")]) == 1
    assert "autograd-lab evaluate: error:" in capsys.readouterr().err
    np.savez(tmp_path / "plain.npz", w=np.zeros(2))
    assert main(["evaluate", str(tmp_path / "plain.npz")]) == 1
    assert "not an autograd-lab model file" in capsys.readouterr().err


def test_evaluate_refuses_a_model_of_the_wrong_width(tmp_path, capsys):
    MLP([100, 4, 10], rng=0).save(tmp_path / "m.npz", meta={"dataset": "mnist-bundled"})
    assert main(["evaluate", str(tmp_path / "m.npz")]) == 1
    assert "maps 100 inputs to 10 classes" in capsys.readouterr().err


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "autograd_lab.cli", "--version"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("autograd-lab ")
