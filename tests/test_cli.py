"""The ``autograd-lab`` command line: the subcommand registry, ``train`` end to end, ``evaluate``, user errors."""

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


def bad_model_file(kind: str, tmp_path: Path) -> Path:
    """A model file broken in one of the ways users meet (the messages are checked in tests/nn/test_model_files.py)."""
    path = tmp_path / f"{kind}.npz"
    if kind == "missing":
        return path
    if kind == "directory":
        path.mkdir()
        return path
    MLP([784, 8, 10], rng=0).save(path)
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("not a model\n")
    else:
        with np.load(path) as archive:
            arrays = {k: archive[k] for k in archive.files}
        if kind == "no-config":
            del arrays["__config__"]
        elif kind == "tampered-config":
            arrays["__config__"] = np.array(str(arrays["__config__"]).replace('"sizes": [784, 8, 10]',
                                                                             '"sizes": [784, 9, 10]'))
        elif kind == "nan-weights":
            arrays["layers.2.bias"] = np.full(10, np.nan, dtype=np.float32)
        np.savez(path, **arrays)
    return path


#: Each kind of bad model file and words the one-line error must contain.
BAD_MODEL_FILES = {
    "missing": "no such file: ",
    "directory": "is a directory, not a model file",
    "truncated": "truncated or damaged .npz archive",
    "empty": "the file is empty (0 bytes)",
    "text": "not a .npz archive",
    "no-config": "not an autograd-lab model file (no __config__ entry)",
    "tampered-config": "'layers.0.weight' has shape (8, 784), the model expects (9, 784)",
    "nan-weights": "parameter 'layers.2.bias' holds 10 NaN/inf value(s)",
}


@pytest.mark.parametrize("command", ["evaluate", "export-c"])
@pytest.mark.parametrize("kind", BAD_MODEL_FILES)
def test_a_bad_model_file_is_a_one_line_usage_error_with_exit_status_2(tmp_path, capsys, command, kind):
    path = bad_model_file(kind, tmp_path)
    extra = ["--out", str(tmp_path / "c")] if command == "export-c" else ["--no-download"]
    assert main([command, str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"autograd-lab {command}: error: ") and str(path) in err
    assert BAD_MODEL_FILES[kind] in err and err.count("\n") == 1
    assert not (tmp_path / "c").exists()


def test_the_installed_entry_point_prints_no_traceback_for_a_truncated_model(tmp_path):
    path = bad_model_file("truncated", tmp_path)
    result = subprocess.run([sys.executable, "-m", "autograd_lab.cli", "evaluate", str(path)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == f"autograd-lab evaluate: error: {path}: truncated or damaged .npz archive " \
                            "(BadZipFile: File is not a zip file)\n"


def test_a_bug_inside_a_subcommand_keeps_its_traceback(tmp_path, monkeypatch):
    def broken(path):
        raise RuntimeError("a bug, not a user error")

    monkeypatch.setattr("autograd_lab.cli.evaluate.load_model", broken)
    with pytest.raises(RuntimeError, match="a bug, not a user error"):
        main(["evaluate", str(tmp_path / "m.npz")])


def test_evaluate_refuses_a_model_of_the_wrong_width(tmp_path, capsys):
    MLP([100, 4, 10], rng=0).save(tmp_path / "m.npz", meta={"dataset": "mnist-bundled"})
    assert main(["evaluate", str(tmp_path / "m.npz")]) == 2
    assert "autograd-lab evaluate: error: the model maps 100 inputs to 10 classes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--epochs", "0"], "argument --epochs: must be an integer ≥ 1, got 0"),
        (["--batch-size", "0"], "argument --batch-size: must be an integer ≥ 1, got 0"),
        (["--lr", "-1"], "argument --lr/--learning-rate: must be a number in (0, inf), got -1"),
        (["--lr", "nan"], "argument --lr/--learning-rate: must be a number in (0, inf), got nan"),
        (["--val-fraction", "1.5"], "argument --val-fraction: must be a number in [0, 1), got 1.5"),
        (["--dropout", "1.0"], "argument --dropout: must be a number in [0, 1), got 1.0"),
        (["--hidden", "64", "0"], "argument --hidden: must be an integer ≥ 1, got 0"),
        (["--momentum", "1"], "argument --momentum: must be a number in [0, 1), got 1"),
        (["--weight-decay", "-0.1"], "argument --weight-decay: must be a number in [0, inf), got -0.1"),
        (["--clip-norm", "0"], "argument --clip-norm: must be a number in (0, inf), got 0"),
        (["--augment-shift", "-1"], "argument --augment-shift: must be an integer ≥ 0, got -1"),
        (["--seed", "-3"], "argument --seed: must be an integer ≥ 0, got -3"),
        (["--epochs", "two"], "argument --epochs: must be an integer ≥ 1, got 'two'"),
    ],
)
def test_train_refuses_bad_option_values_before_loading_any_data(monkeypatch, capsys, option, message):
    def no_data(*args, **kwargs):
        raise AssertionError("data was loaded before the options were checked")

    monkeypatch.setattr("autograd_lab.training.job.load_dataset", no_data)
    with pytest.raises(SystemExit) as info:
        main(["train", *option])
    assert info.value.code == 2
    assert f"autograd-lab train: error: {message}\n" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"epochs": 0}, "TrainConfig: epochs must be an integer ≥ 1, got 0"),
        ({"hidden": []}, "TrainConfig: hidden must be a non-empty list of integers ≥ 1, got []"),
        ({"val_fraction": 1.5}, "TrainConfig: val_fraction must be a number in [0, 1), got 1.5"),
        ({"lr": -1.0}, "TrainConfig: lr must be a number in (0, inf), got -1.0"),
        ({"activation": "gelu"}, "TrainConfig: activation must be one of"),
    ],
)
def test_run_training_checks_its_config_before_loading_any_data(monkeypatch, change, message):
    from autograd_lab.training import job

    def no_data(*args, **kwargs):
        raise AssertionError("data was loaded before the config was checked")

    monkeypatch.setattr(job, "load_dataset", no_data)
    with pytest.raises(ValueError) as info:
        job.run_training(TrainConfig(**change))
    assert str(info.value).startswith(message)


def test_train_help_shows_defaults_only_where_they_inform(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines; compare with single spaces
    for wrong in ("(default: True)", "(default: False)", "(default: None)"):
        assert wrong not in out
    assert "--no-plots skip the PNG plots (default: write them)" in out
    assert "--no-download never download; without it, the data set is downloaded when no local source has it" in out
    assert "--epochs EPOCHS passes over the training images (default: 20 for cnn, lstm, mlp, rnn; " in out


def test_export_c_refuses_zero_calibration_images(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["export-c", "model.npz", "--out", str(tmp_path), "--int8", "--calibration", "0"])
    assert info.value.code == 2
    assert "autograd-lab export-c: error: argument --calibration: must be an integer ≥ 1, got 0" in \
        capsys.readouterr().err


def test_export_c_says_when_it_changes_the_model_name(tmp_path, capsys):
    MLP([784, 8, 10], rng=0).save(tmp_path / "m.npz")
    assert main(["export-c", str(tmp_path / "m.npz"), "--out", str(tmp_path / "c"), "--name", "1bad-name"]) == 0
    err = capsys.readouterr().err
    assert err == ("autograd-lab export-c: note: --name '1bad-name' is not a usable C identifier (C names use only "
                   "letters, digits and _; C names cannot start with a digit); the model is named 't_1bad_name'\n")
    assert {p.name for p in (tmp_path / "c").iterdir()} == {"t_1bad_name.h", "t_1bad_name.c"}


def test_export_c_prints_no_note_for_a_valid_name(tmp_path, capsys):
    MLP([784, 8, 10], rng=0).save(tmp_path / "m.npz")
    assert main(["export-c", str(tmp_path / "m.npz"), "--out", str(tmp_path / "c"), "--name", "mnist_fc"]) == 0
    assert capsys.readouterr().err == ""


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "autograd_lab.cli", "--version"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("autograd-lab ")
